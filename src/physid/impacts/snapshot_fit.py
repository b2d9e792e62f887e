"""J/m and μ from many impact snapshots by the impact law of paper D (eq. 4 with eqs. 10–15).

Each impact i gives v⁻, v⁺, GQ and n. The model (:mod:`~physid.impacts.impact_law`) predicts
v⁺ − v⁻ from J/m and μ, shared by all impacts, and a restitution ε_i per impact (real impacts do not
share one ε, and ε only sets how much the normal velocity reverses). The fit minimises the robust
(soft-ℓ1) sum of the noise-normalised residuals (Δv_x, Δv_y, L Δω)/σ_v — L the median lever arm —
over J/m ∈ [J/m_max·1e-4, J/m_max], μ ∈ [0, μ_max], ε_i ∈ [0, 1] (SciPy's trust-region reflective
least squares; the Jacobian is sparse: impact i's rows depend on J/m, μ and ε_i only), from several
μ starts. Standard deviations: Gauss–Newton, s² (JᵀJ)⁻¹ with s² the residual variance of the impacts
kept (so they hold for the actual scatter, not the σ_v given). μ is seen only through impacts that
slide: with fewer than :data:`MIN_SLIDING` of them μ̂ is the least value that explains the data and
the result says it is a lower bound.

Before the fit every impact is checked against what any rigid body could do; one that fails is
flagged with its row and the reason, and left out: the contact point does not approach the
surface, the normal impulse pulls, the contact point still enters the surface after the impact,
the tangential impulse lies outside the friction cone of every μ ≤ μ_max, the spin changes against
the torque of the impulse (no J/m > 0), or the kinetic energy rises for every J/m in the bounds.
After it, impacts whose residual exceeds :data:`OUTLIER_SIGMAS` robust standard deviations (and
as many σ_v) are flagged too (kept, with the robust loss limiting their weight).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import least_squares
from scipy.sparse import lil_matrix

from physid.errors import InputError
from physid.impacts.geometry import STANDARD_GRAVITY, gravity_vector
from physid.impacts.impact_law import contact_columns, impact_response
from physid.impacts.snapshots import Snapshots

#: μ needs at least this many sliding impacts to count as estimated (not a lower bound).
MIN_SLIDING = 3
#: An impact whose residual norm exceeds this many robust standard deviations is flagged.
OUTLIER_SIGMAS = 5.0
#: Tolerance of the rigid-body checks, in noise standard deviations σ_v.
CHECK_SIGMAS = 3.0
#: Robust residual standard deviation [σ_v] above which the impact law does not fit the impacts
#: at the estimate. Δv takes the noise of two velocities, so impacts that the law fits give
#: √2 ≈ 1.4 (1.48 on 16 simulated impacts with σ_v noise); J/m held by a bound 1e6 below the
#: truth gave 26.6.
MAX_RESIDUAL_SIGMAS = 5.0


@dataclass(frozen=True)
class SnapshotResult:
    """Estimates from impact snapshots. ``flags``: (label, reason) of every impact flagged;
    ``used`` (n,) which impacts entered the fit; per impact: ``restitution`` ε_i, ``sliding``,
    ``impulses`` (c_n, c_t) [N·s] for the given mass, ``residual`` (n, 3) in units of σ_v."""

    inertia_ratio: float
    inertia_ratio_std: float
    friction: float
    friction_std: float
    friction_is_lower_bound: bool
    restitution: np.ndarray
    sliding: np.ndarray
    impulses: np.ndarray
    residual: np.ndarray
    used: np.ndarray
    flags: list[tuple[str, str]]
    status: str
    diagnostics: dict[str, Any] = field(default_factory=dict)
    at_bound: list[str] = field(default_factory=list)  # "inertia_ratio", "friction"
    warnings: list[str] = field(default_factory=list)  # about the fit (not the impacts: flags)

    def to_json_dict(self) -> dict[str, Any]:
        used = self.used
        return {
            "format": "physid.impacts.snapshots_result/1",
            "inertia_ratio": self.inertia_ratio,
            "inertia_ratio_unit": "m^2",
            "inertia_ratio_std": self.inertia_ratio_std,
            "friction": self.friction,
            "friction_std": self.friction_std,
            "friction_is_lower_bound": self.friction_is_lower_bound,
            "status": self.status,
            "n_impacts": int(used.size),
            "n_used": int(used.sum()),
            "n_sliding": int((self.sliding & used).sum()),
            "restitution_median": float(np.median(self.restitution[used])) if used.any() else None,
            "at_bound": self.at_bound,
            "warnings": self.warnings,
            "flags": [{"impact": label, "reason": reason} for label, reason in self.flags],
            "diagnostics": self.diagnostics,
        }


def _checks(
    snaps: Snapshots,
    dv: np.ndarray,
    nbar: np.ndarray,
    tbar: np.ndarray,
    bounds: tuple[float, float],
    mu_max: float,
    sigma_v: float,
    length: float,
) -> list[str | None]:
    """The reason each impact is one no rigid body could produce, or None."""
    tol = CHECK_SIGMAS * sigma_v
    v_pre, v_post = snaps.v_pre, snaps.v_pre + dv
    u_pre, u_post = np.einsum("ij,ij->i", nbar, v_pre), np.einsum("ij,ij->i", nbar, v_post)
    c_n = np.einsum("ij,ij->i", snaps.normal, dv[:, :2])
    tangent = np.column_stack([snaps.normal[:, 1], -snaps.normal[:, 0]])
    c_t = np.einsum("ij,ij->i", tangent, dv[:, :2])
    torque = snaps.arm[:, 0] * dv[:, 1] - snaps.arm[:, 1] * dv[:, 0]  # GQ × Δv = (J/m) Δω
    reasons: list[str | None] = []
    for i in range(len(snaps)):
        speed = np.linalg.norm(v_pre[i, :2]) + np.linalg.norm(v_post[i, :2])
        spin = abs(v_pre[i, 2]) + abs(v_post[i, 2])
        gains = [
            0.5 * (v_post[i, :2] @ v_post[i, :2] - v_pre[i, :2] @ v_pre[i, :2])
            + 0.5 * r * (v_post[i, 2] ** 2 - v_pre[i, 2] ** 2)
            - tol * (speed + r * spin / length)
            for r in bounds
        ]
        reason = None
        if u_pre[i] > -tol:
            reason = f"the contact point does not approach the surface (u_n = {u_pre[i]:.3g} m/s)"
        elif c_n[i] < -tol:
            reason = f"the normal impulse pulls (Δv·n = {c_n[i]:.3g} m/s)"
        elif u_post[i] < -tol:
            reason = (
                f"the contact point still enters the surface after the impact "
                f"(u_n+ = {u_post[i]:.3g} m/s)"
            )
        elif abs(c_t[i]) > mu_max * c_n[i] + tol:
            reason = (
                f"tangential impulse {abs(c_t[i]):.3g} m/s exceeds mu_max = {mu_max:g} times "
                f"the normal one ({c_n[i]:.3g} m/s)"
            )
        elif (
            torque[i] * dv[i, 2] < 0
            and abs(dv[i, 2]) * length > tol
            and abs(torque[i]) > (tol * length)
        ):
            reason = (
                f"the spin changes by {dv[i, 2]:.3g} rad/s against the torque of the impulse: "
                "no J/m > 0 gives it"
            )
        elif min(gains) > 0:
            reason = (
                f"the kinetic energy rises for every J/m in [{bounds[0]:.3g}, {bounds[1]:.3g}] m²"
            )
        reasons.append(reason)
    return reasons


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

    ``noise_velocity`` σ_v [m/s]: the scale of the residuals and of the checks' tolerance;
    ``max_inertia_ratio`` [m²]: upper bound on J/m (default: (2 × the largest lever arm)²).
    """
    n = len(snaps)
    if n < 2:
        raise InputError(f"{n} impact(s): at least 2 are needed", source="snapshots")
    g = gravity_vector(gravity)
    dv = snaps.v_post - snaps.v_pre
    dv[:, :2] -= g * snaps.duration[:, None]  # gravity impulse during the snapshot
    nbar, tbar = contact_columns(snaps.arm, snaps.normal)
    radius = np.linalg.norm(snaps.arm, axis=1)
    length = float(np.median(radius)) if np.any(radius > 0) else 1.0
    r_hi = max_inertia_ratio or (2.0 * float(radius.max())) ** 2
    bounds = (1e-4 * r_hi, r_hi)
    reasons = _checks(snaps, dv, nbar, tbar, bounds, mu_max, noise_velocity, length)
    used = np.array([r is None for r in reasons])
    flags = [(snaps.labels[i], r) for i, r in enumerate(reasons) if r is not None]
    idx = np.flatnonzero(used)
    if idx.size < 2:
        raise InputError(
            f"only {idx.size} of {n} impacts are ones a rigid body could produce "
            f"(first flagged: {flags[0][0]}: {flags[0][1]})",
            source="snapshots",
        )
    m = idx.size
    scale = np.array([1.0, 1.0, length]) / noise_velocity
    v_pre, target = snaps.v_pre[idx], dv[idx]
    nb, tb = nbar[idx], tbar[idx]

    def residuals(x: np.ndarray) -> np.ndarray:
        pred, _, _ = impact_response(v_pre, nb, tb, x[0] * r_hi, x[1], x[2:])
        res = (pred - target) * scale
        return np.nan_to_num(res, nan=1e6).ravel()

    sparsity = lil_matrix((3 * m, m + 2), dtype=int)
    sparsity[:, :2] = 1
    for i in range(m):
        sparsity[3 * i : 3 * i + 3, 2 + i] = 1
    u_pre = np.einsum("ij,ij->i", nb, v_pre)
    u_post = np.einsum("ij,ij->i", nb, v_pre + target)
    eps0 = np.clip(-u_post / u_pre, 0.0, 1.0)
    torque = snaps.arm[idx, 0] * target[:, 1] - snaps.arm[idx, 1] * target[:, 0]
    r0 = float(np.clip(torque @ target[:, 2] / max(target[:, 2] @ target[:, 2], 1e-300), *bounds))
    lower = np.r_[bounds[0] / r_hi, 0.0, np.zeros(m)]
    upper = np.r_[1.0, mu_max, np.ones(m)]
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
    x = best.x
    r_hat, mu_hat = float(x[0] * r_hi), float(x[1])
    res = best.fun.reshape(m, 3)
    jac = best.jac.toarray() if hasattr(best.jac, "toarray") else np.asarray(best.jac)
    norms = np.linalg.norm(res, axis=1)
    robust_sigma = 1.4826 * float(np.median(norms)) / math.sqrt(3.0) or 1.0
    inlier = norms < OUTLIER_SIGMAS * math.sqrt(3.0) * max(robust_sigma, 1.0)
    rows = np.repeat(inlier, 3)
    s2 = float(np.sum(res[inlier] ** 2)) / max(3 * inlier.sum() - inlier.sum() - 2, 1)
    cov = s2 * np.linalg.pinv(jac[rows].T @ jac[rows])
    r_std = float(math.sqrt(max(cov[0, 0], 0.0)) * r_hi)
    mu_std = float(math.sqrt(max(cov[1, 1], 0.0)))
    _, impulses, sliding = impact_response(v_pre, nb, tb, r_hat, mu_hat, x[2:])
    n_sliding = int(sliding.sum())
    lower_bound = n_sliding < MIN_SLIDING
    for k in np.flatnonzero(~inlier):
        flags.append(
            (
                snaps.labels[idx[k]],
                f"inconsistent with the impact law at the estimate: residual "
                f"{norms[k] / robust_sigma:.1f} robust standard deviations",
            )
        )
    at_bound = not bounds[0] * 1.001 < r_hat < bounds[1] * 0.999
    pinned, warnings = _bound_warnings(
        (r_hat, r_std, bounds, "J/m", "m²", "--max-inertia-ratio", "inertia_ratio"),
        (mu_hat, math.nan if lower_bound else mu_std, (0.0, mu_max), "mu", "", "--mu-max",
         "friction"),
    )  # fmt: skip
    far = robust_sigma > MAX_RESIDUAL_SIGMAS
    if far:
        warnings.append(
            f"the robust residual standard deviation is {robust_sigma:.3g} σ_v (about 1.4 when "
            "the impact law fits impacts with velocity noise --noise-velocity): the law does not "
            "fit them at this estimate, or the noise is larger than given"
        )
    status = "ok"
    if at_bound:
        status = f"J/m ran to a bound ({r_hat:.3g} m²): the impacts do not determine it"
    elif pinned and far:
        status = (
            f"pinned at a bound: {' and '.join(_PARAMETER_LABELS[n] for n in pinned)} at "
            f"{'its' if len(pinned) == 1 else 'their'} bound with robust residuals "
            f"{robust_sigma:.3g} σ_v (above {MAX_RESIDUAL_SIGMAS:g}): the bound, not the "
            "impacts, set the estimate"
        )
    else:
        caveats = [f"{_PARAMETER_LABELS[n]} at a bound (warning)" for n in pinned]
        if lower_bound:
            caveats.append(
                f"only {n_sliding} impact(s) slide: mu is the least value consistent with "
                "the data (lower bound)"
            )
        if far:
            caveats.append(f"residuals {robust_sigma:.3g} σ_v (warning)")
        status = "; ".join(["ok", *caveats])
    full = lambda values, fill: _expand(values, idx, n, fill)  # noqa: E731
    return SnapshotResult(
        inertia_ratio=r_hat,
        inertia_ratio_std=r_std,
        friction=mu_hat,
        friction_std=math.nan if lower_bound else mu_std,
        friction_is_lower_bound=lower_bound,
        restitution=full(x[2:], math.nan),
        sliding=full(sliding, False).astype(bool),
        impulses=full(impulses, math.nan) * snaps.mass,
        residual=full(res, math.nan),
        used=used,
        flags=flags,
        status=status,
        at_bound=pinned,
        warnings=warnings,
        diagnostics={
            "noise_velocity_m_s": noise_velocity,
            "residual_robust_sigma": robust_sigma,
            "lever_arm_median_m": length,
            "inertia_ratio_bounds_m2": list(bounds),
            "mu_max": mu_max,
            "gravity_m_s2": g.tolist(),
            "cost": float(best.cost),
            "solver_status": best.message,
        },
    )


_PARAMETER_LABELS = {"inertia_ratio": "J/m", "friction": "mu"}


def _bound_warnings(*parameters: tuple) -> tuple[list[str], list[str]]:
    """``(names at a bound, their warnings)`` of ``(value, std, (low, high), label, unit,
    option, name)`` per parameter. At a bound: within 0.1 % of the interval from it, or nearer
    to it than one standard deviation (the bound cuts the estimate's spread: J/m = 7.9e-10 ±
    1.9e-8 m² under a bound of 1e-9, whose fit then sat 18x above the noise); there the value
    is the bound's, not the data's, and its std describes nothing (as simfit's ``at_bound``)."""
    names, warnings = [], []
    for value, std, (low, high), label, unit, option, name in parameters:
        reach = max(1e-3 * (high - low), std if math.isfinite(std) else 0.0)
        side = "lower" if value - low <= high - value else "upper"
        bound = low if side == "lower" else high
        if abs(value - bound) > reach:
            continue
        names.append(name)
        given = f" ({option})" if side == "upper" else ""
        warnings.append(
            f"{label} = {value:.4g}{' ' + unit if unit else ''} is at its {side} bound "
            f"{bound:.4g}{given}, within {'its std' if reach > 1e-3 * (high - low) else '0.1 %'}"
            ": the bound, not the impacts, holds it, and its std does not describe it"
        )
    return names, warnings


def _expand(values: np.ndarray, idx: np.ndarray, n: int, fill: float | bool) -> np.ndarray:
    """Per-used-impact values placed back among all n impacts (``fill`` elsewhere)."""
    values = np.asarray(values)
    out = np.full((n, *values.shape[1:]), fill, dtype=float)
    out[idx] = values
    return out


def impacts_csv_text(result: SnapshotResult, snaps: Snapshots) -> str:
    """Per impact: label, used, sliding, ε, impulses c_n, c_t [N·s], residual norm [σ_v], flag."""
    reasons = dict(result.flags)
    lines = ["impact,used,sliding,restitution,cn,ct,residual,flag"]
    for i, label in enumerate(snaps.labels):
        reason = reasons.get(label, "").replace('"', "'")
        cells = [
            f'"{label}"',
            str(bool(result.used[i])).lower(),
            str(bool(result.sliding[i])).lower(),
            repr(float(result.restitution[i])),
            repr(float(result.impulses[i, 0])),
            repr(float(result.impulses[i, 1])),
            repr(float(np.linalg.norm(result.residual[i]))),
            f'"{reason}"',
        ]
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"
