"""One J/m and one μ from several throws of the same body on the same surfaces (paper D eq. 27).

Paper D fits one throw. Throws of one body share J/m and μ (§5.2: the only identifiable inertial
quantity is J/m, whatever the throw), so the throws are fitted by a single NLP of eq. (27) whose
decision vector holds every throw's trajectory and impulses, and one r = J/m and one μ. The
throws are laid end to end on one fine grid (eq. 25, the same n_s for all): between the last frame
of a throw and the first of the next lies one frame interval of contact-free flight whose first
step drops eqs. (16)–(17), so each throw has its own initial pose and velocity (its "state")
while the remaining steps only carry that state to the next throw's first frame. The time axis of
the result is this pooled one; ``diagnostics["throws"]`` gives each throw's time offset, its
initial state and its share of the misfit χᵀW_χχ.

The solve starts from the throws' own fits laid end to end (:mod:`~physid.impacts.pooled_start`,
median J/m and μ of the throws); only when that does not converge or does not fit to the noise
level are the generic warm starts of the single-throw fit run as well, and the lowest objective
wins.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from physid.errors import InputError
from physid.impacts.geometry import Line, Shape, candidate_pairs
from physid.impacts.identify import (
    IdentifyOptions,
    _better,
    _check_motion,
    _grid,
    _multistart,
    default_budget,
    finish,
    identify,
    initial_trajectory,
    make_nlp,
    noise_levels,
    start_record,
    validate_poses,
)
from physid.impacts.pooled_start import stitched_start
from physid.impacts.results import IdentificationResult

#: A pooled fit of more throws than this is refused (each adds its whole trajectory to the NLP).
MAX_THROWS = 50


def stack_throws(
    throws: list[tuple[np.ndarray, np.ndarray]],
) -> tuple[np.ndarray, np.ndarray, list[int], list[float]]:
    """Lay the throws end to end: (t, q, index of each throw's first frame, time offsets [s]).

    Throw k+1 starts one frame interval (the smallest median interval of all throws) after the
    last frame of throw k; its times are shifted by the returned offset.
    """
    gap = min(float(np.median(np.diff(t))) for t, _ in throws)
    t_all, q_all, first, offsets = [], [], [], []
    end, n = None, 0
    for t, q in throws:
        offset = 0.0 if end is None else end + gap - float(t[0])
        t_all.append(t + offset)
        q_all.append(q)
        first.append(n)
        offsets.append(offset)
        n += t.size
        end = float(t[-1] + offset)
    return np.concatenate(t_all), np.concatenate(q_all), first, offsets


def identify_throws(
    shape: Shape,
    lines: list[Line],
    throws: list[tuple[np.ndarray, np.ndarray]],
    *,
    sources: list[str] | None = None,
    mass: float = 1.0,
    options: IdentifyOptions | None = None,
) -> IdentificationResult:
    """Pooled J/m [m²] and μ from several throws (each: times (n,) [s], poses (n, 3)).

    Every throw is validated like a single one (errors name its source, row and column). One throw
    is the single-throw fit of :func:`physid.impacts.identify.identify` on one grid.
    """
    opts = options or IdentifyOptions()
    sources = sources or [f"throw {i + 1}" for i in range(len(throws))]
    if not throws:
        raise InputError("no throws given", source="data")
    if len(throws) > MAX_THROWS:
        raise InputError(f"{len(throws)} throws, at most {MAX_THROWS} can be pooled", source="data")
    if not (mass > 0 and math.isfinite(mass)):
        raise InputError(f"mass = {mass!r} must be a positive number", source="mass")
    if not lines:
        raise InputError("at least one surface line is needed", source="surfaces")
    sig_p, sig_a = noise_levels(opts, shape)
    clean = []
    for (t, q), source in zip(throws, sources, strict=True):
        t, q = np.asarray(t, dtype=float), np.asarray(q, dtype=float)
        validate_poses(
            shape,
            lines,
            t,
            q,
            source=source,
            penetration_tol=5.0 * (sig_p + shape.max_radius * sig_a),
        )
        _check_motion(q, sig_p, sig_a, source)
        clean.append((t, q))
    t_meas, q_meas, first, offsets = stack_throws(clean)
    quick = replace(opts, profile_step=0.0, retry_inertia_ratios=())
    singles = [  # each throw alone first: their fits make the stitched start
        identify(shape, lines, t, q, mass=mass, options=quick, source=source)
        for (t, q), source in zip(clean, sources, strict=True)
    ]
    ns, h, t_fine = _grid(t_meas, opts.max_substep, ", ".join(sources))
    idle = np.zeros(h.size, dtype=bool)
    breaks = []
    for f in first[1:]:  # the frame interval before each throw's first frame: free flight
        idle[ns * (f - 1) : ns * f] = True
        breaks.append(ns * (f - 1))
    budget = default_budget(h.size)  # the union of the throws: the sum of their budgets
    budget.seconds += (len(clean) - 1) * default_budget(0).seconds
    budget.iterations += (len(clean) - 1) * default_budget(0).iterations
    budget.seconds = opts.time_budget_s or budget.seconds
    budget.iterations = opts.iteration_budget or budget.iterations
    start = time.perf_counter()
    weights = np.array([sig_p, sig_p, sig_a]) ** -2.0
    gravity = opts.gravity_vector
    pairs = candidate_pairs(shape, lines)
    nlp = make_nlp(
        shape, lines, pairs, h, ns, q_meas, weights, opts, budget, breaks=tuple(breaks), idle=idle
    )
    r_init = opts.inertia_ratio_init if opts.inertia_ratio_init is not None else 0.5 * nlp.r_scale
    trajectories = {
        kind: initial_trajectory(kind, shape, lines, t_meas, q_meas, t_fine, ns, gravity)
        for kind in opts.warm_starts
    }
    starts: list[dict] = []
    tick = lambda: None  # noqa: E731
    n_frames = t_meas.size
    fit_limit = 3 * n_frames + 3 * math.sqrt(6 * n_frames)
    fitted = [r for r in singles if r.identifiable]
    r0 = float(np.median([r.inertia_ratio for r in fitted])) if fitted else r_init
    mu0 = float(np.median([r.friction for r in fitted])) if fitted else opts.mu_init
    x0 = stitched_start(nlp, shape, lines, singles, first, ns, t_fine, r0, mu0)
    best = None
    if x0 is not None:
        outcome, multipliers = nlp.solve(x0, (1e-2, 1.0))
        starts.append(start_record(nlp, outcome, "stitched", r0, (1e-2, 1.0)))
        best = (outcome, multipliers)
    if best is None or not best[0].success or nlp.fit_value(best[0].x) > fit_limit:
        generic = _multistart(nlp, trajectories, [r_init], opts, starts, tick)
        best = generic if best is None or _better(generic[0], best[0]) else best
    if opts.retry_inertia_ratios and nlp.fit_value(best[0].x) > fit_limit:
        retry = _multistart(
            nlp,
            trajectories,
            [f * nlp.r_scale for f in opts.retry_inertia_ratios],
            opts,
            starts,
            tick,
        )
        best = retry if _better(retry[0], best[0]) else best
    result = finish(
        nlp,
        best,
        starts,
        opts,
        budget,
        tick,
        shape,
        lines,
        mass=mass,
        ns=ns,
        t_fine=t_fine,
        t_meas=t_meas,
        q_meas=q_meas,
        sigma_angle=sig_a,
        started=start,
    )
    ends = [*first[1:], n_frames]
    per_throw = []
    for k, (f, e) in enumerate(zip(first, ends, strict=True)):
        chi = result.fit_residual[f:e] * np.sqrt(weights)
        per_throw.append(
            {
                "source": sources[k],
                "frames": int(e - f),
                "time_offset_s": offsets[k],
                "q0": result.q[ns * f].tolist(),
                "v0": result.v[ns * f].tolist(),
                "fit_chi2": float(np.sum(chi**2)),
            }
        )
    diagnostics = dict(result.diagnostics, throws=per_throw, gravity_m_s2=gravity.tolist())
    return replace(result, diagnostics=diagnostics)
