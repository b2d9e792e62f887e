"""The accelerometer observation of physid.oe (raw IMU specific force instead of paper B's
pre-integrated base velocity): closed forms, Jacobians against finite differences, the Riccati
step against the sparse KKT solution, refusals, and the Go1 payload from a log with no base
velocity."""

from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest
from click.testing import CliRunner
from oe_checks import node_jacobians_by_central_differences, torso_payload_mass

from physid.cli import main
from physid.errors import InputError
from physid.files.io import table_csv_text
from physid.oe.model.accelerometer import Accelerometer
from physid.oe.model.measurements import Measurements
from physid.oe.model.phases import acceleration, acceleration_derivatives
from physid.oe.solving.build import initial_guess, make_problem
from physid.oe.solving.kkt import solve_kkt
from physid.oe.solving.riccati import solve_step
from physid.sim.oe_floating import accelerometer_readings, contract_columns
from physid.sim.oe_robots import GO1, KINOVA, load_model, robot_urdf
from physid.status import Status


def test_specific_force_closed_forms():
    model = load_model(GO1, floating=True)
    nq, nv = model.nq, model.nv
    x = np.r_[pin.neutral(model), np.zeros(nv)]
    roll = 0.3
    x[3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(roll, 0.0, 0.0)).coeffs()
    at_base = Accelerometer(model)
    # at rest the sensor reads minus gravity in its axes: g (0, sin roll, cos roll)
    expected = 9.81 * np.array([0.0, np.sin(roll), np.cos(roll)])
    assert at_base.specific_force(x, np.zeros(nv), nq) == pytest.approx(expected, abs=1e-12)
    # level, spinning at w about z: a sensor at lever r reads the centripetal -w^2 r_xy
    x[3:7], w = [0, 0, 0, 1], 2.0
    x[nq + 5] = w
    imu = Accelerometer(model, "imu_link")
    r = model.frames[model.getFrameId("imu_link")].placement.translation
    centripetal = -(w**2) * np.array([r[0], r[1], 0.0]) + [0.0, 0.0, 9.81]
    assert imu.specific_force(x, np.zeros(nv), nq) == pytest.approx(centripetal, abs=1e-12)


def _problem(go1_payload_walk, n, imu_frame="imu_link", acc=None):
    nominal, true, rec = go1_payload_walk
    m = rec.measurements
    if acc is None:
        acc = accelerometer_readings(true, rec.x, rec.dt, imu_frame)
    meas = Measurements(
        q=m.q[: n + 1], v=m.v[: n + 1], base_quat=m.base_quat[: n + 1], gyro=m.gyro[: n + 1],
        accelerometer=acc[: n + 1],
    )  # fmt: skip
    return make_problem(
        nominal, ["root_joint"], "exp_eig", rec.dt, rec.u[:n], meas,
        x0_prior=rec.x[0], contact_frames=rec.contact_frames,
        contact_flags=rec.contact_flags[: n + 1], imu_frame=imu_frame,
    )  # fmt: skip


def test_accelerometer_jacobians_match_finite_differences(go1_payload_walk):
    _, _, rec = go1_payload_walk
    problem = _problem(go1_payload_walk, 60)
    model, rng = problem.dynamics.model, np.random.default_rng(3)
    k = 50
    assert 0 < len(problem.contacts.active(k)) < 4  # a contact phase, not all feet
    x = rec.x[k] + np.r_[np.zeros(model.nq), 0.1 * rng.standard_normal(model.nv)]
    w = 1e-3 * rng.standard_normal(problem.dynamics.nx)
    theta = problem.dynamics.nominal_theta() + 0.05 * rng.standard_normal(10)
    problem.dynamics.set_theta(theta)
    r, Jx, Jw, Jt = problem.acceleration_terms(k, x, w, acceleration_derivatives(problem, k, x))

    def residual(x_, w_, theta_):
        problem.dynamics.set_theta(theta_)
        return problem.acceleration_terms(k, x_, w_, acceleration(problem, k, x_))[0]

    assert residual(x, w, theta) == pytest.approx(r, abs=1e-10)
    fd = node_jacobians_by_central_differences(residual, model, x, w, theta, "exp_eig")
    for mine, ref in zip((Jx, Jw, Jt), fd, strict=True):
        assert ref == pytest.approx(mine, rel=1e-5, abs=1e-3)
    assert np.abs(Jx[:, 3:6]).max() > 1.0 and np.abs(Jt).max() > 0.1  # not vacuous


def test_riccati_step_with_the_accelerometer_equals_the_sparse_kkt_solution(go1_payload_walk):
    problem = _problem(go1_payload_walk, 80)
    assert any(problem.contacts.touchdown(k + 1) for k in range(80))  # skipped nodes too
    rng = np.random.default_rng(4)
    xs, ws = initial_guess(problem)
    ws = 1e-4 * rng.standard_normal(ws.shape)
    theta = problem.dynamics.nominal_theta() + 0.05 * rng.standard_normal(10)
    lin = problem.linearize(xs, ws, theta)
    step = solve_step(lin, mu=1e-6)
    dx, dw, dtheta = solve_kkt(lin, 1e-6)
    for mine, ref in ((step.dx, dx), (step.dw, dw), (step.dtheta, dtheta)):
        assert np.abs(mine - ref).max() <= 1e-7 * max(1.0, np.abs(ref).max())
    assert problem.evaluate(xs, ws, theta)[0] == pytest.approx(lin.cost, rel=1e-12)


def test_accelerometer_refusals(go1_payload_walk):
    with pytest.raises(InputError, match="floating base"):
        Accelerometer(load_model(KINOVA))
    model = load_model(GO1, floating=True)
    with pytest.raises(InputError, match="'FL_foot' is not on the floating base"):
        Accelerometer(model, "FL_foot")
    with pytest.raises(InputError, match="'nope': no such frame"):
        Accelerometer(model, "nope")
    acc = accelerometer_readings(go1_payload_walk[1], go1_payload_walk[2].x, go1_payload_walk[2].dt)
    acc[5, 1] = np.inf
    with pytest.raises(InputError, match="accelerometer: non-finite acc_y at node 5"):
        _problem(go1_payload_walk, 10, acc=acc)


def test_go1_payload_from_the_raw_accelerometer(go1_payload_walk, tmp_path):
    """The CLI on a log with acc_* columns (IMU at imu_link, 0.1 m/s^2 noise) and no base_v*.
    Measured with the joint terms estimated (the default): torso 8.5664 +- 0.0095 kg (truth
    8.5611; without joint terms 8.5625); the default bias rounds: 3, 24 iterations in all,
    bias below 0.03 m/s^2 (none in the data: the noise's mean over 160 nodes is 0.008)."""
    _, true, rec = go1_payload_walk
    acc = accelerometer_readings(true, rec.x, rec.dt, "imu_link")
    acc += 0.1 * np.random.default_rng(7).standard_normal(acc.shape)
    result = _run_with_accelerometer(
        go1_payload_walk, acc, tmp_path, "imu: {frame: imu_link}\nnoise: {accelerometer: 0.1}\n"
    )
    assert result.exit_code == 0, result.output
    assert "ignoring" not in result.output and "no base_v" not in result.output
    res = json.loads((tmp_path / "out" / "result.json").read_text())
    assert res["status"] == "ok"
    assert res["inputs"]["imu_frame"] == "imu_link" and res["inputs"]["accelerometer"]
    mass, std = res["bodies"]["root_joint"]["mass"], res["bodies"]["root_joint"]["std"]["mass"]
    assert abs(mass - true.inertias[1].mass) < 0.01 * torso_payload_mass(go1_payload_walk)
    # the joint terms are estimated (the default), the frictions at 1e-3-1e-6 (the walk has
    # none): their value-curvature 1e12x the trunk's made the trunk's std NaN (measured 5.3 g
    # off, std 9.5 g)
    assert std is not None and abs(mass - true.inertias[1].mass) < 4 * std
    bias = res["accelerometer_bias"]  # estimated by default; the data have none
    assert bias["converged"] and np.abs(bias["estimate"]).max() < 0.03


def test_accelerometer_bias_is_estimated_by_alternating_rounds(go1_payload_walk):
    """A 0.15 m/s^2 bias (3x a BMI088's post-calibration residual) on a 0.8 s walk: the rounds
    of physid.oe.solving.imu_bias recover it (measured: within 5e-3 m/s^2 in 3 rounds, 13
    Gauss-Newton
    iterations in all; torso 8.5623 kg for 8.5611, 8.5642 kg without the rounds)."""
    from physid.oe.solving.imu_bias import solve_with_accelerometer_bias
    from physid.oe.solving.solver import OEOptions, solve

    _, true, rec = go1_payload_walk
    bias = np.array([0.15, -0.10, 0.08])
    acc = accelerometer_readings(true, rec.x, rec.dt, "imu_link") + bias
    acc += 0.02 * np.random.default_rng(8).standard_normal(acc.shape)
    n = rec.u.shape[0]
    problem = _problem(go1_payload_walk, n, acc=acc)
    xs, ws = initial_guess(problem)
    theta0 = problem.dynamics.nominal_theta()
    plain = solve(problem, xs, ws, theta0, OEOptions())
    rounds = solve_with_accelerometer_bias(problem, xs, ws, theta0, OEOptions())
    assert rounds.converged and rounds.result.status is Status.OK
    assert np.array(rounds.bias_history[-1]) == pytest.approx(bias, abs=0.02)
    truth = true.inertias[1].mass
    error_plain = abs(plain.pis[0][0] - truth)
    error_rounds = abs(rounds.result.pis[0][0] - truth)
    assert error_rounds < 0.01 * torso_payload_mass(go1_payload_walk) and error_rounds < error_plain


@pytest.mark.parametrize(
    "change, frame, said",
    [
        (lambda acc: acc / 9.80665, "imu_link", "about 1: in g (standard gravity)?"),
        (lambda acc: -acc, "imu_link", "pointing down (-9.8"),
        (lambda acc: acc - acc.mean(axis=0), None, "about 0: gravity subtracted by the driver?"),
        # an IMU mounted turned a quarter turn about the base's x axis, read as the base's
        (
            lambda acc: acc @ pin.exp3(np.array([np.pi / 2, 0.0, 0.0])),
            None,
            "90 deg from the vertical when read in the base frame (imu.frame unset)",
        ),
    ],
)
def test_readings_that_are_not_the_specific_force_are_named(go1_payload_walk, change, frame, said):
    """The readings rotated into the world average to the specific force of gravity over a log
    (9.81 m/s^2 up); the ideal readings with 0.1 m/s^2 noise pass, at the base frame and at
    imu_link, and each mistake is named."""
    from physid.oe.model.accelerometer import check_specific_force

    nominal, true, rec = go1_payload_walk
    quaternions = rec.measurements.base_quat
    for place in (None, "imu_link"):
        ideal = accelerometer_readings(true, rec.x, rec.dt, place)
        ideal += 0.1 * np.random.default_rng(7).standard_normal(ideal.shape)
        check_specific_force(nominal, quaternions, ideal, place, "go1.csv")
    acc = accelerometer_readings(true, rec.x, rec.dt, frame)
    with pytest.raises(InputError, match="go1.csv: acc_x, acc_y, acc_z average") as raised:
        check_specific_force(nominal, quaternions, change(acc), frame, "go1.csv")
    assert said in str(raised.value)


def test_the_cli_refuses_an_accelerometer_in_g(go1_payload_walk, tmp_path):
    """acc_* logged in g (as many IMU drivers give them) went into the fit as m/s^2 and, the
    accelerometer's bias estimate soaking up the missing gravity, ended converged at 8.58 kg
    (truth 8.5611) without a word; one error line now, before any work."""
    _, true, rec = go1_payload_walk
    acc = accelerometer_readings(true, rec.x, rec.dt, "imu_link") / 9.80665
    result = _run_with_accelerometer(go1_payload_walk, acc, tmp_path, "imu: {frame: imu_link}\n")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("physid: error:")]
    assert len(lines) == 1 and "in g (standard gravity)?" in lines[0]
    assert not (tmp_path / "out").exists()


def _run_with_accelerometer(walk, acc, tmp_path, config: str):
    """``physid oe --floating`` on the walk with ``acc_*`` columns instead of ``base_v*``."""
    nominal, _, rec = walk
    cols = contract_columns(nominal, rec)
    for axis in "xyz":
        del cols["base_v" + axis]
    cols |= {f"acc_{a}": acc[:, i] for i, a in enumerate("xyz")}
    (tmp_path / "go1.csv").write_text(table_csv_text(cols))
    (tmp_path / "oe.yaml").write_text(config)
    return CliRunner().invoke(main, ["oe", "--urdf", str(robot_urdf(GO1)), "--floating", "--data",
                                     str(tmp_path / "go1.csv"), "--body", "root_joint",
                                     "--config", str(tmp_path / "oe.yaml"), "--out",
                                     str(tmp_path / "out")])  # fmt: skip


def test_bias_rounds_stop_at_their_share_and_the_bias_still_moves(go1_payload_walk):
    """A budget of 5 iterations (round share 1): each round stops after its one iteration and
    the bias is updated after it, so 5 iterations reach the 0.15 m/s^2 bias within 0.01
    (measured 0.149, -0.095, 0.083 for 0.15, -0.10, 0.08, four moves and settled in the
    fifth round); a first round that took the whole budget left it at (0.068, -0.046, 0.043)."""
    from physid.oe.solving.imu_bias import ROUND_SHARE, solve_with_accelerometer_bias
    from physid.oe.solving.solver import OEOptions

    _, true, rec = go1_payload_walk
    bias = np.array([0.15, -0.10, 0.08])
    acc = accelerometer_readings(true, rec.x, rec.dt, "imu_link") + bias
    acc += 0.02 * np.random.default_rng(8).standard_normal(acc.shape)
    problem = _problem(go1_payload_walk, rec.u.shape[0], acc=acc)
    xs, ws = initial_guess(problem)
    options = OEOptions(max_iterations=5)
    assert round(ROUND_SHARE * options.max_iterations) == 1
    rounds = solve_with_accelerometer_bias(
        problem, xs, ws, problem.dynamics.nominal_theta(), options
    )
    assert rounds.iterations == 5 and len(rounds.bias_history) >= 5
    assert np.array(rounds.bias_history[-1]) == pytest.approx(bias, abs=0.01)


def test_bias_rounds_reach_the_fixed_point_when_the_process_noise_takes_most_of_a_bias(
    go1_payload_walk,
):
    """With a process noise of 1e-2 rad/s (10x the default) the first solve leaves 4 % of the
    0.15 m/s^2 bias in the mean residual (measured 0.0058, -0.004, 0.0037 for 0.15, -0.10,
    0.08): the profile Gauss-Newton step of physid.oe.solving.imu_bias (the bias block of the
    joint Laplace covariance times the residual's gradient) reaches it within 6e-3 after the
    first round (0.1446, -0.0949, 0.0851) and it settles in the second; the secant steps
    before took 3 rounds to the same point, the Aitken steps before them stopped 0.03 short
    after 6 (0.120, -0.081, 0.074)."""
    from physid.oe.model.measurements import NoiseStd
    from physid.oe.solving.imu_bias import solve_with_accelerometer_bias
    from physid.oe.solving.solver import OEOptions

    nominal, true, rec = go1_payload_walk
    bias = np.array([0.15, -0.10, 0.08])
    acc = accelerometer_readings(true, rec.x, rec.dt, "imu_link") + bias
    acc += 0.02 * np.random.default_rng(8).standard_normal(acc.shape)
    m = rec.measurements
    meas = Measurements(q=m.q, v=m.v, base_quat=m.base_quat, gyro=m.gyro, accelerometer=acc)
    problem = make_problem(
        nominal, ["root_joint"], "exp_eig", rec.dt, rec.u, meas, NoiseStd(process_v=1e-2),
        x0_prior=rec.x[0], contact_frames=rec.contact_frames, contact_flags=rec.contact_flags,
        imu_frame="imu_link",
    )  # fmt: skip
    xs, ws = initial_guess(problem)
    rounds = solve_with_accelerometer_bias(
        problem, xs, ws, problem.dynamics.nominal_theta(), OEOptions()
    )
    assert rounds.converged and rounds.result.status is Status.OK
    assert np.array(rounds.bias_history[1]) == pytest.approx(bias, abs=6e-3)
    assert np.array(rounds.bias_history[-1]) == pytest.approx(bias, abs=6e-3)
    assert len(rounds.bias_history) <= 3
