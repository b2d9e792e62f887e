"""A floating base's logged velocities checked against its pose (physid.recordings.base_rates):
closed-form turning motions, the paper-B Go1 simulation, and ``physid online`` / ``physid oe``
refusing a base velocity in world axes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from physid.recordings.base_rates import angular_rate_problem, linear_velocity_problem

RATE_HZ = 200.0
ANGULAR = "base_wx, base_wy, base_wz"
LINEAR = "base_vx, base_vy, base_vz"


def _turning(seconds: float = 8.0, t: np.ndarray | None = None, tilt: float = 0.0):
    """A base on yaw, pitch and roll sines (intrinsic Z-Y-X; the pitch about ``tilt`` rad)
    moving on sines: times, world positions, rotations (world from base) and the exact
    body-frame angular and linear velocities (the Z-Y-X kinematic equations, the world
    velocity rotated into the base)."""
    t = np.arange(0.0, seconds, 1.0 / RATE_HZ) if t is None else t
    yaw, pitch = 0.8 * np.sin(0.4 * t), tilt + 0.3 * np.sin(0.9 * t)
    roll = 0.4 * np.sin(1.3 * t)
    d_yaw, d_pitch, d_roll = 0.32 * np.cos(0.4 * t), 0.27 * np.cos(0.9 * t), 0.52 * np.cos(1.3 * t)
    rotation = Rotation.from_euler("ZYX", np.column_stack([yaw, pitch, roll]))
    angular = np.column_stack([
        d_roll - d_yaw * np.sin(pitch),
        d_pitch * np.cos(roll) + d_yaw * np.cos(pitch) * np.sin(roll),
        -d_pitch * np.sin(roll) + d_yaw * np.cos(pitch) * np.cos(roll),
    ])  # fmt: skip
    position = np.column_stack([0.3 * np.sin(0.5 * t), 0.2 * (1 - np.cos(0.9 * t)),
                                0.05 * np.sin(2.0 * t)])  # fmt: skip
    world_velocity = np.column_stack([0.15 * np.cos(0.5 * t), 0.18 * np.sin(0.9 * t),
                                      0.1 * np.cos(2.0 * t)])  # fmt: skip
    return t, position, rotation, angular, rotation.inv().apply(world_velocity)


def test_rates_that_are_the_pose_rate_pass():
    t, position, rotation, angular, linear = _turning()
    quaternion = rotation.as_quat()
    noise = np.random.default_rng(0).normal(0.0, 0.01, angular.shape)
    assert angular_rate_problem(t, quaternion, angular + noise, ANGULAR) is None
    # an uncalibrated gyro's bias, and a filter 10 ms late
    assert angular_rate_problem(t, quaternion, angular + [0.02, -0.015, 0.01], ANGULAR) is None
    late = np.vstack([angular[:2], angular[:-2]])
    assert angular_rate_problem(t, quaternion, late, ANGULAR) is None
    assert linear_velocity_problem(t, position, quaternion, linear, LINEAR) is None
    # an orientation with 2 mrad of white noise per sample still lets the rates pass
    shaken = (rotation * Rotation.from_rotvec(
        np.random.default_rng(1).normal(0.0, 0.002, angular.shape))).as_quat()  # fmt: skip
    assert angular_rate_problem(t, shaken, angular, ANGULAR) is None


@pytest.mark.parametrize(
    "change, said",
    [
        (lambda r, w: (r.as_quat(), r.apply(w)), "are the angular velocity in world axes"),
        (lambda r, w: (r.as_quat(), np.degrees(w)), "read 57.3 x the orientation's rate"),
        (lambda r, w: (r.as_quat(), -w), "read -1 x the orientation's rate (the sign flipped)"),
        (lambda r, w: (r.as_quat()[:, [3, 0, 1, 2]], w), "stored w first (w, x, y, z)"),
        (lambda r, w: (r.as_quat(), w[:, [1, 0, 2]]), "do not follow the base orientation's"),
    ],
)
def test_an_angular_rate_that_is_not_the_pose_rate_is_named(change, said):
    t, _, rotation, angular, _ = _turning()
    found = angular_rate_problem(t, *change(rotation, angular), ANGULAR)
    assert found is not None and said in found


def test_a_linear_velocity_in_world_axes_or_of_other_axes_is_named():
    t, position, rotation, _, linear = _turning()
    quaternion = rotation.as_quat()
    world = linear_velocity_problem(t, position, quaternion, rotation.apply(linear), LINEAR)
    assert world.startswith(f"{LINEAR} are the velocity in world axes")
    swapped = linear_velocity_problem(t, position, quaternion, linear[:, [1, 0, 2]], LINEAR)
    assert "do not follow the rate of base_x, base_y, base_z" in swapped


def test_a_base_that_turns_too_little_against_its_noise_is_not_judged():
    t, _, rotation, angular, _ = _turning()
    still = np.tile([0.0, 0.0, 0.0, 1.0], (len(t), 1))
    assert angular_rate_problem(t, still, 0.0 * angular, ANGULAR) is None
    # 10 mrad of white noise per sample (the paper-B simulation's IMU orientation): the 0.2 s
    # windows turn less than 20 noises, so neither the right rate nor the world one is judged
    shaken = (rotation * Rotation.from_rotvec(
        np.random.default_rng(2).normal(0.0, 0.01, angular.shape))).as_quat()  # fmt: skip
    assert angular_rate_problem(t, shaken, rotation.apply(angular), ANGULAR) is None
    short = slice(0, 40)  # 0.2 s
    assert angular_rate_problem(t[short], rotation.as_quat()[short], -angular[short],
                                ANGULAR) is None  # fmt: skip


def test_the_simulated_go1_walk_raises_no_verdict():
    """Paper B's Go1 (physid.sim.oe_floating.simulate_go1, 3 s): its gyro and base velocity as
    logged, and rotated into world axes (its trunk tilts by at most 6.5 deg: the frames agree
    to within the noise, and nothing is said)."""
    from physid.sim.oe_floating import contract_columns, simulate_go1
    from physid.sim.oe_robots import GO1, load_model

    nominal = load_model(GO1, floating=True)
    rec = simulate_go1(nominal, nominal, np.random.default_rng(2), duration=3.0, dt=0.005)
    c = contract_columns(nominal, rec)
    t = c["t"]
    quaternion = np.column_stack([c[f"base_q{a}"] for a in "xyzw"])
    gyro = np.column_stack([c[f"gyro_{a}"] for a in "xyz"])
    position = np.column_stack([c[f"base_{a}"] for a in "xyz"])
    velocity = np.column_stack([c[f"base_v{a}"] for a in "xyz"])
    rotation = Rotation.from_quat(quaternion)
    for w in (gyro, rotation.apply(gyro)):
        assert angular_rate_problem(t, quaternion, w, "gyro_x, gyro_y, gyro_z") is None
    for v in (velocity, rotation.apply(velocity)):
        assert linear_velocity_problem(t, position, quaternion, v, LINEAR) is None


def test_online_refuses_a_base_angular_velocity_in_world_axes(tmp_path):
    """``physid online`` read base_w* as root-frame rates whatever they were: the humanoid's
    stepping log with its pelvis turning (the closed-form motion above, pitched 0.5 rad) and
    base_w* in world axes went through with status suspect (waist 13.4 kg, "check the units,
    the wrench signs and the quaternion order"); now one error line names the columns, nothing
    written."""
    from click.testing import CliRunner

    from physid.cli import main
    from physid.online.columns import OnlineSignals, signals_table
    from physid.sim.legged import (
        CONTACT_FRAMES,
        HUMANOID_URDF,
        SteppingScenario,
        load_humanoid,
        simulate_stepping,
    )

    rec = simulate_stepping(np.random.default_rng(3), SteppingScenario(duration_s=1.2))
    columns = signals_table(OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, rec.wrenches),
                            load_humanoid(), CONTACT_FRAMES)  # fmt: skip
    _, _, rotation, angular, _ = _turning(t=rec.t, tilt=0.5)
    turned = rotation.as_quat()
    for k, axis in enumerate("xyzw"):
        columns[f"base_q{axis}"] = turned[:, k]
    linear = rotation.inv().apply(rec.dq[:, :3])  # the pelvis's world velocity, in its axes
    for k, axis in enumerate("xyz"):
        columns[f"base_v{axis}"] = linear[:, k]
        columns[f"base_w{axis}"] = rotation.apply(angular)[:, k]
    np.savez(tmp_path / "rec.npz", **columns)
    (tmp_path / "online.yaml").write_text(
        "floating_base: true\ncontact_frames: [left_sole, right_sole]\n"
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["online", "--urdf", str(HUMANOID_URDF), "--data",
                                       str(tmp_path / "rec.npz"), "--body", "waist_pitch",
                                       "--config", str(tmp_path / "online.yaml"), "--out",
                                       str(out)])  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("physid: error:")]
    assert len(lines) == 1 and "rec.npz: the floating base's logged velocities" in lines[0]
    assert f"{ANGULAR} are the angular velocity in world axes" in lines[0]
    assert "base_vx" not in lines[0] and not out.exists()


def test_oe_refuses_a_gyro_in_world_axes(go1_payload_walk, tmp_path):
    """``physid oe --floating`` read gyro_* as base-frame rates whatever they were: the Go1 walk
    with its trunk turning (the closed-form motion above at twice its pace, pitched 0.5 rad)
    and its gyro in world axes ended at a trunk of 8.75 kg, status max_iterations, without a
    word of the gyro; now one error line."""
    from click.testing import CliRunner

    from physid.cli import main
    from physid.files.io import table_csv_text
    from physid.sim.oe_floating import contract_columns
    from physid.sim.oe_robots import GO1, robot_urdf

    nominal, _, rec = go1_payload_walk
    columns = contract_columns(nominal, rec)
    # twice the pace: over the walk's 0.8 s the slower motion's rates barely change, and a
    # nearly constant difference between the frames reads as a gyro's bias (forgiven)
    _, _, rotation, angular, _ = _turning(t=2.0 * columns["t"], tilt=0.5)
    angular = 2.0 * angular
    logged = Rotation.from_quat(np.column_stack([columns[f"base_q{a}"] for a in "xyzw"]))
    velocity = np.column_stack([columns[f"base_v{a}"] for a in "xyz"])
    velocity = rotation.inv().apply(logged.apply(velocity))  # the same world velocity
    turned, gyro = rotation.as_quat(), rotation.apply(angular)
    for k, axis in enumerate("xyzw"):
        columns[f"base_q{axis}"] = turned[:, k]
    for k, axis in enumerate("xyz"):
        columns[f"gyro_{axis}"], columns[f"base_v{axis}"] = gyro[:, k], velocity[:, k]
    (tmp_path / "go1.csv").write_text(table_csv_text(columns))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["oe", "--urdf", str(robot_urdf(GO1)), "--floating",
                                       "--data", str(tmp_path / "go1.csv"), "--body",
                                       "root_joint", "--out", str(out)])  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("physid: error:")]
    assert len(lines) == 1 and "go1.csv: the floating base's logged velocities" in lines[0]
    assert "gyro_x, gyro_y, gyro_z are the angular velocity in world axes" in lines[0]
    assert "base_vx" not in lines[0] and not out.exists()
