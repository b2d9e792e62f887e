"""Baseline for paper B's localisation experiment: a leg-kinematics + IMU extended Kalman filter
(Bloesch et al., "State estimation for legged robots - consistent fusion of leg kinematics and
IMU", RSS 2012), the kind of filter paper B compares against (PRONTO, section VI-C-2).

Not a physid estimator: a yardstick written for ``benchmarks/oe_localisation.py``.

State: IMU position r and velocity v in the world, IMU orientation R (world from IMU), the
world positions p_i of the four feet, accelerometer bias b_a and gyro bias b_g; the error state
``[dr, dv, dphi, dp_1..dp_4, db_a, db_g]`` (27) with ``R = R_hat Exp(dphi)``.

- prediction with every IMU sample (Bloesch eqs. 23-29 discretised):
  ``r+ = r + dt v + dt^2/2 a``, ``v+ = v + dt a``, ``a = R (f - b_a) + g``,
  ``R+ = R Exp(dt (w - b_g))``; feet in contact stay put up to a slip noise;
- update with the forward kinematics of every foot in contact (from the encoders):
  ``s_i = R^T (p_i - r) + n``, ``cov(n) = J_i Sigma_enc J_i^T + sigma_kin^2 I``;
- a foot that touches down is added at ``p_i = r + R s_i`` with the covariance of that
  function of the state (state augmentation, Bloesch's infinite swing-foot noise in the limit);
- optionally, an update with the IMU's fused orientation, ``Log(R_hat^T R_meas)``.

The contact flags are the same known sequence the optimal estimator receives.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray
from scipy.linalg import block_diag

from physid.sim.oe_imu import GRAVITY, ImuLog, ImuSpec

_R, _V, _PHI, _BA, _BG = slice(0, 3), slice(3, 6), slice(6, 9), slice(21, 24), slice(24, 27)


def _foot(i: int) -> slice:
    return slice(9 + 3 * i, 12 + 3 * i)


@dataclass(frozen=True)
class EkfSettings:
    """Noise not given by the sensor spec: kinematic model error, foot slip, bias walks."""

    kinematics: float = 1e-3  # m, foot point / link lengths
    foot_slip: float = 1e-3  # m/sqrt(s), a foot in contact
    accel_bias_walk: float = 1e-3  # m/s^2/sqrt(s)
    gyro_bias_walk: float = 1e-4  # rad/s/sqrt(s)
    use_orientation: bool = True
    orientation_std: float = 6e-3  # rad, the fused orientation (as given to the OE)


@dataclass(frozen=True)
class EkfTrack:
    """Base position ``(N+1, 3)`` and orientation ``(N+1, 3, 3)`` (world from base), velocity of
    the base origin in the world ``(N+1, 3)`` and the estimated biases at the end."""

    position: NDArray[np.float64]
    rotation: NDArray[np.float64]
    velocity: NDArray[np.float64]
    accel_bias: NDArray[np.float64]
    gyro_bias: NDArray[np.float64]


class _Kinematics:
    """Feet relative to the IMU, in the IMU frame, and their Jacobians in the joint angles."""

    def __init__(self, model: pin.Model, feet: tuple[str, ...], imu: pin.SE3) -> None:
        self.model, self.data = model, model.createData()
        self.feet = [model.getFrameId(f) for f in feet]
        self.imu = imu

    def __call__(self, joints: NDArray) -> tuple[list[NDArray], list[NDArray]]:
        q = pin.neutral(self.model)
        q[7:] = joints
        pin.computeJointJacobians(self.model, self.data, q)
        pin.framesForwardKinematics(self.model, self.data, q)
        Rt = self.imu.rotation.T
        s, J = [], []
        for f in self.feet:
            s.append(Rt @ (self.data.oMf[f].translation - self.imu.translation))
            Jf = pin.getFrameJacobian(self.model, self.data, f, pin.LOCAL_WORLD_ALIGNED)
            J.append(Rt @ Jf[:3, 6:])
        return s, J


def run_ekf(
    model: pin.Model,
    log: ImuLog,
    flags: NDArray,
    feet: tuple[str, ...],
    base_position0: NDArray,
    spec: ImuSpec,
    settings: EkfSettings | None = None,
) -> EkfTrack:
    """Filter the whole log; the start is at rest at ``base_position0`` (the knowledge the
    optimal estimator's arrival prior gets) with the first fused orientation."""
    cfg = settings or EkfSettings()
    dt, pl = log.dt, log.imu_in_base
    kin = _Kinematics(model, feet, pl)
    enc_cov = spec.encoder**2 * np.eye(model.nq - 7)
    n = log.gyro.shape[0]
    R = pin.Quaternion(log.quat[0]).toRotationMatrix() @ pl.rotation
    r = base_position0 + R @ pl.rotation.T @ pl.translation
    v, b_a, b_g = np.zeros(3), np.zeros(3), np.zeros(3)
    feet_w = np.zeros((4, 3))
    P = np.zeros((27, 27))
    P[_R, _R] = 1e-8 * np.eye(3)
    P[_V, _V] = 1e-6 * np.eye(3)
    P[_PHI, _PHI] = cfg.orientation_std**2 * np.eye(3)
    P[_BA, _BA] = spec.accel_bias**2 * np.eye(3)
    P[_BG, _BG] = spec.gyro_bias**2 * np.eye(3)
    out_p, out_R, out_v = np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3))

    def add_foot(i: int, s: NDArray, Js: NDArray) -> None:
        nonlocal P
        G = np.zeros((3, 27))
        G[:, _R], G[:, _PHI] = np.eye(3), -R @ pin.skew(s)
        P[_foot(i), :], P[:, _foot(i)] = 0.0, 0.0
        row = G @ P
        P[_foot(i), :], P[:, _foot(i)] = row, row.T
        cov_s = Js @ enc_cov @ Js.T
        P[_foot(i), _foot(i)] = G @ P @ G.T + R @ (cov_s + cfg.kinematics**2 * np.eye(3)) @ R.T
        feet_w[i] = r + R @ s

    def correct(H: NDArray, residual: NDArray, cov: NDArray) -> None:
        nonlocal P, r, v, R, b_a, b_g
        S = H @ P @ H.T + cov
        K = np.linalg.solve(S, H @ P).T
        dx = K @ residual
        IKH = np.eye(27) - K @ H
        P = IKH @ P @ IKH.T + K @ cov @ K.T  # Joseph form
        r, v, b_a, b_g = r + dx[_R], v + dx[_V], b_a + dx[_BA], b_g + dx[_BG]
        R = R @ pin.exp3(dx[_PHI])
        feet_w[:] += dx[9:21].reshape(4, 3)

    for k in range(n):
        s, J = kin(log.encoders[k])
        added = flags[k] & ~(np.zeros(4, bool) if k == 0 else flags[k - 1])
        for i in np.flatnonzero(added):  # its first kinematics is not used twice
            add_foot(i, s[i], J[i])
        rows, res, covs = [], [], []
        for i in np.flatnonzero(flags[k] & ~added):
            H = np.zeros((3, 27))
            d = R.T @ (feet_w[i] - r)
            H[:, _R], H[:, _foot(i)], H[:, _PHI] = -R.T, R.T, pin.skew(d)
            rows.append(H)
            res.append(s[i] - d)
            cov_s = J[i] @ enc_cov @ J[i].T
            covs.append(cov_s + cfg.kinematics**2 * np.eye(3))
        if cfg.use_orientation:
            H = np.zeros((3, 27))
            H[:, _PHI] = np.eye(3)
            R_meas = pin.Quaternion(log.quat[k]).toRotationMatrix() @ pl.rotation
            rows.append(H)
            res.append(pin.log3(R.T @ R_meas))
            covs.append(cfg.orientation_std**2 * np.eye(3))
        if rows:
            correct(np.vstack(rows), np.concatenate(res), block_diag(*covs))
        R_base = R @ pl.rotation.T
        out_R[k] = R_base
        out_p[k] = r - R_base @ pl.translation
        out_v[k] = v - R @ np.cross(log.gyro[k] - b_g, pl.rotation.T @ pl.translation)
        if k == n - 1:
            break
        f, w = log.accel[k] - b_a, log.gyro[k] - b_g
        a = R @ f + GRAVITY
        F = np.eye(27)
        F[_R, _V] = dt * np.eye(3)
        F[_R, _PHI] = -0.5 * dt**2 * R @ pin.skew(f)
        F[_R, _BA] = -0.5 * dt**2 * R
        F[_V, _PHI] = -dt * R @ pin.skew(f)
        F[_V, _BA] = -dt * R
        F[_PHI, _PHI] = pin.exp3(-dt * w)
        F[_PHI, _BG] = -dt * np.eye(3)
        Q = np.zeros(27)
        Q[_R] = spec.accel_density**2 * dt**3 / 3
        Q[_V] = spec.accel_density**2 * dt
        Q[_PHI] = spec.gyro_density**2 * dt
        for i in range(4):
            Q[_foot(i)] = cfg.foot_slip**2 * dt if flags[k + 1, i] else 0.0
        Q[_BA], Q[_BG] = cfg.accel_bias_walk**2 * dt, cfg.gyro_bias_walk**2 * dt
        P = F @ P @ F.T + np.diag(Q)
        r, v = r + dt * v + 0.5 * dt**2 * a, v + dt * a
        R = R @ pin.exp3(dt * w)
    return EkfTrack(out_p, out_R, out_v, b_a, b_g)
