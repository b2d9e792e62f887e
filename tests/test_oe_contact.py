"""Paper B eqs. 2-3, 16-19: contact dynamics (with and without the Baumgarte velocity gain),
impulse reset maps, the multi-phase step and the feet's velocity (no-slip term) of a
floating-base quadruped (Go1) against central finite differences, and the impulse and the
damped contact against their defining equations."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from oe_checks import state_jacobian_by_central_differences

from physid.errors import InputError
from physid.oe.model import state
from physid.oe.model.charts import retract
from physid.oe.model.contact import (
    ContactModels,
    contact_acceleration,
    contact_step,
    contact_step_derivatives,
    feet_velocity,
    impulse,
    impulse_derivatives,
)
from physid.oe.model.dynamics import ParametrizedModel
from physid.oe.solving.build import default_actuation
from physid.sim.oe_robots import GO1, load_model

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
EPS = 1e-6


@pytest.fixture(scope="module")
def go1() -> pin.Model:
    return load_model(GO1, floating=True)


def _setup(model, chart, seed):
    rng = np.random.default_rng(seed)
    dyn = ParametrizedModel(
        model, ["root_joint", "FL_calf_joint"], chart, default_actuation(model), 0.01
    )
    theta = dyn.nominal_theta() + 0.05 * rng.standard_normal(dyn.n_theta)
    dyn.set_theta(theta)
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    x = np.r_[q, rng.standard_normal(model.nv)]
    return dyn, theta, x, rng.standard_normal(model.nv - 6)


def _fd_x(fun, model, x, eps=EPS):  # noqa: ANN001, ANN202
    return state_jacobian_by_central_differences(fun, model, x, eps)


def _fd_theta(fun, dyn, theta, chart, eps=1e-6):
    model = dyn.model
    dyn.set_theta(theta)
    y0 = fun()
    cols = []
    for i in range(theta.size):
        e = np.zeros(theta.size)
        e[i] = eps
        dyn.set_theta(retract(chart, theta, e))
        plus = state.difference(model, y0, fun())
        dyn.set_theta(retract(chart, theta, -e))
        minus = state.difference(model, y0, fun())
        cols.append((plus - minus) / (2 * eps))
    dyn.set_theta(theta)
    return np.column_stack(cols)


def _close(mine, ref, rtol=1e-5):
    np.testing.assert_allclose(mine, ref, atol=rtol * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("chart", ["exp_eig", "log_cholesky"])
@pytest.mark.parametrize("active", [("FL_foot", "RR_foot"), FEET])
@pytest.mark.parametrize("damping", [0.0, 50.0])
def test_contact_step_derivatives(go1, chart, active, damping):
    dyn, theta, x, u = _setup(go1, chart, 0)
    contacts = ContactModels(dyn.model, FEET, damping)
    f, Fx, Ft = contact_step_derivatives(dyn, contacts, active, x, u)
    _close(f, contact_step(dyn, contacts, active, x, u), 1e-12)
    _close(Fx, _fd_x(lambda xx: contact_step(dyn, contacts, active, xx, u), go1, x))
    Ft_fd = _fd_theta(lambda: contact_step(dyn, contacts, active, x, u), dyn, theta, chart)
    _close(Ft, Ft_fd)


@pytest.mark.parametrize("chart", ["exp_eig", "log_cholesky"])
def test_impulse_derivatives(go1, chart):
    dyn, theta, x, _ = _setup(go1, chart, 1)
    contacts = ContactModels(dyn.model, FEET)
    active = ("FL_foot", "RL_foot", "RR_foot")
    y, Fx, Ft = impulse_derivatives(dyn, contacts, active, x)
    _close(y, impulse(dyn, contacts, active, x), 1e-12)
    _close(Fx, _fd_x(lambda xx: impulse(dyn, contacts, active, xx), go1, x))
    _close(Ft, _fd_theta(lambda: impulse(dyn, contacts, active, x), dyn, theta, chart))


def test_impulse_is_a_plastic_impact(go1):
    """Independent check of the reset map: feet at rest after it, M (v+ - v) = Jc^T Lambda
    with Lambda from least squares, and the kinetic energy does not increase."""
    dyn, _, x, _ = _setup(go1, "exp_eig", 2)
    contacts = ContactModels(dyn.model, FEET)
    active = ("FL_foot", "FR_foot")
    model, data = dyn.model, dyn.model.createData()
    q, v = x[: model.nq], x[model.nq :]
    v_plus = impulse(dyn, contacts, active, x)[model.nq :]
    pin.computeJointJacobians(model, data, q)
    Jc = np.vstack(
        [
            pin.getFrameJacobian(model, data, model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED)[:3]
            for f in active
        ]
    )
    np.testing.assert_allclose(Jc @ v_plus, 0, atol=1e-9)
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    lam = np.linalg.lstsq(Jc.T, M @ (v_plus - v), rcond=None)[0]
    np.testing.assert_allclose(Jc.T @ lam, M @ (v_plus - v), atol=1e-8 * np.abs(M @ v).max())
    assert v_plus @ M @ v_plus <= v @ M @ v + 1e-9


def test_contact_step_keeps_feet_still(go1):
    """Eq. 3: the constrained acceleration gives the feet zero acceleration, J a + Jdot v = 0."""
    dyn, _, x, u = _setup(go1, "exp_eig", 3)
    contacts = ContactModels(dyn.model, FEET)
    model, data = dyn.model, dyn.model.createData()
    q = x[: model.nq]
    v = impulse(dyn, contacts, FEET, x)[model.nq :]  # feet at rest
    a = contact_acceleration(dyn, contacts, FEET, q, v, dyn.actuation @ u)
    pin.forwardKinematics(model, data, q, v, a)
    for f in FEET:
        acc = pin.getFrameClassicalAcceleration(
            model, data, model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED
        )
        np.testing.assert_allclose(acc.linear, 0, atol=1e-8)


def test_damped_contact_removes_foot_velocity(go1):
    """Baumgarte velocity gain Kd: the feet's classical acceleration is -Kd times their velocity
    (J a + Jdot v = -Kd J v), so a foot velocity decays like exp(-Kd t) instead of staying."""
    dyn, _, x, u = _setup(go1, "exp_eig", 4)
    kd = 50.0
    contacts = ContactModels(dyn.model, FEET, kd)
    model, data = dyn.model, dyn.model.createData()
    q, v = x[: model.nq], x[model.nq :]  # feet moving
    a = contact_acceleration(dyn, contacts, FEET, q, v, dyn.actuation @ u)
    pin.forwardKinematics(model, data, q, v, a)
    for f in FEET:
        fid = model.getFrameId(f)
        acc = pin.getFrameClassicalAcceleration(model, data, fid, pin.LOCAL_WORLD_ALIGNED).linear
        vel = pin.getFrameVelocity(model, data, fid, pin.LOCAL_WORLD_ALIGNED).linear
        assert np.linalg.norm(vel) > 0.1
        np.testing.assert_allclose(acc, -kd * vel, atol=1e-7 * kd * np.linalg.norm(vel))
    with pytest.raises(InputError, match="damping"):
        ContactModels(model, FEET, -1.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_feet_velocity_and_its_derivatives(go1, seed):
    """World velocity of the feet against J(q) v from Pinocchio's frame Jacobian, and its
    tangent-space Jacobian against central differences (max error measured 2.7e-10)."""
    rng = np.random.default_rng(seed)
    q = pin.integrate(go1, pin.neutral(go1), rng.standard_normal(go1.nv))  # base tilted, moved
    x = np.r_[q, rng.standard_normal(go1.nv)]
    data = go1.createData()
    active = ("FL_foot", "RR_foot")
    r, J = feet_velocity(go1, data, active, x, True)
    np.testing.assert_allclose(r, feet_velocity(go1, data, active, x, False)[0], atol=1e-14)
    pin.computeJointJacobians(go1, data, q)
    pin.updateFramePlacements(go1, data)
    world = pin.LOCAL_WORLD_ALIGNED
    Jw = [pin.getFrameJacobian(go1, data, go1.getFrameId(f), world) for f in active]
    np.testing.assert_allclose(r, np.concatenate([j[:3] @ x[go1.nq :] for j in Jw]), atol=1e-12)
    cols = []
    for i in range(2 * go1.nv):
        e = np.zeros(2 * go1.nv)
        e[i] = EPS
        plus = feet_velocity(go1, data, active, state.integrate(go1, x, e), False)[0]
        minus = feet_velocity(go1, data, active, state.integrate(go1, x, -e), False)[0]
        cols.append((plus - minus) / (2 * EPS))
    _close(J, np.column_stack(cols), 1e-8)
