"""Starting values of the actuators' numbers from inverse dynamics (``physid simfit``).

The shooting fit (:mod:`.shooting`) is a local method: started with a motor gain a few times
off, every 0.5 s window diverges, the trust region collapses and the solver stops far from the
optimum. The actuators' numbers and
the joint terms enter the dynamics linearly (``frictionloss`` as ``fl sign(dq)`` once the joint
slides), so a linear least squares gives a start that is already close, as an identification
would. MuJoCo's inverse dynamics (``mj_inverse``, with the tuned joint terms set to 0) of the
smoothed recorded motion give the generalized force ``f0`` the motion needed beyond the model's
other forces; per joint, over every sample of every run,

    actuation = f0 + damping dq + armature ddq + frictionloss sign(dq)

where the actuation is the actuator's force on the joint (``ctrl_`` runs: ``gear (gain ctrl +
b0 + b1 q + b2 dq)``, whose tuned numbers — a motor's ``gain``, a servo's ``kp = -b1`` and
``kv = -b2`` — are the unknowns). A value that comes out non-finite or not positive is not used
(the file's value stays the start). The delay starts at 0 and is left to the shooting fit.

Only the actuators' numbers take these starts (:func:`apply_start`), so without tuned actuator
numbers nothing is computed; the joint terms are unknowns of the same least squares (so they do
not bias the actuators') but start from the file: an inverse-dynamics start gets the dampings
and frictionlosses close but not the armatures (their ``ddq`` column is noise and a held
command's delay), and from it the fit spends more evaluations to reach the same values.
"""

from __future__ import annotations

import numpy as np

from physid.simfit.problem import (
    JOINT_FIELDS,
    Parameters,
    Run,
    actuators_of,
    set_actuator_values,
)


def _needed_forces(model, q, dq, ddq, qpos: np.ndarray, dofs: np.ndarray) -> np.ndarray:
    """Generalized force (N, nv) the motion needs beyond the model's passive and constraint
    forces (MuJoCo's inverse dynamics)."""
    import mujoco

    data = mujoco.MjData(model)
    out = np.zeros((len(q), model.nv))
    for k in range(len(q)):
        data.qpos[qpos], data.qvel[dofs], data.qacc[dofs] = q[k], dq[k], ddq[k]
        mujoco.mj_inverse(model, data)
        out[k] = data.qfrc_inverse
    return out


def initial_values(model, runs: list[Run], parameters: Parameters, qpos, dofs) -> dict:
    """{parameter name: start value} of the tuned joint and actuator numbers (module
    docstring); names as :attr:`Parameters.names`."""
    import copy

    if not parameters.actuators or runs[0].ctrl is None:
        return {}
    bare = copy.copy(model)
    for field in parameters.fields:
        getattr(bare, JOINT_FIELDS[field])[dofs] = 0.0
    tuned: dict[int, set[str]] = {}
    names_of: dict[int, str] = {}
    for field, actuators in parameters.actuators:
        for name, a in actuators:
            tuned.setdefault(a, set()).add(field)
            names_of[a] = name
    motions = [tuple(run.smoothed(d) for d in (0, 1, 2)) for run in runs]
    forces = [_needed_forces(bare, *motion, qpos, dofs) for motion in motions]
    starts = {}
    for j, (joint, dof) in enumerate(zip(parameters.joints, dofs, strict=True)):
        q, dq, ddq = (np.concatenate([m[d][:, j] for m in motions]) for d in range(3))
        terms = {"damping": -dq, "armature": -ddq, "frictionloss": -np.sign(dq)}
        tuned_fields = [f for f in parameters.fields if f"{joint}.{f}" not in parameters.held]
        names = [f"{joint}.{field}" for field in tuned_fields]
        columns = [terms[field] for field in tuned_fields]
        known = -np.concatenate([f[:, dof] for f in forces])  # actuation - f0 - terms = 0
        for field in parameters.fields:  # a held term at the model's value (bare has it at 0)
            if field not in tuned_fields:
                known = known + getattr(model, JOINT_FIELDS[field])[dof] * terms[field]
        for a in actuators_of(model, int(dof)):
            gear = float(model.actuator_gear[a, 0])
            gain, (b0, b1, b2) = model.actuator_gainprm[a, 0], model.actuator_biasprm[a, :3]
            ctrl = np.concatenate([run.ctrl[:, a] for run in runs])
            fields = tuned.get(a, set())
            if "gain" in fields:
                names.append(f"{names_of[a]}.gain")
                columns.append(gear * ctrl)
                known += gear * (b0 + b1 * q + b2 * dq)
                continue
            if "kp" in fields:  # a servo's gain and position bias: kp (ctrl - q)
                names.append(f"{names_of[a]}.kp")
                columns.append(gear * (ctrl - q))
            else:
                known += gear * (gain * ctrl + b1 * q)
            if "kv" in fields:
                names.append(f"{names_of[a]}.kv")
                columns.append(-gear * dq)
            else:
                known += gear * b2 * dq
            known += gear * b0
        if not columns:
            continue
        solution, *_ = np.linalg.lstsq(np.column_stack(columns), -known, rcond=None)
        for name, value in zip(names, solution, strict=True):
            if np.isfinite(value) and value > 0.0:
                starts[name] = float(value)
    return starts


def apply_start(model, parameters: Parameters, starts: dict) -> int:
    """Write the actuators' values of :func:`initial_values` into ``model`` (in place; the
    joint terms keep the file's, module docstring); returns how many were written."""
    written = 0
    for field, actuators in parameters.actuators:
        for name, a in actuators:
            value = starts.get(f"{name}.{field}")
            if value is not None:
                set_actuator_values(model, field, [a], [value])
                written += 1
    return written
