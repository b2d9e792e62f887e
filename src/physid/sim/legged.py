"""A floating-base humanoid stepping in place, with foot impacts and a torso payload step
(paper E §IV-A Table I torso row, §IV-B Fig. 8).

Model: ``sim/data/humanoid36.urdf`` with a free flyer (nv = 36): pelvis root, 6-DoF legs,
2-DoF waist carrying the torso (:data:`TORSO_JOINT`), 2-DoF neck, 7-DoF arms; contact frames
:data:`CONTACT_FRAMES` under the feet.

Motion (prescribed, smooth): the pelvis stays upright, sways over the stance foot and bobs;
the swing foot lifts 8 cm; legs follow by exact analytic inverse kinematics, so the stance foot
never moves; waist, neck and arms move gently. Velocities and accelerations are central
differences of the configuration (step 1e-5 s, error ~1e-8).

Dynamics (inverse, exact): with the true inertias (torso plus payload after ``payload_time_s``),
the six free-flyer rows of ``M a + c`` are balanced by the contact wrenches — the single stance
foot's wrench is unique, and in double support the load is shared by weights that hand it over
smoothly (minimum weighted norm); the joint torques are the remaining rows. Recorded signals add
noise and, at every touchdown, an impact transient on the landing foot's wrench (a one-sided
pulse of ``impact_force_n`` peaking ``impact_time_s`` after contact): the shock that rigid-body
finite differences do not see, as in paper E Fig. 8.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.body.inertia import pi_from_mass_com_inertia
from physid.robot.model import load_urdf

HUMANOID_URDF = Path(__file__).parent / "data" / "humanoid36.urdf"
TORSO_JOINT = "waist_pitch"
CONTACT_FRAMES = ("left_sole", "right_sole")
THIGH, SHIN, ANKLE_TO_SOLE, HIP_Y, HIP_Z = 0.4, 0.4, 0.05, 0.1, -0.08  # m, from the URDF


def load_humanoid() -> pin.Model:
    """The humanoid with a free-flyer root joint ``root_joint`` and its URDF inertias."""
    return load_urdf(HUMANOID_URDF, floating_base=True)


def backpack_pi(mass_kg: float) -> NDArray[np.float64]:
    """A 0.3 x 0.3 x 0.4 m box of ``mass_kg`` behind the torso, in the torso joint frame."""
    size = np.array([0.3, 0.3, 0.4])
    inertia = (
        mass_kg
        / 12.0
        * np.diag(
            [size[1] ** 2 + size[2] ** 2, size[0] ** 2 + size[2] ** 2, size[0] ** 2 + size[1] ** 2]
        )
    )
    return pi_from_mass_com_inertia(mass_kg, np.array([-0.2, 0.0, 0.25]), inertia)


@dataclass(frozen=True)
class SteppingScenario:
    """Gait, payload and measurement imperfections of :func:`simulate_stepping`."""

    duration_s: float = 12.0
    rate_hz: float = 1000.0
    step_s: float = 0.8  # one step: double support, then one foot swings
    double_support_s: float = 0.2
    lift_m: float = 0.08
    sway_m: float = 0.06
    bob_m: float = 0.01
    pelvis_height_m: float = 0.9
    payload_kg: float = 5.0
    payload_time_s: float = 6.0
    impact_force_n: float = 400.0  # peak of the vertical force transient at touchdown
    impact_time_s: float = 0.006  # its rise time
    q_std: float = 2e-5  # rad; base position: 10x in m
    dq_std: float = 2e-3  # rad/s; base linear velocity: 2x in m/s
    tau_std: float = 0.2  # N m
    force_std: float = 2.0  # N
    moment_std: float = 0.2  # N m

    def swing(self, t: NDArray) -> tuple[NDArray, NDArray, NDArray]:
        """``(step index, swinging foot 0=left 1=right, swing phase in [0, 1] or -1)``."""
        k = np.floor(t / self.step_s).astype(int)
        local = t - k * self.step_s - self.double_support_s
        phase = np.where(local >= 0, local / (self.step_s - self.double_support_s), -1.0)
        return k, k % 2, phase

    def touchdown_times(self) -> NDArray[np.float64]:
        return np.arange(self.step_s, self.duration_s, self.step_s)


def _leg_angles(d_vertical: NDArray, d_lateral: NDArray) -> NDArray:
    """Joint angles (N, 6) [hip yaw, hip roll, hip pitch, knee, ankle pitch, ankle roll] that put
    the sole flat, ``d_vertical`` below and ``d_lateral`` beside the hip (hip-roll plane IK)."""
    d_ankle = d_vertical - ANKLE_TO_SOLE  # the sole is flat, so straight below the ankle
    roll = np.arctan2(d_lateral, d_ankle)
    reach = np.hypot(d_ankle, d_lateral)
    knee = 2.0 * np.arccos(np.clip(reach / (THIGH + SHIN), -1.0, 1.0))
    zero = np.zeros_like(knee)
    return np.stack([zero, roll, -knee / 2, knee, -knee / 2, -roll], axis=1)


def configurations(scenario: SteppingScenario, t: NDArray[np.float64], nq: int) -> NDArray:
    """Configuration (N, nq) at times ``t`` (joint order of the URDF, see the module)."""
    t = np.asarray(t, dtype=float)
    _, foot, phase = scenario.swing(t)
    mid_swing0 = scenario.double_support_s + 0.5 * (scenario.step_s - scenario.double_support_s)
    y = -scenario.sway_m * np.cos(np.pi * (t - mid_swing0) / scenario.step_s)
    z = scenario.pelvis_height_m + scenario.bob_m * np.cos(2 * np.pi * t / scenario.step_s)
    lift = np.where(phase >= 0, scenario.lift_m * np.sin(np.pi * np.clip(phase, 0, 1)) ** 2, 0.0)
    q = np.zeros((len(t), nq))
    q[:, 1], q[:, 2], q[:, 6] = y, z, 1.0  # identity quaternion (x, y, z, w)
    for side, sign in ((0, 1.0), (1, -1.0)):
        foot_lift = np.where(foot == side, lift, 0.0)
        vertical = z + HIP_Z - foot_lift  # hip height above the sole (foot on the ground: 0)
        lateral = (y + sign * HIP_Y) - sign * HIP_Y  # hip minus foot, along y
        q[:, 7 + 6 * side : 13 + 6 * side] = _leg_angles(vertical, -lateral)
    upper = q[:, 19:]  # waist (2), neck (2), left arm (7), right arm (7)
    w = 2 * np.pi * np.array([0.3, 0.23, 0.2, 0.17])
    upper[:, 0] = 0.15 * np.sin(w[0] * t)
    upper[:, 1] = 0.1 * np.sin(w[1] * t)
    upper[:, 2:4] = 0.1 * np.sin(w[2] * t)[:, None]
    arm_swing = 0.3 * np.sin(np.pi * (t - mid_swing0) / scenario.step_s)
    for first, sign in ((4, 1.0), (11, -1.0)):
        upper[:, first] = sign * arm_swing  # shoulder pitch
        upper[:, first + 1] = sign * (0.25 + 0.1 * np.sin(w[3] * t))  # shoulder roll, out
        upper[:, first + 3] = -0.5 + 0.2 * np.sin(w[3] * t + first)  # elbow
    return q


@dataclass(frozen=True)
class SteppingRecording:
    """Recorded signals (with noise and impacts) and the truth, over N samples."""

    t: NDArray[np.float64]
    q: NDArray[np.float64]  # (N, 37) recorded
    dq: NDArray[np.float64]  # (N, 36)
    tau: NDArray[np.float64]  # (N, 30)
    wrenches: NDArray[np.float64]  # (N, 2, 6) recorded, LOCAL_WORLD_ALIGNED at the soles
    wrenches_true: NDArray[np.float64]
    q_true: NDArray[np.float64]
    dq_true: NDArray[np.float64]
    ddq_true: NDArray[np.float64]
    tau_true: NDArray[np.float64]
    torso_pi: NDArray[np.float64]  # (N, 10) true torso (+ payload)
    touchdowns: NDArray[np.float64]


def simulate_stepping(
    rng: np.random.Generator, scenario: SteppingScenario | None = None
) -> SteppingRecording:
    """Sample the scenario (see the module docstring)."""
    sc = scenario or SteppingScenario()
    model = load_humanoid()
    data = model.createData()
    t = np.arange(0.0, sc.duration_s, 1.0 / sc.rate_hz)
    eps = 1e-5
    q, q_plus, q_minus = (configurations(sc, t + s, model.nq) for s in (0.0, eps, -eps))
    # pelvis orientation is constant (identity), so the free-flyer velocity is the plain
    # derivative of its position (root frame = world axes)
    v = np.delete(q_plus - q_minus, 6, axis=1) / (2 * eps)
    a = np.delete(q_plus - 2 * q + q_minus, 6, axis=1) / eps**2
    torso = model.getJointId(TORSO_JOINT)
    nominal = model.inertias[torso].toDynamicParameters()
    torso_pi = np.tile(nominal, (len(t), 1))
    torso_pi[t >= sc.payload_time_s] += backpack_pi(sc.payload_kg)
    _, foot, phase = sc.swing(t)
    frames = [model.getFrameId(f) for f in CONTACT_FRAMES]
    wrenches = np.zeros((len(t), 2, 6))
    tau = np.empty((len(t), model.nv - 6))
    ds_fraction = np.clip((t % sc.step_s) / sc.double_support_s, 0.0, 1.0)
    for k in range(len(t)):
        model.inertias[torso] = pin.Inertia.FromDynamicParameters(torso_pi[k])
        rhs = pin.rnea(model, data, q[k], v[k], a[k]).copy()
        pin.computeJointJacobians(model, data, q[k])
        jac = [pin.getFrameJacobian(model, data, f, pin.LOCAL_WORLD_ALIGNED) for f in frames]
        # share of the foot about to swing: 1 -> 0 over double support, 0 while it swings
        lifting = 0.5 * (1 + np.cos(np.pi * ds_fraction[k])) if phase[k] < 0 else 0.0
        weights = np.empty(2)
        weights[foot[k]], weights[1 - foot[k]] = lifting, 1.0 - lifting
        base = [J[:, :6].T for J in jac]  # maps a sole wrench onto the six root rows
        mu = np.linalg.solve(sum(w * B @ B.T for w, B in zip(weights, base, strict=True)), rhs[:6])
        for c in range(2):
            wrenches[k, c] = weights[c] * base[c].T @ mu
            rhs -= jac[c].T @ wrenches[k, c]
        tau[k] = rhs[6:]
    measured = wrenches.copy()
    for t_down in sc.touchdown_times():
        landing = int(sc.swing(np.array([t_down - 1e-6]))[1][0])
        s = np.clip((t - t_down) / sc.impact_time_s, 0.0, None)
        pulse = sc.impact_force_n * s * np.exp(1.0 - s)
        measured[:, landing, 2] += pulse
        measured[:, landing, 4] += 0.05 * pulse  # heel strike: a moment about y too
    n = len(t)
    q_std = np.r_[np.full(3, 10 * sc.q_std), np.zeros(4), np.full(model.nq - 7, sc.q_std)]
    dq_std = np.r_[np.full(3, 2 * sc.dq_std), np.full(model.nv - 3, sc.dq_std)]
    wrench_std = np.r_[np.full(3, sc.force_std), np.full(3, sc.moment_std)]
    return SteppingRecording(
        t=t,
        q=q + rng.normal(size=q.shape) * q_std,
        dq=v + rng.normal(size=v.shape) * dq_std,
        tau=tau + rng.normal(scale=sc.tau_std, size=tau.shape),
        wrenches=measured + rng.normal(size=(n, 2, 6)) * wrench_std,
        wrenches_true=wrenches,
        q_true=q,
        dq_true=v,
        ddq_true=a,
        tau_true=tau,
        torso_pi=torso_pi,
        touchdowns=sc.touchdown_times(),
    )
