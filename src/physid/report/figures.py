"""Figures of an identification, as PNG bytes (Matplotlib's object API: no global pyplot state)."""

from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

_MAX_POINTS = 4000  # per curve: a figure is for the eye, not for the data


def _png(figure: Figure) -> bytes:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    return buffer.getvalue()


def _grid(n_panels: int, width: float = 11.0, height_per_row: float = 2.1) -> tuple[Figure, list]:
    # Fixed margins: Matplotlib's constrained layout costs more than drawing these figures.
    columns = 2 if n_panels > 3 else 1
    rows = int(np.ceil(n_panels / columns))
    height = height_per_row * rows + 0.6
    figure = Figure(figsize=(width, height))
    figure.subplots_adjust(
        left=0.07, right=0.98, bottom=0.45 / height, top=1 - 0.55 / height, hspace=0.75, wspace=0.18
    )
    axes = figure.subplots(rows, columns, squeeze=False).ravel()
    for extra in axes[n_panels:]:
        extra.set_visible(False)
    return figure, list(axes[:n_panels])


def torque_fit_png(
    t: np.ndarray,
    tau_measured: np.ndarray,
    tau_predicted: np.ndarray,
    joint_names: tuple[str, ...],
    title: str,
) -> bytes:
    """Measured vs predicted torque and the error, one panel per joint (paper C Fig. 4 style)."""
    step = max(1, len(t) // _MAX_POINTS)
    figure, axes = _grid(len(joint_names))
    for k, (axis, joint) in enumerate(zip(axes, joint_names, strict=True)):
        axis.plot(t[::step], tau_measured[::step, k], color="tab:blue", lw=0.9, label="measured")
        axis.plot(
            t[::step], tau_predicted[::step, k], "--", color="tab:red", lw=0.9, label="predicted"
        )
        error = tau_measured[::step, k] - tau_predicted[::step, k]
        axis.plot(t[::step], error, ":", color="black", lw=0.8, label="error")
        rmse = float(np.sqrt(np.mean((tau_measured[:, k] - tau_predicted[:, k]) ** 2)))
        axis.set_title(f"{joint}  (RMSE {rmse:.3g} N m)", fontsize=9)
        axis.set_xlabel("t [s]", fontsize=8)
        axis.set_ylabel("torque [N m]", fontsize=8)
        axis.tick_params(labelsize=7)
    axes[0].legend(fontsize=7, loc="upper right")
    figure.suptitle(title, fontsize=11)
    return _png(figure)


def autocorrelation_png(
    autocorrelation: np.ndarray, n_samples: int, joint_names: tuple[str, ...]
) -> bytes:
    """Residual autocorrelation per joint with the 95 % whiteness band (paper C Figs. 2–3)."""
    figure, axes = _grid(len(joint_names), height_per_row=1.7)
    band = 1.96 / np.sqrt(max(n_samples, 1))
    lags = np.arange(autocorrelation.shape[1])
    for k, (axis, joint) in enumerate(zip(axes, joint_names, strict=True)):
        axis.vlines(lags, 0.0, autocorrelation[k], color="tab:blue", lw=2)
        axis.axhspan(-band, band, color="tab:green", alpha=0.2, lw=0)
        axis.set_ylim(-1.05, 1.05)
        axis.set_title(joint, fontsize=9)
        axis.set_xlabel("lag [samples]", fontsize=8)
        axis.tick_params(labelsize=7)
    figure.suptitle("Residual autocorrelation (shaded: 95 % band of white noise)", fontsize=11)
    return _png(figure)


def parameter_table_png(
    names: tuple[str, ...], values: np.ndarray, relative_std_percent: np.ndarray, title: str
) -> bytes:
    """Base parameters with their relative standard deviation %sigma (paper C Table 1 style).

    Two columns of monospace text; entries above 30 % (or not identifiable) are marked with *.
    """
    lines = [
        f"{name[:34]:34s} {value:11.4g} {'  n/a' if not np.isfinite(rel) else f'{rel:7.2f} %'}"
        f"{' *' if not np.isfinite(rel) or rel > 30 else ''}"
        for name, value, rel in zip(names, values, relative_std_percent, strict=True)
    ]
    half = int(np.ceil(len(lines) / 2))
    height = 0.135 * half + 0.8
    figure = Figure(figsize=(12.0, height))
    header = f"{'parameter':34s} {'value':>11s} {'rel. std':>9s}"
    for column, block in enumerate((lines[:half], lines[half:])):
        figure.text(
            0.01 + 0.5 * column,
            1 - 0.55 / height,
            "\n".join([header, *block]),
            family="monospace",
            fontsize=7,
            va="top",
        )
    figure.suptitle(f"{title}   (* rel. std > 30 % or not identifiable)", fontsize=10)
    return _png(figure)


def consistency_png(
    body_names: tuple[str, ...], min_eigenvalues: np.ndarray, masses: np.ndarray, margin: float
) -> bytes:
    """Smallest pseudo-inertia eigenvalue and mass of every body (all must be > 0)."""
    figure = Figure(figsize=(11.0, 3.4))
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.25, top=0.83, wspace=0.2)
    left, right = figure.subplots(1, 2)
    positions = np.arange(len(body_names))
    colours = ["tab:green" if value > 0 else "tab:red" for value in min_eigenvalues]
    left.bar(positions, np.maximum(min_eigenvalues, 1e-12), color=colours)
    left.set_yscale("log")
    left.axhline(max(margin, 1e-12), color="black", ls="--", lw=0.8, label=f"margin {margin:g}")
    left.set_title("smallest eigenvalue of the pseudo-inertia J [kg m^2]", fontsize=9)
    left.legend(fontsize=7)
    right.bar(positions, masses, color="tab:blue")
    right.set_title(f"body masses [kg] (total {np.sum(masses):.3f} kg)", fontsize=9)
    for axis in (left, right):
        axis.set_xticks(positions, body_names, rotation=30, ha="right", fontsize=7)
        axis.tick_params(labelsize=7)
    figure.suptitle("Physical consistency", fontsize=11)
    return _png(figure)
