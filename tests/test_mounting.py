"""A robot not mounted upright: the torques name the gravity they show, and ``gravity:`` states it.

Truth: the demo arm simulated (physid's tracking simulation) under gravity tilted 20 deg about
the base x axis (an arm on an incline) or reversed (hanging from a ceiling), identified with the
URDF (upright gravity). Until 2026-11-27 the incline came back ``ok`` with a 36 % training error
and only a note that the data "would tilt" gravity by 20 deg; the ceiling was told "torque sign
looks flipped on every joint".
"""

from __future__ import annotations

import numpy as np
import pytest

from physid.errors import InputError
from physid.files.config import parse_config, robot_for
from physid.files.params_file import read_params
from physid.recordings.trajectory import write_trajectory_csv
from physid.robot.model import with_gravity
from physid.sim.arm import (
    SensorNoise,
    arm6_model,
    arm6_urdf_path,
    simulate_random_excitation,
    true_parameters,
)
from physid.workflows import run_identify

INCLINE = np.array([0.0, 9.81 * np.sin(np.radians(20.0)), -9.81 * np.cos(np.radians(20.0))])


def _recording(folder, gravity: np.ndarray):  # noqa: ANN202 - the CSV path
    rng = np.random.default_rng(3)
    model = arm6_model()
    theta = true_parameters(model, rng)
    simulation = simulate_random_excitation(
        with_gravity(model, gravity), theta, duration_s=12.0, sample_rate_hz=250.0, rng=rng,
        noise=SensorNoise(torque_noise_std=0.05),
    )  # fmt: skip
    return write_trajectory_csv(folder / "inclined.csv", simulation.recorded)


def test_an_arm_on_an_incline_is_suspect_with_the_gravity_to_give(tmp_path):
    data = _recording(tmp_path, INCLINE)
    result = run_identify(arm6_urdf_path(), [data])
    assert result.status == "suspect"
    (finding,) = [r for r in result.suspect if r.startswith("the torques show gravity")]
    assert finding.startswith("the torques show gravity 20 deg from the URDF's: along [")
    shown = np.array([float(v) for v in finding.split("along [")[1].split("]")[0].split(",")])
    np.testing.assert_allclose(shown, INCLINE, atol=0.05)
    config = tmp_path / "config.yaml"
    config.write_text(f"gravity: [{', '.join(f'{v:g}' for v in shown)}]\n", encoding="utf-8")
    stated = run_identify(arm6_urdf_path(), [data], config_path=config, out_dir=tmp_path / "out")
    assert stated.status == "ok"
    assert stated.train.relative_error < 0.1 * result.train.relative_error
    np.testing.assert_allclose(read_params(tmp_path / "out" / "params.json").gravity, shown)


def test_a_ceiling_mount_is_found_half_a_turn_away(tmp_path):
    data = _recording(tmp_path, np.array([0.0, 0.0, 9.81]))
    result = run_identify(arm6_urdf_path(), [data])
    found = [r for r in result.suspect if r.startswith("the torques show gravity 180 deg")]
    assert len(found) == 1, result.suspect


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([0.0, 9.81], r"config gravity: expected \[gx, gy, gz\]"),
        ("down", r"config gravity: expected \[gx, gy, gz\]"),
        ([0.0, 0.0, "g"], "config gravity: expected a finite number"),
        ([0.0, 0.0, 981.0], r"config gravity: .*100"),
    ],
)
def test_a_bad_gravity_is_named(raw, message):
    with pytest.raises(InputError, match=message):
        parse_config({"gravity": raw})


def test_the_config_gravity_is_the_model_s():
    model = robot_for(arm6_urdf_path(), parse_config({"gravity": [0.0, 0.0, 9.81]}))
    np.testing.assert_array_equal(model.pin_model.gravity.linear, [0.0, 0.0, 9.81])
