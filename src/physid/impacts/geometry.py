"""Planar geometry of paper D §3.1–3.2 and §4.1: a rigid body against an environment of lines.

Frames and conventions (SI units, angles in radians):

* pose ``q = (x, y, theta)``: ``(x, y)`` is the centre of mass G in the world frame {S} (y up,
  gravity along -y), ``theta`` the rotation of the body frame {S_l} from {S};
* body shapes are described in {S_l}, whose origin is the centre of mass;
* a surface :class:`Line` is an infinite straight line. ``angle`` is its direction w.r.t. the world
  x axis (radians, counter-clockwise) and ``offset`` the signed distance of the line from the world
  origin along its normal ``n = (-sin angle, cos angle)``, i.e. the line is ``{p : n·p = offset}``.
  The free side is ``n·p > offset`` (to the left when walking along the line's direction), so the
  ground is ``Line(0, 0)`` and a ceiling at height 2 m is ``Line(pi, -2)``;
* ``n`` is also the contact normal of paper D Fig. 1 (the *inward* normal of the body boundary) and
  the friction directions are ``d+ = (n_y, -n_x)`` and ``d- = -d+``, so that ``k = d+ × n``.

Each (body feature, line) pair is one contact *candidate*: an ellipse has one per line (its closest
point, eq. 21), a polygon one per (vertex, line). The functions work on NumPy floats and on CasADi
symbols alike (the identification NLP calls them symbolically), which is why they avoid NumPy
ufuncs on their arguments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import casadi as cs
import numpy as np

#: Standard gravity [m/s²]; paper D's eq. (22) value 133 N·s for m = 10 kg, y0 − b = 9 m uses it.
STANDARD_GRAVITY = 9.81


def gravity_vector(gravity: float | Any) -> np.ndarray:
    """The gravity acceleration (g_x, g_y) [m/s²] in the world frame.

    A number is the magnitude of gravity along −y (the default frame of paper D); two numbers are
    the vector itself, so a camera whose y axis is not vertical can keep its own frame.
    """
    if np.ndim(gravity) == 0:
        return np.array([0.0, -float(gravity)])
    g = np.asarray(gravity, dtype=float).ravel()
    if g.size != 2:
        raise ValueError(f"gravity must be a number or two numbers (g_x, g_y), got {gravity!r}")
    return g


def _ops(*values: Any) -> tuple[Any, Any, Any]:
    """cos, sin, sqrt matching the argument type: CasADi for symbols, ``math``/NumPy otherwise."""
    if any(isinstance(v, cs.SX | cs.MX | cs.DM) for v in values):
        return cs.cos, cs.sin, cs.sqrt
    return np.cos, np.sin, np.sqrt


@dataclass(frozen=True)
class Line:
    """An infinite environment line ``{p : n·p = offset}``, ``n = (-sin angle, cos angle)``."""

    angle: float  # direction w.r.t. world x [rad]
    offset: float  # signed distance from the world origin along the normal [m]

    @property
    def normal(self) -> np.ndarray:
        """Unit normal pointing to the free side (the body's inward normal at contact)."""
        return np.array([-math.sin(self.angle), math.cos(self.angle)])

    @property
    def tangent(self) -> np.ndarray:
        """Friction direction ``d+ = (n_y, -n_x)`` (``d- = -d+``)."""
        n = self.normal
        return np.array([n[1], -n[0]])

    def spec(self) -> str:
        return f"line:{self.angle!r},{self.offset!r}"


@dataclass(frozen=True)
class Ellipse:
    """Ellipse with semi-axes ``a`` along body x and ``b`` along body y [m], centred on the COM."""

    a: float
    b: float

    @property
    def max_radius(self) -> float:
        """Largest distance from the COM to the boundary [m] (bounds J/m from above)."""
        return max(self.a, self.b)

    def uniform_inertia_ratio(self) -> float:
        """J/m of a uniform elliptic lamina about its centre, (a² + b²)/4 [m²]."""
        return (self.a**2 + self.b**2) / 4.0

    def n_features(self) -> int:
        return 1

    def spec(self) -> str:
        return f"ellipse:{self.a!r},{self.b!r}"


@dataclass(frozen=True)
class Polygon:
    """Convex polygon: ``vertices`` (k×2) [m] in the body frame, counter-clockwise, COM at 0."""

    vertices: np.ndarray = field(repr=False)

    @property
    def max_radius(self) -> float:
        return float(np.max(np.hypot(self.vertices[:, 0], self.vertices[:, 1])))

    def uniform_inertia_ratio(self) -> float:
        """Polar second moment of area about the body origin divided by the area [m²]."""
        x, y = self.vertices[:, 0], self.vertices[:, 1]
        xn, yn = np.roll(x, -1), np.roll(y, -1)
        cross = x * yn - xn * y
        area = cross.sum() / 2.0
        polar = (cross * (x**2 + x * xn + xn**2 + y**2 + y * yn + yn**2)).sum() / 12.0
        return float(polar / area)

    def n_features(self) -> int:
        return int(self.vertices.shape[0])

    def spec(self) -> str:
        return "polygon:" + ";".join(f"{x!r},{y!r}" for x, y in self.vertices)


Shape = Ellipse | Polygon


def make_polygon(vertices: np.ndarray) -> Polygon:
    """Validate a convex polygon (any orientation) and return it counter-clockwise.

    Raises ValueError (the parser turns it into an InputError naming the option).
    """
    v = np.asarray(vertices, dtype=float)
    if v.ndim != 2 or v.shape[1] != 2 or v.shape[0] < 3:
        raise ValueError("a polygon needs at least 3 vertices x,y")
    if not np.all(np.isfinite(v)):
        raise ValueError("polygon vertices must be finite numbers")
    edges = np.roll(v, -1, axis=0) - v
    turn = edges[:, 0] * np.roll(edges[:, 1], -1) - edges[:, 1] * np.roll(edges[:, 0], -1)
    if np.all(turn < 0):
        v, turn = v[::-1].copy(), -turn[::-1]
    if not np.all(turn > 0):
        raise ValueError("polygon vertices must form a strictly convex polygon")
    inside = v[:, 0] * np.roll(v[:, 1], -1) - v[:, 1] * np.roll(v[:, 0], -1)
    if not np.all(inside > 0):
        raise ValueError(
            "the centre of mass (body origin 0,0) must lie strictly inside the polygon"
        )
    return Polygon(v)


def candidate_pairs(shape: Shape, lines: list[Line]) -> list[tuple[int, int]]:
    """Contact candidates as (line index, feature index): one per line × feature."""
    return [(j, f) for j in range(len(lines)) for f in range(shape.n_features())]


def gap_and_arm(shape: Shape, line: Line, feature: int, q: Any) -> tuple[Any, Any, Any]:
    """Normal gap g_n and contact-point lever arm GQ (world frame) for one candidate.

    For the ellipse this is the minimum over the boundary of paper D eq. (21), in the closed form of
    the support function: ``g = n·G − offset − sqrt(a² (n·u)² + b² (n·w)²)`` with body axes
    ``u = (cos θ, sin θ)``, ``w = (−sin θ, cos θ)``; the minimiser is
    ``GQ = −(a² (n·u) u + b² (n·w) w) / sqrt(...)``. For a polygon vertex Q: ``n·Q − offset``.
    Returns ``(gap [m], arm_x [m], arm_y [m])``; works on floats and on CasADi symbols.
    """
    cos, sin, sqrt = _ops(q[0], q[1], q[2])
    c, s = cos(q[2]), sin(q[2])
    nx, ny = -math.sin(line.angle), math.cos(line.angle)
    if isinstance(shape, Ellipse):
        nu = nx * c + ny * s
        nw = -nx * s + ny * c
        support = sqrt(shape.a**2 * nu**2 + shape.b**2 * nw**2)
        arm_x = -(shape.a**2 * nu * c - shape.b**2 * nw * s) / support
        arm_y = -(shape.a**2 * nu * s + shape.b**2 * nw * c) / support
    else:
        vx, vy = shape.vertices[feature]
        arm_x = c * vx - s * vy
        arm_y = s * vx + c * vy
    gap = nx * (q[0] + arm_x) + ny * (q[1] + arm_y) - line.offset
    return gap, arm_x, arm_y


@dataclass(frozen=True)
class ContactFrames:
    """Contact quantities of all candidates at one pose (paper D §3.1, Fig. 1 and §4.1).

    ``gap`` (nc,) [m]; ``point`` (nc, 2) contact points Q in the world frame [m]; ``arm`` (nc, 2)
    GQ [m]; ``normal`` and ``tangent`` (nc, 2) unit vectors n and d+; ``pairs`` the candidates.
    """

    gap: np.ndarray
    point: np.ndarray
    arm: np.ndarray
    normal: np.ndarray
    tangent: np.ndarray
    pairs: list[tuple[int, int]]


def contact_frames(shape: Shape, lines: list[Line], q: np.ndarray) -> ContactFrames:
    """Evaluate gap, contact point, normal and tangent of every candidate at pose ``q``."""
    pairs = candidate_pairs(shape, lines)
    nc = len(pairs)
    gap, arm = np.empty(nc), np.empty((nc, 2))
    normal, tangent = np.empty((nc, 2)), np.empty((nc, 2))
    for i, (j, f) in enumerate(pairs):
        g, ax, ay = gap_and_arm(shape, lines[j], f, q)
        gap[i], arm[i] = g, (ax, ay)
        normal[i], tangent[i] = lines[j].normal, lines[j].tangent
    point = np.asarray(q[:2], dtype=float) + arm
    return ContactFrames(gap, point, arm, normal, tangent, pairs)


def grasp_matrices(arm: Any, normal: np.ndarray, tangent: np.ndarray) -> tuple[Any, Any]:
    """Wrench bases of paper D §4.1: ``N`` (3×nc) and the discretised ``T~`` (3×2nc).

    Column j of N is ``(n, k·(GQ × n))``; columns 2j, 2j+1 of T~ are the same for d+ and d- = -d+.
    ``arm`` is (nc, 2) NumPy, or a list of (arm_x, arm_y) CasADi pairs (CasADi matrices return).
    """
    nc = len(normal)
    symbolic = not isinstance(arm, np.ndarray)
    N = cs.SX.zeros(3, nc) if symbolic else np.zeros((3, nc))
    T = cs.SX.zeros(3, 2 * nc) if symbolic else np.zeros((3, 2 * nc))
    for j in range(nc):
        ax, ay = arm[j][0], arm[j][1]
        n, d = normal[j], tangent[j]
        N[0, j], N[1, j], N[2, j] = n[0], n[1], ax * n[1] - ay * n[0]
        for col, sign in ((2 * j, 1.0), (2 * j + 1, -1.0)):
            T[0, col], T[1, col] = sign * d[0], sign * d[1]
            T[2, col] = sign * (ax * d[1] - ay * d[0])
    return N, T


def friction_pair_sum(nc: int) -> np.ndarray:
    """E of paper D eqs. (12)–(15) for the column pairs (d+, d-) of :func:`grasp_matrices`:
    block diagonal of (1, 1)ᵀ, shape (2nc, nc); ``Eᵀ c_t`` sums each contact's two impulses."""
    return np.kron(np.eye(nc), np.ones((2, 1)))


def min_gap(shape: Shape, lines: list[Line], q: np.ndarray) -> tuple[float, int]:
    """Smallest gap over all lines at pose ``q`` [m] and the index of the line that realises it."""
    frames = contact_frames(shape, lines, q)
    i = int(np.argmin(frames.gap))
    return float(frames.gap[i]), frames.pairs[i][0]
