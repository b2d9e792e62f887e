"""Output-error refinement of a multibody fit: the parameters that make physid's own SPOOK stepper
(:mod:`physid.multibody.step.simulate`, paper A eqs. 2.8-2.28) reproduce the recorded angles, by
multiple shooting over windows of the recordings.

Paper A's estimator (:mod:`physid.multibody.estimate.fit`) is an equation-error method: the states
are free and the dynamics are soft residuals weighted by ``kappa`` (eq. 3.18). At low sample rates
and high noise the states can follow the noise and the parameters then explain the impulse
residuals rather than the motion: with a sticking joint a body's inertia can collapse and its
Coulomb torque turn into viscous friction (docs/multibody.md), while the true parameters
simulate the recording to about the noise. Here the dynamics are hard: each window of
``window_seconds`` starts from its own state (joint angles and rates, estimated, started from
the fit's states) and is simulated with the parameters; the residuals are the simulated minus
recorded angles at the recorded samples, each divided by its
joint's noise std (the fit's ``noise``), so the cost is the negative log-likelihood of Gaussian
measurement noise. Windows keep the problem well posed where one long rollout would not be (a
phase error grows through a 40 s swing; Bock's multiple shooting, as paper B's windows).

Solved by the condensed Levenberg-Marquardt of :mod:`physid.numerics.condensed_lm` (each window's
state eliminated by its Schur complement) with forward-difference Jacobians: every window and
every perturbation is one trajectory of one batched rollout (:meth:`Stepper.step_batch`), whose
dry-friction steps are a box QP solved for the whole batch at once
(:func:`physid.multibody.step.mlcp.box_friction_velocity`). Standard deviations: the larger of
Gauss-Newton and the window-clustered sandwich (:func:`physid.numerics.condensed_lm.
parameter_std`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import physid.multibody.codes as codes
from physid.findings import Finding, Severity
from physid.multibody.estimate.diagnose import collapsed
from physid.multibody.refine.windows import WindowProblem
from physid.numerics.condensed_lm import Blocks, parameter_std, solve
from physid.status import Status

#: Default window lengths [s] of the stages (the first long enough that a window's samples
#: decide its state and the dynamics through it, short enough that a phase error does not build
#: up within one; then longer, to the whole recording: inf).
WINDOW_SECONDS = (2.0, 10.0, np.inf)
#: Relative forward-difference step of a parameter (of ``max(|x|, |start|)``).
PARAMETER_STEP = 1e-4
#: Relative decrease of the cost below which a stage stops (the cost is ~half the number of
#: samples at the noise floor: 1e-4 of it is far below one parameter's worth of evidence).
FTOL = 1e-4
#: Broyden updates of the Jacobian between two finite-difference ones (as simfit's fit): a
#: finite-difference Jacobian costs len(x) + 2 m batched rollouts, an update none.
SECANT_STEPS = 2
#: Forward-difference steps of a window's initial joint angle [rad] and rate [rad/s].
ANGLE_STEP, RATE_STEP = 1e-6, 1e-5
#: The refinement's values are kept only if no parameter's std exceeds both its own value and
#: this many times its equation-error std: windows that do not determine a parameter (a std
#: orders of magnitude above the value) are no estimate, and the equation-error one is kept.
MAX_STD_GROWTH = 100.0


@dataclass
class Refinement:
    """What :func:`refine` found: the parameters ``names`` from ``start_values`` to ``values``
    (standard deviations ``std``), the cost ``0.5 sum (e / sigma)^2`` before and after, per joint
    the RMS of the windows' angle errors [rad] before and after, the windows, the solver's
    counts and stop reason."""

    names: list[str]
    start_values: np.ndarray
    start: str  # "fit" or "config": which start had the lower windowed cost
    values: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    cost_start: float
    cost: float
    rms_start: dict[str, float]
    rms: dict[str, float]
    windows: int
    window_seconds: list[float]
    samples: int
    evaluations: int
    jacobians: int
    status: Status  # :func:`stages_status`
    message: str  # the stages' own stop reasons, in order
    seconds: float
    h: float = 0.0  # the refinement's model step [s]
    first_states: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    segments: list = field(default_factory=list)  # the recordings at step h (problem.Segment)
    at_bound: list[str] = field(default_factory=list)
    fit_values: np.ndarray | None = None  # the equation-error fit's values and std
    fit_std: np.ndarray | None = None
    # whether the values replaced the equation-error fit's; if not, why (:func:`rejection`)
    used: bool = True
    not_used_because: str = ""
    cost_fit: float = float("nan")  # the fit's values from its states, on the last windows
    stops: list[int] = field(default_factory=list)  # per stage: condensed_lm's stop code
    noise: dict[str, float] = field(default_factory=dict)  # per joint [rad], the residuals' unit
    lower: np.ndarray | None = None  # the box the refinement kept the parameters in
    upper: np.ndarray | None = None

    def to_dict(self) -> dict:
        return {
            "status": str(self.status),
            "message": self.message,
            "stops": list(self.stops),
            "used": self.used,
            "not_used_because": self.not_used_because or None,
            "cost_equation_error": self.cost_fit,
            "start": self.start,
            "h": self.h,
            "window_seconds": [v if np.isfinite(v) else None for v in self.window_seconds],
            "windows": self.windows,
            "samples": self.samples,
            "evaluations": self.evaluations,
            "jacobians": self.jacobians,
            "seconds": self.seconds,
            "cost_start": self.cost_start,
            "cost": self.cost,
            "rms_start": self.rms_start,
            "rms": self.rms,
            "at_bound": self.at_bound,
            "parameters": {
                n: {
                    "equation_error": float(e),
                    "equation_error_std": float(es),
                    "start": float(a),
                    "value": float(b),
                    "std": float(s),
                }
                for n, e, es, a, b, s in zip(
                    self.names,
                    self.fit_values,
                    self.fit_std,
                    self.start_values,
                    self.values,
                    self.std,
                    strict=True,
                )
            },
        }


def _box(fit) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    """The fit's box (its plausibility box, :mod:`physid.multibody.estimate.prior`), or the
    model's bounds for a fit made without one."""
    if getattr(fit, "lower", None) is not None:
        return np.asarray(fit.lower, float), np.asarray(fit.upper, float)
    return fit.model.bounds(list(fit.names))


def _start(problem: WindowProblem, evaluate, fit, lower, upper) -> tuple[str, np.ndarray, dict]:  # noqa: ANN001
    """The first stage's start: whichever of the fit's values and its start values (the
    config's, which can be simulated) gives the lower windowed cost; a point that cannot be
    simulated costs inf, so the refinement always starts from a physical point."""
    zero = np.zeros((problem.W, 2 * problem.m))
    candidates = {
        "fit": np.clip(fit.values, lower, upper),
        "config": np.clip(fit.initial_values, lower, upper),
    }
    costs = {k: float(evaluate(v, zero).cost) for k, v in candidates.items()}
    start = min(costs, key=lambda k: costs[k] if np.isfinite(costs[k]) else np.inf)
    return start, candidates[start], costs


def refine(
    fit,  # noqa: ANN001 (a MultibodyFit; estimate imports the modules this one imports)
    recordings: list,
    *,
    h: float | None = None,
    window_seconds: Sequence[float] = WINDOW_SECONDS,
    max_evaluations: int = 30,
    progress: Callable[[int, int, float], None] | None = None,
) -> Refinement:
    """Refine ``fit``'s estimated parameters by multiple shooting on ``recordings`` (the fit's
    own, :class:`physid.multibody.estimate.fit.MultibodyRecording`) at the model step ``h``
    (default the fit's; module docstring), within the fit's box. ``window_seconds``: the
    windows' length per stage; each stage starts from the previous one's parameters and window
    states (a longer window reads what a short one cannot: the decay of a swing across windows,
    which short windows' free states absorb). The first stage starts from the last physical
    point (:func:`_start`). ``max_evaluations``: residual evaluations per stage (each Jacobian
    costs ``len(names) + 2 m`` more batched rollouts)."""
    clock = time.perf_counter()
    h = fit.h if h is None else float(h)
    lower, upper = _box(fit)
    known: dict = {}
    stages, x = [], None
    for length in window_seconds:
        problem = WindowProblem(fit, recordings, h, length, known)
        evaluate = _evaluator(problem)
        if x is None:
            start, x, costs = _start(problem, evaluate, fit, lower, upper)
            x_start = x
        stage = _stage(problem, evaluate, x, lower, upper, max_evaluations, progress)
        x = stage.solution.x
        known = {
            (s, a): (
                problem.angles0[w] + stage.solution.offsets[w, : problem.m],
                problem.rates0[w] + stage.solution.offsets[w, problem.m :],
            )
            for w, (s, a) in enumerate(zip(problem.segment_of, problem.starts, strict=True))
        }
        stages.append(stage)
    if len(stages) == 1:  # the first stage's windows, from the fit's states: already evaluated
        cost_fit = costs["fit"]
    else:  # the last stage's windows started from the fit's own states, not an earlier stage's
        fresh = WindowProblem(fit, recordings, h, window_seconds[-1])
        fitted = np.clip(fit.values, lower, upper)
        cost_fit = float(_evaluator(fresh)(fitted, np.zeros((fresh.W, 2 * fresh.m))).cost)
    run = {
        "start": start,
        "x_start": x_start,
        "cost_fit": cost_fit,
        "known": known,
        "h": h,
        "lower": lower,
        "upper": upper,
        "windows": window_seconds,
        "clock": clock,
    }
    return _refinement(fit, recordings, stages, run)


def _refinement(fit, recordings: list, stages: list, run: dict) -> Refinement:  # noqa: ANN001
    """The :class:`Refinement` of the stages run by :func:`refine`."""
    names, lower, upper = list(fit.names), run["lower"], run["upper"]
    first, last = stages[0], stages[-1]
    solution, problem = last.solution, last.problem
    variance = 2.0 * solution.cost / max(last.n_res - last.n_unknowns, 1)
    try:
        covariance = solution.normal.covariance_x() * variance
    except np.linalg.LinAlgError:
        covariance = np.full((len(names), len(names)), np.nan)
    known = run["known"]
    first_states = [
        problem.state(*known[s, 0]) if (s, 0) in known else (fit.states.q[s][0], fit.states.v[s][0])
        for s in range(len(recordings))
    ]
    inside = (lower < solution.x) & (solution.x < upper)  # the solver projects onto a bound
    std = parameter_std(solution.normal, solution.cost, last.n_res, last.n_unknowns)
    std[~inside] = np.nan  # a parameter held at its bound has no spread: not a measurement
    fit_std = np.asarray(fit.std, float)
    reason = rejection(names, solution.x, std, fit_std, float(solution.cost), run["cost_fit"])
    stops = [st.solution.status for st in stages]
    return Refinement(
        names=names,
        start_values=run["x_start"],
        start=run["start"],
        values=solution.x.copy(),
        std=std,
        covariance=covariance,
        cost_start=float(first.start_cost),
        cost=float(solution.cost),
        rms_start=_joint_rms(first.problem, first.start_r),
        rms=_joint_rms(problem, solution.residual),
        windows=problem.W,
        window_seconds=[float(v) for v in run["windows"]],
        samples=last.n_res,
        evaluations=sum(st.solution.nfev for st in stages),
        jacobians=sum(st.solution.njev for st in stages),
        status=stages_status(stops),
        message="; ".join(st.solution.message for st in stages),
        seconds=time.perf_counter() - run["clock"],
        h=run["h"],
        first_states=first_states,
        segments=problem.segments,
        at_bound=[n for n, ok in zip(names, inside, strict=True) if not ok],
        fit_values=np.asarray(fit.values, float).copy(),
        fit_std=fit_std.copy(),
        used=reason is None,
        not_used_because=reason or "",
        cost_fit=run["cost_fit"],
        stops=stops,
        noise={j: float(fit.noise[j]["std"]) for j in fit.model.joint_names},
        lower=lower,
        upper=upper,
    )


def stages_status(stops: Sequence[int]) -> Status:
    """The refinement's status from its stages' solver codes
    (:mod:`physid.numerics.condensed_lm`: positive converged, 0 the evaluation budget, -1 no
    step from the start decreased the cost): ``ok`` when every stage converged, ``stalled``
    when a stage could not leave its start, else ``not_converged`` (a budget ran out)."""
    if all(code > 0 for code in stops):
        return Status.OK
    if any(code == -1 for code in stops):
        return Status.STALLED
    return Status.NOT_CONVERGED


def rejection(
    names: Sequence[str],
    values: np.ndarray,
    std: np.ndarray,
    fit_std: np.ndarray,
    cost: float,
    cost_fit: float,
) -> str | None:
    """Why the refinement's values must not replace the equation-error fit's (None: they may):
    its cost on its last windows is above that of the fit's values simulated from the fit's own
    states on the same windows (the refinement, free to move the windows' states too, did
    worse), or a parameter's std exceeds both its value and :data:`MAX_STD_GROWTH` times its
    equation-error std (the windows do not determine it): replaced silently, good estimates
    could become values whose std is orders of magnitude above them."""
    reasons = []
    if np.isfinite(cost_fit) and cost > cost_fit:
        reasons.append(
            f"its windowed cost {cost:.4g} is above the equation-error values' {cost_fit:.4g} "
            "on the same windows"
        )
    worse = [
        f"{n} +- {s:.2g} against {e:.2g}"
        for n, v, s, e in zip(names, values, std, fit_std, strict=True)
        if np.isfinite(s) and np.isfinite(e) and s > abs(v) and s > MAX_STD_GROWTH * e
    ]
    if worse:
        reasons.append(
            "standard deviations above the values and over "
            f"{MAX_STD_GROWTH:g}x the equation-error ones ({', '.join(worse)}): the windows do "
            "not determine them"
        )
    return "; ".join(reasons) or None


@dataclass
class _Stage:
    problem: WindowProblem
    solution: Any  # physid.numerics.condensed_lm.Solution
    start_cost: float
    start_r: np.ndarray
    n_res: int
    n_unknowns: int


def _evaluator(problem: WindowProblem) -> Callable[[np.ndarray, np.ndarray], Blocks]:
    """The residual blocks of a point ``(x, window offsets)``, the last two points remembered:
    the start's choice, the stage's first cost and the solver's first evaluation are one point
    (a whole-recording evaluation of the Furuta is 40,000 steps)."""
    cache: dict[tuple[bytes, bytes], Blocks] = {}

    def evaluate(x: np.ndarray, d: np.ndarray) -> Blocks:
        key = (np.asarray(x, float).tobytes(), np.asarray(d, float).tobytes())
        if key not in cache:
            if len(cache) >= 2:
                cache.pop(next(iter(cache)))
            chi = np.tile(problem.chi(x), (problem.W, 1))
            cache[key] = Blocks(problem.residuals(chi, np.arange(problem.W), d), np.zeros(len(x)))
        return cache[key]

    return evaluate


def _stage(
    problem: WindowProblem,
    evaluate: Callable[[np.ndarray, np.ndarray], Blocks],
    x0: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    max_evaluations: int,
    progress: Callable[[int, int, float], None] | None = None,
) -> _Stage:
    """One stage of :func:`refine` on ``problem``'s windows from ``x0``."""
    W, m = problem.W, problem.m
    n_s = 2 * m

    def jacobian(x: np.ndarray, d: np.ndarray, at: Blocks) -> Blocks:
        steps = PARAMETER_STEP * np.maximum(np.maximum(np.abs(x), np.abs(x0)), 1e-12)
        steps = np.where(x + steps > upper, -steps, steps)
        state_steps = np.concatenate([np.full(m, ANGLE_STEP), np.full(m, RATE_STEP)])
        x_rows = [np.tile(x + steps[i] * np.eye(len(x))[i], (W, 1)) for i in range(len(x))]
        offsets = [d] * len(x)
        for j in range(n_s):
            x_rows.append(np.tile(x, (W, 1)))
            offsets.append(d + state_steps[j] * np.eye(n_s)[j])
        windows = np.tile(np.arange(W), len(x) + n_s)
        chi = np.array([problem.chi(row) for row in np.vstack(x_rows)])
        r = problem.residuals(chi, windows, np.vstack(offsets))
        r = r.reshape(len(x) + n_s, W, problem.R)
        G = np.moveaxis((r[: len(x)] - at.r) / steps[:, None, None], 0, 2)
        S = np.moveaxis((r[len(x) :] - at.r) / state_steps[:, None, None], 0, 2)
        G[~np.isfinite(G)] = 0.0  # a perturbation that cannot be simulated: no slope
        S[~np.isfinite(S)] = 0.0
        return Blocks(at.r, at.rp, G, S, np.zeros(len(x)))

    offsets0 = np.zeros((W, n_s))
    first = evaluate(x0, offsets0)
    n_res = int(problem.mask.sum())
    n_unknowns = len(x0) + W * n_s
    solution = solve(
        evaluate,
        jacobian,
        x0,
        offsets0,
        (lower, upper),
        max_nfev=max_evaluations,
        ftol=FTOL,
        xtol=1e-10,
        lam0=1.0,
        progress=progress,
        secant_steps=SECANT_STEPS,
        std_of=lambda normal, cost: parameter_std(normal, cost, n_res, n_unknowns),
    )
    return _Stage(problem, solution, first.cost, first.r, n_res, n_unknowns)


def _joint_rms(problem: WindowProblem, r: np.ndarray) -> dict[str, float]:
    """Per joint the RMS angle error [rad] of residuals ``r`` (W, R) (undoing the 1/sigma)."""
    out = {}
    for j, name in enumerate(problem.model.joint_names):
        sel = problem.mask & (problem.joint == j)
        e = r[sel] / problem.inv_sigma[j]
        out[name] = float(np.sqrt(np.mean(e**2))) if e.size else float("nan")
    return out


def _as_stage(finding: Finding) -> Finding:
    """An equation-error finding about the parameters, kept as context (``info``) once the
    refinement's values replace them."""
    return dataclasses.replace(
        finding, severity=Severity.INFO, message=f"equation-error stage: {finding.message}"
    )


#: The equation-error findings that speak of the parameters' values (stale once refined).
_VALUE_CODES = {
    c.code
    for c in (
        codes.COLLAPSED_BODY,
        codes.IMPLAUSIBLE,
        codes.SHRUNK,
        codes.AT_BOUND,
        codes.NOT_IDENTIFIABLE,
    )
}


#: A joint whose refined windows miss its samples by more than this many times its noise (MB307).
MISFIT_RATIO = 2.0


def _misfit(refinement: Refinement) -> list[Finding]:
    """``MB307`` naming the joints whose windowed RMS error exceeds :data:`MISFIT_RATIO` times
    their noise (the refinement's residuals are the errors divided by the noise)."""
    ratios = {j: refinement.rms[j] / s for j, s in refinement.noise.items() if s > 0}
    off = {j: r for j, r in ratios.items() if r > MISFIT_RATIO}
    if not off:
        return []
    listed = ", ".join(f"{j} {1e3 * refinement.rms[j]:.3g} mrad ({r:.3g}x)" for j, r in off.items())
    return [
        codes.MISFIT(
            f"the refined model misses the samples over its windows by {listed} the noise at "
            f"h = {refinement.h:g} s: a bias the std do not describe",
            numbers={f"{j}_x_noise": r for j, r in off.items()} | {"h_s": refinement.h},
            names=list(off),
        )
    ]


def refinement_findings(refinement: Refinement) -> list[Finding]:
    """``MB301`` (or ``MB302`` when not used) with the costs and per-joint simulation errors
    before and after, and ``MB303`` per parameter the refinement left at a bound."""
    numbers = {
        "cost_start": refinement.cost_start,
        "cost": refinement.cost,
        "evaluations": refinement.evaluations,
    }
    for joint in refinement.rms:
        numbers[f"{joint}_rms_start_rad"] = refinement.rms_start[joint]
        numbers[f"{joint}_rms_rad"] = refinement.rms[joint]
    if not refinement.used:
        return [
            codes.REFINEMENT_NOT_USED(
                f"output-error refinement not used: {refinement.not_used_because}; the "
                "equation-error values are kept",
                numbers=numbers,
                names=refinement.names,
            )
        ]
    out = [codes.REFINED(summary(refinement), numbers=numbers, names=refinement.names)]
    if refinement.start == "config":
        out.append(
            codes.UNPHYSICAL_REFINEMENT_START(
                "the refinement started from the config's values (the equation-error values "
                f"simulated the windows at cost {refinement.cost_fit:.4g}, the config's at "
                f"{refinement.cost_start:.4g})",
                numbers={"cost_fit": refinement.cost_fit, "cost_config": refinement.cost_start},
            )
        )
    out += _misfit(refinement)
    for name, value in zip(refinement.names, refinement.values, strict=True):
        if name in refinement.at_bound:
            out.append(
                codes.REFINEMENT_AT_BOUND(
                    f"{name} = {value:.4g} ended at a bound of the output-error refinement: not a "
                    "measurement",
                    numbers={"value": float(value)},
                    names=(name,),
                )
            )
    return out


def refined(fit, refinement: Refinement):  # noqa: ANN001, ANN201 (MultibodyFit in and out)
    """``fit`` carrying the refinement (and, when used, its parameters: values, std,
    covariance, the model, the status); the fit's states are unchanged. The equation-error
    findings about the parameters' values become context (``info``, marked as that stage's)
    when the refinement's values replace them. The status is the refinement's, ``at_bound``
    when a body ends at the lower end of its box."""
    found = refinement_findings(refinement)
    if not refinement.used:  # far worse than its start: the equation-error values stay
        return dataclasses.replace(fit, refinement=refinement, findings=(*fit.findings, *found))
    model = fit.model.with_values(dict(zip(refinement.names, refinement.values, strict=True)))
    lower = refinement.lower if refinement.lower is not None else np.zeros(len(fit.names))
    down = collapsed(fit.names, refinement.values, fit.initial_values, lower)
    status = refinement.status
    if status is Status.OK and down:
        status = Status.AT_BOUND
    earlier = tuple(_as_stage(f) if f.code in _VALUE_CODES else f for f in fit.findings)
    return dataclasses.replace(
        fit,
        values=refinement.values.copy(),
        std=refinement.std.copy(),
        covariance=refinement.covariance.copy(),
        model=model,
        refinement=refinement,
        findings=(*earlier, *found),
        at_bound=list(refinement.at_bound),
        collapsed=down,
        status=status,
        message=refinement.message,
    )


def summary(refinement: Refinement) -> str:
    """One line: the refinement's status, cost and windowed simulation error before and after
    (and, when its values were not used, that they were not)."""
    used = "" if refinement.used else "not used, "
    return (
        f"output-error refinement ({used}{refinement.status}, {refinement.evaluations} "
        f"simulations of {refinement.windows} window(s) in the last stage): simulation error "
        "over the windows per joint, first stage's start -> last stage's end: "
        + ", ".join(
            f"{n} {1e3 * refinement.rms_start[n]:.3g} -> {1e3 * refinement.rms[n]:.3g} mrad"
            for n in refinement.rms
        )
    )


def skip_reason(fit) -> str | None:  # noqa: ANN001
    """Why :func:`refine` would not run on ``fit`` (None: it runs): no estimated parameter, or
    dry friction that is not a constant torque (``r mu`` or Stribeck: their steps go through
    Lemke one trajectory at a time, ~100x the batched box)."""
    if not fit.names:
        return "no estimated parameter"
    model = fit.model
    for hinge in model.hinges:
        for slot in ("dry", "stribeck_delta"):
            name = f"{hinge.name}.{slot}"
            if name in fit.names or model.values[model.index(name)] != 0.0:
                return (
                    f"{name}: the refinement simulates constant Coulomb torques (coulomb) only, "
                    "not r*mu or Stribeck friction"
                )
    return None
