"""Output-error refinement of a multibody fit: the parameters that make physid's own SPOOK stepper
(:mod:`physid.multibody.simulate`, paper A eqs. 2.8-2.28) reproduce the measured angles, by
multiple shooting over windows of the recordings.

Paper A's estimator (:mod:`physid.multibody.estimate`) is an equation-error method: the states
are free and the dynamics are soft residuals weighted by ``kappa`` (eq. 3.18). At low sample rates
and high noise the states can follow the noise and the parameters then explain the impulse
residuals rather than the motion: on a 20 Hz Furuta with 30 mrad of noise and a sticking arm the
arm's inertia collapsed and its Coulomb torque went to viscous friction (docs/multibody.md,
issue 27), while the true parameters simulated the recording to 1.2x the noise. Here the
dynamics are hard: each window of ``window_seconds`` starts from its own state (joint angles and
rates, estimated, started from the fit's states) and is simulated with the parameters; the
residuals are the simulated minus measured angles at the measured samples, each divided by its
joint's noise std (the fit's ``noise``), so the cost is the negative log-likelihood of Gaussian
measurement noise. Windows keep the problem well posed where one long rollout would not be (a
phase error grows through a 40 s swing; Bock's multiple shooting, as paper B's windows).

Solved by the condensed Levenberg-Marquardt of :mod:`physid.numerics.condensed_lm` (each window's
state eliminated by its Schur complement) with forward-difference Jacobians: every window and
every perturbation is one trajectory of one batched rollout (:meth:`Stepper.step_batch`), whose
dry-friction steps are a box QP solved for the whole batch at once
(:func:`physid.multibody.mlcp.box_friction_velocity`). Standard deviations: the larger of
Gauss-Newton and the window-clustered sandwich (:func:`physid.numerics.condensed_lm.
parameter_std`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from physid.errors import InputError
from physid.multibody.simulate import Stepper, inertia_problem, state_from_joints
from physid.numerics.condensed_lm import Blocks, parameter_std, solve

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
#: A window must span at least this many model steps of the refinement and sample periods of
#: every recording: each window's own first state (an angle and a rate per joint) takes two
#: samples of each joint, so only a third one says anything about the parameters (windows of
#: one 10 ms step on a 1 ms recording gave 300 windows and hinge2.viscous 0.00027 +- 7e5).
MIN_WINDOW_INTERVALS = 2
#: The refinement's values are kept only if no parameter's std exceeds both its own value and
#: this many times its equation-error std: windows that do not determine a parameter (a std of
#: 2.6e5 kg m^2 for an inertia of 0.0037 whose equation-error std was 0.0039) are no estimate,
#: and the equation-error one is kept instead.
MAX_STD_GROWTH = 100.0


def check_refine_options(
    recordings: Sequence, h_fit: float, h: float | None, window_seconds: Sequence[float]
) -> None:
    """InputError naming the option, before any fit, for a refinement that cannot refine:
    ``--refine-dt`` (``h``; None: the fit's ``h_fit``) coarser than both the fit's step and
    every recording's median sample period (a cruder model than the one it would replace, which
    also skips most samples: ``--refine-dt 1`` on 1 ms samples gave Izz 0.015 +- 1e6 for a truth
    of 0.003), and a finite window shorter than :data:`MIN_WINDOW_INTERVALS` refinement steps
    or sample periods of a recording (its own first state takes all its samples)."""
    step = h_fit if h is None else float(h)
    periods = [(float(np.median(np.diff(np.asarray(rec.t, float)))), rec) for rec in recordings]
    if not periods:
        return
    finest, finest_rec = min(periods, key=lambda item: item[0])
    coarsest, coarsest_rec = max(periods, key=lambda item: item[0])
    limit = max(h_fit, finest)
    if step > limit * (1 + 1e-9):
        raise InputError(
            f"{step:g} s is coarser than both the fit's step (--dt {h_fit:g} s) and the median "
            f"sample period of {finest_rec.source or 'the recording'} ({finest:.6g} s): it "
            "would refine a cruder model than the fit's and skip most samples; give at most "
            f"{limit:.6g} s (finer steps simulate the model closer to the data)",
            source="--refine-dt",
        )
    shortest = MIN_WINDOW_INTERVALS * max(step, coarsest)
    for length in window_seconds:
        if np.isfinite(length) and length < shortest * (1 - 1e-9):
            what = (
                f"{MIN_WINDOW_INTERVALS} refinement steps of {step:g} s"
                if step >= coarsest
                else f"{MIN_WINDOW_INTERVALS} sample periods of "
                f"{coarsest_rec.source or 'the recording'} ({coarsest:.6g} s)"
            )
            raise InputError(
                f"a window of {length:g} s is shorter than {what}: a window's first angle and "
                "rate take two samples of each joint, so such windows say nothing about the "
                f"parameters; give windows of at least {shortest:.6g} s, or 'whole'",
                source="--refine-windows",
            )


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
    status: str  # :func:`stages_status`
    message: str
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

    def to_dict(self) -> dict:
        return {
            "status": self.status,
            "message": self.message,
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
                    self.names, self.fit_values, self.fit_std, self.start_values, self.values,
                    self.std, strict=True,
                )  # fmt: skip
            },
        }


class WindowProblem:
    """The windows of a fit's recordings and their batched simulation. ``fit``: a
    :class:`physid.multibody.estimate.MultibodyFit` (its model, step, segments, states,
    estimated names and per-joint noise)."""

    def __init__(  # noqa: ANN001
        self, fit, recordings: list, h: float, window_seconds: float, known: dict | None = None
    ) -> None:
        from physid.multibody.estimate import resample

        self.model, self.h, self.names = fit.model, float(h), list(fit.names)
        self.stepper = Stepper(fit.model, self.h)
        self.slots = np.array([fit.model.index(n) for n in self.names], int)
        self.m = len(fit.model.hinges)
        sigma = np.array([fit.noise[j]["std"] for j in fit.model.joint_names], float)
        self.inv_sigma = 1.0 / np.maximum(sigma, 1e-12)
        # the recordings at the refinement's step: angles at the steps nearest a sample
        self.segments = [resample(rec, self.h, None)[0] for rec in recordings]
        self.starts, self.lengths, self.segment_of, entries = [], [], [], []
        for s, seg in enumerate(self.segments):
            n = len(seg.y)
            whole = not np.isfinite(window_seconds) or window_seconds >= (n - 1) * self.h
            length = n - 1 if whole else max(1, int(round(window_seconds / self.h)))
            bounds = list(range(0, n - 1, length)) + [n - 1]
            if len(bounds) > 2 and bounds[-1] - bounds[-2] < length // 2:
                bounds.pop(-2)  # a short tail joins the window before it
            for a, b in zip(bounds[:-1], bounds[1:], strict=True):
                seen = np.argwhere(seg.w[a : b + 1] > 0)  # (k, j) pairs, k from the start
                if len(seen) < 2:
                    continue
                self.starts.append(a)
                self.lengths.append(b - a)
                self.segment_of.append(s)
                entries.append((seen[:, 0], seen[:, 1], seg.y[a + seen[:, 0], seen[:, 1]]))
        self.W = len(self.starts)
        if self.W == 0:
            raise InputError(
                f"no window of {window_seconds:g} s holds two measured samples: give windows "
                "longer than two sample periods",
                source="--refine-windows",
            )
        self.R = max((len(e[0]) for e in entries), default=0)
        self.steps = np.zeros((self.W, self.R), int)
        self.joint = np.zeros((self.W, self.R), int)
        self.y = np.zeros((self.W, self.R))
        self.mask = np.zeros((self.W, self.R), bool)
        for w, (k, j, y) in enumerate(entries):
            self.steps[w, : len(k)], self.joint[w, : len(k)], self.y[w, : len(k)] = k, j, y
            self.mask[w, : len(k)] = True
        self.L = max(self.lengths, default=0)
        self.u = np.zeros((self.L, self.W, self.m))
        for w, (a, n, s) in enumerate(zip(self.starts, self.lengths, self.segment_of, strict=True)):
            self.u[:n, w] = self.segments[s].u[a : a + n]
        # each window's first state: an earlier stage's (``known``: (segment, step) -> (angles,
        # rates)) or the fit's estimated state at the nearest of its steps
        angles0, rates0 = [], []
        known = {} if known is None else known
        for a, s in zip(self.starts, self.segment_of, strict=True):
            if (s, a) in known:  # a window of an earlier stage started here
                angles0.append(known[s, a][0])
                rates0.append(known[s, a][1])
                continue
            i = min(int(round(a * self.h / fit.h)), len(fit.states.q[s]) - 1)
            q, v = fit.states.q[s][i][None], fit.states.v[s][i][None]
            angle, rate = self.stepper.joint_states(q, v)  # joint states do not depend on h
            angles0.append(angle[0])
            rates0.append(rate[0])
        self.angles0, self.rates0 = np.array(angles0), np.array(rates0)
        self.pin_data = fit.model.pin_model.createData()

    def chi(self, x: np.ndarray) -> np.ndarray:
        out = self.model.values.copy()
        out[self.slots] = x
        return out

    def state(self, angles: np.ndarray, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The maximal-coordinate state of joint ``angles`` and ``rates``."""
        return state_from_joints(self.model, angles, rates, self.pin_data)

    def initial_state(self, w: int, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Window ``w``'s maximal-coordinate state with joint offsets ``d`` = (angles, rates)."""
        return self.state(self.angles0[w] + d[: self.m], self.rates0[w] + d[self.m :])

    def residuals(self, chi: np.ndarray, window: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """(B, R) residuals of trajectories ``b``: window ``window[b]`` started with joint
        offsets ``offsets[b]`` and simulated with parameters ``chi[b]``; ``inf`` rows for a
        parameter set that cannot be simulated (a body without positive inertia)."""
        B = len(window)
        q = np.empty((B, 7 * self.model.n_bodies))
        v = np.empty((B, 6 * self.model.n_bodies))
        for b in range(B):
            q[b], v[b] = self.initial_state(int(window[b]), offsets[b])
        ok = np.array([inertia_problem(self.model, c) is None for c in chi])
        out = np.full((B, self.R), np.inf)
        if not ok.any():
            return out
        chi_ok, w_ok = chi[ok], window[ok]
        q, v = q[ok], v[ok]
        wanted = np.zeros((self.L + 1, len(w_ok)), bool)
        rows, cols = np.nonzero(self.mask[w_ok])
        wanted[self.steps[w_ok][rows, cols], rows] = True
        # joint angles only at the steps that carry a sample (at 20 Hz and 1 ms, one in 50):
        # keeping every step's maximal state took 0.4 GB for a whole 200,000-step recording
        seen = wanted.any(axis=1)
        angles = np.full((self.L + 1, len(w_ok), self.m), np.nan)
        if seen[0]:
            angles[0] = self.stepper.joint_states(q, v)[0]
        last = int(np.max(np.flatnonzero(seen), initial=0))
        with np.errstate(all="ignore"):
            for k in range(last):
                q, v, _ = self.stepper.step_batch(q, v, self.u[k, w_ok], chi_ok)
                if seen[k + 1]:
                    angles[k + 1] = self.stepper.joint_states(q, v)[0]
        sim = angles[self.steps[w_ok], np.arange(len(w_ok))[:, None], self.joint[w_ok]]
        error = np.angle(np.exp(1j * (sim - self.y[w_ok])))  # wrapped to (-pi, pi]
        r = np.where(self.mask[w_ok], error * self.inv_sigma[self.joint[w_ok]], 0.0)
        out[ok] = np.where(np.isfinite(r), r, np.inf)
        return out


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
    own, :class:`physid.multibody.estimate.Recording`) at the model step ``h`` (default the
    fit's; module docstring). ``window_seconds``: the windows' length per stage; each stage
    starts from the previous one's parameters and window states (a longer window reads what
    a short one cannot: the decay of a swing across windows, which short windows' free states
    absorb). The first stage starts from whichever of the fit's values and its start values
    (the config's) gives the lower windowed cost: an equation-error fit that collapsed an
    inertia is a worse start than the config's guess. ``max_evaluations``: residual
    evaluations per stage (each Jacobian costs ``len(names) + 2 m`` more batched rollouts)."""
    clock = time.perf_counter()
    h = fit.h if h is None else float(h)
    names = list(fit.names)
    lower, upper = fit.model.bounds(names)
    fitted = np.clip(fit.values, lower, upper)
    configured = np.clip(fit.initial_values, lower, upper)
    known: dict = {}
    x = None
    stages = []
    for length in window_seconds:
        problem = WindowProblem(fit, recordings, h, length, known)
        evaluate = _evaluator(problem)
        if x is None:
            zero = np.zeros((problem.W, 2 * problem.m))
            candidates = (("fit", fitted), ("config", configured))
            costs = {k: evaluate(v, zero).cost for k, v in candidates}
            start = min(costs, key=lambda k: costs[k] if np.isfinite(costs[k]) else np.inf)
            x = fitted if start == "fit" else configured
            x_start = x
        stage = _stage(problem, evaluate, x, lower, upper, max_evaluations, progress)
        x = stage.solution.x
        known = {
            (s, a): (problem.angles0[w] + stage.solution.offsets[w, : problem.m],
                     problem.rates0[w] + stage.solution.offsets[w, problem.m :])
            for w, (s, a) in enumerate(zip(problem.segment_of, problem.starts, strict=True))
        }  # fmt: skip
        stages.append(stage)
    first, last = stages[0], stages[-1]
    solution, problem = last.solution, last.problem
    if len(stages) == 1:  # the first stage's windows, from the fit's states: already evaluated
        cost_fit = float(costs["fit"])
    else:  # the last stage's windows started from the fit's own states, not an earlier stage's
        fresh = WindowProblem(fit, recordings, h, window_seconds[-1])
        cost_fit = float(_evaluator(fresh)(fitted, np.zeros((fresh.W, 2 * fresh.m))).cost)
    variance = 2.0 * solution.cost / max(last.n_res - last.n_unknowns, 1)
    try:
        covariance = solution.normal.covariance_x() * variance
    except np.linalg.LinAlgError:
        covariance = np.full((len(names), len(names)), np.nan)
    first_states = []
    for s in range(len(recordings)):
        if (s, 0) in known:
            first_states.append(problem.state(*known[s, 0]))
        else:
            first_states.append((fit.states.q[s][0], fit.states.v[s][0]))
    # the solver projects onto a bound exactly (np.clip)
    inside = (lower < solution.x) & (solution.x < upper)
    at_bound = [n for n, ok in zip(names, inside, strict=True) if not ok]
    std = parameter_std(solution.normal, solution.cost, last.n_res, last.n_unknowns)
    std[~inside] = np.nan  # a parameter held at its bound has no spread: not a measurement
    fit_std = np.asarray(fit.std, float)
    reason = rejection(names, solution.x, std, fit_std, float(solution.cost), cost_fit)
    return Refinement(
        names=names,
        start_values=x_start,
        start=start,
        values=solution.x.copy(),
        std=std,
        covariance=covariance,
        cost_start=float(first.start_cost),
        cost=float(solution.cost),
        rms_start=_joint_rms(first.problem, first.start_r),
        rms=_joint_rms(problem, solution.residual),
        windows=problem.W,
        window_seconds=[float(v) for v in window_seconds],
        samples=last.n_res,
        evaluations=sum(st.solution.nfev for st in stages),
        jacobians=sum(st.solution.njev for st in stages),
        status=stages_status([st.solution.status for st in stages]),
        message="; ".join(st.solution.message for st in stages),
        seconds=time.perf_counter() - clock,
        h=h,
        first_states=first_states,
        segments=problem.segments,
        at_bound=at_bound,
        fit_values=np.asarray(fit.values, float).copy(),
        fit_std=fit_std.copy(),
        used=reason is None,
        not_used_because=reason or "",
        cost_fit=cost_fit,
    )


def stages_status(codes: Sequence[int]) -> str:
    """The refinement's status from its stages' solver codes (:mod:`physid.numerics.condensed_lm`:
    positive converged, 0 the evaluation budget, -1 no step from the start decreased the cost):
    "converged", "no step decreased the cost" (the start is where it stopped, not a budget
    that ran out) or "budget"."""
    if all(code > 0 for code in codes):
        return "converged"
    if any(code == -1 for code in codes):
        return "no step decreased the cost"
    return "budget"


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
    equation-error std (the windows do not determine it). A silent replacement turned good
    estimates into 0.00027 +- 7e5 (windows of one step)."""
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


def refined(fit, refinement: Refinement):  # noqa: ANN001, ANN201 (MultibodyFit in and out)
    """``fit`` carrying the refinement's parameters (values, std, covariance, the model) and
    the refinement itself (the equation-error values in ``refinement.fit_values``); the fit's
    states are unchanged and its notes are marked as the equation-error stage's; one more note
    (a warning) names each parameter the refinement left at a bound. How the simulation error
    moved is the report's line (:func:`summary`), not a warning."""
    import dataclasses

    if not refinement.used:  # far worse than its start: the equation-error values stay
        note = (
            f"output-error refinement not used: {refinement.not_used_because}; the "
            "equation-error values are kept (result.json 'refinement' has the refined ones)"
        )
        return dataclasses.replace(fit, refinement=refinement, notes=[*fit.notes, note])
    model = fit.model.with_values(dict(zip(refinement.names, refinement.values, strict=True)))
    notes = [
        f"{n} = {v:.4g} ended at a bound of the output-error refinement: not a measurement"
        for n, v in zip(refinement.names, refinement.values, strict=True)
        if n in refinement.at_bound
    ]
    return dataclasses.replace(
        fit,
        values=refinement.values.copy(),
        std=refinement.std.copy(),
        covariance=refinement.covariance.copy(),
        model=model,
        refinement=refinement,
        notes=[*(f"equation-error stage: {n}" for n in fit.notes), *notes],
        at_bound=list(refinement.at_bound),
    )


def summary(refinement: Refinement) -> str:
    """One line: the refinement's status, cost and windowed simulation error before and after
    (and, when its values were not used, that they were not)."""
    used = "" if refinement.used else "not used, "
    return (
        f"output-error refinement ({used}{refinement.status}, {refinement.evaluations} "
        "simulations of "
        f"{refinement.windows} window(s) in the last stage, {refinement.seconds:.0f} s): "
        "simulation error over the windows per joint, first stage's start -> last stage's end: "
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
