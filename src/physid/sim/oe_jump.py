"""A simulated Go1 jump with its truth, for paper B's localisation experiment (section VI-C-2,
Fig. 6: optimal estimation against a leg-kinematics + IMU EKF during a jump).

Phases: stance, crouch, push-off (all four feet in contact), flight (no contact), touch-down
(each foot lands when its frame origin reaches the ground plane z = 0: plastic impulse of the
new contact set, ``pin.impulseDynamics``) and landing (stance again). The true model is
integrated with Pinocchio as in :mod:`physid.sim.oe_floating` — ``pin.constraintDynamics``
(paper B eqs. 2-3) in stance, ``pin.aba`` in flight, semi-implicit Euler — at ``dt / substeps``
with each node's torque command held (``substeps > 1``: the estimator's one-step-per-node model
is no longer the simulator's). Contacts are bilateral point contacts: the returned normal
forces and friction ratios say whether a real foot would have stayed.

Controller (model given, e.g. the true one: the payload was estimated beforehand, as in the
paper): a virtual-model controller tracks a torso reference (crouch, then a constant-acceleration
push to the take-off speed) by distributing the wanted torso wrench over the stance feet
(minimum norm), ``tau = g_j - Jc_j^T f``; in flight the legs go to a landing posture by joint
PD; after touch-down the same stance controller brings the torso back to standing height.
Torques are clipped to the URDF's effort limits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.sim.oe_floating import _PROX, GO1_FEET, _contacts, _euler, go1_standing

PHASES = ("stance", "crouch", "push-off", "flight", "landing")
_LAND_POSTURE = np.array([0.0, 0.75, -1.5] * 4)
_GRAVITY = np.array([0.0, 0.0, -9.81])


@dataclass(frozen=True)
class JumpSpec:
    """Timing and size of the jump [s, m, m/s]; take-off when the push reaches its speed."""

    stance: float = 0.2
    crouch: float = 0.3
    crouch_depth: float = 0.06
    push_height: float = 0.11
    takeoff_speed: float = 1.1
    forward_speed: float = 0.3
    landing: float = 0.5  # after the last touch-down
    max_flight: float = 1.0

    @property
    def push(self) -> float:
        return 2.0 * self.push_height / self.takeoff_speed

    @property
    def liftoff_time(self) -> float:
        return self.stance + self.crouch + self.push


@dataclass(frozen=True)
class Actuators:
    """What the motors apply for a torque command, unknown to the estimators: a per-joint
    torque-constant error and viscous + Coulomb joint friction (smoothed over 0.01 rad/s)."""

    gain: NDArray[np.float64]
    viscous: float = 0.0
    coulomb: float = 0.0

    def torque(self, u: NDArray, dq: NDArray) -> NDArray[np.float64]:
        return self.gain * u - self.viscous * dq - self.coulomb * np.tanh(dq / 0.01)


def go1_actuators(
    rng: np.random.Generator, gain_std: float = 0.03, viscous: float = 0.02, coulomb: float = 0.2
) -> Actuators:
    """Assumed Go1-like errors: 3 % torque-constant spread, 0.02 N m s/rad, 0.2 N m."""
    return Actuators(1.0 + gain_std * rng.standard_normal(12), viscous, coulomb)


@dataclass(frozen=True)
class JumpTruth:
    """True states ``x (N+1, nq+nv)`` at nodes spaced by ``dt``, commands ``u (N, 12)``,
    contact flags ``(N+1, 4)`` (:data:`GO1_FEET`; flag k: in contact during step k), contact
    forces on the feet in the world frame ``(N, 4, 3)`` (mean over the step), touch-down
    impulses ``(N, 4, 3)`` [N s] applied at the end of step k, and the phase index of every
    node into :data:`PHASES`."""

    dt: float
    x: NDArray[np.float64]
    u: NDArray[np.float64]
    contact_frames: tuple[str, ...]
    contact_flags: NDArray[np.bool_]
    forces: NDArray[np.float64]
    impulses: NDArray[np.float64]
    phase: NDArray[np.int64]

    def phase_mask(self, name: str) -> NDArray[np.bool_]:
        return self.phase == PHASES.index(name)


def _reference(spec: JumpSpec, t: float, p0: NDArray) -> tuple[NDArray, NDArray, NDArray, int]:
    """Torso position, velocity and feed-forward acceleration (world) and phase at ``t``."""
    p, v, a = p0.copy(), np.zeros(3), np.zeros(3)
    if t < spec.stance:
        return p, v, a, 0
    tau = t - spec.stance
    if tau < spec.crouch:  # cosine dip by crouch_depth
        s = np.pi * tau / spec.crouch
        depth = spec.crouch_depth
        p[2] -= 0.5 * depth * (1 - np.cos(s))
        v[2] = -0.5 * depth * np.pi / spec.crouch * np.sin(s)
        a[2] = -0.5 * depth * (np.pi / spec.crouch) ** 2 * np.cos(s)
        return p, v, a, 1
    tau -= spec.crouch
    acc = np.array([spec.forward_speed, 0.0, spec.takeoff_speed]) / spec.push
    p += np.array([0.0, 0.0, -spec.crouch_depth]) + 0.5 * acc * tau**2
    return p, acc * tau, acc, 2


def _feet_heights(model: pin.Model, data: pin.Data, q: NDArray, feet: list[int]) -> NDArray:
    pin.framesForwardKinematics(model, data, q)
    return np.array([data.oMf[f].translation[2] for f in feet])


class _Controller:
    """Stance: virtual-model torso control; flight: joint PD to the landing posture."""

    def __init__(self, model: pin.Model, spec: JumpSpec, p0: NDArray) -> None:
        self.model, self.data, self.spec, self.p0 = model, model.createData(), spec, p0
        self.mass = pin.computeTotalMass(model)
        self.feet = [model.getFrameId(f) for f in GO1_FEET]
        self.limit = model.effortLimit[6:]
        self.landing_start: NDArray | None = None

    def stance(self, q: NDArray, v: NDArray, stance: list[int], ref: tuple) -> NDArray:
        model, nd = self.model, self.data
        p_ref, v_ref, a_ref = ref
        R = pin.Quaternion(q[3:7]).toRotationMatrix()
        com = pin.centerOfMass(model, nd, q, v)  # the torso reference is on the centre of mass
        force = self.mass * (a_ref - _GRAVITY + 200.0 * (p_ref - com) + 25.0 * (v_ref - nd.vcom[0]))
        torque = 150.0 * R @ pin.log3(R.T) - 15.0 * R @ v[3:6]  # level torso
        pin.computeGeneralizedGravity(model, nd, q)
        pin.computeJointJacobians(model, nd, q)
        pin.framesForwardKinematics(model, nd, q)
        G = np.vstack(
            [
                np.hstack([np.eye(3) for _ in stance]),
                np.hstack([pin.skew(nd.oMf[self.feet[i]].translation - com) for i in stance]),
            ]
        )
        f = np.linalg.lstsq(G, np.r_[force, torque], rcond=None)[0]
        tau = nd.g[6:].copy() - 0.3 * v[6:]
        for j, i in enumerate(stance):
            Jf = pin.getFrameJacobian(model, nd, self.feet[i], pin.LOCAL_WORLD_ALIGNED)[:3]
            tau -= Jf[:, 6:].T @ f[3 * j : 3 * j + 3]
        for i in range(4):  # legs in the air keep the landing posture
            if i not in stance:
                s = slice(3 * i, 3 * i + 3)
                tau[s] = 30.0 * (_LAND_POSTURE[s] - q[7:][s]) - 0.8 * v[6:][s]
        return tau

    def command(
        self, t: float, q: NDArray, v: NDArray, flags: NDArray, airborne: bool
    ) -> tuple[NDArray, int]:
        """Torques and the phase index for the state at time ``t``."""
        stance = [i for i in range(4) if flags[i]]
        if not airborne:
            p, dp, a, phase = _reference(self.spec, t, self.p0)
            return np.clip(self.stance(q, v, stance, (p, dp, a)), -self.limit, self.limit), phase
        if not stance:
            tau = 30.0 * (_LAND_POSTURE - q[7:]) - 0.8 * v[6:]
            return np.clip(tau, -self.limit, self.limit), 3
        if self.landing_start is None:  # back to standing height above where it landed
            com = pin.centerOfMass(self.model, self.data, q)
            self.landing_start = np.r_[com[:2], self.p0[2]]
        ref = (self.landing_start, np.zeros(3), np.zeros(3))
        return np.clip(self.stance(q, v, stance, ref), -self.limit, self.limit), 4


def simulate_jump(
    true_model: pin.Model,
    controller_model: pin.Model,
    dt: float = 1e-3,
    spec: JumpSpec | None = None,
    substeps: int = 1,
    actuators: Actuators | None = None,
) -> JumpTruth:
    """Simulate :class:`JumpSpec` from standing still (feet on z = 0) until ``spec.landing``
    after the last touch-down; nodes every ``dt``; ``actuators``: ideal when None."""
    spec = spec or JumpSpec()
    nq, h = true_model.nq, dt / substeps
    q0 = go1_standing(true_model)
    com0 = pin.centerOfMass(controller_model, controller_model.createData(), q0).copy()
    ctrl = _Controller(controller_model, spec, com0)
    true_data = true_model.createData()
    feet = [true_model.getFrameId(f) for f in GO1_FEET]
    cache: dict[tuple[str, ...], tuple] = {}

    def contacts(flags: NDArray) -> tuple:
        active = tuple(f for f, on in zip(GO1_FEET, flags, strict=True) if on)
        if active not in cache:
            cache[active] = _contacts(true_model, active)
        return active, *cache[active]

    xs = [np.r_[q0, np.zeros(true_model.nv)]]
    us, flag_rows, forces, impulses, phases = [], [], [], [], []
    flags = np.ones(4, dtype=bool)
    airborne, t_end, k = False, np.inf, 0
    while k * dt < t_end - 1e-9:
        t, x = k * dt, xs[-1].copy()
        if not airborne and t >= spec.liftoff_time - 1e-9:
            airborne, flags = True, np.zeros(4, dtype=bool)
        u, phase = ctrl.command(t, x[:nq], x[nq:], flags, airborne)
        flag_rows.append(flags.copy())
        phases.append(phase)
        force, impulse, new = np.zeros((4, 3)), np.zeros((4, 3)), flags.copy()
        for _ in range(substeps):
            active, d, cms, cds = contacts(new)
            applied = u if actuators is None else actuators.torque(u, x[nq + 6 :])
            tau = np.r_[np.zeros(6), applied]
            a = pin.constraintDynamics(true_model, d, x[:nq], x[nq:], tau, cms, cds, _PROX)
            lam = d.lambda_c.reshape(-1, 3) if active else np.zeros((0, 3))
            force[new] += lam / substeps
            x = _euler(true_model, x, a, h)
            heights = _feet_heights(true_model, true_data, x[:nq], feet)
            landed = airborne & ~new & (heights <= 0.0)
            if landed.any():  # touch-down: plastic impact of the new contact set
                new |= landed
                active, d, cms, cds = contacts(new)
                v_before = x[nq:].copy()
                x[nq:] = pin.impulseDynamics(true_model, d, x[:nq], v_before, cms, cds, 0.0, _PROX)
                impulse[new] += d.impulse_c.reshape(-1, 3)
        flags = new
        if airborne and flags.all() and not np.isfinite(t_end):
            t_end = (k + 1) * dt + spec.landing
        if airborne and k * dt > spec.liftoff_time + spec.max_flight and not flags.any():
            raise RuntimeError("the jump did not land within max_flight")
        xs.append(x)
        us.append(u)
        forces.append(force)
        impulses.append(impulse)
        k += 1
    flag_rows.append(flags.copy())
    phases.append(4)
    return JumpTruth(
        dt,
        np.array(xs),
        np.array(us),
        GO1_FEET,
        np.array(flag_rows),
        np.array(forces),
        np.array(impulses),
        np.array(phases),
    )
