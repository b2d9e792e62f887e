"""Issue 74: a start that can be simulated, encoder-quantised angles, bounded and guarded
Levenberg-Marquardt steps, budgets that report a status, a refinement that always starts from a
physical point, and NumPy warnings that never reach the terminal."""

from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from physid.budget import Budget
from physid.multibody.estimate.fit import MultibodyRecording, identify
from physid.multibody.estimate.lm import LMTermination, levenberg_marquardt
from physid.multibody.estimate.observe import joint_noise, noise_from_data, quantum
from physid.multibody.estimate.prior import LogPrior, physical_start, plausibility_box
from physid.multibody.model.build import load_model
from physid.multibody.refine.output_error import refine
from physid.multibody.step.simulate import inertia_problem, simulate, state_from_joints
from physid.multibody.verdicts import caught_warnings
from physid.status import Status

ROOT = Path(__file__).resolve().parents[1] / "examples" / "multibody"


def test_encoder_counts_floor_the_noise_at_the_quantisation_noise():
    """A joint stuck for most of the log repeats one count: the differences' median is 0 and
    read as no noise (the 20 Hz Furuta arm: 1e-9 rad, weight 1, '1.65e8x its noise'). Rounded
    to 2048 counts per turn its noise is the uniform quantisation noise q / sqrt(12)."""
    q = 2 * np.pi / 2048
    t = np.arange(400) * 0.05
    swing = np.where(t < 5, 0.4 * np.sin(2.0 * t), 0.4 * np.sin(10.0))  # then stuck
    counts = np.round((swing + 0.3 * q) / q) * q
    assert quantum(counts) == pytest.approx(q, rel=1e-9)
    assert quantum(swing) is None  # not quantised
    assert noise_from_data(counts[:, None])[0] < 1e-8  # what the differences alone say
    rec = MultibodyRecording(t, counts[:, None], np.zeros((len(t), 1)))
    sigma, source, floored = joint_noise([rec], ["arm"], {})
    assert sigma[0] == pytest.approx(q / np.sqrt(12)) and floored == {"arm": pytest.approx(q)}
    given, _, none = joint_noise([rec], ["arm"], {"arm": 0.01})  # the config's noise stands
    assert given[0] == 0.01 and none == {} and source == ["data"]


def test_a_start_that_cannot_be_simulated_is_repaired_from_the_body():
    """An estimated principal inertia of 0 (a point mass in the URDF) starts at m d^2 / 3, d the
    hinge to centre-of-mass distance (closed form for a slender rod about its middle), and the
    repair is a finding; a fixed one stays an input error naming it."""
    config = {"gravity": [0, 0, -9.81], "bodies": {"pendulum": {"Iyy": 0.0}}}
    model = load_model(ROOT / "pendulum.urdf", dict(config, estimate=["pendulum.Iyy"]))
    assert inertia_problem(model, model.values) is not None
    repaired, findings = physical_start(model, ["pendulum.Iyy"])
    mass = model.values[model.index("pendulum.mass")]
    d2 = float(np.sum(model.hinges[0].p_child ** 2))
    assert repaired.values[repaired.index("pendulum.Iyy")] == pytest.approx(mass * d2 / 3)
    assert inertia_problem(repaired, repaired.values) is None
    (finding,) = findings
    assert finding.code == "MB104" and finding.names == ("pendulum.Iyy",)
    assert finding.numbers == {"given": 0.0, "start": pytest.approx(mass * d2 / 3)}
    from physid.errors import InputError

    with pytest.raises(InputError, match="pendulum.Ixx/Iyy/Izz"):
        physical_start(model, [])  # not estimated: the user's to fix


def test_the_plausibility_box_and_the_prior_around_the_start():
    model = load_model(ROOT / "pendulum.urdf", {"bounds": {"pendulum.Ixx": [1e-6, None]}})
    names = ["pendulum.Iyy", "pendulum.Ixx", "pendulum.viscous"]
    start = np.array([0.01, 2e-3, 1e-3])
    lower, upper = plausibility_box(model, names, start)
    np.testing.assert_allclose(lower, [1e-3, 1e-6, 0.0])  # the config's bound stands
    np.testing.assert_allclose(upper, [0.1, np.inf, np.inf])
    prior = LogPrior.of(names, start, noise=2e-4)
    np.testing.assert_array_equal(prior.index, [0, 1])  # masses and principal inertias only
    p = np.array([0.03, 2e-3, 0.5])
    # one std is a factor 3, weighed like one angle residual at the noise (2e-4 rad)
    np.testing.assert_allclose(prior.residual(p), [2e-4 * np.log(3) / np.log(3), 0.0])
    J = prior.jacobian(p, n_state=4, n_params=3).toarray()
    step = 1e-7
    bumped = p.copy()
    bumped[0] += step
    np.testing.assert_allclose(
        J[:, 4], (prior.residual(bumped) - prior.residual(p)) / step, rtol=1e-5
    )


def _curve(overflow_beyond: float = np.inf):
    """A two-parameter exponential fit; its residual overflows (1e200**2) past a parameter."""
    x = np.linspace(0.0, 2.0, 40)
    y = 2.0 * np.exp(-1.3 * x)

    def residual(_state, p, jacobian):
        r = p[0] * np.exp(-p[1] * x) - y
        if abs(p[0]) > overflow_beyond:
            r = r * 1e200
        if not jacobian:
            return r
        J = np.column_stack([np.exp(-p[1] * x), -p[0] * x * np.exp(-p[1] * x)])
        return r, sp.csr_matrix(J)

    return residual, (lambda state, p, dx: (state, p + dx))


def test_steps_whose_residual_overflows_are_rejected_without_a_warning():
    """Trial steps past p0 = 2.1 overflow (inf cost): rejected like a rise of the cost, counted,
    and no RuntimeWarning escapes; the fit still converges to the truth."""
    residual, retract = _curve(overflow_beyond=2.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = levenberg_marquardt(
            residual,
            retract,
            None,
            np.array([0.5, 3.0]),
            np.full(2, -10.0),
            np.full(2, 10.0),
            0,
            max_iterations=50,
        )
    assert out.converged and out.status is Status.OK
    np.testing.assert_allclose(out.p, [2.0, 1.3], rtol=1e-6)
    assert out.nonfinite_trials > 0


def test_every_step_is_shortened_to_its_bound():
    """``step_scale`` bounds every trial and correction: with steps of at most 0.05 the fit
    from (0.5, 0.1) moves by at most 0.05 per iteration, and still converges (more slowly);
    the multibody fit bounds each body's turn per step to MAX_TURN (0.5 rad)."""
    residual, retract = _curve()
    start = np.array([0.5, 0.1])
    args = (residual, retract, None, start, np.full(2, -10.0), np.full(2, 10.0), 0)

    def at_most(dx: np.ndarray) -> float:
        return min(1.0, 0.05 / max(float(np.linalg.norm(dx)), 1e-300))

    one = levenberg_marquardt(*args, max_iterations=1, step_scale=at_most)
    assert 0.0 < np.linalg.norm(one.p - start) <= 0.05 * (1 + 1e-12)
    done = levenberg_marquardt(*args, max_iterations=200, step_scale=at_most)
    assert done.converged and done.iterations > 30
    np.testing.assert_allclose(done.p, [2.0, 1.3], rtol=1e-6)
    from physid.multibody.estimate.fit import MAX_TURN, _step_scale

    problem = type("P", (), {"ns": 12, "n_state_vars": 24})()  # 1 body, 2 steps
    dx = np.zeros(24)
    dx[3:6] = [0.0, 2.0, 0.0]  # step 0 turns the body by 2 rad
    assert _step_scale(problem)(dx) == pytest.approx(MAX_TURN / 2.0)
    dx[3:6] = [0.0, 0.1, 0.0]
    assert _step_scale(problem)(dx) == 1.0


def test_a_spent_budget_is_a_status_not_an_exception():
    """The iterations decide (not_converged); the wall clock is a safety stop (time_limit)."""
    residual, retract = _curve()
    args = (residual, retract, None, np.array([0.5, 0.1]), np.full(2, -10.0), np.full(2, 10.0), 0)
    counted = levenberg_marquardt(*args, max_iterations=50, budget=Budget(1e9, 2))
    assert counted.termination is LMTermination.BUDGET_ITERATIONS
    assert counted.status is Status.NOT_CONVERGED and "iteration budget of 2" in counted.message
    timed = levenberg_marquardt(*args, max_iterations=50, budget=Budget(0.0, 100))
    assert timed.termination is LMTermination.BUDGET_TIME and timed.status is Status.TIME_LIMIT
    assert timed.iterations == 0 and timed.p.tolist() == [0.5, 0.1]  # the start, kept


def test_numpy_warnings_of_a_run_become_one_finding():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing may escape the block
        with caught_warnings() as found:
            np.float64(1e308) * np.float64(10.0)
            np.sqrt(np.float64(-1.0))
    (finding,) = found
    assert finding.code == "MB404" and finding.numbers == {"warnings": 2.0}
    assert "overflow" in finding.message


def _pendulum(seconds: float = 3.0) -> MultibodyRecording:
    config = {"gravity": [0, 0, -9.81], "joints": {"pendulum": {"viscous": 0.004, "coulomb": 0.1}}}
    model = load_model(ROOT / "pendulum.urdf", config)
    sim = simulate(model, 1e-3, int(seconds / 1e-3), *state_from_joints(model, [1.2], [0.0]))
    keep = slice(0, None, 50)
    noisy = sim.angles[keep] + 0.01 * np.random.default_rng(3).normal(size=(len(sim.t[keep]), 1))
    return MultibodyRecording(sim.t[keep], noisy, np.zeros_like(noisy), "pendulum")


def test_the_refinement_starts_from_a_physical_point_whatever_the_fit_ended_at():
    """A fit whose inertia ended at 0 (as with the box [0, inf) of the config) cannot be
    simulated; the refinement built its stepper from the fit's values and exited 2 ('a
    simulated body needs a positive definite inertia'). It now starts from the config's
    values and refines."""
    rec = _pendulum()
    start = {
        "gravity": [0, 0, -9.81],
        "joints": {"pendulum": {"viscous": 0.001, "coulomb": 0.05}},
        "estimate": ["pendulum.Iyy", "pendulum.viscous", "pendulum.coulomb"],
        "noise": {"pendulum": 0.01},
    }
    fit = identify(load_model(ROOT / "pendulum.urdf", start), [rec], h=5e-3, max_iterations=2)
    values = fit.values.copy()
    values[0] = 0.0
    model = fit.model.with_values({"pendulum.Iyy": 0.0})
    lower = fit.lower.copy()
    lower[0] = 0.0  # the box [0, inf) a config's bounds can give
    collapsed = dataclasses.replace(fit, values=values, model=model, lower=lower)
    assert inertia_problem(collapsed.model, collapsed.model.values) is not None
    result = refine(collapsed, [rec], window_seconds=(1.0,), max_evaluations=3)
    assert result.start == "config" and result.values[0] > 0
    assert np.isfinite(result.cost) and result.cost < result.cost_start


def test_a_refined_model_that_misses_the_samples_is_named():
    """MB307 when the windows' RMS error is above twice a joint's noise (the 20 Hz Furuta at
    h = 10 ms: 2.2 / 7.5 mrad for 0.89 / 1.0 of noise), nothing at the noise (2 ms: 0.6 / 0.9)."""
    from types import SimpleNamespace

    from physid.multibody.refine.output_error import _misfit

    noise = {"hinge1": 0.886e-3, "hinge2": 1.02e-3}
    coarse = SimpleNamespace(rms={"hinge1": 2.2e-3, "hinge2": 7.5e-3}, noise=noise, h=0.01)
    (finding,) = _misfit(coarse)
    assert finding.code == "MB307" and finding.names == ("hinge1", "hinge2")
    assert finding.numbers["hinge2_x_noise"] == pytest.approx(7.5 / 1.02)
    fine = SimpleNamespace(rms={"hinge1": 0.6e-3, "hinge2": 0.9e-3}, noise=noise, h=0.002)
    assert _misfit(fine) == []
