"""Paper B's optional force/torque sensor observation (physid.oe.model.wrench): the wrench against a
closed form and Pinocchio's RNEA joint forces, its Jacobians in (x, w, theta) against finite
differences, the Riccati step with the sensor's coupling blocks against the sparse KKT solution,
clear refusals, and a payload identified through it when the torque commands are poor."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from oe_checks import node_jacobians_by_central_differences

from physid.errors import InputError
from physid.oe.model.measurements import Measurements, NoiseStd
from physid.oe.model.phases import acceleration, acceleration_derivatives
from physid.oe.model.wrench import WrenchSensor
from physid.oe.solving.build import initial_guess, make_problem
from physid.oe.solving.kkt import solve_kkt
from physid.oe.solving.riccati import solve_step
from physid.oe.solving.solver import OEOptions, solve
from physid.sim.oe_arm import joint_wrenches
from physid.sim.oe_robots import KINOVA, load_model
from physid.status import Status

BODY = "j2s6s200_joint_6"


def _hanging_body(mass: float, com: NDArray) -> pin.Model:  # noqa: F821
    model = pin.Model()
    j = model.addJoint(0, pin.JointModelRY(), pin.SE3.Identity(), "hinge")
    model.addJointFrame(j)
    model.appendBodyToJoint(
        j, pin.Inertia(mass, com, np.diag([1e-2, 2e-2, 3e-2])), pin.SE3.Identity()
    )
    offset = pin.SE3(pin.utils.rpyToMatrix(0.3, -0.2, 0.5), np.array([0.1, 0.0, -0.2]))
    model.addFrame(pin.Frame("sensor", j, 0, offset, pin.FrameType.OP_FRAME))
    return model


def test_wrench_of_a_body_at_rest_is_its_weight_about_the_sensor():
    mass, com = 2.0, np.array([0.05, 0.02, -0.3])
    model = _hanging_body(mass, com)
    zero = np.zeros(1)
    at_joint = WrenchSensor(model, "hinge").wrench(model, zero, zero, zero)
    weight = np.array([0.0, 0.0, mass * 9.81])  # the support holds the body up
    assert at_joint == pytest.approx(np.r_[weight, np.cross(com, weight)], abs=1e-12)
    frame = model.frames[model.getFrameId("sensor")].placement
    at_frame = WrenchSensor(model, "sensor").wrench(model, zero, zero, zero)
    force = frame.rotation.T @ weight  # the same force, about the sensor's origin, its axes
    torque = frame.rotation.T @ np.cross(com - frame.translation, weight)
    assert at_frame == pytest.approx(np.r_[force, torque], abs=1e-12)


def test_wrench_is_the_rnea_joint_force_of_the_subtree():
    model = load_model(KINOVA)
    data, rng = model.createData(), np.random.default_rng(1)
    q = pin.randomConfiguration(model)
    v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    pin.rnea(model, data, q, v, a)
    for name in ("j2s6s200_joint_3", BODY):
        sensor = WrenchSensor(model, name)
        expected = data.f[model.getJointId(name)].vector
        assert sensor.wrench(model, q, v, a) == pytest.approx(expected, abs=1e-10)


@pytest.fixture(scope="module")
def arm(kinova_payload_arm):
    return kinova_payload_arm


def _problem(arm, n, wrench, noise=None, tau=None, prior_std=None):
    nominal, _, rec = arm
    meas = Measurements(q=rec.q_meas[: n + 1], v=rec.v_meas[: n + 1], wrench=wrench)
    commands = rec.tau[:n] if tau is None else tau[:n]
    return make_problem(
        nominal, [BODY], "exp_eig", rec.dt, commands, meas, noise or NoiseStd(),
        theta_prior_std=prior_std,
    )  # fmt: skip


def _ideal_wrench(arm, n):
    _, true, rec = arm
    return {BODY: joint_wrenches(true, BODY, rec.q, rec.v, rec.dt)[: n + 1]}


def test_wrench_jacobians_match_finite_differences(arm):
    problem = _problem(arm, 20, _ideal_wrench(arm, 20))
    model, rng = problem.dynamics.model, np.random.default_rng(2)
    xs, ws = initial_guess(problem)
    k, x, w = 7, xs[7], 1e-3 * rng.standard_normal(problem.dynamics.nx)
    theta = problem.dynamics.nominal_theta() + 0.1 * rng.standard_normal(10)
    problem.dynamics.set_theta(theta)
    r, Jx, Jw, Jt = problem.wrench_terms(k, x, w, acceleration_derivatives(problem, k, x))

    def residual(x_, w_, theta_):
        problem.dynamics.set_theta(theta_)
        return problem.wrench_terms(k, x_, w_, acceleration(problem, k, x_))[0]

    assert residual(x, w, theta) == pytest.approx(r, abs=1e-10)
    fd = node_jacobians_by_central_differences(residual, model, x, w, theta, "exp_eig")
    for mine, ref in zip((Jx, Jw, Jt), fd, strict=True):
        assert ref == pytest.approx(mine, rel=1e-5, abs=1e-4)
    nx = problem.dynamics.nx
    assert np.abs(Jt).max() > 1.0 and np.abs(Jw[:, nx // 2 :]).max() > 1.0  # not vacuous


def test_riccati_step_with_the_sensor_equals_the_sparse_kkt_solution(arm):
    problem = _problem(arm, 40, _ideal_wrench(arm, 40), prior_std=1.0)
    rng = np.random.default_rng(3)
    xs, ws = initial_guess(problem)
    ws = 1e-4 * rng.standard_normal(ws.shape)
    theta = problem.dynamics.nominal_theta() + 0.1 * rng.standard_normal(10)
    lin = problem.linearize(xs, ws, theta)
    assert lin.coupling is not None and np.abs(lin.coupling.Lwt).max() > 1.0
    for mu in (0.0, 1e-3):
        step = solve_step(lin, mu=mu)
        dx, dw, dtheta = solve_kkt(lin, mu)
        for mine, ref in ((step.dx, dx), (step.dw, dw), (step.dtheta, dtheta)):
            assert np.abs(mine - ref).max() <= 1e-8 * max(1.0, np.abs(ref).max())
    cost, _ = problem.evaluate(xs, ws, theta)
    assert cost == pytest.approx(lin.cost, rel=1e-12)


def test_bad_sensors_are_refused_with_the_sensor_named(arm):
    wrench = _ideal_wrench(arm, 10)
    with pytest.raises(InputError, match="'nope'.*no such frame"):
        _problem(arm, 10, {"nope": wrench[BODY]})
    with pytest.raises(InputError, match="'universe'.*world"):
        _problem(arm, 10, {"universe": wrench[BODY]})
    with pytest.raises(InputError, match=rf"'{BODY}'.*\(11, 6\)"):
        _problem(arm, 10, {BODY: wrench[BODY][:5]})
    bad = wrench[BODY].copy()
    bad[4, 5] = np.nan
    with pytest.raises(InputError, match="non-finite tz at node 4"):
        _problem(arm, 10, {BODY: bad})
    with pytest.raises(InputError, match="noise force"):
        _problem(arm, 10, wrench, NoiseStd(force=0.0))


def test_contact_beyond_the_sensor_is_refused():
    from physid.oe.model.phases import ContactSchedule
    from physid.sim.oe_robots import GO1

    model = load_model(GO1, floating=True)
    foot = next(f.name for f in model.frames if f.name.startswith("FL") and "foot" in f.name)
    hip = next(model.names[i] for i in range(2, model.njoints) if "FL" in model.names[i])
    ContactSchedule(model, [foot], np.ones((3, 1)))  # the frame is a valid contact
    with pytest.raises(InputError, match=f"contact frame '{foot}' is beyond it"):
        WrenchSensor(model, hip, [foot])
    with pytest.raises(InputError, match="base"):
        WrenchSensor(model, model.names[1])


def test_sensor_identifies_the_payload_when_the_torque_commands_are_biased(arm):
    """A 15 % torque-constant error on every motor: the commands alone mislead the estimate,
    the wrist sensor (0.1 N, 5 mN m noise) sees the motion's real wrench."""
    _, true, rec = arm
    n, rng = rec.tau.shape[0], np.random.default_rng(4)
    ideal = _ideal_wrench(arm, n)[BODY]
    noisy = ideal + rng.standard_normal(ideal.shape) * np.r_[np.full(3, 0.1), np.full(3, 5e-3)]
    tau = 1.15 * rec.tau
    noise = NoiseStd(process_v=0.05)  # the torque error is what the process noise is for
    truth = true.inertias[true.getJointId(BODY)]
    errors = {}
    for label, wrench in (("commands only", None), ("with sensor", {BODY: noisy})):
        problem = _problem(arm, n, wrench, noise, tau=tau)
        xs, ws = initial_guess(problem)
        result = solve(problem, xs, ws, problem.dynamics.nominal_theta(), OEOptions())
        assert result.status is Status.OK, label
        mass = float(result.pis[0][0])
        errors[label] = abs(mass - truth.mass) / truth.mass
    assert errors["with sensor"] < 0.01
    assert errors["commands only"] > 3 * errors["with sensor"]


def test_wrench_jacobians_on_a_floating_base_match_finite_differences():
    """Borinot (a drone with a 2-link arm), sensor at the arm's first joint: the base's
    free-flyer tangent enters through the kinematics and the free dynamics."""
    from physid.sim.oe_robots import BORINOT

    model = load_model(BORINOT, floating=True)
    rng = np.random.default_rng(5)
    n, sensor = 4, "flying_arm_2__j_bl_link1"
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    meas = Measurements(q=np.tile(q, (n + 1, 1)), wrench={sensor: np.zeros((n + 1, 6))})
    problem = make_problem(
        model, ["flying_arm_2__j_link1_link2"], "log_cholesky", 0.01,
        rng.standard_normal((n, model.nv - 6)), meas,
    )  # fmt: skip
    x = np.r_[q, rng.standard_normal(model.nv)]
    w = 1e-3 * rng.standard_normal(2 * model.nv)
    theta = problem.dynamics.nominal_theta()
    problem.dynamics.set_theta(theta)
    r, Jx, Jw, Jt = problem.wrench_terms(1, x, w, acceleration_derivatives(problem, 1, x))

    def residual(x_, w_, theta_):
        problem.dynamics.set_theta(theta_)
        return problem.wrench_terms(1, x_, w_, acceleration(problem, 1, x_))[0]

    fd = node_jacobians_by_central_differences(residual, model, x, w, theta, "log_cholesky")
    for mine, ref in zip((Jx, Jw, Jt), fd, strict=True):
        assert ref == pytest.approx(mine, rel=1e-5, abs=1e-4)
    # free fall: no gravity inside the robot, so the base pose leaves the wrench unchanged
    # (a closed-form check of the contact-free model); the base's spin does not
    assert np.abs(Jx[:, :6]).max() < 1e-9
    assert np.abs(Jx[:, model.nv + 3 : model.nv + 6]).max() > 1e-2
