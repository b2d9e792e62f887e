"""Geoms that overlap at the recorded positions: a collision model the real robot contradicts.

A model exported from a URDF (or drawn coarsely) can carry collision geoms that overlap where
the real arm moves freely: a base box reaching into the first link's cylinder at every pose
(MuJoCo does not filter contacts between a body and the world, its parent), or neighbouring
wrist links reaching into each other. Simulated, those contacts push the arm where the logged
torques did not, and the fit tunes the joints to fight them, at a cost that never comes near the
noise. The recordings say where the robot was, so the check is geometric: the model's geoms at
the recorded positions of every run, before any fitting, said at once and kept in the result's
findings.
"""

from __future__ import annotations

import numpy as np

from physid.findings import Finding
from physid.robot.collisions import overlapping_pairs
from physid.simfit.codes import GEOMS_OVERLAP

MAX_POSES = 2000  # recorded positions checked, evenly spread over the runs


def recorded_contacts_finding(model, runs: list, qpos: np.ndarray) -> Finding | None:  # noqa: ANN001
    """:data:`~physid.simfit.codes.GEOMS_OVERLAP` when geoms overlap at the recorded positions
    (module docstring): each pair with its deepest overlap and how often, and the MJCF lines
    that exclude them; None when nothing overlaps. A caution, not a refusal: runs simulated
    with the same geometry (a simulator matched to a simulator) did have those contacts."""
    poses = np.concatenate([run.q for run in runs])
    poses = poses[:: max(1, len(poses) // MAX_POSES)]
    rows = np.tile(model.qpos0, (len(poses), 1))  # the other joints at the reference pose
    rows[:, qpos] = poses
    pairs = overlapping_pairs(model, rows)
    if not pairs:
        return None
    ranked = sorted(pairs.items(), key=lambda item: -item[1][0])
    listed = ", ".join(
        f"{a} - {b} {1e3 * depth:.0f} mm deep at {100 * share:.0f} % of them"
        for (a, b), (depth, share) in ranked
    )
    excludes = "".join(f'<exclude body1="{a}" body2="{b}"/>' for (a, b), _ in ranked)
    numbers = {f"{a}-{b}_depth_m": depth for (a, b), (depth, _) in ranked}
    return GEOMS_OVERLAP(
        f"the model's geoms overlap at the recorded positions ({listed}): MuJoCo pushes them "
        "apart in every window, and the fit tunes the joints against those contacts; unless "
        "the robot touched them there, the collision model is coarser than the robot: add "
        f'<contact>{excludes}</contact> to the MJCF (or give those geoms contype="0" '
        'conaffinity="0") and fit again',
        numbers=numbers,
        names=sorted({body for pair, _ in ranked for body in pair}),
    )
