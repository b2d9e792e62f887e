"""The period of a recording that repeats its motion (physid.offline.observe.folds.repeat_period),
and
the jackknife's blocks by phase (FoldPlan.by_phase): closed-form signals."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from physid.offline.observe.folds import FoldPlan, repeat_period


def _excitation(t: np.ndarray, period: float, rng: np.random.Generator) -> np.ndarray:
    """A 3-joint Fourier excitation of ``period`` (5 harmonics) with 1 mrad noise."""
    harmonics = np.arange(1, 6)
    a = rng.normal(size=(3, 5)) / harmonics
    phase = 2 * np.pi * np.outer(t, harmonics) / period
    q = np.sin(phase) @ a.T + np.cos(phase) @ (0.5 * a).T
    return q + 1e-3 * rng.normal(size=q.shape)


@pytest.mark.parametrize("period, periods", [(10.0, 2.0), (6.25, 4.0), (2.0, 12.5)])
def test_the_period_of_a_repeated_excitation_is_found(period, periods):
    rng = np.random.default_rng(1)
    t = np.arange(0.0, period * periods, 0.002)
    found = repeat_period(t, _excitation(t, period, rng))
    assert found == pytest.approx(period, abs=2 * 0.002 * max(1, len(t) // 2000))


def test_one_period_a_slow_drift_and_a_chirp_do_not_repeat():
    rng = np.random.default_rng(2)
    t = np.arange(0.0, 20.0, 0.002)
    assert repeat_period(t, _excitation(t, 20.0, rng)) is None  # a single period
    assert repeat_period(t, _excitation(t, 15.0, rng)) is None  # 1.33 periods: not twice
    drift = np.column_stack([0.01 * t, np.sin(0.05 * t)])
    assert repeat_period(t, drift) is None
    chirp = np.sin(2 * np.pi * (0.1 + 0.05 * t) * t)[:, None]
    assert repeat_period(t, chirp) is None
    assert repeat_period(t, np.zeros((len(t), 2))) is None  # nothing moves


def test_blocks_by_phase_are_quarters_of_every_period():
    rng = np.random.default_rng(3)
    t = np.arange(0.0, 30.0, 0.01)
    repeating = SimpleNamespace(t=t, q=_excitation(t, 10.0, rng))
    plan = FoldPlan.by_phase([repeating])
    assert plan.periods[0] == pytest.approx(10.0, abs=0.02)
    folds = plan.fold(0, t)
    phase = np.mod(t, plan.periods[0]) / plan.periods[0]
    np.testing.assert_array_equal(folds, np.minimum((4 * phase).astype(int), 3))
    assert all(abs(np.mean(folds == k) - 0.25) < 0.01 for k in range(4))
    # in each period, every quarter comes in turn: fold k is never one contiguous time block
    assert np.count_nonzero(np.diff(folds) != 0) >= 11
    single = SimpleNamespace(t=t, q=_excitation(t, 30.0, rng))
    assert FoldPlan.by_phase([single]) is None  # no recording repeats: the time blocks stay
