"""Paper B: every derivative of physid.oe against central finite differences."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from physid.oe.model import state
from physid.oe.model.charts import retract
from physid.oe.model.dynamics import ParametrizedModel
from physid.oe.model.measurements import Measurements, NoiseStd, residuals
from physid.sim.oe_robots import GO1, KINOVA, load_model

# Pinocchio's unbounded-revolute ``difference`` rounds tangent steps below ~1e-10 to zero, and
# a state step moves q by only dt^2 * eps: central differences with a moderate step.
EPS = 1e-4


def _fd(fun, x0, n, plus, eps=EPS):
    """Central differences of a manifold-valued ``fun`` along ``plus(x0, eps e_i)``."""
    y0 = fun(x0)
    cols = []
    for i in range(n):
        e = np.zeros(n)
        e[i] = eps
        cols.append((plus(fun, x0, e, y0) - plus(fun, x0, -e, y0)) / (2 * eps))
    return np.column_stack(cols)


@pytest.fixture(scope="module")
def kinova() -> pin.Model:
    return load_model(KINOVA)


@pytest.mark.parametrize("chart", ["exp_eig", "log_cholesky"])
def test_free_step_derivatives_match_finite_differences(kinova, chart):
    rng = np.random.default_rng(0)
    # Pinocchio's own generator draws the configuration: seeded, so the suite is deterministic.
    # (Before state.difference took atan2 on unbounded joints, 5 of 60 configurations failed on
    # one entry of Ft by exactly a factor 2: pin.difference returned 0 for one side's 1e-9 rad
    # step; see test_unbounded_joint_difference_is_exact_for_tiny_steps.)
    pin.seed(0)
    dyn = ParametrizedModel(
        kinova, ["j2s6s200_joint_5", "j2s6s200_joint_6"], chart, np.eye(kinova.nv), dt=0.05
    )
    theta = dyn.nominal_theta() + 0.05 * rng.standard_normal(dyn.n_theta)
    dyn.set_theta(theta)
    x = np.r_[pin.randomConfiguration(kinova), rng.standard_normal(kinova.nv)]
    u = rng.standard_normal(kinova.nv)
    f, Fx, Ft = dyn.free_step_derivatives(x, u)
    np.testing.assert_allclose(f, dyn.free_step(x, u), atol=1e-12)

    def along_x(fun, x0, e, y0):
        return state.difference(kinova, y0, fun(state.integrate(kinova, x0, e)))

    Fx_fd = _fd(lambda xx: dyn.free_step(xx, u), x, dyn.nx, along_x)
    np.testing.assert_allclose(Fx, Fx_fd, atol=1e-6 * max(1.0, np.abs(Fx).max()))

    def step_at(th):
        dyn.set_theta(th)
        return dyn.free_step(x, u)

    def along_theta(fun, t0, e, y0):  # increments of the chart's retraction (eq. 32)
        return state.difference(kinova, y0, fun(retract(chart, t0, e)))

    Ft_fd = _fd(step_at, theta, dyn.n_theta, along_theta, eps=1e-5)
    np.testing.assert_allclose(Ft, Ft_fd, rtol=1e-4, atol=1e-6 * np.abs(Ft).max())


def test_unbounded_joint_difference_is_exact_for_tiny_steps(kinova):
    """Tiny steps of every unbounded revolute joint are differenced exactly (Pinocchio 4.1's
    own difference returns 0 for some steps below 1e-8 rad)."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        pin.seed(int(rng.integers(1 << 30)))
        x0 = np.r_[pin.randomConfiguration(kinova), np.zeros(kinova.nv)]
        step = rng.choice([-1.0, 1.0], kinova.nv) * 10.0 ** rng.uniform(-10, -8, kinova.nv)
        x1 = state.integrate(kinova, x0, np.r_[step, np.zeros(kinova.nv)])
        np.testing.assert_allclose(state.difference(kinova, x0, x1)[: kinova.nv], step, rtol=1e-5)


def test_measurement_jacobians_floating_base():
    model = load_model(GO1, floating=True)
    rng = np.random.default_rng(1)
    n = 3
    meas = Measurements(
        q=np.array([pin.randomConfiguration(model) for _ in range(n)]),
        v=rng.standard_normal((n, model.nv - 6)),
        base_quat=np.array([pin.Quaternion(pin.SE3.Random().rotation).coeffs() for _ in range(n)]),
        gyro=rng.standard_normal((n, 3)),
        base_velocity=rng.standard_normal((n, 3)),
    )
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    x = np.r_[q, rng.standard_normal(model.nv)]
    r, J = residuals(model, meas, NoiseStd(), 1, x, True)
    assert r.shape == (12 + 12 + 9,) and J.shape == (r.size, 2 * model.nv)

    def along_x(fun, x0, e, y0):
        return fun(state.integrate(model, x0, e))

    J_fd = _fd(
        lambda xx: residuals(model, meas, NoiseStd(), 1, xx, False)[0], x, 2 * model.nv, along_x
    )
    np.testing.assert_allclose(J, J_fd, atol=1e-5 * np.abs(J).max())


def test_prior_residual_jacobian_matches_retraction():
    from physid.oe.model.charts import prior_residual

    rng = np.random.default_rng(2)
    theta, prior = rng.standard_normal(20), rng.standard_normal(20)
    r, J = prior_residual("exp_eig", theta, prior)

    def along(fun, t0, e, y0):
        return fun(retract("exp_eig", t0, e))

    J_fd = _fd(lambda t: prior_residual("exp_eig", t, prior)[0], theta, 20, along, eps=1e-6)
    np.testing.assert_allclose(J, J_fd, atol=1e-7)
