"""Whether a replayed recording can support the online estimate: refused before the replay, or
a non-ok status after it, with the numbers seen.

Why: the filter never fails — a sample it cannot use is skipped or gated, and with no update at
all it streams the URDF's nominal body. Without a verdict, a recording with one time stamp, a
shuffled log or positions in the wrong unit ended "0 updates", exit 0, with the nominal 0.3 kg
reported as the estimate.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError
from physid.online.columns import OnlineSignals, actuated_joints
from physid.recordings.tables import Table
from physid.recordings.trajectory import _check_finite, _check_magnitude

MIN_UPDATE_SHARE = 0.2  # of the samples after calibration and the acceleration window
MIN_UPDATES = 10
MAX_GATED_SHARE = 0.5  # of the measurements the filter judged
MAX_SAMPLE_PERIOD_S = 0.5  # a robot's joint log: slower is time in ms (or not a robot log)
LIMIT_SLACK_RAD = 0.5  # positions beyond the URDF limits by more than this are not the robot's


SIGNAL_PREFIXES = ("q_", "dq_", "tau_", "base_", "f_", "m_")  # the columns online reads


def check_table(table: Table) -> None:
    """Every time stamp finite (it places its sample: a NaN one was echoed into estimates.csv)
    and no signal beyond 1e8 in magnitude (1e300 overflowed the innovation covariance: numpy
    warnings, and the sample was used). A NaN signal value stays a skipped sample."""
    _check_finite(table, ["t"])
    _check_magnitude(table, [c for c in table.columns if c.startswith(SIGNAL_PREFIXES)])


def check_some_sample_is_whole(signals: OnlineSignals, table: Table) -> None:
    """At least one sample with every signal the filter reads finite; otherwise an InputError
    naming the signal columns that are NaN in every row (a probe's log with tau_j2 all NaN:
    every sample skipped, "only 0 updates", and the nominal mass printed as a result)."""
    parts = [signals.q, signals.tau] + [x for x in (signals.dq, signals.wrenches) if x is not None]
    whole = np.ones(signals.n_samples, dtype=bool)
    for part in parts:
        whole &= np.all(np.isfinite(part.reshape(signals.n_samples, -1)), axis=1)
    if whole.any():
        return
    empty = [name for name, values in table.columns.items()
             if name.startswith(SIGNAL_PREFIXES) and not np.isfinite(values).any()]  # fmt: skip
    named = f": {', '.join(empty)} NaN in every row" if empty else ""
    raise InputError(f"no sample has every signal the filter reads{named}", source=signals.source)


def check_time(t: NDArray[np.float64], source: str) -> None:
    """The finite time stamps must strictly increase (NaN stamps are skipped by the filter);
    otherwise an InputError naming the first row (data rows count from 1) where they do not,
    and how many steps go backwards or stand still."""
    rows = np.flatnonzero(np.isfinite(t))
    if rows.size < 2:
        raise InputError(
            f"{rows.size} finite time stamp(s) in {len(t)} rows: nothing to replay", source=source
        )
    steps = np.diff(t[rows])
    bad = np.flatnonzero(steps <= 0)
    if bad.size:
        row = int(rows[bad[0] + 1])
        raise InputError(
            f"column 't' does not increase at row {row + 1} (t = {t[row]:.6g} s after "
            f"{t[rows[bad[0]]]:.6g} s); {bad.size} of {steps.size} steps go backwards or stand "
            "still: sort the recording by time, or fix its time stamps",
            source=source,
        )


def check_replayable(signals: OnlineSignals, acceleration_window: int) -> None:
    """Refuse what cannot give a single update: time stamps that do not increase, fewer
    samples than the acceleration window needs, torques that are all zero (no sensor logged)."""
    check_time(signals.t, signals.source)
    needed = acceleration_window + 2
    if signals.n_samples < needed:
        raise InputError(
            f"{signals.n_samples} samples; the filter needs at least {needed} (acceleration "
            f"window of {acceleration_window} samples, then an update)",
            source=signals.source,
        )
    tau = signals.tau[np.all(np.isfinite(signals.tau), axis=1)]
    if tau.size and not np.any(tau):
        raise InputError(
            "every joint torque (tau_ columns) is zero: physid online needs measured torques",
            source=signals.source,
        )


def data_reasons(signals: OnlineSignals, model: pin.Model) -> list[str]:
    """What makes a well-formed recording implausible for this robot, each with its numbers:
    time not in seconds, positions far outside the URDF's joint limits, no joint moving."""
    reasons = []
    t = signals.t[np.isfinite(signals.t)]
    period = float(np.median(np.diff(t)))
    if period > MAX_SAMPLE_PERIOD_S:
        reasons.append(f"the median time step is {period:.3g} s: is t in seconds?")
    joints = actuated_joints(model)
    q = signals.q[:, -len(joints) :] if joints else np.zeros((len(signals.t), 0))
    for k, joint in enumerate(joints):
        joint_id = model.getJointId(joint)
        index = model.joints[joint_id].idx_q
        low, high = model.lowerPositionLimit[index], model.upperPositionLimit[index]
        column = q[:, k][np.isfinite(q[:, k])]
        if column.size and np.all(np.isfinite([low, high])) and high > low:
            beyond = max(low - column.min(), column.max() - high)
            if beyond > LIMIT_SLACK_RAD + 0.1 * (high - low):
                reasons.append(
                    f"q_{joint} spans {column.min():.4g} to {column.max():.4g}, outside its URDF "
                    f"limits [{low:.3g}, {high:.3g}]: wrong unit or wrong robot?"
                )
                break
    spans = np.ptp(np.where(np.isfinite(q), q, np.nanmedian(q, axis=0)), axis=0) if q.size else []
    if len(spans) and float(np.max(spans)) < 1e-6:
        reasons.append(f"no joint moves (largest range {float(np.max(spans)):.3g})")
    return reasons


def replay_status(
    n_samples: int,
    updates: int,
    judged: int,
    gated: int,
    reasons: list[str],
    innovation_failure: str = "",
) -> tuple[str, list[str]]:
    """``("ok", [])``, or ``("suspect", reasons)`` when the data look wrong (:func:`data_reasons`)
    or too few of the samples updated the estimate (it is then mostly the nominal body), or too
    many measurements were gated; ``innovation_failure`` (the innovations the model cannot
    explain, with the gated share: ``gating_warning``) stands in for the gated share's reason,
    which said "the model does not explain the torques" a second time (an online probe)."""
    reasons = list(reasons)
    usable = max(judged, 1)
    if updates < max(MIN_UPDATES, MIN_UPDATE_SHARE * usable):
        reasons.append(
            f"only {updates} updates of {n_samples} samples ({judged} judged by the filter): "
            "the estimate is mostly the nominal body"
        )
    if innovation_failure:
        reasons.append(innovation_failure)
    elif judged and gated > MAX_GATED_SHARE * judged:
        reasons.append(
            f"{gated} of {judged} measurements gated ({100 * gated / judged:.0f} %): the model "
            "does not explain the torques"
        )
    return ("suspect" if reasons else "ok"), reasons
