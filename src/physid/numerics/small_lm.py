"""Levenberg-Marquardt for a few parameters, dense normal equations: the variable-projection
searches' outer loop (friction shapes, the base tilt).

Each iteration linearises the residual at the current point (``J``, ``r``), solves
``(J^T J + lam (diag(J^T J) + 1e-12)) step = -J^T r`` (Marquardt's scaling; the 1e-12 keeps a
parameter that moves nothing at a zero step), and raises ``lam`` tenfold until a step lowers the
cost, then lowers it tenfold for the next iteration. A parameter box is kept by ``project``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

import numpy as np

S = TypeVar("S")  # what an evaluation keeps for the linearisation (the inner fit)

DAMPING_START = 1e-3
DAMPING_MAX = 1e10  # no step lowers the cost even this short: stop
DAMPING_MIN = 1e-9


class LMStop(StrEnum):
    """Why the iterations ended."""

    CONVERGED = "converged"  # the caller's test held, or no step lowers the cost any more
    NO_PROGRESS = "no_progress"  # no step from the start lowered the cost
    MAX_ITERATIONS = "max_iterations"


@dataclass(frozen=True)
class Minimum(Generic[S]):
    """The point reached, its evaluation and how it was reached."""

    y: np.ndarray
    state: S
    cost: float
    costs: tuple[float, ...]  # at the start and after each accepted step
    iterations: int
    evaluations: int  # of ``evaluate``, the start's included
    stop: LMStop


def minimise(
    evaluate: Callable[[np.ndarray], tuple[float, S]],
    linearize: Callable[[np.ndarray, S], tuple[np.ndarray, np.ndarray]],
    y0: np.ndarray,
    *,
    max_iterations: int,
    converged: Callable[[np.ndarray, np.ndarray, float, float], bool],
    project: Callable[[np.ndarray], np.ndarray] = lambda y: y,
    start: tuple[float, S] | None = None,
) -> Minimum[S]:
    """Minimise ``cost(y)`` (module docstring). ``evaluate(y)``: ``(cost, state)``;
    ``linearize(y, state)``: the residual's Jacobian ``J`` (m, k) and the residual ``r`` (m,)
    whose square sum (or half of it) is the cost; ``converged(y_before, y_after, cost_before,
    cost_after)`` after each accepted step; ``start``: the evaluation of ``y0`` when the caller
    has it."""
    y = np.asarray(y0, dtype=float)
    cost, state = evaluate(y) if start is None else start
    evaluations = 1 if start is None else 0
    costs, damping, stop, iterations = [cost], DAMPING_START, LMStop.MAX_ITERATIONS, 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 - reported
        jacobian, residual = linearize(y, state)
        gradient = jacobian.T @ residual
        if not np.any(gradient):
            stop = LMStop.CONVERGED
            break
        normal = jacobian.T @ jacobian
        accepted = False
        while damping < DAMPING_MAX:
            step = np.linalg.solve(normal + damping * np.diag(np.diag(normal) + 1e-12), -gradient)
            trial_y = project(y + step)
            trial_cost, trial_state = evaluate(trial_y)
            evaluations += 1
            if trial_cost < cost:
                accepted = True
                break
            damping *= 10.0
        if not accepted:
            stop = LMStop.NO_PROGRESS if iterations == 1 else LMStop.CONVERGED
            break
        y, before = trial_y, (y, cost)
        cost, state = trial_cost, trial_state
        costs.append(cost)
        damping = max(damping / 10.0, DAMPING_MIN)
        if converged(before[0], y, before[1], cost):
            stop = LMStop.CONVERGED
            break
    return Minimum(y, state, cost, tuple(costs), iterations, evaluations, stop)
