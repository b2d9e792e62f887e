"""``physid multibody identify`` as one workflow, shared by the API and the command line: the
equation-error fit (paper A §3-4, :mod:`physid.multibody.estimate.fit`), the optional
cross-validation (§4.5), the output-error refinement (:mod:`physid.multibody.refine`) — asked
for, or by default over short windows when the equation-error fit collapsed a body or estimated
dry friction from low-rate samples (:func:`auto_reasons`) — and the simulation of the identified
model from the first state; one status and its findings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import physid.multibody.codes as codes
from physid.findings import Finding
from physid.multibody.estimate.fit import MultibodyFit, MultibodyRecording, identify
from physid.multibody.refine.output_error import WINDOW_SECONDS, refine, refined, skip_reason
from physid.multibody.verdicts import (
    caught_warnings,
    first_state_simulations,
    simulation_errors,
    simulation_findings,
)
from physid.status import Status

#: The refinement run by default (:func:`auto_reasons`): windows of 1 s at the fit's step. Short
#: windows are well posed from a far start (a phase error cannot build up within one) and cost
#: a fraction of the full refinement's longer stages; from the equation-error values, 2 s
#: windows can already stop in a local minimum of a sticking joint.
AUTO_WINDOWS = (1.0,)
#: Simulations of the windows per refinement stage (the full and the default refinement).
REFINE_EVALUATIONS = 30


class RefineMode(StrEnum):
    """``on``: the full refinement (``--refine``); ``off``: none (``--no-refine``); ``auto``
    (the default): the short-window refinement when :func:`auto_reasons` gives a reason."""

    AUTO = "auto"
    ON = "on"
    OFF = "off"


@dataclass(frozen=True)
class RefineOptions:
    mode: RefineMode = RefineMode.AUTO
    windows: Sequence[float] = WINDOW_SECONDS  # the stages of the full refinement
    h: float | None = None  # the refinement's step (default: the fit's)
    evaluations: int = REFINE_EVALUATIONS


@dataclass
class IdentifyRun:
    """What the workflow produced: the fit (carrying the refinement when used), the
    cross-validation folds, the simulations from the first state and their errors, the
    findings of the whole run and its status."""

    fit: MultibodyFit
    folds: list[dict] | None
    simulations: list
    simulation: list[dict]
    status: Status
    findings: tuple[Finding, ...] = ()
    refined_by_default: bool = False


def cross_validation(
    model: Any, recordings: list[MultibodyRecording], fit_options: dict, options: dict
) -> list[dict]:
    """Leave one recording out (§4.5): fit the others, then estimate the left-out recording's
    states with those parameters fixed; its cost per step is the score."""
    folds = []
    for i, rec in enumerate(recordings):
        train = identify(model, recordings[:i] + recordings[i + 1 :], **fit_options)
        check = identify(train.model, [rec], names=[], **options)
        folds.append(
            {
                "validation": rec.source,
                "values": train.values.tolist(),
                "status": str(train.status),
                "state_status": str(check.status),
                "cost_per_step": check.cost_per_step,
                "observation_mse": check.observation_mse,
            }
        )
    return folds


#: A recording observes fewer than this share of the model steps (samples further apart than
#: two steps): low-rate, where the equation error's free states between samples let viscous
#: friction take the dry friction's part, with neither at a bound to say so (docs/multibody.md).
LOW_RATE_SHARE = 0.5
DRY_SLOTS = ("coulomb", "dry", "stribeck_delta")


def auto_reasons(fit: MultibodyFit) -> list[str]:
    """Why the default refinement runs (empty: it does not): a body collapsed to the lower end
    of its plausibility box after the equation-error fit, or dry friction estimated from
    low-rate samples. Not for any parameter at a bound: a viscous friction at 0 can be the
    right answer, and refining a good high-rate fit for it made its held-out errors worse."""
    reasons = []
    if fit.collapsed:
        reasons.append(f"{', '.join(fit.collapsed)} collapsed in the equation-error fit")
    steps = sum(len(seg.y) for seg in fit.segments)
    dry = [n for n in fit.names if n.rsplit(".", 1)[-1] in DRY_SLOTS]
    if dry and fit.observed_steps < LOW_RATE_SHARE * steps:
        reasons.append(
            f"dry friction ({', '.join(dry)}) from samples at {fit.observed_steps} of {steps} "
            "model steps"
        )
    return reasons


def _too_short(
    fit: MultibodyFit, recordings: list[MultibodyRecording], options: RefineOptions
) -> str | None:
    """Why the default refinement's windows cannot refine these recordings (samples too far
    apart for a window to hold three), or None."""
    from physid.errors import InputError
    from physid.multibody.refine.windows import check_refine_options

    try:
        check_refine_options(recordings, fit.h, options.h, AUTO_WINDOWS)
    except InputError as error:
        return str(error)
    return None


def _refinement(
    fit: MultibodyFit,
    recordings: list[MultibodyRecording],
    options: RefineOptions,
    progress: Callable[[int], Any] | None,
) -> tuple[MultibodyFit, list[Finding], bool]:
    """The refinement the mode asks for: ``(fit, findings, by default)``."""
    mode, found = options.mode, []
    reasons = auto_reasons(fit) if mode is RefineMode.AUTO else []
    if mode is RefineMode.OFF or (mode is RefineMode.AUTO and not reasons):
        return fit, found, False
    auto = mode is RefineMode.AUTO
    why = skip_reason(fit) or (_too_short(fit, recordings, options) if auto else None)
    if why is not None:
        found.append(codes.REFINEMENT_SKIPPED(f"output-error refinement skipped: {why}"))
        return fit, found, False
    if auto:
        found.append(
            codes.REFINEMENT_AUTO(
                f"{'; '.join(reasons)}: refined over windows of {AUTO_WINDOWS[0]:g} s",
                numbers={"window_s": AUTO_WINDOWS[0], "observed_steps": fit.observed_steps},
                names=fit.collapsed,
            )
        )
    windows = AUTO_WINDOWS if auto else options.windows
    display = nullcontext() if progress is None else progress(options.evaluations * len(windows))
    with display as bar:
        result = refine(
            fit,
            recordings,
            h=options.h,
            window_seconds=windows,
            max_evaluations=options.evaluations,
            progress=None if bar is None else lambda steps, evaluations, cost: bar.update(1),
        )
    return refined(fit, result), found, auto


def identify_run(
    model: Any,
    recordings: list[MultibodyRecording],
    sources: list[str],
    *,
    fit_options: dict,
    refine_options: RefineOptions = RefineOptions(),
    cross_validate: bool = False,
    progress: Callable[[int], Any] | None = None,
) -> IdentifyRun:
    """The whole identification: fit, cross-validation, refinement, simulations; NumPy
    warnings become a finding (:func:`~physid.multibody.verdicts.caught_warnings`).
    ``progress(total)``: a progress display (a context manager with ``update``) for the
    refinement's ``total`` simulations."""
    with caught_warnings() as numerics:
        fit = identify(model, recordings, **fit_options)
        folds = None
        if cross_validate:
            state_options = {k: v for k, v in fit_options.items() if k != "state_start"}
            folds = cross_validation(model, recordings, fit_options, state_options)
        fit, found, auto = _refinement(fit, recordings, refine_options, progress)
        simulations = first_state_simulations(fit)
        errors = simulation_errors(fit, simulations=simulations)
    findings = [*fit.findings, *found, *simulation_findings(errors, fit.noise, sources)]
    findings += numerics
    status = fit.status
    if status is Status.OK and any(f.code == codes.NOT_SIMULATABLE.code for f in findings):
        status = Status.NUMERICAL_FAILURE
    return IdentifyRun(fit, folds, simulations, errors, status, tuple(findings), auto)
