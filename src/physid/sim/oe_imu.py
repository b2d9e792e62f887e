"""IMU and encoder signals of a Go1-class quadruped from a true floating-base trajectory, and
the pre-integrated base velocity that paper B's estimator reads (section VI-C).

The IMU sits at a frame of the torso (the Go1 URDF's ``imu_link``, 6.9 cm from the base
origin). Sampled at the node rate ``1 / dt``:

- accelerometer: specific force in the IMU frame, the mean over the step ``k -> k+1``
  (``R_k^T ((v_imu(k+1) - v_imu(k)) / dt - g)``, world velocities of the IMU point; a
  touch-down impulse shows as a one-sample spike, the accelerometer's range is not modelled);
- gyroscope: angular velocity of the torso at node k;
- both with a constant bias (a residual after the start-up calibration) and white noise of
  the given density;
- orientation from the IMU's own fusion: truth plus the tilt error an accelerometer bias gives
  a gravity-aligning filter (``delta_roll = b_y / g``, ``delta_pitch = -b_x / g``), a yaw drift
  of the integrated gyro bias and white noise;
- encoders and driver joint velocities with white noise.

Default values (:class:`ImuSpec`) are assumptions of a consumer MEMS IMU of the Bosch BMI088
class (data sheet: gyro 0.014 deg/s/sqrt(Hz), accelerometer 175 ug/sqrt(Hz)); the Go1's IMU part
and its calibration residuals are not documented where this was written.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.oe.model.measurements import Measurements

GRAVITY = np.array([0.0, 0.0, -9.81])


@dataclass(frozen=True)
class ImuSpec:
    """Noise of the IMU (densities per sqrt(Hz), biases as standard deviations) and encoders."""

    gyro_density: float = 2.4e-4  # rad/s/sqrt(Hz)
    gyro_bias: float = 2e-3  # rad/s
    accel_density: float = 1.7e-3  # m/s^2/sqrt(Hz)
    accel_bias: float = 0.05  # m/s^2
    orientation: float = 2e-3  # rad, white part of the fused orientation error
    encoder: float = 1e-3  # rad
    joint_velocity: float = 3e-2  # rad/s


@dataclass(frozen=True)
class ImuLog:
    """Sensor samples at N + 1 nodes (the accelerometer: N steps), frames as the module says;
    ``quat`` is the fused orientation of the *base* (x, y, z, w), ``gyro`` in the IMU frame."""

    dt: float
    accel: NDArray[np.float64]
    gyro: NDArray[np.float64]
    quat: NDArray[np.float64]
    encoders: NDArray[np.float64]
    joint_velocity: NDArray[np.float64]
    accel_bias: NDArray[np.float64]
    gyro_bias: NDArray[np.float64]
    imu_in_base: pin.SE3


def imu_placement(model: pin.Model, frame: str = "imu_link") -> pin.SE3:
    """Placement of the IMU frame in the free-flyer's joint frame."""
    f = model.frames[model.getFrameId(frame)]
    if f.parentJoint != 1:
        raise ValueError(f"IMU frame {frame!r} is not on the floating base")
    return f.placement


def _imu_world_velocity(x: NDArray, nq: int, placement: pin.SE3) -> NDArray[np.float64]:
    """World velocity of the IMU point at every node: ``R (v + w x r)``."""
    out = np.empty((x.shape[0], 3))
    for k, row in enumerate(x):
        R = pin.Quaternion(row[3:7]).toRotationMatrix()
        v, w = row[nq : nq + 3], row[nq + 3 : nq + 6]
        out[k] = R @ (v + np.cross(w, placement.translation))
    return out


def measure_imu(
    model: pin.Model,
    x: NDArray,
    dt: float,
    rng: np.random.Generator,
    spec: ImuSpec | None = None,
    frame: str = "imu_link",
) -> ImuLog:
    """Noisy IMU, encoder and joint-velocity samples of the true states ``x (N+1, nq+nv)``."""
    spec = spec or ImuSpec()
    nq, n = model.nq, x.shape[0]
    pl = imu_placement(model, frame)
    Rb = np.array([pin.Quaternion(row[3:7]).toRotationMatrix() for row in x])
    v_imu = _imu_world_velocity(x, nq, pl)
    b_a = spec.accel_bias * rng.standard_normal(3)
    b_g = spec.gyro_bias * rng.standard_normal(3)
    specific = np.einsum("kji,kj->ki", Rb[:-1] @ pl.rotation, np.diff(v_imu, axis=0) / dt - GRAVITY)
    accel = specific + b_a + spec.accel_density / np.sqrt(dt) * rng.standard_normal((n - 1, 3))
    gyro = x[:, nq + 3 : nq + 6] @ pl.rotation + b_g
    gyro += spec.gyro_density / np.sqrt(dt) * rng.standard_normal((n, 3))
    tilt = np.array([b_a[1], -b_a[0], 0.0]) / 9.81
    quats = []
    for k in range(n):
        err = tilt + np.array([0.0, 0.0, b_g[2] * k * dt])
        err = err + spec.orientation * rng.standard_normal(3)
        R_imu = Rb[k] @ pl.rotation @ pin.exp3(err)
        quats.append(pin.Quaternion(R_imu @ pl.rotation.T).coeffs())
    nj = model.nv - 6
    return ImuLog(
        dt,
        accel,
        gyro,
        np.array(quats),
        x[:, 7:nq] + spec.encoder * rng.standard_normal((n, nq - 7)),
        x[:, nq + 6 :] + spec.joint_velocity * rng.standard_normal((n, nj)),
        b_a,
        b_g,
        pl,
    )


def preintegrated_base_velocity(log: ImuLog, v0_world: NDArray | None = None) -> NDArray:
    """Base linear velocity in the base frame from the accelerometer integrated in the world
    with the fused orientation, ``v(k+1) = v(k) + dt (R_k f_k + g)``, from ``v0_world`` (at rest
    by default), moved from the IMU point to the base origin with the gyro."""
    pl = log.imu_in_base
    v = np.zeros(3) if v0_world is None else np.asarray(v0_world, float)
    out = np.empty((log.gyro.shape[0], 3))
    for k in range(out.shape[0]):
        R_base = pin.Quaternion(log.quat[k]).toRotationMatrix()
        w_base = pl.rotation @ log.gyro[k]
        out[k] = R_base.T @ v - np.cross(w_base, pl.translation)
        if k < log.accel.shape[0]:
            v = v + log.dt * (R_base @ pl.rotation @ log.accel[k] + GRAVITY)
    return out


def oe_measurements(model: pin.Model, log: ImuLog) -> Measurements:
    """The signals of :class:`physid.oe.Measurements`: encoders (base part neutral, unused),
    joint velocities, fused orientation, gyro and pre-integrated velocity in the base frame."""
    n = log.gyro.shape[0]
    q = np.tile(pin.neutral(model), (n, 1))
    q[:, 7:] = log.encoders
    return Measurements(
        q=q,
        v=log.joint_velocity,
        base_quat=log.quat,
        gyro=log.gyro @ log.imu_in_base.rotation.T,
        base_velocity=preintegrated_base_velocity(log),
    )


def oe_noise_std(spec: ImuSpec, dt: float, horizon: float) -> dict[str, float]:
    """Standard deviations of the signals of :func:`oe_measurements` from the sensor spec: white
    and bias parts together; the pre-integrated velocity's drift at the end of ``horizon``."""
    g = 9.81
    return {
        "encoder": spec.encoder,
        "joint_velocity": spec.joint_velocity,
        "orientation": float(
            np.sqrt(
                spec.orientation**2 + (spec.accel_bias / g) ** 2 + (spec.gyro_bias * horizon) ** 2
            )
        ),
        "gyro": float(np.hypot(spec.gyro_density / np.sqrt(dt), spec.gyro_bias)),
        "base_velocity": float(
            np.sqrt((spec.accel_bias * horizon) ** 2 + spec.accel_density**2 * horizon)
        ),
    }
