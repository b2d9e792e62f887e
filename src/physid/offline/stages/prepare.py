"""Stage 2: the preprocessing the training folds choose.

In order (:mod:`physid.offline.choose`): the derivative cut-off and the Coulomb deadband
(blocked cross-validation of the consistent fit), the torque delay, the friction shapes (fitted
first where the model has them: a wrong shape would tilt gravity), then the gravity direction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from physid.files.config import IdentifyConfig
from physid.findings import Finding
from physid.offline.choose.choices import choose_gravity, choose_training
from physid.offline.choose.delay import compensated
from physid.offline.choose.delay_choice import choose_delay
from physid.offline.choose.friction_shapes import (
    FrictionShapeFit,
    fit_friction_shapes,
    resolvable_speed,
)
from physid.offline.choose.selection import Choice
from physid.offline.choose.training import TrainingData, gravity_shifted
from physid.offline.codes import DERIVATIVES_UNUSED
from physid.offline.observe.crossval import CVScore
from physid.offline.observe.gravity import GravityEstimate
from physid.offline.observe.windows import Recording
from physid.offline.stages.read import Inputs
from physid.robot.model import RobotModel, gravity_of

Note = Callable[[str], None]


@dataclass(frozen=True)
class Prepared:
    """The training data under the chosen preprocessing, and the choices that made them."""

    model: RobotModel  # with the estimated gravity and fitted friction shapes, if any
    upright_model: RobotModel  # the same before the gravity choice
    upright: TrainingData  # the training data before the gravity choice
    training: TrainingData
    train: list[Recording]  # as observed (a compensated delay applied)
    validation: list[Recording]
    choices: tuple[Choice, ...]
    score: CVScore | None  # the chosen candidate's cross-validated score (None: not scored)
    gravity: GravityEstimate | None  # the tilt, when kept
    shapes: FrictionShapeFit | None
    delay_s: float  # the delay compensated by the folds' choice [s] (0: none)
    findings: tuple[Finding, ...]


def prepare(inputs: Inputs, config: IdentifyConfig, note: Note = lambda _message: None) -> Prepared:
    """Stage 2 (module docstring)."""
    model, train, validation = inputs.model, inputs.train, inputs.validation
    training, choices, score = choose_training(
        model,
        config,
        train,
        inputs.folds,
        gravity_regressors=inputs.want_gravity,
        n_estimated=inputs.n_estimated,
        problem=inputs.problem,
        note=note,
        recorded_derivatives=inputs.recorded_derivatives,
    )
    findings: list[Finding] = []
    if inputs.velocities_only and training.preprocessing.filter.method != "given":
        findings.append(
            DERIVATIVES_UNUSED(
                "the recordings' dq_ columns are not used: velocities come from the positions, "
                "through the chosen filter; logged velocities with ddq_ columns too (every "
                "recording) are a candidate of the cut-off choice"
            )
        )
    delay = choose_delay(
        config,
        train,
        validation,
        inputs.folds,
        training,
        score,
        problem=inputs.problem,
        gravity_regressors=inputs.want_gravity,
        note=note,
    )
    if delay.choice is not None:
        choices.append(delay.choice)
        training, train = _noted(delay.training, delay.choice.note()), delay.train
        score = delay.choice.scores[delay.choice.chosen]
    if delay.delay_s:
        validation = [compensated(r, delay.delay_s) for r in validation]
    model = training.model  # with the chosen Coulomb deadband
    model, training, shapes = _friction_shapes(inputs, model, train, training, config, note)
    upright_model, upright = model, training
    model, training, gravity, choice = choose_gravity(
        model, training, config, inputs.problem, note, upright_score=score
    )
    if choice is not None and len(choice.scores) > 1:
        score = choice.scores[choice.chosen]
    elif gravity is not None:  # tilted without a cross-validated choice: not scored yet
        score = None
    if choice is not None:
        choices.append(choice)
        training = _noted(training, choice.note())
        if choice.suspect is not None:
            findings.append(choice.suspect)
    if gravity is not None:
        delta = gravity.gravity - gravity_of(upright_model)
        training = replace(
            training, store=gravity_shifted(training.store, delta, model.layout.n_inertial)
        )
    findings += [c.as_finding() for c in choices if c.code]
    if shapes is not None:
        findings += [shapes.as_finding(), *shapes.findings()]
    return Prepared(
        model,
        upright_model,
        upright,
        training,
        train,
        validation,
        tuple(choices),
        score,
        gravity,
        shapes,
        delay.delay_s,
        tuple(findings),
    )


def _friction_shapes(
    inputs: Inputs,
    model: RobotModel,
    train: list[Recording],
    training: TrainingData,
    config: IdentifyConfig,
    note: Note,
) -> tuple[RobotModel, TrainingData, FrictionShapeFit | None]:
    """The sigmoid or Stribeck shapes, fitted before the gravity choice (a wrong shape would
    tilt gravity); the model and training data unchanged without such friction."""
    if not model.layout.nonlinear_friction:
        return model, training, None
    preprocessing = training.preprocessing
    model, store, system, shapes = fit_friction_shapes(
        model,
        train,
        preprocessing.filter,
        training.store,
        inputs.rms_speed,
        resolvable_speed=resolvable_speed(model, preprocessing),
        weighting=config.estimation.weighting,
        note=note,
    )
    training = _noted(replace(training, store=store, system=system), shapes.note())
    return model, training, shapes


def _noted(training: TrainingData, *notes: str) -> TrainingData:
    """The training data with ``notes`` added to their preprocessing's notes (params.json)."""
    preprocessing = training.preprocessing
    return replace(
        training, preprocessing=replace(preprocessing, notes=(*preprocessing.notes, *notes))
    )
