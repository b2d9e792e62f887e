"""physid excite: optimal Fourier excitation design (issue 12, item 3).

Independent truths: the simulator's own evaluation of the Fourier series
(:class:`physid.sim.arm.FourierExcitation`), torques by
:func:`physid.robot.regressor.predict_torques`,
limits read from the URDF's XML, finite differences of the criterion and of the torques.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from click.testing import CliRunner

from physid.cli import main
from physid.errors import InputError
from physid.excite import (
    ExcitationOptions,
    FourierBasis,
    design_excitation,
    joint_limits,
    run_excite,
)
from physid.excite.codes import LIMITS_VIOLATED, SOLVER_STOPPED
from physid.excite.criterion import Criterion
from physid.excite.limits import NominalTorques
from physid.excite.nlp import ExcitationProblem
from physid.recordings.trajectory import load_trajectory
from physid.robot.model import robot_from_urdf
from physid.robot.regressor import base_parameters, predict_torques
from physid.sim.arm import FourierExcitation

# A two-link arm in a vertical plane (both joints about y), limits on every joint.
TWO_LINK = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base"/>
  <link name="upper">
    <inertial><origin xyz="0.2 0 0.01"/><mass value="2.0"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial>
  </link>
  <link name="fore">
    <inertial><origin xyz="0.15 0.01 0"/><mass value="1.0"/>
      <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.012"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.0" effort="20" velocity="1.5"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="fore"/><origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2.0" upper="2.0" effort="8" velocity="2.0"/>
  </joint>
</robot>
"""
FAST = {"max_iterations": 25, "constraint_points": 120, "information_points": 40, "starts": 1}


@pytest.fixture(scope="module")
def urdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("excite") / "two_link.urdf"
    path.write_text(TWO_LINK)
    return path


@pytest.fixture(scope="module")
def model(urdf):
    return robot_from_urdf(urdf)


@pytest.fixture(scope="module")
def designed(model):
    limits = joint_limits(model, {"elbow": {"acceleration": 6.0}}, highest_frequency_hz=0.6)
    options = ExcitationOptions(0.2, 3, "cond", seed=1, **FAST)
    return design_excitation(model, limits, options)


def _xml_limits(path) -> dict:
    root = ET.parse(path).getroot()
    return {j.get("name"): j.find("limit").attrib for j in root.iter("joint")}


def test_basis_matches_the_simulator_series_and_end_conditions():
    basis = FourierBasis(0.25, 4, 3)
    x = basis.random(np.random.default_rng(3)) + np.repeat([0.1, 0.0, -0.2], basis.per_joint) * (
        np.arange(basis.size) % basis.per_joint == 0
    )
    t = np.linspace(0.0, 8.0, 321)
    offset, a, b = basis.unpack(x)
    expected = FourierExcitation(0.25, offset, a, b)(t)
    for mine, truth in zip(basis.evaluate(x, t), expected, strict=True):
        np.testing.assert_allclose(mine, truth, atol=1e-12)
    _, dq, ddq = basis.evaluate(x, np.array([0.0, basis.period_s, 2 * basis.period_s]))
    np.testing.assert_allclose(dq, 0.0, atol=1e-12)
    np.testing.assert_allclose(ddq, 0.0, atol=1e-12)


def test_criterion_gradient_matches_finite_differences(model):
    basis = FourierBasis(0.2, 2, model.n_joints)
    x = basis.random(np.random.default_rng(0))
    base = base_parameters(model)
    for kind, prior in (("logdet", None), ("cond", None), ("logdet", 0.5)):
        std = None if prior is None else prior * np.ones(base.size)
        criterion = Criterion(model, base, kind, std, 0.3)
        problem = ExcitationProblem(basis, criterion, NominalTorques(model),
                                    basis.grid(30, shift=0.5), basis.grid(20))  # fmt: skip
        gradient = problem.objective_gradient(x).ravel()
        h = 1e-5
        numeric = np.array([
            (problem.objective(x + h * e) - problem.objective(x - h * e)) / (2 * h)
            for e in np.eye(basis.size)
        ])  # fmt: skip
        np.testing.assert_allclose(gradient, numeric, rtol=1e-4, atol=1e-6 * np.abs(numeric).max())


def test_nominal_torques_and_their_jacobian(model):
    rng = np.random.default_rng(2)
    q, dq, ddq = rng.standard_normal((3, 4, model.n_joints))
    torques = NominalTorques(model)
    expected = predict_torques(model, model.prior_parameters(), q, dq, ddq)
    np.testing.assert_allclose(torques.torques(q, dq, ddq), expected, atol=1e-10)
    basis = FourierBasis(0.2, 2, model.n_joints)
    problem = ExcitationProblem(basis, None, torques, basis.grid(10), basis.grid(7))
    x = basis.random(rng)
    h = 1e-6
    numeric = np.column_stack([
        (problem.torque_values(x + h * e) - problem.torque_values(x - h * e)) / (2 * h)
        for e in np.eye(basis.size)
    ])  # fmt: skip
    np.testing.assert_allclose(problem.torque_jacobian(x), numeric, atol=1e-6)


def test_design_respects_limits_improves_and_ends_at_rest(designed, model, urdf):
    result = designed
    assert result.quality.criterion < result.start_quality.criterion - 0.1
    assert result.quality.condition_number_scaled < result.start_quality.condition_number_scaled
    # Independent check, 1 kHz over two periods: the simulator's series, predict_torques, the
    # URDF's own numbers (acceleration: the override given above).
    offset, a, b = result.basis.unpack(result.coefficients)
    t = np.arange(0.0, 2 * result.basis.period_s + 1e-9, 1e-3)
    q, dq, ddq = FourierExcitation(result.basis.base_frequency_hz, offset, a, b)(t)
    tau = predict_torques(model, model.prior_parameters(), q, dq, ddq)
    xml = _xml_limits(urdf)
    for k, joint in enumerate(model.joint_names):
        limit = {key: float(value) for key, value in xml[joint].items()}
        assert limit["lower"] <= q[:, k].min() and q[:, k].max() <= limit["upper"]
        assert np.abs(dq[:, k]).max() <= limit["velocity"]
        assert np.abs(tau[:, k]).max() <= limit["effort"]
    assert np.abs(ddq[:, 1]).max() <= 6.0
    assert np.abs(ddq[:, 0]).max() <= 1.5 * 2 * np.pi * 0.6  # the default acceleration limit
    ends = np.array([0.0, result.basis.period_s])
    _, dq_end, ddq_end = result.basis.evaluate(result.coefficients, ends)
    np.testing.assert_allclose(dq_end, 0.0, atol=1e-9)
    np.testing.assert_allclose(ddq_end, 0.0, atol=1e-9)
    assert result.limit_check.ok


def test_cli_writes_a_valid_recording(urdf, model, tmp_path):
    config = tmp_path / "excite.yaml"
    config.write_text("excitation: " + json.dumps(FAST | {"sample_rate_hz": 50}) + "\n")
    out = tmp_path / "traj.csv"
    arguments = ["excite", "--urdf", str(urdf), "--config", str(config), "--out", str(out),
                 "--duration", "10", "--base-frequency", "0.2", "--harmonics", "3",
                 "--criterion", "logdet", "--seed", "4"]  # fmt: skip
    run = CliRunner().invoke(main, arguments)
    # 25 IPOPT iterations may stop short of convergence: then written with exit code 3
    ok = json.loads(out.with_suffix(".json").read_text())["status"] == "ok"
    assert run.exit_code == (0 if ok else 3), run.output
    assert "condition number" in run.output
    header = out.read_text().splitlines()[0].split(",")
    joints = model.joint_names
    assert header == ["t"] + [f"{p}{j}" for p in ("q_", "dq_", "ddq_", "tau_") for j in joints]
    trajectory = load_trajectory(out, model)
    assert trajectory.n_samples == 501 and trajectory.t[-1] == pytest.approx(10.0)
    np.testing.assert_allclose(trajectory.dq[[0, -1]], 0.0, atol=1e-9)
    np.testing.assert_allclose(trajectory.q[0], trajectory.q[-1], atol=1e-9)  # two periods
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["format"] == "physid.excitation/1"
    assert summary["criterion"] == "logdet" and summary["harmonics"] == 3
    assert summary["optimised"]["logdet"] > summary["start"]["logdet"]
    assert max(summary["limit_use"].values()) <= 1.0
    assert "--criterion" in CliRunner().invoke(main, ["excite", "--help"]).output


@pytest.mark.parametrize(
    ("arguments", "config", "message"),
    [
        (["--duration", "7", "--base-frequency", "0.2"], None, "whole number of periods"),
        ([], "excitation: {margin: 2}", "excitation.margin"),
        ([], "excitation: {limits: {knee: {velocity: 1}}}", "knee"),
        ([], "excitation: {limits: {elbow: {speed: 1}}}", "speed"),
        ([], "excitation: {bogus: 1}", "bogus"),
        ([], "joint_terms: [wrong]", "joint_terms"),
        ([], "excitation: {limits: {shoulder: {effort: 0.01}}}", "torque limits"),
        (["--criterion", "aopt"], None, "--criterion"),
    ],
)
def test_bad_input_is_a_one_line_error(urdf, tmp_path, arguments, config, message):
    base = ["excite", "--urdf", str(urdf), "--out", str(tmp_path / "t.csv"), "--harmonics", "2"]
    if config is not None:
        path = tmp_path / "c.yaml"
        path.write_text(config + "\n")
        base += ["--config", str(path)]
    run = CliRunner().invoke(main, base + arguments)
    assert run.exit_code == 2, run.output
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("physid: error:"), run.output
    assert message in lines[0]
    assert not (tmp_path / "t.csv").exists()


def test_missing_limits_and_bad_output_name(tmp_path, urdf):
    no_velocity = tmp_path / "free.urdf"
    no_velocity.write_text(TWO_LINK.replace('velocity="2.0"', 'velocity="0"'))
    with pytest.raises(InputError, match="elbow.velocity"):
        run_excite(no_velocity, tmp_path / "t.csv")
    with pytest.raises(InputError, match="CSV"):
        run_excite(urdf, tmp_path / "t.parquet")


@pytest.mark.parametrize(
    ("arguments", "option", "fragment"),
    [
        # 5 x 1000 Hz against 50 Hz sampling: one row was written, cond 8.6e15, exit 0
        (["--base-frequency", "1000"], "--base-frequency", "reaches the Nyquist frequency 25 Hz"),
        (["--duration", "0.001"], "--duration", "reaches the Nyquist frequency 25 Hz"),
        # 1 harmonic at 20 Hz: below Nyquist, but 0.05 s is 2 samples x 2 joints
        (["--harmonics", "1", "--base-frequency", "20"], "--base-frequency",
         "fewer rows than the"),
        (["--harmonics", "1", "--base-frequency", "20", "--duration", "0.05"], "--duration",
         "fewer rows than the"),
    ],
)  # fmt: skip
def test_a_band_or_duration_the_samples_cannot_carry_is_refused(
    urdf, tmp_path, arguments, option, fragment
):
    config = tmp_path / "c.yaml"
    config.write_text("excitation: " + json.dumps(FAST | {"sample_rate_hz": 50}) + "\n")
    out = tmp_path / "t.csv"
    base = ["excite", "--urdf", str(urdf), "--config", str(config), "--out", str(out)]
    run = CliRunner().invoke(main, base + arguments)
    assert run.exit_code == 2, run.output
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"physid: error: {option}: "), run.output
    assert fragment in lines[0] and not out.exists()


def test_a_design_that_did_not_converge_is_written_with_exit_code_3(urdf, tmp_path):
    """IPOPT stopped by excitation.max_iterations: status not_converged, IPOPT's own return
    status in the summary and the finding EX201, the trajectory written, exit code 3 (it was
    0), as the help says."""
    config = tmp_path / "c.yaml"
    config.write_text("excitation: " + json.dumps(FAST | {"max_iterations": 2}) + "\n")
    out = tmp_path / "t.csv"
    run = CliRunner().invoke(main, ["excite", "--urdf", str(urdf), "--config", str(config),
                                    "--out", str(out), "--harmonics", "2"])  # fmt: skip
    assert run.exit_code == 3, run.output
    assert "status: not_converged - " in run.stdout and out.exists()
    assert f"error {SOLVER_STOPPED.code}: IPOPT stopped" in run.stderr
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["status"] == "not_converged" and summary["solver"] == {
        "ipopt_status": "Maximum_Iterations_Exceeded",
        "iterations": 2,
    }
    (stopped,) = [f for f in summary["findings"] if f["code"] == SOLVER_STOPPED.code]
    assert stopped["numbers"]["iterations"] == 2 and stopped["numbers"]["max_iterations"] == 2
    text = " ".join(CliRunner().invoke(main, ["excite", "--help"]).output.split())
    assert "3 written, but the status is not ok: not_converged" in text


def _two_link(tmp_path, shoulder_effort: str = "20", elbow_dynamics: str = ""):
    text = TWO_LINK.replace('effort="20"', f'effort="{shoulder_effort}"').replace(
        '<limit lower="-2.0" upper="2.0" effort="8" velocity="2.0"/>',
        f'<limit lower="-2.0" upper="2.0" effort="8" velocity="2.0"/>{elbow_dynamics}',
    )
    path = tmp_path / "arm.urdf"
    path.write_text(text)
    return robot_from_urdf(path)


def test_a_start_held_near_its_torque_limit_in_the_middle_is_moved_where_it_can_move(tmp_path):
    """The shoulder holds the arm near horizontal in the middle of its range (-0.25 rad): 8.98
    N m of gravity against an effort limit of 9.2 N m (9.02 after the margin), 99.6 % at rest,
    as TALOS's left arm in example-robot-data (97 %). The start centred there moved 0.02 rad
    (its amplitudes scaled to almost 0; on TALOS IPOPT never left it); it is now centred
    where the limits leave room."""
    from physid.excite import scale_into_limits

    model = _two_link(tmp_path, shoulder_effort="9.2")
    limits = joint_limits(model, {}, highest_frequency_hz=0.6).shrunk(0.02)
    basis = FourierBasis(0.2, 3, model.n_joints)
    t = basis.grid(200)
    torques = NominalTorques(model)
    start = scale_into_limits(basis, basis.random(np.random.default_rng(0)), limits, torques, t)
    q, dq, ddq = basis.evaluate(start, t)
    assert abs(torques.torques(q, dq, ddq)[:, 0]).max() > 0.5 * 9.2 * 0.98  # it is the limit
    assert np.all(np.abs(torques.torques(q, dq, ddq)) <= limits.effort * (1 + 1e-6))
    assert np.all(q >= limits.lower - 1e-9) and np.all(q <= limits.upper + 1e-9)
    assert np.ptp(q[:, 0]) > 0.5 and np.ptp(q[:, 1]) > 0.5, np.ptp(q, axis=0)


def test_a_joint_whose_friction_reaches_its_effort_limit_is_named(tmp_path):
    """TALOS's left arm (example-robot-data) has 1 N m of friction on a gripper whose effort
    limit is 1 N m: no motion of it fits, and with one amplitude scale for all joints no motion
    of any did; excite ran 2 minutes and wrote a recording that does not move."""
    model = _two_link(tmp_path, elbow_dynamics='<dynamics damping="0.1" friction="8.5"/>')
    limits = joint_limits(model, {}, highest_frequency_hz=0.6)
    options = ExcitationOptions(0.2, 3, "cond", seed=1, **FAST)
    with pytest.raises(InputError, match=r"no excitation can move 'elbow' \(friction 8.5, "):
        design_excitation(model, limits, options)


def test_a_design_stopped_by_its_time_limit_says_time_limit(model):
    """No time at all (time_limit_s tiny): the iteration callback stops IPOPT at its first
    iteration; IPOPT says User_Requested_Stop, which IPOPT_STATUS reads as time_limit, kept
    as the solver detail beside it, with the finding EX201 and its numbers."""
    from physid.status import Status

    limits = joint_limits(model, {"elbow": {"acceleration": 6.0}}, highest_frequency_hz=0.6)
    options = ExcitationOptions(0.2, 3, "cond", seed=1, **(FAST | {"time_limit_s": 1e-9}))
    result = design_excitation(model, limits, options)
    assert result.ipopt_status == "User_Requested_Stop" and result.iterations == 0
    assert result.status == Status.TIME_LIMIT and result.summary()["status"] == "time_limit"
    (stopped,) = [f for f in result.findings if f.code == SOLVER_STOPPED.code]
    assert stopped.numbers["time_limit_s"] == 1e-9 and stopped.numbers["iterations"] == 0


def test_a_limit_broken_on_the_dense_check_is_named_and_not_ok(designed):
    """The dense re-check's verdict: a trajectory over its velocity limit (use 1.2) and 5 mm
    outside its workspace is not ok, and EX202 names those two with their numbers."""
    from dataclasses import replace

    from physid.excite.design import _Candidate, _verdict
    from physid.excite.limits import LimitCheck
    from physid.status import Status

    broken = LimitCheck(0.5, 1.2, 0.9, 0.8, outside_workspace=0.005)
    candidate = _Candidate(designed.coefficients, designed.quality, broken, designed.start,
                           designed.start_quality, _solved(designed), ())  # fmt: skip
    (said,) = [f for f in _verdict(candidate, designed.options) if f.code == LIMITS_VIOLATED.code]
    assert said.names == ("velocity", "workspace") and said.numbers["velocity_use"] == 1.2
    assert said.numbers["outside_workspace_m"] == 0.005
    assert replace(designed, limit_check=broken).status == Status.NOT_CONVERGED


def _solved(designed):  # the SolveResult the design's own numbers describe
    from physid.excite.nlp import SolveResult

    return SolveResult(designed.coefficients, designed.solver_status, designed.ipopt_status,
                       True, designed.iterations, designed.quality.criterion)  # fmt: skip
