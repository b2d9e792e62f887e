"""Figures of an identification, as PNG bytes (Matplotlib's object API: no global pyplot state)."""

from __future__ import annotations

import io
import textwrap

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import LogFormatter, NullLocator

_MAX_POINTS = 4000  # per curve: a figure is for the eye, not for the data
# Tick labels of 9 pt at 110 dpi are 14 px high in a report page 1200 px wide: smaller ones
# are too small to read there.
TICK_SIZE = 9


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


def _grid(
    n_panels: int,
    width: float = 11.0,
    height_per_row: float = 2.2,
    *,
    sharex: bool = True,
    top_inches: float = 0.85,
) -> tuple[Figure, list]:
    """Panels in one or two columns (sharing the x axis unless told not to), labelled by
    :func:`_label`; room above them for the title and a legend (:func:`_legend`), which must
    not cover data."""
    # Fixed margins: Matplotlib's constrained layout costs more than drawing these figures.
    columns = _columns(n_panels)
    rows = int(np.ceil(n_panels / columns))
    height = height_per_row * rows + top_inches + 0.1
    figure = Figure(figsize=(width, height))
    figure.subplots_adjust(
        left=0.07,
        right=0.98,
        bottom=0.5 / height,
        top=1 - top_inches / height,
        hspace=0.5,
        wspace=0.18,
    )
    axes = figure.subplots(rows, columns, squeeze=False, sharex=sharex).ravel()
    for extra in axes[n_panels:]:
        extra.set_visible(False)
    return figure, list(axes[:n_panels])


def _label(
    axes: list, titles: list[str], xlabel: str, ylabel: str | None, *, sharex: bool = True
) -> None:
    """Titles on every panel; x labels under the lowest panel of each column (under every panel
    when the x axes are not shared), y labels on the left column. Explicit title heights and few
    ticks: Matplotlib's automatic title placement and its tick and text layout are most of the
    cost of drawing these figures."""
    columns = _columns(len(axes))
    for k, (axis, title) in enumerate(zip(axes, titles, strict=True)):
        axis.set_title(title, fontsize=10, y=1.0)
        lowest = not sharex or k + columns >= len(axes)  # (subplots(sharex=True) hid the labels
        axis.tick_params(labelbottom=lowest)  # of every row but the last, hidden panels included)
        if lowest:
            axis.set_xlabel(xlabel, fontsize=9, labelpad=1)
        if ylabel and k % columns == 0:
            axis.set_ylabel(ylabel, fontsize=9)
        axis.locator_params(nbins=4)
        axis.tick_params(labelsize=TICK_SIZE)


def _legend(figure: Figure, axes: list, **options) -> None:
    """One legend for the figure, under its title and above the panels (a legend inside a
    panel covers data)."""
    handles, labels = {}, {}
    for axis in axes:
        for handle, label in zip(*axis.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
            labels.setdefault(label, label)
    height = figure.get_figheight()
    figure.legend(
        list(handles.values()),
        list(labels),
        loc="upper center",
        bbox_to_anchor=(0.5, 1 - 0.38 / height),
        ncols=len(handles),
        fontsize=9,
        frameon=False,
        **options,
    )


def envelope(t: np.ndarray, y: np.ndarray, max_points: int = _MAX_POINTS) -> tuple:
    """At most ``max_points`` samples of the curve ``(t, y)`` that draw like all of them.

    The samples are cut into ``max_points / 2`` consecutive buckets and each keeps its minimum
    and maximum, in time order: a stride would alias noise and miss the peaks a reader looks
    for, while the line through the extremes covers the same pixels as the full curve. Drawing
    only: every error of the report is computed on all samples.
    """
    n = len(t)
    if n <= max_points:
        return t, y
    size = -(-n // max(1, max_points // 2))  # samples per bucket
    buckets = -(-n // size)
    padded = np.concatenate([y, np.repeat(y[-1:], buckets * size - n)]).reshape(buckets, size)
    first = np.arange(buckets) * size
    extremes = np.concatenate([first + padded.argmin(axis=1), first + padded.argmax(axis=1)])
    index = np.unique(np.minimum(extremes, n - 1))  # sorted: the curve stays in time order
    return t[index], y[index]


def stride(n: int, max_points: int) -> np.ndarray:
    """Evenly spread indices of at most ``max_points`` of ``n`` samples (scatter plots)."""
    return np.arange(n)[:: max(1, int(np.ceil(n / max_points)))]


def torque_fit_png(
    t: np.ndarray,
    tau_measured: np.ndarray,
    tau_predicted: np.ndarray,
    joint_names: tuple[str, ...],
    title: str,
    units: tuple[str, ...] | None = None,
    missed_above: float = np.inf,
) -> bytes:
    """Recorded vs predicted torque and the error, one panel per joint (paper C Fig. 4 style).

    ``t`` is one recording's own time axis (a line across several recordings would bridge the
    gap between them with a straight segment). The titles give each joint's relative error and
    RMSE on all samples; the curves are drawn through their min/max :func:`envelope`.
    ``units`` per joint ("N m" for revolute, "N" for prismatic joints; default N m). A joint
    whose relative error exceeds ``missed_above`` gets a red title.
    """
    units = units or ("N m",) * len(joint_names)
    figure, axes = _grid(len(joint_names))
    titles = []
    missed = []
    for k, (axis, joint) in enumerate(zip(axes, joint_names, strict=True)):
        # Drawn in this order: the noisy measurement as a light band under the prediction, the
        # prediction as a dark line on top (drawn under the band it would disappear).
        if not np.all(np.isfinite(tau_measured[:, k])):  # no torque column: nothing to compare
            titles.append(f"{joint} [{units[k]}]: predicted only (torque not measured/fitted)")
        else:
            error = tau_measured[:, k] - tau_predicted[:, k]
            axis.plot(*envelope(t, error), color="0.6", lw=0.6, label="error", zorder=1)
            axis.plot(
                *envelope(t, tau_measured[:, k]),
                color="tab:cyan",
                lw=1.0,
                alpha=0.55,
                label="measured",
                zorder=2,
            )
            rmse = float(np.sqrt(np.mean(error**2)))
            norm = max(np.linalg.norm(tau_measured[:, k]), 1e-300)
            relative = float(np.linalg.norm(error) / norm)
            titles.append(
                f"{joint} [{units[k]}]: rel. error {100 * relative:.2f} %, RMSE {rmse:.3g}"
            )
            if relative > missed_above:
                missed.append(k)
        axis.plot(
            *envelope(t, tau_predicted[:, k]), color="black", lw=0.9, label="predicted", zorder=3
        )
    ylabel = f"torque [{units[0]}]" if len(set(units)) == 1 else "torque"
    _label(axes, titles, "t [s] from the start of the recording", ylabel)
    for k in missed:  # the joints the model misses badly (report.flags), in red
        axes[k].title.set_color("tab:red")
    _legend(figure, axes)
    figure.suptitle(title, fontsize=11, y=1 - 0.12 / figure.get_figheight())
    return _png(figure)


def friction_png(
    dq: list[np.ndarray],
    residual: list[np.ndarray],
    labels: list[str],
    joint_names: tuple[str, ...],
    curves: list[tuple[np.ndarray, np.ndarray]],
    descriptions: tuple[str, ...],
    units: tuple[tuple[str, str], ...],
) -> bytes:
    """Per joint, the torque the rigid-body model leaves over against the velocity, with the
    identified friction model drawn over it.

    A friction model that fits lies along the cloud; a cloud that bends away from the line at
    high speed (Stribeck, viscous saturation) or splits by direction shows what it misses.
    ``dq``/``residual``: one (N, n) array per group of recordings (``labels``), subsampled for
    drawing; ``curves``: per joint, the model's velocity grid and torque (NaN where the line
    breaks, e.g. across the Coulomb step); ``descriptions``: per joint, the model in a few words
    (the panel's title); ``units``: per joint (velocity unit, torque unit).
    """
    figure, axes = _grid(len(joint_names), height_per_row=2.8, sharex=False, top_inches=1.1)
    per_group = max(200, 3000 // max(len(dq), 1))
    for k, axis in enumerate(axes):
        drawn = [np.zeros(0)]
        for group, (v, r, label) in enumerate(zip(dq, residual, labels, strict=True)):
            keep = stride(len(v), per_group)
            keep = keep[np.isfinite(r[keep, k])]  # a joint without a torque column has no cloud
            axis.plot(
                v[keep, k], r[keep, k], ".", ms=1.5, alpha=0.5, color=f"C{group}", label=label
            )
            drawn.append(r[keep, k])
        speed, torque = curves[k]
        axis.plot(speed, torque, color="black", lw=1.3)
        # The few samples at velocity reversals, where the sign of a filtered estimate lags,
        # would otherwise set the scale and flatten the cloud the reader wants to see.
        values = [torque[np.isfinite(torque)]]
        cloud = np.concatenate(drawn)
        if cloud.size:
            values.append(np.percentile(cloud, [0.5, 99.5]))
        values = np.concatenate(values)
        if values.size:
            low, high = float(np.min(values)), float(np.max(values))
            pad = 0.1 * max(high - low, 1e-9)
            axis.set_ylim(low - pad, high + pad)
        axis.axhline(0.0, color="0.6", lw=0.5)
        axis.axvline(0.0, color="0.6", lw=0.5)
    torque_units = {torque for _, torque in units}
    ylabel = f"residual [{torque_units.pop()}]" if len(torque_units) == 1 else "residual"
    width = 60 if _columns(len(joint_names)) == 2 else 120  # characters of a title line
    titles = [
        "\n".join(textwrap.wrap(f"{joint}: {text}", width))
        for joint, text in zip(joint_names, descriptions, strict=True)
    ]
    _label(axes, titles, "velocity estimate", ylabel, sharex=False)
    for k, axis in enumerate(axes):
        axis.set_xlabel(f"velocity [{units[k][0]}]", fontsize=9, labelpad=1)
    axes[0].plot([], [], color="black", lw=1.3, label="identified friction model")
    _legend(figure, axes, markerscale=5)
    figure.suptitle(
        "Friction: measured minus predicted rigid-body torque (dots) and identified model (line)",
        fontsize=11,
        y=1 - 0.12 / figure.get_figheight(),
    )
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
    axis.set_xticks(starts + (n_lags - 1) / 2, joint_names, fontsize=TICK_SIZE)
    axis.set_xlim(-gap / 2, starts[-1] + n_lags - 1 + gap / 2)
    axis.set_ylim(-1.05, 1.05)
    axis.set_ylabel("autocorrelation", fontsize=9)
    axis.tick_params(labelsize=TICK_SIZE)
    axis.set_title(
        f"lags 0 to {n_lags - 1} samples per joint; shaded: 95 % band of white noise",
        fontsize=9,
        y=1.0,
    )
    figure.suptitle("Residual autocorrelation", fontsize=11)
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
        axis.set_xticks(positions, body_names, rotation=30, ha="right", fontsize=TICK_SIZE)
        axis.tick_params(labelsize=TICK_SIZE)
    figure.suptitle("Physical consistency", fontsize=11)
    return _png(figure)
