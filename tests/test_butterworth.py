"""Paper C §2.3 filtering: Butterworth derivatives and parallel decimation vs closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from physid.errors import InputError
from physid.signal.butterworth import (
    Decimation,
    classical_derivatives,
    excitation_bandwidth_hz,
    measurable_bandwidth_hz,
    pooled_spectra,
    rule_of_thumb_cutoffs,
    zero_phase_lowpass,
)

FS = 1000.0
T = np.arange(0, 10, 1 / FS)


def test_derivatives_of_a_noisy_sine_match_the_closed_form():
    rng = np.random.default_rng(0)
    w = 2 * np.pi * 0.7
    q = np.sin(w * T) + 1e-5 * rng.standard_normal(T.size)
    q_f, dq, ddq = classical_derivatives(q[:, None], 1 / FS, cutoff_hz=10.0)
    inner = slice(500, -500)  # away from the filter's start-up
    np.testing.assert_allclose(dq[inner, 0], w * np.cos(w * T[inner]), atol=2e-3 * w)
    np.testing.assert_allclose(ddq[inner, 0], -(w**2) * np.sin(w * T[inner]), atol=2e-2 * w**2)
    # Raw central differences of the same noisy signal are far worse on ddq:
    raw = np.gradient(np.gradient(q, 1 / FS), 1 / FS)
    assert np.std(raw[inner] + w**2 * np.sin(w * T[inner])) > 10 * np.std(
        ddq[inner, 0] + w**2 * np.sin(w * T[inner])
    )


def test_zero_phase_means_no_lag():
    x = np.sin(2 * np.pi * 2.0 * T)
    y = zero_phase_lowpass(x[:, None], FS, 20.0, 4)[:, 0]
    lags = np.arange(-20, 21)
    inner = slice(1000, -1000)
    correlation = [np.dot(x[inner], np.roll(y, lag)[inner]) for lag in lags]
    assert lags[int(np.argmax(correlation))] == 0


def test_decimation_keeps_the_band_and_removes_what_would_alias():
    decimation = Decimation.for_cutoff(FS, 20.0)
    assert decimation.factor == 20  # 0.4 fs / cutoff, as MATLAB's decimate
    low = np.sin(2 * np.pi * 3.0 * T)
    high = np.sin(2 * np.pi * 180.0 * T)  # would alias onto 20 Hz after decimating by 20
    rows = decimation.kept_rows(T.size)
    kept_low = decimation.filter(low[:, None])[rows, 0]
    kept_high = decimation.filter(high[:, None])[rows, 0]
    np.testing.assert_allclose(kept_low, low[rows], atol=1e-3)
    # An abrupt 180 Hz sine is the worst case at the ends: 1e-4 after the settling margin.
    assert np.max(np.abs(kept_high)) < 2e-4 and np.median(np.abs(kept_high)) < 2e-5
    assert rows[0] == decimation.settling_samples and np.all(np.diff(rows) == 20)


def test_rule_of_thumb_follows_the_excitation_spectrum():
    q = np.column_stack([np.sin(2 * np.pi * 0.5 * T), 0.3 * np.sin(2 * np.pi * 1.5 * T)])
    bandwidth = excitation_bandwidth_hz([(q, FS)])
    assert 0.4 <= bandwidth <= 1.6
    omega_dyn, omega_q, omega_f = rule_of_thumb_cutoffs([(q, FS)])
    # Paper C's rules, whatever the noise: the wider measurable band is only a candidate.
    assert omega_q == pytest.approx(10 * omega_dyn) and omega_f == pytest.approx(2 * omega_dyn)
    # Noise-free sines: measurable far above the excitation (round-off is the only noise).
    assert measurable_bandwidth_hz([(q, FS)]) > 10 * omega_dyn
    noisy = q + 1e-4 * np.random.default_rng(0).standard_normal(q.shape)
    # With sensor noise the measurable band ends near the excitation.
    assert measurable_bandwidth_hz([(noisy, FS)]) < 10 * omega_dyn


def test_bandwidth_does_not_leak_on_a_segment_cut_mid_motion():
    # Issue 9: a 0.3 Hz excitation cut at an arbitrary instant (the ends do not meet) read as
    # several Hz by an unwindowed FFT; the Hann-windowed Welch spectrum keeps it below 0.6 Hz.
    t = np.arange(0.0, 37.3, 1.0 / 200.0)
    q = np.column_stack([np.sin(2 * np.pi * 0.3 * t + 0.4) + 0.4 * t / t[-1], np.cos(0.9 * t)])
    cut = q[int(0.3 * len(t)) :]
    assert excitation_bandwidth_hz([(cut, 200.0)]) < 0.6
    # Pooled with a second recording at another rate, still the same band.
    pairs = [(cut, 200.0), (q[::2], 100.0)]
    assert excitation_bandwidth_hz(pairs) < 0.6
    # computed once for several rules: the same numbers as each rule computing them
    spectra = pooled_spectra(pairs)
    assert spectra.lowest_rate_hz == 100.0 and spectra.longest_s == pytest.approx(37.3, abs=0.01)
    assert spectra.frequencies_hz[-1] <= 50.0  # the grid ends at the lower rate's Nyquist
    assert rule_of_thumb_cutoffs(spectra) == rule_of_thumb_cutoffs(pairs)
    assert measurable_bandwidth_hz(spectra) == measurable_bandwidth_hz(pairs)


def test_bad_cutoffs_are_named():
    with pytest.raises(InputError, match="Butterworth cut-off = 600 Hz must lie in"):
        classical_derivatives(np.zeros((100, 1)), 1 / FS, 600.0)
    with pytest.raises(InputError, match="above the Nyquist frequency .* aliasing"):
        Decimation(FS, 100.0, 10)


def test_multirate_plan_splits_the_factor():
    from physid.signal.butterworth import MultirateDecimation

    plan = MultirateDecimation.plan(5000.0, 20.0)
    assert plan.first_factor * plan.second.factor == 100  # same total as MATLAB's rule
    assert plan.intermediate_rate_hz >= 25 * 20.0
    assert MultirateDecimation.plan(5000.0, 50.0).first_factor == 4  # 40 = 4 x 10
    assert MultirateDecimation.plan(1000.0, 100.0).first_factor == 1
    # automatic: the largest first stage, the second rounded down (25 -> 2 x 12): a total
    # without a small divisor (79, prime, at a 999.99 Hz clock for 5 Hz) no longer forces the
    # regressor to the full rate
    plan = MultirateDecimation.plan(5000.0, 80.0)
    assert (plan.first_factor, plan.second.factor) == (2, 12)
    plan = MultirateDecimation.plan(999.9999999996661, 5.00025)
    assert (plan.first_factor, plan.second.factor) == (7, 11)
    assert plan.second.cutoff_hz < 0.5 * plan.intermediate_rate_hz / plan.second.factor
    # a factor the user chose is kept exactly
    plan = MultirateDecimation.plan(5000.0, 80.0, 25)
    assert (plan.first_factor, plan.second.factor) == (1, 25)


def test_multirate_estimates_are_at_least_as_good_as_single_rate_ones(arm_experiment, monkeypatch):
    # Independent truth: the simulated arm's parameters. The single-rate pipeline (regressor at
    # the full rate) is the reference to beat: band-limiting the states before the regressor
    # also removes products of out-of-band derivative noise, which bias the single-rate one.
    from physid.files.config import parse_config
    from physid.offline.observe.least_squares import weighted_least_squares
    from physid.offline.observe.observations import build_observations
    from physid.offline.observe.reduced import reduce_observations
    from physid.robot.regressor import base_parameters
    from physid.signal import butterworth

    model = arm_experiment.model
    options = parse_config(
        {"filter": {"butterworth_cutoff_hz": 20, "decimation_cutoff_hz": 5}}
    ).filter
    base = base_parameters(model)
    true_base = base.from_standard(arm_experiment.theta_true)

    def mean_square_z():
        observations = build_observations(model, arm_experiment.train.recorded, options)
        system = reduce_observations(observations.W, observations.tau)
        ls = weighted_least_squares(system, base.independent)
        z = (ls.theta - true_base) / ls.std
        return float(np.mean(z**2)), observations.info["decimation"]["intermediate_rate_hz"]

    multirate, rate = mean_square_z()
    assert rate == pytest.approx(125.0)  # 1 kHz / 8
    monkeypatch.setattr(butterworth, "INTERMEDIATE_RATE_PER_CUTOFF", 1e9)
    single, rate = mean_square_z()
    assert rate == pytest.approx(1000.0)
    # Measured: mean z^2 1.8 (multi-rate) vs 2.8 (single rate); 1 for a perfect estimator.
    assert multirate < 1.1 * single and multirate < 2.5


@pytest.mark.parametrize(
    "raw, message",
    [
        ({"coulomb_deadband": -1}, r"coulomb_deadband: must lie in \[0, 100\]"),
        ({"coulomb_deadband": {"prismatic": -0.1}}, "coulomb_deadband.prismatic: must lie in"),
        ({"coulomb_deadband": [1, 2]}, "coulomb_deadband: expected a finite number"),
        ({"estimation": {"estimate_gravity_direction": "no"}}, "expected true or false"),
    ],
)
def test_filter_and_friction_settings_are_checked(raw, message):
    from physid.files.config import parse_config

    with pytest.raises(InputError, match=message):
        parse_config(raw)


def test_a_recorded_preprocessing_with_an_unknown_method_is_refused():
    from physid.offline.observe.preprocessing import preprocessing_from_dict

    with pytest.raises(InputError, match="method 'fourier' is not one of"):
        preprocessing_from_dict({"method": "fourier", "butterworth_cutoff_hz": 10.0})
    recorded = preprocessing_from_dict({"method": "classical", "butterworth_cutoff_hz": 10.0})
    assert recorded.filter.butterworth_cutoff_hz == 10.0 and recorded.filter.method == "classical"
