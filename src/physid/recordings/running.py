"""Running median and running mean along axis 0, with the edge conventions of ``scipy.ndimage``.

``median_filter(x, size=(width, 1), mode="mirror")`` and ``uniform_filter1d(x, width, axis=0,
mode="nearest")`` give the same numbers (the median exactly, the mean to rounding: tests compare
them); importing ``scipy.ndimage`` (with ``scipy.special``) costs about 0.08 s of CPU on every
command that reads a recording, for two window operations NumPy does as fast.
"""

from __future__ import annotations

import numpy as np


def mirrored_rows(n_rows: int, before: int, after: int) -> np.ndarray:
    """Row indices ``-before .. n_rows - 1 + after`` reflected about the end rows without
    repeating them (x2, x1, x0, x1, x2 ...), however far they reach."""
    index = np.arange(-before, n_rows + after)
    if n_rows == 1:
        return np.zeros_like(index)
    period = 2 * (n_rows - 1)
    folded = np.mod(index, period)
    return np.where(folded >= n_rows, period - folded, folded)


def running_median(x: np.ndarray, width: int) -> np.ndarray:
    """Median of the ``width`` (odd) rows centred on each row of ``x`` (N, ...), the ends
    mirrored about the end row (``scipy.ndimage.median_filter(mode="mirror")``)."""
    half = width // 2
    padded = np.asarray(x)[mirrored_rows(len(x), half, width - 1 - half)]
    windows = np.lib.stride_tricks.sliding_window_view(padded, width, axis=0)
    return np.median(windows, axis=-1)


def running_mean(x: np.ndarray, width: int) -> np.ndarray:
    """Mean of ``width`` rows around each row of ``x`` (N, ...), rows ``k - width // 2`` to
    ``k + (width - 1) // 2``, the ends continued by the end rows
    (``scipy.ndimage.uniform_filter1d(axis=0, mode="nearest")``)."""
    x = np.asarray(x, float)
    before = width // 2
    index = np.clip(np.arange(-before, len(x) + width - 1 - before), 0, len(x) - 1)
    return window_means(x[index], width)


def window_means(x: np.ndarray, width: int) -> np.ndarray:
    """Mean of every ``width`` consecutive rows of ``x`` (N, ...): ``(N - width + 1, ...)``, by
    a cumulative sum (the windows that fit, no extension)."""
    sums = np.cumsum(np.concatenate([np.zeros_like(x[:1]), x]), axis=0)
    return (sums[width:] - sums[:-width]) / width
