"""Fast evaluation of one segment's residuals and sparse Jacobian (paper A §3.6, Appendix B).

The per-step CasADi functions are mapped over the steps and evaluated through CasADi's buffer
interface straight into NumPy arrays of their structural non-zeros (a ``DM`` -> NumPy conversion
of the dense Jacobian blocks costs more than the evaluation itself). The position of every
non-zero in the segment's block-bidiagonal Jacobian
(eq. 3.25) is computed once per segment length, with the permutation to CSR order, so a
Jacobian is one gather of the values.

Rows of a segment: ``[init (ns), dynamics (n - 1) x ns, observations n x m]``; columns: the
segment's ``[d_k, v_k]`` (``ns`` per step) at ``col0``, then the parameters at ``p_col0``.
"""

from __future__ import annotations

import casadi as ca
import numpy as np
import scipy.sparse as sp

from physid.multibody.model.buffered import Buffered


def _dense(fn: ca.Function) -> ca.Function:
    """``fn`` with dense outputs, so that its buffered non-zeros are the column-major dense
    blocks (a ``DM`` call and ``.full()`` cost ~1 ms per evaluation)."""
    args = [ca.MX.sym(f"x{i}", fn.sparsity_in(i)) for i in range(fn.n_in())]
    return ca.Function(f"{fn.name()}_dense", args, [ca.densify(o) for o in fn.call(args)])


def mapped_triplet(fn: ca.Function, i: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column of the non-zeros of output ``i`` of ``fn.map(n)``, in the order the map
    returns them: the per-step blocks side by side, step by step (CasADi's column-major
    non-zero order). Tiled from ``fn``'s own sparsity: the mapped function's ``get_triplet``
    costs tens of ms at hundreds of steps."""
    rows, cols = fn.sparsity_out(i).get_triplet()
    rows, cols = np.asarray(rows, int), np.asarray(cols, int)
    shift = fn.size2_out(i) * np.arange(n)[:, None]
    return np.tile(rows, n), (cols[None, :] + shift).ravel()


class SegmentEvaluator:
    """Residuals and Jacobian entries of one segment of ``n`` steps."""

    def __init__(self, fn, n: int, n_params: int) -> None:  # noqa: ANN001 (ResidualFunctions)
        self.n, self.ns, self.m = n, fn.n_state, fn.n_obs
        fixed_inputs = [5, 6]  # p and fixed are shared by all steps (CasADi map reduce_in)
        self.dyn = Buffered(fn.dyn.map("dyn_map", "serial", n - 1, fixed_inputs, []))
        self.obs = Buffered(fn.obs.map("obs_map", "serial", n, [3, 4], []))
        self.dyn_jac = Buffered(fn.dyn_jac.map("dyn_jac_map", "serial", n - 1, fixed_inputs, []))
        self.obs_jac = Buffered(fn.obs_jac.map("obs_jac_map", "serial", n, [3, 4], []))
        self.init_jac, self.fn = Buffered(_dense(fn.init_jac)), fn
        self.n_params = n_params
        self.n_rows = self.ns + (n - 1) * self.ns + n * self.m
        self._pattern: tuple | None = None

    def residual(self, Q, V, u, y, w, p, fixed) -> np.ndarray:  # noqa: ANN001
        """Stacked residual of the segment (states ``Q`` (n, 7nb), ``V`` (n, 6nb))."""
        ri = self.init_jac(Q[0], V[0], p, fixed)[0]
        rd = self.dyn(Q[:-1], V[:-1], Q[1:], V[1:], u[:-1], p, fixed)[0]
        ro = self.obs(Q, y, w, p, fixed)[0]
        return np.concatenate([ri, rd, ro])

    def jacobian(self, Q, V, u, y, w, p, fixed) -> tuple[np.ndarray, list[np.ndarray]]:  # noqa: ANN001
        """The residual and the Jacobian non-zeros, in the order of :meth:`pattern`."""
        ri, Jx, Jp = self.init_jac(Q[0], V[0], p, fixed)  # dense, column-major
        rd, Jdx, Jdp = self.dyn_jac(Q[:-1], V[:-1], Q[1:], V[1:], u[:-1], p, fixed)
        ro, Jo = self.obs_jac(Q, y, w, p, fixed)
        r = np.concatenate([ri, rd, ro])
        return r, [Jx, Jdx, Jo, Jp, Jdp]

    def pattern(self, row0: int, col0: int, p_col0: int) -> tuple[np.ndarray, np.ndarray]:
        """Global (row, column) of every value :meth:`jacobian` returns."""
        ns, m, n = self.ns, self.m, self.n
        n6 = ns // 2
        ir, ic = np.divmod(np.arange(ns * ns), ns)  # dense init block, column-major values
        ir, ic = ic, ir
        rows, cols = [row0 + ir], [col0 + ic]
        dr, dc = mapped_triplet(
            self.fn.dyn_jac, 1, n - 1
        )  # (ns, (n - 1) 2 ns): step k in columns k 2ns ..
        k, c = np.divmod(dc, 2 * ns)
        rows.append(row0 + ns + k * ns + dr)
        cols.append(col0 + k * ns + c)
        orow, ocol = mapped_triplet(self.fn.obs_jac, 1, n)  # (m, n n6)
        k, c = np.divmod(ocol, n6)
        obs0 = row0 + ns + (n - 1) * ns
        rows.append(obs0 + k * m + orow)
        cols.append(col0 + k * ns + c)
        npar = self.n_params
        pr, pc = np.divmod(np.arange(ns * npar), ns)
        rows.append(row0 + pc)
        cols.append(p_col0 + pr)
        jr, jc = mapped_triplet(self.fn.dyn_jac, 2, n - 1)  # (ns, (n - 1) npar)
        k, c = np.divmod(jc, max(npar, 1))
        rows.append(row0 + ns + k * ns + jr)
        cols.append(p_col0 + c)
        return np.concatenate(rows), np.concatenate(cols)


class CsrGather:
    """The CSR structure of a fixed (row, col) pattern and the permutation into it."""

    def __init__(self, rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int]) -> None:
        order = sp.csr_matrix((np.arange(1, len(rows) + 1, dtype=float), (rows, cols)), shape)
        order.sort_indices()
        if order.nnz != len(rows):
            raise ValueError("Jacobian pattern has repeated entries")
        self.perm = order.data.astype(np.int64) - 1
        self.indices, self.indptr, self.shape = order.indices, order.indptr, shape

    def matrix(self, values: np.ndarray) -> sp.csr_matrix:
        return sp.csr_matrix((values[self.perm], self.indices, self.indptr), self.shape)
