"""Which joint terms a ``physid oe`` run puts in the dynamics, and which it estimates.

The config's ``joints`` mapping decides when it is given (:mod:`physid.oe.data.config`).
Without one:

- an MJCF that declares armature, damping or frictionloss: those values, held (an MJCF is a
  simulator's model: what it declares moves the robot);
- any other robot file (a URDF, whose ``<dynamics>`` tags are often decorative, or an MJCF that
  declares none): armature, viscous and Coulomb friction of every joint estimated with the
  bodies (:mod:`physid.oe.model.joint_estimate`), as ``physid identify`` estimates friction by
  default. A value the file declares is the start and the centre of a log-normal prior of std
  1 (in log); an undeclared one starts small under a wide prior. A real leg's friction and
  rotor inertia left out go into the process noise, which the bodies' masses then absorb (a
  trunk several times too heavy; docs/benchmarks.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.findings import Finding
from physid.oe.codes import (
    COULOMB_WIDTHS,
    JOINT_TERMS_ESTIMATED,
    JOINT_TERMS_FROM_MJCF,
    NO_JOINT_TERMS,
)
from physid.oe.data.config import model_joint_terms
from physid.oe.model.dynamics import COULOMB_SPEED, JointTerms
from physid.oe.model.joint_estimate import (
    KINDS,
    START,
    UNDECLARED_LOG_STD,
    UNITS,
    JointEstimate,
)
from physid.oe.model.measurements import base_dofs

DECLARED = {"armature": "armature", "viscous": "damping", "coulomb": "friction"}


@dataclass(frozen=True)
class JointChoice:
    """The joint terms of the dynamics (their values: the start of the estimated ones), which
    of them theta estimates (None: none), and the findings that say so."""

    joints: JointTerms | None
    estimate: JointEstimate | None
    findings: tuple[Finding, ...] = field(default=())


def declared_joint_terms(model: pin.Model) -> dict[str, float]:
    """The largest value of each joint term the robot file declares (URDF ``<dynamics damping
    friction>``, MJCF ``armature damping frictionloss``), by kind; kinds it leaves 0 omitted."""
    bv = base_dofs(model)[1]
    found = {}
    for kind, values in (
        ("armature", model.armature),
        ("viscous", model.damping),
        ("coulomb", model.friction),
    ):
        largest = float(np.max(np.abs(values[bv:]), initial=0.0))
        if largest > 0.0:
            found[kind] = largest
    return found


def choose_joint_terms(
    model: pin.Model,
    label: str,
    mjcf: bool,
    floating: bool,
    given: JointTerms | None,
    estimate: JointEstimate | None,
) -> JointChoice:
    """The run's joint terms: the config's (``given``, ``estimate``) when it has a ``joints``
    mapping, else the defaults of the module docstring."""
    if given is not None:
        return _from_config(given, estimate, model, floating)
    declared = declared_joint_terms(model)
    if declared and mjcf:
        values = ", ".join(f"{DECLARED[k]} up to {v:.3g}" for k, v in declared.items())
        finding = JOINT_TERMS_FROM_MJCF(
            f"{label}: the dynamics include the MJCF's joint terms ({values}; Coulomb smoothed "
            "by a tanh), held",
            numbers={f"{k}_max": v for k, v in declared.items()},
        )
        return JointChoice(model_joint_terms(model), None, (finding,))
    joints = model_joint_terms(model)
    estimate = JointEstimate(KINDS, tuple(range(base_dofs(model)[1], model.nv)))
    return JointChoice(joints, estimate, (estimate_finding(estimate, joints, label),))


def _from_config(
    joints: JointTerms, estimate: JointEstimate | None, model: pin.Model, floating: bool
) -> JointChoice:
    """The config's joint terms, with the finding that says what is estimated, or a caution
    when a floating base's dynamics are left without any."""
    if estimate is not None:
        return JointChoice(joints, estimate, (estimate_finding(estimate, joints, "config"),))
    bv = base_dofs(model)[1]
    empty = not any(np.any(getattr(joints, k)[bv:]) for k in KINDS)
    if empty and floating:
        finding = NO_JOINT_TERMS(
            "the config's 'joints' gives no armature or friction and estimates none: a real "
            "leg's go into the process noise"
        )
        return JointChoice(joints, None, (finding,))
    return JointChoice(joints, None)


def estimate_finding(estimate: JointEstimate, joints: JointTerms, label: str) -> Finding:
    """What the run estimates of the joint terms, where each starts and what holds it."""
    parts, numbers = [], {}
    for kind in estimate.kinds:
        declared = estimate.values(joints, kind)
        given = int(np.count_nonzero(declared))
        start = []
        if given:
            start.append(
                f"{given} from {label} (log-normal prior, std {estimate.prior_log_std:g} in log)"
            )
        if len(declared) - given:
            start.append(
                f"{len(declared) - given} undeclared: from {START[kind]:g} "
                f"{UNITS[kind]}, wide prior (std {UNDECLARED_LOG_STD:g} in log)"
            )
        parts.append(f"{kind} ({', '.join(start)})")
        numbers[f"{kind}_declared_joints"] = float(given)
    numbers["prior_log_std"] = estimate.prior_log_std
    return JOINT_TERMS_ESTIMATED(
        f"joint terms estimated on {len(estimate.dofs)} joints with the bodies: "
        + "; ".join(parts),
        numbers=numbers,
        names=estimate.kinds,
    )


def coulomb_widths(v: NDArray, floor: float = COULOMB_SPEED) -> NDArray[np.float64]:
    """Per joint, the Coulomb friction's tanh width ``v_c`` [rad/s] for the recorded joint
    velocities ``v`` ``(nodes, joints)``: half the largest change between two samples across
    which the velocity changes sign, at least ``floor``.

    The linearly implicit friction step linearizes ``F_c tanh(v / v_c)`` at ``v_k``: a jump
    across zero wider than the tanh's near-linear band ``±v_c`` flips the friction within one
    node, where that model is wrong by up to ``2 F_c`` and Gauss-Newton's steps stall on the
    gap. A band as wide as half the jump keeps the flip over at least two nodes. Velocity
    noise alone (0.03-0.05 rad/s, jumps across zero below 0.2) leaves the floor."""
    v = np.asarray(v, dtype=float)
    if v.ndim != 2 or v.shape[0] < 2:
        return np.full(v.shape[-1] if v.ndim == 2 else 0, float(floor))
    jump = np.abs(np.diff(v, axis=0))
    flips = (v[1:] * v[:-1] < 0) & np.isfinite(jump)
    largest = np.max(np.where(flips, jump, 0.0), axis=0, initial=0.0)
    return np.maximum(float(floor), 0.5 * largest)


def with_coulomb_widths(
    choice: JointChoice, v: NDArray | None, dof_names: Sequence[str]
) -> JointChoice:
    """``choice`` with each joint's Coulomb width from the recorded joint velocities ``v``
    ``(nodes, joints)`` (:func:`coulomb_widths`) and the finding naming the widened joints;
    unchanged without joint terms or velocities, or when no joint reverses faster."""
    joints = choice.joints
    if joints is None or v is None or not np.any(joints.coulomb) and choice.estimate is None:
        return choice
    nv = joints.armature.size
    bv = nv - np.asarray(v).shape[1]
    default = float(np.max(joints.coulomb_speed))
    speed = np.full(nv, default)
    speed[bv:] = np.maximum(speed[bv:], coulomb_widths(v))
    wide = [i for i in range(bv, nv) if speed[i] > default]
    if not wide:
        return choice
    names = tuple(dof_names[i] for i in wide)
    listed = ", ".join(f"{n} {speed[i]:.2g}" for n, i in zip(names, wide, strict=True))
    finding = COULOMB_WIDTHS(
        f"the Coulomb friction's tanh widened on {len(wide)} joints whose velocity jumps across "
        f"zero within one sample (rad/s): {listed}",
        numbers={
            "default_rad_s": default,
            "widest_rad_s": float(np.max(speed)),
        },
        names=names,
    )
    return replace(
        choice, joints=replace(joints, coulomb_speed=speed), findings=(*choice.findings, finding)
    )
