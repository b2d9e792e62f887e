"""The optimal-estimation solver of paper B section V: Riccati step, rollout, merit, line search.

Each iteration linearizes eq. 16, computes the Newton direction by the parametrized Riccati
recursion (eqs. 22-31), tries the rollout chosen in :mod:`physid.oe.solving.rollouts` with step
lengths 1, 1/2, 1/4, ..., and accepts by a non-monotone Armijo test on the merit function
``phi = cost + nu sum_k |fbar_k|_1`` (eq. 37) with the penalty update of eq. 38. The predicted
change is eq. 35 evaluated on the step itself, ``alpha g^T d + alpha^2/2 d^T H d`` (the quadratic
model the Riccati recursion minimizes), minus ``alpha nu sum |fbar|_1`` for the gaps the linear
model closes. Levenberg-Marquardt regularisation ``mu`` on Qww, the arrival state and the
parameters (:func:`physid.oe.solving.riccati.arrival_step`) follows the scheme of paper B's ref.
[21] (Crocoddyl's nullspace solver): after an accepted step of length ``alpha`` (the fraction
of the Newton step taken) above ``mu_decrease_above`` it is divided by ``mu_decrease_factor``,
at or below ``mu_increase_below`` multiplied by ``mu_factor``, as after a failed line search or
a singular factorization: without the increase after short accepted steps (and without mu on
the parameter block) a direction the line search must cut keeps being proposed, and the
iterates crawl at tiny step lengths (docs/oe.md, "Feasibility-driven rollout"). A step cut
short by the limit on logarithmic and rotation coordinates (``max_log_step``) counts as short:
that limit is a trust region, and mu is what shortens the flat directions that hit it (else
every other coordinate moves by only the fraction of its Newton step the limit leaves).

Budgets (:class:`physid.budget.Budget`): the iteration budget decides, so the same data give the
same result on any machine; the wall clock is a safety stop (checked before every iteration and
every line-search trial: one trial re-simulates every node), sized far above what the
iterations take (:func:`default_time_budget`), and a solve it ends says so in its status
(``time_limit``). A solve that does not converge returns its best iterate, the accepted iterate
of lowest merit at the final penalty ``nu`` (with the non-monotone test the last accepted one can
be worse), with its status (:data:`STATUS_OF`) and the detail of why it stopped
(:class:`Termination`). ``progress`` (e.g. the CLI's stderr writer) receives one line per
accepted iteration: iteration, cost, sum and max of the gaps, step length, mu, seconds. The
result's standard deviations are :mod:`physid.oe.solving.uncertainty`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from physid.budget import Budget, Stop
from physid.errors import InputError
from physid.oe.outputs.result import STATUS_OF, OEResult, Termination
from physid.oe.solving.problem import Linearization, OEProblem
from physid.oe.solving.riccati import SingularStepError, Step, parameter_hessian, solve_step
from physid.oe.solving.rollouts import ROLLOUTS, close_gaps, rollout
from physid.oe.solving.uncertainty import estimate_uncertainty


@dataclass(frozen=True)
class OEOptions:
    """Solver settings. ``tolerance``: stop when the predicted reduction ``|g^T d|`` is below
    ``tolerance * (1 + cost)`` and the gaps below ``feasibility_tolerance`` (sum of |.|_1), or
    when the step is statistically negligible (``parameter_tolerance``, ``decrease_tolerance``,
    ``gap_tolerance``: :func:`_small_step`).
    ``max_iterations`` is the budget that decides (status ``not_converged`` when spent);
    ``time_budget_s`` the wall-clock safety stop (None: :func:`default_time_budget`; status
    ``time_limit``); either way the solve keeps its lowest-merit accepted iterate."""

    rollout: str = "multiple"
    nullspace: bool = True
    nullspace_rtol: float = 1e-12
    max_iterations: int = 100
    tolerance: float = 1e-9
    feasibility_tolerance: float = 1e-6
    # the statistical convergence test (_small_step), each far below what the data can tell:
    parameter_tolerance: float = 1e-3  # the parameter step, in posterior std (Mahalanobis)
    decrease_tolerance: float = 1e-6  # |g^T d| per unknown: the RMS move 1e-3 std
    gap_tolerance: float = 1e-3  # RMS of the gaps, in process-noise std
    mu_init: float = 1e-8
    mu_min: float = 1e-10
    mu_max: float = 1e8
    mu_factor: float = 10.0
    mu_decrease_factor: float = 5.0  # [21]: reg_decfactor
    mu_increase_below: float = 0.25  # [21]: th_stepinc, on alpha
    mu_decrease_above: float = 0.25  # [21]: th_stepdec
    armijo: float = 1e-4
    window: int = 5  # non-monotone Armijo: compare with the worst of the last `window` merits
    alpha_min: float = 2.0**-12
    max_log_step: float = 1.0  # see physid.oe.model.charts.step_limit
    # a first trial that does not lower the merit is followed by the minimiser of its
    # quadratic interpolation (_interpolated) before plain halving
    interpolate: bool = True
    nu_init: float = 1.0
    rho: float = 0.5  # eq. 38
    beta_nu: float = 0.9  # eq. 38
    time_budget_s: float | None = None  # None: default_time_budget(nodes, max_iterations)
    serial_inflation: bool = True  # physid.oe.solving.serial: std x sqrt(long-run ratio of w)
    # std x sqrt(reduced chi-square) where it is above 1: residuals larger than the noise model
    # says (Birge ratio; what least squares does with an estimated noise level)
    chi2_inflation: bool = True
    # the accelerometer bias as three more unknowns of the Laplace covariance (the estimate
    # is the rounds' fixed point, a stationary point of the joint cost): theta's std then
    # includes what the bias's own uncertainty moves it by (set by the bias rounds)
    bias_in_covariance: bool = False
    # a floating base's mass variance + the mass its process noise's mean vertical force is
    # worth (physid.oe.solving.base_force): the model error's bias bound, beyond the noise
    base_force_bound: bool = True

    def __post_init__(self) -> None:
        if self.rollout not in ROLLOUTS:
            raise InputError(f"unknown rollout {self.rollout!r}; choose one of {ROLLOUTS}")


def default_time_budget(nodes: int, max_iterations: int) -> float:
    """The wall-clock safety stop [s] of a solve over ``nodes`` nodes: 10 min + 50 ms per node
    and allowed iteration, ten times what an iteration of a floating-base robot with its joint
    terms takes on a loaded core, so that the iteration budget decides and the result does not
    depend on the machine."""
    return 600.0 + 0.05 * nodes * max_iterations


def solve_budget(options: OEOptions, nodes: int) -> Budget:
    """The budget of one solve (or of all accelerometer-bias rounds together)."""
    seconds = options.time_budget_s or default_time_budget(nodes, options.max_iterations)
    return Budget(seconds=seconds, iterations=options.max_iterations)


def _single_shooting_start(
    problem: OEProblem, xs: NDArray, ws: NDArray, theta: NDArray, cost: float, gaps: NDArray
) -> tuple[NDArray, float, NDArray, str | None]:
    """``(xs, cost, gaps, failure)`` single shooting starts from: the open-loop rollout of
    the guess, or, when that rollout diverges (an open-loop unstable robot: a legged one's,
    docs/oe.md Table I), the guess ``xs`` itself with its gaps and the reason, so that the
    result written is a finite iterate and not the NaN rows of the rollout."""
    with np.errstate(all="ignore"):  # a diverging rollout is reported in the status
        closed = close_gaps(problem, xs, ws, theta)
        closed_cost, closed_gaps = problem.evaluate(closed, ws, theta)
    if np.isfinite(closed_cost):
        return closed, closed_cost, closed_gaps, None
    finite = np.all(np.isfinite(closed), axis=1)
    if finite.all():
        what = "has a non-finite cost"
    else:
        what = f"is non-finite from node {int(np.argmin(finite))} of {len(xs) - 1}"
    reason = f"the single-shooting rollout of the initial guess {what} (kept the guess, gaps open)"
    return xs, cost, gaps, reason


def progress_line(
    it: int, cost: float, gaps: float, max_gap: float, alpha: float, mu: float, seconds: float
) -> str:
    """One progress line of an accepted iteration (the CLI writes it to stderr)."""
    return (
        f"oe: iteration {it}, cost {cost:.6g}, gaps {gaps:.3g} (max {max_gap:.3g}), "
        f"step {alpha:.3g}, mu {mu:.1e}, {seconds:.1f} s"
    )


@dataclass
class _Run:
    """The iterate and the solver's state between iterations."""

    xs: NDArray
    ws: NDArray
    theta: NDArray
    cost: float
    infeas: float
    mu: float
    nu: float
    best: tuple = ()  # (cost, infeas, xs, ws, theta, iteration) of lowest merit at nu
    recent: list = field(default_factory=list)
    history: dict = field(default_factory=dict)
    lin: Linearization | None = None  # kept while the iterate does not move
    null_dim: int = 0
    termination: Termination = Termination.ITERATIONS
    detail: str = ""

    def merit(self, cost: float, infeas: float) -> float:
        return cost + self.nu * infeas


def solve(
    problem: OEProblem,
    xs: NDArray,
    ws: NDArray,
    theta: NDArray,
    options: OEOptions | None = None,
    callback=None,  # noqa: ANN001 - called as callback(iteration, theta, xs)
    progress: Callable[[str], None] | None = None,
    budget: Budget | None = None,
) -> OEResult:
    """Solve eq. 16 from the guess ``(xs, ws, theta)``; never raises on numerical failure.
    ``progress``: called with :func:`progress_line` after every accepted iteration and with
    the stopping reason. ``budget``: shared with earlier solves (the accelerometer-bias rounds
    of :mod:`physid.oe.solving.imu_bias`); default :func:`solve_budget` of ``options``."""
    opt = options or OEOptions()
    start = time.perf_counter()
    budget = budget or solve_budget(opt, len(xs))
    run = _start(problem, xs, ws, theta, opt)
    first = budget.used
    while run.termination is Termination.ITERATIONS and not budget.exhausted():
        it = budget.used - first + 1
        accepted = _iterate(problem, run, opt, budget, it)
        if run.termination is Termination.CONVERGED:
            break  # the test took no step: no iteration spent
        budget.spend()
        if accepted and progress is not None:
            progress(
                progress_line(
                    it,
                    run.cost,
                    run.infeas,
                    _max_gap(run),
                    run.history["alpha"][-1],
                    run.mu,
                    budget.elapsed(),
                )
            )
        if accepted and callback is not None:
            callback(it, run.theta, run.xs)
    if run.termination is Termination.ITERATIONS and budget.reason is Stop.TIME:
        run.termination = Termination.TIME
    kept = _keep_best(run)
    iterations = budget.used - first
    message = _message(run, budget, iterations, kept)
    if progress is not None:
        progress(f"oe: stopped after {iterations} iterations, {budget.elapsed():.1f} s: {message}")
    return _result(problem, run, opt, iterations, kept, message, time.perf_counter() - start)


def _max_gap(run: _Run) -> float:
    return float(run.history.get("max_gap", [0.0])[-1])


def _start(problem: OEProblem, xs: NDArray, ws: NDArray, theta: NDArray, opt: OEOptions) -> _Run:
    """The solver's state at the guess (the single-shooting rollout of it for ``single``)."""
    xs, ws, theta = np.array(xs, float), np.array(ws, float), np.array(theta, float)
    cost, gaps = problem.evaluate(xs, ws, theta)
    if opt.rollout == "closed":
        cost, ws, gaps = problem.evaluate_closed(xs, theta)
    failure = None
    if opt.rollout == "single":
        xs, cost, gaps, failure = _single_shooting_start(problem, xs, ws, theta, cost, gaps)
    infeas = float(np.abs(gaps).sum())
    history: dict[str, list] = {k: [] for k in ("cost", "merit", "infeasibility", "alpha", "mu")}
    history["theta"] = [theta.tolist()]
    run = _Run(xs, ws, theta, cost, infeas, opt.mu_init, opt.nu_init, history=history)
    run.best, run.recent = (cost, infeas, xs, ws, theta, 0), [(cost, infeas)]
    if failure is not None:
        run.termination, run.detail = Termination.DIVERGED_START, failure
    return run


def _iterate(problem: OEProblem, run: _Run, opt: OEOptions, budget: Budget, it: int) -> bool:
    """One iteration: a Newton step and its line search; True when a step was accepted. Sets
    ``run.termination`` when the solve ends here."""
    step = _newton_step(problem, run, opt)
    if step is None:
        return False
    d1, d2 = step.gradient_dot, step.curvature
    if _small_step(problem, run, opt, step):
        if run.mu <= opt.mu_init:
            run.termination = Termination.CONVERGED
        else:
            run.mu = opt.mu_init  # a large mu shrinks d1 too: judge on the undamped step
        return False
    if run.infeas > 0:  # eq. 38
        run.nu = max(opt.beta_nu * run.nu, (d1 + 0.5 * d2) / ((1.0 - opt.rho) * run.infeas))
    trial = _line_search(problem, run, opt, budget, step)
    if trial is None:
        if budget.elapsed() >= budget.seconds:
            budget.reason = Stop.TIME
        elif run.mu >= opt.mu_max:
            run.termination = Termination.LINE_SEARCH
            run.detail = "no step length decreased the merit, even at the largest mu"
        else:
            run.mu = min(max(run.mu, opt.mu_min) * opt.mu_factor, opt.mu_max)
        return False
    _accept(problem, run, opt, step, trial, it)
    return True


def _small_step(problem: OEProblem, run: _Run, opt: OEOptions, step: Step) -> bool:
    """The convergence test on the Newton step ``d = (dx, dw, dtheta)`` at the iterate: the
    classical one,

        |g^T d| <= tolerance (1 + cost)   and   sum_k |fbar_k|_1 <= feasibility_tolerance,

    or the statistical one, all three of

        dtheta^T H_theta dtheta <= parameter_tolerance^2,
        |g^T d| <= decrease_tolerance n,
        sqrt(mean_k,i (fbar_k,i / sigma_w,k,i)^2) <= gap_tolerance,

    with ``H_theta = Vtt - Vxt^T Vxx^-1 Vxt`` the marginal Gauss-Newton Hessian of theta
    (:func:`physid.oe.solving.riccati.parameter_hessian`, the inverse of its Laplace
    covariance), ``n`` the number of unknowns (states, noises, parameters) and ``sigma_w``
    the process-noise std of each gap. The cost is ``1/2 |r|^2`` of whitened residuals, so
    ``H`` is the inverse posterior covariance and, for the Newton step of a feasible iterate,
    ``-g^T d = d^T H d``: the squared Mahalanobis length of the step. The first line bounds
    the move of every linear combination ``c^T theta`` by ``parameter_tolerance`` of its
    posterior std (Cauchy-Schwarz in the ``H_theta`` metric; the std reported, inflated for
    serial correlation and chi2, are larger still); the second the RMS move of the states and
    noises by ``sqrt(decrease_tolerance)`` of their std, a change of the log-likelihood far
    below what any test could tell; the third the gaps to a small fraction of the process
    noise that closes them. The classical test is absolute: with residuals that the model does
    not explain (soft feet, unmodelled joint terms) Gauss-Newton converges only linearly and
    its end game dithers about an estimate that no longer moves, above that bound."""
    lin = run.lin
    decrease = abs(step.gradient_dot)
    if (
        decrease <= opt.tolerance * (1.0 + abs(run.cost))
        and run.infeas <= opt.feasibility_tolerance
    ):
        return True
    unknowns = lin.lx.size + lin.lw.size + lin.lt.size
    if decrease > opt.decrease_tolerance * unknowns:
        return False
    whitened = lin.gaps / problem.process_std_nodes
    if float(np.sqrt(np.mean(whitened**2))) > opt.gap_tolerance:
        return False
    H = parameter_hessian(step.policy)
    return float(step.dtheta @ (0.5 * (H + H.T)) @ step.dtheta) <= opt.parameter_tolerance**2


def _newton_step(problem: OEProblem, run: _Run, opt: OEOptions) -> Step | None:
    """The Riccati step at ``run``'s iterate, or None (mu raised after a singular
    factorization, or ``run.termination`` set on a numerical failure)."""
    if not np.isfinite(run.cost):
        run.termination, run.detail = Termination.NON_FINITE, "non-finite cost"
        return None
    if run.lin is None:
        with np.errstate(all="ignore"):  # non-finite values end in a status below
            run.lin = problem.linearize(run.xs, run.ws, run.theta)
    lin = run.lin
    if not (np.isfinite(lin.cost) and np.all(np.isfinite(lin.A))):
        run.termination, run.detail = Termination.NON_FINITE, "non-finite linearization"
        return None
    try:
        with np.errstate(all="ignore"):  # non-finite values end in a status below
            step = solve_step(lin, run.mu, opt.nullspace, opt.nullspace_rtol)
    except np.linalg.LinAlgError as error:  # 'Eigenvalues did not converge' on wild data
        run.termination, run.detail = Termination.SINGULAR, str(error)
        return None
    except SingularStepError as error:
        if run.mu >= opt.mu_max or not error.regularizable:
            run.termination, run.detail = Termination.SINGULAR, str(error)
        else:
            run.mu = min(max(run.mu, opt.mu_min) * opt.mu_factor, opt.mu_max)
        return None
    run.null_dim = step.null_dim
    return step


def _line_search(
    problem: OEProblem, run: _Run, opt: OEOptions, budget: Budget, step: Step
) -> tuple | None:
    """``(xs, ws, theta, cost, gaps, alpha)`` of the first step length 1, 1/2, ... that the
    non-monotone Armijo test on the merit accepts (:func:`_armijo`), or after a first trial
    that did not lower the merit the interpolated one (:func:`_interpolated`); None when none
    does (or the wall-clock safety stop comes first)."""
    reference = max(run.merit(c, f) for c, f in run.recent[-opt.window :])
    alpha = problem.dynamics.step_limit(step.dtheta, opt.max_log_step)
    first = True
    while alpha >= opt.alpha_min and budget.elapsed() < budget.seconds:
        trial, cost, gaps, merit = _trial(problem, run, opt, step, alpha)
        accepted = _armijo(run, opt, step, alpha, merit, reference)
        if first and opt.interpolate and opt.rollout in ("multiple", "closed"):
            first = False
            shorter = _interpolated(problem, run, opt, step, alpha, merit, reference, accepted)
            if shorter is not None and (not accepted or shorter[-1] < merit):
                return shorter[:-1]
        if accepted:
            return (*trial, cost, gaps, alpha)
        alpha *= 0.5
    return None


def _armijo(
    run: _Run, opt: OEOptions, step: Step, alpha: float, merit: float, reference: float
) -> bool:
    """The non-monotone Armijo test of a trial of length ``alpha`` with merit ``merit``: at or
    below ``reference`` (the worst of the window) plus ``armijo`` times the predicted change
    ``alpha g^T d + alpha^2/2 d^T H d - alpha nu sum|fbar|_1`` (module docstring)."""
    d1, d2 = step.gradient_dot, step.curvature
    predicted = alpha * d1 + 0.5 * alpha**2 * d2 - alpha * run.nu * run.infeas
    return bool(np.isfinite(merit) and merit <= reference + opt.armijo * min(predicted, 0.0))


def _trial(problem: OEProblem, run: _Run, opt: OEOptions, step: Step, alpha: float) -> tuple:
    """``(trial, cost, gaps, merit)`` of step length ``alpha`` (``trial``: ``(xs, ws, theta)``,
    None with an infinite merit when a body leaves floating point)."""
    dyn = problem.dynamics
    if not dyn.representable(dyn.retract(run.theta, alpha * step.dtheta)):
        return None, float("inf"), run.lin.gaps, float("inf")
    with np.errstate(all="ignore"):  # a diverging trial is rejected by its merit
        trial = rollout(problem, opt.rollout, run.xs, run.ws, run.theta, step, alpha, run.lin.gaps)
        if opt.rollout == "closed":
            cost, ws, gaps = problem.evaluate_closed(trial[0], trial[2])
            trial = (trial[0], ws, trial[2])
        else:
            cost, gaps = problem.evaluate(*trial)
    return trial, cost, gaps, cost + run.nu * float(np.abs(gaps).sum())


def _interpolated(
    problem: OEProblem,
    run: _Run,
    opt: OEOptions,
    step: Step,
    alpha: float,
    merit: float,
    reference: float,
    accepted: bool,
) -> tuple | None:
    """The minimiser of the merit's quadratic interpolation along the step, when the first
    trial ``alpha`` did not lower the merit (Nocedal & Wright, Numerical Optimization, 2nd
    ed., eq. 3.58): ``phi(a) ~ phi(0) + s a + c a^2`` through ``phi(alpha)``, with ``s`` the
    merit's predicted slope ``g^T d - nu sum|fbar|_1``, gives ``a* = -s / (2 c)``, safeguarded
    to ``[alpha / 10, alpha / 2]``. ``(xs, ws, theta, cost, gaps, a*, merit)`` when ``a*``
    passes the Armijo test, else None; also None when the first trial was ``accepted`` (by the
    non-monotone window) and ``a* < alpha / 4``: a merit that rose by more than the step's
    predicted decrease ``|s| alpha`` means a model off by more than a factor 4, the regime far
    from the solution where the window is meant to let the merit rise.

    Gauss-Newton leaves out the residuals' curvature (and the dynamics' curvature times the
    multipliers); where that curvature is as large as the model's, the full step overshoots
    the minimum along its line by about its own length, and halving alternates between the
    two sides of it without settling (docs/oe.md, "Tenth round"); the interpolated length
    lands near the minimum instead. Only where the trials lie on the step's line (the
    ``multiple`` and ``closed`` rollouts); the nonlinear rollouts bend it."""
    m0 = run.merit(run.cost, run.infeas)
    slope = step.gradient_dot - run.nu * run.infeas
    if not (np.isfinite(merit) and merit >= m0 and slope < 0):
        return None
    curvature = (merit - m0 - slope * alpha) / alpha**2  # > 0: merit >= m0, slope < 0
    minimiser = -slope / (2.0 * curvature)
    if accepted and minimiser < 0.25 * alpha:
        return None
    shorter = float(np.clip(minimiser, 0.1 * alpha, 0.5 * alpha))
    if shorter < opt.alpha_min:
        return None
    trial, cost, gaps, value = _trial(problem, run, opt, step, shorter)
    if not _armijo(run, opt, step, shorter, value, reference):
        return None
    return (*trial, cost, gaps, shorter, value)


def _accept(
    problem: OEProblem, run: _Run, opt: OEOptions, step: Step, trial: tuple, it: int
) -> None:
    """Move ``run`` to the accepted ``trial``, adapt mu to the step length, record history."""
    run.xs, run.ws, run.theta, cost, gaps, alpha = trial
    run.cost, run.infeas, run.lin = cost, float(np.abs(gaps).sum()), None
    run.recent.append((run.cost, run.infeas))
    if run.merit(run.cost, run.infeas) <= run.merit(run.best[0], run.best[1]):
        run.best = (run.cost, run.infeas, run.xs, run.ws, run.theta, it)
    if alpha > opt.mu_decrease_above:
        run.mu = max(run.mu / opt.mu_decrease_factor, opt.mu_min)
    if alpha <= opt.mu_increase_below:
        run.mu = min(max(run.mu, opt.mu_min) * opt.mu_factor, opt.mu_max)
    h = run.history
    for key, value in (
        ("cost", run.cost),
        ("merit", run.merit(run.cost, run.infeas)),
        ("infeasibility", run.infeas),
        ("alpha", alpha),
        ("mu", run.mu),
    ):
        h[key].append(value)
    h.setdefault("max_gap", []).append(float(np.abs(gaps).max(initial=0.0)))
    h.setdefault("decrement", []).append(-step.gradient_dot)  # the predicted full-step decrease
    h["theta"].append(run.theta.tolist())


def _keep_best(run: _Run) -> int | None:
    """Put the best accepted iterate back when the solve did not converge and the last one is
    worse at the final penalty; its iteration (None: the last iterate is kept)."""
    if run.termination is Termination.CONVERGED:
        return None
    cost, infeas, xs, ws, theta, it = run.best
    if run.merit(cost, infeas) < run.merit(run.cost, run.infeas):
        run.cost, run.infeas, run.xs, run.ws, run.theta = cost, infeas, xs, ws, theta
        return it
    return None


def _message(run: _Run, budget: Budget, iterations: int, kept: int | None) -> str:
    """The one-line message of a solve: how it ended, in how many iterations (no seconds: the
    same data give the same message on any machine, unless the wall clock stopped it)."""
    how = {
        Termination.CONVERGED: "converged",
        Termination.ITERATIONS: f"stopped by the iteration budget of {budget.iterations}",
        Termination.TIME: f"stopped by the wall-clock safety stop of {budget.seconds:.3g} s",
        Termination.LINE_SEARCH: "stalled",
        Termination.NON_FINITE: "numerical failure",
        Termination.SINGULAR: "numerical failure",
        Termination.DIVERGED_START: "numerical failure",
    }[run.termination]
    text = f"{how} after {iterations} iterations"
    if run.detail:
        text += f": {run.detail}"
    if kept is not None:
        text += f" (kept the best iterate, of iteration {kept})"
    return text


def _result(
    problem: OEProblem,
    run: _Run,
    opt: OEOptions,
    iterations: int,
    kept: int | None,
    message: str,
    seconds: float,
) -> OEResult:
    """The :class:`OEResult` of a finished solve, with the uncertainty of
    :func:`physid.oe.solving.uncertainty.estimate_uncertainty` and the joint terms."""
    xs, ws, theta, cost = run.xs, run.ws, run.theta, run.cost
    u = estimate_uncertainty(
        problem,
        xs,
        ws,
        theta,
        cost,
        rtol=opt.nullspace_rtol,
        bias=opt.bias_in_covariance,
        serial_inflation=opt.serial_inflation,
        chi2_inflation=opt.chi2_inflation,
        base_force_bound=opt.base_force_bound,
    )
    dyn = problem.dynamics
    pis = dyn.set_theta(theta)
    return OEResult(
        status=STATUS_OF[run.termination],
        termination=run.termination,
        message=message,
        iterations=iterations,
        chart=dyn.chart,
        rollout=opt.rollout,
        body_joints=dyn.body_joints,
        theta=theta,
        pis=pis,
        theta_std=u.theta_std,
        pi_std=u.pi_std,
        xs=xs,
        ws=ws,
        cost=cost,
        infeasibility=run.infeas,
        null_dim=run.null_dim,
        solve_time=seconds,
        history=run.history,
        chi2_reduced=u.chi2,
        pi_covariance=u.pi_cov,
        std_inflation=u.inflation,
        joints=dyn.joint_summary(u.theta_std, problem.theta_prior_std, u.cov),
        best_iteration=kept,
        accelerometer_bias_std=u.bias_std,
        accelerometer_bias_covariance=u.bias_cov,
        base_force=u.base_force,
        contact_compliance=dyn.compliance_summary(u.theta_std),
    )
