"""Turn an identification NLP solution into an :class:`IdentificationResult` with a verdict.

The verdict follows paper D §5.2–5.3: J/m is seen only through the change of angular velocity
that the contact impulses cause (eq. 31, r Δω = k·(GQ × c̄)); a trajectory without contact, or
whose contacts leave ω unchanged to within what the pose noise resolves, does not determine it,
and neither does a fit that runs J/m to a bound or leaves the objective flat in J/m (standard
deviation above 30 % of the estimate; when the profiles are skipped this last check is not made).
μ is determined only where a contact slides; otherwise the estimate is the least μ consistent with
the data (Fig. 19) and the result says it is a lower bound.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from physid.impacts.geometry import Line, Shape, contact_frames, grasp_matrices
from physid.impacts.identify_nlp import IdentificationNlp, SolveOutcome
from physid.impacts.results import IdentificationResult

#: A contact point moving faster than this after a step is sliding [m/s].
SLIDING_SPEED = 0.01
#: J/m counts as identified when its standard deviation is below this fraction of the estimate.
MAX_RELATIVE_STD = 0.3


def assemble_result(
    shape: Shape,
    lines: list[Line],
    nlp: IdentificationNlp,
    outcome: SolveOutcome,
    *,
    mass: float,
    ns: int,
    t_fine: np.ndarray,
    t_meas: np.ndarray,
    q_meas: np.ndarray,
    sigma_angle: float,
    gravity: float,
    iterations: int,
    solve_time: float,
    inertia_ratio_std: float,
    friction_rise: float,
    options: Any,
    starts: list[dict[str, Any]],
    stopped: str | None = None,
) -> IdentificationResult:
    """Unpack the solution, compute diagnostics and the identifiability verdict.

    ``starts`` lists every (warm start, J/m start, continuation) solve; a converged one whose
    objective is within the noise of the best (2 standard deviations of a χ² with 3 N_m degrees
    of freedom) but whose J/m differs by more than 2 σ makes J/m ambiguous, and the result warns
    about it. ``stopped``: why the solves were cut short (a budget), which makes the status
    "not converged".
    """
    parts = nlp.layout.split(outcome.x)
    q, v, cn, ct, lam = parts["q"], parts["v"], parts["cn"], parts["ct"], parts["lam"]
    r_hat, mu_hat = float(parts["r_s"] * nlp.r_scale), float(parts["mu"])
    N = cn.shape[0]
    dw_contact = np.zeros(N)  # ω change caused by the contacts at each step [rad/s]
    products = np.zeros(3)  # largest slip, cone and gap products of eq. (26)
    min_gap = float(contact_frames(shape, lines, q[N]).gap.min())
    for k in range(N):
        frames = contact_frames(shape, lines, q[k])
        min_gap = min(min_gap, float(frames.gap.min()))
        Nk, Tk = grasp_matrices(frames.arm, frames.normal, frames.tangent)
        dw_contact[k] = (Nk[2] @ cn[k] + Tk[2] @ ct[k]) / r_hat
        slip = Tk.T @ v[k + 1] + np.repeat(lam[k], 2)
        cone = mu_hat * cn[k] - ct[k, 0::2] - ct[k, 1::2]
        products = np.maximum(
            products, [np.max(ct[k] * slip), np.max(lam[k] * cone), np.max(cn[k] * frames.gap)]
        )
    total_impulse = float(cn.sum())  # per unit mass [m/s]
    total_dw = float(np.abs(dw_contact).sum())
    # ω noise of a frame-to-frame difference: what a single contact must exceed to be seen.
    omega_noise = math.sqrt(2.0) * sigma_angle / float(np.median(np.diff(t_meas)))
    sliding = (lam > SLIDING_SPEED) & (cn > 0.01 * max(cn.max(initial=0.0), 1e-12))
    sliding_share = float(cn[sliding].sum() / total_impulse) if total_impulse > 0 else 0.0
    identifiable = False
    if stopped is not None:  # a budget cut the search short: the best iterate is no verdict
        status = f"not converged: {stopped}; best iterate in diagnostics"
    elif not outcome.success:
        status = f"not converged: IPOPT returned {outcome.status}"
    elif total_impulse < 1e-3 * gravity * float(t_fine[-1] - t_fine[0]):
        status = "unidentifiable: no contact in the fitted trajectory (free flight only)"
    elif total_dw < 3.0 * omega_noise:
        status = (
            f"unidentifiable: the contacts change ω by {total_dw:.3g} rad/s in total, "
            f"below 3× the angular-velocity noise ({omega_noise:.3g} rad/s)"
        )
    elif not nlp.lbx[-2] * 1.001 < parts["r_s"] < nlp.ubx[-2] * 0.999:
        side = "upper bound (largest radius)²" if parts["r_s"] > 0.5 else "lower bound ≈ 0"
        status = (
            f"unidentifiable: J/m ran to its {side} ({r_hat:.3g} m²): the contacts do "
            "not determine it"
        )
    elif options.profile_step and math.isnan(inertia_ratio_std):
        status = (
            f"unidentifiable: the objective does not rise on both sides of J/m = "
            f"{r_hat:.3g} m² (re-solves at ±{100 * options.profile_step:g} % ended lower "
            "or failed): no well-defined minimum in J/m"
        )
    elif options.profile_step and not inertia_ratio_std < MAX_RELATIVE_STD * r_hat:
        status = (
            f"unidentifiable: the objective is flat in J/m (standard deviation "
            f"{inertia_ratio_std:.3g} m² for J/m = {r_hat:.3g} m²)"
        )
    else:
        identifiable, status = True, "ok"
    if math.isfinite(friction_rise):
        friction_is_lower_bound = identifiable and friction_rise < 1.0
    else:
        friction_is_lower_bound = identifiable and sliding_share < 0.05
    n_frames = int(t_meas.size)
    fit_value = nlp.fit_value(outcome.x)
    warnings = []
    if identifiable:
        ambiguity = ambiguity_warning(starts, outcome.objective, r_hat, inertia_ratio_std, n_frames)
        warnings += [ambiguity] if ambiguity else []
    diagnostics = {
        "objective": outcome.objective,
        "fit_chi2": fit_value,
        "fit_chi2_expected": 3 * n_frames,
        "n_frames": n_frames,
        "n_intervals": int(N),
        "n_contact_candidates": len(nlp.pairs),
        "noise_angle_rad": sigma_angle,
        "total_normal_impulse_per_mass_m_s": total_impulse,
        "contact_angular_velocity_change_rad_s": total_dw,
        "angular_velocity_noise_rad_s": omega_noise,
        "sliding_impulse_share": sliding_share,
        "objective_rise_for_mu_plus_10pct": friction_rise,
        "max_products_slip_cone_gap": products,
        "min_gap_m": min_gap,
        "starts": starts,
        "options": {
            k: getattr(options, k)
            for k in (
                "max_substep",
                "noise_position",
                "weight_slip",
                "weight_gap",
                "penalty",
                "continuations",
                "warm_starts",
                "retry_inertia_ratios",
                "mu_weight",
            )
        },
    }
    if not identifiable:
        diagnostics["estimates_not_identified"] = {"inertia_ratio": r_hat, "friction": mu_hat}
    return IdentificationResult(
        inertia_ratio=r_hat if identifiable else math.nan,
        inertia_ratio_std=inertia_ratio_std if identifiable else math.nan,
        friction=mu_hat if identifiable else math.nan,
        friction_is_lower_bound=friction_is_lower_bound,
        identifiable=identifiable,
        status=status,
        solver_status=outcome.status,
        converged=outcome.success,
        iterations=iterations,
        solve_time=solve_time,
        mass=mass,
        n_substeps=ns,
        t=t_fine,
        q=q,
        v=v,
        impulse_normal=mass * cn,
        impulse_tangent=mass * (ct[:, 0::2] - ct[:, 1::2]),
        pairs=nlp.pairs,
        t_meas=t_meas,
        q_meas=q_meas,
        fit_residual=q[::ns] - q_meas,
        diagnostics=diagnostics,
        warnings=tuple(warnings),
    )


def ambiguity_warning(
    starts: list[dict[str, Any]],
    best_objective: float,
    inertia_ratio: float,
    inertia_ratio_std: float,
    n_frames: int,
) -> str | None:
    """A warning if another converged start fits as well but ends at a different J/m.

    "As well": objective within 2 standard deviations of a χ² with 3 N_m degrees of freedom,
    2 sqrt(6 N_m), of the best; "different": J/m more than 2 σ away (σ from the curvature).
    """
    if not math.isfinite(inertia_ratio_std):
        return None
    close = 2.0 * math.sqrt(6.0 * n_frames)
    rivals = [
        s
        for s in starts
        if s["converged"]
        and s["objective"] - best_objective <= close
        and abs(s["inertia_ratio"] - inertia_ratio) > 2.0 * inertia_ratio_std
    ]
    if not rivals:
        return None
    other = max(rivals, key=lambda s: abs(s["inertia_ratio"] - inertia_ratio))
    return (
        f"ambiguous J/m: the {other['warm_start']} warm start ends at J/m = "
        f"{other['inertia_ratio']:.4g} m² with an objective only "
        f"{other['objective'] - best_objective:.3g} higher (within the noise); the standard "
        "deviation does not cover this"
    )


def free_flight_result(
    shape: Shape,
    lines: list[Line],
    pairs: list[tuple[int, int]],
    *,
    mass: float,
    ns: int,
    t_fine: np.ndarray,
    q_fine: np.ndarray,
    v_fine: np.ndarray,
    t_meas: np.ndarray,
    q_meas: np.ndarray,
    chi2: float,
    solve_time: float,
) -> IdentificationResult:
    """Result for data that a contact-free ballistic flight explains (paper D §5.3)."""
    nc, N = len(pairs), t_fine.size - 1
    gap = float(min(contact_frames(shape, lines, qk).gap.min() for qk in q_fine))
    status = (
        f"unidentifiable: the poses are explained by free flight (χ² = {chi2:.1f} for "
        f"{t_meas.size} frames) that stays {gap * 1e3:.3g} mm clear of every surface, so "
        "they carry no information on J/m or μ"
    )
    return IdentificationResult(
        inertia_ratio=math.nan,
        inertia_ratio_std=math.nan,
        friction=math.nan,
        friction_is_lower_bound=False,
        identifiable=False,
        status=status,
        solver_status="not run (free flight)",
        converged=True,
        iterations=0,
        solve_time=solve_time,
        mass=mass,
        n_substeps=ns,
        t=t_fine,
        q=q_fine,
        v=v_fine,
        impulse_normal=np.zeros((N, nc)),
        impulse_tangent=np.zeros((N, nc)),
        pairs=pairs,
        t_meas=t_meas,
        q_meas=q_meas,
        fit_residual=q_fine[::ns] - q_meas,
        diagnostics={
            "fit_chi2": chi2,
            "fit_chi2_expected": 3 * t_meas.size,
            "n_frames": int(t_meas.size),
            "min_gap_m": gap,
        },
    )
