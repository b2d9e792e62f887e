"""How well parameters predict torques: per-joint RMSE and the stacked relative error."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FitMetrics:
    """Prediction quality on one set of observations."""

    relative_error: float  # ||tau - tau_hat|| / ||tau||, all joints stacked (paper C Table 2)
    rmse: np.ndarray  # (n,) per-joint root-mean-square error [N m]
    n_samples: int
    relative_error_per_joint: np.ndarray  # (n,) ||tau_j - tau_hat_j|| / ||tau_j||

    def as_dict(self, joint_names: tuple[str, ...]) -> dict:
        return {
            "relative_error": self.relative_error,
            "relative_error_per_joint": dict(
                zip(joint_names, self.relative_error_per_joint.tolist(), strict=True)
            ),
            "rmse": dict(zip(joint_names, self.rmse.tolist(), strict=True)),
            "n_samples": self.n_samples,
        }


def fit_metrics(tau: np.ndarray, tau_predicted: np.ndarray) -> FitMetrics:
    """Metrics of predictions ``tau_predicted`` against measurements ``tau`` (M, n)."""
    error = tau - tau_predicted
    relative = float(np.linalg.norm(error) / max(np.linalg.norm(tau), 1e-300))
    per_joint = _relative_per_joint(np.sum(error**2, axis=0), np.sum(tau**2, axis=0))
    return FitMetrics(relative, np.sqrt(np.mean(error**2, axis=0)), tau.shape[0], per_joint)


def _relative_per_joint(error2: np.ndarray, tau2: np.ndarray) -> np.ndarray:
    """``||e_j|| / ||tau_j||`` from the sums of squares; NaN for a joint whose torque is 0 in
    every row (a passive joint): no relative error exists there (its RMSE does), and dividing by
    a floor printed 1.3e302 %."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(tau2 > 0.0, np.sqrt(error2) / np.sqrt(tau2), np.nan)


class MetricsAccumulator:
    """:func:`fit_metrics` of rows given in chunks (a long recording's windows). Joints outside
    ``fitted`` (n,) bool (no measured torque: config ``fit_joints``) get NaN and stay out of the
    stacked error."""

    def __init__(self, fitted: np.ndarray | None = None) -> None:
        self._error2: np.ndarray | float = 0.0  # per joint sums of squares
        self._tau2: np.ndarray | float = 0.0
        self._rows = 0
        self._fitted = None if fitted is None or np.all(fitted) else np.asarray(fitted, bool)

    def add(self, tau: np.ndarray, tau_predicted: np.ndarray) -> None:
        self._error2 = self._error2 + np.sum((tau - tau_predicted) ** 2, axis=0)
        self._tau2 = self._tau2 + np.sum(tau**2, axis=0)
        self._rows += tau.shape[0]

    def metrics(self) -> FitMetrics:
        error2, tau2 = np.asarray(self._error2, float), np.asarray(self._tau2, float)
        if self._fitted is not None:
            error2, tau2 = error2.copy(), tau2.copy()
            error2[~self._fitted] = tau2[~self._fitted] = np.nan
        relative = float(np.sqrt(np.nansum(error2)) / max(np.sqrt(np.nansum(tau2)), 1e-300))
        per_joint = _relative_per_joint(error2, tau2)
        return FitMetrics(relative, np.sqrt(error2 / self._rows), self._rows, per_joint)

    def merge(self, other: MetricsAccumulator) -> None:
        """Add another accumulator's rows (of the same joints)."""
        self._fitted = other._fitted if self._fitted is None else self._fitted
        self._error2 = self._error2 + other._error2
        self._tau2 = self._tau2 + other._tau2
        self._rows += other._rows
