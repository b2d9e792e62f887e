"""Computed-torque control of the payload arm, with or without online adaptation (paper E
§IV-A, Table II, elbow task).

The arm of :mod:`physid.sim.payload_arm` holds a posture while its elbow follows a sine
(0.7 rad, 1/3 Hz, as paper E §IV-B) and the payload varies as in Table I. The controller is

    tau = M_hat(q) (ddq_d + Kd (dq_d - dq) + Kp (q_d - q)) + c_hat(q, dq)   (one RNEA call)

with ``M_hat, c_hat`` from the nominal model (URDF, no payload), whose payload body is replaced at
every tick by what ``estimator(t, q, dq, tau)`` returns (pi of that body, or None to keep it).
The plant is integrated with Pinocchio's ABA (semi-implicit Euler at the control rate) with the
true, time-varying payload. The controller and the estimator see recorded signals (noise as
:class:`~physid.sim.payload_arm.ArmNoise`, torque offsets excluded). The estimator is injected,
so this simulator never imports an estimator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.sim.payload_arm import (
    HOME,
    PAYLOAD_JOINT,
    ArmNoise,
    PayloadProfile,
    load_arm,
    true_body_pi,
)

ELBOW = 3  # index of arm_joint_4 (the elbow) in q
Estimator = Callable[[float, NDArray, NDArray, NDArray], "NDArray | None"]


def reference(t: NDArray[np.float64]) -> tuple[NDArray, NDArray, NDArray]:
    """Desired ``(q, dq, ddq)`` (N, 7): HOME, elbow sine 0.7 rad at 1/3 Hz, and slow small
    motions of the shoulder and wrist so the payload is seen from several directions."""
    t = np.asarray(t, dtype=float)[:, None]
    amplitude = np.array([0.3, 0.2, 0.0, 0.7, 0.0, 0.3, 1.0])
    frequency = np.array([0.13, 0.17, 0.0, 1.0 / 3.0, 0.0, 0.29, 0.37])
    w = 2.0 * np.pi * frequency
    q = HOME + amplitude * np.sin(w * t)
    dq = amplitude * w * np.cos(w * t)
    ddq = -amplitude * w**2 * np.sin(w * t)
    return q, dq, ddq


@dataclass(frozen=True)
class ControlRun:
    """One closed-loop run; arrays over the N control ticks."""

    t: NDArray[np.float64]
    q: NDArray[np.float64]  # true joint positions (N, 7)
    q_desired: NDArray[np.float64]
    tau: NDArray[np.float64]  # applied torques
    payload_kg: NDArray[np.float64]
    estimated_mass: NDArray[np.float64]  # mass of the payload body used by the controller

    def rmse(self, joint: int | None = ELBOW, start_s: float = 0.0) -> float:
        """Tracking RMSE [rad] of one joint (default the elbow) or of all joints (None)."""
        keep = self.t >= start_s
        error = (self.q - self.q_desired)[keep]
        if joint is not None:
            error = error[:, joint]
        return float(np.sqrt(np.mean(error**2)))


def simulate_computed_torque(
    rng: np.random.Generator,
    estimator: Estimator | None,
    profile: PayloadProfile | None = None,
    *,
    rate_hz: float = 1000.0,
    kp: float = 25.0,
    kd: float = 10.0,
    noise: ArmNoise | None = None,
) -> ControlRun:
    """Run the loop for ``profile.duration_s``; ``estimator=None`` is the nominal controller.

    ``kp`` [1/s^2] and ``kd`` [1/s] are deliberately soft (critically damped at 5 rad/s), as for
    a compliant humanoid arm, so that an unmodelled payload shows in the tracking.
    """
    profile = profile or PayloadProfile()
    noise = noise or ArmNoise()
    plant, controller = load_arm(), load_arm()
    plant_data, controller_data = plant.createData(), controller.createData()
    joint_id = plant.getJointId(PAYLOAD_JOINT)
    dt = 1.0 / rate_hz
    t = np.arange(0.0, profile.duration_s, dt)
    q_d, dq_d, ddq_d = reference(t)
    payload = profile.mass(t)
    pi_true = true_body_pi(plant, payload)
    n, nv = q_d.shape
    q, dq = q_d[0].copy(), dq_d[0].copy()
    q_log, tau_log, mass_log = np.empty((n, nv)), np.empty((n, nv)), np.empty(n)
    for k in range(n):
        q_meas = q + rng.normal(scale=noise.q_std, size=nv)
        dq_meas = dq + rng.normal(scale=noise.dq_std, size=nv)
        mass_log[k] = controller.inertias[joint_id].mass
        a_cmd = ddq_d[k] + kd * (dq_d[k] - dq_meas) + kp * (q_d[k] - q_meas)
        tau = pin.rnea(controller, controller_data, q_meas, dq_meas, a_cmd)
        plant.inertias[joint_id] = pin.Inertia.FromDynamicParameters(pi_true[k])
        ddq = pin.aba(plant, plant_data, q, dq, tau)
        q_log[k], tau_log[k] = q, tau
        if estimator is not None:  # sees this tick's state and torque; its estimate is used
            tau_meas = tau + rng.normal(scale=noise.tau_std, size=nv)  # from the next tick on
            pi_hat = estimator(t[k], q_meas, dq_meas, tau_meas)
            if pi_hat is not None:
                controller.inertias[joint_id] = pin.Inertia.FromDynamicParameters(pi_hat)
        dq = dq + dt * ddq
        q = q + dt * dq
    return ControlRun(t, q_log, q_d, tau_log, payload, mass_log)
