"""A floating base's logged velocities checked against its logged pose.

``physid online`` reads the root velocity *in the root frame* (Pinocchio's free-flyer
convention) beside the root pose in the world frame, and ``physid oe`` reads an IMU's angular
velocity in the base frame beside its orientation. Real logs often hold something else: a state
estimator's twist in world axes (many publish it so, whatever ``nav_msgs/Odometry`` says), a
gyro in degrees per second, or a quaternion stored w first in the x, y, z, w columns. Nothing
else in the estimators notices: the dynamics are simply evaluated at another velocity.

The check compares, over the joints' velocity check's windows (0.2 s, shorter on a short log:
:func:`~physid.recordings.velocity_check.window_edges`), the mean logged rate with the rate the
pose gives: the rotation between the window's ends, ``log(R_a^T R_b)`` (root axes) or
``log(R_b R_a^T)`` (world axes) over the window's duration, and the position change against the
logged linear velocity integrated in root axes (``sum R v dt``) or in world axes. Only windows
that turn (or move) by many times the pose's own noise are judged: a simulated Go1 whose IMU
orientation carries 0.01 rad of white noise per sample turns too little for any verdict. Where
the base's orientation barely changes the two frames agree: then nothing tells them apart, and
nothing needs to.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from physid.errors import InputError
from physid.recordings.glitches import position_noise
from physid.recordings.velocity_check import (
    DEGREES,
    MIN_WINDOWS,
    MOVES,
    window_edges,
    window_integrals,
)

MAX_TURN = 0.5  # rad: beyond, a window's rotation vector is no longer its integrated rate
FITS = 0.25  # relative misfit below which a logged rate is the pose's rate


def _misfit(logged: np.ndarray, expected: np.ndarray, bias: bool = False) -> float:
    """``|logged - expected| / |expected|`` over the windows; with ``bias``, a constant offset
    of the logged rate forgiven first (a gyro's bias: 0.01 rad/s is common uncalibrated, a
    fifth of a slowly swaying base's rate)."""
    error = logged - expected
    if bias:
        error = error - error.mean(axis=0)
    return float(np.linalg.norm(error) / max(np.linalg.norm(expected), 1e-300))


def _usable(t: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...] | None:
    """The finite rows, or None when they cannot be judged (too few, stamps not increasing,
    no quaternion: the readers say so)."""
    keep = np.all(
        np.column_stack([np.isfinite(a).reshape(len(a), -1) for a in (t, *arrays)]), axis=1
    )
    t, *rest = (a[keep] for a in (t, *arrays))
    if len(t) < 3 or not np.all(np.diff(t) > 0.0) or np.any(np.linalg.norm(rest[0], axis=1) < 0.5):
        return None
    return (t, *rest)


def _rotation(quaternion_xyzw: np.ndarray) -> Rotation:
    return Rotation.from_quat(quaternion_xyzw / np.linalg.norm(quaternion_xyzw, axis=1)[:, None])


def orientation_noise(rotation: Rotation) -> float:
    """The orientation's noise per sample [rad]: :func:`~physid.recordings.glitches.
    position_noise` of the rotation increments summed into a path (white orientation noise
    reads as itself; a state estimator's smooth orientation as nearly 0)."""
    increments = (rotation[:-1].inv() * rotation[1:]).as_rotvec()
    path = np.vstack([np.zeros((1, 3)), np.cumsum(increments, axis=0)])
    return float(np.max(position_noise(path)))


def angular_rate_problem(
    t: np.ndarray, quaternion_xyzw: np.ndarray, angular_rate: np.ndarray, columns: str
) -> str | None:
    """What is wrong with the logged angular velocity ``angular_rate`` (N, 3, rad/s, base axes)
    of a base whose orientation is ``quaternion_xyzw`` (N, 4, world from base) at times ``t``,
    as a clause naming ``columns``; None when it is the orientation's rate, or when the base
    turns too little (against the orientation's noise) to tell."""
    usable = _usable(t, quaternion_xyzw, angular_rate)
    if usable is None:
        return None
    t, quaternion, logged_rate = usable
    edges = window_edges(t, 2.0)
    if len(edges) < MIN_WINDOWS + 1:
        return None

    def turns(stored: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        rotation = _rotation(stored)
        first, last = rotation[edges[:-1]], rotation[edges[1:]]
        return (
            (first.inv() * last).as_rotvec(),
            (last * first.inv()).as_rotvec(),
            orientation_noise(rotation),
        )

    body, world, noise = turns(quaternion)
    size = np.linalg.norm(body, axis=1)
    judged = (size > MOVES * noise) & (size < MAX_TURN)
    if np.count_nonzero(judged) < MIN_WINDOWS:
        return None
    spans = np.diff(t[edges])[judged, None]  # rates, so that a gyro's bias is one offset
    logged = window_integrals(t, logged_rate, edges)[judged] / spans
    body, world = body[judged] / spans, world[judged] / spans

    def fits(expected: np.ndarray) -> bool:
        return _misfit(logged, expected, bias=True) <= FITS

    if fits(body):
        return None
    if fits(world):
        return (
            f"{columns} are the angular velocity in world axes, not in the base's own: "
            "rotate them by the inverse of the base orientation"
        )
    if fits(DEGREES * body):
        return f"{columns} read 57.3 x the orientation's rate (degrees per second?)"
    if fits(-body):
        return f"{columns} read -1 x the orientation's rate (the sign flipped)"
    w_first, _, _ = turns(quaternion[:, [1, 2, 3, 0]])
    if fits(w_first[judged] / spans):
        return (
            "the base quaternion reads as stored w first (w, x, y, z) in the base_qx, "
            "base_qy, base_qz, base_qw columns: the angular velocity follows it so; "
            "store it x, y, z, w"
        )
    return (
        f"{columns} do not follow the base orientation's rate (misfit "
        f"{100 * _misfit(logged, body, True):.0f} % in the base's axes, "
        f"{100 * _misfit(logged, world, True):.0f} % in world axes): another frame's, or "
        "another sensor's axes?"
    )


def linear_velocity_problem(
    t: np.ndarray,
    position: np.ndarray,
    quaternion_xyzw: np.ndarray,
    velocity: np.ndarray,
    columns: str,
) -> str | None:
    """What is wrong with the logged linear velocity ``velocity`` (N, 3, m/s, base axes) of a
    base at ``position`` (N, 3, world) and orientation ``quaternion_xyzw``, as a clause naming
    ``columns``; None when it is the position's rate in base axes, or when too little moves to
    tell."""
    usable = _usable(t, quaternion_xyzw, position, velocity)
    if usable is None:
        return None
    t, quaternion, position, logged = usable
    edges = window_edges(t, 2.0)
    if len(edges) < MIN_WINDOWS + 1:
        return None
    moved = np.diff(position[edges], axis=0)
    judged = np.linalg.norm(moved, axis=1) > MOVES * float(np.max(position_noise(position)))
    if np.count_nonzero(judged) < MIN_WINDOWS:
        return None
    body = window_integrals(t, _rotation(quaternion).apply(logged), edges)[judged]
    world = window_integrals(t, logged, edges)[judged]
    moved = moved[judged]
    if _misfit(body, moved) <= FITS:
        return None
    if _misfit(world, moved) <= FITS:
        return (
            f"{columns} are the velocity in world axes, not in the base's own: rotate them "
            "by the inverse of the base orientation"
        )
    return (
        f"{columns} do not follow the rate of base_x, base_y, base_z (misfit "
        f"{100 * _misfit(body, moved):.0f} % in the base's axes, "
        f"{100 * _misfit(world, moved):.0f} % in world axes)"
    )


def check_base_rates(
    t: np.ndarray,
    quaternion_xyzw: np.ndarray,
    angular_rate: tuple[np.ndarray, str],
    source: str,
    *,
    linear: tuple[np.ndarray, np.ndarray, str] | None = None,
) -> None:
    """One error line (``source``) naming what :func:`angular_rate_problem` and, given
    ``linear = (position, velocity, columns)``, :func:`linear_velocity_problem` find."""
    rate, columns = angular_rate
    problems = [angular_rate_problem(t, quaternion_xyzw, rate, columns)]
    if linear is not None:
        position, velocity, names = linear
        problems.append(linear_velocity_problem(t, position, quaternion_xyzw, velocity, names))
    said = [problem for problem in problems if problem]
    if said:
        raise InputError(
            "the floating base's logged velocities are not its pose's rate: " + "; ".join(said),
            source=source,
        )
