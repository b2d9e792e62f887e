"""Exact compression of the stacked observation system, one QR per joint.

For joint j, a QR factorisation ``[W_j | E_j | tau_j] = Q_j [R_j | r_j]`` (``W_j`` the M x p
standard regressor rows of that joint, ``E_j`` optional extra columns) gives, for *any* subset S
of columns, any parameters theta and any per-joint weight w_j,

    ||w_j (tau_j - W_j,S theta)||^2 = ||w_j (r_j - R_j,S theta)||^2,

because Q_j is orthogonal and ``[R_j | r_j]`` is square-ish (c + 1 rows). So ordinary and weighted
least squares, covariances, essential-parameter elimination and the consistency SDP all run on
``n (c + 1)`` rows instead of ``n M``, exactly, and the tall data are factorised once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from scipy.linalg.lapack import dgeqrf

from physid.memo import Remembers

# dgeqrf's workspace per column: LAPACK's optimal one is its block size (32 here); twice that
# runs the same blocked algorithm without a workspace query (a second call per factorisation)
_QR_BLOCK_WORKSPACE = 64


def triangular_factor(block: np.ndarray) -> np.ndarray:
    """The first ``min(M, N)`` rows of the R of ``block``'s Householder QR (M, N): what
    ``scipy.linalg.qr(block, mode="r")`` computes (LAPACK's dgeqrf, its blocked algorithm),
    without its wrappers, which cost more than the small factorisations here."""
    block = np.asarray(block, dtype=float)
    if block.size == 0:
        return np.zeros((min(block.shape), block.shape[1]))
    qr, _, _, info = dgeqrf(block, lwork=_QR_BLOCK_WORKSPACE * block.shape[1], overwrite_a=1)
    if info < 0:
        raise ValueError(f"illegal value in argument {-info} of dgeqrf")
    rows = min(block.shape)
    return np.where(_upper_triangle(rows, block.shape[1]), qr[:rows], 0.0)  # np.triu's result


@lru_cache(maxsize=64)
def _upper_triangle(rows: int, columns: int) -> np.ndarray:
    """np.triu's mask, kept: a few shapes recur over a thousand factorisations a run."""
    mask = np.triu(np.ones((rows, columns), dtype=bool))
    mask.flags.writeable = False
    return mask


@dataclass(frozen=True)
class ReducedSystem(Remembers):
    """Per-joint triangular factors of ``[W | extras]`` and the matching torque projections
    (:meth:`remembered`: the least squares and data ranks several choices ask of one system)."""

    R: np.ndarray  # (n, c + 1, c): columns 0..p-1 standard regressor, then the extras
    z: np.ndarray  # (n, c + 1)
    n_samples: int  # M rows per joint in the original system
    n_standard: int  # p
    tau_norm2: np.ndarray  # (n,) ||tau_j||^2, for relative errors
    # (n,) bool: joints whose rows are fitted (None: all); the others' factors are zero
    fitted: np.ndarray | None = None

    @property
    def n_joints(self) -> int:
        return self.R.shape[0]

    @property
    def n_fitted(self) -> int:
        return self.n_joints if self.fitted is None else int(np.sum(self.fitted))

    @property
    def n_rows(self) -> int:
        """Equations of the original system (M rows for each fitted joint)."""
        return self.n_samples * self.n_fitted

    def filled(self) -> tuple[np.ndarray, np.ndarray]:
        """Per joint, the rows (n, c + 1) and columns (n, c) of ``[R | z]`` that hold a non-zero
        (a joint's torque does not depend on the bodies before it: most of a factor is zero)."""
        cached = self.__dict__.get("_filled")
        if cached is None:
            nonzero = self.R != 0.0
            cached = (nonzero.any(axis=2) | (self.z != 0.0), nonzero.any(axis=1))
            object.__setattr__(self, "_filled", cached)
        return cached

    def acting(self, columns: np.ndarray) -> np.ndarray:
        """Number of the selected parameters that act on each joint (non-zero columns)."""
        return np.any(self.R[:, :, columns] != 0.0, axis=1).sum(axis=1)

    def stacked(
        self, columns: np.ndarray, weights: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(X, u)`` with ``||u - X theta|| = ||w (tau - W_S theta)||`` for columns S."""
        w = np.ones(self.n_joints) if weights is None else np.asarray(weights, float)
        X = (self.R[:, :, columns] * w[:, None, None]).reshape(-1, len(columns))
        return X, (self.z * w[:, None]).reshape(-1)

    def standard_only(self) -> ReducedSystem:
        """The same system without its extra columns (``n_standard`` columns): exact for every
        least-squares quantity of the standard columns (the torque's part along the extras
        joins the residual row), and a much smaller factor to combine (:mod:`.folds`)."""
        if self.R.shape[2] == self.n_standard:
            return self  # not cached: a reference to itself would keep it alive until a GC pass
        cached = self.__dict__.get("_standard_only")
        if cached is None:  # the whole training system is fitted a dozen times: reduced once
            cached = self._standard_only()
            object.__setattr__(self, "_standard_only", cached)
        return cached

    def _standard_only(self) -> ReducedSystem:
        p = self.n_standard
        R = np.zeros((self.n_joints, p + 1, p))
        z = np.zeros((self.n_joints, p + 1))
        R[:, :p] = self.R[:, :p, :p]
        z[:, :p] = self.z[:, :p]
        z[:, p] = np.linalg.norm(self.z[:, p:], axis=1)
        # A gravity shift (:meth:`shifted`) adds extra columns into the standard ones, whose
        # entries then reach below row p: those joints are factorised again, or their rows
        # below p would be dropped from the standard columns' sums of squares.
        for j in np.flatnonzero(np.any(self.R[:, p:, :p] != 0.0, axis=(1, 2))):
            factor = triangular_factor(np.column_stack([self.R[j][:, :p], self.z[j]]))
            rows = min(factor.shape[0], p + 1)
            R[j] = 0.0
            z[j] = 0.0
            R[j][:rows] = factor[:rows, :p]
            z[j][:rows] = factor[:rows, p]
        return replace(self, R=R, z=z)

    def joint_residual2(self, columns: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """Per-joint squared residual norm ``||tau_j - W_j,S theta||^2`` (n,)."""
        return np.sum((self.z - self.R[:, :, columns] @ theta) ** 2, axis=1)

    def shifted(self, extras: list[tuple[np.ndarray, float]]) -> ReducedSystem:
        """Add ``coefficient * extra block`` to the standard block: ``W + sum_i c_i E_i``.

        Each entry is ``(extra column indices aligned with standard columns 0..len-1, c_i)``;
        exact because the reduction is linear in the columns.
        """
        R = self.R.copy()
        for columns, coefficient in extras:
            R[:, :, : len(columns)] += coefficient * self.R[:, :, columns]
        return replace(self, R=R)


def reduce_system(X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Triangular form of ``min ||u - X theta||``: ``R`` (p, p), ``z = Q^T u`` and the residual.

    ``||u - X theta||^2 = ||z - R theta||^2 + outside`` for every theta; one Householder QR of
    ``[X | u]`` without forming Q.
    """
    cols = X.shape[1]
    factor = triangular_factor(np.column_stack([X, u]))
    factor = np.vstack([factor, np.zeros((max(0, cols + 1 - factor.shape[0]), cols + 1))])
    return factor[:cols, :cols], factor[:cols, cols], float(factor[cols, cols] ** 2)


def reduce_observations(
    W: np.ndarray, tau: np.ndarray, extras: np.ndarray | None = None
) -> ReducedSystem:
    """Compress ``tau (M, n) = W (M, n, p) theta`` (plus extra columns (M, n, e)) per joint."""
    accumulator = ReductionAccumulator()
    accumulator.add(W, tau, extras)
    return accumulator.system()


class ReductionAccumulator:
    """:func:`reduce_observations` of a system given in row chunks (a long recording's windows):
    each chunk is stacked under the triangular factor of the previous ones and factorised again,
    so the tall data are never held together. The factor of all chunks equals that of the whole
    system up to the signs of its rows, which no least-squares quantity depends on."""

    def __init__(self) -> None:
        self._factors: list[np.ndarray] = []  # per joint: (k + 1, k + 1) over _active[j] + tau
        self._active: list[np.ndarray] = []
        self._n_samples = 0
        self._n_standard = 0
        self._n_columns = 0
        self._tau_norm2: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        """Rows added so far."""
        return self._n_samples

    def add(
        self,
        W: np.ndarray | tuple[np.ndarray, ...],
        tau: np.ndarray,
        extras: np.ndarray | None = None,
    ) -> None:
        """Stack the rows ``tau (M, n) = [W | extras] (M, n, c) theta`` under the others.
        ``W`` may be given as its column blocks (a tuple, side by side: no copy is made)."""
        standard = W if isinstance(W, tuple) else (W,)
        parts = (*standard, extras) if extras is not None else standard
        widths = [part.shape[2] for part in parts]
        n_rows, n_joints = tau.shape
        if not self._factors:
            self._factors = [np.zeros((1, 1)) for _ in range(n_joints)]
            self._active = [np.zeros(0, dtype=int) for _ in range(n_joints)]
            self._n_standard = sum(part.shape[2] for part in standard)
            self._n_columns = sum(widths)
            self._tau_norm2 = np.zeros(n_joints)
        self._n_samples += n_rows
        self._tau_norm2 += np.sum(tau**2, axis=0)
        # Structurally zero columns (bodies before joint j) are skipped: half the work.
        present = np.concatenate([np.any(part != 0.0, axis=0) for part in parts], axis=1)
        offsets = np.cumsum([0, *widths])
        for j in range(n_joints):
            before = self._active[j]
            active = np.flatnonzero(present[j])
            if active.size != before.size or not np.array_equal(active, before):
                active = np.union1d(before, active)
            m, k = self._factors[j].shape[0], active.size + 1
            A = np.empty((m + n_rows, k), order="F")
            if active.size == before.size:
                A[:m] = self._factors[j]
            else:  # new columns: the previous factor's spread over the wider set
                A[:m] = 0.0
                A[:m, np.searchsorted(active, before)] = self._factors[j][:, :-1]
                A[:m, -1] = self._factors[j][:, -1]
            bounds = np.searchsorted(active, offsets)
            for part, start, stop, offset in zip(
                parts, bounds[:-1], bounds[1:], offsets[:-1], strict=True
            ):
                A[m:, start:stop] = part[:, j, active[start:stop] - offset]
            A[m:, -1] = tau[:, j]
            factor = triangular_factor(A)
            rows = min(factor.shape[0], active.size + 1)
            self._factors[j], self._active[j] = factor[:rows], active

    def system(self) -> ReducedSystem:
        """The reduced system of every row added so far."""
        n_joints, n_columns = len(self._factors), self._n_columns
        R = np.zeros((n_joints, n_columns + 1, n_columns))
        z = np.zeros((n_joints, n_columns + 1))
        for j, (factor, active) in enumerate(zip(self._factors, self._active, strict=True)):
            rows = factor.shape[0]
            R[j][:rows, active] = factor[:, : active.size]
            z[j, :rows] = factor[:, active.size]
        return ReducedSystem(R, z, self._n_samples, self._n_standard, self._tau_norm2.copy())
