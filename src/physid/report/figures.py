"""Figures of an identification, as PNG bytes, drawn with Pillow.

Each figure is drawn at twice its size and halved (a box filter: the anti-aliasing of every line,
dot and glyph) and written as a PNG of 110 dpi. Matplotlib drew them before; its import alone
(0.45 s of CPU) and its text layout (0.15-0.3 s per figure) were a third of a whole
``physid identify`` on a 7-joint arm, for figures whose every element is a polyline, a dot, a bar
or a line of text. The layout is Matplotlib's as these figures used it: fixed margins, titles
over every panel, the x label under the lowest panel of each column, the y label on the left
column, one legend under the figure's title.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

_MAX_POINTS = 4000  # per curve: a figure is for the eye, not for the data
# Tick labels of 9 pt at 110 dpi are 14 px high in a report page 1200 px wide (7 pt, 10 px, was
# too small to read: issue 28).
TICK_SIZE = 9
DPI = 110
_SUPERSAMPLE = 2  # drawn at twice the size and halved: anti-aliased edges
_SCALE = DPI * _SUPERSAMPLE / 72.0  # drawing pixels per point
# Matplotlib's default colour cycle and the named colours these figures used
CYCLE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
_GREY = "#999999"
_LIGHT_GREY = "#bfbfbf"
_RED = "#d62728"
_GREEN = "#2ca02c"
_BLUE = "#1f77b4"
_MEASURED = "#8ddbe5"  # tab:cyan at 55 % opacity over white


def _blend(colour: str, alpha: float) -> tuple[int, int, int]:
    """``colour`` at opacity ``alpha`` over white (a dot cloud drawn in one pass)."""
    rgb = np.array([int(colour[k : k + 2], 16) for k in (1, 3, 5)], float)
    return tuple(int(round(v)) for v in alpha * rgb + (1.0 - alpha) * 255.0)


@cache
def _font(points: float) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    """Pillow's own scalable font at ``points`` (drawing scale)."""
    return ImageFont.load_default(size=max(1.0, points * _SCALE))


def _px(points: float) -> int:
    """A line width in points as drawing pixels (at least one)."""
    return max(1, int(round(points * _SCALE)))


class Canvas:
    """A white figure of ``width`` x ``height`` inches in drawing pixels."""

    def __init__(self, width: float, height: float) -> None:
        self.ppi = DPI * _SUPERSAMPLE
        self.size = (
            int(round(width * DPI)) * _SUPERSAMPLE,
            int(round(height * DPI)) * _SUPERSAMPLE,
        )
        self.image = Image.new("RGB", self.size, "white")
        self.draw = ImageDraw.Draw(self.image)

    def text(
        self,
        xy: tuple[float, float],
        text: str,
        points: float,
        anchor: str = "la",
        colour: str = "black",
        rotation: float = 0.0,
    ) -> None:
        """``text`` at ``xy`` (drawing pixels); ``anchor``: Pillow's two letters (horizontal
        l/m/r, vertical a/m/d: ascender, middle, descender); ``rotation`` in degrees, anchored
        at the rotated text's right end (slanted tick labels)."""
        font = _font(points)
        if not rotation:
            self.draw.text(xy, text, fill=colour, font=font, anchor=anchor)
            return
        left, top, right, bottom = font.getbbox(text, anchor="la")
        label = Image.new("L", (right + 2, bottom + 2), 0)
        ImageDraw.Draw(label).text((0, 0), text, fill=255, font=font, anchor="la")
        turned = label.rotate(rotation, expand=True, resample=Image.BICUBIC)
        x, y = int(xy[0] - turned.width), int(xy[1])
        self.image.paste(Image.new("RGB", turned.size, colour), (x, y), turned)

    def text_width(self, text: str, points: float) -> int:
        return int(self.draw.textlength(text, font=_font(points)))

    def png(self) -> bytes:
        """The figure halved (box filter) as PNG bytes at :data:`DPI`."""
        image = self.image.reduce(_SUPERSAMPLE)
        buffer = io.BytesIO()
        # zlib level 1: a tenth of the time of the default for files about 10 % larger
        image.save(buffer, format="PNG", compress_level=1, dpi=(DPI, DPI))
        return buffer.getvalue()


def nice_ticks(low: float, high: float, n_bins: int = 4) -> np.ndarray:
    """At most ``n_bins + 1`` round tick values (steps 1, 2, 2.5, 5 x 10^k) within
    ``[low, high]``, as Matplotlib's MaxNLocator places them."""
    if not (np.isfinite(low) and np.isfinite(high)) or high <= low:
        return np.array([low]) if np.isfinite(low) else np.zeros(0)
    raw = (high - low) / n_bins
    magnitude = 10.0 ** np.floor(np.log10(raw))
    step = next(s * magnitude for s in (1.0, 2.0, 2.5, 5.0, 10.0) if s * magnitude >= raw * 0.999)
    first = np.ceil(low / step - 1e-9) * step
    ticks = first + step * np.arange(int(np.floor((high - first) / step + 1e-9)) + 1)
    return np.where(np.abs(ticks) < 1e-12 * step, 0.0, ticks)


def tick_labels(ticks: np.ndarray) -> list[str]:
    """Tick values with the decimals their step needs ("0", "2.5", "5" ...; "1e+05" style
    beyond 1e5 or below 1e-4)."""
    if len(ticks) == 0:
        return []
    step = float(np.min(np.diff(ticks))) if len(ticks) > 1 else abs(float(ticks[0])) or 1.0
    top = float(np.max(np.abs(ticks)))
    if top >= 1e5 or step < 1e-4:
        return [f"{v:.3g}" for v in ticks]
    decimals = max(0, int(np.ceil(-np.log10(step) - 1e-9)))
    if decimals and abs(round(step * 10**decimals) - step * 10**decimals) > 1e-6:
        decimals += 1  # a step of 0.25
    elif not decimals and abs(step - round(step)) > 1e-9:
        decimals = 1  # a step of 2.5
    return [f"{v:.{decimals}f}" for v in ticks]


@dataclass
class Panel:
    """One axes box of a :class:`Canvas` (drawing pixels ``left, top, right, bottom``) with its
    data limits; data are drawn on a panel-sized layer (clipped to the box) and pasted."""

    canvas: Canvas
    box: tuple[int, int, int, int]
    x_range: tuple[float, float] = (0.0, 1.0)
    y_range: tuple[float, float] = (0.0, 1.0)
    log_y: bool = False
    # at most this many tick intervals (None: as many as the axis has room for, Matplotlib's
    # "auto": one per three (x) or two (y) tick-label heights)
    n_bins: int | None = None

    def __post_init__(self) -> None:
        left, top, right, bottom = self.box
        self.layer = Image.new("RGB", (right - left, bottom - top), "white")
        self.draw = ImageDraw.Draw(self.layer, "RGBA")  # RGBA fills blend (dot clouds)

    def bins(self, axis: str) -> int:
        """Tick intervals along ``axis`` ("x" or "y")."""
        if self.n_bins is not None:
            return self.n_bins
        length = self.layer.width if axis == "x" else self.layer.height
        per_label = (3.0 if axis == "x" else 2.0) * TICK_SIZE * _SCALE
        return int(min(9, max(3, length // per_label)))

    def limits(self, x: Sequence[float], y: Sequence[float], margin: float = 0.05) -> None:
        """Data limits of the finite values of ``x`` and ``y``, widened by ``margin`` of their
        span on each side (Matplotlib's autoscale)."""
        self.x_range = _padded(np.asarray(x, float), margin)
        y = np.asarray(y, float)
        if self.log_y:
            y = np.log10(y[y > 0]) if np.any(y > 0) else np.zeros(1)
            low, high = _padded(y, margin)
            self.y_range = (10.0**low, 10.0**high)
        else:
            self.y_range = _padded(y, margin)

    def x(self, values: np.ndarray) -> np.ndarray:
        """Layer pixel columns of data ``values``."""
        low, high = self.x_range
        return (np.asarray(values, float) - low) * (self.layer.width / (high - low))

    def y(self, values: np.ndarray) -> np.ndarray:
        """Layer pixel rows of data ``values`` (up is up)."""
        values = np.asarray(values, float)
        low, high = self.y_range
        if self.log_y:
            values, low, high = np.log10(np.maximum(values, 1e-300)), np.log10(low), np.log10(high)
        return (high - values) * (self.layer.height / (high - low))

    def line(self, x: np.ndarray, y: np.ndarray, colour: str, width: float) -> None:
        """A polyline through the points, broken where a value is NaN; ``width`` in points."""
        px, py = self.x(x), self.y(y)
        finite = np.isfinite(px) & np.isfinite(py)
        edges = np.flatnonzero(np.diff(np.r_[0, finite.astype(np.int8), 0]))
        for start, stop in zip(edges[::2], edges[1::2], strict=True):
            points = np.column_stack([px[start:stop], py[start:stop]]).ravel().tolist()
            if len(points) >= 4:
                self.draw.line(points, fill=colour, width=_px(width))

    def dots(self, x: np.ndarray, y: np.ndarray, colour: tuple | str, size: float) -> None:
        """Round markers of ``size`` points (diameter) at the finite points."""
        px, py = self.x(x), self.y(y)
        keep = np.isfinite(px) & np.isfinite(py)
        r = max(1.0, 0.5 * size * _SCALE)
        for cx, cy in zip(px[keep].tolist(), py[keep].tolist(), strict=True):
            self.draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=colour)

    def vlines(self, x: np.ndarray, y0: float, y1: np.ndarray, colour: str, width: float) -> None:
        """Vertical segments from ``y0`` to each ``y1`` at each ``x``."""
        base = float(self.y(np.array([y0]))[0])
        for cx, cy in zip(self.x(x).tolist(), self.y(y1).tolist(), strict=True):
            self.draw.line([cx, base, cx, cy], fill=colour, width=_px(width))

    def bars(self, x: np.ndarray, heights: np.ndarray, colours: Sequence[str]) -> None:
        """Bars of width 0.8 centred at ``x``, from the bottom of the panel (log) or 0."""
        floor = self.y_range[0] if self.log_y else 0.0
        base = float(self.y(np.array([floor]))[0])
        half = 0.4 * self.layer.width / (self.x_range[1] - self.x_range[0])
        for cx, top, colour in zip(self.x(x), self.y(heights), colours, strict=True):
            self.draw.rectangle((cx - half, min(top, base), cx + half, max(top, base)), fill=colour)

    def hline(self, y: float, colour: str, width: float, dashed: bool = False) -> None:
        row = float(self.y(np.array([y]))[0])
        if not dashed:
            self.draw.line([0, row, self.layer.width, row], fill=colour, width=_px(width))
            return
        dash = 3.7 * width * _SCALE
        for start in np.arange(0.0, self.layer.width, 1.6 * dash):
            self.draw.line([start, row, start + dash, row], fill=colour, width=_px(width))

    def vline(self, x: float, colour: str, width: float) -> None:
        column = float(self.x(np.array([x]))[0])
        self.draw.line([column, 0, column, self.layer.height], fill=colour, width=_px(width))

    def hspan(self, y0: float, y1: float, colour: tuple | str) -> None:
        rows = self.y(np.array([y0, y1]))
        self.draw.rectangle(
            (0, float(rows.min()), self.layer.width, float(rows.max())), fill=colour
        )

    def finish(
        self,
        title: str,
        *,
        xlabel: str | None = None,
        ylabel: str | None = None,
        x_ticks: tuple[np.ndarray, list[str]] | None = None,
        tick_rotation: float = 0.0,
        title_colour: str = "black",
        title_points: float = 10.0,
    ) -> None:
        """Paste the data layer, then draw the frame, ticks, tick labels, title and labels
        (``xlabel`` None: no x tick labels either, as under a shared axis)."""
        canvas, (left, top, right, bottom) = self.canvas, self.box
        canvas.image.paste(self.layer, (left, top))
        draw, tick, gap = canvas.draw, _px(3.5), _px(3.5)
        ticks, labels = x_ticks if x_ticks is not None else _ticks(self.x_range, self.bins("x"))
        for value, label in zip(ticks, labels, strict=True):
            column = left + float(self.x(np.array([value]))[0])
            if left - 1 <= column <= right + 1:
                draw.line([column, bottom, column, bottom + tick], fill="black", width=_px(0.8))
                if xlabel is not None and label:
                    if tick_rotation:
                        canvas.text(
                            (column, bottom + tick + gap), label, TICK_SIZE, rotation=tick_rotation
                        )
                    else:
                        canvas.text((column, bottom + tick + gap), label, TICK_SIZE, "ma")
        ticks, labels = (
            _log_ticks(self.y_range) if self.log_y else _ticks(self.y_range, self.bins("y"))
        )
        for value, label in zip(ticks, labels, strict=True):
            row = top + float(self.y(np.array([value]))[0])
            if top - 1 <= row <= bottom + 1:
                draw.line([left - tick, row, left, row], fill="black", width=_px(0.8))
                canvas.text((left - tick - gap, row), label, TICK_SIZE, "rm")
        draw.rectangle((left, top, right, bottom), outline="black", width=_px(0.8))
        lines = title.split("\n")
        height = _font(title_points).size * 1.2
        for k, line in enumerate(lines):
            row = top - _px(6) - (len(lines) - 1 - k) * height
            canvas.text(((left + right) / 2, row), line, title_points, "md", title_colour)
        label_row = bottom + tick + gap + _font(TICK_SIZE).size * 1.25
        if xlabel:
            canvas.text(((left + right) / 2, label_row), xlabel, 9, "ma")
        if ylabel:
            width = max((canvas.text_width(s, TICK_SIZE) for s in labels), default=0)
            _vertical(canvas, left - tick - 2 * gap - width, (top + bottom) / 2, ylabel)


def _vertical(canvas: Canvas, right: float, middle: float, text: str) -> None:
    """``text`` turned a quarter to the left, its right edge at ``right``, centred on
    ``middle`` (a y label)."""
    font = _font(9)
    _, _, width, height = font.getbbox(text, anchor="la")
    label = Image.new("L", (width + 2, height + 2), 0)
    ImageDraw.Draw(label).text((0, 0), text, fill=255, font=font, anchor="la")
    turned = label.transpose(Image.Transpose.ROTATE_90)
    xy = (int(right - turned.width), int(middle - turned.height / 2))
    canvas.image.paste(Image.new("RGB", turned.size, "black"), xy, turned)


def _padded(values: np.ndarray, margin: float) -> tuple[float, float]:
    values = values[np.isfinite(values)]
    if values.size == 0:
        return 0.0, 1.0
    low, high = float(values.min()), float(values.max())
    span = high - low
    if span <= 1e-300 * max(abs(low), 1.0) or span == 0.0:
        pad = max(abs(low) * 0.05, 0.5 if low == 0.0 else 0.0) or 0.5
        return low - pad, high + pad
    return low - margin * span, high + margin * span


def _ticks(limits: tuple[float, float], n_bins: int) -> tuple[np.ndarray, list[str]]:
    ticks = nice_ticks(*limits, n_bins)
    return ticks, tick_labels(ticks)


def _log_ticks(limits: tuple[float, float]) -> tuple[np.ndarray, list[str]]:
    """Powers of ten within ``limits`` (every k-th one when there are more than six)."""
    low, high = np.log10(limits[0]), np.log10(limits[1])
    powers = np.arange(np.ceil(low - 1e-9), np.floor(high + 1e-9) + 1)
    powers = powers[:: max(1, int(np.ceil(len(powers) / 6)))]
    return 10.0**powers, [f"1e{int(p):+03d}" if p else "1" for p in powers]


# --- layout --------------------------------------------------------------------------------------


def columns_for(n_panels: int) -> int:
    """Panels side by side: two columns beyond three panels."""
    return 2 if n_panels > 3 else 1


@dataclass(frozen=True)
class Grid:
    """Where the panels of a figure go, and which of them carry which labels."""

    width: float  # inches
    height: float
    boxes: tuple[tuple[int, int, int, int], ...]  # drawing pixels, one per panel
    x_labelled: tuple[bool, ...]  # the x label (and tick labels) under this panel
    y_labelled: tuple[bool, ...]  # the y label left of this panel


def grid(
    n_panels: int,
    width: float = 11.0,
    height_per_row: float = 2.2,
    *,
    sharex: bool = True,
    top_inches: float = 0.85,
) -> Grid:
    """Panels in one or two columns with room above them for the title and a legend (which
    must not cover data); x labels under the lowest panel of each column (under every panel
    when the x axes are not shared), y labels on the left column. Matplotlib's
    ``subplots_adjust(left=0.07, right=0.98, hspace=0.5, wspace=0.18)`` as these figures had."""
    columns = columns_for(n_panels)
    rows = int(np.ceil(n_panels / columns))
    height = height_per_row * rows + top_inches + 0.1
    ppi = DPI * _SUPERSAMPLE
    left, right = 0.07 * width * ppi, 0.98 * width * ppi
    bottom, top = (height - 0.5) * ppi, top_inches * ppi
    cell_w = (right - left) / (columns + 0.18 * (columns - 1))
    cell_h = (bottom - top) / (rows + 0.5 * (rows - 1))
    boxes, x_labelled, y_labelled = [], [], []
    for k in range(n_panels):
        row, column = divmod(k, columns)
        x0 = left + column * cell_w * 1.18
        y0 = top + row * cell_h * 1.5
        boxes.append((int(x0), int(y0), int(x0 + cell_w), int(y0 + cell_h)))
        x_labelled.append(not sharex or k + columns >= n_panels)
        y_labelled.append(column == 0)
    return Grid(width, height, tuple(boxes), tuple(x_labelled), tuple(y_labelled))


def _legend(canvas: Canvas, entries: list[tuple[str, str, str]], row_inches: float) -> None:
    """One row of ``(label, colour, kind)`` entries (kind ``line`` or ``dot``), centred under the
    figure's title at ``row_inches`` from its top."""
    handle, gap, points = _px(20), _px(8), 9
    widths = [handle + gap + canvas.text_width(label, points) for label, _, _ in entries]
    total = sum(widths) + 2 * gap * (len(entries) - 1)
    x, y = (canvas.size[0] - total) / 2, row_inches * canvas.ppi
    for (label, colour, kind), width in zip(entries, widths, strict=True):
        if kind == "dot":
            r = _px(2.5)
            canvas.draw.ellipse((x + handle / 2 - r, y - r, x + handle / 2 + r, y + r), fill=colour)
        else:
            canvas.draw.line([x, y, x + handle, y], fill=colour, width=_px(1.5))
        canvas.text((x + handle + gap, y), label, points, "lm")
        x += width + 2 * gap


def _margin_key(canvas: Canvas, box: tuple[int, int, int, int], label: str) -> None:
    """A framed key in the upper left corner of ``box``: a dashed line and ``label``."""
    pad, handle, points = _px(4), _px(18), 7
    x0, y0 = box[0] + _px(6), box[1] + _px(6)
    x1 = x0 + 3 * pad + handle + canvas.text_width(label, points)
    y1 = y0 + 2 * pad + _font(points).size
    canvas.draw.rectangle((x0, y0, x1, y1), fill="white", outline=_LIGHT_GREY, width=_px(0.5))
    middle = (y0 + y1) / 2
    for start in np.linspace(x0 + pad, x0 + pad + handle, 4)[:-1]:
        canvas.draw.line([start, middle, start + handle / 5, middle], fill="black", width=_px(0.8))
    canvas.text((x0 + 2 * pad + handle, middle), label, points, "lm")


def _suptitle(canvas: Canvas, text: str, row_inches: float = 0.12) -> None:
    canvas.text((canvas.size[0] / 2, row_inches * canvas.ppi), text, 11, "ma")


# --- data thinning -------------------------------------------------------------------------------


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


# --- the figures ---------------------------------------------------------------------------------


def torque_fit_png(
    t: np.ndarray,
    tau_measured: np.ndarray,
    tau_predicted: np.ndarray,
    joint_names: tuple[str, ...],
    title: str,
    units: tuple[str, ...] | None = None,
    missed_above: float = np.inf,
) -> bytes:
    """Measured vs predicted torque and the error, one panel per joint (paper C Fig. 4 style).

    ``t`` is one recording's own time axis (a line across several recordings would bridge the
    gap between them with a straight segment). The titles give each joint's relative error and
    RMSE on all samples; the curves are drawn through their min/max :func:`envelope`.
    ``units`` per joint ("N m" for revolute, "N" for prismatic joints; default N m). A joint
    whose relative error exceeds ``missed_above`` gets a red title.
    """
    units = units or ("N m",) * len(joint_names)
    layout = grid(len(joint_names))
    canvas = Canvas(layout.width, layout.height)
    ylabel = f"torque [{units[0]}]" if len(set(units)) == 1 else "torque"
    xlabel = "t [s] from the start of the recording"
    for k, joint in enumerate(joint_names):
        panel = Panel(canvas, layout.boxes[k], n_bins=4)
        curves = []
        colour = "black"
        # Drawn in this order: the noisy measurement as a light band under the prediction, the
        # prediction as a dark line on top (drawn under the band it disappeared: issue 28).
        if not np.all(np.isfinite(tau_measured[:, k])):  # no torque column: nothing to compare
            heading = f"{joint} [{units[k]}]: predicted only (torque not measured/fitted)"
        else:
            error = tau_measured[:, k] - tau_predicted[:, k]
            curves += [
                (envelope(t, error), _GREY, 0.6),
                (envelope(t, tau_measured[:, k]), _MEASURED, 1.0),
            ]
            rmse = float(np.sqrt(np.mean(error**2)))
            relative = float(
                np.linalg.norm(error) / max(np.linalg.norm(tau_measured[:, k]), 1e-300)
            )
            heading = f"{joint} [{units[k]}]: rel. error {100 * relative:.2f} %, RMSE {rmse:.3g}"
            colour = _RED if relative > missed_above else "black"  # the joints missed badly
        curves.append((envelope(t, tau_predicted[:, k]), "black", 0.9))
        panel.limits(
            np.concatenate([c[0][0] for c in curves]), np.concatenate([c[0][1] for c in curves])
        )
        for (x, y), line_colour, width in curves:
            panel.line(x, y, line_colour, width)
        panel.finish(
            heading,
            title_colour=colour,
            xlabel=xlabel if layout.x_labelled[k] else None,
            ylabel=ylabel if layout.y_labelled[k] else None,
        )
    _legend(
        canvas,
        [("error", _GREY, "line"), ("measured", _MEASURED, "line"), ("predicted", "black", "line")],
        0.38 + 0.12,
    )
    _suptitle(canvas, title)
    return canvas.png()


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
    layout = grid(len(joint_names), height_per_row=2.8, sharex=False, top_inches=1.1)
    canvas = Canvas(layout.width, layout.height)
    per_group = max(200, 3000 // max(len(dq), 1))
    torque_units = {torque for _, torque in units}
    ylabel = f"residual [{torque_units.pop()}]" if len(torque_units) == 1 else "residual"
    width = 60 if columns_for(len(joint_names)) == 2 else 120  # characters of a title line
    for k, joint in enumerate(joint_names):
        panel = Panel(canvas, layout.boxes[k], n_bins=4)
        clouds = []
        for v, r in zip(dq, residual, strict=True):
            keep = stride(len(v), per_group)
            keep = keep[np.isfinite(r[keep, k])]  # a joint without a torque column has no cloud
            clouds.append((v[keep, k], r[keep, k]))
        speed, torque = curves[k]
        # The few samples at velocity reversals, where the sign of a filtered estimate lags,
        # would otherwise set the scale and flatten the cloud the reader wants to see.
        values = [torque[np.isfinite(torque)]]
        cloud = np.concatenate([c[1] for c in clouds] or [np.zeros(0)])
        if cloud.size:
            values.append(np.percentile(cloud, [0.5, 99.5]))
        values = np.concatenate(values)
        panel.limits(np.concatenate([speed, *(c[0] for c in clouds)]), [0.0])
        if values.size:
            low, high = float(np.min(values)), float(np.max(values))
            pad = 0.1 * max(high - low, 1e-9)
            panel.y_range = (low - pad, high + pad)
        panel.hline(0.0, _LIGHT_GREY, 0.5)
        panel.vline(0.0, _LIGHT_GREY, 0.5)
        for group, (v, r) in enumerate(clouds):
            panel.dots(v, r, (*_blend(CYCLE[group % 10], 1.0), 128), 1.5)  # half opaque
        panel.line(speed, torque, "black", 1.3)
        heading = "\n".join(textwrap.wrap(f"{joint}: {descriptions[k]}", width))
        panel.finish(
            heading,
            xlabel=f"velocity [{units[k][0]}]",
            ylabel=ylabel if layout.y_labelled[k] else None,
        )
    entries = [(label, CYCLE[g % 10], "dot") for g, label in enumerate(labels)]
    _legend(canvas, [*entries, ("identified friction model", "black", "line")], 0.5)
    _suptitle(
        canvas,
        "Friction: measured minus predicted rigid-body torque (dots) and identified model (line)",
    )
    return canvas.png()


def autocorrelation_png(
    autocorrelation: np.ndarray, n_samples: int, joint_names: tuple[str, ...]
) -> bytes:
    """Residual autocorrelation per joint with the 95 % whiteness band (paper C Figs. 2–3).

    The joints side by side in one panel (lags 0…L−1 of each joint in its own group)."""
    n_lags = autocorrelation.shape[1]
    gap = max(4, n_lags // 5)
    canvas = Canvas(11.0, 3.2)
    w, h = canvas.size
    panel = Panel(canvas, (int(0.07 * w), int(0.16 * h), int(0.98 * w), int(0.84 * h)))
    starts = np.arange(len(joint_names)) * (n_lags + gap)
    panel.x_range = (-gap / 2, starts[-1] + n_lags - 1 + gap / 2)
    panel.y_range = (-1.05, 1.05)
    band = 1.96 / np.sqrt(max(n_samples, 1))
    panel.hspan(-band, band, _blend(_GREEN, 0.2))
    panel.hline(0.0, "black", 0.5)
    for k, start in enumerate(starts):
        panel.vlines(start + np.arange(n_lags), 0.0, autocorrelation[k], CYCLE[k % 10], 1.2)
    centres = starts + (n_lags - 1) / 2
    panel.finish(
        f"lags 0 to {n_lags - 1} samples per joint; shaded: 95 % band of white noise",
        xlabel="",
        ylabel="autocorrelation",
        x_ticks=(centres, list(joint_names)),
        title_points=9,
    )
    _suptitle(canvas, "Residual autocorrelation", 0.08)
    return canvas.png()


def consistency_png(
    body_names: tuple[str, ...], min_eigenvalues: np.ndarray, masses: np.ndarray, margin: float
) -> bytes:
    """Smallest pseudo-inertia eigenvalue and mass of every body (all must be > 0)."""
    canvas = Canvas(11.0, 3.4)
    w, h = canvas.size
    cell = (0.98 - 0.07) * w / 2.2
    top, bottom = int(0.17 * h), int(0.75 * h)
    left_box = (int(0.07 * w), top, int(0.07 * w + cell), bottom)
    right_box = (int(0.98 * w - cell), top, int(0.98 * w), bottom)
    positions = np.arange(len(body_names), dtype=float)
    names = (positions, list(body_names))
    eigen = Panel(canvas, left_box, log_y=True)
    floor = max(margin, 1e-12)
    shown = np.maximum(min_eigenvalues, 1e-12)
    eigen.limits(positions, np.r_[shown, floor])
    eigen.x_range = (-0.6, len(body_names) - 0.4)
    eigen.bars(positions, shown, [_GREEN if v > 0 else _RED for v in min_eigenvalues])
    eigen.hline(floor, "black", 0.8, dashed=True)
    eigen.finish(
        "smallest eigenvalue of the pseudo-inertia J [kg m^2]",
        title_points=9,
        xlabel="",
        x_ticks=names,
        tick_rotation=30.0,
    )
    _margin_key(canvas, left_box, f"margin {margin:g}")
    bars = Panel(canvas, right_box)
    bars.limits(positions, np.r_[masses, 0.0])
    bars.x_range = (-0.6, len(body_names) - 0.4)
    bars.bars(positions, masses, [_BLUE] * len(masses))
    bars.finish(
        f"body masses [kg] (total {np.sum(masses):.3f} kg)",
        title_points=9,
        xlabel="",
        x_ticks=names,
        tick_rotation=30.0,
    )
    _suptitle(canvas, "Physical consistency", 0.08)
    return canvas.png()
