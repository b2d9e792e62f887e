"""Tailor-made filtering of paper C §2.3: Butterworth, central differences, parallel decimation.

Step 1: zero-phase (forward-backward) Butterworth low-pass of order ``n_d + 2`` on the positions,
then centred differences for ``dq`` and ``ddq``. Steps 3–4: the same zero-phase low-pass applied
to every regressor column and to the torques, then down-sampling ("parallel decimation", as
MATLAB's ``decimate``). Cut-offs come from the rules of thumb ``omega_q = 10 omega_dyn`` and
``omega_f = 2 omega_dyn`` unless given.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from physid.errors import InputError
from physid.signal.iir import butter_lowpass_sos, hann_periodogram, sos_response, sosfiltfilt

DERIVATIVE_ORDER = 2  # n_d: we need ddq
BANDWIDTH_ENERGY = 0.99  # share of the position power below the excitation bandwidth
MEASURABLE_SIGNAL_TO_NOISE = 100.0  # position power over its noise floor, up to the measurable band


def _check_cutoff(cutoff_hz: float, sample_rate_hz: float, name: str) -> None:
    nyquist = 0.5 * sample_rate_hz
    if not (np.isfinite(cutoff_hz) and 0.0 < cutoff_hz < nyquist):
        raise InputError(
            f"{name} = {cutoff_hz:g} Hz must lie in (0, {nyquist:g}) Hz, the Nyquist band of the "
            f"{sample_rate_hz:g} Hz data"
        )


def butterworth_sos(order: int, cutoff_hz: float, sample_rate_hz: float) -> np.ndarray:
    """Second-order sections of a low-pass Butterworth (a fresh copy of the cached design),
    designed once per (order, cut-off, rate): an identification filters hundreds of windows and
    columns with a handful of designs."""
    return _butterworth_design(int(order), float(cutoff_hz), float(sample_rate_hz)).copy()


@lru_cache(maxsize=64)
def _butterworth_design(order: int, cutoff_hz: float, sample_rate_hz: float) -> np.ndarray:
    return butter_lowpass_sos(order, cutoff_hz, sample_rate_hz)


def zero_phase_lowpass(
    x: np.ndarray, sample_rate_hz: float, cutoff_hz: float, order: int, *, name: str = "cut-off"
) -> np.ndarray:
    """Forward-backward Butterworth of the given order along axis 0 (gain |H|^2, no phase lag)."""
    _check_cutoff(cutoff_hz, sample_rate_hz, name)
    sos = butterworth_sos(order, cutoff_hz, sample_rate_hz)
    per_period = sample_rate_hz / cutoff_hz  # samples per period of the cut-off
    n_pad = int(np.ceil(3.0 * per_period))
    n_fit = int(np.ceil(2.0 * per_period))
    if x.shape[0] < 2 * n_fit:  # too short to extrapolate: odd extension
        padlen = min(n_pad, x.shape[0] - 1)
        return sosfiltfilt(sos, x, padlen=padlen)
    padded = _cubic_extension(np.asarray(x, float), n_fit, n_pad)
    return sosfiltfilt(sos, padded, padlen=0)[n_pad:-n_pad]


def _cubic_extension(x: np.ndarray, n_fit: int, n_pad: int) -> np.ndarray:
    """``x`` (N, ...) extended by ``n_pad`` rows at each end with the least-squares cubic of
    its first / last ``n_fit`` rows (in samples)."""
    poly = np.polynomial.polynomial
    flat = x.reshape(x.shape[0], -1)
    s = np.arange(n_fit, dtype=float)
    head = poly.polyfit(s, flat[:n_fit], 3)
    tail = poly.polyfit(s, flat[-n_fit:], 3)
    # Shifted to pass through the end samples: the extension continues the recording without a
    # jump (a jump would ring through the filter into the derivatives).
    before = poly.polyval(-np.arange(n_pad, 0, -1.0), head).T + (flat[0] - head[0])
    after = poly.polyval(s[-1] + np.arange(1.0, n_pad + 1), tail).T + (
        flat[-1] - poly.polyval(s[-1], tail).T
    )
    return np.vstack([before, flat, after]).reshape(-1, *x.shape[1:])


def classical_derivatives(
    q: np.ndarray, sample_time_s: float, cutoff_hz: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Paper C §2.3 step 1: Butterworth of order n_d + 2 = 4, zero phase, then centred differences.

    Returns filtered positions, velocities and accelerations, all (N, n).
    """
    q_filtered = zero_phase_lowpass(
        q, 1.0 / sample_time_s, cutoff_hz, DERIVATIVE_ORDER + 2, name="Butterworth cut-off"
    )
    dq = np.gradient(q_filtered, sample_time_s, axis=0)
    ddq = np.gradient(dq, sample_time_s, axis=0)
    return q_filtered, dq, ddq


@dataclass(frozen=True)
class Decimation:
    """Paper C §2.3 steps 3–4: zero-phase low-pass at ``cutoff_hz`` and keep every ``factor``-th.

    The filter is an order-8 Butterworth applied forward-backward in second-order sections
    (stable at the low normalised cut-offs of robot data). MATLAB's ``decimate`` uses a Chebyshev
    type I instead; its high-Q poles ring about three times longer at the ends of a recording,
    which costs samples, while the passband shape does not matter here because the regressor and
    the torques are filtered alike. The same instance must filter the regressor and the torques.
    """

    sample_rate_hz: float
    cutoff_hz: float
    factor: int

    def __post_init__(self) -> None:
        if self.factor < 1:
            raise InputError(f"decimation factor must be >= 1, got {self.factor}")
        _check_cutoff(self.cutoff_hz, self.sample_rate_hz, "decimation cut-off")
        new_nyquist = 0.5 * self.sample_rate_hz / self.factor
        if self.factor > 1 and self.cutoff_hz > new_nyquist:
            raise InputError(
                f"decimation cut-off {self.cutoff_hz:g} Hz is above the Nyquist frequency "
                f"{new_nyquist:g} Hz after decimating by {self.factor}: aliasing"
            )

    @classmethod
    def for_cutoff(cls, sample_rate_hz: float, cutoff_hz: float) -> Decimation:
        """Largest factor that keeps ``cutoff_hz`` at 80 % of the new Nyquist (as ``decimate``)."""
        factor = max(1, int(np.floor(0.4 * sample_rate_hz / cutoff_hz)))
        return cls(sample_rate_hz, cutoff_hz, factor)

    @property
    def sos(self) -> np.ndarray:
        return butterworth_sos(8, self.cutoff_hz, self.sample_rate_hz)

    @property
    def settling_samples(self) -> int:
        """Samples at each end distorted by the filter start-up: 5 periods of the cut-off, after
        which a step's transient is below 1e-4 of its size (order-8 Butterworth, both ways)."""
        return int(np.ceil(5.0 * self.sample_rate_hz / self.cutoff_hz))

    def filter(self, x: np.ndarray) -> np.ndarray:
        """Zero-phase low-pass along axis 0, without down-sampling."""
        return sosfiltfilt(self.sos, x)

    def kept_rows(self, n_samples: int) -> np.ndarray:
        """Indices of the samples kept: every ``factor``-th, away from the distorted ends."""
        margin = self.settling_samples
        rows = np.arange(margin, n_samples - margin, self.factor)
        if rows.size < 2:
            raise InputError(
                f"recording too short for a {self.cutoff_hz:g} Hz decimation filter: "
                f"{n_samples} samples, {margin} lost at each end"
            )
        return rows


# The regressor is evaluated at >= this many times the decimation cut-off (multi-rate plan).
INTERMEDIATE_RATE_PER_CUTOFF = 25.0


@dataclass(frozen=True)
class MultirateDecimation:
    """Parallel decimation in two stages, so the regressor is built at a reduced rate.

    Stage 1 low-passes the states (q, dq, ddq) and the torques at 40 % of an intermediate rate
    ``f_i >= 25 omega_f`` and keeps every ``first_factor``-th sample; the regressor is then
    built from the band-limited states at ``f_i``, and stage 2 (:class:`Decimation` at ``f_i``)
    filters regressor and torques alike down to the final rate. In the band that survives,
    ``[0, omega_f]``, stage 1 has unit gain (Butterworth of order 8 at ``10 omega_f``: 1 - 1e-16
    at ``omega_f``), so regressor and torques still see the same filter, and regressor content
    aliased by the reduced rate lands above ``omega_f``. Band-limiting the states also removes
    products of out-of-band derivative noise (dq_i dq_j) that leak into the band and bias the
    single-rate regressor. The estimates differ from the single-rate ones by a few hundredths
    of a standard deviation, for ten times fewer regressor evaluations; a lower intermediate
    rate (12.5 cut-offs) saves little time and loses accuracy at high decimation cut-offs.
    """

    sample_rate_hz: float
    first_factor: int
    second: Decimation

    @classmethod
    def plan(
        cls, sample_rate_hz: float, cutoff_hz: float, factor: int | None = None
    ) -> MultirateDecimation:
        """Split the decimation (total ``factor``, default as :meth:`Decimation.for_cutoff`)."""
        limit = max(1, int(sample_rate_hz // (INTERMEDIATE_RATE_PER_CUTOFF * cutoff_hz)))
        if factor is None:
            # Automatic: the largest first stage, and the second stage's factor rounded down
            # (a total one or two below the ideal keeps the cut-off further from the Nyquist
            # frequency). Requiring a divisor would build the regressor at the full rate for a prime
            # total (79 at 999.99 Hz for 5 Hz): 80 times the memory and time.
            total = Decimation.for_cutoff(sample_rate_hz, cutoff_hz).factor
            first = min(limit, total)
            return cls(
                sample_rate_hz, first, Decimation(sample_rate_hz / first, cutoff_hz, total // first)
            )
        # A factor the user chose is kept exactly: the first stage takes its largest divisor.
        first = max(d for d in range(1, min(limit, factor) + 1) if factor % d == 0)
        second = Decimation(sample_rate_hz / first, cutoff_hz, factor // first)
        return cls(sample_rate_hz, first, second)

    @property
    def intermediate_rate_hz(self) -> float:
        return self.sample_rate_hz / self.first_factor

    def first_stage(self, x: np.ndarray) -> np.ndarray:
        """Anti-alias at 40 % of the intermediate rate and down-sample (identity if factor 1)."""
        if self.first_factor == 1:
            return x
        sos = butterworth_sos(8, 0.4 * self.intermediate_rate_hz, self.sample_rate_hz)
        return sosfiltfilt(sos, x)[:: self.first_factor]


def position_spectra(q: np.ndarray, sample_rate_hz: float) -> tuple[np.ndarray, np.ndarray]:
    """Welch power spectral density of the detrended positions, one column per joint.

    A Hann-windowed, averaged spectrum: an unwindowed FFT of a segment cut mid-motion leaks the
    jump between its ends over every frequency (a 0.4 Hz excitation read as 6 Hz). Segments of
    at most 20 s (at least two per recording when it is longer) trade resolution for variance.
    Returns ``(frequencies_hz (F,), power (F, n))``, power in ``unit^2 / Hz`` (one-sided).

    ``q`` is an (N, n) array or anything with ``len`` and row slicing (a long recording on disk,
    :class:`physid.recordings.streamed.RecordingFile`): the segments are read one at a time (a Hann
    periodogram each, averaged: the same estimate as SciPy's ``welch`` over the array).
    """
    n = len(q)
    segment = int(min(n, max(16, min(20.0 * sample_rate_hz, n // 2 if n >= 64 else n))))
    step = segment - segment // 2  # Welch's usual overlap: half a segment
    starts = range(0, n - segment + 1, step)
    total = None
    for start in starts:
        frequencies, psd = hann_periodogram(np.asarray(q[start : start + segment]), sample_rate_hz)
        total = psd if total is None else total + psd
    power = total / len(starts)
    return frequencies, power.reshape(len(frequencies), -1)


def position_spectrum(q: np.ndarray, sample_rate_hz: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`position_spectra` summed over joints: ``(frequencies_hz, power)``."""
    frequencies, power = position_spectra(q, sample_rate_hz)
    return frequencies, power.sum(axis=1)


@dataclass(frozen=True)
class PooledSpectra:
    """Per-joint Welch spectra (:func:`position_spectra`) of several recordings, each weighted by
    its duration and interpolated onto the finest frequency grid: what every rule of this module
    reads from the recordings, computed once when several of them do (:func:`pooled_spectra`)."""

    frequencies_hz: np.ndarray  # (F,)
    power: np.ndarray  # (F, n) per joint, unit^2 / Hz
    lowest_rate_hz: float
    longest_s: float  # the longest recording's duration

    @property
    def summed(self) -> np.ndarray:
        """(F,) the power summed over joints."""
        return self.power.sum(axis=1)


Recordings = list[tuple[np.ndarray, float]] | PooledSpectra  # (q, sample_rate_hz) pairs


def pooled_spectra(recordings: Recordings) -> PooledSpectra:
    """The :class:`PooledSpectra` of ``(q, sample_rate_hz)`` pairs (given already computed:
    returned as they are)."""
    if isinstance(recordings, PooledSpectra):
        return recordings
    spectra = [position_spectra(q, rate) + (len(q) / rate,) for q, rate in recordings]
    grid = min((f for f, _, _ in spectra), key=lambda f: f[1] if len(f) > 1 else np.inf)
    grid = grid[grid <= min(f[-1] for f, _, _ in spectra)]
    pooled = sum(
        duration * np.column_stack([np.interp(grid, f, p[:, k]) for k in range(p.shape[1])])
        for f, p, duration in spectra
    )
    return PooledSpectra(
        grid,
        pooled / sum(duration for _, _, duration in spectra),
        min(rate for _, rate in recordings),
        max(len(q) / rate for q, rate in recordings),
    )


def excitation_bandwidth_hz(recordings: Recordings, energy: float = BANDWIDTH_ENERGY) -> float:
    """Frequency below which ``energy`` of the position power lies, all recordings pooled.

    ``recordings`` holds ``(q, sample_rate_hz)`` pairs (or their :func:`pooled_spectra`); each
    Welch spectrum (:func:`position_spectrum`) is weighted by its duration and interpolated onto
    the finest frequency grid. Paper C §2.3 lets the cut-offs follow the excitation spectrum
    instead of the (unknown) highest mode ``omega_dyn``; this is that spectrum's effective
    bandwidth.
    """
    spectra = pooled_spectra(recordings)
    return _energy_point(spectra.frequencies_hz, spectra.summed, energy)


def _energy_point(grid: np.ndarray, power: np.ndarray, energy: float) -> float:
    cumulative = np.cumsum(power) / max(float(power.sum()), 1e-300)
    return float(grid[min(np.searchsorted(cumulative, energy), len(grid) - 1)])


def _noise_floor(grid: np.ndarray, power: np.ndarray) -> np.ndarray:
    """Median power of the upper half of the band (white there: quantisation, sensor noise)."""
    return np.median(power[grid >= 0.5 * grid[-1]], axis=0)


def measurable_bandwidth_hz(
    recordings: Recordings, signal_to_noise: float = MEASURABLE_SIGNAL_TO_NOISE
) -> float:
    """Highest frequency at which the position spectrum stands ``signal_to_noise`` above its
    noise floor (the median power of the upper half of the band: encoder quantisation and
    sensor noise are white there). Motion up to it is recorded, not guessed: the accelerations
    that a controller's corrections and a trajectory's corners put above the excitation's
    nominal band are real, and the recorded torque contains them.
    """
    spectra = pooled_spectra(recordings)
    return _noise_edge(spectra.frequencies_hz, spectra.summed, signal_to_noise)


def _noise_edge(grid: np.ndarray, power: np.ndarray, signal_to_noise: float) -> float:
    noise = float(_noise_floor(grid, power))
    above = np.flatnonzero(power > signal_to_noise * max(noise, 1e-300))
    return float(grid[above[-1]]) if above.size else float(grid[-1])


def rule_of_thumb_cutoffs(recordings: Recordings) -> tuple[float, float, float]:
    """``(omega_dyn, omega_q, omega_f)`` in Hz from paper C §2.3's rules of thumb.

    ``omega_dyn`` is taken as the excitation bandwidth of all recordings together (floored at the
    resolution of the longest recording's spectrum, 10 / duration); ``omega_q = 10 omega_dyn``
    and ``omega_f = 2 omega_dyn``, both capped at 40 % of the lowest sample rate. ``omega_q`` is
    physid's conservative derivative cut-off; wider ones (up to :func:`measurable_bandwidth_hz`)
    are candidates that only the user's own data may choose
    (:mod:`physid.offline.choose.selection`): a rule that reads the whole measurable band as motion
    takes a logger's pattern (a peak of repeated rows) for motion and filters it into the fit,
    several times the held-out error.
    """
    spectra = pooled_spectra(recordings)
    energy_point = _energy_point(spectra.frequencies_hz, spectra.summed, BANDWIDTH_ENERGY)
    omega_dyn = max(energy_point, 10.0 / spectra.longest_s)
    cap = 0.4 * spectra.lowest_rate_hz
    return omega_dyn, min(10.0 * omega_dyn, cap), min(2.0 * omega_dyn, cap)


def derivative_noise_std(recordings: Recordings, cutoff_hz: float) -> np.ndarray:
    """Standard deviation (n,) of the velocity noise of :func:`classical_derivatives` at
    ``cutoff_hz``, per joint, in the joint's units per second.

    The position noise is white at its floor ``N0`` (one-sided PSD of the pooled spectra, the
    median of the upper half band); through the zero-phase Butterworth (gain ``|H|^2``) and the
    centred difference (gain ``sin(2 pi f dt) / dt``) its variance is
    ``integral N0 |H(f)|^4 (sin(2 pi f dt) / dt)^2 df`` over ``[0, fs/2]``, at the lowest sample
    rate of the recordings. A velocity below a few times this value cannot be told from zero.
    """
    spectra = pooled_spectra(recordings)
    noise = _noise_floor(spectra.frequencies_hz, spectra.power)
    rate = spectra.lowest_rate_hz
    _check_cutoff(cutoff_hz, rate, "Butterworth cut-off")
    frequencies = np.linspace(0.0, rate / 2.0, 4097)
    sos = butterworth_sos(DERIVATIVE_ORDER + 2, cutoff_hz, rate)
    response = sos_response(sos, frequencies, rate)
    difference = np.sin(2.0 * np.pi * frequencies / rate) * rate
    gain = np.trapezoid(np.abs(response) ** 4 * difference**2, frequencies)
    return np.sqrt(noise * gain)
