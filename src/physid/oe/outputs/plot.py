"""Figures of an optimal-estimation solve: convergence (cost, gaps, masses per iteration) and the
report (equivalent ellipsoids over iterations, base pose error, contact forces)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from physid.oe.model.charts import pis_and_jacobians
from physid.oe.outputs.result import OEResult


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
    n = 10 * len(result.body_joints)  # theta's joint terms after the bodies: not drawn
    masses = np.array(
        [pis_and_jacobians(result.chart, np.asarray(t)[:n])[0][:, 0] for t in hist.get("theta", [])]
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


def _iterations_shown(n: int, count: int = 5) -> list[int]:
    """Initial guess, a few evenly spaced intermediate iterations and the final one."""
    return sorted({int(round(i)) for i in np.linspace(0, n - 1, min(n, count))})


def plot_report(
    result: OEResult,
    path: str | Path,
    t: np.ndarray,
    pose: dict | None = None,
    forces: tuple[tuple[str, ...], np.ndarray] | None = None,
) -> None:
    """Write ``report.png``: per estimated body its equivalent ellipsoid (x-y and x-z outlines
    in the body frame) over the iterations; with ``pose`` (keys ``orientation`` [rad],
    ``position`` [m] or None, ``estimate`` (n, 3) [m]) the base pose error; with ``forces``
    ``(frames, (N, n_frames, 3))`` the normal (z) and tangential contact forces per foot."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from physid.oe.outputs.report import ellipsoid_outline, equivalent_ellipsoid

    rows = len(result.body_joints) + (pose is not None) + (forces is not None)
    fig, axes = plt.subplots(rows, 2, figsize=(11, 3.4 * rows), squeeze=False)
    # a diverged solve (status numerical_failure) may leave non-finite iterates: not drawn
    history = result.history.get("theta") or [result.theta.tolist()]
    thetas = [(i, t) for i, t in enumerate(history) if np.all(np.isfinite(t))]
    shown = _iterations_shown(len(thetas)) if thetas else []
    colours = plt.cm.viridis(np.linspace(0.0, 1.0, len(shown)))
    for b, name in enumerate(result.body_joints):
        for n, colour in zip(shown, colours, strict=True):
            it, theta = thetas[n]
            body = np.asarray(theta)[: 10 * len(result.body_joints)]
            pi = pis_and_jacobians(result.chart, body)[0][b]
            ellipsoid = equivalent_ellipsoid(pi)
            for col, plane in enumerate(((0, 1), (0, 2))):
                xy = ellipsoid_outline(*ellipsoid, plane=plane)
                axes[b, col].plot(xy[:, 0], xy[:, 1], color=colour, label=f"iteration {it}")
                axes[b, col].plot(*ellipsoid[0][list(plane)], "+", color=colour)
        for col, label in enumerate(("y", "z")):
            axes[b, col].set(xlabel="x [m]", ylabel=f"{label} [m]", title=f"{name}: x-{label}")
            axes[b, col].set_aspect("equal", adjustable="datalim")
        axes[b, 0].legend(fontsize=7)
    row = len(result.body_joints)
    if pose is not None:
        ax0, ax1 = axes[row]
        ax0.plot(t, 1e3 * pose["orientation"])
        ax0.set(title="base orientation |Log(R_imu^T R_est)|", xlabel="t [s]", ylabel="mrad")
        if pose["position"] is not None:
            ax1.plot(t, 1e3 * pose["position"])
            ax1.set(title="base position error vs base_x/y/z", xlabel="t [s]", ylabel="mm")
        else:
            for i, a in enumerate("xyz"):
                ax1.plot(t, pose["estimate"][:, i], label=f"base_{a}")
            ax1.set(title="estimated base position", xlabel="t [s]", ylabel="m")
            ax1.text(0.02, 0.02, "no reference position given", transform=ax1.transAxes)
            ax1.legend(fontsize=7)
        row += 1
    if forces is not None:
        frames, f = forces
        tf = t[: f.shape[0]]
        for j, name in enumerate(frames):
            axes[row, 0].plot(tf, f[:, j, 2], label=name)
            axes[row, 1].plot(tf, np.linalg.norm(f[:, j, :2], axis=1), label=name)
        axes[row, 0].set(title="contact force, normal (world z)", xlabel="t [s]", ylabel="N")
        axes[row, 1].set(title="contact force, tangential norm", xlabel="t [s]", ylabel="N")
        axes[row, 0].legend(fontsize=7)
    fig.suptitle(
        f"{result.chart}, {result.rollout} shooting: {result.status}\n"
        "equivalent ellipsoids in the body frame (+: centre of mass)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
