"""Issue 29 item 2: round feet. Each node's contact point is the lowest point of the foot
sphere at the measured configuration (physid.oe.solving.build.rolling_contact_points); checked
against
its definition (world position = sphere centre - r z), the contact dynamics at that point (the
material point does not accelerate, eq. 3) and the step derivatives against central finite
differences."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from physid.oe.model import state
from physid.oe.model.contact import (
    ContactModels,
    contact_acceleration,
    contact_step,
    contact_step_derivatives,
)
from physid.oe.model.dynamics import ParametrizedModel
from physid.oe.model.measurements import Measurements
from physid.oe.solving.build import default_actuation, rolling_contact_points
from physid.sim.oe_robots import GO1, load_model

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
RADIUS = 0.02


@pytest.fixture(scope="module")
def go1() -> pin.Model:
    return load_model(GO1, floating=True)


def _state(model, seed):
    rng = np.random.default_rng(seed)
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    return np.r_[q, rng.standard_normal(model.nv)], rng.standard_normal(model.nv - 6)


def test_rolling_points_are_the_lowest_points_of_the_spheres(go1):
    xs = [_state(go1, s)[0] for s in range(3)]
    qs = np.array([x[: go1.nq] for x in xs])
    meas = Measurements(q=qs, base_quat=qs[:, 3:7])
    points = rolling_contact_points(go1, FEET, meas, RADIUS)
    data = go1.createData()
    for k, q in enumerate(qs):
        pin.framesForwardKinematics(go1, data, q)
        for i, f in enumerate(FEET):
            oMf = data.oMf[go1.getFrameId(f)]
            np.testing.assert_allclose(
                oMf.act(points[k, i]), oMf.translation - [0.0, 0.0, RADIUS], atol=1e-12
            )


@pytest.mark.parametrize("active", [("FL_foot",), FEET])
def test_round_feet_contact_point_does_not_accelerate(go1, active):
    x, u = _state(go1, 4)
    dyn = ParametrizedModel(go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.01)
    contacts = ContactModels(dyn.model, FEET)
    offset = np.array([0.003, -0.004, -RADIUS])
    contacts.set_points(dict.fromkeys(FEET, offset))
    nq = go1.nq
    a = contact_acceleration(dyn, contacts, active, x[:nq], x[nq:], dyn.tau(x, u))
    model = go1.copy()
    for f in active:  # an independent frame at the offset, on the same joint
        frame = model.frames[model.getFrameId(f)]
        placement = frame.placement * pin.SE3(np.eye(3), offset)
        model.addFrame(pin.Frame(f + "_pt", frame.parentJoint, placement, pin.OP_FRAME))
    data = model.createData()
    pin.forwardKinematics(model, data, x[:nq], x[nq:], a)
    pin.updateFramePlacements(model, data)
    for f in active:
        acc = pin.getFrameClassicalAcceleration(
            model, data, model.getFrameId(f + "_pt"), pin.LOCAL_WORLD_ALIGNED
        ).linear
        np.testing.assert_allclose(acc, 0.0, atol=1e-8)
    plain = ContactModels(dyn.model, FEET)
    a0 = contact_acceleration(dyn, plain, active, x[:nq], x[nq:], dyn.tau(x, u))
    assert np.abs(a - a0).max() > 1e-3  # the point matters


def test_round_feet_step_derivatives_match_finite_differences(go1):
    x, u = _state(go1, 7)
    dyn = ParametrizedModel(go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.01)
    contacts = ContactModels(dyn.model, FEET)
    contacts.set_points(dict.fromkeys(FEET, np.array([0.005, 0.002, -RADIUS])))
    active = FEET[:3]
    _, Fx, _ = contact_step_derivatives(dyn, contacts, active, x, u)
    eps, nv = 1e-6, go1.nv
    y0 = contact_step(dyn, contacts, active, x, u)
    cols = []
    for i in range(2 * nv):
        e = np.zeros(2 * nv)
        e[i] = eps
        plus = state.difference(
            go1, y0, contact_step(dyn, contacts, active, state.integrate(go1, x, e), u)
        )
        minus = state.difference(
            go1, y0, contact_step(dyn, contacts, active, state.integrate(go1, x, -e), u)
        )
        cols.append((plus - minus) / (2 * eps))
    np.testing.assert_allclose(Fx, np.column_stack(cols), atol=1e-6 * max(1.0, np.abs(Fx).max()))
