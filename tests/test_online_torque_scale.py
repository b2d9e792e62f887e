"""The torque scale behind the online filter's back: a gain or unit error that the estimated
bodies would absorb (physid.online.torque_scale), read against an injected scale on the
simulated arm of paper E's Table I."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

from physid.cli import main
from physid.files.io import table_csv_text
from physid.online.codes import TORQUE_SCALE
from physid.online.columns import OnlineSignals, signals_table
from physid.online.config import OnlineConfig
from physid.online.ekf import InertialEKF
from physid.online.torque_scale import torque_scale
from physid.sim.payload_arm import (
    ARM_URDF,
    PAYLOAD_JOINT,
    PayloadProfile,
    load_arm,
    simulate_payload_arm,
)

RATE_HZ = 200.0
# 4.5 kg from the first sample (no unloaded start to calibrate on), then a step to 7.5 kg
LOADED = PayloadProfile(hold_s=0.0, sine_s=0.0, square_s=0.0, plateau_s=14.0, step_s=12.0)


@pytest.fixture(scope="module")
def loaded_arm():
    return simulate_payload_arm(np.random.default_rng(4), LOADED, rate_hz=RATE_HZ)


@pytest.mark.parametrize("gain", [1.0, 1.25, 0.9])
def test_the_scale_of_the_torques_is_read_through_a_payload_and_its_step(loaded_arm, gain):
    """Torques x ``gain`` read ``gain`` within 1 %, whether measured velocities are logged or
    not; called significant only beyond the 20 % a real robot's own model misses by."""
    filt = InertialEKF(load_arm(), [PAYLOAD_JOINT], OnlineConfig())
    rec = loaded_arm
    for dq in (rec.dq, None):
        signals = OnlineSignals(rec.t, rec.q, dq, gain * rec.tau, None)
        scale = torque_scale(filt.measurement, signals)
        assert scale is not None and scale.windows == 3
        assert scale.scale == pytest.approx(gain, abs=0.01)
        assert scale.significant == (gain == 1.25)


def test_a_middle_body_reads_the_scale_from_the_joints_it_loads():
    """Estimating the fifth body of the unloaded arm, the filter measures the five joints that
    carry it; the scale is read on those (the two joints beyond it are not in the measurement)."""
    filt = InertialEKF(load_arm(), ["arm_joint_5"], OnlineConfig())
    assert len(filt.measurement.rows) == 5
    unloaded = PayloadProfile(hold_s=25.0, sine_s=0.0, square_s=0.0, plateau_s=0.0, step_s=0.0)
    rec = simulate_payload_arm(np.random.default_rng(5), unloaded, rate_hz=RATE_HZ)
    signals = OnlineSignals(rec.t, rec.q, rec.dq, 1.25 * rec.tau, None)
    scale = torque_scale(filt.measurement, signals)
    assert scale is not None and scale.scale == pytest.approx(1.25, abs=0.02) and scale.significant


def test_a_run_of_one_window_gives_no_scale(loaded_arm):
    filt = InertialEKF(load_arm(), [PAYLOAD_JOINT], OnlineConfig())
    rec, short = loaded_arm, slice(0, int(12 * RATE_HZ))  # one 10 s window
    signals = OnlineSignals(rec.t[short], rec.q[short], rec.dq[short], rec.tau[short], None)
    assert torque_scale(filt.measurement, signals) is None


def test_online_calls_a_gain_error_suspect_and_reports_the_scale(tmp_path, loaded_arm):
    """``physid online`` on torques x1.25: the body streams a mass the gain inflates, and the
    status says why (it was ok); the scale is in summary.json either way."""
    rec = loaded_arm
    for gain in (1.0, 1.25):
        signals = OnlineSignals(rec.t, rec.q, rec.dq, gain * rec.tau, None)
        data = tmp_path / f"gain_{gain}.csv"
        data.write_text(table_csv_text(signals_table(signals, load_arm()), fmt="%.18e"))
        out = tmp_path / f"out_{gain}"
        result = CliRunner().invoke(main, [
            "online", "--urdf", str(ARM_URDF), "--data", str(data), "--body", PAYLOAD_JOINT,
            "--out", str(out), "--quiet"], catch_exceptions=False)  # fmt: skip
        summary = json.loads((out / "summary.json").read_text())
        assert summary["torque_scale"]["scale"] == pytest.approx(gain, abs=0.01)
        called = [f for f in summary["findings"] if f["code"] == TORQUE_SCALE.code]
        if gain == 1.0:
            assert not called, summary["findings"]
        else:
            assert summary["status"] == "suspect" and result.exit_code == 3
            (scale,) = called
            assert scale["numbers"]["scale"] == summary["torque_scale"]["scale"]
            assert scale["names"] == [PAYLOAD_JOINT] and "1.25" in scale["message"], called
