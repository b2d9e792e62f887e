"""URDF ``continuous`` joints are identified as revolute joints without limits.

Pinocchio reads a continuous joint as "revolute unbounded" (two configuration coordinates, cos
and sin, for one velocity); physid's pipelines take one angle per joint and used to lock such
joints at 0 as "not 1-DoF", ignoring their recorded columns: a Kinova arm (three of its six
joints continuous) came out at 16 % held-out error with status ``ok`` (1.4 % since). Truth here:
the arm simulated by physid's own tracking simulation on the model physid builds, checked
against Pinocchio's own reading of the URDF (test_joint_locking.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pinocchio as pin

from physid.files.config import parse_config, robot_for
from physid.offline.observe.prediction import predict_recording
from physid.recordings.trajectory import write_trajectory_csv
from physid.sim.arm import SensorNoise, simulate_random_excitation, true_parameters
from physid.sim.oe_robots import robot_urdf
from physid.workflows import run_identify

KINOVA = "kinova_description/robots/kinova.urdf"
CONTINUOUS = ("j2s6s200_joint_1", "j2s6s200_joint_4", "j2s6s200_joint_6")


def test_a_kinova_arm_with_continuous_joints_logged_modulo_a_turn_is_identified(tmp_path):
    """Every joint identified (none locked), the continuous joints' angles logged in [0, 2 pi)
    as an absolute encoder gives them (unwrapped on reading, to angles past 2 pi + 0.5 rad that
    a revolute joint with limits may not reach: an unbounded joint may), and the held-out error
    at the noise floor."""
    urdf = robot_urdf(KINOVA)
    assert sum(j.nq == 2 for j in pin.buildModelFromUrdf(str(urdf)).joints) == 3
    model = robot_for(urdf, parse_config({}))
    assert model.joint_names == tuple(f"j2s6s200_joint_{k}" for k in range(1, 7))
    assert not model.notes  # nothing locked
    rng = np.random.default_rng(11)
    theta = true_parameters(model, rng)
    turned = [model.joint_index(j) for j in CONTINUOUS]
    files, recordings = [], []
    for name, duration in (("train", 15.0), ("validate", 5.0)):
        simulation = simulate_random_excitation(
            model, theta, duration_s=duration, sample_rate_hz=500.0, rng=rng,
            noise=SensorNoise(torque_noise_std=0.05), amplitude_rad=np.full(6, 0.6),
        )  # fmt: skip
        recorded = simulation.recorded
        q = recorded.q.copy()
        q[:, turned] = np.mod(q[:, turned], 2.0 * np.pi)  # an absolute encoder's [0, 2 pi)
        assert np.ptp(q[:, turned], axis=0).min() > 6.0  # each crosses 0 (a 2 pi step)
        files.append(write_trajectory_csv(tmp_path / f"{name}.csv", replace(recorded, q=q)))
        recordings.append(recorded)
    result = run_identify(urdf, files[:1], validate=files[1:], out_dir=tmp_path / "out")
    assert result.status == "ok" and result.consistent.consistent
    assert result.model.joint_names == model.joint_names
    said = [f for f in result.findings if f.code in ("D110", "ID702", "ID704")]
    assert not any("locked" in f.message or "ignored unknown column" in f.message for f in said), (
        said
    )
    floor = predict_recording(result.model, recordings[1], result.preprocessing.filter, theta)
    assert result.validation.relative_error < 1.05 * floor.metrics.relative_error


def test_an_excitation_of_a_continuous_joint_asks_for_its_range():
    """An excitation needs position bounds: a continuous joint has none, and the error says
    which joints, why, and the config keys that give them or the lock that holds them."""
    import pytest

    from physid.errors import InputError
    from physid.excite.limits import joint_limits

    model = robot_for(robot_urdf(KINOVA), parse_config({}))
    with pytest.raises(InputError) as error:
        joint_limits(model, highest_frequency_hz=1.0)
    # every unbounded joint in one line (a mobile manipulator's four wheels one run each before)
    message = str(error.value)
    unbounded = [j for j in model.joint_names if f"'{j}' lower (-inf) upper (inf)" in message]
    assert len(unbounded) >= 2, message
    for joint in unbounded:
        assert f"excitation.limits.{joint}.lower" in message and f"{joint}: 0.0" in message
    assert "URDF continuous" in message and message.count("physid") == 0


CONTINUOUS_ARM = """<robot name="arm" xmlns="http://drake.mit.edu">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><mesh filename="$(find arm)/meshes/upper.stl"/></geometry></visual></link>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="upper"/>
    <axis xyz="0 1 0"/></joint>
  <link name="lower"><inertial><origin xyz="0.15 0 0"/><mass value="0.5"/>
    <inertia ixx="0.004" iyy="0.006" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="lower"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 1 0"/><limit effort="5" velocity="2"/></joint>
</robot>
"""


def test_continuous_joints_of_a_namespaced_urdf_with_gazebo_mesh_paths(tmp_path):
    """A default XML namespace (Drake's URDFs), a $(find pkg) mesh path (plain URDFs for Gazebo
    write them; physid never reads meshes) and continuous joints with and without <limit>: one
    angle each, effort and velocity as Pinocchio reads them (none given: unlimited), and a turn
    counter that jumps a full turn between two rows is refused on an unbounded joint too."""
    import pytest

    from physid.errors import InputError
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import trajectory_from_table
    from physid.robot.model import load_urdf

    urdf = tmp_path / "arm.urdf"
    urdf.write_text(CONTINUOUS_ARM, encoding="utf-8")
    model = load_urdf(urdf)
    assert model.nq == model.nv == 2
    np.testing.assert_array_equal(model.effortLimit, [np.inf, 5.0])
    np.testing.assert_array_equal(model.velocityLimit, [np.inf, 2.0])
    robot = robot_for(urdf, parse_config({}))
    t = np.arange(500) / 100.0
    turning = 0.3 + 4.0 * t  # three turns in 5 s: an unbounded joint may
    columns = {"t": t, "q_shoulder": turning, "q_elbow": 0.2 * np.sin(t),
               "tau_shoulder": np.cos(turning), "tau_elbow": 0.1 * np.cos(t)}  # fmt: skip
    assert trajectory_from_table(Table(columns, "turning"), robot).n_samples == 500
    burst = turning.copy()
    burst[200:211] += 2.0 * np.pi  # a turn counter read one turn off for 11 rows
    with pytest.raises(InputError, match="steps by a full turn .* turn counter misread"):
        trajectory_from_table(Table(columns | {"q_shoulder": burst}, "burst"), robot)
