"""The status and findings of a snapshot fit: estimates at a bound, residuals above the noise, μ
only a lower bound, the impacts the checks flagged, another sign convention of the contact
geometry.

An estimate at a bound is no measurement: within 0.1 % of its interval from a bound, or nearer to
it than one standard deviation (the bound cuts its spread, and the law then misses the impacts
far above the noise), the value is the bound's and its std describes nothing (as simfit's
``at_bound``). J/m within 0.1 % of a bound is ``at_bound`` (IM003); either
estimate near a bound with residuals above :data:`MAX_RESIDUAL_SIGMAS` makes the status
``at_bound`` too; alone, each is a caution on an ``ok`` status. Another sign convention that admits
clearly more impacts makes it ``suspect`` (the data as given look wrong).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import physid.impacts.codes as codes
from physid.findings import Code, Finding, Severity
from physid.impacts.snapshot_fit.checks import ORDER, CheckSettings
from physid.impacts.snapshot_fit.conventions import Comparison
from physid.impacts.snapshot_fit.result import ImpactFlag
from physid.status import Status

#: Robust residual standard deviation [σ_v] above which the impact law does not fit the impacts
#: at the estimate. Δv takes the noise of two velocities, so impacts that the law fits give
#: √2 ≈ 1.4; a J/m held far from the truth by a bound gives tens.
MAX_RESIDUAL_SIGMAS = 5.0
#: μ needs at least this many sliding impacts to count as estimated (not a lower bound).
MIN_SLIDING = 3
_FLAG_CODES: dict[str, Code] = {c.code: c for c in (*ORDER, codes.LAW_OUTLIER)}


def number(value: float, spec: str) -> str:
    """``value`` formatted, or ``n/a`` when it is not finite (nothing prints ``nan``)."""
    return format(value, spec) if math.isfinite(value) else "n/a"


@dataclass(frozen=True)
class Estimates:
    """What a fit estimated: J/m [m²], μ and their standard deviations (μ's NaN when it is only
    a lower bound), the sliding impacts, the robust residual standard deviation [σ_v] and the
    bounds (J/m low, high [m²]; μ_max)."""

    inertia_ratio: float
    inertia_ratio_std: float
    friction: float
    friction_std: float
    n_sliding: int
    robust_sigma: float
    bounds: tuple[float, float]
    mu_max: float

    @classmethod
    def of(cls, law: Any, settings: CheckSettings) -> Estimates:
        """The estimates of a :class:`~physid.impacts.snapshot_fit.fit.LawFit`."""
        sliding = int(law.sliding.sum())
        return cls(
            law.inertia_ratio,
            law.inertia_ratio_std,
            law.friction,
            math.nan if sliding < MIN_SLIDING else law.friction_std,
            sliding,
            law.robust_sigma,
            settings.bounds,
            settings.mu_max,
        )

    @property
    def lower_bound(self) -> bool:
        return self.n_sliding < MIN_SLIDING

    def mu_text(self) -> str:
        """μ with its standard deviation, or marked as a lower bound."""
        if self.lower_bound:
            return f"{self.friction:.3g} (lower bound)"
        return f"{self.friction:.3g} ± {number(self.friction_std, '.2g')}"

    def line(self, used: int, n: int) -> str:
        """The one-line summary: J/m and μ with their standard deviations, impacts used."""
        return (
            f"J/m = {self.inertia_ratio:.6g} ± {number(self.inertia_ratio_std, '.2g')} m², "
            f"mu = {self.mu_text()} from {used} of {n} impacts ({self.n_sliding} sliding)"
        )


@dataclass
class Judged:
    """A fit's status, its findings, the names of the estimates at a bound and what its message
    says before the estimates."""

    status: Status
    findings: list[Finding] = field(default_factory=list)
    at_bound: tuple[str, ...] = ()
    message: str = ""


def verdict(estimates: Estimates, used: int) -> Judged:
    """The status and findings of a fit of ``used`` impacts (see the module docstring)."""
    low, high = estimates.bounds
    far = estimates.robust_sigma > MAX_RESIDUAL_SIGMAS
    judged = Judged(Status.OK, [codes.MASS_FIXED("the mass only scales the impulses")])
    ran = not low * 1.001 < estimates.inertia_ratio < high * 0.999
    near = _near_bounds(estimates, skip_inertia=ran)
    if ran:
        judged.status = Status.AT_BOUND
        judged.findings.append(_ran_to_bound(estimates))
    elif near and far:
        judged.status = Status.AT_BOUND
    pinned = judged.status is Status.AT_BOUND and not ran
    severity = Severity.ERROR if pinned else None  # the bound, not the impacts, set it
    judged.findings += [
        codes.PARAMETER_AT_BOUND(message, numbers=numbers, names=(name,), severity=severity)
        for name, message, numbers in near
    ]
    judged.at_bound = (*(("inertia_ratio",) if ran else ()), *(name for name, _, _ in near))
    if far:
        judged.findings.append(
            codes.RESIDUALS_ABOVE_NOISE(
                f"the robust residual standard deviation is {estimates.robust_sigma:.3g} σ_v "
                "(about 1.4 when the impact law fits impacts with velocity noise "
                "--noise-velocity): the law does not fit them at this estimate, or the noise "
                "is larger than given",
                numbers={"robust_sigma": estimates.robust_sigma, "max": MAX_RESIDUAL_SIGMAS},
            )
        )
    if estimates.lower_bound:
        judged.findings.append(
            codes.FRICTION_LOWER_BOUND(
                f"only {estimates.n_sliding} of {used} impacts slide (fewer than {MIN_SLIDING}): "
                "mu is the least value consistent with the data (lower bound)",
                numbers={"sliding_impacts": estimates.n_sliding, "min_sliding": MIN_SLIDING},
                names=("friction",),
            )
        )
    return judged


def _ran_to_bound(estimates: Estimates) -> Finding:
    low, high = estimates.bounds
    side = "lower" if estimates.inertia_ratio < math.sqrt(low * high) else "upper"
    return codes.INERTIA_RATIO_AT_BOUND(
        f"J/m ran to its {side} bound ({estimates.inertia_ratio:.3g} m², bounds "
        f"[{low:.3g}, {high:.3g}] m²): the impacts do not determine it",
        numbers={"inertia_ratio_m2": estimates.inertia_ratio, "low_m2": low, "high_m2": high},
        names=("inertia_ratio",),
    )


def _near_bounds(estimates: Estimates, *, skip_inertia: bool) -> list[tuple[str, str, dict]]:
    """``(name, message, numbers)`` of the estimates at a bound (module docstring)."""
    e = estimates
    near = [] if skip_inertia else [_near("J/m", e.inertia_ratio, e.inertia_ratio_std, e.bounds)]
    near.append(_near("mu", e.friction, e.friction_std, (0.0, e.mu_max)))
    return [item for item in near if item is not None]


_NAMES = {
    "J/m": ("inertia_ratio", " m²", "--max-inertia-ratio"),
    "mu": ("friction", "", "--mu-max"),
}


def _near(
    label: str, value: float, std: float, bounds: tuple[float, float]
) -> tuple[str, str, dict] | None:
    """Whether ``value`` is within 0.1 % of its interval or one ``std`` from a bound."""
    name, unit, option = _NAMES[label]
    low, high = bounds
    reach = max(1e-3 * (high - low), std if math.isfinite(std) else 0.0)
    side = "lower" if value - low <= high - value else "upper"
    bound = low if side == "lower" else high
    if abs(value - bound) > reach:
        return None
    given = f" ({option})" if side == "upper" else ""
    within = "its std" if reach > 1e-3 * (high - low) else "0.1 %"
    message = (
        f"{label} = {value:.4g}{unit} is at its {side} bound {bound:.4g}{given}, within "
        f"{within}: the bound, not the impacts, holds it, and its std does not describe it"
    )
    return name, message, {"value": value, "bound": bound, "std": std}


def flag_findings(flags: tuple[ImpactFlag, ...], n: int) -> list[Finding]:
    """One finding per kind of flag: how many impacts, the first one's reason, all their labels."""
    out = []
    for code, kind in _FLAG_CODES.items():
        group = [f for f in flags if f.code == code]
        if not group:
            continue
        left = "kept" if kind is codes.LAW_OUTLIER else "left out"
        first = group[0]
        out.append(
            kind(
                f"{len(group)} of {n} impacts {left}; first {first.label}: {first.reason}",
                numbers={"impacts": len(group), "of": n},
                names=[f.label for f in group],
            )
        )
    return out


def convention_finding(comparison: Comparison, other: Estimates, n: int, jacobian: bool) -> Finding:
    """The finding naming a sign convention that admits clearly more impacts, with J/m and μ
    under it (``other``)."""
    convention = comparison.convention
    return codes.SIGN_CONVENTION(
        f"with {convention.describe(jacobian)}, {comparison.consistent} of {n} impacts are "
        f"consistent with the impact law against {comparison.consistent_given} as given "
        f"(McNemar z = {comparison.z:.1f}); under it J/m = {other.inertia_ratio:.4g} ± "
        f"{number(other.inertia_ratio_std, '.2g')} m², mu = {other.mu_text()}",
        numbers={
            "inertia_ratio_m2": other.inertia_ratio,
            "inertia_ratio_std_m2": other.inertia_ratio_std,
            "friction": other.friction,
            "friction_std": other.friction_std,
            "consistent_impacts": comparison.consistent,
            "consistent_as_given": comparison.consistent_given,
            "impacts": n,
            "mcnemar_z": comparison.z,
        },
        names=convention.columns(jacobian) or convention.columns(True),
    )
