"""Every example in examples/ runs, as a user would start it, and prints the numbers its README
promises against the truth of its simulation (issue 28 item 1). The long ones run shortened
(``--quick``, ``--duration``); the Staubli TX40 and KUKA examples run in tests/test_real_data.py,
the sweep spec in tests/test_sweep.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES, REPO

from physid.recordings.trajectory import read_table


def _run(tmp_path: Path, *command: str) -> str:
    """The command's standard output (stderr on failure), run from ``tmp_path``."""
    environment = os.environ | {"PYTHONPATH": str(REPO / "src"), "MPLBACKEND": "Agg"}
    result = subprocess.run(
        command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _python(tmp_path: Path, script: str, *args: str) -> str:
    return _run(tmp_path, sys.executable, str(EXAMPLES / script), *args)


def _physid(tmp_path: Path, *args: str) -> str:
    return _run(tmp_path, sys.executable, "-c", "from physid.cli import main; main()", *args)


def _number(pattern: str, text: str) -> float:
    match = re.search(pattern, text)
    assert match, f"{pattern!r} not in the output:\n{text[-2000:]}"
    return float(match.group(1))


def test_mobile_manipulator_locking(tmp_path):
    out = _python(tmp_path, "real_robot_workflows/mobile_manipulator_locking.py", "--out", "t")
    recorded = _number(r"recorded position: ([\d.]+) %", out)
    fixed = _number(r"fixed position: ([\d.]+) %", out)
    assert recorded < 4.2 and fixed > 1.3 * recorded  # README: 3.88 % (truth 3.93 %), 6.12 %
    assert (tmp_path / "t" / "recorded" / "report.html").is_file()


def test_drive_gains_and_payload(tmp_path):
    out = _python(
        tmp_path, "real_robot_workflows/drive_gains_and_payload.py", "--out", "g", "--duration", "6"
    )
    errors = [float(e) for e in re.findall(r"([+-][\d.]+) % \(std", out)]
    assert len(errors) == 6 and max(map(abs, errors)) < 2.0  # gains against the simulator's
    assert abs(_number(r"tool mass: truth 1.8 kg, estimated ([\d.]+) kg", out) - 1.8) < 0.03


def test_nonlinear_friction(tmp_path):
    out = _python(
        tmp_path, "real_robot_workflows/nonlinear_friction.py", "--out", "f", "--duration", "6"
    )
    linear = _number(r"linear\s+([\d.]+) %", out)
    sigmoid = _number(r"sigmoid\s+([\d.]+) %", out)
    truth = _number(r"true parameters\s+([\d.]+) %", out)
    assert sigmoid < 1.02 * truth < linear  # the sigmoid fit at the truth's floor


def test_online_payload_arm(tmp_path):
    out = _python(tmp_path, "online/payload_arm.py", "--out", "a", "--quick")
    assert "EKF: 0 inconsistent estimates" in out
    assert _number(r"steady-state error ([\d.]+) %", out) < 2.0
    assert _number(r"\(([\d.]+)x lower\)", out) > 10  # adaptive control against the nominal


def test_online_stepping(tmp_path):
    out = _python(tmp_path, "online/stepping.py", "--out", "s", "--quick")
    gated = _number(r"with gating: peak torso-mass excursion during impacts\s+([\d.]+) kg", out)
    ungated = _number(r"without gating: peak torso-mass excursion during impacts\s+([\d.]+)", out)
    assert ungated > 3 * gated  # gating keeps the touch-down impacts out (README: 24.67 / 2.28)


def test_online_cli_demo_and_plain_log(tmp_path):
    out = _python(tmp_path, "online/cli_demo.py", "--out", "c")
    assert abs(_number(r"waist_pitch: mass ([\d.]+) kg", out) / 30.0 - 1.0) < 0.03  # 25 + 5 kg
    out = _python(tmp_path, "online/plain_log.py", "--out", "p")
    with_friction = _number(r"with_friction: mass ([\d.]+) kg", out)
    truth = _number(r"truth ([\d.]+) kg", out)
    assert abs(with_friction / truth - 1.0) < 0.03
    assert "with_friction: mass" in out and "status ok" in out.split("without_friction")[0]
    assert re.search(r"without_friction: mass .* status suspect", out)  # wrong, and says so


def test_go1_walk_of_the_readme_is_what_the_simulator_makes(tmp_path):
    _python(tmp_path, "oe/make_go1_walk.py", "--out", str(tmp_path / "walk.csv"))
    made = read_table(str(tmp_path / "walk.csv")).columns
    shipped = read_table(str(EXAMPLES / "oe" / "go1_walk.csv")).columns
    assert list(made) == list(shipped)
    for name, column in shipped.items():
        np.testing.assert_allclose(made[name], column, rtol=1e-6, atol=1e-9, err_msg=name)


def test_impacts_run_script(tmp_path):
    out = _run(tmp_path, "bash", str(EXAMPLES / "impacts" / "run.sh"), str(tmp_path / "fit"))
    ratio = _number(r"J/m = ([\d.e-]+) m\S*, mu", out)
    assert abs(ratio / 756e-6 - 1.0) < 0.02 and abs(_number(r"mu = ([\d.]+)", out) - 0.4) < 0.02


def test_multibody_readme_commands(tmp_path):
    folder = EXAMPLES / "multibody"
    urdf = str(folder / "furuta.urdf")
    _physid(tmp_path, "multibody", "simulate", "--urdf", urdf, "--config",
         str(folder / "furuta.yaml"), "--control", str(folder / "pulse_control.csv"),
         "--out", "run")  # fmt: skip
    out = _physid(tmp_path, "multibody", "identify", "--urdf", urdf, "--config",
               str(folder / "furuta_identify.yaml"), "--data", "run/trajectory.csv",
               "--out", "fit", "--dt", "0.002")  # fmt: skip
    assert _number(r"hinge1.Izz = ([\d.e-]+)", out) == pytest.approx(0.003, rel=0.01)
    assert _number(r"hinge2.Iyy = ([\d.e-]+)", out) == pytest.approx(0.004, rel=0.01)
