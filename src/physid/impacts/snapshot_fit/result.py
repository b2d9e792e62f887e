"""The result of a snapshot fit, its ``result.json`` document and its ``impacts.csv`` table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from physid.findings import Finding, as_dicts
from physid.impacts.poses import csv_number
from physid.impacts.snapshots import Snapshots
from physid.status import Status


@dataclass(frozen=True)
class ImpactFlag:
    """An impact flagged by a check: its ``index`` among the impacts (from 0), ``label`` (row,
    id), the finding ``code`` of the check (IM210-IM216) and the ``reason`` with its numbers."""

    index: int
    label: str
    code: str
    reason: str


@dataclass(frozen=True)
class SnapshotResult:
    """Estimates from impact snapshots (paper D's impact law).

    ``inertia_ratio`` J/m [m²] and ``friction`` μ with their standard deviations (``friction_std``
    NaN when μ is only a lower bound); per impact (n,): ``used`` (entered the fit),
    ``restitution`` ε_i, ``sliding``, ``impulses`` (c_n, c_t) [N·s] for the given mass and
    ``residual`` (n, 3) in units of σ_v (NaN for impacts left out); ``flags`` the impacts a check
    flagged; ``status`` (:class:`physid.status.Status`), a one-line ``message`` and the typed
    ``findings``; ``at_bound`` names the estimates at a bound (``inertia_ratio``, ``friction``).
    """

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
    flags: tuple[ImpactFlag, ...]
    status: Status
    message: str
    findings: tuple[Finding, ...] = ()
    diagnostics: dict[str, Any] = field(default_factory=dict)
    at_bound: tuple[str, ...] = ()

    @property
    def n_sliding(self) -> int:
        """Impacts that entered the fit and slide at the estimate."""
        return int((self.sliding & self.used).sum())

    def to_json_dict(self) -> dict[str, Any]:
        """The ``result.json`` content (non-finite numbers become null when written)."""
        used = self.used
        return {
            "format": "physid.impacts.snapshots_result/1",
            "status": str(self.status),
            "message": self.message,
            "inertia_ratio": self.inertia_ratio,
            "inertia_ratio_unit": "m^2",
            "inertia_ratio_std": self.inertia_ratio_std,
            "friction": self.friction,
            "friction_std": self.friction_std,
            "friction_is_lower_bound": self.friction_is_lower_bound,
            "n_impacts": int(used.size),
            "n_used": int(used.sum()),
            "n_sliding": self.n_sliding,
            "restitution_median": float(np.median(self.restitution[used])) if used.any() else None,
            "at_bound": list(self.at_bound),
            "findings": as_dicts(self.findings),
            "flags": [{"impact": f.label, "code": f.code, "reason": f.reason} for f in self.flags],
            "diagnostics": self.diagnostics,
        }


def impacts_csv_text(result: SnapshotResult, snaps: Snapshots) -> str:
    """Per impact: label, used, sliding, ε, impulses c_n, c_t [N·s], residual norm [σ_v], the
    code and reason of its flag. Impacts left out of the fit have empty sliding, ε, impulse and
    residual cells (never ``nan``)."""
    flagged = {f.index: f for f in result.flags}
    lines = ["impact,used,sliding,restitution,cn,ct,residual,code,flag"]
    for i, label in enumerate(snaps.labels):
        flag = flagged.get(i)
        used = bool(result.used[i])
        cells = [
            f'"{label}"',
            str(used).lower(),
            str(bool(result.sliding[i])).lower() if used else "",
            csv_number(result.restitution[i]),
            csv_number(result.impulses[i, 0]),
            csv_number(result.impulses[i, 1]),
            csv_number(np.linalg.norm(result.residual[i])),
            flag.code if flag else "",
            '"' + (flag.reason.replace('"', "'") if flag else "") + '"',
        ]
        lines.append(",".join(cells))
    return "\n".join(lines) + "\n"
