"""Numerical failures of ``physid oe`` are statuses with a finite result, never bad input or
NaN: trial points whose bodies overflow floating point are rejected like any failed step, and
a diverged single-shooting start keeps the finite guess (tester's report on the shipped Go1
walk: exit 2 with raw RuntimeWarnings for a calf, NaN rows in trajectory.csv with
``--rollout single``)."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES

from physid.cli import main
from physid.oe.model.measurements import Measurements, NoiseStd
from physid.oe.solving import solver
from physid.oe.solving.build import initial_guess, make_problem
from physid.oe.solving.solver import OEOptions, solve
from physid.recordings.trajectory import read_table
from physid.sim.oe_robots import GO1, robot_urdf
from physid.status import Status

BODY = "j2s6s200_joint_6"  # the payload link of kinova_payload_arm


def _go1_example(tmp_path, *extra):
    """``physid oe`` on examples/oe/go1_walk.csv with its config; ``(result, caught)``, the
    RuntimeWarnings raised on the way in ``caught`` (pytest would swallow them otherwise)."""
    args = ["oe", "--urdf", str(robot_urdf(GO1)), "--floating",
            "--data", str(EXAMPLES / "oe" / "go1_walk.csv"),
            "--config", str(EXAMPLES / "oe" / "go1.yaml"), "--out", str(tmp_path / "out"),
            *extra]  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = CliRunner().invoke(main, args)
    return result, [w for w in caught if issubclass(w.category, RuntimeWarning)]


def test_go1_calf_with_the_default_chart_is_solved_not_bad_input(tmp_path):
    # the data-chosen contact floor took an unlimited Gauss-Newton step of 3,900 in the
    # calf's log second moment (a direction the defects barely see): exp overflowed and the
    # run ended with exit 2 and nothing written
    result, caught = _go1_example(tmp_path, "--body", "FL_calf_joint", "--max-iterations", "2")
    assert not caught, [str(w.message) for w in caught]
    assert result.exit_code == 3, result.output
    status = json.loads((tmp_path / "out" / "result.json").read_text())["status"]
    assert status == "not_converged" and f"status: {status}" in result.output
    assert "error" not in result.output and "Warning" not in result.output


def test_diverged_single_shooting_start_writes_the_finite_guess(tmp_path):
    # the Go1 walk replayed open loop is non-finite from node 138: it was written as NaN rows.
    # Without joint terms (the walk's simulator has none): the friction its URDF declares,
    # estimated by default, damps the open-loop replay enough not to diverge
    config = tmp_path / "go1.yaml"
    config.write_text((EXAMPLES / "oe" / "go1.yaml").read_text() + "joints: {}\n")
    result, caught = _go1_example(
        tmp_path,
        "--body",
        "root_joint",
        "--rollout",
        "single",
        "--max-iterations",
        "5",
        "--config",
        str(config),
    )
    assert not caught, [str(w.message) for w in caught]
    assert result.exit_code == 3, result.output
    res = json.loads((tmp_path / "out" / "result.json").read_text())
    assert res["status"] == "numerical_failure" and res["termination"] == "diverged_start"
    assert res["message"].startswith("numerical failure after 0 iterations: the single-shooting")
    assert "kept the guess" in res["message"] and np.isfinite(res["cost"])
    columns = read_table(str(tmp_path / "out" / "trajectory.csv")).columns
    assert columns["t"].size == 161
    assert all(np.all(np.isfinite(values)) for values in columns.values())


def _kinova(arm, chart, n=20):
    """The payload link of ``kinova_payload_arm`` from its first ``n`` nodes."""
    nominal, _, rec = arm
    meas = Measurements(q=rec.q_meas[: n + 1], v=rec.v_meas[: n + 1])
    return make_problem(nominal, [BODY], chart, rec.dt, rec.tau[:n], meas, NoiseStd())


def test_a_trial_step_that_overflows_a_body_is_rejected_not_raised(kinova_payload_arm, monkeypatch):
    """Without the step limit (``max_log_step`` inf) a step of 2,000 in a log second moment
    overflows ``exp`` at step lengths above ~0.35: those trials count as an infinite cost and
    are halved away; before, ``set_theta`` raised InputError out of the solver (exit 2)."""
    problem = _kinova(kinova_payload_arm, "exp_eig")
    xs, ws = initial_guess(problem)
    theta = problem.dynamics.nominal_theta()
    push = 2000.0 * np.eye(10)[7]
    real = solver.solve_step

    def overflowing(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        step = real(*args, **kwargs)
        return dataclasses.replace(step, dtheta=step.dtheta + push)

    monkeypatch.setattr(solver, "solve_step", overflowing)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        result = solve(problem, xs, ws, theta, OEOptions(max_log_step=np.inf, max_iterations=2))
    assert result.status is not Status.OK
    assert np.all(np.isfinite(result.theta)) and np.isfinite(result.cost)
    assert np.all(np.isfinite(result.pis)) and np.all(np.isfinite(result.xs))


@pytest.mark.parametrize("chart", ["exp_eig", "log_cholesky"])
def test_representable_refuses_bodies_beyond_floating_point(kinova_payload_arm, chart):
    dyn = _kinova(kinova_payload_arm, chart, n=2).dynamics
    theta = dyn.nominal_theta()
    assert dyn.representable(theta)
    for i in (0, 7) if chart == "exp_eig" else (0, 1):  # log coordinates: mass, a moment
        for far in (1e3, np.inf, np.nan):
            bad = theta.copy()
            bad[i] = far
            assert not dyn.representable(bad), (i, far)


def test_defect_fit_step_keeps_the_determined_direction_and_bounds_the_rest(kinova_payload_arm):
    """The contact floor's parameter fit (:func:`physid.oe.soft.contact_noise.fitted_defects`):
    the defects see the log mass well and a log second moment barely; the plain least-squares
    step (5,000 in that moment) overflowed, a step scaled to the limit would have kept 1/5000
    of the mass; the trust-region step keeps the mass and moves the moment by at most e."""
    from physid.oe.soft.contact_noise import _trust_region_step

    dyn = _kinova(kinova_payload_arm, "exp_eig", n=2).dynamics
    F = np.zeros((30, 10))
    F[:10, 0] = 1.0  # log mass: singular value sqrt(10)
    F[10:20, 7] = 1e-4  # a log second moment the data barely see
    F[20:, 1] = 0.5  # a first moment (additive)
    d = np.r_[np.full(10, 0.4), np.full(10, 0.5), np.full(10, 0.05)]
    plain = np.linalg.lstsq(F, d, rcond=None)[0]
    assert plain[7] == pytest.approx(5000.0)
    s = _trust_region_step(F, d, dyn)
    assert abs(s[7]) == pytest.approx(1.0, rel=1e-6)  # on the boundary of the trust region
    np.testing.assert_allclose(s[[0, 1]], plain[[0, 1]], rtol=1e-3)  # damped by lam ~ 1e-4
    assert dyn.step_limit(s, 1.0) == 1.0
