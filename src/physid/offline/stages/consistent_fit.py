"""Stage 4: the physically consistent fit with the URDF prior (paper C's least squares under
pseudo-inertia constraints, :mod:`physid.offline.fit.consistent`).

Scored on the training folds against the URDF's own model and plain least squares, it falls
back toward the prior where the data cannot support it, and tightens the bodies' prior where
its masses are implausible and the folds cannot tell (:mod:`physid.offline.choose.against_prior`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from physid.files.config import EstimationConfig, IdentifyConfig
from physid.findings import Finding
from physid.offline.checks.plausibility import static_torque_ratios
from physid.offline.choose.against_prior import PriorCheck, check_against_prior, plausible_prior
from physid.offline.choose.training import TrainingData
from physid.offline.codes import SDP_INACCURATE
from physid.offline.fit.consistent import (
    FOLD_TOLERANCE,
    ConsistentFit,
    ConsistentProblem,
    consistent_least_squares,
)
from physid.offline.fit.joint_prior import JointPrior
from physid.offline.observe.folds import FoldPlan, store_systems
from physid.offline.observe.reduced import ReducedSystem
from physid.offline.stages.base_fit import BaseFit
from physid.offline.stages.prepare import Prepared
from physid.robot.model import RobotModel

Note = Callable[[str], None]


@dataclass
class ConsistentFits:
    """The consistent fit of any system (the whole training system, a fold's) at prior scales
    ``(scale, body_scale)``; the whole system's fits are kept, since the plausibility check
    solves the ones the final fit then needs."""

    model: RobotModel
    system: ReducedSystem  # the whole training system
    base_fit: BaseFit
    problem: ConsistentProblem
    estimation: EstimationConfig
    kept: dict[tuple[float, float], ConsistentFit] = field(default_factory=dict)

    def fit(self, system: ReducedSystem, scale: float, body_scale: float = 1.0) -> ConsistentFit:
        whole = system is self.system
        if whole and (scale, body_scale) in self.kept:
            return self.kept[(scale, body_scale)]
        rho = self.estimation.prior_std_relative
        ls, joint = self.base_fit.least_squares, self.base_fit.joint
        result = consistent_least_squares(
            self.model,
            system,
            ls.weights,
            self.base_fit.prior,
            noise_variance=ls.sigma2,
            prior_std_relative=None if rho is None else rho * scale * body_scale,
            prior_total_mass_std_relative=self.estimation.prior_total_mass_std_relative,
            joint=joint if scale == 1.0 else joint.scaled(scale),
            problem=self.problem,
            tolerance=None if whole else FOLD_TOLERANCE,
        )
        if whole:
            self.kept[(scale, body_scale)] = result
        return result

    def theta(self, system: ReducedSystem, scale: float, body_scale: float = 1.0) -> np.ndarray:
        return self.fit(system, scale, body_scale).theta


@dataclass(frozen=True)
class Consistent:
    """The consistent fit at the chosen prior scales and how they were chosen."""

    fit: ConsistentFit
    check: PriorCheck | None  # None with friction shapes (the folds hold the linear model)
    scale: float  # every prior std times this
    body_scale: float  # the bodies' prior std times this, on top
    joint: JointPrior  # the joint prior at ``scale``
    fits: ConsistentFits
    phase: FoldPlan | None  # folds by phase for runs that repeat their motion
    phase_systems: Callable[[], list[ReducedSystem]]
    static_ratios: Callable[[], dict[str, float]]
    findings: tuple[Finding, ...]

    def with_check(self, check: PriorCheck) -> Consistent:
        """The consistent fit at ``check``'s bodies' prior scale (the prior scale unchanged),
        with its findings."""
        fit = self.fits.fit(self.fits.system, check.scale, check.body_scale)
        return replace(
            self, fit=fit, check=check, body_scale=check.body_scale, findings=_findings(check, fit)
        )


def fit_consistent(
    prepared: Prepared,
    base_fit: BaseFit,
    inputs_urdf: RobotModel,
    problem: ConsistentProblem,
    config: IdentifyConfig,
    note: Note = lambda _message: None,
) -> Consistent:
    """Stage 4 (module docstring); ``inputs_urdf``: the model as the user gave it."""
    model, training = prepared.model, prepared.training
    estimation = config.estimation
    fits = ConsistentFits(model, training.system, base_fit, problem, estimation)
    # runs that repeat their motion: the plausibility choice and the jackknife cut them by phase;
    # the folds' systems are built once, when first needed
    phase = FoldPlan.by_phase(prepared.train) if prepared.shapes is None else None
    phase_systems = functools.cache(
        lambda: store_systems(training.store, phase, training.system.fitted)
    )
    # the recordings' static torques against the URDF's gravity, read only where masses are
    # implausible, once for the plausibility choice and its finding
    static_ratios = functools.cache(
        lambda: static_torque_ratios(prepared.upright_model, prepared.train)
    )
    check = None
    misfit = base_fit.weighting is not None and base_fit.weighting.misfit_dominated
    if prepared.shapes is None:  # the folds hold the linear model's observations only
        check = check_against_prior(
            model,
            inputs_urdf,
            training,
            base_fit.columns,
            base_fit.prior,
            fits.theta,
            note,
            first=prepared.score if base_fit.weighting is None else base_fit.score,
        )
        if estimation.prior_std_relative is not None and estimation.plausible_masses:
            by_phase = None if phase is None else _by_phase(prepared, phase, phase_systems)
            check = plausible_prior(
                check,
                model,
                training,
                base_fit.prior,
                fits.theta,
                note,
                by_phase=by_phase,
                static_ratios=static_ratios,
                refit_conservative=not misfit,
            )
    scale, body_scale = (1.0, 1.0) if check is None else (check.scale, check.body_scale)
    joint = base_fit.joint if scale == 1.0 else base_fit.joint.scaled(scale)
    note("physically consistent fit (SDP)")
    fit = fits.fit(training.system, scale, body_scale)
    return Consistent(
        fit,
        check,
        scale,
        body_scale,
        joint,
        fits,
        phase,
        phase_systems,
        static_ratios,
        _findings(check, fit),
    )


def _findings(check: PriorCheck | None, fit: ConsistentFit) -> tuple[Finding, ...]:
    """What the check against the prior found, and a fit the SDP solved inaccurately."""
    findings = [] if check is None else check.findings()
    if fit.inaccurate and not fit.polished:
        findings.append(
            SDP_INACCURATE(
                "the consistency SDP stopped at reduced accuracy (Clarabel: optimal_inaccurate); "
                "the bodies were checked and are consistent, but the fit may be slightly "
                "suboptimal (the Newton polish did not reach the optimum either)"
            )
        )
    return tuple(findings)


def _by_phase(
    prepared: Prepared, phase: FoldPlan, phase_systems: Callable[[], list[ReducedSystem]]
) -> Callable[[], TrainingData]:
    """The training data with folds by phase, built when first asked for."""
    training = prepared.training

    def by_phase() -> TrainingData:
        # the same raw samples as the training folds' (of prepared.train, under the chosen
        # filter), refolded: their regressors are shared
        return replace(training, folds=phase_systems(), rows=training.rows[0].pool.split(phase))

    return by_phase
