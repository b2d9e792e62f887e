"""Figures of an identification, as PNG bytes (Matplotlib's object API: no global pyplot state)."""

from __future__ import annotations

import io

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatter, NullLocator

_MAX_POINTS = 4000  # per curve: a figure is for the eye, not for the data


def _png(figure: Figure) -> bytes:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    # Unhinted glyphs render in about half the time of FreeType's default hinting (text is most
    # of these figures' cost) and look the same at this resolution; zlib level 1 saves a tenth
    # of the time for files about 10 % larger.
    with matplotlib.rc_context({"text.hinting": "no_hinting"}):
        figure.savefig(buffer, format="png", dpi=110, pil_kwargs={"compress_level": 1})
    return buffer.getvalue()


def _columns(n_panels: int) -> int:
    return 2 if n_panels > 3 else 1


def _grid(n_panels: int, width: float = 11.0, height_per_row: float = 2.1) -> tuple[Figure, list]:
    """Panels in one or two columns sharing the time axis, labelled by :func:`_label`."""
    # Fixed margins: Matplotlib's constrained layout costs more than drawing these figures.
    columns = _columns(n_panels)
    rows = int(np.ceil(n_panels / columns))
    height = height_per_row * rows + 0.6
    figure = Figure(figsize=(width, height))
    figure.subplots_adjust(
        left=0.07, right=0.98, bottom=0.45 / height, top=1 - 0.55 / height, hspace=0.45, wspace=0.18
    )
    axes = figure.subplots(rows, columns, squeeze=False, sharex=True).ravel()
    for extra in axes[n_panels:]:
        extra.set_visible(False)
    return figure, list(axes[:n_panels])


def _label(axes: list, titles: list[str], xlabel: str, ylabel: str | None) -> None:
    """Titles on every panel; x labels under the lowest panel of each column, y labels on the
    left column. Explicit title heights and few ticks: Matplotlib's automatic title placement
    and its tick and text layout are most of the cost of drawing these figures."""
    columns = _columns(len(axes))
    for k, (axis, title) in enumerate(zip(axes, titles, strict=True)):
        axis.set_title(title, fontsize=9, y=1.0)
        lowest = k + columns >= len(axes)  # (subplots(sharex=True) hid the labels of every
        axis.tick_params(labelbottom=lowest)  # row but the last, hidden panels included)
        if lowest:
            axis.set_xlabel(xlabel, fontsize=8)
        if ylabel and k % columns == 0:
            axis.set_ylabel(ylabel, fontsize=8)
        axis.locator_params(nbins=4)
        axis.tick_params(labelsize=7)


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
    titles = []
    for k, (axis, joint) in enumerate(zip(axes, joint_names, strict=True)):
        axis.plot(t[::step], tau_measured[::step, k], color="tab:blue", lw=0.9, label="measured")
        axis.plot(
            t[::step], tau_predicted[::step, k], "--", color="tab:red", lw=0.9, label="predicted"
        )
        error = tau_measured[::step, k] - tau_predicted[::step, k]
        axis.plot(t[::step], error, ":", color="black", lw=0.8, label="error")
        rmse = float(np.sqrt(np.mean((tau_measured[:, k] - tau_predicted[:, k]) ** 2)))
        titles.append(f"{joint}  (RMSE {rmse:.3g} N m)")
    _label(axes, titles, "t [s]", "torque [N m]")
    axes[0].legend(fontsize=7, loc="upper right")
    figure.suptitle(title, fontsize=11)
    return _png(figure)


def autocorrelation_png(
    autocorrelation: np.ndarray, n_samples: int, joint_names: tuple[str, ...]
) -> bytes:
    """Residual autocorrelation per joint with the 95 % whiteness band (paper C Figs. 2–3).

    The joints side by side in one panel (lags 0…L−1 of each joint in its own group): one axes
    draws in a quarter of the time of one panel per joint.
    """
    n_lags = autocorrelation.shape[1]
    gap = max(4, n_lags // 5)
    figure = Figure(figsize=(11.0, 3.2))
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.16, top=0.84)
    axis = figure.subplots()
    band = 1.96 / np.sqrt(max(n_samples, 1))
    axis.axhspan(-band, band, color="tab:green", alpha=0.2, lw=0)
    axis.axhline(0.0, color="black", lw=0.5)
    starts = np.arange(len(joint_names)) * (n_lags + gap)
    for k, start in enumerate(starts):
        axis.vlines(start + np.arange(n_lags), 0.0, autocorrelation[k], color=f"C{k % 10}", lw=1.2)
    axis.set_xticks(starts + (n_lags - 1) / 2, joint_names, fontsize=8)
    axis.set_xlim(-gap / 2, starts[-1] + n_lags - 1 + gap / 2)
    axis.set_ylim(-1.05, 1.05)
    axis.set_ylabel("autocorrelation", fontsize=8)
    axis.tick_params(labelsize=7)
    axis.set_title(
        f"lags 0 to {n_lags - 1} samples per joint; shaded: 95 % band of white noise",
        fontsize=9,
        y=1.0,
    )
    figure.suptitle("Residual autocorrelation", fontsize=11)
    return _png(figure)


def parameter_table_png(
    names: tuple[str, ...], values: np.ndarray, relative_std_percent: np.ndarray, title: str
) -> bytes:
    """Base parameters with their relative standard deviation %sigma (paper C Table 1 style).

    Two columns of monospace text; entries above 30 % (or not identifiable) are marked with *.
    """
    # Names are padded only to the longest one: Matplotlib renders every glyph, spaces too, one
    # by one, and glyphs are most of this figure's cost.
    width = min(34, max((len(name) for name in names), default=9))
    lines = [
        f"{name[:width]:{width}s} {value:10.4g} "
        f"{'  n/a' if not np.isfinite(rel) else f'{rel:7.2f} %'}"
        f"{' *' if not np.isfinite(rel) or rel > 30 else ''}"
        for name, value, rel in zip(names, values, relative_std_percent, strict=True)
    ]
    half = int(np.ceil(len(lines) / 2))
    height = 0.135 * half + 0.8
    figure = Figure(figsize=(12.0, height))
    header = f"{'parameter':{width}s} {'value':>10s} {'rel. std':>9s}"
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
    left.yaxis.set_major_formatter(LogFormatter())  # plain "1e-05": mathtext labels cost more
    left.yaxis.set_minor_locator(NullLocator())
    left.axhline(max(margin, 1e-12), color="black", ls="--", lw=0.8, label=f"margin {margin:g}")
    left.set_title("smallest eigenvalue of the pseudo-inertia J [kg m^2]", fontsize=9, y=1.0)
    left.legend(fontsize=7)
    right.bar(positions, masses, color="tab:blue")
    right.set_title(f"body masses [kg] (total {np.sum(masses):.3f} kg)", fontsize=9, y=1.0)
    for axis in (left, right):
        axis.set_xticks(positions, body_names, rotation=30, ha="right", fontsize=7)
        axis.tick_params(labelsize=7)
    figure.suptitle("Physical consistency", fontsize=11)
    return _png(figure)
