"""Geoms that overlap at the recorded positions: a collision model the real robot contradicts.

A model exported from a URDF (or drawn coarsely) can carry collision geoms that overlap where
the real arm moves freely: the KUKA LWR4+ of ``physid export --format mjcf`` has its base box
70 mm into the first link's cylinder at every recorded pose (MuJoCo does not filter contacts
between a body and the world, its parent), and its wrist links 27 mm into each other. Simulated,
those contacts push the arm where the logged torques did not: the fit then tunes the joints to
fight them (on that KUKA its cost stayed near 4e15 noise variances after 27 evaluations and
three minutes). The recordings say where the robot was, so the check is geometric: the model's
geoms at the measured positions of every run, before any fitting, said at once and kept in the
result's notes.
"""

from __future__ import annotations

import numpy as np

MAX_POSES = 2000  # measured positions checked, evenly spread over the runs
DEPTH_TOLERANCE_M = 1e-3  # an overlap below this is geoms drawn flush, not a collision


def overlapping_pairs(model, runs: list, qpos: np.ndarray) -> dict[tuple[str, str], tuple]:
    """``{(body, body): (deepest overlap [m], share of the poses)}`` of the geoms that overlap by
    more than :data:`DEPTH_TOLERANCE_M` at the runs' measured positions (the other joints at
    the model's reference pose), as MuJoCo's own collision detection sees them (its contact
    types, affinities and exclusions, contacts switched off by its flags)."""
    import mujoco

    poses = np.concatenate([run.q for run in runs])
    poses = poses[:: max(1, len(poses) // MAX_POSES)]
    data = mujoco.MjData(model)
    deepest: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    for q in poses:
        data.qpos[:] = model.qpos0
        data.qpos[qpos] = q
        mujoco.mj_fwdPosition(model, data)
        seen = set()
        for k in range(data.ncon):
            contact = data.contact[k]
            depth = -float(contact.dist)
            if depth <= DEPTH_TOLERANCE_M:
                continue
            pair = tuple(sorted(_body_name(model, int(model.geom_bodyid[g]))
                                for g in (contact.geom1, contact.geom2)))  # fmt: skip
            deepest[pair] = max(deepest.get(pair, 0.0), depth)
            seen.add(pair)
        for pair in seen:
            counts[pair] = counts.get(pair, 0) + 1
    return {pair: (deepest[pair], counts[pair] / len(poses)) for pair in deepest}


def _body_name(model, body: int) -> str:  # noqa: ANN001 - mujoco.MjModel
    import mujoco

    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body) or f"body {body}"


def recorded_contacts_note(model, runs: list, qpos: np.ndarray) -> str | None:
    """What the user must know when geoms overlap at the recorded positions (module docstring):
    each pair with its deepest overlap and how often, and the MJCF lines that exclude them; None
    when nothing overlaps. A note, not a refusal: runs simulated with the same geometry (a
    simulator matched to a simulator) did have those contacts."""
    pairs = overlapping_pairs(model, runs, qpos)
    if not pairs:
        return None
    ranked = sorted(pairs.items(), key=lambda item: -item[1][0])
    listed = ", ".join(f"{a} - {b} {1e3 * depth:.0f} mm deep at {100 * share:.0f} % of them"
                       for (a, b), (depth, share) in ranked)  # fmt: skip
    excludes = "".join(f'<exclude body1="{a}" body2="{b}"/>' for (a, b), _ in ranked)
    return (
        f"the model's geoms overlap at the recorded positions ({listed}): MuJoCo pushes them "
        "apart in every window, and the fit tunes the joints against those contacts; unless "
        "the robot touched them there, the collision model is coarser than the robot: add "
        f"<contact>{excludes}</contact> to the MJCF (or give those geoms contype=\"0\" "
        'conaffinity="0") and fit again'
    )
