"""Identified parameters written back into the user's own MJCF.

A robot described in MJCF (:mod:`physid.robot.mjcf`) is exported by editing that file's XML,
so that everything physid did not identify stays as the user wrote it — meshes, actuators,
contacts, defaults and classes, sensors, comments, number formatting:

- the body that carries each identified joint gets an explicit ``<inertial pos mass
  fullinertia>`` with the identified values, moved from the joint frame (where ``params.json``
  holds them) into the body frame; bodies welded to it without a joint of their own, which
  Pinocchio fuses into the same rigid body, get a massless ``<inertial>`` so that their mass is
  not counted twice (the identified body is their sum);
- the joint gets ``damping`` (viscous), ``frictionloss`` (Coulomb; a sigmoid or Stribeck joint its
  high-speed equivalent) and ``armature`` as attributes, which override the defaults' values;
- ``<option gravity>`` becomes the gravity of training (an estimated base tilt);
- ``<compiler inertiafromgeom="true">`` (geoms override explicit inertials) becomes ``auto``;
- written to another folder, the relative ``<include file>``, ``meshdir`` and ``texturedir`` are
  made absolute so the meshes are still found.

The result is compiled by MuJoCo and its body masses are compared with ``params.json``.
Not representable: torque offsets, coupled-motor terms, the Coulomb deadband.
"""

from __future__ import annotations

import copy
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin

from physid.body.inertia import mass_com_inertia_from_pi, pin_inertia
from physid.errors import InputError
from physid.export.urdf import linear_friction, offset_note
from physid.files.params_file import PRIOR_MARK, ParamsFile


def _numbers(values) -> str:
    return " ".join(repr(float(v)) for v in np.atleast_1d(values))


def _parse(path: Path) -> ET.ElementTree:
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    try:
        return ET.parse(path, parser)
    except ET.ParseError as error:
        raise InputError(f"cannot parse MJCF: {error}", source=str(path)) from None


def _body_of_joint(root: ET.Element, joint: str, source: str) -> ET.Element:
    """The ``<body>`` whose own ``<joint>`` is named ``joint`` (in this file, not an include)."""
    for body in root.iter("body"):
        if any(j.get("name") == joint for j in body.findall("joint")):
            return body
    raise InputError(
        f"joint '{joint}' of params.json is not a <joint> of this file (defined in an "
        "<include>d file, or another robot): the export edits the file given",
        source=source,
    )


def _welded_children(body: ET.Element) -> list[ET.Element]:
    """Bodies below ``body`` rigidly attached to it (no joint between)."""
    welded = []
    for child in body.findall("body"):
        if child.find("joint") is None and child.find("freejoint") is None:
            welded.append(child)
            welded.extend(_welded_children(child))
    return welded


def _set_inertial(body: ET.Element, mass: float, com, inertia: np.ndarray) -> None:
    inertial = body.find("inertial")
    if inertial is None:
        inertial = ET.Element("inertial")
        body.insert(0, inertial)
    inertial.attrib.clear()
    inertial.set("pos", _numbers(com))
    inertial.set("mass", repr(float(mass)))
    if mass == 0.0:  # MuJoCo wants positive eigenvalues of a fullinertia, not of a diagonal
        inertial.set("diaginertia", "0 0 0")
        return
    full = [
        inertia[0, 0],
        inertia[1, 1],
        inertia[2, 2],
        inertia[0, 1],
        inertia[0, 2],
        inertia[1, 2],
    ]
    inertial.set("fullinertia", _numbers(full))


def set_joint_attributes(
    root: ET.Element, joint: str, attributes: dict[str, float], source: str
) -> None:
    """Attributes (``damping``, ``frictionloss``, ``armature``) of the ``<joint>`` named
    ``joint``, at full precision; they override the defaults' values."""
    element = next((j for j in root.iter("joint") if j.get("name") == joint), None)
    if element is None:
        raise InputError(f"joint '{joint}' is not a <joint> of this file", source=source)
    for key, value in attributes.items():
        element.set(key, repr(float(value)))


def set_actuator_attributes(
    root: ET.Element, actuator: str, values: dict[str, float], tuned, source: str
) -> None:
    """A tuned actuator written back into its own element (``physid simfit``): a
    ``<position>``'s ``kp``/``kv``; a ``<motor>``'s ``gain`` as its ``gear`` times the gain (a
    motor's force is ``gear * ctrl``); a ``<general>``'s ``gainprm``/``biasprm`` as ``tuned``
    (the tuned ``mujoco.MjModel``) holds them."""
    import mujoco

    section = [e for block in root.iter("actuator") for e in block]
    element = next((e for e in section if e.get("name") == actuator), None)
    if element is None:
        raise InputError(
            f"actuator '{actuator}' is not an element of <actuator> in this file", source=source
        )
    index = mujoco.mj_name2id(tuned, mujoco.mjtObj.mjOBJ_ACTUATOR, actuator)
    if element.tag == "position":
        for key in ("kp", "kv"):
            if key in values:
                element.set(key, repr(float(values[key])))
    elif element.tag == "motor" and set(values) <= {"gain"}:
        gear = tuned.actuator_gear[index] * float(values.get("gain", 1.0))
        element.set("gear", _numbers(gear))
    elif element.tag == "general":
        element.set("gainprm", _numbers(tuned.actuator_gainprm[index]))
        element.set("biasprm", _numbers(tuned.actuator_biasprm[index]))
    else:
        raise InputError(
            f"actuator '{actuator}' is a <{element.tag}>: physid writes tuned <position>, "
            "<motor> and <general> actuators only",
            source=source,
        )


def with_joint_values(
    mjcf: str | Path,
    values: dict[str, dict[str, float]],
    out: str | Path | None = None,
    actuators: dict[str, dict[str, float]] | None = None,
    tuned=None,  # noqa: ANN001 - the tuned mujoco.MjModel, with ``actuators``
) -> tuple[str, list[str]]:
    """The user's MJCF text with the joint attributes of ``values`` and the actuator terms of
    ``actuators`` (``physid simfit``), the rest untouched (paths made absolute when written
    elsewhere), and notes."""
    mjcf = Path(mjcf)
    root = _parse(mjcf).getroot()
    notes: list[str] = []
    for joint, attributes in values.items():
        set_joint_attributes(root, joint, attributes, str(mjcf))
    for actuator, attributes in (actuators or {}).items():
        set_actuator_attributes(root, actuator, attributes, tuned, str(mjcf))
    if out is not None and Path(out).resolve().parent != mjcf.resolve().parent:
        _absolute_paths(root, mjcf.resolve().parent, notes)
    _compiled(root, mjcf, "tuned")
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n", notes


def _absolute_paths(root: ET.Element, source_dir: Path, notes: list[str]) -> None:
    files = [
        e
        for kind in ("include", "mesh", "texture", "hfield", "skin")
        for e in root.iter(kind)
        if e.get("file")
    ]
    if not files:  # nothing is read from a file: the paths need not move
        return
    for include in root.iter("include"):
        file = include.get("file")
        if file and not os.path.isabs(file):
            include.set("file", str((source_dir / file).resolve()))
    # only the directories the file's assets use (a file without textures gets no texturedir);
    # an included file's assets are not seen here: both, then
    kinds = {e.tag for e in files}
    directories = (
        ("meshdir", {"mesh", "hfield", "skin", "include"}),
        ("texturedir", {"texture", "include"}),
    )
    used = [key for key, tags in directories if kinds & tags]
    changed = ["<include>"] if "include" in kinds else []
    compiler = root.find("compiler")
    if compiler is None:
        compiler = ET.Element("compiler")
        root.insert(0, compiler)
    for key in used:
        given = compiler.get(key) or compiler.get("assetdir") or ""
        if not os.path.isabs(given):
            compiler.set(key, str((source_dir / given).resolve()))
            changed.append(key)
    if changed:
        notes.append(
            f"written to another folder than {source_dir}, the model's: "
            f"{', '.join(changed)} made absolute so its files are found"
        )


def export_into_mjcf(
    mjcf: str | Path, params: ParamsFile, out: str | Path | None = None
) -> tuple[str, list[str]]:
    """The user's MJCF text with the parameters of ``params`` (module docstring), and notes."""
    import mujoco

    from physid.robot.mjcf import compile_mjcf, load_mjcf, pinocchio_world_rotation

    mjcf = Path(mjcf)
    source = str(mjcf)
    pm = load_mjcf(mjcf)
    pd = pm.createData()
    pin.framesForwardKinematics(pm, pd, pin.neutral(pm))
    tree = _parse(mjcf)
    root = tree.getroot()
    notes: list[str] = []
    for joint, pi in params.bodies.items():
        if not pm.existJointName(joint):
            raise InputError(f"bodies.{joint}: no such joint in the MJCF", source=params.source)
        body = _body_of_joint(root, joint, source)
        name = body.get("name")
        joint_in_body = pd.oMf[pm.getFrameId(name, pin.FrameType.BODY)].actInv(
            pd.oMi[pm.getJointId(joint)]
        )
        mass, com, inertia = mass_com_inertia_from_pi(
            joint_in_body.act(pin_inertia(pi)).toDynamicParameters()
        )
        _set_inertial(body, mass, com, inertia)
        for old in [c for c in body if c.tag is ET.Comment and PRIOR_MARK in (c.text or "")]:
            body.remove(old)  # a file exported before: marked as this export says
        comment = params.prior_comment(joint)
        if comment is not None:
            body.insert(list(body).index(body.find("inertial")), ET.Comment(comment))
        for welded in _welded_children(body):
            _set_inertial(welded, 0.0, np.zeros(3), np.zeros((3, 3)))
            notes.append(
                f"body '{welded.get('name')}' is welded to '{name}': the identified inertia of "
                f"'{joint}' is their sum, written on '{name}' ('{welded.get('name')}' massless)"
            )
    for name in params.joints:
        terms = linear_friction(params, name, notes)
        attributes = {}
        for key, mjcf_key in (
            ("viscous", "damping"),
            ("coulomb", "frictionloss"),
            ("armature", "armature"),
        ):
            value = terms.get(key)
            if value is not None and value < 0:
                notes.append(f"joint {name}: {key} {value:.6g} < 0: MuJoCo needs >= 0, left at 0")
                value = 0.0
            if value is not None:
                attributes[mjcf_key] = value
        set_joint_attributes(root, name, attributes, source)
        if terms.get("offset"):
            notes.append(offset_note(params, name, terms["offset"]))
    compiler = root.find("compiler")
    if compiler is not None and compiler.get("inertiafromgeom") == "true":
        compiler.set("inertiafromgeom", "auto")
        notes.append("compiler inertiafromgeom 'true' (geoms override <inertial>) set to 'auto'")
    if params.gravity is not None:
        option = root.find("option")
        if option is None:
            option = ET.Element("option")
            root.insert(0, option)
        # identified in Pinocchio's world (the root body's frame), written in MuJoCo's
        rotation = pinocchio_world_rotation(pm, compile_mjcf(mjcf))
        option.set("gravity", _numbers(rotation @ np.asarray(params.gravity, float)))
    if out is not None and Path(out).resolve().parent != mjcf.resolve().parent:
        _absolute_paths(root, mjcf.resolve().parent, notes)
    unidentified = [
        pm.names[k]
        for k in range(1, pm.njoints)
        if pm.names[k] not in params.bodies and pm.inertias[k].mass > 0
    ]
    if unidentified:
        notes.append(
            f"bodies of joints not in params.json kept as in the file: {', '.join(unidentified)} "
            "(joints locked for the identification)"
        )
    _check_masses(root, mjcf, params, mujoco)
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n", notes


def _compiled(root: ET.Element, mjcf: Path, what: str):
    """MuJoCo's model of the edited XML (compiled from a copy whose paths are absolute, so the
    meshes of ``mjcf``'s folder are found), or one error line."""
    import mujoco

    checked = copy.deepcopy(root)
    _absolute_paths(checked, mjcf.resolve().parent, [])
    text = ET.tostring(checked, encoding="unicode")
    try:
        return mujoco.MjModel.from_xml_string(text)
    except ValueError as error:
        if "Error opening file" in str(error):  # meshes not given: checked without them
            from physid.robot.mjcf import without_missing_meshes

            model = without_missing_meshes(mujoco.MjSpec.from_string(text), Path("/"), str(mjcf))
            if model is not None:
                return model
        raise InputError(
            f"MuJoCo rejects the {what} model: {' '.join(str(error).split())}", source=str(mjcf)
        ) from None


def _check_masses(root: ET.Element, mjcf: Path, params: ParamsFile, mujoco) -> None:
    """MuJoCo compiles the edited file (paths made absolute for it), and the body of each
    identified joint weighs what ``params.json`` says."""
    model = _compiled(root, mjcf, "exported")
    for joint, pi in params.bodies.items():
        j = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, joint)
        mass = float(model.body_mass[model.jnt_bodyid[j]])
        if not np.isclose(mass, pi[0], rtol=1e-9, atol=1e-12):
            raise InputError(
                f"the exported body of '{joint}' weighs {mass:.9g} kg in MuJoCo, "
                f"not {pi[0]:.9g} kg: not exported",
                source=str(mjcf),
            )
