"""The numbers the impacts faces accept, in one place: the CLI's option callbacks
(``physid impacts simulate`` / ``identify`` / ``identify-snapshots``) and the API functions
(:func:`physid.impacts_simulate`, :func:`physid.impacts_identify`,
:func:`physid.impacts_snapshots`) check the same bounds through :func:`physid.errors.in_range`,
so a bad number is the same one-line error from either face.

Each bound is a :class:`physid.errors.Bound` ``(low, high, low_open[, integer])``: the value
must lie in [low, high], or (low, high] when ``low_open``."""

from __future__ import annotations

import math

from physid.errors import Bound

MAX_FPS = 1e5  # frames/s: beyond any camera
MAX_DURATION_S = 3600.0

SIMULATE: dict[str, Bound] = {
    "mu": Bound(0.0, 10.0),
    "restitution": Bound(0.0, 1.0),
    "duration": Bound(0.0, MAX_DURATION_S, True),
    "fps": Bound(0.0, MAX_FPS, True),
    "noise": Bound(0.0, 1.0),
    "noise_angle": Bound(0.0, math.pi),
    "inertia_ratio": Bound(0.0, 100.0, True),
    "dt": Bound(0.0, 0.1, True),
    "seed": Bound(0, 2**32 - 1, integer=True),  # numpy's default_rng takes no negative seed
}
IDENTIFY: dict[str, Bound] = {
    "mass": Bound(1e-9, 1e6),
    "noise": Bound(1e-9, 1.0),
    "noise_angle": Bound(1e-9, math.pi),
    "max_substep": Bound(1e-6, 0.1),
}
SNAPSHOTS: dict[str, Bound] = {
    "noise_velocity": Bound(1e-9, 100.0),
    "max_inertia_ratio": Bound(0.0, 1e6, True),
    "mu_max": Bound(0.0, 10.0, True),
}
