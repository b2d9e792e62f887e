"""The acceleration window of physid online chosen from the recording (physid.online.window):
its noise gain against the scatter of the filter's own derivative on white noise, the position
noise it reads, and the choice on MuJoCo runs with and without encoder noise."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest
import scipy.signal
from click.testing import CliRunner
from simfit_data import simulate_arm, write_csv
from test_mjcf import ARM

from physid.cli import main
from physid.online.codes import ACCELERATION_WINDOW
from physid.online.config import parse_online_config
from physid.online.stream import SampleWindow
from physid.online.window import CANDIDATES, choose_window, noise_gain, position_noise


@pytest.mark.parametrize(("samples", "from_positions"), [(11, True), (41, True), (21, False)])
def test_the_noise_gain_is_the_scatter_of_the_filters_own_derivative(samples, from_positions):
    """White noise through SampleWindow.middle (the filter's derivative) scatters as predicted."""
    rng = np.random.default_rng(3)
    period = 0.002
    window = SampleWindow(1, 1, 1, 0, samples)
    out = []
    for k in range(4000):
        x = rng.normal(0.0, 1e-3, 1)
        window.push(k * period, x, x, np.zeros(1), np.zeros(0),
                    velocity_from_positions=from_positions)  # fmt: skip
        if k >= samples:
            out.append(window.middle()[-1][0])
    assert np.std(out) == pytest.approx(1e-3 * noise_gain(samples, period, from_positions),
                                        rel=0.05)  # fmt: skip


def test_the_position_noise_is_read_beside_the_motion():
    t = np.arange(0.0, 20.0, 0.002)
    motion = np.column_stack([0.5 * np.sin(2 * np.pi * 0.3 * t), 0.2 * np.cos(2 * np.pi * t)])
    noise = np.random.default_rng(1).normal(0.0, [2e-4, 5e-5], motion.shape)
    np.testing.assert_allclose(position_noise(motion + noise), [2e-4, 5e-5], rtol=0.05)


def test_clean_positions_keep_paper_es_window_and_noisy_ones_get_a_longer_one():
    t = np.arange(0.0, 20.0, 0.002)
    q = np.column_stack([0.5 * np.sin(2 * np.pi * 0.3 * t), 0.3 * np.sin(2 * np.pi * 0.6 * t)])
    clean = choose_window(t, q, None)
    assert clean.samples == CANDIDATES[0] == 11 and "paper E's" in clean.reason
    noisy = choose_window(t, q + np.random.default_rng(2).normal(0.0, 2e-4, q.shape), None)
    assert noisy.samples > 11 and noisy.noise_to_signal[noisy.samples] <= 0.25
    assert noisy.noise_to_signal[11] > 1.0  # 0.2 mrad at 500 Hz: 11 samples are mostly noise
    # the chosen window's acceleration noise, measured on the noise alone, is what it predicts
    noise = np.random.default_rng(2).normal(0.0, 2e-4, q.shape)
    measured = scipy.signal.savgol_filter(noise, noisy.samples, 2, deriv=2, delta=0.002, axis=0)
    assert np.std(measured) == pytest.approx(2e-4 * noise_gain(noisy.samples, 0.002, True),
                                             rel=0.05)  # fmt: skip


def test_auto_is_the_default_and_a_config_word():
    assert parse_online_config({}).acceleration_window == "auto"
    assert parse_online_config({}).window_samples == 11
    assert parse_online_config({"acceleration_window": 21}).window_samples == 21


@pytest.fixture(scope="module")
def noisy_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("window")
    write_csv(simulate_arm(mujoco.MjModel.from_xml_string(ARM), 14.0, 1), folder / "run.csv")
    (folder / "light.xml").write_text(ARM.replace('mass="0.9"', 'mass="0.6"'))
    return folder


def _online(folder, *extra):
    run = CliRunner().invoke(main, ["online", "--model", str(folder / "light.xml"), "--data",
                                    str(folder / "run.csv"), "--body", "elbow", "--quiet",
                                    *extra])  # fmt: skip
    assert run.exit_code == 0, run.output
    return run


def test_online_on_noisy_encoders_reads_the_elbow_with_the_chosen_window(noisy_run, tmp_path):
    """The MJCF test arm under PD control in MuJoCo, 500 Hz, 0.2 mrad position noise, nominal
    elbow 0.6 kg (truth 0.9 kg, centre of mass x 0.12 m). Paper E's 11 samples read the centre
    of mass 0.072-0.079 m (7.7 std off, status ok); the chosen window reads the truth."""
    run = _online(noisy_run, "--out", str(tmp_path / "auto"))
    summary = json.loads((tmp_path / "auto" / "summary.json").read_text())
    chosen = summary["acceleration_window"]
    assert chosen["samples"] > 11 and "acceleration window" not in run.output  # info
    (said,) = [f for f in summary["findings"] if f["code"] == ACCELERATION_WINDOW.code]
    assert said["numbers"]["samples"] == chosen["samples"]
    assert said["numbers"]["lag_s"] == pytest.approx(chosen["lag_s"])
    elbow = summary["bodies"]["elbow"]
    assert elbow["final"]["com_x"] == pytest.approx(0.12, abs=3 * elbow["final_std"]["com_x"])
    assert elbow["final"]["com_x"] == pytest.approx(0.12, rel=0.05)
    assert elbow["window"]["median"]["mass"] == pytest.approx(0.9, rel=0.1)
    (tmp_path / "paper_e.yaml").write_text("acceleration_window: 11\n")
    _online(noisy_run, "--out", str(tmp_path / "w11"), "--config", str(tmp_path / "paper_e.yaml"))
    fixed = json.loads((tmp_path / "w11" / "summary.json").read_text())
    assert fixed["acceleration_window"] == {"samples": 11, "reason": "config"}
    com_x = fixed["bodies"]["elbow"]["final"]["com_x"]
    assert abs(com_x - 0.12) > 0.2 * 0.12  # what the default did before


def test_logged_noisy_velocities_widen_the_window_too(tmp_path):
    """The logged-velocity path (``dq_`` columns): the test arm at 1 kHz, positions quantised to
    17 bits, velocities with 0.01 rad/s noise. Measured on this 10 s run: with 11 samples the
    elbow's centre of mass x ends at 0.111 m (7.6 % off), with the chosen 81 at 0.119 m (on two
    14 s runs: 0.109 / 0.115 m against 0.120 / 0.121 m, the truth inside 1 std 14-79 % of the
    time after 5 s with 11, always with the chosen window)."""
    from test_mjcf import JOINTS

    from physid.recordings.tables import Table

    table = simulate_arm(mujoco.MjModel.from_xml_string(ARM), 10.0, 1, noise_rad=0.0,
                         rate_hz=1000.0)  # fmt: skip
    columns = dict(table.columns)
    q = np.column_stack([columns[f"q_{j}"] for j in JOINTS])
    dq = np.gradient(q, columns["t"], axis=0)
    dq += np.random.default_rng(1).normal(0.0, 0.01, q.shape)
    step = 2 * np.pi / 2**17
    for k, joint in enumerate(JOINTS):
        columns[f"q_{joint}"] = np.round(q[:, k] / step) * step
        columns[f"dq_{joint}"] = dq[:, k]
    write_csv(Table(columns, "velocities"), tmp_path / "run.csv")
    (tmp_path / "light.xml").write_text(ARM.replace('mass="0.9"', 'mass="0.6"'))
    _online(tmp_path, "--out", str(tmp_path / "out"))
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["velocities"] == "measured" and summary["acceleration_window"]["samples"] > 21
    elbow = summary["bodies"]["elbow"]
    assert elbow["final"]["com_x"] == pytest.approx(0.12, abs=3 * elbow["final_std"]["com_x"])
    assert elbow["final"]["com_x"] == pytest.approx(0.12, rel=0.05)
