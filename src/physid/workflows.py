"""End-to-end workflows shared by the CLI and the demo: files in, results out.

Nothing below this module imports it (docs/architecture.md layer 7).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.files.config import (
    AUTO_DEADBAND,
    IDENTIFY_GAINS,
    RECORDED,
    IdentifyConfig,
    load_config,
    lock_unlogged,
    require_known_payload,
    robot_for,
)
from physid.files.io import claim_output_dir
from physid.files.params_file import (
    ParamsFile,
    check_same_robot,
    read_params,
    require_sections,
    standard_parameters,
)
from physid.findings import Finding, Severity, as_dicts, unique
from physid.offline.checks.suspect import loaded_robot_findings, suspect_findings
from physid.offline.choose.delay import compensated
from physid.offline.codes import (
    GAIN_UNDECIDED,
    SIMULATED_MODEL,
    TORQUE_NOT_LOGGED,
    TORQUE_SCALE_OFF,
    UNLOGGED_LOCKED,
    UNTRAINED_MOTION,
    VALIDATION_FILTER,
)
from physid.offline.loads.drive_gains import DriveGainEstimate, identify_drive_gains
from physid.offline.loads.payload import PayloadResult, identify_payload, suspect_status
from physid.offline.observe.crossval import moving_in
from physid.offline.observe.prediction import (
    predict_recording,
    stacked_metrics,
    torque_scale_warning,
)
from physid.offline.observe.preprocessing import (
    Preprocessing,
    held_out_filter,
    is_resolved,
    preprocessing_from_dict,
    resolve_preprocessing,
)
from physid.offline.observe.windows import Recording, require_given_derivatives
from physid.offline.pipeline import identify
from physid.offline.result import IdentificationResult
from physid.offline.stages.base_fit import STILL_REASON
from physid.recordings.streamed import (
    open_recording,
    preview,
    read_once,
    should_stream,
    streamed_column_names,
)
from physid.recordings.tables import Table, source_name
from physid.recordings.trajectory import (
    Trajectory,
    load_segments,
    positions_named,
    split_by_fraction,
    trajectory_segments,
    unlogged_torque_joints,
)
from physid.report.identification import write_identification
from physid.robot.model import RobotModel, is_revolute, revolute_mask, with_gravity
from physid.robot.regressor import base_parameters
from physid.status import Status

Progress = Callable[[str], None]


def load_trajectories(
    paths: list[str | Path | Table], model: RobotModel, config: IdentifyConfig
) -> list[Recording]:
    """Read and validate every data file (or in-memory :class:`Table`) against the model.

    A CSV file too large to hold (:func:`physid.recordings.streamed.should_stream`) is validated in
    blocks
    and stays on disk (:class:`~physid.recordings.streamed.RecordingFile`) unless the configured
    method needs the whole recording at once (the Kalman smoothers, drive-gain identification).
    With ``drive_gains: identify`` the currents are read as they are (unit gains): the gains are
    estimated afterwards (:func:`identify_drive_gains`). A recording whose time stamps have gaps
    is split there into separate recordings (:func:`~physid.recordings.trajectory.
    trajectory_segments`): there may be more recordings than paths."""
    gains = config.drive_gains
    whole = config.filter.method.startswith("irwsm") or gains == IDENTIFY_GAINS
    if gains == IDENTIFY_GAINS:
        gains = {joint: 1.0 for joint in model.joint_names}
    options = {
        "drive_gains": gains,
        "allow_large_angles": config.allow_large_angles,
        "corrupt_samples": config.corrupt_samples,
        "angles_in_degrees": config.angle_unit == "degrees",
    }
    in_memory = {**options, "time_base": config.time_base}
    recordings: list[Recording] = []
    for path in paths:
        if isinstance(path, Table):
            recordings.extend(trajectory_segments(path, model, **in_memory))
        elif should_stream(path):
            recording = open_recording(path, model, **options)
            recordings.append(recording.in_memory() if whole else recording)
        else:
            recordings.extend(load_segments(path, model, **in_memory))
    if config.filter.method == "given":  # before any work, not in the first pass that reads them
        for recording in recordings:
            require_given_derivatives(recording, revolute_mask(model, recording.joint_names))
    return recordings


def logged_joints(items: list[str | Path | Table]) -> frozenset[str]:
    """The joints that any of these recordings (:func:`read_once`) gives positions of."""
    names: frozenset[str] = frozenset()
    for item in items:
        columns = item.columns if isinstance(item, Table) else streamed_column_names(item)
        names |= positions_named(columns)
    return names


def unlogged_lock_warning(added: dict[str, float | str]) -> str:
    """The warning for joints :func:`~physid.files.config.lock_unlogged` held still."""
    still = {j: v for j, v in added.items() if v != RECORDED}
    recorded = [j for j, v in added.items() if v == RECORDED]
    parts = []
    if still:
        listed = ", ".join(f"{j}: {v:g}" for j, v in still.items())
        parts.append(
            f"joints of the robot file in no recording held still, as 'locked: "
            f"{{{listed}}}' (rad or m) in the config would hold them: their bodies "
            "ride on their parents; give the positions they were at if not "
            "these"
        )
    if recorded:
        listed = ", ".join(f"{j}: {RECORDED}" for j in recorded)
        parts.append(
            f"mimic joints moved by their recorded positions, their torques not "
            f"fitted (locked: {{{listed}}})"
        )
    return "; ".join(parts)


def simulated_model_warnings(robot_file: str | Path, joints: tuple[str, ...]) -> list[str]:
    """What an MJCF's own simulation puts into the torques it logs for ``joints`` and a robot's
    drives do not (the file compiled once; none for a URDF):

    - a weight MuJoCo cancels by a passive force (``gravcomp`` bodies beyond a joint without
      ``actuatorgravcomp``): its actuator torques lack it, which the checks would otherwise
      read as 'no gravity in the torque' or, with only a few links compensated, as 'stamps
      that do not match the motion';
    - ``timestep x kv`` of apparent armature from velocity-gain actuators under an implicit
      integrator (:func:`physid.robot.mjcf.implicit_actuator_armature`; under position servos
      it can be ten times the armature the file declares)."""
    from physid.robot.mjcf import (
        compile_mjcf,
        gravity_compensated_joints,
        implicit_actuator_armature,
        is_mjcf,
    )

    if not is_mjcf(robot_file):
        return []
    mj = compile_mjcf(robot_file)
    warnings = []
    found = {j: b for j, b in gravity_compensated_joints(mj).items() if j in joints}
    if found:
        bodies = sorted({b for carried in found.values() for b in carried})
        shown = ", ".join(bodies[:4]) + (" ..." if len(bodies) > 4 else "")
        warnings.append(
            f"MuJoCo cancels the weight of {len(bodies)} bodies of the model file by a passive "
            f"force (gravcomp: {shown}), not through the actuators of {', '.join(found)}: "
            "torques logged from a simulation of it (qfrc_actuator, actuator_force) leave that "
            'weight out and are not its joint torques (set gravcomp="0", or '
            'actuatorgravcomp="true", to log them); physid fits the torques as logged, as a '
            "real robot's drives hold the weight"
        )
    extra = {j: v for j, v in implicit_actuator_armature(mj).items() if j in joints}
    if extra:
        listed = ", ".join(f"{joint} {value:.3g}" for joint, value in extra.items())
        warnings.append(
            "the model file simulates actuators with a velocity gain by an implicit integrator: "
            "torques logged from that simulation carry an apparent armature of timestep x kv "
            f"[kg m^2 or kg] ({listed}), which the identified armature includes; a real "
            "robot's drives add none"
        )
    return warnings


def unlogged_torque_warning(
    model: RobotModel, train: list[Recording]
) -> tuple[RobotModel, str] | None:
    """``(model, warning)`` for the joints whose torque holds one value in every row of every
    training recording while the robot moves (:func:`~physid.recordings.trajectory.
    unlogged_torque_joints`); None when there are none. A value other than 0 was not logged
    (a dead sensor, a column the logger never filled): those joints leave the model's fitted
    joints, as config ``fit_joints`` would leave them out. Fitted, such a column pulls every
    parameter towards a robot whose joint carries that torque, and every joint predicts
    worse. A torque of 0 may be
    a passive joint's true torque, the only equation of its motion: it is kept, and named;
    unless the joint itself never moves while the robot does. A passive joint moves with the
    robot; one held still is held by a force nobody logged (a gripper's motor, a brake, a
    stop), and a gripper's fingers are logged so (a Franka's joint states give their effort as
    0). Fitted, a still finger's zero force makes it a body of almost no mass with its centre
    of mass far outside the robot."""
    fitted_now = model.fitted_joints or model.joint_names  # a locked joint's column may be absent
    unlogged = [(j, v) for j, v in unlogged_torque_joints(train) if j in fitted_now]
    if not unlogged:
        return None
    still = {j for j, m in zip(model.joint_names, moving_in(train), strict=True) if not m}
    dead = {joint for joint, value in unlogged if value != 0.0}
    held = [joint for joint, value in unlogged if value == 0.0 and joint in still]
    zero = [joint for joint, value in unlogged if value == 0.0 and joint not in still]
    fitted = tuple(j for j in fitted_now if j not in dead and j not in held)
    parts = []
    if not fitted:
        listed = ", ".join(f"tau_{joint} ({value:g})" for joint, value in unlogged)
        raise InputError(
            f"no joint's torque was logged: {listed} hold one value in every "
            "row while the robot moves"
        )
    if dead:
        listed = ", ".join(f"tau_{joint} ({value:g})" for joint, value in unlogged if joint in dead)
        parts.append(
            f"{listed} holds one value in every row while the robot moves (a dead "
            "sensor or a column never filled): left out of the fit and of the "
            f"validation errors, as with fit_joints: [{', '.join(fitted)}] in the "
            "config"
        )
    if held:
        parts.append(
            f"{', '.join(f'tau_{joint}' for joint in held)} is 0 in every row while the robot "
            f"moves, and {', '.join(held)} never moves: a passive joint would move with the "
            "robot, so a force that was not logged holds it (a gripper's motor, a brake, a "
            "stop): left out of the fit and of the validation errors, as with fit_joints: "
            f"[{', '.join(fitted)}] in the config"
        )
    if zero:
        keep = [j for j in fitted if j not in zero]
        parts.append(
            f"{', '.join(f'tau_{joint}' for joint in zero)} is 0 in every row while the robot "
            "moves: fitted as a passive joint's torque; if it was not logged, give fit_joints: "
            f"[{', '.join(keep)}] in the config"
        )
    warning = "torque not logged? " + "; ".join(parts)
    changed = fitted != tuple(fitted_now)
    return dataclasses.replace(model, fitted_joints=fitted) if changed else model, warning


def run_identify(
    urdf: str | Path,
    data: list[str | Path],
    *,
    config_path: str | Path | None = None,
    config: IdentifyConfig | None = None,
    validate: list[str | Path] | None = None,
    out_dir: str | Path | None = None,
    progress: Progress | None = None,
    overwrite: bool = False,
    loaded: list[str | Path] | None = None,
) -> IdentificationResult:
    """``physid identify``: load, identify, validate, and write the outputs (if ``out_dir``).

    The run owns ``out_dir`` from start to end (:func:`physid.files.io.claim_output_dir`: a second
    run into it fails; a folder with files physid did not write is refused unless ``overwrite``).
    ``loaded``: recordings with the config's known ``payload``, for ``drive_gains: identify``.
    """
    options = {
        "config_path": config_path,
        "config": config,
        "validate": validate,
        "progress": progress,
        "loaded": loaded,
    }
    return identify_run(urdf, data, out_dir=out_dir, overwrite=overwrite, **options).result


@dataclasses.dataclass(frozen=True)
class Identified:
    """An identification with what its outputs record: the provenance and the config."""

    result: IdentificationResult
    provenance: dict
    config: IdentifyConfig

    def write(
        self, out_dir: str | Path, *, overwrite: bool | None = None, document: dict | None = None
    ) -> Path:
        """params.json and report.html into ``out_dir`` (all or nothing);
        ``document``: the params.json document already made of this run (its creation time)."""
        return write_identification(
            self.result,
            out_dir,
            self.provenance,
            margin=self.result.consistent.margin,
            total_mass_prior=self.config.estimation.prior_total_mass_std_relative,
            overwrite=overwrite,
            document=document,
        )


def identify_run(
    urdf: str | Path,
    data: list[str | Path],
    *,
    out_dir: str | Path | None = None,
    overwrite: bool = False,
    **options: object,
) -> Identified:
    """:func:`run_identify` returning the :class:`Identified` run (what the outputs record)."""
    if out_dir is None:
        return _identify_and_write(urdf, data, out_dir=None, overwrite=overwrite, **options)
    with claim_output_dir(out_dir, overwrite=overwrite):
        return _identify_and_write(urdf, data, out_dir=out_dir, overwrite=overwrite, **options)


def _identify_and_write(
    urdf: str | Path,
    data: list[str | Path],
    *,
    config_path: str | Path | None = None,
    config: IdentifyConfig | None = None,
    validate: list[str | Path] | None = None,
    out_dir: str | Path | None = None,
    progress: Progress | None = None,
    overwrite: bool = False,
    loaded: list[str | Path] | None = None,
) -> Identified:
    note = progress or (lambda _message: None)
    data = [data] if isinstance(data, str | Path | Table) else list(data)
    if not data:
        raise InputError("no training data: give at least one recording")
    config = config or load_config(config_path)
    require_known_payload(config, None if config_path is None else str(config_path))
    note("reading data")
    tables, held_out, with_load = (read_once(list(x)) for x in (data, validate or [], loaded or []))
    config, locked = lock_unlogged(urdf, config, logged_joints([*tables, *held_out, *with_load]))
    model = robot_for(urdf, config)
    train = load_trajectories(tables, model, config)
    validation = load_trajectories(held_out, model, config)
    gains = None
    if config.drive_gains == IDENTIFY_GAINS:
        note("drive gains")
        with_payload = load_trajectories(with_load, model, config)
        gains = identify_drive_gains(model, train, with_payload, config.payload, config.filter)
        train, validation = (
            [dataclasses.replace(t, tau=t.tau * gains.gains) for t in recordings]
            for recordings in (train, validation)
        )
    elif loaded:
        raise InputError("--loaded-data is for 'drive_gains: identify' (config)")
    if not validation and config.train_fraction is not None:
        pairs = [split_by_fraction(t, config.train_fraction) for t in train]
        train, validation = [p[0] for p in pairs], [p[1] for p in pairs]
    unlogged = None if config.fit_joints else unlogged_torque_warning(model, train)
    not_logged: list[str] = []
    if unlogged is not None:
        before = model.fitted_joints or model.joint_names
        model, _ = unlogged
        not_logged = [j for j in before if j not in (model.fitted_joints or model.joint_names)]
    with _numerical_failure_named(data):
        result = identify(model, train, config, validation=validation or None, progress=note)
        # what the inputs were (reading, the model file, joints held or left out), first
        read = unique(f for t in train + validation for f in t.warnings)
        first = [*read, *_input_findings(urdf, model, locked, unlogged, not_logged)]
        if first:
            result = dataclasses.replace(result, findings=(*first, *result.findings))
        if gains is not None:
            result = _with_drive_gains(result, gains)
    if result.theta is None:
        raise InputError(f"{result.message}; nothing was written")
    note(result.preprocessing.summary())
    provenance = {
        "urdf": str(urdf),
        "data": [source_name(p) for p in data],
        "validate": [source_name(p) for p in validate or []],
        "loaded_data": [source_name(p) for p in loaded or []],
        "config": None if config_path is None else str(config_path),
        # joints no recording logged, held still as config 'locked' would (lock_unlogged): the
        # commands that read this file hold them the same way
        "locked_unlogged": locked,
        # the config's locked joints: the commands that read this file hold them the same way
        # without the config
        "locked_by_config": {j: v for j, v in config.locked.items() if j not in locked},
        # joints whose torque column was no torque (unlogged_torque_warning): left out of the
        # fit, and out of the errors of the commands that read this file
        "torques_not_logged": not_logged,
        "train_fraction": None if validate else config.train_fraction,
        # once each: the parts of one file (split at gaps, or by train_fraction) share them
        "warnings_from_data": [f.message for f in read],
    }
    run = Identified(result, provenance, config)
    if out_dir is not None:
        note("writing report")
        run.write(out_dir, overwrite=overwrite)
    return run


def _input_findings(
    urdf: str | Path,
    model: RobotModel,
    locked: dict,
    unlogged: tuple[RobotModel, str] | None,
    not_logged: list[str],
) -> list[Finding]:
    """What the model file and the recordings make of the fit before it runs: a simulation's
    own effects in an MJCF, joints held still because no recording logs them, torque columns
    that are no torque."""
    found = [
        SIMULATED_MODEL(w)
        for w in simulated_model_warnings(urdf, model.fitted_joints or model.joint_names)
    ]
    if locked:
        found.append(UNLOGGED_LOCKED(unlogged_lock_warning(locked), names=list(locked)))
    if unlogged is not None:
        found.append(TORQUE_NOT_LOGGED(unlogged[1], names=not_logged))
    return found


@contextlib.contextmanager
def _numerical_failure_named(data: list) -> Iterator[None]:
    """A numerical failure of the estimators (which should end in a status instead) as one
    error line naming the recordings: LAPACK failures, and Rust solver panics (pyo3's
    PanicException is a BaseException)."""
    try:
        yield
    except BaseException as error:
        if not isinstance(error, np.linalg.LinAlgError) and type(error).__name__ != (
            "PanicException"
        ):
            raise
        raise InputError(
            f"identification failed numerically ({error}); check the torque and position "
            f"columns of {', '.join(source_name(p) for p in data)}"
        ) from None


def _with_drive_gains(
    result: IdentificationResult, gains: DriveGainEstimate
) -> IdentificationResult:
    """The result with its identified drive gains; a gain the recordings did not decide is a
    suspect finding (the data cannot support the scale)."""
    undecided = [GAIN_UNDECIDED(text) for text in gains.undecided()]
    fit = dataclasses.replace(result.fit, drive_gains=gains.as_dict())
    status = Status.SUSPECT if undecided and result.status is Status.OK else result.status
    return dataclasses.replace(
        result, fit=fit, findings=(*result.findings, *undecided), status=status
    )


@dataclasses.dataclass(frozen=True)
class ValidationReport:
    """Per-file and overall prediction errors of a parameter file on recordings."""

    per_file: dict[str, dict]
    overall: dict
    preprocessing: Preprocessing
    # what reading did to the recordings (time base rebuilt, duplicate rows, repaired samples)
    warnings_from_data: tuple[str, ...] = ()
    # params.json's torque delay: each logged torque paired with the motion this much earlier
    torque_delay_s: float = 0.0
    # what the checks found: the recordings as identify checks its own (a large error on data
    # with a wrong time scale or torque sign names it), a faster motion, untrained joints
    findings: tuple[Finding, ...] = ()
    # each joint's torque unit: "N m", or "N" for a prismatic joint (its RMSE is in it)
    units: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def suspect_reasons(self) -> tuple[str, ...]:
        return tuple(f.message for f in self.findings if f.severity is Severity.SUSPECT)

    @property
    def status(self) -> Status:
        """``suspect`` when the recordings look wrong, else ``ok``."""
        return Status.SUSPECT if self.suspect_reasons else Status.OK

    def as_dict(self) -> dict:
        return {
            "format": "physid.validation/1",
            "overall": self.overall,
            "files": self.per_file,
            "preprocessing": self.preprocessing.as_dict(),
            "scored_on": "raw measured torque at the recordings' own samples",
            "torque_delay_compensated_s": self.torque_delay_s,
            "warnings_from_data": list(self.warnings_from_data),
            "status": str(self.status),
            "findings": as_dicts(self.findings),
            "suspect_reasons": list(self.suspect_reasons),
            "torque_units": dict(self.units),
        }


def recorded_delay(
    params: ParamsFile, trajectories: list[Trajectory]
) -> tuple[list[Trajectory], float]:
    """The recordings with each torque paired with the motion as much earlier as ``params``'
    identification paired it (:attr:`~physid.files.params_file.ParamsFile.torque_delay_s`,
    :func:`~physid.offline.choose.delay.compensated`): the delay is part of the identified model.
    Returns them and the delay [s] (0: as recorded)."""
    delay_s = params.torque_delay_s
    if delay_s == 0.0:
        return trajectories, 0.0
    return [compensated(t, delay_s) for t in trajectories], delay_s


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


def _with_identified_gains(config: IdentifyConfig, params: ParamsFile) -> IdentifyConfig:
    """``drive_gains: identify`` in the config of a command that reads a ``params.json``
    (validate, payload) means the gains that identification estimated (``extra.drive_gains``):
    read with unit gains, the currents would be scored as torques (a 43x error on the
    identification's own training run, exit 0)."""
    if config.drive_gains != IDENTIFY_GAINS:
        return config
    gains = params.drive_gains()
    if not gains:
        raise InputError(
            f"{params.source}: the config says 'drive_gains: identify' but this file holds no "
            "identified drive gains (extra.drive_gains): give the params.json of that "
            "identification, or the gains themselves in the config"
        )
    return dataclasses.replace(config, drive_gains=gains, payload=None)


def identified_robot(
    urdf: str | Path, params_path: str | Path, config_path: str | Path | None
) -> tuple[IdentifyConfig, RobotModel, ParamsFile, np.ndarray]:
    """The robot of a ``params.json`` as it was identified: config (``drive_gains: identify``
    read as the file's identified gains), model (with the file's gravity, friction models and
    shapes and, unless the config sets one, its Coulomb deadband), the file, and its standard
    parameter vector."""
    config = load_config(config_path)
    params = read_params(params_path)
    config = _with_identified_gains(config, params)
    # the joints its identification held still: locked by its config, or logged by no recording
    held = params.held_joints()
    if held and config.joints is None:
        extra = {j: v for j, v in held.items() if j not in config.locked}
        config = dataclasses.replace(config, locked={**config.locked, **extra})
    # the friction models it was identified with (the parameter vector depends on them)
    model = robot_for(urdf, dataclasses.replace(config, friction=params.friction_models))
    require_sections(params)
    check_same_robot(model, params)
    if params.friction_models:
        model = dataclasses.replace(model, friction_shape=params.friction_shapes(model.joint_names))
    if params.gravity is not None:
        model = with_gravity(model, params.gravity)
    not_logged = (params.document.get("provenance") or {}).get("torques_not_logged") or []
    if isinstance(not_logged, list) and not_logged and not config.fit_joints:
        fitted = tuple(j for j in model.fitted_joints or model.joint_names if j not in not_logged)
        model = dataclasses.replace(model, fitted_joints=fitted or model.fitted_joints)
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
    ``filter`` section overrides it), or for a recording that moves faster than the training runs
    a filter for its own band (:func:`~physid.offline.observe.preprocessing.held_out_filter`); the
    torque is used as recorded, at every sample.
    """
    note = progress or (lambda _message: None)
    config, model, params, theta = identified_robot(urdf, params_path, config_path)
    trajectories = load_trajectories(list(data), model, config)
    trajectories, delay_s = recorded_delay(params, trajectories)
    preprocessing = validation_filter(
        params.document,
        config,
        config_path is not None,
        trajectories,
        model.layout.size,
        str(params_path),
    )
    if preprocessing.filter.method == "given":  # the identification's filter, not the config's
        for trajectory in trajectories:
            require_given_derivatives(trajectory, revolute_mask(model, trajectory.joint_names))
    note(preprocessing.summary())
    if delay_s:
        note(
            f"torque paired with the motion {1e3 * delay_s:.3g} ms earlier, as the "
            "identification compensated it"
        )
    per_file, fits, findings = {}, [], []
    for trajectory in trajectories:  # a file split at gaps of its stamps is several
        note(f"validating {Path(trajectory.source).name}")
        # as identify's own validation: a run faster than the training gets its own band
        options, moved = held_out_filter(
            preprocessing.filter, preprocessing.excitation_bandwidth_hz, trajectory
        )
        findings += [VALIDATION_FILTER(moved)] if moved else []
        fit = predict_recording(model, trajectory, options, theta, trajectory.source)
        per_file[trajectory.source] = fit.metrics.as_dict(model.joint_names)
        fits.append(fit)
    overall = stacked_metrics(fits)
    read = unique(f for t in trajectories for f in t.warnings)
    findings = [*read, *findings]
    data_warnings = tuple(f.message for f in read)
    untrained = untrained_motion_warnings(params, model, trajectories)
    findings += [UNTRAINED_MOTION(w) for w in untrained]
    scale = torque_scale_warning(fits)
    findings += [TORQUE_SCALE_OFF(scale)] if scale else []
    note("checking the recordings")
    findings += suspect_findings(model, [preview(t) for t in trajectories])  # streamed too
    units = {j: "N m" if is_revolute(model, j) else "N" for j in model.joint_names}
    return ValidationReport(
        per_file,
        overall.as_dict(model.joint_names),
        preprocessing,
        data_warnings,
        delay_s,
        tuple(findings),
        units,
    )


def untrained_motion_warnings(
    params: ParamsFile, model: RobotModel, recordings: list[Recording]
) -> list[str]:
    """The joints that did not move in the identification's training data (their friction and
    armature held at the URDF's: ``params.json`` ``joint_prior.held``) but move in
    ``recordings``: their terms are not the data's, and the per-joint errors would say so with
    no reason given (errors of tens of per cent on such a joint)."""
    held = (params.document.get("joint_prior") or {}).get("held") or {}
    still = {name.rsplit(".", 1)[0] for name, why in held.items() if why == STILL_REASON}
    if not still or not recordings:
        return []
    moving = moving_in(recordings)
    named = [j for k, j in enumerate(model.joint_names) if j in still and moving[k]]
    if not named:
        return []
    return [
        f"{', '.join(named)} did not move in the identification's training data but move here: "
        "their friction and armature are the URDF's (params.json joint_prior.held), so their "
        "torque is predicted as the URDF predicts it; identify on a recording that moves them"
    ]


def _base_uncertainty(model: RobotModel, document: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """The robot's base columns and their standard deviations as ``params.json`` records them,
    when its base parameters are those of this model (else None: not propagated)."""
    recorded = document.get("base_parameters") or {}
    base = base_parameters(model)
    if list(recorded.get("short_names") or []) != list(base.short_names):
        return None
    std = np.array([np.nan if v is None else float(v) for v in recorded.get("std", [])])
    return (base.independent, std) if len(std) == base.size else None


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
    with_payload, delay_s = recorded_delay(params, load_trajectories(list(loaded), model, config))
    without, _ = recorded_delay(params, load_trajectories(list(unloaded or []), model, config))
    preprocessing = validation_filter(
        params.document,
        config,
        config_path is not None,
        with_payload + without,
        model.layout.size,
        str(params_path),
    )
    result = identify_payload(
        model,
        theta,
        preprocessing.filter,
        with_payload,
        link,
        unloaded=without,
        mass_kg=mass_kg,
        robot_uncertainty=_base_uncertainty(model, params.document),
    )
    gains = config.drive_gains if isinstance(config.drive_gains, dict) else {}
    result = dataclasses.replace(result, drive_gains=dict(gains), torque_delay_s=delay_s)
    # what the recordings show, before what the payload fit concludes from them: the runs
    # without the payload are checked as validate checks any; those with it for torques without
    # gravity and for column mistakes named by their fix only (a heavy payload is a torque scale
    # the URDF lacks, so a column mistake in a loaded run would otherwise be read as the loaded
    # and unloaded runs swapped)
    data = suspect_findings(model, [preview(t) for t in without]) + loaded_robot_findings(
        model, [preview(t) for t in with_payload]
    )
    if not data or not result.consistent:
        return result
    findings = [*data, *result.findings]
    status, message = suspect_status(findings)
    return dataclasses.replace(result, status=status, message=message, findings=tuple(findings))
