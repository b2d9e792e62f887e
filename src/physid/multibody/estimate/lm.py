"""Levenberg–Marquardt on the manifold with box constraints (paper A Algorithm 1, eqs. 3.21-3.22,
Appendix C).

Each step solves ``min ||r + J dx||^2 + alpha dx^T S dx`` subject to the parameters staying in
their box, ``S = diag(J^T J)`` (Marquardt's scaling, so the result does not depend on parameter
units; Algorithm 1 uses ``S = I``). The states are eliminated by a banded Cholesky of their
block (a Schur complement, as in the MLCP of Appendix C; :mod:`.normal`); the remaining small
box-constrained QP in the parameters is an LCP solved exactly by Lemke's algorithm. The update
is ``X <- X [+] dx``; the damping follows Algorithm 1 (``alpha *= nu`` on rejection,
``alpha *= max(1/3, 1-(2 rho-1)^3)`` on acceptance).

Two departures from Algorithm 1, both needed on the synthetic Furuta of §4.7: the stiff
holonomic rows (weight ``1/Sigma`` ~ 1e3-1e6) dominate ``diag(J^T J)``, so any ``alpha`` above
~1e-12 damps the soft directions along the constraint manifold and LM crawls far above the noise
floor with a gain ratio ~1; the default ``alpha0`` is therefore 1e-15 (Gauss-Newton with a
safeguard). Full Gauss-Newton steps then leave the curved constraint manifold at second order:
the states are world-frame velocities, and a configuration step turns the constraint tangent
under a velocity of up to 17 rad/s, which the stiff rows (weight ``h / epsilon`` ~ 1e3) see at
once: a step whose linear model promises a cost near zero can raise it by orders of magnitude.
Each trial step is therefore followed by up to ``corrections`` chord (simplified Gauss-Newton)
corrections ``dx <- dx - (J^T J + alpha S)^-1 J^T r(x [+] dx)`` with the same factorisation
(one residual each, no new Jacobian); the best is kept. The first alone (the classical
second-order correction) is not enough and leaves LM crawling; several bring such a step's cost
down by orders of magnitude.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from physid.budget import Budget, Stop
from physid.multibody.estimate.normal import NormalEquations, box_qp
from physid.status import Status

__all__ = ["LMResult", "LMTermination", "box_qp", "levenberg_marquardt"]


class LMTermination(StrEnum):
    """Why :func:`levenberg_marquardt` stopped (the solver's own detail; :attr:`LMResult.status`
    is the code every result speaks): ``converged_gradient`` when ``||J^T r||_inf <=
    eps_gradient ||r||^2``; ``converged_step`` when the parameter step is below ``eps_step``
    relative to the parameters while the cost decreases by less than 1e-6 relative;
    ``converged_parameters`` when every parameter moves by less than ``ptol`` relative (to the
    larger of its current and start magnitude) while the cost decreases by less than 1e-2
    relative; ``converged_stalled`` when the cost fell by less than ``stall_tol`` relative over
    the last ``stall_window`` iterations; ``converged_cost`` when it decreases by less than
    ``ftol`` relative or falls below 1e-20 of the start (exact data); ``no_progress`` when no
    damping up to ``2^32`` reduces it; ``max_iterations``; ``budget_iterations`` /
    ``budget_time`` when the budget's iterations or its wall-clock safety stop are spent;
    ``failed`` when the start's residual cannot be evaluated or is not finite."""

    CONVERGED_GRADIENT = "converged_gradient"
    CONVERGED_STEP = "converged_step"
    CONVERGED_PARAMETERS = "converged_parameters"
    CONVERGED_COST = "converged_cost"
    CONVERGED_STALLED = "converged_stalled"
    MAX_ITERATIONS = "max_iterations"
    BUDGET_ITERATIONS = "budget_iterations"
    BUDGET_TIME = "budget_time"
    NO_PROGRESS = "no_progress"
    FAILED = "failed"

    @property
    def converged(self) -> bool:
        return self in _CONVERGED

    @property
    def status(self) -> Status:
        """The :class:`~physid.status.Status` of a solve that stopped this way."""
        return _STATUS.get(self, Status.OK)


_CONVERGED = {
    LMTermination.CONVERGED_GRADIENT,
    LMTermination.CONVERGED_STEP,
    LMTermination.CONVERGED_PARAMETERS,
    LMTermination.CONVERGED_COST,
    LMTermination.CONVERGED_STALLED,
}
_STATUS = {
    LMTermination.MAX_ITERATIONS: Status.NOT_CONVERGED,
    LMTermination.BUDGET_ITERATIONS: Status.NOT_CONVERGED,
    LMTermination.BUDGET_TIME: Status.TIME_LIMIT,
    LMTermination.NO_PROGRESS: Status.STALLED,
    LMTermination.FAILED: Status.NUMERICAL_FAILURE,
}


@dataclass
class LMResult:
    """Outcome of :func:`levenberg_marquardt`; a failure is a termination, never an exception."""

    x: object
    p: np.ndarray
    termination: LMTermination
    iterations: int
    cost_history: list[float] = field(default_factory=list)
    gain_ratio_history: list[float] = field(default_factory=list)
    alpha_history: list[float] = field(default_factory=list)
    evaluations: int = 0  # residual evaluations without Jacobian (trial steps, corrections)
    r: np.ndarray | None = None  # residual and Jacobian at (x, p), for the covariance
    J: object = None
    message: str = ""  # one line: how it stopped (the budget's size, the failure's cause)
    nonfinite_trials: int = 0  # trial steps whose residual was not finite (rejected)

    @property
    def status(self) -> Status:
        return self.termination.status

    @property
    def converged(self) -> bool:
        return self.termination.converged


def _sq(r: np.ndarray) -> float:
    """``r @ r``; inf (not a warning) when a wild trial step overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        value = float(r @ r)
    return value if np.isfinite(value) else np.inf


@dataclass
class _Trial:
    """The best trial point of one damping value: step, point, residual, cost, gain ratio."""

    dx: np.ndarray
    x: object
    p: np.ndarray
    r: np.ndarray
    cost: float
    rho: float


class _Solve:
    """One Levenberg-Marquardt run's fixed inputs (the problem, the box and the constraints)."""

    def __init__(
        self, residual, retract, lower, upper, n_state, inequality, corrections, step_scale
    ) -> None:  # noqa: ANN001
        self.residual, self.retract = residual, retract
        self.lower, self.upper, self.n_state = lower, upper, n_state
        self.C, self.c = inequality
        self.corrections, self.step_scale = corrections, step_scale
        self.nonfinite = 0
        self.evaluations = 0

    def evaluate(self, x: object, p: np.ndarray, dx: np.ndarray) -> tuple:
        """``x [+] dx`` and its residual and cost (inf, counted, when not finite)."""
        with np.errstate(all="ignore"):  # a wild step is rejected by its cost, not warned about
            xn, pn = self.retract(x, p, dx)
            rn = self.residual(xn, pn, False)
        cost = _sq(rn)
        self.evaluations += 1
        self.nonfinite += not np.isfinite(cost)
        return xn, pn, rn, cost

    def bounded(self, dx: np.ndarray) -> np.ndarray:
        """``dx`` shortened to what ``step_scale`` allows (a state turned by at most its bound);
        the box and the inequalities hold for any shortened step (they hold at 0)."""
        if self.step_scale is None or not np.all(np.isfinite(dx)):
            return dx
        return dx * min(1.0, float(self.step_scale(dx)))

    def trial(self, normal: NormalEquations, alpha: float, x, p, cost: float) -> _Trial | None:  # noqa: ANN001
        """The step of damping ``alpha`` followed by up to ``corrections`` chord corrections
        (module docstring); the best point and its gain ratio, or None when no finite step
        could be formed."""
        g, lower, upper, C, c = normal.g, self.lower, self.upper, self.C, self.c
        solve = normal.factor(alpha, C)
        dx = self.bounded(solve(g, lower - p, upper - p, c - C @ p))
        if not np.all(np.isfinite(dx)):
            return None
        xn, pn, rn, cost_n = self.evaluate(x, p, dx)
        # cost the linear model promises (plus a tenth of the promised decrease)
        model_decrease = 2 * g @ dx + normal.quadratic(dx)
        enough = cost + 0.9 * model_decrease
        trial_dx, trial_r, first_dx = dx, rn, dx
        for _ in range(self.corrections if np.isfinite(cost_n) else 0):
            if cost_n <= enough:
                break
            # chord correction: the same factorisation applied to the trial residual (the
            # curvature of the stiff constraints); the sequence need not be monotone, the best
            # is kept
            dp = trial_dx[self.n_state :]
            rhs = c - C @ (p + dp)
            step = solve(normal.J.T @ trial_r, lower - p - dp, upper - p - dp, rhs)
            trial_dx = self.bounded(trial_dx + step)
            x2, p2, trial_r, cost_2 = self.evaluate(x, p, trial_dx)
            if not np.isfinite(cost_2):
                break
            if cost_2 < cost_n:
                dx, xn, pn, rn, cost_n = trial_dx, x2, p2, trial_r, cost_2
        # the first trial's model value unless a correction replaced the step
        predicted = -(model_decrease if dx is first_dx else 2 * g @ dx + normal.quadratic(dx))
        rho = (cost - cost_n) / predicted if predicted > 0 and np.isfinite(cost_n) else -1.0
        return _Trial(dx, xn, pn, rn, cost_n, float(rho))

    def damped(self, normal: NormalEquations, alpha: float, nu: float, x, p, cost: float) -> tuple:  # noqa: ANN001
        """Algorithm 1's inner loop: raise the damping (``alpha *= nu``, ``nu *= 2``) until a
        trial lowers the cost; ``(trial or None, alpha, nu)``, None when no damping up to
        ``2^32`` did."""
        while alpha < 2.0**32:
            try:
                best = self.trial(normal, alpha, x, p, cost)
            except (ValueError, np.linalg.LinAlgError, RuntimeError):
                best = None
            if best is not None and best.rho > 0:
                return best, alpha, nu
            alpha, nu = alpha * nu, min(2 * nu, 2.0**32)
        return None, alpha, nu


def _first(residual: Callable, x: object, p: np.ndarray, max_iterations: int) -> tuple | LMResult:
    """The start's residual and Jacobian with the result to fill, or a ``failed`` result when
    it cannot be evaluated or is not finite."""
    try:
        with np.errstate(all="ignore"):
            r, J = residual(x, p, True)
    except (ValueError, np.linalg.LinAlgError, RuntimeError) as error:
        return LMResult(x, p, LMTermination.FAILED, 0, message=f"residual evaluation: {error}")
    cost = _sq(r)
    if not np.isfinite(cost):
        return LMResult(
            x, p, LMTermination.FAILED, 0, [cost], message="non-finite residual at the start"
        )
    result = LMResult(x, p, LMTermination.MAX_ITERATIONS, 0, [cost])
    result.message = f"the iteration limit of {max_iterations}"
    return r, J, result


def _converged(
    result: LMResult,
    it: int,
    dp: np.ndarray,
    p: np.ndarray,
    p_start: np.ndarray,
    previous: float,
    cost: float,
    tolerances: dict,
) -> LMTermination | None:
    """The convergence test after an accepted step (:func:`levenberg_marquardt`'s docstring)."""
    eps_step, ptol = tolerances["eps_step"], tolerances["ptol"]
    small = np.linalg.norm(dp) <= eps_step * (np.linalg.norm(p) + eps_step)
    if dp.size and small and previous - cost <= 1e-6 * previous:
        return LMTermination.CONVERGED_STEP
    # relative to the larger of the current and the start magnitude: a parameter that creeps to
    # a zero bound (an unexcited inertia, halved every iteration) would otherwise never look
    # converged
    size = np.maximum(np.maximum(np.abs(p), np.abs(p_start)), 1e-12)
    rel_dp = np.abs(dp) / size if dp.size else np.zeros(0)
    if dp.size and ptol > 0 and rel_dp.max() <= ptol and previous - cost <= 1e-2 * previous:
        return LMTermination.CONVERGED_PARAMETERS
    window = tolerances["stall_window"]
    before = result.cost_history[-1 - window] if it >= window else None
    if before is not None and before - cost <= tolerances["stall_tol"] * before:
        # non-smooth dry friction: the stick/slip set flips between iterations and LM zig-zags
        # (friction terms +-1 % per iteration) while the cost barely moves and the estimates
        # agree to ~0.01 % however long it goes on
        return LMTermination.CONVERGED_STALLED
    if previous - cost <= tolerances["ftol"] * previous or cost <= 1e-20 * result.cost_history[0]:
        return LMTermination.CONVERGED_COST  # stalled, or at round-off (exact data)
    return None


def _budget_spent(budget: Budget | None, result: LMResult) -> bool:
    """True (and ``result``'s termination and message set) when ``budget`` is spent."""
    if budget is None or not budget.spend():
        return False
    timed = budget.reason is Stop.TIME
    result.termination = LMTermination.BUDGET_TIME if timed else LMTermination.BUDGET_ITERATIONS
    result.message = budget.describe()
    return True


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
    step_scale: Callable[[np.ndarray], float] | None = None,
) -> LMResult:
    """Algorithm 1 of paper A. ``residual(x, p, jacobian)`` returns ``r`` or ``(r, J)`` (sparse,
    columns: ``n_state`` state tangents then the parameters); ``retract(x, p, dx)`` is ``[+]``.
    ``inequality = (C, c)``: linear constraints ``C p >= c`` kept by every step (with the box).
    ``step_scale(dx)``: the factor (<= 1) that bounds a step (a state's turn per step); a trial
    whose residual is not finite is rejected like one that raises the cost and counted in
    ``nonfinite_trials``.

    Stops as :class:`LMTermination` lists, with the last accepted iterate (the best: LM only
    accepts steps that lower the cost).
    """
    x, p = x0, np.clip(np.asarray(p0, float), lower, upper)
    p_start = p.copy()
    C, c_in = inequality if inequality is not None else (np.zeros((0, len(p))), np.zeros(0))
    run = _Solve(residual, retract, lower, upper, n_state, (C, c_in), corrections, step_scale)
    start = _first(residual, x, p, max_iterations)
    if isinstance(start, LMResult):
        return start
    r, J, result = start
    cost = result.cost_history[0]
    tolerances = {
        "eps_step": eps_step,
        "ptol": ptol,
        "ftol": ftol,
        "stall_window": stall_window,
        "stall_tol": stall_tol,
    }
    alpha, nu = alpha0, 2.0
    for it in range(1, max_iterations + 1):
        if _budget_spent(budget, result):
            break
        normal = NormalEquations(J, r, n_state)
        if np.abs(normal.g).max() <= eps_gradient * max(cost, 1e-300):
            result.termination, result.message = LMTermination.CONVERGED_GRADIENT, ""
            break
        best, alpha, nu = run.damped(normal, alpha, nu, x, p, cost)
        if best is None:
            result.termination = LMTermination.NO_PROGRESS
            result.message = "no damping up to 2^32 lowered the cost"
            break
        x, p = best.x, best.p
        r, J = residual(x, p, True)
        previous, cost = cost, float(r @ r)
        result.cost_history.append(cost)
        result.gain_ratio_history.append(best.rho)
        result.alpha_history.append(float(alpha))
        result.iterations = it
        alpha, nu = alpha * max(1 / 3, 1 - (2 * best.rho - 1) ** 3), 2.0
        stop = _converged(result, it, best.dx[n_state:], p, p_start, previous, cost, tolerances)
        if stop is not None:
            result.termination, result.message = stop, ""
            break
    result.x, result.p, result.r, result.J = x, p, r, J
    result.evaluations, result.nonfinite_trials = run.evaluations, run.nonfinite
    return result
