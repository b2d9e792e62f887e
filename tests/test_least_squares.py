"""Least squares of paper C eqs. 5–7 on the reduced system, essential parameters, whiteness."""

from __future__ import annotations

import numpy as np
import pytest

from physid.offline.fit.essential import essential_parameters
from physid.offline.observe.least_squares import (
    ordinary_least_squares,
    residual_autocorrelation,
    weighted_least_squares,
)
from physid.offline.observe.reduced import reduce_observations


def synthetic(rng, n_samples=800, sigma=(0.1, 1.0, 0.5)):
    W = rng.standard_normal((n_samples, 3, 5))
    W[:, 2, 0] = 0.0  # a parameter that does not act on joint 3
    theta = np.array([1.0, -2.0, 0.5, 3.0, 0.01])
    tau = W @ theta + rng.standard_normal((n_samples, 3)) * np.asarray(sigma)
    return W, tau, theta


def test_reduction_is_exact_for_any_column_subset_and_weights():
    rng = np.random.default_rng(0)
    W, tau, _ = synthetic(rng)
    system = reduce_observations(W, tau)
    columns = np.array([0, 2, 3])
    weights = np.array([2.0, 0.5, 1.0])
    X, u = system.stacked(columns, weights)
    full_X = (W[:, :, columns] * weights[None, :, None]).reshape(-1, 3)
    full_u = (tau * weights).reshape(-1)
    theta = rng.standard_normal(3)
    assert np.linalg.norm(u - X @ theta) == pytest.approx(
        np.linalg.norm(full_u - full_X @ theta), rel=1e-12
    )
    np.testing.assert_allclose(
        np.linalg.lstsq(X, u, rcond=None)[0], np.linalg.lstsq(full_X, full_u, rcond=None)[0]
    )


def test_ols_matches_numpy_and_eq_6_7():
    rng = np.random.default_rng(1)
    W, tau, _ = synthetic(rng, sigma=(0.3, 0.3, 0.3))
    result = ordinary_least_squares(reduce_observations(W, tau), np.arange(5))
    X, u = W.reshape(-1, 5), tau.reshape(-1)
    theta = np.linalg.lstsq(X, u, rcond=None)[0]
    sigma2 = np.sum((u - X @ theta) ** 2) / (X.shape[0] - 5)
    np.testing.assert_allclose(result.theta, theta, rtol=1e-10)
    np.testing.assert_allclose(result.covariance, sigma2 * np.linalg.inv(X.T @ X), rtol=1e-8)
    assert result.joint_sigma[2] == pytest.approx(
        np.sqrt(np.sum((tau - W @ theta)[:, 2] ** 2) / (800 - 4))
    )


def test_wls_recovers_the_per_joint_noise_and_calibrated_uncertainty():
    # Monte Carlo: the z-scores of the WLS estimate must be standard normal (eq. 6 calibrated).
    rng = np.random.default_rng(2)
    z = []
    for _ in range(200):
        W, tau, theta = synthetic(rng)
        result = weighted_least_squares(reduce_observations(W, tau), np.arange(5))
        z.append((result.theta - theta) / result.std)
    z = np.array(z)
    np.testing.assert_allclose(result.joint_sigma, [0.1, 1.0, 0.5], rtol=0.1)
    assert abs(np.mean(z)) < 0.1 and 0.9 < np.std(z) < 1.1
    ols_spread = []
    for _ in range(50):
        W, tau, theta = synthetic(rng)
        system = reduce_observations(W, tau)
        ols_spread.append(ordinary_least_squares(system, np.arange(5)).theta - theta)
    # Weighting by the noise level beats OLS when the joints' noise differs by 10x.
    assert np.mean(np.array(ols_spread).std(axis=0)) > 1.2 * np.mean(result.std)


def test_essential_parameters_drop_the_poorly_determined_one():
    rng = np.random.default_rng(3)
    W, tau, _ = synthetic(rng)
    system = reduce_observations(W, tau)
    wls = weighted_least_squares(system, np.arange(5))
    names = ("a", "b", "c", "d", "tiny")
    essential = essential_parameters(system, np.arange(5), names, wls.weights, ratio=10.0)
    assert "tiny" in essential.removed and "tiny" not in essential.names
    assert essential.ratio <= 10.0 and set(essential.names) == {"a", "b", "c", "d"}


def test_autocorrelation_of_white_and_correlated_residuals():
    rng = np.random.default_rng(4)
    white = rng.standard_normal((5000, 1))
    ar = np.zeros((5000, 1))
    for k in range(1, 5000):
        ar[k] = 0.9 * ar[k - 1] + white[k]
    band = 1.96 / np.sqrt(5000)
    assert np.mean(np.abs(residual_autocorrelation(white, 20)[0, 1:]) < band) > 0.85
    np.testing.assert_allclose(residual_autocorrelation(ar, 3)[0], 0.9 ** np.arange(4), atol=0.05)


def test_newey_west_covariance_is_calibrated_for_correlated_errors():
    # Monte Carlo with AR(1) errors (rho 0.9) and slowly varying regressors: eq. 6 is about 4x
    # too optimistic. Measured: Newey-West z-scores have standard deviation 1.17-1.27 here
    # (the Bartlett kernel's known small-sample optimism; 1.09-1.19 with twice the samples).
    from physid.offline.observe.least_squares import autocorrelation_robust_covariance

    rng = np.random.default_rng(5)
    n_samples, t = 1500, np.arange(1500)
    X = np.stack(
        [
            np.column_stack([np.sin(0.01 * t + k), np.cos(0.003 * t * (k + 1)), np.ones(n_samples)])
            for k in range(2)
        ],
        axis=1,
    )
    z_robust, z_white = [], []
    for _ in range(150):
        e = np.zeros((n_samples, 2))
        w = rng.standard_normal((n_samples, 2))
        for k in range(1, n_samples):
            e[k] = 0.9 * e[k - 1] + w[k]
        theta = np.array([1.0, 2.0, 3.0])
        y = X @ theta + e
        flat = X.reshape(-1, 3)
        estimate = np.linalg.lstsq(flat, y.reshape(-1), rcond=None)[0]
        residual = y - X @ estimate
        XtX_inv = np.linalg.inv(flat.T @ flat)
        covariance, lags = autocorrelation_robust_covariance(X, residual, XtX_inv)
        sigma2 = np.sum(residual**2) / (flat.shape[0] - 3)
        z_robust.append((estimate - theta) / np.sqrt(np.diag(covariance)))
        z_white.append((estimate - theta) / np.sqrt(sigma2 * np.diag(XtX_inv)))
    assert lags > 20
    assert np.all(np.std(z_robust, axis=0) < 1.35) and np.all(np.std(z_robust, axis=0) > 0.8)
    assert np.all(np.std(z_white, axis=0) > 2.5)


def test_newey_west_equals_eq6_for_white_errors_and_the_direct_lag_sum():
    from physid.offline.observe.least_squares import autocorrelation_robust_covariance

    rng = np.random.default_rng(6)
    X, e = rng.standard_normal((3000, 2, 3)), rng.standard_normal((3000, 2))
    XtX_inv = np.linalg.inv(np.einsum("tjb,tjc->bc", X, X))
    covariance, lags = autocorrelation_robust_covariance(X, e, XtX_inv)
    scores = np.einsum("tjb,tj->tb", X, e)
    omega = scores.T @ scores
    for lag in range(1, lags + 1):
        gamma = scores[lag:].T @ scores[:-lag]
        omega += (1 - lag / (lags + 1)) * (gamma + gamma.T)
    np.testing.assert_allclose(covariance, XtX_inv @ omega @ XtX_inv, rtol=1e-10)
    np.testing.assert_allclose(np.diag(covariance), np.diag(XtX_inv) * np.mean(e**2), rtol=0.1)
