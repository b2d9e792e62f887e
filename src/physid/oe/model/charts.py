"""Inertial charts of the estimated bodies: theta (10 per body) -> pi and d(pi)/d(theta).

Paper B section III: the log-Cholesky chart (eqs. 9-10) and the exponential-eigenvalue chart
(eqs. 11-15). Both map every finite theta to a fully physically consistent body; the maps and
their exact Jacobians live in :mod:`physid.body.inertia` and :mod:`physid.body.expeig`, this module
only stacks them over several bodies.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.body.expeig import exp_eig_from_pi, exp_eig_jacobian, pi_from_exp_eig
from physid.body.inertia import log_cholesky_from_pi, log_cholesky_pi_and_jacobian
from physid.errors import InputError


class Chart(StrEnum):
    """The inertial chart theta is in: exponential-eigenvalue (eqs. 11-15) or log-Cholesky
    (eqs. 9-10)."""

    EXP_EIG = "exp_eig"
    LOG_CHOLESKY = "log_cholesky"


CHARTS = tuple(str(c) for c in Chart)


def _check(chart: str) -> None:
    if chart not in CHARTS:
        raise InputError(f"unknown inertial chart {chart!r}; choose one of {', '.join(CHARTS)}")


def theta_from_pis(chart: str, pis: NDArray[np.float64]) -> NDArray[np.float64]:
    """Stacked chart coordinates ``(10 n,)`` of consistent bodies ``pis`` ``(n, 10)``."""
    _check(chart)
    pis = np.atleast_2d(pis)
    theta = exp_eig_from_pi(pis) if chart == "exp_eig" else log_cholesky_from_pi(pis)
    return theta.reshape(-1)


def pis_and_jacobians(
    chart: str, theta: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``pi_b(theta_b)`` ``(n, 10)`` and ``d pi_b / d theta_b`` ``(n, 10, 10)`` per body.

    Exponential-eigenvalue: paper B eqs. 11-15, as a local manifold: the rotation columns are
    with respect to the local increment delta of ``R = Exp(omega) Exp(delta)`` (see
    :func:`retract`), which has no singularity at ``|omega| = 2 pi k``. Log-Cholesky: eqs. 9-10
    (J = U U^T; see :mod:`physid.body.inertia` for the order); its update is additive.
    """
    _check(chart)
    blocks = np.asarray(theta, dtype=float).reshape(-1, 10)
    if chart == "exp_eig":
        return pi_from_exp_eig(blocks), exp_eig_jacobian(blocks, local_rotation=True)
    return log_cholesky_pi_and_jacobian(blocks)


def retract(chart: str, theta: NDArray, dtheta: NDArray) -> NDArray[np.float64]:
    """``theta (+) dtheta`` (eq. 32): additive, except the exponential-eigenvalue rotation,
    ``Exp(omega+) = Exp(omega) Exp(domega)`` (eq. 14 on SO(3))."""
    out = np.asarray(theta, dtype=float) + dtheta
    if chart == "exp_eig":
        blocks, steps = out.reshape(-1, 10), np.asarray(dtheta).reshape(-1, 10)
        for b, block in enumerate(blocks):
            R = pin.exp3(np.asarray(theta).reshape(-1, 10)[b, 4:7]) @ pin.exp3(steps[b, 4:7])
            block[4:7] = pin.log3(R)
    return out


def prior_residual(
    chart: str, theta: NDArray, prior: NDArray
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``theta (-) prior`` and its Jacobian with respect to the increment of :func:`retract`;
    for the exponential-eigenvalue rotation ``Log(R_prior^T R S)`` with ``Jlog3 S^T``, ``S``
    the half-turn about a principal axis (or none) nearest the prior.

    ``R`` and ``R S`` (``S`` in :data:`HALF_TURNS`) give the same inertia: the columns of R
    keep their moments and only their signs flip. The prior is on the body's inertia, so it
    measures the rotation to the nearest of the four; measured to R itself it would push a
    body whose axes drift near a half-turn back through 90 degrees of a different inertia,
    where ``Log`` also jumps."""
    r = np.asarray(theta, dtype=float) - prior
    J = np.eye(r.size)
    if chart == "exp_eig":
        for b in range(r.size // 10):
            s = slice(10 * b + 4, 10 * b + 7)
            error = pin.exp3(prior[s]).T @ pin.exp3(theta[s])
            flip = min(HALF_TURNS, key=lambda S: np.linalg.norm(pin.log3(error @ S)))
            r[s], J[s, s] = pin.log3(error @ flip), pin.Jlog3(error @ flip) @ flip.T
    return r, J


# the rotations about a body's principal axes that leave its inertia as it is (identity first,
# so ties keep the plain residual)
HALF_TURNS = (
    np.eye(3),
    np.diag([1.0, -1.0, -1.0]),
    np.diag([-1.0, 1.0, -1.0]),
    np.diag([-1.0, -1.0, 1.0]),
)


def rotation_curvature(theta: NDArray, log_gradient: NDArray) -> NDArray[np.float64]:
    """The second derivative of a cost along each exp-eig rotation increment, ``(n 10,)``
    (zero off the rotation coordinates 4:7), that Gauss-Newton leaves out: the cost's
    gradient ``g`` in the log second moments ``s`` (``log_gradient``, theta's layout) times
    the chart's own curvature. ``Sigma_c = R Exp(d) diag(L) Exp(d)^T R^T`` (paper B eq. 11) is
    linear in ``L = e^s``, and with ``Gamma = R^T dcost/dSigma_c R`` (``Gamma_ii = g_i / L_i``),

        d^2 cost / d d_k^2 = 2 (L_j - L_i) (Gamma_ii - Gamma_jj),   (i, j, k) a cycle,

    the squared derivative of the rotation's exponential in the plane of moments i, j. Where
    the data pull two second moments far below their prior (a trunk's towards zero) this
    term is many times the rotation prior's 1/std^2 and Gauss-Newton, which sees only that,
    overshoots the axes by radians (polar coordinates near their origin)."""
    blocks = np.asarray(theta, dtype=float).reshape(-1, 10)
    g = np.asarray(log_gradient, dtype=float).reshape(-1, 10)[:, 7:10]
    moments = np.exp(blocks[:, 7:10])
    gamma = g / moments
    out = np.zeros_like(blocks)
    for k, (i, j) in enumerate(((1, 2), (2, 0), (0, 1))):
        out[:, 4 + k] = 2.0 * (moments[:, j] - moments[:, i]) * (gamma[:, i] - gamma[:, j])
    return out.reshape(-1)


_LOG_COORDINATES = {"exp_eig": [0, 7, 8, 9], "log_cholesky": [0, 1, 2, 3]}


def step_limit(chart: str, dtheta: NDArray, max_log_step: float) -> float:
    """Largest ``alpha <= 1`` with every logarithmic coordinate (mass and second moments, or
    the log-Cholesky diagonal) and every exp-eig rotation moving by at most ``max_log_step``
    (a factor ``e^max_log_step`` / that many radians): Gauss-Newton steps in log coordinates
    can otherwise overshoot to ``-inf`` where the gradient vanishes."""
    blocks = np.abs(np.asarray(dtheta)).reshape(-1, 10)
    cols = _LOG_COORDINATES[chart] + ([4, 5, 6] if chart == "exp_eig" else [])
    largest = float(blocks[:, cols].max(initial=0.0))
    return 1.0 if largest <= max_log_step else max_log_step / largest
