"""Synthetic Furuta pendulum (paper A §4.7, App. G.3): data simulated at h = 1e-4 s with
compliance 1e-7 and 0.001 rad angle noise; J_Azz, J_Byy, b1, b2 identified from Table 1's
initial values. The truth is the simulation's parameters (independent of the estimator)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from physid.multibody import MultibodyRecording, identify, load_model, simulate, state_from_joints
from physid.status import Status

URDF = Path(__file__).resolve().parents[1] / "examples" / "multibody" / "furuta.urdf"
NAMES = ["hinge1.Izz", "hinge2.Iyy", "hinge1.viscous", "hinge2.viscous"]
TRUTH = {"hinge1.Izz": 0.003, "hinge2.Iyy": 0.004, "hinge1.viscous": 1e-2, "hinge2.viscous": 1e-3}


@pytest.fixture(scope="module")
def release() -> MultibodyRecording:
    soft = {"compliance_linear": 1e-7, "compliance_rotational": 1e-7, "damping": 0.02}
    cfg = {
        "gravity": [0, 0, -9.82],
        "defaults": soft,
        "joints": {"hinge1": {"viscous": 1e-2, "shaft_inertia": 1e-4}, "hinge2": {"viscous": 1e-3}},
    }
    truth = load_model(URDF, cfg)
    q0, v0 = state_from_joints(truth, [0.0, np.pi - 0.03])
    sim = simulate(truth, 1e-4, 15000, q0, v0)  # 1.5 s
    angles = sim.angles[::10] + 1e-3 * np.random.default_rng(0).normal(size=(1501, 2))
    return MultibodyRecording(sim.t[::10], angles, np.zeros_like(angles), "synthetic furuta")


def test_lm_recovers_the_furuta_truth_in_few_iterations(release):
    start = {
        "gravity": [0, 0, -9.82],
        "defaults": {"compliance_linear": 1e-5, "compliance_rotational": 1e-5, "damping": 0.02},
        "joints": {"hinge1": {"viscous": 1e-4, "shaft_inertia": 1e-4}, "hinge2": {"viscous": 1e-4}},
        "bodies": {"hinge1": {"Izz": 0.01}, "hinge2": {"Iyy": 0.01}},  # Table 1
        "estimate": NAMES,
    }
    fit = identify(load_model(URDF, start), [release], h=2e-3, kappa=100.0, max_iterations=15)
    assert fit.converged and fit.status is Status.OK, (fit.status, fit.termination)
    assert fit.iterations <= 8
    # cost at the noise floor: observation residuals ~ 2 angles x 1e-3 rad per step
    assert fit.observation_mse < 2 * 2e-6
    est = dict(zip(NAMES, fit.values, strict=True))
    # shadow parameters of the h = 2 ms model (§4.9): within a few percent of the truth
    assert est["hinge1.Izz"] == pytest.approx(TRUTH["hinge1.Izz"], rel=0.03)
    assert est["hinge2.Iyy"] == pytest.approx(TRUTH["hinge2.Iyy"], rel=0.02)
    assert est["hinge1.viscous"] == pytest.approx(TRUTH["hinge1.viscous"], rel=0.05)
    assert est["hinge2.viscous"] == pytest.approx(TRUTH["hinge2.viscous"], rel=0.2)
    assert fit.not_identifiable == []


def test_thirteen_parameter_swing_up_recovers_the_truth():
    """Paper A §4.6 on a simulated swing-up (reduced: 3 s, simulated at the identification step
    h = 5 ms so the shadow bias of §4.9 is absent; benchmarks/multibody_furuta.py has the full
    problem at the paper's step). Motor gain, five inertias, four friction terms and the tilt
    from Table 1's start: the excited ones within 3 std (the linearised std matched a 10-seed
    Monte Carlo within 25 % on the release problem; measured here: |z| <= 2.7, the largest on
    J_Azz, -6.8 %, the kappa = 100 bias that the release inverse crime also shows: -1.2 % +-
    0.14 % over 10 seeds, gone at kappa = 1e4), the arm's J_xx and J_yy (the arm only turns
    about z) reported not identifiable. Converges in 8 iterations. The arm's J_xx, which its
    motion does not excite, runs from Table 1's start 0.01 (the truth is 1e-4) to the lower end
    of its plausibility box (0.001; it went to 5e-12 before the box): named (MB201) and the
    status at_bound, not a silent estimate."""
    from physid.sim.furuta import swing_up, thirteen_start, thirteen_truth

    data = swing_up(URDF, thirteen_truth(), duration=3.0, h_sim=5e-3)
    fit = identify(load_model(URDF, thirteen_start()), [data.recording], h=5e-3, max_iterations=30)
    assert fit.converged and fit.status is Status.AT_BOUND, (fit.status, fit.termination)
    assert fit.collapsed == ["hinge1.Ixx"]
    (named,) = [f for f in fit.findings if f.code == "MB201"]
    assert named.names == ("hinge1.Ixx",) and named.numbers["bound"] == pytest.approx(1e-3)
    truth = data.truth
    assert "hinge1.Iyy" in fit.not_identifiable
    for name, value, std in zip(fit.names, fit.values, fit.std, strict=True):
        if name in fit.not_identifiable or name in fit.collapsed:
            continue
        true = truth.values[truth.index(name)]
        assert abs(value - true) < 3 * std, (name, value, true, std)
