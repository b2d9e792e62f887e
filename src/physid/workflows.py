"""End-to-end workflows shared by the CLI and the demo: files in, results out.

Nothing below this module imports it (DESIGN.md layer 7).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np

from physid.config import AUTO_DEADBAND, IdentifyConfig, load_config, robot_for
from physid.data import Trajectory, load_trajectory, split_by_fraction
from physid.errors import InputError
from physid.identify.payload import PayloadResult, identify_payload
from physid.identify.pipeline import IdentificationResult, identify
from physid.identify.prediction import predict_recording, stacked_metrics
from physid.identify.preprocessing import (
    Preprocessing,
    is_resolved,
    preprocessing_from_dict,
    resolve_preprocessing,
)
from physid.model import RobotModel, with_gravity
from physid.params_file import ParamsFile, read_params, standard_parameters
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
    note(result.preprocessing.summary())
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
            result,
            out_dir,
            provenance,
            margin=config.estimation.consistency_margin,
            total_mass_prior=config.estimation.prior_total_mass_std_relative,
        )
    return result


@dataclasses.dataclass(frozen=True)
class ValidationReport:
    """Per-file and overall prediction errors of a parameter file on recordings."""

    per_file: dict[str, dict]
    overall: dict
    preprocessing: Preprocessing

    def as_dict(self) -> dict:
        return {
            "format": "physid.validation/1",
            "overall": self.overall,
            "files": self.per_file,
            "preprocessing": self.preprocessing.as_dict(),
            "scored_on": "raw measured torque at the recordings' own samples",
        }


def validation_filter(
    params_document: dict,
    config: IdentifyConfig,
    config_given: bool,
    trajectories: list[Trajectory],
    n_parameters: int,
    source: str,
) -> Preprocessing:
    """The filter ``validate`` differentiates with: the training one recorded in ``params.json``,
    unless a config's ``filter`` section overrides it (then resolved on these recordings)."""
    recorded = params_document.get("preprocessing")
    overridden = config_given and config.filter != IdentifyConfig().filter
    if recorded is not None and not overridden:
        return preprocessing_from_dict(recorded, source)
    options = config.filter
    if is_resolved(options):
        return Preprocessing(options, None, ("filter from the config",))
    resolved = resolve_preprocessing(options, trajectories, n_parameters)
    return Preprocessing(
        resolved.filter,
        resolved.excitation_bandwidth_hz,
        (*resolved.notes, "no training filter in the parameter file: resolved on these data"),
    )


def identified_robot(
    urdf: str | Path, params_path: str | Path, config_path: str | Path | None
) -> tuple[IdentifyConfig, RobotModel, ParamsFile, np.ndarray]:
    """The robot of a ``params.json`` as it was identified: config, model (with the file's
    gravity and, unless the config sets one, its Coulomb deadband), the file, and its standard
    parameter vector."""
    config = load_config(config_path)
    model = robot_for(urdf, config)
    params = read_params(params_path)
    if params.gravity is not None:
        model = with_gravity(model, params.gravity)
    if config.coulomb_deadband == AUTO_DEADBAND:  # the friction model it was identified with
        model = dataclasses.replace(
            model, coulomb_deadband=params.coulomb_deadband(model.joint_names)
        )
    return config, model, params, standard_parameters(model, params)


def run_validate(
    urdf: str | Path,
    params_path: str | Path,
    data: list[str | Path],
    *,
    config_path: str | Path | None = None,
    progress: Progress | None = None,
) -> ValidationReport:
    """``physid validate``: predict the raw torques of recordings with a ``params.json``.

    Positions are differentiated with the training filter recorded in ``params.json`` (a config's
    ``filter`` section overrides it); the measured torque is used as recorded, at every sample.
    """
    note = progress or (lambda _message: None)
    config, model, params, theta = identified_robot(urdf, params_path, config_path)
    trajectories = load_trajectories(list(data), model, config)
    preprocessing = validation_filter(
        params.document,
        config,
        config_path is not None,
        trajectories,
        model.layout.size,
        str(params_path),
    )
    note(preprocessing.summary())
    per_file, fits = {}, []
    for path, trajectory in zip(data, trajectories, strict=True):
        note(f"validating {Path(path).name}")
        fit = predict_recording(model, trajectory, preprocessing.filter, theta, str(path))
        per_file[str(path)] = fit.metrics.as_dict(model.joint_names)
        fits.append(fit)
    overall = stacked_metrics(fits)
    return ValidationReport(per_file, overall.as_dict(model.joint_names), preprocessing)


def run_payload(
    urdf: str | Path,
    params_path: str | Path,
    loaded: list[str | Path],
    link: str,
    *,
    unloaded: list[str | Path] | None = None,
    mass_kg: float | None = None,
    config_path: str | Path | None = None,
) -> PayloadResult:
    """``physid payload``: the payload on ``link`` from recordings with it (and, optionally,
    without it) and the robot's ``params.json``, differentiated with the training filter."""
    config, model, params, theta = identified_robot(urdf, params_path, config_path)
    with_payload = load_trajectories(list(loaded), model, config)
    without = load_trajectories(list(unloaded or []), model, config)
    preprocessing = validation_filter(
        params.document,
        config,
        config_path is not None,
        with_payload + without,
        model.layout.size,
        str(params_path),
    )
    return identify_payload(
        model,
        theta,
        preprocessing.filter,
        with_payload,
        link,
        unloaded=without,
        mass_kg=mass_kg,
    )
