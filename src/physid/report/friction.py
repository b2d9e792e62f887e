"""The friction part of an identification's report: what the data show against what the model
says, for the linear, sigmoid and Stribeck models alike (:mod:`physid.robot.friction`)."""

from __future__ import annotations

import numpy as np

from physid.offline.observe.prediction import RecordingFit
from physid.offline.result import IdentificationResult
from physid.robot.friction import SHAPE_PARAMETERS
from physid.robot.model import RobotModel, is_revolute
from physid.robot.regressor import joint_friction_torque


def friction_residuals(
    result: IdentificationResult, fits: tuple[RecordingFit, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Velocity (M, n) and the torque the rigid-body model leaves over (M, n), stacked.

    The residual is ``tau - (tau_predicted - friction)``: measured torque minus the predicted
    rigid-body part (inertia, gravity, armature and coupled-motor terms), i.e. the friction the
    data show plus the noise, to set against the identified friction model.
    """
    n = result.model.n_joints
    if not fits or result.theta is None:
        return np.zeros((0, n)), np.zeros((0, n))
    velocities = np.concatenate([fit.dq for fit in fits])
    residuals = np.concatenate(
        [
            fit.tau - fit.tau_predicted + joint_friction_torque(result.model, result.theta, fit.dq)
            for fit in fits
        ]
    )
    return velocities, residuals


def friction_curves(
    model: RobotModel, theta: np.ndarray, top_speed: np.ndarray, points: int = 400
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per joint, the identified friction torque over ``[-top, top]`` (``top_speed`` (n,)): the
    velocity grid and the torque, with a NaN gap where it jumps (the Coulomb step at 0 or across
    the deadband), so a plotted line does not draw the jump as a slope."""
    curves = []
    deadband = model.coulomb_deadband
    for j in range(model.n_joints):
        top = max(float(top_speed[j]), 1e-9)
        band = 0.0 if deadband is None else float(deadband[j])
        side = np.linspace(band, top, points // 2)
        side[0] = max(side[0], 1e-12 * top)  # sign(0) = 0: start just off zero
        speed = np.concatenate([-side[::-1], [np.nan], side])
        grid = np.zeros((speed.size, model.n_joints))
        grid[:, j] = np.nan_to_num(speed)
        torque = joint_friction_torque(model, theta, grid)[:, j]
        torque[np.isnan(speed)] = np.nan
        if band > 0:  # the flat offset inside the deadband
            inside = np.linspace(-band, band, 3)
            grid = np.zeros((3, model.n_joints))
            grid[:, j] = inside
            speed = np.concatenate([speed, [np.nan], inside])
            torque = np.concatenate(
                [torque, [np.nan], joint_friction_torque(model, theta, grid)[:, j]]
            )
        curves.append((speed, torque))
    return curves


def friction_descriptions(
    model: RobotModel, theta: np.ndarray, at_bound: frozenset[int] = frozenset()
) -> tuple[str, ...]:
    """Per joint, its identified friction model in a few words (a panel title): every
    coefficient with its unit, the Coulomb deadband when there is one, and ``0 (at bound)`` for
    a coefficient held at 0 by the consistent fit (indices ``at_bound``)."""
    layout = model.layout
    deadband = model.coulomb_deadband
    texts = []
    for j, joint in enumerate(model.joint_names):
        revolute = is_revolute(model, joint)
        torque, speed = ("N m", "rad/s") if revolute else ("N", "m/s")
        units = {"fv": f"{torque} s/{speed.split('/')[0]}", "phi2": f"s/{speed.split('/')[0]}"}
        units |= {"phi3": speed, "vs": speed}
        kind = layout.friction_of(joint)
        parts = []
        for term in layout.terms_of(joint):
            if term == "Ia":
                continue
            index = layout.index(f"{joint}.{term}")
            bound = " (at bound)" if index in at_bound else ""
            value = 0.0 if bound else theta[index]
            parts.append(f"{term} {value:.3g} {units.get(term, torque)}{bound}")
        shape = zip(SHAPE_PARAMETERS[kind], model.shape_of(j), strict=True)
        parts += [f"{name} {value:.3g} {units[name]}" for name, value in shape]
        if deadband is not None and deadband[j] > 0:
            parts.append(f"deadband {deadband[j]:.2g} {speed}")
        text = ", ".join(parts)
        texts.append(text if kind == "linear" else f"{kind}: {text}")
    return tuple(texts)
