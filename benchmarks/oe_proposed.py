"""Prototype, for ``benchmarks/oe_localisation.py`` only, of two changes to ``physid.oe`` that the
jump measurements call for; ``src/physid/oe`` is not edited (another engineer's area), the
problem object is configured from outside instead.

1. Contact damping. ``physid.oe.contact`` imposes paper B eq. 3 without a Baumgarte term: the
   feet in contact do not *accelerate*, so a uniform velocity of the whole robot (base and feet
   together) costs nothing in the dynamics and nothing in the encoders, and the drifting
   pre-integrated accelerometer drags the estimate along it. Pinocchio's Baumgarte corrector
   with a velocity gain, ``J_c a + Jdot_c v = -K_d J_c v``, makes the feet in contact come to
   rest (its derivatives are Pinocchio's own, checked against central differences: largest
   error 1.9e-7 on entries up to 330). The change in ``physid.oe.contact.ContactModels.get``:
   one ``setBaumgarteCorrectorParameters`` per contact model, ``K_d`` an option of the problem.
2. Per-degree-of-freedom process noise. ``NoiseStd.process_q/process_v`` are one number for the
   base and every joint; torque errors of the actuators move light legs far more than the torso
   (dt M^-1 Sigma_tau M^-1: 1e-4 m/s per node on the torso against 0.03-0.1 rad/s on a calf at
   1 ms). The change: per-joint (or base / joints) standard deviations in ``NoiseStd``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.oe import OEProblem
from physid.oe.contact import ContactModels
from physid.sim.oe_floating import go1_standing


class DampedContacts(ContactModels):
    """:class:`ContactModels` whose rigid contacts carry a Baumgarte velocity gain ``kd``."""

    def __init__(self, model: pin.Model, frames: tuple[str, ...], kd: float) -> None:
        super().__init__(model, frames)
        self.kd = kd

    def get(self, active: tuple[str, ...]) -> tuple:
        if active not in self._cache:
            data, cms, _ = super().get(active)
            for cm in cms:
                gains = cm.m_baumgarte_parameters
                gains.Kd, gains.Kp = self.kd, 0.0
                cm.setBaumgarteCorrectorParameters(gains)
            cds = pin.StdVec_RigidConstraintData([cm.createData() for cm in cms])
            pin.initConstraintDynamics(self.model, data, cms, cds)
            self._cache[active] = (data, cms, cds)
        return self._cache[active]


def process_std_from_spec(
    model: pin.Model,
    dt: float,
    u: NDArray,
    joint_velocity: NDArray,
    actuator: dict[str, float],
    floor: tuple[float, float],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per-DoF ``(std_q, std_v)`` of w_k from what a user knows: the actuators' spec (torque
    constant spread, viscous and Coulomb friction) through ``dt M^-1`` at the standing pose, and
    the semi-implicit Euler step's error ``dt^2/2 |a|`` with joint accelerations from 10-sample
    differences of the measured joint velocities; never below the library defaults ``floor``."""
    q = go1_standing(model)
    M = pin.crba(model, model.createData(), q)
    Minv = np.linalg.inv(np.triu(M) + np.triu(M, 1).T)
    u_rms = np.sqrt((u**2).mean(axis=0))
    dq_rms = np.sqrt((joint_velocity**2).mean(axis=0))
    var_tau = (
        (actuator["gain_std"] * u_rms) ** 2
        + actuator["coulomb"] ** 2
        + (actuator["viscous"] * dq_rms) ** 2
    )
    cov_a = Minv @ np.diag(np.r_[np.zeros(6), var_tau]) @ Minv
    std_v = np.maximum(dt * np.sqrt(np.diag(cov_a)), floor[1])
    acc = (joint_velocity[10:] - joint_velocity[:-10]) / (10 * dt)
    std_q = np.full(model.nv, floor[0])
    std_q[6:] = np.maximum(floor[0], 0.5 * dt**2 * np.sqrt((acc**2).mean(axis=0)))
    return std_q, std_v


def apply_proposed(
    problem: OEProblem, kd: float, std_q: NDArray | None = None, std_v: NDArray | None = None
) -> None:
    """Configure a built problem with change 1 and, if given, change 2 (the per-DoF standard
    deviations go to a private attribute: prototype only)."""
    sched = problem.contacts
    sched.models = DampedContacts(problem.dynamics.model, sched.frames, kd)
    if std_q is not None and std_v is not None:
        problem._w_std = np.r_[std_q, std_v]
