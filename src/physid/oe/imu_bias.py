"""Optimal estimation with a constant accelerometer bias, by block-coordinate descent.

A MEMS accelerometer keeps a bias after its start-up calibration (a few 0.01 m/s^2); the
accelerometer term of :mod:`physid.oe.accelerometer` has no bias of its own, so a bias larger
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

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from physid.oe.problem import OEProblem
from physid.oe.result import OEResult
from physid.oe.solver import OEOptions, default_time_budget, solve


@dataclass(frozen=True)
class BiasRounds:
    """The solve of the last round, the bias [m/s^2] (sensor axes) after each round (the first
    entry is the starting bias) and the total Gauss-Newton iterations."""

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
    bias, which the problem's ``accelerometer_bias`` keeps. The options' time budget (default
    :func:`~physid.oe.solver.default_time_budget`) is for all rounds together: each round gets
    what the earlier ones left, and no round starts once it is spent."""
    opt = options or OEOptions()
    seconds = opt.time_budget_s or default_time_budget(len(xs), opt.max_iterations)
    deadline = time.perf_counter() + seconds
    history = [tuple(float(v) for v in problem.accelerometer_bias)]
    total, converged, result, previous = 0, False, None, None
    for n in range(rounds):
        left = deadline - time.perf_counter()
        if result is not None and left <= 0:
            break
        if progress is not None:
            progress(f"oe: accelerometer bias round {n + 1}, bias {np.round(history[-1], 4)}")
        result = solve(
            problem, xs, ws, theta, replace(opt, time_budget_s=max(left, 1e-9)), progress=progress
        )
        total += result.iterations
        if n > 0 and result.status.startswith("stopped by the time budget"):
            # the round's own budget is what the earlier rounds left: name the whole one
            kept = result.status.partition(" (kept")[1:]
            result = replace(result, status=(
                f"stopped by the time budget of {seconds:.3g} s ({n + 1} accelerometer-bias "
                f"rounds, {total} iterations)" + "".join(kept)))  # fmt: skip
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
    return BiasRounds(result, tuple(history), total, converged)
