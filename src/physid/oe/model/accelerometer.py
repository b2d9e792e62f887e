"""Accelerometer observation of a floating base, an ``h(x; theta | u)`` of paper B eq. 1.

Paper B (section VI-C) pre-integrates the IMU's linear acceleration into a base velocity. A log
rarely has that signal, and the integration drifts; this term uses the raw specific force
instead. An accelerometer at a frame S rigidly attached to the base (origin ``r`` and axes
``R_s`` in the base frame) reads, in S's axes::

    f = R_s^T (a_l + w x v_l + alpha x r + w x (w x r) - R^T g)

with the base's local velocity ``(v_l, w)``, its spatial acceleration ``(a_l, alpha)`` (Pinocchio's
local free-flyer ``v[0:6]``, ``a[0:6]``; ``a_l + w x v_l`` is the classical acceleration of the
base origin), the base orientation ``R`` and gravity ``g``. As for the force/torque sensors
(:mod:`physid.oe.model.wrench`) the acceleration is the one the motion really had over node k,
``a_k(x_k, u_k; theta) + w_v / dt``, so the term couples dx_k, dw_k and dtheta. Node N has no
command and no term; an impact between two nodes is in the reset map, not in this model (a
sample that averages over a touch-down sees a spike: size ``noise.accelerometer`` for it).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from physid.errors import InputError
from physid.oe.model.measurements import base_dofs

ACC_COLUMNS = ("acc_x", "acc_y", "acc_z")


class Accelerometer:
    """The sensor's placement on the base: ``frame`` (a frame whose parent joint is the
    free-flyer root) or None for the base frame itself."""

    def __init__(self, model: pin.Model, frame: str | None = None) -> None:
        if not base_dofs(model)[1]:
            raise InputError("an accelerometer (acc_* columns) needs a floating base (--floating)")
        placement = pin.SE3.Identity()
        if frame is not None:
            if not model.existFrame(frame):
                raise InputError(f"accelerometer frame {frame!r}: no such frame in the model")
            f = model.frames[model.getFrameId(frame)]
            if f.parentJoint != 1:
                raise InputError(f"accelerometer frame {frame!r} is not on the floating base")
            placement = f.placement
        self.frame = frame
        self.rotation_T = placement.rotation.T.copy()
        self.lever = placement.translation.copy()
        self.gravity = model.gravity.linear.copy()

    def specific_force(self, x: NDArray, a: NDArray, nq: int) -> NDArray[np.float64]:
        """The reading ``(3,)`` [m/s^2] at the state ``x`` and acceleration ``a``."""
        return self.rotation_T @ self._base_point(x, a, nq)

    def _base_point(self, x: NDArray, a: NDArray, nq: int) -> NDArray[np.float64]:
        R = pin.Quaternion(x[3:7]).normalized().toRotationMatrix()
        v_l, w = x[nq : nq + 3], x[nq + 3 : nq + 6]
        r = self.lever
        return (
            a[0:3]
            + np.cross(w, v_l)
            + np.cross(a[3:6], r)
            + np.cross(w, np.cross(w, r))
            - R.T @ self.gravity
        )

    def residual_and_jacobians(
        self,
        x: NDArray,
        a: NDArray,
        da_dx: NDArray,
        da_dtheta: NDArray,
        dt: float,
        nq: int,
    ) -> tuple[NDArray[np.float64], ...]:
        """``(f, df/dx (3, 2 nv), df/dw (3, 2 nv), df/dtheta)``; ``a`` already includes the
        process noise's ``w_v / dt``."""
        nv = da_dx.shape[0]
        R = pin.Quaternion(x[3:7]).normalized().toRotationMatrix()
        v_l, w, r = x[nq : nq + 3], x[nq + 3 : nq + 6], self.lever
        dp_da = np.zeros((3, nv))
        dp_da[:, 0:3], dp_da[:, 3:6] = np.eye(3), -pin.skew(r)
        dp_dx = dp_da @ da_dx
        dp_dx[:, 3:6] -= pin.skew(R.T @ self.gravity)  # R <- R Exp(delta): local increment
        dp_dx[:, nv : nv + 3] += pin.skew(w)
        dp_dx[:, nv + 3 : nv + 6] -= (
            pin.skew(v_l) + pin.skew(np.cross(w, r)) + pin.skew(w) @ pin.skew(r)
        )
        dp_dw = np.zeros((3, 2 * nv))
        dp_dw[:, nv:] = dp_da / dt
        S = self.rotation_T
        return (
            S @ self._base_point(x, a, nq),
            S @ dp_dx,
            S @ dp_dw,
            S @ dp_da @ da_dtheta,
        )


UPRIGHT_DEG = 25.0  # the mean specific force this far from the vertical: another frame's axes


def check_specific_force(
    model: pin.Model,
    base_quaternion_xyzw: NDArray,
    readings: NDArray,
    frame: str | None,
    source: str,
) -> None:
    """One error line when the accelerometer's readings (N, 3, in ``frame``'s axes) cannot be
    the specific force this term models. Over a log the base's mean acceleration is small
    against gravity, so the readings rotated into the world average to about ``-g`` (9.81 m/s^2
    up). What they average to otherwise names the mistake: about 1 (in g, standard gravity),
    about -g (an acceleration's sign convention, gravity pointing down), about 0 (gravity
    subtracted by the driver), or a vector away from the vertical (the IMU's axes are not
    ``frame``'s: set imu.frame)."""
    sensor = Accelerometer(model, frame)
    finite = np.all(np.isfinite(readings), axis=1) & np.all(
        np.isfinite(base_quaternion_xyzw), axis=1
    )
    if not finite.any():
        return
    in_base = readings[finite] @ sensor.rotation_T  # rows: placement.rotation @ reading
    mean = Rotation.from_quat(base_quaternion_xyzw[finite]).apply(in_base).mean(axis=0)
    g = float(np.linalg.norm(sensor.gravity))
    up = -sensor.gravity / g
    size, along = float(np.linalg.norm(mean)), float(mean @ up)
    where = f"imu.frame {frame!r}" if frame else "the base frame (imu.frame unset)"
    said = f"acc_x, acc_y, acc_z average {size:.3g} m/s^2 in the world"
    if abs(size * 9.80665 / g - 1.0) < 0.15 and along > 0.8 * size:
        cause = "about 1: in g (standard gravity)? physid reads m/s^2"
    elif along < -0.7 * g:
        cause = (
            f"pointing down ({along:.3g} along the vertical): the sign flipped (an "
            "acceleration, not the specific force, which reads +9.81 m/s^2 up at rest)"
        )
    elif size < 0.2 * g:
        cause = (
            "about 0: gravity subtracted by the driver? physid reads the specific force, "
            "gravity included"
        )
    elif abs(size / g - 1.0) < 0.3 and along < size * np.cos(np.radians(UPRIGHT_DEG)):
        tilt = float(np.degrees(np.arccos(np.clip(along / size, -1.0, 1.0))))
        cause = (
            f"{tilt:.0f} deg from the vertical when read in {where}: the IMU's axes are "
            "not that frame's (set imu.frame to the frame the IMU is mounted in)"
        )
    else:
        return
    raise InputError(f"{said}, {cause}", source=source)
