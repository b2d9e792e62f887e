"""The full sparse KKT system of one Gauss-Newton step (paper B eq. 21 over the whole horizon).

Unknowns ``[dx_0..dx_N, dw_0..dw_{N-1}, dtheta]`` and one multiplier per dynamics constraint
``dx_{k+1} - A_k dx_k - B_k dw_k - C_k dtheta = fbar_{k+1}``. Solved by a general sparse direct
method (SuperLU via ``scipy.sparse.linalg.spsolve``): the reference the Riccati recursion of
:mod:`physid.oe.solving.riccati` is tested and benchmarked against.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.sparse.linalg import spsolve

from physid.oe.solving.problem import Linearization


def kkt_system(lin: Linearization, mu: float = 0.0) -> tuple[sp.csc_matrix, NDArray[np.float64]]:
    """The KKT matrix ``[[H, G^T], [G, 0]]`` and right-hand side ``[-g; fbar]``; ``mu`` is the
    Levenberg-Marquardt term on the noise, arrival-state and parameter blocks of H (where
    :func:`physid.oe.solving.riccati.solve_step` puts it)."""
    N, nx = lin.lw.shape
    nt = lin.lt.shape[0]
    Lww = lin.Lww + mu * np.eye(nx)
    Lxx = lin.Lxx.copy()
    Lxx[0] += mu * np.eye(nx)
    H = sp.block_diag([*Lxx, *([Lww] * N), lin.Ltt + mu * np.eye(nt)], format="csr")
    n_x, n_w = (N + 1) * nx, N * nx
    row = np.arange(N)[:, None, None] * nx + np.arange(nx)[None, :, None]  # (N, nx, 1)
    col_x = np.arange(N)[:, None, None] * nx + np.arange(nx)[None, None, :]
    col_t = n_x + n_w + np.arange(nt)[None, None, :]
    rows, cols, vals = [], [], []
    for r, c, v in (
        (row, col_x, -lin.A),
        (row, col_x + nx, np.broadcast_to(np.eye(nx), lin.A.shape)),
        (row, col_x + n_x, -lin.B),
        (row, col_t, -lin.C),
    ):
        r, c = np.broadcast_arrays(r, c)
        rows.append(r.ravel())
        cols.append(c.ravel())
        vals.append(np.asarray(v).ravel())
    shape = (N * nx, n_x + n_w + nt)
    G = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape)
    if lin.coupling is not None:
        H = H + _coupling_blocks(lin, n_x, n_w)
    K = sp.bmat([[H, G.T], [G, None]], format="csc")
    g = np.concatenate([lin.lx.ravel(), lin.lw.ravel(), lin.lt])
    rhs = np.concatenate([-g, lin.gaps.ravel()])
    return K, rhs


def _coupling_blocks(lin: Linearization, n_x: int, n_w: int) -> sp.csr_matrix:
    """The symmetric off-diagonal (and per-node ww) Hessian blocks of ``lin.coupling``."""
    c = lin.coupling
    N, nx, nt = c.Lxt.shape
    size = n_x + n_w + nt
    node = np.arange(N)[:, None, None] * nx
    r_i, c_j = np.arange(nx)[None, :, None], np.arange(nx)[None, None, :]
    t_j = n_x + n_w + np.arange(nt)[None, None, :]
    blocks = (  # (rows, cols, values): x_k-w_k, w_k-w_k, x_k-theta, w_k-theta
        (node + r_i, n_x + node + c_j, c.Lxw),
        (n_x + node + r_i, n_x + node + c_j, c.Lww),
        (node + r_i, t_j, c.Lxt),
        (n_x + node + r_i, t_j, c.Lwt),
    )
    rows, cols, vals = [], [], []
    for r, col, v in blocks:
        r, col = np.broadcast_arrays(r, col)
        rows.append(r.ravel())
        cols.append(col.ravel())
        vals.append(v.ravel())
        if v is not c.Lww:  # its transpose, below the diagonal
            rows.append(col.ravel())
            cols.append(r.ravel())
            vals.append(v.ravel())
    data = (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols)))
    return sp.csr_matrix(data, shape=(size, size))


def solve_kkt(
    lin: Linearization, mu: float = 0.0
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(dx (N+1, nx), dw (N, nx), dtheta)`` by a sparse direct solve of :func:`kkt_system`."""
    N, nx = lin.lw.shape
    K, rhs = kkt_system(lin, mu)
    z = spsolve(K, rhs)
    n_x = (N + 1) * nx
    return (
        z[:n_x].reshape(N + 1, nx),
        z[n_x : n_x + N * nx].reshape(N, nx),
        z[n_x + N * nx : n_x + N * nx + lin.lt.shape[0]],
    )
