"""What real loggers do to a clean recording (test data for :mod:`physid.recordings.timebase`).

:func:`tick_log` reproduces the pattern of a real 7-axis arm logged at a nominal 1 kHz: each row
advances 0, 1 or 2 controller ticks (865, 12,391 and 979 of 14,235 rows: a row sent twice, or late),
and its time stamp is taken when the row is written, stepping 0.89, 1.00 and 1.28 ticks on average
after a 0-, 1- or 2-tick row. The stamps follow the true clock over long spans (a real clock) but
not from row to row.
"""

from __future__ import annotations

import numpy as np

from physid.recordings.trajectory import Trajectory

# Rows advancing 0, 1, 2 ticks, and their mean stamp step in ticks (that real log's).
TICK_SHARES = np.array([865.0, 12_391.0, 979.0]) / 14_235.0
STAMP_STEPS = np.array([0.89, 1.00, 1.28])


def tick_log(
    recorded: Trajectory,
    rng: np.random.Generator,
    *,
    shares: np.ndarray = TICK_SHARES,
    stamp_steps: np.ndarray = STAMP_STEPS,
    stamp_jitter: float = 0.05,
    clock_window: int = 50,
) -> Trajectory:
    """Rows of ``recorded`` (sampled every tick) as such a logger writes them
    (:func:`tick_rows`)."""
    index, stamps = tick_rows(
        np.asarray(recorded.t, float),
        rng,
        shares=shares,
        stamp_steps=stamp_steps,
        stamp_jitter=stamp_jitter,
        clock_window=clock_window,
    )
    return recorded.rows(index, t=stamps, source=f"{recorded.source} (tick log)")


def tick_rows(
    t: np.ndarray,
    rng: np.random.Generator,
    *,
    shares: np.ndarray = TICK_SHARES,
    stamp_steps: np.ndarray = STAMP_STEPS,
    stamp_jitter: float = 0.05,
    clock_window: int = 50,
) -> tuple[np.ndarray, np.ndarray]:
    """The rows such a logger writes of samples taken every tick at ``t``, and their stamps:
    ``(index into t, stamps)``.

    ``stamp_jitter``: std of each stamp step, in ticks. ``clock_window``: rows over which the
    stamps are pulled back to the true clock (their drift is removed by a moving average).
    """
    tick = float(np.median(np.diff(t)))
    n = len(t)
    advances = rng.choice(len(shares), size=n, p=shares / shares.sum())
    advances[0] = 0
    index = np.cumsum(advances)
    index = index[index < n]
    advances = advances[: len(index)]
    steps = stamp_steps[advances] + stamp_jitter * rng.standard_normal(len(index))
    stamps = t[0] + tick * np.cumsum(np.maximum(steps, 0.05))
    drift = stamps - t[index]
    kernel = np.ones(clock_window) / clock_window
    smooth = np.convolve(np.pad(drift, clock_window, mode="edge"), kernel, "same")
    stamps = stamps - smooth[clock_window:-clock_window]
    stamps = np.maximum.accumulate(stamps + 1e-9 * tick * np.arange(len(index)))
    return index, stamps
