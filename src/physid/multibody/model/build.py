"""Build a :class:`MultibodyModel` from a URDF (geometry, inertias) and a YAML config (what URDFs
cannot say: compliances, damping, friction, motors, gravity, what to estimate). See
``docs/multibody.md`` for the YAML keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from physid.errors import ConfigError, InputError
from physid.files.io import config_errors_name, config_number, config_section, read_yaml
from physid.multibody.model.spec import (
    BODY_SLOTS,
    GLOBAL_SLOTS,
    HINGE_DEFAULTS,
    HINGE_SLOTS,
    Hinge,
    MultibodyModel,
    RigidBodySpec,
)

CONFIG_KEYS = {"gravity", "tilt", "defaults", "joints", "bodies", "estimate", "bounds", "noise"}


def _perpendicular_pair(axis: np.ndarray) -> np.ndarray:
    seed = np.eye(3)[int(np.argmin(np.abs(axis)))]
    b1 = np.cross(axis, seed)
    b1 /= np.linalg.norm(b1)
    return np.stack([b1, np.cross(axis, b1)])


def pin_configuration(pin_model, q_slot: list[int], angles: np.ndarray) -> np.ndarray:
    """Pinocchio configuration vector for hinge angles (revolute or unbounded revolute)."""
    import pinocchio as pin

    q = pin.neutral(pin_model)
    for slot, joint, angle in zip(q_slot, pin_model.joints[1:], angles, strict=True):
        if joint.nq == 1:
            q[slot] = angle
        else:
            q[slot : slot + 2] = np.cos(angle), np.sin(angle)
    return q


# the range of every config number (SI units, docs/multibody.md): wide enough for any real
# mechanism, narrow enough that 1e300 or a sign slip is refused before it reaches the stepper
SLOT_RANGES = {
    "mass": (1e-9, 1e6),
    "Ixx": (0.0, 1e6),
    "Iyy": (0.0, 1e6),
    "Izz": (0.0, 1e6),
    "Ixy": (-1e6, 1e6),
    "Ixz": (-1e6, 1e6),
    "Iyz": (-1e6, 1e6),
    "compliance_linear": (0.0, 1.0),
    "compliance_rotational": (0.0, 1.0),
    "damping": (1e-9, 1e3),
    "viscous": (0.0, 1e6),
    "dry": (0.0, 1e3),
    "stribeck_delta": (0.0, 1e3),
    "stribeck_c": (0.0, 1e9),
    "friction_compliance": (0.0, 1e6),
    "friction_damping": (0.0, 1e3),
    "coulomb": (0.0, 1e6),
    "gain": (-1e6, 1e6),
    "shaft_inertia": (0.0, 1e6),
    "tilt": (-np.pi, np.pi),
    "gravity": (-1e3, 1e3),
    "noise": (1e-12, 10.0),  # measurement noise of a joint angle [rad]
}


def _number(value: Any, where: str, slot: str | None = None) -> float:
    """A finite YAML number within the range of ``slot`` (:data:`SLOT_RANGES`)."""
    low, high = SLOT_RANGES.get(slot or where.rsplit(".", 1)[-1], (-np.inf, np.inf))
    return float(config_number(value, where, positive=False, low=low, high=high))


def _vector(value: Any, size: int, where: str, slot: str) -> list[float]:
    """A YAML list of ``size`` numbers in the range of ``slot``; anything else (a nested list,
    a mapping, text) is an InputError naming ``where`` before NumPy sees it."""
    if not isinstance(value, list | tuple) or len(value) != size:
        raise ConfigError(f"config {where}: expected a list of {size} numbers, got {value!r}")
    return [_number(v, f"{where}[{k}]", slot) for k, v in enumerate(value)]


def _names(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"config {where}: expected a list of parameter names, got {value!r}")
    return list(value)


def load_model(
    urdf: str | Path, config: str | Path | dict | None = None, default_estimate: bool = False
) -> MultibodyModel:
    """Maximal-coordinate model of every revolute joint of ``urdf`` (paper A §2.1, App. F).
    ``default_estimate``: when the config lists no ``estimate``, estimate the default set
    (:func:`default_names`; ``model.estimate_default`` says so)."""
    raw = config if isinstance(config, dict) else (read_yaml(config, "config") if config else {})
    with config_errors_name(None if isinstance(config, dict) else config):
        return _build(Path(urdf), raw, default_estimate)


def default_names(joint: str, axis: np.ndarray) -> list[str]:
    """The default set of one hinge: the child's principal inertia about the hinge axis (the
    body-frame axis nearest to it: the inertia the hinge's own motion excites, J_Azz and J_Byy
    of paper A's Furuta, Table 1), its viscous friction and its constant Coulomb torque. The
    masses stay fixed: they set the scale a free swing cannot (``check_scale_fixed``); whether
    the data decide each term is the covariance's verdict (``not_identifiable``)."""
    c = "xyz"[int(np.argmax(np.abs(axis)))]
    return [f"{joint}.I{c}{c}", f"{joint}.viscous", f"{joint}.coulomb"]


def _read_urdf(urdf: Path) -> tuple:
    """The Pinocchio model of ``urdf`` (URDF only, revolute joints only) and its data at the
    neutral configuration (kinematics and joint Jacobians computed)."""
    import pinocchio as pin

    from physid.robot.mjcf import is_mjcf
    from physid.robot.model import load_robot_file

    if is_mjcf(urdf):  # the README says URDF only: an MJCF read here simulated as no MuJoCo would
        raise InputError(
            "an MJCF: the multibody commands read URDF only (MuJoCo's joint damping, armature, "
            "frictionloss, limits and contacts have no place in their model; a UR10e MJCF "
            "simulated into 'constraint violated' where its URDF did not): give the robot's URDF",
            source=str(urdf),
        )
    pm = load_robot_file(urdf)
    data = pm.createData()
    q0 = pin.neutral(pm)
    pin.forwardKinematics(pm, data, q0)
    pin.computeJointJacobians(pm, data, q0)
    for i in range(1, pm.njoints):
        joint, jname = pm.joints[i], pm.names[i]
        if joint.nv != 1 or not joint.shortname().startswith("JointModelR"):
            raise InputError(
                f"joint '{jname}' is {joint.shortname()}; only revolute joints are supported",
                source=str(urdf),
            )
        if pm.inertias[i].mass <= 0:
            raise InputError(
                f"body of joint '{jname}' has mass {pm.inertias[i].mass}", source=str(urdf)
            )
    return pm, data


def _bodies(pm: Any, data: Any) -> tuple[list[RigidBodySpec], list[str], list[float]]:
    """Every moving body (named by its joint) at the URDF zero, and its inertial parameters."""
    bodies, names, values = [], [], []
    for i in range(1, pm.njoints):
        jname, inertia = pm.names[i], pm.inertias[i]
        R = data.oMi[i].rotation.copy()
        bodies.append(RigidBodySpec(jname, data.oMi[i].act(inertia.lever), R))
        c = inertia.inertia
        names += [f"{jname}.{slot}" for slot in BODY_SLOTS]
        values += [float(v) for v in (inertia.mass, *np.diag(c), c[0, 1], c[0, 2], c[1, 2])]
    return bodies, names, values


def _hinge(pm: Any, data: Any, i: int, bodies: list, slots: dict, estimate: list) -> Hinge:
    """The frictional hinge of joint ``i`` (Appendix F): anchors and axes in the bodies' frames,
    whether it has a motor and dry friction (``slots``: its config values)."""
    jname, parent = pm.names[i], pm.parents[i]
    axis = _hinge_axis(pm, data, i)
    child = bodies[i - 1]
    origin = data.oMi[i].translation
    perp = _perpendicular_pair(axis)
    world_ref = child.R0 @ perp[0]
    if parent == 0:
        p_parent, axis_parent, ref_parent = origin.copy(), child.R0 @ axis, world_ref
    else:
        pb = bodies[parent - 1]
        p_parent = pb.R0.T @ (origin - pb.r0)
        axis_parent, ref_parent = pb.R0.T @ child.R0 @ axis, pb.R0.T @ world_ref
    wants = {f"{jname}.{s}" for s in ("gain", "shaft_inertia")} & set(estimate)
    motor = slots["gain"] != 0.0 or slots["shaft_inertia"] > 0.0 or bool(wants)
    dry_names = {f"{jname}.{s}" for s in ("dry", "stribeck_delta", "coulomb")}
    dry = any(slots[k] > 0.0 for k in ("dry", "stribeck_delta", "coulomb"))
    dry |= bool(dry_names & set(estimate))
    return Hinge(
        jname,
        parent - 1,
        i - 1,
        p_parent,
        child.R0.T @ (origin - child.r0),
        axis_parent,
        perp,
        ref_parent,
        perp[0].copy(),
        motor,
        dry,
    )


def _hinge_axis(pm: Any, data: Any, i: int) -> np.ndarray:
    import pinocchio as pin

    jac = np.asarray(pin.getJointJacobian(pm, data, i, pin.ReferenceFrame.LOCAL)).reshape(6, -1)
    axis = jac[3:, pm.idx_vs[i]]
    return axis / np.linalg.norm(axis)


def _config_values(cfg: dict, model: MultibodyModel, pm: Any) -> None:
    """The config's body overrides, noise and bounds into ``model``."""
    names = model.names
    body_cfg = config_section(cfg.get("bodies"), set(pm.names[1:]), "bodies")
    for jname, overrides in body_cfg.items():
        for slot, value in config_section(overrides, set(BODY_SLOTS), f"bodies.{jname}").items():
            model.values[names.index(f"{jname}.{slot}")] = _number(value, f"bodies.{jname}.{slot}")
    for jname, value in config_section(cfg.get("noise"), set(pm.names[1:]), "noise").items():
        model.noise[jname] = _number(value, f"noise.{jname}", "noise")
    bounds = config_section(cfg.get("bounds"), set(names), "bounds")
    for name, pair in bounds.items():
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise ConfigError(f"config bounds.{name}: expected [lower, upper]")
        lo, hi = (-np.inf if v is None else _number(v, f"bounds.{name}", "bound") for v in pair)
        if pair[1] is not None and pair[0] is not None and not lo <= hi:
            raise ConfigError(f"config bounds.{name}: lower {lo:g} is above upper {hi:g}")
        model.lower[name], model.upper[name] = lo, (np.inf if pair[1] is None else hi)


def _build(urdf: Path, raw: Any, default_estimate: bool = False) -> MultibodyModel:
    cfg = config_section(raw, CONFIG_KEYS, "(top level)")
    pm, data = _read_urdf(urdf)
    bodies, names, values = _bodies(pm, data)
    joints_cfg = config_section(cfg.get("joints"), set(pm.names[1:]), "joints")
    defaults = dict(HINGE_DEFAULTS)
    for key, value in config_section(cfg.get("defaults"), set(HINGE_SLOTS), "defaults").items():
        defaults[key] = _number(value, f"defaults.{key}")
    estimate = _names(cfg.get("estimate"), "estimate")
    auto = default_estimate and not estimate
    hinges = []
    for i in range(1, pm.njoints):
        jname = pm.names[i]
        if auto:
            estimate += default_names(jname, _hinge_axis(pm, data, i))
        own = config_section(joints_cfg.get(jname), set(HINGE_SLOTS), f"joints.{jname}")
        slots = {**defaults, **{k: _number(v, f"joints.{jname}.{k}") for k, v in own.items()}}
        hinges.append(_hinge(pm, data, i, bodies, slots, estimate))
        names += [f"{jname}.{slot}" for slot in HINGE_SLOTS]
        values += [slots[slot] for slot in HINGE_SLOTS]
    names += list(GLOBAL_SLOTS)
    values += _vector(cfg.get("tilt", [0.0, 0.0]), 2, "tilt", "tilt")
    gravity = np.array(pm.gravity.linear, dtype=float)
    if cfg.get("gravity") is not None:
        gravity = np.array(_vector(cfg["gravity"], 3, "gravity", "gravity"))
    q_slot = [pm.idx_qs[i] for i in range(1, pm.njoints)]
    model = MultibodyModel(bodies, hinges, gravity, pm, names, np.array(values), q_slot=q_slot)
    for name in estimate:
        model.index(name)
    model.estimate, model.estimate_default = estimate, auto
    _config_values(cfg, model, pm)
    return model
