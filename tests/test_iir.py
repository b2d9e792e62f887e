"""physid.signal.iir against SciPy's scipy.signal (the independent implementation it replaces)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal

from physid.signal.iir import butter_lowpass_sos, hann_periodogram, sos_response, sosfiltfilt


@pytest.mark.parametrize("order", [2, 4, 6, 8])
@pytest.mark.parametrize(("cutoff_hz", "rate_hz"), [(0.3, 1000.0), (5.0, 200.0), (40.0, 100.0)])
def test_even_order_design_is_scipys(order: int, cutoff_hz: float, rate_hz: float) -> None:
    expected = scipy.signal.butter(order, cutoff_hz, fs=rate_hz, output="sos")
    np.testing.assert_allclose(
        butter_lowpass_sos(order, cutoff_hz, rate_hz), expected, rtol=1e-12, atol=1e-15
    )


@pytest.mark.parametrize("order", [1, 3, 5])
def test_odd_order_response_is_scipys(order: int) -> None:
    """Odd orders keep their first-order section elsewhere in the cascade; the filter is the
    same."""
    frequencies = np.linspace(0.0, 100.0, 513)
    expected = scipy.signal.sosfreqz(
        scipy.signal.butter(order, 7.0, fs=200.0, output="sos"), worN=frequencies, fs=200.0
    )[1]
    got = sos_response(butter_lowpass_sos(order, 7.0, 200.0), frequencies, 200.0)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-13)


def test_bad_design_is_refused() -> None:
    with pytest.raises(ValueError, match="Nyquist"):
        butter_lowpass_sos(4, 60.0, 100.0)


@pytest.mark.parametrize(
    ("order", "cutoff_hz", "n_samples"),
    [(8, 5.0, 5081), (8, 0.5, 3000), (4, 20.0, 1146), (3, 10.0, 700), (8, 40.0, 100)],
)
@pytest.mark.parametrize("padlen", [None, 0, 17])
def test_zero_phase_filter_is_scipys(
    order: int, cutoff_hz: float, n_samples: int, padlen: int | None
) -> None:
    """Random walks (a robot's slow motion plus noise) in 5 columns: forward-backward from the
    steady state, odd extension, every block boundary (n_samples not a multiple of the block)."""
    x = np.cumsum(np.random.default_rng(order).standard_normal((n_samples, 5)), axis=0)
    sos = scipy.signal.butter(order, cutoff_hz, fs=1000.0, output="sos")
    expected = scipy.signal.sosfiltfilt(sos, x, axis=0, padlen=padlen)
    got = sosfiltfilt(sos, x, padlen=padlen)
    assert got.shape == x.shape
    assert np.max(np.abs(got - expected)) < 1e-10 * np.max(np.abs(expected))


def test_zero_phase_filter_of_one_column_and_of_3d_blocks() -> None:
    x = np.cumsum(np.random.default_rng(3).standard_normal((400, 2, 3)), axis=0)
    sos = scipy.signal.butter(4, 30.0, fs=1000.0, output="sos")
    np.testing.assert_allclose(
        sosfiltfilt(sos, x), scipy.signal.sosfiltfilt(sos, x, axis=0), rtol=0, atol=1e-10
    )
    np.testing.assert_allclose(
        sosfiltfilt(sos, x[:, 0, 0]),
        scipy.signal.sosfiltfilt(sos, x[:, 0, 0]),
        rtol=0,
        atol=1e-10,
    )


def test_too_short_for_the_padding_is_refused() -> None:
    sos = scipy.signal.butter(8, 5.0, fs=1000.0, output="sos")
    with pytest.raises(ValueError, match="too few"):
        sosfiltfilt(sos, np.zeros((27, 2)))


@pytest.mark.parametrize("n_samples", [1000, 1001])
def test_periodogram_is_a_one_segment_welch(n_samples: int) -> None:
    t = np.arange(n_samples) / 500.0
    x = np.column_stack([np.sin(2 * np.pi * 3.0 * t) + 0.2 * t, np.cos(2 * np.pi * 40.0 * t)])
    x += 0.01 * np.random.default_rng(0).standard_normal(x.shape)
    expected_f, expected_p = scipy.signal.welch(
        x, fs=500.0, window="hann", nperseg=n_samples, detrend="linear", axis=0
    )
    frequencies, power = hann_periodogram(x, 500.0)
    np.testing.assert_allclose(frequencies, expected_f, rtol=0, atol=1e-12)
    np.testing.assert_allclose(power, expected_p, rtol=1e-9, atol=1e-12 * expected_p.max())


def test_the_identify_command_imports_no_heavy_scipy_package() -> None:
    """scipy.signal's import (about 0.55 s of CPU from SciPy 1.17) would cost more than the
    filtering of an identification, scipy.optimize's (with scipy.special) about 0.17 s more than
    the tilt search: the identify path imports neither."""
    import subprocess
    import sys

    code = (
        "import sys, physid.cli, physid.workflows, physid.offline.pipeline; "
        "print([m for m in ('scipy.signal', 'scipy.stats', 'scipy.optimize', 'scipy.special', "
        "'scipy.ndimage', "
        "'matplotlib') if m in sys.modules])"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert loaded.returncode == 0, loaded.stderr
    assert loaded.stdout.strip() == "[]"
