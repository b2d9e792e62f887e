"""``physid oe --floating`` end to end on a simulated walking Go1 (paper B section VI-C): base,
IMU and contact_<frame> columns of docs/oe.md."""

from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest
from click.testing import CliRunner
from oe_checks import torso_payload_mass

from physid.cli import main
from physid.files.io import table_csv_text
from physid.recordings.trajectory import read_table
from physid.sim.oe_floating import contract_columns
from physid.sim.oe_robots import GO1, load_model, robot_urdf


def _write(walk, path, drop=None, extra=None):
    """The walk of the ``go1_payload_walk`` fixture as a contract file, without the columns
    ``drop`` and with constant ``extra`` columns; returns the true torso inertia."""
    nominal, true, rec = walk
    cols = contract_columns(nominal, rec)
    for name in (drop,) if isinstance(drop, str) else drop or ():
        del cols[name]
    for name, value in (extra or {}).items():
        cols[name] = np.full(rec.x.shape[0], value)
    path.write_text(table_csv_text(cols))
    return true.inertias[1]


def _run(tmp_path, *extra):
    return CliRunner().invoke(
        main,
        [
            "oe",
            "--urdf",
            str(robot_urdf(GO1)),
            "--floating",
            "--data",
            str(tmp_path / "go1.csv"),
            "--body",
            "root_joint",
            "--out",
            str(tmp_path / "out"),
            *extra,
        ],
    )


def test_oe_floating_go1_payload(go1_payload_walk, tmp_path):
    truth = _write(go1_payload_walk, tmp_path / "go1.csv")
    result = _run(tmp_path)
    assert result.exit_code == 0, result.output
    res = json.loads((tmp_path / "out" / "result.json").read_text())
    assert res["status"] == "ok"
    params = json.loads((tmp_path / "out" / "params.json").read_text())
    torso = params["bodies"]["root_joint"]
    payload = torso_payload_mass(go1_payload_walk)
    assert torso["source"]["mass"] == "data" and abs(torso["mass"] - truth.mass) < 0.03 * payload
    assert abs(torso["mass"] - truth.mass) < 4 * torso["std"]["mass"]
    assert res["inputs"]["contact_frames"] == ["FL_foot", "FR_foot", "RL_foot", "RR_foot"]
    # what the trunk carries beyond the robot file's trunk, said (a legged team's payload)
    urdf_mass = load_model(GO1, floating=True).inertias[1].mass
    (said,) = [f for f in res["findings"] if f["code"] == "OE203"]
    assert f"{torso['mass'] - urdf_mass:+.4g} +- " in said["message"], said
    assert said["numbers"]["change_kg"] == pytest.approx(torso["mass"] - urdf_mass)
    assert said["numbers"]["mass_std_kg"] == torso["std"]["mass"] and said["names"] == [
        "root_joint"
    ]
    assert "OE203" not in result.output  # info: in result.json and with --verbose
    header = (tmp_path / "out" / "trajectory.csv").read_text().partition("\n")[0].split(",")
    assert {"base_x", "base_qw", "gyro_z", "base_vx", "q_FL_calf_joint"} <= set(header)
    assert (tmp_path / "out" / "report.png").stat().st_size > 10_000
    forces = read_table(str(tmp_path / "out" / "contact_forces.csv")).columns
    feet = res["inputs"]["contact_frames"]
    assert list(forces) == ["t"] + [f"f{a}_{f}" for f in feet for a in "xyz"]
    assert forces["t"].size == 160  # nodes 0..N-1 (the ones with a command), N = 0.8 s / 5 ms
    # momentum balance over the 0.8 s: the mean total normal force is the weight of the robot
    # with its payload, up to the change of vertical momentum and the touch-down impulses
    # (not in the file); measured 156.82 N for 157.95 N (-0.71 %)
    weight = (pin.computeTotalMass(load_model(GO1, floating=True)) + payload) * 9.81
    total = sum(forces["fz_" + f] for f in feet)
    assert abs(total.mean() - weight) < 0.02 * weight


def test_oe_floating_missing_imu_column_is_named(go1_payload_walk, tmp_path):
    _write(go1_payload_walk, tmp_path / "go1.csv", drop="gyro_y")
    result = _run(tmp_path)
    assert result.exit_code != 0 and "gyro_y" in result.output


def test_oe_floating_without_base_velocity_columns(go1_payload_walk, tmp_path):
    """A log with no pre-integrated accelerometer: the base velocity comes from the legs'
    no-slip observation and the dynamics; one column of the three is an error."""
    truth = _write(go1_payload_walk, tmp_path / "go1.csv", drop=("base_vx", "base_vy", "base_vz"))
    (tmp_path / "oe.yaml").write_text("noise:\n  foot_velocity: 0.03\n")
    result = _run(tmp_path, "--config", str(tmp_path / "oe.yaml"))
    assert result.exit_code == 0, result.output
    res = json.loads((tmp_path / "out" / "result.json").read_text())
    assert any(f["code"] == "OE106" and "no base_v* or acc_* columns" in f["message"]
               for f in res["findings"])  # fmt: skip
    assert res["status"] == "ok"
    payload = torso_payload_mass(go1_payload_walk)
    assert abs(res["bodies"]["root_joint"]["mass"] - truth.mass) < 0.03 * payload
    _write(go1_payload_walk, tmp_path / "go1.csv", drop=("base_vx", "base_vz"))
    result = _run(tmp_path)
    assert result.exit_code != 0 and "missing column base_vx" in result.output


def test_oe_floating_config_anchor_and_per_dof_noise(go1_payload_walk, tmp_path):
    """The localisation options of docs/oe.md through --config: the feet's no-slip observation,
    the contacts' damping and a per-DoF process_v list (nv = 18 numbers, the base's 6 first);
    the payload is still recovered (measured torso mass 8.565 kg for 8.561; 8.563 without them)."""
    truth = _write(go1_payload_walk, tmp_path / "go1.csv")
    process_v = [1e-3] * 6 + [2e-3] * 12
    config = tmp_path / "oe.yaml"
    config.write_text(
        f"noise:\n  foot_velocity: 0.03\n  process_v: {process_v}\ncontacts:\n  damping: 20\n"
    )
    result = _run(tmp_path, "--config", str(config))
    assert result.exit_code == 0, result.output
    res = json.loads((tmp_path / "out" / "result.json").read_text())
    assert res["status"] == "ok"
    payload = torso_payload_mass(go1_payload_walk)
    assert abs(res["bodies"]["root_joint"]["mass"] - truth.mass) < 0.03 * payload
    inputs = res["inputs"]
    assert inputs["noise"]["foot_velocity"] == 0.03 and inputs["contact_damping"] == 20.0
    assert inputs["noise"]["process_v"] == process_v


def test_oe_floating_config_errors_name_the_key(go1_payload_walk, tmp_path):
    _write(go1_payload_walk, tmp_path / "go1.csv")
    config = tmp_path / "oe.yaml"
    for text, key in (
        ("noise:\n  process_v: [0.001, 0.001]\n", "process_v"),  # not nv = 18 numbers
        ("noise:\n  process_q: [0.001, nope]\n", "noise.process_q[1]"),
        ("contacts:\n  damping: -1\n", "contacts.damping"),
        ("contacts:\n  stiffness: 1\n", "stiffness"),
    ):
        config.write_text(text)
        result = _run(tmp_path, "--config", str(config))
        assert result.exit_code != 0 and key in result.output, (text, result.output)


def test_oe_floating_foot_force_sensor_is_reported_and_not_used(go1_payload_walk, tmp_path):
    """A foot's six-axis sensor carries the ground's force, which the sensor model does not
    include: the run goes on without it and says so."""
    extra = {f"ft_FL_foot_{axis}": 1.0 for axis in ("fx", "fy", "fz", "tx", "ty", "tz")}
    _write(go1_payload_walk, tmp_path / "go1.csv", extra=extra)
    result = _run(tmp_path, "--max-iterations", "3")
    assert result.exit_code == 3 and "status: not_converged" in result.output, result.output
    assert "not using force/torque sensor 'FL_foot': contact frame 'FL_foot'" in result.output
    assert "wrench_fit" not in json.loads((tmp_path / "out" / "result.json").read_text())


def test_angles_in_degrees_are_refused(tmp_path):
    # the shipped Go1 walk with its joint angles in degrees came out at 35.9 kg for 8.6, exit 0
    from conftest import EXAMPLES

    columns = dict(read_table(str(EXAMPLES / "oe" / "go1_walk.csv")).columns)
    for name in [n for n in columns if n.startswith("q_")]:
        columns[name] = np.degrees(columns[name])
    (tmp_path / "go1.csv").write_text(table_csv_text(columns))
    result = _run(tmp_path)
    assert result.exit_code == 2 and "are they in degrees?" in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_a_quaternion_logged_w_first_is_refused(go1_payload_walk, tmp_path):
    """base_q* written w, x, y, z: the standing robot reads upside down with its feet on the
    ground (an ANYmal so logged gave a 22,520 kg trunk with only a noise-model warning)."""
    nominal, _, rec = go1_payload_walk
    cols = contract_columns(nominal, rec)
    x, y, z, w = (cols[f"base_q{a}"].copy() for a in "xyzw")
    cols["base_qx"], cols["base_qy"], cols["base_qz"], cols["base_qw"] = w, x, y, z
    (tmp_path / "go1.csv").write_text(table_csv_text(cols))
    result = _run(tmp_path)
    assert result.exit_code == 2, result.output
    assert "put the base upside down while its feet touch the ground" in result.output
    assert "a quaternion logged w, x, y, z" in result.output
