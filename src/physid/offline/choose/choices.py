"""The preprocessing of one identification, chosen by the user's training data.

Three choices, in order, each by blocked cross-validation (:mod:`.selection`) of the consistent
fit itself (:class:`~.consistent.ConsistentProblem`, compiled once and re-solved per fold: an
unconstrained fit is not a stand-in for it, since on a fold whose motion the others do not
cover it extrapolates far worse than the consistent fit and would score the candidates wrong):

1. the Butterworth cut-off of the derivatives (and with it the decimation), among
   :func:`~.preprocessing.cutoff_candidates` (paper C's ``10 omega_dyn`` is the conservative
   one), each with the narrowest automatic Coulomb deadband;
2. the Coulomb deadband, among :data:`~.deadband.CANDIDATE_FRACTIONS` of each joint's RMS speed
   (the narrowest is the conservative one), and a fraction per joint (:mod:`.deadband_joints`);
3. the direction of gravity: the URDF's (conservative) or the tilt the data estimate
   (:mod:`.gravity`; the tilt is estimated once on all the training data, then scored fold by
   fold like any other candidate).

A choice the user's config makes (a cut-off, a deadband, ``estimate_gravity_direction: true``
or ``false``) is not second-guessed. With sigmoid or Stribeck friction the cut-off is paper C's
(the shapes are fitted after the choice, so the folds would score every candidate with the
wrong shapes, and a cut-off that wins on them biases the fitted static friction).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from physid.files.config import EstimationConfig, IdentifyConfig
from physid.findings import Finding
from physid.offline.checks.plausibility import implausible_masses
from physid.offline.choose.deadband_joints import (
    per_joint_mix_applies,
    per_joint_picks,
    with_per_joint_candidate,
)
from physid.offline.choose.selection import Choice, choose
from physid.offline.choose.training import CandidateObservations, TrainingData, observe_candidate
from physid.offline.codes import CUTOFF_CHOICE, DEADBAND_CHOICE, GRAVITY_CHOICE, MOUNTING
from physid.offline.fit.consistent import FOLD_TOLERANCE, ConsistentProblem
from physid.offline.fit.joint_prior import JointPrior, joint_prior
from physid.offline.observe.crossval import (
    CVScore,
    Fit,
    RowPool,
    cv_score,
    rest_intervals,
    rest_note,
)
from physid.offline.observe.folds import FoldPlan, FoldSystems
from physid.offline.observe.gravity import (
    GravityEstimate,
    estimate_gravity_direction,
    gravity_shift,
    tilted_gravity,
)
from physid.offline.observe.least_squares import least_squares
from physid.offline.observe.preprocessing import (
    DECIMATION_PER_CUTOFF,
    DECIMATION_PER_CUTOFF_NONLINEAR_FRICTION,
    cutoff_candidates,
)
from physid.offline.observe.reduced import ReducedSystem
from physid.offline.observe.windows import Recording
from physid.robot.model import RobotModel, gravity_of, with_gravity
from physid.robot.regressor import BaseParameters, base_parameters, data_rank_deficiency

Note = Callable[[str], None]
AUTO = "auto"
TILT_SIGNIFICANCE = 2.0  # a tilt within this many standard deviations of level is not a candidate
# A tilt angle whose std exceeds this is not determined by the data: a one-joint pendulum about a
# horizontal axis (the tilt about that axis is its centre of mass's angle, the other turns gravity
# along the axis) read "tilt 90.0, -106.6 deg (std 0.014, 337 deg), more than a levelling error"
UNDETERMINED_TILT_DEG = 45.0
# A tilt beyond MAX_TILT_DEG that lowers the training residual (norm) by this fraction is a
# mounting the URDF does not state (mounting_reason)
MOUNTING_GAIN = 0.3
# A base mounted off level by more than this is not a levelling error but a different mounting
# (which the URDF would say): beyond it the estimated tilt stands in for something else (a
# large tilt scales the whole gravity torque by its cosine, which also absorbs wrong masses).
MAX_TILT_DEG = 5.0


@dataclass(frozen=True)
class FitContext:
    """What the fold fits of the selections share: WLS row weights and noise level of the whole
    training system, the joint-term prior, and the compiled consistent problem."""

    weights: np.ndarray
    noise_variance: float
    joint: JointPrior
    problem: ConsistentProblem
    estimation: EstimationConfig

    def fit(self, scale: float = 1.0, body_scale: float = 1.0) -> Fit:
        """The consistent fit (:mod:`.consistent`) of a fold system, every prior std times
        ``scale`` and the bodies' also times ``body_scale``; the prior itself where the solver
        fails (scored like any other model)."""
        rho = self.estimation.prior_std_relative
        joint = self.joint if scale == 1.0 else self.joint.scaled(scale)

        def fit(system: ReducedSystem | None) -> np.ndarray:
            result = self.problem.solve(
                system.standard_only(),
                self.weights,
                noise_variance=self.noise_variance,
                prior_std_relative=None if rho is None else rho * scale * body_scale,
                prior_total_mass_std_relative=self.estimation.prior_total_mass_std_relative,
                joint=joint,
                tolerance=FOLD_TOLERANCE,
            )
            return self.problem.prior if result.theta is None else result.theta

        return fit


def excited_columns(system, base: BaseParameters) -> np.ndarray:
    """The base columns within the numerical rank of the data (read once per system and base
    columns: the delay, gravity and tilt choices ask of the same training system)."""

    def excited() -> np.ndarray:
        X, _ = system.stacked(base.independent)
        within = np.ones(base.size, dtype=bool)
        within[data_rank_deficiency(X)] = False
        return base.independent[within]

    return system.remembered(("excited", base.independent.tobytes()), excited).copy()


def fit_context(
    model: RobotModel,
    training: TrainingData,
    config: IdentifyConfig,
    base: BaseParameters,
    problem: ConsistentProblem,
) -> FitContext:
    """The fold fits' ingredients on these training data."""
    estimation = config.estimation
    columns = excited_columns(training.system, base)
    ls = least_squares(training.system, columns, estimation.weighting)
    joint = joint_prior(
        model,
        training.joint_observations(),
        problem.prior,
        training.preprocessing.velocity_noise_std,
    )
    return FitContext(ls.weights, ls.sigma2, joint, problem, estimation)


def _score(label: str, model: RobotModel, training: TrainingData, context: FitContext):
    return cv_score(label, model, training.folds, training.rows, context.fit())


def choose_training(
    model: RobotModel,
    config: IdentifyConfig,
    train: list[Recording],
    folds: FoldPlan,
    *,
    gravity_regressors: bool,
    n_estimated: int,
    problem: ConsistentProblem,
    note: Note,
    recorded_derivatives: bool = False,
) -> tuple[TrainingData, list[Choice], CVScore | None]:
    """The training data under the cut-off and deadband the folds choose (module docstring),
    the choices, and the chosen candidate's cross-validated score (None if nothing was scored).
    A candidate scored twice (the chosen cut-off's narrowest deadband) is scored once.
    ``recorded_derivatives``: the recordings' own ``dq_``/``ddq_`` columns are a candidate
    too (every training and held-out recording has them)."""
    nonlinear = model.layout.nonlinear_friction
    per = DECIMATION_PER_CUTOFF_NONLINEAR_FRICTION if nonlinear else DECIMATION_PER_CUTOFF
    candidates = cutoff_candidates(
        config.filter,
        train,
        n_estimated,
        decimation_per_cutoff=per,
        recorded_derivatives=recorded_derivatives,
    )
    if nonlinear:  # the friction shapes are fitted after this choice: the folds would score
        candidates = candidates[:1]  # every cut-off with the wrong shapes; keep paper C's
    base = base_parameters(model)
    several = len(candidates) > 1
    rests = [rest_intervals(r) for r in train]  # the same under every filter

    def observe(preprocessing, scoring_only: bool, pool: RowPool | None = None):  # noqa: ANN001
        cutoff = preprocessing.filter.butterworth_cutoff_hz
        note(
            f"observations ({preprocessing.filter.method}"
            + (f", {cutoff:.3g} Hz)" if cutoff else ")")
        )
        return observe_candidate(
            model,
            config,
            preprocessing,
            train,
            folds,
            gravity_regressors=gravity_regressors,
            note=note,
            scoring_only=scoring_only,
            pool=pool,
            rests=rests,
        )

    scores, pools, conservative = [], [], None
    if several:
        scores, pools, conservative = _score_cutoffs(candidates, observe, config, base, problem)
    choices = []
    index = 0
    chosen_score = None
    if several:
        choice = choose("Butterworth cut-off", scores, code=CUTOFF_CHOICE.code)
        choices.append(choice)
        index = choice.chosen
        chosen_score = scores[index]
    # the chosen cut-off in full: stored chunks, every deadband's block, gravity regressors
    # (the conservative one was observed in full already)
    if index == 0 and conservative is not None:
        observed = conservative
    else:
        observed = observe(candidates[index], False, pools[index] if pools else None)
    chosen = _with_choice_notes(observed, choices)
    rest = rest_note(chosen.rows)
    if rest is not None:
        chosen = replace(
            chosen,
            preprocessing=replace(chosen.preprocessing, notes=(*chosen.preprocessing.notes, rest)),
        )
    chosen, deadband, chosen_score = _choose_deadband(
        chosen, chosen_score, config, base, problem, note
    )
    deadband_index = 0
    if deadband is not None:
        choices.append(deadband)
        deadband_index = deadband.chosen
    return chosen.training(deadband_index, extras=gravity_regressors), choices, chosen_score


def _choose_deadband(chosen, chosen_score, config, base, problem, note):  # noqa: ANN001, ANN202
    """``(chosen, choice, score)``: the Coulomb deadband the folds choose among the chosen
    cut-off's candidates (a band per joint as one more candidate where it applies); ``choice``
    None when there is a single candidate. The cut-off's score is reused for the narrowest band
    (the same candidate)."""
    if len(chosen.models) <= 1:
        return chosen, None, chosen_score
    note("Coulomb deadband")
    context = fit_context(chosen.models[0], chosen.training(0), config, base, problem)
    scores = [
        replace(chosen_score, label=_deadband_label(m, k))
        if k == 0 and chosen_score is not None
        else _score(_deadband_label(m, k), m, chosen.training(k), context)
        for k, m in enumerate(chosen.models)
    ]
    picks = per_joint_picks(scores) if per_joint_mix_applies(chosen) else None
    if picks is not None:  # a band per joint (.deadband_joints), one more candidate
        chosen = with_per_joint_candidate(chosen, picks)
        label = _per_joint_label(chosen.models[0].joint_names, picks)
        scores.append(_score(label, chosen.models[-1], chosen.training(len(scores)), context))
    choice = choose("Coulomb deadband", scores, code=DEADBAND_CHOICE.code)
    preprocessing = chosen.preprocessing
    chosen = replace(
        chosen, preprocessing=replace(preprocessing, notes=(*preprocessing.notes, choice.note()))
    )
    return chosen, choice, scores[choice.chosen]


def _score_cutoffs(
    candidates: list,
    observe: Callable[..., CandidateObservations],
    config: IdentifyConfig,
    base: BaseParameters,
    problem: ConsistentProblem,
) -> tuple[list[CVScore], list[RowPool], CandidateObservations]:
    """Each cut-off candidate's cross-validated score, its raw scoring samples (which the
    chosen one's full pass reads again), and the conservative (first) candidate observed in
    full: it is chosen on most recordings, and its full pass then serves as its scoring pass
    too (its narrowest deadband's folds). The others are observed for scoring only and their
    regressors (15 MB a candidate on a 7-joint arm) dropped as soon as they are out of the
    running (the chosen one is the conservative or the best scoring)."""
    scores, pools = [], []
    conservative = observe(candidates[0], scoring_only=False)
    for k, preprocessing in enumerate(candidates):
        observed = conservative if k == 0 else observe(preprocessing, scoring_only=True)
        training = observed.training(0)
        pools.append(training.rows[0].pool)
        context = fit_context(training.model, training, config, base, problem)
        score = _score(_derivatives_label(preprocessing), training.model, training, context)
        scores.append(replace(score, value=preprocessing.filter.butterworth_cutoff_hz))
        best = min(range(len(scores)), key=lambda k: scores[k].total)
        for j, kept in enumerate(pools):
            if j not in (0, best):
                kept.forget()
    return scores, pools, conservative


def _per_joint_label(joints: tuple[str, ...], picks: np.ndarray) -> str:
    from physid.offline.choose.deadband import CANDIDATE_FRACTIONS

    pairs = zip(joints, picks, strict=True)
    listed = ", ".join(f"{joint} {CANDIDATE_FRACTIONS[k]:g}" for joint, k in pairs)
    return f"per joint ({listed}) x RMS speed"


def _derivatives_label(preprocessing) -> str:  # noqa: ANN001 - a Preprocessing
    """A cut-off candidate's label: its frequency, or the recorded derivatives."""
    if preprocessing.filter.method == "given":
        return "recorded dq_, ddq_ (no filter)"
    return f"{preprocessing.filter.butterworth_cutoff_hz:.3g} Hz"


def _with_choice_notes(chosen: CandidateObservations, choices: list[Choice]):
    """The chosen candidate with the cut-off choice's note in place of paper C's rule."""
    if not choices:
        return chosen
    preprocessing = replace(chosen.preprocessing, cutoff_note=choices[0].note())
    return replace(chosen, preprocessing=preprocessing)


def _deadband_label(model: RobotModel, index: int) -> str:
    from physid.offline.choose.deadband import CANDIDATE_FRACTIONS

    return f"{CANDIDATE_FRACTIONS[index]:g} x RMS speed"


def choose_gravity(
    model: RobotModel,
    training: TrainingData,
    config: IdentifyConfig,
    problem: ConsistentProblem,
    note: Note,
    upright_score: CVScore | None = None,
) -> tuple[RobotModel, TrainingData, GravityEstimate | None, Choice | None]:
    """The gravity direction: the URDF's, the estimated tilt, or the folds' choice between the
    two (``estimate_gravity_direction``: false, true, auto); ``upright_score``: the URDF
    gravity's score if it was already computed."""
    mode = config.estimation.estimate_gravity_direction
    if mode is False:
        return model, training, None, None
    note("gravity direction")
    gravity_urdf = gravity_of(model)
    base = base_parameters(model)
    columns = excited_columns(training.system, base)
    weights = least_squares(training.system, columns, config.estimation.weighting).weights
    generic = base_parameters(with_gravity(model, tilted_gravity(gravity_urdf, np.r_[0.1, 0.1])))
    n_inertial = model.layout.n_inertial
    estimate = estimate_gravity_direction(
        training.system, generic.independent, n_inertial, gravity_urdf, weights
    )
    delta = estimate.gravity - gravity_urdf
    tilted_model = with_gravity(model, estimate.gravity)
    tilted = replace(
        training,
        system=gravity_shift(training.system, n_inertial, delta),
        folds=FoldSystems(gravity_shift(s, n_inertial, delta) for s in training.folds),
    )
    choice = None
    if mode == AUTO:
        kept = _urdf_gravity_unscored(estimate, gravity_urdf, len(training.folds))
        if kept is not None:
            return model, training, None, kept
        tilt = np.degrees(estimate.tilt_rad)
        context = fit_context(model, training, config, base, problem)
        upright = (
            _score("URDF gravity", model, training, context)
            if upright_score is None
            else replace(upright_score, label="URDF gravity")
        )
        scores = [
            upright,
            _score(f"tilt {tilt[0]:.2f}, {tilt[1]:.2f} deg", tilted_model, tilted, context),
        ]
        choice = choose("gravity direction", scores, code=GRAVITY_CHOICE.code)
        if choice.chosen == 0:
            return model, training, None, choice
        upset = _tilt_upsets_masses(model, training, tilted_model, tilted, context)
        if upset is not None:
            return model, training, None, replace(choice, chosen=0, reason=upset)
    return tilted_model, tilted, estimate, choice


def _urdf_gravity_unscored(
    estimate: GravityEstimate, gravity_urdf: np.ndarray, n_folds: int
) -> Choice | None:
    """The choice of the URDF's gravity without scoring the tilt, when the data do not
    determine one, when it is within ``TILT_SIGNIFICANCE`` std of level, or when it is larger
    than a levelling error (``MAX_TILT_DEG``: it would stand in for a model error); else None."""
    tilt = np.degrees(estimate.tilt_rad)
    std = np.degrees(estimate.tilt_std_rad)
    significance = np.abs(estimate.tilt_rad) / np.maximum(estimate.tilt_std_rad, 1e-300)
    undetermined = not np.all(std <= UNDETERMINED_TILT_DEG)  # NaN and inf included
    score = CVScore("URDF gravity", np.full(n_folds, np.nan), np.nan)
    finding = None
    if undetermined or not np.any(significance > TILT_SIGNIFICANCE):
        reason = (
            f"the URDF's: the data do not determine a tilt (std {std[0]:.2g}, {std[1]:.2g} "
            "deg: the joints' axes leave gravity's direction free)"
            if undetermined
            else f"the URDF's: the estimated tilt {tilt[0]:.2f} +- {std[0]:.2g}, "
            f"{tilt[1]:.2f} +- {std[1]:.2g} deg is within {TILT_SIGNIFICANCE:g} std of level"
        )
    elif _angle_deg(estimate.gravity, gravity_urdf) > MAX_TILT_DEG:
        reason = (
            f"the URDF's: the data would tilt it by {tilt[0]:.1f}, {tilt[1]:.1f} deg, more "
            f"than a levelling error ({MAX_TILT_DEG:g} deg); such a tilt stands in for a "
            "wrong gravity direction, masses or torque scale in the model, not for the base"
        )
        finding = mounting_reason(estimate, gravity_urdf)
    else:
        return None
    return Choice("gravity direction", (score,), 0, 0, reason, finding, code=GRAVITY_CHOICE.code)


def _tilt_upsets_masses(
    model: RobotModel,
    training: TrainingData,
    tilted_model: RobotModel,
    tilted: TrainingData,
    context: FitContext,
) -> str | None:
    """Why a tilt the folds prefer is not kept: the fit has plausible masses under the URDF's
    gravity and implausible ones under the tilt (:func:`~.plausibility.implausible_masses`);
    None otherwise.

    A tilt couples every body's mass to the torque of the joints about vertical axes, so on a
    robot whose base joint turns about gravity it makes masses the data cannot otherwise see
    identifiable, and free to absorb whatever the model misses: on noise-free data the folds'
    spread is tiny, and a tilt of a degree can win them by a hair while the masses it makes
    identifiable run to many times the URDF's. Such a tilt stands in for a misfit; a levelling
    error moves no mass that far (a robot whose masses are implausible under either gravity
    keeps its tilt, and the bodies' prior settles them, :mod:`.against_prior`)."""
    fit = context.fit()
    prior = context.problem.prior
    upright = fit(training.system)
    # a failed upright fit returns the prior itself, plausible by construction: no evidence
    if upright is prior or implausible_masses(model, upright, prior):
        return None
    leaning = fit(tilted.system)
    moved = implausible_masses(tilted_model, leaning, prior)
    if not moved:
        return None
    return (
        "the URDF's: the tilt the folds prefer makes the masses implausible ("
        + "; ".join(moved)
        + "), which the URDF's gravity does not: it stands in for something the model lacks, "
        "not for the base"
    )


def mounting_reason(estimate: GravityEstimate, gravity_urdf: np.ndarray) -> Finding | None:
    """A suspect finding when the torques show gravity far (> 5 deg) from the URDF's, the tilt
    determined (2 std) and lowering the training residual by :data:`MOUNTING_GAIN` or more: a
    base on a wall, a ceiling or an incline, which a config's ``gravity`` states. Such a
    mounting explains most of the residual, while a large "tilt" that merely stands in for a
    URDF's wrong masses lowers it by little (docs/benchmarks.md, "Why the defaults are what
    they are")."""
    if estimate.residual_ratio > 1.0 - MOUNTING_GAIN:
        return None
    g = estimate.gravity
    angle = _angle_deg(g, gravity_urdf)
    tilt, std = np.degrees(estimate.tilt_rad), np.degrees(estimate.tilt_std_rad)
    vector = ", ".join(f"{v:g}" for v in np.round(g, 2) + 0.0)  # (+ 0.0: no "-0")
    return MOUNTING(
        f"the torques show gravity {angle:.0f} deg from the URDF's: along [{vector}] m/s^2 in "
        f"the base frame (tilt {tilt[0]:.1f} +- {std[0]:.2g}, {tilt[1]:.1f} +- {std[1]:.2g} deg "
        f"about x, then y) the training residual is {100 * (1 - estimate.residual_ratio):.0f} % "
        "lower: a robot on a wall, a ceiling or an incline? then give gravity: "
        f"[{vector}] in the config (a tilt beyond {MAX_TILT_DEG:g} deg is not fitted on its own)",
        numbers={
            "angle_deg": angle,
            "residual_ratio": estimate.residual_ratio,
            "tilt_x_deg": tilt[0],
            "tilt_y_deg": tilt[1],
        },
        names=("gravity",),
    )


def _angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    """The angle between two gravity vectors [deg]."""
    cosine = a @ b / (np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0))))


def tilt_mass_change(
    model: RobotModel,
    training: TrainingData,
    tilted_model: RobotModel,
    tilted: TrainingData,
    config: IdentifyConfig,
    problem: ConsistentProblem,
    scale: float = 1.0,
    body_scale: float = 1.0,
) -> float:
    """How much estimating the tilt moves the moving mass [kg] (a tilt must not change a
    mass silently): the consistent fit with and without it, under the prior
    scales the fit used (:mod:`.against_prior`)."""
    context = fit_context(model, training, config, base_parameters(model), problem)
    fit = context.fit(scale, body_scale)
    upright, leaning = fit(training.system), fit(tilted.system)
    return tilted_model.layout.total_mass(leaning) - model.layout.total_mass(upright)
