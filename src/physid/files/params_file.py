"""The ``params.json`` contract (docs/architecture.md): writing it from standard parameters, reading
it back.

``bodies`` is keyed by the name of the joint that moves the body; ``com`` is in that joint's frame
and ``inertia`` is about the centre of mass, in that frame. ``joints`` holds the friction and
armature terms; ``extra`` the coupled-motor terms and the gravity vector used.

A joint with a nonlinear friction model (:mod:`physid.robot.friction`) also has ``friction_model``
(``"sigmoid"`` or ``"stribeck"``), its linear coefficients (``phi1``; ``coulomb`` and ``static``)
and its shape parameters (``phi2``, ``phi3``; ``stribeck_velocity``); a joint without
``friction_model`` is linear.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

from physid.body.inertia import (
    check_consistency,
    mass_com_inertia_from_pi,
    pi_from_mass_com_inertia,
    pin_inertia,
)
from physid.errors import InputError
from physid.files.config import RANGES, RECORDED
from physid.files.io import read_text_file
from physid.robot.friction import FRICTION_MODELS, SHAPE_PARAMETERS
from physid.robot.model import COUPLED_MOTOR_TERM_NAMES, RobotModel

FORMAT = "physid.params/1"
JOINT_TERM_KEYS = {
    "fv": "viscous",
    "fc": "coulomb",
    "fs": "static",  # Stribeck: the friction level at rest
    "phi1": "phi1",  # sigmoid: the amplitude
    "offset": "offset",
    "Ia": "armature",
}
PRIOR_MARK = "physid: the data do not determine"  # opens the comments exporters write
DEADBAND_KEY = "coulomb_deadband"  # per joint, the joint's units/s: |dq| below it -> sign 0
FRICTION_MODEL_KEY = "friction_model"  # absent: linear
SHAPE_KEYS = {"phi2": "phi2", "phi3": "phi3", "vs": "stribeck_velocity"}  # not parameters


@dataclass(frozen=True)
class ParamsFile:
    """A parsed ``params.json``: per-body inertial data plus everything else as read."""

    bodies: dict[str, np.ndarray]  # joint name -> pi (10,) in Pinocchio order
    joints: dict[str, dict[str, float]]
    extra: dict = field(default_factory=dict)
    document: dict = field(default_factory=dict)
    source: str = ""
    friction_models: dict[str, str] = field(default_factory=dict)  # nonlinear joints only

    def drive_gains(self) -> dict[str, float]:
        """``extra.drive_gains`` as ``{joint: gain}`` (N m/A, joint side; the values an
        identification with ``drive_gains: identify`` estimated); {} when the file has none."""
        recorded = self.extra.get("drive_gains") or {}
        if not isinstance(recorded, dict):
            raise InputError("extra.drive_gains: expected a mapping", source=self.source)
        gains = {}
        for joint, entry in recorded.items():
            where = f"extra.drive_gains.{joint}.value"
            value = _number(
                entry.get("value") if isinstance(entry, dict) else None, where, self.source
            )
            if value <= 0:
                raise InputError(f"{where}: must be > 0, got {value!r}", source=self.source)
            gains[str(joint)] = value
        return gains

    def friction_shapes(self, joint_names: tuple[str, ...]) -> tuple[tuple[float, ...], ...]:
        """Per joint of ``joint_names``, the shape parameters of its friction model
        (:data:`physid.robot.friction.SHAPE_PARAMETERS` order; () for a linear joint)."""
        shapes = []
        for joint in joint_names:
            kind = self.friction_models.get(joint, "linear")
            terms = self.joints.get(joint, {})
            shape = []
            for name in SHAPE_PARAMETERS[kind]:
                key = SHAPE_KEYS[name]
                if key not in terms:
                    raise InputError(
                        f"joints.{joint}.{key}: missing (the {kind} friction model needs it)",
                        source=self.source,
                    )
                if name != "phi3" and terms[key] <= 0:
                    raise InputError(f"joints.{joint}.{key}: must be > 0", source=self.source)
                shape.append(float(terms[key]))
            shapes.append(tuple(shape))
        return tuple(shapes)

    def coulomb_deadband(self, joint_names: tuple[str, ...]) -> np.ndarray | None:
        """The per-joint Coulomb deadband the file was identified with (None: none recorded)."""
        values = [self.joints.get(joint, {}).get(DEADBAND_KEY) for joint in joint_names]
        if all(value is None for value in values):
            return None
        for joint, value in zip(joint_names, values, strict=True):
            if value is not None and value < 0:
                raise InputError(f"joints.{joint}.{DEADBAND_KEY}: must be >= 0", source=self.source)
        return np.array([0.0 if value is None else value for value in values])

    def locked_unlogged(self) -> dict[str, float | str]:
        """The joints its identification held still because no recording logged them
        (``provenance.locked_unlogged``): joint -> position [rad or m], or ``recorded`` for a
        mimic joint held at its recorded positions; {} when none."""
        return self._locks("locked_unlogged")

    def held_joints(self) -> dict[str, float | str]:
        """Every joint its identification held still: the config's ``locked:``
        (``provenance.locked_by_config``) and those no recording logged, as
        :meth:`locked_unlogged`; {} when none (a file written before either was recorded)."""
        return {**self._locks("locked_by_config"), **self.locked_unlogged()}

    def _locks(self, key: str) -> dict[str, float | str]:
        held = (self.document.get("provenance") or {}).get(key) or {}
        if not isinstance(held, dict):
            raise InputError(
                f"provenance.{key}: expected a mapping of joints to positions, got {held!r}",
                source=self.source,
            )
        return {
            str(joint): value
            if value == RECORDED
            else _number(value, f"provenance.{key}.{joint}", self.source)
            for joint, value in held.items()
        }

    def residual_rms(self, joint_names: tuple[str, ...]) -> np.ndarray | None:
        """Per joint of ``joint_names``, the RMS torque residual of the identification on its
        training data (``fit.train.rmse``, N m or N); None when the file does not give one for
        every joint (an exported or hand-written file)."""
        values = self._train_per_joint("rmse", joint_names)
        return None if values is None or not np.all(values > 0) else values

    def residual_correlation_time(self, joint_names: tuple[str, ...]) -> np.ndarray | None:
        """Per joint of ``joint_names``, the integrated correlation time [s] of the
        identification's training residual (``fit.train.residual_correlation_time_s``); None
        when the file does not give it for every joint."""
        values = self._train_per_joint("residual_correlation_time_s", joint_names)
        if values is not None and np.any(values < 0):
            raise InputError(
                "fit.train.residual_correlation_time_s: must be >= 0", source=self.source
            )
        return values

    def _train_per_joint(self, key: str, joint_names: tuple[str, ...]) -> np.ndarray | None:
        """``fit.train.<key>`` (joint -> number) for every joint of ``joint_names``, checked;
        None when the file does not give it for every one."""
        fit = self.document.get("fit")
        train = fit.get("train") if isinstance(fit, dict) else None
        per_joint = train.get(key) if isinstance(train, dict) else None
        if not isinstance(per_joint, dict) or any(j not in per_joint for j in joint_names):
            return None
        return np.array(
            [
                _number(per_joint[joint], f"fit.train.{key}.{joint}", self.source)
                for joint in joint_names
            ]
        )

    def prior_decided(self) -> dict[str, str]:
        """Per body (joint name) whose ``mass``, ``com`` or ``inertia`` the URDF prior decides
        (``source: prior`` in params.json: the data do not determine them), those quantities
        as one phrase; what exporters mark in the files they write."""
        decided = {}
        for joint, body in (self.document.get("bodies") or {}).items():
            sources = body.get("source") if isinstance(body, dict) else None
            if isinstance(sources, dict):
                prior = [key for key in ("mass", "com", "inertia") if sources.get(key) == "prior"]
                if prior:
                    decided[joint] = ", ".join(prior)
        return decided

    def prior_comment(self, joint: str) -> str | None:
        """The XML comment text that marks a body's prior-decided quantities, or None."""
        quantities = self.prior_decided().get(joint)
        if quantities is None:
            return None
        return (
            f" {PRIOR_MARK} the {quantities} of {joint}'s body: the "
            "prior toward the URDF's values and the consistency constraints set them "
            "(params.json source 'prior') "
        )

    def prior_note(self) -> str | None:
        """One line for an exporter's notes: the bodies :meth:`prior_comment` marks, or None."""
        decided = self.prior_decided()
        if not decided:
            return None
        listed = "; ".join(f"{joint} ({what})" for joint, what in decided.items())
        return (
            f"the data do not determine these bodies' inertials (the prior sets them; marked "
            f"in the file): {listed}"
        )

    @property
    def torque_delay_s(self) -> float:
        """The torque delay the identification compensated [s] (``fit.torque_delay.compensated_s``,
        :func:`physid.offline.choose.delay.compensated`; 0 when absent): part of the identified
        model."""
        fit = self.document.get("fit")
        delay = fit.get("torque_delay") if isinstance(fit, dict) else None
        value = delay.get("compensated_s") if isinstance(delay, dict) else None
        if value is None:
            return 0.0
        where = "fit.torque_delay.compensated_s"
        low, high = RANGES["estimation.torque_delay"]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not low <= value <= high:
            raise InputError(
                f"{where}: expected a delay in seconds within [{low:g}, {high:g}], got {value!r}",
                source=self.source,
            )
        return float(value)

    @property
    def gravity(self) -> np.ndarray | None:
        value = self.extra.get("gravity")
        if value is None:
            return None
        if not isinstance(value, list) or len(value) != 3:
            raise InputError("extra.gravity: expected 3 numbers [m/s^2]", source=self.source)
        return np.array([_number(v, "extra.gravity", self.source) for v in value])


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
            for term in layout.terms_of(joint)
        }
        for joint in layout.joint_names
    }
    for k, joint in enumerate(layout.joint_names):
        kind = layout.friction_of(joint)
        if kind != "linear":
            joints[joint][FRICTION_MODEL_KEY] = kind
            for name, value in zip(SHAPE_PARAMETERS[kind], model.shape_of(k), strict=True):
                joints[joint][SHAPE_KEYS[name]] = value
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
    return {"robot": robot_section(model), "bodies": bodies, "joints": joints, "extra": extra}


def robot_fingerprint(pin_model: pin.Model) -> str:
    """A hash of the kinematics: per joint its name, type, axis, parent and placement, rounded
    to 1e-9 (inertias excluded: identifying them is the point). Two URDFs with the same joint
    names but another geometry get different fingerprints."""
    import hashlib

    def rounded(values) -> str:
        return ",".join(f"{round(float(v), 9) + 0.0:.9f}" for v in np.ravel(values))

    parts = []
    for joint_id in range(1, pin_model.njoints):
        joint = pin_model.joints[joint_id]
        axis = getattr(joint.extract(), "axis", None)
        placement = pin_model.jointPlacements[joint_id]
        parts.append(
            "|".join(
                [
                    pin_model.names[joint_id],
                    joint.shortname(),
                    "" if axis is None else rounded(axis),
                    str(pin_model.parents[joint_id]),
                    rounded(placement.translation),
                    rounded(placement.rotation),
                ]
            )
        )
    return "sha256:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def robot_section(model: RobotModel) -> dict:
    """The ``robot`` section: which robot a parameter file belongs to."""
    pin_model = model.pin_model
    return {
        "joint_names": list(model.joint_names),
        "joint_types": [
            pin_model.joints[pin_model.getJointId(j)].shortname().removeprefix("JointModel")
            for j in model.joint_names
        ],
        "kinematic_fingerprint": robot_fingerprint(pin_model),
        "urdf": model.source,
    }


def check_same_robot(model: RobotModel, params: ParamsFile) -> None:
    """Refuse a parameter file identified on another robot (joint names or kinematics differ).

    Files written before the ``robot`` section existed are accepted.
    """
    recorded = _section(params.document.get("robot"), "robot", params.source)
    if not recorded:
        return
    mine = robot_section(model)
    names = recorded.get("joint_names")
    if names is not None and names != mine["joint_names"]:
        raise InputError(
            f"identified on a robot with joints {names}, but the URDF {model.source} has "
            f"{mine['joint_names']}",
            source=params.source,
        )
    fingerprint = recorded.get("kinematic_fingerprint")
    if fingerprint is not None and fingerprint != mine["kinematic_fingerprint"]:
        urdf = recorded.get("urdf") if isinstance(recorded.get("urdf"), str) else "another URDF"
        raise InputError(
            f"identified on another robot ({urdf}): its kinematic fingerprint differs from that "
            f"of {model.source} (joint axes or placements changed)",
            source=params.source,
        )


_ANNOTATION_KEYS = ("std", "source", "prior", "confounded_with")  # beside the values


def annotate_document(
    document: dict,
    model: RobotModel,
    theta: np.ndarray,
    prior: np.ndarray,
    theta_std: np.ndarray,
    sources: tuple[str, ...],
    bodies_std: dict[str, dict],
    shape_std: dict[str, float] | None = None,
) -> dict:
    """Add, beside every body's and joint's values, its standard deviation, its ``source`` (``data``
    / ``regrouped`` / ``prior``) and the URDF prior value (docs/architecture.md: every reported
    quantity says where it came from). ``shape_std``: the standard deviation of every fitted
    friction shape parameter, keyed ``<joint>.<shape>``
    (:mod:`physid.offline.choose.friction_shapes`).
    """
    layout = model.layout
    prior_doc = params_document(model, prior)
    for joint, body in document["bodies"].items():
        uncertainty = bodies_std[joint]
        body["std"] = {k: uncertainty[k] for k in ("mass", "com", "inertia")}
        body["source"] = uncertainty["source"]
        body["prior"] = prior_doc["bodies"][joint]
    theta_std = np.array(theta_std, dtype=float)
    for k, joint in enumerate(layout.joint_names):
        if not model.fitted[k]:  # its torque is in no equation: its terms' std is undefined
            theta_std[[layout.index(f"{joint}.{t}") for t in layout.terms_of(joint)]] = np.nan
    for joint, terms in document["joints"].items():
        indices = {
            JOINT_TERM_KEYS[term]: layout.index(f"{joint}.{term}")
            for term in layout.terms_of(joint)
        }
        # (a joint left out of the fit, its torque not logged: null, not a prior std read from its
        # empty column, which means nothing)
        terms["std"] = {key: float(theta_std[i]) for key, i in indices.items()}
        terms["source"] = {key: sources[i] for key, i in indices.items()}
        terms["prior"] = {key: float(prior[i]) for key, i in indices.items()}
        for name in SHAPE_PARAMETERS[layout.friction_of(joint)]:
            terms["std"][SHAPE_KEYS[name]] = (shape_std or {}).get(f"{joint}.{name}", float("nan"))
            terms["source"][SHAPE_KEYS[name]] = "data"
    document["standard_parameters"] = {
        "names": list(layout.names),
        "values": theta.tolist(),
        "std": theta_std.tolist(),
        "prior": prior.tolist(),
        "source": list(sources),
    }
    return document


_MAX_MAGNITUDE = 1e8  # no mass [kg], length [m], inertia, friction or gravity is this large


def _number(value, where: str, source: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        raise InputError(f"{where}: expected a finite number, got {value!r}", source=source)
    if abs(value) > _MAX_MAGNITUDE:
        raise InputError(f"{where}: {value!r} is beyond any plausible value", source=source)
    return float(value)


def _body_pi(name: str, body: dict, source: str) -> np.ndarray:
    try:
        mass = _number(body["mass"], f"bodies.{name}.mass", source)
        com = np.array([_number(v, f"bodies.{name}.com", source) for v in body["com"]])
        inertia = np.array(
            [[_number(v, f"bodies.{name}.inertia", source) for v in row] for row in body["inertia"]]
        )
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, InputError):
            raise
        raise InputError(
            f"bodies.{name}: needs mass, com [3] and inertia [3x3] ({error})", source=source
        ) from None
    if com.shape != (3,) or inertia.shape != (3, 3):
        raise InputError(f"bodies.{name}: com must have 3 entries and inertia 3x3", source=source)
    with np.errstate(all="ignore"):  # a 1e300 entry is judged, not warned about
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
    text = read_text_file(path, "parameter file")
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise InputError(f"invalid JSON: {error}", source=str(path)) from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(
            f"not a physid parameter file ('format' must be '{FORMAT}')", source=str(path)
        )
    source = str(path)
    bodies = {
        str(name): _body_pi(str(name), _section(body, f"bodies.{name}", source), source)
        for name, body in _section(document.get("bodies"), "bodies", source).items()
    }
    joints, friction_models = {}, {}
    for name, terms in _section(document.get("joints"), "joints", source).items():
        terms = _section(terms, f"joints.{name}", source)
        kind = terms.get(FRICTION_MODEL_KEY, "linear")
        if kind not in FRICTION_MODELS:
            raise InputError(
                f"joints.{name}.{FRICTION_MODEL_KEY}: {kind!r} is not one of "
                f"{list(FRICTION_MODELS)}",
                source=source,
            )
        if kind != "linear":
            friction_models[str(name)] = str(kind)
        joints[str(name)] = {
            str(k): _number(v, f"joints.{name}.{k}", source)
            for k, v in terms.items()
            if k not in _ANNOTATION_KEYS and k != FRICTION_MODEL_KEY
        }
    extra = _section(document.get("extra"), "extra", source)
    parsed = ParamsFile(bodies, joints, extra, document, source, friction_models)
    parsed.friction_shapes(tuple(joints))  # validates every nonlinear joint's shape now
    parsed.gravity  # noqa: B018 - validates extra.gravity now, not at first use
    _section(extra.get("coupled_motors"), "extra.coupled_motors", source)
    return parsed


def require_sections(params: ParamsFile, sections: tuple[str, ...] = ("bodies", "joints")) -> None:
    """Refuse a file whose ``sections`` are missing or empty (``validate`` must not silently
    score the URDF's values instead of the file's)."""
    for section in sections:
        if not params.document.get(section):
            raise InputError(
                f"the '{section}' section is missing or empty: this is not a complete "
                "identification result",
                source=params.source,
            )


def _section(value, where: str, source: str) -> dict:
    """A JSON object (``None`` is an empty one); anything else is an InputError naming it."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected an object, got {type(value).__name__}", source=source)
    return value


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
    for joint in layout.joint_names:
        identified_with = params.friction_models.get(joint, "linear")
        if identified_with != layout.friction_of(joint):
            raise InputError(
                f"joints.{joint}: identified with {identified_with} friction, but the model has "
                f"{layout.friction_of(joint)} friction",
                source=params.source,
            )
    inverse_keys = {v: k for k, v in JOINT_TERM_KEYS.items()}
    for joint, terms in params.joints.items():
        if joint not in layout.joint_names:
            raise InputError(f"joints.{joint}: no such joint in the model", source=params.source)
        for key, value in terms.items():
            if key == DEADBAND_KEY or key in SHAPE_KEYS.values():
                continue  # not parameters: see ParamsFile.coulomb_deadband, .friction_shapes
            term = inverse_keys.get(key)
            if term is None:
                raise InputError(f"joints.{joint}.{key}: unknown term", source=params.source)
            index = layout.joint_term_index(joint, term)
            if index is not None:
                theta[index] = value
    coupled = _section(params.extra.get("coupled_motors"), "extra.coupled_motors", params.source)
    for motor, terms in coupled.items():
        for term, value in _section(terms, f"extra.coupled_motors.{motor}", params.source).items():
            name = f"{motor}.{term}"
            if name in layout.names:
                theta[layout.index(name)] = _number(
                    value, f"extra.coupled_motors.{name}", params.source
                )
    return theta


def apply_inertias(pin_model: pin.Model, params: ParamsFile) -> pin.Model:
    """A copy of a Pinocchio model whose bodies named in ``params`` get its inertias.

    A joint whose identified terms include an armature gets the model's own armature (an
    MJCF's, which Pinocchio's dynamics include) set to 0: the identified one is applied with
    the other joint terms, and would otherwise be counted twice."""
    model = pin_model.copy()
    for joint, pi in params.bodies.items():
        if not model.existJointName(joint):
            raise InputError(f"bodies.{joint}: no such joint in the model", source=params.source)
        model.inertias[model.getJointId(joint)] = pin_inertia(pi)
    for joint, terms in params.joints.items():
        if "armature" in terms and model.existJointName(joint):
            joint_model = model.joints[model.getJointId(joint)]
            model.armature[joint_model.idx_v : joint_model.idx_v + joint_model.nv] = 0.0
    if params.gravity is not None:
        model.gravity = pin.Motion(params.gravity, np.zeros(3))
    return model
