"""What ``physid identify`` returns: the fit, its uncertainty, the choices the data made, the
findings and one status (:class:`IdentificationResult`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from physid.findings import Finding, Severity
from physid.offline.choose.against_prior import PriorCheck
from physid.offline.choose.delay import DelayEstimate
from physid.offline.choose.friction_shapes import FrictionShapeFit
from physid.offline.choose.selection import Choice
from physid.offline.fit.consistent import ConsistentFit
from physid.offline.fit.essential import EssentialParameters
from physid.offline.fit.jackknife import JackknifeSpread
from physid.offline.fit.joint_prior import JointPrior
from physid.offline.fit.uncertainty import BodyUncertainty
from physid.offline.observe.gravity import GravityEstimate
from physid.offline.observe.least_squares import LeastSquaresResult
from physid.offline.observe.metrics import FitMetrics
from physid.offline.observe.observations import Observations
from physid.offline.observe.prediction import RecordingFit
from physid.offline.observe.preprocessing import Preprocessing
from physid.robot.model import RobotModel
from physid.robot.regressor import BaseParameters
from physid.status import Status


@dataclass(frozen=True)
class Fit:
    """The estimate and how it predicts the recordings. ``theta`` (physically consistent
    standard parameters) is None when no consistent fit exists."""

    model: RobotModel  # with the estimated gravity, if it was estimated
    base: BaseParameters
    excited: np.ndarray  # (b,) bool: base parameters these data identify
    least_squares: LeastSquaresResult  # on the excited base parameters
    essential: EssentialParameters
    consistent: ConsistentFit
    theta: np.ndarray | None  # (p,)
    theta_base: np.ndarray | None  # (b,) the base parameters of theta
    prior: np.ndarray  # (p,) the URDF prior the fit was pulled toward
    train: FitMetrics  # raw measured torque at the recordings' own samples
    validation: FitMetrics | None = None
    # paper C's error definition: on the filtered, decimated data the fit used (Table 2)
    train_filtered: FitMetrics | None = None
    validation_filtered: FitMetrics | None = None
    train_fits: tuple[RecordingFit, ...] = ()  # per recording, raw samples
    validation_fits: tuple[RecordingFit, ...] = ()
    train_observations: Observations | None = None  # filtered and decimated, as fitted
    validation_observations: Observations | None = None
    autocorrelation: np.ndarray | None = None  # (n, lags + 1) of the training residual
    validation_urdf: float | None = None  # the URDF's own model's error on the validation runs
    drive_gains: dict | None = None  # {joint: {"value", "std"}} when identified


@dataclass(frozen=True)
class Uncertainty:
    """Standard deviations of the base and standard parameters and where each value came from."""

    base_std: np.ndarray  # (b,) paper C eq. 6, NaN where not identifiable
    # (b,) Newey-West (serially correlated errors) with the friction-model term in quadrature:
    # what params.json reports as 'std'
    base_std_robust: np.ndarray
    base_std_friction_model: np.ndarray | None = None  # (b,) the friction-model term alone
    theta_covariance: np.ndarray | None = None  # (p, p) Laplace covariance of theta
    sources: tuple[str, ...] = ()  # (p,) "data" | "regrouped" | "prior"
    bodies: dict[str, BodyUncertainty] = field(default_factory=dict)
    moving_mass_std: float = float("nan")  # kg
    jackknife: JackknifeSpread | None = None  # the time blocks' disagreement, in the std


@dataclass(frozen=True)
class Choices:
    """What the training data chose (blocked cross-validation) and the priors they were fitted
    with."""

    preprocessing: Preprocessing | None = None
    scored: tuple[Choice, ...] = ()  # cut-off, deadband, delay, gravity: every candidate's score
    gravity: GravityEstimate | None = None  # when a base tilt was estimated and kept
    delay: DelayEstimate | None = None  # how late the torque is against the motion
    friction_shapes: FrictionShapeFit | None = None  # sigmoid / Stribeck shapes, if any
    joint_prior: JointPrior | None = None  # the joint terms' prior and what the motion decides
    prior_check: PriorCheck | None = None  # the fit against the URDF's own model and OLS


@dataclass(frozen=True)
class IdentificationResult:
    """Everything ``physid identify`` reports: ``fit``, ``uncertainty``, ``choices``,
    ``findings`` and ``status`` (a physically consistent ``fit.theta`` exists unless the status is
    ``inconsistent``)."""

    fit: Fit
    uncertainty: Uncertainty
    choices: Choices
    status: Status
    findings: tuple[Finding, ...] = ()

    @property
    def ok(self) -> bool:
        """A consistent estimate exists (it may still be suspect)."""
        return self.fit.theta is not None

    @property
    def message(self) -> str:
        """One line: the status's verdict."""
        suspect = self.suspect
        if self.status is Status.INCONSISTENT:
            text = f"no physically consistent parameters: {self.fit.consistent.message}"
            if suspect:  # the cause first: a fit of data that look wrong may fail numerically
                text = (
                    f"the data look wrong: {'; '.join(suspect)}; and no physically "
                    f"consistent parameters fit them: {self.fit.consistent.message}"
                )
            return text
        if self.status is Status.SUSPECT:
            more = f" (and {len(suspect) - 1} more)" if len(suspect) > 1 else ""
            return f"the data look wrong: {suspect[0]}{more}"
        check = self.choices.prior_check
        if self.status is Status.WORSE_THAN_URDF:
            return "the identified model predicts held-out data worse than the URDF's own model"
        if check is not None:
            return (
                f"physically consistent; predicts held-out folds of the training data at "
                f"{100 * check.identified.total:.3g} % (the URDF's own model "
                f"{100 * check.urdf.total:.3g} %)"
            )
        return "physically consistent"

    @property
    def suspect(self) -> tuple[str, ...]:
        """The messages of the suspect findings: why the data look wrong."""
        return tuple(f.message for f in self.findings if f.severity is Severity.SUSPECT)

    @property
    def warnings(self) -> tuple[str, ...]:
        """The messages of the other findings (caution and info), in order."""
        return tuple(f.message for f in self.findings if f.severity is not Severity.SUSPECT)

    # the headline quantities, read through to the sub-records
    model = property(lambda self: self.fit.model)
    theta = property(lambda self: self.fit.theta)
    theta_base = property(lambda self: self.fit.theta_base)
    prior = property(lambda self: self.fit.prior)
    base = property(lambda self: self.fit.base)
    excited = property(lambda self: self.fit.excited)
    least_squares = property(lambda self: self.fit.least_squares)
    essential = property(lambda self: self.fit.essential)
    consistent = property(lambda self: self.fit.consistent)
    train = property(lambda self: self.fit.train)
    validation = property(lambda self: self.fit.validation)
    train_fits = property(lambda self: self.fit.train_fits)
    validation_fits = property(lambda self: self.fit.validation_fits)
    drive_gains = property(lambda self: self.fit.drive_gains)
    train_filtered = property(lambda self: self.fit.train_filtered)
    validation_filtered = property(lambda self: self.fit.validation_filtered)
    train_observations = property(lambda self: self.fit.train_observations)
    validation_observations = property(lambda self: self.fit.validation_observations)
    autocorrelation = property(lambda self: self.fit.autocorrelation)
    validation_urdf = property(lambda self: self.fit.validation_urdf)
    base_std_friction_model = property(lambda self: self.uncertainty.base_std_friction_model)
    jackknife = property(lambda self: self.uncertainty.jackknife)
    delay = property(lambda self: self.choices.delay)
    bodies = property(lambda self: self.uncertainty.bodies)
    sources = property(lambda self: self.uncertainty.sources)
    moving_mass_std = property(lambda self: self.uncertainty.moving_mass_std)
    theta_covariance = property(lambda self: self.uncertainty.theta_covariance)
    base_std = property(lambda self: self.uncertainty.base_std)
    base_std_robust = property(lambda self: self.uncertainty.base_std_robust)
    preprocessing = property(lambda self: self.choices.preprocessing)
    gravity = property(lambda self: self.choices.gravity)
    joint_prior = property(lambda self: self.choices.joint_prior)
    prior_check = property(lambda self: self.choices.prior_check)
    friction_shapes = property(lambda self: self.choices.friction_shapes)

    @property
    def theta_std(self) -> np.ndarray | None:
        """(p,) standard deviations of the standard parameters (Laplace approximation); NaN for
        the terms held without a prior (a still joint's)."""
        covariance = self.uncertainty.theta_covariance
        if covariance is None:
            return None
        std = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
        joint = self.choices.joint_prior
        if joint is not None:
            std[joint.held & (joint.std == 0.0)] = np.nan
        return std

    @property
    def unidentifiable(self) -> tuple[str, ...]:
        fit = self.fit
        return tuple(n for n, ok in zip(fit.base.names, fit.excited, strict=True) if not ok)

    def moving_mass(self) -> float:
        """Total mass of the moving bodies [kg] of the consistent estimate (else the prior)."""
        theta = self.fit.theta if self.fit.theta is not None else self.fit.prior
        return self.fit.model.layout.total_mass(theta)
