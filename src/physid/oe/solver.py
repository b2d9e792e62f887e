"""The optimal-estimation solver of paper B section V: Riccati step, rollout, merit, line search.

Each iteration linearizes eq. 16, computes the Newton direction by the parametrized Riccati
recursion (eqs. 22-31), tries the rollout chosen in :mod:`physid.oe.rollouts` with step lengths
1, 1/2, 1/4, ..., and accepts by a non-monotone Armijo test on the merit function
``phi = cost + nu sum_k |fbar_k|_1`` (eq. 37) with the penalty update of eq. 38. The predicted
change is eq. 35 evaluated on the step itself, ``alpha g^T d + alpha^2/2 d^T H d`` (the quadratic
model the Riccati recursion minimizes), minus ``alpha nu sum |fbar|_1`` for the gaps the linear
model closes. Levenberg-Marquardt regularisation ``mu`` on Qww, the arrival state and the
parameters (:func:`physid.oe.riccati.arrival_step`) follows the scheme of paper B's ref. [21]
(Crocoddyl's nullspace solver): after an accepted step of relative length ``alpha / alpha_max``
above ``mu_decrease_above`` it is divided by ``mu_decrease_factor``, at or below
``mu_increase_below`` multiplied by ``mu_factor``, as after a failed line search or a singular
factorization. Without the increase after short accepted steps (and without mu on the parameter
block) the feasibility-driven rollout on a two-body Kinova crawled at alpha ~ 3e-4 for 100
iterations (docs/oe.md, "Feasibility-driven rollout").

Budgets (issue 29 item 3): the wall-time budget is checked before every iteration AND before
every line-search trial (one trial re-simulates every node: on 2,000 nodes a 13-trial line
search took minutes), the iteration budget before every iteration. A solve that does not
converge returns its best iterate, the accepted iterate of lowest merit at the final penalty
``nu`` (with the non-monotone test the last accepted one can be worse), and says why it stopped.
``progress`` (e.g. the CLI's stderr writer) receives one line per accepted iteration: iteration,
cost, sum and max of the gaps, step length, mu, seconds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from physid.budget import Budget, Stop
from physid.errors import InputError
from physid.oe.problem import OEProblem
from physid.oe.result import OEResult
from physid.oe.riccati import SingularStepError, backward_pass, parameter_hessian, solve_step
from physid.oe.rollouts import ROLLOUTS, close_gaps, rollout
from physid.oe.serial import process_noise_inflation


@dataclass(frozen=True)
class OEOptions:
    """Solver settings. ``tolerance``: stop when the predicted reduction ``|g^T d|`` is below
    ``tolerance * (1 + cost)`` and the gaps below ``feasibility_tolerance`` (sum of |.|_1).
    ``max_iterations`` and ``time_budget_s`` (wall time, None: :func:`default_time_budget`) are
    the budget: the solve stops with status ``max_iterations`` or ``stopped by the time budget
    of ... s``, keeping its last accepted (lowest-merit) iterate."""

    rollout: str = "multiple"
    nullspace: bool = True
    nullspace_rtol: float = 1e-12
    max_iterations: int = 100
    tolerance: float = 1e-9
    feasibility_tolerance: float = 1e-6
    mu_init: float = 1e-8
    mu_min: float = 1e-10
    mu_max: float = 1e8
    mu_factor: float = 10.0
    mu_decrease_factor: float = 5.0  # [21]: reg_decfactor
    mu_increase_below: float = 0.25  # [21]: th_stepinc, on alpha / alpha_max
    mu_decrease_above: float = 0.25  # [21]: th_stepdec
    armijo: float = 1e-4
    window: int = 5  # non-monotone Armijo: compare with the worst of the last `window` merits
    alpha_min: float = 2.0**-12
    max_log_step: float = 1.0  # see physid.oe.charts.step_limit
    nu_init: float = 1.0
    rho: float = 0.5  # eq. 38
    beta_nu: float = 0.9  # eq. 38
    time_budget_s: float | None = None  # None: default_time_budget(nodes)
    serial_inflation: bool = True  # physid.oe.serial: std x sqrt(long-run ratio of w)
    # std x sqrt(reduced chi-square) where it is above 1: residuals larger than the noise model
    # says (Birge ratio; what least squares does with an estimated noise level)
    chi2_inflation: bool = True

    def __post_init__(self) -> None:
        if self.rollout not in ROLLOUTS:
            raise InputError(f"unknown rollout {self.rollout!r}; choose one of {ROLLOUTS}")


def default_time_budget(nodes: int, max_iterations: int) -> float:
    """Wall-time budget [s] of a solve over ``nodes`` nodes: 20 s + 1 ms per node and allowed
    iteration, so ``max_iterations`` binds first on any ordinary solve (the simulated 2-link
    and Kinova recordings of the tests, 41-101 nodes, take 3-30 ms per iteration)."""
    return 20.0 + 1e-3 * nodes * max_iterations


def _std(problem: OEProblem, xs: NDArray, ws: NDArray, theta: NDArray, rtol: float):  # noqa: ANN202
    """Standard deviations of theta and pi from the inverse marginal GN Hessian of theta, and
    theta's posterior covariance (the joint terms' in their values; NaN on the entries a null
    direction touches)."""
    lin = problem.linearize(xs, ws, theta)
    H = parameter_hessian(backward_pass(lin, 0.0))
    # the joint terms' std in their values, not their logarithms: at a value drifting to 0 a
    # log coordinate loses its curvature and its coupling to what it is confounded with (an
    # armature with a body's inertia), which the null-space test below must still see
    n = problem.dynamics.n_inertial
    scale = np.ones(theta.size)
    scale[n:] = np.exp(theta[n:])
    H = 0.5 * (H + H.T) / np.outer(scale, scale)
    lam, vec = np.linalg.eigh(H)
    keep = lam > rtol * max(lam.max(initial=0.0), 1e-300)
    cov = (vec[:, keep] / lam[keep]) @ vec[:, keep].T
    leak = np.abs(vec[:, ~keep]).max(axis=1, initial=0.0)
    touched = leak > 1e-6
    # a joint term is unknown when a null direction really moves it, not when it brushes one:
    # a body's log moment drifting to -inf (a trunk that barely turns) is flat and mixes
    # 1e-4-sized components into the leg frictions, which the legs' own motion decides
    touched[n:] = leak[n:] > 1e-2
    theta_std = np.sqrt(np.clip(np.diag(cov), 0, None)) / scale  # the tail: std of log value
    theta_std[touched] = np.nan
    G = problem.dynamics.G
    pi_std, pi_cov = [], []
    for b in range(G.shape[0]):
        s = slice(10 * b, 10 * b + 10)
        c = G[b] @ cov[s, s] @ G[b].T
        std = np.sqrt(np.clip(np.diag(c), 0, None))
        if touched[s].any():
            unknown = np.abs(G[b][:, touched[s]]).max(axis=1) > 0
            # mass and first moments that no dropped direction moves (the exp_eig rotation at
            # two nearly equal principal moments turns the inertia only) keep their std: they
            # are invariant along those directions, so the covariance on the kept ones holds
            moved = np.abs(G[b] @ vec[s][:, ~keep]).max(axis=1, initial=0.0)
            scale = max(float(np.abs(G[b]).max()), 1e-300)
            unknown[:4] = moved[:4] > 1e-6 * scale
            std[unknown] = np.nan
            c[unknown, :] = c[:, unknown] = np.nan
        pi_std.append(std)
        pi_cov.append(c)
    cov[touched] = cov[:, touched] = np.nan
    return theta_std, np.array(pi_std), np.array(pi_cov), cov


def _single_shooting_start(
    problem: OEProblem, xs: NDArray, ws: NDArray, theta: NDArray, cost: float, gaps: NDArray
) -> tuple[NDArray, float, NDArray, str | None]:
    """``(xs, cost, gaps, failure)`` single shooting starts from: the open-loop rollout of
    the guess, or, when that rollout diverges (an open-loop unstable robot, docs/oe.md
    Table I: the Go1 walk is non-finite from node 138 of 160), the guess ``xs`` itself with
    its gaps and a ``numerical_failure`` status, so that the result written is a finite
    iterate and not the NaN rows of the rollout."""
    with np.errstate(all="ignore"):  # a diverging rollout is reported in the status
        closed = close_gaps(problem, xs, ws, theta)
        closed_cost, closed_gaps = problem.evaluate(closed, ws, theta)
    if np.isfinite(closed_cost):
        return closed, closed_cost, closed_gaps, None
    finite = np.all(np.isfinite(closed), axis=1)
    what = (f"is non-finite from node {int(np.argmin(finite))} of {len(xs) - 1}"
            if not finite.all() else "has a non-finite cost")  # fmt: skip
    return xs, cost, gaps, (f"numerical_failure: the single-shooting rollout of the initial "
                            f"guess {what} (kept the initial guess, its gaps open)")  # fmt: skip


def progress_line(
    it: int, cost: float, gaps: float, max_gap: float, alpha: float, mu: float, seconds: float
) -> str:
    """One progress line of an accepted iteration (the CLI writes it to stderr)."""
    return (
        f"oe: iteration {it}, cost {cost:.6g}, gaps {gaps:.3g} (max {max_gap:.3g}), "
        f"step {alpha:.3g}, mu {mu:.1e}, {seconds:.1f} s"
    )


def solve(
    problem: OEProblem,
    xs: NDArray,
    ws: NDArray,
    theta: NDArray,
    options: OEOptions | None = None,
    callback=None,  # noqa: ANN001 - called as callback(iteration, theta, xs)
    progress: Callable[[str], None] | None = None,
) -> OEResult:
    """Solve eq. 16 from the guess ``(xs, ws, theta)``; never raises on numerical failure.
    ``progress``: called with :func:`progress_line` after every accepted iteration and with
    the stopping reason."""
    opt = options or OEOptions()
    start = time.perf_counter()
    xs, ws, theta = np.array(xs, float), np.array(ws, float), np.array(theta, float)
    cost, gaps = problem.evaluate(xs, ws, theta)
    failure = None
    if opt.rollout == "single":
        xs, cost, gaps, failure = _single_shooting_start(problem, xs, ws, theta, cost, gaps)
    infeas = float(np.abs(gaps).sum())
    best = (cost, infeas, xs, ws, theta, 0)  # lowest merit at the current nu, its iteration
    mu, nu, null_dim, it = opt.mu_init, opt.nu_init, 0, 0
    status = failure or "max_iterations"
    hist: dict[str, list] = {k: [] for k in ("cost", "merit", "infeasibility", "alpha", "mu")}
    hist["theta"], recent = [theta.tolist()], [(cost, infeas)]
    lin = None  # kept while the iterate does not move (a rejected step only changes mu)
    seconds = opt.time_budget_s or default_time_budget(len(xs), opt.max_iterations)
    budget = Budget(seconds=seconds, iterations=opt.max_iterations + 1)
    for it in range(1, 1 + (opt.max_iterations if failure is None else 0)):
        if budget.spend():
            status = f"stopped by {budget.describe()}"
            break
        if not np.isfinite(cost):
            status = "numerical_failure: non-finite cost"
            break
        if lin is None:
            with np.errstate(all="ignore"):  # non-finite values end in a status below
                lin = problem.linearize(xs, ws, theta)
        try:
            if not (np.isfinite(lin.cost) and np.all(np.isfinite(lin.A))):
                status = "numerical_failure: non-finite linearization"
                break
            with np.errstate(all="ignore"):  # non-finite values end in a status below
                step = solve_step(lin, mu, opt.nullspace, opt.nullspace_rtol)
        except np.linalg.LinAlgError as error:  # 'Eigenvalues did not converge' on wild data
            status = f"numerical_failure: {error}"
            break
        except SingularStepError as error:
            if mu >= opt.mu_max or not error.regularizable:
                status = f"numerical_failure: {error}"
                break
            mu = min(max(mu, opt.mu_min) * opt.mu_factor, opt.mu_max)
            continue
        null_dim = step.null_dim
        d1, d2 = step.gradient_dot, step.curvature
        if abs(d1) <= opt.tolerance * (1.0 + abs(cost)) and infeas <= opt.feasibility_tolerance:
            if mu <= opt.mu_init:
                status = "converged"
                break
            mu = opt.mu_init  # a large mu shrinks d1 too: judge on the undamped step
            continue
        if infeas > 0:  # eq. 38
            nu = max(opt.beta_nu * nu, (d1 + 0.5 * d2) / ((1.0 - opt.rho) * infeas))
        reference = max(c + nu * f for c, f in recent[-opt.window :])
        dtheta = step.dtheta
        alpha = problem.dynamics.step_limit(dtheta, opt.max_log_step)
        accepted = False
        while alpha >= opt.alpha_min:
            if budget.elapsed() >= budget.seconds:
                break  # the status is set at the top of the loop
            if problem.dynamics.representable(problem.dynamics.retract(theta, alpha * dtheta)):
                with np.errstate(all="ignore"):  # a diverging trial is rejected by its merit
                    trial = rollout(problem, opt.rollout, xs, ws, theta, step, alpha, lin.gaps)
                    cost_t, gaps_t = problem.evaluate(*trial)
            else:  # a body beyond floating point: an infinite cost, so alpha is halved
                cost_t, gaps_t = float("inf"), lin.gaps
            infeas_t = float(np.abs(gaps_t).sum())
            predicted = alpha * d1 + 0.5 * alpha**2 * d2 - alpha * nu * infeas
            merit_t = cost_t + nu * infeas_t
            if np.isfinite(merit_t) and merit_t <= reference + opt.armijo * min(predicted, 0.0):
                accepted = True
                break
            alpha *= 0.5
        if not accepted:
            if budget.elapsed() >= budget.seconds:
                budget.reason = Stop.TIME
                status = f"stopped by {budget.describe()}"
                break
            if mu >= opt.mu_max:
                status = "line_search_failed"
                break
            mu = min(max(mu, opt.mu_min) * opt.mu_factor, opt.mu_max)
            continue
        xs, ws, theta = trial
        cost, infeas, lin = cost_t, infeas_t, None
        recent.append((cost, infeas))
        if cost + nu * infeas <= best[0] + nu * best[1]:
            best = (cost, infeas, xs, ws, theta, it)
        if progress is not None:
            max_gap = float(np.abs(gaps_t).max(initial=0.0))
            progress(progress_line(it, cost, infeas, max_gap, alpha, mu, budget.elapsed()))
        relative = alpha / problem.dynamics.step_limit(step.dtheta, opt.max_log_step)
        if relative > opt.mu_decrease_above:
            mu = max(mu / opt.mu_decrease_factor, opt.mu_min)
        if relative <= opt.mu_increase_below:
            mu = min(max(mu, opt.mu_min) * opt.mu_factor, opt.mu_max)
        for key, value in (
            ("cost", cost),
            ("merit", cost + nu * infeas),
            ("infeasibility", infeas),
            ("alpha", alpha),
            ("mu", mu),
        ):
            hist[key].append(value)
        hist["theta"].append(theta.tolist())
        if callback is not None:
            callback(it, theta, xs)
    if status != "converged" and best[0] + nu * best[1] < cost + nu * infeas:
        cost, infeas, xs, ws, theta, kept = best
        status += f" (kept the best iterate, of iteration {kept})"
    if progress is not None:
        progress(f"oe: stopped after {it} iterations, {budget.elapsed():.1f} s: {status}")
    try:
        with np.errstate(all="ignore"):
            theta_std, pi_std, pi_cov, cov = _std(problem, xs, ws, theta, opt.nullspace_rtol)
    except (SingularStepError, np.linalg.LinAlgError):
        theta_std = np.full(theta.shape, np.nan)
        cov = np.full((theta.size, theta.size), np.nan)
        bodies = len(problem.dynamics.body_joints)
        pi_std = np.full((bodies, 10), np.nan)
        pi_cov = np.full((bodies, 10, 10), np.nan)
    inflation = 1.0
    if opt.serial_inflation and np.all(np.isfinite(ws)):
        nv = problem.dynamics.model.nv
        inflation = process_noise_inflation(ws, problem.process_std_nodes, nv)
    chi2 = problem.reduced_chi_square(cost) if np.isfinite(cost) else float("nan")
    if opt.chi2_inflation and np.isfinite(chi2) and chi2 > 1.0:
        inflation *= chi2
    if inflation != 1.0:
        theta_std, pi_std = theta_std * np.sqrt(inflation), pi_std * np.sqrt(inflation)
        pi_cov = pi_cov * inflation
    pis = problem.dynamics.set_theta(theta)
    return OEResult(
        status,
        it if status != "converged" else it - 1,
        problem.dynamics.chart,
        opt.rollout,
        problem.dynamics.body_joints,
        theta,
        pis,
        theta_std,
        pi_std,
        xs,
        ws,
        cost,
        infeas,
        null_dim,
        time.perf_counter() - start,
        hist,
        chi2,
        pi_cov,
        inflation,
        problem.dynamics.joint_summary(theta_std, problem.theta_prior_std, cov),
    )
