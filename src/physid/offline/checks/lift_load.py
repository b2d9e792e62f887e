"""The weight a vertical lift carries: a check the gravity comparison cannot make.

A prismatic joint that moves vertically (a mobile manipulator's torso lift) carries the weight of
everything above it: its URDF gravity force ``g_j(q)`` hardly changes with the motion, so the
gravity comparison of :mod:`physid.offline.checks.suspect`, which judges the *variation* of each
joint's gravity torque after taking out a per-joint offset, never sees it, and in the fit that
force is one column with the joint's offset. A lift's force logged with the wrong sign, or on
another scale, is then absorbed by that offset and the moving mass, with status ``ok``.

So the recorded force of a moving lift at zero speed is compared with the mean of its URDF gravity
force over the same samples: least squares of the force on a constant, ``sign(dq)`` and ``dq`` takes
out the friction that opposes the motion, which the plain mean keeps wherever the run spends more
time going one way (dry friction as large as the weight, on a run that goes one way two thirds of
the time, makes the plain mean of a correct force 0.63 x the weight). Against it (the ratio below
:data:`FLIPPED_RATIO`) the sign is flipped: no counterbalance pushes up one and a half times the
weight. Outside :data:`LOAD_RANGE`, the masses above it cannot be read from it: the URDF's masses
are not the robot's, a counterbalance or a self-locking screw carries part of the weight, or the
lift's force is on another scale than the other joints' (a unit, a drive gain); a warning says so
with the numbers.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from physid.findings import Finding
from physid.offline.codes import LIFT_LOAD, LIFT_SIGN
from physid.recordings.trajectory import Trajectory, moving_joints_of
from physid.robot.model import RobotModel, is_revolute

CONSTANT_LOAD = 0.1  # the gravity force's std below this share of its mean: a constant load
FLIPPED_RATIO = -0.5  # recorded force at zero speed / mean URDF gravity force of a flipped sign
# ... of a lift whose force carries the URDF's weight: the range of a plausible moving mass
# (physid.offline.checks.plausibility.MOVING_MASS_RANGE), which is what the lift weighs (a lift
# force logged x0.5 reads about 0.5 x, and the fit's moving mass follows it)
LOAD_RANGE = (0.8, 1.25)
MAX_ROWS = 2000  # rows read for the means: the question has one number per joint


def lift_loads(model: RobotModel, trajectory: Trajectory) -> dict[str, tuple[float, float]]:
    """``{joint: (recorded force at zero speed, mean URDF gravity force)}`` [N] of the moving,
    fitted prismatic joints whose gravity force is constant and not zero over ``trajectory``
    (module docstring)."""
    q = np.asarray(trajectory.q, float)
    tau = np.asarray(trajectory.tau, float)
    rows = np.unique(np.linspace(0, len(q) - 1, min(len(q), MAX_ROWS)).astype(int))
    if rows.size < 2:
        return {}
    lifts = [
        k
        for k, joint in enumerate(model.joint_names)
        if model.fitted[k] and not is_revolute(model, joint)
    ]
    moving = moving_joints_of(trajectory, q)
    lifts = [k for k in lifts if moving[k]]
    if not lifts:
        return {}
    pin_model = model.pin_model
    data = pin_model.createData()
    gravity = np.array([pin.computeGeneralizedGravity(pin_model, data, q[r]) for r in rows])
    t = np.asarray(trajectory.t, float)
    found = {}
    for k in lifts:
        mean = float(gravity[:, k].mean())
        if abs(mean) > 1e-3 and float(gravity[:, k].std()) < CONSTANT_LOAD * abs(mean):
            speed = np.gradient(q[:, k], t)[rows]
            columns = np.column_stack([np.ones(rows.size), np.sign(speed), speed])
            force = tau[rows, k]
            finite = np.isfinite(force)
            coefficients, *_ = np.linalg.lstsq(columns[finite], force[finite], rcond=None)
            found[model.joint_names[k]] = (float(coefficients[0]), mean)
    return found


def lift_sign_finding(model: RobotModel, trajectory: Trajectory) -> Finding | None:
    """A finding when a lift's force at zero speed runs against its URDF weight
    (:data:`FLIPPED_RATIO`)."""
    loads = {
        joint: pair
        for joint, pair in lift_loads(model, trajectory).items()
        if pair[0] / pair[1] < FLIPPED_RATIO
    }
    if not loads:
        return None
    flipped = [
        f"'{joint}' {measured:.4g} N against {weight:.4g} N"
        for joint, (measured, weight) in loads.items()
    ]
    return LIFT_SIGN(
        "a lift's force runs against the weight the URDF puts on it (measured force at zero speed "
        f"{', '.join(flipped)}): its torque sign is flipped (a counterbalance never pushes up "
        "twice the weight)",
        numbers={
            f"{j}.{k}": v
            for j, (m, w) in loads.items()
            for k, v in (("force_n", m), ("weight_n", w))
        },
        names=[f"tau_{joint}" for joint in loads],
    )


def lift_load_findings(model: RobotModel, trajectories: list[Trajectory]) -> list[Finding]:
    """A finding per lift whose force at zero speed, averaged over the recordings in which it
    moves, leaves :data:`LOAD_RANGE` x its URDF weight (and is not flipped:
    :func:`lift_sign_finding` says that)."""
    loads: dict[str, list[tuple[float, float]]] = {}
    for trajectory in trajectories:
        for joint, pair in lift_loads(model, trajectory).items():
            loads.setdefault(joint, []).append(pair)
    warnings = []
    for joint, pairs in loads.items():
        measured, weight = np.mean(pairs, axis=0)
        ratio = measured / weight
        if ratio < FLIPPED_RATIO or LOAD_RANGE[0] <= ratio <= LOAD_RANGE[1]:
            continue
        warnings.append(
            LIFT_LOAD(
                f"the lift '{joint}' carries {ratio:.2g} x the weight the URDF puts on it (its "
                f"force at zero speed over the training recordings, {measured:.4g} N against "
                f"{weight:.4g} N): the URDF's masses above it are not "
                "the robot's, a counterbalance or a self-locking screw carries part of the weight, "
                "or its force is on another scale than the other joints' (a unit, a drive gain); "
                "the masses above it cannot be read from it, and its offset and the masses share "
                "the difference",
                numbers={
                    "ratio": float(ratio),
                    "force_n": float(measured),
                    "weight_n": float(weight),
                },
                names=(f"tau_{joint}",),
            )
        )
    return warnings
