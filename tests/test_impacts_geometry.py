"""Planar geometry of paper D §3.1–3.2, §4.1 against brute force and closed forms."""

import math

import casadi as cs
import numpy as np
import pytest

from physid.errors import InputError
from physid.impacts.geometry import (
    Ellipse,
    Line,
    contact_frames,
    gap_and_arm,
    grasp_matrices,
    make_polygon,
)
from physid.impacts.specs import parse_shape, parse_surface, parse_vector3


def _cross(u: np.ndarray, w: np.ndarray) -> float:
    return float(u[0] * w[1] - u[1] * w[0])


def _gap_eq21_brute_force(ellipse: Ellipse, line: Line, q: np.ndarray) -> float:
    """min over β of paper D eq. (21), with (x0, y0) the foot of the origin on the line."""
    beta = np.linspace(0.0, 2.0 * np.pi, 200_001)
    a, b = ellipse.a, ellipse.b
    rho = a * b / np.sqrt(b**2 * np.cos(beta) ** 2 + a**2 * np.sin(beta) ** 2)
    alpha = line.angle
    x0, y0 = line.offset * line.normal
    ell = (
        (q[1] - y0) * math.cos(alpha)
        - (q[0] - x0) * math.sin(alpha)
        + rho * np.sin(beta + q[2] - alpha)
    )
    return float(ell.min())


@pytest.mark.parametrize("seed", range(4))
def test_ellipse_gap_matches_eq21_minimum(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ellipse = Ellipse(0.05, 0.025)
    line = Line(rng.uniform(-0.6, 0.6), rng.uniform(-0.05, 0.05))
    q = np.array([rng.uniform(-0.2, 0.2), rng.uniform(0.0, 0.2), rng.uniform(-4, 4)])
    gap, ax, ay = gap_and_arm(ellipse, line, 0, q)
    assert gap == pytest.approx(_gap_eq21_brute_force(ellipse, line, q), abs=1e-9)
    # The contact point lies on the ellipse boundary: (GQ in body axes) on x²/a² + y²/b² = 1.
    c, s = math.cos(q[2]), math.sin(q[2])
    bx, by = c * ax + s * ay, -s * ax + c * ay
    assert (bx / ellipse.a) ** 2 + (by / ellipse.b) ** 2 == pytest.approx(1.0, abs=1e-12)
    # ... and its signed distance to the line is the gap.
    point = q[:2] + np.array([ax, ay])
    assert line.normal @ point - line.offset == pytest.approx(gap, abs=1e-12)


def test_ground_flat_ellipse_and_frames() -> None:
    frames = contact_frames(Ellipse(1.5, 1.0), [Line(0.0, 0.0)], np.array([0.3, 10.0, 0.0]))
    assert frames.gap[0] == pytest.approx(9.0)
    np.testing.assert_allclose(frames.point[0], [0.3, 9.0], atol=1e-12)  # Q is on the body
    np.testing.assert_allclose(frames.normal[0], [0.0, 1.0], atol=1e-15)
    np.testing.assert_allclose(frames.tangent[0], [1.0, 0.0], atol=1e-15)


def test_grasp_matrix_columns_are_wrenches() -> None:
    rng = np.random.default_rng(7)
    lines = [Line(-0.247, 0.01), Line(0.4, -0.02)]
    q = np.array([0.01, 0.06, 0.8])
    frames = contact_frames(Ellipse(0.05, 0.025), lines, q)
    N, T = grasp_matrices(frames.arm, frames.normal, frames.tangent)
    for j in range(len(lines)):
        n, d = frames.normal[j], frames.tangent[j]
        assert _cross(d, n) == pytest.approx(1.0)  # k = d+ × n
        r = frames.point[j] - q[:2]
        f = rng.normal(size=2)
        # Wrench of a force f at Q about G: (f, (GQ × f)_z); N and T~ apply it to (n·f, d·f).
        np.testing.assert_allclose(
            N[:, j] * (n @ f) + T[:, 2 * j] * (d @ f), [*f, _cross(r, f)], atol=1e-15
        )
        np.testing.assert_allclose(T[:, 2 * j + 1], -T[:, 2 * j])


def test_symbolic_gap_equals_numeric() -> None:
    ellipse, line = Ellipse(0.05, 0.025), Line(-0.247, 0.0)
    qs = cs.SX.sym("q", 3)
    f = cs.Function("g", [qs], list(gap_and_arm(ellipse, line, 0, qs)))
    q = np.array([0.02, 0.05, -0.4])
    np.testing.assert_allclose([float(v) for v in f(q)], gap_and_arm(ellipse, line, 0, q))


def test_polygon_vertices_gaps_and_inertia() -> None:
    square = make_polygon(np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=float) * 0.1)
    assert square.uniform_inertia_ratio() == pytest.approx(0.2**2 / 6)  # side s: s²/6
    frames = contact_frames(square, [Line(0.0, 0.0)], np.array([0.0, 0.5, math.pi / 4]))
    np.testing.assert_allclose(
        np.sort(frames.gap), 0.5 + np.array([-1, 0, 0, 1]) * 0.1 * math.sqrt(2), atol=1e-12
    )
    # Many-sided polygon → ellipse lamina value (a² + b²)/4.
    beta = np.linspace(0, 2 * np.pi, 2000, endpoint=False)
    ring = make_polygon(np.column_stack([0.05 * np.cos(beta), 0.025 * np.sin(beta)])[::-1])
    assert ring.uniform_inertia_ratio() == pytest.approx(
        Ellipse(0.05, 0.025).uniform_inertia_ratio(), rel=1e-5
    )
    with pytest.raises(ValueError, match="convex"):
        make_polygon(np.array([[0, 0], [1, 0], [0.2, 0.2], [0, 1]], dtype=float) - 0.1)


@pytest.mark.parametrize(
    ("parser", "text", "fragment"),
    [
        (parse_shape, "circle:1", "--shape"),
        (parse_shape, "ellipse:0.05", "expected 2 numbers"),
        (parse_shape, "ellipse:0.05,-1", "positive"),
        (parse_shape, "ellipse:a,b", "numbers"),
        (parse_shape, "polygon:0,0;1,0", "at least 3"),
        (parse_surface, "line:0", "--surface"),
        (parse_surface, "plane:0,0", "line:ANGLE,OFFSET"),
        (parse_surface, "line:nan,0", "finite"),
    ],
)
def test_spec_parsers_fail_on_one_line(parser, text: str, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        parser(text)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_spec_parsers_accept_documented_forms() -> None:
    assert parse_shape("ellipse:0.05,0.025") == Ellipse(0.05, 0.025)
    assert parse_surface("line:-0.247,0.01") == Line(-0.247, 0.01)
    poly = parse_shape("polygon:-0.1,-0.1;-0.1,0.1;0.1,0.1;0.1,-0.1")  # clockwise is accepted
    assert poly.vertices.shape == (4, 2)
    np.testing.assert_allclose(parse_vector3("0,0.1,-0.785", "--q0", "pose"), [0, 0.1, -0.785])
