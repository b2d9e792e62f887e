"""API faces of the serial-robot tools around identify: ``payload``, ``excite``, ``export`` and
``simfit`` (what ``physid payload|excite|export|simfit`` run). Each returns a
:class:`~physid.api.results.Result`; heavy imports happen inside the functions."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from physid.api.recording import sources
from physid.api.results import Named, Outcome, Parameter
from physid.errors import Bound, InputError, check_numbers
from physid.findings import Finding, as_dicts
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.api.recording import DataLike, PathLike

SIMFIT_FIELDS = ("damping", "armature", "frictionloss")
# the model's actuators, driven by ctrl_<actuator> columns (physid.simfit.problem)
SIMFIT_ACTUATOR_FIELDS = ("kp", "kv", "gain")
# The numbers each of these faces accepts, one table per command: the CLI's option callbacks
# (physid.cli.payload_commands, excite_commands, simfit_commands) and the functions below check
# them through physid.errors.in_range, so a bad number is the same one-line error from either.
PAYLOAD: dict[str, Bound] = {"mass": Bound(0.0, 1e4, True)}  # [kg]
EXCITE: dict[str, Bound] = {
    "duration": Bound(1e-3, 1e6),  # [s]
    "harmonics": Bound(1, 50, integer=True),
    "base_frequency": Bound(1e-4, 1e3),  # [Hz]
    "seed": Bound(0, 2**32 - 1, integer=True),  # numpy's default_rng takes no negative seed
}
SIMFIT: dict[str, Bound] = {
    "window": Bound(0.05, 10.0),  # [s]
    "max_evaluations": Bound(5, 10_000, integer=True),
    "coarse_windows": Bound(0, 1_000_000, integer=True),
}
# simfit's default budget (as physid.simfit.fit.fit_simulator's, which the API does not import
# at start-up): 60 stopped the real UR10e fit 4 evaluations before it met ftol, at the same values
SIMFIT_MAX_EVALUATIONS = 100


@one_blas_thread
def payload(
    urdf: PathLike,
    params: PathLike,
    data: DataLike,
    link: str,
    *,
    unloaded: DataLike | None = None,
    mass: float | None = None,
    config: PathLike | None = None,
) -> Outcome:
    """Estimate the 10 inertial parameters of a payload on ``link`` of a robot identified
    without it (``physid payload``): ``data`` are recordings with the payload, ``unloaded``
    optional ones without it, ``mass`` a known mass [kg]. ``save(out)`` writes payload.json;
    ``raw`` is the :class:`physid.offline.loads.payload.PayloadResult`."""
    from physid.files.io import write_json_atomic
    from physid.workflows import run_payload

    check_numbers(PAYLOAD, {"mass": mass})  # before the recordings are read
    result = run_payload(
        urdf,
        params,
        sources(data),
        link,
        unloaded=sources(unloaded),
        mass_kg=mass,
        config_path=config,
    )
    if not result.consistent:  # as identify: nothing usable to write
        raise InputError(f"{result.message}; nothing was written")
    document = result.as_dict()

    def write(folder: Path) -> None:
        write_json_atomic(folder / "payload.json", document)

    inertia = result.inertia_about_com_in_link
    parameters = Named(
        {
            "mass": Parameter(result.mass, result.std["mass"], result.source["mass"], "kg"),
            "com": Parameter(result.com_in_link, result.std["com"], result.source["com"], "m"),
            "inertia": Parameter(
                inertia, result.std["inertia"], result.source["inertia"], "kg m^2"
            ),
        }
    )
    message = f"payload on {result.link} (joint {result.joint}): mass {result.mass:.4f} kg"
    return Outcome(result.status, message, parameters, document, result, write,
                   warnings=result.warnings, findings=result.findings)  # fmt: skip


@one_blas_thread
def excite_design(
    urdf: PathLike,
    *,
    config: PathLike | None = None,
    duration: float | None = None,
    harmonics: int = 5,
    base_frequency: float | None = None,
    criterion: str = "cond",
    seed: int = 0,
    verbose: bool = False,
    progress: Callable[[str], None] | None = None,
) -> ExciteResult:
    """Design an excitation trajectory for the robot of ``urdf`` (``physid excite``): a Fourier
    series per joint optimised for ``criterion`` (``cond`` or ``logdet``) under the limits.
    ``save(out)`` writes the trajectory CSV ``out`` and its summary JSON beside it."""
    from physid.excite.workflow import design_run

    numbers = {"duration": duration, "harmonics": harmonics, "base_frequency": base_frequency}
    check_numbers(EXCITE, numbers | {"seed": seed})  # before the model is loaded
    run = design_run(
        urdf,
        config_path=config,
        duration_s=duration,
        harmonics=harmonics,
        base_frequency_hz=base_frequency,
        criterion=criterion,
        seed=seed,
        verbose=verbose,
        progress=progress,
    )
    result = run.result
    message = (
        f"condition number {result.start_quality.condition_number:.4g} -> "
        f"{result.quality.condition_number:.4g}"
    )
    return ExciteResult(result.status, message, Named(), run.summary, result, run.write, False)


@dataclass(frozen=True)
class ExciteResult(Outcome):
    """:func:`excite_design`'s result: ``save(out, summary=None)`` writes the trajectory CSV and the
    summary (default: ``out`` with the suffix .json)."""

    def save(self, out: str | Path, summary: str | Path | None = None) -> Path:
        """Write the trajectory CSV ``out`` and its summary JSON (atomically)."""
        return self.write(Path(out), summary)


@one_blas_thread
def export_model(
    params: PathLike, urdf: PathLike, out: PathLike, *, fmt: str | None = None
) -> Outcome:
    """Write the robot of ``urdf`` with the parameters of ``params`` as URDF or MJCF to ``out``
    (``physid export``; format from ``fmt`` or the suffix). The result's ``message`` and
    ``notes`` list what the format cannot hold; ``to_dict()`` names the file and the notes."""
    from physid.export import format_for, write_export

    def write(path: Path) -> None:
        write_export(params, urdf, path, fmt)

    notes = write_export(params, urdf, out, fmt)
    document = {"params": str(params), "model": str(urdf), "out": str(out)}
    document |= {"format": format_for(out, fmt), "not_exported": notes}
    message = "; ".join(f"not exported: {note}" for note in notes) or "everything exported"
    from physid.export.codes import NOT_EXPORTED, PRIOR_BODIES
    from physid.files.params_file import read_params

    parsed = read_params(params)
    status, warnings = _identification_status(params, parsed.document)
    decided = parsed.prior_note()  # the exporters mark those bodies in the file
    findings = (*(NOT_EXPORTED(n) for n in notes), *warnings)
    findings += (PRIOR_BODIES(decided),) if decided else ()
    document["identification_status"] = status
    document["status"], document["findings"] = status, as_dicts(findings)
    return Outcome(status, message, Named(), document, None, write, False, tuple(notes),
                   tuple(f.message for f in warnings), findings=findings)


def _identification_status(params: PathLike, document: dict) -> tuple[str, tuple[Finding, ...]]:
    """The status params.json records, and a finding when it is not ``ok``: an export of a
    suspect identification (a probe's LeRobot arm with its torques in mA: a 94.9 kg elbow on a
    0.15 kg link) is a simulator of what that identification found, and the exported file
    cannot say so itself. ``document``: the params.json at ``params``, as read."""
    status = str(document.get("status") or "ok")
    if status == "ok":
        return status, ()
    reasons = [str(r) for r in document.get("suspect_reasons") or []]
    why = f": {reasons[0]}" + (f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else "") \
        if reasons else ""  # fmt: skip
    from physid.export.codes import NOT_OK_SOURCE

    return status, (NOT_OK_SOURCE(
        f"{params}: the identification's status is '{status}'{why}; the exported model carries "
        "what it found: read params.json and the report before simulating with it",
        names=(str(params),)),)


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
    """Tune a MuJoCo model's joint damping, armature and frictionloss, and with recordings
    that log ``ctrl_<actuator>`` commands its position servos' ``kp``/``kv`` and motors'
    ``gain`` (``fit``: names, or one comma-separated string) and a command delay so that it
    simulates like the logged robot
    (``physid simfit``). ``data``/``validate``: recording files, ROS 2 bags or LeRobot datasets
    (``topic``, ``episodes``) or :class:`~physid.api.recording.Recording` objects.
    ``progress`` receives each step's name; ``display`` (the command line's progress bar) is
    opened around the solve instead. ``drive_gains`` (N m/A per joint, joint side) turn motor
    currents ``i_<joint>`` into the torques of recordings that log none. ``coarse_windows``: fit
    first on about that many windows when there are twice as many (0: one stage; see
    docs/simfit.md). ``hold``: tuned joints (every term of each, and of the actuators driving
    it) or single terms (``joint.field``, ``actuator.field``) kept at the file's values (names,
    or one comma-separated string). ``save(out)`` writes simfit.json, model_tuned.xml and,
    with ``validate``, rollouts.png."""
    from physid.recordings.logs import check_episodes, expand_log_lists
    from physid.recordings.trajectory import with_torques_from_currents
    from physid.robot.mjcf import compile_mjcf, idle_actuators, is_mjcf
    from physid.simfit.fit import (
        check_drive,
        check_runs,
        fit_simulator,
        load_tables,
        model_actuators,
        model_joints,
        unlogged_joints,
    )
    from physid.simfit.problem import held_parameters, run_from_table, tuned_actuators

    check_numbers(SIMFIT, {"window": window, "max_evaluations": max_evaluations,
                           "coarse_windows": coarse_windows})  # fmt: skip
    episodes = check_episodes(episodes)
    given = list(_items(data))
    held_given = list(_items(validate))
    text = fit if isinstance(fit, str) else ",".join(fit)
    chosen = tuple(f.strip() for f in text.split(",") if f.strip())
    hold_text = hold if isinstance(hold, str) else ",".join(hold)
    hold_names = tuple(h.strip() for h in hold_text.split(",") if h.strip())
    known = SIMFIT_FIELDS + SIMFIT_ACTUATOR_FIELDS
    unknown = [f for f in chosen if f not in known]
    if unknown or not chosen:
        raise InputError(
            f"--fit: unknown term(s) {unknown or [text]}; choose from {', '.join(known)}"
        )
    if not is_mjcf(model):
        raise InputError(f"{model}: simfit tunes a MuJoCo model: give an MJCF file")
    compiled = compile_mjcf(model)
    train, held = (load_tables(sources(runs))
                   for runs in expand_log_lists((given, held_given), topic, episodes))  # fmt: skip
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
    mistakes = [] if still else _column_mistakes(model, train, joints)
    train = [run_from_table(table, joints, actuators) for table in train]
    held = [run_from_table(table, joints, actuators) for table in held]
    check_runs(compiled, [*train, *held], window, joints)
    check_drive(compiled, [*train, *held], chosen)
    held_parameters(  # a bad --hold: one error line before the progress display
        compiled, hold_names, joints, tuple(f for f in chosen if f in SIMFIT_FIELDS),
        tuned_actuators(compiled, tuple(f for f in chosen if f in SIMFIT_ACTUATOR_FIELDS)),
    )  # fmt: skip
    if display is None:
        display = partial(nullcontext, progress or (lambda _message: None))
    with display() as note:
        result = fit_simulator(
            compiled,
            train,
            held,
            fields=chosen,
            delay=delay,
            window_s=window,
            max_evaluations=max_evaluations,
            note=note,
            coarse_windows=coarse_windows,
            joints=joints,
            hold=hold_names,
        )
    if idle:
        result.notes += (f"left out of the fit's simulations with the joints they drive: "
                         f"actuator{'s' if len(idle) > 1 else ''} {', '.join(idle)}",)  # fmt: skip
    if mistakes:  # the data first: what the fit made of them follows
        result.status, result.message = "suspect", "; ".join([*mistakes, result.message])
    document = result.to_dict()
    document["inputs"] = {
        "model": str(model),
        "data": [_name(d) for d in given],
        "validate": [_name(v) for v in held_given],
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
        model=Path(model),
        held=held,
        held_still=still,
    )


def _column_mistakes(model: PathLike, tables: list, joints: tuple[str, ...]) -> list[str]:
    """identify's column fixes (:func:`physid.offline.checks.suspect.loaded_robot_reasons`) on the
    training runs that log every joint's torque: a torque logged with its sign flipped drove
    the test arm's elbow into a damping of 22 N m s/rad (truth 0.15) with status ``ok``. Runs
    or models it cannot read as identify would (a joint kind it refuses) are not judged."""
    from physid.files.config import parse_config, robot_for
    from physid.offline.checks.suspect import loaded_robot_reasons
    from physid.recordings.trajectory import trajectory_from_table

    torques = [t for t in tables if all(f"tau_{j}" in t.columns for j in joints)]
    if not torques:
        return []
    try:
        robot = robot_for(model, parse_config({}))
        if set(robot.joint_names) != set(joints):
            return []
        trajectories = [trajectory_from_table(table, robot) for table in torques]
    except InputError:
        return []
    # the column fixes only: torques without gravity were never part of simfit's verdict
    return loaded_robot_reasons(robot, trajectories, absent_gravity=False)


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
        """The notes simfit.json records when written into ``out``."""
        return self._outputs(Path(out))[0]["notes"]

    def _outputs(self, out: Path) -> tuple[dict, str]:
        from physid.export.mjcf_edit import with_joint_values
        from physid.simfit.fit import misfit_note, tuned_actuator_values, tuned_joint_values

        result = self.raw
        text, notes = with_joint_values(
            self.model, tuned_joint_values(result), out / "model_tuned.xml",
            tuned_actuator_values(result), result.tuned_model,
        )  # fmt: skip
        if result.delay_s > 2.0 * result.parameters.get("delay", {}).get("std", 0.0) > 0.0:
            notes.append(
                f"delay {result.delay_s * 1e3:.3g} ms: no MJCF field (apply it to the "
                "commands, or as an actuator's dynamics)"
            )
        bounded = [name for name, entry in result.parameters.items() if entry["at_bound"]]
        if bounded:
            notes.append(f"at a bound (their std does not describe them): {', '.join(bounded)}")
        misfit = misfit_note(result)
        if misfit is not None:
            notes.append(misfit)
        notes.extend(result.notes)
        return self.document | {"notes": notes}, text

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
                _figure(self.model, self.raw, self.held[0], staging / "rollouts.png",
                        self.held_still)  # fmt: skip
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
