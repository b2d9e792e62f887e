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
from physid.impacts.geometry import Ellipse, Line, Polygon, Shape, make_polygon

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


# --- typed values: what the Python API takes besides the command line's text -----------------

ShapeLike = str | Shape | tuple[float, float] | np.ndarray
SurfaceLike = str | Line | tuple[float, float]


def _join(values: np.ndarray | tuple | list) -> str:
    """Numbers as the command line writes them (``repr``: they read back exactly)."""
    return ",".join(repr(float(v)) for v in values)


def shape_of(value: ShapeLike, option: str = "shape") -> Shape:
    """A body shape from its text (``ellipse:A,B``, ``polygon:...``), an :class:`Ellipse` or
    :class:`~physid.impacts.geometry.Polygon`, two numbers (the ellipse's semi-axes A, B [m]) or
    a (k, 2) array of convex polygon vertices [m]; checked as the command line checks it."""
    if isinstance(value, str):
        return parse_shape(value, option)
    if isinstance(value, Ellipse | Polygon):
        return parse_shape(value.spec(), option)
    array = _array(value, option)
    if array.shape == (2,):
        return parse_shape(f"ellipse:{_join(array)}", option)
    if array.ndim == 2 and array.shape[1] == 2:
        return parse_shape("polygon:" + ";".join(_join(v) for v in array), option)
    raise InputError(
        f"shape {array.shape}: expected two semi-axes (A, B) or (k, 2) polygon vertices",
        source=option,
    )


def surfaces_of(value: SurfaceLike | list | tuple, option: str = "surfaces") -> list[Line]:
    """Surface lines from text (``line:ANGLE,OFFSET``), :class:`Line` objects or
    ``(ANGLE [rad], OFFSET [m])`` pairs, one or a sequence of them."""
    if isinstance(value, str | Line) or (
        isinstance(value, tuple | list) and len(value) == 2 and all(_is_number(v) for v in value)
    ):
        value = [value]
    lines = []
    for item in value:
        if isinstance(item, str):
            lines.append(parse_surface(item, option))
        elif isinstance(item, Line):
            lines.append(parse_surface(item.spec(), option))
        else:
            lines.append(parse_surface(f"line:{_join(_array(item, option))}", option))
    return lines


def gravity_of(
    value: str | tuple[float, float] | np.ndarray, option: str = "gravity"
) -> np.ndarray:
    """The gravity vector (g_x, g_y) [m/s²] from ``GX,GY`` text or two numbers."""
    if isinstance(value, str):
        return parse_gravity(value, option)
    return parse_gravity(_join(_array(value, option).ravel()), option)


def vector3_of(
    value: str | tuple | list | np.ndarray,
    option: str,
    what: str,
    limits: tuple[float, float, float] | None = None,
) -> np.ndarray:
    """Three numbers from ``A,B,C`` text or a sequence (:func:`parse_vector3`)."""
    text = value if isinstance(value, str) else _join(_array(value, option).ravel())
    return parse_vector3(text, option, what, limits)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | np.number) and not isinstance(value, bool)


def _array(value: object, option: str) -> np.ndarray:
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{value!r} is not a sequence of numbers", source=option) from None
