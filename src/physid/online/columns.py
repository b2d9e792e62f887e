"""The trajectory-contract columns that ``physid online`` reads (docs/architecture.md, plus floating
base).

From any table :func:`physid.recordings.trajectory.read_table` reads (CSV, NPZ, Parquet, recording
manifest):

* ``t`` [s];
* per 1-DoF joint ``<joint>`` (URDF name; every joint except the free-flyer ``root_joint``):
  ``q_<joint>`` [rad or m], ``dq_<joint>`` [rad/s or m/s], ``tau_<joint>`` [N m or N];
* floating base (config ``floating_base: true``), the root pose in the world frame
  ``base_x, base_y, base_z`` [m] and unit quaternion ``base_qx, base_qy, base_qz, base_qw``, and
  the root velocity *in the root frame* (Pinocchio's free-flyer convention)
  ``base_vx, base_vy, base_vz`` [m/s] and ``base_wx, base_wy, base_wz`` [rad/s];
* per contact frame ``<frame>`` (config ``contact_frames``), the logged wrench that the
  environment applies to the robot, expressed in ``LOCAL_WORLD_ALIGNED`` at the frame (origin
  of the frame, world axes): force ``f_<frame>_x, f_<frame>_y, f_<frame>_z`` [N] and moment
  about the frame origin ``m_<frame>_x, m_<frame>_y, m_<frame>_z`` [N m]; zero when the contact
  is open.
  Or, as a force/torque sensor at the frame reports it (a ROS 2 bag's WrenchStamped topic,
  :mod:`physid.recordings.logs`), the same wrench in the frame's own axes,
  ``ft_<frame>_fx, _fy, _fz, _tx, _ty, _tz``: rotated to the world axes with the frame's
  orientation at each sample's ``q`` (forward kinematics). A sensor that reports the wrench
  the robot applies to the environment needs its sign flipped first.

Accelerations are not read: the filter differentiates ``dq`` itself (paper E §III-D), so
``ddq_<joint>`` columns are reported as unused. Unlike ``physid identify``, non-finite signal
values and time gaps are not errors here: the filter skips those samples and flags them
(``physid online`` still refuses non-finite time stamps and values beyond 1e8:
:mod:`physid.online.verdict`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError
from physid.findings import Finding
from physid.online.codes import UNUSED_COLUMNS, VELOCITIES_FROM_POSITIONS
from physid.online.measurement import is_floating_base
from physid.recordings.base_rates import check_base_rates
from physid.recordings.tables import Table, force_torque_columns
from physid.recordings.trajectory import interpolated, rows_with_motion_earlier
from physid.recordings.velocity_check import check_velocities
from physid.robot.model import is_revolute_joint

BASE_POSE_COLUMNS = ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw")
BASE_VELOCITY_COLUMNS = ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")


def wrench_columns(frame: str) -> tuple[str, ...]:
    """The six columns of the logged wrench at ``frame`` (force, then moment)."""
    return tuple(f"{kind}_{frame}_{axis}" for kind in ("f", "m") for axis in "xyz")


@dataclass(frozen=True)
class OnlineSignals:
    """What a filter's ``update`` takes, for every sample of a recording."""

    t: NDArray[np.float64]  # (N,)
    q: NDArray[np.float64]  # (N, nq)
    dq: NDArray[np.float64] | None  # (N, nv); None: estimated from q by the filter
    tau: NDArray[np.float64]  # (N, n_actuated)
    wrenches: NDArray[np.float64] | None  # (N, n_contacts, 6)
    source: str = ""
    # what physid.recordings read about the columns (velocities left out, time base), as text
    warnings: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()  # what this module saw (codes ON1xx)

    @property
    def n_samples(self) -> int:
        return len(self.t)


def motion_read_earlier(signals: OnlineSignals, delay_s: float) -> OnlineSignals:
    """The signals as the model of a torque logged ``delay_s`` behind the motion sees them (the
    delay the nominal params.json's identification compensated: it is part of that model, as
    for ``physid validate``): the motion (positions, velocities) of ``t - delay_s``, linearly
    interpolated, with the torque and wrenches as logged at ``t`` (never interpolated: that
    would average their noise); the rows whose ``t - delay_s`` leaves the recording dropped."""
    kept = rows_with_motion_earlier(signals.t, delay_s, signals.source)
    at = signals.t[kept] - delay_s

    def earlier(values: NDArray[np.float64] | None) -> NDArray[np.float64] | None:
        return None if values is None else interpolated(at, signals.t, values)

    wrenches = None if signals.wrenches is None else signals.wrenches[kept]
    return replace(
        signals,
        t=signals.t[kept],
        q=earlier(signals.q),
        dq=earlier(signals.dq),
        tau=signals.tau[kept],
        wrenches=wrenches,
    )


def _column(table: Table, name: str, what: str) -> NDArray[np.float64]:
    if name in table.columns:
        return np.asarray(table.columns[name], dtype=float)
    hint = difflib.get_close_matches(name, table.columns.keys(), n=1, cutoff=0.6)
    suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
    raise InputError(f"missing column '{name}' ({what}){suggestion}", source=table.source)


def actuated_joints(model: pin.Model) -> tuple[str, ...]:
    """Names of the 1-DoF joints in velocity order; InputError for other joint types."""
    names = []
    first = 2 if is_floating_base(model) else 1
    for joint_id in range(first, model.njoints):
        joint = model.joints[joint_id]
        if joint.nq != 1 or joint.nv != 1:
            raise InputError(
                f"joint '{model.names[joint_id]}' ({joint.shortname()}) is not supported online: "
                "use revolute or prismatic joints, and a free flyer only as the root"
            )
        names.append(model.names[joint_id])
    return tuple(names)


def signals_from_table(
    table: Table,
    model: pin.Model,
    contact_frames: tuple[str, ...] = (),
    *,
    angles_in_degrees: bool = False,
) -> OnlineSignals:
    """Pick and order the columns of ``table`` for ``model`` (see the module docstring);
    ``angles_in_degrees``: the revolute joints' ``q_`` and ``dq_`` are in degrees (config
    ``angle_unit: degrees``) and converted to radians (the base's columns stay SI)."""
    joints = actuated_joints(model)
    t = _column(table, "t", "time in seconds")
    reader = _Reader(table, len(t))
    _refuse_currents_without_gains(table, joints)
    q = reader.block(tuple(f"q_{j}" for j in joints), "joint position")
    dq = _logged_velocities(reader, model, joints)
    findings, readings = [], []
    if dq is None:  # a plain log: positions and torques only
        findings.append(
            VELOCITIES_FROM_POSITIONS(
                f"{table.source}: no dq_ columns: velocities estimated from the positions (causal "
                "quadratic fit over the acceleration window, same delay)",
                names=(table.source,),
            )
        )
    revolute = np.array(
        [is_revolute_joint(model.joints[model.getJointId(j)]) for j in joints], dtype=bool
    )
    if angles_in_degrees:
        q, dq = _radians(q, revolute), None if dq is None else _radians(dq, revolute)
    if dq is not None:
        left_out = check_velocities(
            t,
            q,
            dq,
            joints,
            revolute,
            table.source,
            optional=not is_floating_base(model),
            zeros_left_out=True,
        )
        if left_out is not None:
            dq = None
            readings.append(left_out)
    tau = reader.block(tuple(f"tau_{j}" for j in joints), "joint torque")
    _refuse_a_moving_base(table, model)
    if is_floating_base(model):
        q, dq = _with_base(reader, t, q, dq)
    wrenches = _contact_wrenches(reader, model, q, contact_frames) if contact_frames else None
    if wrenches is not None and is_floating_base(model):
        check_contact_weight(model, wrenches, table.source)
    unused = sorted(set(table.columns) - reader.used)
    if unused:
        findings.append(
            UNUSED_COLUMNS(f"{table.source}: unused column(s): {', '.join(unused)}", names=unused)
        )
    return OnlineSignals(t, q, dq, tau, wrenches, table.source, tuple(readings), tuple(findings))


class _Reader:
    """The columns of ``table`` read so far (:attr:`used`), in blocks of ``rows`` rows."""

    def __init__(self, table: Table, rows: int) -> None:
        self.table, self.rows, self.used = table, rows, {"t"}

    def block(self, names: tuple[str, ...], what: str) -> NDArray[np.float64]:
        """The columns ``names`` side by side (a missing one: InputError naming it)."""
        self.used.update(names)
        if not names:
            return np.zeros((self.rows, 0))
        return np.column_stack([_column(self.table, n, what) for n in names])


def _refuse_currents_without_gains(table: Table, joints: tuple[str, ...]) -> None:
    """An error line for a joint logged as a motor current (``i_``) without a torque column:
    the api has converted the currents of the configured drive gains already."""
    for joint in joints:
        if f"tau_{joint}" not in table.columns and f"i_{joint}" in table.columns:
            raise InputError(
                f"column 'i_{joint}' is a motor current but no drive gain is configured for "
                f"'{joint}': give the gains in the online config (drive_gains: {{joint: N m/A, "
                "joint side}, or identify: those of the nominal params.json)",
                source=table.source,
            )


def _logged_velocities(
    reader: _Reader, model: pin.Model, joints: tuple[str, ...]
) -> NDArray[np.float64] | None:
    """The ``dq_`` columns of the joints: all or none (None: a fixed base logged without them,
    the filter estimates them); a floating base needs them all."""
    table = reader.table
    names = tuple(f"dq_{j}" for j in joints)
    if not (is_floating_base(model) or any(n in table.columns for n in names)):
        return None
    missing = [n for n in names if n not in table.columns]
    if missing and not is_floating_base(model):  # a near name was suggested: q_ itself
        raise InputError(
            f"missing column '{missing[0]}' (joint velocity): the dq_ columns are all or "
            f"none ({len(names) - len(missing)} of {len(names)} present; "
            "without any, the velocities are estimated from the positions)",
            source=table.source,
        )
    return reader.block(names, "joint velocity")


def _radians(values: NDArray[np.float64], revolute: NDArray[np.bool_]) -> NDArray[np.float64]:
    """``values`` with the revolute joints' columns converted from degrees."""
    values = values.copy()
    values[:, revolute] = np.radians(values[:, revolute])
    return values


def _refuse_a_moving_base(table: Table, model: pin.Model) -> None:
    """A legged robot's log read as a fixed-base arm: its base's motion and the ground's forces
    land on the joints, and the estimated body absorbs them at several times its mass, status
    ok."""
    logged_base = [
        n
        for n in (*BASE_POSE_COLUMNS, *BASE_VELOCITY_COLUMNS)
        if n in table.columns and _varies(table.columns[n], _BASE_MOTION[n[5]])
    ]
    if logged_base and not is_floating_base(model):
        raise InputError(
            f"the recording logs a moving base ({', '.join(logged_base[:3])}"
            f"{', ...' if len(logged_base) > 3 else ''}) but the robot is read with a fixed "
            "base: set floating_base: true in the online config (and its contact_frames)",
            source=table.source,
        )


def _with_base(
    reader: _Reader, t: NDArray[np.float64], q: NDArray[np.float64], dq: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``q`` and ``dq`` with the floating base's pose and velocity columns first, checked
    against each other (:func:`physid.recordings.base_rates.check_base_rates`)."""
    q = np.hstack([reader.block(BASE_POSE_COLUMNS, "floating-base pose, world frame"), q])
    dq = np.hstack([reader.block(BASE_VELOCITY_COLUMNS, "floating-base velocity, root frame"), dq])
    check_base_rates(
        t,
        q[:, 3:7],
        (dq[:, 3:6], "base_wx, base_wy, base_wz"),
        reader.table.source,
        linear=(q[:, :3], dq[:, :3], "base_vx, base_vy, base_vz"),
    )
    return q, dq


def _contact_wrenches(
    reader: _Reader, model: pin.Model, q: NDArray[np.float64], contact_frames: tuple[str, ...]
) -> NDArray[np.float64]:
    """(N, frames, 6) world-aligned wrenches: the ``f_/m_`` columns, or a sensor's ``ft_``
    columns in its frame's axes rotated with each sample's kinematics."""
    table = reader.table

    def what(frame: str) -> str:
        return f"wrench at contact frame '{frame}'"

    local = [f for f in contact_frames if _sensor_frame_only(table, f)]
    reader.used.update(name for f in local for name in force_torque_columns(f))
    in_frames = {
        f: np.column_stack([_column(table, n, what(f)) for n in force_torque_columns(f)])
        for f in local
    }
    rotated = _world_aligned(model, q, in_frames)
    return np.stack(
        [
            rotated[f] if f in rotated else reader.block(wrench_columns(f), what(f))
            for f in contact_frames
        ],
        axis=1,
    )


# The contacts of a floating base carry its weight on average over a log (the vertical momentum
# it gains over the log is small against the weight times the duration). A mean vertical force
# of these ratios to the model's weight is a mistake, not a payload or a harness: pushed down
# (the sign of a sensor that reports what the robot applies), in kilogram-force, in mN or kN.
_WEIGHT_MISTAKES = (
    (
        -1.0,
        "the sign flipped (wrenches the robot applies to the ground, not "
        "those the ground applies to it)",
    ),
    (1.0 / 9.80665, "forces in kilogram-force?"),
    (1e3, "forces in mN?"),
    (1e-3, "forces in kN?"),
)


def check_contact_weight(model: pin.Model, wrenches: NDArray[np.float64], source: str) -> None:
    """One error line when the logged contact forces (N, frames, 6; world-aligned) of a
    floating base average to one of :data:`_WEIGHT_MISTAKES` times the model's weight (within
    50 % for the sign, 15 % for the units). The filter would read them as a body of a small
    fraction of its mass, status suspect with only a generic hint on units and signs."""
    vertical = wrenches[:, :, 2].sum(axis=1)
    vertical = vertical[np.isfinite(vertical)]
    mass = pin.computeTotalMass(model)
    weight = mass * float(np.linalg.norm(model.gravity.linear))
    if not vertical.size or weight <= 0.0:
        return
    ratio = float(np.mean(vertical)) / weight
    for expected, cause in _WEIGHT_MISTAKES:
        tolerance = 0.5 if expected < 0.0 else 0.15
        if abs(ratio / expected - 1.0) <= tolerance:
            raise InputError(
                f"the contact forces' vertical sum averages {np.mean(vertical):.4g} N, "
                f"{ratio:.3g} x the robot's weight ({weight:.4g} N, the robot file's "
                f"{mass:.4g} kg): {cause}",
                source=source,
            )


# A base that moves, by its columns' spread: 1 cm (base_x/y/z), 0.01 of a unit quaternion
# (about 1 deg, base_q*), 0.05 m/s or rad/s (base_v*, base_w*); a pedestal's pose logged by a
# tracker stays within its noise, far below.
_BASE_MOTION = {"x": 0.01, "y": 0.01, "z": 0.01, "q": 0.01, "v": 0.05, "w": 0.05}


def _varies(column: NDArray[np.float64], spread: float) -> bool:
    """More than ``spread`` (its units) between its finite extremes."""
    finite = np.asarray(column, float)
    finite = finite[np.isfinite(finite)]
    return finite.size > 0 and float(np.ptp(finite)) > spread


def _sensor_frame_only(table: Table, frame: str) -> bool:
    """Whether the contact wrench at ``frame`` is given only in the frame's axes."""
    columns = table.columns
    return not any(n in columns for n in wrench_columns(frame)) and any(
        n in columns for n in force_torque_columns(frame)
    )


def _world_aligned(
    model: pin.Model, q: NDArray[np.float64], local: dict[str, NDArray[np.float64]]
) -> dict[str, NDArray[np.float64]]:
    """Wrenches ``(N, 6)`` in their frames' axes rotated to the world axes (about the same
    point, the frame's origin: ``LOCAL_WORLD_ALIGNED``), with each sample's kinematics."""
    if not local:
        return {}
    for frame in local:
        if not model.existFrame(frame):
            raise InputError(f"column ft_{frame}_fx: no frame named {frame!r} in the robot model")
    data = model.createData()
    ids = {frame: model.getFrameId(frame) for frame in local}
    out = {frame: np.empty_like(values) for frame, values in local.items()}
    for k, configuration in enumerate(q):
        pin.framesForwardKinematics(model, data, configuration)
        for frame, values in local.items():
            rotation = data.oMf[ids[frame]].rotation
            out[frame][k, :3] = rotation @ values[k, :3]
            out[frame][k, 3:] = rotation @ values[k, 3:]
    return out


def signals_table(
    signals: OnlineSignals, model: pin.Model, contact_frames: tuple[str, ...] = ()
) -> dict[str, NDArray[np.float64]]:
    """The inverse of :func:`signals_from_table`: contract columns, e.g. to write a recording."""
    joints = actuated_joints(model)
    columns: dict[str, NDArray[np.float64]] = {"t": signals.t}
    q, dq = signals.q, signals.dq
    if is_floating_base(model):  # (a floating base always has dq)
        columns.update({n: q[:, k] for k, n in enumerate(BASE_POSE_COLUMNS)})
        columns.update({n: dq[:, k] for k, n in enumerate(BASE_VELOCITY_COLUMNS)})
        q, dq = q[:, 7:], dq[:, 6:]
    for k, joint in enumerate(joints):
        columns[f"q_{joint}"] = q[:, k]
        if dq is not None:
            columns[f"dq_{joint}"] = dq[:, k]
        columns[f"tau_{joint}"] = signals.tau[:, k]
    for c, frame in enumerate(contact_frames):
        for k, name in enumerate(wrench_columns(frame)):
            columns[name] = signals.wrenches[:, c, k]
    return columns
