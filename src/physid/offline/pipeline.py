"""Offline identification of a serial robot, end to end (paper C).

trajectories -> observations under each candidate filter (filtering, regressor, decimation) ->
exact per-joint reduction per cross-validation fold -> cut-off, deadband and gravity direction
chosen by the folds -> base parameters and which of them the data excite -> (W)LS with
covariance -> essential parameters -> joint-term prior -> the consistent fit scored on the
folds against the URDF's own model (prior tightened if it does worse) -> physically consistent
standard parameters (SDP) -> validation on held-out data.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from physid.body.inertia import check_consistency
from physid.errors import InputError
from physid.files.config import IdentifyConfig
from physid.offline.checks.held_out import not_held_out_warnings
from physid.offline.checks.joint_scales import joint_scale_reason
from physid.offline.checks.lift_load import lift_load_warnings
from physid.offline.checks.offset_drift import offset_drift_warning
from physid.offline.checks.plausibility import plausibility_warnings, static_torque_ratios
from physid.offline.checks.suspect import (
    motionless_reason,
    suspect_reasons,
    unexplained_torque_reason,
)
from physid.offline.choose.against_prior import PriorCheck, check_against_prior, plausible_prior
from physid.offline.choose.choices import choose_gravity, choose_training, tilt_mass_change
from physid.offline.choose.deadband import friction_model_std
from physid.offline.choose.delay import DelayEstimate, compensated, estimate_delay
from physid.offline.choose.delay_choice import choose_delay
from physid.offline.choose.friction_shapes import (
    START_FRACTIONS,
    FrictionShapeFit,
    fit_friction_shapes,
    resolvable_speed,
    with_initial_shapes,
)
from physid.offline.choose.selection import Choice
from physid.offline.choose.training import (
    TrainingData,
    filtered_fit,
    gravity_shifted,
    observe_validation,
    robust_std,
    still_joints,
)
from physid.offline.fit.consistent import (
    FOLD_TOLERANCE,
    ConsistentFit,
    ConsistentProblem,
    consistent_least_squares,
)
from physid.offline.fit.essential import EssentialParameters, essential_parameters
from physid.offline.fit.jackknife import JackknifeSpread, blocked_jackknife, loewner_max
from physid.offline.fit.joint_prior import JointPrior, joint_prior
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
from physid.offline.observe.crossval import moving_in, raw_rows
from physid.offline.observe.folds import FoldPlan, store_systems
from physid.offline.observe.gravity import GravityEstimate
from physid.offline.observe.least_squares import (
    LeastSquaresResult,
    least_squares,
    residual_autocorrelation,
)
from physid.offline.observe.metrics import FitMetrics
from physid.offline.observe.observations import Observations, joint_speed_rms
from physid.offline.observe.prediction import RecordingFit, predict_recording, stacked_metrics
from physid.offline.observe.preprocessing import (
    Preprocessing,
    held_out_filter,
    resolve_preprocessing,
)
from physid.offline.observe.reduced import ReducedSystem
from physid.offline.observe.windows import (
    Recording,
    missing_derivatives,
    recorded_derivative_problems,
)
from physid.recordings.streamed import preview
from physid.robot.model import RobotModel, gravity_of, revolute_mask
from physid.robot.regressor import BaseParameters, base_parameters, data_rank_deficiency

AUTOCORRELATION_LAGS = 50
WORSE_THAN_URDF = "worse_than_urdf"
# A validation error above this multiple of the URDF's own model's on the same recordings is
# "worse than the URDF": a tenth, so that a model file that is already the truth (simulated
# data) and a fit at the noise floor are not called worse for the last digits of the noise.
# Measured: xMate7p, 0.5 s of training (1 kHz runs 1 + 2) -> run 3: 46.5 % vs 23.9 % (45.4 %
# since run 1 keeps its stamps); its 4 validation blocks differ by 0.18 +- 0.27, so no block
# rule would have said it.
HELD_OUT_MARGIN = 1.1


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
    # (b,) Newey-West standard deviations (serially correlated errors) with the friction-model
    # term (deadband.friction_model_std) added in quadrature: what params.json reports as 'std'
    base_std_robust: np.ndarray
    train: FitMetrics  # at the recordings' own samples, raw measured torque
    validation: FitMetrics | None
    train_observations: Observations  # filtered and decimated, as fitted
    validation_observations: Observations | None
    autocorrelation: np.ndarray  # (n, lags + 1) of the training residual of theta
    # "ok"; "suspect" (reasons in ``suspect``: the data look wrong); WORSE_THAN_URDF (the fit
    # predicts held-out folds of the training data, or the validation recordings, worse than
    # the URDF's own model); or why nothing consistent exists
    status: str
    warnings: tuple[str, ...] = field(default=())
    gravity: GravityEstimate | None = None  # when the gravity direction was estimated
    preprocessing: Preprocessing | None = None
    train_fits: tuple[RecordingFit, ...] = ()  # per recording, raw samples
    validation_fits: tuple[RecordingFit, ...] = ()
    prior: np.ndarray | None = None  # (p,) the URDF prior the fit was pulled toward
    sources: tuple[str, ...] = ()  # (p,) "data" | "regrouped" | "prior" per standard parameter
    theta_covariance: np.ndarray | None = None  # (p, p) Laplace covariance of theta
    bodies: dict[str, BodyUncertainty] = field(default_factory=dict)
    moving_mass_std: float = float("nan")  # kg
    suspect: tuple[str, ...] = ()  # reasons the data look wrong though well-formed
    # Paper C's error definition: on the filtered, decimated data the fit used (Table 2).
    train_filtered: FitMetrics | None = None
    validation_filtered: FitMetrics | None = None
    base_std_friction_model: np.ndarray | None = None  # (b,) the friction-model term alone
    # {joint: {"value", "std"}} when the drive gains were identified (identify.drive_gains)
    drive_gains: dict | None = None
    # the sigmoid / Stribeck shapes, when some joint has such a friction model
    friction_shapes: FrictionShapeFit | None = None
    joint_prior: JointPrior | None = None  # the joint terms' prior and what the motion decides
    choices: tuple[Choice, ...] = ()  # cut-off, deadband, gravity: cross-validated (.choices)
    prior_check: PriorCheck | None = None  # the fit against the URDF's own model and OLS
    delay: DelayEstimate | None = None  # how late the torque is against the motion (reported)
    jackknife: JackknifeSpread | None = None  # the time blocks' disagreement, in the std
    # the URDF's own model's raw-torque error on the validation recordings (None: none given)
    validation_urdf: float | None = None

    @property
    def ok(self) -> bool:
        """A consistent estimate exists (status ``ok`` or ``suspect``)."""
        return self.theta is not None

    @property
    def theta_std(self) -> np.ndarray | None:
        """(p,) standard deviations of the standard parameters (Laplace approximation)."""
        if self.theta_covariance is None:
            return None
        std = np.sqrt(np.clip(np.diag(self.theta_covariance), 0.0, None))
        if self.joint_prior is not None:  # a still joint's terms: held, no prior (_held_still)
            std[self.joint_prior.held & (self.joint_prior.std == 0.0)] = np.nan
        return std

    @property
    def unidentifiable(self) -> tuple[str, ...]:
        return tuple(n for n, ok in zip(self.base.names, self.excited, strict=True) if not ok)

    def moving_mass(self) -> float:
        """Total mass of the moving bodies [kg] of the consistent estimate (else the prior)."""
        theta = self.theta if self.theta is not None else self.model.prior_parameters()
        return self.model.layout.total_mass(theta)


STILL_JOINT_TERMS = ("fv", "fc", "fs", "phi1", "Ia")  # driven by the joint's own motion
STILL_REASON = "the joint barely moves"  # why they are held (params.json joint_prior.held)


def _excited(
    system: ReducedSystem, base: BaseParameters, still_joints: tuple[str, ...] = ()
) -> np.ndarray:
    """Base parameters these data identify: within the numerical rank of the base regressor,
    and not a velocity-driven term of a joint that never moves (its ``sign(dq)`` column would be
    the sign of velocity noise, not friction)."""
    excited = np.ones(base.size, dtype=bool)
    X, _ = system.stacked(base.independent)
    excited[data_rank_deficiency(X)] = False
    for k, name in enumerate(base.short_names):
        joint, _, term = name.split(" ")[0].rpartition(".")
        if joint in still_joints and term in STILL_JOINT_TERMS:
            excited[k] = False
    return excited


def _joint_warnings(still: dict[str, str]) -> list[str]:
    """Name the joints that (almost) never move: their terms cannot be identified."""
    return [
        f"joint '{joint}' barely moves ({how}): its friction and armature are held at the "
        "URDF's values (unidentifiable)"
        for joint, how in still.items()
    ]


def _held_still(model: RobotModel, joint: JointPrior, still: dict[str, str]) -> JointPrior:
    """``joint`` with the friction and armature of the joints that barely move held at their
    prior: their columns are velocity noise (1e-13 on a joint logged constant), on which the
    torque prior's std (a share of the joint's torque over its column's size) is no prior at
    all. Measured on the KUKA LWR4+ file 2 with one wrist joint logged constant: viscous
    1.0e6 N m s/rad and armature 1.7e8 kg m^2, a held-out error of 3.3e8 %. Their std is 0: the
    model holds them at the prior, and that non-prior's variance carried into the parameters they
    couple with (through the noise their columns hold) gave a dual-arm robot with one arm held
    still 351 +- kg on a link whose prior allows 1.7 kg (:func:`.uncertainty.posterior_covariance`);
    they are reported without a std (:attr:`IdentificationResult.theta_std`)."""
    layout = model.layout
    terms = [(index, layout.names[index]) for j in still for t in STILL_JOINT_TERMS
             if (index := layout.joint_term_index(j, t)) is not None]  # fmt: skip
    if not terms:
        return joint
    indices, names = (list(x) for x in zip(*terms, strict=True))
    held = joint.holding(indices, names, STILL_REASON)
    std = held.std.copy()
    std[indices] = 0.0
    return replace(held, std=std)


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


def _prior_warnings(model: RobotModel, prior: np.ndarray) -> list[str]:
    """Name the URDF bodies that no rigid body could have (the prior is lifted, not trusted)."""
    messages = []
    for joint in model.layout.body_joints:
        report = check_consistency(prior[model.layout.body_slice(joint)], name=joint)
        if not report.consistent:
            messages.append(
                f"URDF body '{joint}' is not physically consistent ({report.reason}); its prior "
                "is lifted just inside the consistent set and counts as 'tiny body'"
            )
    return messages


def _inflation(base_std: np.ndarray, base_std_robust: np.ndarray) -> float:
    """Variance inflation of serially correlated residuals (Newey-West over eq. 6), >= 1."""
    ratio = (base_std_robust / base_std) ** 2
    ratio = ratio[np.isfinite(ratio)]
    return float(max(np.median(ratio), 1.0)) if ratio.size else 1.0


def given_delay_s(config: IdentifyConfig) -> float:
    """The torque delay [s] config ``estimation.torque_delay`` gives as a number (compensated in
    every recording by :func:`identify`), 0 for ``auto`` and ``report``."""
    setting = config.estimation.torque_delay
    return 0.0 if setting in ("auto", "report") else float(setting)


def identify(
    model: RobotModel,
    train: list[Recording],
    config: IdentifyConfig,
    *,
    validation: list[Recording] | None = None,
    progress: Callable[[str], None] | None = None,
) -> IdentificationResult:
    """Identify ``model``'s parameters from training trajectories; validate on the others.

    Suspect means the data, never physid's own choices (issue 24 item 5): when the fit with the
    data-chosen preprocessing explains too little of the torque, it is refitted with the
    conservative choices (paper C's cut-off, the URDF's gravity); if that one is not suspect,
    the first was physid's failure, and the conservative fit is returned with a warning that
    says so with both errors.
    """
    given = given_delay_s(config)
    if given:  # a delay given in seconds: every torque paired with the motion that much earlier
        train = [compensated(r, given) for r in train]
        validation = [compensated(r, given) for r in validation or []] or None
    result = _identify(model, train, config, validation=validation, progress=progress)
    bold = [c for c in result.choices if c.chosen != c.conservative]
    fit_blamed = any(reason.startswith("the identified model leaves") for reason in result.suspect)
    if not (fit_blamed and bold):
        return result
    cutoff = next((c for c in result.choices if c.what == "Butterworth cut-off"), None)
    conservative = config
    if cutoff is not None:
        hz = float(cutoff.scores[cutoff.conservative].label.split()[0])
        conservative = replace(
            conservative, filter=replace(config.filter, butterworth_cutoff_hz=hz)
        )
    conservative = replace(
        conservative,
        estimation=replace(config.estimation, estimate_gravity_direction=False,
                           torque_delay="report" if config.estimation.torque_delay == "auto"
                           else config.estimation.torque_delay),
    )  # fmt: skip
    retry = _identify(model, train, conservative, validation=validation, progress=progress)
    if retry.suspect or retry.theta is None:
        return result
    chosen = ", ".join(f"{c.what} {c.label}" for c in bold)
    message = (
        f"the data-chosen preprocessing ({chosen}) left {100 * result.train.relative_error:.3g} "
        f"% of the raw training torque unexplained; with the conservative choices it is "
        f"{100 * retry.train.relative_error:.3g} %: physid's choice failed, not the data, and "
        "the conservative fit is reported"
    )
    return replace(retry, warnings=(*retry.warnings, message))


def _identify(
    model: RobotModel,
    train: list[Recording],
    config: IdentifyConfig,
    *,
    validation: list[Recording] | None = None,
    progress: Callable[[str], None] | None = None,
) -> IdentificationResult:
    """One identification with the given config (:func:`identify`).

    The filter, the Coulomb deadband and the gravity direction are chosen once for all training
    recordings by blocked cross-validation on them (:mod:`.choices`); the identified model is
    compared on the same folds with the URDF's own and with plain least squares, and falls back
    toward the prior where the data cannot support it (:mod:`.against_prior`). The errors
    reported are those of the raw measured torques at the recordings' own samples
    (:mod:`.prediction`).
    """
    note = progress or (lambda _message: None)
    if not train:
        raise InputError("no training recording given")
    estimation = config.estimation
    want_gravity = estimation.estimate_gravity_direction is not False
    note("preprocessing")
    previews = [preview(t) for t in train]
    shared_samples = not_held_out_warnings(list(train), list(validation or []))
    motionless = motionless_reason(model, list(train))  # every row, streamed ones too
    suspect = [motionless] if motionless else suspect_reasons(
        model, previews + [preview(t) for t in validation or []]
    )
    n_estimated = base_parameters(model).size + (2 if want_gravity else 0)
    folds = FoldPlan.of(train)
    model_urdf = model
    rms_speed = None
    if model.layout.nonlinear_friction:  # the first pass needs shapes; the fit picks the start
        start = resolve_preprocessing(config.filter, train, n_estimated).filter
        rms_speed = joint_speed_rms(model, train, start)
        model = with_initial_shapes(model, rms_speed, START_FRACTIONS[0])
    problem = ConsistentProblem(
        model, model.prior_parameters(), margin=estimation.consistency_margin,
        prior_metric=estimation.prior_metric,
    )  # fmt: skip
    lacking = [missing_derivatives(r) for r in [*train, *(validation or [])]]
    # logged derivatives that are not the rates they stand for are no candidate (the folds
    # would reject them anyway: the real KUKA's with one velocity negated scored 3.8 % against
    # 2.57 %), and their columns are named: the mistake may run through the rest of the log.
    # Under method given they are no candidate but the derivatives used: the loaders
    # (workflows.load_trajectories, run_validate) refuse wrong ones, once, before any work
    given = config.filter.method == "given"
    wrong_derivatives = [] if any(lacking) or given else [
        f"{recording.source}: {said}" for recording in [*train, *(validation or [])]
        if (said := recorded_derivative_problems(recording,
                                                 revolute_mask(model, recording.joint_names)))
    ]  # fmt: skip
    training, choices, score = choose_training(
        model, config, train, folds, gravity_regressors=want_gravity,
        n_estimated=n_estimated, problem=problem, note=note,
        recorded_derivatives=not any(lacking) and not wrong_derivatives,
    )  # fmt: skip
    if any(m == ["ddq"] for m in lacking) and training.preprocessing.filter.method != "given":
        # a simulator's or a driver's logged velocities, silently unused (a Drake log's exact
        # dq_): say what is differentiated instead and what would make them a candidate
        training = replace(training, preprocessing=replace(training.preprocessing, notes=(
            *training.preprocessing.notes,
            "the recordings' dq_ columns are not used: velocities come from the positions, "
            "through the chosen filter; logged velocities with ddq_ columns too (every "
            "recording) are a candidate of the cut-off choice")))  # fmt: skip
    delay_choice = choose_delay(
        config, list(train), list(validation or []), folds, training, score, problem=problem,
        gravity_regressors=want_gravity, note=note,
    )  # fmt: skip
    if delay_choice.choice is not None:
        choices.append(delay_choice.choice)
        training, train = delay_choice.training, delay_choice.train
        training = replace(training, preprocessing=replace(training.preprocessing, notes=(
            *training.preprocessing.notes, delay_choice.choice.note())))  # fmt: skip
        score = delay_choice.choice.scores[delay_choice.choice.chosen]
    if delay_choice.delay_s:
        validation = [compensated(r, delay_choice.delay_s) for r in validation or []] or None
    model, preprocessing = training.model, training.preprocessing
    options = preprocessing.filter
    shapes = None
    if model.layout.nonlinear_friction:  # first: a wrong friction shape would tilt gravity
        model, store, system, shapes = fit_friction_shapes(
            model,
            train,
            options,
            training.store,
            rms_speed,
            resolvable_speed=resolvable_speed(model, preprocessing),
            weighting=estimation.weighting,
            note=note,
        )
        preprocessing = replace(preprocessing, notes=(*preprocessing.notes, shapes.note()))
        training = replace(training, store=store, system=system, preprocessing=preprocessing)
    upright_model, upright = model, training
    model, training, gravity, gravity_choice = choose_gravity(
        model, training, config, problem, note, upright_score=score
    )
    if gravity_choice is not None and len(gravity_choice.scores) > 1:
        score = gravity_choice.scores[gravity_choice.chosen]
    elif gravity is not None:  # tilted without a cross-validated choice: not scored yet
        score = None
    if gravity_choice is not None:
        choices.append(gravity_choice)
        if gravity_choice.finding is not None:
            suspect = [*suspect, gravity_choice.finding]
        preprocessing = replace(preprocessing, notes=(*preprocessing.notes, gravity_choice.note()))
    if gravity is not None:
        training = replace(
            training,
            store=gravity_shifted(
                training.store, gravity.gravity - gravity_of(upright_model), model.layout.n_inertial
            ),  # fmt: skip
        )
    store, system = training.store, training.system
    note("base parameters")
    base = base_parameters(model)
    moving = moving_in(train)
    still = still_joints(model, store, moving)
    excited = _excited(system, base, tuple(still))
    columns = base.independent[excited]
    prior = model.prior_parameters()
    warnings = list(model.notes) + _joint_warnings(still) + _prior_warnings(model, prior)
    warnings += shared_samples
    if wrong_derivatives:
        warnings.append("the recorded derivatives are not the rates they stand for, and not "
                        "used (the derivatives come from the positions): "
                        + "; ".join(wrong_derivatives))  # fmt: skip
    if gravity_choice is not None and "levelling error" in gravity_choice.reason:
        warnings.append(gravity_choice.note())
    if shapes is not None:
        warnings.extend(shapes.warnings())

    note("least squares")
    ls = least_squares(system, columns, estimation.weighting)
    essential = essential_parameters(
        system,
        columns,
        tuple(np.asarray(base.short_names)[excited]),
        ls.weights,
        ratio=estimation.essential_ratio,
    )
    joint = joint_prior(model, store, prior, preprocessing.velocity_noise_std)
    # a still joint's friction is held whole (_held_still), and a joint left out of the fit
    # has no equation: their one-way offset is not news
    unfitted = {j for k, j in enumerate(model.joint_names) if not model.fitted[k]}
    kept = {name: why for name, why in joint.reasons.items()
            if name.rsplit(".", 1)[0] not in {*still, *unfitted}}  # fmt: skip
    joint = replace(joint, reasons=kept)
    warnings.extend(joint.reasons.values())
    joint = _held_still(model, joint, still)
    total_mass_prior = estimation.prior_total_mass_std_relative

    joint_unscaled = joint  # consistent_fit scales it; ``joint`` becomes the chosen scale's

    # the whole system's fits, by (scale, body_scale): the plausibility check solves the ones
    # the final fit then needs
    whole_fits: dict[tuple[float, float], ConsistentFit] = {}

    def consistent_fit(fold_system, scale: float, body_scale: float = 1.0):
        key = (scale, body_scale)
        if fold_system is system and key in whole_fits:
            return whole_fits[key]
        rho = estimation.prior_std_relative
        result = consistent_least_squares(
            model,
            fold_system,
            ls.weights,
            prior,
            noise_variance=ls.sigma2,
            prior_std_relative=None if rho is None else rho * scale * body_scale,
            prior_total_mass_std_relative=total_mass_prior,
            joint=joint_unscaled if scale == 1.0 else joint_unscaled.scaled(scale),
            problem=problem,
            tolerance=None if fold_system is system else FOLD_TOLERANCE,
        )
        if fold_system is system:
            whole_fits[key] = result
        return result

    # runs that repeat their motion (folds.py): the plausibility choice and the jackknife cut
    # them by phase; the folds' systems are built once, when first needed
    phase = FoldPlan.by_phase(train) if shapes is None else None

    @functools.cache
    def phase_systems() -> list[ReducedSystem]:
        return store_systems(store, phase, system.fitted)

    check = None
    scale = body_scale = 1.0
    # the recordings' static torques against the URDF's gravity, read only where masses are
    # implausible, once for the plausibility choice and its warning
    static_ratios = functools.cache(lambda: static_torque_ratios(upright_model, train))
    if shapes is None:  # the folds hold the linear model's observations only
        check = check_against_prior(
            model, model_urdf, training, columns, prior,
            lambda s, k, b: consistent_fit(s, k, b).theta, note, first=score,
        )  # fmt: skip

        def by_phase() -> TrainingData:
            return replace(training, folds=phase_systems(),
                           rows=raw_rows(model, train, options, phase))  # fmt: skip

        if estimation.prior_std_relative is not None and estimation.plausible_masses:
            check = plausible_prior(
                check, model, training, prior, lambda s, k, b: consistent_fit(s, k, b).theta,
                note, by_phase=None if phase is None else by_phase,
                static_ratios=static_ratios,
            )  # fmt: skip
        scale, body_scale = check.scale, check.body_scale
        warnings.extend(check.warnings())
        if scale != 1.0:
            joint = joint.scaled(scale)
    note("physically consistent fit (SDP)")
    fit = consistent_fit(system, scale, body_scale)
    if fit.status == "optimal_inaccurate" and not fit.polished:
        warnings.append(
            "the consistency SDP stopped at reduced accuracy (Clarabel: optimal_inaccurate); "
            "the bodies were checked and are consistent, but the fit may be slightly suboptimal "
            "(the Newton polish did not reach the optimum either)"
        )
    base_std = np.full(base.size, np.nan)
    base_std[excited] = ls.std
    base_std_robust = np.full(base.size, np.nan)
    note("uncertainty")
    friction_std = friction_model_std(
        model, train, options, store, columns, estimation.weighting, ls.theta
    )
    base_std_robust[excited] = np.hypot(robust_std(store, columns, ls), friction_std)
    base_std_friction = np.full(base.size, np.nan)
    base_std_friction[excited] = friction_std
    sources = parameter_sources(base, excited)
    covariance = None
    bodies: dict[str, BodyUncertainty] = {}
    mass_std = float("nan")
    train_fits: tuple[RecordingFit, ...] = ()
    train_filtered = validation_filtered = None
    delay = None
    spread = None
    rho = estimation.prior_std_relative
    if fit.theta is None or not fit.consistent:
        status = f"no physically consistent parameters: {fit.message}"
        if suspect:  # the cause first: a fit of data that look wrong may fail numerically
            # (a still pose with 1 mN m of noise put a body at the cone's edge, below the
            # solver's accuracy), and the error line is all the user gets
            status = (f"the data look wrong: {'; '.join(suspect)}; and no physically "
                      f"consistent parameters fit them: {fit.message}")  # fmt: skip
        theta = theta_base = None
        train_metrics, residual = filtered_fit(model, store, ls.theta, columns)
    else:
        theta, theta_base = fit.theta, base.from_standard(fit.theta)
        inflation = _inflation(base_std, base_std_robust)
        uncertainty = dict(
            noise_variance=ls.sigma2,
            inflation=inflation,
            # the bodies' prior as stated (not ``body_scale``'s): tightened to choose plausible
            # masses among fits the data cannot tell apart, it is not knowledge of them
            prior_std_relative=None if rho is None else rho * scale,
            prior_metric=estimation.prior_metric,
            joint=joint,
        )
        covariance = posterior_covariance(
            model, system, ls.weights, theta, prior,
            prior_total_mass_std_relative=total_mass_prior, **uncertainty,
        )  # fmt: skip
        if shapes is None:  # the folds hold the linear model's observations only
            note("blocked jackknife")
            # a recording that repeats its motion: blocks by phase, not near-replicates (folds.py)
            blocks_of = training.folds
            if phase is not None:
                blocks_of = phase_systems()
                preprocessing = replace(preprocessing, notes=(*preprocessing.notes,
                                                              *phase.notes()))  # fmt: skip
            jackknife = blocked_jackknife(
                lambda s: consistent_fit(s, scale, body_scale).theta, blocks_of
            )
            if jackknife is not None:
                blocks = sum(fold.n_samples > 0 for fold in blocks_of)
                reported = loewner_max(covariance, jackknife)
                spread = JackknifeSpread.of(
                    covariance, reported, jackknife, base.projection[excited], blocks
                )
                covariance = reported
                base_std_robust[excited] = np.maximum(
                    base_std_robust[excited], spread.base_std
                )
        def prior_covariance_at(point: np.ndarray | None) -> np.ndarray:
            return prior_covariance(
                model, prior, point, rows=system.n_rows,
                prior_std_relative=uncertainty["prior_std_relative"],
                prior_metric=estimation.prior_metric,
                prior_total_mass_std_relative=total_mass_prior, joint=joint,
                margin=problem.margin,
            )  # fmt: skip

        covariance_prior = prior_covariance_at(theta)
        decided = decided_by_data(base, excited, covariance, covariance_prior)
        sources = parameter_sources(base, decided)
        sources = prior_limited_sources(model, sources, covariance, covariance_prior, joint)
        bodies = body_uncertainties(model, theta, covariance, sources)
        bodies, departed = departed_from_prior(
            model, theta, prior, bodies, prior_covariance_at(None)
        )
        mass_std = moving_mass_std(model, covariance)
        warnings.extend(_prior_decided_warnings(model, bodies, sources, covariance, joint))
        if departed:
            warnings.append(
                "not the URDF's values although the data do not determine them on their own "
                f"(more than {DEPARTED_PRIOR_STD:g} prior std away; marked 'regrouped' in "
                "params.json): " + ", ".join(departed) + " -- they moved with the body's "
                "parameters the data do decide (physical consistency and the prior tie a body's "
                "mass, centre of mass and inertia together); read them as undetermined"
            )
        if total_mass_prior is not None:
            free = posterior_covariance(model, system, ls.weights, theta, prior, **uncertainty)
            warnings.extend(
                _total_mass_prior_warnings(
                    model, prior, total_mass_prior, mass_std, moving_mass_std(model, free)
                )
            )
        if gravity is not None:
            change = tilt_mass_change(upright_model, upright, model, training, config, problem,
                                      scale, body_scale)  # fmt: skip
            if abs(change) > mass_std:
                tilt = np.degrees(gravity.tilt_rad)
                warnings.append(
                    f"estimating the base tilt ({tilt[0]:.2f}, {tilt[1]:.2f} deg) moves the "
                    f"moving mass by {change:+.3g} kg, more than its std {mass_std:.2g} kg"
                )
        note("prediction at the recorded samples")
        train_filtered, residual = filtered_fit(model, store, theta)
        delay = estimate_delay(store, columns, ls.weights, ls.theta, model.fitted, inflation)
        paired = delay_choice.delay_s or given_delay_s(config)  # compensated before this fit
        if delay is not None and paired:
            delay = replace(delay, compensated_s=paired)
        if delay is not None and delay.significant:
            warnings.append(delay.note())
        train_fits = tuple(predict_recording(model, t, options, theta) for t in train)
        train_metrics = stacked_metrics(list(train_fits))
        drift = offset_drift_warning(model, train_fits)
        if drift is not None:
            warnings.append(drift)
        warnings.extend(lift_load_warnings(model, previews))
        warnings.extend(
            plausibility_warnings(model, theta, prior, joint, gravity, static_ratios)
        )
        reason = unexplained_torque_reason(
            train_filtered.relative_error, train_metrics.relative_error,
            options.decimation_cutoff_hz or options.butterworth_cutoff_hz,
        )  # fmt: skip
        if reason:
            suspect.append(reason)
        # only when nothing else is wrong: it reads the other joints' torques as right (a
        # joint whose torque is noise made a coupled one's scale x3.8 "fit" better)
        scales = None if suspect else joint_scale_reason(system, columns, ls.weights,
                                                         model.joint_names)  # fmt: skip
        if scales:
            suspect.append(scales)
        status = "suspect" if suspect else "ok"
        if status == "ok" and check is not None and not check.better_than_urdf:
            status = WORSE_THAN_URDF
    autocorrelation = residual_autocorrelation(residual, AUTOCORRELATION_LAGS)
    warnings.extend(_whiteness_warnings(model, autocorrelation))
    preprocessing = replace(
        preprocessing,
        time_base=tuple(
            t.time_base for t in [*train, *(validation or [])] if getattr(t, "time_base", None)
        ),  # fmt: skip
        row_repairs=tuple(
            t.row_repairs for t in [*train, *(validation or [])]
            if getattr(t, "row_repairs", None)
        ),  # fmt: skip
    )

    validation_observations = validation_metrics = validation_urdf = None
    validation_fits: tuple[RecordingFit, ...] = ()
    if validation:
        note("validation")
        # a held-out run faster than the training runs gets a filter for its own band
        held = [held_out_filter(options, preprocessing.excitation_bandwidth_hz, t)
                for t in validation]  # fmt: skip
        held_options = [filter_options for filter_options, _ in held]
        paired = list(zip(validation, held_options, strict=True))
        warnings.extend(message for _, message in held if message)
        validation_store, validation_filtered = observe_validation(
            model, validation, held_options, theta
        )
        validation_observations = validation_store.stacked()
        if theta is not None:
            validation_fits = tuple(predict_recording(model, t, o, theta) for t, o in paired)
            validation_metrics = stacked_metrics(list(validation_fits))
            if shapes is None:  # the URDF has no sigmoid / Stribeck shapes
                validation_urdf = stacked_metrics(
                    [predict_recording(model_urdf, t, o, prior) for t, o in paired]
                ).relative_error
                identified = validation_metrics.relative_error
                if identified > HELD_OUT_MARGIN * validation_urdf:
                    warnings.append(worse_than_urdf_held_out(identified, validation_urdf, check))
                    if status == "ok":
                        status = WORSE_THAN_URDF
    observations = store.stacked()
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
        preprocessing,
        train_fits,
        validation_fits,
        prior,
        sources,
        covariance,
        bodies,
        mass_std,
        tuple(suspect),
        train_filtered,
        validation_filtered,
        base_std_friction,
        friction_shapes=shapes,
        joint_prior=joint,
        choices=tuple(choices),
        prior_check=check,
        delay=delay,
        jackknife=spread,
        validation_urdf=validation_urdf,
    )


def worse_than_urdf_held_out(identified: float, urdf: float, check: PriorCheck | None) -> str:
    """The warning for a model that predicts the validation recordings worse than the URDF's
    own model (its inertias and joint terms, nothing fitted) on the same samples. ``check``: the
    two on the training folds; where the fit beat the URDF there clearly, the training was not
    too short: what it fitted does not carry over (a PyBullet Panda with the simulator's link
    drag, which the model lacks: 0.430 vs 0.482 % on the folds, 0.827 vs 0.692 % held out)."""
    measured = (
        "the identified model predicts the validation recordings worse than the URDF's own "
        f"model ({100 * identified:.3g} % vs {100 * urdf:.3g} % raw torque error): "
    )
    if check is not None and HELD_OUT_MARGIN * check.identified.total < check.urdf.total:
        return measured + (
            f"on the training folds it predicted better ({100 * check.identified.total:.3g} % "
            f"vs {100 * check.urdf.total:.3g} %), so what it fitted there does not carry over: "
            "an effect the model lacks (a drag, a cable, a friction shape, a torque delay) "
            "absorbed into its parameters, or a validation motion unlike the training one; "
            "keep the URDF's model for that motion, and see the joints' torque panels"
        )
    return measured + (
        "the training recordings do not determine what the validation motion needs (too "
        "short, or too little of it excited: their folds could not see it); keep the URDF's "
        "model for that motion, or record a longer, richer excitation"
    )


def _prior_decided_warnings(
    model: RobotModel,
    bodies: dict[str, BodyUncertainty],
    sources: tuple[str, ...],
    covariance: np.ndarray,
    joint: JointPrior | None,
) -> list[str]:
    held = None if joint is None else joint.held
    decided = prior_decided(model, bodies, sources, covariance, held)
    if not decided:
        return []
    return [
        "the data do not determine these reported quantities, at least in part; the URDF prior "
        "decides them (source 'prior' in params.json): " + ", ".join(decided)
    ]


def _total_mass_prior_warnings(
    model: RobotModel, prior: np.ndarray, relative_std: float, mass_std: float, free_std: float
) -> list[str]:
    prior_mass = model.layout.total_mass(prior)
    if not mass_std < 0.5 * free_std:
        return []
    return [
        f"the total-mass prior ({prior_mass:.3g} kg +- {100 * relative_std:.3g} %) decides the "
        f"moving mass: with it +- {mass_std:.3g} kg, from the data and body priors alone "
        f"+- {free_std:.3g} kg"
    ]
