"""J/m and μ from many impact snapshots by the impact law of paper D (eq. 4 with eqs. 10–15).

Each impact i gives v⁻, v⁺, GQ and n. The model (:mod:`.law`) predicts v⁺ − v⁻ from J/m and μ,
shared by all impacts, and a restitution ε_i per impact (real impacts do not share one ε, and ε
only sets how much the normal velocity reverses). The fit minimises the robust (soft-ℓ1) sum of
the noise-normalised residuals (Δv_x, Δv_y, L Δω)/σ_v — L the median lever arm — over
J/m ∈ [J/m_max·1e-4, J/m_max], μ ∈ [0, μ_max], ε_i ∈ [0, 1] (SciPy's trust-region reflective
least squares; the Jacobian is sparse: impact i's rows depend on J/m, μ and ε_i only), from
several μ starts. Standard deviations: Gauss–Newton, s² (JᵀJ)⁻¹ with s² the residual variance of
the impacts kept (so they hold for the actual scatter, not the σ_v given). μ is seen only through
impacts that slide: with fewer than :data:`MIN_SLIDING` of them μ̂ is the least value that
explains the data, a lower bound.

Before the fit every impact is checked against what any rigid body could do (:mod:`.checks`);
one that fails is flagged and left out. The checks are made under every sign convention of the
contact geometry (:mod:`.conventions`); one that admits clearly more impacts is named, with the
estimates under it (:mod:`.verdict`). After the fit, impacts whose residual exceeds
:data:`OUTLIER_SIGMAS` robust standard deviations (and as many σ_v) are flagged too (kept, the
robust loss limiting their weight).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares
from scipy.sparse import lil_matrix

from physid.errors import InputError
from physid.impacts.codes import LAW_OUTLIER
from physid.impacts.geometry import STANDARD_GRAVITY, gravity_vector
from physid.impacts.snapshot_fit.checks import Checked, CheckSettings, check_impacts, reason
from physid.impacts.snapshot_fit.conventions import (
    CONVENTIONS,
    Comparison,
    Convention,
    apply,
    mcnemar,
)
from physid.impacts.snapshot_fit.law import contact_columns, impact_response
from physid.impacts.snapshot_fit.result import ImpactFlag, SnapshotResult
from physid.impacts.snapshot_fit.verdict import (
    Estimates,
    Judged,
    convention_finding,
    flag_findings,
    verdict,
)
from physid.impacts.snapshots import Snapshots
from physid.status import Status

#: An impact whose residual norm exceeds this many robust standard deviations is flagged.
OUTLIER_SIGMAS = 5.0


@dataclass(frozen=True)
class Setup:
    """What every convention shares: the velocity changes ``dv`` (n, 3) with gravity's impulse
    removed, the check settings (bounds of J/m, μ_max, σ_v, median lever arm) and the gravity
    vector [m/s²]."""

    dv: np.ndarray
    settings: CheckSettings
    gravity: np.ndarray


@dataclass(frozen=True)
class LawFit:
    """The least-squares fit over the impacts kept (m of them): estimates, Gauss–Newton standard
    deviations, per impact ε, per-mass impulses (m, 2), sliding, residuals (m, 3) [σ_v], their
    norms, the robust residual standard deviation, inliers, and SciPy's cost and message."""

    inertia_ratio: float
    inertia_ratio_std: float
    friction: float
    friction_std: float
    restitution: np.ndarray
    impulses: np.ndarray
    sliding: np.ndarray
    residual: np.ndarray
    norms: np.ndarray
    robust_sigma: float
    inlier: np.ndarray
    cost: float
    message: str


def setup(
    snaps: Snapshots,
    gravity: float | tuple[float, float],
    noise_velocity: float,
    max_inertia_ratio: float | None,
    mu_max: float,
) -> Setup:
    """Velocity changes and check settings; J/m's upper bound defaults to (2 × the largest lever
    arm)²."""
    g = gravity_vector(gravity)
    dv = snaps.v_post - snaps.v_pre
    dv[:, :2] -= g * snaps.duration[:, None]  # gravity impulse during the snapshot
    radius = np.linalg.norm(snaps.arm, axis=1)
    length = float(np.median(radius)) if np.any(radius > 0) else 1.0
    r_hi = max_inertia_ratio or (2.0 * float(radius.max())) ** 2 or 1.0
    return Setup(dv, CheckSettings((1e-4 * r_hi, r_hi), mu_max, noise_velocity, length), g)


def check(snaps: Snapshots, prepared: Setup) -> Checked:
    """The rigid-body checks of every impact of ``snaps``."""
    return check_impacts(snaps.arm, snaps.normal, snaps.v_pre, prepared.dv, prepared.settings)


def fit_law(
    snaps: Snapshots, prepared: Setup, idx: np.ndarray, mu_starts: tuple[float, ...]
) -> LawFit:
    """Fit J/m, μ and ε_i to the impacts ``idx`` (see the module docstring)."""
    s = prepared.settings
    r_low, r_hi = s.bounds
    m = idx.size
    scale = np.array([1.0, 1.0, s.length]) / s.sigma_v
    v_pre, target = snaps.v_pre[idx], prepared.dv[idx]
    nb, tb = contact_columns(snaps.arm[idx], snaps.normal[idx])

    def residuals(x: np.ndarray) -> np.ndarray:
        pred, _, _ = impact_response(v_pre, nb, tb, x[0] * r_hi, x[1], x[2:])
        return np.nan_to_num((pred - target) * scale, nan=1e6).ravel()

    sparsity = lil_matrix((3 * m, m + 2), dtype=int)
    sparsity[:, :2] = 1
    for i in range(m):
        sparsity[3 * i : 3 * i + 3, 2 + i] = 1
    u_pre = np.einsum("ij,ij->i", nb, v_pre)
    eps0 = np.clip(-np.einsum("ij,ij->i", nb, v_pre + target) / u_pre, 0.0, 1.0)
    arm = snaps.arm[idx]
    torque = arm[:, 0] * target[:, 1] - arm[:, 1] * target[:, 0]
    spin = target[:, 2] @ target[:, 2]
    r0 = float(np.clip(torque @ target[:, 2] / max(spin, 1e-300), r_low, r_hi))
    lower, upper = np.r_[r_low / r_hi, 0.0, np.zeros(m)], np.r_[1.0, s.mu_max, np.ones(m)]
    best = None
    for mu0 in mu_starts:
        x0 = np.clip(np.r_[r0 / r_hi, mu0, eps0], lower, upper)
        sol = least_squares(
            residuals,
            x0,
            bounds=(lower, upper),
            jac_sparsity=sparsity,
            loss="soft_l1",
            x_scale="jac",
            method="trf",
        )
        if best is None or sol.cost < best.cost:
            best = sol
    assert best is not None
    return _summary(best, v_pre, nb, tb, r_hi)


def _summary(sol, v_pre: np.ndarray, nb: np.ndarray, tb: np.ndarray, r_hi: float) -> LawFit:  # noqa: ANN001
    """Estimates, robust spread, inliers and Gauss–Newton standard deviations of a solution."""
    m = v_pre.shape[0]
    res = sol.fun.reshape(m, 3)
    jac = sol.jac.toarray() if hasattr(sol.jac, "toarray") else np.asarray(sol.jac)
    norms = np.linalg.norm(res, axis=1)
    robust_sigma = 1.4826 * float(np.median(norms)) / math.sqrt(3.0) or 1.0
    inlier = norms < OUTLIER_SIGMAS * math.sqrt(3.0) * max(robust_sigma, 1.0)
    rows = np.repeat(inlier, 3)
    s2 = float(np.sum(res[inlier] ** 2)) / max(2 * int(inlier.sum()) - 2, 1)
    cov = s2 * np.linalg.pinv(jac[rows].T @ jac[rows])
    x = sol.x
    r_hat, mu_hat = float(x[0] * r_hi), float(x[1])
    _, impulses, sliding = impact_response(v_pre, nb, tb, r_hat, mu_hat, x[2:])
    return LawFit(
        inertia_ratio=r_hat,
        inertia_ratio_std=float(math.sqrt(max(cov[0, 0], 0.0)) * r_hi),
        friction=mu_hat,
        friction_std=float(math.sqrt(max(cov[1, 1], 0.0))),
        restitution=x[2:],
        impulses=impulses,
        sliding=sliding,
        residual=res,
        norms=norms,
        robust_sigma=robust_sigma,
        inlier=inlier,
        cost=float(sol.cost),
        message=str(sol.message),
    )


def fit_snapshots(
    snaps: Snapshots,
    *,
    gravity: float | tuple[float, float] = STANDARD_GRAVITY,
    noise_velocity: float = 0.01,
    max_inertia_ratio: float | None = None,
    mu_max: float = 3.0,
    mu_starts: tuple[float, ...] = (0.05, 0.3, 1.0),
) -> SnapshotResult:
    """Fit J/m [m²] and μ (and ε_i) to ``snaps``; see the module docstring.

    Args:
        snaps: the impacts (:func:`physid.impacts.snapshots.read_snapshots_csv`).
        gravity: magnitude along −y, or the vector (g_x, g_y) [m/s²]; its impulse over each
            snapshot's ``duration`` is removed.
        noise_velocity: σ_v [m/s], the scale of the residuals and of the checks' tolerance.
        max_inertia_ratio: upper bound on J/m [m²] (default: (2 × the largest lever arm)²).
        mu_max: upper bound on μ.
        mu_starts: the μ starts of the least squares; the lowest cost wins.

    Returns:
        A :class:`SnapshotResult` (status, findings, per-impact values and flags).

    Raises:
        InputError: fewer than 2 impacts, or fewer than 2 that any rigid body could produce.
    """
    n = len(snaps)
    if n < 2:
        raise InputError(f"{n} impact(s): at least 2 are needed", source="snapshots")
    prepared = setup(snaps, gravity, noise_velocity, max_inertia_ratio, mu_max)
    checks = {c: check(apply(snaps, c), prepared) for c in CONVENTIONS}
    given = checks[CONVENTIONS[0]]
    idx = np.flatnonzero(given.passed)
    if idx.size < 2:
        raise InputError(_too_few(snaps, checks, prepared), source="snapshots")
    law = fit_law(snaps, prepared, idx, mu_starts)
    estimates = Estimates.of(law, prepared.settings)
    judged = verdict(estimates, idx.size)
    comparison, other = _other_conventions(snaps, prepared, checks, law, idx, mu_starts)
    if comparison is not None and comparison.clearly_better:
        alt = Estimates.of(other, prepared.settings)
        judged.findings.insert(0, convention_finding(comparison, alt, n, snaps.jacobian))
        judged.status = Status.SUSPECT
        judged.message = "another sign convention of the contact geometry fits clearly more "
        judged.message += "impacts (IM201); as given: "
    flags = _flags(snaps, given, prepared.settings, law, idx)
    judged.findings += flag_findings(flags, n)
    diagnostics = _diagnostics(prepared, law, checks, comparison)
    return _result(snaps, law, estimates, idx, flags, judged, diagnostics)


def _consistent(law: LawFit, idx: np.ndarray, n: int, scale: float) -> np.ndarray:
    """Per impact (n,): it entered the fit (passed the checks) and the law misses it by less
    than :data:`OUTLIER_SIGMAS` noise-scaled standard deviations (``scale`` × σ_v per
    component)."""
    out = np.zeros(n, dtype=bool)
    out[idx] = law.norms < OUTLIER_SIGMAS * math.sqrt(3.0) * scale
    return out


def _other_conventions(
    snaps: Snapshots,
    prepared: Setup,
    checks: dict[Convention, Checked],
    law: LawFit,
    idx: np.ndarray,
    mu_starts: tuple[float, ...],
) -> tuple[Comparison | None, LawFit | None]:
    """The other sign convention that makes the most impacts consistent, against the given one,
    and its fit. Only conventions under which more impacts pass the checks than the given fit
    makes consistent are fitted (on data in the right convention: usually none). Consistency
    is judged on one scale, the smallest robust residual spread of the fits (at least σ_v), so
    that a convention whose law misses every impact does not widen its own tolerance."""
    n = len(snaps)
    own = _consistent(law, idx, n, max(law.robust_sigma, 1.0))
    fits: dict[Convention, tuple[LawFit, np.ndarray]] = {}
    for convention in CONVENTIONS[1:]:
        passed = checks[convention].passed
        if passed.sum() >= 2 and passed.sum() > own.sum():
            other_idx = np.flatnonzero(passed)
            other = fit_law(apply(snaps, convention), prepared, other_idx, mu_starts)
            fits[convention] = (other, other_idx)
    if not fits:
        return None, None
    scale = max(1.0, min(law.robust_sigma, *(f.robust_sigma for f, _ in fits.values())))
    given = _consistent(law, idx, n, scale)
    best = max(
        (mcnemar(c, given, _consistent(f, i, n, scale)) for c, (f, i) in fits.items()),
        key=lambda comparison: comparison.z,
    )
    return best, fits[best.convention][0]


def _too_few(snaps: Snapshots, checks: dict[Convention, Checked], prepared: Setup) -> str:
    """The one-line error of data with fewer than 2 admissible impacts (naming the convention
    under which the most impacts pass the checks, if that makes 2 or more)."""
    given = checks[CONVENTIONS[0]]
    n, used = len(snaps), int(given.passed.sum())
    first = int(np.flatnonzero(~given.passed)[0])
    text = (
        f"only {used} of {n} impacts are ones a rigid body could produce (first flagged: "
        f"{snaps.labels[first]}: {reason(given, first, prepared.settings)})"
    )
    best = max(CONVENTIONS[1:], key=lambda c: int(checks[c].passed.sum()))
    passed = int(checks[best].passed.sum())
    if passed >= 2 and passed > used:
        text += (
            f"; with {best.describe(snaps.jacobian)}, {passed} are: check the sign convention "
            "of the contact geometry"
        )
    return text


def _flags(
    snaps: Snapshots, given: Checked, settings: CheckSettings, law: LawFit, idx: np.ndarray
) -> tuple[ImpactFlag, ...]:
    """Every impact a check flagged, in order: refused ones (left out) and law outliers."""
    flags = {
        int(i): ImpactFlag(int(i), snaps.labels[i], given.code(i).code, reason(given, i, settings))
        for i in np.flatnonzero(~given.passed)
    }
    for k in np.flatnonzero(~law.inlier):
        i = int(idx[k])
        text = (
            "inconsistent with the impact law at the estimate: residual "
            f"{law.norms[k] / law.robust_sigma:.1f} robust standard deviations"
        )
        flags[i] = ImpactFlag(i, snaps.labels[i], LAW_OUTLIER.code, text)
    return tuple(flags[i] for i in sorted(flags))


def _expand(values: np.ndarray, idx: np.ndarray, n: int, fill: float) -> np.ndarray:
    """Per-used-impact values placed back among all n impacts (``fill`` elsewhere)."""
    values = np.asarray(values)
    out = np.full((n, *values.shape[1:]), fill, dtype=float)
    out[idx] = values
    return out


def _diagnostics(
    prepared: Setup,
    law: LawFit,
    checks: dict[Convention, Checked],
    comparison: Comparison | None,
) -> dict:
    """What result.json's ``diagnostics`` hold: the settings, the solver's cost and message,
    the impacts each sign convention admits and the best other convention."""
    s = prepared.settings
    diagnostics = {
        "noise_velocity_m_s": s.sigma_v,
        "residual_robust_sigma": law.robust_sigma,
        "lever_arm_median_m": s.length,
        "inertia_ratio_bounds_m2": list(s.bounds),
        "mu_max": s.mu_max,
        "gravity_m_s2": prepared.gravity.tolist(),
        "cost": law.cost,
        "solver_message": law.message,
        "conventions": [
            {**c.as_dict(), "pass_checks": int(checked.passed.sum())}
            for c, checked in checks.items()
        ],
    }
    if comparison is not None:
        diagnostics["best_other_convention"] = {
            **comparison.convention.as_dict(),
            "consistent": comparison.consistent,
            "consistent_as_given": comparison.consistent_given,
            "mcnemar_z": comparison.z,
        }
    return diagnostics


def _result(
    snaps: Snapshots,
    law: LawFit,
    estimates: Estimates,
    idx: np.ndarray,
    flags: tuple[ImpactFlag, ...],
    judged: Judged,
    diagnostics: dict,
) -> SnapshotResult:
    """The :class:`SnapshotResult`: per-impact arrays over all impacts (NaN where left out)."""
    n = len(snaps)
    used = np.zeros(n, dtype=bool)
    used[idx] = True
    return SnapshotResult(
        inertia_ratio=estimates.inertia_ratio,
        inertia_ratio_std=estimates.inertia_ratio_std,
        friction=estimates.friction,
        friction_std=estimates.friction_std,
        friction_is_lower_bound=estimates.lower_bound,
        restitution=_expand(law.restitution, idx, n, math.nan),
        sliding=_expand(law.sliding, idx, n, 0.0).astype(bool),
        impulses=_expand(law.impulses, idx, n, math.nan) * snaps.mass,
        residual=_expand(law.residual, idx, n, math.nan),
        used=used,
        flags=flags,
        status=judged.status,
        message=judged.message + estimates.line(int(idx.size), n),
        findings=tuple(judged.findings),
        diagnostics=diagnostics,
        at_bound=judged.at_bound,
    )
