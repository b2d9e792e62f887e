"""Output-error refinement of multibody fits (issue 27): the batched stepper and its box-friction
solve against the Lemke path, and the refinement recovering known parameters of a simulated,
noisy, low-rate, sticking pendulum."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import physid.multibody.step.mlcp as mlcp
from physid.multibody.estimate.fit import MultibodyRecording, identify
from physid.multibody.model.build import load_model
from physid.multibody.refine.output_error import refine, refined, skip_reason, stages_status
from physid.multibody.step.simulate import Stepper, simulate, state_from_joints
from physid.multibody.verdicts import simulation_errors
from physid.status import Status

ROOT = Path(__file__).resolve().parents[1] / "examples" / "multibody"
FURUTA = {
    "gravity": [0, 0, -9.81],
    "defaults": {"compliance_linear": 1e-7, "compliance_rotational": 1e-7, "damping": 0.004},
    "joints": {
        "hinge1": {
            "viscous": 1e-3,
            "coulomb": 0.05,
            "friction_damping": 0.0095,
            "friction_compliance": 0.05,
        },
        "hinge2": {"viscous": 1e-5, "coulomb": 5e-5},
    },
}


def test_box_friction_equals_lemke_through_stick_and_slip(monkeypatch):
    """A Furuta released 30 deg from upright whose arm slides, sticks and creeps: the batched
    box solve of constant Coulomb friction and Lemke on the full Stewart-Trinkle LCP step the
    same trajectory (2 s, 2,000 steps)."""
    model = load_model(ROOT / "furuta.urdf", FURUTA)
    q0, v0 = state_from_joints(model, [0.0, np.pi - np.radians(30)], [0.0, 0.0])
    box = simulate(model, 1e-3, 2000, q0, v0)
    monkeypatch.setattr(mlcp, "BOX_MAX_HINGES", 0)  # every step through Lemke
    lemke = simulate(model, 1e-3, 2000, q0, v0)
    assert lemke.lcp_failures == 0
    np.testing.assert_allclose(box.angles, lemke.angles, atol=1e-9)
    np.testing.assert_allclose(box.rates, lemke.rates, atol=1e-8)
    # the arm both slides and sticks in this window (else the test would not test the box)
    assert np.ptp(box.rates[:, 0]) > 0.5 and np.min(np.abs(box.rates[1000:, 0])) < 1e-3


def test_step_batch_equals_step_per_trajectory():
    model = load_model(ROOT / "furuta.urdf", FURUTA)
    stepper = Stepper(model, 2e-3)
    rng = np.random.default_rng(0)
    states = [
        state_from_joints(model, rng.uniform(-3, 3, 2), rng.uniform(-4, 4, 2)) for _ in range(5)
    ]
    q = np.array([s[0] for s in states])
    v = np.array([s[1] for s in states])
    chi = np.tile(stepper.chi, (5, 1))
    chi[:, model.index("hinge1.coulomb")] = [0.0, 0.01, 0.05, 0.2, 1.0]
    u = np.zeros((5, 2))
    q1, v1, ok = stepper.step_batch(q, v, u, chi)
    assert ok.all()
    for b in range(5):
        single = Stepper(model, 2e-3, chi[b])
        qb, vb, okb, _ = single.step(q[b], v[b], u[b])
        np.testing.assert_allclose(q1[b], qb, atol=1e-13)
        np.testing.assert_allclose(v1[b], vb, atol=1e-11)


def _sticking_pendulum(seconds: float = 6.0, noise: float = 0.01):
    """A pendulum with viscous and Coulomb friction released at 1.2 rad: it swings, decays and
    sticks; sampled at 20 Hz with ``noise`` [rad] (physid's stepper at 1 ms: a known truth for
    the estimator, not an independent simulator)."""
    truth = {"viscous": 0.004, "coulomb": 0.1}
    config = {"gravity": [0, 0, -9.81], "joints": {"pendulum": dict(truth)}}
    model = load_model(ROOT / "pendulum.urdf", config)
    n = int(round(seconds / 1e-3))
    sim = simulate(model, 1e-3, n, *state_from_joints(model, [1.2], [0.0]))
    keep = slice(0, None, 50)
    rng = np.random.default_rng(3)
    noisy = sim.angles[keep] + noise * rng.normal(size=sim.angles[keep].shape)
    return MultibodyRecording(sim.t[keep], noisy, np.zeros_like(noisy), "pendulum"), truth, sim


def test_refinement_recovers_coulomb_and_inertia_of_a_noisy_20_hz_pendulum():
    rec, truth, sim = _sticking_pendulum()
    assert np.abs(sim.rates[-500:, 0]).max() < 1e-3  # it has stuck by the end
    start = {
        "gravity": [0, 0, -9.81],
        "bodies": {"pendulum": {"Iyy": 0.013}},  # truth 0.01 (the URDF's)
        "joints": {"pendulum": {"viscous": 0.001, "coulomb": 0.03}},
        "estimate": ["pendulum.Iyy", "pendulum.viscous", "pendulum.coulomb"],
        "noise": {"pendulum": 0.01},
    }
    model = load_model(ROOT / "pendulum.urdf", start)
    fit = identify(model, [rec], h=5e-3, max_iterations=3)
    assert skip_reason(fit) is None
    # h = 4 ms (the stepper's error well under the 10 mrad noise): the same values within
    # their std as at 2 ms, in half the CPU (measured 11.9 s against 25.4 s). Windows of 1 s
    # first: from the rough start of 3 identify iterations, 2 s windows first reached the true
    # basin on one machine and not on another (an AMD EPYC, 2026-11-28: IPOPT's path differs,
    # identify stopped at Iyy 0.0073, and 2 s windows settled at cost 1601 against 73, Coulomb
    # 0.053 for 0.1, 51 mrad for 10 of noise); 1 s windows reach it from there
    result = refine(fit, [rec], h=4e-3, window_seconds=(1.0, 2.0, np.inf), max_evaluations=15)
    values = dict(zip(result.names, result.values, strict=True))
    std = dict(zip(result.names, result.std, strict=True))
    assert values["pendulum.Iyy"] == pytest.approx(0.01, rel=0.03)
    assert values["pendulum.coulomb"] == pytest.approx(truth["coulomb"], rel=0.1)
    for name, true in (("pendulum.Iyy", 0.01), ("pendulum.coulomb", truth["coulomb"])):
        assert abs(values[name] - true) < 4 * std[name]  # the std describes the error
    # the windows' angle errors fall to the noise (10 mrad), from above twice it (28 mrad from
    # the equation-error fit's values, 36 mrad before the plausibility box and the prior)
    assert result.rms_start["pendulum"] > 0.02 and result.rms["pendulum"] < 0.012
    done = refined(fit, result)
    assert done.model.values[done.model.index("pendulum.coulomb")] == values["pendulum.coulomb"]
    errors = simulation_errors(done)[0]["joints"]["pendulum"]
    assert errors["rms_whole"] < 0.015  # from the refined first state, at the refinement's step


def test_refinement_skips_r_mu_friction():
    rec, _, _ = _sticking_pendulum(seconds=2.0)
    config = {
        "gravity": [0, 0, -9.81],
        "joints": {"pendulum": {"viscous": 0.004, "dry": 0.01}},
        "estimate": ["pendulum.Iyy"],
    }
    fit = identify(load_model(ROOT / "pendulum.urdf", config), [rec], h=5e-3, max_iterations=1)
    assert "pendulum.dry" in skip_reason(fit)


def test_identify_refine_through_the_command_line(tmp_path):
    """``--refine`` writes the refinement's values (params.json, the printed estimates), its
    record in result.json and the refined first state in states.npz; bad window lists are one
    error line."""
    import json

    from click.testing import CliRunner

    from physid.cli import main

    rec, _, _ = _sticking_pendulum(seconds=3.0)
    args = [*_pendulum_csv(tmp_path, rec), "--max-iterations", "2"]
    out = tmp_path / "fit"
    run = CliRunner().invoke(
        main,
        [
            *args,
            "--out",
            str(out),
            "--refine",
            "--refine-windows",
            "whole",
            "--refine-evaluations",
            "4",
        ],
    )
    # the refinement stops at its 4 evaluations: written, status not_converged, exit code 3
    assert run.exit_code == 3 and "status: not_converged" in run.output, run.output
    result = json.loads((out / "result.json").read_text())
    refinement = result["refinement"]
    assert result["status"] == "not_converged" and refinement["stops"] == [0]
    # how the simulation error moved is an info finding (its numbers in result.json), not a
    # line of an ok run's terminal
    (refined_finding,) = [f for f in result["findings"] if f["code"] == "MB301"]
    assert refined_finding["numbers"]["pendulum_rms_rad"] == pytest.approx(
        refinement["rms"]["pendulum"]
    )
    assert "MB301" not in run.output
    assert refinement["window_seconds"] == [None] and refinement["evaluations"] <= 4 + 1
    params = json.loads((out / "params.json").read_text())["extra"]["parameters"]
    coulomb = refinement["parameters"]["pendulum.coulomb"]
    assert params["pendulum.coulomb"]["value"] == pytest.approx(coulomb["value"], rel=1e-12)
    assert coulomb["equation_error"] != coulomb["value"]
    assert "refined_q0_0" in np.load(out / "states.npz")
    bad_out = ["--out", str(tmp_path / "x"), "--refine", "--refine-windows", "2,-1"]
    bad = CliRunner().invoke(main, [*args, *bad_out])
    assert bad.exit_code == 2 and "--refine-windows: expected window lengths" in bad.output
    assert not (tmp_path / "x").exists()


def test_joint_states_are_not_overwritten_by_the_next_call():
    """The joint angles are evaluated into a reused buffer: what a call returned must survive
    the next call with as many rows (the refinement keeps one per window; aliased, every
    window started from the last one's state)."""
    model = load_model(ROOT / "furuta.urdf", FURUTA)
    stepper = Stepper(model, 1e-3)
    first = [state_from_joints(model, [0.1, 0.2], [0.3, 0.4])]
    second = [state_from_joints(model, [1.1, -0.7], [-2.0, 0.5])]
    angles, rates = stepper.joint_states(np.array([first[0][0]]), np.array([first[0][1]]))
    stepper.joint_states(np.array([second[0][0]]), np.array([second[0][1]]))
    np.testing.assert_allclose(angles[0], [0.1, 0.2], atol=1e-12)
    np.testing.assert_allclose(rates[0], [0.3, 0.4], atol=1e-12)


def _pendulum_1khz(seconds: float = 2.0, noise: float = 0.001):
    """The sticking pendulum of :func:`_sticking_pendulum` sampled at 1 kHz (every step)."""
    config = {"gravity": [0, 0, -9.81], "joints": {"pendulum": {"viscous": 0.004, "coulomb": 0.1}}}
    model = load_model(ROOT / "pendulum.urdf", config)
    sim = simulate(model, 1e-3, int(round(seconds / 1e-3)), *state_from_joints(model, [1.2], [0]))
    noisy = sim.angles + noise * np.random.default_rng(3).normal(size=sim.angles.shape)
    return MultibodyRecording(sim.t, noisy, np.zeros_like(noisy), "pendulum")


PENDULUM_START = {
    "gravity": [0, 0, -9.81],
    "bodies": {"pendulum": {"Iyy": 0.013}},
    "joints": {"pendulum": {"viscous": 0.001, "coulomb": 0.03}},
    "estimate": ["pendulum.Iyy", "pendulum.viscous", "pendulum.coulomb"],
    "noise": {"pendulum": 0.001},
}


def test_a_refinement_far_worse_than_the_fit_is_not_used():
    """Windows of two 5 ms steps on a 1 kHz pendulum: each window's own first state takes its
    samples, and the refined std (0.03-1) exceed the values and 100x the equation-error std
    (1e-5-1e-3). The refinement is recorded but not used: the equation-error values, std and
    model stay, a warning says so. One-second windows on the same fit are used."""
    from physid.multibody.outputs import result_document

    rec = _pendulum_1khz()
    fit = identify(
        load_model(ROOT / "pendulum.urdf", PENDULUM_START), [rec], h=5e-3, max_iterations=3
    )
    bad = refine(fit, [rec], h=5e-3, window_seconds=[0.01], max_evaluations=2)
    assert not bad.used and "do not determine them" in bad.not_used_because
    assert np.any(bad.std > 100 * fit.std)
    done = refined(fit, bad)
    np.testing.assert_array_equal(done.values, fit.values)
    np.testing.assert_array_equal(done.std, fit.std)
    assert done.model.values[done.model.index("pendulum.Iyy")] == fit.values[0]
    assert [f.code for f in done.findings if f.code.startswith("MB30")] == ["MB302"]
    document = result_document(done, None, simulation_errors(done))["refinement"]
    assert document["used"] is False and document["not_used_because"]
    good = refine(fit, [rec], h=5e-3, window_seconds=[1.0], max_evaluations=2)
    assert good.used and good.cost < good.cost_fit
    assert refined(fit, good).values[0] == good.values[0]


def test_a_refinement_whose_cost_rose_above_the_fits_is_not_used():
    from physid.multibody.refine.output_error import rejection

    names, values, std = ["a.Izz"], np.array([1.0]), np.array([0.1])
    assert rejection(names, values, std, std, cost=10.0, cost_fit=20.0) is None
    reason = rejection(names, values, std, std, cost=30.0, cost_fit=20.0)
    assert reason is not None and "windowed cost 30 is above" in reason


def _pendulum_csv(tmp_path: Path, rec) -> list[str]:
    data = tmp_path / "p.csv"
    rows = "\n".join(f"{t:.4f},{q:.9f}" for t, q in zip(rec.t, rec.angles[:, 0], strict=True))
    data.write_text("t,q_pendulum\n" + rows + "\n")
    config = tmp_path / "c.yaml"
    config.write_text(
        "gravity: [0, 0, -9.81]\njoints: {pendulum: {viscous: 0.001, coulomb: 0.05}}\n"
        "estimate: [pendulum.viscous, pendulum.coulomb]\nnoise: {pendulum: 0.01}\n"
    )
    return [
        "multibody",
        "identify",
        "--urdf",
        str(ROOT / "pendulum.urdf"),
        "--data",
        str(data),
        "--config",
        str(config),
        "--dt",
        "0.005",
        "--quiet",
    ]


@pytest.mark.parametrize(
    ("extra", "option", "fragment"),
    [
        (["--refine-windows", "2"], "--refine-windows", "needs --refine"),
        (["--no-refine", "--refine-dt", "0.001"], "--refine-dt", "needs a refinement"),
        (["--no-refine", "--refine-evaluations", "30"], "--refine-evaluations", "needs a"),
        # the default refinement's step is checked before the fit too
        (["--refine-dt", "1"], "--refine-dt", "give at most 0.05 s"),
        # 20 Hz samples: a window must hold 3 of them (0.1 s)
        (["--refine", "--refine-windows", "0.001"], "--refine-windows", "at least 0.1 s"),
        (["--refine", "--refine-windows", "2,0.05"], "--refine-windows", "2 sample periods"),
        # coarser than both --dt 0.005 and the 0.05 s sample period
        (["--refine", "--refine-dt", "1"], "--refine-dt", "give at most 0.05 s"),
    ],
)
def test_refine_options_that_cannot_refine_are_one_line_errors(tmp_path, extra, option, fragment):
    """--refine-* that nothing would use were ignored (--refine-windows without --refine, any
    with --no-refine); windows shorter than a step or a sample and a refinement step far
    coarser than the samples ran silently (Izz 0.015 +- 1e6, truth 0.003)."""
    from click.testing import CliRunner

    from physid.cli import main

    rec, _, _ = _sticking_pendulum(seconds=3.0)
    out = tmp_path / "fit"
    run = CliRunner().invoke(main, [*_pendulum_csv(tmp_path, rec), "--out", str(out), *extra])
    assert run.exit_code == 2, run.output
    lines = run.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"physid: error: {option}: ")
    assert fragment in lines[0] and not out.exists()


def test_identify_that_did_not_converge_exits_3(tmp_path):
    """A written fit whose LM stopped at --max-iterations is exit code 3 (as oe and simfit), said
    in --help; it exited 0."""
    import json

    from click.testing import CliRunner

    from physid.cli import main

    rec, _, _ = _sticking_pendulum(seconds=3.0)
    out = tmp_path / "fit"
    run = CliRunner().invoke(
        main,
        [*_pendulum_csv(tmp_path, rec), "--out", str(out), "--max-iterations", "1", "--no-refine"],
    )
    assert run.exit_code == 3, run.output
    assert "status: not_converged" in run.output and (out / "params.json").exists()
    result = json.loads((out / "result.json").read_text())
    assert result["termination"] == "max_iterations" and not result["converged"]
    text = " ".join(CliRunner().invoke(main, ["multibody", "identify", "--help"]).output.split())
    assert "3 written, but the status is not ok" in text


def test_a_refinement_that_never_left_its_start_is_not_called_a_spent_budget():
    """The condensed solver's -1 (no step from the start decreased the cost) was reported as
    "budget", as if more simulations would have helped: it is a stall; a spent budget is
    not_converged (statuses are codes, physid.status)."""
    assert stages_status([2, 3]) is Status.OK
    assert stages_status([2, 0]) is Status.NOT_CONVERGED
    assert stages_status([-1]) is stages_status([2, -1]) is Status.STALLED
