"""What :func:`physid.oe.solving.solver.solve` returns: estimate, uncertainty and the solver's
history."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np
from numpy.typing import NDArray

from physid.body.inertia import mass_com_inertia_from_pi, mass_com_inertia_std
from physid.status import Status


class Termination(StrEnum):
    """Why a solve stopped (the detail behind its :class:`~physid.status.Status`)."""

    CONVERGED = "converged"  # the predicted decrease and the gaps below their tolerances
    ITERATIONS = "iterations"  # the iteration budget
    TIME = "time"  # the wall-clock safety stop
    LINE_SEARCH = "line_search"  # no step accepted, even at the largest regularisation
    NON_FINITE = "non_finite"  # a non-finite cost or linearization
    SINGULAR = "singular"  # a factorization failed at the largest regularisation
    DIVERGED_START = "diverged_start"  # the single-shooting rollout of the guess diverged


STATUS_OF = {
    Termination.CONVERGED: Status.OK,
    Termination.ITERATIONS: Status.NOT_CONVERGED,
    Termination.TIME: Status.TIME_LIMIT,
    Termination.LINE_SEARCH: Status.STALLED,
    Termination.NON_FINITE: Status.NUMERICAL_FAILURE,
    Termination.SINGULAR: Status.NUMERICAL_FAILURE,
    Termination.DIVERGED_START: Status.NUMERICAL_FAILURE,
}


@dataclass
class OEResult:
    """Outcome of one optimal-estimation solve (paper B eq. 16).

    ``status`` (:class:`physid.status.Status`): ``ok`` when the tolerances were met, else
    ``not_converged`` (the iteration budget), ``time_limit`` (the wall-clock safety stop),
    ``stalled`` (no step accepted) or ``numerical_failure``; ``termination`` the solver's own
    detail (:class:`Termination`), ``message`` one line saying how it
    ended, ``best_iteration`` the iteration of the iterate kept when the last one was worse.
    ``theta_std``/``pi_std`` come from the inverse marginal Gauss-Newton Hessian of theta
    (Laplace approximation); along the ``null_dim`` unidentifiable directions of the last step
    they are not available and are reported as NaN for the entries those directions touch.
    ``joints``: the estimated joint terms (armature, viscous, coulomb) per joint with their
    std, source and prior (:meth:`physid.oe.model.dynamics.ParametrizedModel.joint_summary`), {}
    when none is estimated.
    ``chi2_reduced`` (:meth:`physid.oe.solving.problem.OEProblem.reduced_chi_square`): about 1 when
    the noise model fits the data; above 1 the standard deviations are widened by its root.
    ``std_inflation`` (>= 1, already applied to the standard deviations): the long-run over
    the plain variance of the whitened process noise (:mod:`physid.oe.solving.serial`), far above 1
    when the model errors are slow and systematic (soft contacts) rather than white, times
    ``chi2_reduced`` where that is above 1 (residuals larger than the noise model allows).
    ``base_force`` (a floating base whose body is estimated): the process noise's mean force
    on the base and the mass it is worth, already added to that body's mass variance in
    ``pi_std``/``pi_covariance`` (:mod:`physid.oe.solving.base_force`), else None.
    """

    status: Status
    termination: Termination
    message: str
    iterations: int
    chart: str
    rollout: str
    body_joints: tuple[str, ...]
    theta: NDArray[np.float64]
    pis: NDArray[np.float64]  # (n_bodies, 10), Pinocchio order
    theta_std: NDArray[np.float64]
    pi_std: NDArray[np.float64]
    xs: NDArray[np.float64]
    ws: NDArray[np.float64]
    cost: float
    infeasibility: float
    null_dim: int
    solve_time: float
    history: dict[str, list] = field(default_factory=dict)
    chi2_reduced: float = float("nan")
    pi_covariance: NDArray[np.float64] | None = None  # (n_bodies, 10, 10), as pi_std
    std_inflation: float = 1.0  # variance factor (serial x chi-square), already in the std
    joints: dict[str, dict] = field(default_factory=dict)  # estimated joint terms, by joint
    best_iteration: int | None = None  # the iterate kept, when not the last one
    # [m/s^2] of the estimated accelerometer bias (OEOptions.bias_in_covariance), else None;
    # its covariance (3, 3), inflated as pi_covariance
    accelerometer_bias_std: NDArray[np.float64] | None = None
    accelerometer_bias_covariance: NDArray[np.float64] | None = None
    # a floating base's mean unmodelled force and the mass bound added to the base body's mass
    # variance (physid.oe.solving.base_force.BaseForce), else None
    base_force: object | None = None
    contact_compliance: dict | None = None  # ParametrizedModel.compliance_summary

    @property
    def converged(self) -> bool:
        """The solver met its tolerances (the status may still be lowered by the caller's
        checks, e.g. the accelerometer-bias rounds)."""
        return self.termination is Termination.CONVERGED

    def body_summary(self) -> dict[str, dict]:
        """Per estimated body: mass [kg], com [m], inertia about the com [kg m^2], pi, pi_std,
        and ``std``: the standard deviations of mass, com and inertia about the com (the
        per-body layout of identify's params.json; NaN where not available)."""
        out = {}
        covariances = self.pi_covariance
        if covariances is None:
            covariances = np.full((len(self.body_joints), 10, 10), np.nan)
        for name, pi, std, cov in zip(
            self.body_joints, self.pis, self.pi_std, covariances, strict=True
        ):
            mass, com, inertia = mass_com_inertia_from_pi(pi)
            mass_std, com_std, inertia_std = mass_com_inertia_std(pi, cov)
            out[name] = {
                "mass": float(mass),
                "com": com.tolist(),
                "inertia": inertia.tolist(),
                "pi": pi.tolist(),
                "pi_std": std.tolist(),
                "std": {"mass": mass_std, "com": com_std.tolist(), "inertia": inertia_std.tolist()},
            }
        return out

    def to_json_dict(self) -> dict:
        """Everything but the trajectories, JSON-ready (result.json of ``physid oe``)."""
        return {
            "status": str(self.status),
            "message": self.message,
            "termination": str(self.termination),
            "converged": self.converged,
            "best_iteration": self.best_iteration,
            "iterations": self.iterations,
            "chart": self.chart,
            "rollout": self.rollout,
            "cost": self.cost,
            "infeasibility": self.infeasibility,
            "null_dim": self.null_dim,
            "chi2_reduced": self.chi2_reduced,
            "std_inflation": self.std_inflation,
            "solve_time_s": self.solve_time,
            "base_force": None
            if self.base_force is None
            else {
                "force_N": list(self.base_force.force),
                "standard_error_N": self.base_force.standard_error,
                "mass_bound_kg": self.base_force.mass_bound,
            },
            "theta": self.theta.tolist(),
            "theta_std": self.theta_std.tolist(),
            "bodies": self.body_summary(),
            "joints": self.joints,
            "contact_compliance": self.contact_compliance,
            "history": {k: np.asarray(v).tolist() for k, v in self.history.items()},
        }
