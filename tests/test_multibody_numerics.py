"""Numerics of the multibody estimator (paper A §3): the exact rotation residual, the banded
normal equations, the compiled per-step functions, and exact recovery on an inverse crime (data
from the identification model itself, no noise), which the small-angle residual of eq. 3.24,
a single second-order correction or the old normal-equation regularisation each broke."""

from __future__ import annotations

import shutil
from pathlib import Path

import casadi as ca
import numpy as np
import pytest
import scipy.sparse as sp

from physid.multibody import MultibodyRecording, identify, load_model, simulate, state_from_joints
from physid.multibody.estimate.normal import NormalEquations
from physid.multibody.estimate.residuals import build_residuals
from physid.multibody.model.kinematics import (
    box_minus,
    np_box_minus,
    np_box_minus_rows,
    np_exp,
    np_quat_mul,
)
from physid.multibody.step.simulate import configurations_from_joints
from physid.sim.furuta import table1_start, table_g5

ROOT = Path(__file__).resolve().parents[1] / "examples" / "multibody"
NAMES = ["hinge1.Izz", "hinge2.Iyy", "hinge1.viscous", "hinge2.viscous"]


def test_rotation_residual_is_the_exact_rotation_vector_for_either_quaternion_sign():
    rng = np.random.default_rng(1)
    q0, q1 = ca.SX.sym("q0", 7), ca.SX.sym("q1", 7)
    fn = ca.Function("bm", [q1, q0], [box_minus([(q1[:3], q1[3:])], [(q0[:3], q0[3:])], 1)])
    for angle in (0.0, 1e-9, 1e-4, 0.3, 1.5, 3.0):
        axis = rng.normal(size=3)
        psi = angle * axis / np.linalg.norm(axis)
        e0 = rng.normal(size=4)
        e0 /= np.linalg.norm(e0)
        e1 = np_quat_mul(np_exp(psi), e0)
        a = np.r_[rng.normal(size=3), e0]
        for sign in (1.0, -1.0):
            b = np.r_[a[:3] + 1.0, sign * e1]
            got = np.asarray(fn(b, a), float).ravel()
            assert np.allclose(got[3:], psi, atol=1e-12, rtol=1e-10)
            assert np.allclose(got, np_box_minus(b, a), atol=1e-12)
        jac = ca.Function("j", [q1, q0], [ca.jacobian(fn(q1, q0), q1)])
        assert np.all(np.isfinite(np.asarray(jac(b, a), float)))  # smooth at angle 0 too


def test_vectorised_initial_states_equal_the_per_row_functions():
    """The rows of ``np_box_minus_rows`` are the known rotation vectors, and the vectorised
    configurations equal ``state_from_joints`` row by row, including turns beyond 120 deg
    (Eigen's negative-trace branch of the quaternion)."""
    rng = np.random.default_rng(5)
    psi = rng.normal(size=(400, 3))
    psi *= rng.uniform(0.0, 3.1, size=(400, 1)) / np.linalg.norm(psi, axis=1, keepdims=True)
    psi[0] = 0.0
    e0 = rng.normal(size=(400, 4))
    e0 /= np.linalg.norm(e0, axis=1, keepdims=True)
    e1 = np.array([np_quat_mul(np_exp(d), e) for d, e in zip(psi, e0, strict=True)])
    e1[::2] *= -1.0  # either sign of the quaternion
    q0 = np.column_stack([rng.normal(size=(400, 3)), e0])
    q1 = np.column_stack([q0[:, :3] + 1.0, e1])
    got = np_box_minus_rows(q1, q0)
    assert np.allclose(got[:, 3:], psi, atol=1e-12, rtol=1e-10)
    assert np.allclose(got[:, :3], 1.0, atol=1e-15)
    model = load_model(ROOT / "furuta.urdf", table_g5())
    angles = rng.uniform(-7.0, 7.0, size=(300, 2))
    Q = configurations_from_joints(model, angles)
    want = np.array([state_from_joints(model, a)[0] for a in angles])
    assert np.array_equal(Q, want)  # same arithmetic, same bits
    assert np.allclose(np.linalg.norm(Q[:, [3, 4, 5, 6]], axis=1), 1.0, atol=1e-15)


def test_banded_normal_equations_solve_the_damped_system():
    rng = np.random.default_rng(2)
    n_blocks, ns, npar = 30, 4, 3
    blocks = []
    for k in range(n_blocks - 1):
        row = np.zeros((ns, n_blocks * ns + npar))
        row[:, k * ns : (k + 2) * ns] = rng.normal(size=(ns, 2 * ns))
        row[:, -npar:] = rng.normal(size=(ns, npar))
        blocks.append(row)
    obs = np.zeros((n_blocks * 2, n_blocks * ns + npar))
    for k in range(n_blocks):
        obs[2 * k : 2 * k + 2, k * ns : (k + 1) * ns] = rng.normal(size=(2, ns))
    J = np.vstack([*blocks, obs])
    r = rng.normal(size=J.shape[0])
    normal = NormalEquations(sp.csr_matrix(J), r, n_blocks * ns)
    assert normal.ab is not None and normal.band == 2 * ns - 1
    H = J.T @ J
    for alpha in (1e-15, 1e-3, 1.0):
        free = np.full(npar, np.inf)
        dx = normal.factor(alpha)(J.T @ r, -free, free)
        expected = -np.linalg.solve(H + alpha * np.diag(np.diag(H)), J.T @ r)
        assert np.allclose(dx, expected, rtol=1e-8, atol=1e-10)
    assert normal.quadratic(dx) == pytest.approx(dx @ H @ dx, rel=1e-10)


def test_compiled_functions_match_interpreted(tmp_path, monkeypatch):
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv("PHYSID_CACHE", str(tmp_path))
    cfg = {"gravity": [0, 0, -9.81], "joints": {"pendulum": {"viscous": 0.01, "dry": 1e-3}}}
    model = load_model(ROOT / "pendulum.urdf", cfg)
    names = ["pendulum.Iyy", "pendulum.viscous", "pendulum.dry"]
    plain = build_residuals(model, 1e-2, names, 100.0)
    fast = build_residuals(model, 1e-2, names, 100.0, compile=True)
    assert fast.notes == () and list(tmp_path.rglob("*.so"))
    rng = np.random.default_rng(3)
    q0, v0 = state_from_joints(model, [0.7], [1.0])
    q1, v1 = state_from_joints(model, [0.71], [0.9])
    args = [
        q0,
        v0 + 1e-3 * rng.normal(size=6),
        q1,
        v1,
        np.zeros(1),
        [0.01, 0.01, 1e-3],
        model.values,
    ]
    for a, b in zip(plain.dyn_jac(*args), fast.dyn_jac(*args), strict=True):
        assert np.allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-12, atol=1e-12)


def test_inverse_crime_is_recovered_exactly():
    """Noise-free data simulated at the identification step with the identification model's
    own structure: the Table G.5 values from Table 1's start, to round-off."""
    truth = load_model(ROOT / "furuta.urdf", table_g5())
    q0, v0 = state_from_joints(truth, [0.0, np.pi - 0.03])
    sim = simulate(truth, 1e-2, 150, q0, v0)
    rec = MultibodyRecording(sim.t, sim.angles, np.zeros_like(sim.angles), "crime")
    model = load_model(ROOT / "furuta.urdf", table1_start(NAMES))
    fit = identify(model, [rec], h=1e-2, kappa=100.0, cutoff_hz=None, max_iterations=20)
    assert fit.converged, fit.status
    true = [truth.values[truth.index(n)] for n in NAMES]
    assert np.allclose(fit.values, true, rtol=1e-8)
    assert fit.iterations <= 8
