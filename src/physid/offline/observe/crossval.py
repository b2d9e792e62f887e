"""Blocked cross-validation on the RAW training torque: a fit on every fold but one predicts the
torque recorded in that fold, at the recording's own samples.

The score is the one users judge a model by (``physid validate``): the positions differentiated
with the candidate's own filter, the torque as recorded, neither low-passed nor
decimated (:mod:`.prediction`). Scoring on the filtered, decimated observations instead would
reward a candidate for what its own filter removed. Each fold is scored on at most
:data:`MAX_SCORING_ROWS` raw samples in all (every k-th), away from the recordings' ends where
the derivatives lean on extrapolation.

Nor is a fold scored where the robot rests (:func:`rest_intervals`): stretches of at least
:data:`REST_MIN_S` in which every joint that moves in the recording is below
:data:`REST_FRACTION` of its RMS speed, read from the recorded positions over 0.25 s (so that
every candidate filter is scored on the same rows; a sharp stop then counts from about 0.75 s).
A joint at rest holds whatever torque static friction allows, anywhere within its band, and no
model of this class predicts which: those rows score each candidate by how its Coulomb terms,
its cut-off's ringing at a stop and its offsets happen to land inside that band. Real recordings
often start or end at rest for a large share of their rows, which would then choose the cut-off
and the deadband. Rows where all joints merely turn at once stay scored (they carry the inertia,
and leaving them out changes the choices they decide), and a recording that rests for more than half
its duration (static poses: gravity is what it identifies) is scored on every row. The fit itself
uses every row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from physid.files.config import FilterConfig
from physid.numerics.linalg import unit_norm_columns
from physid.offline.observe.folds import FoldPlan, contiguous, leave_out
from physid.offline.observe.passes import recorded_windows
from physid.offline.observe.reduced import ReducedSystem
from physid.offline.observe.windows import LastWindowStates, Recording, plan_recording
from physid.recordings.trajectory import moving_joints_of
from physid.robot.model import RobotModel, gravity_of
from physid.robot.regressor import inertial_regressor, joint_term_regressor

MAX_SCORING_ROWS = 4_000
# A row where every joint moves slower than this share of its RMS speed is at rest: the widest
# Coulomb deadband the data may choose (:data:`.deadband.CANDIDATE_FRACTIONS`)
REST_FRACTION = 0.05
# ... for at least this long: a stop, not the instant all joints happen to turn together
# (a reversal passes the band in 0.07 / omega s, 0.06 s at 0.2 Hz, and carries the inertia)
REST_MIN_S = 0.5
# ... unless the recording rests for more than this share of its duration (static poses)
MAX_REST_SHARE = 0.5


@dataclass(frozen=True)
class RowPool:
    """Every k-th raw training sample of the recordings (away from their edges, as the fit
    leaves them out: :class:`~.windows.RecordingPlan`), with a candidate filter's states, in
    recording order; the folds of any :class:`~.folds.FoldPlan` are subsets of it
    (:meth:`split`), and its regressor is built once per gravity and sliced into them."""

    q: np.ndarray  # (M, n)
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray
    t: np.ndarray  # (M,) time stamps
    recording: np.ndarray  # (M,) index of the recording of each sample
    moving: np.ndarray  # (M,) bool: outside the recording's rests (module docstring)
    # inertial regressors already built, by gravity vector (candidates share them)
    _inertial: dict = field(default_factory=dict, repr=False, compare=False)

    def inertial(self, model: RobotModel) -> np.ndarray:
        """(M, n, 10 b) inertial regressor of ``model`` (its gravity) at every sample."""
        key = tuple(np.round(gravity_of(model), 12))
        if key not in self._inertial:
            self._inertial[key] = inertial_regressor(model, self.q, self.dq, self.ddq)
        return self._inertial[key]

    def forget(self) -> None:
        """Drop the regressors built so far (they are built again when asked for)."""
        self._inertial.clear()

    def _fold_of(self, folds: FoldPlan) -> np.ndarray:
        fold_of = np.empty(len(self.t), dtype=int)
        for index in range(len(folds.edges)):
            mine = self.recording == index
            fold_of[mine] = folds.fold(index, self.t[mine])
        return fold_of

    def by_fold(self, folds: FoldPlan) -> RowPool:
        """The same samples with each fold's together (recording order within a fold; the
        regressors built so far reordered alike), so that :meth:`split` hands out each fold's
        regressor rows as a view of the pool's, not a copy (a fold of a 4,000-row pool of a
        7-joint arm: 4 MB)."""
        order = np.argsort(self._fold_of(folds), kind="stable")
        if np.array_equal(order, np.arange(order.size)):
            return self
        arrays = (self.q, self.dq, self.ddq, self.tau, self.t, self.recording, self.moving)
        pool = RowPool(*(a[order] for a in arrays))
        pool._inertial.update({key: value[order] for key, value in self._inertial.items()})
        return pool

    def split(self, folds: FoldPlan) -> list[RawRows]:
        """The samples of each fold of ``folds``, in recording order (their rows a slice of
        the pool's when they are contiguous: :meth:`by_fold`)."""
        fold_of = self._fold_of(folds)
        parts = []
        for k in range(folds.n_folds):
            rows = contiguous(np.flatnonzero(fold_of == k))
            moving = self.moving[rows]
            parts.append(
                RawRows(
                    self.q[rows],
                    self.dq[rows],
                    self.ddq[rows],
                    self.tau[rows],
                    None if moving.all() else moving,
                    self,
                    rows,
                )
            )
        return parts


@dataclass(frozen=True)
class RawRows:
    """Raw training samples of one fold: the candidate filter's states and the recorded torque,
    and which of them are scored (None: all; module docstring)."""

    q: np.ndarray  # (M, n)
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray
    scored: np.ndarray | None = None  # (M,) bool
    pool: RowPool | None = field(default=None, repr=False, compare=False)  # the samples of
    # ... these rows (a slice when they are contiguous there)
    rows: np.ndarray | slice | None = field(default=None, repr=False, compare=False)

    @property
    def n_scored(self) -> int:
        return len(self.tau) if self.scored is None else int(np.count_nonzero(self.scored))

    # the inertial regressor of these rows, by gravity vector (the pool's, sliced once)
    _inertial: dict = field(default_factory=dict, repr=False, compare=False)

    def inertial(self, model: RobotModel) -> np.ndarray:
        """(M, n, 10 b) inertial regressor of ``model`` (its gravity) at these states."""
        key = tuple(np.round(gravity_of(model), 12))
        if key not in self._inertial:
            if self.pool is not None:
                self._inertial[key] = self.pool.inertial(model)[self.rows]
            else:
                self._inertial[key] = inertial_regressor(model, self.q, self.dq, self.ddq)
        return self._inertial[key]

    def regressor(self, model: RobotModel) -> np.ndarray:
        """(M, n, p) standard regressor of ``model`` (its gravity, deadband) at these states."""
        joint_terms = joint_term_regressor(model, self.dq, self.ddq)
        return np.concatenate([self.inertial(model), joint_terms], axis=-1)

    def predict(self, model: RobotModel, theta: np.ndarray) -> np.ndarray:
        """(M, n) torques of ``model`` with standard parameters ``theta`` at these states (the
        regressor's two parts applied apart: no (M, n, p) copy of them together)."""
        inertial = self.inertial(model)
        n_inertial = inertial.shape[-1]
        joint_terms = joint_term_regressor(model, self.dq, self.ddq)
        return inertial @ theta[:n_inertial] + joint_terms @ theta[n_inertial:]


def row_pool(
    model: RobotModel,
    recordings: list[Recording],
    options: FilterConfig,
    max_rows: int = MAX_SCORING_ROWS,
    rests: list[np.ndarray] | None = None,
    states: LastWindowStates | None = None,
) -> RowPool:
    """Every k-th raw sample of the training recordings (at most ``max_rows``) with the states
    of ``options``' filter (the edges left out as in the fit, :class:`~.windows.RecordingPlan`),
    and whether each lies outside the recording's rests (``rests``: each recording's
    :func:`rest_intervals`, when known: they do not depend on the filter; ``states``: shared
    with the candidate's observations, :mod:`.passes`)."""
    total = sum(r.n_samples for r in recordings)
    stride = max(1, int(np.ceil(total / max_rows)))
    parts: list[tuple[np.ndarray, ...]] = []
    for index, recording in enumerate(recordings):
        plan = plan_recording(model, recording, options)
        t0, t1 = recording.t[0] + plan.edge_s, recording.t[-1] - plan.edge_s
        stops = rest_intervals(recording) if rests is None else rests[index]
        start = 0
        for owned, q, dq, ddq in recorded_windows("crossval", recording, plan, states=states):
            rows = np.flatnonzero((start + np.arange(owned.n_samples)) % stride == 0)
            start += owned.n_samples
            t = owned.t[rows]
            rows = rows[(t >= t0) & (t <= t1)]
            if rows.size:
                t = owned.t[rows]
                parts.append(
                    (
                        q[rows],
                        dq[rows],
                        ddq[rows],
                        owned.tau[rows],
                        t,
                        np.full(rows.size, index),
                        ~within(t, stops),
                    )
                )
    if not parts:
        n = model.n_joints
        empty = (np.zeros((0, n)),) * 4 + (np.zeros(0), np.zeros(0, dtype=int))
        return RowPool(*empty, np.zeros(0, dtype=bool))
    return RowPool(*(np.concatenate([p[i] for p in parts]) for i in range(7)))


def raw_rows(
    model: RobotModel,
    recordings: list[Recording],
    options: FilterConfig,
    folds: FoldPlan,
    max_rows: int = MAX_SCORING_ROWS,
) -> list[RawRows]:
    """Every k-th raw sample of the training recordings, grouped by fold, with the states of
    ``options``' filter (:func:`row_pool` split by ``folds``)."""
    return row_pool(model, recordings, options, max_rows).by_fold(folds).split(folds)


def rest_note(folds: list[RawRows]) -> str | None:
    """One line for the preprocessing notes when rows at rest were left out of the scores."""
    total = sum(len(fold.tau) for fold in folds)
    rest = total - sum(fold.n_scored for fold in folds)
    if not rest:
        return None
    return (
        f"the folds are scored where the robot moves: {100 * rest / total:.0f} % of the "
        f"training rows lie in rests of {REST_MIN_S:g} s or more (every joint below "
        f"{REST_FRACTION:g} x its RMS speed), where static friction holds whatever torque it may"
    )


def rest_intervals(recording: Recording) -> np.ndarray:
    """(k, 2) start and end times [s] of the recording's rests (module docstring): stretches of
    at least :data:`REST_MIN_S` in which every joint that moves in this recording is below
    :data:`REST_FRACTION` of its RMS speed; none when they add up to more than
    :data:`MAX_REST_SHARE` of it (static poses). Read from the recorded positions alone (the
    speed over :data:`REST_MIN_S` / 2), so every candidate filter is scored on the same rows.
    A still joint (:func:`~physid.recordings.glitches.moving_joints`: its span within the still
    bound or a few times its noise) does not count: its speed is its sensor's noise, as often
    above as below any share of its own RMS (one still joint's sensor noise would hide every
    rest of the recording)."""
    t, q = sampled_positions(recording)
    none = np.zeros((0, 2))
    if len(t) < 3 or t[-1] - t[0] <= REST_MIN_S:
        return none
    half = 0.25 * REST_MIN_S
    speed = np.column_stack(
        [
            (np.interp(t + half, t, q[:, j]) - np.interp(t - half, t, q[:, j])) / (2.0 * half)
            for j in range(q.shape[1])
        ]
    )
    rms = np.sqrt(np.mean(speed**2, axis=0))
    moving = (rms > 0.0) & moving_joints_of(recording, q)
    if not np.any(moving):
        return none
    slow = np.all(np.abs(speed[:, moving]) <= REST_FRACTION * rms[moving], axis=1)
    edges = np.flatnonzero(np.diff(np.r_[0, slow.astype(int), 0]))
    runs = np.array([(t[a], t[b - 1]) for a, b in zip(edges[::2], edges[1::2], strict=True)])
    # read over 2 x half, a sharp stop looks that much shorter: a stop is a rest from about
    # REST_MIN_S + 2 x half (0.75 s; the shorter stops are motion enough to score)
    runs = runs[runs[:, 1] - runs[:, 0] >= REST_MIN_S] if len(runs) else none
    if np.sum(runs[:, 1] - runs[:, 0]) > MAX_REST_SHARE * (t[-1] - t[0]):
        return none
    return runs


REST_ROWS = 200_000  # positions read for finding rests (every k-th row of a longer recording)


def moving_in(recordings: list[Recording]) -> np.ndarray:
    """(n,) bool: the joints that move beyond their position noise in any of ``recordings``
    (:func:`~physid.recordings.glitches.moving_joints` of their sampled positions)."""
    return np.any([moving_joints_of(r, sampled_positions(r)[1]) for r in recordings], axis=0)


def sampled_positions(recording: Recording) -> tuple[np.ndarray, np.ndarray]:
    """Stamps and positions of at most :data:`REST_ROWS` evenly spread rows, a recording on
    disk read block by block."""
    t = np.asarray(recording.t, dtype=float)
    step = max(1, int(np.ceil(len(t) / REST_ROWS)))
    if isinstance(recording.q, np.ndarray):
        return t[::step], recording.q[::step]
    block = step * 10_000
    q = np.concatenate(
        [
            np.asarray(recording.q[a : min(a + block, len(t)) : step], float)
            for a in range(0, len(t), block)
        ]
    )
    return t[::step], q


def within(t: np.ndarray, intervals: np.ndarray) -> np.ndarray:
    """(M,) bool: whether each time lies in one of the (k, 2) closed ``intervals``."""
    inside = np.zeros(len(t), dtype=bool)
    for start, end in intervals:
        inside |= (t >= start) & (t <= end)
    return inside


@dataclass(frozen=True)
class CVScore:
    """Cross-validated relative error of one candidate: per fold and over all folds."""

    label: str
    fold_errors: np.ndarray  # (K,) ||tau - tau_hat|| / ||tau|| of each held-out fold
    total: float  # over every held-out sample of every fold
    # (K, n) the same per fold and joint (NaN where a fold holds none of a joint's torque)
    joint_fold_errors: np.ndarray | None = field(default=None, repr=False, compare=False)
    value: float | None = None  # the candidate's number (a cut-off in Hz, ...), if it has one

    def as_dict(self) -> dict:
        return {
            "label": self.label,
            "relative_error": self.total,
            "fold_relative_errors": self.fold_errors.tolist(),
        }


Fit = Callable[[ReducedSystem | None], np.ndarray]


def cv_score(
    label: str,
    model: RobotModel,
    systems: list[ReducedSystem] | None,
    rows: list[RawRows],
    fit: Fit,
    regressors: list[np.ndarray] | None = None,
) -> CVScore:
    """Fit on every fold but ``k`` (``fit`` of their reduced system), predict fold ``k``'s raw
    torque with ``model``'s regressor (or the given per-fold ``regressors``). ``systems`` None:
    ``fit`` ignores the data (a fixed model, :func:`fixed_score`)."""
    fitted = model.fitted
    errors, residual2, measured2 = [], 0.0, 0.0
    joint_errors = np.full((len(rows), model.n_joints), np.nan)
    for k, fold in enumerate(rows):
        if fold.n_scored == 0 or (systems is not None and systems[k].n_samples == 0):
            errors.append(np.nan)
            continue
        theta = fit(None if systems is None else leave_out(systems, k))
        predicted = fold.predict(model, theta) if regressors is None else regressors[k] @ theta
        keep = slice(None) if fold.scored is None else fold.scored
        residual = (fold.tau - predicted)[keep]
        r2_joint = np.sum(residual**2, axis=0)
        m2_joint = np.sum(fold.tau[keep] ** 2, axis=0)
        r2, m2 = float(np.sum(r2_joint[fitted])), float(np.sum(m2_joint[fitted]))
        errors.append(np.sqrt(r2 / max(m2, 1e-300)))
        with np.errstate(divide="ignore", invalid="ignore"):
            joint_errors[k] = np.where(
                fitted & (m2_joint > 0), np.sqrt(r2_joint / m2_joint), np.nan
            )
        residual2, measured2 = residual2 + r2, measured2 + m2
    total = float(np.sqrt(residual2 / max(measured2, 1e-300)))
    return CVScore(label, np.array(errors), total, joint_errors)


def fixed_score(label: str, model: RobotModel, rows: list[RawRows], theta: np.ndarray) -> CVScore:
    """The same score for parameters not fitted to the folds (the URDF's own model)."""
    return cv_score(label, model, None, rows, lambda _system: theta)


def least_squares_fit(columns: np.ndarray, n_standard: int) -> Fit:
    """Plain least squares of the base ``columns`` (normalised; minimum norm), others 0: the
    OLS baseline, on the same folds. Solving for the base columns only matters: a minimum-norm
    solution over all standard columns puts huge, cancelling values on the near-null
    directions, which RNEA then predicts with round-off (1e25 %)."""

    def fit(system: ReducedSystem) -> np.ndarray:
        A, u = system.stacked(columns)
        scaled, norms = unit_norm_columns(A)
        solution = np.linalg.lstsq(scaled, u, rcond=1e-10)[0]
        theta = np.zeros(n_standard)
        theta[columns] = solution / norms
        return theta

    return fit
