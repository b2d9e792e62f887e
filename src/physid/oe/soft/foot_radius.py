"""The feet's radius from the stance kinematics of a recording.

A round foot of radius r that rolls without slipping on flat ground touches it at the point
``c - r e_z`` below its centre ``c`` (the contact frame's origin), and that material point is
at rest: ``v_c + omega x (-r e_z) = 0``, i.e.::

    v_c = r (omega x e_z) = r (omega_y, -omega_x, 0)          (rolling without slipping)

with ``omega`` the foot's world angular velocity. Both sides come from forward kinematics at
the recorded configuration (encoders, IMU orientation) and velocity (joint velocities, gyro).
The base's linear velocity, which a legged robot rarely measures, moves every foot centre by
the same amount, so it is removed by taking each stance foot relative to the mean of the feet
in contact at that node (nodes with at least two)::

    v_c,i - mean_j v_c,j = r (u_i - mean_j u_j),   u = omega x e_z   (horizontal components)

a one-parameter linear least squares over the stance nodes. Both sides are averaged over a
short moving window first (a linear filter applied to both sides keeps the relation; it
takes the joint-velocity noise out of the regressor, whose errors would otherwise shrink the
estimate towards 0). Its standard deviation is the block sandwich ``sqrt(sum_b s_b^2) /
sum |x|^2`` with ``s_b = sum x e`` over blocks of ``BLOCK_WIDTHS`` smoothing widths (the
smoothing and the slow creep and sag make neighbouring residuals alike; the blocks are
nearly independent, and they carry the residuals' unequal size). Joint-velocity noise
enters both sides (a joint's rate moves the foot centre by ``-l`` times its rotation, l the
lever below the joint), which biases the fit by about ``-l`` times the noise share of the
regressor's variance: towards negative radii, not towards a round foot that is not there.
If the estimate is not 3 standard deviations above 0 the data cannot tell a round foot
from a point: the radius is 0, and the reason says so; an estimate 3 std below 0 says the
feet creep or slide rather than roll (MuJoCo's soft contacts with a slow ``solref`` do: the
per-foot fits then scatter widely about the true radius), and the radius is 0 too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.oe.model.measurements import Measurements, base_dofs
from physid.oe.model.phases import flag_changes
from physid.recordings.running import window_means

SMOOTH_S = 0.05  # moving average of both sides [s]: 25 nodes at 500 Hz
BLOCK_WIDTHS = 4  # the std sums x e over blocks of this many smoothing widths (see above)
DECIDED_SIGMAS = 3.0  # an estimate below this many std above 0 is "cannot tell": radius 0


@dataclass(frozen=True)
class RadiusEstimate:
    """``radius`` [m] to use (0 when the data cannot decide), the least-squares ``estimate``
    and its ``std`` [m], the ``samples`` used and a one-line ``reason``."""

    radius: float
    estimate: float
    std: float
    samples: int
    reason: str


def rolling_regression(
    model: pin.Model, frames: tuple[str, ...], flags: NDArray, meas: Measurements, dt: float
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """``(x, y, block)``, ``(n, 2)``, ``(n, 2)``, ``(n,)``: the regressor ``u_i - mean u`` and
    the foot-centre velocity ``v_c,i - mean v_c`` (world x, y) of every stance foot at every
    node with two or more feet in contact, smoothed over ``SMOOTH_S`` within each run of one
    contact set, and each row's block of ``BLOCK_WIDTHS`` smoothing widths (for the std)."""
    q_all, n_rows = meas.q, meas.q.shape[0]
    _, bv = base_dofs(model)
    v_joint = meas.v if meas.v is not None else np.zeros((n_rows, model.nv - bv))
    data = model.createData()
    ids = [model.getFrameId(f) for f in frames]
    centre = np.zeros((n_rows, len(frames), 2))
    roll = np.zeros((n_rows, len(frames), 2))
    for k in range(n_rows):
        q = np.array(q_all[k], dtype=float)
        v = np.zeros(model.nv)
        v[bv:] = v_joint[k]
        if bv:
            if meas.base_quat is not None:
                q[3:7] = meas.base_quat[k]
            q[3:7] /= np.linalg.norm(q[3:7])
            if meas.gyro is not None:
                v[3:6] = meas.gyro[k]
            if meas.base_velocity is not None:
                v[:3] = meas.base_velocity[k]
        pin.forwardKinematics(model, data, q, v)
        for i, f in enumerate(ids):
            motion = pin.getFrameVelocity(model, data, f, pin.LOCAL_WORLD_ALIGNED)
            centre[k, i] = motion.linear[:2]
            roll[k, i] = motion.angular[1], -motion.angular[0]
    xs, ys, blocks = [], [], []
    width = max(1, int(round(SMOOTH_S / dt)))
    for start, stop in _runs(flags):
        feet = np.flatnonzero(flags[start])
        if feet.size < 2 or stop - start < width:
            continue
        for series, out in ((roll, xs), (centre, ys)):
            part = window_means(series[start:stop, feet], width)
            out.append((part - part.mean(axis=1, keepdims=True)).reshape(-1, 2))
        nodes = np.arange(stop - start - width + 1) // (BLOCK_WIDTHS * width)
        blocks.append(np.repeat(start + nodes, feet.size))
    if not xs:
        return np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, int)
    return np.concatenate(xs), np.concatenate(ys), np.concatenate(blocks)


def estimate_foot_radius(
    model: pin.Model, frames: tuple[str, ...], flags: NDArray, meas: Measurements, dt: float
) -> RadiusEstimate:
    """The feet's common radius by the rolling least squares of the module docstring."""
    if meas.q is None:
        return RadiusEstimate(0.0, np.nan, np.nan, 0, "no encoders: point feet")
    x, y, block = rolling_regression(model, frames, np.asarray(flags, bool), meas, dt)
    sxx = float(np.sum(x * x))
    if x.shape[0] < 10 or sxx <= 0.0:
        return RadiusEstimate(
            0.0,
            np.nan,
            np.nan,
            x.shape[0],
            "too few nodes with two feet in contact to see the feet roll: point feet",
        )
    r = float(np.sum(x * y) / sxx)
    score = np.sum(x * (y - r * x), axis=1)  # each row's share of sum x e
    per_block = np.bincount(np.unique(block, return_inverse=True)[1], weights=score)
    std = float(np.sqrt(np.sum(per_block**2) * per_block.size / max(per_block.size - 1, 1)) / sxx)
    if r < -DECIDED_SIGMAS * std:
        return RadiusEstimate(
            0.0,
            r,
            std,
            x.shape[0],
            (
                f"rolling fit {1e3 * r:.2f} +- {1e3 * std:.2f} mm is below 0: the stance "
                "feet creep or slide, they do not roll without slipping: point feet"
            ),
        )
    if r < DECIDED_SIGMAS * std:
        return RadiusEstimate(
            0.0,
            r,
            std,
            x.shape[0],
            (
                f"rolling fit {1e3 * r:.2f} +- {1e3 * std:.2f} mm is not {DECIDED_SIGMAS:g} std "
                "above 0: the data cannot tell round feet from points: point feet"
            ),
        )
    reason = f"rolling fit over {x.shape[0]} foot-nodes: {1e3 * r:.2f} +- {1e3 * std:.2f} mm"
    return RadiusEstimate(r, r, std, x.shape[0], reason)


def _runs(flags: NDArray) -> list[tuple[int, int]]:
    """``[start, stop)`` of the maximal runs of rows with the same contact set."""
    change = flag_changes(flags) + 1
    edges = np.r_[0, change, flags.shape[0]]
    return list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))


def _moving_average(series: NDArray, width: int) -> NDArray[np.float64]:
    """Mean over ``width`` consecutive rows (valid part only) of a ``(n, ...)`` array."""
    cumulative = np.cumsum(np.concatenate([np.zeros_like(series[:1]), series]), axis=0)
    return (cumulative[width:] - cumulative[:-width]) / width
