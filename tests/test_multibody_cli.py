"""``physid multibody simulate``: contract output, atomic writes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from physid.cli import main
from physid.data import read_table

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "multibody"
FURUTA, CONFIG = EXAMPLES / "furuta.urdf", EXAMPLES / "furuta.yaml"


def _control(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "u.csv"
    path.write_text(text)
    return path


def _run(*args: str):
    return CliRunner().invoke(main, ["multibody", "simulate", *args])


def test_simulate_writes_the_contract_trajectory(tmp_path):
    t = np.arange(0, 0.2001, 0.01)
    rows = "\n".join(f"{ti:.3f},{0.5 * np.sin(10 * ti):.6f}" for ti in t)
    control = _control(tmp_path, "t,u_hinge1\n" + rows + "\n")
    out = tmp_path / "run"
    args = ["--urdf", str(FURUTA), "--config", str(CONFIG), "--control", str(control)]
    result = _run(*args, "--out", str(out), "--q0", "0,3.0", "--dt", "1e-3", "--every", "5")
    assert result.exit_code == 0, result.output
    table = read_table(out / "trajectory.csv")
    expected = ["t", "q_hinge1", "q_hinge2", "dq_hinge1", "dq_hinge2", "u_hinge1"]
    assert list(table.columns) == expected
    np.testing.assert_allclose(table.columns["t"], np.arange(0, 0.2001, 0.005), atol=1e-9)
    assert table.columns["q_hinge2"][0] == pytest.approx(3.0)
    # zero-order hold: the control written at t = 0.01 k is the file's sample k
    np.testing.assert_allclose(
        table.columns["u_hinge1"][::2][:-1], 0.5 * np.sin(10 * t[:-1]), atol=1e-6
    )
    summary = json.loads((out / "simulation.json").read_text())
    assert summary["steps"] == 200 and summary["lcp_failures"] == 0
    assert summary["parameters"]["hinge1.gain"] == pytest.approx(0.1)
    assert not list(tmp_path.glob(".run.*"))  # no staging folder left behind


@pytest.mark.parametrize(
    ("text", "extra", "message"),
    [
        ("t,u_hinge1\n0,0\n0.1,x\n", [], "row 2"),
        ("t,u_hinge1\n0,0\n0,1\n", [], "not strictly increasing at row 2"),
        ("t,u_hinge2\n0,0\n0.1,1\n", [], "joint 'hinge2' has no motor"),
        ("t\n0\n0.1\n", [], "missing column 'u_hinge1'"),
        ("t,u_hinge1\n0,0\n0.1,1\n", ["--q0", "0"], "--q0: expected 2 finite values"),
        ("t,u_hinge1\n0,0\n0.1,1\n", ["--dt", "-1"], "--dt"),
    ],
)
def test_bad_input_is_one_line_naming_the_culprit(tmp_path, text, extra, message):
    control = _control(tmp_path, text)
    out = tmp_path / "run"
    args = ["--urdf", str(FURUTA), "--config", str(CONFIG), "--control", str(control)]
    result = _run(*args, "--out", str(out), *extra)
    assert result.exit_code == 2
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_bad_config_names_the_file_and_key(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("joints:\n  hinge1:\n    gian: 0.1\n")
    control = _control(tmp_path, "t\n0\n0.1\n")
    args = ["--urdf", str(FURUTA), "--config", str(config), "--control", str(control)]
    result = _run(*args, "--out", str(tmp_path / "run"))
    assert result.exit_code == 2
    assert "joints.hinge1" in result.output and "gian" in result.output


def test_help_explains_every_option():
    result = CliRunner().invoke(main, ["multibody", "simulate", "--help"])
    assert result.exit_code == 0
    for option in ("--urdf", "--config", "--control", "--out", "--dt", "--q0", "--dq0", "--every"):
        assert option in result.output
