"""Linear algebra of precisions and Hessians whose parameters span many decades of units."""

from __future__ import annotations

import numpy as np


def scaled_pinv(matrix: np.ndarray, rcond: float = 1e-14) -> np.ndarray:
    """Pseudo-inverse of a symmetric positive semidefinite ``matrix`` (a precision or a
    Hessian) taken at unit diagonal (Jacobi scaling) and scaled back: the parameters' units
    span many decades (a viscous coefficient's prior precision of 1e-3 beside a small link's
    inertia at 1e12), and a relative cut-off on the unscaled eigenvalues dropped whole
    well-defined directions: zero variance, which read "the prior decides" for the viscous
    friction and armature a Drake-simulated Panda determines to 1-8 %; and in simfit's
    condensed solver (:mod:`physid.numerics.condensed_lm`) a frictionloss beyond the force its
    joint ever needed (its rollouts no longer depend on it: only its prior's precision left,
    1e-14 of a window state's) read a std of 6e-10 N m instead of its prior's. A direction
    with no information (a zero diagonal) stays at zero."""
    scale = np.sqrt(np.clip(np.diag(matrix), 0.0, None))
    scale[scale == 0.0] = 1.0
    outer = np.outer(scale, scale)
    return np.linalg.pinv(matrix / outer, rcond=rcond, hermitian=True) / outer
