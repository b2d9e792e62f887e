"""The robust (sandwich) covariance of theta: the spread of the per-node scores' influence on
the estimate, with their serial correlation (heteroskedasticity and autocorrelation
consistent, Newey-West), instead of the Laplace covariance times one scalar.

The Laplace covariance of paper B (the inverse marginal Gauss-Newton Hessian of theta) holds
when eq. 16's noise model is right. When the dynamics are systematically wrong (soft feet
under a rigid point-contact model) the process noise is the model error: slow, correlated,
and larger where the contacts change. :mod:`physid.oe.solving.serial` widens the Laplace std
by one scalar, the long-run ratio of the noise summed over its components, which assumes that
theta's scores correlate as the noise does. The sandwich measures the scores themselves.
It is a diagnosis (``benchmarks/oe_mujoco_go2.py --split``), not the reported covariance:
on the Go2-like crawl it gives about the scalar-inflated spread and misses the payload's
error as that does, the error being a bias of the soft contacts, not a spread
(:mod:`physid.oe.solving.base_force` bounds it; docs/oe.md, "Sixth round").

At the estimate the KKT system ``K = [[H, G^T], [G, 0]]`` of eq. 21
(:mod:`physid.oe.solving.kkt`) maps a change ``dg`` of the cost's gradient to ``dtheta =
-(K^-1)_{theta, .} dg``. Node k's residuals (its sensors, its process noise ``w_k``, its
accelerometer reading) add ``g_k`` to the gradient in its own blocks ``x_k`` and ``w_k``, so
their influence on theta is ``psi_k = Y_k^T g_k`` with ``Y = K^-1 E_theta`` (K is symmetric;
the Riccati recursion's gains give all ``n_theta`` columns in one backward and one forward
pass). ``sum_k psi_k`` is minus the Newton step (about 0 at the estimate), and the estimate's
covariance is the long-run covariance of the ``psi_k``: ``sum_l w_l sum_k psi_k
psi_{k+l}^T`` with Bartlett weights ``w_l`` and Andrews' (1991) AR(1)
plug-in bandwidth. With white residuals whose variances the noise model states it equals the
Laplace covariance (the information identity); with misspecified or correlated noise it is
what the estimate's spread is. The parameter prior's gradient is not a node's and is left
out.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from physid.oe.solving.problem import Linearization
from physid.oe.solving.riccati import _range_basis, backward_pass
from physid.oe.solving.serial import bartlett_lags


def node_influences(lin: Linearization, rtol: float = 1e-12) -> NDArray[np.float64]:
    """``psi`` ``(N + 1, n_theta)``: each node's scores' influence on theta (module
        docstring), ``psi_k = Y_{x_k}^T lx_k + Y_{w_k}^T lw_k + Y_theta^T lt_k`` (``lt_k`` the
    theta gradient of node k's accelerometer or force sensors); the last node has no noise.

        ``Y`` by the Riccati recursion of :mod:`physid.oe.solving.riccati` rather than a sparse
        factorization (whose fill-in on the theta columns needs gigabytes at 2,000 nodes): its
        gains do not depend on the gradient, and with a gradient in theta only (``lt`` the unit
        columns, nothing else) the feed-forward terms vanish, so that eq. 28's arrival step and
        the forward rollout carry all ``n_theta`` columns at once (Vtt restricted to its range,
        as eq. 31)."""
    N, nx = lin.lw.shape
    V = backward_pass(lin, 0.0)
    basis = _range_basis(V.Vtt, rtol)
    Vtt = basis.T @ V.Vtt @ basis
    gains = np.linalg.solve(Vtt, np.hstack([basis.T, basis.T @ V.Vxt.T]))
    nt = V.Vtt.shape[0]
    k_t, K_t = gains[:, :nt], gains[:, nt:]
    Vxx0 = V.Vxx - V.Vxt @ basis @ K_t
    dx = np.linalg.solve(0.5 * (Vxx0 + Vxx0.T), V.Vxt @ basis @ k_t)  # dx0, one column each
    dtheta = basis @ (-k_t - K_t @ dx)
    psi = np.zeros((N + 1, nt))
    if lin.lt_nodes is not None:  # the accelerometer's (force sensors') own theta gradient
        psi[:N] = lin.lt_nodes @ dtheta
    for i in range(N):
        dw = -V.K[i] @ dx - V.P[i] @ dtheta
        psi[i] += lin.lx[i] @ dx + lin.lw[i] @ dw
        dx = lin.A[i] @ dx + lin.B[i] @ dw + lin.C[i] @ dtheta
    psi[N] = lin.lx[N] @ dx
    return -psi  # the step solves K z = -e_theta: Y = -z


def long_run_covariance(psi: NDArray) -> tuple[NDArray[np.float64], int]:
    """``(sum_l w_l sum_k psi_k psi_{k+l}^T, bandwidth)`` of the centred ``psi`` ``(n, p)``:
    Bartlett weights over :func:`physid.oe.solving.serial.bartlett_lags` lags."""
    e = psi - psi.mean(axis=0)
    n = e.shape[0]
    S = e.T @ e
    lags = bartlett_lags(e) if n > 2 else 0
    for lag in range(1, lags + 1):
        gamma = e[:-lag].T @ e[lag:]
        S += (1.0 - lag / (lags + 1.0)) * (gamma + gamma.T)
    return 0.5 * (S + S.T), lags


def sandwich_covariance(lin: Linearization) -> tuple[NDArray[np.float64], int]:
    """``(covariance of theta (n_theta, n_theta) in the linearization's coordinates,
    bandwidth [nodes])``: the long-run covariance of :func:`node_influences`."""
    return long_run_covariance(node_influences(lin))
