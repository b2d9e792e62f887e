"""Offline identification of a serial robot, end to end (paper C).

trajectories -> observations (filtering, regressor, decimation) -> exact per-joint reduction ->
[gravity direction] -> base parameters and which of them the data excite -> (W)LS with
covariance -> essential parameters -> physically consistent standard parameters (SDP) ->
validation on held-out data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from physid.config import IdentifyConfig
from physid.data import Trajectory
from physid.identify.consistent import ConsistentFit, consistent_least_squares
from physid.identify.essential import EssentialParameters, essential_parameters
from physid.identify.gravity import (
    GravityEstimate,
    estimate_gravity_direction,
    gravity_shift,
    tilted_gravity,
)
from physid.identify.least_squares import (
    LeastSquaresResult,
    autocorrelation_robust_covariance,
    least_squares,
    residual_autocorrelation,
)
from physid.identify.metrics import FitMetrics, fit_metrics
from physid.identify.observations import Observations, build_observations, stack
from physid.identify.reduced import ReducedSystem, reduce_observations
from physid.model import RobotModel, gravity_of, with_gravity
from physid.regressor import BaseParameters, base_parameters, data_rank_deficiency

AUTOCORRELATION_LAGS = 50


@dataclass(frozen=True)
class IdentificationResult:
    """Everything ``physid identify`` reports. ``theta`` is physically consistent when
    ``status == "ok"``; otherwise ``status`` says why there is none."""

    model: RobotModel  # with the estimated gravity, if it was estimated
    base: BaseParameters
    excited: np.ndarray  # (b,) bool: base parameters these data identify
    least_squares: LeastSquaresResult  # on the excited base parameters
    essential: EssentialParameters
    consistent: ConsistentFit
    theta: np.ndarray | None  # (p,) consistent standard parameters
    theta_base: np.ndarray | None  # (b,) their base parameters
    base_std: np.ndarray  # (b,) standard deviations (paper C eq. 6), NaN where not identifiable
    base_std_robust: np.ndarray  # (b,) Newey-West standard deviations (serially correlated errors)
    train: FitMetrics
    validation: FitMetrics | None
    train_observations: Observations
    validation_observations: Observations | None
    autocorrelation: np.ndarray  # (n, lags + 1) of the training residual of theta
    status: str  # "ok", or a one-line reason
    warnings: tuple[str, ...] = field(default=())
    gravity: GravityEstimate | None = None  # when the gravity direction was estimated

    @property
    def unidentifiable(self) -> tuple[str, ...]:
        return tuple(n for n, ok in zip(self.base.names, self.excited, strict=True) if not ok)

    def moving_mass(self) -> float:
        """Total mass of the moving bodies [kg] of the consistent estimate (else the prior)."""
        theta = self.theta if self.theta is not None else self.model.prior_parameters()
        layout = self.model.layout
        return float(sum(theta[layout.body_slice(j)][0] for j in layout.body_joints))


def observations_of(
    model: RobotModel,
    trajectories: list[Trajectory],
    config: IdentifyConfig,
    progress: Callable[[str], None] | None = None,
    *,
    gravity_regressors: bool = False,
) -> Observations:
    """Observations of several trajectories, processed alike and stacked."""
    return stack(
        [
            build_observations(
                model, t, config.filter, gravity_regressors=gravity_regressors, progress=progress
            )
            for t in trajectories
        ]
    )


def _excited(system: ReducedSystem, base: BaseParameters) -> np.ndarray:
    excited = np.ones(base.size, dtype=bool)
    X, _ = system.stacked(base.independent)
    excited[data_rank_deficiency(X)] = False
    return excited


def _fit_gravity(
    model: RobotModel, system: ReducedSystem, weighting: str
) -> tuple[RobotModel, ReducedSystem, GravityEstimate]:
    """Estimate the gravity direction; return the re-oriented model and reduced system.

    Row weights come from a fit under the URDF gravity; the search uses the base parameters of a
    generic gravity direction (a tilt makes first moments identifiable that vertical gravity
    regroups, so the URDF's base set would bias the tilt).
    """
    base = base_parameters(model)
    weights = least_squares(system, base.independent[_excited(system, base)], weighting).weights
    gravity_urdf = gravity_of(model)
    generic = base_parameters(with_gravity(model, tilted_gravity(gravity_urdf, np.r_[0.1, 0.1])))
    n_inertial = model.layout.n_inertial
    estimate = estimate_gravity_direction(
        system, generic.independent, n_inertial, gravity_urdf, weights
    )
    shifted = gravity_shift(system, n_inertial, estimate.gravity - gravity_urdf)
    return with_gravity(model, estimate.gravity), shifted, estimate


def _joint_warnings(model: RobotModel, observations: Observations) -> list[str]:
    """Name the joints that (almost) never move: their terms cannot be identified."""
    messages = []
    span = np.ptp(observations.q, axis=0)
    speed = np.sqrt(np.mean(observations.dq**2, axis=0))
    for k, joint in enumerate(model.joint_names):
        if span[k] < 1e-3 or speed[k] < 1e-4:
            messages.append(
                f"joint '{joint}' barely moves (range {span[k]:.2g}, rms speed {speed[k]:.2g}): "
                "its parameters are reported as unidentifiable"
            )
    return messages


def _robust_std(
    observations: Observations, columns: np.ndarray, ls: LeastSquaresResult
) -> np.ndarray:
    """Standard deviations valid for serially correlated residuals (Newey–West)."""
    weights = ls.weights[None, :]
    X = observations.W[:, :, columns] * weights[:, :, None]
    residual = (observations.tau - observations.W[:, :, columns] @ ls.theta) * weights
    covariance, _ = autocorrelation_robust_covariance(X, residual, ls.covariance / ls.sigma2)
    return np.sqrt(np.clip(np.diag(covariance), 0.0, None))


def _whiteness_warnings(model: RobotModel, autocorrelation: np.ndarray) -> list[str]:
    """Paper C §4.3: serially correlated residuals make eq. 6's standard deviations optimistic."""
    lag1 = autocorrelation[:, 1]
    correlated = [f"{j} {r:.2f}" for j, r in zip(model.joint_names, lag1, strict=True) if r > 0.5]
    if not correlated:
        return []
    return [
        "residuals are serially correlated (lag-1 autocorrelation "
        + ", ".join(correlated)
        + "): paper C eq. 6 standard deviations are optimistic; params.json 'std' holds the "
        "Newey-West ones, which account for it"
    ]


def identify(
    model: RobotModel,
    train: list[Trajectory],
    config: IdentifyConfig,
    *,
    validation: list[Trajectory] | None = None,
    progress: Callable[[str], None] | None = None,
) -> IdentificationResult:
    """Identify ``model``'s parameters from training trajectories; validate on the others."""
    note = progress or (lambda _message: None)
    estimation = config.estimation
    fit_gravity = estimation.estimate_gravity_direction
    observations = observations_of(model, train, config, note, gravity_regressors=fit_gravity)
    note("reduction")
    system = reduce_observations(observations.W, observations.tau, observations.G)
    gravity = None
    if fit_gravity:
        note("gravity direction")
        gravity_urdf = gravity_of(model)
        model, system, gravity = _fit_gravity(model, system, estimation.weighting)
        W = _shift_regressor(observations, gravity.gravity - gravity_urdf, model.layout.n_inertial)
        observations = replace(observations, W=W, G=None)
    note("base parameters")
    base = base_parameters(model)
    excited = _excited(system, base)
    columns = base.independent[excited]
    warnings = _joint_warnings(model, observations)

    note("least squares")
    ls = least_squares(system, columns, estimation.weighting)
    essential = essential_parameters(
        system,
        columns,
        tuple(np.asarray(base.short_names)[excited]),
        ls.weights,
        ratio=estimation.essential_ratio,
    )
    note("physically consistent fit (SDP)")
    fit = consistent_least_squares(
        model,
        system,
        ls.weights,
        model.prior_parameters(),
        noise_variance=ls.sigma2,
        margin=estimation.consistency_margin,
        prior_std_relative=estimation.prior_std_relative,
        prior_total_mass_std_relative=estimation.prior_total_mass_std_relative,
        prior_metric=estimation.prior_metric,
    )
    if fit.status == "optimal_inaccurate":
        warnings.append(
            "the consistency SDP stopped at reduced accuracy (Clarabel: optimal_inaccurate); "
            "the bodies were checked and are consistent, but the fit may be slightly suboptimal"
        )
    base_std = np.full(base.size, np.nan)
    base_std[excited] = ls.std
    base_std_robust = np.full(base.size, np.nan)
    base_std_robust[excited] = _robust_std(observations, columns, ls)
    if fit.theta is None or not fit.consistent:
        status = f"no physically consistent parameters: {fit.message}"
        theta = theta_base = None
        predicted = observations.W[:, :, columns] @ ls.theta
    else:
        status = "ok"
        theta, theta_base = fit.theta, base.from_standard(fit.theta)
        predicted = observations.W @ theta
    train_metrics = fit_metrics(observations.tau, predicted)
    autocorrelation = residual_autocorrelation(observations.tau - predicted, AUTOCORRELATION_LAGS)
    warnings.extend(_whiteness_warnings(model, autocorrelation))

    validation_observations = validation_metrics = None
    if validation:
        note("validation")
        validation_observations = observations_of(model, validation, config)
        if theta is not None:
            validation_metrics = fit_metrics(
                validation_observations.tau, validation_observations.W @ theta
            )
    return IdentificationResult(
        model,
        base,
        excited,
        ls,
        essential,
        fit,
        theta,
        theta_base,
        base_std,
        base_std_robust,
        train_metrics,
        validation_metrics,
        observations,
        validation_observations,
        autocorrelation,
        status,
        tuple(warnings),
        gravity,
    )


def _shift_regressor(observations: Observations, delta: np.ndarray, n_inertial: int) -> np.ndarray:
    """The observations' standard regressor for gravity ``g0 + delta`` (exact, linear in g)."""
    W = observations.W.copy()
    for axis in range(3):
        block = observations.G[:, :, axis * n_inertial : (axis + 1) * n_inertial]
        W[:, :, :n_inertial] += delta[axis] * block
    return W
