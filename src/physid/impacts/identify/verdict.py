"""Turn an identification NLP solution into an :class:`ImpactsIdentification` with a status and
findings.

The verdict follows paper D §5.2–5.3: J/m is seen only through the change of angular velocity
that the contact impulses cause (eq. 31, r Δω = k·(GQ × c̄)); a trajectory without contact, or
whose contacts leave ω unchanged to within what the pose noise resolves, does not determine it,
and neither does a fit that runs J/m to a bound or leaves the objective flat in J/m (standard
deviation above 30 % of the estimate; when the profiles are skipped this last check is not made).
μ is determined only where a contact slides; otherwise the estimate is the least μ consistent with
the data (Fig. 19) and a caution says it is a lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import physid.impacts.codes as codes
from physid.budget import Budget, Stop
from physid.findings import Finding
from physid.impacts.geometry import Line, Shape, contact_frames, grasp_matrices
from physid.impacts.identify.nlp import IdentificationNlp, SolveOutcome
from physid.impacts.results import ImpactsIdentification
from physid.status import Status

#: A contact point moving faster than this after a step is sliding [m/s].
SLIDING_SPEED = 0.01
#: J/m counts as identified when its standard deviation is below this fraction of the estimate.
MAX_RELATIVE_STD = 0.3
#: IPOPT's return statuses that are not a convergence, by what they mean (others: stalled).
_IPOPT_STATUS = {
    "Maximum_Iterations_Exceeded": Status.NOT_CONVERGED,
    "Maximum_CpuTime_Exceeded": Status.NOT_CONVERGED,
    "Maximum_WallTime_Exceeded": Status.TIME_LIMIT,
    "User_Requested_Stop": Status.NOT_CONVERGED,
    "Invalid_Number_Detected": Status.NUMERICAL_FAILURE,
    "Error_In_Step_Computation": Status.NUMERICAL_FAILURE,
    "Not_Enough_Degrees_Of_Freedom": Status.NUMERICAL_FAILURE,
    "Insufficient_Memory": Status.NUMERICAL_FAILURE,
    "Internal_Error": Status.NUMERICAL_FAILURE,
    "Unrecoverable_Exception": Status.NUMERICAL_FAILURE,
    "NonIpopt_Exception_Thrown": Status.NUMERICAL_FAILURE,
}


@dataclass(frozen=True)
class Contacts:
    """What the reconstructed contacts did: the per-mass normal impulse in all [m/s], the change
    of ω they caused in all [rad/s] and the ω noise of a frame difference, the share of the
    normal impulse at sliding contacts, the largest complementarity products (slip, cone, gap)
    and the smallest gap [m]."""

    total_impulse: float
    total_dw: float
    omega_noise: float
    sliding_share: float
    products: np.ndarray
    min_gap: float


def contacts_of(
    shape: Shape,
    lines: list[Line],
    parts: dict[str, Any],
    r_hat: float,
    t_meas: np.ndarray,
    sigma_angle: float,
) -> Contacts:
    """The :class:`Contacts` of a solution's named parts (``Layout.split``) at J/m ``r_hat``."""
    q, v, cn, ct, lam = parts["q"], parts["v"], parts["cn"], parts["ct"], parts["lam"]
    mu_hat, N = float(parts["mu"]), cn.shape[0]
    dw = np.zeros(N)  # ω change caused by the contacts at each step [rad/s]
    products = np.zeros(3)  # largest slip, cone and gap products of eq. (26)
    min_gap = float(contact_frames(shape, lines, q[N]).gap.min())
    for k in range(N):
        frames = contact_frames(shape, lines, q[k])
        min_gap = min(min_gap, float(frames.gap.min()))
        Nk, Tk = grasp_matrices(frames.arm, frames.normal, frames.tangent)
        dw[k] = (Nk[2] @ cn[k] + Tk[2] @ ct[k]) / r_hat
        slip = Tk.T @ v[k + 1] + np.repeat(lam[k], 2)
        cone = mu_hat * cn[k] - ct[k, 0::2] - ct[k, 1::2]
        products = np.maximum(
            products, [np.max(ct[k] * slip), np.max(lam[k] * cone), np.max(cn[k] * frames.gap)]
        )
    total = float(cn.sum())
    # ω noise of a frame-to-frame difference: what a single contact must exceed to be seen.
    omega_noise = math.sqrt(2.0) * sigma_angle / float(np.median(np.diff(t_meas)))
    sliding = (lam > SLIDING_SPEED) & (cn > 0.01 * max(cn.max(initial=0.0), 1e-12))
    share = float(cn[sliding].sum() / total) if total > 0 else 0.0
    return Contacts(total, float(np.abs(dw).sum()), omega_noise, share, products, min_gap)


@dataclass
class Verdict:
    """The status, its one-line message and the findings of a solve."""

    status: Status
    message: str = ""
    findings: list[Finding] = field(default_factory=list)

    @property
    def identifiable(self) -> bool:
        return self.status is Status.OK


def judge(
    outcome: SolveOutcome,
    contacts: Contacts,
    r_s: float,
    r_hat: float,
    r_std: float,
    *,
    profile_step: float,
    gravity_impulse: float,
    budget: Budget,
) -> Verdict:
    """Why the estimate can or cannot be used, first reason first (module docstring);
    ``r_s`` is J/m over its bound ρ², ``gravity_impulse`` |g| times the recording's duration."""
    if budget.exhausted():  # a budget cut the search short: the best iterate is no verdict
        return _budget_verdict(budget)
    if not outcome.success:
        status = _IPOPT_STATUS.get(outcome.status, Status.STALLED)
        message = f"IPOPT returned {outcome.status}: the estimates are its last iterate"
        return Verdict(status, message, [codes.SOLVER_FAILED(message)])
    if contacts.total_impulse < 1e-3 * gravity_impulse:
        message = "no contact in the fitted trajectory (free flight only)"
        numbers = {"normal_impulse_per_mass_m_s": contacts.total_impulse}
        return _unidentifiable(codes.NO_CONTACT(message, numbers=numbers))
    if contacts.total_dw < 3.0 * contacts.omega_noise:
        message = (
            f"the contacts change ω by {contacts.total_dw:.3g} rad/s in total, below 3x the "
            f"angular-velocity noise ({contacts.omega_noise:.3g} rad/s)"
        )
        numbers = {"spin_change_rad_s": contacts.total_dw, "noise_rad_s": contacts.omega_noise}
        return _unidentifiable(codes.NO_SPIN_CHANGE(message, numbers=numbers))
    if not 1e-4 * 1.001 < r_s < 0.999:
        side = "upper bound (largest radius)²" if r_s > 0.5 else "lower bound ≈ 0"
        message = f"J/m ran to its {side} ({r_hat:.3g} m²): the contacts do not determine it"
        finding = codes.INERTIA_RATIO_AT_BOUND(
            message, numbers={"inertia_ratio_m2": r_hat}, names=("inertia_ratio",)
        )
        return Verdict(Status.AT_BOUND, message, [finding])
    if profile_step and not math.isfinite(r_std):
        message = (
            f"the objective does not rise on both sides of J/m = {r_hat:.3g} m² (re-solves at "
            f"±{100 * profile_step:g} % ended lower or failed): no well-defined minimum in J/m"
        )
        return _unidentifiable(codes.FLAT_OBJECTIVE(message, numbers={"inertia_ratio_m2": r_hat}))
    if profile_step and not r_std < MAX_RELATIVE_STD * r_hat:
        message = (
            f"the objective is flat in J/m (standard deviation {r_std:.3g} m² for J/m = "
            f"{r_hat:.3g} m²)"
        )
        numbers = {"inertia_ratio_m2": r_hat, "inertia_ratio_std_m2": r_std}
        return _unidentifiable(codes.FLAT_OBJECTIVE(message, numbers=numbers))
    return Verdict(Status.OK)


def _unidentifiable(finding: Finding) -> Verdict:
    return Verdict(Status.UNIDENTIFIABLE, finding.message, [finding])


def _budget_verdict(budget: Budget) -> Verdict:
    if budget.reason is Stop.TIME:
        message = (
            f"stopped by the wall-clock safety stop of {budget.seconds:.3g} s after "
            f"{budget.used} IPOPT iterations; the best iterate is in the diagnostics"
        )
    else:
        message = (
            f"stopped by the iteration budget of {budget.iterations} IPOPT iterations; the "
            "best iterate is in the diagnostics"
        )
    numbers = {"iterations": budget.used, "iteration_budget": budget.iterations}
    return Verdict(budget.status, message, [codes.BUDGET_SPENT(message, numbers=numbers)])


def ambiguity(
    starts: list[dict[str, Any]],
    best_objective: float,
    inertia_ratio: float,
    inertia_ratio_std: float,
    n_frames: int,
) -> Finding | None:
    """A caution if another converged start fits as well but ends at a different J/m.

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
    rise = other["objective"] - best_objective
    return codes.AMBIGUOUS_INERTIA_RATIO(
        f"ambiguous J/m: the {other['warm_start']} warm start ends at J/m = "
        f"{other['inertia_ratio']:.4g} m² with an objective only {rise:.3g} higher (within the "
        "noise); the standard deviation does not cover this",
        numbers={
            "inertia_ratio_m2": inertia_ratio,
            "other_inertia_ratio_m2": other["inertia_ratio"],
            "objective_rise": rise,
            "objective_noise": close,
        },
        names=("inertia_ratio",),
    )


def cautions(
    verdict: Verdict,
    *,
    fit_chi2: float,
    n_frames: int,
    friction_rise: float,
    sliding_share: float,
    friction: tuple[float, float | None],
    ambiguous: Finding | None,
    retried: bool,
) -> bool:
    """Add the cautions and context of an identified fit to ``verdict`` (μ a lower bound, J/m
    ambiguous, the fit above the noise, the retry); returns whether μ is a lower bound.
    ``friction``: the fit's μ̂ and the least μ consistent with the poses (None: not computed)."""
    identified = verdict.identifiable
    if math.isfinite(friction_rise):
        lower_bound = identified and friction_rise < 1.0
        why = f"raising mu by 10 % costs {friction_rise:.3g}, less than one standard deviation"
    else:
        lower_bound = identified and sliding_share < 0.05
        why = f"{100 * sliding_share:.3g} % of the normal impulse is at sliding contacts"
    if lower_bound:
        fitted, floor = friction
        least = (
            f"mu >= {floor:.3g}, the least value whose fit stays within chi^2 2.71 of the best "
            f"(the fit's own {fitted:.3g} only balances the price on mu against noise the "
            "contacts follow)"
            if floor is not None
            else "mu is the least value consistent with the data"
        )
        numbers = {"objective_rise": friction_rise, "sliding_share": sliding_share}
        numbers |= {
            "friction_fitted": fitted,
            "friction_floor": math.nan if floor is None else floor,
        }
        verdict.findings.append(
            codes.FRICTION_LOWER_BOUND(
                f"no contact slid in a way the poses resolve ({why}): {least} (lower bound)",
                numbers=numbers,
                names=("friction",),
            )
        )
    if identified and ambiguous is not None:
        verdict.findings.append(ambiguous)
    limit = 3 * n_frames + 3 * math.sqrt(6 * n_frames)
    if identified and fit_chi2 > limit:
        verdict.findings.append(
            codes.FIT_ABOVE_NOISE(
                f"the fit's chi^2 is {fit_chi2:.4g} for {n_frames} frames, above {limit:.4g}: the "
                "noise is larger than given or the rigid-impact model misses something",
                numbers={"chi2": fit_chi2, "chi2_limit": limit, "frames": n_frames},
            )
        )
    if retried:
        verdict.findings.append(
            codes.RETRIED_STARTS("the first solves did not fit to the noise level; retried")
        )
    verdict.findings.append(
        codes.MASS_FIXED("the mass is fixed to the value given; it only scales the impulses")
    )
    return lower_bound


def assemble_result(
    shape: Shape,
    lines: list[Line],
    nlp: IdentificationNlp,
    outcome: SolveOutcome,
    *,
    data: dict[str, Any],
    solve: dict[str, Any],
    options: Any,
    budget: Budget,
) -> ImpactsIdentification:
    """Unpack the solution, judge it and build the result.

    ``data``: mass, ns, t_fine, t_meas, q_meas, sigma_angle; ``solve``: iterations, solve_time,
    inertia_ratio_std, friction_rise, starts (every solve: a converged one whose objective is
    within the noise of the best but whose J/m differs by more than 2 σ makes J/m ambiguous)
    and retried (the retry from other J/m starts ran).
    """
    parts = nlp.layout.split(outcome.x)
    r_hat, mu_hat = float(parts["r_s"] * nlp.r_scale), float(parts["mu"])
    t_meas, t_fine = data["t_meas"], data["t_fine"]
    contacts = contacts_of(shape, lines, parts, r_hat, t_meas, data["sigma_angle"])
    r_std = solve["inertia_ratio_std"]
    verdict = judge(
        outcome,
        contacts,
        float(parts["r_s"]),
        r_hat,
        r_std,
        profile_step=options.profile_step,
        gravity_impulse=float(np.linalg.norm(options.gravity_vector)) * (t_fine[-1] - t_fine[0]),
        budget=budget,
    )
    n_frames, fit_value = int(t_meas.size), nlp.fit_value(outcome.x)
    ambiguous = ambiguity(solve["starts"], outcome.objective, r_hat, r_std, n_frames)
    lower_bound = cautions(
        verdict,
        fit_chi2=fit_value,
        n_frames=n_frames,
        friction_rise=solve["friction_rise"],
        sliding_share=contacts.sliding_share,
        friction=(mu_hat, solve.get("friction_floor")),
        ambiguous=ambiguous,
        retried=solve["retried"],
    )
    identified = verdict.identifiable
    floor = solve.get("friction_floor")
    mu_reported = floor if lower_bound and floor is not None else mu_hat
    if identified:
        verdict.message = estimate_line(r_hat, mu_reported, lower_bound)
    diagnostics = _diagnostics(nlp, outcome, contacts, options, solve, n_frames, fit_value)
    diagnostics["noise_angle_rad"] = data["sigma_angle"]
    diagnostics["friction_fitted"] = mu_hat
    diagnostics["friction_floor_profile"] = solve.get("friction_floor_profile", [])
    if not identified:
        diagnostics["estimates_not_identified"] = {"inertia_ratio": r_hat, "friction": mu_hat}
    return ImpactsIdentification(
        inertia_ratio=r_hat if identified else math.nan,
        inertia_ratio_std=r_std if identified else math.nan,
        friction=mu_reported if identified else math.nan,
        friction_is_lower_bound=lower_bound,
        status=verdict.status,
        message=verdict.message,
        findings=tuple(verdict.findings),
        solver_status=outcome.status,
        converged=outcome.success,
        stopped_by=budget.reason,
        iterations=solve["iterations"],
        solve_time=solve["solve_time"],
        pairs=nlp.pairs,
        diagnostics=diagnostics,
        **_trajectory(parts, data),
    )


def _trajectory(parts: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """The reconstruction's fields of the result: fine grid, poses, velocities, impulses [N·s]
    for the given mass, the data and the residual at the camera frames."""
    ns, mass, cn, ct = data["ns"], data["mass"], parts["cn"], parts["ct"]
    return {
        "mass": mass,
        "n_substeps": ns,
        "t": data["t_fine"],
        "q": parts["q"],
        "v": parts["v"],
        "impulse_normal": mass * cn,
        "impulse_tangent": mass * (ct[:, 0::2] - ct[:, 1::2]),
        "t_meas": data["t_meas"],
        "q_meas": data["q_meas"],
        "fit_residual": parts["q"][::ns] - data["q_meas"],
    }


def estimate_line(r_hat: float, mu_hat: float, lower_bound: bool) -> str:
    """``J/m = ... m², mu = ...`` (``(lower bound)`` after μ when it is one)."""
    mu = f"{mu_hat:.3g}" + (" (lower bound)" if lower_bound else "")
    return f"J/m = {r_hat:.6g} m², mu = {mu}"


_OPTION_NAMES = (
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


def _diagnostics(
    nlp: IdentificationNlp,
    outcome: SolveOutcome,
    contacts: Contacts,
    options: Any,
    solve: dict[str, Any],
    n_frames: int,
    fit_value: float,
) -> dict[str, Any]:
    return {
        "objective": outcome.objective,
        "fit_chi2": fit_value,
        "fit_chi2_expected": 3 * n_frames,
        "n_frames": n_frames,
        "n_intervals": int(nlp.layout.N),
        "n_contact_candidates": len(nlp.pairs),
        "total_normal_impulse_per_mass_m_s": contacts.total_impulse,
        "contact_angular_velocity_change_rad_s": contacts.total_dw,
        "angular_velocity_noise_rad_s": contacts.omega_noise,
        "sliding_impulse_share": contacts.sliding_share,
        "objective_rise_for_mu_plus_10pct": solve["friction_rise"],
        "max_products_slip_cone_gap": contacts.products,
        "min_gap_m": contacts.min_gap,
        "starts": solve["starts"],
        "options": {k: getattr(options, k) for k in _OPTION_NAMES},
    }


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
    sigma_angle: float = math.nan,
) -> ImpactsIdentification:
    """Result for data that a contact-free ballistic flight explains (paper D §5.3)."""
    nc, N = len(pairs), t_fine.size - 1
    gap = float(min(contact_frames(shape, lines, qk).gap.min() for qk in q_fine))
    message = (
        f"the poses are explained by free flight (χ² = {chi2:.1f} for {t_meas.size} frames) "
        f"that stays {gap * 1e3:.3g} mm clear of every surface, so they carry no information "
        "on J/m or mu"
    )
    finding = codes.FREE_FLIGHT(
        message, numbers={"chi2": chi2, "frames": int(t_meas.size), "clearance_m": gap}
    )
    return ImpactsIdentification(
        inertia_ratio=math.nan,
        inertia_ratio_std=math.nan,
        friction=math.nan,
        friction_is_lower_bound=False,
        status=Status.UNIDENTIFIABLE,
        message=message,
        findings=(finding,),
        solver_status="not run (free flight)",
        converged=True,
        stopped_by=None,
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
            "noise_angle_rad": sigma_angle,
        },
    )
