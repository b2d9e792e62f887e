"""Joints that are not identified: locked at a fixed position (Pinocchio's reduced model).

A mobile manipulator's URDF has wheels, a torso, a head and fingers beside the arm; an arm's URDF
often has gripper fingers. physid identifies the bodies moved by the joints it has recordings of
and locks every other joint at a fixed position: ``pinocchio.buildReducedModel`` merges the bodies
beyond a locked joint into their parent (their inertias then ride on the parent's parameters, as
a payload would). Joints physid cannot identify through (anything but 1-DoF revolute or
prismatic: planar, spherical or floating joints) are locked automatically, with a note; a URDF
continuous joint is revolute here (:func:`physid.robot.model.load_urdf`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pinocchio as pin

from physid.errors import InputError

_IDENTIFIABLE_KINDS = ("R", "P")  # 1-DoF revolute / prismatic (any axis), as model.py supports


def _kind(joint: pin.JointModel) -> str:
    return joint.shortname().removeprefix("JointModel")


def _identifiable(joint: pin.JointModel) -> bool:
    return joint.nq == 1 and joint.nv == 1 and _kind(joint)[:1] in _IDENTIFIABLE_KINDS


def lock_joints(
    pin_model: pin.Model,
    keep: Sequence[str] | None,
    positions: Mapping[str, float],
    source: str = "config",
) -> tuple[pin.Model, tuple[str, ...], tuple[str, ...]]:
    """The reduced model keeping ``keep`` (None: every 1-DoF revolute/prismatic joint not named
    in ``positions``), every other joint locked at ``positions[joint]`` (default: its neutral
    position; 1-DoF joints only).

    Returns ``(model, locked joint names, notes)``. Unknown names, a kept joint physid cannot
    identify, or a position for a multi-DoF joint are errors naming the joint.
    """
    names = list(pin_model.names[1:])
    for name in list(keep or []) + list(positions):
        if name not in names:
            raise InputError(
                f"joint '{name}' is not in the URDF (joints: {', '.join(names)})", source=source
            )
    notes: list[str] = []
    locked: list[str] = []
    for joint_id, name in enumerate(names, start=1):
        joint = pin_model.joints[joint_id]
        if name in positions:  # held still where the config says, with or without `joints:`
            if keep is not None and name in keep:
                raise InputError(
                    f"joint '{name}' is both identified (joints:) and held still (locked:): "
                    "list it in one of them",
                    source=source,
                )
            locked.append(name)
            continue
        if keep is not None and name in keep:
            if not _identifiable(joint):
                raise InputError(
                    f"joints: '{name}' is of type {_kind(joint)}; only 1-DoF revolute and "
                    "prismatic joints can be identified",
                    source=source,
                )
            continue
        if keep is None and _identifiable(joint):
            continue
        locked.append(name)
    if not locked:
        return pin_model, (), ()
    q = pin.neutral(pin_model)
    for name, value in positions.items():
        joint = pin_model.joints[pin_model.getJointId(name)]
        if joint.nq != 1:
            raise InputError(
                f"locked.{name}: a position can only be given to a 1-DoF joint", source=source
            )
        if not np.isfinite(value):
            raise InputError(f"locked.{name}: not a finite number", source=source)
        q[joint.idx_q] = float(value)
    automatic = [n for n in locked if not _identifiable(pin_model.joints[pin_model.getJointId(n)])]
    if keep is None and automatic:
        kinds = ", ".join(
            f"{n} ({_kind(pin_model.joints[pin_model.getJointId(n)])})" for n in automatic
        )
        notes.append(f"locked automatically (not 1-DoF revolute/prismatic): {kinds}")
    notes.append(
        f"{len(locked)} joint(s) locked (bodies beyond them merged into their parents): "
        + ", ".join(f"{n} at {_position_text(pin_model, q, n)}" for n in locked)
    )
    ids = [pin_model.getJointId(n) for n in locked]
    reduced = pin.buildReducedModel(pin_model, ids, q)
    return reduced, tuple(locked), tuple(notes)


def hold_at(pin_model: pin.Model, positions: Mapping[str, float]) -> pin.Model:
    """``pin_model`` with exactly the 1-DoF joints of ``positions`` held at those positions
    (bodies beyond them merged into their parents; a free flyer stays, unlike
    :func:`lock_joints`' automatic locking); the model itself when there are none."""
    if not positions:
        return pin_model
    q = pin.neutral(pin_model)
    for joint, position in positions.items():
        q[pin_model.joints[pin_model.getJointId(joint)].idx_q] = position
    return pin.buildReducedModel(pin_model, [pin_model.getJointId(j) for j in positions], q)


def _position_text(pin_model: pin.Model, q: np.ndarray, name: str) -> str:
    joint = pin_model.joints[pin_model.getJointId(name)]
    values = q[joint.idx_q : joint.idx_q + joint.nq]
    return f"{values[0]:g}" if joint.nq == 1 else "neutral"
