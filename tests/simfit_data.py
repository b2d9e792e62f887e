"""Runs of the Menagerie-style test arm simulated by MuJoCo under a PD tracking controller: the
controller's torque is logged, as a robot's drive would report it (shared by the simfit tests).
"""

from __future__ import annotations

import mujoco
import numpy as np
from test_mjcf import JOINTS

from physid.recordings.tables import Table

HOME = np.array([0.0, 0.3, -0.4, 0.05])
KP = np.array([60.0, 80.0, 20.0, 300.0])
KD = np.array([6.0, 8.0, 2.0, 30.0])


def simulate_arm(
    model,
    seconds: float,
    seed: int,
    *,
    noise_rad: float = 2e-4,
    rate_hz: float = 500.0,
    delay_s: float = 0.0,
) -> Table:
    """``t``, ``q_`` (with Gaussian noise) and the commanded ``tau_`` at ``rate_hz``; the drive
    applies each command ``delay_s`` after it is logged (a multiple of the model's step). The
    arm's four joints come first; a model's further joints (a gripper) are neither driven nor
    logged."""
    rng = np.random.default_rng(seed)
    data = mujoco.MjData(model)
    data.qpos[:4] = HOME
    mujoco.mj_forward(model, data)
    h = model.opt.timestep
    per = int(round(1.0 / (rate_hz * h)))
    lag = int(round(delay_s / h))
    w = 2 * np.pi * 0.3
    amplitude = rng.uniform(0.3, 0.8, (4, 3)) / np.arange(1, 4) * [[1], [1], [1], [0.04]]
    phase = rng.uniform(0, 2 * np.pi, (4, 3))
    k = np.arange(1, 4)
    logged_t, logged_q, logged_tau = [], [], []
    pending = [np.zeros(4)] * (lag + 1)  # commands on their way to the drive, one per step
    command = np.zeros(4)
    for step in range(int(round(seconds / h))):
        t = step * h
        if step % per == 0:
            reference = (amplitude * np.sin(w * k * t + phase)).sum(axis=1) + HOME
            rate = (amplitude * w * k * np.cos(w * k * t + phase)).sum(axis=1)
            command = (KP * (reference - data.qpos[:4]) + KD * (rate - data.qvel[:4])
                       + data.qfrc_bias[:4])  # fmt: skip
            logged_t.append(t)
            logged_q.append(data.qpos[:4].copy())
            logged_tau.append(command.copy())
        pending.append(command.copy())
        data.qfrc_applied[:4] = pending.pop(0)
        mujoco.mj_step(model, data)
    q = np.array(logged_q) + rng.normal(0.0, noise_rad, (len(logged_q), 4))
    columns = {"t": np.array(logged_t)}
    for j, name in enumerate(JOINTS):
        columns[f"q_{name}"] = q[:, j]
        columns[f"tau_{name}"] = np.array(logged_tau)[:, j]
    return Table(columns, f"simulated arm, seed {seed}")


def write_csv(table: Table, path) -> None:
    names = list(table.columns)
    np.savetxt(
        path,
        np.column_stack([table.columns[n] for n in names]),
        delimiter=",",
        header=",".join(names),
        comments="",
    )
