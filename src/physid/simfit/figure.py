"""The held-out rollouts of ``physid simfit``: recorded joint positions against MuJoCo's open-loop
simulations from the recorded states, with the model as given and as tuned."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from physid.simfit.problem import Parameters, Run
from physid.simfit.shooting import Shooting

HORIZON_S = 0.5
SHOWN_S = 4.0


def _rollouts(model, run: Run, dofs, qpos, delay_s: float):
    """(times, positions) of back-to-back open-loop simulations of :data:`HORIZON_S`."""
    kept = run.t <= SHOWN_S
    shown = Run(
        run.t[kept],
        run.q[kept],
        None if run.tau is None else run.tau[kept],
        run.source,
        ctrl=None if run.ctrl is None else run.ctrl[kept],
    )
    shooting = Shooting(
        model, [shown], Parameters((), (), delay=True), HORIZON_S, np.ones(len(dofs)), dofs, qpos
    )
    offsets = np.zeros((len(shooting.windows), shooting.n_state))
    states = shooting.simulate(np.array([delay_s]), offsets)
    grid = shooting.h * np.arange(shooting.nstep + 1)
    pieces = []
    for w, (_, a, b) in enumerate(shooting.windows):
        span = grid <= shown.t[b] - shown.t[a]
        pieces.append((shown.t[a] + grid[span], states[w, span]))
    return shown, pieces


def plot_rollouts(
    before, after, run: Run, joints: tuple[str, ...], dofs, qpos, delay_s: float, path: Path
) -> None:
    """One panel per joint: recorded, simulated with ``before`` and with ``after`` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown, first = _rollouts(before, run, dofs, qpos, 0.0)
    _, second = _rollouts(after, run, dofs, qpos, delay_s)
    rows = len(joints)
    figure, axes = plt.subplots(rows, 1, figsize=(8, 1.8 * rows + 0.6), sharex=True, squeeze=False)
    for k, (axis, joint) in enumerate(zip(axes[:, 0], joints, strict=True)):
        axis.plot(shown.t, shown.q[:, k], color="0.6", lw=2.5, label="measured")
        for pieces, color, label in ((first, "tab:red", "as given"), (second, "tab:blue", "tuned")):
            for n, (t, q) in enumerate(pieces):
                axis.plot(t, q[:, k], color=color, lw=1, label=label if n == 0 and k == 0 else None)
        axis.set_ylabel(joint, fontsize=9)
        axis.tick_params(labelsize=8)
    axes[0, 0].legend(loc="upper right", fontsize=8, ncol=3)
    axes[-1, 0].set_xlabel("time [s]")
    figure.suptitle(
        f"held-out {Path(run.source).name}: open-loop {HORIZON_S:g} s from the measured states",
        fontsize=10,
    )
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
