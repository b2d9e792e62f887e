"""Identified parameters back into a URDF, by editing the XML of the URDF they belong to.

Mapping (``params.json`` contract, docs/architecture.md): ``bodies`` is keyed by the joint that
moves the body, with ``com`` and ``inertia`` (about the centre of mass) in that joint's frame.
Pinocchio's URDF parser places a joint's frame at the child link's frame (the ``<joint><origin>``),
and merges the links hanging below that child through ``fixed`` joints into the same body. So:

- the child link of each identified joint gets the *whole* identified body: ``<inertial>`` with
  ``<origin xyz=com rpy="0 0 0">``, the mass, and the full inertia tensor in the link frame;
- links merged into it through fixed joints get an explicit zero ``<inertial>``, so the totals
  are those of ``params.json`` in every reader (PyBullet gives a link without ``<inertial>``
  1 kg, MuJoCo the mass of its collision shapes);
- joint terms go to ``<dynamics damping="viscous" friction="coulomb">`` (Pinocchio reads them
  into ``model.damping`` / ``model.friction``). URDF has no armature and no torque offset: those
  are listed in the export notes, not written, except an armature where the joint's
  ``<transmission>`` actuator holds Drake's ``<drake:rotor_inertia>``: Drake reflects it as
  ``rotor_inertia * gear_ratio^2``, so it becomes ``armature / gear_ratio^2``. The namespace
  prefixes of the URDF (``xmlns:drake``) are kept. ``coulomb_deadband`` is a speed of the friction
  model, not a parameter: it is ignored. A sigmoid or Stribeck joint (``friction_model``) is
  written as the Coulomb level with the same high-speed friction
  (:func:`physid.robot.friction.coulomb_equivalent`), with a note of what is lost.

Bodies and joints absent from ``params.json`` keep the URDF's values. Gravity is not part of a
URDF: the one used in training (``extra.gravity``) is written in a comment.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from physid.body.inertia import mass_com_inertia_from_pi
from physid.errors import InputError
from physid.files.params_file import JOINT_TERM_KEYS, ParamsFile
from physid.robot.friction import COEFFICIENTS, coulomb_equivalent
from physid.robot.model import drake_rotors

_MOVING = ("revolute", "continuous", "prismatic")
ARMATURE_NOTE = (
    "no URDF tag (MJCF: joint armature; Drake: <drake:rotor_inertia> and "
    "<drake:gear_ratio> in the joint's <transmission> actuator)"
)
_WHERE = {"armature": ARMATURE_NOTE, "offset": "no URDF or MJCF field"}


@dataclass
class UrdfExport:
    """An edited URDF tree and what could not be written into it."""

    tree: ET.ElementTree
    child_links: dict[str, str]  # identified joint -> the link that now carries its body
    notes: list[str] = field(default_factory=list)
    namespaces: dict[str, str] = field(default_factory=dict)  # the URDF's prefix -> URI
    source: str = ""  # the URDF's path

    def to_string(self) -> str:
        """The URDF as text (UTF-8 XML with a declaration), its namespace prefixes kept."""
        for prefix, uri in self.namespaces.items():
            # ElementTree's prefix registry is per process; without it Drake's tags come out
            # as ns0:rotor_inertia, which Drake ignores without a word
            if prefix and not re.fullmatch(r"ns\d+", prefix):
                ET.register_namespace(prefix, uri)
        ET.indent(self.tree, space="  ")
        body = ET.tostring(self.tree.getroot(), encoding="unicode")
        return '<?xml version="1.0"?>\n' + body + "\n"


def parse_urdf(path: str | Path) -> ET.ElementTree:
    """Parse a URDF keeping its comments; a missing file or bad XML is an InputError."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"URDF file not found: {path}")
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    try:
        tree = ET.parse(path, parser=parser)
    except ET.ParseError as error:
        raise InputError(f"cannot parse URDF: {error}", source=str(path)) from None
    if tree.getroot().tag != "robot":
        raise InputError("not a URDF: the root element is not <robot>", source=str(path))
    return tree


def _namespaces(path: str | Path) -> dict[str, str]:
    """The namespace prefixes the URDF at ``path`` declares (prefix -> URI)."""
    return {prefix: uri for _, (prefix, uri) in ET.iterparse(path, events=("start-ns",))}


def _fmt(values) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(values))


def _set_inertial(
    link: ET.Element, mass: float, com: np.ndarray, inertia: np.ndarray, comment: str | None = None
) -> None:
    """Replace the link's ``<inertial>`` by one at ``com`` with axes of the link frame, after
    ``comment`` (an XML comment) if given."""
    old = link.find("inertial")
    position = list(link).index(old) if old is not None else 0
    if old is not None:
        link.remove(old)
    inertial = ET.Element("inertial")
    ET.SubElement(inertial, "origin", xyz=_fmt(com), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=repr(float(mass)))
    names = {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2)}
    names["izz"] = (2, 2)
    ET.SubElement(inertial, "inertia", {k: repr(float(inertia[ij])) for k, ij in names.items()})
    link.insert(position, inertial)
    if comment is not None:
        link.insert(position, ET.Comment(comment))


def _fixed_descendants(root: ET.Element, link: str) -> list[str]:
    """Links reached from ``link`` through fixed joints only (merged into its body)."""
    children: dict[str, list[str]] = {}
    for joint in root.findall("joint"):
        if joint.get("type") == "fixed":
            parent, child = joint.find("parent"), joint.find("child")
            if parent is not None and child is not None:
                children.setdefault(parent.get("link"), []).append(child.get("link"))
    found, stack = [], [link]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def export_urdf(urdf: str | Path, params: ParamsFile) -> UrdfExport:
    """The URDF at ``urdf`` with the inertials and joint dynamics of ``params``."""
    tree = parse_urdf(urdf)
    root = tree.getroot()
    joints = {j.get("name"): j for j in root.findall("joint")}
    links = {link.get("name"): link for link in root.findall("link")}
    export = UrdfExport(tree, {}, namespaces=_namespaces(urdf), source=str(urdf))
    for name, pi in params.bodies.items():
        joint = joints.get(name)
        if joint is None or joint.get("type") not in _MOVING:
            raise InputError(
                f"bodies.{name}: no such moving joint in the URDF {urdf}", source=params.source
            )
        child = joint.find("child")
        child = None if child is None else child.get("link")
        if child not in links:
            raise InputError(f"joint {name}: its child link is missing", source=str(urdf))
        mass, com, inertia = mass_com_inertia_from_pi(pi)
        _set_inertial(links[child], mass, com, inertia, params.prior_comment(name))
        export.child_links[name] = child
        for merged in _fixed_descendants(root, child):
            # an explicit zero, not a missing <inertial>: Pinocchio reads both as no mass, but
            # PyBullet gives a link without one 1 kg and 1 kg m^2 and MuJoCo the mass of its
            # collision shapes (tens of N m off in PyBullet on an arm with several such links)
            _set_inertial(links[merged], 0.0, np.zeros(3), np.zeros((3, 3)))
            export.notes.append(
                f"link {merged} (fixed to {child}): inertial set to zero mass, it is part of "
                f"the identified body of {name}"
            )
    _write_joint_terms(joints, params, export)
    gravity = params.gravity
    if gravity is not None:
        root.insert(0, ET.Comment(f" physid: identified under gravity [{_fmt(gravity)}] m/s^2 "))
    root.insert(0, ET.Comment(f" physid export of {Path(params.source).name or 'params.json'} "))
    return export


def offset_note(params: ParamsFile, name: str, offset: float) -> str:
    """The note for a joint's torque offset, which neither URDF nor MJCF can hold: with its share
    of the joint's RMS torque where ``params.json`` records it (``joint_prior.torque_rms``), since
    the exported model's torque misses it by that much everywhere."""
    rms = ((params.document.get("joint_prior") or {}).get("torque_rms") or {}).get(name)
    share = (
        (
            f" ({100 * abs(offset) / rms:.2g} % of the joint's RMS torque {rms:.3g}: the exported "
            "model's torque misses it everywhere)"
        )
        if rms
        else ""
    )
    return f"joint {name}: torque offset {offset:.6g}: {_WHERE['offset']}{share}"


def linear_friction(params: ParamsFile, name: str, notes: list[str]) -> dict[str, float]:
    """The joint terms of ``name`` as a linear model (``viscous``, ``coulomb``, ``offset``,
    ``armature``, as present): a sigmoid or Stribeck joint's speed-dependent friction becomes
    its high-speed Coulomb equivalent, and a note says so."""
    terms = dict(params.joints[name])
    kind = params.friction_models.get(name, "linear")
    if kind == "linear":
        return terms
    k = list(params.joints).index(name)
    shape = params.friction_shapes(tuple(params.joints))[k]
    coefficients = {
        term: terms.get(JOINT_TERM_KEYS[term], 0.0) for term in (*COEFFICIENTS[kind], "offset")
    }
    coulomb, offset = coulomb_equivalent(kind, shape, coefficients)
    notes.append(
        f"joint {name}: {kind} friction written as its high-speed Coulomb level {coulomb:.6g}"
        + (f" and offset {offset:.6g}" if offset else "")
        + (
            "; the static level and the Stribeck decay are not representable"
            if kind == "stribeck"
            else "; the smooth transition around zero speed is not representable"
        )
    )
    terms["coulomb"] = coulomb
    if offset:
        terms["offset"] = offset
    return terms


def _write_joint_terms(joints: dict, params: ParamsFile, export: UrdfExport) -> None:
    # a URDF written for Drake holds an armature as its transmission's rotor inertia, which
    # Drake reflects as rotor_inertia * gear_ratio^2 (physid.robot.model.drake_rotors)
    rotors = drake_rotors(export.tree.getroot(), export.source)
    for name in params.joints:
        joint = joints.get(name)
        if joint is None or joint.get("type") not in _MOVING:
            raise InputError(
                f"joints.{name}: no such moving joint in the URDF", source=params.source
            )
        terms = linear_friction(params, name, export.notes)
        values = {
            "damping": terms.get("viscous"),
            "friction": terms.get("coulomb"),
        }
        values = {k: v for k, v in values.items() if v is not None}
        if values:
            dynamics = joint.find("dynamics")
            if dynamics is None:
                dynamics = ET.SubElement(joint, "dynamics")
            for key, value in values.items():
                dynamics.set(key, repr(float(value)))
        if "armature" in terms and name in rotors:
            rotor, ratio = rotors[name]
            rotor.set("value", repr(float(terms["armature"]) / ratio**2))
        elif terms.get("armature"):
            export.notes.append(
                f"joint {name}: armature {terms['armature']:.6g}: {_WHERE['armature']}"
            )
        if terms.get("offset"):
            export.notes.append(offset_note(params, name, terms["offset"]))
    coupled = dict(params.extra.get("coupled_motors") or {})
    for motor in coupled:
        export.notes.append(
            f"coupled motor {motor} (Iam, fvm, fcm): not representable in a URDF or MJCF"
        )
