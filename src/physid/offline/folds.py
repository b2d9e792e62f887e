"""Blocked cross-validation folds of the training recordings: contiguous blocks of time.

Every default that the user's data can decide (cut-off, Coulomb deadband, gravity tilt, prior
strength: :mod:`.selection`) is decided by how well a fit on some of the training data predicts
the rest. Samples of a recording are serially correlated (filters, slow motion), so a random
split would score a fit on its own neighbours; the folds here are contiguous: each recording's
duration is cut into ``n_folds`` equal blocks and fold ``k`` is block ``k`` of every recording.

The observations of each fold are reduced separately (:class:`FoldAccumulator`, per-joint QR as
:mod:`.reduced`), so the system of "every fold but k" is one small QR of the folds' triangular
factors (:func:`combine`), exactly the reduction of those rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from physid.offline.reduced import ReducedSystem, ReductionAccumulator

N_FOLDS = 4


@dataclass(frozen=True)
class FoldPlan:
    """Fold boundaries [s] of each training recording (``edges[r]``: ``n_folds + 1`` times)."""

    edges: tuple[np.ndarray, ...]

    @property
    def n_folds(self) -> int:
        return len(self.edges[0]) - 1

    @classmethod
    def of(cls, recordings: list, n_folds: int = N_FOLDS) -> FoldPlan:
        """Equal-duration blocks of every recording (``t`` of each)."""
        return cls(tuple(np.linspace(r.t[0], r.t[-1], n_folds + 1) for r in recordings))

    def fold(self, recording: int, t: np.ndarray) -> np.ndarray:
        """Fold index (0..n_folds-1) of each time ``t`` of recording ``recording``."""
        inner = self.edges[recording][1:-1]
        return np.searchsorted(inner, np.asarray(t, float), side="right")


class FoldAccumulator:
    """One :class:`ReductionAccumulator` per fold, fed with time-stamped row chunks."""

    def __init__(self, plan: FoldPlan) -> None:
        self.plan = plan
        self.sums = [ReductionAccumulator() for _ in range(plan.n_folds)]

    def add(
        self,
        recording: int,
        t: np.ndarray,
        W: np.ndarray,
        tau: np.ndarray,
        extras: np.ndarray | None = None,
    ) -> None:
        folds = self.plan.fold(recording, t)
        for k in np.unique(folds):
            rows = folds == k
            self.sums[k].add(W[rows], tau[rows], None if extras is None else extras[rows])

    def systems(self) -> list[ReducedSystem]:
        """One reduced system per fold (a fold without rows: zero factors, ``n_samples`` 0)."""
        filled = [total.system() if total.n_samples else None for total in self.sums]
        template = next(s for s in filled if s is not None)
        empty = ReducedSystem(np.zeros_like(template.R), np.zeros_like(template.z), 0,
                              template.n_standard, np.zeros_like(template.tau_norm2))  # fmt: skip
        return [empty if s is None else s for s in filled]


def combine(systems: list[ReducedSystem]) -> ReducedSystem:
    """The reduced system of all the rows of ``systems`` (same columns): per joint, one QR of
    their stacked ``[R | z]`` factors (exact: each factor reproduces its rows' sums of squares)."""
    first = systems[0]
    n_joints, n_columns = first.n_joints, first.R.shape[2]
    R = np.zeros((n_joints, n_columns + 1, n_columns))
    z = np.zeros((n_joints, n_columns + 1))
    for j in range(n_joints):
        stacked = np.vstack([np.column_stack([s.R[j], s.z[j]]) for s in systems])
        factor = scipy.linalg.qr(stacked, mode="r", check_finite=False)[0]
        rows = min(factor.shape[0], n_columns + 1)
        R[j, :rows] = factor[:rows, :n_columns]
        z[j, :rows] = factor[:rows, n_columns]
    return ReducedSystem(
        R,
        z,
        sum(s.n_samples for s in systems),
        first.n_standard,
        np.sum([s.tau_norm2 for s in systems], axis=0),
        first.fitted,
    )


def leave_out(systems: list[ReducedSystem], fold: int) -> ReducedSystem:
    """The reduced system of every fold but ``fold``, on the standard columns only."""
    kept = [s.standard_only() for k, s in enumerate(systems) if k != fold and s.n_samples > 0]
    return combine(kept)
