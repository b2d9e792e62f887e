"""Checks of one recording's time, units and motion against what any robot recording and the
URDF imply: the sample rate, a guessed position step, degrees, millimetres, a joint pressed
against its limit, a dead encoder, a column written over another, and (over all training
recordings) a robot that did not move.

Each check returns a finding or None and keeps its thresholds in one frozen dataclass; the order
in which they run, and which ones end a recording's checks, is declared in :mod:`.suspect`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.findings import Finding
from physid.offline.checks.gravity_comparison import (
    MIN_SAMPLES,
    CheckBand,
    check_signals,
    lowpass,
    prior_torques,
    residual,
    unit_columns,
)
from physid.offline.codes import (
    AT_LIMIT,
    COPIED_COLUMN,
    DEAD_ENCODER,
    DEGREES,
    GUESSED_STEP,
    MILLIMETRES,
    MOTIONLESS,
    SAMPLE_RATE,
)
from physid.recordings.glitches import MOVING_SPAN, NOISE_SPANS, motion_noise, moves, moving_joints
from physid.recordings.trajectory import ANGLE_MARGIN_RAD, Trajectory
from physid.robot.model import RobotModel, is_revolute, position_limits

_SPEED_ROWS = 100_000  # rows of a streamed recording read for its peak speed
_SPAN_ROWS = 100_000  # rows of a streamed recording read at a time for its span
# URDF limits wider than this (or non-finite, or lower >= upper, how Pinocchio stores a revolute
# without <limit lower/upper>) mean "unlimited"
_LIMIT_MEANINGFUL_RAD = 100.0


@dataclass(frozen=True)
class TimeThresholds:
    """The slowest robot controllers log at tens of Hz and the fastest drive loops at tens of
    kHz; time in ms (or us) moves a 1 kHz recording to 1 Hz, time in minutes moves it up 60 x."""

    sample_rate_range_hz: tuple[float, float] = (10.0, 100e3)
    # below the range the motion decides: stamps in ms make every speed 1000 x too slow, so a log
    # whose fastest joint would then move faster than this [rad/s or m/s] was in seconds after
    # all (the fastest joint-side speed of any arm)
    max_speed_if_milliseconds: float = 50.0


@dataclass(frozen=True)
class UnitThresholds:
    """Angles beyond a turn or the URDF's limit by the loader's margin (0.5 rad) are no
    calibration offset; joint-side speeds of arms top out near 50 rad/s (degrees multiply every
    speed by 57); a prismatic position 10 x its travel is in another unit."""

    angle_margin_rad: float = ANGLE_MARGIN_RAD
    max_joint_speed_rad_s: float = 50.0
    length_factor: float = 10.0
    max_travel_m: float = 50.0  # without URDF limits: farther than any robot's axis travels


@dataclass(frozen=True)
class LimitThresholds:
    """A controller's software limit holds a joint within an encoder tick of it; a mechanical
    stop or a simulator's soft limit lets it in, and its torque is not in the model."""

    share: float = 0.01  # of the rows beyond the limit ...
    depth: float = 1e-3  # ... by more than this at the deepest [rad or m] ...
    crossed_rad: float = 0.1  # ... and less than this (deeper is another convention, not a stop)
    # ... where the torque the URDF's model of the motion leaves unexplained is this many times
    # larger than within the limits: a stop's reaction (a motion that overruns a limit without
    # a stop leaves about as much there as at its other reversals: 2.3 x at most on the
    # correct demo arm; a stop's 11 x)
    stop_torque_ratio: float = 4.0


@dataclass(frozen=True)
class DeadEncoderThresholds:
    """A joint held still by its controller has torque the URDF's model of the others' motion
    explains; one whose position sensor stopped while it moved leaves its own motion's torque
    unexplained."""

    share_of_largest: float = 0.1  # of the largest joint's torque std, unexplained on a still joint
    share_of_own: float = 0.5  # ... and of the still joint's own torque std


@dataclass(frozen=True)
class MotionThresholds:
    """A joint moves when its span exceeds the still bound and its noise; still recordings whose
    poses differ this much on some joint are a static identification, not one pose twice."""

    still_span: float = MOVING_SPAN
    pose_step: float = 0.05


def peak_speed(recording: Trajectory) -> float:
    """The fastest joint speed of a recording on its own stamps [rad/s or m/s]: the 99th
    percentile of |row-to-row increment / stamp step| (the first rows of one streamed)."""
    q = np.asarray(recording.q[:_SPEED_ROWS], float)
    t = np.asarray(recording.t[:_SPEED_ROWS], float)
    if len(t) < 3:
        return float("nan")
    speeds = np.abs(np.diff(q, axis=0)) / np.diff(t)[:, None]
    return float(np.max(np.percentile(speeds, 99.0, axis=0)))


def sample_rate_finding(
    rate_hz: float, peak_speed_rad_s: float = float("nan"), th: TimeThresholds = TimeThresholds()
) -> Finding | None:
    """The median sample rate is not a robot recording's; below the range only when stamps in
    milliseconds would give plausible speeds (``peak_speed_rad_s`` x 1000 at most
    :attr:`~TimeThresholds.max_speed_if_milliseconds`; NaN: not known)."""
    numbers = {"sample_rate_hz": rate_hz, "peak_speed": peak_speed_rad_s}
    if not np.isfinite(rate_hz):
        return SAMPLE_RATE(
            "time stamps do not increase: is t a time column in seconds?",
            numbers=numbers,
            names=("t",),
        )
    low, high = th.sample_rate_range_hz
    if rate_hz < low and not 1e3 * peak_speed_rad_s > th.max_speed_if_milliseconds:
        return SAMPLE_RATE(
            f"sample rate {rate_hz:.3g} Hz is implausible for a robot recording: "
            "is t in milliseconds?",
            numbers=numbers,
            names=("t",),
        )
    if rate_hz > high:
        return SAMPLE_RATE(
            f"sample rate {rate_hz:.3g} Hz is implausible for a robot recording: "
            "is t in seconds (not minutes or hours)?",
            numbers=numbers,
            names=("t",),
        )
    return None


def step_guess_finding(trajectory: Trajectory) -> Finding | None:
    """Reading found a position step whose right side the torques could not tell
    (:mod:`physid.recordings.steps`: the rows at the longest piece's offset were kept, a guess)."""
    found = (getattr(trajectory, "row_repairs", None) or {}).get("position_steps")
    if not found or found.get("frame") != "guessed":
        return None
    joints = sorted({joint for step in found["steps"] for joint in step})
    return GUESSED_STEP(
        f"the positions of {', '.join(joints)} step during the recording (an encoder reset or "
        "glitch) and the torques cannot tell which side is right: the rows at the longest "
        "piece's offset were kept, a guess; check the encoder, or give the sound part alone",
        names=[f"q_{joint}" for joint in joints],
    )


def degrees_finding(
    model: RobotModel,
    trajectory: Trajectory,
    rate_hz: float | None,
    th: UnitThresholds = UnitThresholds(),
    band: CheckBand | None = None,
) -> Finding | None:
    """A revolute joint's angles look like degrees: its peak ``|q|`` beyond its bound (a turn,
    or the URDF limit where that is wider) by the angle margin, or, when ``rate_hz`` is given
    (time trusted), its 99th-percentile speed above :attr:`~UnitThresholds.max_joint_speed_rad_s`.
    A joint without URDF limits is flagged only on both counts (a user may record several turns
    on purpose). ``band``: the recording's low-passed signals, when the caller holds them."""
    speeds = None
    if rate_hz is not None and trajectory.n_samples > MIN_SAMPLES:
        if band is not None and band.rate_hz == rate_hz:
            q = band.q
        else:
            q = lowpass(np.asarray(trajectory.q, float), rate_hz)
        speeds = np.percentile(np.abs(np.gradient(q, axis=0)) * rate_hz, 99.0, axis=0)
    hint = "(then set angle_unit: degrees in the config)"
    for k, joint in enumerate(model.joint_names):
        if not is_revolute(model, joint):
            continue
        peak = float(np.max(np.abs(trajectory.q[:, k])))
        limit = joint_limit(model, joint)
        too_far = peak > max(2.0 * np.pi, limit or 0.0) + th.angle_margin_rad
        too_fast = speeds is not None and speeds[k] > th.max_joint_speed_rad_s
        numbers = {
            "peak_rad": peak,
            "limit_rad": limit or float("nan"),
            "speed_rad_s": float("nan") if speeds is None else float(speeds[k]),
        }
        names = (f"q_{joint}",)
        if limit is None and too_far and (speeds is None or too_fast):
            speed = "" if speeds is None else f" at {speeds[k]:.3g} rad/s"
            return DEGREES(
                f"joint '{joint}' positions reach {peak:.4g} rad (more than a turn)"
                f"{speed}: are they in degrees? {hint}",
                numbers=numbers,
                names=names,
            )
        if limit is not None and too_far:
            return DEGREES(
                f"joint '{joint}' positions reach {peak:.4g}, {peak / limit:.3g} x its "
                f"URDF limit of {limit:.3g} rad: are they in degrees? {hint}",
                numbers=numbers,
                names=names,
            )
        if limit is not None and too_fast:
            return DEGREES(
                f"joint '{joint}' moves at {speeds[k]:.3g} rad/s, implausible for a "
                f"robot joint: are its positions in degrees? {hint}",
                numbers=numbers,
                names=names,
            )
    return None


def millimetres_finding(
    model: RobotModel, trajectory: Trajectory, th: UnitThresholds = UnitThresholds()
) -> Finding | None:
    """A prismatic joint's positions look like millimetres: beyond
    :attr:`~UnitThresholds.length_factor` x its URDF travel, or without limits farther than a
    robot axis travels. The torque checks, which would read its consequences, are skipped."""
    for k, joint in enumerate(model.joint_names):
        if is_revolute(model, joint):
            continue
        peak = float(np.max(np.abs(trajectory.q[:, k])))
        limit = joint_limit(model, joint)
        numbers = {"peak_m": peak, "limit_m": limit or float("nan")}
        if limit is not None and peak > th.length_factor * limit:
            return MILLIMETRES(
                f"prismatic joint '{joint}' positions reach {peak:.4g}, {peak / limit:.3g} x its "
                f"URDF limit of {limit:.3g} m: are they in millimetres? (convert them to metres)",
                numbers=numbers,
                names=(f"q_{joint}",),
            )
        if limit is None and peak > th.max_travel_m:
            return MILLIMETRES(
                f"prismatic joint '{joint}' positions reach {peak:.4g} m, farther than a robot "
                "axis travels: are they in millimetres? (convert them to metres)",
                numbers=numbers,
                names=(f"q_{joint}",),
            )
    return None


def limit_contact_finding(
    model: RobotModel, trajectory: Trajectory, th: LimitThresholds = LimitThresholds()
) -> Finding | None:
    """Joints pressed against their URDF position limits: beyond the limit in at least
    :attr:`~LimitThresholds.share` of the rows, by more than :attr:`~LimitThresholds.depth`. A
    stop's torque is not in the model: the fit absorbs it into the joint's friction and offset,
    and the torque checks would read it as a wrong column."""
    q = np.asarray(trajectory.q, float)
    found, names, numbers = [], [], {}
    for k, joint in enumerate(trajectory.joint_names):
        if not model.pin_model.existJointName(joint):
            continue
        limits = position_limits(model.pin_model, joint)
        if limits is None:
            continue
        lower, upper = limits
        beyond = np.maximum(q[:, k] - upper, lower - q[:, k])
        share = float(np.mean(beyond > 0.0))
        depth = float(beyond.max())
        revolute = is_revolute(model, joint)
        # a stop is met, not crossed: a joint far beyond its limits is logged in another
        # convention (another zero, degrees), which the angle checks name
        crossed = th.crossed_rad if revolute else 0.05 * (upper - lower)
        if share < th.share or not th.depth < depth < crossed:
            continue
        ratio = _stop_torque_ratio(model, trajectory, k, beyond > 0.0)
        if not ratio > th.stop_torque_ratio:
            continue
        side = upper if np.mean(q[:, k] > upper) >= np.mean(q[:, k] < lower) else lower
        unit = "rad" if revolute else "m"
        found.append(
            f"'{joint}' beyond its limit {side:.4g} {unit} in {100 * share:.2g} % of "
            f"the rows (by up to {depth:.2g} {unit})"
        )
        names.append(joint)
        numbers |= {
            f"{joint}.share": share,
            f"{joint}.depth": depth,
            f"{joint}.unexplained_ratio": ratio,
        }
    if not found:
        return None
    return AT_LIMIT(
        f"joints pressed against their URDF position limits: {', '.join(found)}: a stop (or a "
        "simulator's joint limit) then carries torque the model does not have, which the fit "
        "would take for the joint's friction and offset; leave those stretches out of the "
        "recording, or give the limits the robot has",
        numbers=numbers,
        names=names,
    )


def _stop_torque_ratio(
    model: RobotModel, trajectory: Trajectory, k: int, beyond: np.ndarray
) -> float:
    """How much more of joint ``k``'s torque the URDF's model of the recorded motion (its
    gravity and inertial torque at free scales, viscous and Coulomb friction, an offset) leaves
    unexplained where the joint is ``beyond`` its limit than within: RMS residual beyond over
    RMS residual within (derivatives per row: whatever unit t is in); NaN when either side is
    empty."""
    q = np.asarray(trajectory.q, float)
    tau = np.asarray(trajectory.tau, float)
    within = ~beyond & np.all(np.isfinite(tau), axis=1)
    beyond = beyond & np.all(np.isfinite(tau), axis=1)
    if beyond.sum() < 3 or within.sum() < 10:
        return float("nan")
    dq = np.gradient(q, axis=0)
    gravity, inertial = prior_torques(model, q, dq, np.gradient(dq, axis=0))
    j = (
        k
        if trajectory.joint_names == model.joint_names
        else model.joint_names.index(trajectory.joint_names[k])
    )
    rows = beyond | within
    columns = unit_columns(
        [
            gravity[rows, j],
            inertial[rows, j],
            dq[rows, k],
            np.sign(dq[rows, k]),
            np.ones(int(rows.sum())),
        ]
    )
    r = np.zeros(len(q))
    r[rows] = residual(columns, tau[rows, k])
    return float(np.sqrt(np.mean(r[beyond] ** 2)) / max(np.sqrt(np.mean(r[within] ** 2)), 1e-300))


def dead_encoder_finding(
    model: RobotModel,
    trajectory: Trajectory,
    moving: np.ndarray,
    th: DeadEncoderThresholds = DeadEncoderThresholds(),
    band: CheckBand | None = None,
) -> Finding | None:
    """A joint stays within its position noise while others move (``moving``:
    :func:`~physid.recordings.glitches.moving_joints`) but its torque varies in ways the URDF's
    model of the recorded motion cannot give it: a position sensor that stopped. Read on the
    torque checks' signals with derivatives per row (free scales: whatever unit t is in;
    ``band``: as :func:`degrees_finding`)."""
    still = [j for j in np.flatnonzero(~np.asarray(moving, bool)) if model.fitted[j]]
    signals = check_signals(trajectory, columns_removed=3, band=band) if still else None
    if signals is None:
        return None
    q, tau, _ = signals
    dq = np.gradient(q, axis=0)
    gravity, inertial = prior_torques(model, q, dq, np.gradient(dq, axis=0))
    spread = tau.std(axis=0)
    largest = float(np.max(np.where(model.fitted, spread, 0.0)))
    found, names, numbers = [], [], {}
    for j in still:
        columns = unit_columns([gravity[:, j], inertial[:, j], np.ones(len(q))])
        unexplained = float(np.std(residual(columns, tau[:, j] - tau[:, j].mean())))
        if not (
            unexplained > th.share_of_largest * largest
            and unexplained > th.share_of_own * spread[j]
        ):
            continue
        joint = model.joint_names[j]
        unit = "N m" if is_revolute(model, joint) else "N"
        found.append(
            f"'{joint}' (span {np.ptp(trajectory.q[:, j]):.2g}) yet its torque varies by "
            f"{spread[j]:.3g} {unit} RMS, {unexplained:.3g} {unit} of it unlike anything "
            "the URDF's model of the recorded motion gives that joint"
        )
        names.append(joint)
        numbers |= {f"{joint}.torque_std": float(spread[j]), f"{joint}.unexplained": unexplained}
    if not found:
        return None
    return DEAD_ENCODER(
        "a joint's position stays within its sensor noise while the others move: "
        + "; ".join(found)
        + ": a position sensor that stopped (a dead encoder), a position column that is not "
        "this joint's, or a joint held still by a brake or by static friction its torque did "
        "not overcome (a simulator's default joint motors: PyBullet's hold every joint against "
        "up to 1 / time step N m until disabled with force 0)?",
        numbers=numbers,
        names=names,
    )


def copied_column_finding(trajectory: Trajectory) -> Finding | None:
    """Two joints' torque (or position) columns hold the same value in every row while they
    vary: one column written over another (two sensors never agree to the bit on every
    sample). Columns that never vary are left to the other checks."""
    for label, prefix, values in (
        ("torque", "tau_", trajectory.tau),
        ("position", "q_", trajectory.q),
    ):
        values = np.asarray(values, float)
        varying = [k for k in range(values.shape[1]) if np.ptp(values[:, k]) > 0.0]
        for i, a in enumerate(varying):
            for b in varying[i + 1 :]:
                if np.array_equal(values[:, a], values[:, b]):
                    names = trajectory.joint_names
                    return COPIED_COLUMN(
                        f"the {label} columns of '{names[a]}' and '{names[b]}' are the same in "
                        f"every row ({len(values)} rows): one was written over the other",
                        names=(prefix + names[a], prefix + names[b]),
                    )
    return None


def motionless_finding(
    model: RobotModel, trajectories: list[Trajectory], th: MotionThresholds = MotionThresholds()
) -> Finding | None:
    """No joint moved in any of the (training) recordings: a robot at rest shows one pose's
    static torques, which the offsets and the free inertias fit to the noise while every mass is
    left to the prior. Several recordings, each at its own still pose, are a static
    identification and pass."""
    if not trajectories:
        return None
    spans, means, moving = zip(*(span_and_mean(t) for t in trajectories), strict=True)
    spans = np.max(spans, axis=0)
    if np.any(moving) or np.any(np.ptp(means, axis=0) >= th.pose_step):
        return None
    listed = ", ".join(f"'{j}' {s:.2g}" for j, s in zip(model.joint_names, spans, strict=True))
    return MOTIONLESS(
        f"the robot did not move: every joint's position spans less than {th.still_span:g} rad "
        f"(or m), or less than {NOISE_SPANS:g} x its noise, in every recording ({listed}); at "
        "rest the torques show one pose's static load, not the dynamics: record an exciting "
        "motion (physid excite designs one)",
        numbers={f"{j}.span": float(s) for j, s in zip(model.joint_names, spans, strict=True)},
        names=model.joint_names,
    )


def span_and_mean(recording: Trajectory) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per joint, the span and the mean of a recording's positions, and whether it moves
    (:func:`~physid.recordings.glitches.moving_joints`): of every row, read block by block for one
    streamed from disk (its preview may be a rest before the motion; the noise is read on the
    first block)."""
    positions = recording.q
    if isinstance(recording, Trajectory):
        return np.ptp(positions, axis=0), np.mean(positions, axis=0), recording.moving
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


def joint_limit(model: RobotModel, joint: str) -> float | None:
    """The URDF's largest ``|limit|`` of a 1-DoF joint [rad or m], or None when it has none."""
    limits = position_limits(model.pin_model, joint)
    if limits is None:
        return None
    limit = max(abs(limits[0]), abs(limits[1]))
    return limit if limit <= _LIMIT_MEANINGFUL_RAD else None
