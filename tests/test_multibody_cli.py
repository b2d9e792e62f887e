"""``physid multibody simulate``: contract output, atomic writes, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from physid.cli import main
from physid.recordings.trajectory import read_table

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
    options = ("--urdf", "--config", "--control", "--duration", "--out", "--dt", "--q0", "--dq0")
    for option in (*options, "--every"):
        assert option in result.output


# ---------------------------------------------------------------- physid multibody identify


def _pendulum_csv(tmp_path: Path, name: str, angle0: float, seed: int) -> Path:
    from physid.multibody import load_model, simulate, state_from_joints

    truth = {"gravity": [0, 0, -9.81], "joints": {"pendulum": {"viscous": 0.01}}}
    model = load_model(EXAMPLES / "pendulum.urdf", truth)
    sim = simulate(model, 1e-3, 1500, *state_from_joints(model, [angle0], [0.0]))
    q = sim.angles[:, 0] + 1e-3 * np.random.default_rng(seed).normal(size=len(sim.t))
    path = tmp_path / name
    rows = "\n".join(f"{t:.4f},{a:.8f},0" for t, a in zip(sim.t, q, strict=True))
    path.write_text("t,q_pendulum,extra\n" + rows + "\n")
    return path


def _identify_config(tmp_path: Path) -> Path:
    path = tmp_path / "id.yaml"
    path.write_text(
        "gravity: [0, 0, -9.81]\n"
        "defaults: {compliance_linear: 1.0e-5, compliance_rotational: 1.0e-5}\n"
        "bodies: {pendulum: {Iyy: 0.02}}\n"
        "joints: {pendulum: {viscous: 0.001}}\n"
        "estimate: [pendulum.Iyy, pendulum.viscous]\n"
    )
    return path


def test_identify_writes_params_result_states_and_report(tmp_path):
    d1 = _pendulum_csv(tmp_path, "a.csv", 1.0, 1)
    d2 = _pendulum_csv(tmp_path, "b.csv", 0.7, 2)
    out = tmp_path / "fit"
    args = ["multibody", "identify", "--urdf", str(EXAMPLES / "pendulum.urdf")]
    args += ["--data", str(d1), "--data", str(d2), "--config", str(_identify_config(tmp_path))]
    args += ["--out", str(out), "--dt", "5e-3", "--cross-validate"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    # an ok run prints the status, the key numbers and no info finding; --verbose adds them
    assert result.output.startswith("status: ok - ") and "MB102" not in result.output
    again = [str(tmp_path / "v") if a == str(out) else a for a in args[:-1]]  # no folds
    verbose = CliRunner().invoke(main, [*again, "--verbose"])
    assert verbose.exit_code == 0 and "info MB102: " in verbose.output
    assert "ignoring column(s) extra" in verbose.output
    params = json.loads((out / "params.json").read_text())
    assert params["status"] == "ok"
    ignored = [f for f in params["findings"] if f["code"] == "MB102"]  # one per recording
    assert len(ignored) == 2 and all(f["names"] == ["extra"] for f in ignored)
    assert params["format"] == "physid.params/1" and params["physically_consistent"]
    # truth of the simulation: Iyy (about the COM) = 0.01, viscous = 0.01
    iyy = params["bodies"]["pendulum"]["inertia"][1][1]
    assert iyy == pytest.approx(0.01, rel=0.02)
    assert params["joints"]["pendulum"]["viscous"] == pytest.approx(0.01, rel=0.05)
    assert params["extra"]["parameters"]["pendulum.Iyy"]["source"] == "data"
    assert params["extra"]["parameters"]["pendulum.mass"]["source"] == "prior"
    # identify's per-body layout (issue 28): std and source per quantity
    body = params["bodies"]["pendulum"]
    assert body["source"] == {"mass": "prior", "com": "prior", "inertia": "data"}
    assert body["std"]["mass"] is None and body["std"]["inertia"][0][0] is None
    assert body["std"]["inertia"][1][1] == params["extra"]["parameters"]["pendulum.Iyy"]["std"]
    assert 0 < body["std"]["inertia"][1][1] < 0.02 * iyy
    joint = params["joints"]["pendulum"]
    assert joint["source"]["viscous"] == "data" and joint["std"]["viscous"] > 0
    res = json.loads((out / "result.json").read_text())
    # default kappa = 100 (0.01 / h)^2: the paper's 100 at h = 0.01, 400 at 5e-3
    assert res["converged"] and res["h"] == 5e-3 and res["kappa"] == pytest.approx(400.0)
    assert len(res["cost_history"]) == res["iterations"] + 1
    assert len(res["gain_ratio_history"]) == res["iterations"]
    assert np.array(res["covariance"]).shape == (2, 2) and len(res["singular_values"]) == 2
    assert res["compliances"]["pendulum"]["compliance_linear"] == 1e-5
    folds = res["cross_validation"]
    assert len(folds) == 2 and all(f["observation_mse"] < 1e-5 for f in folds)
    states = np.load(out / "states.npz")
    assert states["q_0"].shape[1] == 7 and states["angles_1"].shape == states["measured_1"].shape
    assert np.abs(states["angles_0"] - states["measured_0"]).max() < 5e-3
    assert (out / "report.png").stat().st_size > 1000


@pytest.mark.parametrize(
    ("text", "extra", "message"),
    [
        ("t,q_other\n0,0\n0.1,0\n0.2,0\n", [], "missing column 'q_pendulum'"),
        ("t,q_pendulum\n0,0\n0.1,nan\n0.2,0\n", [], "row 2"),
        ("t,q_pendulum\n0,0\n0,0\n0.2,0\n", [], "not strictly increasing at row 2"),
        ("t,q_pendulum\n0,0\n0.1,0\n0.2,0\n", ["--cross-validate"], "at least two --data"),
        ("t,q_pendulum\n0,0\n0.1,0\n0.2,0\n", ["--dt", "0"], "--dt"),
    ],
)
def test_identify_bad_input_is_one_line(tmp_path, text, extra, message):
    data = tmp_path / "d.csv"
    data.write_text(text)
    out = tmp_path / "fit"
    args = ["multibody", "identify", "--urdf", str(EXAMPLES / "pendulum.urdf"), "--data"]
    args += [str(data), "--config", str(_identify_config(tmp_path)), "--out", str(out), *extra]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_the_help_states_the_refinement_budget_the_workflow_uses():
    """The command line keeps its own copy of the refinement's evaluations (its --help must not
    import the workflow, which imports CasADi and Pinocchio)."""
    from physid.cli.multibody_commands import REFINE_EVALUATIONS
    from physid.multibody.workflow import REFINE_EVALUATIONS as USED

    assert REFINE_EVALUATIONS == USED
