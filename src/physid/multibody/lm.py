"""Levenberg–Marquardt on the manifold with box constraints (paper A Algorithm 1, eqs. 3.21-3.22,
Appendix C).

Each step solves ``min ||r + J dx||^2 + alpha dx^T S dx`` subject to the parameters staying in
their box, ``S = diag(J^T J)`` (Marquardt's scaling, so the result does not depend on parameter
units; Algorithm 1 uses ``S = I``). The states are eliminated by a banded Cholesky of their
block (a Schur complement, as in the MLCP of Appendix C; :mod:`physid.multibody.normal`); the
remaining small box-constrained QP in the parameters is an LCP solved exactly by Lemke's
algorithm. The update is ``X <- X [+] dx``; the
damping follows Algorithm 1 (``alpha *= nu`` on rejection, ``alpha *= max(1/3, 1-(2 rho-1)^3)``
on acceptance).

Two measured departures from Algorithm 1 (synthetic Furuta of §4.7, benchmarks/multibody_furuta.py):
the stiff holonomic rows (weight ``1/Sigma`` ~ 1e3-1e6) dominate ``diag(J^T J)``, so any
``alpha`` above ~1e-12 damps the soft directions along the constraint manifold and LM crawls
(cost 12 -> 0.1 over 20 accepted steps with gain ratio ~1, far above the noise floor 1e-3);
the default ``alpha0`` is therefore 1e-15 (Gauss-Newton with a safeguard). Full Gauss-Newton
steps then leave the curved constraint manifold at second order: the states are world-frame
velocities, and a configuration step turns the constraint tangent under a velocity of up to
17 rad/s, which the stiff rows (weight ``h / epsilon`` ~ 1e3) see at once. Measured on the
noise-free Furuta at h = 1e-2 s: the full step predicted cost 3.5e-9 and gave 0.86 (from
3.6e-5). Each trial step is therefore followed by up to ``corrections`` chord (simplified
Gauss-Newton) corrections ``dx <- dx - (J^T J + alpha S)^-1 J^T r(x [+] dx)`` with the same
factorisation (one residual each, no new Jacobian); the best is kept. On that step they gave
1.2e-4, 7.7e-5, 6.7e-9, 1.7e-9, 1.1e-12: the first alone (the classical second-order
correction) was not enough, and LM crawled (30 iterations, cost still falling 3 % per iteration).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from physid.budget import Budget
from physid.multibody.normal import NormalEquations, box_qp

__all__ = ["LMResult", "box_qp", "levenberg_marquardt"]


@dataclass
class LMResult:
    """Outcome of :func:`levenberg_marquardt`; ``status`` is never an exception."""

    x: object
    p: np.ndarray
    status: str  # converged_gradient|_step|_parameters|_cost|_stalled, max_iterations,
    # no_progress, failed: ...
    iterations: int
    cost_history: list[float] = field(default_factory=list)
    gain_ratio_history: list[float] = field(default_factory=list)
    alpha_history: list[float] = field(default_factory=list)
    evaluations: int = 0  # residual evaluations without Jacobian (trial steps, corrections)
    r: np.ndarray | None = None  # residual and Jacobian at (x, p), for the covariance
    J: object = None


def _sq(r: np.ndarray) -> float:
    """``r @ r``; inf (not a warning) when a wild trial step overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        return float(r @ r)


def levenberg_marquardt(
    residual: Callable,
    retract: Callable,
    x0: object,
    p0: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    n_state: int,
    *,
    max_iterations: int = 20,
    eps_gradient: float = 1e-12,
    eps_step: float = 1e-10,
    alpha0: float = 1e-15,
    corrections: int = 10,
    ftol: float = 1e-12,
    ptol: float = 0.0,
    inequality: tuple[np.ndarray, np.ndarray] | None = None,
    stall_window: int = 3,
    stall_tol: float = 1e-3,
    budget: Budget | None = None,
) -> LMResult:
    """Algorithm 1 of paper A. ``residual(x, p, jacobian)`` returns ``r`` or ``(r, J)`` (sparse,
    columns: ``n_state`` state tangents then the parameters); ``retract(x, p, dx)`` is ``[+]``.
    ``inequality = (C, c)``: linear constraints ``C p >= c`` kept by every step (with the box).

    Stops when ``||J^T r||_inf <= eps_gradient * ||r||^2`` (relative gradient), when the
    parameter step is below ``eps_step`` relative to the parameters while the cost decreases by
    less than 1e-6 relative, when every parameter moves by less than ``ptol`` relative (to the
    larger of its current and start magnitude) while the
    cost decreases by less than 1e-2 relative (``converged_parameters``; 0 disables), when the
    cost decreases by less than ``ftol`` relative or falls below 1e-20 of the start (exact
    data), when it fell by less than ``stall_tol`` relative over the last ``stall_window``
    iterations (``converged_stalled``), when no damping up to ``2^32`` reduces the cost, or
    after ``max_iterations``, or when ``budget`` (wall time and iterations) is spent: status
    ``stopped by the ... budget``, with the last accepted iterate (the best: LM only accepts
    steps that lower the cost).
    """
    x, p = x0, np.clip(np.asarray(p0, float), lower, upper)
    p_start = p.copy()
    try:
        r, J = residual(x, p, True)
    except (ValueError, np.linalg.LinAlgError, RuntimeError) as error:
        return LMResult(x, p, f"failed: residual evaluation ({error})", 0)
    cost = float(r @ r)
    result = LMResult(x, p, "max_iterations", 0, [cost])
    if not np.isfinite(cost):
        result.status = "failed: non-finite residual at the start"
        return result
    alpha, nu = alpha0, 2.0
    C, c_in = inequality if inequality is not None else (np.zeros((0, len(p))), np.zeros(0))
    for it in range(1, max_iterations + 1):
        if budget is not None and budget.spend():
            result.status = f"stopped by {budget.describe()}"
            break
        normal = NormalEquations(J, r, n_state)
        g = normal.g
        if np.abs(g).max() <= eps_gradient * max(cost, 1e-300):
            result.status = "converged_gradient"
            break
        rho, dx = -1.0, None
        while rho <= 0 and alpha < 2.0**32:
            try:
                solve = normal.factor(alpha, C)
                dx = solve(g, lower - p, upper - p, c_in - C @ p)
                xn, pn = retract(x, p, dx)
                rn = residual(xn, pn, False)
                cost_n = _sq(rn)
                result.evaluations += 1
                # cost the linear model promises (plus a tenth of the promised decrease)
                model_decrease = 2 * g @ dx + normal.quadratic(dx)
                enough = cost + 0.9 * model_decrease
                trial_dx, trial_r, first_dx = dx, rn, dx
                for _ in range(corrections if np.isfinite(cost_n) else 0):
                    if cost_n <= enough:
                        break
                    # chord correction: the same factorisation applied to the trial residual
                    # (the curvature of the stiff constraints); the sequence need not be
                    # monotone (measured: 3.6, 2.4e-2, 2.7e-2, 8.2e-4 ...), the best is kept
                    dp = trial_dx[n_state:]
                    rhs = c_in - C @ (p + dp)
                    trial_dx = trial_dx + solve(J.T @ trial_r, lower - p - dp, upper - p - dp, rhs)
                    x2, p2 = retract(x, p, trial_dx)
                    trial_r = residual(x2, p2, False)
                    cost_2 = _sq(trial_r)
                    result.evaluations += 1
                    if not np.isfinite(cost_2):
                        break
                    if cost_2 < cost_n:
                        dx, xn, pn, rn, cost_n = trial_dx, x2, p2, trial_r, cost_2
                # the first trial's model value unless a correction replaced the step
                predicted = -(
                    model_decrease if dx is first_dx else 2 * g @ dx + normal.quadratic(dx)
                )
                rho = (cost - cost_n) / predicted if predicted > 0 else -1.0
                if not np.isfinite(cost_n):
                    rho = -1.0
            except (ValueError, np.linalg.LinAlgError, RuntimeError):
                rho = -1.0
            if rho <= 0:
                alpha, nu = alpha * nu, min(2 * nu, 2.0**32)
        if rho <= 0:
            result.status = "no_progress"
            break
        x, p = xn, pn
        r, J = residual(x, p, True)
        previous, cost = cost, float(r @ r)
        result.cost_history.append(cost)
        result.gain_ratio_history.append(float(rho))
        result.alpha_history.append(float(alpha))
        result.iterations = it
        alpha *= max(1 / 3, 1 - (2 * rho - 1) ** 3)
        nu = 2.0
        dp = dx[n_state:]
        small = np.linalg.norm(dp) <= eps_step * (np.linalg.norm(p) + eps_step)
        if dp.size and small and previous - cost <= 1e-6 * previous:
            result.status = "converged_step"
            break
        # relative to the larger of the current and the start magnitude: a parameter that
        # creeps to a zero bound (an unexcited inertia, halved every iteration) would otherwise
        # never look converged (measured: 30 iterations on the Furuta swing-up, J_Axx -> 5e-12)
        size = np.maximum(np.maximum(np.abs(p), np.abs(p_start)), 1e-12)
        rel_dp = np.abs(dp) / size if dp.size else np.zeros(0)
        if dp.size and ptol > 0 and rel_dp.max() <= ptol and previous - cost <= 1e-2 * previous:
            result.status = "converged_parameters"
            break
        window = result.cost_history[-1 - stall_window] if it >= stall_window else None
        if window is not None and window - cost <= stall_tol * window:
            # non-smooth dry friction: the stick/slip set flips between iterations and LM
            # zig-zags (friction terms +-1 % per iteration) while the cost barely moves
            # (measured on the swing-up: estimates after 30 and 120 iterations equal to 0.01 %)
            result.status = "converged_stalled"
            break
        if previous - cost <= ftol * previous or cost <= 1e-20 * result.cost_history[0]:
            result.status = "converged_cost"  # stalled, or at round-off (exact data)
            break
    result.x, result.p, result.r, result.J = x, p, r, J
    return result
