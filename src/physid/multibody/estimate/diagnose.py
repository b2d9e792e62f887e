"""What the end of a fit says about its parameters, as findings: a body collapsed to the lower
end of its plausibility box (``MB201``) or pushed to its upper end (``MB209``), a body shrunk far
below its start (``MB203``), a friction term or any other parameter at a bound (``MB202``), a
parameter the data do not determine (``MB205``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import physid.multibody.codes as codes
from physid.findings import Finding
from physid.multibody.estimate.prior import inertial

#: A mass or principal inertia below this share of its start has shrunk (MB203).
SHRUNK_RATIO = 0.01
#: Friction terms whose bound 0 means "no such friction" (MB202 when they end there).
FRICTION_SLOTS = ("viscous", "dry", "stribeck_delta", "coulomb")
#: Slots whose closeness to a bound is judged with a 1e-9 absolute floor (bound 0 is common).
_ABSOLUTE_FLOOR = (*FRICTION_SLOTS, "stribeck_c")


def _slot(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def collapsed(
    names: Sequence[str], values: np.ndarray, start: np.ndarray, lower: np.ndarray
) -> list[str]:
    """Estimated masses and principal inertias at their lower bound: within 1e-4 of their
    start (or bound) above it. LM approaches a collapse geometrically and may stop just short
    of the bound (a few millionths of its start above it): a collapsed or unexcited body,
    never an estimate to use."""
    return [
        n
        for n, v, s, lo in zip(names, values, start, lower, strict=True)
        if inertial(n) and v - lo <= 1e-4 * max(abs(s), abs(lo), 1e-300)
    ]


def pushed_up(
    names: Sequence[str], values: np.ndarray, start: np.ndarray, upper: np.ndarray
) -> list[str]:
    """Estimated masses and principal inertias at their (finite) upper bound."""
    return [
        n
        for n, v, s, hi in zip(names, values, start, upper, strict=True)
        if inertial(n) and np.isfinite(hi) and hi - v <= 1e-4 * max(abs(s), abs(hi), 1e-300)
    ]


def shrunk(names: Sequence[str], values: np.ndarray, start: np.ndarray) -> list[str]:
    """Estimated masses and principal inertias that ended below :data:`SHRUNK_RATIO` of their
    start without reaching a bound (:func:`collapsed`): LM on a body the data cannot hold up
    drives it toward zero and stops on the way, orders of magnitude below its start."""
    return [
        n
        for n, v, s in zip(names, values, start, strict=True)
        if inertial(n) and abs(v) < SHRUNK_RATIO * abs(s)
    ]


def friction_at_zero(names: Sequence[str], values: np.ndarray, lower: np.ndarray) -> list[str]:
    """Estimated friction terms at their lower bound 0 (within 1e-9 of it, or of 1e-6 of the
    largest such term): the data did not decide them, and a friction at 0 would otherwise
    read as "no such friction" with nothing said."""
    friction = [k for k, n in enumerate(names) if _slot(n) in FRICTION_SLOTS]
    if not friction:
        return []
    scale = max(float(np.max(np.abs(values[friction]))), 1e-12)
    return [names[k] for k in friction if lower[k] == 0.0 and values[k] <= max(1e-9, 1e-6 * scale)]


def at_bounds(
    names: Sequence[str],
    values: np.ndarray,
    start: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> list[tuple[str, str]]:
    """``(name, "lower" | "upper")`` of every estimated parameter within ``1e-6`` of the
    magnitude of its start, its bound or the largest estimate of its kind (1e-9 absolute for
    friction, whose bound 0 is common) of a finite bound."""
    out = []
    for k, name in enumerate(names):
        slot = _slot(name)
        kind = [v for n, v in zip(names, values, strict=True) if _slot(n) == slot]
        scale = max(abs(start[k]), float(np.max(np.abs(kind))), 1e-300)
        floor = 1e-9 if slot in _ABSOLUTE_FLOOR else 0.0
        for side, bound in (("lower", lower[k]), ("upper", upper[k])):
            if np.isfinite(bound) and abs(values[k] - bound) <= max(floor, 1e-6 * scale):
                out.append((name, side))
    return out


def not_identifiable(names: Sequence[str], values: np.ndarray, std: np.ndarray) -> list[str]:
    """The estimated parameters whose std is infinite or larger than their value."""
    return [
        n for n, v, s in zip(names, values, std, strict=False) if not np.isfinite(s) or s > abs(v)
    ]


def bound_findings(
    names: Sequence[str],
    values: np.ndarray,
    start: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> tuple[list[Finding], list[str], list[str]]:
    """``(findings, at_bound, collapsed)`` of a fit's end: one finding per parameter at a bound
    or shrunk, the names at a bound and those collapsed (:func:`collapsed`)."""
    index = {n: k for k, n in enumerate(names)}
    down, up = collapsed(names, values, start, lower), pushed_up(names, values, start, upper)
    findings = []
    for code, group, side, bounds in (
        (codes.COLLAPSED_BODY, down, "lower", lower),
        (codes.IMPLAUSIBLE, up, "upper", upper),
    ):
        for name in group:
            k = index[name]
            findings.append(
                code(
                    f"{name} = {values[k]:.4g} ended at the {side} end of its plausibility box "
                    f"({bounds[k]:.4g}; start {start[k]:.4g})",
                    numbers={"value": values[k], "bound": bounds[k], "start": start[k]},
                    names=(name,),
                )
            )
    for name in shrunk(names, values, start):
        if name not in down:
            k = index[name]
            findings.append(
                codes.SHRUNK(
                    f"{name} = {values[k]:.3g} ended below {100 * SHRUNK_RATIO:g} % of its "
                    f"start {start[k]:.3g}",
                    numbers={"value": values[k], "start": start[k], "ratio": SHRUNK_RATIO},
                    names=(name,),
                )
            )
    unseen = friction_at_zero(names, values, lower)
    others = [
        (n, side)
        for n, side in at_bounds(names, values, start, lower, upper)
        if n not in down and n not in up and n not in unseen
    ]
    for name, side in [(n, "lower") for n in unseen] + others:
        k = index[name]
        bound = lower[k] if side == "lower" else upper[k]
        findings.append(
            codes.AT_BOUND(
                f"{name} = {values[k]:.4g} ended at its {side} bound {bound:.4g}: not a "
                "measurement",
                numbers={"value": values[k], "bound": bound},
                names=(name,),
            )
        )
    at_bound = [*down, *up, *unseen, *(n for n, _ in others)]
    return findings, at_bound, down


def identifiability_findings(
    names: Sequence[str], values: np.ndarray, std: np.ndarray, skip: Sequence[str] = ()
) -> list[Finding]:
    """``MB205`` for each parameter (not in ``skip``: those at a bound) whose std exceeds its
    value."""
    out = []
    for k, name in enumerate(names):
        if name in skip or name not in not_identifiable(names, values, std):
            continue
        out.append(
            codes.NOT_IDENTIFIABLE(
                f"{name} = {values[k]:.4g} +- {std[k]:.2g}: the data do not determine it",
                numbers={"value": values[k], "std": std[k]},
                names=(name,),
            )
        )
    return out
