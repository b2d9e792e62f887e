"""Files of ``physid multibody``: the control signal in, the simulated trajectory out.

Control file (CSV with a header, ``.npz`` or ``.parquet``): ``t`` [s], strictly increasing, and
``u_<joint>`` for every hinge with a motor (the control signal ``u`` of F.3; the motor torque is
``K u``). The simulator holds each sample until the next (zero-order hold).

Trajectory file (the physid contract): ``t``, ``q_<joint>`` [rad], ``dq_<joint>`` [rad/s] and
the control ``u_<joint>`` used for every motor hinge.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.files.io import table_csv_text
from physid.multibody.model.spec import MultibodyModel
from physid.multibody.step.simulate import MultibodySimulation
from physid.recordings.trajectory import _check_magnitude, read_table


def read_control(path: str | Path, model: MultibodyModel) -> tuple[np.ndarray, np.ndarray]:
    """``(t, u)`` with ``u`` of shape (N, hinges), zero for hinges without a motor."""
    table = read_table(path)
    source = table.source
    motors = [h.name for h in model.hinges if h.has_motor]
    allowed = {"t"} | {f"u_{name}" for name in motors}
    for column in table.columns:
        if column not in allowed:
            hint = (
                f"joint '{column[2:]}' has no motor (set its gain in the config)"
                if column.startswith("u_") and column[2:] in model.joint_names
                else f"expected t and {', '.join(sorted(allowed - {'t'})) or 'no u_ column'}"
            )
            raise InputError(f"unknown column '{column}': {hint}", source=source)
    if "t" not in table.columns:
        raise InputError("missing column 't' (time in seconds)", source=source)
    t = table.columns["t"]
    if len(t) < 2:
        raise InputError(f"only {len(t)} rows; at least 2 are needed", source=source)
    u = np.zeros((len(t), len(model.hinges)))
    for j, hinge in enumerate(model.hinges):
        if not hinge.has_motor:
            continue
        name = f"u_{hinge.name}"
        if name not in table.columns:
            raise InputError(f"missing column '{name}' (control of motor hinge)", source=source)
        u[:, j] = table.columns[name]
    for name in sorted(table.columns):
        values = table.columns[name]
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise InputError(f"column '{name}' row {bad[0] + 1} is {values[bad[0]]}", source=source)
    steps = np.diff(t)
    if np.any(steps <= 0):
        row = int(np.flatnonzero(steps <= 0)[0]) + 2
        raise InputError(f"column 't' is not strictly increasing at row {row}", source=source)
    _check_magnitude(table, sorted(set(table.columns) - {"t"}))  # 1e300 diverged to NaN
    return t, u


def hold(t: np.ndarray, u: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """Step times ``t0 + k h`` covering ``[t0, t_end]`` and the control held at each of them."""
    n_steps = int(np.floor((t[-1] - t[0]) / h + 1e-9))
    times = t[0] + h * np.arange(n_steps)
    idx = np.searchsorted(t, times + 1e-12 * h, side="right") - 1
    return times, u[idx]


def trajectory_columns(
    model: MultibodyModel, sim: MultibodySimulation, t0: float = 0.0, every: int = 1
) -> dict[str, np.ndarray]:
    """The contract columns of ``sim`` (every ``every``-th sample)."""
    columns = {"t": t0 + sim.t[::every]}
    for j, name in enumerate(model.joint_names):
        columns[f"q_{name}"] = sim.angles[::every, j]
    for j, name in enumerate(model.joint_names):
        columns[f"dq_{name}"] = sim.rates[::every, j]
    for j, hinge in enumerate(model.hinges):
        if hinge.has_motor:
            columns[f"u_{hinge.name}"] = sim.u[::every, j]
    return columns


def trajectory_csv_text(
    model: MultibodyModel, sim: MultibodySimulation, t0: float, every: int
) -> str:
    return table_csv_text(trajectory_columns(model, sim, t0, every), fmt="%.12g")
