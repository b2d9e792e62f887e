"""Pooled throws (one J/m and μ, per-throw states) and a configurable gravity direction, against
simulations with known parameters."""

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from physid.cli import main
from physid.impacts import Ellipse, IdentifyOptions, Line, camera_samples, identify, simulate
from physid.impacts.poses import poses_to_csv_text

ELLIPSE, GROUND = Ellipse(0.05, 0.025), [Line(0.0, 0.0)]
RATIO, MU, NOISE = 756e-6, 0.3, 2e-4
THROWS = [((0.0, 0.08, -0.785), (3.0, -4.0, 0.0)), ((0.0, 0.08, 0.5), (-2.0, -4.0, 6.0))]


def _throw(q0, v0, seed: int, gravity=9.81) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    sim = simulate(
        ELLIPSE,
        GROUND,
        q0,
        v0,
        inertia_ratio=RATIO,
        mu=MU,
        restitution=0.2,
        dt=1 / 4800,
        duration=0.1,
        gravity=gravity,
    )
    return camera_samples(
        sim, 120, noise_position=NOISE, noise_angle=NOISE / 0.05, rng=np.random.default_rng(seed)
    )


def test_folder_of_throws_pools_inertia_and_friction_with_per_throw_states(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "throws"
    folder.mkdir()
    for i, (q0, v0) in enumerate(THROWS):
        (folder / f"throw{i}.csv").write_text(poses_to_csv_text(*_throw(q0, v0, seed=i + 1)))
    out = tmp_path / "out"
    args = ["--shape", "ellipse:0.05,0.025", "--surface", "line:0,0", "--noise", str(NOISE)]
    result = CliRunner().invoke(
        main,
        ["impacts", "identify", "--data", str(folder), *args, "--max-substep", "0.002"]
        + ["--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    assert "pooled over 2 throws" in result.output
    payload = json.loads((out / "result.json").read_text())
    assert payload["identifiable"] is True
    ratio, std = payload["inertia_ratio"], payload["inertia_ratio_std"]
    # the noise std (curvature) is ~0.8 %; the fit is ~4 % low because the fine grid of
    # h̄ = 2 ms biases J/m: noise-free poses give -3.7 % at 2 ms, -1.8 % at 1 ms (4x the time)
    assert abs(ratio - RATIO) < 0.05 * RATIO and 0 < std < 0.02 * RATIO
    assert payload["friction"] == pytest.approx(MU, abs=0.03)
    throws = payload["diagnostics"]["throws"]
    assert [Path(t["source"]).name for t in throws] == ["throw0.csv", "throw1.csv"]
    # Each throw keeps its own initial state: the second's (no contact in its first frames).
    q0, v0 = np.array(throws[1]["q0"]), np.array(throws[1]["v0"])
    assert np.all(np.abs(q0 - THROWS[1][0]) < [1e-3, 1e-3, 0.02]), q0
    omega_sigma = np.sqrt(2) * NOISE / 0.05 * 120  # ω from the two frames before the impact
    assert np.all(np.abs(v0 - THROWS[1][1]) < [0.1, 0.15, 3 * omega_sigma]), v0


def test_gravity_along_any_direction_is_fitted_in_that_direction() -> None:
    g = (2.0, -9.6)  # a camera whose y axis is tilted by 11.8° from the vertical
    sim = simulate(
        ELLIPSE, GROUND, (0, 1, 0), (1, 2, 3), inertia_ratio=RATIO, mu=MU, restitution=0.2,
        dt=1e-3, duration=0.2, gravity=g,
    )  # fmt: skip
    # the simulator's free flight is the closed-form parabola (implicit Euler: v first)
    t = sim.t[-1]
    assert sim.q[-1, 0] == pytest.approx(1 * t + 0.5 * 2.0 * t * (t + 1e-3), rel=1e-9)
    assert sim.q[-1, 1] == pytest.approx(1 + 2 * t - 0.5 * 9.6 * t * (t + 1e-3), rel=1e-9)
    t_meas, q_meas = _throw(*THROWS[0], seed=5, gravity=g)
    options = IdentifyOptions(noise_position=NOISE, max_substep=2e-3, gravity=g)
    res = identify(ELLIPSE, GROUND, t_meas, q_meas, options=options)
    assert res.identifiable and res.inertia_ratio == pytest.approx(RATIO, rel=0.05)
    assert res.friction == pytest.approx(MU, abs=0.03)
    assert res.diagnostics["fit_chi2"] < 3 * t_meas.size + 3 * np.sqrt(6 * t_meas.size)


def _mixed_bodies(folder: Path) -> None:
    folder.mkdir()
    rows = "".join(f"{0.01 * i},0,{0.5 - 0.01 * i},0,{{}}\n" for i in range(5))
    (folder / "a.csv").write_text("t,x,y,theta,body\n" + rows.format(*["ellipse"] * 5))
    (folder / "b.csv").write_text("t,x,y,theta,body\n" + rows.format(*["disc"] * 5))


def _two_bodies_in_one_file(folder: Path) -> None:
    folder.mkdir()
    rows = [f"{0.01 * i},0,{0.5 - 0.01 * i},0,{'ellipse' if i == 0 else 'disc'}" for i in range(5)]
    (folder / "a.csv").write_text("t,x,y,theta,body\n" + "\n".join(rows) + "\n")


@pytest.mark.parametrize(
    ("make", "extra", "fragment"),
    [
        (lambda d: d.mkdir(), [], "holds no *.csv pose file"),
        (lambda d: d.write_text("t,x,y,theta\n0,0,1,0\n"), ["--gravity", "0,-98.1e1"], "--gravity"),
        (lambda d: d.write_text("t,x,y,theta\n0,0,1,0\n"), ["--gravity", "0,down"], "--gravity"),
        (_mixed_bodies, [], "b.csv: column body: 'disc' differs from 'ellipse' in"),
        (_two_bodies_in_one_file, [], "a.csv: row 2, column body"),
    ],
)
def test_bad_folder_or_gravity_is_one_error_line(tmp_path: Path, make, extra, fragment) -> None:  # noqa: ANN001
    data, out = tmp_path / "data", tmp_path / "out"
    make(data)
    result = CliRunner().invoke(
        main,
        ["impacts", "identify", "--data", str(data), "--shape", "ellipse:0.05,0.025"]
        + ["--surface", "line:0,0", "--out", str(out), *extra],
    )
    message = result.output.strip()
    assert result.exit_code == 2 and message.startswith("physid: error:") and "\n" not in message
    assert fragment in message and not out.exists()


def test_sweep_impacts_jobs_take_a_gravity_vector() -> None:
    from physid.errors import InputError
    from physid.sweep.kinds import _impacts_setup

    job = {"shape": "ellipse:0.05,0.025", "surfaces": ["line:0,0"]}
    _, _, options = _impacts_setup(job | {"options": {"gravity": [2.0, -9.6]}}, "job")
    assert options.gravity_vector.tolist() == [2.0, -9.6]
    _, _, options = _impacts_setup(job | {"options": {"gravity": 9.81}}, "job")
    assert options.gravity_vector.tolist() == [0.0, -9.81]
    with pytest.raises(InputError, match=r"job.options.gravity: expected \[GX, GY\]"):
        _impacts_setup(job | {"options": {"gravity": [0.0, -9.8, 0.0]}}, "job")
