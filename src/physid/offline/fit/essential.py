"""Essential parameters: the base parameters the data really pin down (paper C §4.2, "28 of 60").

Starting from all base parameters, repeatedly drop the one with the largest relative standard
deviation and re-estimate, until ``max(%sigma) / min(%sigma)`` falls below a ratio (Pham and
Gautier 1991; Janot et al. 2014). Each re-estimation reuses one QR factorisation of the weighted
base regressor: for a subset S of its columns ``||u - X_S theta||^2 = ||Q^T u - R_S theta||^2 + c``,
so the loop costs only (b x b) solves. The row weights stay those of the full WLS fit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.offline.observe.reduced import ReducedSystem, reduce_system


@dataclass(frozen=True)
class EssentialParameters:
    """The essential subset of the base parameters and its own estimate."""

    indices: np.ndarray  # positions within the given columns, ascending
    names: tuple[str, ...]
    theta: np.ndarray
    relative_std_percent: np.ndarray
    removed: tuple[str, ...]  # in the order they were dropped
    ratio: float  # achieved max/min relative standard deviation


def essential_parameters(
    system: ReducedSystem,
    columns: np.ndarray,
    names: tuple[str, ...],
    weights: np.ndarray,
    *,
    ratio: float = 30.0,
) -> EssentialParameters:
    """Essential subset of the base columns ``columns`` of a reduced system.

    ``names`` label ``columns``; ``weights`` (n,) are the per-joint row weights of the WLS fit
    (ones for OLS).
    """
    X, u = system.stacked(columns, weights)
    R, projected, outside = reduce_system(X, u)
    n_rows = system.n_rows
    active = list(range(len(columns)))
    removed: list[str] = []
    while True:
        R_active = R[:, active]
        theta, *_ = np.linalg.lstsq(R_active, projected, rcond=None)
        residual2 = max(float(np.sum((projected - R_active @ theta) ** 2)) + outside, 0.0)
        sigma2 = residual2 / (n_rows - len(active))
        gram_inv = np.linalg.inv(R_active.T @ R_active)
        std = np.sqrt(sigma2 * np.diag(gram_inv))
        relative = 100.0 * std / np.maximum(np.abs(theta), 1e-300)
        achieved = float(relative.max() / max(relative.min(), 1e-300))
        if achieved <= ratio or len(active) == 1:
            break
        worst = int(np.argmax(relative))
        removed.append(names[active[worst]])
        del active[worst]
    indices = np.array(active, dtype=int)
    return EssentialParameters(
        indices, tuple(names[i] for i in indices), theta, relative, tuple(removed), achieved
    )
