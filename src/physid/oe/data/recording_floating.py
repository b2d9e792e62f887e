"""Floating-base columns of a ``physid oe`` trajectory file (documented in docs/oe.md).

- ``base_qx, base_qy, base_qz, base_qw``: IMU orientation of the base frame (quaternion, world
  from base) — the SO(3) residual of paper B section VI-C;
- ``gyro_x, gyro_y, gyro_z``: IMU angular velocity in the base frame [rad/s];
- ``base_vx, base_vy, base_vz`` (optional, all three or none): base linear velocity in the base
  frame [m/s] (pre-integrated accelerometer); without them the base velocity is observed only
  through the dynamics and the legs (best with the feet's no-slip term, ``foot_velocity``);
- ``acc_x, acc_y, acc_z`` (optional, all three or none): the IMU's specific force [m/s^2] in
  its frame (config ``imu.frame``, default the base frame), :mod:`physid.oe.model.accelerometer`;
- ``base_x, base_y, base_z`` (optional): base position in the world [m]; only the first row is
  used, as the arrival prior of the base position (default: the origin);
- ``contact_<frame>`` (optional, 0/1): the known contact sequence, one column per foot frame
  (rigid 3D point contact at that frame, eqs. 2-3; a 0 -> 1 change is a touch-down with an
  impulse, the reset map of eq. 16).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError

QUAT = ("base_qx", "base_qy", "base_qz", "base_qw")
GYRO = ("gyro_x", "gyro_y", "gyro_z")
VEL = ("base_vx", "base_vy", "base_vz")
POS = ("base_x", "base_y", "base_z")
ACC = ("acc_x", "acc_y", "acc_z")


def _block(cols: dict, names: tuple[str, ...], path: str) -> NDArray[np.float64]:
    missing = [n for n in names if n not in cols]
    if missing:
        raise InputError(f"missing column {missing[0]} (floating base)", source=path)
    out = np.column_stack([np.asarray(cols[n], dtype=float) for n in names])
    if not np.all(np.isfinite(out)):
        row = int(np.argwhere(~np.isfinite(out))[0][0])
        raise InputError(f"non-finite {names[0][:-2]} value in row {row + 2}", source=path)
    return out


def read_base_signals(cols: dict, path: str) -> dict[str, NDArray]:
    """IMU orientation, gyro, base velocity and accelerometer (None without their columns), the
    base position of the first row (the arrival prior) and the ``base_x/y/z`` columns of every
    row when given (a reference such as motion capture, for the report; not an observation of
    the estimator), else None."""
    quat = _block(cols, QUAT, path)
    norms = np.linalg.norm(quat, axis=1)
    if np.any(np.abs(norms - 1.0) > 1e-2):
        row = int(np.argmax(np.abs(norms - 1.0)))
        raise InputError(f"base_q* is not a unit quaternion in row {row + 2}", source=path)
    reference = _block(cols, POS, path) if all(n in cols for n in POS) else None
    return {
        "base_quat": quat / norms[:, None],
        "gyro": _block(cols, GYRO, path),
        "base_velocity": _block(cols, VEL, path) if any(n in cols for n in VEL) else None,
        "accelerometer": _block(cols, ACC, path) if any(n in cols for n in ACC) else None,
        "base_position": np.zeros(3) if reference is None else reference[0],
        "base_position_reference": reference,
    }


def read_contacts(
    cols: dict, model: pin.Model, path: str
) -> tuple[tuple[str, ...], NDArray[np.bool_] | None]:
    """``contact_<frame>`` columns as flags ``(rows, n_frames)``; frames must exist."""
    names = sorted(c for c in cols if c.startswith("contact_"))
    frames = tuple(c[len("contact_") :] for c in names)
    for c, f in zip(names, frames, strict=True):
        if not model.existFrame(f):
            raise InputError(f"column {c}: no frame named {f!r} in the URDF", source=path)
        values = np.asarray(cols[c], dtype=float)
        if not np.all(np.isin(values, (0.0, 1.0))):
            raise InputError(f"column {c} must hold 0 or 1", source=path)
    if not frames:
        return (), None
    return frames, np.column_stack([np.asarray(cols[c]) > 0.5 for c in names])


# The base's z axis this far below the horizontal (its world-z component, averaged over the rows
# with a foot in contact) while feet touch the ground: no legged robot stands so
UPSIDE_DOWN = -0.5


def check_upright(quat: NDArray, flags: NDArray[np.bool_] | None, path: str) -> None:
    """An InputError when the orientation columns put the base upside down while its feet are
    in contact: the quaternion logged w, x, y, z (a level base then reads as turned half a turn
    about x) or an IMU mounted upside down. An ANYmal so logged read a 22,520 kg trunk, with
    only a noise-model warning."""
    if flags is None or not flags.any(axis=1).any():
        return
    quat = np.asarray(quat, float)[flags.any(axis=1)]
    up = float(np.mean(1.0 - 2.0 * (quat[:, 0] ** 2 + quat[:, 1] ** 2)))  # R[2, 2], x y z w
    if up < UPSIDE_DOWN:
        raise InputError(
            f"the base_q* columns put the base upside down while its feet touch the ground "
            f"(its z axis at {up:.2f} of the vertical, on average over the rows in contact): "
            "a quaternion logged w, x, y, z (physid reads base_qx, base_qy, base_qz, base_qw), "
            "or an IMU mounted upside down?",
            source=path,
        )


def base_columns(xs: NDArray, nq: int) -> dict[str, NDArray]:
    """Estimated base pose and velocity (base frame) of states ``xs`` as trajectory columns."""
    out = {n: xs[:, i] for i, n in enumerate(POS)}
    out |= {n: xs[:, 3 + i] for i, n in enumerate(QUAT)}
    out |= {n: xs[:, nq + i] for i, n in enumerate(VEL)}
    out |= {n: xs[:, nq + 3 + i] for i, n in enumerate(GYRO)}
    return out
