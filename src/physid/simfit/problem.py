"""The simulator-matching problem: a MuJoCo model, a logged run, and the parameters to tune.

``physid simfit`` refines what a MuJoCo model says about each joint — viscous
``damping``, rotor ``armature``, dry ``frictionloss`` — and a constant delay between the logged
torque commands and the motion, so that MuJoCo, driven by the logged torques, reproduces the
recorded joint trajectories. The run is cut into short windows (multiple shooting, as papers A
and B do for their state estimates): each window starts from its own state, a decision variable
started at the recorded position and a Savitzky-Golay velocity, and is simulated open loop
through MuJoCo's ``rollout`` (every window of an evaluation in one batched call). The residual
is the simulated minus the recorded position at every recorded sample inside the window,
divided by the position noise (estimated from the data).

Torques enter as ``qfrc_applied`` on each joint's degree of freedom (columns ``tau_<joint>``,
the torque the drives applied), so no actuator of the model is needed or used. A run that logs
the commands sent to the model's actuators instead (``ctrl_<actuator>`` for every actuator: a
position servo's target, a motor's command) drives them as MuJoCo's ``ctrl``, and the
actuators' own numbers can be tuned (:data:`ACTUATOR_FIELDS`): a position servo's stiffness
``kp`` and damping ``kv`` (``<position kp kv>``: force ``kp (ctrl - q) - kv dq``), a motor's
``gain`` (torque per unit of command: an unknown torque constant or gear).

The time stamps are checked against the motion before anything else reads them, as identify
checks them (:mod:`physid.recordings.timebase`): the residual compares the simulation with each
sample at its stamp, so a stamp that does not say when the sample was taken is a model error the
fit cannot remove: even the true model's held-out errors grow several times. When the noise
leaves too little evidence to rebuild the timeline the check keeps the stamps: the fitted values
stay close to the truth, but the held-out errors carry the timing error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.signal

from physid.errors import InputError
from physid.recordings.tables import repeats_previous
from physid.recordings.timebase import check_time_base
from physid.recordings.trajectory import _check_finite, _check_magnitude, _check_time

JOINT_FIELDS = {
    "damping": "dof_damping",
    "armature": "dof_armature",
    "frictionloss": "dof_frictionloss",
}
ACTUATOR_FIELDS = ("kp", "kv", "gain")
UNITS = {
    "damping": "N m s/rad",
    "armature": "kg m^2",
    "frictionloss": "N m",
    "delay": "s",
    "kp": "N m/rad",
    "kv": "N m s/rad",
    "gain": "N m per unit of ctrl",
}
LINEAR_UNITS = {
    "damping": "N s/m",
    "armature": "kg",
    "frictionloss": "N",
    "delay": "s",
    "kp": "N/m",
    "kv": "N s/m",
    "gain": "N per unit of ctrl",
}


@dataclass(frozen=True)
class Run:
    """One logged run: time [s], joint positions and applied torques (N, n) in model order."""

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray | None  # (N, n) applied joint torques, or None when ``ctrl`` drives
    source: str
    ctrl: np.ndarray | None = None  # (N, nu) commands to the model's actuators, model order
    # what the check of the stamps against the motion found (TimeBaseCheck.as_dict, with the
    # source) and, when it changed the rows or their times, the note that says so
    time_base: dict | None = None
    time_base_note: str | None = None

    def velocity(self, window: int | None = None, order: int = 3) -> np.ndarray:
        """Savitzky-Golay derivative of the positions (the windows' starting velocities)."""
        return self.smoothed(1, window, order)

    def smoothed(self, derivative: int, window: int | None = None, order: int = 3) -> np.ndarray:
        """Savitzky-Golay fit of the positions (``derivative`` 0), or its first or second
        derivative, over ``window`` samples (None: :func:`smoothing_window` of the run's rate;
        fewer in a shorter run); on samples that are not evenly spaced (a timeline rebuilt from
        controller ticks, stamps that jitter), the same local polynomial fitted at the samples'
        own times (:func:`local_polynomial`)."""
        if window is None:
            window = smoothing_window(1.0 / float(np.median(np.diff(self.t))))
        length = min(window, len(self.t) - (1 - len(self.t) % 2))
        if not evenly_spaced(self.t):
            return local_polynomial(self.t, self.q, derivative, length, order)
        dt = float(np.median(np.diff(self.t)))
        return scipy.signal.savgol_filter(self.q, length, order, deriv=derivative, delta=dt, axis=0)

    def position_noise(self) -> np.ndarray:
        """Per joint std of the recorded positions about a local cubic (the residual of a
        Savitzky-Golay fit, scaled for its degrees of freedom), floored at 1e-6."""
        window = smoothing_window(1.0 / float(np.median(np.diff(self.t))))
        length = min(window, len(self.t) - (1 - len(self.t) % 2))
        smooth = self.smoothed(0, length, 3)
        scale = np.sqrt(length / max(length - 4, 1))
        return np.maximum(np.std(self.q - smooth, axis=0) * scale, 1e-6)


EVEN_SPACING = 1e-3  # relative deviation of a step from the median below which steps are even

# The -3 dB band of a cubic Savitzky-Golay smoother of each window length [cycles per sample]
# (scipy.signal.savgol_coeffs' frequency response), and the band the smoothed motion keeps.
SAVGOL_BAND = {5: 0.238, 7: 0.160, 9: 0.1218, 11: 0.0986}
SMOOTHING_BAND_HZ = 5.0


def smoothing_window(rate_hz: float) -> int:
    """The longest cubic Savitzky-Golay window (5 to 11 samples) that keeps
    :data:`SMOOTHING_BAND_HZ` of the motion: 11 from 51 Hz up, 9 at 50 Hz, 5 at a LeRobot arm's
    30 fps. A longer window flattens a slow-sampled motion: the motion it removes reads as
    position noise, and the inverse-dynamics starts of the servo gains collapse."""
    fitting = [
        length for length, band in SAVGOL_BAND.items() if band * rate_hz >= SMOOTHING_BAND_HZ
    ]
    return max(fitting, default=5)


def evenly_spaced(t: np.ndarray) -> bool:
    """Whether every step of ``t`` is the median step within :data:`EVEN_SPACING` (relative):
    stamps printed with a few digits stay even."""
    steps = np.diff(t)
    median = float(np.median(steps))
    return bool(np.max(np.abs(steps - median)) <= EVEN_SPACING * median)


def local_polynomial(
    t: np.ndarray, q: np.ndarray, derivative: int, window: int, order: int
) -> np.ndarray:
    """Savitzky-Golay at uneven times: at every row, the least-squares polynomial of ``order``
    over the ``window`` rows around it (shifted inward at the ends, as SciPy's ``interp``
    mode), evaluated there (``derivative`` 0) or differentiated. On even times it equals
    ``scipy.signal.savgol_filter`` (to rounding). Rows are taken :data:`LOCAL_FIT_ROWS` at a
    time (an hour at 1 kHz would otherwise hold gigabytes of small designs)."""
    n = len(t)
    out = np.empty(q.shape)
    for first in range(0, n, LOCAL_FIT_ROWS):
        centres = np.arange(first, min(first + LOCAL_FIT_ROWS, n))
        starts = np.clip(centres - window // 2, 0, n - window)
        rows = starts[:, None] + np.arange(window)  # (rows, w)
        tau = t[rows] - t[centres, None]
        scale = np.max(np.abs(tau), axis=1)  # conditioning: times in [-1, 1]
        design = (tau / scale[:, None])[..., None] ** np.arange(order + 1)  # (rows, w, p)
        normal = np.einsum("nwi,nwj->nij", design, design)
        moments = np.einsum("nwi,nwk->nik", design, q[rows])
        coefficients = np.linalg.solve(normal, moments)  # (rows, p, joints)
        out[centres] = (
            coefficients[:, derivative] * math.factorial(derivative) / scale[:, None] ** derivative
        )
    return out


LOCAL_FIT_ROWS = 50_000


def run_from_table(table, joints: tuple[str, ...], actuators: tuple[str, ...] = ()) -> Run:
    """The ``t``, ``q_<joint>`` and either ``tau_<joint>`` (every joint) or ``ctrl_<actuator>``
    (every one of the model's ``actuators``, when the table has any ``ctrl_`` column) columns
    of a contract table."""
    columns = table.columns
    driven = any(name.startswith("ctrl_") for name in columns)
    commands = (
        tuple(f"ctrl_{a}" for a in actuators) if driven else tuple(f"tau_{j}" for j in joints)
    )
    missing = [c for c in ("t", *(f"q_{j}" for j in joints), *commands) if c not in columns]
    if driven and not actuators:
        missing = ["(the model has no named actuator for the ctrl_ columns)"]
    if missing:
        need = (
            "ctrl_<actuator> of every named actuator of the model"
            if driven
            else "the applied torque tau_<joint> of every joint"
        )
        unlogged = [j for j in joints if f"q_{j}" in missing]
        # joints this recording lacks but another logs: simfit holds a joint still only when no
        # recording logs it (fit.unlogged_joints)
        still = (
            f"; {', '.join(unlogged)} {'is' if len(unlogged) == 1 else 'are'} in no column of "
            "this recording: log them in every recording, or in none (simfit then holds them "
            "still at the MJCF's reference position)"
            if unlogged and len(unlogged) < len(joints) and "t" not in missing
            else ""
        )
        raise InputError(
            f"missing column(s) {', '.join(missing)} (simfit needs t, q_<joint> and {need}){still}",
            source=table.source,
        )
    used = [*(f"q_{j}" for j in joints), *commands]
    t = _check_time(table)  # finite, increasing, no gap (one error line naming the row)
    _check_finite(table, used)
    _check_magnitude(table, used)  # 1e300 overflowed the noise estimate
    q = np.column_stack([columns[f"q_{j}"] for j in joints]).astype(float)
    command = np.column_stack([columns[c] for c in commands]).astype(float)
    if len(t) < 20:
        raise InputError(f"{len(t)} samples: too short to simulate", source=table.source)
    # a row whose command changed is a new sample, whatever its positions
    keep, t, check = check_time_base(t, q, fresh=~repeats_previous(command.T))
    if check.breaks:  # as at a gap in the stamps: a window across it cannot be simulated
        row, ticks = check.breaks[0], check.break_ticks[0]
        raise InputError(
            f"the positions jump at row {row + 1} ({ticks:+.3g} sample periods' worth of their "
            f"speed in one stamp step; {len(check.breaks)} such rows): rows lost or frozen "
            "while the robot moved, or rows sent again; physid does not fill gaps: split the "
            "recording there",
            source=table.source,
        )
    q, command = q[keep], command[keep]
    found = {
        "time_base": {"source": table.source, **check.as_dict()},
        "time_base_note": check.note(table.source) if check.changed else None,
    }
    if driven:
        return Run(t - t[0], q, None, table.source, ctrl=command, **found)
    return Run(t - t[0], q, command, table.source, **found)


def servo_kind(model, actuator: int) -> str | None:
    """``"position"`` for a position servo (fixed gain, affine bias with ``biasprm[1] =
    -gainprm[0]``: MuJoCo's ``<position>``), ``"motor"`` for a fixed gain without bias, None
    for any other actuator (their numbers are not tuned)."""
    import mujoco

    fixed = int(model.actuator_gaintype[actuator]) == int(mujoco.mjtGain.mjGAIN_FIXED)
    bias = int(model.actuator_biastype[actuator])
    gain, prm = model.actuator_gainprm[actuator], model.actuator_biasprm[actuator]
    if fixed and bias == int(mujoco.mjtBias.mjBIAS_AFFINE) and prm[1] == -gain[0] != 0.0:
        return "position"
    if fixed and bias == int(mujoco.mjtBias.mjBIAS_NONE):
        return "motor"
    return None


FIELD_KINDS = {"kp": "position", "kv": "position", "gain": "motor"}


@dataclass(frozen=True)
class Parameters:
    """The tuned quantities: (joint, field) pairs of :data:`JOINT_FIELDS`, (actuator, field)
    pairs of :data:`ACTUATOR_FIELDS` (``actuators``: (name, id) of the actuators each field
    tunes, by field) and the delay. ``held``: ``joint.field`` names kept at the model's values
    (``physid simfit --hold``; the held actuators are left out of ``actuators``)."""

    joints: tuple[str, ...]
    fields: tuple[str, ...]
    delay: bool
    actuators: tuple[tuple[str, tuple[tuple[str, int], ...]], ...] = ()
    held: frozenset[str] = frozenset()

    def tuned(self, field: str) -> np.ndarray:
        """Mask over :attr:`joints` of those whose ``field`` is tuned (not held)."""
        return np.array([f"{j}.{field}" not in self.held for j in self.joints], dtype=bool)

    @property
    def names(self) -> tuple[str, ...]:
        names = [
            f"{j}.{f}" for f in self.fields for j in self.joints if f"{j}.{f}" not in self.held
        ]
        names += [f"{a}.{f}" for f, tuned in self.actuators for a, _ in tuned]
        return (*names, "delay") if self.delay else tuple(names)

    def values(self, model, dofs: np.ndarray, delay_s: float = 0.0) -> np.ndarray:
        """The model's current values (and the delay), in :attr:`names` order."""
        values = [getattr(model, JOINT_FIELDS[f])[dofs[self.tuned(f)]] for f in self.fields]
        for field, tuned in self.actuators:
            ids = [i for _, i in tuned]
            if field == "kv":
                values.append(-model.actuator_biasprm[ids, 2])
            else:  # kp of a servo, gain of a motor: the gain
                values.append(model.actuator_gainprm[ids, 0])
        return np.concatenate([*values, [delay_s] if self.delay else []])

    def apply(self, model, dofs: np.ndarray, x: np.ndarray) -> float:
        """Write ``x`` into ``model`` (in place); returns the delay [s]."""
        armature_before = model.dof_armature[dofs].copy()
        start = 0
        for field in self.fields:
            tuned = dofs[self.tuned(field)]
            getattr(model, JOINT_FIELDS[field])[tuned] = np.maximum(
                x[start : start + len(tuned)], 0.0
            )
            start += len(tuned)
        for field, tuned in self.actuators:
            ids = [i for _, i in tuned]
            set_actuator_values(model, field, ids, np.maximum(x[start : start + len(ids)], 0.0))
            start += len(ids)
        if not np.array_equal(model.dof_armature[dofs], armature_before):
            # MuJoCo derives constants from the mass matrix at qpos0 when it compiles a model
            # (dof_invweight0 scales the regulariser of frictionloss and limit constraints):
            # without recomputing them the tuned model moves differently from its exported
            # MJCF reloaded. Only when the armature moved: the call costs as much as a short
            # rollout, and most Jacobian columns perturb something else
            import mujoco

            mujoco.mj_setConst(model, mujoco.MjData(model))
        return float(x[-1]) if self.delay else 0.0


def set_actuator_values(model, field: str, ids, values) -> None:  # noqa: ANN001
    """Write ``kp`` / ``kv`` / ``gain`` of the actuators ``ids`` into ``model`` (in place):
    a servo's ``kp`` is its gain and minus its position bias (a servo stays a servo), ``kv``
    minus its velocity bias, a motor's ``gain`` its gain."""
    if field == "kv":
        model.actuator_biasprm[ids, 2] = -np.asarray(values)
        return
    model.actuator_gainprm[ids, 0] = values
    if field == "kp":
        model.actuator_biasprm[ids, 1] = -np.asarray(values)


def tuned_actuators(model, fields: tuple[str, ...]) -> tuple:
    """``Parameters.actuators`` for the actuator ``fields``: each tunes the named actuators of
    its kind (:data:`FIELD_KINDS`); a field no actuator of the model has is an error."""
    import mujoco

    out = []
    for field in fields:
        kind = FIELD_KINDS[field]
        tuned = tuple(
            (mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a), a)
            for a in range(model.nu)
            if servo_kind(model, a) == kind
            and mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_ACTUATOR, a)
        )
        if not tuned:
            raise InputError(
                f"--fit {field}: the model has no named {kind} actuator "
                f"({'<position>' if kind == 'position' else '<motor>'})"
            )
        out.append((field, tuned))
    return tuple(out)


def actuators_of(model, dof: int) -> list[int]:  # noqa: ANN001 - mujoco.MjModel
    """The actuators with a joint transmission on ``dof``."""
    import mujoco

    joint = int(mujoco.mjtTrn.mjTRN_JOINT)
    return [
        a
        for a in range(model.nu)
        if int(model.actuator_trntype[a]) == joint
        and int(model.jnt_dofadr[model.actuator_trnid[a, 0]]) == dof
    ]


def held_parameters(
    model, hold: tuple[str, ...], joints: tuple[str, ...], fields: tuple[str, ...], actuators
) -> tuple[frozenset[str], tuple]:  # noqa: ANN001 - mujoco.MjModel
    """``physid simfit --hold`` resolved: (the held ``joint.field`` names, ``actuators`` of
    :func:`tuned_actuators` without the held ones). An entry is a tuned joint (every term of it
    and of the actuators that drive it: the joint simulates as the file has it) or one term's
    name as simfit.json lists it (``joint.field``, ``actuator.field``)."""
    import mujoco

    joint_terms = {f"{j}.{f}" for f in fields for j in joints}

    def driving(joint: str) -> list[int]:
        dof = model.jnt_dofadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)]
        return actuators_of(model, int(dof))

    actuator_terms = {f"{a}.{f}" for f, tuned in actuators for a, _ in tuned}
    held, held_actuators = set(), set()
    for entry in hold:
        if entry in joints:
            held.update(f"{entry}.{f}" for f in fields)
            ids = driving(entry)
            held_actuators.update(
                f"{a}.{f}" for f, tuned in actuators for a, i in tuned if i in ids
            )
        elif entry in joint_terms:
            held.add(entry)
        elif entry in actuator_terms:
            held_actuators.add(entry)
        else:
            example = f", e.g. '{joints[0]}.{fields[0]}'" if joints and fields else ""
            raise InputError(
                f"--hold: '{entry}' is neither a tuned joint ({', '.join(joints) or 'none'}) "
                f"nor a tuned term (joint.field or actuator.field of --fit{example})"
            )
    kept = (
        (f, tuple((a, i) for a, i in tuned if f"{a}.{f}" not in held_actuators))
        for f, tuned in actuators
    )
    return frozenset(held), tuple((f, tuned) for f, tuned in kept if tuned)


def windows(t: np.ndarray, length_s: float) -> list[tuple[int, int]]:
    """Consecutive sample ranges [start, stop] (inclusive stop) of about ``length_s`` each."""
    starts, k = [], 0
    while k < len(t) - 2:
        stop = int(np.searchsorted(t, t[k] + length_s))
        stop = min(stop, len(t) - 1)
        if stop - k < 3:
            break
        starts.append((k, stop))
        k = stop
    return starts
