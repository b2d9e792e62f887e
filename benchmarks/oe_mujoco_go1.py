"""``physid oe --floating`` on a Go1 simulated by MuJoCo (soft contacts, friction cones, its own
integrator), not by physid's Pinocchio simulators: a 7.2 kg payload on the torso, estimated
from the encoders, the IMU, the torque commands and contact flags detected from MuJoCo's
contact forces.

RESULTS with 2026-11-29's defaults (seed 0; the data choose the feet, the Coulomb band per
node; docs/oe.md "Eleventh round"; CPU seconds)::

    sway (4 feet down: rigid)     base_v*  ok         35     72 s |  7.207   +0.10 % |  0.2 mm
    sway                          acc_*    ok         41 a  117 s |  7.207   +0.10 % |  0.2 mm
    crawl, detector flags (soft)  base_v*  ok         31    157 s |  7.252   +0.73 % |  0.7 mm
    crawl, detector flags         acc_*    ok        101 a  490 s |  7.315   +1.60 % |  1.7 mm
    a: 2 rounds of the bias estimation, iterations of both; estimates (-4, -0.3, -0.3) and
       (-19, -4, 2) mm/s^2, truth 0

RESULTS (2026-11-23, seed 0, 6 s at ``--dt 0.002``: 3,000 nodes; MuJoCo 4.0.0 at 0.5 ms;
library defaults + foot_velocity 2.24e-2 m/s; time = wall seconds of the ``physid oe`` child
process on the shared 2 cores; truth 12.7611 kg = URDF torso 5.5611 + 7.2; out/oe_mujoco_go1/
<case>/ and <case>.log)::

    case                          columns  status     it     time | payload kg  error | CoM err
    sway (4 feet down)            base_v*  converged  13     23 s |  7.198   -0.03 % |  2.7 mm
    sway                          acc_*    converged  17 a   46 s |  7.198   -0.03 % |  2.7 mm
    sway, 2 mm feet               base_v*  converged  13     22 s |  7.201   +0.01 % |  0.3 mm
    sway, --contact-point sole    base_v*  converged  18     29 s |  7.205   +0.07 % |  2.1 mm
    crawl, detector flags         base_v*  converged  36     59 s |  7.673   +6.56 % |  2.7 mm
    crawl, detector flags         acc_*    converged  64 b  152 s |  7.668   +6.50 % |  2.9 mm
    crawl, ideal flags            base_v*  converged  30     50 s |  7.440   +3.33 % |  1.1 mm
    crawl, foot_velocity 0.1 c    base_v*  converged  35     49 s |  7.672   +6.56 % |  2.6 mm
    crawl, process_v 0.1 c        base_v*  max_it.   100    136 s | 10.603  +47.27 % | 11.3 mm
    same, ideal flags c           base_v*  max_it.   100    143 s |  8.672  +20.45 % |  8.1 mm
    crawl, 2 mm feet, ideal flags base_v*  max_it.   100    138 s |  7.379   +2.48 % |  1.4 mm
    crawl, --dt 0.001 (6,000)     base_v*  converged  14     44 s |  7.581   +5.29 % |  2.4 mm
    same, ideal flags             base_v*  max_it.   100    283 s |  7.443   +3.37 % |  1.0 mm
    a: all rounds of the bias estimation (2 rounds; estimate (2.5, 0.6, -0.3) mm/s^2, truth 0)
    b: 3 rounds, bias estimate (36, 61, -11) mm/s^2 for a true 0
    c: diagnosis only (--noise foot_velocity=0.1, --noise process_v=0.1), not settings to use
    The URDF torso alone (no payload) is 7.2 kg (56 %) light; the estimate starts there.
    The default command (both gaits, base_v* and acc_*) reproduced rows 1, 2, 5, 6 exactly.

- four feet on the ground: payload met (0.03 %); the torso CoM is 2.66 mm too low (z; x, y
  within 0.1 mm), 17 standard deviations: MuJoCo's contact force acts at the bottom of the
  2 cm sphere, physid's at the foot frame (its centre). 2 mm spheres: 0.3 mm. A frame at the
  sphere's bottom in the standing pose over-corrects (+2.1 mm): the sphere rolls;
- crawl: payload +6.6 % (std reported 1.7 g, i.e. 280 sigma off); cost per node 925 against
  11 on the sway. One-step v error of the estimator's rigid-contact Euler model at the TRUE
  torso: 0.15 RMS (process_v 1e-3; sway 4.2e-4). With ideal flags, nodes where every foot in
  contact moves < 5 cm/s: 4.2e-3; nodes where one creeps or bounces faster (38 %): 0.12. Feet
  in stance (detector flags) move at 85 mm/s RMS; friction ratio |f_t|/f_n < 0.84 on 99 % of
  loaded contacts (soft-contact creep and bounce, not Coulomb slip). Detector touch-downs are
  5 ms late (median; -18..+22 ms); 10 of the 108 ideal touch-down and lift-off events
  (bounces) have no detector event within 50 ms. Ideal flags halve the bias; a 4.5x looser
  no-slip std changes nothing; 1 ms nodes (debounce 2 ms) reduce it to +5.3 %; a process
  noise of the model error's size on every node is far worse (+47 %: it takes the payload);
- the crawl is this script's controller (three feet down, torso moved 40 % of the way to
  the support triangle's centroid, stance feet held by a Cartesian spring, swing by joint PD):
  its feet bounce and creep more than a real Go1's would. The number is a sensitivity, not a
  prediction for a real robot.

Model: the MJCF is written from the Pinocchio model of example-robot-data's Go1 URDF (fixed
links merged as physid merges them, so both programs hold the same rigid bodies; checked at
start-up: mass matrices and gravity torques agree to ~1e-12), a free joint for the base, a
ground plane, a sphere of radius 0.02 m (the URDF's foot collision) at each foot frame
(FL/FR/RL/RR_foot; the frame is the sphere's centre), MuJoCo's default contact parameters
(soft, ``solref`` 0.02 s, pyramidal friction cone, mu = 1), no joint limits, no joint
friction. The payload of ``benchmarks/oe_go1_payload.py`` (7.2 kg, CoM (-0.03, 0.01, 0.07) m,
principal moments 0.035 / 0.09 / 0.10 kg m^2) is added to the torso's inertial.

Controller (nominal URDF model only, torques from Pinocchio at the MuJoCo state, held over
each control period ``--dt``; MuJoCo steps at ``--timestep``): the virtual-model controller
of :func:`physid.sim.oe_floating.simulate_go1` (torso swaying; torso wrench spread over the
feet that are scheduled AND touching, by a bounded least squares: normal forces 10-400 N,
no pulling), plus a Cartesian spring on each stance foot relative to the torso reference.
``--gait crawl``: one foot swings at a time (walk_flags, 2 s cycle, 0.2 s swing, lift and
land at zero speed, then reach down until touching), the torso first moved toward the
centroid of the three other feet (without it the robot tips over the diagonal: MuJoCo's
contacts are unilateral, physid's simulated ones bilateral). A ``--warmup`` (s) of standing
precedes the recording so that the height integrator has taken up the payload's weight.

Recorded per row (docs/oe.md, floating-base contract): encoders (1e-3 rad), joint velocities
(3e-2 rad/s), IMU orientation (2e-3 rad), gyro (2.4e-4 rad/s/sqrt(Hz)), base velocity in the
base frame (2e-2 m/s, white: an idealised pre-integration), accelerometer: the MuJoCo
``accelerometer`` sensor at ``imu_link`` averaged over the control period (what a decimating
IMU filter delivers) + 1.7e-3 m/s^2/sqrt(Hz), true base position, and contact flags from a
contact detector: per foot the MuJoCo normal force at the row's instant, on above 15 N, off
below 5 N (hysteresis), and a change accepted after ``--debounce`` consecutive samples (causal,
as on a robot). For diagnosis the script also computes the *ideal* flags (mean normal force
over the row's interval > 0.5 N, non-causal) and the one-step error of the estimator's own
model (rigid contacts, Euler) at the TRUE inertia on the MuJoCo states.

    OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/oe_mujoco_go1.py [--gait both]
        [--duration 6] [--dt 0.002] [--seed 0] [--out out/oe_mujoco_go1] [--variants vel,acc]
        [--foot-radius 0.02] [--contact-point centre|sole] [--noise KEY=VALUE (diagnosis)]

About 6 min with the defaults (both gaits, base_v* and acc_*).
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
from numpy.typing import NDArray  # noqa: E402
from scipy.optimize import lsq_linear  # noqa: E402

from physid.sim.oe_floating import GO1_FEET, GO1_STAND, walk_flags  # noqa: E402
from physid.sim.oe_robots import GO1, load_model, robot_urdf  # noqa: E402

PAYLOAD = pin.Inertia(7.2, np.array([-0.03, 0.01, 0.07]), np.diag([0.035, 0.09, 0.10]))
FOOT_RADIUS = 0.02  # m, the URDF's foot collision sphere
IMU_FRAME = "imu_link"
# sensor noise of the recording (BMI088-class IMU as in physid.sim.oe_imu, encoders as there)
ENCODER_STD, JOINT_VEL_STD, ORIENT_STD, BASE_VEL_STD = 1e-3, 3e-2, 2e-3, 2e-2
GYRO_DENSITY, ACC_DENSITY = 2.4e-4, 1.7e-3  # per sqrt(Hz)
FORCE_ON, FORCE_OFF = 15.0, 5.0  # N, contact detector hysteresis
PERIOD, SWING = 2.0, 0.2  # s: crawl cycle (one foot swings at a time), swing of one foot
STANCE_K, STANCE_D = 1500.0, 40.0  # N/m, N s/m: stance feet held relative to the torso
SHIFT = 0.4  # share of the way to the support triangle's centroid
LEG_ORDER = (0, 3, 1, 2)  # FL, RR, FR, RL: the swing order of walk_flags
IDEAL_FORCE = 0.5  # N, mean normal force over a row's interval for the ideal flags


# ------------------------------------------------------------------------------------------
# MuJoCo model from the Pinocchio model of the URDF
# ------------------------------------------------------------------------------------------


def _v(values) -> str:  # noqa: ANN001
    return " ".join(f"{float(x):.12g}" for x in values)


def _inertial(inertia: pin.Inertia) -> str:
    c = inertia.inertia  # about the CoM, in the body frame
    full = (c[0, 0], c[1, 1], c[2, 2], c[0, 1], c[0, 2], c[1, 2])
    return (
        f'<inertial pos="{_v(inertia.lever)}" mass="{inertia.mass:.12g}" fullinertia="{_v(full)}"/>'
    )


def _quat_wxyz(rotation: NDArray) -> NDArray:
    xyzw = pin.Quaternion(rotation).coeffs()
    return np.r_[xyzw[3], xyzw[:3]]


def _joint_axis(model: pin.Model, j: int) -> NDArray:
    name = model.joints[j].shortname()
    if name.startswith("JointModelR") and name[-1] in "XYZ":
        return np.eye(3)["XYZ".index(name[-1])]
    return np.asarray(model.joints[j].extract().axis)  # revolute unaligned


def mjcf(
    model: pin.Model,
    torso: pin.Inertia,
    base_height: float,
    timestep: float,
    foot_radius: float = FOOT_RADIUS,
) -> str:
    """MJCF of a Pinocchio free-flyer model (joint 1 = free base with inertia ``torso``,
    1-DoF revolute joints after it, one body per joint), ground plane, foot spheres, an IMU
    site with accelerometer and gyro, a motor per joint (gear 1, unlimited)."""
    children: dict[int, list[int]] = {}
    for j in range(2, model.njoints):
        children.setdefault(model.parents[j], []).append(j)
    frames_on: dict[int, list[pin.Frame]] = {}
    for f in model.frames:
        if f.name in GO1_FEET or f.name == IMU_FRAME:
            frames_on.setdefault(f.parentJoint, []).append(f)

    def body(j: int, indent: str) -> list[str]:
        placement = model.jointPlacements[j]
        lines = [
            f'{indent}<body name="{model.names[j]}" pos="{_v(placement.translation)}" '
            f'quat="{_v(_quat_wxyz(placement.rotation))}">',
            f'{indent}  <joint name="{model.names[j]}" type="hinge" '
            f'axis="{_v(_joint_axis(model, j))}"/>',
            f"{indent}  {_inertial(model.inertias[j])}",
        ]
        lines += sites(j, indent + "  ")
        for c in children.get(j, []):
            lines += body(c, indent + "  ")
        return lines + [f"{indent}</body>"]

    def sites(j: int, indent: str) -> list[str]:
        out = []
        for f in frames_on.get(j, []):
            pos, quat = _v(f.placement.translation), _v(_quat_wxyz(f.placement.rotation))
            if f.name == IMU_FRAME:
                out.append(f'{indent}<site name="imu" pos="{pos}" quat="{quat}"/>')
            else:
                out.append(
                    f'{indent}<geom name="{f.name}" type="sphere" size="{foot_radius}" '
                    f'pos="{pos}" contype="1" conaffinity="0"/>'
                )
                out.append(f'{indent}<site name="{f.name}" pos="{pos}" quat="{quat}"/>')
        return out

    base = [
        f'    <body name="root_joint" pos="0 0 {base_height:.12g}">',
        '      <freejoint name="root_joint"/>',
        f"      {_inertial(torso)}",
        *sites(1, "      "),
    ]
    for c in children.get(1, []):
        base += body(c, "      ")
    base.append("    </body>")
    motors = [
        f'    <motor name="{model.names[j]}" joint="{model.names[j]}" gear="1"/>'
        for j in range(2, model.njoints)
    ]
    return "\n".join(
        [
            '<mujoco model="go1_payload">',
            '  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>',
            f'  <option timestep="{timestep:.12g}" gravity="0 0 -9.81"/>',
            "  <worldbody>",
            '    <geom name="floor" type="plane" size="0 0 1" contype="0" conaffinity="1"/>',
            *base,
            "  </worldbody>",
            "  <actuator>",
            *motors,
            "  </actuator>",
            "  <sensor>",
            '    <accelerometer name="acc" site="imu"/>',
            '    <gyro name="gyro" site="imu"/>',
            "  </sensor>",
            "</mujoco>",
        ]
    )


def to_pinocchio(mj_data: mujoco.MjData) -> tuple[NDArray, NDArray]:
    """(q, v) in Pinocchio's free-flyer convention: quaternion xyzw, base linear velocity in
    the base frame (MuJoCo's free joint: wxyz, linear velocity in the world frame)."""
    qpos, qvel = mj_data.qpos, mj_data.qvel
    quat = np.r_[qpos[4:7], qpos[3]]
    R = pin.Quaternion(quat).normalized().toRotationMatrix()
    q = np.r_[qpos[:3], quat, qpos[7:]]
    v = np.r_[R.T @ qvel[:3], qvel[3:]]
    return q, v


def check_conversion(model: pin.Model, torso: pin.Inertia, mj_model: mujoco.MjModel) -> float:
    """Largest difference of the mass matrix and the gravity torques between Pinocchio (true
    torso) and MuJoCo at a random configuration with the base at the identity orientation
    (where both programs' base velocity coordinates coincide)."""
    true = model.copy()
    true.inertias[1] = torso
    rng = np.random.default_rng(1)
    q = pin.neutral(true)
    q[:3] = rng.uniform(-0.1, 0.1, 3)
    q[7:] = GO1_STAND + rng.uniform(-0.3, 0.3, 12)
    d = mujoco.MjData(mj_model)
    d.qpos[:] = np.r_[q[:3], 1.0, 0.0, 0.0, 0.0, q[7:]]
    mujoco.mj_forward(mj_model, d)
    M = np.zeros((mj_model.nv, mj_model.nv))
    mujoco.mj_fullM(mj_model, d, M)
    pd = true.createData()
    M_pin = pin.crba(true, pd, q)
    M_pin = np.triu(M_pin) + np.triu(M_pin, 1).T
    g_pin = pin.computeGeneralizedGravity(true, pd, q)
    return float(max(np.abs(M - M_pin).max(), np.abs(d.qfrc_bias - g_pin).max()))


# ------------------------------------------------------------------------------------------
# Simulation
# ------------------------------------------------------------------------------------------


@dataclass
class Run:
    """What the MuJoCo run produced, one row per control period."""

    t: NDArray
    q: NDArray  # (N+1, 19) Pinocchio convention
    v: NDArray  # (N+1, 18)
    tau: NDArray  # (N+1, 12), the last row unused
    acc: NDArray  # (N+1, 3) accelerometer averaged over each row's interval
    force_at_row: NDArray  # (N+1, 4) foot normal force at each row's instant [N]
    force_mean: NDArray  # (N+1, 4) mean normal force over each row's interval [N]
    penetration: NDArray  # (N+1, 4) foot sphere penetration at each row [m] (>0: inside)
    foot_speed: NDArray  # (N+1, 4) world speed of each foot frame origin [m/s]


def foot_forces(mj_model: mujoco.MjModel, d: mujoco.MjData, geoms: list[int]) -> NDArray:
    """Normal contact force [N] of the floor on each foot geom at MuJoCo's current step."""
    out = np.zeros(len(geoms))
    f6 = np.zeros(6)
    for i in range(d.ncon):
        c = d.contact[i]
        for j, g in enumerate(geoms):
            if g in (c.geom1, c.geom2):
                mujoco.mj_contactForce(mj_model, d, i, f6)
                out[j] += f6[0]
    return out


class Controller:
    """The virtual-model walk of :func:`physid.sim.oe_floating.simulate_go1` on the nominal
    model: torso wrench (PID on height, PD on the rest) spread over the scheduled stance feet
    (minimum norm), ``tau = g_j - Jc_j^T f``; swing legs follow a lift bump by joint PD."""

    def __init__(self, nominal: pin.Model, q0: NDArray, rng: np.random.Generator) -> None:
        self.model, self.data, self.q0 = nominal, nominal.createData(), q0
        self.mass = pin.computeTotalMass(nominal)
        self.feet = [nominal.getFrameId(f) for f in GO1_FEET]
        self.amp = rng.uniform(0.5, 1.0, 5) * np.array([0.02, 0.02, 0.02, 0.1, 0.1])
        self.freq = 2 * np.pi * rng.uniform(0.3, 1.0, 5)
        self.integral, self.swing = 0.0, SWING
        self.lift_start = np.zeros(4)
        self.anchor: list[NDArray | None] = [None] * 4  # world foot position in stance

    def __call__(  # noqa: ANN204
        self,
        t: float,
        sway_t: float,
        q: NDArray,
        v: NDArray,
        scheduled: NDArray,
        touching: NDArray,
        shift: NDArray,
        shift_vel: NDArray,
    ):
        model, nd = self.model, self.data
        s = self.amp * np.sin(self.freq * sway_t)
        ds = self.amp * self.freq * np.cos(self.freq * sway_t)
        ds[:2] += shift_vel
        R = pin.Quaternion(q[3:7]).normalized().toRotationMatrix()
        p_ref = self.q0[:3] + s[:3] + np.r_[shift, 0.0]
        R_ref = pin.rpy.rpyToMatrix(s[3], s[4], 0.0)
        dt = 0.0 if not hasattr(self, "_t") else t - self._t
        self._t = t
        self.integral += dt * (p_ref[2] - q[2])
        lin, ang = R @ v[:3], R @ v[3:6]
        force = self.mass * (
            np.array([0, 0, 9.81]) + 200.0 * (p_ref - q[:3]) + 20.0 * (ds[:3] - lin)
        )
        force[2] += self.mass * 500.0 * self.integral
        torque = 60.0 * R @ pin.log3(R.T @ R_ref) + 6.0 * (np.r_[ds[3:5], 0.0] - ang)
        pin.computeGeneralizedGravity(model, nd, q)
        pin.computeJointJacobians(model, nd, q)
        pin.framesForwardKinematics(model, nd, q)
        stance = scheduled & touching
        legs = [i for i in range(4) if stance[i]]
        tau = nd.g[6:].copy()
        G = np.vstack(
            [
                np.hstack([np.eye(3) for _ in legs] + [np.zeros((3, 0))]),
                np.hstack(
                    [pin.skew(nd.oMf[self.feet[i]].translation - q[:3]) for i in legs]
                    + [np.zeros((3, 0))]
                ),
            ]
        )
        f = []
        if legs:  # regularized least squares, 10 N <= normal <= 400 N, |tangential| <= 100 N
            lower = np.tile([-100.0, -100.0, 10.0], len(legs))
            upper = np.tile([100.0, 100.0, 400.0], len(legs))
            A = np.vstack([G, 0.03 * np.eye(G.shape[1])])
            b = np.r_[force, torque, np.zeros(G.shape[1])]
            f = lsq_linear(A, b, bounds=(lower, upper)).x
        for j, i in enumerate(legs):
            Jf = pin.getFrameJacobian(model, nd, self.feet[i], pin.LOCAL_WORLD_ALIGNED)[:3]
            tau -= Jf[:, 6:].T @ f[3 * j : 3 * j + 3]
        for i in range(4):  # stance legs: foot held where the torso reference wants it
            foot = nd.oMf[self.feet[i]].translation
            if not stance[i] or self.anchor[i] is None:
                self.anchor[i] = foot.copy() if stance[i] else None
                continue
            Jf = pin.getFrameJacobian(model, nd, self.feet[i], pin.LOCAL_WORLD_ALIGNED)[:3]
            wanted = R @ R_ref.T @ (self.anchor[i] - p_ref)  # foot from the base, world axes
            rel_vel = Jf[:, 6:] @ v[6:]
            sl = slice(3 * i, 3 * i + 3)
            tau[sl] += Jf[:, 6 + 3 * i : 9 + 3 * i].T @ (
                STANCE_K * (wanted - (foot - q[:3])) - STANCE_D * rel_vel
            )
        tau -= 0.3 * v[6:]
        for i in range(4):
            if stance[i]:
                self.lift_start[i] = t
                continue
            phase = (t - self.lift_start[i]) / self.swing
            # lift and land at zero speed; a scheduled foot that lost contact only reaches down
            bump = np.sin(np.pi * min(phase, 1.0)) ** 2 if not scheduled[i] else 0.0
            # then keep extending the knee (~1 cm per swing time) until the foot touches
            ref = GO1_STAND[3 * i : 3 * i + 3] + np.array([0.0, 0.3, -0.6]) * bump
            ref += np.array([0.0, -0.03, 0.06]) * min(phase, 3.0)
            sl = slice(3 * i, 3 * i + 3)
            tau[sl] += 30.0 * (ref - q[7:][sl]) - 1.0 * v[6:][sl]
        return tau


def next_swing_leg(t: float) -> int:
    """The leg of :func:`walk_flags` (PERIOD, SWING) swinging at ``t``, or the next to swing
    once the current swing is over: the torso moves over the other three feet beforehand
    (a static crawl; with unilateral contacts the robot otherwise tips over the diagonal)."""
    tau = t - 0.25 * PERIOD
    if tau < 0:
        return LEG_ORDER[0]
    slot = int(tau // (0.25 * PERIOD))
    within = tau - slot * 0.25 * PERIOD
    return LEG_ORDER[slot % 4] if within < SWING else LEG_ORDER[(slot + 1) % 4]


def simulate(args: argparse.Namespace, nominal: pin.Model, torso: pin.Inertia) -> tuple:
    """Stand for ``--warmup`` s, then record ``--duration`` s of the walk. Returns the Run,
    the MuJoCo model and the conversion check."""
    q0 = pin.neutral(nominal)
    q0[7:] = GO1_STAND
    nd = nominal.createData()
    pin.framesForwardKinematics(nominal, nd, q0)
    radius = args.foot_radius
    q0[2] = radius - min(nd.oMf[nominal.getFrameId(f)].translation[2] for f in GO1_FEET)
    mj_model = mujoco.MjModel.from_xml_string(mjcf(nominal, torso, q0[2], args.timestep, radius))
    check = check_conversion(nominal, torso, mj_model)
    d = mujoco.MjData(mj_model)
    d.qpos[:] = np.r_[q0[:3], 1.0, 0.0, 0.0, 0.0, q0[7:]]
    mujoco.mj_forward(mj_model, d)
    geoms = [mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_GEOM, f) for f in GO1_FEET]
    acc_adr = mj_model.sensor_adr[mujoco.mj_name2id(mj_model, mujoco.mjtObj.mjOBJ_SENSOR, "acc")]
    sub = int(round(args.dt / args.timestep))
    if abs(sub * args.timestep - args.dt) > 1e-12:
        raise SystemExit("--dt must be a multiple of --timestep")
    controller = Controller(nominal, q0, np.random.default_rng(args.seed))
    n_warm, n = int(round(args.warmup / args.dt)), int(round(args.duration / args.dt))
    schedule = walk_flags(n + 1, args.dt, PERIOD, SWING)
    if args.gait == "sway":
        schedule[:] = True
    feet_xy = np.array([nd.oMf[nominal.getFrameId(f)].translation[:2] for f in GO1_FEET])
    shift, shift_vel = np.zeros(2), np.zeros(2)
    pd = nominal.createData()
    foot_ids = [nominal.getFrameId(f) for f in GO1_FEET]
    rows = {k: [] for k in ("q", "v", "tau", "acc", "f_row", "f_mean", "pen", "speed")}
    for k in range(n_warm + n + 1):
        q, v = to_pinocchio(d)
        rec = k - n_warm
        stance = np.ones(4, bool) if rec < 0 else schedule[rec]
        f_row = foot_forces(mj_model, d, geoms)  # contacts of the state at this row
        others = np.arange(4) != next_swing_leg(max(rec, 0) * args.dt)
        crawling = rec >= 0 and args.gait == "crawl"
        target = SHIFT * (feet_xy[others].mean(0) - feet_xy.mean(0)) if crawling else np.zeros(2)
        # critically damped second-order filter (15 rad/s, ~0.3 s): a smooth torso shift
        shift_vel += args.dt * (225.0 * (target - shift) - 30.0 * shift_vel)
        shift += args.dt * shift_vel
        touching = f_row > FORCE_OFF
        tau = controller(
            k * args.dt, max(rec, 0) * args.dt, q, v, stance, touching, shift, shift_vel
        )
        d.ctrl[:] = tau
        acc, f_mean = np.zeros(3), np.zeros(4)
        if k < n_warm + n:
            for _ in range(sub):
                mujoco.mj_step(mj_model, d)  # sensors/contacts of the state before the step
                acc += d.sensordata[acc_adr : acc_adr + 3] / sub
                f_mean += foot_forces(mj_model, d, geoms) / sub
        if rec < 0:
            continue
        pin.forwardKinematics(nominal, pd, q, v)
        pin.updateFramePlacements(nominal, pd)
        rows["q"].append(q)
        rows["v"].append(v)
        rows["tau"].append(tau)
        rows["acc"].append(acc)
        rows["f_row"].append(f_row)
        rows["f_mean"].append(f_mean)
        rows["pen"].append([radius - pd.oMf[i].translation[2] for i in foot_ids])
        rows["speed"].append(
            [
                np.linalg.norm(pin.getFrameVelocity(nominal, pd, i, pin.LOCAL_WORLD_ALIGNED).linear)
                for i in foot_ids
            ]
        )
    arr = {k: np.array(val) for k, val in rows.items()}
    arr["acc"][-1] = arr["acc"][-2]
    arr["f_mean"][-1] = arr["f_mean"][-2]
    run = Run(
        args.dt * np.arange(n + 1), arr["q"], arr["v"], arr["tau"], arr["acc"],
        arr["f_row"], arr["f_mean"], arr["pen"], arr["speed"],
    )  # fmt: skip
    return run, mj_model, check


# ------------------------------------------------------------------------------------------
# Contact flags, columns
# ------------------------------------------------------------------------------------------


def detect_contacts(force: NDArray, debounce: int) -> NDArray[np.bool_]:
    """Causal detector: hysteresis (on > FORCE_ON, off < FORCE_OFF) on the force at each row,
    a change accepted once the raw state has held for ``debounce`` consecutive rows."""
    flags = np.zeros(force.shape, bool)
    for j in range(force.shape[1]):
        raw, state, run = False, force[0, j] > FORCE_ON, 0
        for k, f in enumerate(force[:, j]):
            raw = f > FORCE_ON if not raw else f > FORCE_OFF
            run = run + 1 if raw != state else 0
            if run >= debounce:
                state, run = raw, 0
            flags[k, j] = state
    return flags


def flag_timing(flags: NDArray, ideal: NDArray, dt: float) -> dict:
    """Touch-down / lift-off delays of ``flags`` against ``ideal`` [ms]: each ideal event
    matched to the nearest detector event of the same foot and kind within 50 ms
    (``unmatched``: ideal events without one, i.e. contact chatter the detector filtered)."""
    out = {"touchdown_ms": [], "liftoff_ms": [], "rows_differ": int(np.sum(flags != ideal))}
    out["unmatched"] = 0
    for j in range(flags.shape[1]):
        for key, sign in (("touchdown_ms", 1), ("liftoff_ms", -1)):
            ev_f = np.flatnonzero(np.diff(flags[:, j].astype(int)) == sign)
            ev_i = np.flatnonzero(np.diff(ideal[:, j].astype(int)) == sign)
            for e in ev_i:
                near = ev_f[np.abs(ev_f - e) * dt <= 0.05]
                if near.size:
                    out[key].append(1e3 * dt * (near[np.argmin(np.abs(near - e))] - e))
                else:
                    out["unmatched"] += 1
    return out


def columns(
    nominal: pin.Model,
    run: Run,
    flags: NDArray,
    rng: np.random.Generator,
    dt: float,
    kind: str,
    frames: tuple[str, ...] = GO1_FEET,
) -> dict[str, NDArray]:
    """The docs/oe.md floating-base columns; ``kind`` 'vel' writes base_v*, 'acc' acc_*;
    contact flags named after ``frames``."""
    n = run.t.size
    cols = {"t": run.t}
    cols |= {f"base_{a}": run.q[:, i] for i, a in enumerate("xyz")}
    quats = []
    for q in run.q:
        R = pin.Quaternion(q[3:7]).normalized().toRotationMatrix()
        quats.append(pin.Quaternion(R @ pin.exp3(ORIENT_STD * rng.standard_normal(3))).coeffs())
    quats = np.array(quats)
    cols |= {f"base_q{a}": quats[:, i] for i, a in enumerate("xyzw")}
    gyro = run.v[:, 3:6] + GYRO_DENSITY / np.sqrt(dt) * rng.standard_normal((n, 3))
    cols |= {f"gyro_{a}": gyro[:, i] for i, a in enumerate("xyz")}
    if kind == "vel":
        vel = run.v[:, :3] + BASE_VEL_STD * rng.standard_normal((n, 3))
        cols |= {f"base_v{a}": vel[:, i] for i, a in enumerate("xyz")}
    else:
        acc = run.acc + ACC_DENSITY / np.sqrt(dt) * rng.standard_normal((n, 3))
        cols |= {f"acc_{a}": acc[:, i] for i, a in enumerate("xyz")}
    for j in range(2, nominal.njoints):
        name, joint = nominal.names[j], nominal.joints[j]
        cols["q_" + name] = run.q[:, joint.idx_q] + ENCODER_STD * rng.standard_normal(n)
        cols["dq_" + name] = run.v[:, joint.idx_v] + JOINT_VEL_STD * rng.standard_normal(n)
        cols["tau_" + name] = run.tau[:, joint.idx_v - 6]
    for j, frame in enumerate(frames):
        cols["contact_" + frame] = flags[:, j].astype(float)
    return cols


def write_csv(path: Path, cols: dict[str, NDArray]) -> None:
    names = list(cols)
    table = np.column_stack([cols[c] for c in names])
    np.savetxt(path, table, delimiter=",", header=",".join(names), comments="", fmt="%.10g")


# ------------------------------------------------------------------------------------------
# Diagnostics and estimation
# ------------------------------------------------------------------------------------------


def one_step_error(true: pin.Model, run: Run, flags: NDArray, dt: float) -> dict:
    """RMS and 99th percentile of ``x_{k+1} (-) f(x_k)`` in v (per node), the estimator's
    own rigid-contact Euler step with the TRUE torso on the MuJoCo states, split by node
    kind (no contact change / touch-down in the node / lift-off)."""
    from physid.oe import Measurements, NoiseStd, make_problem
    from physid.oe.model import state

    meas = Measurements(q=run.q, base_quat=run.q[:, 3:7], gyro=run.v[:, 3:6])
    problem = make_problem(
        true, ["root_joint"], "exp_eig", dt, run.tau[:-1], meas, NoiseStd(),
        contact_frames=GO1_FEET, contact_flags=flags,
    )  # fmt: skip
    problem.dynamics.set_theta(problem.dynamics.nominal_theta())
    x = np.hstack([run.q, run.v])
    zero, nv = np.zeros(problem.dynamics.nx), true.nv
    w = np.array(
        [
            state.difference(true, problem.transition(k, x[k], zero), x[k + 1])[nv:]
            for k in range(problem.horizon)
        ]
    )
    td = np.any(flags[1:] & ~flags[:-1], axis=1)
    lo = np.any(~flags[1:] & flags[:-1], axis=1)
    plain = ~td & ~lo

    def rms(mask: NDArray) -> float:
        return float(np.sqrt(np.mean(w[mask] ** 2))) if mask.any() else float("nan")

    speed = np.where(flags[:-1], np.maximum(run.foot_speed[:-1], run.foot_speed[1:]), 0.0)
    slow = speed.max(axis=1) < 0.05  # every foot in contact moves slower than 5 cm/s
    return {
        "v_rms_plain_slow": rms(plain & slow),
        "v_rms_plain_fast": rms(plain & ~slow),
        "plain_fast_share": float(np.mean(~slow[plain])),
        "v_rms_all": rms(np.ones(len(w), bool)),
        "v_rms_plain": rms(plain),
        "v_rms_touchdown": rms(td),
        "v_rms_liftoff": rms(lo),
        "v_p99_plain": float(np.percentile(np.abs(w[plain]), 99)),
    }


def sole_urdf(nominal: pin.Model, source: Path, radius: float, out: Path) -> Path:
    """A copy of the URDF with a frame ``<leg>_sole`` under each foot frame at the sphere's
    lowest point in the standing pose (the foot frame's -z is along the calf, not vertical):
    the point where MuJoCo's contact force acts, for a user-side contact-point fix."""
    q = pin.neutral(nominal)
    q[7:] = GO1_STAND
    data = nominal.createData()
    pin.framesForwardKinematics(nominal, data, q)
    extra = []
    for foot in GO1_FEET:
        offset = data.oMf[nominal.getFrameId(foot)].rotation.T @ np.array([0.0, 0.0, -radius])
        sole = foot.replace("_foot", "_sole")
        extra.append(
            f'  <joint name="{sole}_fixed" type="fixed"><parent link="{foot}"/>'
            f'<child link="{sole}"/><origin xyz="{_v(offset)}" rpy="0 0 0"/></joint>\n'
            f'  <link name="{sole}"/>\n'
        )
    text = source.read_text()
    path = out / "go1_soles.urdf"
    path.write_text(text.replace("</robot>", "".join(extra) + "</robot>"))
    return path


def run_physid(urdf: Path, csv: Path, config: Path, out: Path) -> tuple[dict, float, str]:
    """``physid oe --floating`` in a child process; (result.json, wall seconds, stderr tail)."""
    cmd = [
        str(Path(sys.executable).parent / "physid"), "oe", "--urdf", str(urdf), "--floating",
        "--data", str(csv), "--body", "root_joint", "--config", str(config), "--out", str(out),
    ]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    result_file = out / "result.json"
    if proc.returncode != 0 or not result_file.is_file():
        return {}, wall, (proc.stderr or proc.stdout)[-2000:]
    return json.loads(result_file.read_text()), wall, proc.stderr[-500:]


def torso_estimate(result: dict) -> pin.Inertia | None:
    """The estimated root_joint body of a result.json as a Pinocchio inertia."""
    body = result.get("bodies", {}).get("root_joint")
    if body is None:
        return None
    return pin.Inertia.FromDynamicParameters(np.asarray(body["pi"], float))


def _stats(values: list[float]) -> str:
    if not values:
        return "(no event)"
    return (
        f"mean {np.mean(values):.1f}, median {np.median(values):.0f} (min {np.min(values):.0f},"
        f" max {np.max(values):.0f}, n {len(values)})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=6.0, help="recorded seconds")
    parser.add_argument("--dt", type=float, default=0.002, help="control/record period [s]")
    parser.add_argument("--timestep", type=float, default=0.0005, help="MuJoCo step [s]")
    parser.add_argument("--warmup", type=float, default=1.0, help="standing before [s]")
    parser.add_argument("--debounce", type=int, default=2, help="contact detector rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--noise",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra/overriding noise entry of oe.yaml, for diagnosis (default: library "
        "defaults + foot_velocity = 1e-3 m/sqrt(s) / sqrt(dt))",
    )
    parser.add_argument(
        "--contact-point",
        choices=("centre", "sole"),
        default="centre",
        help="estimator's contact frames: the URDF's foot frames (sphere centres) or frames "
        "added at the sphere's lowest point in the standing pose (URDF copy in --out)",
    )
    parser.add_argument(
        "--foot-radius", type=float, default=FOOT_RADIUS, help="MuJoCo foot sphere [m]"
    )
    parser.add_argument(
        "--gait",
        choices=("sway", "crawl", "both"),
        default="both",
        help="sway: four feet on the ground, torso swaying; crawl: static crawl in place, one "
        "foot at a time (feet bounce and creep: see RESULTS); both: each in --out/<gait>",
    )
    parser.add_argument("--out", type=Path, default=Path("out/oe_mujoco_go1"))
    parser.add_argument(
        "--variants", default="vel,acc", help="comma list of vel, acc, vel_ideal, acc_ideal"
    )
    args = parser.parse_args()
    gaits = ("sway", "crawl") if args.gait == "both" else (args.gait,)
    for gait in gaits:
        print(f"=== gait {gait}")
        case = argparse.Namespace(**vars(args))
        case.gait = gait
        case.out = args.out / gait if len(gaits) > 1 else args.out
        run_case(case)


def run_case(args: argparse.Namespace) -> None:
    """Simulate one gait, print the diagnostics, run ``physid oe`` on each variant."""
    args.out.mkdir(parents=True, exist_ok=True)
    urdf = robot_urdf(GO1)
    nominal = load_model(GO1, floating=True)
    torso = nominal.inertias[1] + PAYLOAD
    true = nominal.copy()
    true.inertias[1] = torso

    start = time.perf_counter()
    run, _, check = simulate(args, nominal, torso)
    print(f"MuJoCo: {run.t.size - 1} rows in {time.perf_counter() - start:.1f} s; "
          f"conversion check (M, g) max diff {check:.2e}")  # fmt: skip
    flags = detect_contacts(run.force_at_row, args.debounce)
    ideal = run.force_mean > IDEAL_FORCE
    timing = flag_timing(flags, ideal, args.dt)
    in_stance = flags
    print(
        f"contacts: touch-downs {int(np.sum(flags[1:] & ~flags[:-1]))} (ideal "
        f"{int(np.sum(ideal[1:] & ~ideal[:-1]))}); detector vs ideal flags differ on "
        f"{timing['rows_differ']} foot-rows; touch-down delay [ms] "
        f"{_stats(timing['touchdown_ms'])}, lift-off delay {_stats(timing['liftoff_ms'])}; "
        f"{timing['unmatched']} ideal events without a detector event within 50 ms"
    )
    print(
        f"stance (detector flags): foot-frame speed RMS {1e3 * np.sqrt(np.mean(run.foot_speed[in_stance] ** 2)):.1f} mm/s, "  # noqa: E501
        f"p99 {1e3 * np.percentile(run.foot_speed[in_stance], 99):.1f} mm/s; penetration "
        f"mean {1e3 * np.mean(run.penetration[in_stance]):.2f} mm, max "
        f"{1e3 * np.max(run.penetration[in_stance]):.2f} mm; normal force min "
        f"{run.force_mean[in_stance].min():.1f} N, max {run.force_mean.max():.0f} N"
    )
    base_range = run.q[:, :3].max(0) - run.q[:, :3].min(0)
    print(f"base travel (x, y, z) range [mm]: {np.round(1e3 * base_range, 1)}")
    for name, fl in (("detector", flags), ("ideal", ideal)):
        e = one_step_error(true, run, fl, args.dt)
        print(
            f"one-step v error at the TRUE torso, {name} flags: RMS {e['v_rms_all']:.2e} "
            f"(no contact change {e['v_rms_plain']:.2e}, p99 {e['v_p99_plain']:.2e}; "
            f"touch-down nodes {e['v_rms_touchdown']:.2e}; lift-off {e['v_rms_liftoff']:.2e});"
            f" process_v default 1e-3"
        )
        print(
            f"   no contact change, every foot in contact < 5 cm/s: {e['v_rms_plain_slow']:.2e};"
            f" some foot >= 5 cm/s ({100 * e['plain_fast_share']:.0f} % of those nodes): "
            f"{e['v_rms_plain_fast']:.2e}"
        )
    print(
        f"truth: torso {torso.mass:.4f} kg (URDF {nominal.inertias[1].mass:.4f} + payload "
        f"{PAYLOAD.mass}), CoM {np.round(torso.lever, 4)}"
    )
    config = args.out / "oe.yaml"
    noise = {"foot_velocity": f"{1e-3 / np.sqrt(args.dt):.6g}"}
    noise |= dict(item.split("=", 1) for item in args.noise)  # diagnosis only
    config.write_text("noise:\n" + "".join(f"  {k}: {v}\n" for k, v in noise.items()))
    rng = np.random.default_rng(args.seed + 1000)
    model_file, frames = urdf, GO1_FEET
    if args.contact_point == "sole":
        model_file = sole_urdf(nominal, urdf, args.foot_radius, args.out)
        frames = tuple(f.replace("_foot", "_sole") for f in GO1_FEET)
    for variant in [v for v in args.variants.split(",") if v]:
        kind, _, which = variant.partition("_")
        fl = ideal if which == "ideal" else flags
        csv = args.out / f"{variant}.csv"
        write_csv(csv, columns(nominal, run, fl, rng, args.dt, kind, frames))
        cfg = config
        if kind == "acc":
            cfg = args.out / "oe_acc.yaml"
            cfg.write_text(config.read_text() + f"imu:\n  frame: {IMU_FRAME}\n")
        result, wall, err = run_physid(model_file, csv, cfg, args.out / variant)
        est = torso_estimate(result)
        if est is None:
            print(f"{variant}: physid oe FAILED after {wall:.0f} s: {err}")
            continue
        payload = est.mass - nominal.inertias[1].mass
        print(
            f"{variant}: status {result.get('status')}, {result.get('iterations')} it, "
            f"{wall:.0f} s | torso {est.mass:.4f} kg (truth {torso.mass:.4f}, URDF "
            f"{nominal.inertias[1].mass:.4f}) | payload {payload:.3f} kg "
            f"({100 * (payload - PAYLOAD.mass) / PAYLOAD.mass:+.2f} % of 7.2 kg) | CoM error "
            f"{1e3 * np.linalg.norm(est.lever - torso.lever):.1f} mm | inertia error "
            f"{100 * np.linalg.norm(est.inertia - torso.inertia) / np.linalg.norm(torso.inertia):.1f} %"  # noqa: E501
        )
        if "accelerometer_bias" in result:
            bias = result["accelerometer_bias"]
            print(
                f"   accelerometer bias estimate {np.round(bias['estimate'], 4)} m/s^2 (truth 0);"
                f" {len(bias['history'])} rounds, {bias['iterations_all_rounds']} iterations "
                "in all (the 'it' above is the last round's)"
            )


if __name__ == "__main__":
    main()
