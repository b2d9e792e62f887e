"""Online estimation on a plain log (issue 11 item 5): positions and torques only, an arm with
joint friction, the friction taken from an offline params.json.

Truth: the simulated 7-axis arm (physid.sim.payload_arm) with a 2 kg payload step and smooth
(tanh) Coulomb plus viscous friction in its torques; the velocities are not given to the filter.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import physid
from physid.body.inertia import check_consistency
from physid.cli import main
from physid.findings import with_code
from physid.offline.codes import COLUMN_FIX, GRAVITY_ABSENT
from physid.online import InertialEKF, OnlineConfig
from physid.online.codes import MANY_GATED, TORQUES_UNEXPLAINED
from physid.online.columns import OnlineSignals
from physid.online.config import Gating, MeasurementNoise, ThetaStd
from physid.online.friction import JointFriction
from physid.online.metrics import settling_time
from physid.online.replay import replay
from physid.online.stream import SampleWindow
from physid.sim.payload_arm import (
    ARM_URDF,
    PAYLOAD_JOINT,
    ArmFriction,
    PayloadProfile,
    load_arm,
    simulate_payload_arm,
)
from physid.status import Status

CONFIG = OnlineConfig(
    calibration_s=0.5,
    acceleration_window=61,  # plain logs: velocity and acceleration from positions
    process_noise=ThetaStd(alpha=2.0, d=0.05, s=0.01, t=0.005),
    measurement_noise=MeasurementNoise(joint_torque=1.0),
    gating=Gating(probability=0.9999, release_after_s=0.05),
)
# 2.5 kg from the end of the hold, then a step to 4.5 kg: a 2 kg step
STEP = PayloadProfile(hold_s=0.6, sine_s=0.0, square_s=0.0, plateau_s=2.5, step_s=3.0,
                      offset_kg=2.5, step_to_kg=4.5)  # fmt: skip
VISCOUS = np.array([2.0, 2.5, 1.5, 1.2, 0.8, 0.6, 0.4])  # N m s/rad
COULOMB = np.array([4.0, 5.0, 3.0, 2.5, 1.5, 1.0, 0.8])  # N m
TRUE_FRICTION = ArmFriction(VISCOUS, COULOMB, smoothing_rad_s=0.005)


@pytest.fixture(scope="module")
def recording():
    return simulate_payload_arm(np.random.default_rng(5), STEP, friction=TRUE_FRICTION)


def _plain(rec) -> OnlineSignals:
    return OnlineSignals(rec.t, rec.q, None, rec.tau, None)


def _plain_csv(rec, path: Path, tau: np.ndarray | None = None) -> Path:
    """The recording as a plain log: t, q_ and tau_ columns (``tau`` instead of its own)."""
    names = rec.joint_names
    header = ["t", *(f"q_{j}" for j in names), *(f"tau_{j}" for j in names)]
    torque = rec.tau if tau is None else tau
    np.savetxt(path, np.column_stack([rec.t, rec.q, torque]), delimiter=",",
               header=",".join(header), comments="", fmt="%.10g")  # fmt: skip
    return path


def _identified_friction() -> JointFriction:
    """What an offline fit reports for this friction: the same coefficients, a sign model whose
    deadband is the width of the true transition."""
    zeros = np.zeros(7)
    return JointFriction(VISCOUS, COULOMB, zeros, zeros, np.full(7, 0.005))


def test_velocity_from_positions_is_the_derivative_at_the_middle_sample():
    # closed form: a quadratic least-squares fit over a symmetric window is exact for the
    # quadratic part; of a cubic d s^3 (s from the middle) it reads the slope d sum(s^4)/sum(s^2)
    # and no curvature
    window = SampleWindow(1, 1, 1, 0, 21)
    t = 0.3 + np.arange(21) * 1e-3
    q = 0.2 + 0.5 * t - 1.5 * t**2 + 0.8 * t**3
    for tk, qk in zip(t, q, strict=True):
        window.push(tk, np.array([qk]), np.zeros(1), np.zeros(1), np.zeros(0),
                    velocity_from_positions=True)  # fmt: skip
    t_mid, q_mid, v, _, _, a = window.middle()
    assert t_mid == pytest.approx(t[10]) and q_mid[0] == pytest.approx(q[10])
    s = t - t_mid
    bias = 0.8 * np.sum(s**4) / np.sum(s**2)
    assert v[0] == pytest.approx(0.5 - 3.0 * t_mid + 2.4 * t_mid**2 + bias, abs=1e-9)
    assert a[0] == pytest.approx(-3.0 + 4.8 * t_mid, abs=1e-7)


def test_payload_step_on_a_plain_log_with_friction_from_params(recording):
    rec = recording
    result = replay(InertialEKF(load_arm(), [PAYLOAD_JOINT], CONFIG, _identified_friction()),
                    _plain(rec))  # fmt: skip
    mass, truth = result.values[:, 0, 0], rec.body_mass
    settle = settling_time(rec.t, mass, truth, STEP.step_time_s, 0.03)
    assert settle <= 2.0, f"mass within 3 % only {settle:.2f} s after the 2 kg step"
    # gating outside the mass discontinuities (attach at the end of the hold, the step)
    impacts = np.zeros_like(rec.t, dtype=bool)
    for t_jump in STEP.step_times():
        impacts |= np.abs(rec.t - t_jump) < 0.5
    judged = ~(result.skipped | result.calibrating) & ~impacts
    gated = result.gated[judged].mean()
    assert gated < 0.05, f"{100 * gated:.1f} % of the updates gated outside the mass steps"
    bad = [k for k, p in enumerate(result.pi[:, 0]) if not check_consistency(p).consistent]
    assert not bad and not np.isnan(result.values).any()


def test_without_the_friction_model_the_same_log_misleads_the_filter(recording):
    # the cause the friction model removes: joint friction read as payload, or gated away
    rec = recording
    result = replay(InertialEKF(load_arm(), [PAYLOAD_JOINT], CONFIG), _plain(rec))
    mass, truth = result.values[:, 0, 0], rec.body_mass
    late = rec.t >= STEP.duration_s - 1.0
    error = np.mean(np.abs(mass[late] - truth[late]) / truth[late])
    judged = ~(result.skipped | result.calibrating)
    assert error > 0.05 or result.gated[judged].mean() > 0.2


def test_cli_reads_friction_from_params_and_estimates_velocities(recording, tmp_path: Path):
    rec = recording
    names = rec.joint_names
    data = _plain_csv(rec, tmp_path / "plain.csv")
    joints = {
        j: {"viscous": VISCOUS[k], "coulomb": COULOMB[k], "coulomb_deadband": 0.005}
        for k, j in enumerate(names)
    }
    document = {"format": "physid.params/1", "bodies": {}, "joints": joints}
    (tmp_path / "params.json").write_text(json.dumps(document))
    config = tmp_path / "online.yaml"
    config.write_text(
        "calibration_s: 0.5\nacceleration_window: 61\nnominal_params: params.json\n"
        "process_noise: {alpha: 2.0, d: 0.05, s: 0.01, t: 0.005}\n"
        "gating: {probability: 0.9999, release_after_s: 0.05}\n"
    )
    out = tmp_path / "online"
    args = ["online", "--urdf", str(ARM_URDF), "--data", str(data), "--body", PAYLOAD_JOINT,
            "--config", str(config), "--out", str(out), "--quiet"]  # fmt: skip
    args += ["--summary-window", "4.5:"]  # the last 1.6 s, after the step
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["velocities"] == "from positions"
    assert summary["joint_friction"] == "nominal params.json"
    assert 0.0 <= summary["gated_fraction"] < 0.05
    window_mass = summary["bodies"][PAYLOAD_JOINT]["window"]["median"]["mass"]
    assert window_mass == pytest.approx(rec.body_mass[-1], rel=0.03)
    assert f"{PAYLOAD_JOINT}: mass" in result.output  # --quiet keeps the result lines
    assert "does not explain the torques" not in result.output
    # Without the joints' friction the same log misleads the filter: it must say so (issue 28).
    config.write_text(config.read_text().replace("nominal_params: params.json\n", ""))
    args[args.index(str(out))] = str(tmp_path / "no_friction")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3, result.output  # outputs written, status suspect
    summary = json.loads((tmp_path / "no_friction" / "summary.json").read_text())
    assert summary["status"] == "suspect"
    (failed,) = [f for f in summary["findings"] if f["code"] == TORQUES_UNEXPLAINED.code]
    assert failed["severity"] == "suspect" and "does not explain the torques" in failed["message"]
    window_mass = summary["bodies"][PAYLOAD_JOINT]["window"]["median"]["mass"]
    assert abs(window_mass / rec.body_mass[-1] - 1.0) > 0.05  # it failed (3.39 kg, 5.1 % gated)
    assert f"suspect {TORQUES_UNEXPLAINED.code}: the model does not explain" in result.output
    assert "nominal_params" in result.output and "status: suspect" in result.output
    rows = len(summary["measurement_rows"])
    assert summary["nis_median_accepted"] > 3 * rows
    assert failed["numbers"]["nis_median"] == summary["nis_median_accepted"]
    assert failed["numbers"]["largest_nis_median"] == 3 * rows


def test_torques_without_gravity_are_named_as_such(tmp_path: Path):
    """The arm's torque logged without its gravity torque (a simulation without gravity, a
    gravity-compensated command): the filter fails, and the verdict blamed units, wrench signs
    and quaternion order (a PyBullet iiwa run without setGravity: 3e-7 kg for a 0.3 kg body).
    The recording's own check names it first; the log with gravity is not named."""
    import pinocchio as pin

    unloaded = PayloadProfile(hold_s=0.6, sine_s=0.0, square_s=0.0, plateau_s=2.5, step_s=3.0,
                              offset_kg=0.0, step_to_kg=0.0)  # fmt: skip
    rec = simulate_payload_arm(np.random.default_rng(5), unloaded, friction=TRUE_FRICTION)
    model = pin.buildModelFromUrdf(str(ARM_URDF))
    data = model.createData()
    gravity = np.array([pin.computeGeneralizedGravity(model, data, q) for q in rec.q])
    names = rec.joint_names
    header = ",".join(["t", *(f"q_{j}" for j in names), *(f"tau_{j}" for j in names)])
    runs = {}
    for label, tau in (("with", rec.tau), ("without", rec.tau - gravity)):
        path = tmp_path / f"{label}_gravity.csv"
        np.savetxt(path, np.column_stack([rec.t, rec.q, tau]), delimiter=",", header=header,
                   comments="", fmt="%.10g")  # fmt: skip
        runs[label] = physid.online_replay(ARM_URDF, path, [PAYLOAD_JOINT])
    (named,) = with_code(runs["without"].findings, GRAVITY_ABSENT)
    assert runs["without"].status == Status.SUSPECT
    assert "the torques carry none of the URDF's gravity torque" in named.message, named
    assert not with_code(runs["with"].findings, GRAVITY_ABSENT, COLUMN_FIX)


def test_a_torque_column_that_is_nan_in_every_row_is_named(recording, tmp_path: Path):
    """Every sample skipped (a probe's log with one torque column NaN throughout) printed "only 0
    updates ... the estimate is mostly the nominal body" and the nominal mass as a result; it is
    one error line naming the column, and nothing is written."""
    rec = recording
    names = rec.joint_names
    tau = rec.tau.copy()
    tau[:, 1] = np.nan
    data = _plain_csv(rec, tmp_path / "nan_column.csv", tau)
    out = tmp_path / "online"
    result = CliRunner().invoke(
        main,
        [
            "online",
            "--urdf",
            str(ARM_URDF),
            "--data",
            str(data),
            "--body",
            PAYLOAD_JOINT,
            "--out",
            str(out),
            "--quiet",
        ],
    )
    assert result.exit_code == 2, result.output
    assert (f"no sample has every signal the filter reads: tau_{names[1]} NaN in every row"
            in result.output), result.output  # fmt: skip
    assert not out.exists()


def test_a_model_that_does_not_explain_the_torques_is_said_once(recording, tmp_path: Path):
    """Measurement noise set far tighter than the log's (an online probe: 0.1 N m on a noisy
    log), gated measurements never released: every one gated. The status reasons said "the
    model does not explain the torques" twice, the gating reason and the innovation warning
    (whose median innovation of no accepted update read "nan"); once now."""
    data = _plain_csv(recording, tmp_path / "plain.csv")
    config = tmp_path / "tight.yaml"
    config.write_text(
        "acceleration_window: 61\nmeasurement_noise: {joint_torque: 0.01}\n"
        "gating: {release_after_s: 100.0}\n"
    )
    run = physid.online_replay(ARM_URDF, data, [PAYLOAD_JOINT], config=config)
    assert run.status == Status.SUSPECT
    assert not with_code(run.findings, MANY_GATED), run.findings
    (said,) = with_code(run.findings, TORQUES_UNEXPLAINED)
    assert "100.0 % of the measurements were gated" in said.message and "nan" not in said.message
    assert said.numbers["gated_share"] == 1.0 and np.isnan(said.numbers["nis_median"])
    assert run.message.count("does not explain the torques") == 1, run.message
