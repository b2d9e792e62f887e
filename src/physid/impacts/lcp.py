"""Linear complementarity problems: find z ≥ 0 with w = M z + q ≥ 0 and zᵀw = 0.

The simulator's per-step problem (paper D eqs. 16–19, with the restitution conditions of eq. 4 on
the switched-on contacts and the friction complementarity of eqs. 10–15) is a small LCP of the
Stewart–Trinkle type (paper D ref. [40]); Lemke's complementary pivoting solves it exactly in a few
pivots, which is why the default stepper uses it instead of the paper's per-step IPOPT solve.
``solve_lcp_enumerate`` is the brute-force reference the tests check ``lemke`` against on small
problems.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LcpSolution:
    """Result of an LCP solve: ``z``, ``w = M z + q``, whether it succeeded, pivots used."""

    z: np.ndarray
    w: np.ndarray
    ok: bool
    pivots: int

    def violation(self) -> float:
        """Largest violation of z ≥ 0, w ≥ 0 and |z_i w_i| = 0 (scaled)."""
        if self.z.size == 0:
            return 0.0
        return float(max(-self.z.min(), -self.w.min(), np.max(np.abs(self.z * self.w)), 0.0))


def lemke(M: np.ndarray, q: np.ndarray, *, max_pivots: int | None = None) -> LcpSolution:
    """Lemke's algorithm with covering vector e = 1 and a lexicographic ratio test (no cycling).

    Terminates on the artificial variable leaving the basis (a solution) or on a secondary ray
    (``ok=False``: for copositive-plus M, as in the Stewart–Trinkle LCP, this means infeasible).
    """
    M = np.asarray(M, dtype=float)
    q = np.asarray(q, dtype=float)
    n = q.size
    if n == 0 or np.all(q >= 0):
        z = np.zeros(n)
        return LcpSolution(z, q.copy(), True, 0)
    max_pivots = max_pivots or 50 * (n + 1)
    # Tableau rows: [B⁻¹ (for the lexicographic rule) | -M | -e | q], variables w (0..n-1),
    # z (n..2n-1), z0 (2n); the identity block doubles as the w columns.
    T = np.hstack([np.eye(n), -M, -np.ones((n, 1)), q[:, None]])
    basis = list(range(n))
    z0 = 2 * n
    scale = max(1.0, float(np.abs(T).max()))
    tol = 1e-12 * scale

    def pivot(row: int, col: int) -> None:
        T[row] /= T[row, col]
        others = np.arange(n) != row
        T[others] -= np.outer(T[others, col], T[row])

    row = int(np.argmin(q))
    pivot(row, z0)
    leaving, basis[row] = basis[row], z0
    entering = leaving + n if leaving < n else leaving - n
    for count in range(1, max_pivots + 1):
        col = T[:, entering]
        rows = np.flatnonzero(col > tol)
        if rows.size == 0:
            break  # secondary ray
        # Lexicographic minimum ratio over [q, B⁻¹] / col, preferring z0 to leave on ties.
        candidates = rows
        for k in range(-1, n):
            data = T[candidates, -1 if k < 0 else k] / col[candidates]
            best = data.min()
            candidates = candidates[data <= best + 1e-12 * max(1.0, abs(best))]
            z0_rows = [r for r in candidates if basis[r] == z0]
            if z0_rows:
                candidates = np.array(z0_rows[:1])
            if candidates.size == 1:
                break
        row = int(candidates[0])
        pivot(row, entering)
        leaving, basis[row] = basis[row], entering
        if leaving == z0:
            values = np.zeros(2 * n + 1)
            values[basis] = T[:, -1]
            z = np.maximum(values[n : 2 * n], 0.0)
            return LcpSolution(z, M @ z + q, True, count)
        entering = leaving + n if leaving < n else leaving - n
    z = np.zeros(n)
    return LcpSolution(z, q.copy(), False, max_pivots)


def solve_lcp_enumerate(M: np.ndarray, q: np.ndarray, *, tol: float = 1e-9) -> list[np.ndarray]:
    """All solutions found by trying every complementary basis (2^n linear solves; tests only)."""
    M = np.asarray(M, dtype=float)
    q = np.asarray(q, dtype=float)
    n = q.size
    found: list[np.ndarray] = []
    for active in itertools.product((False, True), repeat=n):
        idx = np.flatnonzero(active)
        z = np.zeros(n)
        if idx.size:
            try:
                z[idx] = np.linalg.solve(M[np.ix_(idx, idx)], -q[idx])
            except np.linalg.LinAlgError:
                continue
        w = M @ z + q
        if z.min() >= -tol and w.min() >= -tol:
            found.append(z)
    return found
