"""Optimal estimation with a constant accelerometer bias, by block-coordinate descent.

A MEMS accelerometer keeps a bias after its start-up calibration (a few 0.01 m/s^2); the
accelerometer term of :mod:`physid.oe.model.accelerometer` has no bias of its own, so a bias larger
than ``noise.accelerometer`` is a systematic error that the estimate absorbs as a drift. The
bias b enters the cost only through ``f(x, w; theta) + b - f_hat``: for fixed trajectory and
parameters its minimiser is the mean residual over the observed nodes. The rounds alternate
(1) the Gauss-Newton solve of paper B eq. 16 with b fixed (warm-started) and (2) that closed
form for b, until b moves by less than ``tolerance``; at a fixed point both blocks are
stationary. The process noise absorbs part of a bias, so the plain alternation converges only
linearly (measured on a 0.8 s Go1 walk: 45 % of the remaining bias per round, 8 rounds); each
bias step is therefore extrapolated by the geometric tail of the last two steps,
``s / (1 - rho)``, ``rho = s . s_prev / |s_prev|^2`` clipped to [0, 0.9] (Aitken's
acceleration): 3 rounds on the same walk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from physid.oe.outputs.result import OEResult
from physid.oe.solving.problem import OEProblem
from physid.oe.solving.solver import OEOptions, solve, solve_budget


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
    """Alternate the eq. 16 solve and the bias' closed form (module docstring) until the mean
    residual is below ``tolerance`` [m/s^2] (``converged``); the last solve is at the final
    bias, which the problem's ``accelerometer_bias`` keeps. The options' budget
    (:func:`~physid.oe.solving.solver.solve_budget`: ``max_iterations`` and the wall-clock
    safety stop) is for all rounds together: each round gets what the earlier ones left, and
    no round starts once it is spent. The result's message counts every round's iterations."""
    opt = options or OEOptions()
    budget = solve_budget(opt, len(xs))
    history = [tuple(float(v) for v in problem.accelerometer_bias)]
    converged, result, previous = False, None, None
    for n in range(rounds):
        if result is not None and budget.exhausted():
            break
        if progress is not None:
            progress(f"oe: accelerometer bias round {n + 1}, bias {np.round(history[-1], 4)}")
        result = solve(problem, xs, ws, theta, opt, progress=progress, budget=budget)
        if not np.all(np.isfinite(result.xs)):
            break
        xs, ws, theta = result.xs, result.ws, result.theta
        residual = problem.accelerometer_residuals(xs, ws, theta)
        step = residual.mean(axis=0) if residual.size else np.zeros(3)
        if float(np.abs(step).max()) < tolerance:
            converged = True
            break
        ratio = 0.0
        if previous is not None and previous @ previous > 0:
            ratio = float(np.clip(step @ previous / (previous @ previous), 0.0, 0.9))
        problem.accelerometer_bias = problem.accelerometer_bias + step / (1.0 - ratio)
        history.append(tuple(float(v) for v in problem.accelerometer_bias))
        previous = step
    return BiasRounds(result, tuple(history), budget.used, converged)
