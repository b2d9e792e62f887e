"""Text forms of shapes, surfaces and vectors used on the command line.

* ``ellipse:A,B`` — semi-axes A (body x) and B (body y) in metres;
* ``polygon:X1,Y1;X2,Y2;...`` — convex polygon vertices in metres in the body frame, whose origin
  is the centre of mass (either orientation);
* ``line:ANGLE,OFFSET`` — ANGLE in radians from the world x axis to the line direction, OFFSET in
  metres: the signed distance of the line from the world origin along its normal
  ``(-sin ANGLE, cos ANGLE)``; the free side is the one the normal points to. ``line:0,0`` is the
  ground y = 0; ``line:-0.247,0`` a slope descending to the right through the origin;
* ``GX,GY`` — the gravity acceleration in the world frame in m/s² (``0,-9.81``: along −y).

Every parser raises :class:`InputError` with the option name and the offending text.
"""

from __future__ import annotations

import math

import numpy as np

from physid.errors import InputError
from physid.impacts.geometry import Ellipse, Line, Shape, make_polygon

_MIN_SIZE_M, _MAX_SIZE_M = 1e-6, 1e3  # a body between a micrometre and a kilometre


def _numbers(text: str, count: int | None, option: str, what: str) -> list[float]:
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise InputError(
            f"{text!r}: {what} must be numbers separated by commas", source=option
        ) from None
    if count is not None and len(values) != count:
        raise InputError(
            f"{text!r}: expected {count} numbers ({what}), got {len(values)}", source=option
        )
    if not all(math.isfinite(v) for v in values):
        raise InputError(f"{text!r}: {what} must be finite", source=option)
    return values


def parse_shape(text: str, option: str = "--shape") -> Shape:
    """Parse ``ellipse:A,B`` or ``polygon:X1,Y1;X2,Y2;...`` (metres)."""
    kind, sep, body = text.partition(":")
    kind = kind.strip().lower()
    if not sep or kind not in ("ellipse", "polygon"):
        raise InputError(
            f"{text!r}: expected ellipse:A,B or polygon:X1,Y1;X2,Y2;...", source=option
        )
    if kind == "ellipse":
        a, b = _numbers(body, 2, option, "semi-axes A,B in metres")
        if not (_MIN_SIZE_M <= a <= _MAX_SIZE_M and _MIN_SIZE_M <= b <= _MAX_SIZE_M):
            raise InputError(
                f"{text!r}: semi-axes must be positive, within [{_MIN_SIZE_M:g}, "
                f"{_MAX_SIZE_M:g}] m",
                source=option,
            )
        return Ellipse(a, b)
    vertices = [_numbers(v, 2, option, "vertex X,Y in metres") for v in body.split(";")]
    if any(abs(c) > _MAX_SIZE_M for vertex in vertices for c in vertex):
        raise InputError(f"{text!r}: vertices must lie within {_MAX_SIZE_M:g} m", source=option)
    try:
        return make_polygon(np.array(vertices))
    except ValueError as error:
        raise InputError(f"{text!r}: {error}", source=option) from None


def parse_surface(text: str, option: str = "--surface") -> Line:
    """Parse ``line:ANGLE,OFFSET`` (radians, metres)."""
    kind, sep, body = text.partition(":")
    if not sep or kind.strip().lower() != "line":
        raise InputError(f"{text!r}: expected line:ANGLE,OFFSET (radians, metres)", source=option)
    angle, offset = _numbers(body, 2, option, "ANGLE [rad], OFFSET [m]")
    return Line(angle, offset)


def parse_vector3(
    text: str, option: str, what: str, limits: tuple[float, float, float] | None = None
) -> np.ndarray:
    """Parse three comma-separated numbers, e.g. ``--q0 X,Y,TH``, each within ``±limits``
    (a pose of 1e300 simulates and writes digits that mean nothing)."""
    values = np.array(_numbers(text, 3, option, what))
    if limits is not None and np.any(np.abs(values) > limits):
        bounds = ", ".join(f"±{v:g}" for v in limits)
        raise InputError(f"{text!r}: {what} must lie within {bounds}", source=option)
    return values


#: Largest accepted gravity [m/s²]: beyond any planet's surface gravity (Jupiter's is 24.8).
MAX_GRAVITY = 100.0


def parse_gravity(text: str, option: str = "--gravity") -> np.ndarray:
    """Parse ``GX,GY`` [m/s²], the gravity vector in the world frame, of norm ≤ 100 m/s²."""
    g = np.array(_numbers(text, 2, option, "GX, GY in m/s²"))
    if float(np.linalg.norm(g)) > MAX_GRAVITY:
        raise InputError(
            f"{text!r}: |g| = {np.linalg.norm(g):.4g} m/s² exceeds {MAX_GRAVITY:g} m/s²; give "
            "the acceleration in m/s² (e.g. 0,-9.81), not a unit vector times a factor",
            source=option,
        )
    return g
