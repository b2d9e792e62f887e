"""Joint state and parameter estimation (paper A §3-§4.4): initialise, run LM, compute the
linearised covariance; returns a :class:`MultibodyFit` whose ``status`` (a
:class:`~physid.status.Status`) and ``findings`` say how it ended.

The estimated masses and principal inertias have the URDF's as a prior and a plausibility box
(:mod:`.prior`), and the start can be simulated. A fit that still ends with a body collapsed to
the lower end of its box is restarted from states consistent with the start parameters (a
physical point) and the lower cost is kept (``MB204``); what stays at a bound is named
(:mod:`.diagnose`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import physid.multibody.codes as codes
from physid.budget import Budget
from physid.findings import Finding
from physid.multibody.estimate.checks import (
    STATE_START_ITERATIONS,
    check_recordings,
    check_scale_fixed,
    default_budget,
    default_kappa,
)
from physid.multibody.estimate.covariance import parameter_sensitivity, residual_std
from physid.multibody.estimate.diagnose import (
    bound_findings,
    collapsed,
    identifiability_findings,
    not_identifiable,
)
from physid.multibody.estimate.lm import LMResult, LMTermination, levenberg_marquardt
from physid.multibody.estimate.observe import (
    NOISE_REF,
    init_cutoff,
    initial_states,
    joint_noise,
    resample,
)
from physid.multibody.estimate.prior import (
    PLAUSIBLE_FACTOR,
    PRIOR_FACTOR,
    LogPrior,
    WithPrior,
    inertial,
    physical_start,
    plausibility_box,
)
from physid.multibody.estimate.problem import Problem, Segment, States
from physid.multibody.model.spec import MultibodyModel
from physid.multibody.step.simulate import inertia_problem
from physid.status import Status

#: Restarts from consistent states: LM iterations of the state-only start.
RESTART_STATE_ITERATIONS = 10
#: The largest turn [rad] of a body in one LM step (a bounded step: a wild Gauss-Newton step
#: can turn states by astronomic angles, whose sine and cosine are NaN).
MAX_TURN = 0.5


@dataclass(frozen=True)
class MultibodyRecording:
    """Recorded joint angles (N, m) and control signal (N, m) at times ``t`` (N,)."""

    t: np.ndarray
    angles: np.ndarray
    control: np.ndarray
    source: str = ""


@dataclass
class MultibodyFit:
    """Result of :func:`identify`: ``status`` (never an exception), the solver's
    ``termination`` and a one-line ``message``, the ``findings``, the estimates and what they
    rest on."""

    status: Status
    termination: LMTermination
    message: str
    names: list[str]
    values: np.ndarray
    initial_values: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    singular_values: np.ndarray
    not_identifiable: list[str]
    iterations: int
    cost: float  # ||Dz||^2 with the weights (eq. 3.18) and the prior
    cost_per_step: float  # cost / number of time steps (the paper's MSE)
    observation_mse: float  # squared angle error [rad^2] per observed step (unweighted)
    impulse_mse: float  # unweighted impulse residuals squared / steps
    cost_history: list[float]
    gain_ratio_history: list[float]
    h: float
    kappa: float
    states: States
    segments: list[Segment]
    model: MultibodyModel
    seconds: float
    findings: tuple[Finding, ...] = ()
    state_iterations: int = 0  # LM iterations of the state-only starts (:func:`consistent_states`)
    noise: dict[str, dict] = field(default_factory=dict)  # per joint: std [rad], source, weight
    init_filter_hz: list[float | None] = field(default_factory=list)  # per recording
    observed_steps: int = 0  # model steps carrying a recorded sample (all recordings)
    at_bound: list[str] = field(default_factory=list)  # estimated parameters ending at a bound
    collapsed: list[str] = field(default_factory=list)  # masses/inertias at their lower bound
    lower: np.ndarray | None = None  # the box of the estimated parameters
    upper: np.ndarray | None = None
    # the output-error refinement (physid.multibody.refine.output_error.Refinement) whose
    # values this fit carries, if any; ``states`` and the impulse residuals stay the
    # equation-error fit's
    refinement: Any = None

    @property
    def converged(self) -> bool:
        return self.termination.converged


@dataclass
class _Setup:
    """Everything a fit's LM runs share: the model (start repaired), the estimated names, their
    start and box, the problem with its prior, the initial states, the budget, the findings so
    far, and the noise and initialisation choices."""

    model: MultibodyModel
    names: list[str]
    p0: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    problem: Problem
    objective: WithPrior
    states: States
    budget: Budget
    options: dict
    inequality: tuple[np.ndarray, np.ndarray]
    findings: list[Finding]
    noise: dict[str, dict]
    filters: list[float | None]


def consistent_states(
    lm_args: tuple, p0: np.ndarray, lower: np.ndarray, upper: np.ndarray, **options: object
) -> LMResult:
    """The states estimated with the parameters held at their start (a state-only LM, as the
    cross-validation of §4.5); returns its :class:`LMResult`. :func:`identify` restarts the
    joint LM from them when a mass or inertia collapsed to its lower bound.

    Why: the filtered initial states of §4.4 violate the stiff hinge rows (most of the start
    cost is the linear impulse rows of the chord velocities), so the first joint Gauss-Newton
    step carries a parameter step of a linearisation valid for the states only. With Stribeck
    friction that step can throw the fit into a high-friction corner which LM never leaves, at
    a cost orders of magnitude above the dry fit the Stribeck model contains; from these states
    the same fit reaches it."""
    residual, retract, x0, n_state = lm_args
    p = np.clip(p0, lower, upper)
    return levenberg_marquardt(residual, retract, x0, p, p, p, n_state, **options)


def _step_scale(problem: Problem):  # noqa: ANN202
    """``dx -> factor``: at most :data:`MAX_TURN` of turn per body and step."""
    n6, ns = problem.ns // 2, problem.ns

    def scale(dx: np.ndarray) -> float:
        states = dx[: problem.n_state_vars].reshape(-1, ns)[:, :n6].reshape(-1, 6)[:, 3:]
        turn = float(np.max(np.linalg.norm(states, axis=1), initial=0.0))
        return MAX_TURN / turn if turn > MAX_TURN else 1.0

    return scale


def _prepare(
    model: MultibodyModel,
    recordings: list[MultibodyRecording],
    names: list[str],
    settings: dict,
) -> _Setup:
    """Check the inputs, repair the start, weigh the observations, build the problem with its
    prior and box, and initialise the states (§4.4)."""
    h = settings["h"]
    steps = check_recordings(recordings, h)
    for name in names:
        model.index(name)
    if names:
        check_scale_fixed(model, names, recordings)
    model, repaired = physical_start(model, names)
    findings = list(repaired)
    given = dict(model.noise if settings["noise"] is None else settings["noise"])
    sigma, noise_source, floored = joint_noise(recordings, model.joint_names, given)
    for joint, step in floored.items():
        findings.append(
            codes.QUANTIZED_ANGLES(
                f"{joint}'s angles move in steps of {step:.4g} rad: its noise is floored at "
                f"{step / np.sqrt(12):.3g} rad",
                numbers={"step_rad": step, "noise_rad": step / np.sqrt(12)},
                names=(joint,),
            )
        )
    weights = np.minimum(1.0, NOISE_REF / sigma)
    cutoff = settings["cutoff_hz"]
    resampled = [resample(rec, h, cutoff, weights) for rec in recordings]
    filters = [init_cutoff(1.0 / float(np.median(np.diff(rec.t))), cutoff) for rec in recordings]
    segments = [seg for seg, _ in resampled]
    kappa = default_kappa(h) if settings["kappa"] is None else float(settings["kappa"])
    problem = Problem(model, h, names, kappa, segments, settings["compile"])
    findings += [codes.NOT_COMPILED(note) for note in problem.fn.notes]
    init = [initial_states(model, smooth, h) for _, smooth in resampled]
    p0 = np.array([model.values[model.index(n)] for n in names])
    lower, upper = plausibility_box(model, names, p0)
    unit = float(np.min(sigma * weights))  # one whitened angle residual (observe.NOISE_REF)
    prior = LogPrior.of(names if settings["prior"] else [], p0, unit)
    findings += _box_findings(model, names, prior)
    budget = default_budget(steps, settings["max_iterations"])
    options = {key: settings[key] for key in ("max_iterations", "ptol", "ftol")}
    options |= {"budget": budget, "step_scale": _step_scale(problem)}
    noise = {
        name: {"std": float(sd), "source": src, "weight": float(wt)}
        for name, sd, src, wt in zip(model.joint_names, sigma, noise_source, weights, strict=True)
    }
    return _Setup(
        model,
        names,
        p0,
        lower,
        upper,
        problem,
        WithPrior(problem, prior),
        States([q for q, _ in init], [v for _, v in init]),
        budget,
        options,
        model.triangle_inequalities(names),
        findings,
        noise,
        filters,
    )


def _box_findings(model: MultibodyModel, names: list[str], prior: LogPrior) -> list[Finding]:
    """``MB105``: which masses and principal inertias have the plausibility box (those the
    config does not bound) and the prior."""
    boxed = [n for n in names if inertial(n) and n not in model.lower and n not in model.upper]
    with_prior = [names[k] for k in prior.index]
    if not boxed and not with_prior:
        return []
    parts = []
    if boxed:
        parts.append(f"{', '.join(boxed)} within a factor {PLAUSIBLE_FACTOR:g} of the start")
    if with_prior:
        parts.append(
            f"{', '.join(with_prior)} with a log-normal prior at the start (one std a factor "
            f"{PRIOR_FACTOR:g})"
        )
    return [
        codes.PLAUSIBLE_BOX(
            "; ".join(parts),
            numbers={"prior_factor": PRIOR_FACTOR, "box_factor": PLAUSIBLE_FACTOR},
            names=sorted(set(boxed) | set(with_prior)),
        )
    ]


def _solve(setup: _Setup, states: States) -> tuple[LMResult, Any, list[Finding]]:
    """The joint LM from ``states`` and the covariance at its end: ``(lm, sensitivity,
    findings)``."""
    problem, objective = setup.problem, setup.objective
    lm = levenberg_marquardt(
        objective.residual,
        problem.retract,
        states,
        setup.p0,
        setup.lower,
        setup.upper,
        problem.n_state_vars,
        inequality=setup.inequality,
        **setup.options,
    )
    if lm.J is None:
        lm.r, lm.J = objective.residual(lm.x, lm.p, True)
    layout, row = [], 0
    ns, m = problem.ns, problem.fn.n_obs
    for seg in problem.segments:
        n = len(seg.y)
        counts = np.count_nonzero(seg.w, axis=0)  # angle rows at sampled steps only
        layout += [(row, ns, n), (row + n * ns, m, n, counts)]  # init + dynamics, then angles
        row += n * ns + n * m
    sens, findings = None, []
    if len(setup.p0):
        try:
            sigma = residual_std(lm.r, layout)
            if len(lm.r) > row:  # the prior's rows: one whitened unit each
                sigma[row:] = setup.objective.prior.weight * np.log(PRIOR_FACTOR)
            sens = parameter_sensitivity(lm.J, sigma, problem.n_state_vars, lm.p)
        except (ValueError, RuntimeError, np.linalg.LinAlgError) as error:
            findings.append(codes.NO_COVARIANCE(f"covariance not computed: {error}"))
    return lm, sens, findings


def _state_start(setup: _Setup, iterations: int) -> LMResult:
    lm_args = (
        setup.objective.residual,
        setup.problem.retract,
        setup.states,
        setup.problem.n_state_vars,
    )
    return consistent_states(
        lm_args,
        setup.p0,
        setup.lower,
        setup.upper,
        max_iterations=iterations,
        ftol=setup.options["ftol"],
        budget=setup.budget,
        step_scale=setup.options["step_scale"],
    )


def _joint_fit(setup: _Setup, state_start: bool) -> tuple[LMResult, Any, list[Finding], int]:
    """The joint LM (from states-first states when asked), restarted from states consistent
    with the start when it collapsed a body; ``(lm, sensitivity, findings, state iterations)``."""
    findings, state_iterations = [], 0
    if state_start and setup.names:
        pre = _state_start(setup, STATE_START_ITERATIONS)
        setup.states, state_iterations = pre.x, pre.iterations
        findings.append(
            codes.STATES_FIRST(
                f"states first estimated at the start parameters ({pre.iterations} it, cost "
                f"{pre.cost_history[0]:.3g} -> {pre.cost_history[-1]:.3g})",
                numbers={"iterations": pre.iterations, "cost": pre.cost_history[-1]},
            )
        )
    lm, sens, more = _solve(setup, setup.states)
    findings += more
    down = collapsed(setup.names, lm.p, setup.p0, setup.lower)
    if down:
        # the filtered states of §4.4 can lead LM into the collapse, where consistent states
        # reach a lower cost near the truth: restart from states consistent with the start (a
        # physical point), keep the lower cost
        pre = _state_start(setup, RESTART_STATE_ITERATIONS)
        state_iterations += pre.iterations
        retry = _solve(setup, pre.x)
        before, after = lm.cost_history[-1], retry[0].cost_history[-1]
        kept = after < before
        findings.append(
            codes.RESTARTED(
                f"{', '.join(down)} at the lower bound after {lm.termination} (cost "
                f"{before:.4g}); restarted from states estimated at the start parameters "
                f"({pre.iterations} it): cost {after:.4g}, {'kept' if kept else 'not kept'}",
                numbers={"cost_before": before, "cost_after": after, "kept": float(kept)},
                names=down,
            )
        )
        if kept:
            lm, sens, findings = retry[0], retry[1], findings + retry[2]
    return lm, sens, findings, state_iterations


def _fallback(setup: _Setup, lm: LMResult) -> list[Finding]:
    """When the end cannot be simulated (products of inertia made a body indefinite), the
    start is reported instead (``MB208``)."""
    chi = setup.model.values.copy()
    chi[[setup.model.index(n) for n in setup.names]] = lm.p
    problem = inertia_problem(setup.model, chi)
    if problem is None:
        return []
    lm.p = setup.p0.copy()
    lm.termination = LMTermination.FAILED
    return [codes.FALLBACK(f"{problem}: the start values are reported", names=setup.names)]


def _errors(setup: _Setup, r: np.ndarray) -> tuple[float, float, int]:
    """``(observation sum of squares [rad^2], impulse sum of squares, observed steps)``."""
    obs_sq, imp_sq, row, n_obs = 0.0, 0.0, 0, 0
    ns, m, kappa = setup.problem.ns, setup.problem.fn.n_obs, setup.problem.kappa
    for seg in setup.problem.segments:
        n = len(seg.y)
        imp_sq += float(r[row : row + n * ns] @ r[row : row + n * ns]) / kappa
        w = seg.w.ravel()
        obs = r[row + n * ns : row + n * ns + n * m][w > 0] / w[w > 0]  # rad, unweighted
        obs_sq += float(obs @ obs)
        n_obs += int(np.count_nonzero(np.any(seg.w > 0, axis=1)))
        row += n * ns + n * m
    return obs_sq, imp_sq, n_obs


def fit_status(termination: LMTermination, collapsed_names: list[str]) -> Status:
    """The fit's status: its solver's, and ``at_bound`` when it converged with a body
    collapsed to the lower end of its plausibility box (not an estimate)."""
    status = termination.status
    return Status.AT_BOUND if status is Status.OK and collapsed_names else status


def _result(
    setup: _Setup, lm: LMResult, sens: Any, found: list[Finding], extra: dict
) -> MultibodyFit:
    """The :class:`MultibodyFit` of the final LM run."""
    names, p0 = setup.names, setup.p0
    std = sens.std if sens else np.full(len(names), np.nan)
    bounds, at_bound, down = bound_findings(names, lm.p, p0, setup.lower, setup.upper)
    findings = setup.findings + found + bounds
    findings += identifiability_findings(names, lm.p, std, skip=at_bound)
    if lm.nonfinite_trials:
        findings.append(
            codes.REJECTED_STEPS(
                f"{lm.nonfinite_trials} trial steps had non-finite residuals and were rejected",
                numbers={"trials": lm.nonfinite_trials},
            )
        )
    obs_sq, imp_sq, n_obs = _errors(setup, lm.r)
    n_steps = sum(len(s.y) for s in setup.problem.segments)
    cost = float(lm.r @ lm.r)
    empty = np.zeros((0, 0))
    return MultibodyFit(
        status=fit_status(lm.termination, down),
        termination=lm.termination,
        message=lm.message,
        names=names,
        values=lm.p.copy(),
        initial_values=p0,
        std=std,
        covariance=sens.covariance if sens else empty,
        singular_values=sens.singular_values if sens else np.zeros(0),
        not_identifiable=not_identifiable(names, lm.p, std),
        iterations=lm.iterations,
        cost=cost,
        cost_per_step=cost / n_steps,
        observation_mse=obs_sq / max(n_obs, 1),
        impulse_mse=imp_sq / n_steps,
        cost_history=lm.cost_history,
        gain_ratio_history=lm.gain_ratio_history,
        h=setup.problem.h,
        kappa=setup.problem.kappa,
        states=lm.x,
        segments=setup.problem.segments,
        model=setup.model.with_values(dict(zip(names, lm.p, strict=True))),
        seconds=extra["seconds"],
        findings=tuple(findings),
        state_iterations=extra["state_iterations"],
        noise=setup.noise,
        init_filter_hz=setup.filters,
        observed_steps=n_obs,
        at_bound=at_bound,
        collapsed=down,
        lower=setup.lower,
        upper=setup.upper,
    )


def identify(
    model: MultibodyModel,
    recordings: list[MultibodyRecording],
    *,
    h: float = 0.01,
    kappa: float | None = None,
    names: list[str] | None = None,
    cutoff_hz: float | None | str = "auto",
    noise: dict[str, float] | None = None,
    state_start: bool = False,
    max_iterations: int = 20,
    ptol: float = 1e-4,
    ftol: float = 1e-9,
    compile: bool = False,
    prior: bool = True,
) -> MultibodyFit:
    """Estimate the states and the parameters ``names`` (default: ``model.estimate``; ``[]``
    for state estimation only, as in the cross-validation of §4.5) from ``recordings``.
    ``compile``: evaluate the per-step functions as C code compiled once per machine and
    cached (:mod:`.compiled`); the first call pays the compilation. ``kappa`` (Omega^-1 =
    kappa I, §4.4) defaults to :func:`~.checks.default_kappa` of ``h``. ``noise``: measurement
    noise [rad] per joint name (default ``model.noise``, the config's ``noise:``); joints it
    does not name get the noise estimated from the data (:mod:`.observe`), and each angle
    residual the weight ``min(1, NOISE_REF / sigma_j)``. ``cutoff_hz``: initialisation filter,
    ``"auto"`` (min(10 Hz, 0.4 x Nyquist)), a frequency or None. ``state_start``: estimate the
    states at the start parameters first (:data:`~.checks.STATE_START_ITERATIONS` iterations
    of :func:`consistent_states`) and start the joint LM from them. Not the default: it helps a
    low-rate fit started near the truth keep its dry friction, but can stall one started far
    off (an inertia twice its truth). ``prior``: the URDF's masses and principal inertias as a
    log-normal prior (:mod:`.prior`; their plausibility box holds either way)."""
    clock = time.perf_counter()
    names = list(model.estimate if names is None else names)
    settings = {
        "h": h,
        "kappa": kappa,
        "cutoff_hz": cutoff_hz,
        "noise": noise,
        "max_iterations": max_iterations,
        "ptol": ptol,
        "ftol": ftol,
        "compile": compile,
        "prior": prior,
    }
    setup = _prepare(model, recordings, names, settings)
    lm, sens, found, state_iterations = _joint_fit(setup, state_start)
    found += _fallback(setup, lm)
    extra = {"seconds": time.perf_counter() - clock, "state_iterations": state_iterations}
    return _result(setup, lm, sens, found, extra)
