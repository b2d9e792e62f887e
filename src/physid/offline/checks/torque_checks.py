"""Sign, scale and column order of the recorded torques, judged against the URDF's gravity
torque (:func:`~.gravity_comparison.gravity_comparison`).

Rules, in order (:func:`torque_findings`):

- a gravity-loaded joint's torque that is the same in every row (not logged);
- none of the gravity torque the URDF puts on the joints (gravity compensated before logging);
- faint gravity: every gravity-loaded joint's scale within +-0.5, one sign, while the robot-wide
  torque follows gravity's shape (gravity already subtracted, or a unit error; not a flip, which
  is -1 x joint by joint);
- a column mistake named by the single fix that repairs it (:mod:`.column_fixes`), when the
  comparison sees a swap, a joint that does not follow its gravity torque, or a flipped sign;
- order: a joint whose gravity torque another column follows far better; a joint that does not
  follow its own; joints' scales 3 x apart, or one joint out of scale;
- sign: the robot-wide scale and correlation negative, and most joints' scales too;
- scale: the robot-wide scale outside [0.5, 2] while gravity is followed and the joints agree.

Every threshold is generous: a false alarm on good data costs more trust than a missed oddity
(how often each check speaks on correct data: docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.findings import Finding
from physid.offline.checks.column_fixes import best_fix
from physid.offline.checks.gravity_comparison import (
    MIN_CORRELATION,
    MIN_DEGREES_OF_FREEDOM,
    NUISANCE_COLUMNS,
    CheckBand,
    GravityComparison,
    gravity_comparison,
    independent_samples,
    joint_correlations,
)
from physid.offline.codes import (
    COLUMN_FIX,
    COLUMN_ORDER,
    CONSTANT_TORQUE,
    GRAVITY_ABSENT,
    JOINT_OUT_OF_SCALE,
    SCALES_DISAGREE,
    TORQUE_FAINT,
    TORQUE_SCALE,
    TORQUE_SIGN,
)
from physid.recordings.trajectory import Trajectory
from physid.robot.model import RobotModel

# A URDF from CAD gets the masses and first moments within tens of percent: a robot-wide scale
# outside this range is a units or drive-gain error.
SCALE_RANGE = (0.5, 2.0)


@dataclass(frozen=True)
class TorqueThresholds:
    """The thresholds of the torque rules (module docstring)."""

    # robot-wide recorded / URDF gravity torque of a plausible robot
    scale_range: tuple[float, float] = SCALE_RANGE
    # two gravity-loaded joints may disagree through a poor CAD link, but not this many-fold
    joint_scale_ratio: float = 3.0
    # a joint read as "out of scale" must follow its gravity torque this well (a unit or gain
    # error keeps the torque's shape)
    scaled_follows: float = 0.8
    # joint scales within this ratio of each other are one factor on every joint (a unit, a gain)
    alike_scales: float = 1.3
    # a robot-wide scale read at a weak correlation needs this many independent samples
    weak_scale_degrees_of_freedom: float = 4 * MIN_DEGREES_OF_FREEDOM
    # every gravity-loaded joint carrying less than this share of its gravity torque ...
    absent_gravity_scale: float = 0.1
    # ... where the gravity torque would be this many times the rest of the recorded torque
    absent_gravity_share: float = 2.0


def _numbers(comparison: GravityComparison) -> dict[str, float]:
    numbers = {"scale": comparison.scale, "correlation": comparison.correlation}
    for joint, s, r in zip(
        comparison.joints, comparison.joint_scales, comparison.joint_correlations, strict=True
    ):
        numbers[f"{joint}.scale"] = float(s)
        numbers[f"{joint}.correlation"] = float(r)
    return numbers


def torque_findings(
    model: RobotModel,
    trajectory: Trajectory,
    th: TorqueThresholds = TorqueThresholds(),
    band: CheckBand | None = None,
) -> list[Finding]:
    """At most one finding on the sign, scale and column order of the torques (module
    docstring); none when no joint carries a significant gravity torque or the recording is too
    short to judge (``band``: the recording's low-passed signals, when the caller holds them)."""
    comparison = gravity_comparison(model, trajectory, band=band)
    if comparison is None:
        return []
    first = _constant(trajectory, comparison) or _absent_gravity(comparison, th)
    if first is not None:
        return [first]
    s, r = comparison.scale, comparison.correlation
    order = _order(comparison, th)
    negative = int(np.sum(comparison.joint_scales < 0.0))
    # where the URDF's whole inverse dynamics follows every loaded joint's torque, the torques
    # are the joints' own with the right sign: a motion driven faster than the robot swings runs
    # against its gravity torque without any flip
    own = comparison.model_correlations is not None and bool(
        np.all(comparison.model_correlations >= MIN_CORRELATION)
    )
    flipped = s < 0.0 and r <= -MIN_CORRELATION and 2 * negative > len(comparison.joints)
    flipped = flipped and not own
    # an exchange of two columns is named as such first (with a scale error beside it, the
    # joints' scales take both signs, which the faint rule needs to be one)
    if comparison.swap is None and not (r < 0.0 and own):
        faint = _faint_gravity(comparison, trajectory, th)
        if faint is not None:
            return [faint]
    if order is not None or flipped:
        fix = best_fix(
            model, trajectory, comparison.joints, comparison.joint_correlations, joint_correlations
        )
        if fix is not None:
            return [COLUMN_FIX(fix, numbers=_numbers(comparison), names=comparison.joints)]
    if order is not None and comparison.swap is not None:
        return [order]  # a sign flip leaves no other column to follow better
    if flipped:
        return [
            TORQUE_SIGN(
                "torque sign looks flipped: measured torques are anti-correlated with the URDF's "
                f"gravity torque (scale {s:.2g}, correlation {r:.2f})",
                numbers=_numbers(comparison),
                names=comparison.joints,
            )
        ]
    if order is not None:
        return [order]
    scale = _robot_scale(comparison, trajectory, th)
    return [] if scale is None else [scale]


def _robot_scale(
    comparison: GravityComparison, trajectory: Trajectory, th: TorqueThresholds
) -> Finding | None:
    """A robot-wide torque scale outside :attr:`TorqueThresholds.scale_range` while gravity is
    followed: one unit or gain for every joint, or a URDF whose masses are not the robot's."""
    s, r = comparison.scale, comparison.correlation
    low, high = th.scale_range
    if not r >= MIN_CORRELATION or _weak(r, trajectory, th) or low <= s <= high:
        return None
    scales = comparison.joint_scales
    numbers, names = _numbers(comparison), comparison.joints
    if np.all(scales > 0.0) and np.max(scales) <= th.alike_scales * np.min(scales):
        return TORQUE_SCALE(
            f"torque scale implausible: measured torques are {s:.2g} x the URDF's gravity "
            f"torque on every gravity-loaded joint alike ({np.min(scales):.3g} to "
            f"{np.max(scales):.3g} x): one unit or one gain for them all (or a URDF in other "
            "units); if the columns are currents or a drive's raw units, give them as "
            "currents i_<joint> (LeRobot: observation.current) with drive_gains: the URDF's "
            f"gravity puts them near {1.0 / s:.3g} N m per unit, and a run with a known "
            "payload measures them (drive_gains: identify with --loaded-data)",
            numbers=numbers,
            names=names,
        )
    return TORQUE_SCALE(
        f"torque scale implausible: measured torques are {s:.2g} x the URDF's gravity torque "
        "(torques in other units or through wrong drive gains, or a URDF whose masses are "
        "not the robot's: in other units, or without a tool it carries)",
        numbers=numbers,
        names=names,
    )


def _weak(r: float, trajectory: Trajectory, th: TorqueThresholds) -> bool:
    """Whether a scale read at correlation ``r`` rests on too few samples to judge: short
    stretches of a correct recording read scales far from 1 at weak correlations, whereas a unit
    or gain error keeps the torques' shape."""
    degrees_of_freedom = independent_samples(trajectory) - NUISANCE_COLUMNS
    return abs(r) < th.scaled_follows and degrees_of_freedom < th.weak_scale_degrees_of_freedom


def _faint_gravity(
    comparison: GravityComparison, trajectory: Trajectory, th: TorqueThresholds
) -> Finding | None:
    """Every gravity-loaded joint's torque carries less than half of its URDF gravity torque,
    all with one sign, while the robot-wide torque follows its shape (|r| >= 0.3).

    Gravity already subtracted looks like this: an external-torque estimate or a gravity-
    compensated signal leaves the URDF's gravity error, whose size differs joint by joint. A
    unit or gain error scales every joint alike, and with the sign also flipped it is said so; a
    URDF in grams read as kg looks alike too, and is named beside them."""
    scales, s, r = comparison.joint_scales, comparison.scale, comparison.correlation
    faint = bool(np.all(np.abs(scales) < th.scale_range[0]))
    one_sign = bool(np.all(scales > 0.0) or np.all(scales < 0.0))
    if not (faint and one_sign) or abs(r) < MIN_CORRELATION or _weak(r, trajectory, th):
        return None
    spread = float(np.max(np.abs(scales)) / max(float(np.min(np.abs(scales))), 1e-300))
    alike = spread < th.alike_scales  # one factor on every joint: a unit, a gain, a sign
    described = (
        f"measured torques are {s:.2g} x the URDF's gravity torque (correlation {r:.2f}; "
        f"{np.min(scales):.2g} to {np.max(scales):.2g} x per gravity-loaded joint)"
    )
    numbers, names = _numbers(comparison), comparison.joints
    if alike and r <= -th.scaled_follows:
        return TORQUE_SIGN(
            f"torque sign looks flipped and its scale off: {described}: a sign "
            "convention and a unit or drive gain, or a URDF whose masses are not "
            "the robot's",
            numbers=numbers,
            names=names,
        )
    subtracted = (
        "gravity already subtracted (an external-torque estimate or a gravity-"
        "compensated signal logged instead of the joint torque)"
    )
    units = "torques in other units or through wrong drive gains"
    urdf = "a URDF whose masses are not the robot's"
    causes = (units, urdf, subtracted) if alike else (subtracted, units, urdf)
    return TORQUE_FAINT(
        f"torque scale implausible: {described}: {causes[0]}, {causes[1]}, or {causes[2]}",
        numbers=numbers,
        names=names,
    )


def loaded_robot_findings(
    model: RobotModel, trajectories: list[Trajectory], *, absent_gravity: bool = True
) -> list[Finding]:
    """The torque checks that hold for recordings of a robot that may carry a load the URDF
    lacks (``physid online``, the loaded runs of ``physid payload``): a payload only adds
    gravity torque, so the scale rules, which a heavy payload would trip, are not run. First,
    with ``absent_gravity``, the recordings whose torques carry none of the URDF's gravity
    torque; then, of the others, a column mistake named by its fix (judged by the correlations of
    the joints' torques with their gravity torques, which a payload scales more than it
    reshapes)."""
    absent, fixes = [], []
    th = TorqueThresholds()
    for k, trajectory in enumerate(trajectories):
        comparison = gravity_comparison(model, trajectory)
        if comparison is None:
            continue
        name = trajectory.source or f"recording {k + 1}"
        finding = _absent_gravity(comparison, th)
        if finding is not None:
            absent += [_named(finding, name)] if absent_gravity else []
            continue
        fix = best_fix(
            model, trajectory, comparison.joints, comparison.joint_correlations, joint_correlations
        )
        if fix is not None:
            finding = COLUMN_FIX(fix, numbers=_numbers(comparison), names=comparison.joints)
            fixes.append(_named(finding, name))
    return absent + fixes


def loaded_robot_reasons(
    model: RobotModel, trajectories: list[Trajectory], *, absent_gravity: bool = True
) -> list[str]:
    """The messages of :func:`loaded_robot_findings`."""
    found = loaded_robot_findings(model, trajectories, absent_gravity=absent_gravity)
    return [f.message for f in found]


def _named(finding: Finding, recording: str) -> Finding:
    """The finding said of one recording: its name first in the message and among the names."""
    from dataclasses import replace

    return replace(
        finding, message=f"{recording}: {finding.message}", names=(recording, *finding.names)
    )


def _absent_gravity(comparison: GravityComparison, th: TorqueThresholds) -> Finding | None:
    """The torques carry none of the gravity torque the URDF puts on them: every gravity-loaded
    joint reads less than :attr:`~TorqueThresholds.absent_gravity_scale` of it and does not
    follow its shape, where it would be at least :attr:`~TorqueThresholds.absent_gravity_share`
    times the rest of the recorded torque: gravity compensated exactly before the torque was
    logged (a simulator's gravcomp, a command net of its gravity model), which the faint rule
    cannot see (nothing of gravity's shape is left to correlate)."""
    shares = comparison.gravity_shares
    scales = comparison.joint_scales
    if shares is None or not np.all(np.abs(scales) < th.absent_gravity_scale):
        return None
    # a torque that follows gravity's shape at a small scale is a unit or a gain: the scale
    # rules name it
    if not np.all(np.abs(comparison.joint_correlations) < MIN_CORRELATION):
        return None
    if float(np.max(shares)) < th.absent_gravity_share:
        return None
    per_joint = ", ".join(
        f"'{joint}' {scale:.2g} x" for joint, scale in zip(comparison.joints, scales, strict=True)
    )
    return GRAVITY_ABSENT(
        f"the torques carry none of the URDF's gravity torque (measured / URDF gravity torque: "
        f"{per_joint}; at the URDF's scale it would be {np.max(shares):.2g} x the rest of the "
        "measured torque): gravity compensated before the torque was logged (a simulator's "
        "gravity compensation such as MuJoCo's gravcomp, or a torque command net of its "
        "gravity model), a simulation run without gravity (PyBullet's default until "
        "setGravity), or a gravity direction that is not the URDF's; the masses fitted to "
        "these torques are not the robot's",
        numbers={**_numbers(comparison), "gravity_share": float(np.max(shares))},
        names=comparison.joints,
    )


def _constant(trajectory: Trajectory, comparison: GravityComparison) -> Finding | None:
    """Gravity-loaded joints whose torque column holds one value in every row: a sensor that
    was not logged (its correlation with anything is undefined)."""
    tau = np.asarray(trajectory.tau, float)
    names = list(trajectory.joint_names)
    constant = [
        (joint, float(tau[0, names.index(joint)]))
        for joint in comparison.joints
        if np.ptp(tau[:, names.index(joint)]) == 0.0
    ]
    if not constant:
        return None
    listed = ", ".join(f"'{joint}' ({value:g})" for joint, value in constant)
    return CONSTANT_TORQUE(
        f"the torque of {listed} is the same in every row although the URDF's gravity torque on "
        "it varies with the pose: a torque that was not logged (or a passive joint, whose torque "
        "is truly that: then this is not suspect)",
        numbers={joint: value for joint, value in constant},
        names=[joint for joint, _ in constant],
    )


ORDER_PREFIX = "joint columns may be in another order"


def _order(comparison: GravityComparison, th: TorqueThresholds) -> Finding | None:
    """The strongest sign that torque columns are not in the model's joint order, if any: a
    swap, the joint that follows its gravity torque least, or scales far apart."""
    numbers = _numbers(comparison)
    if comparison.swap is not None:
        joint, other, r_own, r_other = comparison.swap
        return COLUMN_ORDER(
            f"{ORDER_PREFIX}: the gravity torque of '{joint}' is followed by the torque of "
            f"'{other}' (correlation {r_other:.2f}), not by its own ({r_own:.2f})",
            numbers=numbers,
            names=(joint, other),
        )
    unfollowed = _least_followed(comparison)
    if unfollowed is not None:
        return unfollowed
    # the scales of joints that follow their gravity torque (one that does not has no gravity
    # scale to speak of)
    following = comparison.joint_correlations >= th.scaled_follows
    scales = comparison.joint_scales[following]
    if (
        len(scales) < 2
        or scales.min() <= 0.0
        or scales.max() <= th.joint_scale_ratio * scales.min()
    ):
        return None
    odd = _odd_scale(comparison, th)
    if odd is not None:
        return odd
    joints = [j for j, f in zip(comparison.joints, following, strict=True) if f]
    low, high = int(np.argmin(scales)), int(np.argmax(scales))
    return SCALES_DISAGREE(
        f"{ORDER_PREFIX}: the torques of '{joints[low]}' and '{joints[high]}' are "
        f"{scales[low]:.2g} x and {scales[high]:.2g} x their gravity torques (a robot's joints "
        "agree within tens of percent)",
        numbers=numbers,
        names=(joints[low], joints[high]),
    )


def _least_followed(comparison: GravityComparison) -> Finding | None:
    """The gravity-loaded joint whose torque follows its gravity torque least, below
    :data:`~.gravity_comparison.MIN_CORRELATION`, when the URDF's whole model does not follow it
    either."""
    worst: tuple[float, str, str] | None = None
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
            text = f"{ORDER_PREFIX}: {text}: columns swapped, or this joint's sign flipped"
        else:
            # no other column follows it either (else a swap is named): nothing says "order"
            others = ", ".join(
                f"'{j}' {correlations[i]:.2f}" for i, j in enumerate(comparison.joints) if i != k
            )
            text += (
                ", and no exchange of two columns explains it"
                + (f" (the other gravity-loaded joints follow theirs: {others})" if others else "")
                + ": not this joint's torque (columns in another order?), or a stretch of motion"
                " too short or too one-sided to judge"
            )
        worst = (r_j, joint, text)
    if worst is None:
        return None
    return COLUMN_ORDER(worst[2], numbers=_numbers(comparison), names=(worst[1],))


def _odd_scale(comparison: GravityComparison, th: TorqueThresholds) -> Finding | None:
    """The gravity-loaded joints whose torque alone is out of scale while the others read a
    plausible scale: one column in another unit (N mm or mN m read 1000 x), on the motor side of
    a gear, or through a wrong drive gain. Moving columns around changes no joint's scale by a
    round factor, so "in another order" would send the user to the wrong place."""
    scales = comparison.joint_scales
    low, high = th.scale_range
    plausible = (scales >= low) & (scales <= high)
    if not plausible.any() or plausible.all():
        return None
    # a column in another unit still follows its gravity torque; one that does not is another
    # mistake, or a recording too short to judge
    if np.any(comparison.joint_correlations[~plausible] < th.scaled_follows):
        return None
    odd_joints = [j for j, fine in zip(comparison.joints, plausible, strict=True) if not fine]
    odd = [
        f"'{joint}' {scale:.4g} x"
        for joint, scale, fine in zip(comparison.joints, scales, plausible, strict=True)
        if not fine
    ]
    others = scales[plausible]
    read = (
        f"joint reads {others[0]:.2g} x"
        if len(others) == 1
        else f"joints read {others.min():.2g}-{others.max():.2g} x"
    )
    factors = scales[~plausible] / float(np.median(others))
    thousand = bool(np.all(np.abs(np.abs(np.log10(factors)) - 3.0) < 0.1))  # 1000 x +- 26 %
    hint = (
        "a factor of 1000: N mm or mN m instead of N m?"
        if thousand
        else "another unit, motor-side torque (a gear ratio) or a wrong drive gain?"
    )
    return JOINT_OUT_OF_SCALE(
        f"a joint's torque is out of scale: measured / URDF gravity torque {', '.join(odd)}, "
        f"where the other gravity-loaded {read} ({hint})",
        numbers=_numbers(comparison),
        names=odd_joints,
    )
