"""The acceleration window of ``physid online``, chosen from the recording (config
``acceleration_window: auto``, the default).

The filter differentiates the positions (or the logged velocities) by a least-squares fit over
the last ``W`` samples (:class:`physid.online.stream.SampleWindow`, paper E §III-D). The noise of
the positions reaches the acceleration multiplied by the fit's gain, which grows as ``W^-2.5 /
h^2`` with the sample period ``h``; in the regressor, acceleration noise is an error in the
variables, which biases the inertial parameters toward zero (by ``noise^2 / (noise^2 +
signal^2)``) and makes the bands too narrow. At 500 Hz, sub-milliradian position noise is
already enough for paper E's 11 samples to put a centre of mass many std off with status ok,
where a window of some 40-60 samples puts the truth inside every band; without the noise 11 is
right.

So the window is the shortest of :data:`CANDIDATES` (11, paper E's default, the first) whose
acceleration noise stays below :data:`NOISE_TO_SIGNAL` of the motion's acceleration on every
joint that moves, within :data:`MAX_SPAN_S`: the position noise per joint is the robust spread
of the positions about a local cubic (:func:`position_noise`), the gain is
the fit's own (:func:`noise_gain`), and the motion's acceleration is the windowed estimate's RMS
less that noise. A longer window delays the estimates by half its span, which the summary says.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

CANDIDATES = (11, 15, 21, 31, 41, 61, 81, 121, 161, 241)
# acceleration noise / motion acceleration (RMS) allowed on a moving joint: an error in the
# variables of at most 0.25^2 / (1 + 0.25^2) = 6 % on the columns the acceleration drives (less on
# parameters that gravity also decides)
NOISE_TO_SIGNAL = 0.25
MAX_SPAN_S = 0.25  # the longest window [s]: its estimates lag by half of it
MOVING_NOISES = 100.0  # a joint moves when its positions span this many noise stds
_CUBIC_ROWS = 7  # samples of the local cubic the position noise is read about


@dataclass(frozen=True)
class WindowChoice:
    """The chosen window [samples], the sample period [s] and why."""

    samples: int
    period_s: float
    reason: str
    noise_to_signal: dict[int, float]  # candidate -> worst ratio over the moving joints

    def as_dict(self) -> dict:
        ratios = {str(k): v if np.isfinite(v) else None for k, v in self.noise_to_signal.items()}
        return {
            "samples": self.samples,
            "span_s": (self.samples - 1) * self.period_s,
            "lag_s": (self.samples - 1) / 2 * self.period_s,
            "reason": self.reason,
            "noise_to_signal": ratios,
        }


def noise_gain(samples: int, period_s: float, from_positions: bool) -> float:
    """Std of the window's acceleration per unit std of white noise on its input: the second
    derivative of the least-squares quadratic in time through ``samples`` positions, or the
    least-squares slope of as many velocities, at the middle sample (as
    :meth:`physid.online.stream.SampleWindow.middle` computes them)."""
    s = (np.arange(samples) - (samples - 1) / 2) * period_s
    if not from_positions:
        return float(1.0 / np.sqrt(s @ s))
    basis = np.column_stack([np.ones_like(s), s, s * s])
    weights = 2.0 * np.linalg.pinv(basis)[2]  # ddq = 2 c2
    return float(np.linalg.norm(weights))


def position_noise(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per column, the robust std (1.4826 MAD) of ``x`` about a local cubic over
    :data:`_CUBIC_ROWS` samples, divided by the residual's own share of white noise,
    ``sqrt(1 - w0)`` with ``w0`` the cubic's weight on the sample itself (on 20,000 samples of
    white noise: within 1 %)."""
    import scipy.signal

    smooth = scipy.signal.savgol_filter(x, _CUBIC_ROWS, 3, axis=0)
    residual = x - smooth
    mad = np.median(np.abs(residual - np.median(residual, axis=0)), axis=0)
    own = scipy.signal.savgol_coeffs(_CUBIC_ROWS, 3)[_CUBIC_ROWS // 2]
    return 1.4826 * mad / np.sqrt(1.0 - own)


def acceleration_noise(
    t: NDArray[np.float64], q: NDArray[np.float64], dq: NDArray[np.float64] | None, samples: int
) -> NDArray[np.float64]:
    """Per joint, the std of the white noise a window of ``samples`` puts on the acceleration
    of positions ``q`` (N, n), or of velocities ``dq`` when logged: the input's noise
    (:func:`position_noise`) times the window's gain (:func:`noise_gain`); zeros for a
    recording too short to read the noise."""
    x = q if dq is None else dq
    x = x[np.all(np.isfinite(x), axis=1)]
    period = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
    if period <= 0.0 or len(x) < 2 * _CUBIC_ROWS:
        return np.zeros(x.shape[1])
    return position_noise(x) * noise_gain(samples, period, from_positions=dq is None)


def choose_window(
    t: NDArray[np.float64], q: NDArray[np.float64], dq: NDArray[np.float64] | None
) -> WindowChoice:
    """The window of the module docstring for joint positions ``q`` (N, n) and, when logged,
    velocities ``dq`` (N, n) at times ``t``."""
    import scipy.signal

    period = float(np.median(np.diff(t)))
    from_positions = dq is None
    x = q if from_positions else dq
    finite = np.all(np.isfinite(x), axis=1)
    x = x[finite]
    if period <= 0.0 or len(x) < 2 * CANDIDATES[-1]:
        return WindowChoice(
            CANDIDATES[0], period, "paper E's (the recording is too short to read its noise)", {}
        )
    noise = position_noise(x)
    position = noise if from_positions else position_noise(q[finite])
    moving = np.ptp(q[finite], axis=0) > MOVING_NOISES * np.maximum(position, 1e-12)
    ratios: dict[int, float] = {}
    allowed = [n for n in CANDIDATES if n == CANDIDATES[0] or (n - 1) * period <= MAX_SPAN_S]
    for samples in allowed:
        acceleration = scipy.signal.savgol_filter(
            x,
            samples,
            2 if from_positions else 1,
            deriv=2 if from_positions else 1,
            delta=period,
            axis=0,
        )
        noise_std = noise * noise_gain(samples, period, from_positions)
        motion = np.sqrt(np.maximum(np.mean(acceleration**2, axis=0) - noise_std**2, 0.0))
        ratio = noise_std[moving] / np.maximum(motion[moving], 1e-300)
        ratios[samples] = float(np.max(ratio)) if ratio.size else 0.0
        if ratios[samples] > 1e3:  # the windowed estimate is all noise
            ratios[samples] = float("inf")
        if ratios[samples] <= NOISE_TO_SIGNAL:
            break  # else the loop ends on the longest window allowed
    worst = ratios[CANDIDATES[0]]
    if samples == CANDIDATES[0]:
        reason = (
            f"paper E's: its acceleration noise is {100 * worst:.2g} % of the motion's "
            "acceleration (RMS) on every moving joint"
        )
    else:
        met = ratios[samples] <= NOISE_TO_SIGNAL
        share = (
            "larger than the motion's own"
            if worst > 1.0
            else f"{100 * worst:.2g} % of the motion's"
        )
        signal = "positions" if from_positions else "velocities"
        reason = (
            f"with {CANDIDATES[0]} samples the noise of the {signal} "
            f"(median {np.median(noise):.2g} per sample) made the acceleration noise {share} "
            f"(an error in the variables that pulls the inertias toward zero); {samples} samples "
            f"bring it to {100 * ratios[samples]:.2g} %"
            + ("" if met else f", the most a {MAX_SPAN_S:g} s window allows")
        )
    return WindowChoice(samples, period, reason, ratios)
