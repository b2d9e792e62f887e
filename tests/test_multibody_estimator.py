"""Estimator of physid.multibody: derivatives against finite differences, the box QP against
brute force, the variable-projection covariance against the full inverse, and a small
identification with a known truth (paper A §3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from physid.errors import InputError
from physid.multibody.estimate.covariance import parameter_sensitivity
from physid.multibody.estimate.fit import MultibodyRecording, identify
from physid.multibody.estimate.lm import box_qp
from physid.multibody.estimate.problem import Problem, Segment, States
from physid.multibody.model.build import load_model
from physid.multibody.step.simulate import simulate, state_from_joints

ROOT = Path(__file__).resolve().parents[1] / "examples" / "multibody"


def _furuta_problem(dry: bool):
    joints = {
        "hinge1": {"viscous": 1e-3, "gain": 0.1, "shaft_inertia": 1e-4},
        "hinge2": {"viscous": 1e-4},
    }
    names = ["hinge1.Izz", "hinge2.Iyy", "hinge1.viscous", "hinge2.viscous", "hinge1.gain"]
    names += ["tilt_1", "tilt_2", "hinge1.mass", "hinge2.Ixy"]
    if dry:
        joints["hinge1"]["dry"] = 1e-3
        joints["hinge2"].update(dry=5e-4, stribeck_delta=1e-4, stribeck_c=2.0)
        names += ["hinge1.dry", "hinge2.dry", "hinge2.stribeck_delta", "hinge2.stribeck_c"]
    if dry == "coulomb":  # constant Coulomb torques [N m] beside r mu (issue 27)
        joints["hinge1"]["coulomb"], joints["hinge2"]["coulomb"] = 0.02, 0.004
        names += ["hinge1.coulomb", "hinge2.coulomb"]
    model = load_model(ROOT / "furuta.urdf", {"gravity": [0, 0, -9.82], "joints": joints})
    rng = np.random.default_rng(0)
    q0, v0 = state_from_joints(model, [0.0, np.pi - 0.3], [1.0, 2.0])
    u = np.zeros((12, 2))
    u[:, 0] = rng.normal(size=12) * 0.5
    sim = simulate(model, 1e-2, 11, q0, v0, u=u[:11])
    noisy = sim.angles + 0.01 * rng.normal(size=sim.angles.shape)
    problem = Problem(model, 1e-2, names, 100.0, [Segment(noisy, u)])
    states = States([sim.q.copy()], [sim.v + 0.1 * rng.normal(size=sim.v.shape)])
    p = np.array([model.values[model.index(n)] for n in names])
    p[names.index("tilt_2")] = 0.01
    return problem, states, p


@pytest.mark.parametrize("dry", [False, True, "coulomb"])
def test_sparse_jacobian_matches_finite_differences(dry):
    problem, states, p = _furuta_problem(dry)
    _, J = problem.residual(states, p)
    J = J.toarray()
    n_state = problem.n_state_vars
    J_fd = np.zeros_like(J)
    for i in range(J.shape[1]):
        step = 1e-7 if i < n_state else 1e-6 * max(1.0, abs(p[i - n_state]))
        e = np.zeros(J.shape[1])
        e[i] = step
        plus, minus = problem.retract(states, p, e), problem.retract(states, p, -e)
        J_fd[:, i] = (problem.residual(*plus, False) - problem.residual(*minus, False)) / (2 * step)
    scale = np.maximum(np.abs(J_fd).max(axis=0), 1e-9)
    assert (np.abs(J - J_fd).max(axis=0) / scale).max() < 1e-4


def test_box_qp_matches_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        A = rng.normal(size=(4, 4))
        H = A @ A.T + 0.1 * np.eye(4)
        g = rng.normal(size=4) * 3
        lo = np.array([-0.2, -np.inf, -1.0, 0.0])
        hi = np.array([np.inf, 0.3, 1.0, np.inf])
        d = box_qp(H, g, lo, hi)
        # brute force: projected gradient descent to high accuracy
        x = np.clip(np.zeros(4), lo, hi)
        step = 1.0 / np.linalg.eigvalsh(H).max()
        for _ in range(20000):
            x = np.clip(x - step * (H @ x + g), lo, hi)
        assert np.allclose(d, x, atol=1e-6)


def test_box_qp_with_linear_inequalities_matches_slsqp():
    from scipy.optimize import minimize

    rng = np.random.default_rng(4)
    for _ in range(10):
        A = rng.normal(size=(3, 3))
        H = A @ A.T + 0.1 * np.eye(3)
        g = rng.normal(size=3) * 3
        lo, hi = np.array([-1.0, -np.inf, -0.5]), np.array([1.0, 0.4, np.inf])
        C, b = np.array([[1.0, 1.0, -1.0], [-1.0, 1.0, 1.0]]), np.array([-0.2, -0.3])
        d = box_qp(H, g, lo, hi, C, b)
        ref = minimize(
            lambda x, H=H, g=g: 0.5 * x @ H @ x + g @ x,
            np.zeros(3),
            jac=lambda x, H=H, g=g: H @ x + g,
            bounds=list(zip(lo, hi, strict=True)),
            constraints=[
                {"type": "ineq", "fun": lambda x, C=C, b=b: C @ x - b, "jac": lambda _, C=C: C}
            ],
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 500},
        )
        assert np.allclose(d, ref.x, atol=1e-6)
        assert np.all(C @ d >= b - 1e-9)


def test_triangle_inequalities_of_estimated_inertias():
    model = load_model(ROOT / "furuta.urdf", {"gravity": [0, 0, -9.82]})
    names = ["hinge1.Ixx", "hinge1.Izz", "hinge2.mass", "hinge1.Iyy", "hinge2.Iyy"]
    C, c = model.triangle_inequalities(names)
    # hinge1 (all three estimated): Iyy + Izz >= Ixx, Ixx + Izz >= Iyy, Ixx + Iyy >= Izz;
    # hinge2 (only Iyy estimated): none
    expected = np.array([[-1, 1, 0, 1, 0], [1, 1, 0, -1, 0], [1, -1, 0, 1, 0]], float)
    assert np.allclose(C, expected) and np.allclose(c, 0.0)
    assert np.all(C @ np.array([1e-4, 0.003, 0.4, 0.003, 0.004]) >= c)  # the URDF's values
    assert not np.all(C @ np.array([0.0, 0.01, 0.4, 0.0, 0.004]) >= c)  # Ixx + Iyy < Izz


def test_variable_projection_covariance_is_the_sandwich_of_the_estimator():
    """Eq. 3.31 against the full least-squares propagation and a Monte Carlo of the linear
    problem whose residual noise has the given levels (the estimator is unweighted LS)."""
    rng = np.random.default_rng(5)
    J = sp.csr_matrix(rng.normal(size=(60, 12)) * np.r_[np.full(9, 1e3), np.ones(3)])
    sigma = rng.uniform(0.5, 2.0, size=60)
    p = rng.normal(size=3)
    sens = parameter_sensitivity(J, sigma, 9, p)
    Jd = J.toarray()
    Ji = np.linalg.pinv(Jd)
    expected = (Ji * sigma**2) @ Ji.T
    assert np.allclose(sens.covariance, expected[9:, 9:], rtol=1e-8)
    draws = (Ji @ (sigma[:, None] * rng.normal(size=(60, 20000))))[9:]
    assert np.allclose(sens.std, draws.std(axis=1), rtol=0.03)
    Jw = Jd / sigma[:, None]  # the information form is smaller: not what the estimator has
    assert np.all(np.sqrt(np.diag(np.linalg.inv(Jw.T @ Jw)))[9:] < sens.std)


def test_pendulum_identification_recovers_inertia_and_damping():
    truth = {"gravity": [0, 0, -9.81], "joints": {"pendulum": {"viscous": 0.01}}}
    model = load_model(ROOT / "pendulum.urdf", truth)
    q0, v0 = state_from_joints(model, [1.0], [0.0])
    sim = simulate(model, 1e-3, 3000, q0, v0)
    rng = np.random.default_rng(2)
    angles = sim.angles + 1e-3 * rng.normal(size=sim.angles.shape)
    rec = MultibodyRecording(sim.t, angles, np.zeros_like(angles), "synthetic")
    start = {
        "gravity": [0, 0, -9.81],
        "defaults": {"compliance_linear": 1e-5, "compliance_rotational": 1e-5},
        "bodies": {"pendulum": {"Iyy": 0.02}},
        "joints": {"pendulum": {"viscous": 0.001}},
        "estimate": ["pendulum.Iyy", "pendulum.viscous"],
    }
    fit = identify(load_model(ROOT / "pendulum.urdf", start), [rec], h=5e-3, kappa=100.0)
    assert fit.converged, fit.status
    iyy, b = fit.values
    # shadow parameters of the h = 5 ms model: close to, not equal to, the truth
    assert iyy == pytest.approx(0.01, rel=0.02)
    assert b == pytest.approx(0.01, rel=0.05)
    assert np.all(np.isfinite(fit.std)) and fit.not_identifiable == []


def test_unexcited_parameter_is_reported_not_identifiable():
    soft = {"compliance_linear": 1e-5, "compliance_rotational": 1e-5}
    model = load_model(ROOT / "pendulum.urdf", {"gravity": [0, 0, -9.81], "defaults": soft})
    q0, v0 = state_from_joints(model, [0.5], [0.0])
    sim = simulate(model, 1e-3, 2000, q0, v0)
    rec = MultibodyRecording(sim.t, sim.angles, np.zeros_like(sim.angles), "synthetic")
    fit = identify(model, [rec], h=5e-3, names=["pendulum.Iyy", "pendulum.Izz"])
    # the pendulum never turns about its body z axis: Izz is not excited
    assert "pendulum.Izz" in fit.not_identifiable
    assert "pendulum.Iyy" not in fit.not_identifiable


def test_non_finite_data_is_an_input_error_naming_the_row():
    model = load_model(ROOT / "pendulum.urdf", {"gravity": [0, 0, -9.81]})
    t = np.linspace(0, 1, 101)
    angles = np.zeros((101, 1))
    angles[7] = np.nan
    rec = MultibodyRecording(t, angles, np.zeros_like(angles), "run.npz")
    with pytest.raises(InputError, match="run.npz: angles row 8"):
        identify(model, [rec], names=["pendulum.Iyy"])


def test_free_swing_scale_is_refused_and_really_free():
    """Scaling every mass, inertia and friction coefficient (and the compliances inversely)
    leaves a free swing unchanged, so estimating all of them has the trivial optimum zero:
    physid refuses that estimate."""
    cfg = {"gravity": [0, 0, -9.81], "joints": {"pendulum": {"viscous": 0.01}}}
    model = load_model(ROOT / "pendulum.urdf", cfg)
    scaled_names = ["pendulum.mass", "pendulum.Ixx", "pendulum.Iyy", "pendulum.Izz"]
    updates = {n: 3.0 * model.values[model.index(n)] for n in [*scaled_names, "pendulum.viscous"]}
    for n in ("pendulum.compliance_linear", "pendulum.compliance_rotational"):
        updates[n] = model.values[model.index(n)] / 3.0
    scaled = model.with_values(updates)
    q0, v0 = state_from_joints(model, [1.0], [0.0])
    a = simulate(model, 1e-3, 2000, q0, v0).angles
    b = simulate(scaled, 1e-3, 2000, q0, v0).angles
    assert np.abs(a - b).max() < 1e-9
    rec = MultibodyRecording(np.arange(2001) * 1e-3, a, np.zeros_like(a), "swing")
    with pytest.raises(InputError, match="^estimate: .*only their ratios"):
        identify(model, [rec], names=[*scaled_names, "pendulum.viscous"])
    fit = identify(model, [rec], h=5e-3, names=scaled_names[1:] + ["pendulum.viscous"])
    assert fit.values[1] == pytest.approx(0.01, rel=0.05)  # Iyy, with the mass known
