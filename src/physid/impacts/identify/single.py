"""Identification of J/m and Coulomb's μ from noisy planar poses (paper D §5, eq. 27).

:func:`identify` validates the data, builds the NLP of :mod:`.nlp` on a grid n_s times finer than
the camera's (eq. 25), solves it from each warm start built from the camera's poses (again from
other J/m starts when the best does not fit the data to the noise level), keeps the lowest
objective, estimates the standard deviation of J/m from the curvature of the objective profile,
and judges whether J/m was identifiable at all (§5.2–5.3, :mod:`.verdict`). Only the shared
geometry (:mod:`physid.impacts.geometry`) is used — never the simulator.

Choices beyond the paper, each for a stated reason: W_χ is the inverse noise variance (χᵀW_χχ is
then a χ² statistic, ≈ 3 N_m at the truth); the products of eq. (26) are penalised by their
weighted sum (the exact ℓ1 penalty of paper D ref. [46]) rather than its square, which IPOPT
handles better at the complementarity corner; and a continuation on the weights (see
:mod:`.nlp`). Weights and continuation were chosen on noise seeds disjoint from those of the
paper's Table 1 benchmark; the retry rule was designed from one of its cells (docs/impacts.md
says what that implies).
"""

from __future__ import annotations

import math
import time

import numpy as np

from physid.errors import InputError
from physid.impacts.geometry import Line, Shape, candidate_pairs, contact_frames
from physid.impacts.identify.data import (
    ballistic_fit,
    check_motion,
    grid,
    validate_poses,
    warm_starts,
)
from physid.impacts.identify.nlp import make_nlp
from physid.impacts.identify.options import IdentifyOptions, budget_of, noise_levels
from physid.impacts.identify.solves import Search
from physid.impacts.identify.verdict import free_flight_result
from physid.impacts.results import ImpactsIdentification
from physid.progress import progress as progress_display


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
) -> ImpactsIdentification:
    """Estimate J/m [m²] and μ from poses ``q_meas`` (N_m×3: x, y [m], θ [rad]) at ``t_meas`` [s].

    ``mass`` [kg] is fixed — only J/m is identifiable (paper D §5.2) — and only scales the
    reported impulses. Raises :class:`InputError` (naming ``source``, row and column) on unusable
    data. A fit that cannot determine J/m (no contact, or contacts that do not change the rotation)
    returns NaN estimates with a status that is not ``ok`` and a finding that says why.
    """
    opts = options or IdentifyOptions()
    t_meas, q_meas = np.asarray(t_meas, dtype=float), np.asarray(q_meas, dtype=float)
    sig_p, sig_a = check_throw(shape, lines, t_meas, q_meas, mass, opts, source)
    pairs = candidate_pairs(shape, lines)
    ns, h, t_fine = grid(t_meas, opts.max_substep, source)
    start = time.perf_counter()
    weights = np.array([sig_p, sig_p, sig_a]) ** -2.0
    data = dict(mass=mass, ns=ns, t_fine=t_fine, t_meas=t_meas, q_meas=q_meas, sigma_angle=sig_a)
    flight = ballistic_fit(t_meas, q_meas, t_fine, weights, opts.gravity_vector)
    if _free_flight(shape, lines, flight[0], flight[1], t_meas.size):
        chi2, q_fly, v_fly = flight
        return free_flight_result(
            shape,
            lines,
            pairs,
            q_fine=q_fly,
            v_fine=v_fly,
            chi2=chi2,
            solve_time=time.perf_counter() - start,
            **data,
        )
    budget = budget_of(opts, h.size)
    nlp = make_nlp(shape, lines, pairs, h, ns, q_meas, weights, opts, budget)
    solves = len(opts.warm_starts) * sum(len(c) for c in opts.continuations)
    bar = progress_display(
        total=solves + (3 if opts.profile_step else 0),
        desc="identify",
        unit="solve",
        enabled=progress,
        leave=False,
    )
    trajectories = warm_starts(
        opts.warm_starts, shape, lines, t_meas, q_meas, t_fine, ns, opts.gravity_vector
    )
    search = Search(nlp, trajectories, opts, budget, bar.update, started=start)
    r_init = opts.inertia_ratio_init if opts.inertia_ratio_init is not None else 0.5 * nlp.r_scale
    best = search.multistart([r_init])
    if search.poor(best, t_meas.size):
        bar.total += solves * len(opts.retry_inertia_ratios)
    best = search.retry_if_poor(best, t_meas.size)
    result = search.finish(best, shape, lines, data)
    bar.close()
    return result


def check_throw(
    shape: Shape,
    lines: list[Line],
    t: np.ndarray,
    q: np.ndarray,
    mass: float,
    opts: IdentifyOptions,
    source: str,
) -> tuple[float, float]:
    """Refuse a throw that cannot be fitted (one line naming the row, column or parameter);
    the noise levels of its positions [m] and angle [rad]."""
    if not (mass > 0 and math.isfinite(mass)):
        raise InputError(f"mass = {mass!r} must be a positive number", source="mass")
    if not lines:
        raise InputError("at least one surface line is needed", source="surfaces")
    sig_p, sig_a = noise_levels(opts, shape)
    tolerance = 5.0 * (sig_p + shape.max_radius * sig_a)
    validate_poses(shape, lines, t, q, source=source, penetration_tol=tolerance)
    check_motion(q, sig_p, sig_a, source)
    return sig_p, sig_a


def _free_flight(
    shape: Shape, lines: list[Line], chi2: float, q_fly: np.ndarray, n_frames: int
) -> bool:
    """Whether the ballistic flight explains the poses (χ² within 5σ of the noise's) and stays
    clear of every surface: then there is nothing to identify (paper D §5.3)."""
    if chi2 >= 3 * n_frames + 5 * math.sqrt(6 * n_frames):
        return False
    return all(contact_frames(shape, lines, qk).gap.min() > 0 for qk in q_fly)
