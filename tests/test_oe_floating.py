"""Paper B on floating bases: the multi-phase step with its reset map (eq. 16) against finite
differences, one Riccati step against the sparse KKT solution (eq. 21) on a walking Go1, and
payload / inertia recovery on simulated Go1 and Hector quadrotor recordings (known truth)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from physid.oe import NoiseStd, OEOptions, initial_guess, make_problem, solve
from physid.oe.model import state
from physid.oe.model.actuation import quad_x_rotors, thrust_actuation
from physid.oe.model.charts import retract
from physid.oe.model.phases import step, step_derivatives
from physid.oe.solving.kkt import solve_kkt
from physid.oe.solving.riccati import solve_step
from physid.sim.oe_floating import hector_flight, simulate_flyer, simulate_go1
from physid.sim.oe_robots import GO1, HECTOR, load_model
from physid.status import Status

PAYLOAD = pin.Inertia(7.2, np.array([-0.03, 0.01, 0.07]), np.diag([0.035, 0.09, 0.10]))


@pytest.fixture(scope="module")
def go1():
    nominal = load_model(GO1, floating=True)
    true = nominal.copy()
    true.inertias[1] = nominal.inertias[1] + PAYLOAD
    rec = simulate_go1(true, nominal, np.random.default_rng(0), duration=1.0, dt=0.005)
    return nominal, true, rec


def _go1_problem(go1, n=None, chart="exp_eig", prior_std=None):
    nominal, _, rec = go1
    n = n or rec.u.shape[0]
    m = rec.measurements
    meas = type(m)(
        q=m.q[: n + 1],
        v=m.v[: n + 1],
        base_quat=m.base_quat[: n + 1],
        gyro=m.gyro[: n + 1],
        base_velocity=m.base_velocity[: n + 1],
    )
    return make_problem(
        nominal,
        ["root_joint"],
        chart,
        rec.dt,
        rec.u[:n],
        meas,
        NoiseStd(),
        theta_prior_std=prior_std,
        x0_prior=np.r_[rec.x[0, : nominal.nq], np.zeros(nominal.nv)],
        contact_frames=rec.contact_frames,
        contact_flags=rec.contact_flags[: n + 1],
    )


def test_recording_has_touchdowns_and_swings(go1):
    flags = go1[2].contact_flags
    assert (~flags).any(axis=0).all()  # every foot swings
    assert (flags[1:] & ~flags[:-1]).any(axis=0).all()  # and lands again


@pytest.mark.parametrize("chart", ["exp_eig", "log_cholesky"])
def test_touchdown_step_derivatives(go1, chart):
    """The composed step Delta_{c_k+1}(f_{c_k}(x)) of a touch-down node against central
    differences in x and theta."""
    problem = _go1_problem(go1, chart=chart)
    flags = problem.contacts.flags
    k = int(np.flatnonzero((flags[1:] & ~flags[:-1]).any(axis=1))[0])
    assert problem.contacts.touchdown(k + 1)
    model, dyn = problem.dynamics.model, problem.dynamics
    rng = np.random.default_rng(4)
    theta = dyn.nominal_theta() + 0.05 * rng.standard_normal(10)
    dyn.set_theta(theta)
    x = go1[2].x[k] + np.r_[np.zeros(model.nq), 0.3 * rng.standard_normal(model.nv)]
    f, Fx, Ft = step_derivatives(problem, k, x)
    np.testing.assert_allclose(f, step(problem, k, x), atol=1e-12)
    eps = 1e-6

    def fd(move):
        cols = []
        for i in range(move.__defaults__[0]):
            e = np.zeros(move.__defaults__[0])
            e[i] = eps
            cols.append(
                (state.difference(model, f, move(e)) - state.difference(model, f, move(-e)))
                / (2 * eps)
            )
        dyn.set_theta(theta)
        return np.column_stack(cols)

    def move_x(e, n=2 * model.nv):
        return step(problem, k, state.integrate(model, x, e))

    def move_t(e, n=10):
        dyn.set_theta(retract(chart, theta, e))
        return step(problem, k, x)

    for mine, ref in ((Fx, fd(move_x)), (Ft, fd(move_t))):
        np.testing.assert_allclose(mine, ref, atol=1e-5 * max(1.0, np.abs(ref).max()))


def test_riccati_equals_kkt_on_walking_go1(go1):
    problem = _go1_problem(go1, n=60, prior_std=1.0)
    xs, ws = initial_guess(problem)
    rng = np.random.default_rng(5)
    ws = 1e-4 * rng.standard_normal(ws.shape)
    lin = problem.linearize(xs, ws, problem.dynamics.nominal_theta())
    assert lin.infeasibility > 0 and problem.contacts.flags[:61].all(axis=1).any()
    mine = solve_step(lin, mu=0.0)
    dx, dw, dtheta = solve_kkt(lin)
    for a, b in ((mine.dx, dx), (mine.dw, dw), (mine.dtheta, dtheta)):
        np.testing.assert_allclose(a, b, atol=1e-8 * max(1.0, np.abs(b).max()))


def test_go1_payload_recovered(go1):
    nominal, true, _ = go1
    problem = _go1_problem(go1)
    xs, ws = initial_guess(problem)
    result = solve(problem, xs, ws, problem.dynamics.nominal_theta(), OEOptions(max_iterations=40))
    assert result.status is Status.OK, result.status
    est = pin.Inertia.FromDynamicParameters(result.pis[0])
    assert abs(est.mass - true.inertias[1].mass) < 0.02 * PAYLOAD.mass
    np.testing.assert_allclose(est.lever, true.inertias[1].lever, atol=3e-3)


def test_hector_inertia_recovered_from_imu_and_thrusts():
    flight = hector_flight(np.random.default_rng(1), duration=3.0, dt=0.01)
    rec, true = flight.recording, flight.true
    problem = make_problem(
        flight.nominal, ["root_joint"], "exp_eig", rec.dt, rec.u, rec.measurements, NoiseStd(),
        actuation=flight.actuation, x0_prior=np.r_[rec.x[0, :7], np.zeros(6)],
    )  # fmt: skip
    xs, ws = initial_guess(problem)
    result = solve(problem, xs, ws, problem.dynamics.nominal_theta(), OEOptions(max_iterations=60))
    assert result.status is Status.OK, result.status
    est = pin.Inertia.FromDynamicParameters(result.pis[0])
    assert abs(est.mass - 1.9) < 0.02
    np.testing.assert_allclose(est.lever, true.inertias[1].lever, atol=3e-3)
    np.testing.assert_allclose(est.inertia, true.inertias[1].inertia, atol=2e-3)


def test_borinot_sphere_needs_the_nullspace_step():
    """Eq. 31: a flying arm whose end link is guessed as a sphere; the Schur complement
    (eqs. 29-30) meets a singular V_theta_theta, the nullspace step converges to the truth."""
    from physid.sim.oe_robots import BORINOT

    base = load_model(BORINOT, floating=True)
    link = "flying_arm_2__j_link1_link2"
    j = base.getJointId(link)
    c = base.inertias[j].lever
    nominal, true = base.copy(), base.copy()
    nominal.inertias[j] = pin.Inertia(0.3, c, 0.4 * 0.3 * 0.05**2 * np.eye(3))
    true.inertias[j] = pin.Inertia(0.6, c + [0, 0, 0.02], 0.4 * 0.6 * 0.06**2 * np.eye(3))
    B = thrust_actuation(base, *quad_x_rotors(0.25))
    rec = simulate_flyer(true, nominal, B, 4, np.random.default_rng(0), duration=1.5, dt=0.01)
    problem = make_problem(
        nominal,
        [link],
        "exp_eig",
        rec.dt,
        rec.u,
        rec.measurements,
        NoiseStd(),
        actuation=B,
        x0_prior=np.r_[rec.x[0, : base.nq], np.zeros(base.nv)],
    )
    xs, ws = initial_guess(problem)
    theta = problem.dynamics.nominal_theta()
    schur = solve(problem, xs, ws, theta, OEOptions(nullspace=False, max_iterations=5))
    assert schur.status is Status.NUMERICAL_FAILURE and schur.termination == "singular"
    assert "Vtt" in schur.message
    result = solve(problem, xs, ws, theta, OEOptions(nullspace=True, max_iterations=60))
    assert result.status is Status.OK, result.status
    est = pin.Inertia.FromDynamicParameters(result.pis[0])
    assert abs(est.mass - 0.6) < 0.01
    np.testing.assert_allclose(est.lever, true.inertias[j].lever, atol=2e-3)


def test_thrust_model_hovers_and_yaws():
    """Thrust actuation: equal thrusts m g / 4 hold a level Hector still (Pinocchio ABA), and a
    differential on the spin pairs gives a pure yaw acceleration c_tau * sum(s_i f_i) / Izz."""
    model = load_model(HECTOR, floating=True)
    data = model.createData()
    pos, spin = quad_x_rotors(0.22)
    B = thrust_actuation(model, pos, spin, torque_coefficient=0.016)
    q, v = pin.neutral(model), np.zeros(6)
    hover = np.full(4, model.inertias[1].mass * 9.81 / 4)
    np.testing.assert_allclose(pin.aba(model, data, q, v, B @ hover), 0, atol=1e-12)
    delta = 0.5 * spin
    a = pin.aba(model, data, q, v, B @ (hover + delta))
    np.testing.assert_allclose(a[:5], 0, atol=1e-12)
    assert np.isclose(a[5], 0.016 * 2.0 / model.inertias[1].inertia[2, 2])


def test_go1_rk4_substeps_converge_and_differ_from_the_estimators_euler():
    """The payload benchmark's data: RK4 on sub-steps is converged (4 and 8 sub-steps agree to
    1e-7) and is not the estimator's own 1-step semi-implicit Euler (they differ by > 1e-3), so
    the estimator meets a genuine model mismatch."""
    nominal = load_model(GO1, floating=True)
    true = nominal.copy()
    true.inertias[1] = nominal.inertias[1] + PAYLOAD
    rng = np.random.default_rng
    runs = {
        (kind, n): simulate_go1(true, nominal, rng(0), 0.3, 0.002, integrator=kind, substeps=n).x
        for kind, n in (("rk4", 4), ("rk4", 8), ("euler", 1))
    }

    def gap(a, b):  # noqa: ANN001, ANN202
        return max(np.abs(state.difference(true, x, y)).max() for x, y in zip(a, b, strict=True))

    assert gap(runs["rk4", 4], runs["rk4", 8]) < 1e-7
    assert gap(runs["rk4", 8], runs["euler", 1]) > 1e-3
