"""Butterworth low-pass design, zero-phase filtering and periodograms on NumPy and LAPACK.

The numbers of ``scipy.signal.butter(..., output="sos")``, ``sosfiltfilt``, ``sosfreqz`` and a
one-segment ``welch`` (to rounding: tests/test_iir.py compares each with SciPy), without importing
``scipy.signal``: from SciPy 1.17 that import costs about 0.55 s of CPU (it rewrites the
docstring of every function of scipy.signal and scipy.stats at import), more than all the
filtering of an identification.

A second-order section is the difference equation
``y[t] + a1 y[t-1] + a2 y[t-2] = b0 x[t] + b1 x[t-1] + b2 x[t-2]``: given ``x``, a lower-triangular
banded Toeplitz system in ``y``, which LAPACK's ``dtbtrs`` solves for every column at once (the
same recursion as a direct-form filter). Long signals run through the cascade in blocks of
samples, each block one matrix product whose operators those banded solves computed once per
design (:func:`_sosfilt_from_rest`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.linalg.lapack import dtbtrs


def butter_lowpass_sos(order: int, cutoff_hz: float, sample_rate_hz: float) -> np.ndarray:
    """Second-order sections ``(ceil(order / 2), 6)`` of a digital low-pass Butterworth.

    As ``scipy.signal.butter(order, cutoff_hz, fs=sample_rate_hz, output="sos")``: the analog
    prototype's poles ``-exp(i pi k / 2n)``, pre-warped cut-off ``2 fs tan(pi fc / fs)``, the
    bilinear transform (every zero at -1), conjugate poles paired and the pair nearest the unit
    circle last (``zpk2sos``' "nearest" ordering), the gain on the first section.
    """
    if order < 1 or not 0.0 < cutoff_hz < 0.5 * sample_rate_hz:
        raise ValueError(
            f"Butterworth order {order} at {cutoff_hz:g} Hz for {sample_rate_hz:g} Hz data: "
            "the order must be >= 1 and the cut-off inside the Nyquist band"
        )
    fs2 = 4.0  # twice the normalised sample rate 2 of SciPy's design
    warped = fs2 * np.tan(np.pi * cutoff_hz / sample_rate_hz)
    analog = -np.exp(1j * np.pi * np.arange(-order + 1, order, 2) / (2 * order)) * warped
    poles = (fs2 + analog) / (fs2 - analog)
    gain = warped**order * np.real(1.0 / np.prod(fs2 - analog))
    pairs = poles[poles.imag > 0]
    sections = [[1.0, 2.0, 1.0, 1.0, -2.0 * p.real, (p * p.conjugate()).real] for p in pairs]
    if order % 2:
        real = poles[np.argmin(np.abs(poles.imag))].real
        sections.append([1.0, 1.0, 0.0, 1.0, -real, 0.0])
    sos = np.array(sections)
    distance = np.abs(1.0 - np.abs(np.concatenate([pairs, [0.0] if order % 2 else []])))
    sos = sos[np.argsort(-distance, kind="stable")]  # nearest the unit circle last
    sos[0, :3] *= gain
    return sos


def sos_response(sos: np.ndarray, frequencies_hz: np.ndarray, sample_rate_hz: float) -> np.ndarray:
    """Complex frequency response of the cascade at ``frequencies_hz`` (as ``sosfreqz``)."""
    z = np.exp(-2j * np.pi * np.asarray(frequencies_hz, float) / sample_rate_hz)
    response = np.ones_like(z)
    for b0, b1, b2, a0, a1, a2 in sos:
        response *= (b0 + b1 * z + b2 * z**2) / (a0 + a1 * z + a2 * z**2)
    return response


def sosfiltfilt(sos: np.ndarray, x: np.ndarray, padlen: int | None = None) -> np.ndarray:
    """Forward-backward filter along axis 0, as ``scipy.signal.sosfiltfilt(sos, x, axis=0)``.

    ``x`` is extended by ``padlen`` rows of odd reflection at each end (default three times the
    filter's taps, as SciPy), each pass starts from the steady state of its first sample, and
    the extension is cut off again. Gain ``|H|^2``, no phase lag.
    """
    x = np.asarray(x, float)
    if padlen is None:
        flat_sections = min(np.sum(sos[:, 2] == 0), np.sum(sos[:, 5] == 0))
        padlen = 3 * (2 * len(sos) + 1 - int(flat_sections))
    if x.shape[0] <= padlen:
        raise ValueError(
            f"{x.shape[0]} samples are too few for this filter: it needs more than {padlen}"
        )
    flat = x.reshape(x.shape[0], -1)
    if padlen > 0:
        flat = np.concatenate(
            [
                2.0 * flat[:1] - flat[padlen:0:-1],
                flat,
                2.0 * flat[-1:] - flat[-2 : -padlen - 2 : -1],
            ]
        )
    forward = _sosfilt_from_rest(sos, flat)
    both = _sosfilt_from_rest(sos, forward[::-1])[::-1]
    if padlen > 0:
        both = both[padlen:-padlen]
    return np.ascontiguousarray(both).reshape(x.shape)


# Samples per block of the blocked cascade: its matrix products cost 2 (L + d) flops per sample
# against the recursion's dozen, but run at BLAS speed (32: 4x faster than LAPACK's banded
# solves on a robot's regressor columns; fewer samples mean more steps of the loop over blocks).
_BLOCK = 32


def _sosfilt_from_rest(sos: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The cascade along axis 0 of ``x`` (N, m), every section in the steady state of a constant
    input equal to the first row (``sosfilt`` with ``sosfilt_zi(sos) * x[0]``).

    Blocked: with the state ``s`` (for the cascade's input and each section's output, the last
    sample and its difference from the one before), a block of ``L`` samples is
    ``Y = G X + H s`` and the next state ``Phi s + Psi X``: matrix products for all blocks and
    columns at once, and a short loop over blocks for the states. The differences keep the state
    well conditioned where the poles are near 1 (two consecutive samples nearly equal): rounding
    as in the sample-by-sample recursion."""
    sos = sos / sos[:, 3:4]
    n, m = x.shape
    gain, from_state, transition, to_state = _block_operators(tuple(sos.ravel()))
    n_blocks = -(-n // _BLOCK)
    padded = np.zeros((n_blocks * _BLOCK, m))
    padded[:n] = x
    blocks = padded.reshape(n_blocks, _BLOCK, m).transpose(1, 0, 2).reshape(_BLOCK, -1)
    inflow = (to_state @ blocks).reshape(-1, n_blocks, m)
    states = np.empty((transition.shape[0], n_blocks, m))
    states[:, 0] = _rest_state(sos, x[0])
    for block in range(1, n_blocks):
        states[:, block] = transition @ states[:, block - 1] + inflow[:, block - 1]
    y = gain @ blocks + from_state @ states.reshape(transition.shape[0], -1)
    return y.reshape(_BLOCK, n_blocks, m).transpose(1, 0, 2).reshape(-1, m)[:n]


def _rest_state(sos: np.ndarray, level: np.ndarray) -> np.ndarray:
    """The state (2 K + 2, m) after a constant input ``level`` (m,) forever: each section's
    output is its DC gain times its input, every difference zero."""
    state = np.zeros((2 * len(sos) + 2, level.size))
    state[0] = level
    for k, (b0, b1, b2, _, a1, a2) in enumerate(sos):
        level = level * ((b0 + b1 + b2) / (1.0 + a1 + a2))
        state[2 * k + 2] = level
    return state


@lru_cache(maxsize=32)
def _block_operators(
    sos_flat: tuple[float, ...],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(G (L, L), H (L, d), Phi (d, d), Psi (d, L))`` of one block of the cascade, from its
    responses to every unit input and every unit state (the banded solves of
    :func:`_cascade`)."""
    sos = np.reshape(sos_flat, (-1, 6))
    d = 2 * len(sos) + 2
    inputs = np.zeros((_BLOCK, _BLOCK + d))
    inputs[:, :_BLOCK] = np.eye(_BLOCK)
    # a unit state in (last sample, difference) as the two previous samples (s[-1], s[-2])
    previous = np.zeros((d, _BLOCK + d))
    previous[0::2, _BLOCK:][:, 0::2] = np.eye(d // 2)
    previous[1::2, _BLOCK:][:, 0::2] = np.eye(d // 2)
    previous[1::2, _BLOCK:][:, 1::2] = -np.eye(d // 2)
    y, final = _cascade(sos, inputs, previous)
    state = final.copy()
    state[1::2] = final[0::2] - final[1::2]
    return y[:, :_BLOCK], y[:, _BLOCK:], state[:, _BLOCK:], state[:, :_BLOCK]


def _cascade(sos: np.ndarray, x: np.ndarray, previous: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Direct-form I cascade of ``x`` (n >= 2, c) from ``previous`` (2 K + 2, c), the two samples
    before the first of the cascade's input and of each section's output: each section's
    difference equation as a lower-triangular banded system, those samples moved to the first
    two right-hand sides. Returns the output (n, c) and the last two samples of each signal."""
    signal = np.asfortranarray(x)
    final = [signal[[-1, -2]]]
    before = previous[0:2]
    for k, (b0, b1, b2, _, a1, a2) in enumerate(sos):
        after = previous[2 * k + 2 : 2 * k + 4]
        rhs = b0 * signal
        rhs[1:] += b1 * signal[:-1]
        rhs[2:] += b2 * signal[:-2]
        rhs[0] += b1 * before[0] + b2 * before[1] - a1 * after[0] - a2 * after[1]
        rhs[1] += b2 * before[0] - a2 * after[0]
        band = np.empty((3, signal.shape[0]))
        band[0], band[1], band[2] = 1.0, a1, a2
        signal, info = dtbtrs(band, rhs, uplo="L", diag="U", overwrite_b=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"banded triangular solve failed (LAPACK info {info})")
        final.append(signal[[-1, -2]])
        before = after
    return signal, np.vstack(final)


def hann_periodogram(x: np.ndarray, sample_rate_hz: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided power spectral density of each column of ``x`` (N, m) in ``unit^2 / Hz``:
    linear trend removed, periodic Hann window, density scaling, as ``scipy.signal.welch(x,
    fs, window="hann", nperseg=N, detrend="linear", axis=0)`` (a single segment).
    Returns ``(frequencies_hz (N // 2 + 1,), power (N // 2 + 1, m))``."""
    x = np.asarray(x, float).reshape(len(x), -1)
    n = x.shape[0]
    ramp = np.arange(n, dtype=float) / max(n, 1)
    trend = np.column_stack([ramp, np.ones(n)])
    coefficients = np.linalg.lstsq(trend, x, rcond=None)[0]
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)
    spectrum = np.fft.rfft((x - trend @ coefficients) * window[:, None], axis=0)
    power = np.abs(spectrum) ** 2 / (sample_rate_hz * np.sum(window**2))
    if n % 2:
        power[1:] *= 2.0
    else:
        power[1:-1] *= 2.0
    return np.fft.rfftfreq(n, 1.0 / sample_rate_hz), power
