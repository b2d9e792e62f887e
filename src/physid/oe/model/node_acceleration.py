"""Observations that see a node's acceleration: force/torque sensors and the accelerometer.

Both read ``a_k(x_k, u_k; theta) + w_v,k / dt`` — the acceleration the motion really had over
node k (:mod:`physid.oe.model.wrench`, :mod:`physid.oe.model.accelerometer`) — so their
residuals depend on
``x_k``, ``w_k`` and ``theta``. This module validates their samples and stacks their whitened
residuals and Jacobians for :class:`physid.oe.solving.problem.OEProblem`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from physid.errors import InputError
from physid.oe.model.accelerometer import ACC_COLUMNS, Accelerometer
from physid.oe.model.dynamics import ParametrizedModel
from physid.oe.model.measurements import Measurements, NoiseStd
from physid.oe.model.wrench import WRENCH_AXES, WrenchSensor, wrench_residuals


def _samples(name: str, z: NDArray, rows: int, axes: Sequence[str]) -> NDArray[np.float64]:
    z = np.asarray(z, dtype=float)
    if z.shape != (rows, len(axes)):
        raise InputError(f"{name}: samples must be ({rows}, {len(axes)}), got {z.shape}")
    if not np.all(np.isfinite(z)):
        row, axis = np.argwhere(~np.isfinite(z))[0]
        raise InputError(f"{name}: non-finite {axes[axis]} at node {row}")
    return z


def _positive(label: str, value: float) -> float:
    if not (np.isfinite(value) and value > 0):
        raise InputError(f"noise {label} must be positive and finite, got {value!r}")
    return float(value)


class NodeAccelerationObservations:
    """The force/torque sensors and the accelerometer of one problem (either may be absent)."""

    def __init__(
        self,
        dyn: ParametrizedModel,
        meas: Measurements,
        noise: NoiseStd,
        horizon: int,
        contact_frames: Sequence[str] = (),
        imu_frame: str | None = None,
    ) -> None:
        rows = horizon + 1
        wrench = dict(meas.wrench or {})
        self.sensors = [WrenchSensor(dyn.model, name, contact_frames) for name in wrench]
        self.wrench = [
            _samples(f"force/torque sensor {n!r}", z, rows, WRENCH_AXES) for n, z in wrench.items()
        ]
        force, torque = _positive("force", noise.force), _positive("torque", noise.torque)
        self.wrench_std = np.r_[np.full(3, force), np.full(3, torque)]
        self.imu = self.acc = None
        if meas.accelerometer is not None:
            self.imu = Accelerometer(dyn.model, imu_frame)
            self.acc = _samples("accelerometer", meas.accelerometer, rows, ACC_COLUMNS)
            self.acc_std = _positive("accelerometer", noise.accelerometer)
        self.acc_bias = np.zeros(3)  # m/s^2, sensor axes: added to the model's reading

    @property
    def active(self) -> bool:
        return bool(self.sensors) or self.imu is not None

    def wrench_terms(
        self, dyn: ParametrizedModel, k: int, x: NDArray, w: NDArray, accel
    ) -> tuple[NDArray[np.float64], ...]:  # noqa: ANN001
        """Whitened force/torque residuals of node k (and Jacobians when ``accel`` holds
        ``(a, da/dx, da/dtheta)``), :func:`physid.oe.model.wrench.wrench_residuals`."""
        z = [samples[k] for samples in self.wrench]
        return wrench_residuals(self.sensors, z, self.wrench_std, dyn, x, w, accel)

    def accelerometer_error(
        self, dyn: ParametrizedModel, k: int, x: NDArray, w: NDArray, a: NDArray
    ) -> NDArray[np.float64]:
        """Modelled minus measured accelerometer reading [m/s^2] at node k, bias included;
        ``a``: the node's acceleration, to which the process noise's ``w_v / dt`` is added."""
        nq, nv = dyn.model.nq, dyn.model.nv
        f = self.imu.specific_force(x, a + w[nv:] / dyn.dt, nq)
        return f + self.acc_bias - self.acc[k]

    def terms(
        self, dyn: ParametrizedModel, k: int, x: NDArray, w: NDArray, accel
    ) -> tuple[NDArray[np.float64], ...]:  # noqa: ANN001
        """Every whitened residual of node ``k < N``: ``(r,)`` for an acceleration ``accel``,
        ``(r, Jx, Jw, Jtheta)`` for ``(a, da/dx, da/dtheta)``."""
        jacobian = isinstance(accel, tuple)
        parts = [self.wrench_terms(dyn, k, x, w, accel)] if self.sensors else []
        if self.imu is not None:
            s = self.acc_std
            if jacobian:
                nq, nv = dyn.model.nq, dyn.model.nv
                a = accel[0] + w[nv:] / dyn.dt
                f, Jx, Jw, Jt = self.imu.residual_and_jacobians(
                    x, a, accel[1], accel[2], dyn.dt, nq
                )
                parts.append(((f + self.acc_bias - self.acc[k]) / s, Jx / s, Jw / s, Jt / s))
            else:
                parts.append((self.accelerometer_error(dyn, k, x, w, accel) / s,))
        if len(parts) == 1:
            return parts[0]
        r = np.concatenate([p[0] for p in parts])
        if not jacobian:
            return (r,)
        return (r, *(np.vstack([p[i] for p in parts]) for i in (1, 2, 3)))
