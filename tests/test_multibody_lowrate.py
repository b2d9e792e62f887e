"""Low-rate recordings in physid.multibody (issue 27): observations only at measured samples,
per-joint noise (given or estimated), the initialisation filter chosen for the sample rate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from physid.cli import main
from physid.errors import InputError
from physid.multibody.estimate.fit import MultibodyRecording, identify, resample
from physid.multibody.estimate.observe import init_cutoff, noise_from_data, sample_steps
from physid.multibody.model.build import load_model
from physid.multibody.outputs import estimated_angles
from physid.multibody.step.simulate import simulate, state_from_joints

ROOT = Path(__file__).resolve().parents[1] / "examples" / "multibody"


def test_noise_estimate_of_a_fast_swing_and_a_stuck_joint_at_20_hz():
    rng = np.random.default_rng(0)
    t = np.arange(0, 40, 0.05)
    swing = 2.5 * np.sin(2 * np.pi * 0.8 * t) * np.exp(-0.02 * t)  # 0.8 Hz at 20 Hz: omega T 0.25
    stuck = np.where(t < 14, 0.4 * np.sin(2 * np.pi * 0.3 * t), 0.4 * np.sin(2 * np.pi * 4.2))
    y = np.column_stack([stuck, swing]) + rng.normal(size=(len(t), 2)) * [0.03, 0.021]
    np.testing.assert_allclose(noise_from_data(y), [0.03, 0.021], rtol=0.15)
    # the second difference alone (the check for motion) is biased 4x by the swing
    second = np.median(np.abs(np.diff(y[:, 1], 2))) / 0.6745 / np.sqrt(6)
    assert second > 2 * 0.021


def test_initialisation_filter_rule_and_sample_steps():
    assert init_cutoff(1000.0) == 10.0 and init_cutoff(20.0) == pytest.approx(4.0)
    assert init_cutoff(20.0, None) is None and init_cutoff(20.0, 3.0) == 3.0
    t = 0.05 * np.arange(9) + np.array([0, 1e-3, -2e-3, 0, 0, 0, 0, 0, 0])
    steps, idx = sample_steps(t, 0.0, 0.01, 41)
    np.testing.assert_array_equal(steps, 5 * np.arange(9))
    np.testing.assert_array_equal(idx, np.arange(9))
    # two samples on one step: the nearer is kept
    steps, idx = sample_steps(np.array([0.0, 0.0102, 0.0121]), 0.0, 0.01, 3)
    np.testing.assert_array_equal(steps, [0, 1]) and np.testing.assert_array_equal(idx, [0, 1])


def _pendulum_20hz(seed: int = 1) -> tuple[MultibodyRecording, np.ndarray]:
    truth = {"gravity": [0, 0, -9.81], "joints": {"pendulum": {"viscous": 0.01}}}
    model = load_model(ROOT / "pendulum.urdf", truth)
    sim = simulate(model, 1e-3, 4000, *state_from_joints(model, [1.0], [0.0]))
    keep = slice(0, None, 50)  # 20 Hz
    noisy = sim.angles[keep] + 0.01 * np.random.default_rng(seed).normal(size=(81, 1))
    return MultibodyRecording(sim.t[keep], noisy, np.zeros_like(noisy), "20 Hz"), sim.angles[keep]


def test_observations_only_at_samples_and_their_weights():
    rec, _ = _pendulum_20hz()
    segment, smooth = resample(rec, 0.01, "auto", np.array([0.5]))
    assert segment.w.shape == (401, 1) and np.count_nonzero(segment.w) == 81
    np.testing.assert_array_equal(segment.y[::5, 0], rec.angles[:, 0])  # the samples themselves
    assert np.all(segment.w[::5] == 0.5) and np.all(segment.w[1::5] == 0)
    assert smooth.shape == (401, 1)


def test_identification_from_20_hz_samples_weights_only_the_samples():
    rec, clean = _pendulum_20hz()
    start = {
        "gravity": [0, 0, -9.81],
        "defaults": {"compliance_linear": 1e-5, "compliance_rotational": 1e-5},
        "bodies": {"pendulum": {"Iyy": 0.02}},
        "joints": {"pendulum": {"viscous": 0.001}},
        "estimate": ["pendulum.Iyy", "pendulum.viscous"],
    }
    model = load_model(ROOT / "pendulum.urdf", start)
    fit = identify(model, [rec], h=5e-3, kappa=1e4, noise={"pendulum": 0.01})
    assert fit.observed_steps == 81 and fit.noise["pendulum"]["source"] == "config"
    assert fit.init_filter_hz == [pytest.approx(4.0)]
    iyy, b = fit.values
    assert iyy == pytest.approx(0.01, rel=0.03) and b == pytest.approx(0.01, rel=0.1)
    # the residual at the samples is the noise (1e-4 rad^2); the estimated angles at the
    # samples are closer to the noise-free truth than the noise
    assert fit.observation_mse == pytest.approx(1e-4, rel=0.5)
    ang = estimated_angles(fit)[0][::10, 0]
    assert np.sqrt(np.mean((ang - clean[:, 0]) ** 2)) < 0.5 * 0.01


@pytest.mark.parametrize(
    ("config", "extra", "message"),
    [
        ("noise: {elbow: 0.01}\n", [], "config noise: unknown key(s) ['elbow']"),
        ("noise: {pendulum: -0.01}\n", [], "config noise.pendulum: must lie in"),
        ("", ["--init-filter", "15"], "--init-filter: 15 Hz is not below the Nyquist"),
        ("", ["--init-filter", "fast"], "--init-filter: expected auto, none or a frequency"),
        # 1e9 > 0: the message names the real limits
        ("", ["--init-filter", "1e9"], "in Hz in (0, 1,000,000), below the recording's Nyquist"),
    ],
)
def test_bad_noise_or_filter_is_one_line(tmp_path, config, extra, message):
    rec, _ = _pendulum_20hz()
    data = tmp_path / "d.csv"
    rows = "\n".join(f"{t:.4f},{a:.8f}" for t, a in zip(rec.t, rec.angles[:, 0], strict=True))
    data.write_text("t,q_pendulum\n" + rows + "\n")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("estimate: [pendulum.viscous]\n" + config)
    args = ["multibody", "identify", "--urdf", str(ROOT / "pendulum.urdf"), "--data", str(data)]
    result = CliRunner().invoke(
        main, [*args, "--config", str(cfg), "--out", str(tmp_path / "o"), *extra]
    )
    assert result.exit_code == 2, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1


TURNTABLE = """<?xml version="1.0"?>
<robot name="turntable"><link name="base"/>
  <link name="disc"><inertial><origin xyz="0 0 0"/><mass value="2.0"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.04"/></inertial></link>
  <joint name="spin" type="revolute"><parent link="base"/><child link="disc"/>
    <origin xyz="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-100" upper="100" effort="10" velocity="100"/></joint>
</robot>"""


@pytest.mark.parametrize(("torque", "mass"), [(0.6, 2.0), (0.6, 20.0), (1.5, 2.0), (1.5, 20.0)])
def test_constant_coulomb_torque_is_independent_of_the_load(tmp_path, torque, mass):
    """A constant Coulomb torque tau_c = 0.7 N m (beside r mu = 0.01 m): stuck below
    tau_c + r mu m g, sliding at (tau - tau_c - r mu m g) / J above, whatever the load."""
    urdf = tmp_path / "turntable.urdf"
    urdf.write_text(TURNTABLE)
    joint = {"coulomb": 0.7, "dry": 0.01, "gain": 1.0}
    cfg = {"gravity": [0, 0, -9.81], "joints": {"spin": joint}, "bodies": {"spin": {"mass": mass}}}
    model = load_model(urdf, cfg)
    sim = simulate(
        model, 1e-3, 300, *state_from_joints(model, [0.0], [0.0]), np.full((300, 1), torque)
    )
    assert sim.lcp_failures == 0
    threshold = 0.7 + 0.01 * mass * 9.81
    if torque < threshold:
        assert abs(sim.rates[-1, 0]) < 1e-5
    else:
        assert sim.rates[-1, 0] == pytest.approx((torque - threshold) / 0.04 * 0.3, rel=1e-3)


def test_a_recording_shorter_than_three_steps_is_refused_before_filtering():
    """Fuzzed: time stamps x 1e-9 made the 10 Hz initialisation filter singular (a LinAlgError
    traceback) before the length check could name the problem."""
    t = np.arange(200) * 1e-12
    recording = MultibodyRecording(t, np.zeros((200, 1)), np.zeros((200, 1)), "tiny.csv")
    with pytest.raises(InputError, match="fewer than 3 steps of h = 0.01 s"):
        resample(recording, 0.01)
