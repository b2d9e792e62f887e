"""``physid simfit``: tune a MuJoCo model's joint terms and command delay to logged runs.

The fit is a bounded nonlinear least squares of the multiple-shooting residual
(:mod:`.shooting`): Levenberg-Marquardt whose steps condense the windows' states out of the
block-arrow normal equations (:mod:`physid.numerics.condensed_lm`), with finite-difference
Jacobians that perturb every window at once (the residual's sparsity). Standard deviations come
from the Gauss-Newton covariance at the solution, scaled by the residual variance, and are those
of the tuned parameters with the windows' initial states marginalised (the same Schur
complement). A parameter whose posterior standard deviation is not clearly below its prior's
(the motion did not reveal it) is marked ``prior``.

Held-out judgement, before (the model as given) and after, as RMS joint-position error on the
held-out runs, its status and findings: :mod:`physid.simfit.verdict`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.findings import Finding, as_dicts
from physid.numerics.condensed_lm import Solution, parameter_std
from physid.simfit.codes import JOINTS_HELD_STILL, UNSTABLE_SIMULATION
from physid.simfit.contacts import recorded_contacts_finding
from physid.simfit.initial import apply_start, initial_values
from physid.simfit.plateau import off_the_plateau
from physid.simfit.problem import (
    ACTUATOR_FIELDS,
    JOINT_FIELDS,
    LINEAR_UNITS,
    UNITS,
    Parameters,
    Run,
    held_parameters,
    run_from_table,
    tuned_actuators,
    windows,
)
from physid.simfit.shooting import TOLERANCE, Shooting
from physid.simfit.stages import staged_solve
from physid.simfit.verdict import (
    HeldOutErrors,
    actuators_finding,
    at_bound_finding,
    delay_finding,
    fit_status,
    gravity_compensation_finding,
    held_out_errors,
    misfit_finding,
    open_loop_finding,
)
from physid.status import Status

STD_TOLERANCE = 0.1  # stop when no parameter would move by more than this share of its std
INITIAL_DAMPING = 1.0  # Levenberg-Marquardt's first lambda, relative to diag(J^T J)
PRIOR_DECIDED = 0.5  # posterior std above this share of the prior std: the prior decided ...
# ... unless the value moved more than this many prior std from its start: the prior did not
# hold it there (a misfit inflates the posterior std of a value the data did move)
PRIOR_HELD = 3.0


@dataclass
class SimfitResult:
    """What ``physid simfit`` reports: status, the tuned parameters (value, std, start, source,
    unit), the held-out errors before and after, how the solve went, and the findings."""

    status: Status
    message: str
    parameters: dict[str, dict]
    before: HeldOutErrors | None  # on the held-out runs, the model as given (None: no runs)
    after: HeldOutErrors | None  # ... and as tuned
    noise_rad: dict[str, float]
    solver: dict
    tuned_model: object = field(repr=False, default=None)
    delay_s: float = 0.0
    findings: tuple[Finding, ...] = ()  # what the user must know (codes SF1xx-SF3xx)
    # what the check of the runs' stamps said (physid.recordings, as text)
    notes: tuple[str, ...] = ()
    # per run, training then held out: what the check of its stamps found (problem.Run)
    time_base: tuple[dict, ...] = ()
    # the terms --hold kept at the given model's values: {name: value}
    hold: dict[str, float] = field(default_factory=dict)

    @property
    def held_out(self) -> dict[str, dict]:
        """simfit.json's ``held_out_rms_rad``: ``before`` and ``after`` (empty without runs)."""
        return {
            "before": {} if self.before is None else self.before.as_dict(),
            "after": {} if self.after is None else self.after.as_dict(),
        }

    def to_dict(self) -> dict:
        return {
            "format": "physid.simfit/1",
            "status": str(self.status),
            "message": self.message,
            "parameters": self.parameters,
            "held_out_rms_rad": self.held_out,
            "position_noise": self.noise_rad,
            "solver": self.solver,
            "time_base": list(self.time_base),
            "hold": self.hold,
            "findings": as_dicts(self.findings),
        }


def joint_indices(model, joints: tuple[str, ...], source: str):
    import mujoco

    dofs, qpos = [], []
    for joint in joints:
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        if j < 0:
            raise InputError(f"joint '{joint}' is not in the model", source=source)
        kinds = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
        if int(model.jnt_type[j]) not in kinds:
            raise InputError(f"joint '{joint}' is not a hinge or slide joint", source=source)
        dofs.append(int(model.jnt_dofadr[j]))
        qpos.append(int(model.jnt_qposadr[j]))
    return np.array(dofs), np.array(qpos)


def model_joints(model) -> tuple[str, ...]:
    """The named hinge and slide joints of a MuJoCo model, in model order."""
    import mujoco

    kinds = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    return tuple(
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
        for j in range(model.njnt)
        if int(model.jnt_type[j]) in kinds
        and mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
    )


def unlogged_joints(  # noqa: ANN001 - mujoco.MjModel
    model, joints: tuple[str, ...], tables: list, source: str = ""
) -> tuple[str, ...]:
    """The ``joints`` of ``model`` (a ``mujoco.MjModel``) that no table has a ``q_`` column of,
    while some other joint has one: a gripper's fingers beside an arm's log. simfit holds them
    still at the MJCF's reference position (:func:`physid.robot.mjcf.hold_still`), as identify
    holds a joint it has no recording of (:func:`physid.files.config.lock_unlogged`), and with
    its rule: only at the ends of the tree. An unlogged joint with a logged one beyond it is a
    column missing from the middle of the chain, one error line. A joint some tables log and
    others not stays an error of the others. ``source``: the model file, for that error."""
    import mujoco

    from physid.recordings.trajectory import positions_named

    logged = set().union(*(positions_named(table.columns) for table in tables)) & set(joints)
    if not logged:
        return ()
    unlogged = tuple(j for j in joints if j not in logged)
    body_of = {
        j: int(model.jnt_bodyid[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j)])
        for j in joints
    }

    def beyond(body: int, joint: str) -> bool:  # joint's body is body or a descendant of it
        b = body_of[joint]
        while b > 0 and b != body:
            b = int(model.body_parentid[b])
        return b == body

    for joint in unlogged:
        found = [j for j in joints if j in logged and beyond(body_of[joint], j)]
        if found:
            listed = ", ".join(found[:3]) + (" ..." if len(found) > 3 else "")
            raise InputError(
                f"missing column 'q_{joint}' (joint position) in every recording, while joints "
                f"beyond it are logged ({listed}): a joint in the middle of the chain must be "
                "logged (simfit holds still only joints at the ends of the tree that no "
                "recording logs)",
                source=source or None,
            )
    return unlogged


def check_model_joints(model) -> None:  # noqa: ANN001 - mujoco.MjModel
    """One error line for a joint the recordings cannot give: a free or ball joint (a floating
    base: its pose is not in ``q_``/``tau_`` columns, and simulated without them it falls
    under gravity from the model's default pose in every window) or a hinge or slide joint
    without a name (no column can name it)."""
    import mujoco

    kinds = {int(mujoco.mjtJoint.mjJNT_FREE): "free", int(mujoco.mjtJoint.mjJNT_BALL): "ball"}
    for j in range(model.njnt):
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_JOINT, j)
        body = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, int(model.jnt_bodyid[j]))
        where = f"body '{body}'" if body else f"body number {int(model.jnt_bodyid[j])}"
        kind = kinds.get(int(model.jnt_type[j]))
        if kind is not None:
            called = f"'{name}'" if name else f"number {j}"
            raise InputError(
                f"joint {called} of {where} is a {kind} joint: the recordings give hinge "
                "and slide joints (q_/tau_ columns) only, and simfit simulates a fixed-base "
                "mechanism (weld that body to its parent: remove the joint)"
            )
        if not name:
            raise InputError(
                f"joint number {j} of {where} has no name: name it so that the "
                "recordings' q_<joint> columns can give its motion"
            )


def model_actuators(model) -> tuple[str, ...]:
    """The named actuators of a MuJoCo model, in model order (``ctrl_<actuator>`` columns)."""
    import mujoco

    names = (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in range(model.nu))
    return tuple(name for name in names if name)


def as_run(item, joints: tuple[str, ...], actuators: tuple[str, ...] = ()) -> Run:
    """A :class:`Run` as it is, or a contract table checked and read into one."""
    return item if isinstance(item, Run) else run_from_table(item, joints, actuators)


def check_drive(model, runs: list[Run], fields: tuple[str, ...] = ()) -> None:  # noqa: ANN001
    """Every run drives the model the same way (all by ``ctrl_`` columns, or all by torques);
    ctrl-driven runs need every actuator named; actuator terms need ctrl-driven runs."""
    kinds = {run.ctrl is not None for run in runs}
    if len(kinds) > 1:
        raise InputError(
            "some recordings log ctrl_<actuator> commands and others tau_<joint> "
            "torques: give all of one kind"
        )
    if kinds == {True} and len(model_actuators(model)) != model.nu:
        raise InputError(
            "ctrl_ columns drive the model's actuators, and one of them has no "
            "name: name every <actuator> element"
        )
    tuned = [f for f in fields if f in ACTUATOR_FIELDS]
    if tuned and kinds != {True}:
        raise InputError(
            f"--fit {tuned[0]} tunes the model's actuators, which only recordings "
            "with ctrl_<actuator> columns drive"
        )


MAX_WINDOW_STEPS = 1e6  # model steps per shooting window (a 0.5 s window at 0.5 us)
MIN_MODEL_STEPS = 20  # a recording shorter than this many model time steps cannot be simulated


def _check_duration(run, timestep_s: float) -> None:  # noqa: ANN001 - a Run
    """A recording must last at least :data:`MIN_MODEL_STEPS` of the model's time steps (time
    stamps in ns or a tiny scale simulate a few steps of huge velocities: MuJoCo's
    instability warnings, not a fit)."""
    duration = float(run.t[-1] - run.t[0])
    if duration < MIN_MODEL_STEPS * timestep_s:
        raise InputError(
            f"the recording lasts {duration:.3g} s, less than {MIN_MODEL_STEPS} steps of the "
            f"model's timestep ({timestep_s:g} s): is t in seconds?",
            source=run.source,
        )


def _check_radians(model, run, joints: tuple[str, ...]) -> None:  # noqa: ANN001
    """One error line when a limited hinge's positions leave its MJCF range by more than the
    range's own span and reach beyond a turn: angles in degrees (LeRobot arms store them so),
    which simfit reads as the MJCF's radians: the fit would tune absurd gains to motions 57x too
    large, or fail numerically."""
    import mujoco

    hinge = int(mujoco.mjtJoint.mjJNT_HINGE)
    for k, joint in enumerate(joints):
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        if int(model.jnt_type[j]) != hinge or not model.jnt_limited[j]:
            continue
        low, high = (float(v) for v in model.jnt_range[j])
        span = high - low
        values = run.q[:, k]
        peak = float(np.max(np.abs(values)))
        if peak > 2.0 * np.pi and (np.min(values) < low - span or np.max(values) > high + span):
            raise InputError(
                f"joint '{joint}' positions reach {peak:.4g}, beyond its MJCF range "
                f"[{low:.3g}, {high:.3g}] rad by more than the range itself: in degrees? simfit "
                "reads q_ (and position targets ctrl_) in the MJCF's radians: convert them",
                source=run.source,
            )


# position targets against their joint's positions: a factor of these is a mistake, not lag
_TARGET_MISTAKES = (
    (float(np.degrees(1.0)), 0.1, "targets in degrees beside positions in radians?"),
    (float(np.radians(1.0)), 0.1, "positions in degrees beside targets in radians?"),
    (-1.0, 0.25, "the sign flipped"),
)
TARGET_MOTION_RAD = 0.05  # a joint's range of motion below which its targets are not judged


def _check_targets(model, run, joints: tuple[str, ...]) -> None:  # noqa: ANN001
    """One error line when a position servo's logged targets (``ctrl_``, model order) read a
    factor of :data:`_TARGET_MISTAKES` times its joint's position (times the transmission's
    gear): a servo holds its joint near its target, so the targets follow the positions with a
    slope near 1 whatever the lag. A LeRobot dataset is in degrees (its ``action`` too): the
    positions converted to radians and the targets left would drive the model's servos 57.3x
    too far."""
    import mujoco

    from physid.simfit.problem import actuators_of

    affine = int(mujoco.mjtBias.mjBIAS_AFFINE)
    for k, joint in enumerate(joints):
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        hinge = int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_HINGE)
        q = run.q[:, k] - np.mean(run.q[:, k])
        if np.ptp(q) < TARGET_MOTION_RAD:
            continue
        for a in actuators_of(model, int(model.jnt_dofadr[j])):
            if int(model.actuator_biastype[a]) != affine or model.actuator_biasprm[a, 1] >= 0.0:
                continue  # not a position servo
            length = float(model.actuator_gear[a, 0]) * q
            target = run.ctrl[:, a] - np.mean(run.ctrl[:, a])
            if not np.all(np.isfinite(target)) or float(target @ target) == 0.0:
                continue
            slope = float(target @ length) / float(length @ length)
            for factor, tolerance, cause in _TARGET_MISTAKES:
                if factor > 0.0 and not hinge:
                    continue  # a slide's metres have no degrees
                if abs(slope / factor - 1.0) <= tolerance:
                    name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a)
                    raise InputError(
                        f"the position targets ctrl_{name} read {slope:.3g} x "
                        f"joint '{joint}''s position: {cause}",
                        source=run.source,
                    )


def check_runs(  # noqa: ANN001 - mujoco.MjModel
    model, runs: list, window_s: float, joints: tuple[str, ...] | None = None
) -> None:
    """One error line for recordings the fit cannot use with this model: shorter than
    :data:`MIN_MODEL_STEPS` model steps, or without one shooting window of ``window_s``
    (three samples at least: time stamps in ms read as s). ``joints``: the runs' columns
    (None: every joint of the model)."""
    joints = model_joints(model) if joints is None else joints
    timestep = float(model.opt.timestep)
    if not (np.isfinite(timestep) and timestep > 0.0):
        raise InputError(f"the model's timestep is {timestep:g}: it must be a positive time [s]")
    if window_s / timestep > MAX_WINDOW_STEPS:
        raise InputError(
            f"the model's timestep {timestep:g} s makes more than "
            f"{MAX_WINDOW_STEPS:.0e} steps per {window_s:g} s window"
        )
    for run in runs:
        _check_duration(run, timestep)
        _check_radians(model, run, joints)
        if run.ctrl is not None:
            _check_targets(model, run, joints)
        if not windows(run.t, window_s):
            raise InputError(
                f"no {window_s:g} s shooting window holds 3 samples (is t in seconds?)",
                source=run.source,
            )


def fit_simulator(
    model,
    train: list,
    validate: list | None = None,
    *,
    fields: tuple[str, ...] = tuple(JOINT_FIELDS),
    delay: bool = True,
    window_s: float = 0.5,
    max_evaluations: int = 100,
    note=None,
    coarse_windows: int = 0,
    joints: tuple[str, ...] | None = None,
    hold: tuple[str, ...] = (),
) -> SimfitResult:
    """Tune ``model`` (a ``mujoco.MjModel``, changed in place to the tuned values) to the
    ``train`` runs or tables (contract columns ``t``, ``q_<joint>``, ``tau_<joint>``); judge it on
    ``validate`` (module docstring). ``coarse_windows``: fit first on about that many windows
    (every k-th) when the runs hold twice as many (:mod:`.stages`; 0, the default: one stage).
    ``joints``: the joints the runs log (None: every joint of the model); the others must be
    held by the model (:func:`unlogged_joints`: ``compile_mjcf(..., held_still=...)``).
    ``hold``: tuned joints or terms kept at the model's values
    (:func:`~physid.simfit.problem.held_parameters`). ``note`` receives each step's name, and
    at once, as a :class:`~physid.findings.Finding`, what should be read before the fit ends."""
    note = note or (lambda _message: None)
    setup = _set_up(model, train, validate, fields, delay, window_s, joints, hold, note)
    parameters, dofs = setup.parameters, setup.dofs
    before = setup.held_out(model, 0.0, window_s, note, "given")
    file_values = dict(zip(parameters.names, parameters.values(model, dofs), strict=True))
    note("start values from inverse dynamics")
    # the tuning's CPU: its start values, window states and solve (what mujoco.sysid's
    # optimize does), not the held-out judgement before and after, files or figures
    began = time.process_time()
    shooting, solution, stages, bounds, plateau = _tune(
        model, setup, window_s, delay, max_evaluations, coarse_windows, note
    )
    cpu = time.process_time() - began
    delay_s = parameters.apply(model, dofs, solution.x)
    table = _parameter_table(model, parameters, solution, shooting, file_values, bounds)
    after = setup.held_out(model, delay_s, window_s, note, "tuned")
    noise = dict(zip(setup.joints, setup.noise.tolist(), strict=True))
    status, message, verdict = fit_status(solution, before, after, noise)
    unstable = shooting.unstable_steps()
    if unstable:  # MuJoCo reset diverging states: the fit followed a broken simulation
        status = Status.NUMERICAL_FAILURE
        message = (
            f"MuJoCo's simulation went unstable {unstable} times during the fit "
            "(huge or non-finite accelerations: torques in another unit, or a model "
            "that cannot carry them); the values are not a fit"
        )
        verdict.append(UNSTABLE_SIMULATION(message, numbers={"unstable_steps": unstable}))
    solver = _solver_record(solution, shooting, stages, window_s, cpu, setup.joints)
    said = (
        *setup.findings,
        *plateau,
        actuators_finding(model, shooting.driven),
        gravity_compensation_finding(model, shooting.driven),
        *verdict,
        open_loop_finding(before, after),
        at_bound_finding(table),
        misfit_finding(solver),
        delay_finding(delay_s, table.get("delay", {}).get("std", 0.0)),
    )
    every = [*setup.runs, *setup.held]
    return SimfitResult(
        status,
        message,
        table,
        before,
        after,
        noise,
        solver,
        model,
        delay_s,
        tuple(f for f in said if f is not None),
        tuple(n for run in every if (n := run.time_base_note)),
        tuple(run.time_base for run in every if run.time_base is not None),
        setup.hold_values,
    )


@dataclass
class _Setup:
    """The runs read and checked, the joints and their indices, the position noise, the
    parameters to tune (and the values --hold keeps), and the findings on the inputs."""

    runs: list[Run]
    held: list[Run]
    joints: tuple[str, ...]
    dofs: np.ndarray
    qpos: np.ndarray
    noise: np.ndarray
    parameters: Parameters
    hold_values: dict[str, float]
    findings: list[Finding]

    def held_out(  # noqa: ANN001 - mujoco.MjModel, the note callback
        self, model, delay_s: float, window_s: float, note, which: str
    ) -> HeldOutErrors | None:
        """The held-out runs' errors under ``model`` (``which``: given or tuned, for the
        progress line); None without held-out runs."""
        if not self.held:
            return None
        note(f"held-out runs under the {which} model")  # window states fitted: can take a while
        return held_out_errors(
            model, self.held, self.dofs, self.qpos, self.joints, delay_s, window_s, self.noise
        )


def _set_up(  # noqa: ANN001 - mujoco.MjModel, tables or runs, the note callback
    model,
    train,
    validate,
    fields: tuple[str, ...],
    delay: bool,
    window_s: float,
    joints: tuple[str, ...] | None,
    hold: tuple[str, ...],
    note,
) -> _Setup:
    """Check the model and the runs (every refusal before any work), and what the fit tunes."""
    check_model_joints(model)
    joints = model_joints(model) if joints is None else joints
    if not joints:
        raise InputError("the model has no named hinge or slide joint")
    actuators = model_actuators(model)
    runs = [as_run(item, joints, actuators) for item in train]
    held = [as_run(item, joints, actuators) for item in validate or []]
    check_runs(model, [*runs, *held], window_s, joints)
    check_drive(model, [*runs, *held], tuple(fields))
    dofs, qpos = joint_indices(model, joints, "")
    findings = []
    still = [j for j in model_joints(model) if j not in joints]
    if still:
        findings.append(
            JOINTS_HELD_STILL(
                "held still at the MJCF's reference position by a joint equality (no recording "
                f"logs {'it' if len(still) == 1 else 'them'}; not tuned): {', '.join(still)}",
                names=still,
            )
        )
    contacts = recorded_contacts_finding(model, [*runs, *held], qpos)
    if contacts is not None:
        note(contacts)  # now, not after a fit it slows down
        findings.append(contacts)
    noise = np.median([run.position_noise() for run in runs], axis=0)
    joint_fields = tuple(f for f in fields if f in JOINT_FIELDS)
    every_actuator = tuned_actuators(model, tuple(f for f in fields if f in ACTUATOR_FIELDS))
    held_terms, actuators_tuned = held_parameters(
        model, tuple(hold), joints, joint_fields, every_actuator
    )
    parameters = Parameters(joints, joint_fields, delay, actuators_tuned, held_terms)
    if not parameters.names:
        raise InputError(
            "--hold holds every term of --fit and --no-delay leaves no delay: "
            "nothing is left to tune"
        )
    hold_values = _hold_values(model, parameters, dofs, every_actuator)
    return _Setup(runs, held, joints, dofs, qpos, noise, parameters, hold_values, findings)


def _tune(  # noqa: ANN001 - mujoco.MjModel, the note callback
    model,
    setup: _Setup,
    window_s: float,
    delay: bool,
    max_evaluations: int,
    coarse_windows: int,
    note,
) -> tuple[Shooting, Solution, list[dict], tuple[np.ndarray, np.ndarray], list[Finding]]:
    """The start values (inverse dynamics, frictionlosses off MuJoCo's plateau) and the staged
    Levenberg-Marquardt solve: the shooting of every window, its solution, one record per
    stage, the bounds and the findings on the starts."""
    runs, parameters, noise = setup.runs, setup.parameters, setup.noise
    dofs, qpos = setup.dofs, setup.qpos
    starts = initial_values(model, runs, parameters, qpos, dofs)
    written = apply_start(model, parameters, starts)  # a linear inverse-dynamics start
    if written:
        note(f"{written} actuator numbers started from inverse dynamics")
    every_window = Shooting(model, runs, parameters, window_s, noise, dofs, qpos)
    plateau = off_the_plateau(every_window, parameters, model, dofs)
    if plateau:  # the starts, and the prior about them, as the model now has them
        every_window = Shooting(model, runs, parameters, window_s, noise, dofs, qpos)
        for finding in plateau:
            note(finding)
    lower = np.zeros(every_window.n_global)
    upper = np.full(every_window.n_global, np.inf)
    if delay:
        upper[-1] = 0.1  # s: a longer "delay" is a different controller

    def shooting_of(stride: int) -> Shooting:
        if stride == 1:
            return every_window
        return Shooting(model, runs, parameters, window_s, noise, dofs, qpos, stride=stride)

    shooting, solution, stages = staged_solve(
        shooting_of,
        every_window.x0,
        (lower, upper),
        max_evaluations,
        _SOLVER_OPTIONS,
        note,
        coarse_windows,
    )
    return shooting, solution, stages, (lower, upper), plateau


_SOLVER_OPTIONS = {
    # Marquardt's damping starts at the Jacobian's own scale (tau = 1 of Madsen, Nielsen &
    # Tingleff 2004, sec. 3.1, for a start that is not believed close): the model to tune is by
    # definition untuned, and near-Gauss-Newton first steps (1e-3) can throw a barely moving
    # joint's terms into a distant local minimum. (A second stage starts near its optimum: 1e-3.)
    "lam0": INITIAL_DAMPING,
    # two secant updates per finite-difference Jacobian (each of those is len(x) + 2n batched
    # rollouts): fewer Jacobians for the same values; more secant steps drift far enough that
    # the fit no longer converges within its evaluations
    "secant_steps": 2,
    # a cost change of 1e-6 (relative) is far below what the noise decides; SciPy's 1e-8
    # spends evaluations on digits that change no estimate
    "ftol": TOLERANCE,
    "xtol": TOLERANCE,
    # and once the Gauss-Newton step is below a tenth of every parameter's std: steps that
    # small no longer change the held-out error
    "std_tolerance": STD_TOLERANCE,
}


def _parameter_table(  # noqa: ANN001 - mujoco.MjModel
    model,
    parameters: Parameters,
    solution: Solution,
    shooting: Shooting,
    file_values: dict[str, float],
    bounds: tuple[np.ndarray, np.ndarray],
) -> dict[str, dict]:
    """simfit.json's ``parameters``: per tuned name its value, std, start, the file's value,
    source (:func:`parameter_source`), unit and whether it is at a bound."""
    x, (lower, upper) = solution.x, bounds
    std = _global_std(solution, shooting.residual_count, shooting.size)
    table = {}
    for k, name in enumerate(parameters.names):
        kind = name.rsplit(".", 1)[-1]
        owner = name.rsplit(".", 1)[0] if "." in name else None
        revolute = owner is None or _is_revolute(model, owner, actuator=kind in ACTUATOR_FIELDS)
        span = upper[k] - lower[k] if np.isfinite(upper[k]) else max(abs(x[k]), 1.0)
        table[name] = {
            "value": float(x[k]),
            "std": float(std[k]),
            "start": float(shooting.x0[k]),
            "model_value": float(file_values[name]),  # as the given file has it
            "source": parameter_source(x[k], shooting.x0[k], std[k], shooting.prior_std[k]),
            "unit": (UNITS if revolute else LINEAR_UNITS)[kind],
            # at a bound the std describes nothing: the data wanted it beyond (e.g. a negative
            # delay: the positions late, not the torque)
            "at_bound": bool(min(x[k] - lower[k], upper[k] - x[k]) <= 1e-6 * span),
        }
    return table


def _solver_record(  # noqa: ANN001 - the shooting's joints
    solution: Solution,
    shooting: Shooting,
    stages: list[dict],
    window_s: float,
    cpu: float,
    joints,
) -> dict:
    """simfit.json's ``solver``: evaluations, cost, termination code, stages and the misfit."""
    return {
        "evaluations": sum(stage["evaluations"] for stage in stages),
        "cost": float(solution.cost),
        "optimality": float(solution.optimality),
        "windows": len(shooting.windows),
        "window_s": window_s,
        "timestep_s": shooting.h,
        "cpu_s": cpu,
        # condensed_lm's termination code (2, 3 converged; 0 budget; -1 no decrease)
        "solver_status": int(solution.status),
        "jacobians": sum(stage["jacobians"] for stage in stages),
        # with coarse_windows, a coarse stage on every k-th window first (.stages)
        "stages": stages,
        # the training windows' RMS position error in units of the position noise (1: the
        # model follows the runs to their noise; see verdict.misfit_finding)
        "rms_over_noise": float(np.sqrt(2.0 * solution.cost / shooting.residual_count)),
        # the same, per joint, over the window positions alone: which joint the model
        # cannot follow
        "rms_over_noise_per_joint": _per_joint_misfit(solution, shooting, joints),
    }


def _hold_values(model, parameters: Parameters, dofs, actuators) -> dict[str, float]:  # noqa: ANN001
    """{name: the model's value} of the terms ``parameters`` holds (``--hold``), joints' and
    actuators' (``actuators``: every actuator --fit names, held or not)."""
    every = Parameters(parameters.joints, parameters.fields, False, actuators)
    tuned = set(parameters.names)
    values = every.values(model, dofs)
    return {
        name: float(v) for name, v in zip(every.names, values, strict=True) if name not in tuned
    }


def _per_joint_misfit(solution: Solution, shooting: Shooting, joints) -> dict[str, float]:
    """{joint: RMS of the training windows' simulated minus recorded positions over that
    joint's position noise}."""
    n = len(joints)
    positions = solution.residual[:, :-n].reshape(len(shooting.windows), -1, n)[shooting.valid]
    rms = np.sqrt(np.mean(positions**2, axis=0))
    return dict(zip(joints, rms.tolist(), strict=True))


def _is_revolute(model, name: str, actuator: bool = False) -> bool:
    """Whether the joint ``name`` (or the joint the actuator ``name`` drives) is a hinge."""
    import mujoco

    if actuator:
        a = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, name)
        joint_transmission = int(model.actuator_trntype[a]) == int(mujoco.mjtTrn.mjTRN_JOINT)
        if not joint_transmission:
            return True
        j = int(model.actuator_trnid[a, 0])
    else:
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
    return int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_HINGE)


def _global_std(solution: Solution, m: int, n: int) -> np.ndarray:
    """Standard deviations of the tuned parameters at the solution (:func:`parameter_std`)."""
    return parameter_std(solution.normal, solution.cost, m, n)


def parameter_source(value: float, start: float, std: float, prior_std: float) -> str:
    """``data`` where the data decided a tuned value (its std well inside the prior's, or the
    value moved from its start farther than the prior holds it), else ``prior``."""
    moved = abs(value - start) > PRIOR_HELD * prior_std
    narrowed = bool(np.isfinite(std)) and std < PRIOR_DECIDED * prior_std
    return "data" if moved or narrowed else "prior"


def tuned_joint_values(result: SimfitResult) -> dict[str, dict[str, float]]:
    """{joint: {mjcf attribute: value}} of the tuned joint terms (for writing the MJCF)."""
    return _tuned_values(result, JOINT_FIELDS)


def tuned_actuator_values(result: SimfitResult) -> dict[str, dict[str, float]]:
    """{actuator: {"kp" | "kv" | "gain": value}} of the tuned actuator terms."""
    return _tuned_values(result, ACTUATOR_FIELDS)


def _tuned_values(result: SimfitResult, kinds) -> dict[str, dict[str, float]]:  # noqa: ANN001
    values: dict[str, dict[str, float]] = {}
    for name, entry in result.parameters.items():
        if name == "delay":
            continue
        owner, kind = name.rsplit(".", 1)
        if kind in kinds:
            values.setdefault(owner, {})[kind] = max(entry["value"], 0.0)
    return values


def load_tables(paths: list[Path]) -> list:
    """Contract tables of the given files (CSV/NPZ/Parquet, manifests, or in-memory tables)."""
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import read_table

    return [p if isinstance(p, Table) else read_table(p) for p in paths]
