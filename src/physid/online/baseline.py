"""Baseline linear Kalman filter on the raw inertial parameters (paper E eqs. 12 and 15).

State ``pi`` itself (Pinocchio order), random walk ``pi_k = pi_{k-1} + eta_k`` (eq. 12) and
linear measurement ``delta_tau = Y_est pi + nu`` (eq. 15). Nothing keeps the estimate in the
consistent set: this is the comparison of paper E §IV-A (Fig. 3), where it drifts out of it.

It shares the measurement, window, calibration, gating and rate limiting of
:class:`~physid.online.ekf.RecursiveInertialFilter` and the interface of
:class:`~physid.online.ekf.InertialEKF`. For a like-for-like comparison the EKF's settings (given
per log-Cholesky parameter) are mapped to pi through the Jacobian at the initial estimate:
``P0 = G0 diag(initial_std^2) G0^T`` and ``Q = G0 diag(process_noise^2) G0^T``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import block_diag

from physid.online.ekf import RecursiveInertialFilter


class BaselineKF(RecursiveInertialFilter):
    """Linear KF on raw pi (paper E eqs. 12, 15); same constructor and ``update`` as the EKF.

    Its estimates may leave the consistent set; :attr:`BodyEstimate.mass
    <physid.online.results.BodyEstimate.mass>` and the other derived quantities then raise or
    are meaningless (use ``pi``).
    """

    _trust_region = False  # linear: no overshoot to guard against, plain eqs. 12 and 15
    projects_emitted = False  # its leaving the consistent set is what it is there to show

    def _state_from_pi(self, pi: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array(pi, dtype=float).ravel()

    def _pi_and_jacobian(self, x: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
        identity = np.broadcast_to(np.eye(10), (self.n_bodies, 10, 10))
        return x.reshape(self.n_bodies, 10).copy(), identity

    def _covariance(self, theta_variance: NDArray, G0: NDArray) -> NDArray[np.float64]:
        return block_diag(*[G @ np.diag(theta_variance) @ G.T for G in G0])
