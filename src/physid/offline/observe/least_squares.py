"""Ordinary and per-joint weighted least squares of the IDIM (paper C eqs. 4–7).

``theta = (X^T X)^-1 X^T u`` (eq. 5), ``Sigma = sigma^2 (X^T X)^-1`` (eq. 6),
``sigma^2 = ||u - X theta||^2 / (N_t - b)`` (eq. 7). The weighted variant first estimates one noise
level per joint from the ordinary residuals (Gautier's WLS:
``sigma_j^2 = ||rho_j||^2 / (r_j - c_j)``
with ``r_j`` rows and ``c_j`` parameters acting on joint j) and divides each joint's rows by it,
so that eqs. 5–7 hold for homoscedastic errors. Solved by QR on the exactly reduced system of
:mod:`physid.offline.observe.reduced`, never by normal equations.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from physid.errors import InputError
from physid.offline.observe.reduced import ReducedSystem


@dataclass(frozen=True)
class LeastSquaresResult:
    """Estimate, uncertainty and residual level of one (weighted) least-squares fit."""

    columns: np.ndarray  # (b,) standard-regressor columns estimated
    theta: np.ndarray  # (b,)
    covariance: np.ndarray  # (b, b)
    std: np.ndarray  # (b,) standard deviations, sqrt(diag(covariance))
    relative_std_percent: np.ndarray  # (b,) 100 std / |theta|
    joint_sigma: np.ndarray  # (n,) per-joint residual standard deviation [N m]
    weights: np.ndarray  # (n,) row weights used (1 for OLS, 1/sigma_j for WLS)
    sigma2: float  # eq. 7 on the (weighted) system
    condition_number: float  # of the (weighted) regressor
    method: str  # "ols" or "wls"


def solve_triangular_system(X: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Least-squares ``theta``, ``(X^T X)^-1`` (by QR) and the condition number of ``X``.

    One Householder QR of ``[X | u]``: its triangle holds ``R`` and ``Q^T u``, so
    ``theta = R^-1 Q^T u`` without a second factorisation of ``X``."""
    n_params = X.shape[1]
    triangle = scipy.linalg.qr(np.column_stack([X, u]), mode="r", check_finite=False)[0]
    R, projected = triangle[:n_params, :n_params], triangle[:n_params, n_params]
    diagonal = np.abs(np.diag(R))
    if diagonal.size == 0 or diagonal.min() <= 1e-12 * diagonal.max():
        raise InputError("the regressor is rank deficient: some base parameters are not excited")
    theta = scipy.linalg.solve_triangular(R, projected, check_finite=False)
    R_inv = scipy.linalg.solve_triangular(R, np.eye(R.shape[0]))
    singular = np.linalg.svd(R, compute_uv=False)
    return theta, R_inv @ R_inv.T, float(singular[0] / singular[-1])


def _fit(
    system: ReducedSystem, columns: np.ndarray, weights: np.ndarray, method: str
) -> LeastSquaresResult:
    n_params = len(columns)
    n_rows = system.n_rows
    if n_rows <= n_params:
        raise InputError(
            f"{n_rows} equations (samples x joints, after the filter) for {n_params} "
            "parameters: the system is not overdetermined: the recordings are too short for "
            "this model (record longer, or fit fewer joint terms)"
        )
    X, u = system.stacked(columns, weights)
    theta, XtX_inv, condition = solve_triangular_system(X, u)
    joint_residual2 = system.joint_residual2(columns, theta)
    sigma2 = float(np.sum(weights**2 * joint_residual2) / (n_rows - n_params))
    covariance = sigma2 * XtX_inv
    std = np.sqrt(np.diag(covariance))
    with np.errstate(divide="ignore"):
        relative = 100.0 * std / np.abs(theta)
    dof = np.maximum(system.n_samples - system.acting(columns), 1)
    joint_sigma = np.sqrt(joint_residual2 / dof)
    if system.fitted is not None:
        joint_sigma[~system.fitted] = np.nan  # no recorded torque
    return LeastSquaresResult(
        np.asarray(columns),
        theta,
        covariance,
        std,
        relative,
        joint_sigma,
        weights,
        sigma2,
        condition,
        method,
    )


def ordinary_least_squares(system: ReducedSystem, columns: np.ndarray) -> LeastSquaresResult:
    """OLS of the selected regressor columns (paper C eqs. 5–7), computed once per system and
    columns (:meth:`~.reduced.ReducedSystem.remembered`: the choices ask for the same fits)."""
    key = ("ols", np.asarray(columns).tobytes())
    ones = np.ones(system.n_joints)
    return system.remembered(key, lambda: _read_only(_fit(system, columns, ones, "ols")))


def weighted_least_squares(system: ReducedSystem, columns: np.ndarray) -> LeastSquaresResult:
    """Per-joint WLS: rows of joint j divided by its OLS residual standard deviation (computed
    once per system and columns, as :func:`ordinary_least_squares`)."""
    key = ("wls", np.asarray(columns).tobytes())
    return system.remembered(key, lambda: _read_only(_wls(system, columns)))


def _read_only(result: LeastSquaresResult) -> LeastSquaresResult:
    """The result with its arrays read-only: one fit is handed to every choice that asks."""
    for value in vars(result).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return result


def _wls(system: ReducedSystem, columns: np.ndarray) -> LeastSquaresResult:
    sigma = ordinary_least_squares(system, columns).joint_sigma
    floor = 1e-9 * max(float(np.nanmax(sigma)), 1e-300)
    weights = 1.0 / np.maximum(sigma, floor)
    weights[np.isnan(sigma)] = 0.0  # joints without a recorded torque: zero rows anyway
    return _fit(system, columns, weights, "wls")


def least_squares(
    system: ReducedSystem, columns: np.ndarray, weighting: str = "wls"
) -> LeastSquaresResult:
    """Dispatch on ``weighting`` ("wls" or "ols"; "auto", which the folds decide after the
    preprocessing choices (:mod:`physid.offline.choose.weighting`), is "wls" until then)."""
    if weighting == "ols":
        return ordinary_least_squares(system, columns)
    if weighting in ("wls", "auto"):
        return weighted_least_squares(system, columns)
    raise InputError(f"weighting must be 'wls', 'ols' or 'auto', got '{weighting}'")


def residual_autocorrelation(residual: np.ndarray, max_lag: int) -> np.ndarray:
    """Normalised autocorrelation (n, max_lag + 1) of each joint's residual; lag 0 is 1.

    White residuals stay inside ``+-1.96/sqrt(M)``; serially correlated ones (paper C Fig. 3)
    mean eq. 6 underestimates the uncertainty.
    """
    centred = residual - residual.mean(axis=0)
    n_samples = centred.shape[0]
    max_lag = int(min(max_lag, n_samples - 1))
    size = 1 << int(np.ceil(np.log2(2 * n_samples)))
    spectrum = np.fft.rfft(centred, n=size, axis=0)
    correlation = np.fft.irfft(np.abs(spectrum) ** 2, n=size, axis=0)[: max_lag + 1]
    variance = np.maximum(correlation[0], 1e-300)
    return (correlation / variance).T


def autocorrelation_robust_covariance(
    X: np.ndarray, residual: np.ndarray, XtX_inv: np.ndarray
) -> tuple[np.ndarray, int]:
    """Newey–West covariance of least squares with serially correlated errors.

    ``X`` (M, n, b) is the (weighted) regressor as a time series, ``residual`` (M, n) the
    (weighted) residual and ``XtX_inv`` = (X^T X)^-1. With the scores ``s_t = sum_j X_tj e_tj``,
    ``Cov = (X^T X)^-1 Omega (X^T X)^-1`` where ``Omega = sum_l k(l/(L+1)) Gamma_l`` is the
    Bartlett-weighted long-run covariance of the scores (Newey and West 1987), with Andrews'
    (1991) AR(1) plug-in bandwidth L. Equals eq. 6 when the residuals are white. The lag sum is
    a convolution of the scores with the lag window (:func:`newey_west_covariance`).
    Returns the covariance and L.
    """
    return newey_west_covariance(np.einsum("tjb,tj->tb", X, residual), residual, XtX_inv)


# bytes of scores smoothed by the lag window at a time (the FFT convolution needs about
# 4 x that): the columns' zero-padded complex spectra would otherwise take hundreds of MB on
# a long recording; 32 MB blocks keep them below the regressor's own share of the memory
_SMOOTHED_BYTES = 8 * 1024**2


def newey_west_covariance(
    scores: np.ndarray, residual: np.ndarray, XtX_inv: np.ndarray
) -> tuple[np.ndarray, int]:
    """:func:`autocorrelation_robust_covariance` from the scores ``s_t = sum_j X_tj e_tj``
    (M, b) and the residual (M, n), which a long recording accumulates window by window.

    ``Omega = sum_l w_l Gamma_l = sum_t s_t u_t^T`` with ``u_t = sum_l w_l s_{t-l}``: each
    score column convolved with the Bartlett window (an FFT convolution, so any lag count costs
    about the same), a block of columns at a time (:data:`_SMOOTHED_BYTES`), and
    ``Omega`` one matrix product per block: beyond the scores, memory of one block."""
    n_samples = scores.shape[0]
    centred = residual - residual.mean(axis=0)
    denominator = np.sum(centred[:-1] ** 2, axis=0)
    rho = np.sum(centred[1:] * centred[:-1], axis=0) / np.maximum(denominator, 1e-300)
    rho = float(np.clip(np.average(rho, weights=np.maximum(denominator, 1e-300)), -0.99, 0.99))
    alpha = 4 * rho**2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    lags = int(min(np.ceil(1.1447 * (alpha * n_samples) ** (1 / 3)), n_samples - 1))
    window = 1.0 - np.abs(np.arange(-lags, lags + 1)) / (lags + 1.0)
    n_scores = scores.shape[1]
    width = max(1, _SMOOTHED_BYTES // (8 * max(n_samples, 1)))
    omega = np.empty((n_scores, n_scores))
    for first in range(0, n_scores, width):
        columns = slice(first, first + width)
        smoothed = _lag_window_smoothed(scores[:, columns], window)
        omega[:, columns] = scores.T @ smoothed
    omega = 0.5 * (omega + omega.T)  # symmetric but for rounding
    return XtX_inv @ omega @ XtX_inv, lags


def _lag_window_smoothed(scores: np.ndarray, window: np.ndarray) -> np.ndarray:
    """``u_t = sum_s w_{t - s + L} s_s`` for the odd window ``w`` (2L + 1,): the centred part of
    the full convolution along axis 0, through zero-padded real FFTs."""
    n_samples, lags = scores.shape[0], (len(window) - 1) // 2
    size = 1 << int(np.ceil(np.log2(n_samples + 2 * lags)))
    spectrum = np.fft.rfft(scores, size, axis=0) * np.fft.rfft(window, size)[:, None]
    return np.fft.irfft(spectrum, size, axis=0)[lags : lags + n_samples]
