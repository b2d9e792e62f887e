"""Linearised parameter covariance by variable projection (paper A eqs. 3.26-3.32).

``T = (I - J_s J_s^+) J_p`` (eq. 3.32) is the parameter Jacobian with the states projected out,
``J`` the Jacobian of the residual the solver minimises (weights ``sqrt(kappa)`` included). The
residual noise levels are the sample variances of each residual component over the time steps
(eqs. 3.26-3.27, one variance per impulse component and per observed angle), and the covariance
of the estimate is the propagation of eq. 3.31,
``Lambda = (T^T T)^-1 T^T diag(sigma^2) T (T^T T)^-1``: the sandwich of the estimator that was
actually run (weights ``kappa I, I``), not the information ``(T^T W T)^-1`` of one weighted by the
sample variances, which is smaller whenever the two weightings differ: on the synthetic Furuta
the sandwich matches the Monte Carlo spread of the estimates, and the information form is up to
several times too small.

``J_s^+ J_p`` is computed from the normal equations of the column-equilibrated state block with
iterative refinement (corrected semi-normal equations): the stiff impulse rows make ``J_s``
badly conditioned (singular values 3e5 .. 1e-2 at kappa = 1e4), and a regularisation of the
unscaled normal matrix (``1e-12 max diag(J_s^T J_s)``) would exceed its smallest eigenvalues
and shrink the std several-fold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from physid.multibody.estimate.normal import spd_solver, upper_band


@dataclass(frozen=True)
class Sensitivity:
    covariance: np.ndarray  # (p, p), eq. 3.31
    std: np.ndarray  # (p,) inf where a direction is not identifiable
    singular_values: np.ndarray  # (p,) of W^1/2 T with columns scaled by max(|p_i|, 1e-12)
    null_directions: np.ndarray  # (p, k) scaled-parameter directions with s < 1e-8 s_max


def residual_std(r: np.ndarray, layout: list[tuple]) -> np.ndarray:
    """Per-row noise level: ``layout`` lists ``(start, n_rows_per_step, n_steps[, counts])``
    blocks whose components share one variance each (eqs. 3.26-3.27 with ``n - 1`` in the
    denominator; ``counts`` per component: how many of the steps carry a residual, e.g. the
    angle rows at sampled steps only, the others being 0 by their weight)."""
    sigma = np.ones_like(r)
    for start, width, steps, *counts in layout:
        block = r[start : start + width * steps].reshape(steps, width)
        n = np.asarray(counts[0], float) if counts else np.full(width, float(steps))
        var = (block**2).sum(0) / np.maximum(n - 1, 1)
        floor = 1e-30 + 1e-12 * var.max()
        sigma[start : start + width * steps] = np.tile(np.sqrt(np.maximum(var, floor)), steps)
    return sigma


def projected_jacobian(J: sp.spmatrix, n_state: int) -> np.ndarray:
    """``T = J_p - J_s X`` with ``X = argmin ||J_s X - J_p||`` (eq. 3.32), dense (rows, p)."""
    J = J.tocsc()
    Js, Jp = J[:, :n_state], J[:, n_state:].toarray()
    norms = np.sqrt(np.asarray(Js.multiply(Js).sum(axis=0)).ravel())
    A = Js @ sp.diags(1.0 / np.maximum(norms, 1e-300))
    H = A.T @ A  # CSR, as the band storage and the LU fallback read it
    # Tikhonov floor at 1e-14 of the (unit) scaled diagonal: directions the states cannot
    # resolve in double precision are left out of the projection (a truncated pseudo-inverse);
    # the refinements converge to the exact projection on the others (that of a dense SVD, to
    # 3 digits); without the floor a single refinement can be off several-fold.
    Hreg = H + 1e-14 * sp.identity(n_state, format="csr")
    solve = spd_solver(upper_band(Hreg), lambda: Hreg)  # banded Cholesky: ten times faster
    X = solve(np.asarray(A.T @ Jp))
    for _ in range(4):
        X = X + solve(np.asarray(A.T @ (Jp - A @ X)))
    return Jp - A @ X


def parameter_sensitivity(
    J: sp.spmatrix, sigma: np.ndarray, n_state: int, p: np.ndarray
) -> Sensitivity:
    """Covariance (eq. 3.31) of the ``p`` (last columns of ``J``) with the states projected out,
    for residual noise levels ``sigma`` (eqs. 3.26-3.27)."""
    T = projected_jacobian(J, n_state)
    TT = 0.5 * (T.T @ T + (T.T @ T).T)
    eig, vec = np.linalg.eigh(TT)
    good = eig > 1e-14 * max(eig.max(), 1e-300)
    TTi = (vec[:, good] / eig[good]) @ vec[:, good].T  # pseudo-inverse on the identifiable part
    cov = TTi @ ((T.T * sigma**2) @ T) @ TTi
    cov = 0.5 * (cov + cov.T)
    std = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    std[np.any(np.abs(vec[:, ~good]) > 1e-6, axis=1)] = np.inf  # touches a null direction
    Tw = (T / sigma[:, None]) * np.maximum(np.abs(p), 1e-12)[None, :]
    _, sv, vt = np.linalg.svd(Tw, full_matrices=False)
    null = vt[sv < 1e-8 * max(sv.max(), 1e-300)].T
    return Sensitivity(cov, std, sv, null)
