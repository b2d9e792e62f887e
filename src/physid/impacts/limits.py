"""The numbers the impacts faces accept, in one place: the CLI's option callbacks
(``physid impacts simulate`` / ``identify-snapshots``) and the API functions
(:func:`physid.impacts_simulate`, :func:`physid.impacts_snapshots`) check the same bounds through
:func:`physid.errors.in_range`, so a bad number is the same one-line error from either face.

Each bound is ``(low, high, low_open)``: the value must lie in [low, high], or (low, high] when
``low_open``."""

from __future__ import annotations

import math

from physid.errors import in_range

MAX_FPS = 1e5  # frames/s: beyond any camera
MAX_DURATION_S = 3600.0

Bound = tuple[float, float, bool]

SIMULATE: dict[str, Bound] = {
    "mu": (0.0, 10.0, False),
    "restitution": (0.0, 1.0, False),
    "duration": (0.0, MAX_DURATION_S, True),
    "fps": (0.0, MAX_FPS, True),
    "noise": (0.0, 1.0, False),
    "noise_angle": (0.0, math.pi, False),
    "inertia_ratio": (0.0, 100.0, True),
    "dt": (0.0, 0.1, True),
}
SNAPSHOTS: dict[str, Bound] = {
    "noise_velocity": (1e-9, 100.0, False),
    "max_inertia_ratio": (0.0, 1e6, True),
    "mu_max": (0.0, 10.0, True),
}


def check_numbers(bounds: dict[str, Bound], values: dict[str, float | None]) -> None:
    """Raise the one-line :class:`~physid.errors.InputError` naming the first of ``values``
    outside its bound (``None``, an unset optional, passes)."""
    for name, value in values.items():
        in_range(value, name, *bounds[name])
