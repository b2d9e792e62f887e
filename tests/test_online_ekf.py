"""The online filters on simulated robots with known truth (issue 3 acceptance 1-5) and the
filter pieces against independent truths (Joseph form, chi-square gating rate, rate limits,
bias calibration). Every streamed EKF estimate is checked with inertia.check_consistency."""

from dataclasses import replace

import numpy as np
import pytest
import scipy.stats

from physid.body.inertia import check_consistency, random_consistent_pi
from physid.errors import InputError
from physid.online import BaselineKF, InertialEKF, OnlineConfig
from physid.online.columns import OnlineSignals
from physid.online.config import Gating, MeasurementNoise, RateLimit, ThetaStd
from physid.online.ekf import joseph_update
from physid.online.metrics import mean_relative_error, peak_excursion, settling_time, windows
from physid.online.replay import quantities_from_pi, replay
from physid.online.stream import RateLimiter
from physid.sim.adaptive_arm import simulate_computed_torque
from physid.sim.legged import (
    CONTACT_FRAMES,
    TORSO_JOINT,
    SteppingScenario,
    load_humanoid,
    simulate_stepping,
)
from physid.sim.payload_arm import (
    PAYLOAD_JOINT,
    ArmNoise,
    PayloadProfile,
    load_arm,
    simulate_payload_arm,
)

ARM = OnlineConfig(
    calibration_s=0.5,
    acceleration_window=21,
    process_noise=ThetaStd(alpha=2.0, d=0.05, s=0.01, t=0.005),
    measurement_noise=MeasurementNoise(joint_torque=1.0),
    gating=Gating(probability=0.9999, release_after_s=0.05),
)
STEP = PayloadProfile(hold_s=0.6, sine_s=0.0, square_s=0.0, plateau_s=1.0, step_s=2.5)


def assert_all_consistent(pi: np.ndarray) -> None:
    """Acceptance 1: check_consistency passes for every streamed body."""
    bad = [k for k, p in enumerate(pi.reshape(-1, 10)) if not check_consistency(p).consistent]
    assert not bad, f"{len(bad)} inconsistent estimates, first at {bad[0]}"


@pytest.fixture(scope="module")
def step_recording():
    return simulate_payload_arm(np.random.default_rng(7), STEP)


def signals_of(rec) -> OnlineSignals:
    return OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, None)


# --- Joseph form ---------------------------------------------------------------------------------
def test_joseph_form_is_the_kalman_update_and_stays_positive_definite():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(10, 10))
    P = A @ A.T + 1e-3 * np.eye(10)
    H = rng.normal(size=(7, 10)) * np.logspace(0, 3, 10)  # badly scaled, like Y G
    r = rng.uniform(0.01, 1.0, size=7)
    S = H @ P @ H.T + np.diag(r)
    K = P @ H.T @ np.linalg.inv(S)
    standard = (np.eye(10) - K @ H) @ P
    joseph = joseph_update(P, K, H, r)
    scale = np.abs(P).max()
    assert np.max(np.abs(joseph - standard)) <= 1e-8 * scale
    # A wrong gain (too large, perturbed): Joseph stays a covariance, the short form does not.
    K_bad = 1.8 * K + 1e-3 * np.abs(K).max() * rng.normal(size=K.shape)
    joseph_bad = joseph_update(P, K_bad, H, r)
    assert np.max(np.abs(joseph_bad - joseph_bad.T)) <= 1e-12 * np.abs(joseph_bad).max()
    assert np.linalg.eigvalsh(joseph_bad).min() > 0
    short_bad = (np.eye(10) - K_bad @ H) @ P
    assert np.max(np.abs(short_bad - short_bad.T)) > 1e-6 * scale
    assert np.linalg.eigvalsh(0.5 * (short_bad + short_bad.T)).min() < 0


def test_covariance_stays_symmetric_positive_definite(step_recording):
    rec = step_recording
    ekf = InertialEKF(load_arm(), [PAYLOAD_JOINT], ARM)
    worst_asymmetry, smallest, streamed = 0.0, np.inf, []
    for k in range(0, 2500):
        streamed.append(ekf.update(rec.t[k], rec.q[k], rec.dq[k], rec.tau[k]).bodies[0].pi)
        P = ekf._P
        worst_asymmetry = max(worst_asymmetry, np.abs(P - P.T).max() / np.abs(P).max())
        smallest = min(smallest, np.linalg.eigvalsh(0.5 * (P + P.T)).min())
    assert worst_asymmetry < 1e-12
    assert smallest > 0.0
    assert_all_consistent(np.array(streamed))


# --- acceptance 2 and 1: payload step; the baseline leaves the consistent set --------------------
def test_payload_step_is_tracked_and_consistent(step_recording):
    rec = step_recording
    result = replay(InertialEKF(load_arm(), [PAYLOAD_JOINT], ARM), signals_of(rec))
    mass, truth = result.values[:, 0, 0], rec.body_mass
    assert settling_time(rec.t, mass, truth, STEP.step_time_s, 0.05) <= 2.0
    assert mean_relative_error(mass, truth, rec.t >= STEP.duration_s - 1.0) <= 0.02
    # the plateau before: the payload attached at the end of the hold, 4.8 kg in all
    plateau = (rec.t > STEP.hold_s + 0.5) & (rec.t < STEP.step_time_s)
    assert mean_relative_error(mass, truth, plateau) <= 0.02
    assert_all_consistent(result.pi)
    assert not np.isnan(result.values).any()


def test_baseline_kf_leaves_the_consistent_set_and_the_ekf_never_does():
    profile = PayloadProfile(hold_s=0.6, sine_s=2.0, square_s=0.0, plateau_s=0.0, step_s=0.0)
    rec = simulate_payload_arm(np.random.default_rng(3), profile)
    ekf = replay(InertialEKF(load_arm(), [PAYLOAD_JOINT], ARM), signals_of(rec))
    kf = replay(BaselineKF(load_arm(), [PAYLOAD_JOINT], ARM), signals_of(rec))
    assert_all_consistent(ekf.pi)
    inconsistent = [not check_consistency(p).consistent for p in kf.pi[::10, 0]]
    assert np.mean(inconsistent) > 0.2
    # both see the payload; the point is consistency, not a worse mass
    sine = rec.t > 1.2
    assert mean_relative_error(ekf.values[sine, 0, 0], rec.body_mass[sine]) < 0.1


# --- acceptance 3: adaptive computed-torque control ----------------------------------------------
def test_adaptive_control_tracks_five_times_better():
    profile = PayloadProfile(hold_s=1.0, sine_s=2.0, square_s=2.0, plateau_s=0.0, step_s=0.0)
    ekf = InertialEKF(load_arm(), [PAYLOAD_JOINT], ARM)
    streamed = []

    def estimator(t, q, dq, tau):
        streamed.append(ekf.update(t, q, dq, tau).bodies[0].pi)
        return streamed[-1]

    adaptive = simulate_computed_torque(np.random.default_rng(5), estimator, profile)
    nominal = simulate_computed_torque(np.random.default_rng(5), None, profile)
    assert nominal.rmse() >= 5.0 * adaptive.rmse()
    assert nominal.rmse() > 0.3  # the payload really matters without adaptation
    assert_all_consistent(np.array(streamed))


# --- acceptance 4: gating ------------------------------------------------------------------------
def test_gating_removes_impact_spikes_without_losing_accuracy():
    scenario = SteppingScenario(duration_s=5.0, payload_time_s=3.0)
    rec = simulate_stepping(np.random.default_rng(11), scenario)
    signals = OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, rec.wrenches)
    config = OnlineConfig(
        contact_frames=CONTACT_FRAMES,
        calibration_s=0.5,
        acceleration_window=41,
        process_noise=ThetaStd(alpha=0.03, d=0.02, s=0.002, t=0.002),
        measurement_noise=MeasurementNoise(joint_torque=1.0, base_force=10.0, base_torque=3.0),
        gating=Gating(probability=0.999, release_after_s=0.1),
    )
    truth = rec.torso_pi[:, 0]
    settled = (rec.t > 1.5) & ~windows(rec.t, [scenario.payload_time_s], 1.5)
    impacts = windows(rec.t, rec.touchdowns, 0.25) & settled
    quiet = settled & ~impacts
    peaks, quiet_errors = [], []
    for gating in (config.gating, Gating(probability=None)):
        result = replay(
            InertialEKF(load_humanoid(), [TORSO_JOINT], replace(config, gating=gating)), signals
        )
        assert_all_consistent(result.pi)
        mass = result.values[:, 0, 0]
        peaks.append(peak_excursion(mass, truth, impacts))
        quiet_errors.append(mean_relative_error(mass, truth, quiet))
    assert peaks[1] >= 5.0 * peaks[0]
    assert quiet_errors[0] <= 0.02 and abs(quiet_errors[0] - quiet_errors[1]) <= 0.005


def test_gated_fraction_is_one_minus_the_probability():
    """With exactly white torque noise and R equal to its variance, the normalized innovation of
    eq. 22 is chi-square with n_rows = 7 degrees of freedom: P(gated) = 1 - probability."""
    profile = PayloadProfile(hold_s=3.7, sine_s=0.0, square_s=0.0, plateau_s=0.0, step_s=0.0)
    noise = ArmNoise(q_std=0.0, dq_std=0.0, tau_std=0.1, tau_offset_std=0.0)  # no payload
    rec = simulate_payload_arm(np.random.default_rng(2), profile, noise=noise)
    config = OnlineConfig(
        acceleration_window=3,  # exact data: the central difference is exact to 1e-6
        process_noise=ThetaStd(alpha=1e-3, d=1e-3, s=1e-4, t=1e-4),
        measurement_noise=MeasurementNoise(joint_torque=0.1),
        gating=Gating(probability=0.9, release_after_s=None),
    )
    result = replay(InertialEKF(load_arm(), [PAYLOAD_JOINT], config), signals_of(rec))
    assert_all_consistent(result.pi)
    later = rec.t > 1.5
    assert 0.07 <= result.gated[later].mean() <= 0.13
    # and the statistic itself is chi-square(7): compare a quantile
    nis = result.nis[later & np.isfinite(result.nis)]
    assert np.median(nis) == pytest.approx(scipy.stats.chi2.median(7), rel=0.1)


# --- acceptance 5: bad samples -------------------------------------------------------------------
def test_bad_samples_are_skipped_and_flagged_never_nan(step_recording):
    rec = step_recording
    t, q, dq, tau = rec.t.copy(), rec.q.copy(), rec.dq.copy(), rec.tau.copy()
    q[300, 2] = np.nan
    tau[600, 0] = np.nan
    dq[700, 5] = np.inf
    t[800] = np.nan
    t[1000] = t[999]  # a repeated time stamp
    keep = np.r_[np.arange(0, 1200), np.arange(1230, len(t))]  # 30 dropped samples
    signals = OnlineSignals(t[keep], q[keep], dq[keep], tau[keep], None)
    result = replay(InertialEKF(load_arm(), [PAYLOAD_JOINT], ARM), signals)
    assert not np.isnan(result.values).any() and not np.isnan(result.std).any()
    assert_all_consistent(result.pi)
    for k in (300, 600, 700, 800, 1000, 1200):
        assert result.skipped[k]
    window = ARM.acceleration_window
    assert result.skipped[1200 : 1200 + window - 1].all()  # refilling after the gap
    assert not result.skipped[1200 + window]
    assert result.skip_reasons["time gap"] == 1 and result.skip_reasons["non-finite q"] == 1
    # it keeps estimating: the step at the end is still tracked
    mass, truth = result.values[:, 0, 0], rec.body_mass[keep]
    assert mean_relative_error(mass, truth, signals.t > STEP.duration_s - 1.0) <= 0.02


def test_wrong_sizes_and_missing_contacts_are_input_errors():
    ekf = InertialEKF(load_arm(), [PAYLOAD_JOINT])
    with pytest.raises(InputError, match="update expects q"):
        ekf.update(0.0, np.zeros(6), np.zeros(7), np.zeros(7))
    config = OnlineConfig(contact_frames=CONTACT_FRAMES)
    humanoid = InertialEKF(load_humanoid(), [TORSO_JOINT], config)
    q = np.r_[0, 0, 0.9, 0, 0, 0, 1, np.zeros(30)]
    with pytest.raises(InputError, match="contact wrenches are required"):
        humanoid.update(0.0, q, np.zeros(36), np.zeros(30))
    with pytest.raises(InputError, match="right_sole"):
        humanoid.update(0.0, q, np.zeros(36), np.zeros(30), {"left_sole": np.zeros(6)})


# --- rate limiter and bias calibration -----------------------------------------------------------
def test_rate_limit_bounds_the_streamed_mass(step_recording):
    rec = step_recording
    rate = 4.0  # kg/s
    config = replace(ARM, rate_limit=RateLimit(mass=rate))
    result = replay(InertialEKF(load_arm(), [PAYLOAD_JOINT], config), signals_of(rec))
    mass = result.values[:, 0, 0]
    assert np.max(np.abs(np.diff(mass)) - rate * np.diff(rec.t)) <= 1e-9
    assert_all_consistent(result.pi)
    # 0.3 kg -> 4.8 kg at 0.6 s, -> 7.8 kg at 1.6 s: on the truth from about 2.5 s
    assert mean_relative_error(mass, rec.body_mass, rec.t >= STEP.duration_s - 0.5) <= 0.02


def test_rate_limiter_moves_along_straight_lines_in_mass_com_inertia():
    rng = np.random.default_rng(4)
    start, target = random_consistent_pi(rng, 2)
    limiter = RateLimiter(RateLimit(mass=1.0, com=0.1, inertia=0.01), start[None])
    v0, v1 = quantities_from_pi(start)[0], quantities_from_pi(target)[0]
    limiter(0.0, target[None])
    out = quantities_from_pi(limiter(0.01, target[None])[0])[0]
    steps = [(0, 1, 0.01), (1, 4, 0.001), (4, 10, 1e-4)]  # (slice, limit * dt)
    for lo, hi, bound in steps:
        moved, wanted = out[lo:hi] - v0[lo:hi], v1[lo:hi] - v0[lo:hi]
        fraction = min(1.0, bound / np.abs(wanted).max())
        np.testing.assert_allclose(moved, fraction * wanted, rtol=1e-9, atol=1e-14)
    assert check_consistency(limiter._out[0]).consistent


def test_bias_calibration_learns_the_torque_offsets(step_recording):
    rec = step_recording
    ekf = InertialEKF(load_arm(), [PAYLOAD_JOINT], ARM)
    streamed = [
        ekf.update(rec.t[k], rec.q[k], rec.dq[k], rec.tau[k]).bodies[0].pi for k in range(900)
    ]
    assert_all_consistent(np.array(streamed))
    offsets = np.mean(rec.tau - rec.tau_true, axis=0)  # the simulated sensor offsets (+ noise)
    assert ekf.calibration.done
    np.testing.assert_allclose(ekf.calibration.bias, offsets, atol=0.05)


def test_large_load_change_is_followed_without_overshoot(step_recording):
    """0.3 kg -> 4.8 kg at 0.6 s: the linearized step in alpha would multiply the mass by about
    e^15; the trust region caps every update at max_update_std prior stds."""
    rec = step_recording
    ekf = InertialEKF(load_arm(), [PAYLOAD_JOINT], ARM)
    std0 = np.sqrt(np.diag(ekf._P0))
    largest_step, largest_mass, streamed = 0.0, 0.0, []
    x = ekf._x.copy()
    for k in range(1500):
        streamed.append(ekf.update(rec.t[k], rec.q[k], rec.dq[k], rec.tau[k]).bodies[0].pi)
        largest_step = max(largest_step, np.max(np.abs(ekf._x - x) / std0))
        largest_mass = max(largest_mass, ekf._pi[0, 0])
        x = ekf._x.copy()
    assert largest_step <= ARM.max_update_std + 1e-12
    assert largest_mass < 1.5 * rec.body_mass[:1500].max()
    assert ekf._pi[0, 0] == pytest.approx(rec.body_mass[1499], rel=0.05)
    assert_all_consistent(np.array(streamed))


def test_config_yaml_is_validated(tmp_path):
    from physid.online import load_online_config

    path = tmp_path / "online.yaml"
    path.write_text(
        "filter: kf\nfloating_base: true\ncontact_frames: [left_sole]\n"
        "nominal_params: nominal.json\nprocess_noise: {alpha: 0.1}\n"
        "gating: {probability: null}\nrate_limit: {mass: 3}\nacceleration_window: 21\n"
    )
    config = load_online_config(path)
    assert (
        config.filter == "kf" and config.floating_base and config.contact_frames == ("left_sole",)
    )
    assert config.nominal_params == str(tmp_path / "nominal.json")
    assert config.process_noise.alpha == 0.1 and config.process_noise.t == 0.005  # default kept
    assert config.gating.probability is None and config.rate_limit.mass == 3.0
    for text, message in (
        ("acceleration_window: 4\n", "odd integer"),
        ("gating: {probability: 1.5}\n", "gating.probability"),
        ("process_noise: {alpha: -1}\n", "process_noise.alpha"),
        ("rate_limit: {mass_kg_per_s: 3}\n", "unknown key"),
        ("filter: ukf\n", "not one of"),
    ):
        path.write_text(text)
        with pytest.raises(InputError, match=message):
            load_online_config(path)
