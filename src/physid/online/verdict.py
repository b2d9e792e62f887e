"""Whether a replayed recording can support the online estimate: refused before the replay, or
a non-ok status after it, with the findings (codes ON1xx-ON3xx) and the numbers seen.

Why: the filter never fails — a sample it cannot use is skipped or gated, and with no update at
all it streams the URDF's nominal body. Without a verdict, a recording with one time stamp, a
shuffled log or positions in the wrong unit would end with no update, exit 0, and the nominal
body reported as the estimate.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError
from physid.findings import Finding, Severity, worst
from physid.online.codes import (
    BOUNDED_UPDATES,
    FEW_UPDATES,
    MANY_GATED,
    NO_JOINT_MOVES,
    POSITIONS_OUTSIDE_LIMITS,
    TIME_NOT_SECONDS,
    TORQUES_UNEXPLAINED,
)
from physid.online.columns import OnlineSignals, actuated_joints
from physid.online.ekf import RecursiveInertialFilter
from physid.online.replay import ReplayResult
from physid.recordings.tables import Table
from physid.recordings.trajectory import _check_finite, _check_magnitude
from physid.status import Status

MIN_UPDATE_SHARE = 0.2  # of the samples after calibration and the acceleration window
MIN_UPDATES = 10
MAX_GATED_SHARE = 0.5  # of the measurements the filter judged
MAX_SAMPLE_PERIOD_S = 0.5  # a robot's joint log: slower is time in ms (or not a robot log)
LIMIT_SLACK_RAD = 0.5  # positions beyond the URDF limits by more than this are not the robot's


SIGNAL_PREFIXES = ("q_", "dq_", "tau_", "base_", "f_", "m_")  # the columns online reads


def check_table(table: Table) -> None:
    """Every time stamp finite (it places its sample: a NaN one would be echoed into
    estimates.csv) and no signal beyond 1e8 in magnitude (1e300 overflows the innovation
    covariance, and the sample would still be used). A NaN signal value stays a skipped
    sample."""
    _check_finite(table, ["t"])
    _check_magnitude(table, [c for c in table.columns if c.startswith(SIGNAL_PREFIXES)])


def check_some_sample_is_whole(signals: OnlineSignals, table: Table) -> None:
    """At least one sample with every signal the filter reads finite; otherwise an InputError
    naming the signal columns that are NaN in every row (a column all NaN skips every sample,
    and the nominal mass would be printed as a result)."""
    parts = [signals.q, signals.tau] + [x for x in (signals.dq, signals.wrenches) if x is not None]
    whole = np.ones(signals.n_samples, dtype=bool)
    for part in parts:
        whole &= np.all(np.isfinite(part.reshape(signals.n_samples, -1)), axis=1)
    if whole.any():
        return
    empty = [
        name
        for name, values in table.columns.items()
        if name.startswith(SIGNAL_PREFIXES) and not np.isfinite(values).any()
    ]
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


def data_findings(signals: OnlineSignals, model: pin.Model) -> list[Finding]:
    """What makes a well-formed recording implausible for this robot, each with its numbers:
    time not in seconds (:data:`~physid.online.codes.TIME_NOT_SECONDS`), positions far outside
    the URDF's joint limits (:data:`~physid.online.codes.POSITIONS_OUTSIDE_LIMITS`), no joint
    moving (:data:`~physid.online.codes.NO_JOINT_MOVES`)."""
    findings = []
    t = signals.t[np.isfinite(signals.t)]
    period = float(np.median(np.diff(t)))
    if period > MAX_SAMPLE_PERIOD_S:
        findings.append(
            TIME_NOT_SECONDS(
                f"the median time step is {period:.3g} s: is t in seconds?",
                numbers={"median_step_s": period, "longest_expected_s": MAX_SAMPLE_PERIOD_S},
                names=("t",),
            )
        )
    joints = actuated_joints(model)
    q = signals.q[:, -len(joints) :] if joints else np.zeros((len(signals.t), 0))
    outside = _outside_limits(q, joints, model)
    if outside is not None:
        findings.append(outside)
    spans = np.ptp(np.where(np.isfinite(q), q, np.nanmedian(q, axis=0)), axis=0) if q.size else []
    if len(spans) and float(np.max(spans)) < 1e-6:
        largest = float(np.max(spans))
        findings.append(
            NO_JOINT_MOVES(
                f"no joint moves (largest range {largest:.3g})",
                numbers={"largest_range_rad_or_m": largest, "least_expected_rad_or_m": 1e-6},
                names=joints,
            )
        )
    return findings


def _outside_limits(
    q: NDArray[np.float64], joints: tuple[str, ...], model: pin.Model
) -> Finding | None:
    """The first joint whose positions ``q`` leave its URDF limits by more than
    :data:`LIMIT_SLACK_RAD` and a tenth of the range."""
    for k, joint in enumerate(joints):
        index = model.joints[model.getJointId(joint)].idx_q
        low, high = model.lowerPositionLimit[index], model.upperPositionLimit[index]
        column = q[:, k][np.isfinite(q[:, k])]
        if not (column.size and np.all(np.isfinite([low, high])) and high > low):
            continue
        beyond = max(low - column.min(), column.max() - high)
        slack = LIMIT_SLACK_RAD + 0.1 * (high - low)
        if beyond > slack:
            return POSITIONS_OUTSIDE_LIMITS(
                f"q_{joint} spans {column.min():.4g} to {column.max():.4g}, outside its URDF "
                f"limits [{low:.3g}, {high:.3g}]: wrong unit or wrong robot?",
                numbers={
                    "lowest_rad_or_m": column.min(),
                    "highest_rad_or_m": column.max(),
                    "lower_limit_rad_or_m": low,
                    "upper_limit_rad_or_m": high,
                    "beyond_rad_or_m": beyond,
                    "slack_rad_or_m": slack,
                },
                names=(f"q_{joint}",),
            )
    return None


def replay_findings(
    n_samples: int, updates: int, judged: int, gated: int, unexplained: Finding | None = None
) -> list[Finding]:
    """Whether the replay itself supports the estimate: too few of the samples updated it (it
    is then mostly the nominal body: :data:`~physid.online.codes.FEW_UPDATES`), or too many
    measurements were gated (:data:`~physid.online.codes.MANY_GATED`). ``unexplained``
    (:func:`innovation_finding`: the innovations the model cannot explain, with the gated
    share) stands in for the gated share's finding, which would say that the model does not
    explain the torques a second time."""
    findings = []
    needed = max(MIN_UPDATES, MIN_UPDATE_SHARE * max(judged, 1))
    if updates < needed:
        findings.append(
            FEW_UPDATES(
                f"only {updates} updates of {n_samples} samples ({judged} judged by the filter): "
                "the estimate is mostly the nominal body",
                numbers={
                    "updates": updates,
                    "samples": n_samples,
                    "judged": judged,
                    "least_updates": needed,
                },
            )
        )
    if unexplained is not None:
        findings.append(unexplained)
    elif judged and gated > MAX_GATED_SHARE * judged:
        findings.append(
            MANY_GATED(
                f"{gated} of {judged} measurements gated ({100 * gated / judged:.0f} %): the model "
                "does not explain the torques",
                numbers={
                    "gated": gated,
                    "judged": judged,
                    "gated_share": gated / judged,
                    "largest_share": MAX_GATED_SHARE,
                },
            )
        )
    return findings


def replay_status(findings: Iterable[Finding]) -> Status:
    """``suspect`` when a finding is (the data look wrong, or the replay cannot support the
    estimate), else ``ok``: the filter itself never fails (module docstring)."""
    least = worst(findings)
    return Status.SUSPECT if least is not None and least.at_least(Severity.SUSPECT) else Status.OK


# When the estimate is called failed. The normalised innovation squared of the accepted updates
# is chi-square with m degrees of freedom (median ~ m) when the model and the noise model are
# right: a log with its friction model reads well below m, one without it some ten times m, and
# impacts gated by design leave it near 2 m with a right mass. Above 3 m the updates that pass
# the gate are mostly the ones it let through after rejecting them for release_after_s: the
# data disagree with the model.
NIS_FAILURE = 3.0
GATED_FAILURE = 0.2  # or a fifth of the measurements rejected


def innovation_finding(
    result: ReplayResult, rows: int, gated_fraction: float, friction_modelled: bool
) -> tuple[float, Finding | None]:
    """The median normalised innovation squared of the accepted updates of ``result`` (NaN
    without any), and :data:`~physid.online.codes.TORQUES_UNEXPLAINED` when it or the gated
    fraction shows that the model (``rows`` measurement rows) cannot explain the torques,
    naming the likely cause (no joint friction modelled, or the units and signs)."""
    accepted = ~(result.gated | result.skipped | result.calibrating) & np.isfinite(result.nis)
    median = float(np.median(result.nis[accepted])) if accepted.any() else float("nan")
    if not (median > NIS_FAILURE * rows or gated_fraction > GATED_FAILURE):
        return median, None
    innovation = (
        f"the accepted updates' median normalised innovation is {median:.3g} against about "
        f"{rows} for a model and noise that fit, and "
        if np.isfinite(median)
        else "no update was accepted: "
    )
    text = (
        f"the model does not explain the torques: {innovation}{100 * gated_fraction:.1f} % of "
        "the measurements were gated; the estimates are not reliable"
    )
    if not friction_modelled:
        text += (
            "; no joint friction is modelled: if the joints have any, give nominal_params (a "
            "params.json from physid identify, docs/online.md); else check the units, the "
            "wrench signs and the quaternion order (x, y, z, w)"
        )
    numbers = {
        "nis_median": median,
        "rows": rows,
        "largest_nis_median": NIS_FAILURE * rows,
        "gated_share": gated_fraction,
        "largest_gated_share": GATED_FAILURE,
    }
    return median, TORQUES_UNEXPLAINED(text, numbers=numbers)


def bounded_finding(filt: RecursiveInertialFilter) -> Finding | None:
    """:data:`~physid.online.codes.BOUNDED_UPDATES` when updates of ``filt`` were brought back
    within the body's plausibility bounds (the EKF's ``_bounded``)."""
    if not filt.bounded_updates:
        return None
    return BOUNDED_UPDATES(
        f"{filt.bounded_updates} updates pulled an estimate beyond what the body can be (its "
        f"centre of mass beyond {filt.com_bound_m:.3g} m, the robot's stretched length, from "
        "its joint, or its mass below 1 % of the nominal) and were brought back: the nominal "
        "model of the other bodies, or the torques, are off where that happened",
        numbers={"updates": filt.bounded_updates, "com_bound_m": filt.com_bound_m},
        names=filt.bodies,
    )
