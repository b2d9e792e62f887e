"""Read a trajectory file for :mod:`physid.oe`.

Columns (docs/architecture.md trajectory contract): ``t`` [s] on a uniform grid (the node spacing
dt; jitter up to 1 % of dt; a file that jitters more is resampled at its median step by
:func:`physid.oe.data.regrid.regrid`), ``q_<joint>`` for every joint, ``tau_<joint>`` (the
torque command applied from that sample to the next) for every joint, optional ``dq_<joint>``
(all or none). Continuous (unbounded) joints are read as angles [rad]. Optional force/torque
sensors: ``ft_<frame>_fx, _fy, _fz`` [N] and ``ft_<frame>_tx, _ty, _tz`` [N m], all six per
sensor, the wrench its frame's joint transmits to the subtree, in that frame
(:mod:`physid.oe.model.wrench`). Other columns are reported, not used. A model with a
free-flyer root also reads the base and contact columns of
:mod:`physid.oe.data.recording_floating` (no ``q_``/``tau_`` columns for the root joint).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError
from physid.oe.data.recording_floating import (
    ACC,
    GYRO,
    POS,
    QUAT,
    VEL,
    check_upright,
    read_base_signals,
    read_contacts,
)
from physid.oe.data.regrid import regrid
from physid.oe.model.measurements import Measurements, base_dofs
from physid.oe.model.wrench import WRENCH_AXES
from physid.recordings.base_rates import check_base_rates
from physid.recordings.tables import Table, force_torque_columns
from physid.recordings.trajectory import (
    ANGLE_MARGIN_RAD,
    _check_finite,
    _check_magnitude,
    check_seconds,
    read_table,
)
from physid.recordings.velocity_check import check_velocities
from physid.robot.model import is_revolute_joint, is_unbounded_joint


@dataclass(frozen=True)
class OERecording:
    t: NDArray[np.float64]
    dt: float
    u: NDArray[np.float64]  # (N, nv): tau at nodes 0..N-1
    measurements: Measurements
    unknown_columns: tuple[str, ...]
    x0_prior: NDArray[np.float64] | None = None  # floating base: first row, at rest
    contact_frames: tuple[str, ...] = ()
    contact_flags: NDArray[np.bool_] | None = None
    base_position: NDArray[np.float64] | None = None  # (N+1, 3) base_x/y/z rows, if given
    regridded_from: int | None = None  # rows of a jittery file resampled to the grid (regrid)


def contract_joints(model: pin.Model) -> list[tuple[str, pin.JointModel]]:
    """The joints with contract columns (every joint but a free-flyer root)."""
    first = 2 if base_dofs(model)[1] else 1
    return [(model.names[i], model.joints[i]) for i in range(first, model.njoints)]


UNLIMITED_RAD = 100.0  # wider URDF limits (or none) mean "unlimited": not checked


def _check_angles(cols: dict, model: pin.Model, path: str) -> None:
    """One error line when a limited revolute joint's angles go more than 0.5 rad past one turn
    and its URDF limit: degrees (a Go1 log in degrees came out at 35.9 kg for 8.6, exit 0)."""
    for name, joint in contract_joints(model):
        if joint.nq != 1 or not is_revolute_joint(joint):
            continue
        low, high = model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q]
        if not (np.isfinite(low) and np.isfinite(high) and high > low):
            continue
        limit = max(abs(low), abs(high))
        column = np.asarray(cols["q_" + name], dtype=float)
        peak = float(np.max(np.abs(column[np.isfinite(column)]), initial=0.0))
        if limit <= UNLIMITED_RAD and peak > max(2.0 * np.pi, limit) + ANGLE_MARGIN_RAD:
            raise InputError(
                f"joint '{name}' positions reach {peak:.4g} rad, beyond its URDF limit of "
                f"{limit:.3g} rad and a turn: are they in degrees? (then set angle_unit: "
                "degrees in the config)",
                source=path,
            )


def read_wrenches(cols: dict, model: pin.Model, path: str) -> dict[str, NDArray[np.float64]]:
    """``ft_<frame>_<axis>`` columns as ``{frame: (rows, 6)}``; the frame must exist and
    have all six columns, every value finite."""
    suffixes = tuple("_" + axis for axis in WRENCH_AXES)
    names = sorted({c[3:-3] for c in cols if c.startswith("ft_") and c.endswith(suffixes)})
    out = {}
    for name in names:
        if not model.existFrame(name):
            raise InputError(
                f"column ft_{name}_*: no frame named {name!r} in the URDF", source=path
            )
        columns = force_torque_columns(name)
        missing = [c for c in columns if c not in cols]
        if missing:
            raise InputError(f"missing column {missing[0]} (a sensor needs all six)", source=path)
        z = np.column_stack([np.asarray(cols[c], dtype=float) for c in columns])
        if not np.all(np.isfinite(z)):
            row, axis = np.argwhere(~np.isfinite(z))[0]
            raise InputError(f"non-finite {columns[axis]} value in row {row + 2}", source=path)
        out[name] = z
    return out


def _check_informative(cols: dict, names: list[str], tau: NDArray, path: str) -> None:
    """Refuse what no estimate can come from, with the numbers: every command zero (no torque
    was logged: the fit explained it with 1.6e7 kg), or no joint moving at all (a constant
    recording: 8.7 kg at a reduced chi-square of 152)."""
    if tau.size and not np.any(tau):
        raise InputError(
            f"every command tau_ is zero over {len(tau)} rows: physid oe needs the torques "
            "that drove the robot",
            source=path,
        )
    spans = [float(np.ptp(np.asarray(cols["q_" + n], dtype=float))) for n in names]
    if spans and max(spans) == 0.0:
        raise InputError(
            f"no joint moves: every q_ column is constant over {len(tau)} rows", source=path
        )


def _in_radians(table: Table, model: pin.Model) -> Table:
    """The table with its revolute joints' ``q_`` and ``dq_`` columns converted from degrees
    (config ``angle_unit: degrees``); prismatic joints' and the floating base's stay SI."""
    columns = dict(table.columns)
    for name, joint in contract_joints(model):
        if not is_revolute_joint(joint):
            continue
        for prefix in ("q_", "dq_"):
            if prefix + name in columns:
                columns[prefix + name] = np.radians(np.asarray(columns[prefix + name], float))
    return replace(table, columns=columns)


def read_recording(
    path: str | Table, model: pin.Model, *, angles_in_degrees: bool = False
) -> OERecording:
    """Trajectory of a fixed-base model (a file, or a table already read, e.g. from a ROS 2
    bag); InputError naming the file, column or row. ``angles_in_degrees``: the revolute
    joints' angles and rates are in degrees (config ``angle_unit: degrees``)."""
    table = path if isinstance(path, Table) else read_table(path)
    if angles_in_degrees:
        table = _in_radians(table, model)
    path = table.source
    _check_columns(table, model)
    t, dt, cols, regridded = _time_grid(table)
    _check_angles(cols, model, path)
    names = [name for name, _ in contract_joints(model)]
    q, tau, v = _joint_signals(cols, model, names, path)
    if v is not None:  # estimated from the positions without them
        joints = [joint for _, joint in contract_joints(model)]
        angles = np.column_stack([np.asarray(cols["q_" + n], dtype=float) for n in names])
        check_velocities(
            t,
            angles,
            v,
            tuple(names),
            np.array([is_revolute_joint(j) for j in joints], dtype=bool),
            path,
            optional=True,
        )
    _check_informative(cols, names, tau, path)
    used = {"t"} | {p + n for n in names for p in ("q_", "tau_", "dq_")}
    wrench = read_wrenches(cols, model, path)
    used |= {column for name in wrench for column in force_torque_columns(name)}
    if not base_dofs(model)[1]:
        unknown = tuple(sorted(set(cols) - used))
        meas = Measurements(q=q, v=v, wrench=wrench or None)
        return OERecording(t, dt, tau[:-1], meas, unknown, regridded_from=regridded)
    return _floating(cols, model, path, t, dt, (q, tau, v, wrench), used, regridded)


def _check_columns(table: Table, model: pin.Model) -> None:
    """Every joint 1-DoF with its q_ and tau_ columns, a t column, finite and sane values."""
    path, cols = table.source, table.columns
    for name, joint in contract_joints(model):
        if joint.nv != 1:
            raise InputError(f"joint {name!r} has {joint.nv} DoF; physid oe reads 1-DoF joints")
        for prefix in ("q_", "tau_"):
            if prefix + name not in cols:
                raise InputError(f"missing column {prefix}{name}", source=path)
    if "t" not in cols:
        raise InputError("missing column t", source=path)
    signals = [c for c in cols if c.startswith(("q_", "dq_", "tau_", "ft_"))]
    _check_finite(table, ["t"])  # (a NaN step passed the increasing test)
    _check_magnitude(table, signals)  # 1e300 in a cell made the Riccati step raise LinAlgError


def _time_grid(table: Table) -> tuple[NDArray, float, dict, int | None]:
    """``(t, dt, columns, regridded_from)``: the node times, their step (the median), the
    columns (resampled on the grid when the stamps jitter by more than 1 % of it) and the
    number of rows resampled (None: none)."""
    path, cols = table.source, table.columns
    t = np.asarray(cols["t"], dtype=float)
    steps = np.diff(t)
    if t.size < 3 or np.any(steps <= 0):
        raise InputError("column t must be strictly increasing with at least 3 rows", source=path)
    dt = float(np.median(steps))
    check_seconds(dt, path)  # in ms the solve failed numerically and gave back the URDF, exit 0
    if np.any(np.abs(steps - dt) > 0.01 * dt):  # one node per sample: put it on a grid
        cols = regrid({c: np.asarray(v, dtype=float) for c, v in cols.items()}, t, dt, path)
        return cols["t"], dt, cols, t.size
    return t, dt, cols, None


def _joint_signals(
    cols: dict, model: pin.Model, names: list[str], path: str
) -> tuple[NDArray, NDArray, NDArray | None]:
    """``(q (rows, nq), tau (rows, joints), v (rows, joints) or None)`` of the joints' columns,
    continuous joints unwrapped; non-finite values refused naming the row."""
    rows = np.asarray(cols["t"]).size
    q = np.tile(pin.neutral(model), (rows, 1))
    for name, joint in contract_joints(model):
        angle = np.asarray(cols["q_" + name], dtype=float)
        if joint.nq == 1 and is_revolute_joint(joint) and is_unbounded_joint(model, joint):
            # a continuous joint logged modulo one turn: its (cos, sin) coordinates absorbed
            # the wrap until such joints became revolute without limits (a Kinova's yaw
            # wrapped at +-pi: chi2_red 4.7e4 and 1.64 kg for 1.53, converged and exact before)
            angle = np.unwrap(angle)
        if joint.nq == 2:
            q[:, joint.idx_q], q[:, joint.idx_q + 1] = np.cos(angle), np.sin(angle)
        else:
            q[:, joint.idx_q] = angle
    tau = np.column_stack([np.asarray(cols["tau_" + n], dtype=float) for n in names])
    has_dq = [("dq_" + n) in cols for n in names]
    if any(has_dq) and not all(has_dq):
        raise InputError(
            f"give dq_ for all joints or none (missing dq_{names[has_dq.index(False)]})",
            source=path,
        )
    v = np.column_stack([cols["dq_" + n] for n in names]) if all(has_dq) else None
    for label, arr in (("q", q), ("tau", tau), ("dq", v)):
        if arr is not None and not np.all(np.isfinite(arr)):
            row = int(np.argwhere(~np.isfinite(arr))[0][0])
            raise InputError(f"non-finite {label} value in row {row + 2}", source=path)
    return q, tau, v


def _floating(  # noqa: PLR0913
    cols: dict,
    model: pin.Model,
    path: str,
    t: NDArray,
    dt: float,
    joints: tuple,
    used: set[str],
    regridded: int | None,
) -> OERecording:
    """The recording of a free-flyer model: the joints' ``(q, tau, v, wrench)`` with the base
    and contact columns of :mod:`physid.oe.data.recording_floating`, checked."""
    q, tau, v, wrench = joints
    base = read_base_signals(cols, path)
    frames, flags = read_contacts(cols, model, path)
    check_upright(base["base_quat"], flags, path)
    reference, velocity = base["base_position_reference"], base["base_velocity"]
    linear = None
    if reference is not None and velocity is not None:  # the velocity against motion capture
        linear = (reference, velocity, ", ".join(VEL))
    check_base_rates(t, base["base_quat"], (base["gyro"], ", ".join(GYRO)), path, linear=linear)
    used = used | set(QUAT + GYRO + VEL + POS + ACC) | {"contact_" + f for f in frames}
    q[:, :3], q[:, 3:7] = base["base_position"], base["base_quat"]
    x0 = np.r_[q[0], np.zeros(model.nv)]
    meas = Measurements(
        q=q,
        v=v,
        base_quat=base["base_quat"],
        gyro=base["gyro"],
        base_velocity=base["base_velocity"],
        wrench=wrench or None,
        accelerometer=base["accelerometer"],
    )
    unknown = tuple(sorted(set(cols) - used))
    return OERecording(t, dt, tau[:-1], meas, unknown, x0, frames, flags, reference, regridded)
