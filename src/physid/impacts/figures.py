"""PNG figures of an identification: the fit (paper D Fig. 17/22) and the impulses (Fig. 18/23).

Figures are drawn with Matplotlib's object API on the Agg canvas (no global pyplot state, no
display needed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from physid.impacts.geometry import Ellipse, Line, Shape
from physid.impacts.results import ImpactsIdentification


def _outline(shape: Shape, q: np.ndarray) -> np.ndarray:
    """Boundary points of the body at pose q in the world frame (k×2)."""
    if isinstance(shape, Ellipse):
        beta = np.linspace(0.0, 2.0 * np.pi, 60)
        local = np.column_stack([shape.a * np.cos(beta), shape.b * np.sin(beta)])
    else:
        local = np.vstack([shape.vertices, shape.vertices[:1]])
    c, s = np.cos(q[2]), np.sin(q[2])
    return local @ np.array([[c, s], [-s, c]]) + q[:2]


def plot_fit(
    result: ImpactsIdentification, shape: Shape, lines: list[Line], path: str | Path
) -> Path:
    """The poses' x, y, θ against the reconstruction over time, and the path in the plane with
    outlines."""
    fig = Figure(figsize=(12, 8), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.add_gridspec(2, 3, height_ratios=(1, 1.4))
    labels = ("x [m]", "y [m]", "θ [rad]")
    for i in range(3):
        ax = fig.add_subplot(grid[0, i])
        ax.plot(result.t_meas, result.q_meas[:, i], "o", ms=3, color="0.3", label="measured")
        ax.plot(result.t, result.q[:, i], "-", lw=1.2, color="tab:green", label="reconstructed")
        ax.set_ylabel(labels[i])
        ax.set_xlabel("t [s]")
        if i == 0:
            ax.legend(loc="best", fontsize=8)
    ax = fig.add_subplot(grid[1, :])
    ax.plot(result.q_meas[:, 0], result.q_meas[:, 1], "o", ms=3, color="0.3")
    ax.plot(result.q[:, 0], result.q[:, 1], "-", lw=1.2, color="tab:green")
    stride = result.n_substeps * max(1, len(result.t_meas) // 15)
    outlines = [_outline(shape, q) for q in result.q[::stride]]
    for xy in outlines:
        ax.plot(xy[:, 0], xy[:, 1], "-", lw=0.6, color="goldenrod")
    every = np.vstack([*outlines, result.q_meas[:, :2]])
    low, high = every.min(axis=0), every.max(axis=0)
    margin = 0.1 * float(np.max(high - low)) + 1e-3
    for line in lines:  # long enough to cross the view, clipped by the limits below
        d = np.array([np.cos(line.angle), np.sin(line.angle)])
        centre = line.offset * line.normal
        centre = centre + d * (d @ ((low + high) / 2 - centre))
        span = 2.0 * float(np.max(high - low)) + 1.0
        ends = np.array([centre - span * d, centre + span * d])
        ax.plot(ends[:, 0], ends[:, 1], "-", color="saddlebrown", lw=2)
    ax.set_xlim(low[0] - margin, high[0] + margin)
    ax.set_ylim(low[1] - margin, high[1] + margin)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    if result.identifiable:
        std = result.inertia_ratio_std * 1e6
        title = (
            f"J/m = {result.inertia_ratio * 1e6:.1f} ± {std:.1f} mm², "
            f"μ = {result.friction:.3f}{' (lower bound)' * result.friction_is_lower_bound}"
        )
    else:
        title = f"J/m and μ not identified: {result.message}"
    ax.set_title(f"{title}\nstatus: {result.status}", fontsize=9, wrap=True)
    path = Path(path)
    fig.savefig(path, dpi=110)
    return path


def plot_impulses(result: ImpactsIdentification, path: str | Path) -> Path:
    """Normal impulses c_n and net friction impulses c_t [N·s] per contact candidate over time."""
    fig = Figure(figsize=(9, 5.5), layout="constrained")
    FigureCanvasAgg(fig)
    ax_n, ax_t = fig.subplots(2, 1, sharex=True)
    t_mid = result.t[:-1]
    for j, (line, feature) in enumerate(result.pairs):
        label = f"surface {line + 1}" + (f", vertex {feature + 1}" if len(result.pairs) > 1 else "")
        if np.any(result.impulse_normal[:, j] > 0) or j == 0:
            ax_n.plot(t_mid, result.impulse_normal[:, j], lw=1, label=label)
            ax_t.plot(t_mid, result.impulse_tangent[:, j], lw=1, label=label)
    ax_n.set_ylabel("c_n [N·s]")
    ax_t.set_ylabel("c_t [N·s] (along d+)")
    ax_t.set_xlabel("t [s] (impulse over [t, t + h])")
    ax_n.legend(loc="best", fontsize=8)
    ax_n.set_title(
        f"identified impulses for m = {result.mass:g} kg (they scale with the mass)", fontsize=9
    )
    path = Path(path)
    fig.savefig(path, dpi=110)
    return path
