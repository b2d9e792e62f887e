"""Simulated fixed-base arm recordings for paper B (optimal estimation) tests.

Ground truth: Pinocchio's ABA with the true inertias, integrated by semi-implicit Euler at the
estimator's node spacing (so that the true trajectory has zero process noise), driven by a
computed-torque controller that uses the *nominal* model and tracks a sum of sinusoids.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray


@dataclass(frozen=True)
class TrackedArmRun:
    """True states ``q (N+1, nq)``, ``v (N+1, nv)``, commands ``tau (N, nv)`` and noisy
    encoders ``q_meas``, ``v_meas`` at nodes ``t`` spaced by ``dt``."""

    t: NDArray[np.float64]
    dt: float
    q: NDArray[np.float64]
    v: NDArray[np.float64]
    tau: NDArray[np.float64]
    q_meas: NDArray[np.float64]
    v_meas: NDArray[np.float64]


def simulate_arm(
    true_model: pin.Model,
    nominal_model: pin.Model,
    rng: np.random.Generator,
    duration: float = 2.0,
    dt: float = 0.01,
    amplitude: float = 0.6,
    encoder_std: float = 1e-3,
    velocity_std: float = 5e-2,
) -> TrackedArmRun:
    """Track ``q_ref(t) = q_n (+) sum_i a_i sin(w_i t + p_i)`` and record noisy encoders."""
    nv = true_model.nv
    data_true, data_nom = true_model.createData(), nominal_model.createData()
    q_n = pin.neutral(true_model)
    amps = amplitude * rng.uniform(0.3, 1.0, (3, nv))
    freqs = 2 * np.pi * rng.uniform(0.2, 1.0, (3, nv))
    phases = rng.uniform(0, 2 * np.pi, (3, nv))

    def reference(time: float) -> tuple[NDArray, NDArray, NDArray]:
        arg = freqs * time + phases
        return (
            (amps * np.sin(arg)).sum(0),
            (amps * freqs * np.cos(arg)).sum(0),
            (-amps * freqs**2 * np.sin(arg)).sum(0),
        )

    n = int(round(duration / dt))
    t = dt * np.arange(n + 1)
    dq0, dv0, _ = reference(0.0)
    q, v = np.empty((n + 1, true_model.nq)), np.empty((n + 1, nv))
    q[0], v[0] = pin.integrate(true_model, q_n, dq0), dv0
    tau = np.empty((n, nv))
    kp, kd = 100.0, 20.0
    for k in range(n):
        dq, dv, ddq = reference(t[k])
        error = pin.difference(true_model, q[k], pin.integrate(true_model, q_n, dq))
        a_cmd = ddq + kp * error + kd * (dv - v[k])
        tau[k] = pin.rnea(nominal_model, data_nom, q[k], v[k], a_cmd)
        a = pin.aba(true_model, data_true, q[k], v[k], tau[k])
        v[k + 1] = v[k] + dt * a
        q[k + 1] = pin.integrate(true_model, q[k], dt * v[k + 1])
    q_meas = np.array(
        [pin.integrate(true_model, qk, encoder_std * rng.standard_normal(nv)) for qk in q]
    )
    v_meas = v + velocity_std * rng.standard_normal(v.shape)
    return TrackedArmRun(t, dt, q, v, tau, q_meas, v_meas)


def joint_wrenches(
    model: pin.Model, joint: str, q: NDArray, v: NDArray, dt: float
) -> NDArray[np.float64]:
    """What an ideal six-axis sensor at ``joint`` reads ``(N+1, 6)`` [N, N m], joint frame:
    Pinocchio's RNEA joint force ``data.f`` at the accelerations the recorded motion had,
    ``(v_{k+1} - v_k) / dt`` (the last row repeats the one before: no acceleration at N)."""
    data, j = model.createData(), model.getJointId(joint)
    a = np.diff(v, axis=0) / dt
    out = np.empty((v.shape[0], 6))
    for k in range(a.shape[0]):
        pin.rnea(model, data, q[k], v[k], a[k])
        out[k] = data.f[j].vector
    out[-1] = out[-2]
    return out
