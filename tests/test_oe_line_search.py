"""The oe line search's interpolated step (physid.oe.solving.solver._interpolated): when the
first trial does not lower the merit, the minimiser of the merit's quadratic interpolation along
the step is tried before plain halving (Nocedal & Wright eq. 3.58), so that a step which
overshoots the minimum along its line lands near it instead of alternating about it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from oe_checks import kinova_payload_problem

from physid.budget import Budget
from physid.oe.solving import solver


@pytest.fixture(scope="module")
def overshoot(kinova_payload_arm):
    """The Kinova payload problem's solution, an iterate with theta 3 std off whose process
    noise closes every gap (the closed rollout's merit is then the cost), and its Newton step
    made three times too long, as a Gauss-Newton model with a third of the true curvature
    would propose."""
    problem, xs, ws, theta = kinova_payload_problem(kinova_payload_arm)
    result = solver.solve(problem, xs, ws, theta, solver.OEOptions(max_iterations=40))
    direction = np.random.default_rng(1).standard_normal(theta.size)
    theta = result.theta + 3.0 * result.theta_std * direction
    return problem, result, theta


def _search(problem, result, theta, interpolate, factor=3.0, window_high=False):  # noqa: ANN001, ANN202
    options = solver.OEOptions(rollout="closed", interpolate=interpolate)
    run = solver._start(problem, result.xs, result.ws, theta, options)
    if window_high:  # an earlier merit far above: the window accepts any finite full step
        run.recent.insert(0, (1e12, 0.0))
    step = solver._newton_step(problem, run, options)
    long = dataclasses.replace(
        step,
        dx=factor * step.dx,
        dw=factor * step.dw,
        dtheta=factor * step.dtheta,
        gradient_dot=factor * step.gradient_dot,
        curvature=factor**2 * step.curvature,
    )
    exact = solver._trial(problem, run, options, step, 1.0)[1]  # the minimum along the line
    budget = Budget(seconds=60.0, iterations=1)
    *_, cost, _, alpha = solver._line_search(problem, run, options, budget, long)
    return run.cost, exact, cost, alpha


def test_an_overshooting_step_is_cut_to_the_minimum_along_its_line(overshoot):
    """The three-times-long step raises the cost; the interpolation takes a third of it (to
    2 %) and lands on the cost of the true Newton step (to 1e-4 of the way down), where halving
    takes half and stops a quarter of the way short of that minimum."""
    problem, result, theta = overshoot
    start, exact, cost, alpha = _search(problem, result, theta, interpolate=True)
    assert abs(alpha - 1.0 / 3.0) < 0.02 / 3.0
    assert abs(cost - exact) < 1e-4 * (start - exact)
    _, _, halved, alpha_halved = _search(problem, result, theta, interpolate=False)
    assert alpha_halved == 0.5
    assert halved - exact > 0.2 * (start - exact)


def test_the_window_keeps_a_full_step_far_from_the_model(overshoot):
    """When the non-monotone window accepts the full step, the interpolation replaces it only
    within a factor 4 of the model: the three-times-long step is still cut to a third (near
    the solution the window would let it alternate about the minimum), the ten-times-long one
    (the interpolation's minimiser 0.1, a merit far above the model's) is kept whole, as the
    window lets the merit rise far from a solution."""
    problem, result, theta = overshoot
    *_, alpha = _search(problem, result, theta, True, factor=3.0, window_high=True)
    assert abs(alpha - 1.0 / 3.0) < 0.02 / 3.0
    *_, alpha = _search(problem, result, theta, True, factor=10.0, window_high=True)
    assert alpha == 1.0
