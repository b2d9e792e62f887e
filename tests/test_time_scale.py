"""The time-scale check (physid.offline.checks.time_scale, suspect check 4): torques tie inertia to
gravity, so the motion's true time scale shows through least squares on the URDF's kinematics
alone. Judged on a simulated arm whose time is known, and on the real KUKA LWR4+ with its
stamps halved (a silent 88 kg arm before the check)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from conftest import EXAMPLES, KUKA, require_dataset

from physid.offline.checks.suspect import suspect_reasons, timeline_finding
from physid.offline.checks.time_scale import FACTORS, fit_by_time_scale


def _message(finding):  # noqa: ANN001, ANN202
    return None if finding is None else finding.message


def _best_factor(model, trajectory) -> float:
    dt = float(np.median(np.diff(trajectory.t)))
    q, tau = trajectory.q[::10], trajectory.tau[::10]
    dq = np.gradient(q, 10 * dt, axis=0)
    ddq = np.gradient(dq, 10 * dt, axis=0)
    return FACTORS[int(np.argmin(fit_by_time_scale(model, q, dq, ddq, tau)))]


@pytest.mark.parametrize("stretch", [1.0, 0.5, 2.0])
def test_the_true_time_scale_fits_best_on_a_simulated_arm(arm_experiment, stretch):
    """Stamps x ``stretch``: the velocities are 1 / stretch of the truth, so the best factor
    is ``stretch`` (within one step of the 25-point grid, 12 %). The check speaks on stamps
    too short (x0.5: 23 % better fit) and not on the true ones; on stamps too long (x2) the
    best factor is right but beats the stamps' by 3.5 % only, under the 10 % it asks for (the
    free inertias absorb most of a motion that looks slower): not said."""
    model = arm_experiment.model
    clean = arm_experiment.validation.recorded
    stamped = replace(clean, t=clean.t * stretch)
    assert _best_factor(model, stamped) == pytest.approx(stretch, rel=0.13)
    reason = _message(timeline_finding(model, stamped))
    if stretch == 0.5:
        assert reason is not None and "longer timeline" in reason
    else:
        assert reason is None


def test_real_kuka_stamps_fit_and_halved_ones_do_not():
    from physid.files.config import load_config, robot_for
    from physid.workflows import load_trajectories

    require_dataset(KUKA)
    config = load_config(EXAMPLES / "kuka_lwr4" / "config.yaml")
    model = robot_for(KUKA / "kuka_lwr4.urdf", config)
    (trajectory,) = load_trajectories([EXAMPLES / "kuka_lwr4" / "measurements_2.yaml"], model,
                                      config)  # fmt: skip
    assert _message(timeline_finding(model, trajectory)) is None
    halved = replace(trajectory, t=trajectory.t * 0.5)
    (reason,) = suspect_reasons(model, [halved])
    assert "time stamps do not match" in reason and "longer timeline" in reason


def test_a_preferred_time_scale_at_the_range_s_end_must_be_far_better():
    # a curve still falling at the end of the factors searched, by a modest margin, prefers
    # ever faster motion: no verdict (3 s of the DFKI pendulum read 22-45 % "better" at the ends
    # of 0.25-4 x); the same improvement at an interior minimum is one, and so is a fit many
    # times better at the end (stamps 4-10 x off: 2.3-6.6 x on the real files)
    from physid.offline.checks.time_scale import time_scale_finding

    log_c = np.log(FACTORS)
    falling = 0.2 - 0.02 * log_c  # lowest at the largest factor: 0.158 against 0.2 at c = 1
    assert falling[-1] < 0.2 / 1.2 and _message(time_scale_finding(falling)) is None
    dip = 0.2 + 0.05 * (log_c - np.log(0.4)) ** 2  # a minimum at c = 0.4
    reason = _message(time_scale_finding(dip))
    assert reason is not None and "longer timeline" in reason and "2.5 x their duration" in reason
    steep = 0.2 * np.exp(0.8 * log_c)  # the smallest factor fits 5.3 x better than c = 1
    reason = _message(time_scale_finding(steep))
    assert reason is not None and "longer timeline" in reason


def _tiago_run(lift_scale: float, lift_noise: float = 1.0):
    """TIAGo's torso lift and arm (example-robot-data), 30 s at 200 Hz of Fourier motion, the
    URDF's rigid-body torque (Pinocchio) with viscous and Coulomb friction and noise:
    ``lift_noise`` N on the lift, whose force is scaled by ``lift_scale``, 0.05 N m on the arm."""
    import pinocchio as pin

    from physid.files.config import parse_config, robot_for
    from physid.recordings.trajectory import Trajectory
    from physid.sim.oe_robots import robot_urdf

    joints = ["torso_lift_joint", *(f"arm_{k}_joint" for k in range(1, 8))]
    model = robot_for(robot_urdf("tiago_description/robots/tiago.urdf"),
                      parse_config({"joints": joints}))  # fmt: skip
    rng = np.random.default_rng(5)
    t = np.arange(0.0, 30.0, 0.005)
    w = 2 * np.pi * 0.1 * np.arange(1, 6)
    centre = np.array([0.15, 0.5, 0.3, -0.5, 1.2, 0.0, 0.3, 0.0])
    amplitude = np.array([0.05, 0.5, 0.4, 0.6, 0.5, 0.8, 0.5, 0.8]) / 3
    phases = rng.uniform(0, 2 * np.pi, (8, 5))
    q = centre + amplitude * np.sin(t[:, None, None] * w + phases).sum(axis=2)
    dq = amplitude * (w * np.cos(t[:, None, None] * w + phases)).sum(axis=2)
    ddq = -amplitude * (w**2 * np.sin(t[:, None, None] * w + phases)).sum(axis=2)
    pm = model.pin_model
    data = pm.createData()
    tau = np.array([pin.rnea(pm, data, *s) for s in zip(q, dq, ddq, strict=True)])
    viscous = np.array([300.0, 1, 1, 0.6, 0.6, 0.2, 0.2, 0.2])
    coulomb = np.array([20.0, 1.2, 1.2, 0.8, 0.8, 0.3, 0.3, 0.3])
    tau += viscous * dq + coulomb * np.tanh(dq / 0.01)
    tau += rng.normal(0.0, 1.0, tau.shape) * np.r_[lift_noise, np.full(7, 0.05)]
    tau[:, 0] *= lift_scale
    return model, Trajectory(t, q, tau, model.joint_names, source="tiago.csv")


def test_one_joint_off_scale_is_no_clock():
    """A clock runs in every joint's torque; a column of another scale is one joint's. TIAGo's
    lift force logged x0.05 (a TIAGo-like arm in MuJoCo read "20 % better on a longer
    timeline" of correct stamps, which hid the joint-scale check): without the lift the
    evidence is gone, so nothing is said of the stamps; the stamps halved are still named (before
    each joint was weighted by its residual std, the lift's newtons decided the fit and the
    halved stamps went unnamed, with 1 N or 30 N of noise on the lift)."""
    model, light = _tiago_run(0.05)
    assert _message(timeline_finding(model, light)) is None
    model, right = _tiago_run(1.0)
    assert _message(timeline_finding(model, right)) is None
    halved = replace(right, t=right.t * 0.5)
    reason = _message(timeline_finding(model, halved))
    assert reason is not None and "longer timeline" in reason
    model, loud = _tiago_run(1.0, lift_noise=30.0)
    reason = _message(timeline_finding(model, replace(loud, t=loud.t * 0.5)))
    assert reason is not None and "longer timeline" in reason


def test_the_reduced_fit_is_the_least_squares_of_the_stacked_rows(arm_experiment):
    """Every factor's relative error equals that of a plain weighted least squares on the
    stacked rows (joint weights: inverse residual std of the unweighted fit at c = 1)."""
    from physid.offline.checks.time_scale import time_scale_regressors

    model = arm_experiment.model
    run = arm_experiment.validation.recorded
    q, tau = run.q[::7], run.tau[::7]
    dt = 7 * float(np.median(np.diff(run.t)))
    dq = np.gradient(q, dt, axis=0)
    ddq = np.gradient(dq, dt, axis=0)
    full, static = time_scale_regressors(model, q, dq, ddq)
    n_rows, n = tau.shape
    nuisance = np.zeros((n_rows, n, 4 * n))
    for j in range(n):
        nuisance[:, j, 4 * j : 4 * j + 4] = np.column_stack(
            [dq[:, j], np.sign(dq[:, j]), np.ones(n_rows), ddq[:, j]]
        )
    X1 = np.concatenate([nuisance, full], axis=2)
    solution, *_ = np.linalg.lstsq(X1.reshape(n_rows * n, -1), tau.reshape(-1), rcond=None)
    sigma = np.sqrt(np.mean((tau - X1 @ solution) ** 2, axis=0))
    w = (1.0 / sigma)[None, :, None]
    expected = []
    for c in FACTORS:
        X = (np.concatenate([nuisance, static + c**2 * (full - static)], axis=2) * w).reshape(
            n_rows * n, -1
        )
        y = (tau[:, :, None] * w).reshape(-1)
        solution, *_ = np.linalg.lstsq(X, y, rcond=None)
        expected.append(np.linalg.norm(y - X @ solution) / np.linalg.norm(y))
    np.testing.assert_allclose(fit_by_time_scale(model, q, dq, ddq, tau), expected, rtol=1e-8)
