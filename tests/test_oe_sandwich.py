"""The robust (sandwich) covariance of theta (physid.oe.solving.sandwich): the node influences
against the sparse KKT solve, and the sandwich against the Laplace covariance on a free body
whose noise is the noise model's (the information identity); the mean unmodelled force on a
floating base (physid.oe.solving.base_force) against its closed form, and its finding."""

from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from physid.oe.model.measurements import Measurements, NoiseStd
from physid.oe.solving.build import initial_guess, make_problem
from physid.oe.solving.kkt import solve_kkt
from physid.oe.solving.sandwich import long_run_covariance, node_influences
from physid.oe.solving.solver import OEOptions, solve
from physid.sim.oe_floating import accelerometer_readings

MASS = 2.0


def _free_body(inertia: pin.Inertia) -> pin.Model:
    model = pin.Model()
    joint = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
    model.appendBodyToJoint(joint, inertia, pin.SE3.Identity())
    return model


def _problem(seed: int, rho: float = 0.0, n: int = 400, lift: float = 0.0) -> tuple:
    """A thrust-driven free body (2 s at 5 ms): process noise on the velocities of std 1e-3
    per node (AR(1) with lag-1 correlation ``rho``, the same marginal std), gyro, orientation
    and accelerometer at the noise told, and ``lift`` [N] of vertical force in the world that
    the commands do not hold (a model error); ``(problem, xs, ws, theta0)``."""
    true = _free_body(pin.Inertia(MASS, np.zeros(3), np.diag([0.02, 0.03, 0.04])))
    nominal = _free_body(pin.Inertia(1.6, np.zeros(3), np.diag([0.02, 0.03, 0.045])))
    dt = 0.005
    t = dt * np.arange(n)
    waves = [
        (3, 1.3, 0),
        (2, 0.7, 1),
        (2, 1.1, 0),
        (0.02, 0.9, 0),
        (0.03, 1.7, 0.5),
        (0.02, 0.6, 0),
    ]
    u = np.column_stack([a * np.sin(2 * np.pi * hz * t + p) for a, hz, p in waves])
    u[:, 2] += MASS * 9.81
    data, x = true.createData(), np.zeros((n + 1, 13))
    x[0, 6] = 1.0
    rng = np.random.default_rng(seed)
    w = np.zeros(6)
    for k in range(n):  # semi-implicit Euler, as physid.oe.model.dynamics steps
        w = rho * w + np.sqrt(1 - rho**2) * 1e-3 * rng.standard_normal(6)
        R = pin.Quaternion(x[k, 3:7]).toRotationMatrix()
        wrench = u[k] + np.r_[R.T @ [0.0, 0.0, lift], np.zeros(3)]
        a = pin.aba(true, data, x[k, :7], x[k, 7:], wrench)
        v = x[k, 7:] + dt * a + w
        x[k + 1] = np.r_[pin.integrate(true, x[k, :7], dt * v), v]
    acc = accelerometer_readings(true, x, dt) + 0.1 * rng.standard_normal((n + 1, 3))
    gyro = x[:, 10:13] + 1e-2 * rng.standard_normal((n + 1, 3))
    quat = np.array([(pin.Quaternion(q) * pin.Quaternion(pin.exp3(1e-2 * rng.standard_normal(3))))
                     .coeffs() for q in x[:, 3:7]])  # fmt: skip
    meas = Measurements(base_quat=quat, gyro=gyro, accelerometer=acc)
    problem = make_problem(
        nominal,
        ["root_joint"],
        "exp_eig",
        dt,
        u,
        meas,
        NoiseStd(accelerometer=0.1),
        actuation=np.eye(6),
        x0_prior=x[0],
    )
    xs, ws = initial_guess(problem)
    return problem, xs, ws, problem.dynamics.nominal_theta()


def test_node_influences_add_up_to_the_newton_step():
    """``sum_k psi_k = -dtheta`` of the full sparse KKT solve at the initial guess (gaps
    zeroed: every term of the right-hand side is then a node's, the accelerometer's theta
    gradient included)."""
    problem, xs, ws, theta = _problem(0, n=200)
    lin = problem.linearize(xs, ws, theta)
    lin = dataclasses.replace(lin, gaps=np.zeros_like(lin.gaps))
    assert lin.lt_nodes is not None and np.abs(lin.lt).max() > 0
    psi = node_influences(lin)
    _, _, dtheta = solve_kkt(lin)
    np.testing.assert_allclose(
        psi.sum(axis=0), -dtheta, rtol=1e-7, atol=1e-10 * np.abs(dtheta).max()
    )


def test_long_run_covariance_of_ar1_scores():
    """AR(1) scores with lag-1 correlation 0.9: the long-run variance is (1 + rho) / (1 - rho)
    = 19 times n times the variance; the Bartlett estimate within 25 % on 20,000 samples."""
    rng = np.random.default_rng(3)
    e = rng.standard_normal((20_000, 2))
    z = np.zeros_like(e)
    for k in range(1, len(z)):
        z[k] = 0.9 * z[k - 1] + e[k]
    cov, lags = long_run_covariance(z)
    expected = 19.0 * len(z) * z.var(axis=0)
    assert lags > 1
    np.testing.assert_allclose(np.diag(cov), expected, rtol=0.25)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_sandwich_is_the_laplace_covariance_when_the_noise_model_holds(seed):
    """White process and sensor noise at the stds told: the information identity, the
    sandwich's mass std within 25 % of the Laplace one (not inflated: chi2 ~ 1, white)."""
    problem, xs, ws, theta = _problem(seed)
    options = OEOptions(serial_inflation=False, chi2_inflation=False)
    res = solve(problem, xs, ws, theta, options)
    assert res.converged
    lin = problem.linearize(res.xs, res.ws, res.theta)
    cov, _ = long_run_covariance(node_influences(lin))
    G = problem.dynamics.G[0]
    sandwich = np.sqrt((G @ cov[:10, :10] @ G.T)[0, 0])
    assert sandwich == pytest.approx(res.pi_std[0][0], rel=0.25)


def test_mean_base_force_is_the_momentum_the_noise_adds():
    """physid.oe.solving.base_force at a free body's true states with a process noise of known
    mean 2e-4 m/s per node on the world-vertical base velocity: F_z = m mean / dt = 0.08 N
    (2 kg, 5 ms), its standard error m sigma / (sqrt(N) dt) = 0.02 N at sigma 1e-3 over 400
    nodes, and the mass it is worth sqrt(F_z^2 - se^2) / g; no bound without a mean."""
    from physid.oe.solving.base_force import mean_base_force

    problem, xs, _, _ = _problem(0)
    model = problem.dynamics.model
    rng = np.random.default_rng(4)
    ws = np.zeros((problem.horizon, 12))
    rotations = [pin.Quaternion(x[3:7]).toRotationMatrix() for x in xs[:-1]]
    world = 2e-4 * np.array([0.0, 0.0, 1.0]) + 1e-5 * rng.standard_normal((problem.horizon, 3))
    ws[:, 6:9] = [R.T @ w for R, w in zip(rotations, world, strict=True)]  # base frame
    force = mean_base_force(model, xs, ws, problem.process_std_nodes, problem.dynamics.dt)
    mass = pin.computeTotalMass(model)
    assert force.force[2] == pytest.approx(mass * world[:, 2].mean() / 0.005, rel=1e-9)
    assert force.standard_error == pytest.approx(mass * 1e-3 / (20.0 * 0.005), rel=1e-9)
    expected = np.sqrt(force.force[2] ** 2 - force.standard_error**2) / 9.81
    assert force.significant and force.mass_bound == pytest.approx(expected, rel=1e-9)
    quiet = mean_base_force(model, xs, 0 * ws, problem.process_std_nodes, 0.005)
    assert quiet.mass_bound == 0.0 and not quiet.significant


def test_a_significant_base_force_is_a_finding_and_widens_the_base_mass(monkeypatch):
    """A solve of the free body reports its BaseForce; a significant one (here put in by
    hand) is finding OE205 with its numbers."""
    from physid.oe.outputs.document import result_findings
    from physid.oe.solving.base_force import BaseForce

    problem, xs, ws, theta = _problem(0)
    res = solve(problem, xs, ws, theta, OEOptions())
    assert res.base_force is not None and not res.base_force.significant
    # a 0.2 kg bound (a force put in by hand) is added to the mass variance, nothing else moves
    plain = solve(problem, xs, ws, theta, OEOptions(base_force_bound=False))
    assert plain.base_force is None
    import physid.oe.solving.uncertainty as uncertainty

    bound = BaseForce((0.0, 0.0, 2.0), 0.1, 0.2)
    monkeypatch.setattr(uncertainty, "mean_base_force", lambda *_: bound)
    bounded = solve(problem, xs, ws, theta, OEOptions())
    np.testing.assert_array_equal(plain.theta, bounded.theta)
    widened = plain.pi_std[0][0] ** 2 + 0.2**2
    assert bounded.pi_std[0][0] ** 2 == pytest.approx(widened, rel=1e-12)
    np.testing.assert_array_equal(plain.pi_std[0][1:], bounded.pi_std[0][1:])
    assert not [f for f in result_findings(res, {}) if f.code == "OE205"]
    pushed = dataclasses.replace(res, base_force=BaseForce((0.0, 0.0, 2.0), 0.1, 0.2))
    (found,) = [f for f in result_findings(pushed, {}) if f.code == "OE205"]
    assert found.numbers["mass_bound_kg"] == 0.2 and found.numbers["force_z_N"] == 2.0
