"""An identification test bench that shares no code with physid: MuJoCo simulates, we record.

Why: physid's own simulators (``physid.sim``) are built on Pinocchio, like physid's regressor, so a
frame or sign convention wrong in both would cancel out. Here the robot is written twice from one
small spec — as MJCF for MuJoCo (which simulates it) and as URDF (which physid reads) — and
MuJoCo's dynamics produce the torques. Only numpy, scipy, mujoco and the standard library are
imported.

Conventions (the ones physid expects, see the package docs):

* frames: each MJCF body frame = URDF joint frame = URDF child link frame; the joint sits at the
  body origin; ``com`` is in that frame and ``inertia`` is about the centre of mass, in that frame;
* joint friction ``tau_f = fv*dq + fc*tanh(dq/v_s)`` (MuJoCo ``damping`` = fv; the soft Coulomb
  term is applied by us as ``qfrc_applied`` every step; no MuJoCo ``frictionloss``); armature
  ``Ia*ddq`` (MuJoCo ``armature``); gravity -9.81 along z; no contacts, no joint limits;
* recordings: CSV with ``t``, ``q_<joint>``, ``tau_<joint>`` (SI units), sampled at jittered
  instants; torques are the motor torques (MuJoCo ``motor`` actuators, gear 1) plus Gaussian
  noise; positions are quantised like an encoder.

So at every recorded instant, exactly (up to round-off)::

    tau_motor = M(q) ddq + c(q, dq) + g(q) + Ia*ddq + fv*dq + fc*tanh(dq/v_s)

with the rigid-body terms of the URDF. ``truth_params`` gives the same parameters in physid's
``physid.params/1`` format (Coulomb coefficient = ``fc`` of the tanh model, offset 0).

Simulation: RK4. The integration grid is the union of a regular 0.5 ms grid and the recording
instants, on a 1 us lattice (the step length changes where needed), so every recorded ``t`` is the
true time of the recorded state. Control: computed torque at 1 kHz with MuJoCo's own inverse
dynamics (``mj_inverse``) tracking a finite Fourier series per joint; the motor torque is held
constant over each control period.

Usage::

    rng = np.random.default_rng(0)
    paths = write_case("out/arm6", make_spec("arm6"), rng)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
from scipy.spatial.transform import Rotation

GRAVITY = (0.0, 0.0, -9.81)
REVOLUTE_RESOLUTION = 2.0 * np.pi / 2**18  # rad: an 18-bit encoder
PRISMATIC_RESOLUTION = 1e-6  # m
_US = 1e-6  # s: the time lattice of samples and integration steps


# --------------------------------------------------------------------------------------------
# Robot specification
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JointSpec:
    """One joint and the link it moves (a serial chain: each joint's parent is the previous link).

    ``xyz``/``rpy`` place the joint (= child link) frame in the parent link frame, URDF style
    (rpy: fixed-axis roll about x, then pitch about y, then yaw about z). ``axis`` is in the joint
    frame. ``com`` is in the link frame; ``inertia`` is about the centre of mass, in the link frame.
    """

    name: str
    kind: str  # "revolute" | "prismatic"
    axis: tuple[float, float, float]
    xyz: tuple[float, float, float]
    rpy: tuple[float, float, float]
    mass: float
    com: tuple[float, float, float]
    inertia: np.ndarray  # (3, 3), about the com, link frame
    fv: float  # viscous [N m s/rad] or [N s/m]
    fc: float  # soft Coulomb amplitude [N m] or [N]
    v_s: float  # velocity scale of tanh(dq / v_s) [rad/s] or [m/s]
    armature: float  # [kg m^2] or [kg]
    q_range: tuple[float, float]  # excitation range [rad] or [m]

    @property
    def resolution(self) -> float:
        """Encoder quantum of this joint's recorded position."""
        return REVOLUTE_RESOLUTION if self.kind == "revolute" else PRISMATIC_RESOLUTION


@dataclass(frozen=True)
class RobotSpec:
    """A fixed-base serial robot: a name and its joints from the base outward."""

    name: str
    joints: tuple[JointSpec, ...]

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    @property
    def n(self) -> int:
        return len(self.joints)

    def column(self, attribute: str) -> np.ndarray:
        """One attribute of every joint as an array, e.g. ``spec.column("fv")``."""
        return np.array([getattr(j, attribute) for j in self.joints], dtype=float)


def random_inertia(
    rng: np.random.Generator, mass: float, size: tuple[float, float, float]
) -> np.ndarray:
    """A physically consistent inertia about the com, of a body of roughly this size [m].

    Built from a positive-definite second moment of mass ``S = R diag(s) R^T`` (s > 0, random
    rotation R): ``I = tr(S) 1 - S``, so the principal moments ``s_j + s_k`` satisfy the triangle
    inequality strictly and the pseudo-inertia is positive definite.
    """
    s = mass * np.asarray(size, float) ** 2 * rng.uniform(0.04, 0.1, 3)
    rotation = Rotation.random(random_state=rng).as_matrix()
    second_moment = rotation @ np.diag(s) @ rotation.T
    inertia = np.trace(second_moment) * np.eye(3) - second_moment
    return 0.5 * (inertia + inertia.T)


# (name, kind, axis, xyz, rpy, mass, com, body size, fv, fc, v_s, armature, range)
_Design = tuple


def _build(name: str, design: list[_Design], rng: np.random.Generator) -> RobotSpec:
    joints = []
    for jn, kind, axis, xyz, rpy, mass, com, size, fv, fc, v_s, armature, q_range in design:
        joints.append(
            JointSpec(
                jn, kind, tuple(map(float, axis)), tuple(map(float, xyz)),
                tuple(map(float, rpy)), float(mass), tuple(map(float, com)),
                random_inertia(rng, mass, size), float(fv), float(fc), float(v_s),
                float(armature), (float(q_range[0]), float(q_range[1])),
            )
        )  # fmt: skip
    return RobotSpec(name, tuple(joints))


def arm5p(rng: np.random.Generator) -> RobotSpec:
    """R-R-P-R-R arm: a telescopic upper arm (prismatic along the arm, which j2 tilts, so the
    prismatic joint carries a varying share of the outer links' weight)."""
    R, P = "revolute", "prismatic"
    design = [
        ("j1", R, (0, 0, 1), (0, 0, 0.30), (0, 0, 0), 6.0, (0.01, -0.02, -0.05),
         (0.12, 0.12, 0.2), 1.5, 2.0, 0.02, 0.20, (-2.5, 2.5)),
        ("j2", R, (0, 1, 0), (0, 0.04, 0.15), (0, 0, 0.1), 5.0, (0.02, 0.01, 0.18),
         (0.08, 0.08, 0.4), 2.0, 3.0, 0.02, 0.25, (-1.1, 1.1)),
        ("j3", P, (0, 0, 1), (0, 0, 0.30), (0, 0, 0), 3.0, (0.0, 0.02, 0.08),
         (0.06, 0.06, 0.3), 30.0, 8.0, 0.002, 0.8, (-0.08, 0.08)),
        ("j4", R, (0, 1, 0), (0.02, 0, 0.25), (0.15, 0.1, -0.2), 2.0, (0.12, 0.01, 0.02),
         (0.3, 0.06, 0.06), 0.8, 1.2, 0.02, 0.08, (-2.0, 2.0)),
        ("j5", R, (1, 0, 0), (0.25, 0, 0.0), (0, 0.2, 0), 1.0, (0.04, 0.01, -0.02),
         (0.1, 0.06, 0.06), 0.4, 0.6, 0.02, 0.03, (-2.5, 2.5)),
    ]  # fmt: skip
    return _build("arm5p", design, rng)


def arm6(rng: np.random.Generator) -> RobotSpec:
    """6R industrial-like arm with shoulder and elbow offsets (masses 1-15 kg)."""
    R = "revolute"
    h = np.pi / 2
    design = [
        ("j1", R, (0, 0, 1), (0, 0, 0.40), (0, 0, 0), 15.0, (0.03, 0.02, -0.08),
         (0.2, 0.2, 0.25), 8.0, 6.0, 0.02, 1.2, (-2.8, 2.8)),
        # URDF frame turned by -pi/2 about x: the joint rotates about its own z = parent's y.
        ("j2", R, (0, 0, 1), (0.15, 0, 0.20), (-h, 0, 0), 12.0, (0.28, 0.01, -0.04),
         (0.6, 0.1, 0.1), 6.0, 7.0, 0.02, 1.0, (-1.3, 1.3)),
        ("j3", R, (0, 0, 1), (0.60, 0, 0), (0, 0, 0), 8.0, (0.20, -0.03, 0.02),
         (0.5, 0.08, 0.08), 3.0, 4.0, 0.02, 0.4, (-1.5, 1.5)),
        ("j4", R, (1, 0, 0), (0.30, -0.12, 0), (h, 0, 0), 3.0, (0.10, 0.0, 0.01),
         (0.25, 0.06, 0.06), 1.0, 2.0, 0.02, 0.12, (-2.5, 2.5)),
        ("j5", R, (0, 1, 0), (0.25, 0, 0), (0, 0, 0), 2.0, (0.02, 0.01, -0.01),
         (0.1, 0.08, 0.08), 0.8, 1.5, 0.02, 0.08, (-1.8, 1.8)),
        ("j6", R, (1, 0, 0), (0.08, 0, 0), (0.1, -0.05, 0.05), 1.0, (0.04, 0.005, 0.01),
         (0.08, 0.06, 0.06), 0.3, 0.8, 0.02, 0.03, (-3.0, 3.0)),
    ]  # fmt: skip
    return _build("arm6", design, rng)


def scara4(rng: np.random.Generator) -> RobotSpec:
    """SCARA R-R-P-R: two horizontal arms, a vertical prismatic quill, a wrist roll."""
    R, P = "revolute", "prismatic"
    design = [
        ("j1", R, (0, 0, 1), (0, 0, 0.40), (0, 0, 0), 10.0, (0.20, 0.01, 0.05),
         (0.45, 0.1, 0.1), 4.0, 4.0, 0.02, 0.8, (-2.5, 2.5)),
        ("j2", R, (0, 0, 1), (0.40, 0, 0.05), (0, 0, 0), 6.0, (0.15, -0.01, 0.0),
         (0.35, 0.08, 0.08), 2.0, 2.5, 0.02, 0.3, (-2.3, 2.3)),
        ("j3", P, (0, 0, 1), (0.30, 0, 0), (0, 0, 0), 2.0, (0.0, 0.01, -0.10),
         (0.04, 0.04, 0.3), 25.0, 6.0, 0.002, 0.6, (-0.15, 0.0)),
        ("j4", R, (0, 0, 1), (0, 0, -0.20), (0, 0, 0), 0.8, (0.01, 0.005, -0.03),
         (0.08, 0.08, 0.05), 0.2, 0.4, 0.02, 0.02, (-3.0, 3.0)),
    ]  # fmt: skip
    return _build("scara4", design, rng)


def arm7(rng: np.random.Generator) -> RobotSpec:
    """7R redundant arm, LWR-like alternation of z and y axes, with small offsets."""
    R = "revolute"
    design = [
        ("j1", R, (0, 0, 1), (0, 0, 0.31), (0, 0, 0), 4.0, (0.0, -0.03, 0.12),
         (0.1, 0.1, 0.2), 2.0, 2.5, 0.02, 0.3, (-2.5, 2.5)),
        ("j2", R, (0, 1, 0), (0, 0, 0.20), (0, 0, 0), 4.0, (0.0, 0.03, 0.08),
         (0.1, 0.1, 0.2), 2.0, 3.0, 0.02, 0.3, (-1.5, 1.5)),
        ("j3", R, (0, 0, 1), (0, 0, 0.20), (0, 0, 0), 3.5, (0.0, 0.03, 0.12),
         (0.1, 0.1, 0.2), 1.5, 2.0, 0.02, 0.2, (-2.5, 2.5)),
        ("j4", R, (0, 1, 0), (0, 0, 0.20), (0, 0, 0), 3.5, (0.0, -0.03, 0.08),
         (0.1, 0.1, 0.2), 1.5, 2.0, 0.02, 0.2, (-1.8, 1.8)),
        ("j5", R, (0, 0, 1), (0, 0, 0.19), (0, 0, 0), 3.0, (0.0, -0.02, 0.12),
         (0.08, 0.08, 0.2), 0.8, 1.0, 0.02, 0.08, (-2.5, 2.5)),
        ("j6", R, (0, 1, 0), (0, 0, 0.20), (0, 0, 0), 1.5, (0.0, 0.02, 0.01),
         (0.06, 0.06, 0.06), 0.5, 0.8, 0.02, 0.05, (-1.8, 1.8)),
        ("j7", R, (0, 0, 1), (0, 0, 0.08), (0, 0, 0), 0.5, (0.005, 0.0, 0.02),
         (0.05, 0.05, 0.03), 0.2, 0.3, 0.02, 0.02, (-2.8, 2.8)),
    ]  # fmt: skip
    return _build("arm7", design, rng)


def torso8(rng: np.random.Generator) -> RobotSpec:
    """A mobile manipulator's torso and arm: a vertical prismatic lift (slow: 15 cm of travel;
    heavy, with a large reflected rotor mass and screw friction) carrying a 7R arm mounted off
    its axis, so the lift bears the whole arm's weight and the arm's motion shakes it."""
    R, P = "revolute", "prismatic"
    design = [
        ("torso", P, (0, 0, 1), (0, 0, 0.60), (0, 0, 0), 15.0, (-0.05, 0.0, 0.20),
         (0.3, 0.3, 0.5), 300.0, 40.0, 0.002, 6.0, (0.0, 0.15)),
        ("a1", R, (0, 0, 1), (0.15, 0.12, 0.35), (0, 0, 0), 2.5, (0.0, 0.02, 0.06),
         (0.1, 0.1, 0.15), 2.0, 2.5, 0.02, 0.3, (-2.5, 2.5)),
        ("a2", R, (0, 1, 0), (0, 0, 0.12), (0, 0, 0), 2.5, (0.0, 0.02, 0.10),
         (0.1, 0.1, 0.2), 2.0, 3.0, 0.02, 0.3, (-1.5, 1.5)),
        ("a3", R, (0, 0, 1), (0, 0, 0.22), (0, 0, 0), 2.0, (0.0, -0.02, 0.10),
         (0.08, 0.08, 0.2), 1.5, 2.0, 0.02, 0.2, (-2.5, 2.5)),
        ("a4", R, (0, 1, 0), (0, 0, 0.20), (0, 0, 0), 1.8, (0.0, 0.02, 0.08),
         (0.08, 0.08, 0.2), 1.2, 2.0, 0.02, 0.15, (-1.8, 1.8)),
        ("a5", R, (0, 0, 1), (0, 0, 0.18), (0, 0, 0), 1.2, (0.0, -0.01, 0.08),
         (0.06, 0.06, 0.15), 0.6, 1.0, 0.02, 0.06, (-2.5, 2.5)),
        ("a6", R, (0, 1, 0), (0, 0, 0.16), (0, 0, 0), 0.8, (0.0, 0.01, 0.02),
         (0.05, 0.05, 0.06), 0.4, 0.6, 0.02, 0.04, (-1.8, 1.8)),
        ("a7", R, (0, 0, 1), (0, 0, 0.06), (0, 0, 0), 0.4, (0.005, 0.0, 0.02),
         (0.05, 0.05, 0.03), 0.2, 0.3, 0.02, 0.02, (-2.8, 2.8)),
    ]  # fmt: skip
    return _build("torso8", design, rng)


def _linear_axis_arm(name: str, axis: tuple[float, float, float], travel: tuple[float, float],
                     rng: np.random.Generator) -> RobotSpec:  # fmt: skip
    """A prismatic axis at the base (``axis``: vertical lift or horizontal rail) carrying a
    3R arm (a yaw and two pitch joints)."""
    R, P = "revolute", "prismatic"
    design = [
        ("p1", P, axis, (0, 0, 0.50), (0, 0, 0), 12.0, (0.02, 0.0, 0.15),
         (0.3, 0.3, 0.4), 150.0, 25.0, 0.002, 3.0, travel),
        ("r2", R, (0, 0, 1), (0.10, 0.05, 0.30), (0, 0, 0), 4.0, (0.15, 0.01, 0.02),
         (0.35, 0.1, 0.1), 3.0, 3.0, 0.02, 0.4, (-2.5, 2.5)),
        ("r3", R, (0, 1, 0), (0.30, 0, 0.05), (0, 0, 0), 3.0, (0.15, -0.01, 0.0),
         (0.3, 0.08, 0.08), 2.0, 2.5, 0.02, 0.3, (-1.5, 1.5)),
        ("r4", R, (0, 1, 0), (0.30, 0, 0), (0, 0, 0), 1.5, (0.08, 0.0, 0.01),
         (0.15, 0.06, 0.06), 0.6, 1.0, 0.02, 0.05, (-2.0, 2.0)),
    ]  # fmt: skip
    return _build(name, design, rng)


def lift4(rng: np.random.Generator) -> RobotSpec:
    """A vertical prismatic lift (30 cm) carrying a 3R arm: the lift bears the arm's weight."""
    return _linear_axis_arm("lift4", (0, 0, 1), (0.0, 0.3), rng)


def gantry4(rng: np.random.Generator) -> RobotSpec:
    """A horizontal rail (prismatic along x, 60 cm) carrying a 3R arm: no gravity on the rail,
    its force is inertia, the arm's reaction and friction."""
    return _linear_axis_arm("gantry4", (1, 0, 0), (-0.3, 0.3), rng)


ROBOTS: dict[str, Callable[[np.random.Generator], RobotSpec]] = {
    "arm5p": arm5p,
    "arm6": arm6,
    "scara4": scara4,
    "arm7": arm7,
    "torso8": torso8,
    "lift4": lift4,
    "gantry4": gantry4,
}


def make_spec(name: str, rng: np.random.Generator | None = None) -> RobotSpec:
    """Robot ``name`` of :data:`ROBOTS`; its random inertias come from ``rng`` (default: a
    generator seeded by the robot's index, so a name alone always gives the same robot)."""
    if rng is None:
        rng = np.random.default_rng(1000 + list(ROBOTS).index(name))
    return ROBOTS[name](rng)


# --------------------------------------------------------------------------------------------
# MJCF and URDF writers
# --------------------------------------------------------------------------------------------


def _num(x: float) -> str:
    return repr(float(x))


def _vec(values) -> str:
    return " ".join(_num(v) for v in np.asarray(values, float).reshape(-1))


def _quat_wxyz(rpy) -> np.ndarray:
    x, y, z, w = Rotation.from_euler("xyz", rpy).as_quat()  # extrinsic x, y, z = URDF rpy
    return np.array([w, x, y, z])


def mjcf(spec: RobotSpec, timestep: float = 5e-4, frictionloss: bool = False) -> str:
    """The MuJoCo model of ``spec`` (bodies nested as a chain, one motor per joint);
    ``frictionloss``: each joint's Coulomb level ``fc`` as MuJoCo's dry friction (a constraint
    that also holds the joint still)."""
    lines = [
        f'<mujoco model="{spec.name}">',
        '  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>',
        f'  <option timestep="{_num(timestep)}" integrator="RK4" gravity="{_vec(GRAVITY)}">',
        '    <flag contact="disable"/>',
        "  </option>",
        "  <worldbody>",
    ]
    indent = "    "
    for k, j in enumerate(spec.joints):
        I = j.inertia
        kind = "hinge" if j.kind == "revolute" else "slide"
        lines += [
            f'{indent}<body name="link{k + 1}" pos="{_vec(j.xyz)}" '
            f'quat="{_vec(_quat_wxyz(j.rpy))}">',
            f'{indent}  <joint name="{j.name}" type="{kind}" pos="0 0 0" axis="{_vec(j.axis)}" '
            f'limited="false" damping="{_num(j.fv)}" armature="{_num(j.armature)}"'
            + (f' frictionloss="{_num(j.fc)}"/>' if frictionloss else "/>"),
            f'{indent}  <inertial pos="{_vec(j.com)}" mass="{_num(j.mass)}" fullinertia="'
            f'{_vec([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])}"/>',
        ]
        indent += "  "
    for _ in spec.joints:
        indent = indent[:-2]
        lines.append(f"{indent}</body>")
    lines += ["  </worldbody>", "  <actuator>"]
    lines += [f'    <motor name="m_{j.name}" joint="{j.name}" gear="1"/>' for j in spec.joints]
    lines += ["  </actuator>", "</mujoco>"]
    return "\n".join(lines) + "\n"


def _urdf(spec: RobotSpec, bodies: list[tuple[float, np.ndarray, np.ndarray]]) -> str:
    lines = ['<?xml version="1.0"?>', f'<robot name="{spec.name}">', '  <link name="base_link"/>']
    parent = "base_link"
    for k, (j, (mass, com, I)) in enumerate(zip(spec.joints, bodies, strict=True)):
        child = f"link{k + 1}"
        lo, hi = j.q_range
        lines += [
            f'  <joint name="{j.name}" type="{j.kind}">',
            f'    <parent link="{parent}"/>',
            f'    <child link="{child}"/>',
            f'    <origin xyz="{_vec(j.xyz)}" rpy="{_vec(j.rpy)}"/>',
            f'    <axis xyz="{_vec(j.axis)}"/>',
            f'    <limit lower="{_num(lo)}" upper="{_num(hi)}" effort="10000" velocity="100"/>',
            "  </joint>",
            f'  <link name="{child}">',
            "    <inertial>",
            f'      <origin xyz="{_vec(com)}" rpy="0 0 0"/>',
            f'      <mass value="{_num(mass)}"/>',
            f'      <inertia ixx="{_num(I[0, 0])}" ixy="{_num(I[0, 1])}" ixz="{_num(I[0, 2])}" '
            f'iyy="{_num(I[1, 1])}" iyz="{_num(I[1, 2])}" izz="{_num(I[2, 2])}"/>',
            "    </inertial>",
            "  </link>",
        ]
        parent = child
    lines.append("</robot>")
    return "\n".join(lines) + "\n"


def truth_urdf(spec: RobotSpec) -> str:
    """The URDF of ``spec`` with its true inertial parameters (same frames as :func:`mjcf`)."""
    return _urdf(spec, [(j.mass, np.asarray(j.com), j.inertia) for j in spec.joints])


def prior_urdf(spec: RobotSpec, rng: np.random.Generator, relative: float = 0.3) -> str:
    """An a-priori URDF: same kinematics, perturbed but physically consistent inertial data.

    Mass x U[1-r, 1+r]; com shifted by U[-0.1 r, 0.1 r] m per axis (a few cm for r = 0.3); the
    second moment of mass about the com keeps positive principal values, each scaled by
    U[1-r, 1+r], with principal axes turned by up to ~r/2 rad. ``I = tr(S) 1 - S`` of a positive
    definite ``S`` is a consistent inertia, so the pseudo-inertia stays positive definite.
    """
    bodies = []
    for j in spec.joints:
        mass = j.mass * rng.uniform(1 - relative, 1 + relative)
        com = np.asarray(j.com) + rng.uniform(-0.1 * relative, 0.1 * relative, 3)
        second = 0.5 * np.trace(j.inertia) * np.eye(3) - j.inertia
        values, vectors = np.linalg.eigh(second)
        values = values * rng.uniform(1 - relative, 1 + relative, 3)
        turn = Rotation.from_rotvec(rng.uniform(-0.3 * relative, 0.3 * relative, 3)).as_matrix()
        vectors = turn @ vectors
        second = vectors @ np.diag(values) @ vectors.T
        inertia = np.trace(second) * np.eye(3) - second
        bodies.append((mass, com, 0.5 * (inertia + inertia.T)))
    return _urdf(spec, bodies)


def truth_params(spec: RobotSpec) -> dict:
    """The true parameters in physid's ``physid.params/1`` format (Coulomb = tanh amplitude)."""
    return {
        "format": "physid.params/1",
        "bodies": {
            j.name: {"mass": j.mass, "com": list(j.com), "inertia": j.inertia.tolist()}
            for j in spec.joints
        },
        "joints": {
            j.name: {"viscous": j.fv, "coulomb": j.fc, "offset": 0.0, "armature": j.armature}
            for j in spec.joints
        },
        "extra": {"gravity": list(GRAVITY)},
    }


# --------------------------------------------------------------------------------------------
# Excitation and simulation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FourierExcitation:
    """``q_i(t) = c_i + sum_l a_il/(w l) sin(w l t) - b_il/(w l) cos(w l t)``, w = 2 pi f0."""

    base_frequency_hz: float
    a: np.ndarray  # (n, L)
    b: np.ndarray  # (n, L)
    c: np.ndarray  # (n,)

    def __call__(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Reference position, velocity and acceleration, each (len(t), n)."""
        w = 2 * np.pi * self.base_frequency_hz
        wl = w * np.arange(1, self.a.shape[1] + 1)
        phase = np.asarray(t, float)[:, None] * wl[None, :]
        s, c = np.sin(phase), np.cos(phase)
        q = self.c + s @ (self.a / wl).T - c @ (self.b / wl).T
        dq = c @ self.a.T + s @ self.b.T
        ddq = -s @ (self.a * wl).T + c @ (self.b * wl).T
        return q, dq, ddq

    @classmethod
    def random(
        cls,
        spec: RobotSpec,
        rng: np.random.Generator,
        harmonics: int = 5,
        frequency_hz: tuple[float, float] = (0.1, 0.2),
        fill: tuple[float, float] = (0.6, 0.9),
    ) -> FourierExcitation:
        """Random coefficients, scaled so each joint sweeps ``fill`` of its range and starts at
        rest (sum of the ``a`` = 0 gives zero velocity at t = 0)."""
        f0 = rng.uniform(*frequency_hz)
        a = rng.standard_normal((spec.n, harmonics))
        a -= a.mean(axis=1, keepdims=True)
        b = rng.standard_normal((spec.n, harmonics))
        shape = cls(f0, a, b, np.zeros(spec.n))
        q, _, _ = shape(np.linspace(0.0, 1.0 / f0, 2001))  # one period covers every value
        lo, hi = np.array([j.q_range for j in spec.joints]).T
        scale = rng.uniform(*fill, spec.n) * (hi - lo) / np.ptp(q, axis=0)
        a, b = a * scale[:, None], b * scale[:, None]
        centre = 0.5 * (lo + hi) - 0.5 * (q.max(axis=0) + q.min(axis=0)) * scale
        return cls(f0, a, b, centre)


@dataclass(frozen=True)
class Recording:
    """A simulated measurement: the recorded signals and the exact ones at the same instants."""

    joint_names: tuple[str, ...]
    t: np.ndarray  # (N,) s, true time of each recorded state (jittered)
    q: np.ndarray  # (N, n) quantised positions
    tau: np.ndarray  # (N, n) motor torque + noise
    q_true: np.ndarray
    dq_true: np.ndarray
    qacc_true: np.ndarray
    tau_true: np.ndarray  # exact motor torque applied at t
    noise_std: np.ndarray  # (n,) std of the torque noise per joint
    excitation: FourierExcitation

    def csv_text(self, noise_free: bool = False) -> str:
        """The physid trajectory CSV: ``t, q_<joint>..., tau_<joint>...`` (``noise_free``: the
        exact motor torque instead of the noisy one; positions quantised either way)."""
        header = ["t"] + [f"q_{j}" for j in self.joint_names]
        header += [f"tau_{j}" for j in self.joint_names]
        rows = [",".join(header)]
        table = np.column_stack([self.q, self.tau_true if noise_free else self.tau])
        for t, row in zip(self.t, table, strict=True):
            rows.append(f"{t:.6f}," + ",".join(f"{v:.17g}" for v in row))
        return "\n".join(rows) + "\n"

    def write_states(self, path: str | Path) -> Path:
        """The exact states at the recorded instants (``t, q, dq, ddq, tau``: npz), for a scorer
        that must not depend on a derivative estimate."""
        path = Path(path)
        np.savez(path, t=self.t, q=self.q_true, dq=self.dq_true, ddq=self.qacc_true,
                 tau=self.tau_true)  # fmt: skip
        return path

    def write_csv(self, path: str | Path, noise_free: bool = False) -> Path:
        path = Path(path)
        path.write_text(self.csv_text(noise_free), encoding="utf-8")
        return path


def sample_instants_us(
    rng: np.random.Generator, duration_s: float, sample_rate_hz: float, jitter: float
) -> np.ndarray:
    """Recording instants on the 1 us lattice: ``k T + U(-jitter T/2, +jitter T/2)``, k >= 0."""
    period = 1.0 / sample_rate_hz
    k = np.arange(int(np.floor(duration_s * sample_rate_hz)) + 1)
    t = k * period + rng.uniform(-0.5 * jitter * period, 0.5 * jitter * period, k.size)
    t_us = np.round(np.maximum(t, 0.0) / _US).astype(np.int64)
    if np.any(np.diff(t_us) <= 0):
        raise ValueError("jitter too large: sample instants must be strictly increasing")
    return t_us


def simulate(
    spec: RobotSpec,
    rng: np.random.Generator,
    duration_s: float,
    sample_rate_hz: float = 500.0,
    jitter: float = 0.1,
    *,
    noise_relative: float = 0.01,
    noise_floor: float = 0.02,
    timestep_s: float = 5e-4,
    control_rate_hz: float = 1000.0,
    bandwidth_hz: float = 10.0,
    excitation: FourierExcitation | None = None,
    friction: Callable[[np.ndarray], np.ndarray] | None = None,
    dry_friction: str = "tanh",
) -> Recording:
    """Simulate ``spec`` tracking a random Fourier excitation and record it (see module doc).

    ``noise_relative``: torque noise std as a fraction of each joint's torque RMS, plus
    ``noise_floor`` [N m or N]. ``bandwidth_hz``: closed-loop bandwidth of the computed-torque
    controller (gains ``Kp = w^2``, ``Kd = 2 w``). ``friction``: the speed-dependent friction
    torque (n,) at joint speeds (n,) applied besides MuJoCo's viscous ``damping`` (default: the
    spec's ``fc tanh(dq / v_s)``). ``dry_friction="mujoco"``: instead, the Coulomb level ``fc``
    is MuJoCo's ``frictionloss`` (a joint sticks while the other forces stay within it) and the
    controller does not compensate it (its inverse model has none): the logged torque is then
    the sign law only while the joint slides.
    """
    sticking = dry_friction == "mujoco"
    model = mujoco.MjModel.from_xml_string(mjcf(spec, timestep_s, frictionloss=sticking))
    controller = mujoco.MjModel.from_xml_string(mjcf(spec, timestep_s)) if sticking else model
    data, inverse = mujoco.MjData(model), mujoco.MjData(controller)
    excitation = excitation or FourierExcitation.random(spec, rng)
    n = spec.n
    fc, v_s = spec.column("fc"), spec.column("v_s")
    friction_law = friction or (lambda speed: fc * np.tanh(speed / v_s))
    if sticking:
        friction_law = lambda speed: np.zeros(n)  # noqa: E731
    omega = 2 * np.pi * bandwidth_hz
    kp, kd = omega**2, 2 * omega

    samples = sample_instants_us(rng, duration_s, sample_rate_hz, jitter)
    step_us = int(round(timestep_s / _US))
    control_us = int(round(1.0 / control_rate_hz / _US))
    if control_us % step_us:
        raise ValueError("the control period must be a multiple of the integration step")
    end_us = int(samples[-1]) + step_us
    events = np.union1d(np.arange(0, end_us + 1, step_us, dtype=np.int64), samples)
    is_sample = np.isin(events, samples)
    is_control = events % control_us == 0
    steps = np.diff(events) * _US
    control_times = np.arange(0, end_us + 1, control_us) * _US
    q_ref, dq_ref, ddq_ref = excitation(control_times)

    data.qpos[:], data.qvel[:] = q_ref[0], dq_ref[0]
    n_samples = samples.size
    out = {key: np.empty((n_samples, n)) for key in ("q", "dq", "qacc", "tau")}
    opt = model.opt
    step, forward, inverse_dynamics = mujoco.mj_step, mujoco.mj_forward, mujoco.mj_inverse
    qpos, qvel, ctrl, applied = data.qpos, data.qvel, data.ctrl, data.qfrc_applied
    row = 0
    for i in range(events.size - 1):
        friction = friction_law(qvel)
        if is_control[i]:
            k = events[i] // control_us
            inverse.qpos[:], inverse.qvel[:] = qpos, qvel
            inverse.qacc[:] = ddq_ref[k] + kp * (q_ref[k] - qpos) + kd * (dq_ref[k] - qvel)
            inverse_dynamics(controller, inverse)
            ctrl[:] = inverse.qfrc_inverse + friction
        applied[:] = -friction
        if is_sample[i]:
            forward(model, data)  # qacc of this state under the inputs just set
            out["q"][row], out["dq"][row] = qpos, qvel
            out["qacc"][row], out["tau"][row] = data.qacc, ctrl
            row += 1
        opt.timestep = steps[i]
        step(model, data)
    if row != n_samples:
        raise RuntimeError(f"recorded {row} of {n_samples} samples")

    tau_true = out["tau"]
    noise_std = noise_relative * np.sqrt(np.mean(tau_true**2, axis=0)) + noise_floor
    tau = tau_true + rng.standard_normal(tau_true.shape) * noise_std
    resolution = spec.column("resolution")
    q = np.round(out["q"] / resolution) * resolution
    return Recording(
        spec.joint_names, samples * _US, q, tau, out["q"], out["dq"], out["qacc"], tau_true,
        noise_std, excitation,
    )  # fmt: skip


# --------------------------------------------------------------------------------------------
# A complete identification case on disk
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CasePaths:
    """Files of one case written by :func:`write_case`."""

    folder: Path
    truth_urdf: Path
    prior_urdf: Path
    truth_json: Path
    mjcf: Path
    train: tuple[Path, ...]
    validate: tuple[Path, ...]
    # the validation run's exact torques: a noise-free held-out error shows the model's bias
    # that the torque noise would hide
    validate_clean: tuple[Path, ...] = ()


def write_case(
    folder: str | Path,
    spec: RobotSpec,
    rng: np.random.Generator,
    *,
    n_train: int = 2,
    train_s: float = 20.0,
    validate_s: float = 10.0,
    prior_relative: float = 0.3,
    **simulate_options,
) -> CasePaths:
    """Write truth/prior URDF, truth.json, the MJCF, ``n_train`` training recordings and one
    validation recording (each with its own random excitation) into ``folder``; the validation
    run also noise-free, as ``validate_clean.csv`` (same motion, exact torques), and every run's
    exact states (``*_states.npz``, :meth:`Recording.write_states`)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    truth = folder / "truth.urdf"
    truth.write_text(truth_urdf(spec), encoding="utf-8")
    prior = folder / "prior.urdf"
    prior.write_text(prior_urdf(spec, rng, prior_relative), encoding="utf-8")
    params = folder / "truth.json"
    params.write_text(json.dumps(truth_params(spec), indent=1), encoding="utf-8")
    model_file = folder / "model.xml"
    model_file.write_text(mjcf(spec), encoding="utf-8")
    train = []
    for k in range(n_train):
        run = simulate(spec, rng, train_s, **simulate_options)
        train.append(run.write_csv(folder / f"train_{k + 1}.csv"))
        run.write_states(folder / f"train_{k + 1}_states.npz")
    held_out = simulate(spec, rng, validate_s, **simulate_options)
    validate = (held_out.write_csv(folder / "validate.csv"),)
    clean = (held_out.write_csv(folder / "validate_clean.csv", noise_free=True),)
    held_out.write_states(folder / "validate_states.npz")
    return CasePaths(folder, truth, prior, params, model_file, tuple(train), validate, clean)
