"""Identified parameters into an MJCF model, through MuJoCo's own model editing (``MjSpec``).

The URDF with the identified inertials (:func:`physid.export.urdf.export_urdf`) is handed to
MuJoCo's URDF importer without its meshes (``package://`` paths rarely resolve outside ROS:
``<visual>`` and mesh ``<collision>`` elements are dropped, primitive collision shapes are kept)
and with only the first of repeated joint ``<origin>`` tags (the one Pinocchio reads).
Then, on the ``MjSpec``:

- every identified body (the child link of its joint, as in the URDF export) gets ``mass``,
  ``ipos`` = com and ``fullinertia`` about the com in the body frame (MuJoCo's body frame is the
  URDF link frame); ``inertiafromgeom`` is switched off, so links without an inertial are massless
  and the totals are those of ``params.json``; static links are fused as MuJoCo does for URDF;
- joints get ``damping`` (viscous), ``frictionloss`` (Coulomb; a sigmoid or Stribeck joint its
  high-speed Coulomb equivalent, :func:`physid.export.urdf.linear_friction`) and ``armature``;
- ``option.gravity`` is the gravity of training (``extra.gravity``, e.g. an estimated base tilt);
- contacts are excluded between bodies whose collision shapes overlap at the URDF's zero pose
  (:func:`_exclude_overlaps`).

Not representable: the torque offsets, the coupled-motor terms (``extra.coupled_motors``) and the
``coulomb_deadband`` (MuJoCo's ``frictionloss`` is a constraint, not ``fc*sign(dq)``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from physid.body.inertia import mass_com_inertia_from_pi
from physid.errors import InputError, install_hint
from physid.export.urdf import ARMATURE_NOTE, export_urdf, linear_friction
from physid.files.params_file import ParamsFile
from physid.robot.collisions import overlapping_pairs


@dataclass
class MjcfExport:
    """MJCF text and what could not be written into it."""

    xml: str
    notes: list[str] = field(default_factory=list)


def _for_mujoco(urdf_text: str) -> str:
    """The URDF without meshes, and with only the first ``<origin>`` of a joint (the one
    urdfdom and Pinocchio read; MuJoCo rejects repeated ones)."""
    root = ET.fromstring(urdf_text)
    for joint in root.findall("joint"):
        for extra in joint.findall("origin")[1:]:
            joint.remove(extra)
    for link in root.findall("link"):
        for visual in link.findall("visual"):
            link.remove(visual)
        for collision in link.findall("collision"):
            if collision.find("geometry/mesh") is not None:
                link.remove(collision)
    return ET.tostring(root, encoding="unicode")


def _non_negative(value: float | None, what: str, notes: list[str]) -> float | None:
    if value is None:
        return None
    if value < 0:
        notes.append(f"{what} {value:.6g} < 0: MuJoCo needs >= 0, left at 0")
        return 0.0
    return float(value)


def export_mjcf(urdf: str | Path, params: ParamsFile, out: str | Path | None = None) -> MjcfExport:
    """The robot of ``urdf`` with the parameters of ``params`` as MJCF text; a robot given as
    MJCF is edited in place of its own file (:mod:`physid.export.mjcf_edit`; ``out``: where the
    text will be written, for its relative paths)."""
    try:
        import mujoco
    except ImportError:  # pragma: no cover - depends on the environment
        raise InputError(f"MJCF export needs MuJoCo: {install_hint('mujoco', 'mujoco')}") from None
    from physid.robot.mjcf import is_mjcf

    if is_mjcf(urdf):
        from physid.export.mjcf_edit import export_into_mjcf

        return MjcfExport(*export_into_mjcf(urdf, params, out))
    edited = export_urdf(urdf, params)
    notes = [n for n in edited.notes if ARMATURE_NOTE not in n]  # MJCF holds it
    try:
        spec = mujoco.MjSpec.from_string(_for_mujoco(edited.to_string()))
    except ValueError as error:
        raise InputError(f"MuJoCo cannot import the URDF: {error}", source=str(urdf)) from None
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    for joint, link in edited.child_links.items():
        mass, com, inertia = mass_com_inertia_from_pi(params.bodies[joint])
        body = spec.body(link)
        body.explicitinertial = True
        body.mass = float(mass)
        body.ipos = com
        body.iquat = [1.0, 0.0, 0.0, 0.0]
        body.fullinertia = [
            inertia[0, 0],
            inertia[1, 1],
            inertia[2, 2],
            inertia[0, 1],
            inertia[0, 2],
            inertia[1, 2],
        ]
    for name in params.joints:
        terms = linear_friction(params, name, [])  # its note is in the URDF export's notes
        joint = spec.joint(name)
        damping = _non_negative(terms.get("viscous"), f"joint {name}: viscous", notes)
        if damping is not None:
            values = np.array(joint.damping, dtype=float).reshape(-1)
            values[0] = damping
            joint.damping = values if values.size > 1 else float(damping)
        friction = _non_negative(terms.get("coulomb"), f"joint {name}: coulomb", notes)
        if friction is not None:
            joint.frictionloss = friction
        armature = _non_negative(terms.get("armature"), f"joint {name}: armature", notes)
        if armature is not None:
            joint.armature = armature
    if params.gravity is not None:
        spec.option.gravity = params.gravity
    try:
        _exclude_overlaps(spec, notes)
        spec.compile()
        xml = _full_precision(spec.to_xml(), spec, edited.child_links, params)
        mujoco.MjModel.from_xml_string(xml)
    except ValueError as error:
        message = " ".join(str(error).split())
        raise InputError(f"MuJoCo rejects the exported model: {message}") from None
    return MjcfExport(xml, notes)


def _exclude_overlaps(spec, notes: list[str]) -> None:  # noqa: ANN001 - mujoco.MjSpec
    """Contacts excluded between bodies whose collision shapes overlap at the URDF's zero pose:
    a robot is not in collision there, so the shapes are coarser than it (a base box can sit
    centimetres into the first link; MuJoCo filters a body's contacts with its parent unless
    that is the world), and simulated they would push the links apart wherever it moves."""
    model = spec.compile()
    for (first, second), (depth, _) in sorted(overlapping_pairs(model, model.qpos0).items()):
        spec.add_exclude(bodyname1=first, bodyname2=second)
        notes.append(
            f"contacts between {first} and {second}: excluded (<contact><exclude>), "
            f"their collision shapes overlap by {1e3 * depth:.0f} mm at the URDF's zero "
            "pose, coarser than the robot"
        )


def _numbers(values) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(values))


def _full_precision(xml: str, spec, child_links: dict[str, str], params: ParamsFile) -> str:
    """``to_xml`` writes 6 significant digits (and the inertia diagonalised, its axes as a
    rounded quaternion): rewrite the body frames and the exported values at full precision."""
    root = ET.fromstring(xml)
    bodies = {body.get("name"): body for body in root.iter("body")}
    for name, body in bodies.items():  # the kinematics, as the URDF importer computed them
        source = spec.body(name)
        body.set("pos", _numbers(source.pos))
        body.set("quat", _numbers(source.quat))
    for joint, link in child_links.items():
        inertial = bodies[link].find("inertial")
        source = spec.body(link)
        for key in ("quat", "diaginertia", "fullinertia"):
            inertial.attrib.pop(key, None)
        inertial.set("pos", _numbers(source.ipos))
        inertial.set("mass", repr(float(source.mass)))
        inertial.set("fullinertia", _numbers(source.fullinertia))
        comment = params.prior_comment(joint)  # MuJoCo's to_xml drops the URDF's comments
        if comment is not None:
            bodies[link].insert(list(bodies[link]).index(inertial), ET.Comment(comment))
    for joint in root.iter("joint"):
        name = joint.get("name")
        if joint.get("axis") is not None:
            joint.set("axis", _numbers(spec.joint(name).axis))
        if name in params.joints:
            source = spec.joint(name)
            for key in ("damping", "frictionloss", "armature"):
                if joint.get(key) is not None:
                    value = np.atleast_1d(getattr(source, key))
                    joint.set(key, _numbers(value[: len(joint.get(key).split())]))
    option = root.find("option")
    if option is not None and option.get("gravity") is not None:
        option.set("gravity", _numbers(spec.option.gravity))
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"
