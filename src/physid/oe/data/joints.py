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
  rotor inertia left out go into the process noise: on the Go2-like benchmark without them the
  sway's trunk came out 3x too heavy (benchmarks/oe_mujoco_go2.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from physid.findings import Finding
from physid.oe.codes import (
    JOINT_TERMS_ESTIMATED,
    JOINT_TERMS_FROM_MJCF,
    NO_JOINT_TERMS,
)
from physid.oe.data.config import model_joint_terms
from physid.oe.model.dynamics import JointTerms
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
            "over 0.02 rad/s), held",
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
