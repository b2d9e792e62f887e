"""Which bodies' geoms overlap at given poses, as MuJoCo's collision detection sees them.

Shared by ``physid simfit`` (the recorded positions: :mod:`physid.simfit.contacts`) and the MJCF
export of a URDF (its reference pose: :mod:`physid.export.mjcf`): collision shapes drawn coarser
than the robot make MuJoCo push apart links that the real robot moves freely.
"""

from __future__ import annotations

import numpy as np

DEPTH_TOLERANCE_M = 1e-3  # an overlap below this is geoms drawn flush, not a collision


def overlapping_pairs(model, qpos_rows: np.ndarray) -> dict[tuple[str, str], tuple[float, float]]:
    """``{(body, body): (deepest overlap [m], share of the poses)}`` of the geoms of ``model`` (a
    ``mujoco.MjModel``) that overlap by more than :data:`DEPTH_TOLERANCE_M` at the poses
    ``qpos_rows`` (P, nq), with the model's contact types, affinities and exclusions (none when
    its flags switch contacts off); body names sorted within a pair."""
    import mujoco

    data = mujoco.MjData(model)
    deepest: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    for qpos in np.atleast_2d(qpos_rows):
        data.qpos[:] = qpos
        mujoco.mj_fwdPosition(model, data)
        seen = set()
        for k in range(data.ncon):
            contact = data.contact[k]
            depth = -float(contact.dist)
            if depth <= DEPTH_TOLERANCE_M:
                continue
            pair = tuple(
                sorted(
                    _body_name(model, int(model.geom_bodyid[g]))
                    for g in (contact.geom1, contact.geom2)
                )
            )
            deepest[pair] = max(deepest.get(pair, 0.0), depth)
            seen.add(pair)
        for pair in seen:
            counts[pair] = counts.get(pair, 0) + 1
    poses = len(np.atleast_2d(qpos_rows))
    return {pair: (deepest[pair], counts[pair] / poses) for pair in deepest}


def _body_name(model, body: int) -> str:  # noqa: ANN001 - mujoco.MjModel
    import mujoco

    return mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, body) or f"body {body}"


def can_touch(model) -> bool:  # noqa: ANN001 - mujoco.MjModel
    """Whether any contact can ever arise in ``model`` (a ``mujoco.MjModel``), whatever its
    pose: an explicit contact pair, a flex, or two geoms on different weld bodies (bodies
    joined without a joint move as one) whose contact types and affinities match, not
    excluded, and not a weld body and its parent's (MuJoCo's parent filter, which spares the
    world). Where unsure it answers True: MuJoCo then checks, as always."""
    import mujoco

    flags = int(model.opt.disableflags)
    if flags & int(mujoco.mjtDisableBit.mjDSBL_CONTACT):
        return False
    if model.npair or getattr(model, "nflex", 0):
        return True
    excluded = {int(s) for s in model.exclude_signature}
    filter_parent = not flags & int(mujoco.mjtDisableBit.mjDSBL_FILTERPARENT)
    weld, parent = model.body_weldid, model.body_parentid
    bodies, types, affinities = model.geom_bodyid, model.geom_contype, model.geom_conaffinity
    for i in range(model.ngeom):
        for j in range(i + 1, model.ngeom):
            a, b = int(bodies[i]), int(bodies[j])
            wa, wb = int(weld[a]), int(weld[b])
            if wa == wb or not (types[i] & affinities[j] or types[j] & affinities[i]):
                continue
            if (a << 16) + b in excluded or (b << 16) + a in excluded:
                continue
            related = wa == int(weld[int(parent[wb])]) or wb == int(weld[int(parent[wa])])
            if filter_parent and wa != 0 and wb != 0 and related:
                continue
            return True
    return False
