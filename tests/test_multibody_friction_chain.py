"""The estimator's residuals and the simulator agree with dry and Stribeck friction on a chain
(issue 13, paper A §4.5 on the real double arm): states simulated by SPOOK with the frictional
MLCP (eqs. 2.24-2.28) have zero impulse residuals (eqs. 3.7-3.8, the one-row friction
complementarity of F.4 / eq. 4.1) at the same parameters, also for the hinge whose parent body
moves. The double arm's Stribeck fit validated worse than its viscous fit; this rules out a
simulator/estimator mismatch as the cause."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from physid.multibody.estimate.problem import Problem, Segment, States
from physid.multibody.model.build import load_model
from physid.multibody.step.simulate import simulate, state_from_joints

URDF = Path(__file__).resolve().parents[1] / "examples" / "multibody" / "multiarm_double.urdf"
SOFT = {"compliance_linear": 1e-5, "compliance_rotational": 1e-5, "damping": 0.02}


def _impulse_residuals(joints: dict, h: float = 1e-3, n: int = 400) -> tuple[np.ndarray, object]:
    config = {"gravity": [0, 0, -9.81], "defaults": SOFT, "joints": joints}
    model = load_model(URDF, config)
    q0, v0 = state_from_joints(model, [1.2, -0.8], [0.0, 0.0])
    sim = simulate(model, h, n, q0, v0)
    problem = Problem(model, h, [], 1.0, [Segment(sim.angles, np.zeros_like(sim.angles))])
    r = problem.residual(States([sim.q], [sim.v]), np.zeros(0), False)
    return r[problem.ns : len(sim.angles) * problem.ns], sim


def test_simulated_states_have_zero_impulse_residuals_with_dry_and_stribeck_friction():
    viscous = {"joint1": {"viscous": 1e-4}, "joint2": {"viscous": 1e-5}}
    frictional = {
        "joint1": {"viscous": 1e-4, "dry": 2e-4},
        "joint2": {"viscous": 1e-5, "dry": 1e-4, "stribeck_delta": 4e-4, "stribeck_c": 0.02},
    }
    r_viscous, sim_viscous = _impulse_residuals(viscous)
    r, sim = _impulse_residuals(frictional)
    assert sim.lcp_failures == 0
    # the friction acts: the angles differ from the viscous run by more than 1 mrad
    assert np.abs(sim.angles - sim_viscous.angles).max() > 1e-3
    # impulses of this motion are ~1e-3 N s per step; measured residuals 1e-12 (viscous 4e-15)
    assert np.abs(r_viscous).max() < 1e-11
    assert np.abs(r).max() < 1e-10


def test_relaxed_friction_row_has_zero_impulse_residuals_while_sticking_and_slipping():
    """friction_damping (the stick velocity's relaxation, dynamics.friction_row) is the same row
    in the simulator's MLCP and the estimator's one-row complementarity: zero residuals over a
    run in which joint1 sticks (creeping) and slips."""
    row = {"friction_damping": 0.01, "friction_compliance": 0.05}
    joints = {
        "joint1": {"viscous": 1e-4, "coulomb": 0.1, **row},
        "joint2": {"viscous": 1e-5, "coulomb": 2e-3, **row},
    }
    r, sim = _impulse_residuals(joints, n=1500)
    hard, sim_hard = _impulse_residuals(
        {j: {k: v for k, v in terms.items() if k not in row} for j, terms in joints.items()}, n=1500
    )
    assert sim.lcp_failures == 0
    rate = np.abs(sim.rates[:, 0])
    assert 0.2 < (rate < 0.05).mean() < 0.9 and rate.max() > 0.5  # sticks (creeps) and slips
    assert np.abs(sim.angles - sim_hard.angles).max() > 1e-3  # the relaxation acts
    assert np.abs(r).max() < 1e-10 and np.abs(hard).max() < 1e-10
