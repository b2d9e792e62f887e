"""Identification of J/m and Coulomb's μ from noisy planar poses (paper D §5, eq. 27).

:func:`identify` validates the data, builds the NLP of :mod:`physid.impacts.identify_nlp` on a grid
n_s times finer than the camera's (eq. 25), solves it from each warm start built from the measured
poses (again from other J/m starts when the best does not fit the data to the noise level),
keeps the lowest objective, estimates the standard deviation of J/m from the curvature of the
objective profile, and judges whether J/m was identifiable at all (§5.2–5.3). Only the shared
geometry (:mod:`physid.impacts.geometry`) is used — never the simulator.

Choices beyond the paper, each for a stated reason: W_χ is the inverse noise variance (χᵀW_χχ is
then a χ² statistic, ≈ 3 N_m at the truth); the products of eq. (26) are penalised by their
weighted sum (the exact ℓ1 penalty of paper D ref. [46]) rather than its square, which IPOPT
handles better at the complementarity corner; and a continuation on the weights (see
:mod:`~physid.impacts.identify_nlp`). Weights and continuation were chosen on noise seeds disjoint
from those of ``benchmarks/impacts_table1.py``; the retry rule was designed from one of its cells
(docs/impacts.md says what that implies).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Literal

import numpy as np

from physid.budget import Budget
from physid.errors import InputError
from physid.impacts.geometry import (
    STANDARD_GRAVITY,
    Line,
    Shape,
    candidate_pairs,
    contact_frames,
    gravity_vector,
    min_gap,
)
from physid.impacts.identify_nlp import IdentificationNlp, SolveOutcome
from physid.impacts.identify_report import assemble_result, free_flight_result
from physid.impacts.results import IdentificationResult
from physid.progress import progress as progress_display


@dataclass(frozen=True)
class IdentifyOptions:
    """Settings of the identification; SI units, angles in radians.

    ``max_substep``: h̄ of eq. (25) [s]. ``noise_position`` [m], ``noise_angle`` [rad]: the data's
    noise, W_χ = diag(1/σ²) (``noise_angle=None``: σ_pos / largest body radius — the angle error of
    a rim point tracked with σ_pos). ``weight_slip`` [s²/m²] multiplies the two friction products,
    ``weight_gap`` [s/m²] the impulse–gap product (per-mass impulses). ``continuations``: schedules
    of factors applied to both weights in successive warm-started IPOPT solves; every schedule is
    run from every warm start and the lowest objective wins (neither schedule is best on all data:
    each ends in a worse local minimum on some throws). ``warm_starts``: initial
    trajectories — ``"bridged"`` (linear interpolation, except
    where the ballistic flight predicted from the two previous frames reaches a surface before the
    next frame: then that flight up to the contact) and ``"linear"``. ``inertia_ratio_init`` (None:
    half the bound ρ²) and ``mu_init`` start J/m [m²] and μ; μ ≤ ``mu_max``; ``mu_weight`` is the
    small price per unit μ that selects the least μ consistent with data showing no sliding.
    ``retry_inertia_ratios``: fractions of ρ² at which every warm start and schedule is solved
    again when the best fit does not explain the data to the noise level (its χ² exceeds
    3 N_m + 3·sqrt(6 N_m), the 3σ bound of χ²(3 N_m)): at 30 fps with μ = 0.1 the start value of
    J/m decides which local minimum IPOPT reaches; fits at the noise level skip the retries.
    ``profile_step``: relative step of J/m for the curvature-based standard deviation (0: skip
    the profiles; μ then counts as a lower bound when no contact slides faster than 1 cm/s);
    ``profile_polish``: how often a profile point with a lower objective may restart the solve.
    ``time_budget_s`` and ``iteration_budget``: the most wall time and IPOPT iterations of all
    solves together (None: :func:`default_budget`, scaled to the fine grid); when one is spent
    the solves stop and the result is "not converged: stopped by the ... budget" with the best
    iterate in its diagnostics.
    """

    max_substep: float = 1.0e-3
    noise_position: float = 1.0e-3
    noise_angle: float | None = None
    weight_slip: float = 1.0e2
    weight_gap: float = 1.0e4
    penalty: Literal["l1", "l2"] = "l1"
    continuations: tuple[tuple[float, ...], ...] = ((1e-3, 1e-2, 1e-1, 1.0), (1e-2, 1.0))
    warm_starts: tuple[str, ...] = ("bridged", "linear")
    inertia_ratio_init: float | None = None
    retry_inertia_ratios: tuple[float, ...] = (0.3, 0.7)
    mu_init: float = 0.5
    mu_max: float = 3.0
    mu_weight: float = 10.0
    profile_step: float = 0.02
    profile_polish: int = 3
    gravity: float | tuple[float, float] = STANDARD_GRAVITY
    max_iter: int = 3000
    tol: float = 1e-8
    print_level: int = 0
    time_budget_s: float | None = None
    iteration_budget: int | None = None

    @property
    def gravity_vector(self) -> np.ndarray:
        """(g_x, g_y) [m/s²]: ``gravity`` as a number is its magnitude along −y."""
        return gravity_vector(self.gravity)


# the most steps of the fine grid (eq. 25): 40 s of 240 fps video at h̄ = 1 ms; more is a
# recording in the wrong unit (time in ms makes every frame interval 1000x too long)
MAX_FINE_STEPS = 40_000
# plausible ranges of a pose file: |t| [s], |x|, |y| [m], |theta| [rad]
POSE_LIMITS = {"t": (1e9, "s"), "x": (1e6, "m"), "y": (1e6, "m"), "theta": (1e6, "rad")}


def default_budget(n_steps: int) -> Budget:
    """The budget of a fit on ``n_steps`` fine steps: 60 s + 0.2 s and 4,000 + 10 IPOPT
    iterations per step. The iterations are what separate a valid throw from an impossible one
    (60 fps, 0.2 s, 187 steps: 600 iterations; the 240 fps example of examples/impacts, 600
    steps: 1,415; a recording without a usable throw, a constant pose or positions in mm: 12k-18k
    before any budget). The wall time only bounds a slow machine's wait, with room for one: the
    240 fps example took 46.7 s on a loaded 2-core box (2026-11-25), and the former 20 s + 50 ms
    per step (50 s there) stopped it "not converged" under CI load."""
    return Budget(seconds=60.0 + 0.2 * n_steps, iterations=4000 + 10 * n_steps)


def validate_poses(
    shape: Shape,
    lines: list[Line],
    t: np.ndarray,
    q: np.ndarray,
    *,
    penetration_tol: float,
    source: str = "data",
) -> None:
    """Raise :class:`InputError` naming the row (data rows count from 1) and column at fault."""
    if t.ndim != 1 or q.shape != (t.size, 3):
        raise InputError(
            f"expected times (n,) and poses (n, 3), got {t.shape} and {q.shape}", source=source
        )
    if t.size < 3:
        raise InputError(f"need at least 3 poses, got {t.size}", source=source)
    for name, col in (("t", t), ("x", q[:, 0]), ("y", q[:, 1]), ("theta", q[:, 2])):
        limit, unit = POSE_LIMITS[name]
        bad = np.flatnonzero(~(np.abs(col) <= limit))  # NaN fails too
        if bad.size:
            raise InputError(
                f"row {bad[0] + 1}, column {name}: value is {float(col[bad[0]]):g}, outside "
                f"±{limit:g} {unit}",
                source=source,
            )
    bad = np.flatnonzero(np.diff(t) <= 0)
    if bad.size:
        i = bad[0] + 1
        raise InputError(
            f"row {i + 1}, column t: time {float(t[i]):.9g} does not increase "
            f"(row {i}: {float(t[i - 1]):.9g})",
            source=source,
        )
    for i, qi in enumerate(q):
        gap, line = min_gap(shape, lines, qi)
        if gap < -penetration_tol:
            raise InputError(
                f"row {i + 1} (t = {t[i]:.6g} s): the body {'starts' if i == 0 else 'is'} "
                f"inside surface {line + 1} ({lines[line].spec()}) by {-gap * 1e3:.3g}"
                f" mm, more than the noise explains ({penetration_tol * 1e3:.3g} mm); check "
                "shape, surfaces and units",
                source=source,
            )


def _check_motion(q: np.ndarray, sigma_position: float, sigma_angle: float, source: str) -> None:
    """Refuse poses that do not move beyond 3 noise standard deviations: a body at rest shows
    no flight and no impact, so J/m and μ cannot be identified (IPOPT ground 50-130 s on it)."""
    spread = np.ptp(q, axis=0)
    if np.all(spread[:2] < 3 * sigma_position) and spread[2] < 3 * sigma_angle:
        raise InputError(
            f"the body does not move: x, y and theta vary by {spread[0]:.3g} m, {spread[1]:.3g} m "
            f"and {spread[2]:.3g} rad over {len(q)} poses, within 3 noise standard deviations "
            f"({sigma_position:g} m, {sigma_angle:.3g} rad): nothing to identify",
            source=source,
        )


def _ballistic_fit(
    t: np.ndarray, q: np.ndarray, t_fine: np.ndarray, weights: np.ndarray, gravity: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """Least-squares free flight through all frames: θ linear in t, (x, y) a parabola with the
    gravity vector (g_x, g_y) [m/s²].

    Returns χ² (with W_χ) and the fitted poses and velocities on the fine grid. If χ² is what
    the noise explains and the flight never reaches a surface, the data hold no contact (§5.3).
    """
    tau = t - t[0]
    A = np.column_stack([np.ones_like(tau), tau])
    target = q.copy()
    target[:, :2] -= 0.5 * gravity * tau[:, None] ** 2
    coef, *_ = np.linalg.lstsq(A, target, rcond=None)
    chi2 = float(np.sum(weights * (A @ coef - target) ** 2))
    tau_f = t_fine - t[0]
    q_fine = coef[0] + tau_f[:, None] * coef[1]
    q_fine[:, :2] += 0.5 * gravity * tau_f[:, None] ** 2
    v_fine = np.tile(coef[1], (t_fine.size, 1))
    v_fine[:, :2] += gravity * tau_f[:, None]
    return chi2, q_fine, v_fine


def _grid(
    t_meas: np.ndarray, max_substep: float, source: str = "data"
) -> tuple[int, np.ndarray, np.ndarray]:
    """Eq. (25): n_s = ceil(Δt_max / h̄); each frame interval i has n_s steps h_i = Δt_i / n_s.

    More than :data:`MAX_FINE_STEPS` steps is an InputError naming the longest frame interval
    (time in milliseconds, a gap in the recording)."""
    dt = np.diff(t_meas)
    ns = max(1, math.ceil(dt.max() / max_substep - 1e-9))
    if ns * dt.size > MAX_FINE_STEPS:
        row = int(np.argmax(dt)) + 2
        raise InputError(
            f"row {row}, column t: a frame interval of {dt.max():.6g} s at a model step of "
            f"{max_substep:g} s makes {ns * dt.size:.3g} fine steps, more than "
            f"{MAX_FINE_STEPS}; is t in seconds, and the recording one throw without gaps?",
            source=source,
        )
    h = np.repeat(dt / ns, ns)
    return ns, h, np.r_[t_meas[0], t_meas[0] + np.cumsum(h)]


def initial_trajectory(
    kind: str,
    shape: Shape,
    lines: list[Line],
    t_meas: np.ndarray,
    q_meas: np.ndarray,
    t_fine: np.ndarray,
    ns: int,
    gravity: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Warm-start poses and velocities (backward differences, eq. 17) on the fine grid.

    ``"bridged"`` repairs linear interpolation where it hides a contact: when the flight through
    frames i-1 and i (gravity included) reaches a surface before frame i+1, the guess follows
    that flight down to the contact and then goes straight to frame i+1. Without this, the
    solver tends to put each impact on a camera frame instead of between frames.
    """
    q0 = np.column_stack([np.interp(t_fine, t_meas, q_meas[:, i]) for i in range(3)])
    if kind == "bridged":
        for i in range(1, t_meas.size - 1):
            dt_prev = t_meas[i] - t_meas[i - 1]
            v = (q_meas[i] - q_meas[i - 1]) / dt_prev
            v[:2] += 0.5 * gravity * dt_prev  # velocity at t_i on the parabola through both frames
            k0, k1 = ns * i, ns * (i + 1)
            tau = t_fine[k0 : k1 + 1] - t_meas[i]
            arc = q_meas[i] + tau[:, None] * v
            arc[:, :2] += 0.5 * gravity * tau[:, None] ** 2
            hit = np.flatnonzero([contact_frames(shape, lines, qa).gap.min() <= 0 for qa in arc])
            if hit.size == 0 or not 0 < hit[0] < ns:
                continue
            c = k0 + hit[0]
            q0[k0 : c + 1] = arc[: hit[0] + 1]
            w = (t_fine[c : k1 + 1] - t_fine[c]) / (t_fine[k1] - t_fine[c])
            q0[c : k1 + 1] = (1 - w)[:, None] * q0[c] + w[:, None] * q_meas[i + 1]
    elif kind != "linear":
        raise InputError(f"unknown warm start {kind!r} (bridged or linear)", source="warm_starts")
    v0 = np.zeros_like(q0)
    v0[1:] = np.diff(q0, axis=0) / np.diff(t_fine)[:, None]
    v0[0] = v0[1]
    return q0, v0


def noise_levels(opts: IdentifyOptions, shape: Shape) -> tuple[float, float]:
    """Position [m] and angle [rad] noise of the poses: the angle's, when not given, is the
    position noise over the shape's largest radius (a point on its rim moves that much)."""
    sig_p = opts.noise_position
    return sig_p, opts.noise_angle if opts.noise_angle is not None else sig_p / shape.max_radius


def make_nlp(shape, lines, pairs, h, ns, q_meas, weights, opts: IdentifyOptions, budget,
             **extra) -> IdentificationNlp:  # fmt: skip
    """Paper D's identification NLP (eq. 27) with the options' weights, penalty and solver
    settings; ``extra``: the pooled throws' ``breaks`` and ``idle`` intervals."""
    return IdentificationNlp(
        shape,
        lines,
        pairs,
        h,
        ns,
        q_meas,
        weights,
        weights=(opts.weight_slip, opts.weight_gap),
        penalty=opts.penalty,
        mu_weight=opts.mu_weight,
        mu_max=opts.mu_max,
        gravity=opts.gravity_vector,
        tol=opts.tol,
        max_iter=opts.max_iter,
        print_level=opts.print_level,
        budget=budget,
        **extra,
    )


def identify(
    shape: Shape,
    lines: list[Line],
    t_meas: np.ndarray,
    q_meas: np.ndarray,
    *,
    mass: float = 1.0,
    options: IdentifyOptions | None = None,
    source: str = "data",
    progress: bool = False,
) -> IdentificationResult:
    """Estimate J/m [m²] and μ from poses ``q_meas`` (N_m×3: x, y [m], θ [rad]) at ``t_meas`` [s].

    ``mass`` [kg] is fixed — only J/m is identifiable (paper D §5.2) — and only scales the
    reported impulses. Raises :class:`InputError` (naming ``source``, row and column) on unusable
    data. A fit that cannot determine J/m (no contact, or contacts that do not change the rotation)
    returns ``identifiable=False`` with NaN estimates and the reason in ``status``.
    """
    opts = options or IdentifyOptions()
    t_meas, q_meas = np.asarray(t_meas, dtype=float), np.asarray(q_meas, dtype=float)
    if not (mass > 0 and math.isfinite(mass)):
        raise InputError(f"mass = {mass!r} must be a positive number", source="mass")
    if not lines:
        raise InputError("at least one surface line is needed", source="surfaces")
    sig_p, sig_a = noise_levels(opts, shape)
    validate_poses(
        shape,
        lines,
        t_meas,
        q_meas,
        source=source,
        penetration_tol=5.0 * (sig_p + shape.max_radius * sig_a),
    )
    _check_motion(q_meas, sig_p, sig_a, source)
    pairs = candidate_pairs(shape, lines)
    ns, h, t_fine = _grid(t_meas, opts.max_substep, source)
    budget = default_budget(h.size)
    budget.seconds = opts.time_budget_s or budget.seconds
    budget.iterations = opts.iteration_budget or budget.iterations
    start = time.perf_counter()
    weights = np.array([sig_p, sig_p, sig_a]) ** -2.0
    gravity = opts.gravity_vector
    chi2, q_fly, v_fly = _ballistic_fit(t_meas, q_meas, t_fine, weights, gravity)
    n_frames = t_meas.size
    if chi2 < 3 * n_frames + 5 * math.sqrt(6 * n_frames) and all(
        contact_frames(shape, lines, qk).gap.min() > 0 for qk in q_fly
    ):
        return free_flight_result(
            shape,
            lines,
            pairs,
            mass=mass,
            ns=ns,
            t_fine=t_fine,
            q_fine=q_fly,
            v_fine=v_fly,
            t_meas=t_meas,
            q_meas=q_meas,
            chi2=chi2,
            solve_time=time.perf_counter() - start,
        )
    nlp = make_nlp(shape, lines, pairs, h, ns, q_meas, weights, opts, budget)
    r_init = opts.inertia_ratio_init if opts.inertia_ratio_init is not None else (0.5 * nlp.r_scale)
    solves_per_start = len(opts.warm_starts) * sum(len(c) for c in opts.continuations)
    bar = progress_display(
        total=solves_per_start + (3 if opts.profile_step else 0),
        desc="identify",
        unit="solve",
        enabled=progress,
        leave=False,
    )
    starts: list[dict] = []
    trajectories = {
        kind: initial_trajectory(kind, shape, lines, t_meas, q_meas, t_fine, ns, gravity)
        for kind in opts.warm_starts
    }
    best = _multistart(nlp, trajectories, [r_init], opts, starts, bar.update)
    fit_limit = 3 * n_frames + 3 * math.sqrt(6 * n_frames)
    if opts.retry_inertia_ratios and nlp.fit_value(best[0].x) > fit_limit:
        bar.total += solves_per_start * len(opts.retry_inertia_ratios)
        retry = _multistart(
            nlp,
            trajectories,
            [f * nlp.r_scale for f in opts.retry_inertia_ratios],
            opts,
            starts,
            bar.update,
        )
        if _better(retry[0], best[0]):
            best = retry
    result = finish(
        nlp, best, starts, opts, budget, bar.update, shape, lines, mass=mass, ns=ns,
        t_fine=t_fine, t_meas=t_meas, q_meas=q_meas, sigma_angle=sig_a, started=start,
    )  # fmt: skip
    bar.close()
    return result


def finish(
    nlp: IdentificationNlp,
    best: tuple,
    starts: list[dict],
    opts: IdentifyOptions,
    budget,
    tick,
    shape: Shape,
    lines: list[Line],
    **data,
) -> IdentificationResult:
    """The result of the best solve: the profile-likelihood standard deviations when asked and
    the budget allows (:func:`_profiles`), then :func:`assemble_result` (``data``: mass, ns,
    t_fine, t_meas, q_meas, sigma_angle, and ``started``, the ``perf_counter`` of the start)."""
    started = data.pop("started")
    iterations = sum(s["iterations"] for s in starts)
    outcome, multipliers = best
    r_std, mu_rises = math.nan, math.nan
    if opts.profile_step and outcome.success and not budget.exhausted():
        r_std, mu_rises, extra, outcome, multipliers = _profiles(
            nlp, outcome, multipliers, opts, tick
        )
        iterations += extra
    return assemble_result(
        shape,
        lines,
        nlp,
        outcome,
        **data,
        gravity=float(np.linalg.norm(opts.gravity_vector)),
        iterations=iterations,
        solve_time=time.perf_counter() - started,
        inertia_ratio_std=r_std,
        friction_rise=mu_rises,
        options=opts,
        starts=starts,
        stopped=f"stopped by {budget.describe()}" if budget.exhausted() else None,
    )


def _multistart(
    nlp: IdentificationNlp,
    trajectories: dict[str, tuple[np.ndarray, np.ndarray]],
    r_inits: list[float],
    opts: IdentifyOptions,
    starts: list[dict],
    tick,
) -> tuple[SolveOutcome, tuple]:  # noqa: ANN001
    """Solve from every (warm start, J/m start, schedule); append each to ``starts``; the best."""
    best: tuple[SolveOutcome, tuple] | None = None
    for kind, (q0, v0) in trajectories.items():
        for r_init in r_inits:
            x0 = nlp.initial_vector(q0, v0, r_init, opts.mu_init)
            for schedule in opts.continuations:
                if nlp.budget is not None and nlp.budget.exhausted() and best is not None:
                    return best
                outcome, multipliers = nlp.solve(x0, schedule, on_stage=tick)
                starts.append(start_record(nlp, outcome, kind, r_init, schedule))
                if best is None or _better(outcome, best[0]):
                    best = (outcome, multipliers)
    assert best is not None
    return best


def start_record(
    nlp: IdentificationNlp, outcome: SolveOutcome, kind: str, r_init: float, schedule
) -> dict:
    """What ``result.json`` records of one solve: its start, schedule, outcome and estimates."""
    return {
        "warm_start": kind,
        "inertia_ratio_init": r_init,
        "continuation": list(schedule),
        "converged": outcome.success,
        "objective": outcome.objective,
        "fit_chi2": nlp.fit_value(outcome.x),
        "inertia_ratio": float(outcome.x[-2] * nlp.r_scale),
        "friction": float(outcome.x[-1]),
        "iterations": outcome.iterations,
    }


def _profiles(
    nlp: IdentificationNlp, outcome: SolveOutcome, multipliers: tuple, opts: IdentifyOptions, tick
) -> tuple[float, float, int, SolveOutcome, tuple]:  # noqa: ANN001
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
            prof, mult = nlp.solve(
                outcome.x,
                (1.0,),
                warm=multipliers,
                on_stage=tick,
                fix_inertia=r_hat * (1 + sign * opts.profile_step),
            )
            iterations += prof.iterations
            trials.append((prof, mult))
        values = [p.objective if p.success else math.nan for p, _ in trials]
        best = min(range(2), key=lambda i: values[i] if math.isfinite(values[i]) else math.inf)
        lower = values[best] < outcome.objective - 1e-6 * abs(outcome.objective)
        if not lower or polish == opts.profile_polish:
            break  # (out of polishes: the profile stays the one around the current optimum)
        better, mult = nlp.solve(trials[best][0].x, (1.0,), warm=trials[best][1], on_stage=tick)
        iterations += better.iterations
        if not (better.success and better.objective < outcome.objective):
            break
        outcome, multipliers = better, mult
    curvature = (values[0] + values[1] - 2 * outcome.objective) / (opts.profile_step * r_hat) ** 2
    r_std = math.sqrt(2.0 / curvature) if curvature > 0 else math.nan
    mu_hat = float(outcome.x[-1])
    prof, _ = nlp.solve(outcome.x, (1.0,), fix_mu=1.1 * mu_hat, warm=multipliers, on_stage=tick)
    iterations += prof.iterations
    rise = prof.objective - outcome.objective - opts.mu_weight * 0.1 * mu_hat
    return r_std, (rise if prof.success else math.nan), iterations, outcome, multipliers


def _better(new: SolveOutcome, old: SolveOutcome) -> bool:
    """A converged solution beats a failed one; otherwise the lower objective wins."""
    if new.success != old.success:
        return new.success
    return new.objective < old.objective
