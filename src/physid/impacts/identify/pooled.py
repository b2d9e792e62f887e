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

from dataclasses import replace

import numpy as np

from physid.errors import InputError
from physid.impacts.geometry import Line, Shape, candidate_pairs
from physid.impacts.identify.data import grid, warm_starts
from physid.impacts.identify.nlp import make_nlp
from physid.impacts.identify.options import IdentifyOptions, budget_of
from physid.impacts.identify.pooled_start import stitched_start
from physid.impacts.identify.single import check_throw, identify
from physid.impacts.identify.solves import Search, fit_limit
from physid.impacts.results import ImpactsIdentification

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
) -> ImpactsIdentification:
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
    clean = []
    for (t, q), source in zip(throws, sources, strict=True):
        t, q = np.asarray(t, dtype=float), np.asarray(q, dtype=float)
        sig_p, sig_a = check_throw(shape, lines, t, q, mass, opts, source)
        clean.append((t, q))
    t_meas, q_meas, first, offsets = stack_throws(clean)
    quick = replace(opts, profile_step=0.0, retry_inertia_ratios=())
    singles = [  # each throw alone first: their fits make the stitched start
        identify(shape, lines, t, q, mass=mass, options=quick, source=source)
        for (t, q), source in zip(clean, sources, strict=True)
    ]
    ns, h, t_fine = grid(t_meas, opts.max_substep, ", ".join(sources))
    idle = np.zeros(h.size, dtype=bool)
    breaks = []
    for f in first[1:]:  # the frame interval before each throw's first frame: free flight
        idle[ns * (f - 1) : ns * f] = True
        breaks.append(ns * (f - 1))
    budget = budget_of(opts, h.size, throws=len(clean))  # the sum of the throws' budgets
    weights = np.array([sig_p, sig_p, sig_a]) ** -2.0
    pairs = candidate_pairs(shape, lines)
    nlp = make_nlp(
        shape, lines, pairs, h, ns, q_meas, weights, opts, budget, breaks=tuple(breaks), idle=idle
    )
    trajectories = warm_starts(
        opts.warm_starts, shape, lines, t_meas, q_meas, t_fine, ns, opts.gravity_vector
    )
    search = Search(nlp, trajectories, opts, budget)
    best = _pooled_best(search, shape, lines, singles, first, ns, t_fine, t_meas.size)
    data = dict(mass=mass, ns=ns, t_fine=t_fine, t_meas=t_meas, q_meas=q_meas, sigma_angle=sig_a)
    result = search.finish(best, shape, lines, data)
    per_throw = _per_throw(result, sources, first, offsets, weights, ns)
    diagnostics = dict(
        result.diagnostics, throws=per_throw, gravity_m_s2=opts.gravity_vector.tolist()
    )
    return replace(result, diagnostics=diagnostics)


def _pooled_best(search, shape, lines, singles, first, ns, t_fine, n_frames):  # noqa: ANN001, ANN202
    """The stitched start first (median J/m and μ of the throws' own fits); the generic warm
    starts when it does not converge or fit to the noise level; the retry when still poor."""
    nlp, opts = search.nlp, search.opts
    r_init = opts.inertia_ratio_init if opts.inertia_ratio_init is not None else 0.5 * nlp.r_scale
    fitted = [r for r in singles if r.identifiable]
    r0 = float(np.median([r.inertia_ratio for r in fitted])) if fitted else r_init
    mu0 = float(np.median([r.friction for r in fitted])) if fitted else opts.mu_init
    x0 = stitched_start(nlp, shape, lines, singles, first, ns, t_fine, r0, mu0)
    best = None
    if x0 is not None:
        outcome, multipliers = nlp.solve(x0, (1e-2, 1.0))
        search.record(outcome, "stitched", r0, (1e-2, 1.0))
        best = (outcome, multipliers)
    if best is None or not best[0].success or nlp.fit_value(best[0].x) > fit_limit(n_frames):
        best = search.multistart([r_init], best)
    return search.retry_if_poor(best, n_frames)


def _per_throw(
    result: ImpactsIdentification,
    sources: list[str],
    first: list[int],
    offsets: list[float],
    weights: np.ndarray,
    ns: int,
) -> list[dict]:
    """Each throw's source, frames, time offset on the pooled axis, initial state and χ²."""
    ends = [*first[1:], result.t_meas.size]
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
    return per_throw
