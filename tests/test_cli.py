"""The command line: help texts, identify -> validate, one-line errors, no partial output."""

from __future__ import annotations

import json

import click
import numpy as np
import pytest
from click.testing import CliRunner

from physid.cli import main
from physid.files.io import table_csv_text
from physid.recordings.trajectory import trajectory_csv_text
from physid.sim.arm import arm6_urdf_path

URDF = arm6_urdf_path()


@pytest.fixture(scope="module")
def recordings(arm_experiment, tmp_path_factory):
    folder = tmp_path_factory.mktemp("recordings")
    train, validation = folder / "train.csv", folder / "validation.csv"
    train.write_text(trajectory_csv_text(arm_experiment.train.recorded))
    validation.write_text(trajectory_csv_text(arm_experiment.validation.recorded))
    config = folder / "config.yaml"
    config.write_text(
        "filter: {method: classical, butterworth_cutoff_hz: 20, decimation_cutoff_hz: 5}\n"
    )
    return train, validation, config


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_every_command_and_option_is_documented():
    assert run("--help").exit_code == 0
    for name, command in main.commands.items():
        commands = command.commands.values() if isinstance(command, click.Group) else [command]
        for sub in commands:
            assert sub.help, f"{name} {sub.name} has no help text"
            for parameter in sub.params:
                if isinstance(parameter, click.Option):
                    assert parameter.help, f"{name} {sub.name} {parameter.name} has no help text"
    for name in ("identify", "validate", "demo"):
        assert run(name, "--help").exit_code == 0


def test_identify_then_validate_round_trip(recordings, tmp_path):
    train, validation, config = recordings
    out = tmp_path / "out"
    result = run(
        "identify",
        "--urdf",
        URDF,
        "--data",
        train,
        "--validate",
        validation,
        "--config",
        config,
        "--out",
        out,
        "--quiet",
    )
    assert result.exit_code == 0, result.output
    params = json.loads((out / "params.json").read_text())
    assert params["format"] == "physid.params/1" and params["physically_consistent"] is True
    assert set(params["bodies"]) == {f"joint_{k}" for k in range(1, 7)}
    report = (out / "report.html").read_text(encoding="utf-8")
    for name in (
        "torque_train_1",
        "torque_validation_1",
        "autocorrelation",
        "friction",
        "consistency",
    ):
        assert f'id="fig-{name}"' in report and f'id="chart-{name}-0"' in report
    report = tmp_path / "validation.json"
    result = run(
        "validate",
        "--urdf",
        URDF,
        "--params",
        out / "params.json",
        "--data",
        validation,
        "--config",
        config,
        "--json",
        report,
        "--quiet",
    )
    assert result.exit_code == 0, result.output
    overall = json.loads(report.read_text())["overall"]
    # The same parameters, data and filter as identify's own validation.
    assert overall["relative_error"] == pytest.approx(
        params["fit"]["validation"]["relative_error"], rel=1e-6
    )
    assert set(overall["rmse"]) == {f"joint_{k}" for k in range(1, 7)}
    # Without the config, validate differentiates with the filter params.json recorded.
    assert params["preprocessing"]["butterworth_cutoff_hz"] > 0
    bare = tmp_path / "bare.json"
    args = ("validate", "--urdf", URDF, "--params", out / "params.json", "--data", validation)
    result = run(*args, "--json", bare, "--quiet")
    assert result.exit_code == 0, result.output
    assert json.loads(bare.read_text())["overall"]["relative_error"] == pytest.approx(
        overall["relative_error"], rel=1e-9
    )
    assert "Butterworth" in result.output
    # Without --json the numbers are printed (issue 28): the same relative error, per joint too.
    result = run(*args, "--quiet")
    assert result.exit_code == 0, result.output
    assert f"relative error {100 * overall['relative_error']:.2f} %" in result.output
    joint_3 = 100 * overall["relative_error_per_joint"]["joint_3"]
    assert f"joint_3 {joint_3:.2f} % (RMSE {overall['rmse']['joint_3']:.3g} N m)" in result.output
    assert json.loads(bare.read_text())["suspect_reasons"] == []
    assert json.loads(bare.read_text())["torque_units"]["joint_3"] == "N m"
    # validate checks the recordings as identify does: stamps halved, the cause is named
    table = trajectory_csv_text(arm_recording_with_time(validation, 0.5))
    (tmp_path / "fast.csv").write_text(table)
    fast = (*args[:-1], tmp_path / "fast.csv", "--json", tmp_path / "fast.json", "--quiet")
    result = CliRunner().invoke(main, [str(a) for a in fast])
    assert result.exit_code == 3, result.output  # written, status suspect
    assert "suspect ID519" in result.stderr and "time stamps do not match" in result.stderr
    assert json.loads((tmp_path / "fast.json").read_text())["suspect_reasons"]


def arm_recording_with_time(path, stretch: float):
    """The recording of ``path`` (a contract CSV) with its time column times ``stretch``."""
    from dataclasses import replace

    from physid.recordings.trajectory import load_trajectory
    from physid.sim.arm import arm6_model

    trajectory = load_trajectory(path, arm6_model(), time_base="stamps")
    return replace(trajectory, t=trajectory.t * stretch)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda c: c.pop("tau_joint_3"), "missing column 'tau_joint_3'"),
        (
            lambda c: c.__setitem__("q_joint_9", c.pop("q_joint_3")),  # a misspelt joint
            "column 'q_joint_9' names joint 'joint_9'",
        ),
        (lambda c: c["q_joint_2"].__setitem__(100, np.nan), "column 'q_joint_2' row 101 is nan"),
        (lambda c: c["t"].__setitem__(50, 0.0), "not strictly increasing at row 51"),
        (
            lambda c: c.__setitem__("q_joint_4", np.degrees(c["q_joint_4"]) * 2),
            "looks like degrees",
        ),
    ],
)
def test_bad_input_gives_one_line_and_no_output(recordings, tmp_path, damage, message):
    train = recordings[0]
    names = train.read_text().splitlines()[0].split(",")
    values = np.loadtxt(train, delimiter=",", skiprows=1)
    columns = {n: values[:, k].copy() for k, n in enumerate(names)}
    damage(columns)
    bad = tmp_path / "bad.csv"
    bad.write_text(table_csv_text(columns, fmt="%.18e"))  # numpy.savetxt's default: exact
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["identify", "--urdf", URDF, "--data", str(bad), "--out", str(out), "--quiet"]
    )
    assert result.exit_code == 2
    error_lines = [line for line in result.output.splitlines() if line.startswith("physid: error")]
    assert len(error_lines) == 1 and message in error_lines[0] and "bad.csv" in error_lines[0]
    assert not out.exists() and not list(tmp_path.glob(".out*"))


def test_bad_config_names_the_key(recordings, tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("filter: {methd: classical}\n")
    result = CliRunner().invoke(
        main,
        [
            "identify",
            "--urdf",
            URDF,
            "--data",
            str(recordings[0]),
            "--config",
            str(config),
            "--out",
            str(tmp_path / "o"),
            "--quiet",
        ],
    )
    assert result.exit_code == 2 and "config filter: unknown key(s) ['methd']" in result.output
    assert not (tmp_path / "o").exists()


def test_usage_errors_are_one_line_naming_the_command(tmp_path):
    """A malformed option of any subcommand: one 'physid: error:' line, exit code 2."""
    for arguments, fragment in (
        (["identify", "--urdf", str(tmp_path / "missing.urdf")], "physid identify: "),
        (["impacts", "simulate", "--fps", "abc"], "physid impacts simulate: "),
    ):
        result = CliRunner().invoke(main, arguments, prog_name="physid")
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 2 and len(lines) == 1, result.output
        assert lines[0].startswith("physid: error: " + fragment)


def test_demo_refuses_a_negative_seed_in_one_line(tmp_path):
    """``physid demo --seed -1`` ended in numpy's traceback ("expected non-negative integer");
    the API's run_demo says the same as the command."""
    from physid.demo import run_demo
    from physid.errors import InputError

    result = run("demo", "--out", tmp_path / "demo", "--seed", "-1", "--quiet")
    assert result.exit_code == 2
    assert "--seed: -1 is not an integer in [0, 4294967295]" in result.output
    assert not (tmp_path / "demo").exists()
    with pytest.raises(InputError, match=r"seed: -1 is not an integer"):
        run_demo(tmp_path / "api", seed=-1)
