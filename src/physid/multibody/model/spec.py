"""A multibody model in maximal coordinates (paper A §2.1, Appendix F), built from a URDF + YAML.

Every moving body (a Pinocchio joint with its fixed links merged) becomes a free rigid body with
centre-of-mass position ``r`` and unit quaternion ``e = [w, x, y, z]`` from body to world; its body
frame has the orientation of the URDF joint frame and its origin at the centre of mass. Every
revolute URDF joint becomes a *frictional hinge* (Appendix F): 3 linear + 2 rotational regularised
holonomic constraints (F.1) with compliances and a damping time, optional viscous friction (F.2),
dry friction r*mu (F.4) with an optional Stribeck term (eq. 4.1), an optional constant Coulomb
torque (the same complementarity row, bound ``h * coulomb``) and an optional motor (F.3).

All numbers the dynamics depend on live in one named parameter vector ``chi`` (masses, inertias,
friction, gains, tilt, compliances); ``estimate`` picks the subset to identify.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from physid.errors import InputError

BODY_SLOTS = ("mass", "Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz")
HINGE_SLOTS = (
    "compliance_linear",  # m/N
    "compliance_rotational",  # rad/(N m)
    "damping",  # SPOOK relaxation time tau [s]
    "viscous",  # b [N m s/rad]
    "dry",  # r*mu [m]: friction bound per unit of constraint impulse (F.4)
    "stribeck_delta",  # r*(mu_static - mu_kinematic) [m] (eq. 4.1)
    "stribeck_c",  # transition rate c [s^2/rad^2] (eq. 4.1)
    "friction_compliance",  # creep rate per torque of the dry-friction row [rad/(s N m)]
    "friction_damping",  # relaxation time of the dry-friction row's stick velocity [s]
    "coulomb",  # constant Coulomb friction torque [N m], independent of the constraint loads
    "gain",  # motor gain K [N m per unit of control] (F.3)
    "shaft_inertia",  # motor shaft inertia J_shaft [kg m^2] (F.3)
)
GLOBAL_SLOTS = ("tilt_1", "tilt_2")  # rotations [rad] of gravity about two horizontal axes
NONNEGATIVE = {
    "mass",
    "Ixx",
    "Iyy",
    "Izz",
    "viscous",
    "dry",
    "stribeck_delta",
    "stribeck_c",
    "coulomb",
}
HINGE_DEFAULTS = {
    "compliance_linear": 1e-7,
    "compliance_rotational": 1e-7,
    "damping": 0.02,
    "viscous": 0.0,
    "dry": 0.0,
    "stribeck_delta": 0.0,
    "stribeck_c": 0.0,
    "friction_compliance": 1e-6,
    "friction_damping": 0.0,
    "coulomb": 0.0,
    "gain": 0.0,
    "shaft_inertia": 0.0,
}


@dataclass(frozen=True)
class RigidBodySpec:
    """A rigid body: named by the joint that moves it; pose of its frame at the URDF zero."""

    name: str
    r0: np.ndarray  # (3,) world position of the centre of mass at q = 0
    R0: np.ndarray  # (3, 3) body-to-world rotation at q = 0


@dataclass(frozen=True)
class Hinge:
    """A frictional hinge between ``parent`` (-1: world) and ``child`` (body indices).

    Anchor points ``p_*`` and unit vectors are in the body frames (world frame for the world).
    ``axis_parent`` is the hinge axis; ``perp_child`` two unit vectors of the child orthogonal to
    its axis (rotational rows of F.1); ``ref_*`` the vectors whose angle is the joint angle.
    """

    name: str
    parent: int
    child: int
    p_parent: np.ndarray
    p_child: np.ndarray
    axis_parent: np.ndarray
    perp_child: np.ndarray  # (2, 3)
    ref_parent: np.ndarray
    ref_child: np.ndarray
    has_motor: bool = False
    has_dry: bool = False


@dataclass
class MultibodyModel:
    """Bodies, hinges, nominal gravity, the Pinocchio model (for joint-space kinematics) and the
    named parameter vector with its estimated subset and box bounds."""

    bodies: list[RigidBodySpec]
    hinges: list[Hinge]
    gravity: np.ndarray
    pin_model: object
    names: list[str]
    values: np.ndarray
    estimate: list[str] = field(default_factory=list)
    lower: dict[str, float] = field(default_factory=dict)
    upper: dict[str, float] = field(default_factory=dict)
    q_slot: list[int] = field(default_factory=list)  # Pinocchio idx_q of every hinge
    noise: dict[str, float] = field(default_factory=dict)  # measurement noise [rad] per joint
    estimate_default: bool = False  # ``estimate`` is the default set (the config listed none)

    @property
    def joint_names(self) -> list[str]:
        return [h.name for h in self.hinges]

    @property
    def n_bodies(self) -> int:
        return len(self.bodies)

    def index(self, name: str) -> int:
        """Position of parameter ``name`` in ``chi``; InputError naming it if unknown."""
        try:
            return self.names.index(name)
        except ValueError:
            raise InputError(
                f"parameter '{name}' does not exist; known: {', '.join(self.names)}"
            ) from None

    def with_values(self, updates: dict[str, float]) -> MultibodyModel:
        """A copy whose named parameters take the values in ``updates``."""
        values = self.values.copy()
        for name, value in updates.items():
            values[self.index(name)] = float(value)
        return MultibodyModel(
            self.bodies,
            self.hinges,
            self.gravity,
            self.pin_model,
            self.names,
            values,
            list(self.estimate),
            dict(self.lower),
            dict(self.upper),
            list(self.q_slot),
            dict(self.noise),
            self.estimate_default,
        )

    def triangle_inequalities(self, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(C, c)`` with ``C p >= c``: the triangle inequalities ``Ixx + Iyy >= Izz`` (and
        permutations) of every body whose three principal inertias are all estimated (the physical
        consistency of a diagonal inertia, docs/architecture.md). Without them unexcited
        inertias go to 0, which makes a body's rotational mass singular and the covariance
        meaningless. Bodies with a fixed principal inertia get no rows: a fixed value is often a
        guess (a URDF's placeholder inertias would hold an estimated one at a bound they set);
        ``params.json`` reports whether the result is consistent."""
        rows = []
        for body in self.bodies:
            slots = [f"{body.name}.{a}" for a in ("Ixx", "Iyy", "Izz")]
            if not set(slots) <= set(names):
                continue
            for k in range(3):
                row = np.zeros(len(names))
                for j, slot in enumerate(slots):
                    row[names.index(slot)] = -1.0 if j == k else 1.0  # I_i + I_j - I_k >= 0
                rows.append(row)
        return np.array(rows, float).reshape(len(rows), len(names)), np.zeros(len(rows))

    def bounds(self, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Box B of the estimated parameters: defaults (>= 0 for masses, principal inertias and
        friction) overridden by the config's ``bounds``."""
        lo, hi = [], []
        for name in names:
            slot = name.rsplit(".", 1)[-1]
            lo.append(self.lower.get(name, 0.0 if slot in NONNEGATIVE else -np.inf))
            hi.append(self.upper.get(name, np.inf))
        return np.array(lo), np.array(hi)
