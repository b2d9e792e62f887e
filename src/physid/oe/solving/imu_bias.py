"""Optimal estimation with a constant accelerometer bias, by block-coordinate descent.

A MEMS accelerometer keeps a bias after its start-up calibration (a few 0.01 m/s^2); the
accelerometer term of :mod:`physid.oe.model.accelerometer` has no bias of its own, so a bias larger
than ``noise.accelerometer`` is a systematic error that the estimate absorbs as a drift. The
bias b enters the cost only through ``f(x, w; theta) + b - f_hat``: for fixed trajectory and
parameters its minimiser is the mean residual over the observed nodes. The rounds alternate
(1) the Gauss-Newton solve of paper B eq. 16 with b fixed (warm-started) and (2) that closed
form for b, until b moves by less than ``tolerance``; at a fixed point both blocks are
stationary. The process noise absorbs part of a bias, so the plain alternation converges only
linearly: with ``s(b)`` the mean residual after the solve at ``b``, ``s(b) ~ k (b* - b)`` where
``k`` is the fraction of a bias error the solve leaves in the residuals (about 0.03 on the
Go2-like crawl: 97 % is taken up by the process noise). Each bias step is therefore the
profile Gauss-Newton step ``K^-1 s``: the solve's Laplace covariance has the bias beside
theta (``OEOptions.bias_in_covariance``), and its bias block ``Sigma_b`` is the inverse of the
cost's curvature in the bias once trajectory and theta follow it, so ``K^-1 = Sigma_b n /
sigma^2`` (n observed nodes, sigma the accelerometer noise), the matrix of the fractions per
axis and their coupling. Where that covariance is unavailable the step is the secant of the
linear map along the last move, ``s / k`` with ``k = -(ds . db) / |db|^2`` clipped to
[:data:`MIN_FRACTION`, 1] (a plain step in the first round): one scalar for all axes, which
zigzags when the axes leave different fractions (a z bias nearly confounded with a mass
leaves 0.005). The rounds end when the step is below ``tolerance``, the distance to the fixed
point rather than the residual ``s``, which at ``k = 0.03`` is 30x smaller.

Every round but the one at the settled bias stops at :data:`ROUND_SHARE` of the iteration
budget, converged or not: block-coordinate descent needs only a descent in each block, and a
round that cannot converge at a wrong bias (its residual drift is the model error it fits)
would otherwise spend the whole budget at that bias. Once the bias settles, the solve at it
continues with what the budget has left.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from physid.budget import Budget
from physid.oe.outputs.result import OEResult
from physid.oe.solving.problem import OEProblem
from physid.oe.solving.solver import OEOptions, solve, solve_budget
from physid.status import Status

# the iterations one round at a not yet settled bias may take, as a fraction of the budget:
# five such rounds leave the settled one a budget's share again
ROUND_SHARE = 0.2
# the smallest fraction of a bias error a solve may leave in the mean residual (a step at most
# 50x the residual): the Go2-like crawl leaves 0.03, and a secant through two noisy residuals
# must not send the bias off by more
MIN_FRACTION = 0.02


@dataclass(frozen=True)
class BiasRounds:
    """The solve of the last round, the bias [m/s^2] (sensor axes) after each round (the first
    entry is the starting bias), the Gauss-Newton iterations of all rounds and whether the
    bias settled (moved by less than the tolerance in the last round)."""

    result: OEResult
    bias_history: tuple[tuple[float, float, float], ...]
    iterations: int
    converged: bool


def solve_with_accelerometer_bias(
    problem: OEProblem,
    xs: NDArray,
    ws: NDArray,
    theta: NDArray,
    options: OEOptions | None = None,
    rounds: int = 8,
    tolerance: float = 1e-3,
    progress: Callable[[str], None] | None = None,
) -> BiasRounds:
    """Alternate the eq. 16 solve and the bias step (module docstring) until that step is
    below ``tolerance`` [m/s^2] (``converged``); the last solve is at the final
    bias, which the problem's ``accelerometer_bias`` keeps. The options' budget
    (:func:`~physid.oe.solving.solver.solve_budget`: ``max_iterations`` and the wall-clock
    safety stop) is for all rounds together: each round gets what the earlier ones left, and
    no round starts once it is spent. The result's message counts every round's iterations."""
    # every round's covariance with the bias unknown too: the last round's is the one reported
    opt = dataclasses.replace(options or OEOptions(), bias_in_covariance=True)
    budget = solve_budget(opt, len(xs))
    share = max(1, round(ROUND_SHARE * opt.max_iterations))
    history = [tuple(float(v) for v in problem.accelerometer_bias)]
    converged, result, previous = False, None, None
    for n in range(rounds):
        if result is not None and budget.exhausted():
            break
        if progress is not None:
            progress(f"oe: accelerometer bias round {n + 1}, bias {np.round(history[-1], 4)}")
        result = _round(problem, xs, ws, theta, opt, budget, share, progress)
        if not np.all(np.isfinite(result.xs)):
            break
        xs, ws, theta = result.xs, result.ws, result.theta
        residual = problem.accelerometer_residuals(xs, ws, theta)
        mean = residual.mean(axis=0) if residual.size else np.zeros(3)
        bias = problem.accelerometer_bias
        step = _profile_step(problem, result, residual.shape[0], mean)
        if step is None:
            step = mean / _fraction_left(previous, bias, mean)
        if float(np.abs(step).max()) < tolerance:
            converged = True
            break
        problem.accelerometer_bias = bias + step
        history.append(tuple(float(v) for v in problem.accelerometer_bias))
        previous = (bias, mean)
    if converged and result.status is Status.NOT_CONVERGED and not budget.exhausted():
        if progress is not None:
            progress("oe: accelerometer bias settled; the solve at it continues")
        result = solve(problem, xs, ws, theta, opt, progress=progress, budget=budget)
    return BiasRounds(result, tuple(history), budget.used, converged)


def _round(problem, xs, ws, theta, opt, budget: Budget, share: int, progress) -> OEResult:  # noqa: ANN001
    """One round's solve, stopped after ``share`` iterations (or by ``budget``, whose count
    and wall-clock stop it shares)."""
    part = budget.portion(share)
    result = solve(problem, xs, ws, theta, opt, progress=progress, budget=part)
    budget.absorb(part)
    return result


def _profile_step(problem: OEProblem, result: OEResult, n: int, mean: NDArray) -> NDArray | None:
    """The Gauss-Newton step of the bias with the trajectory and theta following it: ``Sigma_b
    n / sigma^2 mean``, ``Sigma_b`` the bias block of the joint Laplace covariance (before its
    inflation), the inverse of the cost's curvature in the bias once the rest is minimised out,
    ``n / sigma^2 mean`` the cost's gradient in it (the matrix ``k^-1`` of the module docstring,
    per axis and their coupling). None when that covariance is unavailable."""
    cov = result.accelerometer_bias_covariance
    if cov is None or not np.all(np.isfinite(cov)) or not result.std_inflation > 0:
        return None
    sigma = problem.noise.accelerometer
    return (cov / result.std_inflation) @ mean * (n / sigma**2)


def _fraction_left(previous: tuple | None, bias: NDArray, mean: NDArray) -> float:
    """``k`` of ``s(b) ~ k (b* - b)`` along the last bias move (module docstring): the secant
    of the mean residual through the previous round's ``(bias, mean)``; 1 (a plain step) in
    the first round or when the bias did not move."""
    if previous is None:
        return 1.0
    moved, change = bias - previous[0], mean - previous[1]
    if moved @ moved <= 0.0:
        return 1.0
    return float(np.clip(-(change @ moved) / (moved @ moved), MIN_FRACTION, 1.0))
