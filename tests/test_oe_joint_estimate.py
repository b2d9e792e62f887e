"""Issue 29 item 1, estimated: ``physid oe`` with ``joints: {estimate: all}`` recovers the
armature, viscous and Coulomb friction of a 3-joint arm simulated in MuJoCo (an engine physid
shares no code with), from encoders and torque commands, together with the last body."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner

from physid.cli import main
from physid.files.io import table_csv_text

ARMATURE = np.array([0.02, 0.015, 0.01])  # kg m^2
VISCOUS = np.array([0.3, 0.2, 0.1])  # N m s/rad
COULOMB = np.array([0.2, 0.15, 0.1])  # N m
COULOMB_SPEED = 0.3  # rad/s, the tanh law both sides use
NAMES = ("j1", "j2", "j3")

# the file physid reads: the bodies as simulated, no joint terms declared
ARM = """<mujoco model="arm3">
  <option timestep="0.001" integrator="implicitfast" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="l1" pos="0 0 0.2">
      <joint name="j1" type="hinge" axis="0 0 1"/>
      <inertial pos="0.05 0 0.1" mass="2.0" diaginertia="0.02 0.02 0.01"/>
      <body name="l2" pos="0 0 0.2">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <inertial pos="0.15 0 0" mass="1.5" diaginertia="0.004 0.012 0.012"/>
        <body name="l3" pos="0.3 0 0">
          <joint name="j3" type="hinge" axis="0 1 0"/>
          <inertial pos="0.12 0.01 0" mass="0.8" diaginertia="0.002 0.006 0.005"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _simulate(seconds: float = 4.0, dt: float = 0.005, seed: int = 0) -> dict:
    """Rows every dt of MuJoCo stepping at 1 ms with the joint terms; torque commands: sums of
    sines plus a weak PD about zero (held over each dt, as a real controller's)."""
    model = mujoco.MjModel.from_xml_string(ARM)
    model.dof_armature[:] = ARMATURE
    model.dof_damping[:] = VISCOUS
    data = mujoco.MjData(model)
    rng = np.random.default_rng(seed)
    freq, phase = rng.uniform(0.3, 1.6, (3, 3)), rng.uniform(0, 2 * np.pi, (3, 3))
    amp = np.array([2.5, 6.0, 2.0])
    sub = round(dt / model.opt.timestep)
    rows = round(seconds / dt) + 1
    q, v, tau = np.zeros((rows, 3)), np.zeros((rows, 3)), np.zeros((rows, 3))
    for k in range(rows):
        t = k * dt
        q[k], v[k] = data.qpos, data.qvel
        sines = (np.sin(2 * np.pi * freq * t + phase)).sum(axis=1) / 3
        gravity = data.qfrc_bias.copy()  # at this row's state: a feed-forward real arms use
        tau[k] = gravity + amp * sines - 3.0 * data.qpos - 0.3 * data.qvel
        for _ in range(sub):
            data.qfrc_applied[:] = -COULOMB * np.tanh(data.qvel / COULOMB_SPEED)
            data.ctrl[:] = 0.0
            data.qfrc_applied[:] += tau[k]
            mujoco.mj_step(model, data)
    noise = np.random.default_rng(seed + 1)
    cols = {"t": np.arange(rows) * dt}
    for i, name in enumerate(NAMES):
        cols[f"q_{name}"] = q[:, i] + 1e-4 * noise.standard_normal(rows)
        cols[f"dq_{name}"] = v[:, i] + 1e-2 * noise.standard_normal(rows)
        cols[f"tau_{name}"] = np.r_[tau[:-1, i], 0.0]
    return cols


@pytest.fixture(scope="module")
def estimated(tmp_path_factory) -> tuple[dict, dict, str]:
    root = tmp_path_factory.mktemp("arm3")
    (root / "arm.xml").write_text(ARM)
    (root / "run.csv").write_text(table_csv_text(_simulate()))
    (root / "oe.yaml").write_text(
        f"noise: {{encoder: 1.0e-4, joint_velocity: 1.0e-2}}\n"
        f"joints: {{estimate: all, coulomb_speed: {COULOMB_SPEED}}}\n"
    )
    out = root / "out"
    run = CliRunner().invoke(
        main,
        ["oe", "--urdf", str(root / "arm.xml"), "--data", str(root / "run.csv"),
         "--body", "j3", "--config", str(root / "oe.yaml"), "--out", str(out)],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    return (
        json.loads((out / "result.json").read_text()),
        json.loads((out / "params.json").read_text()),
        run.output,
    )


def test_joint_terms_estimated_from_an_independent_engine(estimated):
    """Every identifiable armature, viscous and Coulomb value within 10 % of MuJoCo's and
    within 4 of its reported standard deviations; the last body's mass within 3 %. The one
    the data cannot tell, j1's armature, is decided by its wide prior and said so, with the
    body it is confounded with: j2 and j3 turn about y, so body 3's inertia about its x and z
    axes raised together adds a constant to M's (j1, j1) entry and nothing else, exactly as
    j1's armature does (the fit puts MuJoCo's 0.02 kg m^2 into that body)."""
    result, _, output = estimated
    assert result["status"] == "ok"
    joints = result["joints"]
    for i, name in enumerate(NAMES):
        for kind, truth in (("armature", ARMATURE), ("viscous", VISCOUS), ("coulomb", COULOMB)):
            value, std = joints[name][kind], joints[name]["std"][kind]
            assert joints[name]["prior"][kind] is None  # the file declares none
            if (name, kind) == ("j1", "armature"):
                assert joints[name]["source"][kind] == "prior"
                assert joints[name]["confounded_with"] == {"armature": ["j3"]}
                continue
            assert value == pytest.approx(truth[i], rel=0.10), (name, kind, value)
            assert abs(value - truth[i]) <= 4 * std, (name, kind, value, std)
            assert joints[name]["source"][kind] == "data"
            assert kind not in joints[name].get("confounded_with", {})
    assert result["bodies"]["j3"]["mass"] == pytest.approx(0.8, rel=0.03)
    assert "caution OE202: j1 armature is decided by its prior" in output
    assert "moves with the estimated j3" in output
    (confounded,) = [f for f in result["findings"] if f["code"] == "OE202"]
    assert confounded["names"] == ["j1", "armature", "j3"]


def test_estimated_joint_terms_are_written_and_said(estimated):
    """params.json carries them in identify's per-joint layout; the run names what it
    estimates and from where it starts."""
    result, params, output = estimated
    assert params["joints"] == result["joints"]
    (said,) = [f for f in result["findings"] if f["code"] == "OE111"]
    assert said["severity"] == "info" and "OE111" not in output  # in result.json, --verbose
    assert said["message"].startswith("joint terms estimated on 3 joints")
    assert "3 undeclared: from 0.0001 kg m^2, wide prior (std 3 in log)" in said["message"]
    assert said["names"] == ["armature", "viscous", "coulomb"]


def test_joints_estimate_config(tmp_path):
    """joints.estimate: 'all' or a list of config names (URDF's damping/friction), with
    prior_std; anything else is one error naming the key."""
    import pinocchio as pin

    from physid.errors import InputError
    from physid.oe.data.config import read_joint_estimate

    model = pin.buildModelFromMJCF(str(_write(tmp_path / "arm.xml", ARM)))
    config = _write(tmp_path / "a.yaml", "joints: {estimate: [friction, damping], prior_std: 0.5}")
    estimate = read_joint_estimate(config, model)
    assert estimate.kinds == ("coulomb", "viscous") and estimate.dofs == (0, 1, 2)
    assert estimate.prior_log_std == 0.5
    assert (
        read_joint_estimate(_write(tmp_path / "b.yaml", "joints: {armature: 0.1}"), model) is None
    )
    all_kinds = read_joint_estimate(_write(tmp_path / "c.yaml", "joints: {estimate: all}"), model)
    assert all_kinds.kinds == ("armature", "viscous", "coulomb")
    for bad, match in (("[inertia]", "joints.estimate"), ("[{a: 1}]", "joints.estimate"),
                       ("all, prior_std: -1", "joints.prior_std")):  # fmt: skip
        with pytest.raises(InputError, match=match):
            read_joint_estimate(_write(tmp_path / "d.yaml", f"joints: {{estimate: {bad}}}"), model)


def _write(path, text):
    path.write_text(text)
    return path


def test_estimated_joint_terms_go_into_the_exported_mjcf(estimated, tmp_path):
    """``physid export`` of the oe params.json writes the estimated joint terms into the
    user's MJCF, read back by MuJoCo."""
    result, params, _ = estimated
    (tmp_path / "arm.xml").write_text(ARM)
    (tmp_path / "params.json").write_text(json.dumps(params))
    out = tmp_path / "tuned.xml"
    run = CliRunner().invoke(
        main,
        ["export", "--params", str(tmp_path / "params.json"), "--model",
         str(tmp_path / "arm.xml"), "--out", str(out)],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    tuned = mujoco.MjModel.from_xml_path(str(out))
    for i, name in enumerate(NAMES):
        terms = result["joints"][name]
        assert tuned.dof_armature[i] == pytest.approx(terms["armature"], rel=1e-9)
        assert tuned.dof_damping[i] == pytest.approx(terms["viscous"], rel=1e-9)
        assert tuned.dof_frictionloss[i] == pytest.approx(terms["coulomb"], rel=1e-9)
