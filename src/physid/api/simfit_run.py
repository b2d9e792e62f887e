"""API face of ``physid simfit``: a MuJoCo model's joint terms, actuator gains and command delay
tuned so that it simulates like the logged robot (docs/simfit.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from physid.api.recording import sources
from physid.api.results import Named, Outcome, Parameter
from physid.api.robot_runs import (
    SIMFIT,
    SIMFIT_ACTUATOR_FIELDS,
    SIMFIT_FIELDS,
    SIMFIT_MAX_EVALUATIONS,
)
from physid.errors import InputError, check_numbers
from physid.findings import Finding
from physid.status import Status
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.api.recording import DataLike, PathLike


def simfit_drive_gains(config_path: PathLike) -> dict[str, float]:
    """The drive gains of an identify config, for ``simfit_tune(drive_gains=...)``."""
    from physid.files.config import IDENTIFY_GAINS, load_config

    config = load_config(config_path)
    if config.angle_unit != "radians":  # simfit reads q_ and ctrl_ as the MJCF's (radians)
        raise InputError(
            f"angle_unit: {config.angle_unit} is not applied by simfit (its recordings' q_ and "
            "ctrl_ columns are read in the MJCF's radians): convert them first",
            source=str(config_path),
        )
    gains = config.drive_gains
    if gains == IDENTIFY_GAINS:
        raise InputError(
            "'drive_gains: identify': simfit does not estimate drive gains; give them in the "
            "config (the identification's params.json holds them in extra.drive_gains)",
            source=str(config_path),
        )
    return dict(gains)


@one_blas_thread
def simfit_tune(
    model: PathLike,
    data: DataLike,
    *,
    validate: DataLike | None = None,
    fit: str | Sequence[str] = SIMFIT_FIELDS,
    delay: bool = True,
    window: float = 0.5,
    max_evaluations: int = SIMFIT_MAX_EVALUATIONS,
    topic: str | None = None,
    episodes: Sequence[int] = (),
    progress: Callable[[str], None] | None = None,
    display: Callable[[], AbstractContextManager[Callable[[str], None]]] | None = None,
    drive_gains: Mapping[str, float] | None = None,
    coarse_windows: int = 0,
    hold: str | Sequence[str] = (),
) -> SimfitRun:
    """Tune a MuJoCo model so that it simulates like the logged robot (``physid simfit``).

    Args:
        model: The MJCF file to tune; its joints are matched to the recordings' columns by name.
        data: The training recording(s): files, ROS 2 bags, LeRobot datasets or
            :class:`~physid.api.recording.Recording` objects with ``t``, ``q_<joint>`` and
            ``tau_<joint>`` (or ``ctrl_<actuator>`` commands) columns.
        validate: The held-out recording(s) the tuned model is judged on (None: no judgement).
        fit: The terms to tune, a name or names: joint ``damping``, ``armature``,
            ``frictionloss``; with ``ctrl_`` recordings the actuators' ``kp``, ``kv``, ``gain``.
        delay: Estimate a constant delay between the logged commands and the motion.
        window: The length of the shooting windows [s].
        max_evaluations: The budget of residual evaluations (each a batched rollout).
        topic: A ROS 2 bag's sensor_msgs/JointState topic (None: its only one).
        episodes: A LeRobot dataset's episodes to read, each a recording (empty: all).
        progress: Receives each step's name (and, prefixed ``note: ``, what to read at once).
        display: Opened around the solve instead of ``progress`` (the command line's bar); it
            yields the callable that receives the steps.
        drive_gains: N m/A per joint (joint side): the motor currents ``i_<joint>`` of
            recordings that log no torque become ``tau_<joint>``.
        coarse_windows: Fit first on about that many windows when there are twice as many (0:
            one stage; docs/simfit.md).
        hold: Tuned joints (every term of each, and of the actuators driving it) or single terms
            (``joint.field``, ``actuator.field``) kept at the file's values, a name or names.

    Returns:
        A :class:`SimfitRun`: ``status`` (ok, not_converged, stalled, worse_than_urdf,
        worse_for_some_joints, suspect or numerical_failure), ``findings`` (codes SF1xx-SF3xx),
        ``parameters`` (each tuned term with its std, source and unit), ``to_dict()``
        (simfit.json without its notes), ``raw`` (the :class:`~physid.simfit.fit.SimfitResult`);
        ``save(out)`` writes simfit.json, model_tuned.xml and, with ``validate``, rollouts.png.
    """
    from physid.simfit.fit import fit_simulator

    check_numbers(
        SIMFIT,
        {"window": window, "max_evaluations": max_evaluations, "coarse_windows": coarse_windows},
    )
    chosen, hold_names = _terms(fit), _names(hold)
    runs = _read_runs(
        model, data, validate, topic, episodes, drive_gains, window, chosen, hold_names
    )
    if display is None:
        display = partial(nullcontext, progress or (lambda _message: None))
    options = {
        "fields": chosen,
        "delay": delay,
        "window_s": window,
        "hold": hold_names,
        "max_evaluations": max_evaluations,
        "coarse_windows": coarse_windows,
    }
    with display() as note:
        result = fit_simulator(
            runs.compiled, runs.train, runs.held, note=note, joints=runs.joints, **options
        )
    return _run_of(result, runs, model, data, validate)


def _run_of(result: Any, runs: _Runs, model: PathLike, data: Any, validate: Any) -> SimfitRun:
    """The :class:`SimfitRun` of a fit (a :class:`~physid.simfit.fit.SimfitResult`): its
    findings and status with the column mistakes and idle actuators of ``runs``, and the
    inputs in its document."""
    result.findings = (*runs.mistakes, *result.findings, *runs.idle_finding())
    if runs.mistakes:  # the data first: what the fit made of them follows
        messages = [f.message for f in runs.mistakes]
        result.status, result.message = Status.SUSPECT, "; ".join([*messages, result.message])
    document = result.to_dict()
    document["inputs"] = {
        "model": str(model),
        "data": [_name(d) for d in _items(data)],
        "validate": [_name(v) for v in _items(validate)],
    }
    parameters = Named(
        {
            name: Parameter(entry["value"], entry["std"], entry["source"], entry["unit"])
            for name, entry in result.parameters.items()
        }
    )
    return SimfitRun(
        result.status,
        result.message,
        parameters,
        document,
        result,
        _no_write,
        notes=result.notes,
        findings=result.findings,
        model=Path(model),
        held=runs.held,
        held_still=runs.still,
    )


def _names(given: str | Sequence[str]) -> tuple[str, ...]:
    """A name or names as a tuple of names."""
    return (given,) if isinstance(given, str) else tuple(given)


def _terms(fit: str | Sequence[str]) -> tuple[str, ...]:
    """The terms of ``fit``, each known (one error line naming the unknown ones)."""
    chosen = _names(fit)
    known = SIMFIT_FIELDS + SIMFIT_ACTUATOR_FIELDS
    unknown = [f for f in chosen if f not in known]
    if unknown or not chosen:
        raise InputError(
            f"--fit: unknown term(s) {unknown or list(chosen)}; choose from {', '.join(known)}"
        )
    return chosen


@dataclass(frozen=True)
class _Runs:
    """The model compiled for the fit and the recordings read as its runs: the joints they log,
    those no recording logs (held still) and the actuators that drive only those (idle), and
    the column mistakes identify's check names on the training runs."""

    compiled: Any  # mujoco.MjModel
    joints: tuple[str, ...]
    still: tuple[str, ...]
    idle: tuple[str, ...]
    train: list
    held: list
    mistakes: tuple[Finding, ...]

    def idle_finding(self) -> tuple[Finding, ...]:
        """:data:`~physid.simfit.codes.ACTUATORS_IDLE` naming the idle actuators."""
        from physid.simfit.codes import ACTUATORS_IDLE

        if not self.idle:
            return ()
        plural = "s" if len(self.idle) > 1 else ""
        return (
            ACTUATORS_IDLE(
                "left out of the fit's simulations with the joints they drive: "
                f"actuator{plural} {', '.join(self.idle)}",
                names=self.idle,
            ),
        )


def _read_runs(  # noqa: ANN001 - the data arguments of simfit_tune
    model,
    data,
    validate,
    topic,
    episodes,
    drive_gains,
    window: float,
    chosen: tuple[str, ...],
    hold_names: tuple[str, ...],
) -> _Runs:
    """Compile the model and read the recordings as its runs; every refusal (InputError) before
    the progress display opens."""
    from physid.recordings.logs import check_episodes, expand_log_lists
    from physid.recordings.trajectory import with_torques_from_currents
    from physid.robot.mjcf import compile_mjcf, idle_actuators, is_mjcf
    from physid.simfit.fit import (
        check_drive,
        check_runs,
        load_tables,
        model_actuators,
        model_joints,
        unlogged_joints,
    )
    from physid.simfit.problem import held_parameters, run_from_table, tuned_actuators

    episodes = check_episodes(episodes)
    if not is_mjcf(model):
        raise InputError(f"{model}: simfit tunes a MuJoCo model: give an MJCF file")
    compiled = compile_mjcf(model)
    given = (list(_items(data)), list(_items(validate)))
    train, held = (load_tables(sources(runs)) for runs in expand_log_lists(given, topic, episodes))
    joints = model_joints(compiled)  # bad data: one error line before any progress display
    still = unlogged_joints(compiled, joints, [*train, *held], str(model))
    idle = idle_actuators(compiled, still)  # no recording commands them
    if still:  # a gripper beside an arm's log: held at its reference position
        compiled = compile_mjcf(model, held_still=still)
        joints = tuple(j for j in joints if j not in still)
    actuators = model_actuators(compiled)
    gains = dict(drive_gains or {})
    train = [with_torques_from_currents(table, joints, gains) for table in train]
    held = [with_torques_from_currents(table, joints, gains) for table in held]
    mistakes = () if still else _column_mistakes(model, train, joints)
    train = [run_from_table(table, joints, actuators) for table in train]
    held = [run_from_table(table, joints, actuators) for table in held]
    check_runs(compiled, [*train, *held], window, joints)
    check_drive(compiled, [*train, *held], chosen)
    held_parameters(  # a bad --hold: one error line before the progress display
        compiled,
        hold_names,
        joints,
        tuple(f for f in chosen if f in SIMFIT_FIELDS),
        tuned_actuators(compiled, tuple(f for f in chosen if f in SIMFIT_ACTUATOR_FIELDS)),
    )
    return _Runs(compiled, joints, tuple(still), tuple(idle), train, held, mistakes)


def _column_mistakes(model: PathLike, tables: list, joints: tuple[str, ...]) -> tuple[Finding, ...]:
    """identify's column fixes (:func:`physid.offline.checks.suspect.loaded_robot_findings`,
    typed ``ID512`` findings) on the training runs that log every joint's torque: the fit
    itself turns a torque logged with its sign flipped into absurd joint terms, status ``ok``.
    Runs or models it cannot read as identify would (a joint kind it refuses) are not judged."""
    from physid.files.config import parse_config, robot_for
    from physid.offline.checks.suspect import loaded_robot_findings
    from physid.recordings.trajectory import trajectory_from_table

    torques = [t for t in tables if all(f"tau_{j}" in t.columns for j in joints)]
    if not torques:
        return ()
    try:
        robot = robot_for(model, parse_config({}))
        if set(robot.joint_names) != set(joints):
            return ()
        trajectories = [trajectory_from_table(table, robot) for table in torques]
    except InputError:
        return ()
    # the column fixes only: torques without gravity are no part of simfit's verdict
    return tuple(loaded_robot_findings(robot, trajectories, absent_gravity=False))


def _items(data: DataLike | None) -> list:
    """A data argument as a list of its items (a path or a recording alone is one item)."""
    from physid.api.recording import Recording

    if data is None:
        return []
    return [data] if isinstance(data, str | Path | Recording) else list(data)


def _name(item: Any) -> str:
    """A data item as simfit.json's inputs name it: a path as given, a recording by name."""
    from physid.recordings.tables import source_name

    return str(item) if isinstance(item, str | Path) else source_name(sources(item)[0])


def _no_write(_folder: Path) -> None:  # SimfitRun.save writes
    raise NotImplementedError


@dataclass(frozen=True)
class SimfitRun(Outcome):
    """:func:`simfit_tune`'s result. The tuned MJCF keeps the given file's relative paths when it is
    written beside it and makes them absolute elsewhere, so the files (and the notes) depend on
    the output folder: :meth:`notes_for`."""

    model: Path = Path()
    held: list = field(default_factory=list, repr=False)
    held_still: tuple[str, ...] = ()  # joints no recording logs (.simfit.fit.unlogged_joints)

    def notes_for(self, out: str | Path) -> list[str]:
        """The notes simfit.json records when written into ``out``: what writing the tuned MJCF
        there changed, and what the check of the runs' stamps said (as text)."""
        return self._outputs(Path(out))[0]["notes"]

    def _outputs(self, out: Path) -> tuple[dict, str]:
        from physid.export.mjcf_edit import with_joint_values
        from physid.simfit.fit import tuned_actuator_values, tuned_joint_values

        result = self.raw
        text, notes = with_joint_values(
            self.model,
            tuned_joint_values(result),
            out / "model_tuned.xml",
            tuned_actuator_values(result),
            result.tuned_model,
        )
        return self.document | {"notes": [*notes, *result.notes]}, text

    def save(self, out: str | Path) -> Path:
        """Write simfit.json, model_tuned.xml and, with held-out runs, rollouts.png into
        ``out`` (all or nothing)."""
        from physid.files.io import atomic_output_dir, to_json_text

        out = Path(out)
        document, text = self._outputs(out)
        with atomic_output_dir(out) as staging:
            (staging / "simfit.json").write_text(to_json_text(document), encoding="utf-8")
            (staging / "model_tuned.xml").write_text(text, encoding="utf-8")
            if self.held:
                _figure(
                    self.model, self.raw, self.held[0], staging / "rollouts.png", self.held_still
                )
        return out


def _figure(
    model: Path, result: Any, run: Any, path: Path, held_still: tuple[str, ...] = ()
) -> None:
    """rollouts.png: the first held-out run against the model as given and as tuned."""
    from physid.robot.mjcf import compile_mjcf
    from physid.simfit.figure import plot_rollouts
    from physid.simfit.fit import joint_indices, model_joints

    before = compile_mjcf(model, held_still=held_still)
    joints = tuple(j for j in model_joints(before) if j not in held_still)
    dofs, qpos = joint_indices(before, joints, str(model))
    plot_rollouts(before, result.tuned_model, run, joints, dofs, qpos, result.delay_s, path)
