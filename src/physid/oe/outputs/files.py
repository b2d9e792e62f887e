"""The files of a ``physid oe`` run besides result.json: ``params.json`` (identify's layout,
docs/architecture.md) and the estimated trajectory as contract columns (``trajectory.csv``)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.oe.data.recording import contract_joints
from physid.oe.data.recording_floating import base_columns
from physid.oe.model.measurements import base_dofs
from physid.oe.outputs.result import OEResult


def trajectory_columns(model: pin.Model, t: NDArray, result: OEResult) -> dict[str, NDArray]:
    """The estimated trajectory as contract columns: ``t``, ``q_<joint>``, ``dq_<joint>``."""
    out = {"t": t}
    nq = model.nq
    if base_dofs(model)[1]:
        out |= base_columns(result.xs, nq)
    for name, joint in contract_joints(model):
        qs = result.xs[:, joint.idx_q : joint.idx_q + joint.nq]
        out["q_" + name] = np.arctan2(qs[:, 1], qs[:, 0]) if joint.nq == 2 else qs[:, 0]
        out["dq_" + name] = result.xs[:, nq + joint.idx_v]
    return out


def params_document(model: pin.Model, result: OEResult, provenance: dict) -> dict:
    """``params.json`` (format physid.params/1): estimated bodies from the data with their
    standard deviations, every other body as given in the URDF."""
    from physid.body.inertia import mass_com_inertia_from_pi

    bodies = {}
    estimated = result.body_summary()
    quantities = ("mass", "com", "inertia")
    for name in list(model.names)[1:]:
        pi = model.inertias[model.getJointId(name)].toDynamicParameters()
        if pi[0] <= 0 and name not in estimated:
            continue
        mass, com, inertia = mass_com_inertia_from_pi(pi)
        urdf = {"mass": float(mass), "com": com.tolist(), "inertia": inertia.tolist()}
        if name in estimated:
            body = estimated[name]
            # identify's per-body layout (std and source per quantity, the URDF value as
            # prior), plus the raw pi standard deviations (kept: new fields are only added)
            bodies[name] = {key: body[key] for key in quantities} | {
                "std": body["std"]
                | {
                    "pi_order": ["m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz"],
                    "pi": body["pi_std"],
                },
                "source": dict.fromkeys(quantities, "data"),
                "prior": urdf,
            }
        else:  # not estimated: the URDF's body, exactly
            bodies[name] = urdf | {
                "std": {"mass": 0.0, "com": [0.0] * 3, "inertia": [[0.0] * 3] * 3},
                "source": dict.fromkeys(quantities, "prior"),
                "prior": dict(urdf),
            }
    return {
        "format": "physid.params/1",
        "bodies": bodies,
        "joints": result.joints,  # the estimated joint terms (identify's per-joint layout)
        "extra": {"gravity": model.gravity.linear.tolist()},
        "physically_consistent": True,
        "fit": {"status": result.status, "cost": result.cost},
        "provenance": provenance,
    }
