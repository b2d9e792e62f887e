"""``physid impacts simulate`` and ``physid impacts identify`` end to end, and their bad inputs."""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from physid.cli import main

SHAPE = "ellipse:0.05,0.025"
THROW = ["--q0", "0,0.1,-0.785", "--v0", "3,-5,0", "--mu", "0.4", "--restitution", "0.2"]


def _run(*args: str):  # noqa: ANN202
    return CliRunner().invoke(main, ["impacts", *args])


def _identify(data: Path, out: Path, *extra: str):  # noqa: ANN202
    """``physid impacts identify`` of ``data`` with the test's shape and ground into ``out``."""
    where = ("--data", str(data), "--shape", SHAPE, "--surface", "line:0,0")
    return _run("identify", *where, *extra, "--out", str(out))


def _simulate(
    out: Path, *extra: str, noise: str = "0.001", fps: str = "240", duration: str = "0.3"
):  # noqa: ANN202
    return _run(
        "simulate",
        "--shape",
        SHAPE,
        "--surface",
        "line:0,0",
        *THROW,
        "--duration",
        duration,
        "--fps",
        fps,
        "--noise",
        noise,
        "--out",
        str(out),
        *extra,
    )


def _read(path: Path) -> tuple[list[str], np.ndarray]:
    lines = path.read_text().splitlines()
    return lines[0].split(","), np.array([[float(v) for v in row.split(",")] for row in lines[1:]])


def test_simulate_writes_poses_with_the_requested_noise(tmp_path: Path) -> None:
    clean, noisy = tmp_path / "clean.csv", tmp_path / "noisy.csv"
    assert _simulate(clean, noise="0").exit_code == 0
    result = _simulate(noisy, "--seed", "7")
    assert result.exit_code == 0, result.output
    header, a = _read(clean)
    _, b = _read(noisy)
    assert header == ["t", "x", "y", "theta"] and a.shape == (73, 4)  # 0.3 s at 240 fps
    np.testing.assert_allclose(np.diff(a[:, 0]), 1 / 240)
    diff = b[:, 1:] - a[:, 1:]
    assert np.std(diff[:, :2]) == pytest.approx(1e-3, rel=0.15)
    assert np.std(diff[:, 2]) == pytest.approx(1e-3 / 0.05, rel=0.15)  # σ / largest radius
    again = tmp_path / "again.csv"
    _simulate(again, "--seed", "7")
    assert again.read_text() == noisy.read_text()  # seeded: reproducible


def test_identify_writes_result_and_figures(tmp_path: Path) -> None:
    data, out = tmp_path / "poses.csv", tmp_path / "fit"
    assert _simulate(data).exit_code == 0
    result = _identify(data, out, "--mass", "0.064")
    assert result.exit_code == 0, result.output
    payload = json.loads((out / "result.json").read_text())
    assert payload["status"] == "ok" and payload["identifiable"] is True
    # simulate's default J/m is the uniform lamina's, (a² + b²)/4 = 781 mm².
    assert payload["inertia_ratio"] == pytest.approx((0.05**2 + 0.025**2) / 4, rel=0.1)
    assert payload["friction"] == pytest.approx(0.4, abs=0.05)
    assert "Only the ratio J/m is identifiable" in payload["identifiability_note"]
    assert payload["solver"]["iterations"] > 0 and payload["solver"]["solve_time_s"] > 0
    for name in ("fit.png", "impulses.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    header, traj = _read_trajectory(out / "trajectory.csv")
    assert header[:4] == ["t", "x", "y", "theta"] and traj.shape[0] == 72 * 5 + 1
    # every cell a finite number (an empty last-row cell broke CSV readers); nothing after the
    # horizon: the last row's impulses are 0
    numbers = np.loadtxt(out / "trajectory.csv", delimiter=",", skiprows=1)
    assert numbers.shape == (72 * 5 + 1, len(header)) and np.all(np.isfinite(numbers))
    assert np.all(numbers[-1, 7:] == 0.0) and np.any(numbers[:-1, 7:] != 0.0)


def _read_trajectory(path: Path) -> tuple[list[str], list[list[str]]]:
    lines = path.read_text().splitlines()
    return lines[0].split(","), np.array([row.split(",") for row in lines[1:]])


def test_trajectory_without_contact_says_unidentifiable(tmp_path: Path) -> None:
    data, out = tmp_path / "flight.csv", tmp_path / "fit"
    sim = _run(
        "simulate",
        "--shape",
        SHAPE,
        "--surface",
        "line:0,0",
        "--q0",
        "0,1,0",
        "--v0",
        "1,2,4",
        "--mu",
        "0.5",
        "--restitution",
        "0.2",
        "--duration",
        "0.2",
        "--fps",
        "60",
        "--noise",
        "0.001",
        "--out",
        str(data),
    )
    assert sim.exit_code == 0, sim.output
    result = _identify(data, out)
    # written, status unidentifiable: exit code 3, as every written result whose status is not ok
    assert result.exit_code == 3, result.output
    assert result.output.startswith("status: unidentifiable - the poses are explained by free")
    assert "error IM101: the poses are explained by free flight" in result.output
    payload = json.loads((out / "result.json").read_text())
    assert payload["identifiable"] is False and payload["inertia_ratio"] is None
    assert payload["status"] == "unidentifiable"
    assert [f["code"] for f in payload["findings"]] == ["IM101"]


def test_identify_stopped_by_its_budget_exits_3(tmp_path: Path, monkeypatch) -> None:
    """A fit cut short by its budget (its best iterate) is written with status not_converged,
    the finding IM106 and exit code 3, as oe and simfit. The budget is made 3 IPOPT iterations
    here so that the test is fast."""
    from physid.budget import Budget
    from physid.impacts.identify import options

    data, out = tmp_path / "poses.csv", tmp_path / "fit"
    assert _simulate(data).exit_code == 0
    monkeypatch.setattr(options, "default_budget", lambda _n, _throws=1: Budget(1e9, 3))
    result = _identify(data, out)
    assert result.exit_code == 3, result.output
    assert "status: not_converged - stopped by the iteration budget of 3" in result.output
    payload = json.loads((out / "result.json").read_text())
    assert payload["status"] == "not_converged" and payload["solver"]["stopped_by_budget"] == (
        "iterations"
    )
    spent = payload["findings"][0]  # the most severe first
    assert spent["code"] == "IM106" and spent["numbers"]["iteration_budget"] == 3
    assert spent["severity"] == "error" and "IM109" not in {f["code"] for f in payload["findings"]}
    text = " ".join(_run("identify", "--help").output.split())
    assert "3 written, but the status is not ok: not_converged" in text


def _write_csv(path: Path, rows: list[str]) -> Path:
    path.write_text("t,x,y,theta\n" + "\n".join(rows) + "\n")
    return path


GOOD_ROWS = [f"{0.01 * i},{0.01 * i},{0.3 - 0.01 * i},0.1" for i in range(6)]


@pytest.mark.parametrize(
    ("rows", "options", "fragment"),
    [
        (GOOD_ROWS[:3] + ["0.01,0.03,0.27,0.1"] + GOOD_ROWS[4:], [], "row 4, column t"),
        (GOOD_ROWS[:2] + ["0.02,0.02,nan,0.1"] + GOOD_ROWS[3:], [], "row 3, column y"),
        (GOOD_ROWS[:2] + ["0.02,0.02,abc,0.1"] + GOOD_ROWS[3:], [], "row 3, column y"),
        (["0.0,0.0,0.01,0.0"] + GOOD_ROWS[1:], [], "row 1 (t = 0 s): the body starts inside"),
        (GOOD_ROWS, ["--shape", "ellipse:0.05"], "--shape"),
        (GOOD_ROWS, ["--surface", "line:zero,0"], "--surface"),
        (GOOD_ROWS, ["--mass", "-1"], "mass"),
    ],
)
def test_identify_bad_input_one_line_and_no_output(tmp_path: Path, rows, options, fragment) -> None:
    data, out = _write_csv(tmp_path / "bad.csv", rows), tmp_path / "out"
    args = {
        "--data": str(data),
        "--shape": SHAPE,
        "--surface": "line:0,0",
        "--mass": "1",
        "--out": str(out),
    }
    args.update(zip(options[::2], options[1::2], strict=True))
    result = _run("identify", *[item for pair in args.items() for item in pair])
    assert result.exit_code == 2
    message = result.output.strip()
    assert message.startswith("physid: error:") and "\n" not in message and fragment in message
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]


def test_simulate_bad_input_one_line_and_no_output(tmp_path: Path) -> None:
    out = tmp_path / "poses.csv"
    for args, fragment in (
        (["--shape", "triangle:1"], "--shape"),
        (["--shape", SHAPE, "--surface", "line:0"], "--surface"),
        (["--shape", SHAPE, "--q0", "0,0.01,0"], "starts inside surface 1"),
        (["--shape", SHAPE, "--q0", "0,a,0"], "--q0"),
    ):
        base = {"--surface": "line:0,0", "--q0": "0,0.1,0", "--v0": "0,0,0"}
        base.update(dict(zip(args[::2], args[1::2], strict=True)))
        flat = [item for pair in base.items() for item in pair]
        result = _run(
            "simulate",
            *flat,
            "--mu",
            "0.3",
            "--restitution",
            "0.2",
            "--duration",
            "0.1",
            "--fps",
            "60",
            "--noise",
            "0",
            "--out",
            str(out),
        )
        assert result.exit_code == 2, result.output
        assert fragment in result.output and result.output.count("\n") == 1
        assert not out.exists() and not list(tmp_path.iterdir())


def test_help_texts_name_units() -> None:
    expected = {
        "simulate": ("[m]", "[rad]", "[s]", "[m/s]", "[rad/s]", "[frames/s]", "[m²]"),
        "identify": ("[m]", "[rad]", "[s]", "[kg]", "metres"),
    }
    for command, units in expected.items():
        text = " ".join(_run(command, "--help").output.split())
        missing = [unit for unit in units if unit not in text]
        assert not missing, f"{command} --help lacks {missing}"


def test_the_api_takes_typed_values_as_the_command_line_takes_text(tmp_path: Path) -> None:
    """impacts_simulate with an Ellipse, a Line and arrays writes the same poses as with the
    command line's text; typed values are checked as the text is (one error naming the
    option); impacts_identify names a pose file's unknown columns in an info finding (IM004)."""
    import physid
    from physid.errors import InputError
    from physid.impacts import Ellipse, Line

    throw = {"mu": 0.4, "restitution": 0.2, "duration": 0.1, "fps": 60, "noise": 1e-3}
    text = physid.impacts_simulate(SHAPE, "line:0,0", "0,0.1,-0.785", "3,-5,0", **throw)
    typed = physid.impacts_simulate(
        Ellipse(0.05, 0.025), [Line(0.0, 0.0)], np.array([0, 0.1, -0.785]), (3, -5, 0), **throw
    )
    pairs = physid.impacts_simulate(
        (0.05, 0.025), (0.0, 0.0), [0, 0.1, -0.785], [3, -5, 0], **throw
    )
    for other in (typed, pairs):
        np.testing.assert_array_equal(other.raw[1], text.raw[1])
    with pytest.raises(InputError, match="--shape: .*semi-axes must be positive"):
        physid.impacts_simulate((0.05, -1.0), "line:0,0", [0, 0.1, 0], [0, 0, 0], **throw)
    with pytest.raises(InputError, match="--surface: .* must be finite"):
        physid.impacts_simulate(SHAPE, (0.0, float("nan")), [0, 0.1, 0], [0, 0, 0], **throw)
    data = tmp_path / "flight.csv"
    t = np.arange(12) / 60
    rows = [f"{ti},{0.5 * ti},{1 + 2 * ti - 4.905 * ti**2},{3 * ti},7" for ti in t]
    data.write_text("t,x,y,theta,z\n" + "\n".join(rows) + "\n")
    fit = physid.impacts_identify(data, SHAPE, "line:0,0", gravity=(0.0, -9.81))
    assert fit.status == "unidentifiable" and fit.findings[0].code == "IM101"
    (unknown,) = [f for f in fit.findings if f.code == "IM004"]
    assert unknown.severity == "info" and unknown.names == (str(data), "z")


def test_a_non_finite_value_of_a_trajectory_is_an_empty_cell() -> None:
    """trajectory.csv wrote repr(nan) for a value a failed IPOPT solve left non-finite; no
    output of physid holds nan: the cell is empty, the others are the numbers written."""
    from dataclasses import replace

    from physid.impacts import Ellipse, Line, identify
    from physid.impacts.poses import trajectory_csv_text

    t = np.arange(12) / 60
    q = np.column_stack([0.5 * t, 1 + 2 * t - 4.905 * t**2, 3 * t])
    flight = identify(Ellipse(0.05, 0.025), [Line(0.0, 0.0)], t, q)  # free flight: no NLP
    broken = flight.q.copy()
    broken[1, 0] = np.nan
    rows = trajectory_csv_text(replace(flight, q=broken)).splitlines()
    assert "nan" not in "\n".join(rows).lower()
    assert rows[2].split(",")[1] == "" and float(rows[2].split(",")[2]) == broken[1, 1]
