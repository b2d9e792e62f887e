"""Observation models h(x) of paper B eq. 1 / eq. 16 as whitened residuals with Jacobians.

Every term is ``r = Sigma^-1/2 (z_hat (-) h(x))`` so that its cost is ``1/2 |r|^2`` and its
Gauss-Newton Hessian ``J^T J``. Terms (each optional, per node k = 0..N):

- joint encoders: ``q_joints (-) q_hat`` on the joint manifold (Pinocchio ``difference``);
- joint velocities (e.g. differentiated encoders): ``v_joints - v_hat``;
- IMU orientation of the base frame: ``Log(R_hat^T R_b)`` in SO(3) (section VI-C);
- IMU angular velocity and base linear velocity (pre-integrated accelerometer), both in the base
  frame, i.e. Pinocchio's local free-flyer velocity ``v[3:6]`` and ``v[0:3]`` (section VI-C).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.oe.state import ARG1


@dataclass(frozen=True)
class Measurements:
    """Sensor samples at the N + 1 nodes (``None``: sensor absent).

    ``q``: encoder positions, full configuration ``(N+1, nq)`` (the base part of a floating-base
    configuration is ignored); ``v``: joint velocities ``(N+1, nv_joints)``; ``base_quat``:
    IMU orientation of the base as quaternion ``(x, y, z, w)``, ``(N+1, 4)``; ``gyro``: base
    angular velocity in the base frame [rad/s]; ``base_velocity``: base linear velocity in the
    base frame [m/s].
    """

    q: NDArray[np.float64] | None = None
    v: NDArray[np.float64] | None = None
    base_quat: NDArray[np.float64] | None = None
    gyro: NDArray[np.float64] | None = None
    base_velocity: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class NoiseStd:
    """Standard deviations of the sensors, the process noise w (per node, for the q and v parts
    of the tangent space) and the arrival state, all SI."""

    encoder: float = 1e-3
    joint_velocity: float = 5e-2
    orientation: float = 1e-2
    gyro: float = 1e-2
    base_velocity: float = 2e-2
    process_q: float = 1e-5
    process_v: float = 1e-3
    arrival_q: float = 1e-1
    arrival_v: float = 1.0


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
