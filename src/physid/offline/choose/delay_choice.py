"""Whether to compensate a torque logged late against the motion, chosen by the user's training
data (config ``estimation.torque_delay: auto``, the default).

A drive or a logger that reports the torque a few milliseconds after the positions it belongs
to leaves a residual that follows the torque's rate; :func:`.delay.estimate_delay` reads the
delay jointly with the base parameters. Whether to undo it is a preprocessing choice like the
cut-off: after the cut-off and the deadband are chosen (:mod:`.choices`), a delay beyond noise
(3 standard deviations; the warning's quarter of a sample is no criterion here) is compensated
in the training recordings (:func:`.delay.compensated`: each logged torque paired with the
motion that much earlier, the torque never interpolated), observed again under the same
preprocessing, and blocked cross-validation on the raw training torque decides
(:func:`.selection.choose`, "none" the conservative candidate). The torque is paired with
earlier motion, never interpolated: interpolating it averages its noise, which the folds
reward as if it were a delay (docs/identify.md section 12).

On runs that repeat their motion (:func:`.folds.repeat_period`) every time block holds motion
the others repeat, so a shift that fits *this* excitation's misfit wins them all; a delay of the
drive or the logger holds on any motion. There a delay the time blocks keep must also score
lower on the folds by phase (:meth:`.folds.FoldPlan.by_phase`: each fold a quarter of the
period the others never show). A friction model that lags the velocity can pass for a delay
on the time blocks of a repeated motion and then predicts other runs worse; it loses the phase
folds, while a true delay of the drive or logger wins them too.

The chosen delay is part of the identified model: ``params.json`` records it
(``fit.torque_delay.compensated_s``) and ``physid validate``, ``payload`` and ``online`` (with
it as its nominal model) pair each torque with the motion that much earlier.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from physid.files.config import IdentifyConfig
from physid.offline.choose.choices import FitContext, excited_columns, fit_context
from physid.offline.choose.delay import MAX_DELAY_S, compensated, estimate_delay
from physid.offline.choose.selection import Choice, choose
from physid.offline.choose.training import TrainingData, observe_candidate
from physid.offline.codes import DELAY_CHOICE
from physid.offline.fit.consistent import ConsistentProblem
from physid.offline.observe.crossval import CVScore, cv_score
from physid.offline.observe.folds import FoldPlan, store_systems
from physid.offline.observe.least_squares import least_squares
from physid.offline.observe.windows import Recording
from physid.robot.model import RobotModel
from physid.robot.regressor import base_parameters

AUTO = "auto"
WHAT = "torque delay compensated"


@dataclass(frozen=True)
class DelayChoice:
    """The training data and recordings to go on with, the delay they were read with [s] (0:
    as recorded), and the choice (None when nothing was scored)."""

    training: TrainingData
    train: list[Recording]
    delay_s: float
    choice: Choice | None


def choose_delay(
    config: IdentifyConfig,
    train: list[Recording],
    validation: list[Recording],
    folds: FoldPlan,
    training: TrainingData,
    score: CVScore | None,
    *,
    problem: ConsistentProblem,
    gravity_regressors: bool,
    note: Callable[[str], None],
) -> DelayChoice:
    """The torque delay of the module docstring, on ``training`` (the chosen cut-off and
    deadband, upright gravity) whose cross-validated ``score`` is known (or None)."""
    unchanged = DelayChoice(training, train, 0.0, None)
    if config.estimation.torque_delay != AUTO:
        return unchanged
    if training.model.layout.nonlinear_friction:
        # the friction shapes are fitted after this choice: the folds would score both with
        # the starting shapes (the reason the cut-off stays paper C's there, .choices)
        return unchanged
    model = training.model
    base = base_parameters(model)
    columns = excited_columns(training.system, base)
    ls = least_squares(training.system, columns, config.estimation.weighting)
    estimate = estimate_delay(training.store, columns, ls.weights, ls.theta, model.fitted)
    if estimate is None or not estimate.beyond_noise:
        return unchanged
    # not a logging delay beyond 5 % of the shortest recording (validation ones too: each must
    # keep its rows when its motion is read that much earlier), nor beyond what drives and
    # loggers delay: leave it reported
    duration = min(float(r.t[-1] - r.t[0]) for r in [*train, *validation])
    if abs(estimate.value_s) > min(0.05 * duration, MAX_DELAY_S):
        return unchanged
    delay = estimate.value_s
    note(f"torque delay {1e3 * delay:.3g} ms: observing the training data with it compensated")
    shifted = [compensated(r, delay) for r in train]

    context = fit_context(model, training, config, base, problem)
    if score is None:
        score = cv_score("none", model, training.folds, training.rows, context.fit())

    def observe(scoring_only: bool):  # noqa: ANN202 - the shifted recordings' observations
        return observe_candidate(
            model,
            config,
            training.preprocessing,
            shifted,
            folds,
            gravity_regressors=gravity_regressors,
            note=note,
            scoring_only=scoring_only,
        )

    # scored first (folds only: most delays lose), observed in full (stored chunks, gravity
    # regressors) only when the delay wins the time blocks
    late = observe(scoring_only=True).training(0)
    late_context = fit_context(model, late, config, base, problem)
    scores = [
        replace(score, label="none"),
        cv_score(f"{1e3 * delay:.3g} ms", model, late.folds, late.rows, late_context.fit()),
    ]
    choice = choose(WHAT, scores, code=DELAY_CHOICE.code)
    if choice.chosen == 0:
        return DelayChoice(training, train, 0.0, choice)
    observed = observe(scoring_only=False)
    late = observed.training(0)
    rejected = _rejected_by_phase(
        train, model, choice, (training, context), (late, late_context), note
    )
    if rejected is not None:
        return DelayChoice(training, train, 0.0, rejected)
    return DelayChoice(observed.training(0, extras=gravity_regressors), shifted, delay, choice)


def _rejected_by_phase(train, model, choice, on_time, late, note) -> Choice | None:  # noqa: ANN001
    """The choice turned to "none" when the delay that wins the time blocks does not win the
    folds by phase (quarters of a repeated motion the other folds never show: a delay of the
    drive or the logger would win on any motion); None when it holds or there are no such
    folds. ``on_time``, ``late``: ``(training, fit context)`` without and with the delay."""
    phase = FoldPlan.by_phase(train)
    if phase is None:
        return None
    note("torque delay on folds by phase")
    label = choice.scores[1].label
    unseen = [
        _phase_score(name, model, phase, data, fitting)
        for name, (data, fitting) in (("none", on_time), (label, late))
    ]
    if unseen[1].total < unseen[0].total:
        return None
    listed = ", ".join(f"{s.label} {100 * s.total:.3g} %" for s in unseen)
    reason = (
        f"the conservative choice: {label} wins the time blocks but not the folds by phase "
        f"(quarters of the repeated motion that the other folds never show: {listed}); a "
        "delay of the drive or the logger would win on any motion"
    )
    return replace(choice, chosen=0, reason=reason)


def _phase_score(
    label: str,
    model: RobotModel,
    phase: FoldPlan,
    training: TrainingData,
    context: FitContext,
) -> CVScore:
    """The cross-validated score on folds by ``phase`` (module docstring) of ``training`` (its
    observations and raw samples refolded: no second pass over the recordings). The delay
    must not lose there; a win beyond the folds' spread is not asked (quarters of a period
    differ more than time blocks do, so even a true delay wins them by less than their
    spread)."""
    folds = store_systems(training.store, phase, training.system.fitted)
    rows = training.rows[0].pool.split(phase)
    return cv_score(label, model, folds, rows, context.fit())
