"""IMU and force/torque topics of ROS 2 bags (issue 26 item 1): ``sensor_msgs/Imu`` and
``geometry_msgs/WrenchStamped`` messages written with rosbags beside the joint states, read back
as the ``base_q*``/``gyro_*``/``acc_*`` and ``ft_<frame>_*`` columns of docs/oe.md, and
``physid oe`` from a bag giving what it gives from the equivalent CSV."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from scipy.spatial.transform import Rotation
from test_oe_cli import BODY, _write_recording

from physid.cli import main
from physid.errors import InputError
from physid.files.io import table_csv_text
from physid.oe.model.wrench import WRENCH_AXES
from physid.recordings.logs import read_log
from physid.recordings.trajectory import read_table
from physid.sim.oe_robots import KINOVA, robot_urdf

TYPES = get_typestore(Stores.ROS2_HUMBLE).types
STORE = get_typestore(Stores.ROS2_HUMBLE)
HEADER, TIME = TYPES["std_msgs/msg/Header"], TYPES["builtin_interfaces/msg/Time"]
VECTOR, QUATERNION = TYPES["geometry_msgs/msg/Vector3"], TYPES["geometry_msgs/msg/Quaternion"]
JOINT_STATE, IMU = TYPES["sensor_msgs/msg/JointState"], TYPES["sensor_msgs/msg/Imu"]
WRENCH, WRENCH_STAMPED = TYPES["geometry_msgs/msg/Wrench"], TYPES["geometry_msgs/msg/WrenchStamped"]


def _header(t: float, frame: str) -> object:
    ns = int(round(t * 1e9))
    return HEADER(stamp=TIME(sec=ns // 10**9, nanosec=ns % 10**9), frame_id=frame)


def _joint_state(t: float, names: list[str], q, dq, tau) -> object:
    return JOINT_STATE(header=_header(t, "base"), name=names, position=np.asarray(q, float),
                       velocity=np.asarray(dq, float), effort=np.asarray(tau, float))  # fmt: skip


def _imu(t: float, quaternion, gyro, acc, orientation: bool = True) -> object:
    covariance = np.zeros(9)
    covariance[0] = 0.0 if orientation else -1.0
    return IMU(
        header=_header(t, "imu_link"),
        orientation=QUATERNION(*map(float, quaternion)),
        orientation_covariance=covariance,
        angular_velocity=VECTOR(*map(float, gyro)),
        angular_velocity_covariance=np.zeros(9),
        linear_acceleration=VECTOR(*map(float, acc)),
        linear_acceleration_covariance=np.zeros(9),
    )


def _wrench(t: float, frame: str, values) -> object:
    return WRENCH_STAMPED(header=_header(t, frame),
                          wrench=WRENCH(force=VECTOR(*map(float, values[:3])),
                                        torque=VECTOR(*map(float, values[3:]))))  # fmt: skip


def write_bag(folder: Path, topics: dict[str, list[tuple[float, object]]]) -> None:
    """``topics``: name -> [(time, message)], written in time order with log time = stamp."""
    with Writer(folder, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connections = {name: writer.add_connection(name, messages[0][1].__msgtype__,
                                                   typestore=STORE)
                       for name, messages in topics.items()}  # fmt: skip
        rows = sorted((t, name, m) for name, messages in topics.items() for t, m in messages)
        for t, name, message in rows:
            raw = STORE.serialize_cdr(message, message.__msgtype__)
            writer.write(connections[name], int(round(t * 1e9)), raw)


# A rotating base: roll/pitch/yaw smooth in time, its quaternion, rate and a specific force.
def _attitude(t: np.ndarray) -> Rotation:
    return Rotation.from_euler("xyz", np.column_stack([0.3 * np.sin(2 * t), 0.2 * np.cos(3 * t),
                                                       1.5 * t]))  # fmt: skip


def _signals(t: np.ndarray) -> dict[str, np.ndarray]:
    quaternion = _attitude(t).as_quat()  # x, y, z, w
    quaternion *= np.where(np.arange(t.size) % 3 == 0, -1.0, 1.0)[:, None]  # q and -q mixed
    return {
        "quaternion": quaternion,
        "gyro": np.column_stack([np.sin(t), np.cos(2 * t), 0.5 + 0.1 * t]),
        "acc": np.column_stack([0.2 * t, np.sin(5 * t), 9.81 + np.cos(t)]),
        "wrench": np.column_stack([np.sin(k * t + k) for k in range(1, 7)]),
    }


@pytest.fixture(scope="module")
def sensor_bag(tmp_path_factory) -> tuple[Path, np.ndarray]:
    """Joint states at 500 Hz over 0..2 s; an IMU at 1 kHz from 0.0105 s to 1.9905 s (its own
    phase); a wrist sensor at 250 Hz over 0..2 s; returns the folder and the joint stamps."""
    folder = tmp_path_factory.mktemp("sensors") / "bag"
    t_joint = np.arange(1001) * 0.002
    t_imu = 0.0105 + np.arange(1981) * 0.001
    t_wrench = np.arange(501) * 0.004
    names = ["a", "b"]
    imu, wrench = _signals(t_imu), _signals(t_wrench)
    write_bag(folder, {
        "/joint_states": [(t, _joint_state(t, names, [np.sin(t), t], [np.cos(t), 1.0], [0.1, t]))
                          for t in t_joint],
        "/imu": [(t, _imu(t, imu["quaternion"][k], imu["gyro"][k], imu["acc"][k]))
                 for k, t in enumerate(t_imu)],
        "/wrist/ft": [(t, _wrench(t, "wrist", wrench["wrench"][k]))
                      for k, t in enumerate(t_wrench)],
    })  # fmt: skip
    return folder, t_joint


def test_imu_and_wrench_topics_join_the_joint_states(sensor_bag):
    folder, t_joint = sensor_bag
    (table,) = read_log(folder, imu_topic="auto", wrench_topics=("/wrist/ft",))
    columns = table.columns
    inside = (t_joint >= 0.0105) & (t_joint <= 1.9905)
    # the rows outside the IMU's span are dropped
    assert np.allclose(columns["t"], t_joint[inside], rtol=0, atol=1e-9)
    assert table.notes == (f"{np.count_nonzero(~inside)} joint-state rows outside the sensor "
                           "topics' time span dropped",)  # fmt: skip
    t = columns["t"]
    truth = _signals(t)
    assert np.allclose(columns["q_a"], np.sin(t)) and np.allclose(columns["tau_b"], t)
    # orientation: nlerp of sign-aligned quaternions, second order in the 1 ms rotation
    measured = Rotation.from_quat(np.column_stack([columns[f"base_q{a}"] for a in "xyzw"]))
    angle = (measured * _attitude(t).inv()).magnitude()
    assert angle.max() < 1e-6, angle.max()
    norms = np.linalg.norm(np.column_stack([columns[f"base_q{a}"] for a in "xyzw"]), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-12)
    # vectors: linear interpolation between samples, error <= max|f''| h^2 / 8
    for k, axis in enumerate("xyz"):
        assert np.abs(columns[f"gyro_{axis}"] - truth["gyro"][:, k]).max() < 4 * 1e-6 / 8 + 1e-12
        assert np.abs(columns[f"acc_{axis}"] - truth["acc"][:, k]).max() < 25 * 1e-6 / 8 + 1e-12
    for k, axis in enumerate(WRENCH_AXES):
        bound = (k + 1) ** 2 * 0.004**2 / 8
        assert np.abs(columns[f"ft_wrist_{axis}"] - truth["wrench"][:, k]).max() <= bound + 1e-12


def test_one_time_base_for_every_topic(tmp_path):
    """A driver that leaves the joint states' header stamps at zero beside an IMU stamped on
    another clock (0.3 s ahead of the log times): the joint states were read on the bag's log
    times and the IMU on its stamps, so each row met the IMU reading of 0.3 s earlier and the
    first 0.3 s of rows were dropped, silently. The log times are now every topic's time base,
    and the note says so."""
    t = np.arange(100) * 0.01
    s = _signals(t)
    joints = [(x, _joint_state(x, ["a"], [x], [1.0], [0.0])) for x in t]
    for _, message in joints:
        message.header = _header(0.0, "base")
    imu = [(x, _imu(x, s["quaternion"][k], s["gyro"][k], s["acc"][k])) for k, x in enumerate(t)]
    for x, message in imu:
        message.header = _header(x + 0.3, "imu_link")
    write_bag(tmp_path / "bag", {"/joint_states": joints, "/imu": imu})
    (table,) = read_log(tmp_path / "bag", imu_topic="/imu")
    np.testing.assert_allclose(table.columns["t"], t, rtol=0, atol=1e-9)
    np.testing.assert_allclose(table.columns["gyro_y"], s["gyro"][:, 1], rtol=0, atol=1e-9)
    (note,) = table.notes
    assert note == (
        "every header stamp is zero (/joint_states): the bag's log times are the time "
        "base of every topic"
    )


def test_an_imu_without_orientation_gives_no_quaternion(tmp_path):
    t = np.arange(20) * 0.01
    s = _signals(t)
    write_bag(tmp_path / "bag", {
        "/joint_states": [(x, _joint_state(x, ["a"], [x], [1.0], [0.0])) for x in t],
        "/imu": [(x, _imu(x, s["quaternion"][k], s["gyro"][k], s["acc"][k], orientation=False))
                 for k, x in enumerate(t)],
    })  # fmt: skip
    (table,) = read_log(tmp_path / "bag", imu_topic="/imu")
    assert "base_qw" not in table.columns and np.allclose(table.columns["gyro_x"], s["gyro"][:, 0])


@pytest.mark.parametrize(
    "selection, message",
    [
        ({"imu_topic": "/nope"}, "no sensor_msgs/msg/Imu topic '/nope'; the bag has: /imu"),
        ({"wrench_topics": ("/imu",)}, "no geometry_msgs/msg/WrenchStamped topic '/imu'"),
        ({"imu_topic": "auto", "wrench_topics": ("/ft",)}, "share fewer than 3 samples"),
    ],
)
def test_a_wrong_sensor_topic_is_one_line_naming_it(tmp_path, selection, message):
    t = np.arange(10) * 0.01
    s = _signals(t)
    write_bag(tmp_path / "bag", {
        "/joint_states": [(x, _joint_state(x, ["a"], [x], [1.0], [0.0])) for x in t],
        "/imu": [(x, _imu(x, s["quaternion"][k], s["gyro"][k], s["acc"][k]))
                 for k, x in enumerate(t)],
        "/ft": [(x + 5.0, _wrench(x + 5.0, "wrist", s["wrench"][k])) for k, x in enumerate(t)],
    })  # fmt: skip
    with pytest.raises(InputError, match=message):
        read_log(tmp_path / "bag", **selection)


def test_oe_from_a_bag_equals_oe_from_the_csv(tmp_path):
    """The simulated Kinova run of test_oe_cli with its wrist force/torque sensor, once as the
    CSV and once as a bag (JointState + WrenchStamped at the same stamps): the same estimate."""
    sensor_std = np.r_[np.full(3, 0.1), np.full(3, 5e-3)]
    _write_recording(tmp_path / "run.csv", wrench_std=sensor_std, tau_scale=1.15)
    columns = {k: np.asarray(v) for k, v in read_table(tmp_path / "run.csv").columns.items()}
    # the run's first half second (51 rows): the two readings are compared value for value, at
    # any length; the sensor's fit residual, 0.050 N here (0.063 on the whole second), stays
    # well under the 2 x 0.1 N bound
    columns = {k: v[columns["t"] <= 0.5] for k, v in columns.items()}
    (tmp_path / "run.csv").write_text(table_csv_text(columns))
    joints = [c[2:] for c in columns if c.startswith("q_")]
    write_bag(tmp_path / "bag", {
        "/joint_states": [(t, _joint_state(t, joints, [columns["q_" + j][k] for j in joints],
                                           [columns["dq_" + j][k] for j in joints],
                                           [columns["tau_" + j][k] for j in joints]))
                          for k, t in enumerate(columns["t"])],
        "/wrist": [(t, _wrench(t, BODY, [columns[f"ft_{BODY}_{a}"][k] for a in WRENCH_AXES]))
                   for k, t in enumerate(columns["t"])],
    })  # fmt: skip
    (tmp_path / "c.yaml").write_text("noise: {process_v: 0.05, force: 0.1, torque: 0.005}\n")
    estimates = {}
    for name, data in (("csv", [str(tmp_path / "run.csv")]),
                       ("bag", [str(tmp_path / "bag"), "--wrench-topic", "/wrist"])):  # fmt: skip
        result = CliRunner().invoke(main, [
            "oe", "--urdf", str(robot_urdf(KINOVA)), "--data", *data, "--body", BODY,
            "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / name)])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "ignoring" not in result.output
        estimates[name] = json.loads((tmp_path / name / "params.json").read_text())
    csv_body, bag_body = (estimates[k]["bodies"][BODY] for k in ("csv", "bag"))
    for key in ("mass", "com", "inertia"):
        assert np.allclose(bag_body[key], csv_body[key], rtol=1e-9, atol=1e-12), key
    fit = json.loads((tmp_path / "bag" / "result.json").read_text())["wrench_fit"][BODY]
    assert fit["rms_residual"]["fx"] < 2.0 * sensor_std[0]  # the sensor was used


def test_oe_refuses_sensor_topics_without_a_bag(tmp_path):
    _write_recording(tmp_path / "run.csv")
    result = CliRunner().invoke(main, [
        "oe", "--urdf", str(robot_urdf(KINOVA)), "--data", str(tmp_path / "run.csv"),
        "--body", BODY, "--wrench-topic", "/ft", "--out", str(tmp_path / "out")])  # fmt: skip
    assert result.exit_code == 2
    assert "--wrench-topic select inside a ROS 2 bag" in result.output
    assert not (tmp_path / "out").exists()


TURNTABLE = """<robot name="turntable">
  <link name="base"/>
  <link name="table"><inertial><mass value="2"/><origin xyz="0.1 0 0"/>
    <inertia ixx="0.02" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tool"/>
  <joint name="spin" type="revolute"><parent link="base"/><child link="table"/>
    <axis xyz="0 0 1"/><limit lower="-10" upper="10" effort="100" velocity="10"/></joint>
  <joint name="mount" type="fixed"><parent link="table"/><child link="tool"/>
    <origin xyz="0.3 0 0.1" rpy="0 0 0"/></joint>
</robot>"""


def test_online_reads_a_contact_sensor_in_its_frame_as_world_aligned(tmp_path):
    """A sensor on a turntable (frame ``tool``, yaw = the joint angle q): its frame-axes wrench
    is rotated by Rz(q) (closed form) into the f_/m_ columns the online filter takes, and a
    bag's WrenchStamped topic gives the filter the signals the equivalent CSV gives."""
    from physid.api.online_run import _one_table
    from physid.online.columns import signals_from_table, wrench_columns
    from physid.online.config import OnlineConfig, load_online_config
    from physid.online.replay import load_model

    (tmp_path / "turntable.urdf").write_text(TURNTABLE)
    (tmp_path / "c.yaml").write_text("contact_frames: [tool]\n")
    settings = load_online_config(tmp_path / "c.yaml")
    assert isinstance(settings, OnlineConfig) and settings.contact_frames == ("tool",)
    model = load_model(tmp_path / "turntable.urdf", settings)
    t = np.arange(200) * 0.01
    q = 2.0 * np.sin(t)
    local = np.column_stack([np.cos(3 * t), np.full(t.size, 2.0), np.sin(t), 0.1 * t,
                             np.full(t.size, -0.2), np.cos(t)])  # fmt: skip
    c, s = np.cos(q), np.sin(q)
    world = local.copy()
    for block in (slice(0, 3), slice(3, 6)):
        x, y = local[:, block.start], local[:, block.start + 1]
        world[:, block.start], world[:, block.start + 1] = c * x - s * y, s * x + y * c
    base = {"t": t, "q_spin": q, "dq_spin": 2.0 * np.cos(t), "tau_spin": 0.1 * t}
    write_bag(tmp_path / "bag", {
        "/joint_states": [(x, _joint_state(x, ["spin"], [q[k]], [base["dq_spin"][k]],
                                           [base["tau_spin"][k]])) for k, x in enumerate(t)],
        "/tool/ft": [(x, _wrench(x, "tool", local[k])) for k, x in enumerate(t)],
    })  # fmt: skip
    from physid.recordings.tables import Table

    csv = Table(base | {n: world[:, k] for k, n in enumerate(wrench_columns("tool"))}, "csv")
    expected = signals_from_table(csv, model, ("tool",))
    table = _one_table(tmp_path / "bag", None, (), None, ("/tool/ft",))
    signals = signals_from_table(table, model, ("tool",))
    assert np.allclose(signals.wrenches[:, 0], world, atol=1e-12)
    assert np.allclose(signals.wrenches, expected.wrenches, atol=1e-12)
    assert np.allclose(signals.q, expected.q) and np.allclose(signals.tau, expected.tau)
    assert not any("unused" in w for w in signals.warnings)


def test_online_replays_a_one_joint_robot_from_a_bag_with_a_wrench_topic(tmp_path):
    """End to end through the command; a 1-DoF model used to raise an IndexError in the
    filter's measurement (eigenpy returns its 6 x 1 Jacobian as a vector)."""
    (tmp_path / "turntable.urdf").write_text(TURNTABLE)
    (tmp_path / "c.yaml").write_text("contact_frames: [tool]\n")
    t = np.arange(300) * 0.01
    write_bag(tmp_path / "bag", {
        "/joint_states": [(x, _joint_state(x, ["spin"], [2 * np.sin(x)], [2 * np.cos(x)],
                                           [0.5 * np.sin(3 * x)])) for x in t],
        "/tool/ft": [(x, _wrench(x, "tool", [0.1, 0, 0, 0, 0, 0])) for x in t],
    })  # fmt: skip
    result = CliRunner().invoke(main, [
        "online", "--urdf", str(tmp_path / "turntable.urdf"), "--data", str(tmp_path / "bag"),
        "--body", "spin", "--config", str(tmp_path / "c.yaml"), "--wrench-topic", "/tool/ft",
        "--out", str(tmp_path / "out"), "--quiet"])  # fmt: skip
    assert result.exit_code in (0, 3), result.output
    assert "300 samples" in result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert "spin" in summary["bodies"]
