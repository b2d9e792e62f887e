"""Starting values of the actuators' numbers from inverse dynamics (``physid simfit``).

The shooting fit (:mod:`.shooting`) is a local method: started with a motor gain 2.5x off, every
0.5 s window diverges, the trust region collapses and the solver stops far from the optimum
(measured on the test arm: cost 11.6e6 against 1.9e4 at the truth). The actuators' numbers enter
the dynamics linearly, so a linear least squares gives a start that is already close, as an
identification would: MuJoCo's inverse dynamics (``mj_inverse``) of the smoothed measured motion
give the generalized force each joint needed, and the actuator must have supplied it minus what
the model's other forces (gravity, damping, friction, contacts) supply:

* motor (``force = gain * ctrl``): ``gain = <f, ctrl> / <ctrl, ctrl>``;
* position servo (``force = kp (ctrl - q) - kv dq``): ``[kp, kv]`` from ``f`` on
  ``[ctrl - q, -dq]``,

with ``f = qfrc_inverse / gear`` on the actuator's joint (joint transmissions only), over every
sample of every run. A value that comes out non-finite or not positive is not used (the file's
value stays the start).
"""

from __future__ import annotations

import numpy as np
import scipy.signal

from physid.simfit.problem import Parameters, Run, set_actuator_values

SMOOTHING_WINDOW = 11  # samples of the Savitzky-Golay derivatives (as Run.velocity)


def _needed_forces(model, run: Run, qpos: np.ndarray, dofs: np.ndarray) -> np.ndarray:
    """Generalized force (N, nv) the measured motion needed beyond the model's passive and
    constraint forces (MuJoCo's inverse dynamics of Savitzky-Golay q, dq, ddq)."""
    import mujoco

    dt = float(np.median(np.diff(run.t)))
    length = min(SMOOTHING_WINDOW, len(run.t) - (1 - len(run.t) % 2))
    q = scipy.signal.savgol_filter(run.q, length, 3, axis=0)
    dq = scipy.signal.savgol_filter(run.q, length, 3, deriv=1, delta=dt, axis=0)
    ddq = scipy.signal.savgol_filter(run.q, length, 3, deriv=2, delta=dt, axis=0)
    data = mujoco.MjData(model)
    out = np.zeros((len(run.t), model.nv))
    for k in range(len(run.t)):
        data.qpos[qpos], data.qvel[dofs], data.qacc[dofs] = q[k], dq[k], ddq[k]
        mujoco.mj_inverse(model, data)
        out[k] = data.qfrc_inverse
    return out


def actuator_start(model, runs: list[Run], parameters: Parameters, qpos, dofs) -> dict:
    """{(field, actuator id): start value} of the tuned actuator numbers (module docstring)."""
    import mujoco

    if not parameters.actuators or runs[0].ctrl is None:
        return {}
    forces = [_needed_forces(model, run, qpos, dofs) for run in runs]
    position_of = {int(d): k for k, d in enumerate(dofs)}
    starts = {}
    tuned = {(field, a) for field, actuators in parameters.actuators for _, a in actuators}
    for a in sorted({a for _, a in tuned}):
        if int(model.actuator_trntype[a]) != int(mujoco.mjtTrn.mjTRN_JOINT):
            continue
        joint = int(model.actuator_trnid[a, 0])
        dof = int(model.jnt_dofadr[joint])
        gear = float(model.actuator_gear[a, 0])
        if dof not in position_of or gear == 0.0:
            continue
        j = position_of[dof]
        f = np.concatenate([force[:, dof] / gear for force in forces])
        ctrl = np.concatenate([run.ctrl[:, a] for run in runs])
        if ("gain", a) in tuned:
            columns = ctrl[:, None]
            names = ("gain",)
        else:
            q = np.concatenate([run.q[:, j] for run in runs])
            dq = np.concatenate([run.velocity()[:, j] for run in runs])
            columns = np.column_stack([ctrl - q, -dq])
            names = ("kp", "kv")
        solution, *_ = np.linalg.lstsq(columns, f, rcond=None)
        for name, value in zip(names, solution, strict=True):
            if (name, a) in tuned and np.isfinite(value) and value > 0.0:
                starts[name, a] = float(value)
    return starts


def apply_start(model, starts: dict) -> None:
    """Write :func:`actuator_start`'s values into ``model``."""
    for (name, a), value in starts.items():
        set_actuator_values(model, name, [a], [value])
