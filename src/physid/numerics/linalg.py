"""Linear algebra of precisions and Hessians whose parameters span many decades of units."""

from __future__ import annotations

import numpy as np


def unit_norm_columns(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(matrix / norms, norms)``: the columns scaled to unit norm (zero columns left zero,
    their norm taken as 1), so that a least squares' relative cut-off on singular values
    truncates by conditioning only, not by the columns' units; divide a solution of the
    scaled matrix by ``norms`` for the original one."""
    norms = np.linalg.norm(matrix, axis=0)
    norms[norms == 0.0] = 1.0
    return matrix / norms, norms


def scaled_pinv(matrix: np.ndarray, rcond: float = 1e-14) -> np.ndarray:
    """Pseudo-inverse of a symmetric positive semidefinite ``matrix`` (a precision or a
    Hessian) taken at unit diagonal (Jacobi scaling) and scaled back: the parameters' units
    span many decades (a viscous coefficient's prior precision of 1e-3 beside a small link's
    inertia at 1e12), and a relative cut-off on the unscaled eigenvalues drops whole
    well-defined directions: their variance reads zero, as if the prior decided what the data
    determine to a few per cent, and a parameter known only by its weak prior (in simfit's
    condensed solver, :mod:`physid.numerics.condensed_lm`) reads a tiny std instead of its
    prior's. A direction with no information (a zero diagonal) stays at zero."""
    scale = np.sqrt(np.clip(np.diag(matrix), 0.0, None))
    scale[scale == 0.0] = 1.0
    outer = np.outer(scale, scale)
    return np.linalg.pinv(matrix / outer, rcond=rcond, hermitian=True) / outer
