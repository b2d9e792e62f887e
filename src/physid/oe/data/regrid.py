"""Put a jittery log on the uniform node grid of optimal estimation.

Paper B's problem has one node per sample, spaced by a constant dt; a robot's log (ROS bags,
fieldbus timestamps) jitters. ``regrid`` resamples every column at ``t0 + k dt`` (dt the median
recorded step): commands ``tau_*`` and contact flags ``contact_*`` are held from the last
sample at or before each node (what the robot applied / knew), the other signals are linearly
interpolated (joint angles after unwrapping, so a continuous joint crossing +-pi stays smooth;
quaternion components are renormalised by the reader). A gap of more than ``max_gap`` steps
is an error: interpolating across a dropout would invent the motion.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from physid.errors import InputError

HELD_PREFIXES = ("tau_", "contact_")


def regrid(
    cols: dict[str, NDArray], t: NDArray, dt: float, path: str, max_gap: float = 5.0
) -> dict[str, NDArray]:
    """The columns at the uniform grid (``t`` included); InputError naming the row of a gap."""
    steps = np.diff(t)
    gap = np.flatnonzero(steps > max_gap * dt)
    if gap.size:
        raise InputError(
            f"column t: a gap of {steps[gap[0]]:.6g} s after row {gap[0] + 2} "
            f"(more than {max_gap:g} steps of {dt:.6g} s): split the log there",
            source=path,
        )
    grid = t[0] + dt * np.arange(int(np.floor((t[-1] - t[0]) / dt + 1e-9)) + 1)
    held = np.clip(np.searchsorted(t, grid + 1e-9 * dt, side="right") - 1, 0, t.size - 1)
    out = {"t": grid}
    for name, values in cols.items():
        if name == "t":
            continue
        x = np.asarray(values, dtype=float)
        if name.startswith(HELD_PREFIXES):
            out[name] = x[held]
        else:
            out[name] = np.interp(grid, t, np.unwrap(x) if name.startswith("q_") else x)
    return out
