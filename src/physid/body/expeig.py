"""Exponential-eigenvalue parametrization of one rigid body's inertia (paper B section III-B).

Paper B eqs. 11-15, with pi in Pinocchio's order (see :mod:`physid.body.inertia`)::

    theta = [sigma_m, h_x, h_y, h_z, omega_x, omega_y, omega_z, sigma_x, sigma_y, sigma_z]
    m = exp(sigma_m)                       (eq. 13)     h = m c, unconstrained   (eq. 15)
    L = exp([sigma_x, sigma_y, sigma_z])   (eq. 13)     R = Exp(omega)           (eq. 14)
    I_c = R diag(P L) R^T,  P = [[0,1,1],[1,0,1],[1,1,0]]   (eq. 11)
    I = I_c + S(h) S(h)^T / m                                (eq. 5)

``L`` are the second moments of mass along the principal axes (``Sigma_c = R diag(L) R^T``),
``P L`` the principal moments of inertia, so ``m > 0``, ``L > 0`` is exactly full physical
consistency, and every theta in R^10 gives a consistent body.

Rotation coordinates: ``omega`` is a rotation vector (axis times angle [rad]) and ``R = Exp(omega)``
the SO(3) exponential; :func:`exp_eig_jacobian` differentiates with respect to ``omega`` itself
(through the right Jacobian of SO(3)), or, with ``local_rotation=True``, with respect to a local
increment ``delta`` with ``R = Exp(omega) Exp(delta)`` at ``delta = 0``.

Singular configurations (where d pi / d theta loses rank, paper B section I):

- two equal second moments ``L_i = L_j`` (equivalently two equal principal moments, e.g. a disc
  or a cylinder): rotating about the third principal axis does not change the body; rank 9.
  All three equal (e.g. a solid sphere or a cube): the rotation is not defined at all; rank 7.
- ``|omega| = 2 pi k`` (k >= 1), where Exp is not a local diffeomorphism; rank 8. The
  local-increment Jacobian has no such singularity, and :func:`exp_eig_from_pi` never returns
  such points.

The map is not injective: besides the 2 pi periodicity of ``omega`` along its axis, the 24
proper permutations/sign changes of the principal axes give the same body.
:func:`exp_eig_from_pi` returns ``L`` ascending (principal moments ``P L`` descending) and
``|omega| <= pi``; with repeated ``L`` its axes are whatever basis of the eigenspace LAPACK
returns (the body, hence the round trip pi -> theta -> pi, is still exact, but theta is not a
continuous function of pi there).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.transform import Rotation

from physid.body import inertia as _inertia


def _skew(v: NDArray[np.float64]) -> NDArray[np.float64]:
    """``S(v)`` with ``S(v) w = v x w``, ``(..., 3) -> (..., 3, 3)``."""
    S = np.zeros(v.shape[:-1] + (3, 3))
    S[..., 0, 1], S[..., 0, 2], S[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    return S - np.swapaxes(S, -1, -2)


def _so3_exp(omega: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Exp(omega)`` for rotation vectors ``(..., 3) -> (..., 3, 3)``."""
    return Rotation.from_rotvec(omega.reshape(-1, 3)).as_matrix().reshape(omega.shape + (3,))


def _so3_right_jacobian(omega: NDArray[np.float64]) -> NDArray[np.float64]:
    """Right Jacobian ``Jr`` with ``Exp(omega + d) = Exp(omega) Exp(Jr(omega) d + o(d))``:
    ``Jr = 1 - (1 - cos t)/t^2 S + (t - sin t)/t^3 S^2``, ``S = S(omega)``, ``t = |omega|``."""
    angle = np.linalg.norm(omega, axis=-1)
    # (1 - cos t)/t^2 = 2 sin^2(t/2)/t^2 = sinc^2 / 2: no cancellation anywhere.
    a = 0.5 * np.sinc(angle / (2.0 * np.pi)) ** 2
    # (t - sin t)/t^3 cancels catastrophically for small t: Taylor series below 0.05 rad
    # (truncation < 1e-16 relative there), closed form above (rounding < 1e-12 relative).
    small = angle < 0.05
    t = np.where(small, 1.0, angle)
    t2 = angle**2
    b = np.where(small, 1 / 6 - t2 / 120 + t2**2 / 5040 - t2**3 / 362880, (t - np.sin(t)) / t**3)
    S = _skew(omega)
    return np.eye(3) - a[..., None, None] * S + b[..., None, None] * (S @ S)


def _pseudo_inertia_and_derivative(
    theta: NDArray[np.float64], local_rotation: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``J(theta)`` ``(..., 4, 4)`` and ``dJ/dtheta`` ``(..., 10, 4, 4)``.

    ``J = [[R diag(L) R^T + h h^T/m, h], [h^T, m]]`` is paper B eqs. 5, 8, 11 combined: the
    Sigma-block of ``I_c = R diag(P L) R^T`` is ``R diag(L) R^T`` and that of ``S(h)S(h)^T/m``
    is ``h h^T/m``.
    """
    mass = np.exp(theta[..., 0])
    h, omega, second_moments = theta[..., 1:4], theta[..., 4:7], np.exp(theta[..., 7:10])
    R = _so3_exp(omega)
    R_scaled = R * second_moments[..., None, :]  # R diag(L)
    hh_over_m = h[..., :, None] * h[..., None, :] / mass[..., None, None]
    J = np.zeros(theta.shape[:-1] + (4, 4))
    J[..., :3, :3] = R_scaled @ np.swapaxes(R, -1, -2) + hh_over_m
    J[..., :3, 3] = J[..., 3, :3] = h
    J[..., 3, 3] = mass

    dJ = np.zeros(theta.shape[:-1] + (10, 4, 4))
    dJ[..., 0, :3, :3] = -hh_over_m  # d(h h^T e^-sigma_m)/d sigma_m
    dJ[..., 0, 3, 3] = mass
    # Rotation: with R(eps) = R Exp(eps phi), d(R D R^T) = A + A^T, A = R S(phi) D R^T.
    phis = np.eye(3) if local_rotation else np.swapaxes(_so3_right_jacobian(omega), -1, -2)
    for k in range(3):
        e_k = np.eye(3)[k]
        outer = e_k[:, None] * h[..., None, :]
        dJ[..., 1 + k, :3, :3] = (outer + np.swapaxes(outer, -1, -2)) / mass[..., None, None]
        dJ[..., 1 + k, k, 3] = dJ[..., 1 + k, 3, k] = 1.0
        A = R @ _skew(phis[..., k, :]) @ np.swapaxes(R_scaled, -1, -2)
        dJ[..., 4 + k, :3, :3] = A + np.swapaxes(A, -1, -2)
        r_k = R[..., :, k]
        dJ[..., 7 + k, :3, :3] = (
            second_moments[..., k, None, None] * r_k[..., :, None] * r_k[..., None, :]
        )
    return J, dJ


def pi_from_exp_eig(theta: ArrayLike) -> NDArray[np.float64]:
    """pi from exponential-eigenvalue ``theta`` (paper B eqs. 11-15; coordinates in the module
    docstring). Every finite theta gives a consistent body. ``(..., 10) -> (..., 10)``."""
    theta = _inertia._as_float_array(theta, (10,), "exp-eig theta")
    J, _ = _pseudo_inertia_and_derivative(theta, local_rotation=False)
    return _inertia.pi_from_pseudo_inertia(J)


def exp_eig_jacobian(theta: ArrayLike, local_rotation: bool = False) -> NDArray[np.float64]:
    """Exact ``d pi / d theta`` ``(..., 10, 10)`` of :func:`pi_from_exp_eig`.

    Columns 4-6 are with respect to ``omega`` (default) or, if ``local_rotation``, to the local
    increment ``delta`` in ``R = Exp(omega) Exp(delta)`` at ``delta = 0``. Rank-deficient at the
    singular configurations listed in the module docstring.
    """
    theta = _inertia._as_float_array(theta, (10,), "exp-eig theta")
    _, dJ = _pseudo_inertia_and_derivative(theta, local_rotation)
    return np.swapaxes(_inertia.pi_from_pseudo_inertia(dJ), -1, -2)


def exp_eig_from_pi(pi: ArrayLike) -> NDArray[np.float64]:
    """A theta with ``pi_from_exp_eig(theta) == pi``: ``L`` ascending, ``|omega| <= pi``.

    Eigen-decomposes ``Sigma_c = J[:3, :3] - h h^T / m = R diag(L) R^T`` (paper B eq. 11 in
    second moments). InputError if pi is not fully physically consistent. Batched.
    """
    pi = _inertia._as_pi(pi)
    _inertia._require_all_consistent(pi, "pi")
    J = _inertia.pseudo_inertia(pi)
    mass, h = J[..., 3, 3], J[..., :3, 3]
    sigma_c = J[..., :3, :3] - h[..., :, None] * h[..., None, :] / mass[..., None, None]
    second_moments, R = np.linalg.eigh(sigma_c)
    R[..., :, 2] *= np.sign(np.linalg.det(R))[..., None]  # a rotation, not a reflection
    omega = Rotation.from_matrix(R.reshape(-1, 3, 3)).as_rotvec().reshape(h.shape)
    theta = np.empty(pi.shape)
    theta[..., 0], theta[..., 1:4] = np.log(mass), h
    theta[..., 4:7], theta[..., 7:10] = omega, np.log(second_moments)
    return theta


__all__ = ["exp_eig_from_pi", "exp_eig_jacobian", "pi_from_exp_eig"]
