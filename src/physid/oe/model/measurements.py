"""Observation models h(x) of paper B eq. 1 / eq. 16 as whitened residuals with Jacobians.

Every term is ``r = Sigma^-1/2 (z_hat (-) h(x))`` so that its cost is ``1/2 |r|^2`` and its
Gauss-Newton Hessian ``J^T J``. Terms (each optional, per node k = 0..N):

- joint encoders: ``q_joints (-) q_hat`` on the joint manifold (Pinocchio ``difference``);
- joint velocities (e.g. differentiated encoders): ``v_joints - v_hat``;
- IMU orientation of the base frame: ``Log(R_hat^T R_b)`` in SO(3) (section VI-C);
- IMU angular velocity and base linear velocity (pre-integrated accelerometer), both in the base
  frame, i.e. Pinocchio's local free-flyer velocity ``v[3:6]`` and ``v[0:3]`` (section VI-C);
- six-axis force/torque sensors: the samples are held here, the model (which depends on the
  node's acceleration and on theta) is :mod:`physid.oe.model.wrench`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError
from physid.oe.model.state import ARG1


@dataclass(frozen=True)
class Measurements:
    """Sensor samples at the N + 1 nodes (``None``: sensor absent).

    ``q``: encoder positions, full configuration ``(N+1, nq)`` (the base part of a floating-base
    configuration is ignored); ``v``: joint velocities ``(N+1, nv_joints)``; ``base_quat``:
    IMU orientation of the base as quaternion ``(x, y, z, w)``, ``(N+1, 4)``; ``gyro``: base
    angular velocity in the base frame [rad/s]; ``base_velocity``: base linear velocity in the
    base frame [m/s]; ``wrench``: force/torque sensor samples by sensor frame name, ``(N+1, 6)``
    ``[fx, fy, fz, tx, ty, tz]`` [N, N m] in that frame, bias removed
    (:mod:`physid.oe.model.wrench`;
    the last row is not used: there is no command at node N); ``accelerometer``: specific force
    ``(N+1, 3)`` [m/s^2] of the base's IMU in its frame (:mod:`physid.oe.model.accelerometer`; the
    last row is not used).
    """

    q: NDArray[np.float64] | None = None
    v: NDArray[np.float64] | None = None
    base_quat: NDArray[np.float64] | None = None
    gyro: NDArray[np.float64] | None = None
    base_velocity: NDArray[np.float64] | None = None
    wrench: Mapping[str, NDArray[np.float64]] | None = None
    accelerometer: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class NoiseStd:
    """Standard deviations of the sensors, the process noise w (per node, for the q and v parts
    of the tangent space) and the arrival state, all SI.

    ``process_q`` / ``process_v``: one number for every degree of freedom, or one per degree
    of freedom of the tangent space (``nv`` values, the base's 6 first for a free-flyer), e.g.
    from the actuators' torque uncertainty by :func:`process_std_from_torque`.
    ``foot_velocity`` [m/s]: the no-slip observation of the feet in contact (their world
    velocity is 0 with this standard deviation at every node of their stance); None: no term.
    ``force`` [N] / ``torque`` [N m]: force/torque sensors, per axis (default: a wrist-class
    six-axis sensor, e.g. ATI Mini45 resolution 1/16 N and 1/752 N m, with margin for its
    drift after taring). ``accelerometer`` [m/s^2]: per axis (a BMI088-class IMU reads
    0.04 m/s^2 of white noise over a 500 Hz band; the rest is margin for vibration).
    ``contact_change_v`` (None: off): the process_v standard deviation (floor) at the nodes
    within ``contact_change_window`` [s] of a contact flag change, where a soft foot's
    touch-down, bounce or lift-off is not the rigid model's (issue 29 item 2).
    """

    encoder: float = 1e-3
    joint_velocity: float = 5e-2
    orientation: float = 1e-2
    gyro: float = 1e-2
    base_velocity: float = 2e-2
    process_q: float | NDArray[np.float64] = 1e-5
    process_v: float | NDArray[np.float64] = 1e-3
    arrival_q: float = 1e-1
    arrival_v: float = 1.0
    foot_velocity: float | None = None
    force: float = 0.1
    torque: float = 5e-3
    accelerometer: float = 0.1
    contact_change_v: float | None = None
    contact_change_window: float = 0.02

    def process_std(self, nv: int) -> NDArray[np.float64]:
        """Standard deviations of ``w = [w_q; w_v]`` ``(2 nv,)``; bad values are an InputError
        naming the field."""
        parts = []
        for name in ("process_q", "process_v"):
            value = np.asarray(getattr(self, name), dtype=float)
            if value.ndim > 1 or (value.ndim == 1 and value.shape[0] != nv):
                raise InputError(f"noise {name} must be one number or {nv} (nv) numbers")
            if not np.all(np.isfinite(value) & (value > 0)):
                raise InputError(f"noise {name} must be positive and finite, got {value}")
            parts.append(np.broadcast_to(value, (nv,)))
        return np.concatenate(parts)


def process_std_from_torque(
    model: pin.Model,
    q: NDArray,
    dt: float,
    torque_std: float | NDArray,
    floor: float = 1e-3,
    base_wrench_std: float | NDArray = 0.0,
) -> NDArray[np.float64]:
    """Per-DoF ``process_v`` ``(nv,)`` from what a user knows about the actuators.

    ``torque_std`` [N m or N]: the uncertainty of the torque each joint after the base really
    applies for its command (torque-constant spread times the typical command, friction, ...),
    one number or one per joint; ``base_wrench_std``: an unmodelled external wrench on a
    free-flyer base (default none). A generalized-force error ``delta_tau`` held over a node
    changes v by ``dt M(q)^-1 delta_tau`` (semi-implicit Euler), so the standard deviations are
    ``dt sqrt(diag(M^-1 Sigma_tau M^-1))`` at a typical configuration ``q`` (free dynamics: the
    contacts' share is ignored), never below ``floor``."""
    _, bv = base_dofs(model)
    joints = np.broadcast_to(np.asarray(torque_std, dtype=float), (model.nv - bv,))
    std = np.r_[np.broadcast_to(np.asarray(base_wrench_std, dtype=float), (bv,)), joints]
    if not np.all(np.isfinite(std) & (std >= 0)):
        raise InputError(f"torque_std must be non-negative and finite, got {torque_std!r}")
    M = pin.crba(model, model.createData(), np.asarray(q, dtype=float))
    Minv = np.linalg.inv(np.triu(M) + np.triu(M, 1).T)
    cov = (Minv * std**2) @ Minv.T
    return np.maximum(dt * np.sqrt(np.diag(cov)), floor)


def base_dofs(model: pin.Model) -> tuple[int, int]:
    """``(nq, nv)`` of the base joint: (7, 6) for a free-flyer root, else (0, 0)."""
    if model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer":
        return 7, 6
    return 0, 0


def residuals(
    model: pin.Model, meas: Measurements, std: NoiseStd, k: int, x: NDArray, jacobian: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """Whitened residual stack at node k and, if asked, its Jacobian ``(m, 2 nv)``."""
    nq, nv = model.nq, model.nv
    bq, bv = base_dofs(model)
    q, v = x[:nq], x[nq:]
    parts: list[NDArray] = []
    jacs: list[NDArray] = []

    def add(r: NDArray, J: NDArray | None, sigma: float) -> None:
        parts.append(r / sigma)
        if jacobian:
            jacs.append(J / sigma)

    if meas.q is not None:
        q_hat = np.concatenate([q[:bq], meas.q[k, bq:]])
        J = None
        if jacobian:
            J = np.zeros((nv - bv, 2 * nv))
            J[:, :nv] = pin.dDifference(model, q_hat, q, ARG1)[bv:]
        add(pin.difference(model, q_hat, q)[bv:], J, std.encoder)
    if meas.v is not None:
        J = np.eye(nv, 2 * nv, nv)[bv:] if jacobian else None
        add(v[bv:] - meas.v[k], J, std.joint_velocity)
    if bv and meas.base_quat is not None:
        R = pin.Quaternion(q[3:7]).toRotationMatrix()
        R_hat = pin.Quaternion(meas.base_quat[k]).normalized().toRotationMatrix()
        error = R_hat.T @ R
        J = None
        if jacobian:
            J = np.zeros((3, 2 * nv))
            J[:, 3:6] = pin.Jlog3(error)  # R (+) delta = R Exp(delta): local increment
        add(pin.log3(error), J, std.orientation)
    if bv and meas.gyro is not None:
        add(v[3:6] - meas.gyro[k], np.eye(3, 2 * nv, nv + 3) if jacobian else None, std.gyro)
    if bv and meas.base_velocity is not None:
        J = np.eye(3, 2 * nv, nv) if jacobian else None
        add(v[0:3] - meas.base_velocity[k], J, std.base_velocity)
    r = np.concatenate(parts) if parts else np.zeros(0)
    if not jacobian:
        return r, None
    return r, (np.vstack(jacs) if jacs else np.zeros((0, 2 * nv)))
