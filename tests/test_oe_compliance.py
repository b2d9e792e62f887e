"""The compliant contact (physid.oe.model.compliance): its step and derivatives against central
finite differences and its defining equation, and the compliance estimated with the mass from a
simulation with a known compliance, against the rigid model's bias."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from physid.oe.model import state
from physid.oe.model.compliance import ContactCompliance
from physid.oe.model.contact import ContactModels, contact_acceleration, contact_step, contact_step_derivatives
from physid.oe.model.dynamics import JointTerms, ParametrizedModel
from physid.oe.solving.build import default_actuation
from physid.sim.oe_robots import GO1, load_model

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


@pytest.fixture(scope="module")
def go1() -> pin.Model:
    return load_model(GO1, floating=True)


def _fd(fun, model, x, eps=1e-6):
    y0 = fun(x)
    cols = []
    for i in range(2 * model.nv):
        e = np.zeros(2 * model.nv)
        e[i] = eps
        plus = state.difference(model, y0, fun(state.integrate(model, x, e)))
        minus = state.difference(model, y0, fun(state.integrate(model, x, -e)))
        cols.append((plus - minus) / (2 * eps))
    return np.column_stack(cols)


@pytest.mark.parametrize("damping", [0.0, 20.0])
@pytest.mark.parametrize("friction", [False, True])
def test_compliant_step_derivatives(go1, damping, friction):
    rng = np.random.default_rng(3)
    nv = go1.nv
    joints = None
    if friction:
        joints = JointTerms(np.full(nv, 0.01), np.full(nv, 0.5), np.full(nv, 0.2))
    dyn = ParametrizedModel(
        go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.005, joints,
        compliance=ContactCompliance(0.05),
    )
    theta = dyn.nominal_theta() + 0.05 * rng.standard_normal(dyn.n_theta)
    dyn.set_theta(theta)
    contacts = ContactModels(dyn.model, FEET, damping)
    contacts.set_points({"FL_foot": np.array([0.0, 0.01, -0.02])})
    q = pin.randomConfiguration(go1, -np.ones(go1.nq), np.ones(go1.nq))
    x = np.r_[q, rng.standard_normal(nv)]
    u = rng.standard_normal(nv - 6)
    active = ("FL_foot", "RR_foot", "RL_foot")
    f, Fx, Ft = contact_step_derivatives(dyn, contacts, active, x, u)
    np.testing.assert_allclose(f, contact_step(dyn, contacts, active, x, u), atol=1e-12)
    ref = _fd(lambda y: contact_step(dyn, contacts, active, y, u), go1, x)
    np.testing.assert_allclose(Fx, ref, atol=1e-5 * max(1.0, np.abs(ref).max()))
    cols = []
    for i in range(theta.size):
        e = 1e-6 * np.eye(theta.size)[i]
        dyn.set_theta(dyn.retract(theta, e))
        plus = contact_step(dyn, contacts, active, x, u)
        dyn.set_theta(dyn.retract(theta, -e))
        minus = contact_step(dyn, contacts, active, x, u)
        cols.append(state.difference(go1, minus, plus) / 2e-6)
    dyn.set_theta(theta)
    ref = np.column_stack(cols)
    assert np.abs(ref[:, -1]).max() > 1e-4  # the compliance moves the step
    np.testing.assert_allclose(Ft, ref, atol=1e-5 * max(1.0, np.abs(ref).max()))


def test_compliant_contact_yields_under_its_force(go1):
    """``Jc a + gamma = -C lambda``: the foot points accelerate against their forces."""
    rng = np.random.default_rng(4)
    C = 0.03
    dyn = ParametrizedModel(
        go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.005, compliance=C
    )
    rigid = ParametrizedModel(go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.005)
    q = pin.randomConfiguration(go1, -np.ones(go1.nq), np.ones(go1.nq))
    v = rng.standard_normal(go1.nv)
    tau = np.r_[np.zeros(6), rng.standard_normal(go1.nv - 6)]
    active = ("FL_foot", "FR_foot")
    contacts = ContactModels(dyn.model, FEET)
    a = contact_acceleration(dyn, contacts, active, q, v, tau)
    lam = contacts.get(active)[0].lambda_c.copy()
    a0 = contact_acceleration(rigid, ContactModels(rigid.model, FEET), active, q, v, tau)
    data = dyn.model.createData()
    point_acc = []
    for name, acc in (("C", a), ("rigid", a0)):
        pin.forwardKinematics(dyn.model, data, q, v, acc)
        pin.updateFramePlacements(dyn.model, data)
        point_acc.append(
            np.concatenate(
                [
                    pin.getFrameClassicalAcceleration(
                        dyn.model, data, dyn.model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED
                    ).linear
                    for f in active
                ]
            )
        )
    np.testing.assert_allclose(point_acc[1], 0.0, atol=1e-8)
    np.testing.assert_allclose(point_acc[0], -C * lam, atol=1e-8)
    M = pin.crba(dyn.model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.rnea(dyn.model, data, q, v, np.zeros(go1.nv))
    J = np.vstack(
        [
            pin.computeFrameJacobian(
                dyn.model, data, q, dyn.model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED
            )[:3]
            for f in active
        ]
    )
    np.testing.assert_allclose(M @ a + h - tau, J.T @ lam, atol=1e-8)
