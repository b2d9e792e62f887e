"""Issue 25 item 4 leftover: the API faces refuse the out-of-range numbers the CLI refuses at
parse time, with the same one-line error (one table of bounds, physid.api.impacts_runs, checked by
physid.errors.in_range for both)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import physid
from physid.cli import main
from physid.errors import InputError

THROW = dict(q0=[0.0, 0.1, -0.785], v0=[3.0, -5.0, 0.0], restitution=0.2, duration=0.3, fps=240,
             noise=1e-3)  # fmt: skip


def test_impacts_simulate_refuses_a_negative_mu_like_the_cli(tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(InputError) as api:
        physid.impacts_simulate("ellipse:0.05,0.025", "line:0,0", mu=-0.5, **THROW)
    assert str(api.value) == "mu: -0.5 is not a number in [0, 10]"
    cli = CliRunner().invoke(main, ["impacts", "simulate", "--shape", "ellipse:0.05,0.025",
                                    "--surface", "line:0,0", "--q0", "0,0.1,-0.785",
                                    "--v0", "3,-5,0", "--mu", "-0.5", "--restitution", "0.2",
                                    "--duration", "0.3", "--fps", "240", "--noise", "1e-3",
                                    "--out", str(tmp_path / "t.csv")])  # fmt: skip
    assert cli.exit_code != 0
    assert "--mu: -0.5 is not a number in [0, 10]" in cli.output


def test_impacts_snapshots_refuses_a_zero_noise_velocity(tmp_path) -> None:  # noqa: ANN001
    with pytest.raises(InputError) as api:
        physid.impacts_snapshots(tmp_path / "missing.csv", noise_velocity=0.0)
    assert str(api.value) == "noise_velocity: 0.0 is not a number in [1e-09, 100]"
    with pytest.raises(InputError, match=r"^mu_max: nan is not a number in \(0, 10\]$"):
        physid.impacts_snapshots(tmp_path / "missing.csv", mu_max=float("nan"))


# Every other face that takes numbers: one table per estimator (physid.api.multibody_runs,
# oe_run, robot_runs; physid.api.impacts_runs), checked before any file is read or any work
# starts, so missing or empty input files are enough here.


def _refused(api_call, cli_args: list, name: str, text: str, option: str = "") -> None:  # noqa: ANN001
    """The API raises exactly ``name: text``; the command prints ``--name: text`` (or
    ``option: text``) and exits 2 writing nothing (its --out is the last argument)."""
    with pytest.raises(InputError) as api:
        api_call()
    assert str(api.value) == f"{name}: {text}"
    cli = CliRunner().invoke(main, [str(a) for a in cli_args])
    assert cli.exit_code == 2, cli.output
    option = option or f"--{name.replace('_', '-')}"
    assert f"physid: error: {option}: {text}" in cli.output
    assert not Path(cli_args[-1]).exists()


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:  # noqa: ANN001
    """Empty stand-ins for the input files: the numbers are refused before any is read."""
    names = ("robot.urdf", "params.json", "data.csv", "model.xml", "poses.csv")
    found = {}
    for name in names:
        found[name] = tmp_path / name
        found[name].write_text("")
    found["out"] = tmp_path / "out"
    return found


def test_multibody_simulate_refuses_every_zero_and_a_nan_duration(files) -> None:  # noqa: ANN001
    urdf, out = files["robot.urdf"], files["out"]
    _refused(lambda: physid.multibody_simulate(urdf, duration=1.0, every=0),
             ["multibody", "simulate", "--every", "0", "--urdf", urdf, "--duration", "1",
              "--out", out], "every", "0 is not an integer in [1, 50000]")  # fmt: skip
    _refused(lambda: physid.multibody_simulate(urdf, duration=float("nan")),
             ["multibody", "simulate", "--duration", "nan", "--urdf", urdf, "--out", out],
             "duration", "nan is not a number in (0, 1e+06]")  # fmt: skip
    with pytest.raises(InputError, match=r"^every: 2\.5 is not an integer in \[1, 50000\]$"):
        physid.multibody_simulate(urdf, duration=1.0, every=2.5)  # sliced the trajectory: TypeError


def test_multibody_identify_refuses_kappa_zero_and_a_nan_step(files) -> None:  # noqa: ANN001
    urdf, data, out = files["robot.urdf"], files["data.csv"], files["out"]
    _refused(lambda: physid.multibody_identify(urdf, data, kappa=0.0),
             ["multibody", "identify", "--kappa", "0", "--urdf", urdf, "--data", data,
              "--out", out], "kappa", "0.0 is not a number in (0, 1e+12]")  # fmt: skip
    _refused(lambda: physid.multibody_identify(urdf, data, dt=float("nan")),
             ["multibody", "identify", "--dt", "nan", "--urdf", urdf, "--data", data,
              "--out", out], "dt", "nan is not a number in (0, 1]")  # fmt: skip
    _refused(lambda: physid.multibody_identify(urdf, data, max_iterations=0),
             ["multibody", "identify", "--max-iterations", "0", "--urdf", urdf, "--data", data,
              "--out", out], "max_iterations", "0 is not an integer in [1, 1000]")  # fmt: skip


def test_oe_refuses_zero_iterations_and_a_nan_prior(files) -> None:  # noqa: ANN001
    urdf, data, out = files["robot.urdf"], files["data.csv"], files["out"]
    command = ["oe", "--urdf", urdf, "--data", data, "--body", "j1"]
    _refused(lambda: physid.oe_estimate(urdf, data, "j1", max_iterations=0),
             [*command, "--max-iterations", "0", "--out", out], "max_iterations",
             "0 is not an integer in [1, 10000]")  # fmt: skip
    _refused(lambda: physid.oe_estimate(urdf, data, "j1", prior_std=float("nan")),
             [*command, "--prior-std", "nan", "--out", out], "prior_std",
             "nan is not a number in (0, 1e+06]")  # fmt: skip
    with pytest.raises(InputError, match=r"^time_budget: -1\.0 is not a number in \(0, 1e\+07\]$"):
        physid.oe_estimate(urdf, data, "j1", time_budget=-1.0)


def test_payload_refuses_a_negative_and_a_nan_mass(files) -> None:  # noqa: ANN001
    urdf, params, data = files["robot.urdf"], files["params.json"], files["data.csv"]
    command = ["payload", "--urdf", urdf, "--params", params, "--data", data, "--link", "l6"]
    for given, shown in ((-1.0, "-1.0"), (float("nan"), "nan")):
        _refused(lambda given=given: physid.payload(urdf, params, data, "l6", mass=given),
                 [*command, "--mass", shown, "--out", files["out"]], "mass",
                 f"{shown} is not a number in (0, 10000]")  # fmt: skip


def test_excite_refuses_a_negative_seed_and_a_nan_base_frequency(files) -> None:  # noqa: ANN001
    urdf, out = files["robot.urdf"], files["out"]
    _refused(lambda: physid.excite_design(urdf, seed=-1),
             ["excite", "--urdf", urdf, "--seed", "-1", "--out", out], "seed",
             "-1 is not an integer in [0, 4294967295]")  # fmt: skip
    _refused(lambda: physid.excite_design(urdf, base_frequency=float("nan")),
             ["excite", "--urdf", urdf, "--base-frequency", "nan", "--out", out],
             "base_frequency", "nan is not a number in [0.0001, 1000]")  # fmt: skip
    with pytest.raises(InputError, match=r"^harmonics: 2\.5 is not an integer in \[1, 50\]$"):
        physid.excite_design(urdf, harmonics=2.5)


def test_simfit_refuses_too_few_evaluations_and_a_nan_window(files) -> None:  # noqa: ANN001
    model, data, out = files["model.xml"], files["data.csv"], files["out"]
    command = ["simfit", "--model", model, "--data", data]
    _refused(lambda: physid.simfit_tune(model, data, max_evaluations=4),
             [*command, "--max-evaluations", "4", "--out", out], "max_evaluations",
             "4 is not an integer in [5, 10000]")  # fmt: skip
    _refused(lambda: physid.simfit_tune(model, data, window=float("nan")),
             [*command, "--window", "nan", "--out", out], "window",
             "nan is not a number in [0.05, 10]")  # fmt: skip


def test_episodes_are_refused_alike_by_online_oe_and_simfit(files) -> None:  # noqa: ANN001
    """An episode index is checked before the model is loaded; on a plain file it was refused
    as 'no --data is a dataset', on a LeRobot dataset only after reading it."""
    urdf, data, out = files["robot.urdf"], files["data.csv"], files["out"]
    _refused(lambda: physid.online_replay(urdf, data, "j1", episodes=[0, -1]),
             ["online", "--urdf", urdf, "--data", data, "--body", "j1", "--episode", "0",
              "--episode", "-1", "--out", out], "episodes", "-1 is not an integer >= 0",
             "--episode")  # fmt: skip
    with pytest.raises(InputError, match=r"^episode: -1 is not an integer >= 0$"):
        physid.oe_estimate(urdf, data, "j1", episode=-1)
    with pytest.raises(InputError, match=r"^episodes: 2\.5 is not an integer >= 0$"):
        physid.simfit_tune(files["model.xml"], data, episodes=(2.5,))


def test_impacts_identify_refuses_zero_noise_and_a_nan_noise_angle(files) -> None:  # noqa: ANN001
    poses, out = files["poses.csv"], files["out"]
    throw = ["ellipse:0.05,0.025", "line:0,0"]
    command = ["impacts", "identify", "--data", poses, "--shape", throw[0], "--surface", throw[1]]
    _refused(lambda: physid.impacts_identify(poses, *throw, noise=0.0),
             [*command, "--noise", "0", "--out", out], "noise",
             "0.0 is not a number in [1e-09, 1]")  # fmt: skip
    _refused(lambda: physid.impacts_identify(poses, *throw, noise_angle=float("nan")),
             [*command, "--noise-angle", "nan", "--out", out], "noise_angle",
             "nan is not a number in [1e-09, 3.14159]")  # fmt: skip


def test_impacts_simulate_refuses_a_negative_seed(tmp_path) -> None:  # noqa: ANN001
    out = tmp_path / "t.csv"
    _refused(lambda: physid.impacts_simulate("ellipse:0.05,0.025", "line:0,0", mu=0.4,
                                             **THROW | {"seed": -1}),
             ["impacts", "simulate", "--seed", "-1", "--shape", "ellipse:0.05,0.025",
              "--surface", "line:0,0", "--q0", "0,0.1,-0.785", "--v0", "3,-5,0", "--mu", "0.4",
              "--restitution", "0.2", "--duration", "0.3", "--fps", "240", "--noise", "1e-3",
              "--out", out], "seed", "-1 is not an integer in [0, 4294967295]")  # fmt: skip


def test_a_number_that_is_not_one_is_refused_by_name(files) -> None:  # noqa: ANN001
    """An API caller can pass anything: a string compared with a bound raised TypeError."""
    with pytest.raises(InputError, match=r"^duration: '1' is not a number in \(0, 1e\+06\]$"):
        physid.multibody_simulate(files["robot.urdf"], duration="1")
    with pytest.raises(InputError, match=r"^every: True is not an integer in \[1, 50000\]$"):
        physid.multibody_simulate(files["robot.urdf"], duration=1.0, every=True)
