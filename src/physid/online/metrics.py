"""Scores of a streamed estimate against a known truth (simulated scenarios, acceptance checks)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray


def windows(t: ArrayLike, starts: Iterable[float], duration_s: float) -> NDArray[np.bool_]:
    """Mask of the samples in any ``[start, start + duration_s)``."""
    t = np.asarray(t, dtype=float)
    mask = np.zeros(t.shape, dtype=bool)
    for start in starts:
        mask |= (t >= start) & (t < start + duration_s)
    return mask


def settling_time(
    t: ArrayLike,
    estimate: ArrayLike,
    truth: ArrayLike,
    t_step: float,
    tolerance: float = 0.05,
    t_end: float | None = None,
) -> float:
    """Time after ``t_step`` from which ``|estimate - truth| <= tolerance |truth|`` holds at
    every sample up to ``t_end`` (default: the end); ``inf`` if it never settles."""
    t, estimate, truth = (np.asarray(a, dtype=float) for a in (t, estimate, truth))
    window = (t >= t_step) & (t < (np.inf if t_end is None else t_end))
    outside = window & (np.abs(estimate - truth) > tolerance * np.abs(truth))
    if not np.any(window) or outside[window][-1]:
        return float("inf")
    if not np.any(outside):
        return 0.0
    last_bad = np.flatnonzero(outside)[-1]
    return float(t[last_bad + 1] - t_step)


def mean_relative_error(
    estimate: ArrayLike, truth: ArrayLike, mask: ArrayLike | None = None
) -> float:
    """Mean of ``|estimate - truth| / |truth|`` over ``mask`` (default all samples)."""
    estimate, truth = np.asarray(estimate, dtype=float), np.asarray(truth, dtype=float)
    error = np.abs(estimate - truth) / np.abs(truth)
    return float(np.mean(error if mask is None else error[np.asarray(mask, dtype=bool)]))


def peak_excursion(estimate: ArrayLike, truth: ArrayLike, mask: ArrayLike) -> float:
    """Largest ``|estimate - truth|`` over the samples of ``mask``."""
    estimate, truth = np.asarray(estimate, dtype=float), np.asarray(truth, dtype=float)
    return float(np.max(np.abs(estimate - truth)[np.asarray(mask, dtype=bool)]))
