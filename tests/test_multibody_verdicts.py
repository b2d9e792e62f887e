"""What a multibody fit says about itself (issue 27): parameters at a bound with what to try,
the simulation error from the first state, unactuated simulation without a control file and the
default set to estimate."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from click.testing import CliRunner

from physid.cli import main
from physid.multibody.estimate.diagnose import at_bounds, bound_findings, collapsed, shrunk
from physid.multibody.estimate.problem import Segment, States
from physid.multibody.model.build import load_model
from physid.multibody.step.simulate import simulate, state_from_joints
from physid.multibody.verdicts import simulation_errors
from physid.recordings.trajectory import read_table

ROOT = Path(__file__).resolve().parents[1] / "examples" / "multibody"
SOFT = {"compliance_linear": 1e-5, "compliance_rotational": 1e-5}


def test_every_parameter_at_a_bound_is_named_with_what_to_try():
    names = ["a.coulomb", "b.coulomb", "a.Izz", "tilt_1", "b.viscous"]
    values = np.array([1e-13, 0.02, 5e-3, 0.1, 2e-3])
    start = np.array([0.01, 0.01, 1e-3, 0.0, 1e-3])
    lower = np.array([0.0, 0.0, 0.0, -np.inf, 0.0])
    upper = np.array([np.inf, np.inf, 5e-3, 0.1, np.inf])
    found = at_bounds(names, values, start, lower, upper)
    assert found == [("a.coulomb", "lower"), ("a.Izz", "upper"), ("tilt_1", "upper")]
    # as typed findings: the friction and the tilt at a bound (MB202), the inertia at the upper
    # end of its box (MB209), each naming the parameter with its value and bound; what to try
    # is the code's documentation (physid codes MB202)
    findings, at_bound, down = bound_findings(names, values, start, lower, upper)
    by_name = {f.names[0]: f for f in findings}
    assert {n: f.code for n, f in by_name.items()} == {
        "a.coulomb": "MB202",
        "a.Izz": "MB209",
        "tilt_1": "MB202",
    }
    assert by_name["a.Izz"].numbers == {"value": 5e-3, "bound": 5e-3, "start": 1e-3}
    assert by_name["tilt_1"].numbers == {"value": 0.1, "bound": 0.1}
    assert at_bound == ["a.Izz", "a.coulomb", "tilt_1"] and down == []
    from physid.multibody import codes

    assert "dry r*mu" in codes.AT_BOUND.do and "bounds.<name>" in codes.AT_BOUND.do


def test_a_body_that_shrinks_far_below_its_start_is_named_though_not_at_its_bound():
    """The Furuta arm's inertia ends at 0.1 % of its start (LM stops on the way to 0): neither
    at the bound (collapsed: 1e-4 of the start) nor a measurement."""
    names = ["arm.Izz", "arm.mass", "pend.Iyy", "arm.viscous"]
    start = np.array([3.9e-3, 0.3, 1e-3, 1e-3])
    values = np.array([3.9e-6, 0.29, 8e-8, 1e-7])
    lower = np.zeros(4)
    assert collapsed(names, values, start, lower) == ["pend.Iyy"]
    assert shrunk(names, values, start) == ["arm.Izz", "pend.Iyy"]  # friction is not a body
    assert shrunk(names, np.array([3.9e-5, 0.29, 1e-3, 1e-7]), start) == []


def test_simulation_error_from_the_first_state_is_the_known_offset():
    """The model simulated from the true first state reproduces the recording exactly, so the
    reported RMS is that of a known error added to the samples (closed form)."""
    model = load_model(ROOT / "pendulum.urdf", {"gravity": [0, 0, -9.81], "defaults": SOFT})
    h, n = 0.01, 301
    sim = simulate(model, h, n - 1, *state_from_joints(model, [1.0], [0.0]))
    t = h * np.arange(n)
    added = 0.02 * np.sin(2 * np.pi * t)[:, None] + 0.01 * (t > 1.5)[:, None]
    w = np.zeros((n, 1))
    w[::5] = 1.0  # 20 Hz samples
    seg = Segment(sim.angles + added, np.zeros((n, 1)), w)
    fit = SimpleNamespace(segments=[seg], states=States([sim.q], [sim.v]), model=model, h=h)
    (entry,) = simulation_errors(fit)
    e = entry["joints"]["pendulum"]
    first = added[::5][t[::5] <= 1.0 + 1e-9]
    assert e["rms_first_s"] == pytest.approx(np.sqrt(np.mean(first**2)), abs=1e-9)
    assert e["rms_whole"] == pytest.approx(np.sqrt(np.mean(added[::5] ** 2)), abs=1e-9)
    assert e["samples"] == 61 and entry["seconds"] == pytest.approx(3.0)


def test_unactuated_simulate_needs_no_control(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("gravity: [0, 0, -9.81]\n")
    out = tmp_path / "run"
    args = ["multibody", "simulate", "--urdf", str(ROOT / "pendulum.urdf"), "--config", str(cfg)]
    result = CliRunner().invoke(main, [*args, "--out", str(out), "--duration", "0.5", "--q0", "1"])
    assert result.exit_code == 0, result.output
    model = load_model(ROOT / "pendulum.urdf", {"gravity": [0, 0, -9.81]})
    sim = simulate(model, 1e-3, 500, *state_from_joints(model, [1.0], [0.0]))
    table = read_table(out / "trajectory.csv")
    np.testing.assert_allclose(table.columns["q_pendulum"], sim.angles[:, 0], atol=1e-9)
    furuta = ["multibody", "simulate", "--urdf", str(ROOT / "furuta.urdf")]
    result = CliRunner().invoke(
        main, [*furuta, "--config", str(ROOT / "furuta.yaml"), "--out", str(tmp_path / "f")]
    )
    assert result.exit_code == 2 and "--control: hinge(s) hinge1 have a motor" in result.output
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "g")])
    assert result.exit_code == 2 and "--duration" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_default_set_is_each_hinge_inertia_about_its_axis_and_friction(tmp_path):
    furuta = load_model(ROOT / "furuta.urdf", ROOT / "furuta.yaml", default_estimate=True)
    # paper A Table 1 estimates J_Azz and J_Byy of this Furuta: the inertias about the hinges
    assert furuta.estimate == [
        "hinge1.Izz",
        "hinge1.viscous",
        "hinge1.coulomb",
        "hinge2.Iyy",
        "hinge2.viscous",
        "hinge2.coulomb",
    ]
    assert furuta.estimate_default and all(h.has_dry for h in furuta.hinges)
    assert load_model(ROOT / "furuta.urdf", ROOT / "furuta.yaml").estimate == []
    # the command line fits the default set and reports the simulation error
    truth = {"gravity": [0, 0, -9.81], "defaults": SOFT, "joints": {"pendulum": {"viscous": 0.01}}}
    model = load_model(ROOT / "pendulum.urdf", truth)
    sim = simulate(model, 5e-3, 400, *state_from_joints(model, [1.0], [0.0]))
    data = tmp_path / "d.csv"
    rows = "\n".join(f"{t:.4f},{a:.9f}" for t, a in zip(sim.t, sim.angles[:, 0], strict=True))
    data.write_text("t,q_pendulum\n" + rows + "\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(
        "gravity: [0, 0, -9.81]\ndefaults: {compliance_linear: 1.0e-5, "
        "compliance_rotational: 1.0e-5}\njoints: {pendulum: {viscous: 0.005}}\nnoise: "
        "{pendulum: 0.001}\n"
    )
    out = tmp_path / "fit"
    args = ["multibody", "identify", "--urdf", str(ROOT / "pendulum.urdf"), "--data", str(data)]
    result = CliRunner().invoke(
        main, [*args, "--config", str(cfg), "--out", str(out), "--dt", "5e-3"]
    )
    assert result.exit_code == 0, result.output
    assert "simulation error" in result.output
    res = json.loads((out / "result.json").read_text())
    (default,) = [f for f in res["findings"] if f["code"] == "MB101"]
    assert default["names"] == res["names"]
    assert res["names"] == ["pendulum.Iyy", "pendulum.viscous", "pendulum.coulomb"]
    values = dict(zip(res["names"], res["values"], strict=True))
    assert values["pendulum.viscous"] == pytest.approx(0.01, rel=0.05)
    assert values["pendulum.coulomb"] < 1e-3  # the truth has none
    joint = res["simulation_error"][0]["joints"]["pendulum"]
    assert joint["rms_whole"] < 2e-3 and res["noise"]["pendulum"]["source"] == "config"
