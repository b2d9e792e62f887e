"""The simulator-matching problem: a MuJoCo model, a logged run, and the parameters to tune.

``physid simfit`` (issue 26 item 3) refines what a MuJoCo model says about each joint — viscous
``damping``, rotor ``armature``, dry ``frictionloss`` — and a constant delay between the logged
torque commands and the motion, so that MuJoCo, driven by the logged torques, reproduces the
measured joint trajectories. The run is cut into short windows (multiple shooting, as papers A
and B do for their state estimates): each window starts from its own state, a decision variable
started at the measured position and a Savitzky-Golay velocity, and is simulated open loop
through MuJoCo's ``rollout`` (every window of an evaluation in one batched call). The residual
is the simulated minus the measured position at every recorded sample inside the window,
divided by the position noise (estimated from the data).

Torques enter as ``qfrc_applied`` on each joint's degree of freedom (columns ``tau_<joint>``,
the torque the drives applied), so no actuator of the model is needed or used.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.signal

from physid.errors import InputError
from physid.recordings.trajectory import _check_finite, _check_magnitude, _check_time

JOINT_FIELDS = {
    "damping": "dof_damping",
    "armature": "dof_armature",
    "frictionloss": "dof_frictionloss",
}
UNITS = {"damping": "N m s/rad", "armature": "kg m^2", "frictionloss": "N m", "delay": "s"}
LINEAR_UNITS = {"damping": "N s/m", "armature": "kg", "frictionloss": "N", "delay": "s"}


@dataclass(frozen=True)
class Run:
    """One logged run: time [s], joint positions and applied torques (N, n) in model order."""

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    source: str

    def velocity(self, window: int = 11, order: int = 3) -> np.ndarray:
        """Savitzky-Golay derivative of the positions (the windows' starting velocities)."""
        dt = float(np.median(np.diff(self.t)))
        length = min(window, len(self.t) - (1 - len(self.t) % 2))
        return scipy.signal.savgol_filter(self.q, length, order, deriv=1, delta=dt, axis=0)

    def position_noise(self) -> np.ndarray:
        """Per joint std of the measured positions about a local cubic (the residual of a
        Savitzky-Golay fit, scaled for its degrees of freedom), floored at 1e-6."""
        length = min(11, len(self.t) - (1 - len(self.t) % 2))
        smooth = scipy.signal.savgol_filter(self.q, length, 3, axis=0)
        scale = np.sqrt(length / max(length - 4, 1))
        return np.maximum(np.std(self.q - smooth, axis=0) * scale, 1e-6)


def run_from_table(table, joints: tuple[str, ...]) -> Run:
    """The ``t``, ``q_<joint>`` and ``tau_<joint>`` columns of a contract table."""
    columns = table.columns
    missing = [
        c
        for c in ("t", *(f"q_{j}" for j in joints), *(f"tau_{j}" for j in joints))
        if c not in columns
    ]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)} (simfit needs t, q_<joint> and "
            "the applied torque tau_<joint> of every joint)",
            source=table.source,
        )
    used = [*(f"q_{j}" for j in joints), *(f"tau_{j}" for j in joints)]
    t = _check_time(table)  # finite, increasing, no gap (one error line naming the row)
    _check_finite(table, used)
    _check_magnitude(table, used)  # 1e300 overflowed the noise estimate
    q = np.column_stack([columns[f"q_{j}"] for j in joints]).astype(float)
    tau = np.column_stack([columns[f"tau_{j}"] for j in joints]).astype(float)
    if len(t) < 20:
        raise InputError(f"{len(t)} samples: too short to simulate", source=table.source)
    return Run(t - t[0], q, tau, table.source)


@dataclass(frozen=True)
class Parameters:
    """The tuned quantities: (joint, field) pairs of :data:`JOINT_FIELDS` and the delay."""

    joints: tuple[str, ...]
    fields: tuple[str, ...]
    delay: bool

    @property
    def names(self) -> tuple[str, ...]:
        names = tuple(f"{j}.{f}" for f in self.fields for j in self.joints)
        return (*names, "delay") if self.delay else names

    def values(self, model, dofs: np.ndarray, delay_s: float = 0.0) -> np.ndarray:
        """The model's current values (and the delay), in :attr:`names` order."""
        values = [getattr(model, JOINT_FIELDS[f])[dofs] for f in self.fields]
        return np.concatenate([*values, [delay_s] if self.delay else []])

    def apply(self, model, dofs: np.ndarray, x: np.ndarray) -> float:
        """Write ``x`` into ``model`` (in place); returns the delay [s]."""
        n = len(self.joints)
        for k, field in enumerate(self.fields):
            getattr(model, JOINT_FIELDS[field])[dofs] = np.maximum(x[k * n : (k + 1) * n], 0.0)
        return float(x[-1]) if self.delay else 0.0


def windows(t: np.ndarray, length_s: float) -> list[tuple[int, int]]:
    """Consecutive sample ranges [start, stop] (inclusive stop) of about ``length_s`` each."""
    starts, k = [], 0
    while k < len(t) - 2:
        stop = int(np.searchsorted(t, t[k] + length_s))
        stop = min(stop, len(t) - 1)
        if stop - k < 3:
            break
        starts.append((k, stop))
        k = stop
    return starts
