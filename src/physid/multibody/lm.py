"""Levenberg–Marquardt on the manifold with box constraints (paper A Algorithm 1, eqs. 3.21-3.22,
Appendix C).

Each step solves ``min ||r + J dx||^2 + alpha dx^T S dx`` subject to the parameters staying in
their box, ``S = diag(J^T J)`` (Marquardt's scaling, so the result does not depend on parameter
units; Algorithm 1 uses ``S = I``). The states are eliminated by a sparse LU of their block
(a Schur complement, as in the MLCP of Appendix C); the remaining small box-constrained QP in the
parameters is an LCP solved exactly by Lemke's algorithm. The update is ``X <- X [+] dx``; the
damping follows Algorithm 1 (``alpha *= nu`` on rejection, ``alpha *= max(1/3, 1-(2 rho-1)^3)``
on acceptance).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from physid.impacts.lcp import lemke


@dataclass
class LMResult:
    """Outcome of :func:`levenberg_marquardt`; ``status`` is never an exception."""

    x: object
    p: np.ndarray
    status: str  # converged_gradient|_step|_cost | max_iterations | no_progress | failed: ..
    iterations: int
    cost_history: list[float] = field(default_factory=list)
    gain_ratio_history: list[float] = field(default_factory=list)
    alpha_history: list[float] = field(default_factory=list)


def box_qp(H: np.ndarray, g: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``argmin 1/2 d^T H d + g^T d`` s.t. ``lo <= d <= hi`` (H positive definite) as an LCP in
    the bound multipliers, ``[[Hi, -Hi], [-Hi, Hi]]`` with ``Hi = H^-1`` (PSD: Lemke solves it)."""
    Hi = np.linalg.inv(H)
    c = -Hi @ g
    L, U = np.flatnonzero(np.isfinite(lo)), np.flatnonzero(np.isfinite(hi))
    if np.all(c[L] >= lo[L]) and np.all(c[U] <= hi[U]):
        return c
    P = np.vstack([np.eye(len(g))[L], -np.eye(len(g))[U]])  # d_L >= lo, -d_U >= -hi
    M = P @ Hi @ P.T
    q = P @ c - np.concatenate([lo[L], -hi[U]])
    sol = lemke(M, q)
    d = c + Hi @ (P.T @ sol.z)
    return np.clip(d, lo, hi)


def _solve_step(H, g, alpha, n_state, lo, hi):
    diag = H.diagonal()
    scale = np.maximum(diag, 1e-12 * max(diag.max(), 1e-300))
    A = (H + alpha * sp.diags(scale)).tocsc()
    if H.shape[0] == n_state:
        return -spla.spsolve(A, g)
    Ass, Asp = A[:n_state, :n_state], A[:n_state, n_state:].toarray()
    App = A[n_state:, n_state:].toarray()
    lu = spla.splu(Ass)
    Y = lu.solve(np.column_stack([Asp, g[:n_state]]))
    Hr = App - Asp.T @ Y[:, :-1]
    gr = g[n_state:] - Asp.T @ Y[:, -1]
    dp = box_qp(0.5 * (Hr + Hr.T), gr, lo, hi)
    return np.concatenate([-(Y[:, -1] + Y[:, :-1] @ dp), dp])


def levenberg_marquardt(
    residual: Callable,
    retract: Callable,
    x0: object,
    p0: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    n_state: int,
    *,
    max_iterations: int = 20,
    eps_gradient: float = 1e-12,
    eps_step: float = 1e-10,
    alpha0: float = 1e-3,
) -> LMResult:
    """Algorithm 1 of paper A. ``residual(x, p, jacobian)`` returns ``r`` or ``(r, J)`` (sparse,
    columns: ``n_state`` state tangents then the parameters); ``retract(x, p, dx)`` is ``[+]``.

    Stops when ``||J^T r||_inf <= eps_gradient * ||r||^2`` (relative gradient), when the
    parameter step is below ``eps_step`` relative to the parameters while the cost decreases by
    less than 1e-6 relative, when the cost decreases by
    less than 1e-12 relative, when no damping up to
    ``2^32`` reduces the cost, or after ``max_iterations``.
    """
    x, p = x0, np.clip(np.asarray(p0, float), lower, upper)
    try:
        r, J = residual(x, p, True)
    except (ValueError, np.linalg.LinAlgError, RuntimeError) as error:
        return LMResult(x, p, f"failed: residual evaluation ({error})", 0)
    cost = float(r @ r)
    result = LMResult(x, p, "max_iterations", 0, [cost])
    if not np.isfinite(cost):
        result.status = "failed: non-finite residual at the start"
        return result
    alpha, nu = alpha0, 2.0
    for it in range(1, max_iterations + 1):
        H, g = (J.T @ J).tocsr(), J.T @ r
        if np.abs(g).max() <= eps_gradient * max(cost, 1e-300):
            result.status = "converged_gradient"
            break
        rho, dx = -1.0, None
        while rho <= 0 and alpha < 2.0**32:
            try:
                dx = _solve_step(H, g, alpha, n_state, lower - p, upper - p)
                xn, pn = retract(x, p, dx)
                rn = residual(xn, pn, False)
                cost_n = float(rn @ rn)
                predicted = -(2 * g @ dx + dx @ (H @ dx))
                rho = (cost - cost_n) / predicted if predicted > 0 else -1.0
                if not np.isfinite(cost_n):
                    rho = -1.0
            except (ValueError, np.linalg.LinAlgError, RuntimeError):
                rho = -1.0
            if rho <= 0:
                alpha, nu = alpha * nu, min(2 * nu, 2.0**32)
        if rho <= 0:
            result.status = "no_progress"
            break
        x, p = xn, pn
        r, J = residual(x, p, True)
        previous, cost = cost, float(r @ r)
        result.cost_history.append(cost)
        result.gain_ratio_history.append(float(rho))
        result.alpha_history.append(float(alpha))
        result.iterations = it
        alpha *= max(1 / 3, 1 - (2 * rho - 1) ** 3)
        nu = 2.0
        dp = dx[n_state:]
        small = np.linalg.norm(dp) <= eps_step * (np.linalg.norm(p) + eps_step)
        if dp.size and small and previous - cost <= 1e-6 * previous:
            result.status = "converged_step"
            break
        if previous - cost <= 1e-12 * previous:
            result.status = "converged_cost"
            break
    result.x, result.p = x, p
    return result
