"""A robot to identify: a Pinocchio model plus the layout of its dynamic parameters.

The standard parameter vector of a fixed-base serial robot is, in this order,

1. ten inertial parameters per moving body, in Pinocchio's order
   ``[m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` (inertia about the joint frame origin),
   bodies in Pinocchio's joint order (fixed links merged into their parent, as Pinocchio does);
2. joint terms, per joint: viscous ``fv``, Coulomb ``fc``, torque ``offset`` and armature ``Ia``
   (docs/architecture.md: ``tau_f = fv*dq + fc*sign(dq) + offset``, armature ``Ia*ddq``); a joint
   with a nonlinear friction model (:mod:`physid.robot.friction`) has ``phi1`` in place of ``fc``
   (sigmoid) or the static level ``fs`` after ``fc`` (Stribeck);
3. coupled-motor terms, per motor whose shaft turns with several joints (paper C §4.1, the TX40
   wrist): the off-diagonal rotor inertia ``Iam``, viscous ``fvm`` and Coulomb ``fcm`` terms.

Every parameter has a readable name such as ``joint_2.Izz``, ``joint_3.fv`` or ``motor_6.fcm``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from physid.body.inertia import PARAMETER_NAMES as INERTIAL_NAMES
from physid.body.inertia import pin_inertia
from physid.errors import InputError
from physid.memo import Remembers
from physid.robot.friction import COEFFICIENTS, FRICTION_MODELS, SHAPE_PARAMETERS

JOINT_TERM_NAMES = ("fv", "fc", "offset", "Ia")  # what config joint_terms may list
# Every joint term in the order of the parameter vector, with the nonlinear models' coefficients.
ALL_JOINT_TERMS = ("fv", "fc", "fs", "phi1", "offset", "Ia")
COUPLED_MOTOR_TERM_NAMES = ("Iam", "fvm", "fcm")
_SUPPORTED_JOINTS = {"R", "P"}  # revolute/prismatic about/along any axis (nq = nv = 1)


@dataclass(frozen=True)
class Transmission:
    """Motor-side to joint-side map of positions and torques.

    ``q_motor = ratio @ (q_joint - joint_offset)``, so
    ``q_joint = ratio^-1 q_motor + joint_offset``.
    By virtual power ``tau_joint = ratio.T @ tau_motor``. A row of ``ratio`` with several non-zero
    entries is a coupled motor (e.g. TX40 motor 6 turns with joints 5 and 6).
    """

    motor_names: tuple[str, ...]
    ratio: np.ndarray  # (n_motors, n_joints), dimensionless (rad of motor per rad of joint)
    joint_offset: np.ndarray  # (n_joints,) rad or m, added after the inverse ratio

    def __post_init__(self) -> None:
        ratio = np.asarray(self.ratio, dtype=float)
        if ratio.ndim != 2 or ratio.shape[0] != ratio.shape[1]:
            raise InputError(f"transmission ratio must be a square matrix, got shape {ratio.shape}")
        if not np.all(np.isfinite(ratio)) or abs(np.linalg.det(ratio)) < 1e-12:
            raise InputError("transmission ratio matrix must be finite and invertible")
        if len(self.motor_names) != ratio.shape[0]:
            raise InputError(
                f"transmission has {ratio.shape[0]} motors but {len(self.motor_names)} motor names"
            )
        offset = np.asarray(self.joint_offset, dtype=float).reshape(-1)
        if offset.shape != (ratio.shape[1],):
            raise InputError(f"transmission joint_offset must have {ratio.shape[1]} entries")
        object.__setattr__(self, "ratio", ratio)
        object.__setattr__(self, "joint_offset", offset)

    def joint_positions(self, q_motor: np.ndarray) -> np.ndarray:
        """Joint positions (N, n) from motor positions (N, n)."""
        return np.linalg.solve(self.ratio, np.asarray(q_motor, float).T).T + self.joint_offset

    def joint_rates(self, dq_motor: np.ndarray) -> np.ndarray:
        """Joint velocities or accelerations (N, n) from the motor ones (no offset)."""
        return np.linalg.solve(self.ratio, np.asarray(dq_motor, float).T).T

    def joint_torques(self, tau_motor: np.ndarray) -> np.ndarray:
        """Joint torques (N, n) from motor torques (N, n): ``tau_joint = ratio.T tau_motor``."""
        return np.asarray(tau_motor, float) @ self.ratio

    def motor_positions(self, q_joint: np.ndarray) -> np.ndarray:
        """Motor positions (N, n) from joint positions (N, n)."""
        return (np.asarray(q_joint, float) - self.joint_offset) @ self.ratio.T

    def coupled_motors(self) -> tuple[int, ...]:
        """Indices of motors whose shaft moves with more than one joint."""
        nonzero = np.abs(self.ratio) > 1e-12 * np.abs(self.ratio).max()
        return tuple(int(k) for k in np.flatnonzero(nonzero.sum(axis=1) > 1))

    @classmethod
    def diagonal(cls, ratios: Sequence[float], motor_names: Sequence[str]) -> Transmission:
        """A transmission with one gearbox per joint and no coupling."""
        return cls(tuple(motor_names), np.diag(np.asarray(ratios, float)), np.zeros(len(ratios)))


@dataclass(frozen=True)
class ParameterLayout:
    """Names and blocks of the standard parameter vector (see the module docstring)."""

    body_joints: tuple[str, ...]
    joint_names: tuple[str, ...]
    joint_terms: tuple[str, ...]
    coupled_motor_names: tuple[str, ...] = ()
    # Per joint (joint_names order): "linear", "sigmoid" or "stribeck" (physid.robot.friction);
    # empty: every joint linear.
    friction_models: tuple[str, ...] = ()
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        unknown = set(self.joint_terms) - set(JOINT_TERM_NAMES)
        if unknown:
            raise InputError(
                f"unknown joint term(s) {sorted(unknown)}; choose among {list(JOINT_TERM_NAMES)}"
            )
        ordered_terms = tuple(t for t in JOINT_TERM_NAMES if t in self.joint_terms)
        object.__setattr__(self, "joint_terms", ordered_terms)
        models = tuple(self.friction_models)
        if models and len(models) != len(self.joint_names):
            raise InputError(f"{len(models)} friction models for {len(self.joint_names)} joints")
        bad = sorted(set(models) - set(FRICTION_MODELS))
        if bad:
            raise InputError(f"unknown friction model(s) {bad}; choose among {FRICTION_MODELS}")
        object.__setattr__(self, "friction_models", models)
        names = [f"{j}.{p}" for j in self.body_joints for p in INERTIAL_NAMES]
        names += [f"{j}.{t}" for j in self.joint_names for t in self.terms_of(j)]
        names += [f"{m}.{t}" for m in self.coupled_motor_names for t in COUPLED_MOTOR_TERM_NAMES]
        object.__setattr__(self, "names", tuple(names))

    @property
    def size(self) -> int:
        return len(self.names)

    @property
    def n_inertial(self) -> int:
        return 10 * len(self.body_joints)

    @property
    def mass_indices(self) -> np.ndarray:
        """Indices of the bodies' masses in the standard parameter vector."""
        return np.arange(0, self.n_inertial, 10)

    def total_mass(self, theta: np.ndarray) -> float:
        """Total mass of the moving bodies [kg] of standard parameters ``theta``."""
        return float(np.sum(np.asarray(theta)[self.mass_indices]))

    def body_slice(self, joint: str) -> slice:
        """Slice of the ten inertial parameters of the body moved by ``joint``."""
        k = self.body_joints.index(joint)
        return slice(10 * k, 10 * k + 10)

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise InputError(f"unknown parameter '{name}'") from None

    def friction_of(self, joint: str) -> str:
        """The friction model of ``joint`` (:data:`physid.robot.friction.FRICTION_MODELS`)."""
        if not self.friction_models:
            return "linear"
        return self.friction_models[self.joint_names.index(joint)]

    @property
    def nonlinear_friction(self) -> bool:
        """Some joint has a sigmoid or Stribeck friction model."""
        return any(kind != "linear" for kind in self.friction_models)

    def terms_of(self, joint: str) -> tuple[str, ...]:
        """The joint terms of ``joint``, in :data:`ALL_JOINT_TERMS` order: the configured ones,
        with the Coulomb coefficient(s) of its friction model in place of ``fc``."""
        kind = self.friction_of(joint)
        terms = set(self.joint_terms)
        if kind != "linear":
            terms = (terms - {"fc"}) | set(COEFFICIENTS[kind])
        return tuple(t for t in ALL_JOINT_TERMS if t in terms)

    def joint_term_index(self, joint: str, term: str) -> int | None:
        """Index of ``<joint>.<term>``, or None if that term is not modelled."""
        if term not in self.terms_of(joint):
            return None
        return self.index(f"{joint}.{term}")


@dataclass(frozen=True)
class RobotModel(Remembers):
    """A fixed-base robot: Pinocchio model, joint names, transmission and parameter layout.

    Constant data only (the Pinocchio habit); work buffers live in ``pin.Data`` objects that the
    algorithms create. What is derived from it (its base parameters) is kept on it
    (:meth:`remembered`).
    """

    pin_model: pin.Model
    joint_names: tuple[str, ...]
    layout: ParameterLayout
    transmission: Transmission | None = None
    source: str = ""
    # Per joint, in the joint's own units [rad/s or m/s]: below it the Coulomb term's sign(dq) is
    # taken as 0. None (the default) = no deadband: a joint at standstill holds its friction
    # torque, which sign(dq) of the filtered velocity predicts better than 0 does.
    coulomb_deadband: np.ndarray | None = None
    # What was done to the URDF's tree (joints locked: physid.robot.joint_locking).
    notes: tuple[str, ...] = ()
    # The joints whose torques are recorded and fitted (config fit_joints); None: all. The others
    # move the model by their recorded positions, but their torque rows are left out.
    fitted_joints: tuple[str, ...] | None = None
    # Per joint, the shape parameters of its friction model (physid.robot.friction.SHAPE_PARAMETERS;
    # () for a linear joint); empty: none set (every joint linear, or shapes not yet fitted:
    # physid.robot.friction.initial_shape is used then).
    friction_shape: tuple[tuple[float, ...], ...] = ()

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @property
    def fitted(self) -> np.ndarray:
        """(n,) bool: whose torque rows are fitted (:attr:`fitted_joints`)."""
        if self.fitted_joints is None:
            return np.ones(self.n_joints, dtype=bool)
        return np.array([j in self.fitted_joints for j in self.joint_names])

    def shape_of(self, k: int) -> tuple[float, ...]:
        """Shape parameters of joint ``k``'s friction model (() for a linear joint)."""
        kind = self.layout.friction_of(self.joint_names[k])
        if kind == "linear":
            return ()
        shape = self.friction_shape[k] if self.friction_shape else ()
        if len(shape) != len(SHAPE_PARAMETERS[kind]):
            raise InputError(
                f"joint '{self.joint_names[k]}': its {kind} friction needs the shape parameters "
                f"{', '.join(SHAPE_PARAMETERS[kind])}"
            )
        return tuple(float(v) for v in shape)

    def joint_index(self, name: str) -> int:
        """Index of a joint among the moving joints (= its velocity index)."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise InputError(
                f"joint '{name}' is not in the model {self.source or ''}; "
                f"its joints are {', '.join(self.joint_names)}"
            ) from None

    def prior_parameters(self) -> np.ndarray:
        """Standard parameters of the URDF: inertias, ``<dynamics damping/friction>``, armature
        (the nonlinear friction coefficients as the Coulomb level of ``friction``).

        Terms that a URDF cannot express (offsets, coupled-motor terms) are zero.
        """
        values = np.zeros(self.layout.size)
        for k, joint in enumerate(self.layout.body_joints):
            joint_id = self.pin_model.getJointId(joint)
            values[10 * k : 10 * k + 10] = self.pin_model.inertias[joint_id].toDynamicParameters()
        # A URDF's <dynamics friction> is a Coulomb level: the Stribeck static level starts equal
        # to it (no Stribeck effect), the sigmoid's amplitude spans -fc..fc (phi1 = 2 fc).
        urdf_terms = {
            "fv": self.pin_model.damping,
            "fc": self.pin_model.friction,
            "fs": self.pin_model.friction,
            "phi1": 2.0 * self.pin_model.friction,
            "Ia": self.pin_model.armature,
        }
        for v_index, joint in enumerate(self.joint_names):
            for term, source in urdf_terms.items():
                index = self.layout.joint_term_index(joint, term)
                if index is not None:
                    values[index] = source[v_index]
        return values

    def with_inertial_parameters(self, standard: np.ndarray) -> pin.Model:
        """A copy of the Pinocchio model whose body inertias are those of ``standard``."""
        model = self.pin_model.copy()
        for k, joint in enumerate(self.layout.body_joints):
            joint_id = model.getJointId(joint)
            model.inertias[joint_id] = pin_inertia(standard[10 * k : 10 * k + 10])
        return model


def with_gravity(model: RobotModel, gravity: np.ndarray) -> RobotModel:
    """The same robot under another gravity vector (base frame, m/s^2)."""
    pin_model = model.pin_model.copy()
    pin_model.gravity = pin.Motion(np.asarray(gravity, dtype=float), np.zeros(3))
    return replace(model, pin_model=pin_model)


def gravity_of(model: RobotModel) -> np.ndarray:
    """Gravity vector of the model in the base frame (m/s^2)."""
    return np.array(model.pin_model.gravity.linear, dtype=float)


def load_robot_file(path: str | Path, *, floating_base: bool = False) -> pin.Model:
    """The robot of a URDF or an MJCF file (the kind read from the file's root element:
    :func:`load_urdf`, :func:`physid.robot.mjcf.load_mjcf`)."""
    from physid.robot.mjcf import is_mjcf, load_mjcf

    if is_mjcf(path):
        return load_mjcf(path, floating_base=floating_base)
    return load_urdf(path, floating_base=floating_base)


def load_urdf(path: str | Path, *, floating_base: bool = False) -> pin.Model:
    """Parse a URDF (kinematics and inertias only; meshes are never loaded).

    With ``floating_base`` the root link is attached by a free-flyer joint named ``root_joint``
    (configuration: position, then quaternion x, y, z, w; velocity in the root frame). A
    ``continuous`` joint becomes a revolute joint with limits -inf..inf (one angle, as an MJCF
    hinge without a range; :func:`_continuous_as_revolute`).
    """
    from physid.files.io import quiet_stderr, read_text_file

    path = Path(path)
    if not path.is_file():
        raise InputError(f"URDF file not found: {path}")
    document = _checked_urdf(read_text_file(path, "URDF"), str(path))
    root = (pin.JointModelFreeFlyer(), "root_joint") if floating_base else ()
    continuous = _continuous_joints(document)
    try:
        with quiet_stderr():  # urdfdom prints its warnings on descriptor 2
            if continuous:
                model = pin.buildModelFromXML(_continuous_as_revolute(document), *root)
            else:
                model = pin.buildModelFromUrdf(str(path), *root)
    except Exception as error:  # Pinocchio raises plain RuntimeError/ValueError
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(f"cannot parse URDF: {message}", source=str(path)) from None
    for name in continuous:  # unbounded, as an MJCF hinge without a range is
        joint = model.joints[model.getJointId(name)]
        model.lowerPositionLimit[joint.idx_q], model.upperPositionLimit[joint.idx_q] = (
            -np.inf,
            np.inf,
        )
        for limits in (model.effortLimit, model.velocityLimit):  # none given (1e300): unlimited
            if limits[joint.idx_v] >= 1e300:
                limits[joint.idx_v] = np.inf
    for name, armature in drake_armatures(document, str(path)).items():
        if model.existJointName(name) and model.joints[model.getJointId(name)].nv == 1:
            model.armature[model.joints[model.getJointId(name)].idx_v] = armature
    _check_inertias(model, str(path))
    return model


DRAKE = "{http://drake.mit.edu}"


def drake_rotors(document, source: str) -> dict[str, tuple]:  # noqa: ANN001 - an Element
    """Per joint, the ``<drake:rotor_inertia>`` element of its ``<transmission>`` actuator and
    the actuator's ``<drake:gear_ratio>`` (1 where not given): a URDF written for Drake, which
    reflects the rotor as ``rotor_inertia * gear_ratio^2`` onto the joint. Values that are not
    numbers (>= 0, a ratio > 0) are an InputError naming the actuator."""
    rotors = {}
    for transmission in document.findall("transmission"):
        joints = [j.get("name") for j in transmission.findall("joint")]
        for actuator in transmission.findall("actuator"):
            rotor = actuator.find(f"{DRAKE}rotor_inertia")
            if rotor is None or len(joints) != 1:
                continue
            gear = actuator.find(f"{DRAKE}gear_ratio")
            values = (rotor.get("value", ""), "1" if gear is None else gear.get("value", ""))
            try:
                inertia, ratio = (float(v) for v in values)
            except ValueError:
                inertia = ratio = float("nan")
            if not (np.isfinite(inertia) and np.isfinite(ratio) and inertia >= 0 and ratio > 0):
                raise InputError(
                    f"actuator {actuator.get('name')}: drake:rotor_inertia "
                    f"{values[0]!r} and drake:gear_ratio {values[1]!r} must be "
                    "numbers (>= 0, > 0)",
                    source=source,
                )
            rotors[joints[0]] = (rotor, ratio)
    return rotors


def drake_armatures(document, source: str) -> dict[str, float]:  # noqa: ANN001 - an Element
    """Per joint, the armature a URDF written for Drake gives it (:func:`drake_rotors`):
    Pinocchio's parser ignores the tags, so the URDF's own model would lack the rotor inertia
    Drake simulates (up to 0.2 kg m^2 on an arm's joints)."""
    return {
        joint: float(rotor.get("value")) * ratio**2
        for joint, (rotor, ratio) in drake_rotors(document, source).items()
    }


def _continuous_joints(document) -> tuple[str, ...]:  # noqa: ANN001 - an ElementTree element
    """Names of the URDF's ``continuous`` joints (revolute joints without position limits)."""
    return tuple(
        joint.get("name", "")
        for joint in document.iter()
        if isinstance(joint.tag, str)
        and _local(joint.tag) == "joint"
        and joint.get("type") == "continuous"
    )


def _continuous_as_revolute(document) -> str:  # noqa: ANN001 - an ElementTree element
    """The URDF (its parsed ``document``, edited in place) with its continuous joints written as
    revolute ones (limits filled in, then lifted to +-inf by :func:`load_urdf`).

    Pinocchio reads a continuous joint as "revolute unbounded": two configuration coordinates
    (cos, sin) for one velocity. Every 1-DoF pipeline of physid takes one angle per joint, so
    read so such a joint would be locked at 0 as "not 1-DoF", its recorded column ignored and
    the fit worse with status ``ok``. As a revolute joint it has the same dynamics, its angle
    unwrapped over any number of turns."""
    import xml.etree.ElementTree as ET

    for element in document.iter():  # a default namespace (Drake's URDFs) would be written ns0:
        if isinstance(element.tag, str):
            element.tag = _local(element.tag)
    for joint in document.iter("joint"):
        if joint.get("type") != "continuous":
            continue
        joint.set("type", "revolute")
        limit = joint.find("limit")
        if limit is None:
            limit = ET.SubElement(joint, "limit")
        for key in ("effort", "velocity"):  # urdfdom requires both on a revolute joint
            limit.set(key, limit.get(key, "1e300"))  # none given: unlimited (load_urdf: inf)
        limit.set("lower", "-1")
        limit.set("upper", "1")
    return ET.tostring(document, encoding="unicode")


def _checked_urdf(text: str, source: str):  # noqa: ANN202 - an ElementTree element
    """The parsed URDF, once it is not what Pinocchio would silently misread: malformed XML,
    an unexpanded xacro file, a zero axis, impossible masses."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        raise InputError(f"cannot parse URDF: {error}", source=source) from None
    _refuse_xacro(root, source)
    for joint in root.iter("joint"):
        _check_joint_axis(joint, source)
    for link in root.iter("link"):
        mass = link.find("inertial/mass")
        if mass is None:
            continue
        try:
            value = float(mass.get("value", "nan"))
        except ValueError:
            value = float("nan")
        if not value >= 0.0 or value == float("inf"):  # NaN fails the comparison
            raise InputError(
                f"link '{link.get('name')}' has <mass value=\"{mass.get('value')}\">: a mass "
                "must be a finite number >= 0",
                source=source,
            )
    return root


def _refuse_xacro(root, source: str) -> None:  # noqa: ANN001 - an ElementTree element
    """A xacro file (ROS's URDF macros) is not a URDF until expanded: its macros, properties
    and ``${...}`` expressions would reach Pinocchio unexpanded ("does not contain a valid URDF
    model", or worse, a robot without the links its macros make)."""
    for element in root.iter():
        if not isinstance(element.tag, str):  # a comment or a processing instruction
            continue
        xacro = element.tag.startswith("{") and "xacro" in element.tag.split("}")[0]
        # (a mesh's file name is never read, and plain URDFs for Gazebo write $(find pkg) there)
        read = {k: v for k, v in element.attrib.items() if _local(element.tag) != "mesh"}
        if xacro or any("${" in value for value in read.values()):
            raise InputError(
                "this is a xacro file (ROS URDF macros: <xacro:...> elements or ${...} "
                "expressions), not a URDF: expand it first, e.g. `xacro robot.urdf.xacro > "
                "robot.urdf` (pip install xacro), and give physid the result",
                source=source,
            )


def _local(tag: str) -> str:
    """An XML tag without its namespace (``{uri}joint`` -> ``joint``)."""
    return tag.rsplit("}", 1)[-1]


def _check_joint_axis(joint, source: str) -> None:  # noqa: ANN001 - an ElementTree element
    """A moving joint's ``<axis xyz>`` must be three finite numbers, not all zero: Pinocchio
    normalises it, and a zero axis becomes NaN in every later computation."""
    if joint.get("type") not in ("revolute", "continuous", "prismatic"):
        return
    axis = joint.find("axis")
    if axis is None:  # URDF's default axis (1, 0, 0)
        return
    text = axis.get("xyz", "1 0 0")
    try:
        values = np.array([float(v) for v in text.split()])
    except ValueError:
        values = np.array([])
    if values.shape != (3,) or not np.all(np.isfinite(values)) or not np.any(values != 0):
        raise InputError(
            f"joint '{joint.get('name')}' has <axis xyz=\"{text}\">: an axis must be three finite "
            "numbers, not all zero",
            source=source,
        )


def mimic_joints(path: str | Path) -> dict[str, tuple[str, float]]:
    """The URDF's mimic joints: joint name -> (the joint it mimics, its ``offset``: where it is
    when that joint is at 0). Pinocchio would read each as an independent joint."""
    import xml.etree.ElementTree as ET

    from physid.files.io import read_text_file
    from physid.robot.mjcf import is_mjcf

    if is_mjcf(path):  # tendons and joint equalities (checked where the model is loaded)
        from physid.robot.mjcf import compile_mjcf, coupled_joints

        return coupled_joints(compile_mjcf(path))
    try:
        root = ET.fromstring(read_text_file(path, "URDF"))
    except ET.ParseError as error:
        raise InputError(f"cannot parse URDF: {error}", source=str(path)) from None
    mimics = {}
    for joint in root.iter("joint"):
        mimic = joint.find("mimic")
        if mimic is not None:
            try:
                offset = float(mimic.get("offset", 0.0))
            except ValueError:
                offset = 0.0
            mimics[str(joint.get("name"))] = (str(mimic.get("joint")), offset)
    return mimics


def refuse_mimic_joints(
    pin_model: pin.Model, path: str | Path, recorded: tuple[str, ...] = ()
) -> None:
    """Identification needs independent joints: mimic joints still in the model are an error
    giving the ``locked:`` line that holds every one of them (and the joints they mimic, where
    the model has them) still, each follower at its offset (its leader at 0). Those moved by
    their recorded positions (``recorded``: ``locked: {joint: recorded}``) are no unknowns."""
    present = {
        joint: mimic
        for joint, mimic in mimic_joints(path).items()
        if pin_model.existJointName(joint) and joint not in recorded
    }
    if not present:
        return
    from physid.robot.mjcf import is_mjcf

    if is_mjcf(path):
        refuse_coupled_mjcf(pin_model, path, present)
    locked: dict[str, float] = {}
    for joint, (leader, offset) in present.items():
        if pin_model.existJointName(leader):
            locked.setdefault(leader, 0.0)
        locked[joint] = offset
    first, (leader, _) = next(iter(present.items()))
    listed = ", ".join(f"{joint}: {float(value)!r}" for joint, value in locked.items())
    raise InputError(
        f"{len(present)} mimic joint(s) ('{first}' mimics '{leader}'"
        + (", ..." if len(present) > 1 else "")
        + "); mimic joints are not supported (physid would identify each as an independent "
        f"joint): hold them still in the config (locked: {{{listed}}}, rad or m), make them "
        "fixed, or remove the <mimic> elements",
        source=str(path),
    )


def refuse_coupled_mjcf(
    pin_model: pin.Model, path: str | Path, present: dict[str, tuple[str, float]] | None = None
) -> None:
    """An MJCF's joints coupled by a tendon or a joint equality
    (:func:`physid.robot.mjcf.coupled_joints`) still in ``pin_model`` are an error giving the
    ``locked:`` line that holds them still (``present``: those joints, when known)."""
    from physid.robot.mjcf import is_mjcf

    if not is_mjcf(path):
        return
    if present is None:
        present = {
            joint: mimic
            for joint, mimic in mimic_joints(path).items()
            if pin_model.existJointName(joint)
        }
    if not present:
        return
    first, (other, _) = next(iter(present.items()))
    listed = ", ".join(f"{joint}: 0.0" for joint in present)
    raise InputError(
        f"{len(present)} joint(s) coupled by a tendon or an equality ('{first}' with '{other}'"
        + (", ..." if len(present) > 1 else "")
        + "): coupled joints are not supported; hold "
        f"them still in the config (locked: {{{listed}}}, rad or m), or leave their columns "
        "out of the recordings (joints at the ends of the tree are then held still)",
        source=str(path),
    )


_MAX_URDF_VALUE = 1e8  # no mass [kg], length [m] or inertia [kg m^2] of a robot is this large


def _check_inertias(model: pin.Model, source: str) -> None:
    """Every body's mass must be finite and >= 0, its inertial and every joint placement
    finite and of plausible size (URDF ``<inertial>`` and ``<origin>``)."""
    for joint_id in range(1, model.njoints):
        inertia = model.inertias[joint_id]
        values = np.concatenate([[inertia.mass], inertia.lever, np.ravel(inertia.inertia)])
        placement = model.jointPlacements[joint_id].translation
        name = model.names[joint_id]
        if not (np.all(np.abs(values) <= _MAX_URDF_VALUE) and inertia.mass >= 0):
            raise InputError(
                f"the body moved by joint '{name}' has mass {inertia.mass:g} and a non-finite, "
                "negative or implausibly large inertial: fix its <inertial> element",
                source=source,
            )
        if not np.all(np.abs(placement) <= _MAX_URDF_VALUE):
            raise InputError(
                f"joint '{name}' has a non-finite or implausibly large <origin xyz>",
                source=source,
            )


def build_robot_model(
    pin_model: pin.Model,
    *,
    joint_terms: Sequence[str] = JOINT_TERM_NAMES,
    transmission: Transmission | None = None,
    coupled_motor_terms: bool = True,
    coulomb_deadband: float | dict[str, float] | None = None,
    friction: str | dict[str, str] = "linear",
    source: str = "",
) -> RobotModel:
    """Wrap a fixed-base Pinocchio model of 1-DoF joints into a :class:`RobotModel`.

    ``coupled_motor_terms`` adds ``Iam``, ``fvm``, ``fcm`` for every coupled motor of the
    transmission (paper C §4.1). ``coulomb_deadband``: a number applies to the revolute joints
    [rad/s]; a mapping gives joints by name (``revolute``/``prismatic`` for all of a kind) in their
    own units [rad/s or m/s]. ``friction``: the friction model (:mod:`physid.robot.friction`) of
    every joint, or a mapping joint -> model (the others linear).
    """
    joint_names: list[str] = []
    for joint_id in range(1, pin_model.njoints):
        joint = pin_model.joints[joint_id]
        kind = joint.shortname().removeprefix("JointModel")
        if joint.nq != 1 or joint.nv != 1 or kind[:1] not in _SUPPORTED_JOINTS:
            raise InputError(
                f"joint '{pin_model.names[joint_id]}' is of type {kind}; physid identify supports "
                "fixed-base robots with revolute and prismatic joints",
                source=source or None,
            )
        joint_names.append(pin_model.names[joint_id])
    if transmission is not None and transmission.ratio.shape[1] != len(joint_names):
        raise InputError(
            f"transmission maps {transmission.ratio.shape[1]} joints but the model has "
            f"{len(joint_names)}"
        )
    coupled = ()
    if transmission is not None and coupled_motor_terms:
        coupled = tuple(transmission.motor_names[k] for k in transmission.coupled_motors())
    layout = ParameterLayout(
        body_joints=tuple(joint_names),
        joint_names=tuple(joint_names),
        joint_terms=tuple(joint_terms),
        coupled_motor_names=coupled,
        friction_models=_friction_per_joint(joint_names, friction, source),
    )
    model = RobotModel(pin_model, tuple(joint_names), layout, transmission, source)
    return replace(model, coulomb_deadband=_deadband_per_joint(model, coulomb_deadband))


def _friction_per_joint(
    joint_names: list[str], friction: str | dict[str, str], source: str
) -> tuple[str, ...]:
    if isinstance(friction, str):
        return () if friction == "linear" else tuple(friction for _ in joint_names)
    for joint in friction:
        if joint not in joint_names:
            raise InputError(
                f"config friction.{joint}: no such joint; the model's joints are "
                f"{', '.join(joint_names)}",
                source=source or None,
            )
    models = tuple(friction.get(joint, "linear") for joint in joint_names)
    return models if any(kind != "linear" for kind in models) else ()


def _deadband_per_joint(
    model: RobotModel, deadband: float | dict[str, float] | None
) -> np.ndarray | None:
    if deadband is None:
        return None
    if not isinstance(deadband, dict):
        deadband = {"revolute": deadband}
    values = np.zeros(model.n_joints)
    for key, value in deadband.items():
        value = float(value)
        if not (np.isfinite(value) and value >= 0):
            raise InputError(f"coulomb_deadband.{key}: must be a number >= 0, got {value}")
        if key in ("revolute", "prismatic"):
            kind = key == "revolute"
            values[[is_revolute(model, j) == kind for j in model.joint_names]] = value
        else:
            values[model.joint_index(key)] = value
    return values if np.any(values > 0) else None


def robot_from_urdf(path: str | Path, **options) -> RobotModel:
    """Load a URDF (or an MJCF) and build its :class:`RobotModel` (options as
    :func:`build_robot_model`)."""
    pin_model = load_robot_file(path)
    refuse_mimic_joints(pin_model, path)
    return build_robot_model(pin_model, source=str(path), **options)


def is_revolute(model: RobotModel, joint: str) -> bool:
    """True for a revolute joint (position in radians), False for a prismatic one."""
    return is_revolute_joint(model.pin_model.joints[model.pin_model.getJointId(joint)])


def revolute_mask(model: RobotModel, joints: tuple[str, ...] | list[str]) -> np.ndarray:
    """(len(joints),) bool: :func:`is_revolute` of each joint (angles, where a mask selects
    which columns are in radians)."""
    return np.array([is_revolute(model, joint) for joint in joints], dtype=bool)


def is_unbounded(model: RobotModel, joint: str) -> bool:
    """True for a joint without finite position limits (a URDF continuous joint, an MJCF hinge
    without a range): any number of turns is a position it may have."""
    pin_model = model.pin_model
    return is_unbounded_joint(pin_model, pin_model.joints[pin_model.getJointId(joint)])


def position_limits(pin_model: pin.Model, joint: str) -> tuple[float, float] | None:
    """``(lower, upper)`` position limits of a 1-DoF joint [rad or m]; None when it has none
    (not finite, or not an interval: a URDF's missing ``<limit>`` reads 0, 0)."""
    index = pin_model.joints[pin_model.getJointId(joint)].idx_q
    lower = float(pin_model.lowerPositionLimit[index])
    upper = float(pin_model.upperPositionLimit[index])
    if not (np.isfinite(lower) and np.isfinite(upper)) or lower >= upper:
        return None
    return lower, upper


def is_unbounded_joint(pin_model: pin.Model, joint: pin.JointModel) -> bool:
    """:func:`is_unbounded` of a joint of a Pinocchio model (its first coordinate's limits)."""
    limits = (pin_model.lowerPositionLimit[joint.idx_q], pin_model.upperPositionLimit[joint.idx_q])
    return not np.all(np.isfinite(limits))


def is_revolute_joint(joint: pin.JointModel) -> bool:
    """True for a Pinocchio revolute joint (any axis, continuous ones too: angles in radians),
    False for a prismatic one (metres) or any other."""
    return joint.shortname().removeprefix("JointModel")[:1] == "R"
