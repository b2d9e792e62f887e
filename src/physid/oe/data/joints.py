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
from scipy.ndimage import maximum_filter1d

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
from physid.oe.model.phases import flag_changes

# nodes either side of a recorded fast reversal whose Coulomb band is widened
# (coulomb_widths): an estimate may reverse a node or two from the record
REVERSAL_WINDOW = 2
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


def coulomb_widths(
    v: NDArray,
    floor: float = COULOMB_SPEED,
    window: int = REVERSAL_WINDOW,
    flags: NDArray | None = None,
) -> NDArray[np.float64]:
    """Per node and joint, the Coulomb friction's tanh width ``v_c`` [rad/s] for the recorded
    joint velocities ``v`` ``(nodes, joints)``: ``floor``, widened to half the change between
    two samples on the ``window`` nodes either side of a change that starts or ends within
    half its own size of zero (every jump across zero, and a start from or stop to rest).

    The linearly implicit friction step linearizes ``F_c tanh(v / v_c)`` at ``v_k``: a change
    through the tanh's curved band ``|v| < v_c`` that is wider than the band flips or saturates
    the friction within one node, where that model is wrong by up to ``2 F_c`` and
    Gauss-Newton's steps stall on the gap. A band as wide as half the change keeps the flip over
    at least two nodes; the window covers an estimate that reverses a node or two from the
    record. Elsewhere the band stays narrow: a joint that moves slowly between fast reversals
    (a stance leg between swings) keeps its full friction, which one wide band for the whole
    record would fade. Velocity noise alone (0.03-0.05 rad/s, changes below 0.2) leaves the
    floor. With contact ``flags`` ``(nodes, feet)``, the ``window`` nodes either side of a flag
    change get each joint's widest band of the record: at a touch-down the estimate's
    velocities can jump through zero where the record's do not (a soft foot's landing)."""
    v = np.asarray(v, dtype=float)
    if v.ndim != 2:
        return np.full((0, 0), float(floor))
    widths = np.full(v.shape, float(floor))
    if v.shape[0] < 2:
        return widths
    half = 0.5 * np.abs(np.diff(v, axis=0))
    through = (np.minimum(np.abs(v[1:]), np.abs(v[:-1])) < half) & np.isfinite(half)
    at_flip = np.where(through, half, 0.0)  # node k: between rows k and k + 1
    spread = maximum_filter1d(at_flip, size=2 * window + 1, axis=0, mode="constant")
    widths[:-1] = np.maximum(widths[:-1], spread)
    if flags is not None and len(flags) == len(v):
        changes = np.zeros(len(v))
        changes[flag_changes(np.asarray(flags, dtype=bool))] = 1.0
        near = maximum_filter1d(changes, size=2 * window + 1, mode="constant") > 0
        widths[near] = np.maximum(widths[near], widths.max(axis=0))
    return widths


def with_coulomb_widths(
    choice: JointChoice,
    v: NDArray | None,
    dof_names: Sequence[str],
    flags: NDArray | None = None,
) -> JointChoice:
    """``choice`` with the Coulomb widths of each node from the recorded joint velocities ``v``
    ``(nodes, joints)`` and contact ``flags`` (:func:`coulomb_widths`,
    ``JointTerms.coulomb_speed_nodes``) and the
    finding naming the joints widened somewhere; unchanged without joint terms or velocities,
    or when no joint reverses faster."""
    joints = choice.joints
    if joints is None or v is None or not np.any(joints.coulomb) and choice.estimate is None:
        return choice
    nv = joints.armature.size
    bv = nv - np.asarray(v).shape[1]
    default = float(np.max(joints.coulomb_speed))
    chosen = coulomb_widths(v, default, flags=flags)
    wide = [j for j in range(chosen.shape[1]) if np.any(chosen[:, j] > default)]
    if not wide:
        return choice
    speed = np.full((chosen.shape[0], nv), default)
    speed[:, bv:] = chosen
    names = tuple(dof_names[bv + j] for j in wide)
    listed = ", ".join(f"{n} {chosen[:, j].max():.2g}" for n, j in zip(names, wide, strict=True))
    widened = chosen > default
    finding = COULOMB_WIDTHS(
        f"the Coulomb friction's tanh widened around fast reversals on {len(wide)} joints, "
        f"{widened.sum()} of {widened.size} joint-nodes ({100 * widened.mean():.1f} %; widest, "
        f"rad/s: {listed}); elsewhere {default:g} rad/s",
        numbers={
            "default_rad_s": default,
            "widest_rad_s": float(chosen.max()),
            "widened_fraction": float(widened.mean()),
        },
        names=names,
    )
    return replace(
        choice,
        joints=replace(joints, coulomb_speed=default, coulomb_speed_nodes=speed),
        findings=(*choice.findings, finding),
    )
