"""Serial correlation of the process noise at the estimate, and the standard deviations it
inflates (honest std on soft-contact data).

The Laplace standard deviations of a solve (:mod:`physid.oe.solving.uncertainty`) assume that the
process noise ``w_k`` is white, as eq. 16 models it. When the dynamics model is systematically
wrong (soft feet that sink and roll under a rigid point-contact model, a joint friction the tanh
does not match) the estimated ``w_k`` is the model error, slow and strongly correlated from node to
node; then the parameters' spread is the long-run variance of the scores, not their variance, as in
the Newey-West covariance of least squares (paper C section 4.3,
:mod:`physid.offline.observe.least_squares`). Here one scalar stands for that ratio: the Bartlett-
weighted long-run variance of the whitened velocity noise ``w_v,k / sigma`` summed over its
components, over their variance (Andrews' AR(1) plug-in bandwidth from the pooled lag-1
correlation). It is 1 for white noise and is applied only above 1. A scalar inflation is an
approximation (it assumes the scores correlate as the noise does).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def long_run_ratio(z: NDArray) -> tuple[float, int]:
    """``(sum_i LRV_i / sum_i Var_i, bandwidth)`` of the columns of ``z`` ``(n, m)``, with the
    Bartlett kernel and Andrews' (1991) AR(1) bandwidth of the pooled lag-1 correlation."""
    z = np.asarray(z, dtype=float)
    n = z.shape[0]
    if n < 3 or z.size == 0:
        return 1.0, 0
    e = z - z.mean(axis=0)
    variance = float(np.sum(e * e))
    if variance <= 0:
        return 1.0, 0
    lags = bartlett_lags(e)
    size = 1 << int(np.ceil(np.log2(2 * n)))
    spectrum = np.fft.rfft(e, n=size, axis=0)
    gamma = np.fft.irfft(np.abs(spectrum) ** 2, n=size, axis=0)[: lags + 1].sum(axis=1)
    weights = 1.0 - np.arange(1, lags + 1) / (lags + 1.0)
    long_run = gamma[0] + 2.0 * float(weights @ gamma[1:])
    return max(long_run / variance, 0.0), lags


def bartlett_lags(e: NDArray) -> int:
    """Andrews' (1991) AR(1) plug-in bandwidth of the Bartlett kernel for the centred columns
    of ``e`` ``(n, m)``, from their pooled lag-1 correlation (at most n - 1)."""
    n = e.shape[0]
    rho = float(np.clip(np.sum(e[1:] * e[:-1]) / max(np.sum(e[:-1] ** 2), 1e-300), -0.99, 0.99))
    alpha = 4 * rho**2 / ((1 - rho) ** 2 * (1 + rho) ** 2)
    return int(min(np.ceil(1.1447 * (alpha * n) ** (1 / 3)), n - 1))


def process_noise_inflation(ws: NDArray, w_std: NDArray, nv: int) -> float:
    """The ratio of :func:`long_run_ratio` of the whitened velocity process noise
    ``ws[:, nv:] / w_std[:, nv:]`` (``w_std``: ``(N, 2 nv)`` per node), at least 1."""
    if ws.shape[0] < 3:
        return 1.0
    return max(long_run_ratio(ws[:, nv:] / w_std[:, nv:])[0], 1.0)
