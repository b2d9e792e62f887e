"""The ``params.json`` contract (DESIGN.md): writing it from standard parameters, reading it back.

``bodies`` is keyed by the name of the joint that moves the body; ``com`` is in that joint's frame
and ``inertia`` is about the centre of mass, in that frame. ``joints`` holds the friction and
armature terms; ``extra`` the coupled-motor terms and the gravity vector used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from physid.errors import InputError
from physid.inertia import check_consistency, mass_com_inertia_from_pi, pi_from_mass_com_inertia
from physid.model import COUPLED_MOTOR_TERM_NAMES, RobotModel

FORMAT = "physid.params/1"
JOINT_TERM_KEYS = {"fv": "viscous", "fc": "coulomb", "offset": "offset", "Ia": "armature"}
DEADBAND_KEY = "coulomb_deadband"  # per joint, the joint's units/s: |dq| below it -> sign 0


@dataclass(frozen=True)
class ParamsFile:
    """A parsed ``params.json``: per-body inertial data plus everything else as read."""

    bodies: dict[str, np.ndarray]  # joint name -> pi (10,) in Pinocchio order
    joints: dict[str, dict[str, float]]
    extra: dict = field(default_factory=dict)
    document: dict = field(default_factory=dict)
    source: str = ""

    def coulomb_deadband(self, joint_names: tuple[str, ...]) -> np.ndarray | None:
        """The per-joint Coulomb deadband the file was identified with (None: none recorded)."""
        values = [self.joints.get(joint, {}).get(DEADBAND_KEY) for joint in joint_names]
        if all(value is None for value in values):
            return None
        for joint, value in zip(joint_names, values, strict=True):
            if value is not None and value < 0:
                raise InputError(f"joints.{joint}.{DEADBAND_KEY}: must be >= 0", source=self.source)
        return np.array([0.0 if value is None else value for value in values])

    @property
    def gravity(self) -> np.ndarray | None:
        value = self.extra.get("gravity")
        return None if value is None else np.asarray(value, dtype=float)


def params_document(model: RobotModel, theta: np.ndarray) -> dict:
    """The ``bodies``, ``joints`` and ``extra`` sections for standard parameters ``theta``."""
    layout = model.layout
    bodies = {}
    for joint in layout.body_joints:
        mass, com, inertia = mass_com_inertia_from_pi(theta[layout.body_slice(joint)])
        bodies[joint] = {"mass": float(mass), "com": com.tolist(), "inertia": inertia.tolist()}
    joints = {
        joint: {
            JOINT_TERM_KEYS[term]: float(theta[layout.index(f"{joint}.{term}")])
            for term in layout.joint_terms
        }
        for joint in layout.joint_names
    }
    if model.coulomb_deadband is not None:  # part of the friction model: sign(dq) = 0 below it
        for joint, deadband in zip(layout.joint_names, model.coulomb_deadband, strict=True):
            joints[joint][DEADBAND_KEY] = float(deadband)
    coupled = {
        motor: {
            term: float(theta[layout.index(f"{motor}.{term}")]) for term in COUPLED_MOTOR_TERM_NAMES
        }
        for motor in layout.coupled_motor_names
    }
    extra = {"gravity": model.pin_model.gravity.linear.tolist()}
    if coupled:
        extra["coupled_motors"] = coupled
    return {"bodies": bodies, "joints": joints, "extra": extra}


_ANNOTATION_KEYS = ("std", "source", "prior")  # per body / joint, beside the values


def annotate_document(
    document: dict,
    model: RobotModel,
    theta: np.ndarray,
    prior: np.ndarray,
    theta_std: np.ndarray,
    sources: tuple[str, ...],
    bodies_std: dict[str, dict],
) -> dict:
    """Add, beside every body's and joint's values, its standard deviation, its ``source``
    (``data`` / ``regrouped`` / ``prior``) and the URDF prior value (DESIGN.md: every reported
    quantity says where it came from)."""
    layout = model.layout
    prior_doc = params_document(model, prior)
    for joint, body in document["bodies"].items():
        uncertainty = bodies_std[joint]
        body["std"] = {k: uncertainty[k] for k in ("mass", "com", "inertia")}
        body["source"] = uncertainty["source"]
        body["prior"] = prior_doc["bodies"][joint]
    for joint, terms in document["joints"].items():
        indices = {
            key: layout.index(f"{joint}.{term}")
            for term, key in JOINT_TERM_KEYS.items()
            if term in layout.joint_terms
        }
        terms["std"] = {key: float(theta_std[i]) for key, i in indices.items()}
        terms["source"] = {key: sources[i] for key, i in indices.items()}
        terms["prior"] = {key: float(prior[i]) for key, i in indices.items()}
    document["standard_parameters"] = {
        "names": list(layout.names),
        "values": theta.tolist(),
        "std": theta_std.tolist(),
        "prior": prior.tolist(),
        "source": list(sources),
    }
    return document


def _number(value, where: str, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        raise InputError(f"{where}: expected a finite number, got {value!r}", source=source)
    return float(value)


def _body_pi(name: str, body: dict, source: str) -> np.ndarray:
    try:
        mass = _number(body["mass"], f"bodies.{name}.mass", source)
        com = np.array([_number(v, f"bodies.{name}.com", source) for v in body["com"]])
        inertia = np.array(
            [[_number(v, f"bodies.{name}.inertia", source) for v in row] for row in body["inertia"]]
        )
    except (KeyError, TypeError) as error:
        raise InputError(
            f"bodies.{name}: needs mass, com [3] and inertia [3x3] ({error})", source=source
        ) from None
    if com.shape != (3,) or inertia.shape != (3, 3):
        raise InputError(f"bodies.{name}: com must have 3 entries and inertia 3x3", source=source)
    pi = pi_from_mass_com_inertia(mass, com, inertia)
    report = check_consistency(pi, name=name)
    if not report.consistent:
        raise InputError(
            f"bodies.{name} is not physically consistent: {report.reason}", source=source
        )
    return pi


def read_params(path: str | Path) -> ParamsFile:
    """Read and validate a ``params.json`` (every body must be physically consistent)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"parameter file not found: {path}")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error}", source=str(path)) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(
            f"not a physid parameter file ('format' must be '{FORMAT}')", source=str(path)
        )
    bodies = {
        str(name): _body_pi(str(name), body, str(path))
        for name, body in dict(document.get("bodies") or {}).items()
    }
    joints = {
        str(name): {
            str(k): _number(v, f"joints.{name}.{k}", str(path))
            for k, v in dict(terms).items()
            if k not in _ANNOTATION_KEYS
        }
        for name, terms in dict(document.get("joints") or {}).items()
    }
    return ParamsFile(bodies, joints, dict(document.get("extra") or {}), document, str(path))


def standard_parameters(model: RobotModel, params: ParamsFile) -> np.ndarray:
    """The model's standard parameter vector with the values of ``params``.

    Bodies and terms absent from the file keep the model's prior; names in the file that the
    model does not have are an error (a file for another robot must not half-apply).
    """
    layout = model.layout
    theta = model.prior_parameters()
    for joint, pi in params.bodies.items():
        if joint not in layout.body_joints:
            raise InputError(f"bodies.{joint}: no such body in the model", source=params.source)
        theta[layout.body_slice(joint)] = pi
    inverse_keys = {v: k for k, v in JOINT_TERM_KEYS.items()}
    for joint, terms in params.joints.items():
        if joint not in layout.joint_names:
            raise InputError(f"joints.{joint}: no such joint in the model", source=params.source)
        for key, value in terms.items():
            if key == DEADBAND_KEY:
                continue  # not a parameter: see ParamsFile.coulomb_deadband
            term = inverse_keys.get(key)
            if term is None:
                raise InputError(f"joints.{joint}.{key}: unknown term", source=params.source)
            index = layout.joint_term_index(joint, term)
            if index is not None:
                theta[index] = value
    for motor, terms in dict(params.extra.get("coupled_motors") or {}).items():
        for term, value in dict(terms).items():
            name = f"{motor}.{term}"
            if name in layout.names:
                theta[layout.index(name)] = _number(
                    value, f"extra.coupled_motors.{name}", params.source
                )
    return theta


def apply_inertias(pin_model: pin.Model, params: ParamsFile) -> pin.Model:
    """A copy of a Pinocchio model whose bodies named in ``params`` get its inertias."""
    model = pin_model.copy()
    for joint, pi in params.bodies.items():
        if not model.existJointName(joint):
            raise InputError(f"bodies.{joint}: no such joint in the model", source=params.source)
        model.inertias[model.getJointId(joint)] = pin.Inertia.FromDynamicParameters(pi)
    if params.gravity is not None:
        model.gravity = pin.Motion(params.gravity, np.zeros(3))
    return model
