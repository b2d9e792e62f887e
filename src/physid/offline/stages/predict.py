"""Stage 6: the identified model's predictions at the recorded samples.

Errors are those of the raw measured torques at each recording's own samples
(:mod:`physid.offline.observe.prediction`); paper C's error on the filtered, decimated data the
fit used is kept beside them (Table 2). A held-out run faster than the training runs gets a
filter for its own band; the URDF's own model is scored on the same held-out samples.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from physid.files.config import IdentifyConfig
from physid.findings import Finding, Severity
from physid.offline.checks.offset_drift import offset_drift_finding
from physid.offline.choose.delay import DelayEstimate, estimate_delay
from physid.offline.choose.training import filtered_fit, observe_validation
from physid.offline.codes import DELAY_CHOICE, VALIDATION_FILTER
from physid.offline.observe.least_squares import residual_autocorrelation
from physid.offline.observe.metrics import FitMetrics
from physid.offline.observe.observations import Observations
from physid.offline.observe.prediction import RecordingFit, predict_recording, stacked_metrics
from physid.offline.observe.preprocessing import held_out_filter
from physid.offline.stages.base_fit import BaseFit
from physid.offline.stages.consistent_fit import Consistent
from physid.offline.stages.prepare import Prepared
from physid.robot.model import RobotModel

AUTOCORRELATION_LAGS = 50


@dataclass(frozen=True)
class Prediction:
    """How the estimate (or, without one, the least squares) predicts the recordings."""

    train: FitMetrics  # raw torque at every sample (the least squares' filtered fit without theta)
    train_filtered: FitMetrics | None
    train_fits: tuple[RecordingFit, ...]
    autocorrelation: np.ndarray  # (n, lags + 1) of the training residual
    delay: DelayEstimate | None
    validation: FitMetrics | None
    validation_filtered: FitMetrics | None
    validation_fits: tuple[RecordingFit, ...]
    validation_urdf: float | None  # the URDF's own model on the same held-out samples
    train_observations: Observations
    validation_observations: Observations | None
    findings: tuple[Finding, ...]


def predict(
    prepared: Prepared,
    base_fit: BaseFit,
    consistent: Consistent,
    model_urdf: RobotModel,
    config: IdentifyConfig,
    inflation: float,
    given_delay_s: float = 0.0,
) -> Prediction:
    """Stage 6 (module docstring); ``given_delay_s``: a delay the config compensated."""
    model, store = prepared.model, prepared.training.store
    options = prepared.training.preprocessing.filter
    theta = consistent.fit.theta if consistent.fit.consistent else None
    findings: list[Finding] = []
    delay, train_fits, train_filtered = None, (), None
    ls = base_fit.least_squares
    if theta is None:
        train_metrics, residual = filtered_fit(model, store, ls.theta, base_fit.columns)
    else:
        train_filtered, residual = filtered_fit(model, store, theta)
        delay = estimate_delay(
            store, base_fit.columns, ls.weights, ls.theta, model.fitted, inflation
        )
        paired = prepared.delay_s or given_delay_s  # compensated before this fit
        if delay is not None and paired:
            delay = replace(delay, compensated_s=paired)
        if delay is not None and delay.significant:
            findings.append(_delay_finding(delay, prepared))
        train_fits = tuple(predict_recording(model, t, options, theta) for t in prepared.train)
        train_metrics = stacked_metrics(list(train_fits))
        drift = offset_drift_finding(model, train_fits)
        findings += [] if drift is None else [drift]
    autocorrelation = residual_autocorrelation(residual, AUTOCORRELATION_LAGS)
    held = _validation(prepared, base_fit, model_urdf, theta)
    return Prediction(
        train_metrics,
        train_filtered,
        train_fits,
        autocorrelation,
        delay,
        held.metrics,
        held.filtered,
        held.fits,
        held.urdf,
        store.stacked(),
        held.observations,
        tuple(findings) + held.findings,
    )


def _delay_finding(delay: DelayEstimate, prepared: Prepared) -> Finding:
    """The torque's delay as one finding, with what the folds made of compensating it: a
    caution when it is too long to be compensated automatically, else context."""
    scored = next((c for c in prepared.choices if c.code == DELAY_CHOICE.code), None)
    message = delay.note()
    if scored is not None and not delay.compensated_s:
        message += f"; the training folds' choice: {scored.label} ({scored.reason})"
    numbers = {"delay_s": delay.value_s, "std_s": delay.std_s, "compensated_s": delay.compensated_s}
    severity = Severity.CAUTION if delay.too_long else None
    return DELAY_CHOICE(message, numbers=numbers, severity=severity)


@dataclass(frozen=True)
class _HeldOut:
    metrics: FitMetrics | None = None
    filtered: FitMetrics | None = None
    fits: tuple[RecordingFit, ...] = ()
    urdf: float | None = None
    observations: Observations | None = None
    findings: tuple[Finding, ...] = ()


def _validation(
    prepared: Prepared, base_fit: BaseFit, model_urdf: RobotModel, theta: np.ndarray | None
) -> _HeldOut:
    """The predictions of the held-out recordings (and the URDF's own model's error on them)."""
    validation = prepared.validation
    if not validation:
        return _HeldOut()
    model = prepared.model
    preprocessing = prepared.training.preprocessing
    held = [
        held_out_filter(preprocessing.filter, preprocessing.excitation_bandwidth_hz, t)
        for t in validation
    ]
    held_options = [filter_options for filter_options, _ in held]
    findings = tuple(VALIDATION_FILTER(message) for _, message in held if message)
    store, filtered = observe_validation(model, validation, held_options, theta)
    if theta is None:
        return _HeldOut(None, filtered, (), None, store.stacked(), findings)
    paired = list(zip(validation, held_options, strict=True))
    fits = tuple(predict_recording(model, t, o, theta) for t, o in paired)
    urdf = None
    if prepared.shapes is None:  # the URDF has no sigmoid / Stribeck shapes
        urdf = stacked_metrics(
            [predict_recording(model_urdf, t, o, base_fit.prior) for t, o in paired]
        ).relative_error
    return _HeldOut(stacked_metrics(list(fits)), filtered, fits, urdf, store.stacked(), findings)
