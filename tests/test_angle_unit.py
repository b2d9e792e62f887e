"""Config ``angle_unit: degrees``: recordings whose revolute angles are in degrees (industrial
controllers, LeRobot hobby arms) are read as the same recording in radians; prismatic joints'
metres stay metres; simfit, which reads the MJCF's radians, refuses the key in one line."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import KUKA, kuka_slice, require_dataset

from physid.errors import InputError
from physid.files.config import parse_config
from physid.recordings.tables import Table
from physid.recordings.trajectory import trajectory_from_table
from physid.robot.model import is_revolute


def _table(model, t, q, dq, tau, *, degrees: bool) -> Table:
    revolute = np.array([is_revolute(model, j) for j in model.joint_names])
    scale = np.where(revolute, 180.0 / np.pi, 1.0) if degrees else np.ones(len(revolute))
    columns, joints = {"t": t}, model.joint_names
    for prefix, values in (("q_", q), ("dq_", dq)):
        columns |= {f"{prefix}{j}": values[:, k] * scale[k] for k, j in enumerate(joints)}
    columns |= {f"tau_{j}": tau[:, k] for k, j in enumerate(joints)}
    return Table(columns, "degrees.csv" if degrees else "radians.csv")


def test_degrees_read_as_radians_and_metres_stay_metres(tmp_path):
    from test_mjcf import ARM

    from physid.files.config import robot_for

    (tmp_path / "arm.xml").write_text(ARM, encoding="utf-8")
    model = robot_for(tmp_path / "arm.xml", parse_config({}))  # a slide joint among hinges
    assert not all(is_revolute(model, j) for j in model.joint_names)
    t = np.arange(0.0, 4.0, 0.002)
    phase = np.arange(len(model.joint_names))
    q = 0.3 * np.sin(np.outer(t, np.ones_like(phase)) + phase)
    dq = 0.3 * np.cos(np.outer(t, np.ones_like(phase)) + phase)
    tau = np.cos(np.outer(2 * t, np.ones_like(phase)) + phase)
    radians = trajectory_from_table(_table(model, t, q, dq, tau, degrees=False), model)
    in_degrees = _table(model, t, q, dq, tau, degrees=True)
    with pytest.raises(InputError, match="set angle_unit: degrees in the config"):
        trajectory_from_table(in_degrees, model)
    read = trajectory_from_table(in_degrees, model, angles_in_degrees=True)
    np.testing.assert_allclose(read.q, radians.q, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(read.dq, radians.dq, rtol=1e-14, atol=1e-15)


def test_the_config_key_is_checked():
    assert parse_config({}).angle_unit == "radians"
    assert parse_config({"angle_unit": "degrees"}).angle_unit == "degrees"
    with pytest.raises(InputError, match=r"angle_unit: 'grad' is not one of \['radians', 'deg"):
        parse_config({"angle_unit": "grad"})


def test_simfit_refuses_angles_it_would_not_convert(tmp_path):
    from physid.api.simfit_run import simfit_drive_gains

    config = tmp_path / "config.yaml"
    config.write_text("angle_unit: degrees\n", encoding="utf-8")
    with pytest.raises(InputError, match="angle_unit: degrees is not applied by simfit"):
        simfit_drive_gains(config)


def test_a_real_arm_logged_in_degrees_identifies_as_in_radians(tmp_path):
    """Real KUKA LWR4+ file 2 (12 s) with its angles in degrees and `angle_unit: degrees`: the
    same fit as the file in radians (the conversion's last-bit rounding moves prior-decided
    masses by < 1e-3 of their std)."""
    import json

    from click.testing import CliRunner

    from physid.cli import main

    require_dataset(KUKA)
    s = kuka_slice(2, 12.0)
    joints = [f"lwr_{k}_joint" for k in range(7)]
    outputs = {}
    for unit, q in (("radians", s.q), ("degrees", np.degrees(s.q))):
        columns = np.column_stack([s.t, q, s.tau])
        header = ",".join(["t", *(f"q_{j}" for j in joints), *(f"tau_{j}" for j in joints)])
        data = tmp_path / f"{unit}.csv"
        np.savetxt(data, columns, delimiter=",", header=header, comments="", fmt="%.17g")
        config = tmp_path / f"{unit}.yaml"
        config.write_text(f"angle_unit: {unit}\n", encoding="utf-8")
        run = CliRunner().invoke(main, ["identify", "--urdf", str(KUKA / "kuka_lwr4.urdf"),
                                        "--data", str(data), "--config", str(config),
                                        "--out", str(tmp_path / unit), "--quiet"])  # fmt: skip
        assert run.exit_code == 0, run.output
        outputs[unit] = json.loads((tmp_path / unit / "params.json").read_text())
    radians, degrees = (np.array(outputs[u]["standard_parameters"]["values"], float)
                        for u in ("radians", "degrees"))  # fmt: skip
    std = np.array([np.inf if v is None else v for v in
                    outputs["radians"]["standard_parameters"]["std"]], float)  # fmt: skip
    assert np.all(np.abs(degrees - radians) <= 1e-3 * std + 1e-12)
    errors = [outputs[u]["fit"]["train"]["relative_error"] for u in ("radians", "degrees")]
    assert errors[1] == pytest.approx(errors[0], rel=1e-6)
