"""Offline identification of a serial robot, end to end (paper C and the trust layer).

:func:`identify` runs the stages of :mod:`physid.offline.stages` in order: read and check the
recordings, choose the preprocessing on the training folds, base least squares, the consistent
fit with the prior, its uncertainty (and the masses the data leave undecided), the
predictions, and the verdict. When the fit with the
data-chosen preprocessing explains too little of the torque, it is refitted with the
conservative choices; if that one is not suspect, the first was physid's failure, and the
conservative fit is returned with a finding that says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from physid.files.config import IdentifyConfig
from physid.findings import Finding
from physid.offline.choose.delay import compensated
from physid.offline.codes import CONSERVATIVE_RETRY, CUTOFF_CHOICE, UNEXPLAINED
from physid.offline.observe.windows import Recording
from physid.offline.result import Choices, Fit, IdentificationResult
from physid.offline.stages.base_fit import fit_base
from physid.offline.stages.consistent_fit import fit_consistent
from physid.offline.stages.judge import judge
from physid.offline.stages.predict import predict
from physid.offline.stages.prepare import prepare
from physid.offline.stages.quantify import quantify
from physid.offline.stages.read import read_inputs
from physid.offline.stages.undecided import settle_undecided
from physid.robot.model import RobotModel
from physid.status import Status

Note = Callable[[str], None]


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
    progress: Note | None = None,
) -> IdentificationResult:
    """Identify ``model``'s parameters from training recordings; validate on the others.

    Suspect means the data, never physid's own choices: a fit with the data-chosen preprocessing
    that leaves most of the torque unexplained is refitted with the conservative choices (module
    docstring)."""
    given = given_delay_s(config)
    if given:  # a delay given in seconds: every torque paired with the motion that much earlier
        train = [compensated(r, given) for r in train]
        validation = [compensated(r, given) for r in validation or []] or None
    result = identify_once(model, train, config, validation=validation, progress=progress)
    bold = [c for c in result.choices.scored if c.chosen != c.conservative]
    blamed = any(f.code == UNEXPLAINED.code for f in result.findings)
    if not (blamed and bold):
        return result
    retry = identify_once(
        model, train, conservative_config(result, config), validation=validation, progress=progress
    )
    if retry.suspect or retry.theta is None:
        return result
    chosen = ", ".join(f"{c.what} {c.label}" for c in bold)
    finding = CONSERVATIVE_RETRY(
        f"the data-chosen preprocessing ({chosen}) left {100 * result.train.relative_error:.3g} "
        f"% of the raw training torque unexplained; with the conservative choices it is "
        f"{100 * retry.train.relative_error:.3g} %: physid's choice failed, not the data, and "
        "the conservative fit is reported",
        numbers={"chosen": result.train.relative_error, "conservative": retry.train.relative_error},
    )
    return replace(retry, findings=(*retry.findings, finding))


def conservative_config(result: IdentificationResult, config: IdentifyConfig) -> IdentifyConfig:
    """``config`` with the conservative choices: paper C's cut-off, the URDF's gravity, no
    delay compensated unless the config gives one."""
    cutoff = next((c for c in result.choices.scored if c.code == CUTOFF_CHOICE.code), None)
    if cutoff is not None and cutoff.scores[cutoff.conservative].value is not None:
        hz = cutoff.scores[cutoff.conservative].value
        config = replace(config, filter=replace(config.filter, butterworth_cutoff_hz=hz))
    estimation = config.estimation
    delay = "report" if estimation.torque_delay == "auto" else estimation.torque_delay
    return replace(
        config, estimation=replace(estimation, estimate_gravity_direction=False, torque_delay=delay)
    )


def identify_once(
    model: RobotModel,
    train: list[Recording],
    config: IdentifyConfig,
    *,
    validation: list[Recording] | None = None,
    progress: Note | None = None,
) -> IdentificationResult:
    """One identification with the given config: the stages in order (module docstring)."""
    note = progress or (lambda _message: None)
    note("preprocessing")
    inputs = read_inputs(model, train, config, validation)
    prepared = prepare(inputs, config, note)
    note("base parameters")
    base_fit = fit_base(prepared, config, inputs.problem)
    consistent = fit_consistent(prepared, base_fit, inputs.model_urdf, inputs.problem, config, note)
    note("uncertainty")
    quantified = quantify(prepared, base_fit, consistent, config, note)
    consistent, quantified = settle_undecided(
        prepared, base_fit, consistent, quantified, config, note
    )
    note("prediction at the recorded samples")
    prediction = predict(
        prepared,
        base_fit,
        consistent,
        inputs.model_urdf,
        config,
        quantified.inflation,
        given_delay_s(config),
    )
    theta = consistent.fit.theta if consistent.fit.consistent else None
    fit = Fit(
        prepared.model,
        base_fit.base,
        base_fit.excited,
        base_fit.least_squares,
        base_fit.essential,
        consistent.fit,
        theta,
        None if theta is None else base_fit.base.from_standard(theta),
        base_fit.prior,
        prediction.train,
        prediction.validation,
        prediction.train_filtered,
        prediction.validation_filtered,
        prediction.train_fits,
        prediction.validation_fits,
        prediction.train_observations,
        prediction.validation_observations,
        prediction.autocorrelation,
        prediction.validation_urdf,
    )
    choices = Choices(
        _recorded_preprocessing(prepared, consistent, inputs, theta is not None),
        prepared.choices,
        prepared.gravity,
        prediction.delay,
        prepared.shapes,
        consistent.joint,
        consistent.check,
    )
    findings: tuple[Finding, ...] = (
        *inputs.findings,
        *prepared.findings,
        *base_fit.findings,
        *consistent.findings,
        *quantified.findings,
        *prediction.findings,
    )
    result = IdentificationResult(fit, quantified.uncertainty, choices, Status.OK, findings)
    note("verdict")
    return judge(
        result,
        inputs.previews,
        consistent.static_ratios,
        prepared.training.system,
        base_fit.columns,
    )


def _recorded_preprocessing(prepared, consistent, inputs, fitted: bool):  # noqa: ANN001, ANN202
    """The preprocessing as params.json records it: notes of the choices, the folds by phase,
    and each recording's time base and row repairs."""
    preprocessing = prepared.training.preprocessing
    if fitted and prepared.shapes is None and consistent.phase is not None:
        preprocessing = replace(
            preprocessing, notes=(*preprocessing.notes, *consistent.phase.notes())
        )
    recordings = [*prepared.train, *prepared.validation]
    return replace(
        preprocessing,
        time_base=tuple(t.time_base for t in recordings if getattr(t, "time_base", None)),
        row_repairs=tuple(t.row_repairs for t in recordings if getattr(t, "row_repairs", None)),
    )
