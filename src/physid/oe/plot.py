"""Convergence figure of an optimal-estimation solve: cost, gaps and body masses per iteration."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from physid.oe.charts import pis_and_jacobians
from physid.oe.result import OEResult


def plot_convergence(result: OEResult, path: str | Path) -> None:
    """Write a PNG with cost, infeasibility and each estimated body's mass over iterations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.5))
    hist = result.history
    axes[0].semilogy(np.abs(hist.get("cost", [])) + 1e-300)
    axes[0].set(title="cost (eq. 16)", xlabel="iteration")
    axes[1].semilogy(np.asarray(hist.get("infeasibility", [])) + 1e-300)
    axes[1].set(title="gaps sum |fbar|_1", xlabel="iteration")
    masses = np.array(
        [pis_and_jacobians(result.chart, np.asarray(t))[0][:, 0] for t in hist.get("theta", [])]
    )
    for b, name in enumerate(result.body_joints):
        if masses.size:
            axes[2].plot(masses[:, b], label=name)
    axes[2].set(title="mass [kg]", xlabel="iteration")
    axes[2].legend(fontsize=7)
    fig.suptitle(f"{result.chart}, {result.rollout} shooting: {result.status}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
