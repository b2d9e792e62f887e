"""Well-formed but wrong data: the registered checks behind ``status: suspect``, in their declared
order.

The loader (:mod:`physid.recordings.trajectory`) rejects malformed files. Data that are well
formed but wrong (time in milliseconds, angles in degrees, torques of the wrong sign or scale,
columns in another joint order) still identify *something*, with a good fit, and would come
back ``ok``. Each recording runs the checks of :data:`RECORDING_CHECKS` in order: the time base,
a guessed position step, units, then (if it moves) a joint pressed against a limit, a dead
encoder, a copied column, the torques against the URDF's gravity, a lift's sign and the time
scale. A check marked ``final`` ends the recording's checks when it finds something: the torque
checks need radians and a live encoder, so a unit finding is the cause, not its consequences.
:func:`motionless_finding` is judged over all training recordings first.

Each check keeps its thresholds in one frozen dataclass (:mod:`.recording_checks`,
:mod:`.torque_checks`); the findings carry the numbers that drove them (:mod:`physid.findings`).
Every threshold is generous: a false alarm on good data costs more trust than a missed oddity
costs results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from physid.findings import Code, Finding
from physid.offline.checks import recording_checks as rc
from physid.offline.checks.gravity_comparison import CheckBand, check_signals
from physid.offline.checks.lift_load import lift_sign_finding
from physid.offline.checks.time_scale import (
    fit_by_time_scale,
    still_a_clock,
    time_scale_finding,
    time_scale_regressors,
)
from physid.offline.checks.torque_checks import (
    TorqueThresholds,
    loaded_robot_findings,
    loaded_robot_reasons,
    torque_findings,
)
from physid.offline.codes import (
    AT_LIMIT,
    COLUMN_FIX,
    COLUMN_ORDER,
    CONSTANT_TORQUE,
    COPIED_COLUMN,
    DEAD_ENCODER,
    DEGREES,
    GRAVITY_ABSENT,
    GUESSED_STEP,
    JOINT_OUT_OF_SCALE,
    LIFT_SIGN,
    MILLIMETRES,
    SAMPLE_RATE,
    SCALES_DISAGREE,
    TIME_SCALE,
    TORQUE_FAINT,
    TORQUE_SCALE,
    TORQUE_SIGN,
    UNEXPLAINED,
)
from physid.recordings.trajectory import Trajectory
from physid.robot.model import RobotModel

__all__ = [
    "RECORDING_CHECKS",
    "loaded_robot_findings",
    "loaded_robot_reasons",
    "motionless_finding",
    "suspect_findings",
    "unexplained_torque_finding",
]
motionless_finding = rc.motionless_finding

TORQUE_CODES = (
    CONSTANT_TORQUE,
    GRAVITY_ABSENT,
    TORQUE_FAINT,
    COLUMN_FIX,
    COLUMN_ORDER,
    TORQUE_SIGN,
    TORQUE_SCALE,
    JOINT_OUT_OF_SCALE,
    SCALES_DISAGREE,
)


@dataclass
class RecordingContext:
    """One recording as the checks see it, and what the earlier checks found in it."""

    model: RobotModel
    trajectory: Trajectory
    found: list[Finding] = field(default_factory=list)

    @cached_property
    def rate_hz(self) -> float:
        return self.trajectory.sample_rate_hz

    @cached_property
    def moving(self) -> np.ndarray:
        return rc.span_and_mean(self.trajectory)[2]

    @cached_property
    def band(self) -> CheckBand:
        """The low-passed signals the unit, torque, encoder and time-scale checks read."""
        return CheckBand(self.trajectory)

    def saw(self, *codes: Code) -> bool:
        wanted = {c.code for c in codes}
        return any(f.code in wanted for f in self.found)


@dataclass(frozen=True)
class Check:
    """One registered check: its ``name``, the ``codes`` it raises, ``run`` (context ->
    findings), whether it ``applies`` to a context, and whether a finding of it is ``final``
    for the recording (the later checks would read its consequences)."""

    name: str
    codes: tuple[Code, ...]
    run: Callable[[RecordingContext], list[Finding]]
    applies: Callable[[RecordingContext], bool] = lambda _context: True
    final: bool = False


def _one(finding: Finding | None) -> list[Finding]:
    return [] if finding is None else [finding]


def _moves(context: RecordingContext) -> bool:
    # one still pose: the torque checks would correlate noise
    return bool(np.any(context.moving))


def _time(context: RecordingContext) -> list[Finding]:
    speed = rc.peak_speed(context.trajectory)
    return _one(rc.sample_rate_finding(context.rate_hz, speed))


def _units(context: RecordingContext) -> list[Finding]:
    # the speed rule needs seconds: not applied when the time base looks wrong
    rate = None if context.saw(SAMPLE_RATE) else context.rate_hz
    model, trajectory = context.model, context.trajectory
    found = rc.degrees_finding(model, trajectory, rate, band=context.band)
    return _one(found or rc.millimetres_finding(model, trajectory))


def _dead_encoder(context: RecordingContext) -> list[Finding]:
    model, trajectory, moving = context.model, context.trajectory, context.moving
    return _one(rc.dead_encoder_finding(model, trajectory, moving, band=context.band))


TIMELINE_ROWS = 1500  # rows of the time-scale fit: its question has a handful of answers


def _timeline(context: RecordingContext) -> list[Finding]:
    """The torques follow the motion clearly better on another time scale than the stamps'
    (:mod:`.time_scale`), judged on the torque checks' signals with derivatives per second; a
    clock runs in every joint's torque, a column of another scale in one: the evidence must
    stand without any one joint."""
    model = context.model
    signals = check_signals(context.trajectory, columns_removed=0, band=context.band)
    if signals is None:
        return []
    q, tau, seconds_per_row = signals
    dq = np.gradient(q, seconds_per_row, axis=0)
    ddq = np.gradient(dq, seconds_per_row, axis=0)
    rows = np.unique(np.linspace(0, len(q) - 1, min(len(q), TIMELINE_ROWS)).astype(int))
    q, dq, ddq, tau = q[rows], dq[rows], ddq[rows], tau[rows]
    regressors = time_scale_regressors(model, q, dq, ddq)  # shared by the fits below
    finding = time_scale_finding(fit_by_time_scale(model, q, dq, ddq, tau, regressors=regressors))
    fitted = np.flatnonzero(model.fitted)
    if finding is None or fitted.size < 3:
        return _one(finding)
    for left_out in fitted:
        joints = np.asarray(model.fitted, bool).copy()
        joints[left_out] = False
        if not still_a_clock(fit_by_time_scale(model, q, dq, ddq, tau, joints, regressors)):
            return []
    return [finding]


def timeline_finding(model: RobotModel, trajectory: Trajectory) -> Finding | None:
    """The time-scale check of one recording on its own (:func:`_timeline`)."""
    found = _timeline(RecordingContext(model, trajectory))
    return found[0] if found else None


def _timeline_applies(context: RecordingContext) -> bool:
    return _moves(context) and not context.saw(SAMPLE_RATE, *TORQUE_CODES)


RECORDING_CHECKS: tuple[Check, ...] = (
    Check("time base", (SAMPLE_RATE,), _time),
    Check("position step", (GUESSED_STEP,), lambda c: _one(rc.step_guess_finding(c.trajectory))),
    Check("units", (DEGREES, MILLIMETRES), _units, final=True),
    Check(
        "joint limits",
        (AT_LIMIT,),
        lambda c: _one(rc.limit_contact_finding(c.model, c.trajectory)),
        _moves,
        final=True,
    ),
    Check("dead encoder", (DEAD_ENCODER,), _dead_encoder, _moves, final=True),
    Check(
        "copied column",
        (COPIED_COLUMN,),
        lambda c: _one(rc.copied_column_finding(c.trajectory)),
        _moves,
        final=True,
    ),
    Check(
        "torques against gravity",
        TORQUE_CODES,
        lambda c: torque_findings(c.model, c.trajectory, TorqueThresholds(), c.band),
        _moves,
    ),
    Check(
        "lift sign", (LIFT_SIGN,), lambda c: _one(lift_sign_finding(c.model, c.trajectory)), _moves
    ),
    Check("time scale", (TIME_SCALE,), _timeline, _timeline_applies),
)


def named(finding: Finding, recording: str) -> Finding:
    """The finding said of one recording: its name first in the message and among the names."""
    return replace(
        finding, message=f"{recording}: {finding.message}", names=(recording, *finding.names)
    )


def recording_findings(
    model: RobotModel, trajectory: Trajectory, checks: tuple[Check, ...] = RECORDING_CHECKS
) -> list[Finding]:
    """The findings of one recording, by the checks in their declared order."""
    context = RecordingContext(model, trajectory)
    for check in checks:
        if not check.applies(context):
            continue
        found = check.run(context)
        context.found.extend(found)
        if found and check.final:
            break
    return context.found


def suspect_findings(model: RobotModel, trajectories: list[Trajectory]) -> list[Finding]:
    """Why these recordings look wrong (each finding names its recording); empty when nothing
    looks suspect. The training recordings' motion is judged apart
    (:func:`motionless_finding`)."""
    findings: list[Finding] = []
    for k, trajectory in enumerate(trajectories):
        name = trajectory.source or f"recording {k + 1}"
        findings += [named(f, name) for f in recording_findings(model, trajectory)]
    return findings


def suspect_reasons(model: RobotModel, trajectories: list[Trajectory]) -> list[str]:
    """The messages of :func:`suspect_findings`."""
    return [f.message for f in suspect_findings(model, trajectories)]


UNEXPLAINED_ERROR = 0.5  # relative error of the fit on its own (filtered) data
UNEXPLAINED_RAW_ERROR = 0.9  # ... on the raw torque: the model explains < 19 % of its variance


def unexplained_torque_finding(
    filtered_relative_error: float, raw_relative_error: float = 0.0, cutoff_hz: float | None = None
) -> Finding | None:
    """The identified model explains little of the torques it was fitted to: pure noise, torque
    columns of another machine or a sensor that was off leave a relative error near 100 % that
    least squares still "fits"; so does torque that varies mostly faster than the positions can
    follow (the filtered fit then looks fine while the raw torque is missed)."""
    filtered_ok = np.isfinite(filtered_relative_error) and filtered_relative_error <= (
        UNEXPLAINED_ERROR
    )
    raw_ok = np.isfinite(raw_relative_error) and raw_relative_error <= UNEXPLAINED_RAW_ERROR
    if filtered_ok and raw_ok:
        return None
    band = "" if cutoff_hz is None else f" below {cutoff_hz:.3g} Hz"
    return UNEXPLAINED(
        f"the identified model leaves {100 * raw_relative_error:.0f} % of the raw training torque "
        f"unexplained ({100 * filtered_relative_error:.0f} % of the torque{band} it was fitted "
        "to): the torque is mostly noise, varies faster than the motion, or is not this "
        "robot's",
        numbers={
            "raw_relative_error": raw_relative_error,
            "filtered_relative_error": filtered_relative_error,
        },
    )
