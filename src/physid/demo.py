"""``physid demo``: identify a simulated 6-joint arm whose true parameters are known.

The "real robot" is the bundled URDF with every body perturbed by up to +-20 % and industrial
friction and armature added; the URDF itself serves as the imperfect CAD prior. Two experiments
are simulated (closed-loop Fourier excitation, 18-bit encoders, 0.3 N m torque noise): one to
identify, a fresh one to validate. The pipeline is exactly ``physid identify`` on the CSV files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from physid.files.config import parse_config
from physid.files.io import atomic_output_dir, write_json_atomic
from physid.offline.observe.prediction import predict_recording
from physid.offline.result import IdentificationResult
from physid.recordings.tables import Table
from physid.recordings.trajectory import read_table, write_trajectory_csv
from physid.sim.arm import (
    SensorNoise,
    arm6_model,
    arm6_urdf_path,
    simulate_random_excitation,
    true_parameters,
)
from physid.workflows import Progress, run_identify

DEMO_CONFIG = {
    "filter": {"method": "classical", "butterworth_cutoff_hz": 20.0, "decimation_cutoff_hz": 5.0},
    "estimation": {"weighting": "wls"},
}


@dataclass(frozen=True)
class DemoResult:
    """The identification and its comparison with the simulation's ground truth."""

    identification: IdentificationResult
    theta_true: np.ndarray
    validation_error: float  # identified parameters on the fresh experiment
    noise_floor: float  # true parameters on the same processed data
    base_z_scores: np.ndarray  # (identified base - true base) / reported std
    comparison: dict

    @property
    def within_3_sigma(self) -> float:
        return float(np.mean(np.abs(self.base_z_scores) < 3.0))


def run_demo(
    out_dir: str | Path,
    *,
    seed: int = 0,
    train_duration_s: float = 20.0,
    validation_duration_s: float = 10.0,
    sample_rate_hz: float = 1000.0,
    progress: Progress | None = None,
) -> DemoResult:
    """Simulate, identify with ``physid identify``'s workflow, and compare with the truth."""
    from physid.api.robot_runs import EXCITE
    from physid.errors import in_range

    note = progress or (lambda _message: None)
    out_dir = Path(out_dir)
    rng = np.random.default_rng(in_range(seed, "seed", *EXCITE["seed"]))
    model = arm6_model()
    theta_true = true_parameters(model, rng)
    noise = SensorNoise()
    # Everything is staged and moved into out_dir at the end (io.atomic_output_dir): a failed
    # or killed demo leaves no data/ without its identification/. The recordings are named by
    # their final paths in the outputs (the staged copies are read through Table).
    with atomic_output_dir(out_dir) as staging:
        tables, recorded = {}, {}
        for name, duration in (("train", train_duration_s), ("validation", validation_duration_s)):
            note(f"simulating the {name} experiment ({duration:g} s)")
            simulation = simulate_random_excitation(
                model,
                theta_true,
                duration_s=duration,
                sample_rate_hz=sample_rate_hz,
                rng=rng,
                noise=noise,
            )
            recorded[name] = simulation.recorded
            staged = write_trajectory_csv(staging / "data" / f"{name}.csv", simulation.recorded)
            tables[name] = Table(read_table(staged).columns, str(out_dir / "data" / staged.name))
        result = run_identify(
            arm6_urdf_path(),
            [tables["train"]],
            config=parse_config(DEMO_CONFIG),
            validate=[tables["validation"]],
            out_dir=staging / "identification",
            progress=note,
        )
        comparison, floor, z_scores = _truth(model, result, recorded["validation"], theta_true)
        write_json_atomic(staging / "truth_comparison.json", comparison)
    return DemoResult(
        result, theta_true, result.validation.relative_error, floor, z_scores, comparison
    )


def _truth(model, result: IdentificationResult, validation, theta_true: np.ndarray):  # noqa: ANN001, ANN202
    """The comparison with the truth: (comparison dict, noise floor, base z-scores)."""
    # The noise floor: the true parameters scored like the estimate (raw torque, same filter).
    floor = predict_recording(
        model, validation, result.preprocessing.filter, theta_true
    ).metrics.relative_error
    excited = result.excited
    true_base = result.base.from_standard(theta_true)
    z_scores = (result.theta_base[excited] - true_base[excited]) / result.base_std[excited]
    return _comparison(result, theta_true, true_base, z_scores, floor), floor, z_scores


def _comparison(
    result: IdentificationResult,
    theta_true: np.ndarray,
    true_base: np.ndarray,
    z_scores: np.ndarray,
    floor: float,
) -> dict:
    model = result.model
    layout = model.layout
    standalone = {name for name in result.base.short_names if not name.endswith("(R)")}
    joint_terms = {
        name: {
            "true": float(theta_true[i]),
            "identified": float(result.theta[i]),
            # Only a base parameter on its own is identifiable; a regrouped one is not.
            "identifiable_alone": name in standalone,
        }
        for i, name in enumerate(layout.names)
        if i >= layout.n_inertial
    }
    excited = np.flatnonzero(result.excited)
    base_rows = [
        {
            "name": result.base.short_names[i],
            "true": float(true_base[i]),
            "identified": float(result.theta_base[i]),
            "std": float(result.base_std[i]),
            "z": float(z),
        }
        for i, z in zip(excited, z_scores, strict=True)
    ]
    return {
        "validation_relative_error": result.validation.relative_error,
        "noise_floor_relative_error": floor,
        "ratio_to_noise_floor": result.validation.relative_error / floor,
        "base_parameters_within_3_sigma": float(np.mean(np.abs(z_scores) < 3.0)),
        "total_moving_mass_kg": {
            "true": layout.total_mass(theta_true),
            "identified": result.moving_mass(),
            "urdf_prior": layout.total_mass(model.prior_parameters()),
        },
        "joint_terms": joint_terms,
        "base_parameters": base_rows,
    }
