"""The bodies of joints held still during identification, taken back out of their parents.

A joint locked for the identification (``locked:`` in the config, or a gripper no recording logged:
:func:`physid.files.config.lock_unlogged`) is merged into the body of its nearest identified
ancestor: the identified parent carries the locked bodies, at the positions they were held at. An
exported robot file keeps those joints and their own bodies, so writing the identified parent as it
is counts them twice (the fingers' mass and their torques). Here each locked body, placed at its
lock position (``provenance.locked_by_config`` and ``locked_unlogged``; 0 for a lock the file does
not record: one written before they were), is subtracted from its identified parent in the parent's
joint frame. What remains is projected onto the nearest physical body where the subtraction leaves
it slightly outside (the identified parent's second moments are an estimate); a parent lighter than
what it carries is written as identified, with a note.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pinocchio as pin

from physid.body.inertia import project_consistent
from physid.files.config import RECORDED
from physid.files.params_file import ParamsFile
from physid.robot.model import load_robot_file


def without_locked_bodies(robot_file: str | Path, params: ParamsFile) -> tuple[ParamsFile, list]:
    """``params`` with every identified body free of the locked bodies it carries (module
    docstring), and notes."""
    pm = load_robot_file(robot_file)
    q = pin.neutral(pm)
    for joint, value in params.held_joints().items():
        if pm.existJointName(joint) and value != RECORDED:
            q[pm.joints[pm.getJointId(joint)].idx_q] = float(value)
    data = pm.createData()
    pin.forwardKinematics(pm, data, q)
    carried: dict[str, np.ndarray] = {}
    names: dict[str, list[str]] = {}
    for k in range(1, pm.njoints):
        name = pm.names[k]
        if name in params.bodies or pm.inertias[k].mass <= 0.0:
            continue
        parent = pm.parents[k]
        while parent > 0 and pm.names[parent] not in params.bodies:
            parent = pm.parents[parent]
        if parent == 0:  # carried by the fixed base: in no identified body
            continue
        placed = data.oMi[parent].actInv(data.oMi[k]).act(pm.inertias[k])
        owner = pm.names[parent]
        carried[owner] = carried.get(owner, np.zeros(10)) + placed.toDynamicParameters()
        names.setdefault(owner, []).append(name)
    bodies = dict(params.bodies)
    notes = []
    for owner, pi in carried.items():
        remaining = np.asarray(bodies[owner], float) - pi
        listed = f"{', '.join(names[owner])}, {pi[0]:.4g} kg"
        if remaining[0] <= 0.0:
            notes.append(
                f"body of {owner} written as identified: it carries the locked bodies "
                f"({listed}), which the file also keeps, and is lighter than "
                "them"
            )
            continue
        bodies[owner], projected = project_consistent(remaining)
        notes.append(
            f"body of {owner}: the locked bodies it carried in the identification ({listed}) "
            "taken out, as the file keeps them"
            + ("; what remains projected onto the nearest physical body" if projected else "")
        )
    return replace(params, bodies=bodies), notes
