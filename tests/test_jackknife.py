"""The blocked jackknife of the fit (physid.offline.fit.jackknife, issue 32 item 3): its variance
formula, the Loewner maximum, and coverage where the noise model is wrong."""

from __future__ import annotations

import numpy as np
import scipy.signal

from physid.offline.fit.jackknife import blocked_jackknife, jackknife_covariance, loewner_max
from physid.offline.observe.folds import combine
from physid.offline.observe.reduced import ReducedSystem, ReductionAccumulator


def test_the_jackknife_variance_of_a_block_mean_is_unbiased():
    """K = 4 blocks of 50 N(0, 1) samples: the variance of the full mean is 1/200 exactly, and
    the delete-a-block jackknife is unbiased for a mean (mean over 4,000 draws within 4 %)."""
    rng = np.random.default_rng(0)
    samples = rng.standard_normal((4000, 4, 50))
    block_means = samples.mean(axis=2)  # (draws, 4)
    left_out = (block_means.sum(axis=1, keepdims=True) - block_means) / 3.0  # (draws, 4)
    variances = [jackknife_covariance(estimates[:, None])[0, 0] for estimates in left_out]
    assert abs(np.mean(variances) * 200 - 1.0) < 0.04


def test_the_loewner_maximum_is_at_least_both_in_every_direction():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((5, 5))
    b = rng.standard_normal((5, 2))
    first, second = a @ a.T, 3.0 * b @ b.T  # second of rank 2, larger in its directions
    both = loewner_max(first, second)
    assert np.linalg.eigvalsh(both - first).min() > -1e-10
    assert np.linalg.eigvalsh(both - second).min() > -1e-10
    assert np.allclose(loewner_max(first, 0.5 * first), first)


def _blocks(x: np.ndarray, y: np.ndarray, blocks: int = 4) -> list[ReducedSystem]:
    systems = []
    for rows in np.array_split(np.arange(len(y)), blocks):
        total = ReductionAccumulator()
        total.add(np.column_stack([x[rows], np.ones(len(rows))])[:, None, :], y[rows, None])
        systems.append(total.system())
    return systems


def _least_squares(system: ReducedSystem) -> np.ndarray:
    A, u = system.stacked(np.arange(2))
    return np.linalg.lstsq(A, u, rcond=None)[0]


PHI = 0.97  # AR(1) model error: correlation time 33 samples, blocks of 200


def test_the_jackknife_covers_the_truth_where_the_noise_model_is_wrong():
    """y = 2 x + 1 + d(t) + e, fitted as a line: d is a slow AR(1) process (model error, serially
    correlated, 4x the white noise), x a slow sinusoid. The i.i.d. least-squares std is
    overconfident: both parameters within 3 std in 12 % of 300 draws; with the Loewner maximum of
    it and the 4-block jackknife in 85 % (a variance with 3 degrees of freedom: about 89 % for
    both of two parameters if it were a t distribution)."""
    rng = np.random.default_rng(2)
    n = 800
    t = np.linspace(0.0, 1.0, n)
    x = np.sin(2 * np.pi * 1.5 * t)
    truth = np.array([2.0, 1.0])
    covered_iid = covered_jackknife = 0
    for _ in range(300):
        drift = scipy.signal.lfilter([np.sqrt(1 - PHI**2)], [1.0, -PHI], rng.standard_normal(n))
        y = truth[0] * x + truth[1] + 0.2 * drift + 0.05 * rng.standard_normal(n)
        systems = _blocks(x, y)
        whole = combine(systems)
        estimate = _least_squares(whole)
        A, u = whole.stacked(np.arange(2))
        sigma2 = np.sum((u - A @ estimate) ** 2) / (n - 2)  # the reduced rows keep the norm
        laplace = sigma2 * np.linalg.inv(A.T @ A)
        jackknife = blocked_jackknife(_least_squares, systems)
        reported = loewner_max(laplace, jackknife)
        covered_iid += np.all(np.abs(estimate - truth) <= 3 * np.sqrt(np.diag(laplace)))
        covered_jackknife += np.all(np.abs(estimate - truth) <= 3 * np.sqrt(np.diag(reported)))
    assert covered_iid < 0.3 * 300
    assert covered_jackknife >= 0.8 * 300
