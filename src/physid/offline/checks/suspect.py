"""Plausibility checks on well-formed but wrong data: one-line reasons for ``status: "suspect"``.

The loader (:mod:`physid.recordings.trajectory`) rejects malformed files. Data that are well formed
but wrong
(time in milliseconds, angles in degrees, torques of the wrong sign or scale, torque columns in
another joint order) still identify *something*, with a good fit, and would come back ``ok``.
These checks compare each recording with what any robot recording and the URDF prior imply:

1. the sample rate of a robot recording lies between 10 Hz and 100 kHz;
2. revolute joint angles stay within one turn, or within the URDF limits, and joints move at
   joint-side speeds; prismatic positions within 10 x the URDF's travel (not millimetres);
3. the measured torques follow the URDF's static gravity torque ``g(q)`` with a common scale
   near 1 on the gravity-loaded joints, each joint following its own gravity torque;
4. the torques follow the motion best on the stamps' own time scale, not on one 0.7x or 1.4x
   as fast or slower (:mod:`physid.offline.checks.time_scale`: a wrong sample time or stamps made up
   at a fixed step);
5. no two joints' torque (or position) columns are the same in every row (one written over
   another), checked before 3 and 4, which would read it as a swap or a flip;
6. the robot moved: a joint's position spans 1 mrad (or 1 mm) in some training recording
   (:func:`motionless_reason`); a still recording gets no torque verdict of its own.

Every threshold is generous: a false alarm on good data costs more trust than a missed oddity
costs results, and none of the checks fires on the shipped KUKA LWR4+ and Staubli TX40
recordings (tests/test_suspect.py). The functions are pure (NumPy, SciPy, Pinocchio).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from physid.offline.checks.column_fixes import best_fix
from physid.offline.checks.lift_load import lift_sign_reason
from physid.offline.checks.time_scale import (
    fit_by_time_scale,
    still_a_clock,
    time_scale_reason,
    time_scale_regressors,
)
from physid.recordings.glitches import (
    MOVING_SPAN,
    NOISE_SPANS,
    motion_noise,
    moves,
    moving_joints,
)
from physid.recordings.trajectory import ANGLE_MARGIN_RAD, Trajectory
from physid.robot.model import RobotModel, is_revolute, position_limits
from physid.signal.butterworth import zero_phase_lowpass

# 1. Time. The slowest robot controllers log at tens of Hz and the fastest drive loops at tens of
# kHz; 10 Hz .. 100 kHz holds all of them with a factor of >= 3 to spare, while time in ms (or
# us) moves a 1 kHz recording to 1 Hz (or 1 mHz), and time in minutes moves it up by 60.
SAMPLE_RATE_RANGE_HZ = (10.0, 100e3)
# Below that range the motion decides: stamps in ms make every speed 1000 x too slow, so a log
# whose fastest joint would then move faster than this [rad/s or m/s] was in seconds after all
# (the real KUKA LWR4+ file 2 kept at every 20th row, 10 Hz: "is t in milliseconds?", status
# suspect, for a fit as good as at 200 Hz; its joints peak at 1.1 rad/s). The bound is the fastest
# joint-side speed of any arm (MAX_JOINT_SPEED_RAD_S, 50 rad/s): at 10 rad/s the real Staubli
# TX40 (5 kHz) with t in ms passed as a 5 Hz log in seconds, status ok, a joint's mass x2.7 (its
# row-to-row speeds, noise included, reach 11.5 rad/s)
MAX_SPEED_IF_MILLISECONDS = 50.0
_SPEED_ROWS = 100_000  # rows of a streamed recording read for its peak speed

# 2. Angles. The loader's margin (ANGLE_MARGIN_RAD, 0.5 rad = 29 deg): a revolute angle beyond
# its bound by more than that is no calibration offset. The bound is one turn (2 pi), or the URDF
# limit where that is wider.
# URDF limits wider than this (or non-finite, or lower >= upper, which is how Pinocchio stores a
# revolute without <limit lower/upper>) mean "unlimited".
_LIMIT_MEANINGFUL_RAD = 100.0
# Joint-side speeds of industrial arms top out near 20 rad/s (fast wrists, 1100 deg/s) and of
# SCARA wrists near 50 rad/s; a 99th-percentile speed above 50 rad/s is motor-side or degrees
# (degrees multiply every speed by 57: 1 rad/s looks like 57 rad/s).
MAX_JOINT_SPEED_RAD_S = 50.0

# 3. Torques. All signals are low-passed at 10 Hz (the content of excitation trajectories lies
# well below it) and sampled at about 10 points per cut-off period.
FILTER_CUTOFF_HZ = 10.0
# A joint is gravity-loaded when the variation of its URDF gravity torque over the recording is
# at least 10 % of the largest joint's: the shoulder and elbow of an arm, not its wrist, whose
# small gravity torque is easily buried by friction and an imperfect CAD centre of mass (the
# KUKA wrist joints measure correlations -0.1 .. 0.2 with theirs).
GRAVITY_JOINT_FRACTION = 0.1
# Below this variation [N m] the gravity torque is zero up to rounding: a horizontal robot.
GRAVITY_FLOOR_NM = 1e-3
# Correlations below this (after friction and inertia are taken out, see
# :func:`gravity_comparison`) mean "does not follow": gravity would explain < 9 % of the variance.
# Real data measure 0.89 .. 1.0 on gravity-loaded joints (>= 0.64 on 3 s thirds of them).
MIN_CORRELATION = 0.3
# A URDF from CAD gets the masses and first moments within tens of percent: a robot-wide scale
# outside [0.5, 2] is a units or drive-gain error (real data measure 0.95 .. 0.98; 3 s thirds of
# them 0.95 .. 1.40).
SCALE_RANGE = (0.5, 2.0)
# Two gravity-loaded joints may disagree through a poor CAD link (each within tens of percent),
# but not 3-fold (real data: largest / smallest per-joint scale <= 1.15; thirds <= 1.6).
JOINT_SCALE_RATIO = 3.0
# A joint read as "out of scale" must follow its gravity torque this well (a unit or gain error
# keeps its shape: the KUKA with one torque in mN m, r 1.00)
SCALED_FOLLOWS = 0.8
# Joint scales within this ratio of each other are one factor on every joint (a unit, a gain):
# the real KUKA file 2 x 0.3 reads 0.27-0.29 x; its URDF gravity subtracted 0.047-0.087 x
ALIKE_SCALES = 1.3
# A joint's gravity torque is "followed by another column" when that column at least halves the
# part that its own column leaves unexplained (1 - r^2), reaching a correlation >= 0.9.
SWAP_IMPROVEMENT = 0.5
SWAP_MIN_CORRELATION = 0.9
# Fewer filtered samples than this carry too little of a motion to judge torques on.
_MIN_SAMPLES = 50
# Independent samples the comparison's signals carry over the recording (2 B T for a band B of
# duration T, Nyquist), less the nuisance columns taken out of each joint: below this many, the
# correlations and scales say nothing. Measured on the real xMate7p's 1 kHz runs, correct
# columns, their first T seconds: 0.5 s (5 left) read joint 3 at -0.40, "columns in another
# order"; 1.3 and 1.5 s (21, 25) still gave false verdicts on two of the three runs (order, a
# 2.1x torque scale); 2 s and more (35+) none. The 95 % band of a zero correlation is +-0.75 at 5,
# +-0.31 at 40.
MIN_DEGREES_OF_FREEDOM = 40
# ... and a robot-wide torque scale read at a weak correlation (r < SCALED_FOLLOWS), this many
WEAK_SCALE_DEGREES_OF_FREEDOM = 4 * MIN_DEGREES_OF_FREEDOM
# Every gravity-loaded joint's torque carries less than this of its URDF gravity torque ...
ABSENT_GRAVITY_SCALE = 0.1
# ... where, at the URDF's scale, the gravity torque would be at least this many times the rest
# of the measured torque (nuisance columns out): gravity compensated before logging
ABSENT_GRAVITY_SHARE = 2.0
_NUISANCE_COLUMNS = 5  # ddq, dq, sign(dq), 1 and the URDF's inertial torque (_nuisance_columns)


@dataclass(frozen=True)
class GravityComparison:
    """How one recording's torques follow the URDF's gravity torque (see
    :func:`gravity_comparison`). Per-joint arrays cover ``joints`` (the gravity-loaded ones)."""

    joints: tuple[str, ...]  # gravity-loaded joints, model order
    scale: float  # robot-wide least-squares scale of measured on gravity torque (stacked)
    correlation: float  # robot-wide correlation of measured and gravity torque (stacked)
    joint_scales: np.ndarray  # (k,) per-joint scales
    joint_correlations: np.ndarray  # (k,) per-joint correlations
    swap: tuple[str, str, float, float] | None  # (joint, other column, r own, r other)
    # (k,) per-joint correlation of the measured torque with the URDF's whole inverse dynamics
    # (derivatives per second), friction and offset taken out: see :func:`_model_correlations`
    model_correlations: np.ndarray | None = None
    # (k,) per-joint norm of the gravity torque over that of the measured torque, both with the
    # nuisance columns taken out: how large the gravity torque at the URDF's scale would be
    gravity_shares: np.ndarray | None = None


def suspect_reasons(model: RobotModel, trajectories: list[Trajectory]) -> list[str]:
    """One-line reasons why these recordings look wrong; empty when nothing looks suspect.

    Per recording (named by its ``source``, else ``recording k``): the time check, the angle
    check, then the torque checks. The torque checks need radians (the gravity torque is
    computed from the angles), so they are skipped for a recording whose angles look like
    degrees: the one reason is the cause, not its consequences. They do not need seconds (see
    :func:`gravity_comparison`), so they still run when the time looks wrong.
    """
    reasons: list[str] = []
    for k, trajectory in enumerate(trajectories):
        name = trajectory.source or f"recording {k + 1}"
        rate = trajectory.sample_rate_hz
        time = time_reason(rate, _peak_speed(trajectory))
        if time is not None:
            reasons.append(f"{name}: {time}")
        time_ok = time is None
        step = step_guess_reason(trajectory)
        if step is not None:
            reasons.append(f"{name}: {step}")
        angles = degrees_reason(model, trajectory, rate if time_ok else None)
        angles = angles or millimetres_reason(model, trajectory)
        if angles is not None:
            reasons.append(f"{name}: {angles}")
            continue
        moving = _span_and_mean(trajectory)[2]
        if not np.any(moving):
            continue  # one still pose: the torque checks would correlate noise (a static pose
            # of several, or motionless_reason's verdict when all are)
        stop = limit_contact_reason(model, trajectory)
        if stop is not None:  # the torque checks would read the stop's torque as a wrong column
            reasons.append(f"{name}: {stop}")
            continue
        dead = dead_encoder_reason(model, trajectory, moving)
        if dead is not None:  # the torque checks would read it as columns in another order
            reasons.append(f"{name}: {dead}")
            continue
        copied = copied_column_reason(trajectory)
        if copied is not None:  # the torque checks would read it as a swap or a flip
            reasons.append(f"{name}: {copied}")
            continue
        torque = torque_reasons(model, trajectory)
        reasons.extend(f"{name}: {reason}" for reason in torque)
        lift = lift_sign_reason(model, trajectory)  # a weight no gravity comparison sees
        if lift is not None:
            reasons.append(f"{name}: {lift}")
        scale = None if torque or not time_ok else timeline_reason(model, trajectory)
        if scale is not None:
            reasons.append(f"{name}: {scale}")
    return reasons


# A joint beyond its URDF position limit in at least this share of the rows ...
LIMIT_CONTACT_SHARE = 0.01
# ... by more than this at its deepest [rad or m]: a controller's software limit holds a joint
# within an encoder tick or two of it; a mechanical stop or a simulator's joint limit (a soft
# constraint) lets it in (a MuJoCo Panda pressed to its 4th joint's limit: 4.8 mrad, 8.5 % of
# the rows). On every real recording we have, no joint comes within 49 mrad of its limit.
LIMIT_CONTACT_DEPTH = 1e-3
# ... and less than this (a hard stop a few degrees beyond the URDF's software limit; deeper is
# another convention, not a stop; prismatic joints: 5 % of their range)
LIMIT_CONTACT_CROSSED_RAD = 0.1


def limit_contact_reason(model: RobotModel, trajectory: Trajectory) -> str | None:
    """A reason when joints are pressed against their URDF position limits: in at least
    :data:`LIMIT_CONTACT_SHARE` of the rows beyond the limit, by up to more than
    :data:`LIMIT_CONTACT_DEPTH`. A stop's torque is not in the model: the fit absorbs it into
    the joint's friction and offset (a 37 N m offset on the MuJoCo Panda, held-out error 94 %),
    and the torque checks would read it as a wrong column ("columns in another order?")."""
    q = np.asarray(trajectory.q, float)
    pin_model = model.pin_model
    found = []
    for k, joint in enumerate(trajectory.joint_names):
        if not pin_model.existJointName(joint):
            continue
        limits = position_limits(pin_model, joint)
        if limits is None:
            continue
        lower, upper = limits
        beyond = np.maximum(q[:, k] - upper, lower - q[:, k])
        share = float(np.mean(beyond > 0.0))
        depth = float(beyond.max())
        revolute = is_revolute(model, joint)
        # a stop is met, not crossed: a joint far beyond its limits is logged in another
        # convention (another zero, degrees), which the angle checks name
        crossed = LIMIT_CONTACT_CROSSED_RAD if revolute else 0.05 * (upper - lower)
        if share < LIMIT_CONTACT_SHARE or not LIMIT_CONTACT_DEPTH < depth < crossed:
            continue
        side = upper if np.mean(q[:, k] > upper) >= np.mean(q[:, k] < lower) else lower
        unit = "rad" if revolute else "m"
        found.append(f"'{joint}' beyond its limit {side:.4g} {unit} in {100 * share:.2g} % of "
                     f"the rows (by up to {depth:.2g} {unit})")  # fmt: skip
    if not found:
        return None
    return (
        f"joints pressed against their URDF position limits: {', '.join(found)}: a stop (or a "
        "simulator's joint limit) then carries torque the model does not have, which the fit "
        "would take for the joint's friction and offset; leave those stretches out of the "
        "recording, or give the limits the robot has"
    )


# A still joint's torque follows the URDF's model of the others' motion (gravity and inertial
# torque, each at a free scale, and an offset): held still by its controller on the simulated arm,
# all but 0.2-1 % of the largest joint's torque variation. A joint whose position stopped while it
# moved leaves its own motion's torque unexplained: real UR10e, KUKA LWR4+ and xMate7p logs with
# one joint's positions frozen left 22-39 % (and 57-94 % of that joint's own variation)
DEAD_ENCODER_SHARE = 0.1  # of the largest joint's torque std, unexplained on a still joint
DEAD_ENCODER_OWN = 0.5  # ... and of the still joint's own torque std


def dead_encoder_reason(
    model: RobotModel, trajectory: Trajectory, moving: np.ndarray
) -> str | None:
    """A reason when a joint stays within its position noise while others move
    (``moving``: :func:`~physid.recordings.glitches.moving_joints`) but its torque varies in
    ways the URDF's model of the recorded motion cannot give it (:data:`DEAD_ENCODER_SHARE`,
    :data:`DEAD_ENCODER_OWN`): a position sensor that stopped. Read on the torque checks'
    signals with derivatives per row (free scales: whatever unit t is in). Measured on the real
    UR10e with its elbow's positions frozen: status ok, 30.6 % held out (clean 6.4 %), the
    shoulder link 4.5 x its mass; on the KUKA LWR4+ the verdict read it as columns in another
    order."""
    still = [j for j in np.flatnonzero(~np.asarray(moving, bool)) if model.fitted[j]]
    if not still:
        return None
    signals = _check_signals(trajectory, columns_removed=3)
    if signals is None:
        return None
    q, tau, _ = signals
    dq = np.gradient(q, axis=0)
    gravity, inertial = _prior_torques(model, q, dq, np.gradient(dq, axis=0))
    spread = tau.std(axis=0)
    largest = float(np.max(np.where(model.fitted, spread, 0.0)))
    found = []
    for j in still:
        columns = _unit_columns([gravity[:, j], inertial[:, j], np.ones(len(q))])
        unexplained = float(np.std(_residual(columns, tau[:, j] - tau[:, j].mean())))
        if unexplained > DEAD_ENCODER_SHARE * largest and unexplained > (
            DEAD_ENCODER_OWN * spread[j]
        ):
            joint = model.joint_names[j]
            unit = "N m" if is_revolute(model, joint) else "N"
            found.append(
                f"'{joint}' (span {np.ptp(trajectory.q[:, j]):.2g}) yet its torque varies by "
                f"{spread[j]:.3g} {unit} RMS, {unexplained:.3g} {unit} of it unlike anything "
                "the URDF's model of the recorded motion gives that joint"
            )
    if not found:
        return None
    return (
        "a joint's position stays within its sensor noise while the others move: "
        + "; ".join(found)
        + ": a position sensor that stopped (a dead encoder), a position column that is not "
        "this joint's, or a joint held still by a brake or by static friction its torque did "
        "not overcome (a simulator's default joint motors: PyBullet's hold every joint against "
        "up to 1 / time step N m until disabled with force 0)?"
    )


# A joint whose position spans less than this [rad or m] over every recording did not move (the
# bound of the fit's own still-joint rule, physid.offline.choose.training.still_joints, and of the
# loader's stuck-torque check)
STILL_SPAN = MOVING_SPAN


def motionless_reason(model: RobotModel, trajectories: list[Trajectory]) -> str | None:
    """A reason when no joint moved in any of the (training) recordings, else None.

    A robot at rest shows its static torques at one pose: a handful of gravity combinations,
    which the offsets and the free inertias fit to the noise while every mass is left to the
    prior's trade-offs. Measured on the demo arm held within 0.25 mrad for 20 s: status
    "suspect" for a reason that guessed ("joint_3 torque does not follow its gravity torque
    ... columns in another order?"), a 11 kg arm (URDF 30.6 kg) at 0.96 % training error.
    Several recordings, each at its own still pose, are a static identification and pass."""
    if not trajectories:
        return None
    spans, means, moving = zip(*(_span_and_mean(t) for t in trajectories), strict=True)
    spans = np.max(spans, axis=0)
    if np.any(moving) or np.any(np.ptp(means, axis=0) >= POSE_STEP):
        return None
    listed = ", ".join(f"'{j}' {s:.2g}" for j, s in zip(model.joint_names, spans, strict=True))
    return (
        f"the robot did not move: every joint's position spans less than {STILL_SPAN:g} rad "
        f"(or m), or less than {NOISE_SPANS:g} x its noise, in every recording ({listed}); at "
        "rest the torques show one pose's static "
        "load, not the dynamics: record an exciting motion (physid excite designs one)"
    )


_SPAN_ROWS = 100_000  # rows of a streamed recording read at a time for its span

# Still recordings whose poses differ by this much [rad or m] on some joint are a static
# identification (several gravity loads), not one pose recorded twice
POSE_STEP = 0.05


def _span_and_mean(recording) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # noqa: ANN001
    """Per joint, the span and the mean of a recording's positions, and whether it moves
    (:func:`~physid.recordings.glitches.moving_joints`: beyond the still bound and its noise):
    of every row, read block by block for one streamed from disk (its preview, the first rows,
    may be a rest before the motion; the noise is read on the first block)."""
    positions = recording.q
    if isinstance(positions, np.ndarray):
        span = np.ptp(positions, axis=0)
        return span, np.mean(positions, axis=0), moving_joints(positions)
    low = high = total = noise = None
    for a in range(0, recording.n_samples, _SPAN_ROWS):
        q = np.asarray(positions[a : a + _SPAN_ROWS], float)
        low = q.min(axis=0) if low is None else np.minimum(low, q.min(axis=0))
        high = q.max(axis=0) if high is None else np.maximum(high, q.max(axis=0))
        total = q.sum(axis=0) + (0.0 if total is None else total)
        noise = motion_noise(q) if noise is None else noise
    span = high - low
    return span, total / recording.n_samples, moves(span, noise)


TIMELINE_ROWS = 1500  # rows of the time-scale fit: its question has a handful of answers


def timeline_reason(model: RobotModel, trajectory: Trajectory) -> str | None:
    """A reason when the torques follow the motion clearly better on another time scale than
    the stamps' (:mod:`physid.offline.checks.time_scale`), judged on the signals of
    :func:`gravity_comparison` (low-passed, about ten samples per cut-off period) with
    derivatives per second; None for recordings too short to judge."""
    signals = _check_signals(trajectory, columns_removed=0)
    if signals is None:
        return None
    q, tau, seconds_per_row = signals
    dq = np.gradient(q, seconds_per_row, axis=0)
    ddq = np.gradient(dq, seconds_per_row, axis=0)
    rows = np.unique(np.linspace(0, len(q) - 1, min(len(q), TIMELINE_ROWS)).astype(int))
    q, dq, ddq, tau = q[rows], dq[rows], ddq[rows], tau[rows]
    regressors = time_scale_regressors(model, q, dq, ddq)  # shared by the fits below
    reason = time_scale_reason(fit_by_time_scale(model, q, dq, ddq, tau, regressors=regressors))
    fitted = np.flatnonzero(model.fitted)
    if reason is None or fitted.size < 3:
        return reason
    # a clock runs in every joint's torque, a column of another scale in one: the evidence must
    # stand without any one joint (a TIAGo-like lift's force logged x0.05 read "20 % better on a
    # longer timeline" of correct stamps, and hid the joint-scale check that names it)
    for left_out in fitted:
        joints = np.asarray(model.fitted, bool).copy()
        joints[left_out] = False
        if not still_a_clock(fit_by_time_scale(model, q, dq, ddq, tau, joints, regressors)):
            return None
    return reason


UNEXPLAINED_ERROR = 0.5  # relative error of the fit on its own (filtered) data
UNEXPLAINED_RAW_ERROR = 0.9  # ... on the raw torque: the model explains < 19 % of its variance


def unexplained_torque_reason(
    filtered_relative_error: float, raw_relative_error: float = 0.0, cutoff_hz: float | None = None
) -> str | None:
    """A reason when the identified model explains little of the torques it was fitted to.

    A rigid-body model with friction explains the low-passed torque of a real arm to a few
    percent (TX40 5 %, KUKA 3 %) and the raw torque to tens of percent; pure noise, torque
    columns of another machine or a sensor that was off leave a relative error near 100 % that
    least squares still "fits" with every base parameter looking identifiable. So does torque
    that varies mostly faster than the positions can follow (a 100 Hz controller chattering at
    its Nyquist rate: 97.7 % raw training error, 4 s simulated at 100 Hz): the filtered fit then
    looks fine while the model predicts almost nothing of what was measured.
    """
    filtered_ok = np.isfinite(filtered_relative_error) and filtered_relative_error <= (
        UNEXPLAINED_ERROR
    )
    raw_ok = np.isfinite(raw_relative_error) and raw_relative_error <= UNEXPLAINED_RAW_ERROR
    if filtered_ok and raw_ok:
        return None
    band = "" if cutoff_hz is None else f" below {cutoff_hz:.3g} Hz"
    return (
        f"the identified model leaves {100 * raw_relative_error:.0f} % of the raw training torque "
        f"unexplained ({100 * filtered_relative_error:.0f} % of the torque{band} it was fitted "
        "to): the torque is mostly noise, varies faster than the motion, or is not this "
        "robot's"
    )


def _peak_speed(recording) -> float:  # noqa: ANN001
    """The fastest joint speed of a recording on its own stamps [rad/s or m/s]: the 99th
    percentile of |row-to-row increment / stamp step| (the first rows of one streamed)."""
    q = np.asarray(recording.q[:_SPEED_ROWS], float)
    t = np.asarray(recording.t[:_SPEED_ROWS], float)
    if len(t) < 3:
        return float("nan")
    speeds = np.abs(np.diff(q, axis=0)) / np.diff(t)[:, None]
    return float(np.max(np.percentile(speeds, 99.0, axis=0)))


def step_guess_reason(trajectory: Trajectory) -> str | None:
    """A reason when reading found a position step whose right side the torques could not tell
    (:mod:`physid.recordings.steps`: the rows at the longest piece's offset were kept, a
    guess), else None."""
    found = (getattr(trajectory, "row_repairs", None) or {}).get("position_steps")
    if not found or found.get("frame") != "guessed":
        return None
    joints = sorted({joint for step in found["steps"] for joint in step})
    return (
        f"the positions of {', '.join(joints)} step during the recording (an encoder reset or "
        "glitch) and the torques cannot tell which side is right: the rows at the longest "
        "piece's offset were kept, a guess; check the encoder, or give the sound part alone"
    )


def time_reason(rate_hz: float, peak_speed: float = float("nan")) -> str | None:
    """A reason when the median sample rate is not that of a robot recording (10 Hz..100 kHz);
    below 10 Hz only when stamps in milliseconds would give plausible speeds, ``peak_speed``
    [rad/s or m/s] x 1000 at most :data:`MAX_SPEED_IF_MILLISECONDS` (NaN: not known)."""
    if not np.isfinite(rate_hz):
        return "time stamps do not increase: is t a time column in seconds?"
    low, high = SAMPLE_RATE_RANGE_HZ
    if rate_hz < low and not 1e3 * peak_speed > MAX_SPEED_IF_MILLISECONDS:
        return (
            f"sample rate {rate_hz:.3g} Hz is implausible for a robot recording: "
            "is t in milliseconds?"
        )
    if rate_hz > high:
        return (
            f"sample rate {rate_hz:.3g} Hz is implausible for a robot recording: "
            "is t in seconds (not minutes or hours)?"
        )
    return None


def degrees_reason(model: RobotModel, trajectory: Trajectory, rate_hz: float | None) -> str | None:
    """A reason when a revolute joint's angles look like degrees, else None.

    A joint is flagged when its peak ``|q|`` exceeds its bound by more than 0.5 rad, the bound
    being one turn, or the URDF limit where that is finite and wider (multi-turn joints); or,
    when ``rate_hz`` is given (time trusted), when its 99th-percentile speed exceeds 50 rad/s.
    A joint without URDF limits is only flagged on both counts, since the loader lets a user
    record several turns on purpose (``allow_large_angles``).
    """
    speeds = None
    if rate_hz is not None and trajectory.n_samples > _MIN_SAMPLES:
        q = _lowpass(np.asarray(trajectory.q, float), rate_hz)
        speeds = np.percentile(np.abs(np.gradient(q, axis=0)) * rate_hz, 99.0, axis=0)
    for k, joint in enumerate(model.joint_names):
        if not is_revolute(model, joint):
            continue
        peak = float(np.max(np.abs(trajectory.q[:, k])))
        limit = _joint_limit(model, joint)
        too_far = peak > max(2.0 * np.pi, limit or 0.0) + ANGLE_MARGIN_RAD
        too_fast = speeds is not None and speeds[k] > MAX_JOINT_SPEED_RAD_S
        if limit is None and too_far and (speeds is None or too_fast):
            speed = "" if speeds is None else f" at {speeds[k]:.3g} rad/s"
            return (
                f"joint '{joint}' positions reach {peak:.4g} rad (more than a turn){speed}: "
                "are they in degrees? (then set angle_unit: degrees in the config)"
            )
        if limit is not None and too_far:
            return (
                f"joint '{joint}' positions reach {peak:.4g}, {peak / limit:.3g} x its URDF limit "
                f"of {limit:.3g} rad: are they in degrees? (then set angle_unit: degrees in the "
                "config)"
            )
        if limit is not None and too_fast:
            return (
                f"joint '{joint}' moves at {speeds[k]:.3g} rad/s, implausible for a robot joint: "
                "are its positions in degrees? (then set angle_unit: degrees in the config)"
            )
    return None


# A prismatic joint's position this many times its URDF travel is in another unit; without URDF
# limits, farther than any robot's axis travels [m]
LENGTH_FACTOR = 10.0
MAX_TRAVEL_M = 50.0


def millimetres_reason(model: RobotModel, trajectory: Trajectory) -> str | None:
    """A reason when a prismatic joint's positions look like millimetres, else None.

    The arm of benchmarks/independent_sim.py (arm5p) with its prismatic joint logged in mm was
    told "torque scale implausible: 0.013 x the URDF's gravity torque" (the bodies beyond the
    joint 1000 x farther out): the cause is the positions, named here with the URDF's travel,
    and the torque checks, which would read its consequences, are skipped."""
    for k, joint in enumerate(model.joint_names):
        if is_revolute(model, joint):
            continue
        peak = float(np.max(np.abs(trajectory.q[:, k])))
        limit = _joint_limit(model, joint)
        if limit is not None and peak > LENGTH_FACTOR * limit:
            return (
                f"prismatic joint '{joint}' positions reach {peak:.4g}, {peak / limit:.3g} x its "
                f"URDF limit of {limit:.3g} m: are they in millimetres? (convert them to metres)"
            )
        if limit is None and peak > MAX_TRAVEL_M:
            return (
                f"prismatic joint '{joint}' positions reach {peak:.4g} m, farther than a robot "
                "axis travels: are they in millimetres? (convert them to metres)"
            )
    return None


def copied_column_reason(trajectory: Trajectory) -> str | None:
    """A reason when two joints' torque (or position) columns hold the same value in every row
    while they vary: one column written over another (two sensors never agree to the bit on
    every sample; the quirk hunt's copied wrist torque doubled the held-out error with no
    specific warning). Columns that never vary are left to the other checks."""
    for label, values in (("torque", trajectory.tau), ("position", trajectory.q)):
        values = np.asarray(values, float)
        varying = [k for k in range(values.shape[1]) if np.ptp(values[:, k]) > 0.0]
        for i, a in enumerate(varying):
            for b in varying[i + 1 :]:
                if np.array_equal(values[:, a], values[:, b]):
                    names = trajectory.joint_names
                    return (
                        f"the {label} columns of '{names[a]}' and '{names[b]}' are the same in "
                        f"every row ({len(values)} rows): one was written over the other"
                    )
    return None


def torque_reasons(model: RobotModel, trajectory: Trajectory) -> list[str]:
    """Reasons from :func:`gravity_comparison`: sign, scale and column order of the torques.

    - order, first: a gravity-loaded joint whose gravity torque another column follows far
      better than its own (:data:`SWAP_IMPROVEMENT`). Checked before the sign because two
      swapped columns can both run against their gravity torques, which looks like a flip,
      whereas after a true flip each column still follows its own gravity torque best;
    - faint gravity, first of all: every gravity-loaded joint's scale within +-0.5 while the
      robot-wide torque follows gravity's shape (|r| >= 0.3): gravity already subtracted, or a
      unit error (:func:`_faint_gravity_reason`; not a flip, which is -1 x joint by joint);
    - sign: the robot-wide scale and correlation are negative (r <= -0.3) and so are most
      gravity-loaded joints' scales: a sign convention flipped for the whole robot (not where
      the URDF's whole inverse dynamics follows every loaded joint's torque);
    - order, then (at most one reason): a gravity-loaded joint that does not follow its gravity
      torque (r < 0.3), else the scales of joints that follow theirs (r >= 0.8) more than 3 x
      apart;
    - scale: the robot-wide scale lies outside [0.5, 2] while gravity is followed (r >= 0.3;
      below r 0.8 only on recordings of :data:`WEAK_SCALE_DEGREES_OF_FREEDOM` independent
      samples) and the joints agree (no order reason): a units or drive-gain error is
      robot-wide, whereas a mixed-up column drags the robot-wide scale too and is reported as
      such;
    - none of these when no joint carries a significant gravity torque (a horizontal robot).
    """
    comparison = gravity_comparison(model, trajectory)
    if comparison is None:
        return []
    constant = _constant_reason(trajectory, comparison)
    if constant is not None:
        return [constant]
    absent = _absent_gravity_reason(comparison)
    if absent is not None:
        return [absent]
    s, r = comparison.scale, comparison.correlation
    order = _order_reason(comparison)
    negative = int(np.sum(comparison.joint_scales < 0.0))
    # where the URDF's whole inverse dynamics follows every loaded joint's torque, the torques
    # are the joints' own with the right sign: a gravity torque run against by a motion driven
    # faster than the robot swings is no flip (3 s of the DFKI pendulum: gravity r -0.64, the
    # whole model's 0.49 / 0.98)
    own = comparison.model_correlations is not None and bool(
        np.all(comparison.model_correlations >= MIN_CORRELATION)
    )
    flipped = (s < 0.0 and r <= -MIN_CORRELATION and 2 * negative > len(comparison.joints)
               and not own)  # fmt: skip
    faint = None
    # an exchange of two columns is named as such first (with a scale error beside it, the
    # joints' scales also take both signs, which the faint rule needs to be one)
    if comparison.swap is None and not (r < 0.0 and own):
        faint = _faint_gravity_reason(comparison, trajectory)
    if faint is not None:
        return [faint]
    if order is not None or flipped:
        # what the comparison sees fits several mistakes: name the one fix that repairs it
        fix = best_fix(model, trajectory, comparison.joints, comparison.joint_correlations,
                       _joint_correlations)  # fmt: skip
        if fix is not None:
            return [fix]
    if order is not None and comparison.swap is not None:
        return [order]  # a sign flip leaves no other column to follow better
    if flipped:
        return [
            "torque sign looks flipped: measured torques are anti-correlated with the URDF's "
            f"gravity torque (scale {s:.2g}, correlation {r:.2f})"
        ]
    if order is not None:
        return [order]
    low, high = SCALE_RANGE
    if r >= MIN_CORRELATION and not _weak(r, trajectory) and not low <= s <= high:
        scales = comparison.joint_scales
        if np.all(scales > 0.0) and np.max(scales) <= ALIKE_SCALES * np.min(scales):
            return [
                f"torque scale implausible: measured torques are {s:.2g} x the URDF's gravity "
                f"torque on every gravity-loaded joint alike ({np.min(scales):.3g} to "
                f"{np.max(scales):.3g} x): one unit or one gain for them all (or a URDF in other "
                "units); if the columns are currents or a drive's raw units, give them as "
                "currents i_<joint> (LeRobot: observation.current) with drive_gains: the URDF's "
                f"gravity puts them near {1.0 / s:.3g} N m per unit, and a run with a known "
                "payload measures them (drive_gains: identify with --loaded-data)"
            ]
        return [
            f"torque scale implausible: measured torques are {s:.2g} x the URDF's gravity torque "
            "(torques in other units or through wrong drive gains, or a URDF whose masses are "
            "not the robot's: in other units, or without a tool it carries)"
        ]
    return []


# Every gravity-loaded joint's torque scale within this factor of the others is one unit or gain
# for all (a probe's LeRobot arm, effort in mA-like units: 585, 591 and 595 x; the real KUKA
# LWR4+ x590: 539 to 562 x); a tool the URDF leaves out loads the joints unlike (the KUKA with a
# 20 kg sphere at its flange: 4.1 x overall, not alike).
ALIKE_SCALES = 1.3


def _weak(r: float, trajectory: Trajectory) -> bool:
    """Whether a scale read at correlation ``r`` rests on too few samples to judge: 3 s
    stretches of the correct DFKI pendulum read "0.18 x" (r 0.32) and 5 s "0.41 x", its whole
    10 s files 0.57 x, and 5.7 x with the torques x 10 (r 0.72); a unit or gain error keeps the
    torques' shape."""
    degrees_of_freedom = _independent_samples(trajectory) - _NUISANCE_COLUMNS
    return abs(r) < SCALED_FOLLOWS and degrees_of_freedom < WEAK_SCALE_DEGREES_OF_FREEDOM


def _faint_gravity_reason(comparison: GravityComparison, trajectory: Trajectory) -> str | None:
    """A reason when every gravity-loaded joint's torque carries less than half of its URDF
    gravity torque, all with one sign, while the robot-wide torque follows its shape (|r| >=
    0.3).

    Gravity already subtracted looks like this: an external-torque estimate or a gravity-
    compensated signal logged for the joint torque leaves the URDF's gravity error, whose sign
    is that of the URDF's mass error and whose size differs joint by joint. The KUKA LWR4+ file
    2 with the URDF's gravity torque taken out was told "torque sign looks flipped" (scale
    -0.049, r -0.94; -0.087 to -0.047 x per joint). A unit or gain error scales every joint
    alike (x 0.3: 0.27 to 0.29 x), and with the sign also flipped (x -0.3) it is said so; a
    URDF in grams read as kg looks alike too, and is named beside them."""
    scales, s, r = comparison.joint_scales, comparison.scale, comparison.correlation
    faint = bool(np.all(np.abs(scales) < SCALE_RANGE[0]))
    one_sign = bool(np.all(scales > 0.0) or np.all(scales < 0.0))
    if not (faint and one_sign) or abs(r) < MIN_CORRELATION or _weak(r, trajectory):
        return None
    spread = float(np.max(np.abs(scales)) / max(float(np.min(np.abs(scales))), 1e-300))
    alike = spread < ALIKE_SCALES  # one factor on every joint: a unit, a gain, a sign
    numbers = (
        f"measured torques are {s:.2g} x the URDF's gravity torque (correlation {r:.2f}; "
        f"{np.min(scales):.2g} to {np.max(scales):.2g} x per gravity-loaded joint)"
    )
    if alike and r <= -SCALED_FOLLOWS:
        return (f"torque sign looks flipped and its scale off: {numbers}: a sign convention and "
                "a unit or drive gain, or a URDF whose masses are not the robot's")  # fmt: skip
    subtracted = ("gravity already subtracted (an external-torque estimate or a gravity-"
                  "compensated signal logged instead of the joint torque)")  # fmt: skip
    units = "torques in other units or through wrong drive gains"
    urdf = "a URDF whose masses are not the robot's"
    causes = (units, urdf, subtracted) if alike else (subtracted, units, urdf)
    return f"torque scale implausible: {numbers}: {causes[0]}, {causes[1]}, or {causes[2]}"


def loaded_robot_reasons(
    model: RobotModel, trajectories: list[Trajectory], *, absent_gravity: bool = True
) -> list[str]:
    """The checks of :func:`suspect_reasons` that hold for recordings of a robot that may carry
    a load the URDF lacks (``physid online``, the loaded runs of ``physid payload``), each
    recording's gravity comparison made once. A payload only adds gravity torque, so the scale
    checks, which a heavy payload would trip, are not run. First, with ``absent_gravity``, the
    recordings whose torques carry none of the URDF's gravity torque
    (:func:`_absent_gravity_reason`); then, of the others, a column mistake named by its fix
    (:func:`~.column_fixes.best_fix`: a position or torque negated, off by a quarter or half
    turn, an axis reversed, two columns exchanged). Each fix is judged by the correlations of
    the joints' torques with their gravity torques, which a payload scales more than it
    reshapes, and only a fix after which every gravity-loaded joint follows its gravity torque
    is named. A load that does reshape a joint's gravity torque leaves no fix named
    (``examples/online``'s arm: 4.9 kg on its 0.3 kg last body left its 4th joint at r 0.10
    whatever the columns, and its 2nd joint's flipped torque unnamed, as before). Measured on
    the real UR10e's loaded run (2.805 kg at the flange): as logged none; with the elbow's
    current negated ``physid online`` said "the measured torques read 2.58 x the nominal
    model's ...: a drive gain or torque unit that is off", and with the shoulder's and elbow's
    currents exchanged "-0.956 x"."""
    absent, fixes = [], []
    for k, trajectory in enumerate(trajectories):
        comparison = gravity_comparison(model, trajectory)
        if comparison is None:
            continue
        name = trajectory.source or f"recording {k + 1}"
        reason = _absent_gravity_reason(comparison)
        if reason is not None:
            absent += [f"{name}: {reason}"] if absent_gravity else []
            continue
        fix = best_fix(model, trajectory, comparison.joints, comparison.joint_correlations,
                       _joint_correlations)  # fmt: skip
        if fix is not None:
            fixes.append(f"{name}: {fix}")
    return absent + fixes


def _absent_gravity_reason(comparison: GravityComparison) -> str | None:
    """A reason when the torques carry none of the gravity torque the URDF puts on them: every
    gravity-loaded joint reads less than :data:`ABSENT_GRAVITY_SCALE` of it and does not follow
    its shape (|r| < :data:`MIN_CORRELATION`), where it would be at least
    :data:`ABSENT_GRAVITY_SHARE` times the rest of the measured torque.

    Gravity compensated exactly before the torque was logged looks like this, which
    :func:`_faint_gravity_reason` cannot see (nothing of gravity's shape is left to correlate):
    a simulator's gravity compensation (MuJoCo's ``gravcomp``: the actuators then carry no
    gravity), a controller's torque command net of its gravity model. Measured on MuJoCo
    simulations of the Panda and the UR5 with ``gravcomp`` (20 s, 1 kHz): scales -0.006 to
    0.003 where the gravity torque is 4-22 x the measured torque; status ``ok``, a moving mass
    0.54-0.63 x the URDF's. Every real recording we have reads 0.86-1.37 x, except one joint of
    the DFKI pendulum driven faster than it swings (-0.16 x at a share of 1.04)."""
    shares = comparison.gravity_shares
    scales = comparison.joint_scales
    if shares is None or not np.all(np.abs(scales) < ABSENT_GRAVITY_SCALE):
        return None
    # a torque that follows gravity's shape at a small scale is a unit or a gain (x 0.1 reads
    # 0.099 x at a share of 10, r 0.99): the scale rules name it
    if not np.all(np.abs(comparison.joint_correlations) < MIN_CORRELATION):
        return None
    if float(np.max(shares)) < ABSENT_GRAVITY_SHARE:
        return None
    per_joint = ", ".join(f"'{joint}' {scale:.2g} x" for joint, scale
                          in zip(comparison.joints, scales, strict=True))  # fmt: skip
    return (
        f"the torques carry none of the URDF's gravity torque (measured / URDF gravity torque: "
        f"{per_joint}; at the URDF's scale it would be {np.max(shares):.2g} x the rest of the "
        "measured torque): gravity compensated before the torque was logged (a simulator's "
        "gravity compensation such as MuJoCo's gravcomp, or a torque command net of its "
        "gravity model), a simulation run without gravity (PyBullet's default until "
        "setGravity), or a gravity direction that is not the URDF's; the masses fitted to "
        "these torques are not the robot's"
    )


def _joint_correlations(
    model: RobotModel, trajectory: Trajectory, joints: tuple[str, ...]
) -> np.ndarray | None:
    """Each of ``joints``' torque correlation with its gravity torque (None: the recording
    cannot be judged)."""
    comparison = gravity_comparison(model, trajectory, diagnostics=False, loaded_joints=joints)
    return None if comparison is None else comparison.joint_correlations


def _constant_reason(trajectory: Trajectory, comparison: GravityComparison) -> str | None:
    """Gravity-loaded joints whose torque column holds one value in every row: a sensor that
    was not logged (its correlation with anything is undefined: "does not follow its gravity
    torque, correlation 0.00" said less than this)."""
    tau = np.asarray(trajectory.tau, float)
    names = list(trajectory.joint_names)
    constant = [(joint, float(tau[0, names.index(joint)])) for joint in comparison.joints
                if np.ptp(tau[:, names.index(joint)]) == 0.0]  # fmt: skip
    if not constant:
        return None
    listed = ", ".join(f"'{joint}' ({value:g})" for joint, value in constant)
    return (
        f"the torque of {listed} is the same in every row although the URDF's gravity torque on "
        "it varies with the pose: a torque that was not logged (or a passive joint, whose torque "
        "is truly that: then this is not suspect)"
    )


def _order_reason(comparison: GravityComparison) -> str | None:
    """The strongest sign that torque columns are not in the model's joint order, if any."""
    prefix = "joint columns may be in another order"
    if comparison.swap is not None:
        joint, other, r_own, r_other = comparison.swap
        return (
            f"{prefix}: the gravity torque of '{joint}' is followed by the torque of '{other}' "
            f"(correlation {r_other:.2f}), not by its own ({r_own:.2f})"
        )
    worst: tuple[float, str] | None = None
    explained = comparison.model_correlations
    if explained is None:
        explained = np.full(len(comparison.joints), -np.inf)
    correlations = comparison.joint_correlations
    for k, (joint, r_j, r_model) in enumerate(
        zip(comparison.joints, correlations, explained, strict=True)
    ):
        if r_j >= MIN_CORRELATION or (worst is not None and worst[0] <= r_j):
            continue
        if r_model >= MIN_CORRELATION:  # its torque is its own: the whole model follows it
            continue
        text = f"joint '{joint}' torque does not follow its gravity torque (correlation {r_j:.2f})"
        if r_j <= -MIN_CORRELATION:
            text = f"{prefix}: {text}: columns swapped, or this joint's sign flipped"
        else:
            # no other column follows it either (else a swap is named): nothing says "order";
            # a 3 s stretch of a correct UR10e run, the shoulder moving one way at constant
            # speed, read 0.14 (its torque flat while its gravity torque rose 11 N m)
            others = ", ".join(
                f"'{j}' {correlations[i]:.2f}" for i, j in enumerate(comparison.joints) if i != k
            )
            text += (
                ", and no exchange of two columns explains it"
                + (f" (the other gravity-loaded joints follow theirs: {others})" if others else "")
                + ": not this joint's torque (columns in another order?), or a stretch of motion"
                " too short or too one-sided to judge"
            )
        worst = (r_j, text)
    if worst is not None:
        return worst[1]
    # the scales of joints that follow their gravity torque (one that does not, whose whole
    # model follows it instead, has no gravity scale to speak of: 3 s stretches of the DFKI
    # pendulum read "0.048 x" at r 0.05 and "0.23 x" at r 0.39)
    following = comparison.joint_correlations >= SCALED_FOLLOWS
    scales = comparison.joint_scales[following]
    if len(scales) > 1 and scales.min() > 0.0 and scales.max() > JOINT_SCALE_RATIO * scales.min():
        odd = _odd_scale_reason(comparison)
        if odd is not None:
            return odd
        joints = [j for j, f in zip(comparison.joints, following, strict=True) if f]
        low, high = int(np.argmin(scales)), int(np.argmax(scales))
        return (
            f"{prefix}: the torques of '{joints[low]}' and '{joints[high]}' "
            f"are {scales[low]:.2g} x and {scales[high]:.2g} x their gravity torques "
            "(a robot's joints agree within tens of percent)"
        )
    return None


def _odd_scale_reason(comparison: GravityComparison) -> str | None:
    """The gravity-loaded joints whose torque alone is out of scale, when the others read a
    plausible scale (:data:`SCALE_RANGE`): one column in another unit (N mm or mN m read 1000 x),
    on the motor side of a gear, or through a wrong drive gain. Moving columns around changes
    no joint's scale by a round factor, so "in another order" would send the user to the
    wrong place (measured: the real KUKA with one joint's torque in mN m read 946 x while the
    others read 0.92-0.95 x, and was told its columns may be in another order)."""
    scales = comparison.joint_scales
    low, high = SCALE_RANGE
    plausible = (scales >= low) & (scales <= high)
    if not plausible.any() or plausible.all():
        return None
    # a column in another unit still follows its gravity torque; one that does not is another
    # mistake, or a recording too short to judge (a 3 s slice of a correct UR10e run: the
    # shoulder at r 0.02 read "0.157 x")
    if np.any(comparison.joint_correlations[~plausible] < SCALED_FOLLOWS):
        return None
    odd = [f"'{joint}' {scale:.4g} x" for joint, scale, fine
           in zip(comparison.joints, scales, plausible, strict=True) if not fine]  # fmt: skip
    others = scales[plausible]
    read = (f"joint reads {others[0]:.2g} x" if len(others) == 1
            else f"joints read {others.min():.2g}-{others.max():.2g} x")  # fmt: skip
    factors = scales[~plausible] / float(np.median(others))
    thousand = bool(np.all(np.abs(np.abs(np.log10(factors)) - 3.0) < 0.1))  # 1000 x +- 26 %
    hint = (
        "a factor of 1000: N mm or mN m instead of N m?"
        if thousand
        else "another unit, motor-side torque (a gear ratio) or a wrong drive gain?"
    )
    return (
        f"a joint's torque is out of scale: measured / URDF gravity torque {', '.join(odd)}, "
        f"where the other gravity-loaded {read} ({hint})"
    )


def gravity_comparison(
    model: RobotModel,
    trajectory: Trajectory,
    *,
    diagnostics: bool = True,
    loaded_joints: tuple[str, ...] | None = None,
) -> GravityComparison | None:
    """Compare the measured torques with the URDF's static gravity torque ``g(q)``.

    Only ``g(q)`` is predicted, from the angles alone: it dominates the slow shoulder and elbow
    joints of an arm and, unlike the inertial torque, needs neither derivatives nor trustworthy
    URDF inertias. The rest of the measured torque is taken out per joint by least squares on
    ``[ddq_j, dq_j, sign(dq_j), 1]`` (armature and diagonal inertia, viscous and Coulomb friction,
    offset), from both the torque and the gravity torque, before scales and correlations are
    computed, together with the URDF's own inertial torque (free scale: the URDF inertias need
    not be right). These nuisance columns scale with the time unit, so the comparison holds even
    when ``t`` is not in seconds (derivatives are taken per sample).

    The robot-wide scale and correlation stack the gravity-loaded joints (gravity variation
    >= 10 % of the largest joint's). None when there is none (a horizontal robot: its gravity
    torques are constant) or the recording is too short to judge a correlation on
    (:data:`MIN_DEGREES_OF_FREEDOM`; with 10 Hz signals, about 2.3 s). ``diagnostics=False``
    leaves out the swap search and the whole-model correlations (``swap`` and
    ``model_correlations`` None): the scales and correlations alone, for the many comparisons of
    :func:`physid.offline.checks.column_fixes.best_fix`. ``loaded_joints``: compare these joints
    instead of the ones this recording's gravity loads (every fix is judged on the joints the
    recording as given was judged on).
    """
    signals = _check_signals(trajectory, columns_removed=_NUISANCE_COLUMNS)
    if signals is None:
        return None
    q, tau, seconds_per_row = signals
    dq = np.gradient(q, axis=0)
    ddq = np.gradient(dq, axis=0)
    gravity, inertial = _prior_torques(model, q, dq, ddq)
    variation = np.where(model.fitted, gravity.std(axis=0), 0.0)  # measured torques only
    largest = float(variation.max(initial=0.0))
    if largest < GRAVITY_FLOOR_NM or q.shape[0] < _MIN_SAMPLES:
        return None
    loaded = [int(j) for j in np.flatnonzero(variation >= GRAVITY_JOINT_FRACTION * largest)]
    if loaded_joints is not None:
        loaded = [model.joint_names.index(joint) for joint in loaded_joints]
    nuisance = {j: _nuisance_columns(dq[:, j], ddq[:, j], inertial[:, j]) for j in loaded}
    rt = {j: _residual(nuisance[j], tau[:, j]) for j in loaded}
    rg = {j: _residual(nuisance[j], gravity[:, j]) for j in loaded}
    gg = sum(float(rg[j] @ rg[j]) for j in loaded)
    if gg <= 0.0:
        return None
    scale = sum(float(rt[j] @ rg[j]) for j in loaded) / gg
    correlation = _correlation(
        np.concatenate([rt[j] for j in loaded]), np.concatenate([rg[j] for j in loaded])
    )
    joint_scales = np.array([float(rt[j] @ rg[j]) / float(rg[j] @ rg[j]) for j in loaded])
    joint_correlations = np.array([_correlation(rt[j], rg[j]) for j in loaded])
    shares = np.array([np.linalg.norm(rg[j]) / max(np.linalg.norm(rt[j]), 1e-300) for j in loaded])
    joints = tuple(model.joint_names[j] for j in loaded)
    if not diagnostics:
        return GravityComparison(joints, float(scale), float(correlation), joint_scales,
                                 joint_correlations, None, gravity_shares=shares)  # fmt: skip
    swap = _best_swap(model, tau, nuisance, rg, joint_correlations)
    return GravityComparison(
        joints,
        float(scale),
        float(correlation),
        joint_scales,
        joint_correlations,
        swap,
        # the inertial torque is quadratic in the time unit: per sample -> per second
        _model_correlations(gravity + inertial / seconds_per_row**2, dq, tau, loaded),
        shares,
    )


def _independent_samples(trajectory: Trajectory) -> float:
    """Independent samples per joint of the comparison's band over the recording (2 B T)."""
    rate = trajectory.sample_rate_hz
    return 2.0 * _cutoff_hz(rate) * trajectory.n_samples / rate


def _check_signals(
    trajectory: Trajectory, columns_removed: int
) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The positions and torques the torque checks judge: low-passed at :func:`_cutoff_hz` and
    kept at about ten rows per cut-off period, with the stamps' seconds per kept row; None when
    the recording is too short to judge (fewer than :data:`MIN_DEGREES_OF_FREEDOM` independent
    samples once ``columns_removed`` nuisance columns are taken out)."""
    rate = trajectory.sample_rate_hz
    if not np.isfinite(rate) or trajectory.n_samples <= 4 * _MIN_SAMPLES:
        return None
    if _independent_samples(trajectory) - columns_removed < MIN_DEGREES_OF_FREEDOM:
        return None
    q = _lowpass(np.asarray(trajectory.q, float), rate)
    tau = _lowpass(np.asarray(trajectory.tau, float), rate)
    step = max(1, int(rate / (10.0 * _cutoff_hz(rate))))
    return q[::step], tau[::step], step / rate


def _model_correlations(
    model_torque: np.ndarray, dq: np.ndarray, tau: np.ndarray, loaded: list[int]
) -> np.ndarray:
    """Per loaded joint, the correlation of its measured torque with the URDF's whole inverse
    dynamics ``M ddq + C dq + g`` in seconds (``model_torque``), viscous, Coulomb and offset
    (:func:`_friction_columns` of ``dq``) taken out of both.

    Why: a joint whose motion is driven faster than the pendulum it forms (a torque sinusoid above
    its natural frequency) has a torque in anti-phase with its angle, so its gravity torque and
    its torque run against each other while the inertial terms balance them; the gravity test
    alone then reads a correct column as a swapped one (DFKI double pendulum, open-loop 1.6 Hz
    torque: gravity correlation -0.16, whole-model correlation 0.50 per second). Only an
    abstention: the gravity test stays the judge of time units and of swaps."""
    correlations = []
    for j in loaded:
        friction = _friction_columns(dq[:, j])
        correlations.append(
            _correlation(_residual(friction, tau[:, j]), _residual(friction, model_torque[:, j]))
        )
    return np.array(correlations)


def _best_swap(
    model: RobotModel,
    tau: np.ndarray,
    nuisance: dict[int, np.ndarray],
    rg: dict[int, np.ndarray],
    own_correlations: np.ndarray,
) -> tuple[str, str, float, float] | None:
    """A gravity-loaded joint whose gravity torque another torque column follows far better.

    For gravity-loaded joint a and any other joint b, column b (its friction and inertia taken
    out as if it were joint a's) is correlated with ``g_a``. Returned, as ``(a, b, r own,
    r other)``, when the other column reaches r >= 0.9 and at least halves the unexplained part
    ``1 - r^2`` of a's own column; the largest such gain wins. An own column of the opposite sign
    (r near -1) still explains its gravity torque: that is a sign flip on one joint, reported by
    :func:`_order_reason`, not a swap. On real data the own column is always the best (a
    joint's own torque contains its gravity torque, another's at best a similar shape): own
    r >= 0.89, best other r <= 0.79. Where b's gravity torque varies too (both loaded), an
    exchange must show both ways: column a must then follow ``g_b`` at least as well as b's own
    column does. Over 3 s of a correct UR10e run the shoulder's and elbow's gravity torques had
    the same shape, and the shoulder's (own r 0.97) was "followed by the elbow's torque (0.99)",
    while the elbow's own column (0.99) followed its gravity torque better than the shoulder's.
    """
    best: tuple[float, tuple[str, str, float, float]] | None = None
    own = dict(zip(nuisance, own_correlations, strict=True))
    for a, r_own in own.items():
        for b in range(model.n_joints):
            if b == a:
                continue
            r_other = _correlation(_residual(nuisance[a], tau[:, b]), rg[a])
            if r_other < SWAP_MIN_CORRELATION:
                continue
            unexplained_own = 1.0 - float(r_own) ** 2  # a sign-flipped own column explains
            unexplained_other = 1.0 - r_other**2
            if unexplained_other > SWAP_IMPROVEMENT * unexplained_own:
                continue
            if b in nuisance:  # an exchange of two loaded joints' columns shows both ways
                reverse = _correlation(_residual(nuisance[b], tau[:, a]), rg[b])
                if reverse < float(own[b]):
                    continue
            gain = unexplained_own / max(unexplained_other, 1e-12)
            if best is None or gain > best[0]:
                names = (model.joint_names[a], model.joint_names[b])
                best = (gain, (*names, float(r_own), r_other))
    return None if best is None else best[1]


def _prior_torques(
    model: RobotModel, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The URDF's static gravity torque ``g(q)`` and inertial torque ``M ddq + C dq`` (N, n).

    The inertial torque is quadratic in the time unit (``ddq`` and ``dq dq`` alike), so with
    derivatives per sample it is the true one times a constant: good as a least-squares column
    whatever ``t`` is in.
    """
    pin_model = model.pin_model
    data = pin_model.createData()
    gravity = np.array([pin.computeGeneralizedGravity(pin_model, data, row) for row in q])
    full = np.array([pin.rnea(pin_model, data, *state) for state in zip(q, dq, ddq, strict=True)])
    return gravity, full - gravity


def _nuisance_columns(dq: np.ndarray, ddq: np.ndarray, inertial: np.ndarray) -> np.ndarray:
    """``[ddq, dq, sign(dq), 1, inertial]`` of one joint, unit-norm columns (zero ones dropped).

    What the measured torque holds besides gravity: armature and diagonal inertia, viscous and
    Coulomb friction, a torque offset (:func:`_friction_columns`), and the URDF's full inertial
    torque (coupling and Coriolis terms, with a free scale). Unit norms keep the least squares
    well conditioned whatever the time unit makes of the derivatives.
    """
    return _unit_columns([ddq, *_friction_columns(dq).T, inertial])


def _friction_columns(dq: np.ndarray) -> np.ndarray:
    """``[dq, sign(dq), 1]`` of one joint, unit-norm columns (zero ones dropped): viscous and
    Coulomb friction and a torque offset. The Coulomb sign is 0 below 2 % of the joint's
    99th-percentile speed, where the static friction of a joint at rest is anywhere in its band.
    Unchanged by the time unit of ``dq`` (relative threshold, unit norms)."""
    speed = float(np.percentile(np.abs(dq), 99.0))
    coulomb = np.where(np.abs(dq) > 0.02 * speed, np.sign(dq), 0.0)
    return _unit_columns([dq, coulomb, np.ones_like(dq)])


def _unit_columns(columns: list[np.ndarray]) -> np.ndarray:
    """The non-zero ``columns`` scaled to unit norm, side by side."""
    return np.column_stack([c / np.linalg.norm(c) for c in columns if np.linalg.norm(c) > 0.0])


def _residual(columns: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``y`` minus its least-squares fit on ``columns``."""
    coefficients, *_ = np.linalg.lstsq(columns, y, rcond=None)
    return y - columns @ coefficients


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Uncentred correlation (the residuals are already centred by the constant column)."""
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm > 0.0 else 0.0


def _cutoff_hz(rate_hz: float) -> float:
    """10 Hz, or 20 % of the sample rate for slower (or mis-timed) recordings."""
    return min(FILTER_CUTOFF_HZ, 0.2 * rate_hz)


def _lowpass(x: np.ndarray, rate_hz: float) -> np.ndarray:
    """Zero-phase 4th-order Butterworth at :func:`_cutoff_hz` along axis 0 (no lag: the torque
    and the angle-derived signals stay aligned)."""
    return zero_phase_lowpass(x, rate_hz, _cutoff_hz(rate_hz), 4)


def _joint_limit(model: RobotModel, joint: str) -> float | None:
    """The URDF's largest ``|limit|`` of a 1-DoF joint [rad], or None when it has none."""
    limits = position_limits(model.pin_model, joint)
    if limits is None:
        return None
    limit = max(abs(limits[0]), abs(limits[1]))
    return limit if limit <= _LIMIT_MEANINGFUL_RAD else None
