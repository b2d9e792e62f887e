"""Trial points along a search direction (paper B section V-D).

- ``single``: single shooting, the classical DDP rollout; gaps are always closed.
- ``feasible``: feasibility-driven rollout (eq. 33), nonlinear, keeping the gaps
  ``(1 - alpha) fbar`` of the linear model.
- ``multiple``: multiple shooting (eq. 34), the linear step applied to every node; gaps are then
  recomputed from nonlinear shots.

All of them update the arrival state and the parameters by eq. 32.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

from physid.oe.model import state
from physid.oe.solving.problem import OEProblem
from physid.oe.solving.riccati import Step


class Rollout(StrEnum):
    """How the trajectory follows a step (module docstring)."""

    SINGLE = "single"
    FEASIBLE = "feasible"
    MULTIPLE = "multiple"
    CLOSED = "closed"


ROLLOUTS = tuple(str(r) for r in Rollout)


def rollout(
    problem: OEProblem,
    kind: str,
    xs: NDArray,
    ws: NDArray,
    theta: NDArray,
    step: Step,
    alpha: float,
    gaps: NDArray,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(xs+, ws+, theta+)`` for step length ``alpha``; ``gaps`` are those at ``(xs, ws)``."""
    model = problem.dynamics.model
    theta_new = problem.dynamics.retract(theta, alpha * step.dtheta)  # eq. 32
    if kind in ("multiple", "closed"):  # eq. 34
        xs_new = np.array(
            [state.integrate(model, x, alpha * d) for x, d in zip(xs, step.dx, strict=True)]
        )
        return xs_new, ws + alpha * step.dw, theta_new
    policy = step.policy
    problem.dynamics.set_theta(theta_new)
    xs_new, ws_new = np.empty_like(xs), np.empty_like(ws)
    xs_new[0] = state.integrate(model, xs[0], alpha * step.dx[0])  # eq. 32
    for k in range(problem.horizon):  # eq. 33
        dx = state.difference(model, xs[k], xs_new[k])
        feedforward = policy.k[k] + policy.P[k] @ step.dtheta
        ws_new[k] = ws[k] - alpha * feedforward - policy.K[k] @ dx
        shot = problem.transition(k, xs_new[k], ws_new[k])
        if kind == "single":
            xs_new[k + 1] = shot
        else:  # fbar+ = (alpha - 1) fbar: x' = f (+) (alpha - 1) fbar, fbar = f (-) x'
            xs_new[k + 1] = state.integrate(model, shot, (alpha - 1.0) * gaps[k])
    return xs_new, ws_new, theta_new


def close_gaps(problem: OEProblem, xs: NDArray, ws: NDArray, theta: NDArray) -> NDArray:
    """States of a nonlinear rollout from ``xs[0]`` with noise ``ws`` (single shooting start)."""
    problem.dynamics.set_theta(theta)
    out = np.empty_like(xs)
    out[0] = xs[0]
    for k in range(problem.horizon):
        out[k + 1] = problem.transition(k, out[k], ws[k])
    return out
