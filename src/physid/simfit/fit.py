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
held-out runs: the shooting error (windows of the training length whose initial states are
estimated with the model fixed: what the model can follow; the status compares these), and
open-loop simulations of 0.5, 1 and 2 s from the measured states (an unstable system — an arm
under gravity whose controller's feedback is not in the model — diverges from any initial-state
error there, whatever its parameters: measured on the test arm, its true model drifts by
81 / 128 / 170 mrad).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.numerics.condensed_lm import Solution, parameter_std
from physid.simfit.contacts import recorded_contacts_note
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
from physid.simfit.shooting import (
    TOLERANCE,
    Shooting,
    open_loop_error,
    shooting_error,
)
from physid.simfit.stages import staged_solve

HORIZONS_S = (0.5, 1.0, 2.0)
STD_TOLERANCE = 0.1  # stop when no parameter would move by more than this share of its std
INITIAL_DAMPING = 1.0  # Levenberg-Marquardt's first lambda, relative to diag(J^T J)
MISFIT_NOTE = 3.0  # training RMS / position noise above which the output says so
PRIOR_DECIDED = 0.5  # posterior std above this share of the prior std: the prior decided ...
# ... unless the value moved more than this many prior std from its start: the prior did not
# hold it there (an iiwa's wrist armature 0.062 from a start of 0.0025, prior std 0.01, was
# labelled "prior" because the misfit inflated its std)
PRIOR_HELD = 3.0


@dataclass
class SimfitResult:
    """What ``physid simfit`` reports: status, the tuned parameters (value, std, start, source,
    unit), the held-out open-loop errors before and after, and how the solve went."""

    status: str
    message: str
    parameters: dict[str, dict]
    held_out: dict[str, dict]
    noise_rad: dict[str, float]
    solver: dict
    tuned_model: object = field(repr=False, default=None)
    delay_s: float = 0.0
    notes: tuple[str, ...] = ()  # what the user must know about the model as it was fitted
    # per run, training then held out: what the check of its stamps found (problem.Run)
    time_base: tuple[dict, ...] = ()
    # the terms --hold kept at the given model's values: {name: value}
    hold: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "format": "physid.simfit/1",
            "status": self.status,
            "message": self.message,
            "parameters": self.parameters,
            "held_out_rms_rad": self.held_out,
            "position_noise": self.noise_rad,
            "solver": self.solver,
            "time_base": list(self.time_base),
            "hold": self.hold,
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
    body_of = {j: int(model.jnt_bodyid[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j)])
               for j in joints}  # fmt: skip

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
            raise InputError(f"joint number {j} of {where} has no name: name it so that the "
                             "recordings' q_<joint> columns can give its motion")  # fmt: skip


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
        raise InputError("some recordings log ctrl_<actuator> commands and others tau_<joint> "
                         "torques: give all of one kind")  # fmt: skip
    if kinds == {True} and len(model_actuators(model)) != model.nu:
        raise InputError("ctrl_ columns drive the model's actuators, and one of them has no "
                         "name: name every <actuator> element")  # fmt: skip
    tuned = [f for f in fields if f in ACTUATOR_FIELDS]
    if tuned and kinds != {True}:
        raise InputError(f"--fit {tuned[0]} tunes the model's actuators, which only recordings "
                         "with ctrl_<actuator> columns drive")  # fmt: skip


def _errors(
    model, runs: list[Run], dofs, qpos, joints, delay_s: float, window_s: float, noise: np.ndarray
) -> dict[str, dict]:
    """Open-loop RMS position errors over :data:`HORIZONS_S` and the shooting error (initial
    states estimated, :func:`.shooting.shooting_error`) over windows of ``window_s``."""

    def entry(total: float, per_joint: np.ndarray) -> dict:
        return {"all": total, "per_joint": dict(zip(joints, per_joint.tolist(), strict=True))}

    out = {
        f"open loop {h:g} s": entry(*open_loop_error(model, runs, h, dofs, qpos, delay_s))
        for h in HORIZONS_S
    }
    out[f"shooting {window_s:g} s"] = entry(
        *shooting_error(model, runs, window_s, noise, dofs, qpos, delay_s)
    )
    return out


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
    which simfit reads as the MJCF's radians. A probe's 30 fps arm in degrees ended
    ``numerical_failure`` ("torques in another unit") with a tuned elbow kp of 4474."""
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
_TARGET_MISTAKES = ((float(np.degrees(1.0)), 0.1, "targets in degrees beside positions in "
                     "radians?"),
                    (float(np.radians(1.0)), 0.1, "positions in degrees beside targets in "
                     "radians?"),
                    (-1.0, 0.25, "the sign flipped"))  # fmt: skip
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
                    raise InputError(f"the position targets ctrl_{name} read {slope:.3g} x "
                                     f"joint '{joint}''s position: {cause}",
                                     source=run.source)  # fmt: skip


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
        raise InputError(f"the model's timestep {timestep:g} s makes more than "
                         f"{MAX_WINDOW_STEPS:.0e} steps per {window_s:g} s window")  # fmt: skip
    for run in runs:
        _check_duration(run, timestep)
        _check_radians(model, run, joints)
        if run.ctrl is not None:
            _check_targets(model, run, joints)
        if not windows(run.t, window_s):
            raise InputError(f"no {window_s:g} s shooting window holds 3 samples (is t in "
                             "seconds?)", source=run.source)  # fmt: skip


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
    (:func:`~physid.simfit.problem.held_parameters`)."""
    note = note or (lambda _message: None)
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
    still = [j for j in model_joints(model) if j not in joints]
    still_note = (
        f"held still at the MJCF's reference position by a joint equality (no recording logs "
        f"{'it' if len(still) == 1 else 'them'}; not tuned): {', '.join(still)}"
        if still else None
    )  # fmt: skip
    contacts = recorded_contacts_note(model, [*runs, *held], qpos)
    if contacts:
        note(f"note: {contacts}")  # now, not only after a fit that it slows down
    noise = np.median([run.position_noise() for run in runs], axis=0)
    joint_fields = tuple(f for f in fields if f in JOINT_FIELDS)
    actuator_fields = tuple(f for f in fields if f in ACTUATOR_FIELDS)
    every_actuator = tuned_actuators(model, actuator_fields)
    held_terms, actuators_tuned = held_parameters(
        model, tuple(hold), joints, joint_fields, every_actuator
    )
    parameters = Parameters(joints, joint_fields, delay, actuators_tuned, held_terms)
    if not parameters.names:
        raise InputError("--hold holds every term of --fit and --no-delay leaves no delay: "
                         "nothing is left to tune")  # fmt: skip
    hold_values = _hold_values(model, parameters, dofs, every_actuator)
    if held:
        note("held-out runs under the given model")  # window states fitted: can take a while
    before = _errors(model, held, dofs, qpos, joints, 0.0, window_s, noise) if held else {}
    file_values = dict(zip(parameters.names, parameters.values(model, dofs), strict=True))
    note("start values from inverse dynamics")
    # the tuning's CPU: its start values, window states and solve (what mujoco.sysid's
    # optimize does), not the held-out judgement before and after, files or figures
    began = time.process_time()
    starts = initial_values(model, runs, parameters, qpos, dofs)
    written = apply_start(model, parameters, starts)  # a linear inverse-dynamics start
    if written:
        note(f"{written} actuator numbers started from inverse dynamics")
    every_window = Shooting(model, runs, parameters, window_s, noise, dofs, qpos)
    plateau = off_the_plateau(every_window, parameters, model, dofs)
    if plateau:  # the starts, and the prior about them, as the model now has them
        every_window = Shooting(model, runs, parameters, window_s, noise, dofs, qpos)
        for line in plateau:
            note(f"note: {line}")
    lower = np.zeros(every_window.n_global)
    upper = np.full(every_window.n_global, np.inf)
    if delay:
        upper[-1] = 0.1  # s: a longer "delay" is a different controller
    bounds = (lower, upper)

    def shooting_of(stride: int) -> Shooting:
        if stride == 1:
            return every_window
        return Shooting(model, runs, parameters, window_s, noise, dofs, qpos, stride=stride)

    shooting, solution, stages = staged_solve(
        shooting_of,
        every_window.x0,
        bounds,
        max_evaluations,
        {
            # Marquardt's damping starts at the Jacobian's own scale (tau = 1 of Madsen,
            # Nielsen & Tingleff 2004, sec. 3.1, for a start that is not believed close): the
            # model to tune is by definition untuned. With 1e-3 the first near-Gauss-Newton
            # steps threw the simulated arm of benchmarks/simfit.py (run seed 3, its last joint
            # nearly still) into a local minimum at 61x the noise (armature 80x the truth);
            # with 1 it reaches the truth. Real UR10e: 35 instead of 39 evaluations, held-out
            # errors within 0.4 %. (A second stage starts near its optimum: 1e-3 there.)
            "lam0": INITIAL_DAMPING,
            # two secant updates per finite-difference Jacobian (each of those is len(x) + 2n
            # batched rollouts): benchmarks/simfit.py 20.5 -> 9.4 CPU s, same errors; real
            # UR10e 40 -> 30 Jacobians, same values; 4 left the UR10e fit unconverged at 100
            # evaluations
            "secant_steps": 2,
            # a cost change of 1e-6 (relative) is far below what the noise decides; SciPy's
            # 1e-8 spent half the evaluations of the benchmark on the last digits
            "ftol": TOLERANCE,
            "xtol": TOLERANCE,
            # and once the Gauss-Newton step is below a tenth of every parameter's std: the
            # real UR10e's last 37 of 79 evaluations changed its held-out shooting error by
            # 0.15 %
            "std_tolerance": STD_TOLERANCE,
        },
        note,
        coarse_windows,
    )
    cpu = time.process_time() - began
    x = solution.x
    delay_s = parameters.apply(model, dofs, x)
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
    if held:
        note("held-out runs under the tuned model")
    after = _errors(model, held, dofs, qpos, joints, delay_s, window_s, noise) if held else {}
    status, message = _status(solution, before, after, dict(zip(joints, noise, strict=True)))
    unstable = shooting.unstable_steps()
    if unstable:  # MuJoCo reset diverging states: the fit followed a broken simulation
        status = "numerical_failure"
        message = (f"MuJoCo's simulation went unstable {unstable} times during the fit "
                   "(huge or non-finite accelerations: torques in another unit, or a model "
                   "that cannot carry them); the values are not a fit")  # fmt: skip
    return SimfitResult(
        status,
        message,
        table,
        {"before": before, "after": after},
        dict(zip(joints, noise.tolist(), strict=True)),
        {
            "evaluations": sum(stage["evaluations"] for stage in stages),
            "cost": float(solution.cost),
            "optimality": float(solution.optimality),
            "windows": len(shooting.windows),
            "window_s": window_s,
            "timestep_s": shooting.h,
            "cpu_s": cpu,
            "solver_status": int(solution.status),
            "jacobians": sum(stage["jacobians"] for stage in stages),
            # with coarse_windows, a coarse stage on every k-th window first (.stages)
            "stages": stages,
            # the training windows' RMS position error in units of the position noise (1: the
            # model follows the runs to their noise; see misfit_note)
            "rms_over_noise": float(np.sqrt(2.0 * solution.cost / shooting.residual_count)),
            # the same, per joint, over the window positions alone: which joint the model
            # cannot follow
            "rms_over_noise_per_joint": _per_joint_misfit(solution, shooting, joints),
        },
        model,
        delay_s,
        tuple(n for n in (*(run.time_base_note for run in [*runs, *held]), still_note, contacts,
                          *plateau,
                          actuators_note(model, shooting.driven),
                          gravity_compensation_note(model, shooting.driven),
                          open_loop_note(before, after)) if n),
        tuple(run.time_base for run in [*runs, *held] if run.time_base is not None),
        hold_values,
    )


def _hold_values(model, parameters: Parameters, dofs, actuators) -> dict[str, float]:  # noqa: ANN001
    """{name: the model's value} of the terms ``parameters`` holds (``--hold``), joints' and
    actuators' (``actuators``: every actuator --fit names, held or not)."""
    every = Parameters(parameters.joints, parameters.fields, False, actuators)
    tuned = set(parameters.names)
    values = every.values(model, dofs)
    return {name: float(v) for name, v in zip(every.names, values, strict=True)
            if name not in tuned}  # fmt: skip


def actuators_note(model, driven: bool) -> str | None:  # noqa: ANN001 - mujoco.MjModel
    """A note when logged joint torques drove a model that has actuators: they were switched
    off in every simulation of the fit (:func:`.shooting.simulation_flags`), so the tuned model
    reproduces the runs when the torques are applied to its joints, not through its actuators."""
    if driven or model.nu == 0:
        return None
    return (f"the model's {model.nu} actuators were switched off in the fit: the logged tau_ "
            "torques drove the joints directly (qfrc_applied); simulate the tuned model the "
            "same way, or drive its actuators with ctrl_ recordings")


def gravity_compensation_note(model, driven: bool) -> str | None:  # noqa: ANN001
    """A note when logged joint torques drive a model whose bodies carry MuJoCo's gravity
    compensation (``gravcomp``, common in Menagerie arms): the simulation then cancels those
    bodies' weight itself, which is right only if the logged torque leaves gravity out (a
    controller's torque above its own gravity compensation); a drive's total torque holds
    the weight too, and the arm would be compensated twice."""
    from physid.robot.mjcf import gravity_compensated_joints

    # joints with actuatorgravcomp take that force through the actuators, which simulations
    # of logged torques switch off (shooting.simulation_flags): the weight is then not cancelled
    compensated = sorted({b for bodies in gravity_compensated_joints(model).values()
                          for b in bodies})  # fmt: skip
    if driven or not compensated:
        return None
    shown = ", ".join(compensated[:4]) + (" ..." if len(compensated) > 4 else "")
    return (f"{len(compensated)} bodies of the model cancel their own weight (gravcomp: "
            f"{shown}): right only if the logged tau_ columns leave gravity out; a drive's "
            "total torque holds the weight too (set gravcomp=\"0\" for such logs)")


def _per_joint_misfit(solution: Solution, shooting: Shooting, joints) -> dict[str, float]:
    """{joint: RMS of the training windows' simulated minus measured positions over that
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


def _status(
    solution, before: dict, after: dict, noise: dict[str, float] | None = None
) -> tuple[str, str]:
    """The status and its message: the solver's, then the held-out judgement (the shooting
    errors; per joint, a growth beyond :data:`JOINT_WORSE` and the joint's position noise
    ``noise`` [rad or m])."""
    if solution.status <= 0:
        return "not converged", f"the solver stopped: {solution.message}"
    if before and after:
        key = next(k for k in after if k.startswith("shooting"))
        if after[key]["all"] > before[key]["all"] * 1.001:
            return (
                "worse_than_start",
                "the tuned model follows the held-out runs worse than the model as given "
                f"({key}: {after[key]['all']:.3g} vs {before[key]['all']:.3g} rad): keep the "
                "original values",
            )
        noise = noise or {}
        worse = {j: (b, e) for j, e in after[key]["per_joint"].items()
                 if e > JOINT_WORSE * (b := before[key]["per_joint"][j])
                 and e - b > noise.get(j, 0.0)}  # fmt: skip
        if worse:
            listed = ", ".join(f"{j} {1e3 * b:.3g} -> {1e3 * a:.3g} mrad"
                               for j, (b, a) in worse.items())  # fmt: skip
            return (
                "worse_for_some_joints",
                f"the tuned model follows the held-out runs better as a whole ({key}: "
                f"{before[key]['all']:.3g} -> {after[key]['all']:.3g} rad) but worse on "
                f"{listed}: their terms are not what the runs show (a local minimum, or "
                "terms the training runs cannot inform); tune again with --hold "
                f"{','.join(worse)} (their terms keep the given values), or from other start "
                "values",
            )
    return "ok", str(solution.message)


# A joint whose held-out shooting error grows by more than this factor (and by more than its
# position noise) under the tuned model is named (status worse_for_some_joints): before
# :mod:`.plateau` moved its start, xArm7's wrist went 0.69 -> 4.6 mrad while the whole improved
# 11x (its frictionloss at 15x the truth, where the rollouts no longer depend on it); on the
# real UR10e every joint improves 9-22x
JOINT_WORSE = 1.1


def open_loop_note(before: dict, after: dict) -> str | None:
    """A note when the tuned model simulates the held-out runs open loop worse than the model as
    given at the shortest horizon, whatever the status (which compares the shooting errors:
    under feedback an open-loop simulation diverges from any initial-state error, so only its
    short horizons compare models). A probe's Menagerie-style arm: shooting 0.568 -> 0.559 mrad,
    status ok, exit 0, while open loop went 2.22 -> 2.29 / 5.93 -> 8.56 / 51 -> 135 mrad at
    0.5 / 1 / 2 s, with nothing said."""
    horizons = [key for key in after if key.startswith("open loop")]
    first = horizons[0] if horizons and before else None
    if first is None or after[first]["all"] <= 1.01 * before[first]["all"]:
        return None
    changes = ", ".join(f"{key.removeprefix('open loop ')} {1e3 * before[key]['all']:.3g} -> "
                        f"{1e3 * after[key]['all']:.3g}" for key in horizons)  # fmt: skip
    return (
        f"the tuned model simulates the held-out runs open loop worse than the model as given "
        f"({changes} mrad): the status compares the shooting errors (the windows' states "
        "fitted); if open-loop simulation is the use, the given values may serve it better"
    )


def misfit_note(result: SimfitResult) -> str | None:
    """A note when the tuned model follows its own training runs far worse than their position
    noise (RMS above :data:`MISFIT_NOTE` x, over all joints or on one): a status ``ok`` then
    says only that the solver
    converged. Measured on benchmarks/simfit.py's arm: run seed 1 fits to 0.89x; run seed 3
    (its last joint moved 0.058 rad) stopped at 61x, that joint's armature 80x the truth and the
    training shooting error 1.80 mrad against the true model's 0.26 (a local minimum); the real
    UR10e 6.5x (the model does not hold everything the arm does)."""
    ratio = result.solver.get("rms_over_noise")
    per_joint = result.solver.get("rms_over_noise_per_joint") or {}
    # one joint far off is said too: over six joints a joint at 5.3x (a barely moving joint's
    # terms in a local minimum) left the whole at 2.3x
    if ratio is None or not (ratio > MISFIT_NOTE or max(per_joint.values(), default=0.0)
                             > MISFIT_NOTE):  # fmt: skip
        return None
    worst = sorted(per_joint.items(), key=lambda item: -item[1])[:3]
    by_joint = ", ".join(f"{joint} {value:.3g}" for joint, value in worst)
    return (
        f"the tuned model follows the training runs to {ratio:.3g} x their position noise, not "
        "to the noise" + (f" (worst joints: {by_joint} x)" if by_joint else "") + ": effects "
        "the model lacks, or a local minimum (a joint that barely moves lets its terms trade "
        "off: hold its terms with --hold, or fit from other start values); the standard "
        "deviations are "
        "window-clustered and include this misfit"
    )


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
