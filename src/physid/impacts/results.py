"""Result dataclasses of the impacts simulator and of the identification NLP (paper D §3, §5)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from physid.budget import Stop
from physid.findings import Finding, Severity, as_dicts, of_severity
from physid.impacts.geometry import gravity_vector
from physid.status import Status

#: What §5.2 of paper D proves and every identification result repeats.
IDENTIFIABILITY_NOTE = (
    "Only the ratio J/m is identifiable from poses (paper D §5.2, eq. 30 has a one-dimensional "
    "null space): the mass is fixed to the given value and only scales the reported impulses."
)


@dataclass(frozen=True)
class SimulationResult:
    """A simulated trajectory on the step grid ``t`` (N+1 instants).

    ``q``, ``v``: (N+1, 3) poses (x [m], y [m], θ [rad]) and velocities (v_x, v_y [m/s], ω [rad/s]);
    ``impulse_normal`` / ``impulse_tangent``: (N, nc) impulses c_n^{k+1} and net friction impulse
    c_t+ − c_t- along d+ [N·s] acting over step k → k+1, one column per candidate in ``pairs``
    (line index, feature index); ``active``: which candidates took part in each step.
    ``status`` is ``ok``, or ``numerical_failure`` when a step's solver failed: ``message`` then
    says where and why, the arrays end at that step and ``findings`` holds the IM301 finding.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    impulse_normal: np.ndarray
    impulse_tangent: np.ndarray
    active: np.ndarray
    pairs: list[tuple[int, int]]
    mass: float
    inertia_ratio: float
    mu: float
    restitution: float
    dt: float
    model: str
    solver: str
    gravity: float | tuple[float, float]  # magnitude along −y, or (g_x, g_y) [m/s²]
    status: Status = Status.OK
    message: str = ""
    findings: tuple[Finding, ...] = ()

    def energy(self) -> np.ndarray:
        """Total mechanical energy ½ m |v_G|² + ½ J ω² − m g·p_G at each instant [J]
        (m g y for gravity along −y)."""
        m, J = self.mass, self.mass * self.inertia_ratio
        v = self.v
        return (
            0.5 * m * (v[:, 0] ** 2 + v[:, 1] ** 2)
            + 0.5 * J * v[:, 2] ** 2
            - m * (self.q[:, :2] @ gravity_vector(self.gravity))
        )


@dataclass(frozen=True)
class ImpactsIdentification:
    """Outcome of the identification NLP of paper D eq. (27) (one throw, or several pooled).

    ``inertia_ratio`` J/m [m²] and ``friction`` μ are ``nan`` when the status is not ``ok`` (the
    best iterate is then in ``diagnostics["estimates_not_identified"]``); ``inertia_ratio_std``
    [m²] is the standard deviation from the curvature of the objective (valid if the noise σ
    given is right); ``friction_is_lower_bound`` says no contact slid, so μ is the least value
    the data allow. ``status`` (:class:`physid.status.Status`), a one-line ``message`` and the
    typed ``findings`` (codes IM0xx, IM1xx) say what to make of it; ``solver_status`` is IPOPT's
    return status of the best solve and ``stopped_by`` the budget that ended the solves (None:
    none did). ``t``/``q``/``v`` is the reconstructed trajectory on the fine grid (N+1 instants,
    eq. 25); ``impulse_normal``/``impulse_tangent`` (N, nc) are the impulses [N·s] for the given
    ``mass``; ``t_meas``/``q_meas`` the data and ``fit_residual`` (N_m, 3) the χ of eq. (24).
    """

    inertia_ratio: float
    inertia_ratio_std: float
    friction: float
    friction_is_lower_bound: bool
    status: Status
    message: str
    findings: tuple[Finding, ...]
    solver_status: str
    converged: bool
    stopped_by: Stop | None
    iterations: int
    solve_time: float
    mass: float
    n_substeps: int
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    impulse_normal: np.ndarray
    impulse_tangent: np.ndarray
    pairs: list[tuple[int, int]]
    t_meas: np.ndarray
    q_meas: np.ndarray
    fit_residual: np.ndarray
    diagnostics: dict[str, Any] = field(default_factory=dict)
    note: str = IDENTIFIABILITY_NOTE

    @property
    def identifiable(self) -> bool:
        """The estimates can be used (the status is ``ok``)."""
        return self.status is Status.OK

    @property
    def warnings(self) -> tuple[str, ...]:
        """The messages of the findings of severity caution or worse (the typed findings are
        what to test: physid.findings.with_code)."""
        return tuple(f.message for f in of_severity(self.findings, Severity.CAUTION))

    @property
    def friction_note(self) -> str:
        if not self.identifiable:
            return "not identified (see status)"
        if self.friction_is_lower_bound:
            return "no contact slid: mu is the least value consistent with the data (lower bound)"
        return "estimated from sliding contacts"

    @property
    def inertia(self) -> float:
        """J = m · (J/m) for the fixed mass [kg·m²] (only meaningful through the ratio)."""
        return self.mass * self.inertia_ratio

    def to_json_dict(self) -> dict[str, Any]:
        """The ``result.json`` content: the estimates, status and a summary of the fit."""
        rms = np.sqrt(np.mean(self.fit_residual**2, axis=0)) if self.fit_residual.size else []
        return {
            "format": "physid.impacts.result/1",
            "inertia_ratio": self.inertia_ratio,
            "inertia_ratio_unit": "m^2",
            "inertia_ratio_std": self.inertia_ratio_std,
            "friction": self.friction,
            "friction_is_lower_bound": self.friction_is_lower_bound,
            "friction_note": self.friction_note,
            "identifiable": self.identifiable,
            "status": str(self.status),
            "message": self.message,
            "findings": as_dicts(self.findings),
            "identifiability_note": self.note,
            "mass": self.mass,
            "mass_note": "fixed, not estimated; the impulses (trajectory.csv, impulses.png) scale "
            "with it",
            "inertia": self.inertia,
            "solver": {
                "status": self.solver_status,
                "converged": self.converged,
                "stopped_by_budget": None if self.stopped_by is None else str(self.stopped_by),
                "iterations": self.iterations,
                "solve_time_s": self.solve_time,
                "n_substeps": self.n_substeps,
                "step_s": float(self.t[1] - self.t[0]) if self.t.size > 1 else None,
            },
            "fit": {
                "rms_residual_x_y_theta": rms,
                "total_normal_impulse_Ns": float(self.impulse_normal.sum()),
                "total_tangent_impulse_Ns": float(np.abs(self.impulse_tangent).sum()),
            },
            "diagnostics": self.diagnostics,
        }
