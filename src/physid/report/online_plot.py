"""Figure of a replay: each body's streamed estimates with their 2-sigma band.

Only the command line and the examples import this module (Matplotlib's object API, no pyplot,
so it works headless and leaves no global state). It belongs with the report layer once that
exists.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from physid.online.replay import ReplayResult

_MAX_POINTS = 2_000  # plotted samples per line (a panel is about 400 pixels wide); longer replays
# are decimated for the figure: with 20 000 the legends' "best" placement took most of its 2.6 s
_PANELS = (  # (title, value columns, names, positive for every consistent body)
    ("mass [kg]", (0,), ("m",), True),
    ("centre of mass [m]", (1, 2, 3), ("x", "y", "z"), False),
    ("inertia about com, diagonal [kg m²]", (4, 6, 9), ("Ixx", "Iyy", "Izz"), True),
    ("inertia about com, products [kg m²]", (5, 7, 8), ("Ixy", "Ixz", "Iyz"), False),
)


def plot_replay(
    result: ReplayResult,
    path: str | Path,
    truth: dict[str, NDArray[np.float64]] | None = None,
    title: str = "",
) -> Path:
    """Write a PNG with one row per body: mass, centre of mass, inertia diagonal and products,
    each with ``estimate +- 2 std`` shaded (about 95 %, labelled as such); gated samples are
    ticked under the mass panel. The mass and the diagonal inertias about the centre of mass
    are positive for every consistent body, which every estimate is (log-Cholesky); their
    linearised bands are cut at 0 rather than drawn into impossible values.

    ``truth`` optionally maps a joint name to its true ``values`` (N, 10), drawn dashed.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n_bodies = len(result.bodies)
    fig = Figure(figsize=(16, 3.2 * n_bodies), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(n_bodies, len(_PANELS), squeeze=False)
    step = max(1, len(result.t) // _MAX_POINTS)
    t = result.t[::step]
    for b, joint in enumerate(result.bodies):
        values, std = result.values[::step, b], result.std[::step, b]
        for ax, (label, columns, names, positive) in zip(axes[b], _PANELS, strict=True):
            for column, name in zip(columns, names, strict=True):
                mean, band = values[:, column], 2.0 * std[:, column]
                (line,) = ax.plot(t, mean, lw=1.0, label=name)
                color = line.get_color()
                low = np.maximum(mean - band, 0.0) if positive else mean - band
                ax.fill_between(t, low, mean + band, color=color, alpha=0.2, lw=0)
                if truth is not None and joint in truth:
                    ax.plot(t, truth[joint][::step, column], "--", color=line.get_color(), lw=0.8)
            ax.fill_between([], [], [], color="0.5", alpha=0.3, lw=0, label="±2 std (~95 %)")
            if truth is not None and joint in truth:
                ax.plot([], [], "--", color="0.3", lw=0.8, label="truth")
            ax.set_title(f"{joint}: {label}", fontsize=9)
            ax.set_xlabel("t [s]")
            ax.tick_params(labelsize=9)
            ax.legend(fontsize=7, loc="best")
        gated_t = result.t[result.gated]
        if gated_t.size:
            ax = axes[b][0]
            low = ax.get_ylim()[0]
            ax.plot(gated_t, np.full(gated_t.size, low), "|", color="red", ms=4, label="gated")
            ax.legend(fontsize=7, loc="best")
    if title:
        fig.suptitle(title, fontsize=10)
    path = Path(path)
    fig.savefig(path, dpi=110)
    return path
