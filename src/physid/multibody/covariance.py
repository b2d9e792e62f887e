"""Linearised parameter covariance by variable projection (paper A eqs. 3.26-3.32).

The residual noise levels are the sample variances of each residual component over the time
steps (eqs. 3.26-3.27, diagonal: one variance per impulse component and per observed angle), which
whiten the Jacobian (eq. 3.28). Eliminating the states from the linearisation (eqs. 3.29-3.32)
gives ``T^T W T = J_p^T W J_p - J_p^T W J_s (J_s^T W J_s)^-1 J_s^T W J_p``, the Schur complement
of the whitened normal matrix; its inverse is the parameter covariance and the square roots of
its eigenvalues are the singular values of ``W^1/2 T``, the identifiability verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla


@dataclass(frozen=True)
class Sensitivity:
    covariance: np.ndarray  # (p, p)
    std: np.ndarray  # (p,) inf where a direction is not identifiable
    singular_values: np.ndarray  # (p,) of W^1/2 T with columns scaled by max(|p_i|, 1e-12)
    null_directions: np.ndarray  # (p, k) scaled-parameter directions with s < 1e-8 s_max


def residual_std(r: np.ndarray, layout: list[tuple[int, int, int]]) -> np.ndarray:
    """Per-row noise level: ``layout`` lists ``(start, n_rows_per_step, n_steps)`` blocks whose
    components share one variance each (eqs. 3.26-3.27 with ``n - 1`` in the denominator)."""
    sigma = np.ones_like(r)
    for start, width, steps in layout:
        block = r[start : start + width * steps].reshape(steps, width)
        var = (block**2).sum(0) / max(steps - 1, 1)
        floor = 1e-30 + 1e-12 * var.max()
        sigma[start : start + width * steps] = np.tile(np.sqrt(np.maximum(var, floor)), steps)
    return sigma


def parameter_sensitivity(
    J: sp.csr_matrix, sigma: np.ndarray, n_state: int, p: np.ndarray
) -> Sensitivity:
    """Covariance of the ``p`` (last columns of ``J``) with the states projected out."""
    Jw = sp.diags(1.0 / sigma) @ J
    H = (Jw.T @ Jw).tocsc()
    Hss, Hsp = H[:n_state, :n_state], H[:n_state, n_state:].toarray()
    Hpp = H[n_state:, n_state:].toarray()
    reg = 1e-12 * max(float(Hss.diagonal().max()), 1e-300)
    lu = spla.splu((Hss + reg * sp.identity(n_state, format="csc")).tocsc())
    S = Hpp - Hsp.T @ lu.solve(Hsp)
    S = 0.5 * (S + S.T)
    eig, vec = np.linalg.eigh(S)
    tol = 1e-14 * max(eig.max(), 1e-300)
    good = eig > tol
    cov = (vec[:, good] / eig[good]) @ vec[:, good].T  # pseudo-inverse on the identifiable part
    std = np.sqrt(np.diag(cov))
    std[np.any(np.abs(vec[:, ~good]) > 1e-6, axis=1)] = np.inf  # touches a null direction
    scale = np.maximum(np.abs(p), 1e-12)
    Ss = S * np.outer(scale, scale)
    eig_s, vec_s = np.linalg.eigh(0.5 * (Ss + Ss.T))
    sv = np.sqrt(np.clip(eig_s, 0.0, None))[::-1]
    null = vec_s[:, ::-1][:, sv < 1e-8 * max(sv.max(), 1e-300)]
    return Sensitivity(cov, std, sv, null)
