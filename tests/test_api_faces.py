"""Issue 25 item 4: every estimator's API function returns the one result protocol, and its
``save(out)`` writes the same files as its command on the same input (the JSON documents equal
but for the output path and the wall-clock times, the text files byte for byte)."""

from __future__ import annotations

import json
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin
import pytest
from click.testing import CliRunner

import physid
from physid.body.inertia import pi_from_mass_com_inertia
from physid.cli import main
from physid.files.io import table_csv_text
from physid.impacts import Ellipse, Line, simulate
from physid.impacts.snapshots import snapshots_csv_text, snapshots_from_simulation
from physid.recordings.trajectory import write_trajectory_csv
from physid.sim.arm import (
    FourierExcitation,
    SensorNoise,
    arm6_model,
    arm6_urdf_path,
    simulate_tracking,
    true_parameters,
    two_link_urdf_path,
)
from physid.workflows import run_identify

# wall-clock times and the solver's CPU time differ from run to run
TIMES = {
    "runtime",
    "solve_time",
    "solve_time_s",
    "created_utc",
    "seconds",
    "cpu_s",
    "wall_s",
    "time_s",
    "elapsed_s",
}
PENDULUM_URDF = """<robot name="pendulum">
  <link name="base"/>
  <link name="arm">
    <inertial>
      <origin xyz="0 0 -0.3"/>
      <mass value="0.5"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.0001"/>
    </inertial>
  </link>
  <joint name="pendulum" type="revolute">
    <parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-10" upper="10" effort="10" velocity="100"/>
  </joint>
</robot>
"""
PENDULUM_MJCF = """<mujoco model="pendulum">
  <option timestep="0.002"/>
  <worldbody>
    <body name="rod">
      <joint name="hinge" type="hinge" axis="0 1 0" damping="{damping}"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.02" mass="1"/>
    </body>
  </worldbody>
</mujoco>
"""


def _without(value, out_dirs: tuple[str, ...]):  # noqa: ANN001, ANN202
    """``value`` with timing keys dropped and the output folders' names made one."""
    if isinstance(value, dict):
        return {k: _without(v, out_dirs) for k, v in value.items() if k not in TIMES}
    if isinstance(value, list):
        return [_without(v, out_dirs) for v in value]
    if isinstance(value, str):
        for folder in out_dirs:
            value = value.replace(folder, "<out>")
    return value


def assert_same_outputs(cli: Path, api: Path) -> None:
    """The same files in both places; JSON equal but for paths and times, text identical."""
    if cli.is_file():
        pairs, folders = [(cli, api)], (str(cli.parent), str(api.parent))
    else:
        names = sorted(p.name for p in cli.iterdir())
        assert names == sorted(p.name for p in api.iterdir())
        pairs, folders = [(cli / name, api / name) for name in names], (str(cli), str(api))
    for a, b in pairs:
        if a.suffix == ".json":
            first, second = (json.loads(p.read_text()) for p in (a, b))
            assert _without(first, folders) == _without(second, folders), a.name
        elif a.suffix in (".csv", ".urdf", ".xml"):
            assert a.read_text() == b.read_text(), a.name
        elif a.suffix == ".npz":
            with np.load(a) as x, np.load(b) as y:
                assert sorted(x) == sorted(y)
                for key in x:
                    np.testing.assert_array_equal(x[key], y[key])
        else:  # figures: written by both
            assert a.stat().st_size > 0 and b.stat().st_size > 0


def assert_protocol(result) -> None:  # noqa: ANN001
    assert isinstance(result, physid.Result)
    assert isinstance(result.status, str) and result.status
    assert isinstance(result.message, str)
    for name, parameter in result.parameters.items():
        assert isinstance(name, str) and isinstance(parameter, physid.Parameter)
        assert isinstance(parameter.source, str) and isinstance(parameter.unit, str)
    json.dumps(result.to_dict())  # JSON-ready


def cli(*args: object) -> str:
    run = CliRunner().invoke(main, [str(a) for a in args])
    assert run.exit_code in (0, 3), run.output
    return run.output


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    """The demo arm identified from 8 s, and 8 s more with a 1.5 kg tool on link 6."""
    folder = tmp_path_factory.mktemp("arm")
    rng = np.random.default_rng(0)
    model = arm6_model()
    truth = true_parameters(model, rng)
    with_tool = truth.copy()
    with_tool[model.layout.body_slice("joint_6")] += pi_from_mass_com_inertia(
        1.5, np.array([0.02, -0.03, 0.10]), 1e-3 * np.eye(3)
    )
    files = {}
    for name, theta in (("unloaded", truth), ("loaded", with_tool)):
        recorded = simulate_tracking(
            model,
            theta,
            FourierExcitation.random(rng, model.n_joints, amplitude_rad=0.8),
            duration_s=8.0,
            sample_rate_hz=400.0,
            noise=SensorNoise(),
            rng=rng,
        ).recorded
        files[name] = write_trajectory_csv(folder / f"{name}.csv", recorded)
    run_identify(arm6_urdf_path(), [files["unloaded"]], out_dir=folder / "robot")
    return folder, files


def test_identify_result_saves_what_the_command_writes(arm, tmp_path):
    folder, files = arm
    result = physid.identify(arm6_urdf_path(), files["unloaded"])
    assert_protocol(result)
    assert result.parameters["joint_2.mass"].unit == "kg"
    result.save(tmp_path / "api")
    assert_same_outputs(folder / "robot", tmp_path / "api")
    assert result.to_dict() == json.loads((tmp_path / "api" / "params.json").read_text())


def test_validate(arm, tmp_path):
    folder, files = arm
    params = folder / "robot" / "params.json"
    cli("validate", "--urdf", arm6_urdf_path(), "--params", params, "--data", files["loaded"],
        "--json", tmp_path / "cli.json", "--quiet")  # fmt: skip
    result = physid.validate(arm6_urdf_path(), params, files["loaded"])
    assert_protocol(result)
    assert result.status == "ok" and result.parameters == {}
    result.save(tmp_path / "api.json")
    assert_same_outputs(tmp_path / "cli.json", tmp_path / "api.json")
    assert_protocol(physid.load_params(params))


def test_payload(arm, tmp_path):
    folder, files = arm
    params = folder / "robot" / "params.json"
    cli("payload", "--urdf", arm6_urdf_path(), "--params", params, "--data", files["loaded"],
        "--link", "link_6", "--out", tmp_path / "cli")  # fmt: skip
    result = physid.payload(arm6_urdf_path(), params, files["loaded"], "link_6")
    assert_protocol(result)
    assert result.parameters["mass"].value == pytest.approx(1.5, rel=0.1)
    result.save(tmp_path / "api")
    assert_same_outputs(tmp_path / "cli", tmp_path / "api")


def test_export(arm, tmp_path):
    folder, _ = arm
    params = folder / "robot" / "params.json"
    for name in ("arm.urdf", "arm.xml"):
        output = cli("export", "--params", params, "--urdf", arm6_urdf_path(), "--out",
                     tmp_path / f"cli_{name}")  # fmt: skip
        result = physid.export_model(params, arm6_urdf_path(), tmp_path / f"api_{name}")
        assert_protocol(result)
        assert all(f"not exported: {note}" in output for note in result.notes)
        assert_same_outputs(tmp_path / f"cli_{name}", tmp_path / f"api_{name}")


def test_excite(tmp_path):
    config = tmp_path / "excite.yaml"
    config.write_text("excitation: {starts: 1, max_iterations: 20}\n")
    cli("excite", "--urdf", two_link_urdf_path(), "--config", config, "--harmonics", 3,
        "--out", tmp_path / "cli" / "t.csv")  # fmt: skip
    result = physid.excite_design(two_link_urdf_path(), config=config, harmonics=3)
    assert_protocol(result)
    result.save(tmp_path / "api" / "t.csv")
    for name in ("t.csv", "t.json"):
        assert_same_outputs(tmp_path / "cli" / name, tmp_path / "api" / name)


def test_online(tmp_path):
    from physid.sim.payload_arm import ARM_URDF, PayloadProfile, simulate_payload_arm

    profile = PayloadProfile(hold_s=0.5, sine_s=0.0, square_s=0.0, plateau_s=0.0, step_s=1.0)
    picked = simulate_payload_arm(np.random.default_rng(9), profile)
    recording = physid.Recording.from_arrays(
        picked.t, picked.q, picked.tau, dq=picked.dq, joint_names=picked.joint_names
    )
    data = tmp_path / "picked.csv"
    data.write_text(table_csv_text(recording.to_table().columns, fmt="%.18e"))
    config = tmp_path / "online.yaml"
    config.write_text("calibration_s: 0.3\nacceleration_window: 21\n")
    cli("online", "--urdf", ARM_URDF, "--data", data, "--body", "arm_joint_7", "--config",
        config, "--out", tmp_path / "cli", "--quiet")  # fmt: skip
    result = physid.online_replay(ARM_URDF, data, "arm_joint_7", config=config)
    assert_protocol(result)
    assert result.parameters["arm_joint_7.mass"].unit == "kg"
    result.save(tmp_path / "api")
    assert_same_outputs(tmp_path / "cli", tmp_path / "api")
    in_memory = physid.online_replay(ARM_URDF, recording, ["arm_joint_7"], config=config)
    assert in_memory.to_dict()["bodies"] == result.to_dict()["bodies"]  # the same replay


def test_oe(tmp_path):
    from physid.sim.oe_arm import simulate_arm
    from physid.sim.oe_robots import KINOVA, load_model, robot_urdf

    body = "j2s6s200_joint_6"
    nominal = load_model(KINOVA)
    true = nominal.copy()
    j = true.getJointId(body)
    true.inertias[j] += pin.Inertia(0.5, np.array([0.0, 0.02, 0.05]), np.diag([1e-3, 1.5e-3, 1e-3]))
    run = simulate_arm(true, nominal, np.random.default_rng(5), duration=1.0, dt=0.01)
    columns = {"t": run.t, "temperature": np.zeros_like(run.t)}
    for i in range(1, nominal.njoints):
        name, joint = nominal.names[i], nominal.joints[i]
        qs = run.q_meas[:, joint.idx_q : joint.idx_q + joint.nq]
        columns["q_" + name] = np.arctan2(qs[:, 1], qs[:, 0]) if joint.nq == 2 else qs[:, 0]
        columns["dq_" + name] = run.v_meas[:, joint.idx_v]
        columns["tau_" + name] = np.r_[run.tau[:, joint.idx_v], 0.0]
    data = tmp_path / "run.csv"
    data.write_text(table_csv_text(columns))
    output = cli("oe", "--urdf", robot_urdf(KINOVA), "--data", data, "--body", body,
                 "--out", tmp_path / "cli")  # fmt: skip
    result = physid.oe_estimate(robot_urdf(KINOVA), data, body)
    assert_protocol(result)
    # the column oe does not read is named alike by both faces, as a finding
    unread = [f for f in result.findings if f.code == "OE102"]
    assert unread and "temperature" in unread[0].names and "OE102" in output
    result.save(tmp_path / "api")
    assert_same_outputs(tmp_path / "cli", tmp_path / "api")


def test_multibody_simulate_and_identify(tmp_path):
    urdf = tmp_path / "pendulum.urdf"
    urdf.write_text(PENDULUM_URDF)
    config = tmp_path / "pendulum.yaml"
    config.write_text("gravity: [0, 0, -9.81]\njoints: {pendulum: {viscous: 0.01}}\n")
    cli("multibody", "simulate", "--urdf", urdf, "--config", config, "--duration", 1.0,
        "--q0", "1.0", "--every", 2, "--out", tmp_path / "sim_cli")  # fmt: skip
    swing = physid.multibody_simulate(urdf, config=config, duration=1.0, q0=[1.0], every=2)
    assert_protocol(swing)
    swing.save(tmp_path / "sim_api")
    assert_same_outputs(tmp_path / "sim_cli", tmp_path / "sim_api")

    fit_config = tmp_path / "fit.yaml"
    fit_config.write_text(
        "gravity: [0, 0, -9.81]\nbodies: {pendulum: {Iyy: 0.02}}\n"
        "joints: {pendulum: {viscous: 0.001}}\nestimate: [pendulum.Iyy, pendulum.viscous]\n"
    )
    data = tmp_path / "sim_api" / "trajectory.csv"
    cli("multibody", "identify", "--urdf", urdf, "--data", data, "--config", fit_config,
        "--dt", 5e-3, "--out", tmp_path / "fit_cli")  # fmt: skip
    fit = physid.multibody_identify(urdf, data, config=fit_config, dt=5e-3)
    assert_protocol(fit)
    assert set(fit.parameters) == {"pendulum.Iyy", "pendulum.viscous"}
    fit.save(tmp_path / "fit_api")
    assert_same_outputs(tmp_path / "fit_cli", tmp_path / "fit_api")


def test_impacts_simulate_identify_and_snapshots(tmp_path):
    throw = ["ellipse:0.05,0.025", "line:0,0"]
    # 0.2 s holds the impact, and the fits take half the CPU of 0.3 s (outputs are compared)
    options = {"mu": 0.4, "restitution": 0.2, "duration": 0.2, "fps": 240, "noise": 1e-3}
    cli("impacts", "simulate", "--shape", throw[0], "--surface", throw[1], "--q0",
        "0,0.1,-0.785", "--v0", "3,-5,0", "--mu", 0.4, "--restitution", 0.2, "--duration", 0.2,
        "--fps", 240, "--noise", 1e-3, "--out", tmp_path / "cli.csv")  # fmt: skip
    poses = physid.impacts_simulate(*throw, [0, 0.1, -0.785], "3,-5,0", **options)
    assert_protocol(poses)
    poses.save(tmp_path / "api.csv")
    assert_same_outputs(tmp_path / "cli.csv", tmp_path / "api.csv")

    cli("impacts", "identify", "--data", tmp_path / "api.csv", "--shape", throw[0],
        "--surface", throw[1], "--out", tmp_path / "id_cli")  # fmt: skip
    fitted = physid.impacts_identify(tmp_path / "api.csv", *throw)
    assert_protocol(fitted)
    fitted.save(tmp_path / "id_api")
    assert_same_outputs(tmp_path / "id_cli", tmp_path / "id_api")

    ellipse, ground = Ellipse(0.05, 0.025), [Line(0.0, 0.0)]
    sim = simulate(ellipse, ground, (0, 0.1, 1.0), (1.0, -3.0, 10.0), inertia_ratio=756e-6,
                   mu=0.3, restitution=0.5, dt=1e-4, duration=0.3, mass=0.064)  # fmt: skip
    snapshots = tmp_path / "snapshots.csv"
    snapshots.write_text(snapshots_csv_text(snapshots_from_simulation(sim, ellipse, ground)))
    cli("impacts", "identify-snapshots", "--data", snapshots, "--out", tmp_path / "sn_cli")
    law = physid.impacts_snapshots(snapshots)
    assert_protocol(law)
    law.save(tmp_path / "sn_api")
    assert_same_outputs(tmp_path / "sn_cli", tmp_path / "sn_api")


def test_simfit(tmp_path):
    real = mujoco.MjModel.from_xml_string(PENDULUM_MJCF.format(damping=0.05))
    state = mujoco.MjData(real)
    rows = []
    for step in range(1000):
        t = step * real.opt.timestep
        torque = 0.8 * np.sin(2 * np.pi * 0.7 * t) + 0.4 * np.sin(2 * np.pi * 1.9 * t)
        rows.append((t, state.qpos[0], torque))
        state.qfrc_applied[0] = torque
        mujoco.mj_step(real, state)
    t, q, tau = np.array(rows).T
    data = tmp_path / "log.csv"
    data.write_text(table_csv_text({"t": t, "q_hinge": q, "tau_hinge": tau}, fmt="%.17g"))
    model = tmp_path / "pendulum.xml"
    model.write_text(PENDULUM_MJCF.format(damping=0.2))
    cli("simfit", "--model", model, "--data", data, "--validate", data, "--fit", "damping",
        "--out", tmp_path / "cli", "--quiet")  # fmt: skip
    tuned = physid.simfit_tune(model, data, validate=data, fit="damping")
    assert_protocol(tuned)
    assert tuned.parameters["hinge.damping"].value == pytest.approx(0.05, rel=0.05)
    tuned.save(tmp_path / "api")
    assert_same_outputs(tmp_path / "cli", tmp_path / "api")
