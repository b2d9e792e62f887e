"""Joint limits of an excitation and the nominal joint torques it needs.

Position, velocity and torque limits come from the URDF (``<limit lower upper velocity
effort>``, as Pinocchio reads them); the acceleration limit, which a URDF cannot hold, and any
override come from the ``excitation`` section of the config (:mod:`physid.excite.config`).
Torques are those of the nominal model (the URDF's inertias, damping, friction and armature):
Pinocchio's RNEA and its analytical derivatives (``computeRNEADerivatives``), plus the joint
terms of docs/architecture.md (``fv dq + fc sign(dq) + offset``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from physid.errors import InputError
from physid.robot.model import RobotModel

LIMIT_KEYS = ("lower", "upper", "velocity", "acceleration", "effort")


@dataclass(frozen=True)
class JointLimits:
    """Per joint (model order): position bounds, |velocity|, |acceleration| and |torque|."""

    joint_names: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    effort: np.ndarray

    def shrunk(self, margin: float) -> JointLimits:
        """Limits tightened by the fraction ``margin`` (positions about the range's middle)."""
        middle, half = 0.5 * (self.upper + self.lower), 0.5 * (self.upper - self.lower)
        keep = 1.0 - margin
        return JointLimits(
            self.joint_names,
            middle - keep * half,
            middle + keep * half,
            keep * self.velocity,
            keep * self.acceleration,
            keep * self.effort,
        )

    def as_dict(self) -> dict:
        return {
            joint: {key: float(getattr(self, key)[k]) for key in LIMIT_KEYS}
            for k, joint in enumerate(self.joint_names)
        }


def joint_limits(
    model: RobotModel,
    overrides: dict[str, dict[str, float]] | None = None,
    *,
    default_acceleration: float | None = None,
    highest_frequency_hz: float,
) -> JointLimits:
    """The URDF's limits with ``overrides`` ({joint: {lower, upper, velocity, acceleration,
    effort}}) applied. Without an acceleration limit a joint gets ``default_acceleration``, else
    its velocity limit times ``2 pi highest_frequency_hz`` (what the velocity limit allows at the
    highest harmonic). A missing (0 or infinite) limit is a one-line error naming the joint."""
    pm = model.pin_model
    values = {
        "lower": np.array(pm.lowerPositionLimit, float),
        "upper": np.array(pm.upperPositionLimit, float),
        "velocity": np.array(pm.velocityLimit, float),
        "effort": np.array(pm.effortLimit, float),
        "acceleration": np.full(model.n_joints, np.nan),
    }
    if default_acceleration is not None:
        values["acceleration"][:] = default_acceleration
    for joint, entries in (overrides or {}).items():
        k = model.joint_index(joint)
        for key, value in entries.items():
            values[key][k] = value
    missing_acc = np.isnan(values["acceleration"])
    values["acceleration"][missing_acc] = (
        values["velocity"][missing_acc] * 2.0 * np.pi * highest_frequency_hz
    )
    missing: dict[str, list[tuple[str, float]]] = {}  # joint: its missing limits and values
    unbounded = False
    for k, joint in enumerate(model.joint_names):
        for key in LIMIT_KEYS:
            value = values[key][k]
            if not np.isfinite(value) or (key not in ("lower", "upper") and value <= 0):
                missing.setdefault(joint, []).append((key, value))
                unbounded |= key in ("lower", "upper") and bool(np.isinf(value))
    if missing:  # every joint at once: a mobile manipulator has four wheels
        listed = ", ".join(
            f"'{joint}' " + " ".join(f"{key} ({value:g})" for key, value in found)
            for joint, found in missing.items()
        )
        keys = ", ".join(
            f"excitation.limits.{joint}.{'/'.join(key for key, _ in found)}"
            for joint, found in missing.items()
        )
        why = (
            " (unbounded: a URDF continuous joint, or an MJCF hinge without a range)"
            if unbounded
            else ""
        )
        held = ", ".join(f"{joint}: 0.0" for joint in missing)
        raise InputError(
            f"no usable limit in the robot file (a URDF <limit>, an MJCF range or actuator) for "
            f"{listed}{why}: set {keys} in the config, or hold the joints the excitation "
            f"should not move (locked: {{{held}}})"
        )
    for k, joint in enumerate(model.joint_names):
        if values["upper"][k] <= values["lower"][k]:
            raise InputError(
                f"joint '{joint}': position limits lower {values['lower'][k]:g} >= upper "
                f"{values['upper'][k]:g}"
            )
    return JointLimits(model.joint_names, *(values[key] for key in LIMIT_KEYS))


class NominalTorques:
    """Joint torques of the nominal (URDF) parameters and their derivatives along a trajectory."""

    def __init__(self, model: RobotModel) -> None:
        self.model = model
        prior = model.prior_parameters()
        self.pin_model = model.with_inertial_parameters(prior)
        self.pin_model.armature = self._term(prior, "Ia")
        self.viscous = self._term(prior, "fv")
        self.coulomb = self._term(prior, "fc")
        self.offset = self._term(prior, "offset")
        self.data = self.pin_model.createData()

    def _term(self, theta: np.ndarray, term: str) -> np.ndarray:
        values = np.zeros(self.model.n_joints)
        for k, joint in enumerate(self.model.joint_names):
            index = self.model.layout.joint_term_index(joint, term)
            if index is not None:
                values[k] = theta[index]
        return values

    def _friction(self, dq: np.ndarray) -> np.ndarray:
        return self.viscous * dq + self.coulomb * np.sign(dq) + self.offset

    def torques(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """(K, n) torques ``RNEA(q, dq, ddq) + armature ddq + friction(dq)``."""
        out = np.empty_like(np.asarray(q, float))
        for k in range(out.shape[0]):
            out[k] = pin.rnea(self.pin_model, self.data, q[k], dq[k], ddq[k])
        return out + self._friction(dq)

    def derivatives(
        self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Torques (K, n) and their Jacobians (K, n, n) w.r.t. q, dq and ddq (Pinocchio's
        analytical RNEA derivatives; the Coulomb step has derivative 0 away from dq = 0)."""
        K, n = np.shape(q)
        tau = np.empty((K, n))
        d_q, d_dq, d_ddq = (np.empty((K, n, n)) for _ in range(3))
        for k in range(K):
            d_q[k], d_dq[k], M = pin.computeRNEADerivatives(
                self.pin_model, self.data, q[k], dq[k], ddq[k]
            )
            d_ddq[k] = np.triu(M) + np.triu(M, 1).T
            tau[k] = self.data.tau
        d_dq += np.diag(self.viscous)
        return tau + self._friction(dq), d_q, d_dq, d_ddq


@dataclass(frozen=True)
class LimitCheck:
    """Largest use of each limit (1.0 = at the limit) over a trajectory, the smallest distance
    between bodies that can collide [m] (inf: not checked) and the largest excursion of a
    workspace frame out of its box [m] (0: inside, or no box)."""

    position: float
    velocity: float
    acceleration: float
    torque: float
    min_distance: float = np.inf
    outside_workspace: float = 0.0

    @property
    def worst(self) -> float:
        return max(self.position, self.velocity, self.acceleration, self.torque)

    @property
    def ok(self) -> bool:
        return self.worst <= 1.0 + 1e-9 and self.min_distance > 0 and self.outside_workspace <= 0


def check_limits(
    limits: JointLimits,
    q: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray,
    tau: np.ndarray | None,
    geometry=None,
) -> LimitCheck:
    """Fraction of each limit used (position: of the half-range about the middle); with
    ``geometry`` (:class:`physid.excite.geometry.GeometryConstraints`) also the collision
    distance and the workspace excursion."""
    middle, half = 0.5 * (limits.upper + limits.lower), 0.5 * (limits.upper - limits.lower)
    torque = 0.0 if tau is None else float(np.max(np.abs(tau) / limits.effort))
    distance, outside = (np.inf, 0.0) if geometry is None else geometry.check(q)
    return LimitCheck(
        position=float(np.max(np.abs(q - middle) / half)),
        velocity=float(np.max(np.abs(dq) / limits.velocity)),
        acceleration=float(np.max(np.abs(ddq) / limits.acceleration)),
        torque=torque,
        min_distance=distance,
        outside_workspace=outside,
    )
