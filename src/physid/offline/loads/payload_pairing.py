"""A loaded and an unloaded run of the same trajectory, aligned in time (payload).

The classic known-payload experiment runs one trajectory twice, without and with the load.
Subtracting the two torques sample by sample cancels everything the robot model gets wrong the
same way in both runs (unmodelled dynamics, a wrong drive gain's effect on the robot's own
torque, friction): what is left is the payload's torque. Fitting each run against the robot's
identified model instead leaves the model's own error (a few per cent of a real arm's torque) in
the payload: the loaded-minus-unloaded difference is what a careful engineer computes by hand.

:func:`pair_runs` finds the time shift that lays the unloaded run onto the loaded one (the runs
start at different moments of the logs), checks that the positions then agree (the same
trajectory, not just the same robot), and returns the unloaded run resampled at the loaded
run's sample times over their overlap.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from physid.recordings.trajectory import Trajectory

SAME_TRAJECTORY = 0.02  # RMS position difference after alignment / position std: one trajectory
COARSE_STEP_S = 0.1  # grid of the shift search before refinement
MIN_OVERLAP = 0.5  # of the shorter run


@dataclass(frozen=True)
class Pairing:
    """The loaded run cropped to the overlap, the unloaded run resampled at its samples."""

    loaded: Trajectory
    unloaded: Trajectory
    shift_s: float  # unloaded time = loaded time + shift
    mismatch: float  # RMS position difference / position std, after alignment

    def note(self) -> str:
        return (
            f"paired difference: the unloaded run follows the loaded one shifted by "
            f"{self.shift_s:+.3f} s (positions agree to {100 * self.mismatch:.2g} % of their "
            "spread), so the robot model's own error cancels in loaded minus unloaded"
        )


def _interpolate(t_new: np.ndarray, t: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.column_stack([np.interp(t_new, t, x[:, k]) for k in range(x.shape[1])])


def _mismatch(loaded: Trajectory, unloaded: Trajectory, shift: float, grid: np.ndarray) -> float:
    """RMS of q_loaded(t) - q_unloaded(t + shift) over the overlap on ``grid``, per position std;
    inf if the overlap is too short."""
    t_u = unloaded.t - unloaded.t[0]
    inside = (grid + shift >= t_u[0]) & (grid + shift <= t_u[-1])
    shorter = min(loaded.t[-1] - loaded.t[0], t_u[-1])
    if np.sum(inside) < 2 or (grid[inside][-1] - grid[inside][0]) < MIN_OVERLAP * shorter:
        return np.inf
    t_l = loaded.t - loaded.t[0]
    q_l = _interpolate(grid[inside], t_l, loaded.q)
    q_u = _interpolate(grid[inside] + shift, t_u, unloaded.q)
    spread = np.std(q_l, axis=0)
    moving = spread > 1e-6
    if not np.any(moving):
        return np.inf
    return float(np.sqrt(np.mean(((q_l - q_u)[:, moving] / spread[moving]) ** 2)))


def pair_runs(loaded: Trajectory, unloaded: Trajectory) -> Pairing | None:
    """The two runs aligned in time if they are the same trajectory (module docstring)."""
    t_l = loaded.t - loaded.t[0]
    t_u = unloaded.t - unloaded.t[0]
    step = float(np.median(np.diff(loaded.t)))
    # coarse to fine: every shift on a 0.1 s grid, then around the best at 0.01 s, then at a
    # quarter of the sample period
    shifts = np.arange(-t_l[-1], t_u[-1], COARSE_STEP_S)
    mismatch, shift = np.inf, 0.0
    for width, resolution in ((None, COARSE_STEP_S), (COARSE_STEP_S, 0.01), (0.01, step / 4)):
        if width is not None:
            shifts = shift + np.arange(-width, width + resolution / 2, resolution)
        grid = np.arange(0.0, t_l[-1], max(resolution, step))
        costs = np.array([_mismatch(loaded, unloaded, s, grid) for s in shifts])
        if not np.any(np.isfinite(costs)):
            return None
        shift, mismatch = float(shifts[int(np.argmin(costs))]), float(np.min(costs))
    if not mismatch <= SAME_TRAJECTORY:
        return None
    rows = np.flatnonzero((t_l + shift >= t_u[0]) & (t_l + shift <= t_u[-1]))
    cropped = loaded.time_slice(int(rows[0]), int(rows[-1]) + 1)
    at = cropped.t - loaded.t[0] + shift
    aligned = replace(
        cropped,
        q=_interpolate(at, t_u, unloaded.q),
        tau=_interpolate(at, t_u, unloaded.tau),
        dq=None,
        ddq=None,
        source=f"{unloaded.source} (aligned on {loaded.source})",
    )
    return Pairing(cropped, aligned, shift, mismatch)
