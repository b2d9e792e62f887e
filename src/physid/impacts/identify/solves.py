"""The solves of paper D's identification NLP (eq. 27): several warm starts, J/m starts and
continuation schedules, the lowest objective kept; then the objective's profile in J/m for its
standard deviation and in μ for the lower-bound test, and the verdict (:mod:`.verdict`).

Shared by the single-throw fit (:mod:`.single`) and the pooled one (:mod:`.pooled`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from physid.budget import Budget
from physid.impacts.geometry import Line, Shape
from physid.impacts.identify.nlp import IdentificationNlp, SolveOutcome
from physid.impacts.identify.options import IdentifyOptions
from physid.impacts.identify.verdict import assemble_result
from physid.impacts.results import ImpactsIdentification

Best = tuple[SolveOutcome, tuple[Any, Any]]
#: The one-sided 95 % point of a χ² with one degree of freedom: at the least μ still consistent
#: with the poses the objective (without its price on μ) may rise this much above the best fit.
FLOOR_RISE = 2.71
#: Resolution [-] of the least consistent μ (bisection).
FLOOR_TOLERANCE = 0.01


def fit_limit(n_frames: int) -> float:
    """The 3σ bound of a χ² with 3 N_m degrees of freedom: a fit above it does not explain the
    poses to the noise level."""
    return 3 * n_frames + 3 * math.sqrt(6 * n_frames)


@dataclass
class Search:
    """The solves of one NLP: its warm-start ``trajectories`` (kind -> (q0, v0)), the options,
    every solve's record (``starts``), whether the retry ran, a progress ``tick`` and the
    ``perf_counter`` of the start."""

    nlp: IdentificationNlp
    trajectories: dict[str, tuple[np.ndarray, np.ndarray]]
    opts: IdentifyOptions
    budget: Budget
    tick: Callable[[], Any] = lambda: None
    starts: list[dict] = field(default_factory=list)
    retried: bool = False
    started: float = field(default_factory=time.perf_counter)

    def multistart(self, r_inits: list[float], best: Best | None = None) -> Best:
        """Solve from every (warm start, J/m start, schedule) and record each; the best of them
        and ``best``. Stops early, with the best so far, once the budget is spent."""
        for kind, (q0, v0) in self.trajectories.items():
            for r_init in r_inits:
                x0 = self.nlp.initial_vector(q0, v0, r_init, self.opts.mu_init)
                for schedule in self.opts.continuations:
                    if self.budget.exhausted() and best is not None:
                        return best
                    outcome, multipliers = self.nlp.solve(x0, schedule, on_stage=self.tick)
                    self.record(outcome, kind, r_init, schedule)
                    if best is None or better(outcome, best[0]):
                        best = (outcome, multipliers)
        assert best is not None
        return best

    def poor(self, best: Best, n_frames: int) -> bool:
        """Whether ``best`` misses the poses by more than the noise and a retry is configured."""
        limit = fit_limit(n_frames)
        return bool(self.opts.retry_inertia_ratios) and self.nlp.fit_value(best[0].x) > limit

    def retry_if_poor(self, best: Best, n_frames: int) -> Best:
        """Solve again from the other J/m starts (``retry_inertia_ratios`` × ρ²) when ``best``
        does not fit the poses to the noise level (:meth:`poor`); the better of both."""
        ratios = self.opts.retry_inertia_ratios
        if not self.poor(best, n_frames):
            return best
        before = len(self.starts)
        best = self.multistart([f * self.nlp.r_scale for f in ratios], best)
        self.retried = len(self.starts) > before
        return best

    def record(self, outcome: SolveOutcome, kind: str, r_init: float, schedule: Any) -> None:
        """What ``result.json`` records of one solve: its start, schedule, outcome, estimates."""
        self.starts.append(
            {
                "warm_start": kind,
                "inertia_ratio_init": r_init,
                "continuation": list(schedule),
                "converged": outcome.success,
                "objective": outcome.objective,
                "fit_chi2": self.nlp.fit_value(outcome.x),
                "inertia_ratio": float(outcome.x[-2] * self.nlp.r_scale),
                "friction": float(outcome.x[-1]),
                "iterations": outcome.iterations,
            }
        )

    def finish(
        self, best: Best, shape: Shape, lines: list[Line], data: dict[str, Any]
    ) -> ImpactsIdentification:
        """The result of the best solve: the profile-likelihood standard deviation when asked
        and the budget allows (:func:`profiles`), then the verdict (``data``: mass, ns, t_fine,
        t_meas, q_meas, sigma_angle)."""
        iterations = sum(s["iterations"] for s in self.starts)
        outcome, multipliers = best
        r_std, mu_rise, floor = math.nan, math.nan, None
        if self.opts.profile_step and outcome.success and not self.budget.exhausted():
            r_std, mu_rise, extra, outcome, multipliers = profiles(
                self.nlp, outcome, multipliers, self.opts, self.tick
            )
            iterations += extra
            if mu_rise < 1.0 and not self.budget.exhausted():
                floor = friction_floor(self.nlp, outcome, multipliers, self.opts, self.budget)
                iterations += floor[1]
        solve = {
            "iterations": iterations,
            "solve_time": time.perf_counter() - self.started,
            "inertia_ratio_std": r_std,
            "friction_rise": mu_rise,
            "friction_floor": None if floor is None else floor[0],
            "friction_floor_profile": [] if floor is None else floor[2],
            "starts": self.starts,
            "retried": self.retried,
        }
        return assemble_result(
            shape,
            lines,
            self.nlp,
            outcome,
            data=data,
            solve=solve,
            options=self.opts,
            budget=self.budget,
        )


def profiles(
    nlp: IdentificationNlp,
    outcome: SolveOutcome,
    multipliers: tuple[Any, Any],
    opts: IdentifyOptions,
    tick: Callable[[], Any],
) -> tuple[float, float, int, SolveOutcome, tuple[Any, Any]]:
    """Curvature of the objective in J/m, and its rise when μ is raised by 10 %.

    The objective is −2 log-likelihood for the given σ, so σ_r² = 2 / (d²f/dr²), from re-solves
    at r̂(1 ± δ) warm-started at the optimum. Should one of them end lower than the optimum (IPOPT
    stopped in a shallow local minimum), the free problem is re-solved from there and the profile
    repeated, at most ``profile_polish`` times. If raising μ by 10 % costs less than Δf = 1 (one σ),
    no contact slid in a way the data resolve and μ̂ is only a lower bound (paper D Fig. 19).
    """
    iterations = 0
    for polish in range(opts.profile_polish + 1):
        r_hat = float(outcome.x[-2] * nlp.r_scale)
        trials = []
        for sign in (-1.0, 1.0):
            fixed = r_hat * (1 + sign * opts.profile_step)
            prof, mult = nlp.solve(
                outcome.x, (1.0,), warm=multipliers, on_stage=tick, fix_inertia=fixed
            )
            iterations += prof.iterations
            trials.append((prof, mult))
        values = [p.objective if p.success else math.nan for p, _ in trials]
        low = min(range(2), key=lambda i: values[i] if math.isfinite(values[i]) else math.inf)
        lower = values[low] < outcome.objective - 1e-6 * abs(outcome.objective)
        if not lower or polish == opts.profile_polish:
            break  # (out of polishes: the profile stays the one around the current optimum)
        again, mult = nlp.solve(trials[low][0].x, (1.0,), warm=trials[low][1], on_stage=tick)
        iterations += again.iterations
        if not (again.success and again.objective < outcome.objective):
            break
        outcome, multipliers = again, mult
    curvature = (values[0] + values[1] - 2 * outcome.objective) / (opts.profile_step * r_hat) ** 2
    r_std = math.sqrt(2.0 / curvature) if curvature > 0 else math.nan
    mu_hat = float(outcome.x[-1])
    prof, _ = nlp.solve(outcome.x, (1.0,), fix_mu=1.1 * mu_hat, warm=multipliers, on_stage=tick)
    iterations += prof.iterations
    rise = prof.objective - outcome.objective - opts.mu_weight * 0.1 * mu_hat
    return r_std, (rise if prof.success else math.nan), iterations, outcome, multipliers


def friction_floor(
    nlp: IdentificationNlp,
    outcome: SolveOutcome,
    multipliers: tuple[Any, Any],
    opts: IdentifyOptions,
    budget: Budget,
) -> tuple[float, int, list[tuple[float, float]]]:
    """The least μ consistent with the poses when no contact slid in a way they resolve: the
    smallest μ at which the objective without its price on μ, re-solved with μ held, rises at
    most :data:`FLOOR_RISE` above the best fit's (bisection on [0, μ̂] to
    :data:`FLOOR_TOLERANCE`). Returns it, the IPOPT iterations spent and the (μ, rise) points.

    Why: then μ̂ is where the price on μ balances what a larger friction cone gains by letting
    the impulses of resting or rocking contact follow the position noise, not a measurement
    (it can sit well above the true μ, which raises χ² by only a few units); a bound of the
    profile is one the data support.
    """
    mu_hat = float(outcome.x[-1])
    base = outcome.objective - opts.mu_weight * mu_hat
    low, high, iterations, points = 0.0, mu_hat, 0, []
    while high - low > FLOOR_TOLERANCE and not budget.exhausted():
        mid = 0.5 * (low + high)
        trial, _ = nlp.solve(outcome.x, (1.0,), fix_mu=mid, warm=multipliers)
        iterations += trial.iterations
        rise = trial.objective - opts.mu_weight * mid - base if trial.success else math.inf
        points.append((mid, rise))
        low, high = (low, mid) if rise <= FLOOR_RISE else (mid, high)
    return high, iterations, points


def better(new: SolveOutcome, old: SolveOutcome) -> bool:
    """A converged solution beats a failed one; otherwise the lower objective wins."""
    if new.success != old.success:
        return new.success
    return new.objective < old.objective
