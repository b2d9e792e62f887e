"""Information criteria of an excitation: how well a trajectory identifies the base parameters.

``W`` is the stacked base regressor (rows: samples x joints; columns: the base parameters of
:func:`physid.robot.regressor.base_parameters`) along the trajectory, ``D`` an optional diagonal of
prior standard deviations of the base parameters, ``s`` the torque-noise variance. Two criteria,
both minimised:

* ``logdet`` (D-optimality): ``-log det(W^T W / K)`` over ``K`` samples, or, with a prior,
  ``-log det(D W^T W D / s + I)``, the information gained over the prior (Bayesian D-optimal
  design);
* ``cond`` (Swevers et al. 1997, Gautier & Khalil 1992): ``log cond(W D) = log sigma_max -
  log sigma_min``; without a prior ``D`` is a fixed column scaling (the inverse column norms of
  the start trajectory), so the criterion is about the column-normalised condition number and
  not the units of the parameters.

Gradients w.r.t. the positions, velocities and accelerations of every sample are exact matrix
calculus in ``W`` (``d log det M = tr(M^-1 dM)``, ``d sigma_i = u_i^T dW v_i``) chained with the
derivatives of Pinocchio's regressor: central differences in ``q`` and ``dq`` (the regressor is
quadratic in ``dq``, so these are exact to round-off there) and exact unit differences in
``ddq`` (it is linear). Coulomb columns (``sign(dq)``) have derivative 0 almost everywhere and
are given 0, which also keeps the samples at rest (t = 0) from a spurious step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.robot.model import RobotModel
from physid.robot.regressor import BaseParameters, observation_matrix

CRITERIA = ("logdet", "cond")
_STEP = 1e-6  # rad, rad/s: central-difference step of the regressor


@dataclass(frozen=True)
class Criterion:
    """A criterion on the base regressor of ``model`` (see the module docstring)."""

    model: RobotModel
    base: BaseParameters
    kind: str = "logdet"
    prior_std: np.ndarray | None = None  # (b,) prior std of the base parameters
    noise_std: float = 1.0  # N m: torque noise the prior is weighed against
    column_scale: np.ndarray | None = None  # (b,) cond without a prior: W -> W diag(scale)

    def base_regressor(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """(K, n, b) base regressor at the samples."""
        return self.base.columns(observation_matrix(self.model, q, dq, ddq))

    def value_and_gradient_in_w(self, W: np.ndarray) -> tuple[float, np.ndarray]:
        """Criterion of a stacked base regressor ``W`` (rows, b) and its gradient (rows, b)."""
        if self.kind == "logdet":
            D = np.ones(W.shape[1]) if self.prior_std is None else np.asarray(self.prior_std)
            WD = W * D
            if self.prior_std is None:
                scale = float(W.shape[0])
                M = WD.T @ WD / scale
            else:
                scale = self.noise_std**2
                M = WD.T @ WD / scale + np.eye(W.shape[1])
            sign, logdet = np.linalg.slogdet(M)
            if sign <= 0:
                return float("inf"), np.zeros_like(W)
            gradient = -2.0 / scale * (WD @ np.linalg.inv(M)) * D
            return -float(logdet), gradient
        D = self.prior_std if self.prior_std is not None else self.column_scale
        D = np.ones(W.shape[1]) if D is None else np.asarray(D)
        U, s, Vt = np.linalg.svd(W * D, full_matrices=False)
        if s[-1] <= 0:
            return float("inf"), np.zeros_like(W)
        gradient = np.outer(U[:, 0], Vt[0] * D) / s[0] - np.outer(U[:, -1], Vt[-1] * D) / s[-1]
        return float(np.log(s[0] / s[-1])), gradient

    def value(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> float:
        W = self.base_regressor(q, dq, ddq)
        return self.value_and_gradient_in_w(W.reshape(-1, W.shape[-1]))[0]

    def _coulomb_columns(self) -> np.ndarray:
        names = np.asarray(self.model.layout.names)[self.base.independent]
        return np.array([n.endswith((".fc", ".fcm")) for n in names])

    def value_and_gradient(
        self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray
    ) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """Criterion and its gradients (K, n) w.r.t. ``q``, ``dq`` and ``ddq`` of each sample."""
        W = self.base_regressor(q, dq, ddq)
        K, n, b = W.shape
        value, G = self.value_and_gradient_in_w(W.reshape(-1, b))
        G = G.reshape(K, n, b)
        grads = [np.zeros((K, n)) for _ in range(3)]
        if not np.isfinite(value):
            return value, *grads
        coulomb = self._coulomb_columns()
        for j in range(n):
            step = np.zeros(n)
            step[j] = _STEP
            dW_q = self.base_regressor(q + step, dq, ddq) - self.base_regressor(q - step, dq, ddq)
            dW_dq = self.base_regressor(q, dq + step, ddq) - self.base_regressor(q, dq - step, ddq)
            dW_dq[..., coulomb] = 0.0
            unit = np.zeros(n)
            unit[j] = 1.0
            dW_ddq = self.base_regressor(q, dq, ddq + unit) - W
            grads[0][:, j] = np.einsum("kib,kib->k", G, dW_q) / (2 * _STEP)
            grads[1][:, j] = np.einsum("kib,kib->k", G, dW_dq) / (2 * _STEP)
            grads[2][:, j] = np.einsum("kib,kib->k", G, dW_ddq)
        return value, *grads


def condition_numbers(W: np.ndarray) -> tuple[float, float]:
    """Condition number of a stacked base regressor (rows, b): raw, and column-normalised."""
    from physid.robot.regressor import condition_number

    return condition_number(W), condition_number(W, scaled=True)
