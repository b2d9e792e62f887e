"""Charts of an identification report, drawn by the reader's browser with plotly.js.

Each chart is a plotly.js figure specification (``{"data": [...], "layout": {...}}``, the
format of https://plotly.com/javascript/reference/): the numbers travel in report.html as
base64 float32 arrays and the browser draws them, with zoom, pan, hover values and a PNG
download button. Drawing them in Python costs more CPU than the identification's own choices
(text and tick layout of about twenty panels), and a picture cannot be zoomed into a long
torque trace. A :class:`ReportChart` is one titled figure of the report made of one or more panels.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# Per curve, after the min/max envelope: about 2,000 buckets cover a 1,200 px wide page twice
# over, enough to zoom into a few seconds of a long recording without a multi-megabyte report.
MAX_CURVE_POINTS = 4000
# Dots per group of recordings in one friction panel: enough to see a cloud's shape.
MAX_CLOUD_POINTS = 3000
_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")
_FONT = {"size": 11}


@dataclass(frozen=True)
class ReportChart:
    """One figure of the report: a title, its panels (plotly.js specifications, drawn in one
    column, or two when there are more than three or ``side_by_side``) and whether zooming one
    panel's time axis zooms the others."""

    title: str
    panels: tuple[dict, ...]
    linked_x: bool = False
    side_by_side: bool = False

    @property
    def columns(self) -> int:
        return 2 if len(self.panels) > 3 or self.side_by_side else 1


def plotly_js() -> str:
    """plotly.js as shipped in the ``plotly`` package's data (the Python package itself is not
    imported: the report needs only its JavaScript)."""
    spec = importlib.util.find_spec("plotly")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "the report's charts need the 'plotly' package: pip install plotly"
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    return (folder / "package_data" / "plotly.min.js").read_text(encoding="utf-8")


def array(values: np.ndarray) -> dict:
    """A plotly.js typed array: float32, little-endian, base64 (NaN breaks a line)."""
    data = np.ascontiguousarray(values, dtype="<f4").tobytes()
    return {"dtype": "f4", "bdata": base64.b64encode(data).decode("ascii")}


def decoded(typed: dict) -> np.ndarray:
    """The values of an :func:`array` (for tests and tools reading a report back)."""
    return np.frombuffer(base64.b64decode(typed["bdata"]), dtype="<f4")


def specs_json(charts: dict[str, ReportChart]) -> str:
    """Every panel's specification as one object ``{element id: spec}`` to place inside a
    ``<script>`` element: ``</`` escaped, so no title can close it; a NaN (a range the data
    could not give) is JavaScript's own NaN there, which plotly.js ignores."""
    specs = {
        panel_id(name, k): panel
        for name, chart in charts.items()
        for k, panel in enumerate(chart.panels)
    }
    return json.dumps(specs, separators=(",", ":")).replace("</", "<\\/")


def panel_id(name: str, k: int) -> str:
    return f"chart-{name}-{k}"


def envelope(t: np.ndarray, y: np.ndarray, max_points: int = MAX_CURVE_POINTS) -> tuple:
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
    first = np.arange(buckets)[:, None] * size
    extremes = np.column_stack([padded.argmin(axis=1), padded.argmax(axis=1)])
    # in time order (buckets in turn, each one's two in order); a flat bucket's are one sample
    index = np.minimum(first + np.sort(extremes, axis=1), n - 1).reshape(-1)
    index = index[np.r_[True, index[1:] != index[:-1]]]
    return t[index], y[index]


def stride(n: int, max_points: int) -> np.ndarray:
    """Evenly spread indices of at most ``max_points`` of ``n`` samples (scatter plots)."""
    return np.arange(n)[:: max(1, int(np.ceil(n / max_points)))]


def _line(x: np.ndarray, y: np.ndarray, name: str, colour: str, width: float, **extra) -> dict:
    return {
        "type": "scatter",
        "mode": "lines",
        "x": array(x),
        "y": array(y),
        "name": name,
        "line": {"color": colour, "width": width},
        "hoverinfo": "x+y+name",
        **extra,
    }


def _panel(
    traces: list[dict],
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    height: int = 240,
    title_colour: str = "#222",
    legend: bool = False,
    **layout,
) -> dict:
    """One panel's specification: compact margins, the title above, the legend (on the first
    panel of a chart only) in a row above the plot, where it covers no data."""
    return {
        "data": traces,
        "layout": {
            "title": {"text": title, "font": {"size": 12, "color": title_colour}, "x": 0.02},
            "xaxis": {"title": {"text": xlabel}, "zeroline": False, **layout.pop("xaxis", {})},
            "yaxis": {"title": {"text": ylabel}, **layout.pop("yaxis", {})},
            "height": height,
            "margin": {"l": 60, "r": 24, "t": 60 if legend else 36, "b": 42},
            "showlegend": legend,
            "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
            "font": _FONT,
            **layout,
        },
    }


def torque_chart(
    t: np.ndarray,
    tau_measured: np.ndarray,
    tau_predicted: np.ndarray,
    joint_names: tuple[str, ...],
    title: str,
    units: tuple[str, ...] | None = None,
    missed_above: float = np.inf,
) -> ReportChart:
    """Recorded vs predicted torque and the error, one panel per joint (paper C Fig. 4 style).

    ``t`` is one recording's own time axis (a line across several recordings would bridge the
    gap between them). Panel titles give each joint's relative error and RMSE on all samples;
    the curves go through their min/max :func:`envelope`. ``units`` per joint ("N m" revolute,
    "N" prismatic; default N m). A joint whose relative error exceeds ``missed_above`` gets a
    red title. Zooming the time axis of one panel zooms every panel of the recording.
    """
    units = units or ("N m",) * len(joint_names)
    panels = []
    for k, joint in enumerate(joint_names):
        traces, colour = [], "#222"
        if not np.all(np.isfinite(tau_measured[:, k])):  # no torque column: nothing to compare
            text = f"{joint} [{units[k]}]: predicted only (torque not measured/fitted)"
        else:
            error = tau_measured[:, k] - tau_predicted[:, k]
            rmse = float(np.sqrt(np.mean(error**2)))
            norm = max(np.linalg.norm(tau_measured[:, k]), 1e-300)
            relative = float(np.linalg.norm(error) / norm)
            text = f"{joint} [{units[k]}]: rel. error {100 * relative:.2f} %, RMSE {rmse:.3g}"
            colour = "#d62728" if relative > missed_above else colour
            # The noisy measurement as a light band under the prediction, drawn dark on top.
            traces.append(_line(*envelope(t, error), "error", "#999999", 0.6))
            traces.append(
                _line(*envelope(t, tau_measured[:, k]), "measured", "#17becf", 1.0, opacity=0.55)
            )
        traces.append(_line(*envelope(t, tau_predicted[:, k]), "predicted", "#000000", 0.9))
        panels.append(
            _panel(
                traces,
                text,
                "t [s] from the start of the recording",
                f"torque [{units[k]}]",
                title_colour=colour,
                legend=k == 0,
            )
        )
    return ReportChart(title, tuple(panels), linked_x=True)


def _cloud_range(curve: np.ndarray, cloud: np.ndarray) -> list[float] | None:
    """The y range of a friction panel: the model line and the cloud's 0.5-99.5 percentiles.

    The few samples at velocity reversals, where the sign of a filtered estimate lags, would
    otherwise set the scale and flatten the cloud the reader wants to see."""
    values = [curve[np.isfinite(curve)]]
    if cloud.size:
        values.append(np.percentile(cloud, [0.5, 99.5]))
    joined = np.concatenate(values)
    if not joined.size:
        return None
    low, high = float(np.min(joined)), float(np.max(joined))
    pad = 0.1 * max(high - low, 1e-9)
    return [low - pad, high + pad]


def friction_chart(
    dq: list[np.ndarray],
    residual: list[np.ndarray],
    labels: list[str],
    joint_names: tuple[str, ...],
    curves: list[tuple[np.ndarray, np.ndarray]],
    descriptions: tuple[str, ...],
    units: tuple[tuple[str, str], ...],
) -> ReportChart:
    """Per joint, the torque the rigid-body model leaves over against the velocity, with the
    identified friction model drawn over it.

    A friction model that fits lies along the cloud; a cloud that bends away from the line at
    high speed (Stribeck, viscous saturation) or splits by direction shows what it misses.
    ``dq``/``residual``: one (N, n) array per group of recordings (``labels``); ``curves``: per
    joint, the model's velocity grid and torque (NaN where the line breaks, e.g. across the
    Coulomb step); ``descriptions``: per joint, the model in a few words (the panel's title);
    ``units``: per joint (velocity unit, torque unit).
    """
    per_group = max(200, MAX_CLOUD_POINTS // max(len(dq), 1))
    panels = []
    for k, joint in enumerate(joint_names):
        traces, drawn = [], [np.zeros(0)]
        for group, (v, r, label) in enumerate(zip(dq, residual, labels, strict=True)):
            keep = stride(len(v), per_group)
            keep = keep[np.isfinite(r[keep, k])]  # a joint without a torque column has no cloud
            traces.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "x": array(v[keep, k]),
                    "y": array(r[keep, k]),
                    "name": label,
                    "legendgroup": label,
                    "marker": {"size": 3, "opacity": 0.5, "color": _COLOURS[group % 7]},
                }
            )
            drawn.append(r[keep, k])
        speed, torque = curves[k]
        traces.append(_line(speed, torque, "identified friction model", "#000000", 1.5))
        title = "<br>".join(textwrap.wrap(f"{joint}: {descriptions[k]}", 70))
        y_range = _cloud_range(torque, np.concatenate(drawn))
        panels.append(
            _panel(
                traces,
                title,
                f"velocity [{units[k][0]}]",
                f"residual [{units[k][1]}]",
                height=300,
                legend=k == 0,
                yaxis={"range": y_range} if y_range else {},
            )
        )
    return ReportChart(
        "Friction: measured minus predicted rigid-body torque (dots) and identified model (line)",
        tuple(panels),
    )


def autocorrelation_chart(
    autocorrelation: np.ndarray, n_samples: int, joint_names: tuple[str, ...]
) -> ReportChart:
    """Residual autocorrelation per joint with the 95 % whiteness band (paper C Figs. 2-3): the
    joints side by side in one panel, lags 0..L-1 of each joint in its own group."""
    n_lags = autocorrelation.shape[1]
    gap = max(4, n_lags // 5)
    starts = np.arange(len(joint_names)) * (n_lags + gap)
    band = 1.96 / np.sqrt(max(n_samples, 1))
    traces = [
        {
            "type": "bar",
            "x": array(start + np.arange(n_lags)),
            "y": array(autocorrelation[k]),
            "name": joint,
            "marker": {"color": _COLOURS[k % 7]},
            "width": 0.6,
        }
        for k, (joint, start) in enumerate(zip(joint_names, starts, strict=True))
    ]
    panel = _panel(
        traces,
        f"lags 0 to {n_lags - 1} samples per joint; shaded: 95 % band of white noise",
        "",
        "autocorrelation",
        height=300,
        xaxis={
            "tickvals": (starts + (n_lags - 1) / 2).tolist(),
            "ticktext": list(joint_names),
        },
        yaxis={"range": [-1.05, 1.05]},
        shapes=[
            {
                "type": "rect",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": -band,
                "y1": band,
                "fillcolor": "#2ca02c",
                "opacity": 0.2,
                "line": {"width": 0},
            }
        ],
    )
    return ReportChart("Residual autocorrelation", (panel,))


def consistency_chart(
    body_names: tuple[str, ...], min_eigenvalues: np.ndarray, masses: np.ndarray, margin: float
) -> ReportChart:
    """Smallest pseudo-inertia eigenvalue and mass of every body (all must be > 0)."""
    names = list(body_names)
    colours = ["#2ca02c" if value > 0 else "#d62728" for value in min_eigenvalues]
    eigen = _panel(
        [
            {
                "type": "bar",
                "x": names,
                "y": array(np.maximum(min_eigenvalues, 1e-12)),
                "marker": {"color": colours},
                "name": "smallest eigenvalue",
            }
        ],
        f"smallest eigenvalue of the pseudo-inertia J [kg m^2]; dashed: margin {margin:g}",
        "",
        "eigenvalue [kg m^2]",
        height=300,
        yaxis={"type": "log"},
        shapes=[
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": max(margin, 1e-12),
                "y1": max(margin, 1e-12),
                "line": {"dash": "dash", "width": 1, "color": "#000000"},
            }
        ],
    )
    mass = _panel(
        [{"type": "bar", "x": names, "y": array(masses), "marker": {"color": "#1f77b4"}}],
        f"body masses [kg] (total {np.sum(masses):.3f} kg)",
        "",
        "mass [kg]",
        height=300,
    )
    return ReportChart("Physical consistency", (eigen, mass), side_by_side=True)


# The page's script: draw every panel from its specification, and keep the time axes of a
# chart's linked panels zoomed together.
DRAW_SCRIPT = """
const config = {responsive: true, displaylogo: false,
  toImageButtonOptions: {format: 'png', scale: 2}};
for (const [id, spec] of Object.entries(PHYSID_CHARTS)) {
  const element = document.getElementById(id);  // absent from a page cut for a summary
  if (element) Plotly.newPlot(element, spec.data, spec.layout, config);
}
for (const group of document.querySelectorAll('.panels[data-linked-x]')) {
  const panels = [...group.querySelectorAll('.chart')];
  let syncing = false;
  for (const panel of panels) {
    panel.on('plotly_relayout', (event) => {
      if (syncing) return;
      const update = {};
      for (const key of ['xaxis.range[0]', 'xaxis.range[1]', 'xaxis.autorange']) {
        if (key in event) update[key] = event[key];
      }
      if (!Object.keys(update).length) return;
      syncing = true;
      Promise.all(panels.filter((p) => p !== panel).map((p) => Plotly.relayout(p, update)))
        .finally(() => { syncing = false; });
    });
  }
}
"""
