"""The damped normal equations of one Levenberg–Marquardt iteration (paper A eq. 3.21,
Appendices B-C), solved by eliminating the states.

``H = J^T J`` splits into the state block ``H_ss`` (block-tridiagonal: the impulse residual of
step k touches the states k and k+1, eq. 3.25), the state-parameter block ``H_sp`` and the small
parameter block ``H_pp``. ``H_ss + alpha S_ss`` is factorised by a banded Cholesky (LAPACK
``pbtrf``; bandwidth ``2 x 12 n_bodies - 1``), the parameters by their dense Schur complement
and the box-constrained QP of Appendix C (:func:`box_qp`): on the synthetic Furuta (500 steps,
12,000 states) the banded Cholesky factorises ten times faster than a sparse LU. A state block
that is not positive definite (a state no residual sees) falls back to the sparse LU.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from physid.impacts.lcp import lemke

MAX_BAND = 400  # wider than this (many bodies): the sparse LU is the better choice


def box_qp(
    H: np.ndarray,
    g: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    C: np.ndarray | None = None,
    b: np.ndarray | None = None,
) -> np.ndarray:
    """``argmin 1/2 d^T H d + g^T d`` s.t. ``lo <= d <= hi`` and ``C d >= b`` (H positive
    definite) as an LCP in the constraint multipliers: rows ``P d >= q0``, ``M = P H^-1 P^T``
    (PSD: Lemke solves it)."""
    Hi = np.linalg.inv(H)
    c = -Hi @ g
    L, U = np.flatnonzero(np.isfinite(lo)), np.flatnonzero(np.isfinite(hi))
    C = np.zeros((0, len(g))) if C is None else np.asarray(C, float)
    b = np.zeros(0) if b is None else np.asarray(b, float)
    if np.all(c[L] >= lo[L]) and np.all(c[U] <= hi[U]) and np.all(C @ c >= b):
        return c
    P = np.vstack([np.eye(len(g))[L], -np.eye(len(g))[U], C])  # d_L >= lo, -d_U >= -hi, C d >= b
    M = P @ Hi @ P.T
    q = P @ c - np.concatenate([lo[L], -hi[U], b])
    sol = lemke(M, q)
    d = c + Hi @ (P.T @ sol.z)
    return np.clip(d, lo, hi)


class _BandPlan:
    """Where each stored entry of a CSR matrix goes in the upper band storage: LM builds
    ``J_s^T J_s`` with the same structure every iteration, so the index work (0.01 s per call
    at 600 steps) is done once per structure."""

    def __init__(self, H: sp.csr_matrix) -> None:
        self.indptr, self.indices, self.shape = H.indptr.copy(), H.indices.copy(), H.shape
        rows = np.repeat(np.arange(H.shape[0]), np.diff(H.indptr))
        self.take = np.flatnonzero(H.indices >= rows)
        rows, cols = rows[self.take], H.indices[self.take]
        self.band = int((cols - rows).max(initial=0))
        self.flat = cols * self.band + rows + self.band  # (band + row - col, col), Fortran

    def fits(self, H: sp.csr_matrix) -> bool:
        return (
            H.shape == self.shape
            and np.array_equal(H.indptr, self.indptr)
            and np.array_equal(H.indices, self.indices)
        )


_PLAN: list[_BandPlan] = []  # the last structure seen


def upper_band(H: sp.spmatrix) -> np.ndarray | None:
    """LAPACK upper band storage (``ab[band + i - j, j] = H[i, j]``, Fortran order) of the
    symmetric ``H``, or None when the band is wider than :data:`MAX_BAND`."""
    H = sp.csr_matrix(H)
    if not (_PLAN and _PLAN[0].fits(H)):
        _PLAN[:] = [_BandPlan(H)]
    plan = _PLAN[0]
    if plan.band > MAX_BAND:
        return None
    data = H.data[plan.take]
    # flush entries below 1e-24 of the largest: they cannot change a double-precision factor,
    # but subnormal ones (~1e-300 products of the sparse Jacobian) make pbtrf several times
    # slower
    data[np.abs(data) < 1e-24 * np.abs(data).max(initial=0.0)] = 0.0
    ab = np.zeros((plan.band + 1, H.shape[0]), order="F")  # C order: 30x slower
    ab.reshape(-1, order="F")[plan.flat] = data
    return ab


def spd_solver(
    ab: np.ndarray | None, matrix: Callable[[], sp.spmatrix]
) -> Callable[[np.ndarray], np.ndarray]:
    """``b -> H^-1 b`` for a symmetric ``H``: banded Cholesky of its upper band ``ab``
    (:func:`upper_band`; overwritten) when given and positive definite, else the sparse LU of
    ``matrix()``."""
    if ab is not None:
        try:
            # in place: the callers hand over a fresh array (a copy costs nearly a third)
            chol = sla.cholesky_banded(ab, overwrite_ab=True, lower=False, check_finite=False)
            return lambda b: sla.cho_solve_banded((chol, False), b, check_finite=False)
        except np.linalg.LinAlgError:
            pass
    return spla.splu(sp.csc_matrix(matrix())).solve


class NormalEquations:
    """``J^T J`` and ``J^T r`` of one iterate, split into state and parameter blocks."""

    def __init__(self, J: sp.spmatrix, r: np.ndarray, n_state: int) -> None:
        Jc = J.tocsc()
        self.J, self.n_state = J.tocsr(), n_state
        Js, Jp = Jc[:, :n_state], Jc[:, n_state:]
        self.Hss = Js.T @ Js
        # sparse times dense: the same products summed in the same order as the sparse
        # product (same bits), without its symbolic pass
        self.Hsp = Js.T @ Jp.toarray()
        self.Hpp = np.asarray((Jp.T @ Jp).todense())
        self.g = np.asarray(J.T @ r).ravel()
        diag = np.concatenate([self.Hss.diagonal(), np.diag(self.Hpp)])
        self.scale = np.maximum(diag, 1e-12 * max(diag.max(initial=0.0), 1e-300))
        self.ab = upper_band(self.Hss)
        self.band = None if self.ab is None else self.ab.shape[0] - 1

    def quadratic(self, dx: np.ndarray) -> float:
        """``dx^T H dx = ||J dx||^2`` (inf, not a warning, for a step that overflows)."""
        with np.errstate(over="ignore", invalid="ignore"):
            Jdx = self.J @ dx
            value = float(Jdx @ Jdx)
        return value if np.isfinite(value) else np.inf

    def _state_solver(self, alpha: float) -> Callable[[np.ndarray], np.ndarray]:
        damp = alpha * self.scale[: self.n_state]
        ab = None
        if self.ab is not None:
            ab = self.ab.copy(order="F")
            ab[-1] += damp
        return spd_solver(ab, lambda: self.Hss + sp.diags(damp))

    def factor(
        self, alpha: float, C: np.ndarray | None = None
    ) -> Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None], np.ndarray]:
        """``solve(g, lo, hi, b)``: ``dx`` of ``(H + alpha S) dx = -g``, ``S = diag(H)``
        (Marquardt's scaling), with the parameter part ``dp`` of ``dx`` kept in ``[lo, hi]``
        and ``C dp >= b``."""
        n_state = self.n_state
        solve_ss = self._state_solver(alpha)
        if self.Hpp.shape[0] == 0:
            return lambda g, lo=None, hi=None, b=None: -solve_ss(g)
        Asp = self.Hsp
        App = self.Hpp + np.diag(alpha * self.scale[n_state:])
        Y = solve_ss(Asp)
        Hr = App - Asp.T @ Y
        Hr = 0.5 * (Hr + Hr.T)

        def solve(
            g: np.ndarray, lo: np.ndarray, hi: np.ndarray, b: np.ndarray | None = None
        ) -> np.ndarray:
            ys = solve_ss(g[:n_state])
            dp = box_qp(Hr, g[n_state:] - Asp.T @ ys, lo, hi, C, b)
            return np.concatenate([-(ys + Y @ dp), dp])

        return solve
