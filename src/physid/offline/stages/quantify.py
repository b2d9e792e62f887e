"""Stage 5: how sure the estimate is, and what the data or the prior decide.

Paper C eq. 6 standard deviations, Newey-West ones for serially correlated residuals with the
friction model's own term in quadrature, the Laplace covariance of the consistent MAP fit
(:mod:`physid.offline.fit.uncertainty`), widened to the time blocks' disagreement (the blocked
jackknife); then, per reported quantity, whether the data or the prior decides it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from physid.files.config import IdentifyConfig
from physid.findings import Finding
from physid.offline.choose.choices import tilt_mass_change
from physid.offline.choose.deadband import rms_change
from physid.offline.choose.training import robust_std, variance_inflation
from physid.offline.choose.transition import FrictionModelError, friction_model_error, widened
from physid.offline.codes import (
    DEADBAND_CHOICE,
    PRIOR_DECIDES,
    REGROUPED,
    REPEATED_MOTION,
    TILT_MOVES_MASS,
    TOTAL_MASS_PRIOR,
)
from physid.offline.fit.jackknife import JackknifeSpread, blocked_jackknife, loewner_max
from physid.offline.fit.uncertainty import (
    DEPARTED_PRIOR_STD,
    BodyUncertainty,
    body_uncertainties,
    decided_by_data,
    departed_from_prior,
    moving_mass_std,
    parameter_sources,
    posterior_covariance,
    prior_covariance,
    prior_decided,
    prior_limited_sources,
)
from physid.offline.result import Uncertainty
from physid.offline.stages.base_fit import BaseFit
from physid.offline.stages.consistent_fit import Consistent
from physid.offline.stages.prepare import Prepared
from physid.robot.model import RobotModel

Note = Callable[[str], None]


@dataclass(frozen=True)
class Quantified:
    """The uncertainty record, the variance inflation of correlated residuals, the findings."""

    uncertainty: Uncertainty
    inflation: float  # Newey-West over eq. 6 variance, >= 1
    findings: tuple[Finding, ...]


def quantify(
    prepared: Prepared,
    base_fit: BaseFit,
    consistent: Consistent,
    config: IdentifyConfig,
    note: Note = lambda _message: None,
) -> Quantified:
    """Stage 5 (module docstring)."""
    model, training = prepared.model, prepared.training
    base, excited, ls = base_fit.base, base_fit.excited, base_fit.least_squares
    base_std = np.full(base.size, np.nan)
    base_std[excited] = ls.std
    deadband = next((c for c in prepared.choices if c.code == DEADBAND_CHOICE.code), None)
    friction = friction_model_error(model, deadband, training, prepared.train, ls)
    friction_std = rms_change(friction.halved_doubled, len(base_fit.columns))
    base_std_robust = np.full(base.size, np.nan)
    base_std_robust[excited] = np.hypot(robust_std(training, base_fit.columns, ls), friction_std)
    base_std_friction = np.full(base.size, np.nan)
    base_std_friction[excited] = friction_std
    inflation = variance_inflation(base_std, base_std_robust)
    fit = consistent.fit
    if fit.theta is None or not fit.consistent:
        sources = parameter_sources(base, excited)
        record = Uncertainty(base_std, base_std_robust, base_std_friction, sources=sources)
        return Quantified(record, inflation, ())
    covariance = _posterior(prepared, base_fit, consistent, config, inflation)
    findings: list[Finding] = []
    spread = None
    if prepared.shapes is None:  # the folds hold the linear model's observations only
        note("blocked jackknife")
        covariance, spread, findings = _jackknife(consistent, base_fit, covariance, training)
        if spread is not None:
            base_std_robust[excited] = np.maximum(base_std_robust[excited], spread.base_std)
    covariance = _transition_widened(prepared, base_fit, covariance, friction, inflation)
    record, decided = _decided(prepared, base_fit, consistent, config, covariance)
    record = Uncertainty(
        base_std,
        base_std_robust,
        base_std_friction,
        covariance,
        record.sources,
        record.bodies,
        record.moving_mass_std,
        spread,
    )
    findings += decided
    findings += _total_mass_findings(prepared, base_fit, consistent, config, inflation, record)
    if prepared.gravity is not None:
        change = tilt_mass_change(
            prepared.upright_model,
            prepared.upright,
            model,
            training,
            config,
            consistent.fits.problem,
            consistent.scale,
            consistent.body_scale,
        )
        if abs(change) > record.moving_mass_std:
            tilt = np.degrees(prepared.gravity.tilt_rad)
            findings.append(
                TILT_MOVES_MASS(
                    f"estimating the base tilt ({tilt[0]:.2f}, {tilt[1]:.2f} deg) moves the "
                    f"moving mass by {change:+.3g} kg, more than its std "
                    f"{record.moving_mass_std:.2g} kg",
                    numbers={"mass_change_kg": change, "mass_std_kg": record.moving_mass_std},
                )
            )
    return Quantified(record, inflation, tuple(findings))


def _transition_widened(
    prepared: Prepared,
    base_fit: BaseFit,
    covariance: np.ndarray,
    friction: FrictionModelError,
    inflation: float,
) -> np.ndarray:
    """The covariance with the joint terms' friction-transition error
    (:mod:`physid.offline.choose.transition`), against the least squares' variance under the
    same noise model as the posterior's (eq. 6 times the Newey-West ``inflation``)."""
    variance = base_fit.least_squares.std**2 * inflation
    std = friction.transition.std
    return widened(covariance, prepared.model, base_fit.columns, std, variance)


def _uncertainty_options(
    consistent: Consistent, config: IdentifyConfig, noise: float, inflation: float
) -> dict:
    rho = config.estimation.prior_std_relative
    return dict(
        noise_variance=noise,
        inflation=inflation,
        # the bodies' prior as stated (not body_scale's): tightened to choose plausible masses
        # among fits the data cannot tell apart, it is not knowledge of them
        prior_std_relative=None if rho is None else rho * consistent.scale,
        prior_metric=config.estimation.prior_metric,
        joint=consistent.joint,
    )


def _posterior(
    prepared: Prepared,
    base_fit: BaseFit,
    consistent: Consistent,
    config: IdentifyConfig,
    inflation: float,
) -> np.ndarray:
    """The Laplace covariance of the consistent MAP fit (:func:`posterior_covariance`)."""
    ls = base_fit.least_squares
    options = _uncertainty_options(consistent, config, ls.sigma2, inflation)
    return posterior_covariance(
        prepared.model,
        prepared.training.system,
        ls.weights,
        consistent.fit.theta,
        base_fit.prior,
        prior_total_mass_std_relative=config.estimation.prior_total_mass_std_relative,
        **options,
    )


def _jackknife(
    consistent: Consistent, base_fit: BaseFit, covariance: np.ndarray, training
) -> tuple[np.ndarray, JackknifeSpread | None, list[Finding]]:  # noqa: ANN001
    """The covariance widened to the time blocks' disagreement (blocks by phase on runs that
    repeat their motion: near-replicates would agree by construction)."""
    blocks_of, findings = training.folds, []
    if consistent.phase is not None:
        blocks_of = consistent.phase_systems()
        findings = [REPEATED_MOTION(n) for n in consistent.phase.notes()]
    jackknife = blocked_jackknife(
        lambda s: consistent.fits.theta(s, consistent.scale, consistent.body_scale), blocks_of
    )
    if jackknife is None:
        return covariance, None, findings
    blocks = sum(fold.n_samples > 0 for fold in blocks_of)
    reported = loewner_max(covariance, jackknife)
    excited = base_fit.excited
    spread = JackknifeSpread.of(
        covariance, reported, jackknife, base_fit.base.projection[excited], blocks
    )
    return reported, spread, findings


def _decided(
    prepared: Prepared,
    base_fit: BaseFit,
    consistent: Consistent,
    config: IdentifyConfig,
    covariance: np.ndarray,
) -> tuple[Uncertainty, list[Finding]]:
    """Per reported quantity, whether the data decide it (sources), the bodies' uncertainties,
    and the findings on what the prior decides."""
    model, base, theta = prepared.model, base_fit.base, consistent.fit.theta
    prior, joint = base_fit.prior, consistent.joint
    estimation = config.estimation

    def prior_covariance_at(point: np.ndarray | None) -> np.ndarray:
        rho = estimation.prior_std_relative
        return prior_covariance(
            model,
            prior,
            point,
            rows=prepared.training.system.n_rows,
            prior_std_relative=None if rho is None else rho * consistent.scale,
            prior_metric=estimation.prior_metric,
            prior_total_mass_std_relative=estimation.prior_total_mass_std_relative,
            joint=joint,
            margin=consistent.fits.problem.margin,
        )

    covariance_prior = prior_covariance_at(theta)
    decided = decided_by_data(base, base_fit.excited, covariance, covariance_prior)
    sources = parameter_sources(base, decided)
    sources = prior_limited_sources(model, sources, covariance, covariance_prior, joint)
    bodies = body_uncertainties(model, theta, covariance, sources)
    bodies, departed = departed_from_prior(model, theta, prior, bodies, prior_covariance_at(None))
    record = Uncertainty(
        np.empty(0),
        np.empty(0),
        sources=sources,
        bodies=bodies,
        moving_mass_std=moving_mass_std(model, covariance),
    )
    findings = _prior_decided(model, bodies, sources, covariance, joint)
    if departed:
        findings.append(
            REGROUPED(
                "not the URDF's values although the data do not determine them on their own "
                f"(more than {DEPARTED_PRIOR_STD:g} prior std away; marked 'regrouped' in "
                "params.json): " + ", ".join(departed) + " -- they moved with the body's "
                "parameters the data do decide (physical consistency and the prior tie a body's "
                "mass, centre of mass and inertia together); read them as undetermined",
                names=departed,
            )
        )
    return record, findings


def _prior_decided(
    model: RobotModel,
    bodies: dict[str, BodyUncertainty],
    sources: tuple[str, ...],
    covariance: np.ndarray,
    joint,  # noqa: ANN001 - JointPrior | None
) -> list[Finding]:
    held = None if joint is None else joint.held
    decided = prior_decided(model, bodies, sources, covariance, held)
    if not decided:
        return []
    return [
        PRIOR_DECIDES(
            "the data do not determine these reported quantities, at least in part; the URDF prior "
            "decides them (source 'prior' in params.json): " + ", ".join(decided),
            numbers={"quantities": len(decided)},
            names=decided,
        )
    ]


def _total_mass_findings(
    prepared: Prepared,
    base_fit: BaseFit,
    consistent: Consistent,
    config: IdentifyConfig,
    inflation: float,
    record: Uncertainty,
) -> list[Finding]:
    """The total-mass prior decides the moving mass when it is much tighter than what the data
    and the body priors say."""
    relative_std = config.estimation.prior_total_mass_std_relative
    if relative_std is None:
        return []
    model, ls = prepared.model, base_fit.least_squares
    options = _uncertainty_options(consistent, config, ls.sigma2, inflation)
    free = posterior_covariance(
        model, prepared.training.system, ls.weights, consistent.fit.theta, base_fit.prior, **options
    )
    free_std, mass_std = moving_mass_std(model, free), record.moving_mass_std
    if not mass_std < 0.5 * free_std:
        return []
    prior_mass = model.layout.total_mass(base_fit.prior)
    return [
        TOTAL_MASS_PRIOR(
            f"the total-mass prior ({prior_mass:.3g} kg +- {100 * relative_std:.3g} %) decides the "
            f"moving mass: with it +- {mass_std:.3g} kg, from the data and body priors alone "
            f"+- {free_std:.3g} kg",
            numbers={"mass_std_kg": mass_std, "free_std_kg": free_std},
        )
    ]
