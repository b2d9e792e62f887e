"""Lemke's algorithm against exhaustive enumeration of complementary bases."""

import numpy as np
import pytest

from physid.impacts.lcp import lemke, solve_lcp_enumerate


@pytest.mark.parametrize("seed", range(20))
def test_lemke_matches_enumeration_on_p_matrices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 7))
    A = rng.normal(size=(n, n))
    M = A @ A.T + 0.1 * np.eye(n) + 0.5 * (A - A.T)  # positive definite ⇒ unique solution
    q = rng.normal(size=n)
    sol = lemke(M, q)
    assert sol.ok and sol.violation() < 1e-10
    (reference,) = solve_lcp_enumerate(M, q)
    np.testing.assert_allclose(sol.z, reference, atol=1e-9)


@pytest.mark.parametrize("seed", range(20))
def test_lemke_solves_stewart_trinkle_friction_lcp(seed: int) -> None:
    """Single-contact frictional LCP (copositive, not P): the velocity it implies is unique."""
    rng = np.random.default_rng(100 + seed)
    n = rng.normal(size=2)
    n /= np.linalg.norm(n)
    d = np.array([n[1], -n[0]])
    arm = rng.normal(size=2) * 0.05
    Nc = np.r_[n, arm[0] * n[1] - arm[1] * n[0]]
    T = np.column_stack([np.r_[d, arm[0] * d[1] - arm[1] * d[0]]] * 2) * [1, -1]
    W = np.array([1.0, 1.0, 1.0 / 7.5e-4])
    mu, v_free = rng.uniform(0, 1), rng.normal(size=3)
    G = np.column_stack([Nc, T])
    M = np.zeros((4, 4))
    M[:3, :3] = G.T @ (W[:, None] * G)
    M[1:3, 3] = 1.0
    M[3, :3] = [mu, -1.0, -1.0]
    q = np.r_[G.T @ v_free, 0.0]
    sol = lemke(M, q)
    assert sol.ok and sol.violation() < 1e-9
    solutions = solve_lcp_enumerate(M, q)
    assert solutions, "the enumeration finds the same problem solvable"
    v = v_free + W * (G @ sol.z[:3])
    for z in solutions:
        np.testing.assert_allclose(v_free + W * (G @ z[:3]), v, atol=1e-8)


def test_lemke_reports_infeasible_problem() -> None:
    sol = lemke(np.array([[-1.0]]), np.array([-1.0]))  # w = -z - 1 ≥ 0 has no z ≥ 0
    assert not sol.ok


def test_trivial_problem_needs_no_pivot() -> None:
    sol = lemke(np.eye(3), np.array([1.0, 0.0, 2.0]))
    assert sol.ok and sol.pivots == 0 and not sol.z.any()
