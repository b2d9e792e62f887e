"""No body collapses silently (issue 13, issue 74): Stribeck friction (eq. 4.1) identified at
h = 1e-2 s, kappa = 100 on synthetic data from physid's own simulator sent the arm's inertia to
its bound of 0 (eqs. 3.7-3.8 weigh the rotational impulse rows by the inertia, so the collapse
lowers the cost). The URDF's inertia is now a prior and the centre of a plausibility box
(physid.multibody.estimate.prior): the fit ends inside it and can be simulated."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from physid.multibody.estimate.fit import MultibodyRecording, identify
from physid.multibody.model.build import load_model
from physid.multibody.outputs import result_document
from physid.multibody.step.simulate import inertia_problem, simulate, state_from_joints
from physid.status import Status

URDF = Path(__file__).resolve().parents[1] / "examples" / "multibody" / "multiarm_single.urdf"
SOFT = {"compliance_linear": 1e-5, "compliance_rotational": 1e-5, "damping": 0.02}
NAMES = [f"pendulum.{s}" for s in ("Iyy", "viscous", "dry", "stribeck_delta", "stribeck_c")]


def _stribeck_pendulum() -> MultibodyRecording:
    friction = {"viscous": 1e-4, "dry": 2e-4, "stribeck_delta": 5e-4, "stribeck_c": 2.0}
    truth = load_model(
        URDF,
        {
            "gravity": [0, 0, -9.81],
            "defaults": SOFT,
            "bodies": {"pendulum": {"Iyy": 1.09e-4}},
            "joints": {"pendulum": friction},
        },
    )
    q0, v0 = state_from_joints(truth, [np.pi - 1.6], [0.0])  # the real files' 1.6 rad swing
    sim = simulate(truth, 2e-3, 1500, q0, v0)
    rng = np.random.default_rng(0)
    angles = np.unwrap(sim.angles, axis=0) + 1e-3 * rng.normal(size=sim.angles.shape)
    return MultibodyRecording(sim.t, angles, np.zeros_like(angles), "synthetic")


START = {  # the start of benchmarks/multibody_real_pendulum.py
    "gravity": [0, 0, -9.81],
    "defaults": SOFT,
    "joints": {
        "pendulum": {"viscous": 2e-4, "dry": 1e-3, "stribeck_delta": 1e-3, "stribeck_c": 1.0}
    },
    "estimate": NAMES,
}


def test_the_plausibility_box_keeps_the_stribeck_fit_from_collapsing():
    rec = _stribeck_pendulum()
    fit = identify(load_model(URDF, START), [rec], h=1e-2, kappa=100.0, max_iterations=20)
    # measured: Iyy 4.4e-5 (the shadow inertia of h = 1e-2; truth 1.09e-4), inside the box
    # [1e-5, 1e-3] around the URDF's 1e-4; before the box, 6.7e-10
    assert fit.lower[0] == pytest.approx(1e-5) and fit.upper[0] == pytest.approx(1e-3)
    assert 1e-5 < fit.values[0] < 1e-3 and fit.collapsed == []
    assert inertia_problem(fit.model, fit.model.values) is None  # the end can be simulated
    assert "MB105" in {f.code for f in fit.findings}
    # the config's bounds replace the box: [0, inf) as before issue 74, and the inertia runs
    # off toward zero again (3.1e-6 after 20 iterations, LM not converged)
    wide = dict(START, bounds={"pendulum.Iyy": [0, None]})
    loose = identify(load_model(URDF, wide), [rec], h=1e-2, kappa=100.0, max_iterations=20)
    assert loose.lower[0] == 0.0 and loose.values[0] < 0.05 * 1e-4
    document = result_document(fit, None)
    assert document["lower"][0] == pytest.approx(1e-5) and document["collapsed"] == []
    # At exactly 0 (the real single arm at h = 2 ms, before the box) an estimate cannot be
    # simulated, but its states' joint angles are kinematic: states.npz is written (it raised,
    # and the command threw the finished fit away with exit 2)
    from dataclasses import replace

    from physid.multibody.outputs import estimated_angles

    values = fit.model.values.copy()
    values[fit.model.index("pendulum.Iyy")] = 0.0
    at_zero = replace(fit, model=replace(fit.model, values=values))
    np.testing.assert_allclose(estimated_angles(at_zero)[0], estimated_angles(fit)[0], atol=1e-12)
    assert fit.status in (Status.OK, Status.STALLED)


def test_a_sound_fit_has_nothing_at_bound():
    soft = {"compliance_linear": 1e-5, "compliance_rotational": 1e-5}
    truth = load_model(
        URDF,
        {"gravity": [0, 0, -9.81], "defaults": soft, "joints": {"pendulum": {"viscous": 2e-4}}},
    )
    q0, v0 = state_from_joints(truth, [np.pi - 1.0], [0.0])
    sim = simulate(truth, 5e-3, 400, q0, v0)
    rec = MultibodyRecording(sim.t, sim.angles, np.zeros_like(sim.angles), "synthetic")
    names = ["pendulum.Iyy", "pendulum.viscous"]
    start = load_model(
        URDF,
        {
            "gravity": [0, 0, -9.81],
            "defaults": soft,
            "estimate": names,
            "joints": {"pendulum": {"viscous": 1e-3}},
            "bodies": {"pendulum": {"Iyy": 2e-4}},
        },
    )
    fit = identify(start, [rec], h=5e-3, kappa=100.0)
    assert fit.values[0] == pytest.approx(1e-4, rel=0.02)  # the URDF's Iyy
    assert fit.at_bound == [] and fit.state_iterations == 0 and fit.status is Status.OK
    assert not {"MB201", "MB202", "MB204"} & {f.code for f in fit.findings}


def test_friction_that_ends_at_zero_is_reported_as_at_its_bound():
    """Issue 32 item 5: a dry friction the data did not decide ends at its bound 0; it is
    flagged, not reported as a measured zero. Terms above it, and non-friction slots, are not."""
    from physid.multibody.estimate.diagnose import friction_at_zero

    names = ["hinge1.dry", "hinge2.dry", "hinge1.viscous", "pendulum.mass", "hinge2.stribeck_c"]
    values = np.array([1e-12, 3e-3, 0.0, 0.0, 0.0])
    lower = np.array([0.0, 0.0, 0.0, 0.0, 0.0])
    assert friction_at_zero(names, values, lower) == ["hinge1.dry", "hinge1.viscous"]
    assert friction_at_zero(names, values, np.full(5, -1.0)) == []  # bound not at zero
