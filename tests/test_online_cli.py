"""``physid online`` end to end: outputs as issue 3 specifies them, floating base with contact
wrenches, bad input (NaN rows, unknown body, missing column, inconsistent nominal params)."""

import csv
import json

import numpy as np
import pytest
from click.testing import CliRunner

from physid.body.inertia import check_consistency, pi_from_mass_com_inertia
from physid.cli import main
from physid.files.io import table_csv_text
from physid.findings import with_code
from physid.online.codes import (
    POSITIONS_OUTSIDE_LIMITS,
    UNUSED_COLUMNS,
    VELOCITIES_FROM_POSITIONS,
)
from physid.online.columns import OnlineSignals, signals_table
from physid.online.results import QUANTITY_NAMES
from physid.sim.legged import CONTACT_FRAMES, HUMANOID_URDF, SteppingScenario, simulate_stepping
from physid.sim.payload_arm import ARM_URDF, PayloadProfile, load_arm, simulate_payload_arm

ARM_CONFIG = """
calibration_s: 0.3
acceleration_window: 21
process_noise: {alpha: 2.0, d: 0.05, s: 0.01, t: 0.005}
measurement_noise: {joint_torque: 1.0}
gating: {probability: 0.9999, release_after_s: 0.05}
rate_limit: {mass: 100.0}
"""


@pytest.fixture(scope="module")
def arm_columns():
    profile = PayloadProfile(hold_s=0.5, sine_s=0.0, square_s=0.0, plateau_s=0.0, step_s=1.0)
    rec = simulate_payload_arm(np.random.default_rng(9), profile)
    signals = OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, None)
    return signals_table(signals, load_arm()), rec


def write_csv(path, columns):
    path.write_text(table_csv_text(columns, fmt="%.18e"))  # numpy.savetxt's default: exact


def run(args):
    return CliRunner().invoke(main, ["online", *map(str, args)], catch_exceptions=False)


def read_rows(path):
    with open(path, newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        return header, np.array([[float(v) for v in row] for row in reader])


def test_arm_replay_writes_the_specified_outputs(tmp_path, arm_columns, monkeypatch):
    from physid.api import online_run

    monkeypatch.setattr(online_run, "_CSV_BLOCK_ROWS", 333)  # the CSVs written in blocks
    columns, rec = arm_columns
    columns = {k: v.copy() for k, v in columns.items()}
    columns["tau_arm_joint_2"][400] = np.nan  # a bad sample
    columns["ddq_arm_joint_1"] = np.zeros_like(columns["t"])  # reported, not used
    write_csv(tmp_path / "rec.csv", columns)
    (tmp_path / "online.yaml").write_text(ARM_CONFIG)
    out = tmp_path / "out"
    result = run(
        [
            "--urdf",
            ARM_URDF,
            "--data",
            tmp_path / "rec.csv",
            "--body",
            "arm_joint_7",
            "--config",
            tmp_path / "online.yaml",
            "--out",
            out,
            "--quiet",
        ]
    )
    assert result.exit_code == 0, result.output
    header, rows = read_rows(out / "estimates.csv")
    names = [f"arm_joint_7/{n}" for n in QUANTITY_NAMES]
    assert header == ["t", *names, "gated", "skipped", "projected"]
    assert rows.shape == (len(rec.t), 14)
    assert np.isfinite(rows).all()
    assert rows[400, 12] == 1.0  # the NaN sample is flagged as skipped
    for mass, *com_inertia in rows[:, 1:11]:  # every streamed estimate
        com, v6 = np.array(com_inertia[:3]), com_inertia[3:]
        inertia = np.array([[v6[0], v6[1], v6[3]], [v6[1], v6[2], v6[4]], [v6[3], v6[4], v6[5]]])
        assert check_consistency(pi_from_mass_com_inertia(mass, com, inertia)).consistent
    assert rows[-1, 1] == pytest.approx(rec.body_mass[-1], rel=0.02)
    std_header, std = read_rows(out / "estimates_std.csv")
    assert std_header == header[:11] and (std[-1, 1:] > 0).all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["format"] == "physid.online/1" and summary["every_estimate_consistent"]
    assert summary["skip_reasons"]["non-finite tau"] == 1
    assert summary["bodies"]["arm_joint_7"]["final"]["mass"] == pytest.approx(rows[-1, 1])
    # The robust summary: median over the default window (last quarter), from the CSV itself.
    window = summary["bodies"]["arm_joint_7"]["window"]
    t = rows[:, 0]
    inside = t >= t[0] + 0.75 * (t[-1] - t[0])
    assert window["samples"] == inside.sum()
    assert window["median"]["mass"] == pytest.approx(np.median(rows[inside, 1]), rel=1e-9)
    assert check_consistency(np.array(window["medoid_pi"])).consistent
    bad = run(["--urdf", ARM_URDF, "--data", tmp_path / "rec.csv", "--body", "arm_joint_7",
               "--out", tmp_path / "bad", "--summary-window", "9:1", "--quiet"])  # fmt: skip
    assert bad.exit_code == 2 and "--summary-window '9:1'" in bad.output
    (unused,) = [f for f in summary["findings"] if f["code"] == UNUSED_COLUMNS.code]
    assert "ddq_arm_joint_1" in unused["names"] and unused["severity"] == "info"
    assert summary["status"] == "ok" and "status: ok - 1 body estimated online" in result.output
    assert (out / "estimates.png").stat().st_size > 10_000


def test_floating_base_with_contact_wrenches(tmp_path):
    scenario = SteppingScenario(duration_s=1.2, payload_time_s=10.0)
    rec = simulate_stepping(np.random.default_rng(3), scenario)
    from physid.sim.legged import load_humanoid

    signals = OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, rec.wrenches)
    columns = signals_table(signals, load_humanoid(), CONTACT_FRAMES)
    assert {"base_qw", "base_wz", "f_left_sole_z", "m_right_sole_x"} <= set(columns)
    np.savez(tmp_path / "rec.npz", **columns)
    (tmp_path / "online.yaml").write_text(
        "floating_base: true\ncontact_frames: [left_sole, right_sole]\n"
        "acceleration_window: 41\nprocess_noise: {alpha: 0.03, d: 0.02, s: 0.002, t: 0.002}\n"
        "measurement_noise: {joint_torque: 1.0, base_force: 10.0, base_torque: 3.0}\n"
    )
    out = tmp_path / "out"
    result = run(
        [
            "--urdf",
            HUMANOID_URDF,
            "--data",
            tmp_path / "rec.npz",
            "--body",
            "waist_pitch",
            "--body",
            "root_joint",
            "--config",
            tmp_path / "online.yaml",
            "--out",
            out,
            "--quiet",
        ]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["every_estimate_consistent"] and summary["updates"] > 1000
    assert summary["measurement_rows"][:6] == [
        f"root_joint.{a}" for a in ("fx", "fy", "fz", "mx", "my", "mz")
    ]
    # Only the free-flyer rows see the masses themselves (a joint row sees the first moment
    # about its axis), so with two bodies on one branch their total is what the data fix.
    total = sum(summary["bodies"][b]["final"]["mass"] for b in ("waist_pitch", "root_joint"))
    assert total == pytest.approx(25.0 + 8.0, rel=0.03)
    # The same log read as a fixed-base robot (floating_base left out) put the ground's forces
    # on the joints: the torso 150 kg, status ok. Its base moves: one error line, no output.
    (tmp_path / "fixed.yaml").write_text("acceleration_window: 41\n")
    fixed = tmp_path / "fixed_out"
    result = run(["--urdf", HUMANOID_URDF, "--data", tmp_path / "rec.npz", "--body",
                  "waist_pitch", "--config", tmp_path / "fixed.yaml", "--out", fixed])  # fmt: skip
    assert result.exit_code == 2 and "logs a moving base (base_" in result.output
    assert "floating_base: true" in result.output and not fixed.exists()


def run_bad(data, body, out, config=None):
    """``physid online`` on the arm model with one bad input."""
    args = ["--urdf", ARM_URDF, "--data", data, "--body", body, "--out", out]
    return run(args + (["--config", config] if config is not None else []))


def test_bad_input_fails_cleanly_and_leaves_no_output(tmp_path, arm_columns):
    columns, _ = arm_columns
    write_csv(tmp_path / "rec.csv", columns)
    out = tmp_path / "out"
    result = run_bad(tmp_path / "rec.csv", "wrist", out)
    assert result.exit_code == 2
    assert "body 'wrist' is not a joint of the model" in result.output
    assert not out.exists()
    # a link's name (an online probe gave its MJCF body's): the joint that moves it is said
    result = run_bad(tmp_path / "rec.csv", "arm_link_7", out)
    assert (
        result.exit_code == 2
        and (
            "'arm_link_7' is a link: the joint that moves it, which names it here, is 'arm_joint_7'"
        )
        in result.output
    )
    result = run_bad(tmp_path / "rec.csv", "base_link", out)
    assert "'base_link' is a link fixed to the base: no joint moves it" in result.output

    missing = {k: v for k, v in columns.items() if k != "dq_arm_joint_4"}
    write_csv(tmp_path / "missing.csv", missing)
    result = run_bad(tmp_path / "missing.csv", "arm_joint_7", out)
    assert result.exit_code == 2 and "missing column 'dq_arm_joint_4'" in result.output
    # not "did you mean 'q_arm_joint_4'" (an online probe): the velocities are all or none
    assert "the dq_ columns are all or none (6 of 7 present" in result.output, result.output

    params = {
        "format": "physid.params/1",
        "bodies": {
            "arm_joint_3": {
                "mass": 2.0,
                "com": [0, 0, 0],
                "inertia": [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.5]],
            }
        },
    }
    (tmp_path / "params.json").write_text(json.dumps(params))
    (tmp_path / "online.yaml").write_text("nominal_params: params.json\n")
    result = run_bad(tmp_path / "rec.csv", "arm_joint_7", out, tmp_path / "online.yaml")
    assert result.exit_code == 2 and "arm_joint_3" in result.output
    assert "not physically consistent" in result.output
    assert not out.exists()

    (tmp_path / "typo.yaml").write_text("gatting: {probability: 0.99}\n")
    result = run_bad(tmp_path / "rec.csv", "arm_joint_7", out, tmp_path / "typo.yaml")
    assert result.exit_code == 2 and "unknown key(s) ['gatting']" in result.output


def test_help_documents_every_option():
    result = CliRunner().invoke(main, ["online", "--help"])
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for option, help_text in (
        ("--urdf", "Robot model (URDF or MJCF)"),
        ("--model", "Robot model (URDF or MJCF)"),
        ("--data", "Recording: CSV"),
        ("--body", "Joint whose body is estimated online"),
        ("--config", "YAML filter settings"),
        ("--out", "Output folder"),
        ("--quiet", "No progress display"),
    ):
        assert f"{option}" in text and help_text in text


def test_torques_in_milli_newton_metres_still_stream_consistent_bodies(tmp_path, arm_columns):
    """Issue 10 item 3: torques x 1000 (mN m read as N m) drive huge, near-flat bodies; every
    emitted estimate must pass the independent 4x4 pseudo-inertia test, projected rows flagged."""
    columns, _ = arm_columns
    scaled = {k: (1000.0 * v if k.startswith("tau_") else v.copy()) for k, v in columns.items()}
    write_csv(tmp_path / "rec.csv", scaled)
    (tmp_path / "online.yaml").write_text(ARM_CONFIG)
    arguments = ["--urdf", ARM_URDF, "--data", tmp_path / "rec.csv", "--body", "arm_joint_7"]
    arguments += ["--config", tmp_path / "online.yaml", "--out", tmp_path / "out", "--quiet"]
    assert run(arguments).exit_code == 3  # outputs written; the torques are not explained
    header, rows = read_rows(tmp_path / "out" / "estimates.csv")
    for mass, *com_inertia in rows[:, 1:11]:
        com, v6 = np.array(com_inertia[:3]), com_inertia[3:]
        inertia = np.array([[v6[0], v6[1], v6[3]], [v6[1], v6[2], v6[4]], [v6[3], v6[4], v6[5]]])
        J = np.zeros((4, 4))  # independent of physid.body.inertia: the pseudo-inertia written out
        J[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia + mass * np.outer(com, com)
        J[:3, 3] = J[3, :3] = mass * com
        J[3, 3] = mass
        assert np.linalg.eigvalsh(J)[0] > 0.0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["every_estimate_consistent"]
    assert summary["status"] == "suspect", summary["findings"]
    assert summary["projected"] == int(rows[:, header.index("projected")].sum())


def test_a_fixed_arm_may_log_its_pedestal_pose(arm_columns):
    # A tracker's 0.2 mm noise on a fixed base's pose is not a moving base: read as logged
    # (the refusal above is for a base that moves by centimetres, 1 deg or 0.05 m/s)
    from physid.errors import InputError
    from physid.online.columns import signals_from_table
    from physid.recordings.tables import Table

    columns, _ = arm_columns
    noise = np.random.default_rng(1).normal(0.0, 2e-4, len(columns["t"]))
    logged = {**columns, "base_x": 0.4 + noise, "base_qw": 1.0 + 0.0 * noise}
    signals = signals_from_table(Table(logged, "arm.csv"), load_arm())
    (unused,) = with_code(signals.findings, UNUSED_COLUMNS)
    assert unused.names == ("base_qw", "base_x") and not signals.warnings
    moved = {**logged, "base_x": 0.4 + 0.02 * np.sin(np.linspace(0.0, 6.0, noise.size))}
    with pytest.raises(InputError, match=r"logs a moving base \(base_x\)"):
        signals_from_table(Table(moved, "arm.csv"), load_arm())


def test_a_recording_in_degrees_streams_the_estimates_of_the_one_in_radians(tmp_path, arm_columns):
    """Config angle_unit: degrees (as identify's): q_ and dq_ of the revolute joints are read
    in degrees and converted; the estimates equal those of the radians file. An unknown unit is
    named, nothing written."""
    columns, _ = arm_columns
    write_csv(tmp_path / "rad.csv", columns)
    degrees = {k: (np.degrees(v) if k.startswith(("q_", "dq_")) else v.copy())
               for k, v in columns.items()}  # fmt: skip
    write_csv(tmp_path / "deg.csv", degrees)
    (tmp_path / "rad.yaml").write_text(ARM_CONFIG)
    (tmp_path / "deg.yaml").write_text(ARM_CONFIG + "angle_unit: degrees\n")
    for name in ("rad", "deg"):
        result = run(["--urdf", ARM_URDF, "--data", tmp_path / f"{name}.csv", "--body",
                      "arm_joint_7", "--config", tmp_path / f"{name}.yaml", "--out",
                      tmp_path / f"out_{name}", "--quiet"])  # fmt: skip
        assert result.exit_code == 0, result.output
    _, radians = read_rows(tmp_path / "out_rad" / "estimates.csv")
    _, read_as_degrees = read_rows(tmp_path / "out_deg" / "estimates.csv")
    np.testing.assert_allclose(read_as_degrees, radians, rtol=1e-6, atol=1e-9)
    (tmp_path / "bad.yaml").write_text(ARM_CONFIG + "angle_unit: gradians\n")
    arguments = ["--urdf", ARM_URDF, "--data", tmp_path / "deg.csv", "--body", "arm_joint_7"]
    bad = run([*arguments, "--config", tmp_path / "bad.yaml", "--out", tmp_path / "bad"])
    assert bad.exit_code == 2 and "angle_unit: 'gradians' is not one of" in bad.output
    assert not (tmp_path / "bad").exists()


def test_motor_currents_and_drive_gains_stream_the_torque_logs_estimates(tmp_path, arm_columns):
    # currents i_ = tau_ / gain with the gains in the online config (or 'identify': the nominal
    # params.json's extra.drive_gains) stream the very estimates of the torque log
    columns, _ = arm_columns
    gains = {f"arm_joint_{k}": 5.0 + k for k in range(1, 8)}
    currents = {k: v for k, v in columns.items() if not k.startswith("tau_")}
    currents.update({f"i_{j}": columns[f"tau_{j}"] / g for j, g in gains.items()})
    write_csv(tmp_path / "torques.csv", columns)
    write_csv(tmp_path / "currents.csv", currents)
    (tmp_path / "online.yaml").write_text(ARM_CONFIG)
    given = "drive_gains: {" + ", ".join(f"{j}: {g}" for j, g in gains.items()) + "}\n"
    (tmp_path / "gains.yaml").write_text(ARM_CONFIG + given)
    params = {"format": "physid.params/1", "bodies": {}, "joints": {},
              "extra": {"drive_gains": {j: {"value": g} for j, g in gains.items()}}}  # fmt: skip
    (tmp_path / "params.json").write_text(json.dumps(params))
    (tmp_path / "identified.yaml").write_text(
        ARM_CONFIG + "nominal_params: params.json\ndrive_gains: identify\n")  # fmt: skip
    estimates = {}
    for label, data, config in (("torques", "torques.csv", "online.yaml"),
                                ("given", "currents.csv", "gains.yaml"),
                                ("identified", "currents.csv", "identified.yaml")):  # fmt: skip
        out = tmp_path / label
        result = run(["--urdf", ARM_URDF, "--data", tmp_path / data, "--body", "arm_joint_7",
                      "--config", tmp_path / config, "--out", out])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert "unused column" not in result.output
        estimates[label] = read_rows(out / "estimates.csv")[1]
        summary = json.loads((out / "summary.json").read_text())
        assert summary["drive_gains"] == ({} if label == "torques" else gains)
    # (the params.json names no body and no joint term: the nominal model stays the URDF's)
    np.testing.assert_allclose(estimates["given"], estimates["torques"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(estimates["identified"], estimates["torques"], rtol=1e-9,
                               atol=1e-12)  # fmt: skip
    # bad input: one line each, nothing written
    for config, expected in (
        (ARM_CONFIG, "no drive gain is configured for 'arm_joint_1'"),
        (ARM_CONFIG + "drive_gains: identify\n", "drive_gains: identify reads the gains"),
        (ARM_CONFIG + given.replace("arm_joint_1:", "arm_joint_0:"),
         "no current column for arm_joint_0"),
    ):  # fmt: skip
        (tmp_path / "bad.yaml").write_text(config)
        result = run(["--urdf", ARM_URDF, "--data", tmp_path / "currents.csv", "--body",
                      "arm_joint_7", "--config", tmp_path / "bad.yaml", "--out",
                      tmp_path / "bad"])  # fmt: skip
        assert result.exit_code == 2 and expected in result.output, result.output
        assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize(
    "factor, said",
    [
        (-1.0, "-1.01 x the robot's weight (673.9 N, the robot file's 68.7 kg): the sign flipped"),
        (1 / 9.80665, "forces in kilogram-force?"),
    ],
)
def test_contact_forces_that_do_not_carry_the_robot_are_named(tmp_path, factor, said):
    """The humanoid's stepping log with its sole wrenches negated (a sensor that reports what
    the robot applies) read a waist of 0.25 kg for 28.5, in kilogram-force 0.25 kg, both status
    suspect with only "check the units, the wrench signs and the quaternion order"; now one
    error line. A backpack of 5 kg (the scenario's payload) is no mistake."""
    from physid.online.columns import check_contact_weight
    from physid.sim.legged import load_humanoid

    scenario = SteppingScenario(duration_s=1.2, payload_time_s=10.0)
    rec = simulate_stepping(np.random.default_rng(3), scenario)
    columns = signals_table(OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, factor * rec.wrenches),
                            load_humanoid(), CONTACT_FRAMES)  # fmt: skip
    np.savez(tmp_path / "rec.npz", **columns)
    (tmp_path / "online.yaml").write_text(
        "floating_base: true\ncontact_frames: [left_sole, right_sole]\n"
    )
    out = tmp_path / "out"
    result = run(["--urdf", HUMANOID_URDF, "--data", tmp_path / "rec.npz", "--body",
                  "waist_pitch", "--config", tmp_path / "online.yaml", "--out", out])  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("physid: error:")]
    assert len(lines) == 1 and "the contact forces' vertical sum averages" in lines[0]
    assert said in lines[0] and not out.exists()
    loaded = simulate_stepping(np.random.default_rng(3), SteppingScenario(
        duration_s=1.2, payload_time_s=0.0))  # fmt: skip
    check_contact_weight(load_humanoid(), loaded.wrenches, "loaded.npz")


def test_a_suspect_replay_names_its_finding_with_the_numbers(tmp_path, arm_columns):
    """Positions in millidegrees-like units (x1000, no dq_ columns): status suspect, exit 3, the
    ON104 finding on stderr with the column's own extremes and the URDF's limits as numbers (the
    truth: the CSV's values and the robot file's); the info findings only with --verbose."""
    columns, _ = arm_columns
    scaled = {k: v * 1000 if k.startswith("q_") else v for k, v in columns.items()}
    scaled = {k: v for k, v in scaled.items() if not k.startswith("dq_")}
    write_csv(tmp_path / "mm.csv", scaled)
    (tmp_path / "online.yaml").write_text(ARM_CONFIG)
    args = ["--urdf", ARM_URDF, "--data", tmp_path / "mm.csv", "--body", "arm_joint_7",
            "--config", tmp_path / "online.yaml", "--quiet"]  # fmt: skip
    quiet = CliRunner().invoke(main, ["online", *map(str, args), "--out", str(tmp_path / "a")])
    assert quiet.exit_code == 3, quiet.output
    assert "status: suspect - the data cannot support the estimate" in quiet.stdout
    assert f"suspect {POSITIONS_OUTSIDE_LIMITS.code}: q_arm_joint_1 spans" in quiet.stderr
    assert VELOCITIES_FROM_POSITIONS.code not in quiet.output  # info: --verbose only
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    (outside,) = [f for f in summary["findings"] if f["code"] == POSITIONS_OUTSIDE_LIMITS.code]
    q = scaled["q_arm_joint_1"]
    model = load_arm()
    index = model.joints[model.getJointId("arm_joint_1")].idx_q
    assert outside["names"] == ["q_arm_joint_1"] and outside["severity"] == "suspect"
    assert outside["numbers"]["lowest_rad_or_m"] == q.min()
    assert outside["numbers"]["highest_rad_or_m"] == q.max()
    assert outside["numbers"]["upper_limit_rad_or_m"] == model.upperPositionLimit[index]
    assert summary["findings"][0]["severity"] == "suspect"  # most severe first
    loud = CliRunner().invoke(main, ["online", *map(str, args), "--out", str(tmp_path / "b"),
                                     "--verbose"])  # fmt: skip
    assert f"info {VELOCITIES_FROM_POSITIONS.code}: " in loud.stdout


def test_the_summary_window_is_a_pair_of_seconds_in_the_api(tmp_path, arm_columns):
    """``summary_window=(start, None)`` is the command's ``START:``: the same window (its first
    stamp the first sample at or after START); a window holding no sample is one error line."""
    import physid
    from physid.errors import InputError

    columns, _ = arm_columns
    write_csv(tmp_path / "rec.csv", columns)
    (tmp_path / "online.yaml").write_text(ARM_CONFIG)
    config = tmp_path / "online.yaml"
    result = physid.online_replay(ARM_URDF, tmp_path / "rec.csv", "arm_joint_7", config=config,
                                  summary_window=(1.0, None))  # fmt: skip
    window = result.to_dict()["bodies"]["arm_joint_7"]["window"]
    t = columns["t"]
    assert window["start_s"] == t[t >= 1.0][0] and window["end_s"] == t[-1]
    assert window["samples"] == np.count_nonzero(t >= 1.0)
    args = ["--urdf", ARM_URDF, "--data", tmp_path / "rec.csv", "--body", "arm_joint_7"]
    cli = run([*args, "--config", config, "--out", tmp_path / "cli", "--summary-window", "1:"])
    cli_window = json.loads((tmp_path / "cli" / "summary.json").read_text())["bodies"]
    assert cli_window["arm_joint_7"]["window"] == window and cli.exit_code == 0
    with pytest.raises(InputError, match=r"summary window 50-60 s holds no sample"):
        physid.online_replay(ARM_URDF, tmp_path / "rec.csv", "arm_joint_7", config=config,
                             summary_window=(50.0, 60.0))  # fmt: skip
