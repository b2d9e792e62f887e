"""Build a :class:`MultibodyModel` from a URDF (geometry, inertias) and a YAML config (what URDFs
cannot say: compliances, damping, friction, motors, gravity, what to estimate). See
``docs/multibody.md`` for the YAML keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from physid.errors import InputError
from physid.io import config_section, read_yaml
from physid.multibody.model import (
    BODY_SLOTS,
    GLOBAL_SLOTS,
    HINGE_DEFAULTS,
    HINGE_SLOTS,
    Body,
    Hinge,
    MultibodyModel,
)

CONFIG_KEYS = {"gravity", "tilt", "defaults", "joints", "bodies", "estimate", "bounds"}


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


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        raise InputError(f"config {where}: expected a finite number, got {value!r}")
    return float(value)


def load_model(urdf: str | Path, config: str | Path | dict | None = None) -> MultibodyModel:
    """Maximal-coordinate model of every revolute joint of ``urdf`` (paper A §2.1, App. F)."""
    import pinocchio as pin

    urdf = Path(urdf)
    if not urdf.is_file():
        raise InputError(f"URDF not found: {urdf}")
    raw = config if isinstance(config, dict) else (read_yaml(config, "config") if config else {})
    cfg = config_section(raw, CONFIG_KEYS, "(top level)")
    try:
        pm = pin.buildModelFromUrdf(str(urdf))
    except (RuntimeError, ValueError) as error:
        raise InputError(f"cannot read URDF: {error}", source=str(urdf)) from None
    data = pm.createData()
    q0 = pin.neutral(pm)
    pin.forwardKinematics(pm, data, q0)
    pin.computeJointJacobians(pm, data, q0)
    bodies, hinges, names, values, q_slot = [], [], [], [], []
    for i in range(1, pm.njoints):
        joint, jname = pm.joints[i], pm.names[i]
        if joint.nv != 1 or not joint.shortname().startswith("JointModelR"):
            raise InputError(
                f"joint '{jname}' is {joint.shortname()}; only revolute joints are supported",
                source=str(urdf),
            )
        inertia = pm.inertias[i]
        if inertia.mass <= 0:
            raise InputError(f"body of joint '{jname}' has mass {inertia.mass}", source=str(urdf))
        R = data.oMi[i].rotation.copy()
        r = data.oMi[i].act(inertia.lever)
        bodies.append(Body(jname, r, R))
        inertia_c = inertia.inertia
        body_values = [inertia.mass, *np.diag(inertia_c), inertia_c[0, 1], inertia_c[0, 2]]
        body_values.append(inertia_c[1, 2])
        names += [f"{jname}.{slot}" for slot in BODY_SLOTS]
        values += list(map(float, body_values))
        q_slot.append(pm.idx_qs[i])
    joints_cfg = config_section(cfg.get("joints"), set(pm.names[1:]), "joints")
    defaults = dict(HINGE_DEFAULTS)
    for key, value in config_section(cfg.get("defaults"), set(HINGE_SLOTS), "defaults").items():
        defaults[key] = _number(value, f"defaults.{key}")
    estimate = [str(name) for name in (cfg.get("estimate") or [])]
    for i in range(1, pm.njoints):
        jname, parent = pm.names[i], pm.parents[i]
        jac = np.asarray(pin.getJointJacobian(pm, data, i, pin.ReferenceFrame.LOCAL)).reshape(6, -1)
        axis = jac[3:, pm.idx_vs[i]]
        axis = axis / np.linalg.norm(axis)
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
        own = config_section(joints_cfg.get(jname), set(HINGE_SLOTS), f"joints.{jname}")
        slots = {**defaults, **{k: _number(v, f"joints.{jname}.{k}") for k, v in own.items()}}
        wants = {f"{jname}.{s}" for s in ("gain", "shaft_inertia")} & set(estimate)
        motor = slots["gain"] != 0.0 or slots["shaft_inertia"] > 0.0 or bool(wants)
        dry_names = {f"{jname}.{s}" for s in ("dry", "stribeck_delta")}
        dry = slots["dry"] > 0.0 or slots["stribeck_delta"] > 0.0 or bool(dry_names & set(estimate))
        hinges.append(
            Hinge(
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
        )
        names += [f"{jname}.{slot}" for slot in HINGE_SLOTS]
        values += [slots[slot] for slot in HINGE_SLOTS]
    names += list(GLOBAL_SLOTS)
    tilt = cfg.get("tilt", [0.0, 0.0])
    if not isinstance(tilt, list | tuple) or len(tilt) != 2:
        raise InputError(f"config tilt: expected [tilt_1, tilt_2] in radians, got {tilt!r}")
    values += [_number(value, f"tilt[{k}]") for k, value in enumerate(tilt)]
    body_cfg = config_section(cfg.get("bodies"), set(pm.names[1:]), "bodies")
    for jname, overrides in body_cfg.items():
        for slot, value in config_section(overrides, set(BODY_SLOTS), f"bodies.{jname}").items():
            values[names.index(f"{jname}.{slot}")] = _number(value, f"bodies.{jname}.{slot}")
    gravity = np.asarray(cfg.get("gravity", pm.gravity.linear), dtype=float)
    if gravity.shape != (3,) or not np.all(np.isfinite(gravity)):
        raise InputError(f"config gravity: expected 3 finite numbers, got {cfg.get('gravity')!r}")
    model = MultibodyModel(bodies, hinges, gravity, pm, names, np.array(values), q_slot=q_slot)
    for name in estimate:
        model.index(name)
    model.estimate = estimate
    bounds = config_section(cfg.get("bounds"), set(names), "bounds")
    for name, pair in bounds.items():
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise InputError(f"config bounds.{name}: expected [lower, upper]")
        lo, hi = (-np.inf if v is None else _number(v, f"bounds.{name}") for v in pair)
        model.lower[name], model.upper[name] = lo, (np.inf if pair[1] is None else hi)
    return model
