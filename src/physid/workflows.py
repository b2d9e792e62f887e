"""End-to-end workflows shared by the CLI and the demo: files in, results out.

Nothing below this module imports it (DESIGN.md layer 7).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np

from physid.config import IdentifyConfig, load_config, robot_for
from physid.data import Trajectory, load_trajectory, split_by_fraction
from physid.errors import InputError
from physid.identify.metrics import fit_metrics
from physid.identify.pipeline import IdentificationResult, identify, observations_of
from physid.model import RobotModel, with_gravity
from physid.params_file import read_params, standard_parameters
from physid.report.identification import write_identification

Progress = Callable[[str], None]


def load_trajectories(
    paths: list[str | Path], model: RobotModel, config: IdentifyConfig
) -> list[Trajectory]:
    """Read and validate every data file against the model."""
    return [
        load_trajectory(
            path,
            model,
            drive_gains=config.drive_gains,
            allow_large_angles=config.allow_large_angles,
        )
        for path in paths
    ]


def run_identify(
    urdf: str | Path,
    data: list[str | Path],
    *,
    config_path: str | Path | None = None,
    config: IdentifyConfig | None = None,
    validate: list[str | Path] | None = None,
    out_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> IdentificationResult:
    """``physid identify``: load, identify, validate, and write the outputs (if ``out_dir``)."""
    note = progress or (lambda _message: None)
    config = config or load_config(config_path)
    model = robot_for(urdf, config)
    note("reading data")
    train = load_trajectories(list(data), model, config)
    validation = load_trajectories(list(validate or []), model, config)
    if not validation and config.train_fraction is not None:
        pairs = [split_by_fraction(t, config.train_fraction) for t in train]
        train, validation = [p[0] for p in pairs], [p[1] for p in pairs]
    result = identify(model, train, config, validation=validation or None, progress=note)
    if result.theta is None:
        raise InputError(f"{result.status}; nothing was written")
    if out_dir is not None:
        note("writing report")
        provenance = {
            "urdf": str(urdf),
            "data": [str(p) for p in data],
            "validate": [str(p) for p in validate or []],
            "config": None if config_path is None else str(config_path),
            "train_fraction": None if validate else config.train_fraction,
            "warnings_from_data": [w for t in train + validation for w in t.warnings],
        }
        write_identification(
            result, out_dir, provenance, margin=config.estimation.consistency_margin
        )
    return result


@dataclasses.dataclass(frozen=True)
class ValidationReport:
    """Per-file and overall prediction errors of a parameter file on recordings."""

    per_file: dict[str, dict]
    overall: dict

    def as_dict(self) -> dict:
        return {"format": "physid.validation/1", "overall": self.overall, "files": self.per_file}


def run_validate(
    urdf: str | Path,
    params_path: str | Path,
    data: list[str | Path],
    *,
    config_path: str | Path | None = None,
    progress: Progress | None = None,
) -> ValidationReport:
    """``physid validate``: predict the torques of recordings with a ``params.json``."""
    note = progress or (lambda _message: None)
    config = load_config(config_path)
    model = robot_for(urdf, config)
    params = read_params(params_path)
    if params.gravity is not None:
        model = with_gravity(model, params.gravity)
    theta = standard_parameters(model, params)
    per_file, stacked_tau, stacked_prediction = {}, [], []
    for path, trajectory in zip(data, load_trajectories(list(data), model, config), strict=True):
        note(f"validating {Path(path).name}")
        observations = observations_of(model, [trajectory], config)
        prediction = observations.W @ theta
        per_file[str(path)] = fit_metrics(observations.tau, prediction).as_dict(model.joint_names)
        stacked_tau.append(observations.tau)
        stacked_prediction.append(prediction)
    overall = fit_metrics(np.concatenate(stacked_tau), np.concatenate(stacked_prediction))
    return ValidationReport(per_file, overall.as_dict(model.joint_names))
