"""Joint friction and armature of an offline identification, for the online filter's nominal model.

Paper E's measurement (eq. 14) subtracts the torque of everything that is not estimated; on a real
arm that includes the joints' own friction, which an inertial-only nominal model leaves in the
residual, where the filter reads it as a payload (or gates the update). ``physid identify`` writes
these terms per joint in ``params.json`` (docs/architecture.md joint terms):

    tau_j = fv dq_j + fc sign(dq_j) + offset + Ia ddq_j,   sign = 0 where |dq_j| < deadband_j,

the same rule as the offline regressor (:func:`physid.robot.friction.coulomb_sign`); a joint
identified
with a sigmoid or Stribeck model (``friction_model`` in params.json) has that model's friction
in place of ``fc sign(dq_j)``, with its fitted shape
(:func:`physid.robot.friction.friction_torque`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from physid.errors import InputError
from physid.files.params_file import DEADBAND_KEY, JOINT_TERM_KEYS, ParamsFile
from physid.findings import Finding
from physid.online.codes import COUPLED_MOTOR_FRICTION, MISSING_JOINT_TERMS
from physid.robot.friction import COEFFICIENTS, coulomb_sign, friction_torque


@dataclass(frozen=True)
class JointFriction:
    """Per actuated joint (velocity order): viscous [N m s/rad], Coulomb [N m], offset [N m],
    armature [kg m^2] and the Coulomb deadband [rad/s] (prismatic joints: N, m, kg)."""

    viscous: NDArray[np.float64]
    coulomb: NDArray[np.float64]
    offset: NDArray[np.float64]
    armature: NDArray[np.float64]
    deadband: NDArray[np.float64]
    # Joints with a sigmoid or Stribeck model: index -> (model, shape, the coefficients of
    # physid.robot.friction.COEFFICIENTS[model]); that part replaces their ``coulomb * sign`` term.
    nonlinear: dict[int, tuple[str, tuple[float, ...], dict[str, float]]] = field(
        default_factory=dict
    )

    def torque(self, v: NDArray[np.float64], a: NDArray[np.float64]) -> NDArray[np.float64]:
        """Joint-term torques (n,) at joint velocities ``v`` and accelerations ``a`` (n,)."""
        sign = coulomb_sign(v, self.deadband)
        torque = self.viscous * v + self.coulomb * sign + self.offset + self.armature * a
        for k, (kind, shape, coefficients) in self.nonlinear.items():
            band = self.deadband[k] or None
            speed_dependent = friction_torque(kind, np.atleast_1d(v[k]), shape, coefficients, band)
            torque[k] += speed_dependent[0] - self.coulomb[k] * sign[k]  # replaces fc sign(v)
        return torque

    def torque_variance(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        """Variance (n,) [N^2 m^2] of the model's Coulomb torque near zero speed, where the sign
        model is least right: static friction holds anything in [-fc, fc], the transition is not
        a step, and a noisy velocity flips the sign. ``(fc b)^2`` with the bump
        ``b = exp(-(v / deadband)^2 / 2)`` (1 at rest, 0.14 at two deadbands, 0.01 at three);
        zero for a joint without deadband. Added to the measurement noise of that joint's row,
        so a reversal neither pulls the estimate nor is gated as a load change. A Stribeck joint
        counts with its static level ``fs``; a sigmoid joint, whose model has no step at rest,
        adds nothing."""
        return (self._static_level() * self._bump(v)) ** 2

    def resting(self, v: NDArray[np.float64]) -> NDArray[np.bool_]:
        """Joints (n,) held by static friction at velocities ``v``: a static level and the
        bump of :meth:`torque_variance` above one half (within 1.18 deadbands of rest)."""
        return (self._static_level() > 0) & (self._bump(v) > 0.5)

    def _bump(self, v: NDArray[np.float64]) -> NDArray[np.float64]:
        width = np.where(self.deadband > 0, self.deadband, 1.0)
        return np.where(self.deadband > 0, np.exp(-0.5 * (v / width) ** 2), 0.0)

    def _static_level(self) -> NDArray[np.float64]:
        level = self.coulomb.copy()
        for k, (kind, _, coefficients) in self.nonlinear.items():
            level[k] = coefficients.get("fs", 0.0) if kind == "stribeck" else 0.0
        return level


def joint_friction_from_params(
    params: ParamsFile, joints: tuple[str, ...]
) -> tuple[JointFriction, tuple[Finding, ...]]:
    """The joint terms of ``params`` for the actuated ``joints`` (absent terms are 0), and the
    findings on what the online model cannot use (joints the file does not name:
    :data:`~physid.online.codes.MISSING_JOINT_TERMS`; coupled-motor terms:
    :data:`~physid.online.codes.COUPLED_MOTOR_FRICTION`)."""
    values = {term: np.zeros(len(joints)) for term in JOINT_TERM_KEYS}
    deadband = np.zeros(len(joints))
    unknown = sorted(set(params.joints) - set(joints))
    if unknown:
        raise InputError(
            f"joints {unknown} of the nominal params.json are not actuated joints of the model "
            f"({', '.join(joints)})",
            source=params.source,
        )
    for k, joint in enumerate(joints):
        terms = params.joints.get(joint, {})
        for term, key in JOINT_TERM_KEYS.items():
            values[term][k] = float(terms.get(key, 0.0))
        deadband[k] = float(terms.get(DEADBAND_KEY) or 0.0)
    findings = []
    missing = [j for j in joints if j not in params.joints]
    if missing:
        findings.append(
            MISSING_JOINT_TERMS(
                f"{params.source}: no joint terms for {', '.join(missing)} (taken as 0)",
                names=missing,
            )
        )
    if params.extra.get("coupled_motors"):
        findings.append(
            COUPLED_MOTOR_FRICTION(
                f"{params.source}: coupled-motor friction terms are not modelled online (only "
                "each joint's own terms)",
                names=(str(params.source),),
            )
        )
    nonlinear = {}
    shapes = params.friction_shapes(joints)
    for k, joint in enumerate(joints):
        kind = params.friction_models.get(joint, "linear")
        if kind != "linear":
            coefficients = {term: values[term][k] for term in COEFFICIENTS[kind]}
            nonlinear[k] = (kind, shapes[k], coefficients)
    friction = JointFriction(
        values["fv"], values["fc"], values["offset"], values["Ia"], deadband, nonlinear
    )
    return friction, tuple(findings)
