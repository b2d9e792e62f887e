"""A recording's repeat period (physid.offline.observe.folds.repeat_period), its mismatches read
from one autocorrelation, against its definition evaluated lag by lag."""

from __future__ import annotations

import numpy as np
import pytest

from physid.offline.observe.folds import (
    _PERIOD_GRID,
    DEPARTED_MISMATCH,
    REPEAT_MISMATCH,
    _mismatches,
    repeat_period,
)


def _by_definition(t: np.ndarray, q: np.ndarray) -> float | None:
    """The shortest lag after the motion has left itself at which it comes back, refined to
    the local minimum: every lag's RMS difference computed on its own."""
    spread = q.std(axis=0)
    moving = spread > 1e-6 * spread.max()
    stride = max(1, len(t) // _PERIOD_GRID)
    x = ((q - q.mean(axis=0)) / np.where(moving, spread, 1.0))[::stride][:, moving]
    lags = np.arange(1, len(x) // 2 + 1)
    mismatch = np.array([np.sqrt(np.mean((x[lag:] - x[:-lag]) ** 2)) for lag in lags])
    departed = np.maximum.accumulate(mismatch) > DEPARTED_MISMATCH
    candidates = np.flatnonzero(departed & (mismatch < REPEAT_MISMATCH))
    if not len(candidates):
        return None
    k = int(candidates[0])
    while k + 1 < len(lags) and mismatch[k + 1] < mismatch[k]:
        k += 1
    return float(lags[k] * stride * np.median(np.diff(t)))


def _recording(seed: int, periods: float, n: int, noise: float, drift: float = 0.0):
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 25.0, n)
    phase = 2 * np.pi * periods * t / 25.0
    q = np.column_stack(
        [np.sin(k * phase + rng.uniform(0, 6)) * rng.uniform(0.2, 1.0) for k in (1, 2, 3)]
    )
    q[:, 1] += drift * np.sin(0.37 * t)  # a slow drift: no lag returns
    return t, q + noise * rng.standard_normal(q.shape)


CASES = [
    (0, 2, 5027, 0.01),
    (1, 4, 5027, 0.02),
    (2, 3, 3000, 1e-4),
    (3, 1.3, 4400, 0.01),
    (4, 2, 700, 0.05),
    (5, 0.5, 6000, 0.0),
    (6, 3, 5000, 0.01, 0.3),
]


@pytest.mark.parametrize("case", CASES)
def test_the_period_is_the_definition_s(case) -> None:
    t, q = _recording(*case)
    assert repeat_period(t, q) == _by_definition(t, q)


def test_the_cases_repeat_and_do_not() -> None:
    periods = [repeat_period(*_recording(*case)) for case in CASES]
    assert periods[0] == pytest.approx(12.5, rel=0.01) and periods[1] == pytest.approx(
        6.25, rel=0.01
    )
    assert periods[5] is None and periods[6] is None  # half a period; a drift


def test_the_mismatches_are_the_rms_differences() -> None:
    t, q = _recording(6, 2, 1500, 0.01)
    x = (q - q.mean(axis=0)) / q.std(axis=0)
    direct = [np.sqrt(np.mean((x[lag:] - x[:-lag]) ** 2)) for lag in range(1, 751)]
    np.testing.assert_allclose(_mismatches(x, 750), direct, rtol=1e-10, atol=1e-12)
