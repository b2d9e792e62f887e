"""Issue 74 on data as it comes: a sticking joint logged at 20 Hz, no ``estimate:`` in the config.
The equation-error fit alone trades the dry friction for viscous friction; the default workflow
refines it by output error over 1 s windows, and the result is checked against the simulation's
known parameters; the command line prints no NumPy warning and collapses no body."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from physid.cli import main
from physid.multibody.estimate.fit import MultibodyRecording
from physid.multibody.model.build import load_model
from physid.multibody.step.simulate import simulate, state_from_joints
from physid.multibody.workflow import RefineMode, RefineOptions, identify_run
from physid.status import Status

ROOT = Path(__file__).resolve().parents[1] / "examples" / "multibody"
TRUTH = {"pendulum.Iyy": 0.01, "pendulum.viscous": 0.004, "pendulum.coulomb": 0.1}


def _sticking_pendulum(seconds: float = 6.0, noise: float = 0.01) -> MultibodyRecording:
    """Released at 1.2 rad, it swings, decays and sticks (physid's stepper at 1 ms: a known
    truth); sampled at 20 Hz with ``noise`` [rad]."""
    joints = {"pendulum": {"viscous": 0.004, "coulomb": 0.1}}
    model = load_model(ROOT / "pendulum.urdf", {"gravity": [0, 0, -9.81], "joints": joints})
    sim = simulate(model, 1e-3, int(round(seconds / 1e-3)), *state_from_joints(model, [1.2], [0]))
    assert np.abs(sim.rates[-500:, 0]).max() < 1e-3  # stuck by the end
    keep = slice(0, None, 50)
    rng = np.random.default_rng(3)
    noisy = sim.angles[keep] + noise * rng.normal(size=sim.angles[keep].shape)
    return MultibodyRecording(sim.t[keep], noisy, np.zeros_like(noisy), "pendulum")


def test_the_default_refinement_decides_the_dry_friction_of_low_rate_data():
    rec = _sticking_pendulum()
    # no estimate list: the default set; the URDF's inertia 30 % off the truth
    config = {"gravity": [0, 0, -9.81], "bodies": {"pendulum": {"Iyy": 0.013}}}
    model = load_model(ROOT / "pendulum.urdf", config, default_estimate=True)
    runs = {
        mode: identify_run(
            model, [rec], ["pendulum"], fit_options={"h": 5e-3}, refine_options=RefineOptions(mode)
        )
        for mode in (RefineMode.OFF, RefineMode.AUTO)
    }
    off, auto = runs[RefineMode.OFF], runs[RefineMode.AUTO]
    values = dict(zip(off.fit.names, off.fit.values, strict=True))
    std = dict(zip(off.fit.names, off.fit.std, strict=True))
    # measured: the equation error alone gives Coulomb 0.034 +- 0.0054 and viscous 0.028 (7x),
    # neither at a bound, and simulates the recording at 6x the noise
    assert abs(values["pendulum.coulomb"] - 0.1) > 5 * std["pendulum.coulomb"]
    assert off.simulation[0]["joints"]["pendulum"]["rms_whole"] > 4 * 0.01
    # the default refinement ran (1 of 5 model steps observed, dry friction estimated) ...
    assert not off.refined_by_default and auto.refined_by_default
    (why,) = [f for f in auto.findings if f.code == "MB305"]
    assert "dry friction (pendulum.coulomb)" in why.message
    assert auto.fit.refinement.used and auto.status is Status.OK
    # ... and recovers the truth within 3 std, and the motion to the noise (10 mrad)
    values = dict(zip(auto.fit.names, auto.fit.values, strict=True))
    std = dict(zip(auto.fit.names, auto.fit.std, strict=True))
    for name, true in TRUTH.items():
        assert abs(values[name] - true) < 3 * std[name], (name, values[name], std[name])
    assert values["pendulum.coulomb"] > 0
    assert auto.simulation[0]["joints"]["pendulum"]["rms_whole"] < 1.3 * 0.01


def test_the_furuta_with_dry_friction_at_20_hz_through_the_command_line(tmp_path):
    """The issue's command on the first 8 s of the MuJoCo Furuta of physid.sim.furuta (hard
    friction; its arm sticks at 19 s: the 40 s are benchmarks/multibody_sticking_furuta.py's)
    logged by 2048-count encoders, the URDF's inertias 30 % off and only the gravity in the
    config: no body collapses, the arm's dry friction is refined to > 0, the simulation from the
    first state is within 1.5x the true parameters' in the same discrete model, and no NumPy
    warning reaches stderr (the filer's run printed five)."""
    from physid.sim.furuta import STICKING_START, STICKING_TRUTH, sticking_release

    synthetic = sticking_release(8.0)
    rec = synthetic.recording
    data = tmp_path / "furuta.csv"
    rows = "\n".join(
        f"{t:.4f},{a:.12g},{b:.12g}" for t, (a, b) in zip(rec.t, rec.angles, strict=True)
    )
    data.write_text("t,q_hinge1,q_hinge2\n" + rows + "\n")
    urdf = tmp_path / "furuta.urdf"
    text = (ROOT / "furuta.urdf").read_text()
    text = text.replace('iyy="0.003" iyz="0" izz="0.003"', 'iyy="0.0039" iyz="0" izz="0.0039"')
    urdf.write_text(
        text.replace('iyy="0.004" iyz="0" izz="0.004"', 'iyy="0.0028" iyz="0" izz="0.0028"')
    )
    config = tmp_path / "lab.yaml"
    config.write_text("gravity: [0, 0, -9.81]\n")
    out = tmp_path / "fit"
    run = CliRunner().invoke(
        main,
        [
            "multibody",
            "identify",
            "--urdf",
            str(urdf),
            "--config",
            str(config),
            "--data",
            str(data),
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert run.exit_code in (0, 3), run.output
    assert "Warning" not in run.stderr and "Warning" not in run.stdout
    result = json.loads((out / "result.json").read_text())
    assert result["collapsed"] == [] and result["refinement"]["used"]
    assert "MB201" not in {f["code"] for f in result["findings"]}
    values = dict(zip(result["names"], result["values"], strict=True))
    assert values["hinge1.coulomb"] > 0.2 * STICKING_TRUTH["hinge1.coulomb"]
    lower = dict(zip(result["names"], result["lower"], strict=True))
    assert values["hinge1.Izz"] > lower["hinge1.Izz"] * (1 + 1e-6)  # inside its box
    # the true parameters in the same discrete model (h = 10 ms, the config's defaults) from
    # the true state: the fit simulates the recording no worse than 1.5x their error
    truth = synthetic.truth
    h, n = result["h"], int(round((rec.t[-1] - rec.t[0]) / result["h"]))
    sim = simulate(truth, h, n, *state_from_joints(truth, list(STICKING_START), [0.0, 0.0]))
    every = int(round((rec.t[1] - rec.t[0]) / h))
    rms_truth = np.sqrt(np.mean((sim.angles[::every][: len(rec.t)] - rec.angles) ** 2, axis=0))
    fitted = result["simulation_error"][0]["joints"]
    for j, joint in enumerate(("hinge1", "hinge2")):
        assert fitted[joint]["rms_whole"] < 1.5 * rms_truth[j], (joint, fitted, rms_truth)


def test_what_makes_the_refinement_run_by_default():
    """A body collapsed to the end of its box, or dry friction from samples further apart than
    two model steps; not a parameter at a bound as such (viscous friction at 0 on 1 kHz data)."""
    from types import SimpleNamespace

    from physid.multibody.workflow import auto_reasons

    def fit(names, collapsed=(), observed=1000, steps=1000):  # noqa: ANN001, ANN202
        segment = SimpleNamespace(y=np.zeros((steps, 1)))
        return SimpleNamespace(
            names=list(names),
            collapsed=list(collapsed),
            segments=[segment],
            observed_steps=observed,
            at_bound=["a.viscous"],
        )

    assert auto_reasons(fit(["a.Izz", "a.viscous", "a.coulomb"])) == []  # every step observed
    (low,) = auto_reasons(fit(["a.Izz", "a.coulomb"], observed=200))
    assert "dry friction (a.coulomb) from samples at 200 of 1000 model steps" in low
    assert auto_reasons(fit(["a.Izz", "a.viscous"], observed=200)) == []  # no dry friction
    (body,) = auto_reasons(fit(["a.Izz"], collapsed=["a.Izz"]))
    assert "a.Izz collapsed" in body
