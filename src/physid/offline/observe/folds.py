"""Blocked cross-validation folds of the training recordings: contiguous blocks of time.

Every default that the user's data can decide (cut-off, Coulomb deadband, gravity tilt, prior
strength: :mod:`.selection`) is decided by how well a fit on some of the training data predicts
the rest. Samples of a recording are serially correlated (filters, slow motion), so a random
split would score a fit on its own neighbours; the folds here are contiguous: each recording's
duration is cut into ``n_folds`` equal blocks and fold ``k`` is block ``k`` of every recording.

The observations of each fold are reduced separately (:class:`FoldAccumulator`, per-joint QR as
:mod:`.reduced`), so the system of "every fold but k" is one small QR of the folds' triangular
factors (:func:`combine`), exactly the reduction of those rows.

Identification excitations are usually periodic and recorded over several periods; then every
time block holds motion the other blocks repeat. For choosing preprocessing that is what the
folds should see (a held-out run of the same excitation repeats it too, and phase blocks
would choose preprocessing for motion that run never shows). For the
*uncertainty* it is not: blocks that are near replicates agree, and a jackknife over them says
the estimate is certain when it only fits the same motion's misfit the same way each time
(:mod:`.jackknife`); nor is it for the question whether the data demand implausible masses
(:func:`~.against_prior.plausible_prior`), which same-motion folds answer for a fit that absorbs
that motion's misfit into them. :func:`repeat_period` finds a recording's period and
:meth:`FoldPlan.by_phase` cuts it into quarters of the period instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from physid.memo import Remembers
from physid.offline.observe.reduced import (
    ReducedSystem,
    ReductionAccumulator,
    triangular_factor,
)

N_FOLDS = 4
REPEAT_MISMATCH = 0.15  # RMS of q(t + T) - q(t), per joint's std: below it the motion repeats
DEPARTED_MISMATCH = 0.5  # ... having been above it within the lag (not merely a slow motion)
_PERIOD_GRID = 2_000  # positions compared on at most this many samples


def repeat_period(t: np.ndarray, q: np.ndarray) -> float | None:
    """The period [s] of a recording whose motion repeats at least twice, else None: the
    shortest lag ``T <= duration / 2`` at which the positions return to themselves (RMS of
    ``q(t + T) - q(t)`` over the moving joints, each in units of its std, below
    :data:`REPEAT_MISMATCH`) after leaving them (above :data:`DEPARTED_MISMATCH` at a shorter
    lag), refined to the mismatch's local minimum. The two thresholds leave a wide gap between
    a repeated excitation (mismatch of a few hundredths) and one that never returns (a few
    tenths and up; docs/benchmarks.md, "Why the defaults are what they are")."""
    t, q = np.asarray(t, float), np.asarray(q, float)
    if q.ndim != 2 or len(t) < 8 or len(q) != len(t) or not np.all(np.isfinite(q)):
        return None
    spread = q.std(axis=0)
    moving = spread > 1e-6 * max(float(spread.max(initial=0.0)), 1e-300)
    if not moving.any():
        return None
    stride = max(1, len(t) // _PERIOD_GRID)
    x = ((q - q.mean(axis=0)) / np.where(moving, spread, 1.0))[::stride][:, moving]
    lags = np.arange(1, len(x) // 2 + 1)
    if not len(lags):
        return None

    def exact(lag: int) -> float:
        return float(np.sqrt(np.mean((x[lag:] - x[:-lag]) ** 2)))

    # every lag's mismatch from one autocorrelation (FFT), each one that a decision below
    # depends on (within 1e-8 of a threshold, and the walk to the minimum) recomputed exactly
    mismatch = _mismatches(x, len(lags))
    for bound in (DEPARTED_MISMATCH, REPEAT_MISMATCH):
        for k in np.flatnonzero(np.abs(mismatch - bound) < 1e-8):
            mismatch[k] = exact(int(lags[k]))
    departed = np.maximum.accumulate(mismatch) > DEPARTED_MISMATCH
    candidates = np.flatnonzero(departed & (mismatch < REPEAT_MISMATCH))
    if not len(candidates):
        return None
    k = int(candidates[0])
    here = exact(int(lags[k]))
    while k + 1 < len(lags) and (following := exact(int(lags[k + 1]))) < here:
        k, here = k + 1, following
    return float(lags[k] * stride * np.median(np.diff(t)))


def _mismatches(x: np.ndarray, n_lags: int) -> np.ndarray:
    """RMS of ``x[lag:] - x[:-lag]`` for lags 1..``n_lags``: the sums of squares of the
    overlapping parts minus twice their correlation (by FFT), over their ``(N - lag) m``
    entries (``x``: (N, m))."""
    n = len(x)
    spectrum = np.fft.rfft(x, n=2 * n, axis=0)
    correlation = np.fft.irfft(np.abs(spectrum) ** 2, n=2 * n, axis=0)[: n_lags + 1].sum(axis=1)
    squares = np.sum(x**2, axis=1)
    head = np.cumsum(squares)  # sum over rows 0..i
    tail = head[-1] - np.r_[0.0, head[:-1]]  # sum over rows i..N-1
    lags = np.arange(1, n_lags + 1)
    total = tail[lags] + head[n - 1 - lags] - 2.0 * correlation[lags]
    return np.sqrt(np.maximum(total, 0.0) / ((n - lags) * x.shape[1]))


_READ_ROWS = 200_000  # a streamed recording's positions are read this many rows at a time


def _coarse_positions(recording) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """Every k-th time and position of a recording (about :data:`_PERIOD_GRID` of them), read
    block by block from a streamed one (:class:`~physid.recordings.streamed.RecordingFile`)."""
    n = len(recording.t)
    stride = max(1, n // _PERIOD_GRID)
    t = np.asarray(recording.t[::stride], float)
    if isinstance(recording.q, np.ndarray):
        return t, recording.q[::stride]
    step = max(stride, _READ_ROWS - _READ_ROWS % stride)
    q = np.concatenate(
        [np.asarray(recording.q[a : min(a + step, n) : stride], float) for a in range(0, n, step)]
    )
    return t, q


@dataclass(frozen=True)
class FoldPlan:
    """Fold boundaries [s] of each training recording (``edges[r]``: ``n_folds + 1`` times) and,
    for a plan by phase, each recording's period (None: cut by time)."""

    edges: tuple[np.ndarray, ...]
    periods: tuple[float | None, ...] = ()

    @property
    def n_folds(self) -> int:
        return len(self.edges[0]) - 1

    @classmethod
    def of(cls, recordings: list, n_folds: int = N_FOLDS) -> FoldPlan:
        """Equal-duration blocks of every recording (``t`` of each)."""
        return cls(tuple(np.linspace(r.t[0], r.t[-1], n_folds + 1) for r in recordings))

    @classmethod
    def by_phase(cls, recordings: list, n_folds: int = N_FOLDS) -> FoldPlan | None:
        """Equal phase ranges of every period of each recording in memory that repeats its
        motion (:func:`repeat_period`), time blocks of the others; None if none repeats."""
        periods = tuple(repeat_period(*_coarse_positions(r)) for r in recordings)
        if all(period is None for period in periods):
            return None
        return replace(cls.of(recordings, n_folds), periods=periods)

    def fold(self, recording: int, t: np.ndarray) -> np.ndarray:
        """Fold index (0..n_folds-1) of each time ``t`` of recording ``recording``."""
        t = np.asarray(t, float)
        period = self.periods[recording] if self.periods else None
        if period is not None:
            phase = np.mod(t - self.edges[recording][0], period) / period
            return np.minimum((phase * self.n_folds).astype(int), self.n_folds - 1)
        return np.searchsorted(self.edges[recording][1:-1], t, side="right")

    def notes(self) -> list[str]:
        """What a plan by phase did, per recording cut by phase."""
        return [
            f"recording {r + 1} repeats its motion every {period:.4g} s: the jackknife's "
            "blocks and the plausibility choice's folds are quarters of that period"
            for r, period in enumerate(self.periods)
            if period is not None
        ]


class FoldAccumulator:
    """One :class:`ReductionAccumulator` per fold, fed with time-stamped row chunks."""

    def __init__(self, plan: FoldPlan) -> None:
        self.plan = plan
        self.sums = [ReductionAccumulator() for _ in range(plan.n_folds)]

    def add(
        self,
        recording: int,
        t: np.ndarray,
        W: np.ndarray | tuple[np.ndarray, ...],
        tau: np.ndarray,
        extras: np.ndarray | None = None,
    ) -> None:
        """Rows ``tau = [W | extras] theta`` of one recording at times ``t``, each to its fold
        (``W`` as one array or its column blocks, :meth:`ReductionAccumulator.add`)."""
        folds = self.plan.fold(recording, t)
        for k in np.unique(folds):
            rows = contiguous(np.flatnonzero(folds == k))
            part = tuple(w[rows] for w in W) if isinstance(W, tuple) else W[rows]
            self.sums[k].add(part, tau[rows], None if extras is None else extras[rows])

    def systems(self) -> list[ReducedSystem]:
        """One reduced system per fold (a fold without rows: zero factors, ``n_samples`` 0)."""
        filled = [total.system() if total.n_samples else None for total in self.sums]
        template = next(s for s in filled if s is not None)
        empty = ReducedSystem(
            np.zeros_like(template.R),
            np.zeros_like(template.z),
            0,
            template.n_standard,
            np.zeros_like(template.tau_norm2),
        )
        return [empty if s is None else s for s in filled]


def contiguous(rows: np.ndarray) -> slice | np.ndarray:
    """Row indices (ascending) as a slice when they are contiguous, as a time block's rows are:
    indexing with it gives views, not copies."""
    if rows.size and rows[-1] - rows[0] + 1 == rows.size:
        return slice(int(rows[0]), int(rows[-1]) + 1)
    return rows


def store_systems(
    store, plan: FoldPlan, fitted: np.ndarray | None = None, *, gravity: bool = False
) -> FoldSystems:
    """The per-fold reduced systems of the stored observations (``store``: an
    :class:`~.store.ObservationStore`, its standard regressor as fitted) under ``plan``;
    ``gravity``: with the chunks' gravity regressors ``G`` as extra columns."""
    accumulator = FoldAccumulator(plan)
    for recording in range(len(plan.edges)):
        for chunk in store.of_recording(recording):
            extras = chunk.G if gravity else None
            accumulator.add(recording, chunk.t, chunk.W, chunk.tau, extras)
    return FoldSystems(replace(system, fitted=fitted) for system in accumulator.systems())


def combine(systems: list[ReducedSystem]) -> ReducedSystem:
    """The reduced system of all the rows of ``systems`` (same columns): per joint, one QR of
    their stacked ``[R | z]`` factors (exact: each factor reproduces its rows' sums of squares).
    Only the columns and rows some factor fills enter the QR: a joint's torque does not depend
    on the bodies before it, so most of each factor is structurally zero."""
    first = systems[0]
    n_joints, n_columns = first.n_joints, first.R.shape[2]
    R = np.zeros((n_joints, n_columns + 1, n_columns))
    z = np.zeros((n_joints, n_columns + 1))
    filled = [s.filled() for s in systems]  # (rows, columns) of each
    # every system's [R | z] rows one under another: one selection per joint, not one per system
    rows_filled = np.concatenate([rows for rows, _ in filled], axis=1)
    columns_filled = np.any([columns for _, columns in filled], axis=0)
    stacked = np.concatenate([np.concatenate([s.R, s.z[:, :, None]], axis=2) for s in systems], 1)
    for j in range(n_joints):
        active = np.flatnonzero(columns_filled[j])
        filled_rows = np.flatnonzero(rows_filled[j])  # take twice: a third of np.ix_'s time
        block = stacked[j].take(filled_rows, 0).take(np.append(active, n_columns), 1)
        factor = triangular_factor(block)
        rows = min(factor.shape[0], active.size + 1)
        R[j][:rows, active] = factor[:rows, : active.size]
        z[j, :rows] = factor[:rows, active.size]
    return ReducedSystem(
        R,
        z,
        sum(s.n_samples for s in systems),
        first.n_standard,
        np.sum([s.tau_norm2 for s in systems], axis=0),
        first.fitted,
    )


def column_subset(system: ReducedSystem, columns: np.ndarray) -> ReducedSystem:
    """The reduced system of ``columns`` of ``system`` alone, in their order (every column
    standard), triangular again: exact, since ``[R_S | z]`` reproduces the sums of squares of
    the rows for any subset S."""
    columns = np.asarray(columns)
    return combine([replace(system, R=system.R[:, :, columns], n_standard=columns.size)])


def taken_apart(system: ReducedSystem, n_shared: int, count: int) -> list[ReducedSystem]:
    """The ``count`` systems of a system reduced as ``[shared | block_0 | block_1 | ...]``
    (``n_shared`` shared columns, then ``count`` blocks of one width): each the shared columns
    and its block (:func:`column_subset`). Several joint-term models that differ in a few
    columns (the Coulomb deadband candidates) are reduced once side by side, then taken apart,
    instead of reducing the rows once per model."""
    width = (system.n_standard - n_shared) // count
    shared = np.arange(n_shared)
    return [
        column_subset(system, np.concatenate([shared, n_shared + k * width + np.arange(width)]))
        for k in range(count)
    ]


def leave_out(systems: list[ReducedSystem], fold: int) -> ReducedSystem:
    """The reduced system of every fold but ``fold``, on the standard columns only (of
    :class:`FoldSystems`: computed once)."""
    if isinstance(systems, FoldSystems):
        return systems.left_out(fold)
    return _combined_without(systems, fold)


def _combined_without(systems: list[ReducedSystem], fold: int) -> ReducedSystem:
    kept = [s.standard_only() for k, s in enumerate(systems) if k != fold and s.n_samples > 0]
    return combine(kept)


class FoldSystems(Remembers, tuple):
    """The reduced systems of one training's cross-validation folds, each fold's complement
    (:func:`leave_out`) combined once: the cut-off's, deadband's, weighting's and prior's
    scores of the chosen training all fit on the same complements."""

    def left_out(self, fold: int) -> ReducedSystem:
        """The reduced system of every fold but ``fold`` (:func:`leave_out`)."""
        return self.remembered(("left_out", fold), lambda: _combined_without(self, fold))
