"""physid simfit driving the model's own actuators (issue 26 item 3: actuator gains and bias,
position-target logs): runs that MuJoCo simulated with known servo gains and a known motor gain,
logged as a robot logs its commands (``ctrl_<actuator>``), tuned from wrong starting values."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner
from simfit_data import HOME, simulate_arm, write_csv
from test_mjcf import ARM, JOINTS

from physid.cli import main
from physid.recordings.tables import Table
from physid.simfit.codes import ACTUATORS_IDLE, JOINTS_HELD_STILL

KP = (60.0, 120.0, 25.0, 400.0)
KV = (4.0, 8.0, 1.0, 20.0)
SERVOS = "\n".join(
    f'    <position name="p{k + 1}" joint="{joint}" kp="{kp}" kv="{kv}"/>'
    for k, (joint, kp, kv) in enumerate(zip(JOINTS, KP, KV, strict=True))
)
MOTORS = "\n".join(f'    <motor name="m{k + 1}" joint="{joint}" gear="1"/>'
                   for k, joint in enumerate(JOINTS))  # fmt: skip
SERVO_ARM = ARM.replace(MOTORS, SERVOS)


def servo_run(model, seconds: float, seed: int, rate_hz: float = 500.0) -> Table:
    """Position targets sent at ``rate_hz`` (held between sends, as a controller's output) to
    the arm's position servos; ``q_`` with 0.2 mrad noise and the targets as ``ctrl_p*``. The
    arm's four joints and servos come first; a model's further ones are neither driven nor
    logged."""
    rng = np.random.default_rng(seed)
    data = mujoco.MjData(model)
    data.qpos[:4] = HOME
    mujoco.mj_forward(model, data)
    h = model.opt.timestep
    per = int(round(1.0 / (rate_hz * h)))
    amplitude = rng.uniform(0.2, 0.5, (4, 3)) / np.arange(1, 4) * [[1], [1], [1], [0.05]]
    phase = rng.uniform(0, 2 * np.pi, (4, 3))
    w = 2 * np.pi * 0.4 * np.arange(1, 4)
    rows = []
    for step in range(int(round(seconds / h))):
        t = step * h
        if step % per == 0:
            data.ctrl[:4] = (amplitude * np.sin(w * t + phase)).sum(axis=1) + HOME + [0, 0, 0, 0.05]
            rows.append((t, data.qpos[:4].copy(), data.ctrl[:4].copy()))
        mujoco.mj_step(model, data)
    q = np.array([r[1] for r in rows]) + rng.normal(0.0, 2e-4, (len(rows), 4))
    columns = {"t": np.array([r[0] for r in rows])}
    for j, name in enumerate(JOINTS):
        columns[f"q_{name}"] = q[:, j]
        columns[f"ctrl_p{j + 1}"] = np.array([r[2][j] for r in rows])
    return Table(columns, f"servo arm, seed {seed}")


def _simfit(model, data, out, *extra):
    return CliRunner().invoke(main, ["simfit", "--model", str(model), "--data", str(data),
                                     "--out", str(out), "--quiet", *extra])  # fmt: skip


@pytest.fixture(scope="module")
def servo_runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("servos")
    truth = mujoco.MjModel.from_xml_string(SERVO_ARM)
    write_csv(servo_run(truth, 3.0, 1), folder / "train.csv")
    write_csv(servo_run(truth, 2.0, 2), folder / "held.csv")
    start = SERVO_ARM
    for kp, kv in zip(KP, KV, strict=True):  # stiffness x2, damping x0.5
        start = start.replace(f'kp="{kp}" kv="{kv}"', f'kp="{2 * kp}" kv="{kv / 2}"')
    (folder / "start.xml").write_text(start)
    return folder


def test_simfit_tunes_position_servos_from_their_targets(servo_runs, tmp_path):
    out = tmp_path / "tuned"
    run = _simfit(servo_runs / "start.xml", servo_runs / "train.csv", out,
                  "--validate", str(servo_runs / "held.csv"), "--fit", "kp,kv")  # fmt: skip
    assert run.exit_code == 0, run.output
    result = json.loads((out / "simfit.json").read_text())
    parameters = result["parameters"]
    for k in range(4):
        kp, kv = parameters[f"p{k + 1}.kp"], parameters[f"p{k + 1}.kv"]
        assert kp["value"] == pytest.approx(KP[k], rel=0.02), (k, kp)
        assert kv["value"] == pytest.approx(KV[k], rel=0.05), (k, kv)
        assert abs(kp["value"] - KP[k]) < 4 * kp["std"] + 1e-3 * KP[k]
    assert parameters["p1.kp"]["unit"] == "N m/rad" and parameters["p4.kp"]["unit"] == "N/m"
    # the targets are held over their T = 2 ms period, as the servos held them: no delay (until
    # 2026-11-28 they were interpolated linearly, which leads the hold by (T - h) / 2, and the
    # fit read 0.5 ms; at 30 fps, 16 ms)
    assert parameters["delay"]["value"] == pytest.approx(0.0, abs=0.1e-3)
    held = result["held_out_rms_rad"]
    before, after = held["before"]["shooting 0.5 s"]["all"], held["after"]["shooting 0.5 s"]["all"]
    assert after < 2.0 * 2e-4 < before / 5
    # written back into the servos' own attributes, and compiled to the tuned numbers
    text = (out / "model_tuned.xml").read_text()
    assert '<position name="p1" joint="shoulder_pan" kp="' in text
    tuned = mujoco.MjModel.from_xml_path(str(out / "model_tuned.xml"))
    for k in range(4):
        assert tuned.actuator_gainprm[k, 0] == pytest.approx(parameters[f"p{k + 1}.kp"]["value"])
        assert tuned.actuator_biasprm[k, 1] == pytest.approx(-tuned.actuator_gainprm[k, 0])
        assert tuned.actuator_biasprm[k, 2] == pytest.approx(-parameters[f"p{k + 1}.kv"]["value"])


def test_a_held_joint_keeps_its_servo_and_a_held_term_enters_the_others_start(servo_runs, tmp_path):
    """``--hold shoulder_pan,elbow.damping`` with damping, kp and kv tuned: p1 (the servo of the
    held shoulder_pan) keeps the file's gains, which are the truth here, and the other servos
    reach theirs from twice kp and half kv. The elbow's held damping is a known term of the
    inverse-dynamics start of p3's gains: without it p3.kv would start at kv + damping = 1.15
    (1.003 with it, truth 1)."""
    start = SERVO_ARM
    for kp, kv in list(zip(KP, KV, strict=True))[1:]:
        start = start.replace(f'kp="{kp}" kv="{kv}"', f'kp="{2 * kp}" kv="{kv / 2}"')
    (tmp_path / "start.xml").write_text(start)
    out = tmp_path / "tuned"
    run = _simfit(tmp_path / "start.xml", servo_runs / "train.csv", out,
                  "--fit", "damping,kp,kv", "--hold", "shoulder_pan,elbow.damping")  # fmt: skip
    assert run.exit_code == 0, run.output
    result = json.loads((out / "simfit.json").read_text())
    assert result["hold"] == {"shoulder_pan.damping": 0.8, "elbow.damping": 0.15,
                              "p1.kp": KP[0], "p1.kv": KV[0]}  # fmt: skip
    parameters = result["parameters"]
    assert not any(name.startswith(("p1.", "shoulder_pan.", "elbow.")) for name in parameters)
    for k in (1, 2, 3):
        assert parameters[f"p{k + 1}.kp"]["value"] == pytest.approx(KP[k], rel=0.02)
    assert parameters["p3.kv"]["start"] == pytest.approx(KV[2], rel=0.01)
    assert parameters["p3.kv"]["value"] == pytest.approx(KV[2], rel=0.01)
    tuned = mujoco.MjModel.from_xml_path(str(out / "model_tuned.xml"))
    assert tuned.actuator_gainprm[0, 0] == KP[0] and tuned.actuator_biasprm[0, 2] == -KV[0]


def test_simfit_tunes_a_motor_gain_from_commands_in_other_units(tmp_path):
    """The PD torques of tests/simfit_data.py logged as commands in units of 1/2.5 N m (a
    torque constant the model does not know): the motors' gain comes out 2.5, written as gear."""
    truth = mujoco.MjModel.from_xml_string(ARM)
    table = simulate_arm(truth, 3.0, 1)
    columns = {k: v for k, v in table.columns.items() if not k.startswith("tau_")}
    for k, joint in enumerate(JOINTS):
        columns[f"ctrl_m{k + 1}"] = table.columns[f"tau_{joint}"] / 2.5
    write_csv(Table(columns, "commands"), tmp_path / "train.csv")
    (tmp_path / "arm.xml").write_text(ARM)
    out = tmp_path / "tuned"
    run = _simfit(tmp_path / "arm.xml", tmp_path / "train.csv", out, "--fit", "gain",
                  "--no-delay")  # fmt: skip
    assert run.exit_code == 0, run.output
    parameters = json.loads((out / "simfit.json").read_text())["parameters"]
    for k in range(4):
        assert parameters[f"m{k + 1}.gain"]["value"] == pytest.approx(2.5, rel=0.01)
    tuned = mujoco.MjModel.from_xml_path(str(out / "model_tuned.xml"))
    assert tuned.actuator_gear[:, 0] == pytest.approx(np.full(4, 2.5), rel=0.01)
    assert np.all(tuned.actuator_gainprm[:, 0] == 1.0)


@pytest.mark.parametrize(
    "fit, drop, message",
    [
        ("kp", None, "--fit kp: the model has no named position actuator"),
        ("damping", "ctrl_m4", "missing column(s) ctrl_m4"),
    ],
)
def test_actuator_terms_and_commands_are_checked_in_one_line(tmp_path, fit, drop, message):
    truth = mujoco.MjModel.from_xml_string(ARM)
    table = simulate_arm(truth, 1.0, 1)
    columns = {k: v for k, v in table.columns.items() if not k.startswith("tau_")}
    for k, joint in enumerate(JOINTS):
        columns[f"ctrl_m{k + 1}"] = table.columns[f"tau_{joint}"]
    columns.pop(drop, None)
    write_csv(Table(columns, "commands"), tmp_path / "run.csv")
    (tmp_path / "arm.xml").write_text(ARM)
    run = _simfit(tmp_path / "arm.xml", tmp_path / "run.csv", tmp_path / "o", "--fit", fit)
    assert run.exit_code == 2 and message in run.output, run.output
    assert "Traceback" not in run.output and not (tmp_path / "o").exists()


def test_actuator_terms_need_commanded_runs(tmp_path):
    truth = mujoco.MjModel.from_xml_string(ARM)
    write_csv(simulate_arm(truth, 1.0, 1), tmp_path / "run.csv")  # tau_ columns
    (tmp_path / "arm.xml").write_text(ARM)
    run = _simfit(tmp_path / "arm.xml", tmp_path / "run.csv", tmp_path / "o", "--fit", "gain")
    assert run.exit_code == 2
    assert "--fit gain tunes the model's actuators, which only recordings with ctrl_" in run.output


def test_a_held_target_is_averaged_over_each_model_step_exactly():
    """Closed form against brute force: the mean of a zero-order-held signal over each model
    step (before the first sample, inside, across samples, after the last), continuous in the
    steps' start."""
    from physid.simfit.shooting import held_step_means

    t = np.array([0.0, 0.033, 0.066, 0.1])
    values = np.array([[1.0, -2.0], [2.0, 0.5], [3.0, 4.0], [4.0, -1.0]])
    starts = np.arange(-0.01, 0.12, 0.0013)
    means = held_step_means(t, values, starts, 0.002)
    inside = (np.arange(4000) + 0.5) * 0.002 / 4000
    for start, mean in zip(starts, means, strict=True):
        rows = np.clip(np.searchsorted(t, start + inside, side="right") - 1, 0, len(t) - 1)
        np.testing.assert_allclose(mean, values[rows].mean(axis=0), atol=1e-9)
    shifted = held_step_means(t, values, starts + 1e-7, 0.002)
    jump = np.max(np.abs(np.diff(values, axis=0)))  # 5: the largest step of the held signal
    assert np.max(np.abs(shifted - means)) <= 1.0001 * jump * 1e-7 / 0.002  # Lipschitz


HAND = (
    '<geom type="box" size="0.025 0.02 0.02" mass="0.35"/>',
    '<geom type="box" size="0.025 0.02 0.02" mass="0.35"/>'
    '<body name="left" pos="0.03 0.01 0"><joint name="left" type="slide" axis="0 1 0" '
    'range="0 0.04"/><geom type="box" size="0.01 0.005 0.01" mass="0.04"/></body>'
    '<body name="right" pos="0.03 -0.01 0"><joint name="right" type="slide" axis="0 -1 0" '
    'range="0 0.04"/><geom type="box" size="0.01 0.005 0.01" mass="0.04"/></body>',
)
SPLIT = ('<tendon><fixed name="split"><joint joint="left" coef="0.5"/>'
         '<joint joint="right" coef="0.5"/></fixed></tendon>')  # fmt: skip


def test_a_gripper_no_recording_commands_is_held_still_and_its_actuator_left_out(tmp_path):
    """A servo arm with a two-finger gripper on a split tendon (Menagerie's Panda hand) whose
    commands and finger states the log leaves out: simfit said "missing column(s) ctrl_grip".
    It holds the fingers, leaves the gripper's actuator out of its simulations and tunes the
    arm's servos as on the arm alone (the truth: the arm with its fingers held)."""
    assert HAND[0] in SERVO_ARM and "<actuator>" in SERVO_ARM
    truth_xml = SERVO_ARM.replace(*HAND).replace(
        "</mujoco>", '<equality><joint joint1="left"/><joint joint1="right"/></equality></mujoco>'
    )
    truth = mujoco.MjModel.from_xml_string(truth_xml)
    write_csv(servo_run(truth, 3.0, 1), tmp_path / "train.csv")
    start = (
        SERVO_ARM.replace(*HAND)
        .replace("<actuator>", SPLIT + "<actuator>")
        .replace(SERVOS, SERVOS + '\n    <position name="grip" tendon="split" kp="80"/>')
    )
    for kp, kv in zip(KP, KV, strict=True):
        start = start.replace(f'kp="{kp}" kv="{kv}"', f'kp="{2 * kp}" kv="{kv / 2}"')
    (tmp_path / "start.xml").write_text(start)
    out = tmp_path / "tuned"
    run = _simfit(tmp_path / "start.xml", tmp_path / "train.csv", out, "--fit", "kp,kv",
                  "--no-delay")  # fmt: skip
    assert run.exit_code == 0, run.output
    result = json.loads((out / "simfit.json").read_text())
    for k in range(4):
        kp = result["parameters"][f"p{k + 1}.kp"]["value"]
        assert kp == pytest.approx(KP[k], rel=0.02), (k, kp)
    assert not any(name.startswith("grip") for name in result["parameters"])
    (held,) = [f for f in result["findings"] if f["code"] == JOINTS_HELD_STILL.code]
    assert held["message"].startswith("held still") and held["names"] == ["left", "right"]
    (idle,) = [f for f in result["findings"] if f["code"] == ACTUATORS_IDLE.code]
    assert idle["message"].endswith("actuator grip") and idle["names"] == ["grip"]
    tuned = (out / "model_tuned.xml").read_text()
    assert '<position name="grip" tendon="split" kp="80" />' in tuned  # as the file had it


@pytest.mark.parametrize(
    "column, change, said",
    [
        (
            "ctrl_p2",
            np.degrees,
            "ctrl_p2 read 55.4 x joint 'shoulder_lift''s position: targets in "
            "degrees beside positions in radians?",
        ),
        (
            "ctrl_p1",
            np.negative,
            "ctrl_p1 read -0.908 x joint 'shoulder_pan''s position: the sign flipped",
        ),
    ],
)
def test_position_targets_in_degrees_or_negated_are_named(
    servo_runs, tmp_path, column, change, said
):
    """A LeRobot dataset's ``action`` is in degrees like its state: the positions converted and
    the targets left drive the servo 57.3x too far. Either mistake here ended with status ok and
    a tuned model (the servo's lag reads the slopes as 55.4 and -0.908); now one error line
    names the column, nothing written."""
    from physid.recordings.trajectory import read_table

    table = read_table(str(servo_runs / "train.csv"))
    columns = dict(table.columns)
    columns[column] = change(columns[column])
    write_csv(Table(columns, "changed"), tmp_path / "changed.csv")
    out = tmp_path / "out"
    run = _simfit(servo_runs / "start.xml", tmp_path / "changed.csv", out, "--fit", "kp,kv")
    assert run.exit_code == 2, run.output
    lines = [line for line in run.output.splitlines() if line.startswith("physid: error:")]
    assert len(lines) == 1 and "changed.csv: the position targets" in lines[0]
    assert said in lines[0] and not out.exists()
