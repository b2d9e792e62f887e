"""What the training data's own time blocks disagree on: a blocked jackknife of the fit.

The Laplace covariance of :mod:`.uncertainty` is exact for the model it assumes: torque =
regressor x parameters + noise (serially correlated, Newey-West). On real robots the residual is
mostly *model error* -- friction shapes, cables, joint elasticity, a drive delay -- whose effect
on the estimate depends on which motion the robot made. Measured on the real KUKA LWR4+
(``physid identify`` on file 2 and on file 3, the two estimates compared): with the Laplace
standard deviations, the joint terms differ by a median 1.22 combined std (0.67 for honest
ones), 6 of 28 by more than 3, and the masses by up to 7.9 std.

The blocked (delete-a-group) jackknife measures that dependence on the data themselves: the
estimator is re-run on the training data with each of the ``K`` contiguous cross-validation
blocks left out (:mod:`.folds`), and

    Sigma_J = (K - 1) / K * sum_k (theta_(k) - theta_mean) (theta_(k) - theta_mean)^T

estimates the variance of the full-data estimate, model error included (Efron and Stein 1981;
the delete-a-group form for serially dependent data: Kunsch 1989). The reported covariance is
the Loewner maximum of the two (:func:`loewner_max`): never smaller than the Laplace one (the
noise floor) nor than the blocks' disagreement in any direction. On the KUKA files above the
joint terms then differ by a median 0.71 std (none beyond 3) and the masses by at most 3.5.
``K = 4`` blocks give a rough variance (3 degrees of freedom), which the maximum only errs
towards the conservative side of.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from physid.offline.observe.folds import leave_out
from physid.offline.observe.reduced import ReducedSystem

MIN_BLOCKS = 3


def blocked_jackknife(
    fit: Callable[[ReducedSystem], np.ndarray | None], folds: list[ReducedSystem]
) -> np.ndarray | None:
    """(p, p) delete-a-block jackknife covariance of ``fit`` over the fold systems ``folds``
    (module docstring); None when fewer than :data:`MIN_BLOCKS` blocks hold data or a refit
    fails."""
    blocks = [k for k, fold in enumerate(folds) if fold.n_samples > 0]
    if len(blocks) < MIN_BLOCKS:
        return None
    estimates = []
    for k in blocks:
        theta = fit(leave_out(folds, k))
        if theta is None or not np.all(np.isfinite(theta)):
            return None
        estimates.append(theta)
    return jackknife_covariance(np.array(estimates))


def jackknife_covariance(estimates: np.ndarray) -> np.ndarray:
    """``(K - 1) / K * sum_k d_k d_k^T`` of the leave-one-block-out ``estimates`` (K, p), with
    ``d_k`` their deviations from the mean."""
    count = len(estimates)
    deviation = estimates - estimates.mean(axis=0)
    return (count - 1) / count * deviation.T @ deviation


def loewner_max(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``first + (second - first)_+``: the smallest-looking covariance that is at least both in
    every direction (``(.)_+`` keeps the positive eigen-part), so each marginal variance is at
    least the larger of the two."""
    difference = 0.5 * (second - first + (second - first).T)
    values, vectors = np.linalg.eigh(difference)
    return first + (vectors * np.clip(values, 0.0, None)) @ vectors.T


@dataclass(frozen=True)
class JackknifeSpread:
    """How much the blocks' disagreement widened the Laplace standard deviations."""

    blocks: int
    median_std_ratio: float  # median over the standard parameters of the reported / Laplace std
    widened_share: float  # share of the standard parameters whose std the jackknife widened
    base_std: np.ndarray  # (b_excited,) jackknife std of the excited base parameters

    @classmethod
    def of(
        cls,
        laplace: np.ndarray,
        reported: np.ndarray,
        jackknife: np.ndarray,
        projection: np.ndarray,
        blocks: int,
    ) -> JackknifeSpread:
        """From the Laplace, reported (:func:`loewner_max` of the two) and jackknife
        covariances (p, p), the excited base parameters' projection ``K`` (b, p) and the number
        of blocks left out in turn."""
        laplace_variance = np.clip(np.diag(laplace), 1e-300, None)
        ratio = np.sqrt(np.diag(reported) / laplace_variance)
        base_variance = np.einsum("ij,jk,ik->i", projection, jackknife, projection)
        return cls(
            blocks,
            float(np.median(ratio)),
            float(np.mean(ratio > 1.0 + 1e-9)),
            np.sqrt(np.clip(base_variance, 0.0, None)),
        )

    def as_dict(self) -> dict:
        return {
            "blocks": self.blocks,
            "median_std_ratio": self.median_std_ratio,
            "widened_share": self.widened_share,
        }
