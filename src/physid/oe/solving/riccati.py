"""Parametrized Riccati recursion (paper B eqs. 20-27) and the arrival/parameter step (28-31).

The value function of node k is quadratic in the state and parameter deviations,
``V(dx; dtheta) = 1/2 [dx; dt]^T [[Vxx, Vxt], [Vxt^T, Vtt]] [dx; dt] + Vx^T dx + Vt^T dt``.
The backward pass forms the action-value terms Q (eq. 23, with the gap-deflected gradients
``Vx+ = Vx' + Vxx' fbar``, ``Vt+ = Vt' + Vxt'^T fbar``, plus the node's own Qxw, Qww, Qxt, Qwt
blocks of observations that see w and theta, ``Linearization.coupling``), the estimation policy
``dw = -k - K dx - P dtheta`` (eq. 25) and the new value function (eq. 27). At the arrival node
eq. 28 is solved by the Schur complement (eqs. 29-30) or, when ``Vtt`` is singular, by the
nullspace step (eq. 31) that restricts dtheta to the range of ``Vtt``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from numpy.typing import NDArray
from scipy.linalg.lapack import dpotrf, dpotrs

from physid.oe.solving.problem import Linearization


class SingularStepError(ArithmeticError):
    """A matrix that must be positive definite is not (Qww, Vxx0 or, for Schur, Vtt);
    ``regularizable`` is False for a singular Vtt in the Schur complement: that is eq. 31's
    case, which the Levenberg-Marquardt term is not meant to hide."""

    def __init__(self, message: str, regularizable: bool = True) -> None:
        super().__init__(message)
        self.regularizable = regularizable


@dataclass
class ValueAtArrival:
    """``V*`` of eq. 28 (arrival node, parameter prior included) and the policy of eq. 25."""

    Vxx: NDArray[np.float64]
    Vxt: NDArray[np.float64]
    Vtt: NDArray[np.float64]
    Vx: NDArray[np.float64]
    Vt: NDArray[np.float64]
    k: NDArray[np.float64]  # (N, nx)
    K: NDArray[np.float64]  # (N, nx, nx)
    P: NDArray[np.float64]  # (N, nx, nt)


@dataclass
class Step:
    """A full search direction: states, noise and parameters (one Newton step of eq. 21)."""

    dx: NDArray[np.float64]  # (N+1, nx)
    dw: NDArray[np.float64]  # (N, nx)
    dtheta: NDArray[np.float64]
    null_dim: int  # dimension of the nullspace of Vtt that was removed (eq. 31)
    policy: ValueAtArrival
    gradient_dot: float  # g^T d of the quadratic model (eq. 35 at first order)
    curvature: float  # d^T H d (eq. 35 at second order)


def _chol_solve(M: NDArray, rhs: NDArray, what: str) -> NDArray[np.float64]:
    try:
        return sla.cho_solve(sla.cho_factor(M, lower=True, check_finite=False), rhs)
    except (np.linalg.LinAlgError, ValueError):
        raise SingularStepError(f"{what} is not positive definite", what != "Vtt") from None


def backward_pass(lin: Linearization, mu: float = 0.0) -> ValueAtArrival:
    """Eqs. 22-27 from node N-1 down to 0; ``mu`` is the Levenberg-Marquardt term on Qww.

    With ``F = [A B C]`` the products of eq. 23 come from two matrix products per node,
    ``F^T Vxx' F`` and ``F^T Vxt'``, and Qww is factored by LAPACK directly: the recursion is
    bound by the number of small NumPy calls per node, not by their flops."""
    N, nx = lin.lw.shape
    nt = lin.lt.shape[0]
    F = np.concatenate([lin.A, lin.B, lin.C], axis=2)  # (N, nx, 2 nx + nt)
    FT = np.ascontiguousarray(F.transpose(0, 2, 1))
    x, w, t = slice(0, nx), slice(nx, 2 * nx), slice(2 * nx, 2 * nx + nt)
    Vxx, Vx = lin.Lxx[N].copy(), lin.lx[N].copy()
    Vxt, Vt, Vtt = np.zeros((nx, nt)), np.zeros(nt), np.zeros((nt, nt))
    ks, Ks, Ps = np.empty((N, nx)), np.empty((N, nx, nx)), np.empty((N, nx, nt))
    Lww = lin.Lww + mu * np.eye(nx)
    rhs = np.empty((nx, 1 + nx + nt))
    c = lin.coupling
    for i in range(N - 1, -1, -1):
        H, G = FT[i] @ (Vxx @ F[i]), FT[i] @ Vxt  # F^T Vxx' F and F^T Vxt'
        g = FT[i] @ (Vx + Vxx @ lin.gaps[i])  # F^T Vx+ (gap-deflected gradient)
        Qxx, Qxw, Qww = lin.Lxx[i] + H[x, x], H[x, w], Lww + H[w, w]
        Qxt, Qwt = G[x] + H[x, t], G[w] + H[w, t]
        if c is not None:  # observations that see w_i and theta (force/torque sensors)
            Qxw, Qww, Qxt, Qwt = Qxw + c.Lxw[i], Qww + c.Lww[i], Qxt + c.Lxt[i], Qwt + c.Lwt[i]
        Qtt = Vtt + G[t] + G[t].T + H[t, t]
        Qx, Qw, Qt = lin.lx[i] + g[x], lin.lw[i] + g[w], Vt + Vxt.T @ lin.gaps[i] + g[t]
        factor, info = dpotrf(Qww, lower=1, clean=0)
        if info != 0:
            raise SingularStepError(f"Qww at node {i} is not positive definite")
        rhs[:, 0], rhs[:, 1 : 1 + nx], rhs[:, 1 + nx :] = Qw, Qxw.T, Qwt
        gains = dpotrs(factor, rhs, lower=1)[0]
        k, K, P = gains[:, 0], gains[:, 1 : 1 + nx], gains[:, 1 + nx :]
        ks[i], Ks[i], Ps[i] = k, K, P
        Vx, Vt = Qx - Qxw @ k, Qt - Qwt.T @ k
        Vxx, Vxt, Vtt = Qxx - Qxw @ K, Qxt - Qxw @ P, Qtt - Qwt.T @ P
        Vxx, Vtt = 0.5 * (Vxx + Vxx.T), 0.5 * (Vtt + Vtt.T)
    return ValueAtArrival(Vxx, Vxt, Vtt + lin.Ltt, Vx, Vt + lin.lt, ks, Ks, Ps)


def _range_basis(Vtt: NDArray, rtol: float) -> NDArray[np.float64]:
    """Orthonormal basis Y of the range of symmetric ``Vtt`` (eigenvalues above rtol * max)."""
    lam, vec = np.linalg.eigh(Vtt)
    scale = max(float(np.abs(lam).max(initial=0.0)), 1e-300)
    return vec[:, lam > rtol * scale]


def arrival_step(
    V: ValueAtArrival, nullspace: bool, rtol: float = 1e-12, mu: float = 0.0
) -> tuple[NDArray[np.float64], NDArray[np.float64], int]:
    """``(dx0, dtheta, null_dim)`` from eq. 28, Levenberg-Marquardt-regularised by ``mu``.

    Schur complement (eqs. 29-30): ``k_t = Vtt^-1 Vt``, ``K_t = Vtt^-1 Vxt^T``,
    ``Vxx0 = Vxx - Vxt K_t``, ``Vx0 = Vx - Vxt k_t``, ``dx0 = -Vxx0^-1 Vx0``,
    ``dtheta = -k_t - K_t dx0``. Nullspace (eq. 31): the same with ``dtheta = Y dtheta_y``,
    Y spanning the range of Vtt, so that singular directions Z (``Vtt Z = 0``) are not moved.

    ``mu`` is added to ``Vxx0`` and to ``Vtt`` (restricted to Y) — the same as adding it to the
    arrival-state and parameter blocks of eq. 21 (:func:`physid.oe.solving.kkt.kkt_system`), the
    parameters being part of the augmented state (section V-A). Without it on ``Vtt`` the LM
    term cannot shorten the parameter step, which is the most nonlinear part of a step in the
    logarithmic chart coordinates. The Schur complement still requires ``Vtt`` itself to be
    positive definite: the regularisation does not hide a singular ``Vtt`` (eq. 31's case).
    """
    nt = V.Vtt.shape[0]
    Y = _range_basis(V.Vtt, rtol) if nullspace else np.eye(nt)
    Vtt_y = Y.T @ V.Vtt @ Y
    if not nullspace:
        _chol_solve(Vtt_y, np.zeros(nt), "Vtt")  # raises when Vtt is singular
    Vtt_y = Vtt_y + mu * np.eye(Y.shape[1])
    gains = _chol_solve(Vtt_y, np.column_stack([Y.T @ V.Vt, Y.T @ V.Vxt.T]), "Vtt")
    k_t, K_t = gains[:, 0], gains[:, 1:]
    Vx0 = V.Vx - V.Vxt @ Y @ k_t
    Vxx0 = V.Vxx - V.Vxt @ Y @ K_t + mu * np.eye(V.Vxx.shape[0])
    dx0 = -_chol_solve(0.5 * (Vxx0 + Vxx0.T), Vx0, "Vxx0 (arrival Schur complement)")
    return dx0, Y @ (-k_t - K_t @ dx0), nt - Y.shape[1]


def solve_step(
    lin: Linearization, mu: float = 0.0, nullspace: bool = True, rtol: float = 1e-12
) -> Step:
    """Backward pass, arrival step and the linear forward rollout: the whole Newton direction."""
    V = backward_pass(lin, mu)
    dx0, dtheta, null_dim = arrival_step(V, nullspace, rtol, mu)
    N, nx = lin.lw.shape
    dx, dw = np.empty((N + 1, nx)), np.empty((N, nx))
    dx[0] = dx0
    for i in range(N):
        dw[i] = -V.k[i] - V.K[i] @ dx[i] - V.P[i] @ dtheta
        dx[i + 1] = lin.A[i] @ dx[i] + lin.B[i] @ dw[i] + lin.C[i] @ dtheta + lin.gaps[i]
    g = np.einsum("ki,ki->", lin.lx, dx) + np.einsum("ki,ki->", lin.lw, dw) + lin.lt @ dtheta
    h = np.einsum("ki,kij,kj->", dx, lin.Lxx, dx) + np.einsum("ki,ij,kj->", dw, lin.Lww, dw)
    h += dtheta @ lin.Ltt @ dtheta
    if lin.coupling is not None:
        c = lin.coupling
        h += np.einsum("ki,kij,kj->", dw, c.Lww, dw) + 2.0 * np.einsum(
            "ki,kij,kj->", dx[:-1], c.Lxw, dw
        )
        h += (
            2.0
            * (np.einsum("ki,kij->j", dx[:-1], c.Lxt) + np.einsum("ki,kij->j", dw, c.Lwt))
            @ dtheta
        )
    return Step(dx, dw, dtheta, null_dim, V, float(g), float(h))


def parameter_hessian(V: ValueAtArrival) -> NDArray[np.float64]:
    """Marginal Gauss-Newton Hessian of theta, ``Vtt - Vxt^T Vxx^-1 Vxt`` at the arrival node
    (the inverse is the Laplace covariance of theta given all data)."""
    return V.Vtt - V.Vxt.T @ np.linalg.solve(V.Vxx, V.Vxt)
