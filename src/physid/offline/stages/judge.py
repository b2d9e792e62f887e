"""Stage 7: the findings on the fit, and the one status.

The status follows from the findings and the checks, never from their messages: no consistent
parameters -> ``inconsistent``; a suspect finding -> ``suspect``; a fit that predicts held-out
data (the training folds, or the validation recordings) worse than the URDF's own model ->
``worse_than_urdf``; else ``ok``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from physid.findings import Finding, Severity, unique
from physid.offline.checks.fit_flags import fit_findings
from physid.offline.checks.joint_scales import joint_scale_finding
from physid.offline.checks.lift_load import lift_load_findings
from physid.offline.checks.plausibility import plausibility_findings
from physid.offline.checks.suspect import unexplained_torque_finding
from physid.offline.choose.against_prior import PriorCheck
from physid.offline.codes import CORRELATED_RESIDUALS, WORSE_THAN_URDF
from physid.offline.observe.least_squares import least_squares
from physid.offline.observe.reduced import ReducedSystem
from physid.offline.result import IdentificationResult
from physid.recordings.trajectory import Trajectory
from physid.status import Status

# A validation error above this multiple of the URDF's own model's on the same recordings is
# "worse than the URDF": a tenth, so that a model file that is already the truth (simulated
# data) and a fit at the noise floor are not called worse for the last digits of the noise.
HELD_OUT_MARGIN = 1.1
CORRELATED_LAG1 = 0.5  # lag-1 autocorrelation above which eq. 6's std are optimistic


def judge(
    result: IdentificationResult,
    previews: list[Trajectory],
    static_ratios: Callable[[], dict[str, float]],
    system: ReducedSystem,
    base_columns: np.ndarray,
) -> IdentificationResult:
    """``result`` (assembled with the earlier stages' findings) with the fit's own findings and
    its status (module docstring); ``system``: the training system, ``base_columns`` the excited
    base parameters' columns (the joint-scale check refits them)."""
    fit, findings = result.fit, list(result.findings)
    if fit.theta is None:
        return replace(result, status=Status.INCONSISTENT, findings=unique(findings))
    model = fit.model
    findings += lift_load_findings(model, previews)
    findings += plausibility_findings(
        model, fit.theta, fit.prior, result.joint_prior, result.gravity, static_ratios
    )
    options = result.preprocessing.filter
    unexplained = unexplained_torque_finding(
        fit.train_filtered.relative_error,
        fit.train.relative_error,
        options.decimation_cutoff_hz or options.butterworth_cutoff_hz,
    )
    findings += [] if unexplained is None else [unexplained]
    # only when nothing else is wrong: it reads the other joints' torques as right (a joint
    # whose torque is noise makes a coupled one's scale "fit" better); a test, so under the
    # per-joint noise model (WLS's weights) whichever weighting the point estimate took: under
    # plain weighting the largest torques' misfit would pass for a gain
    if not any(f.severity is Severity.SUSPECT for f in findings):
        noise_model = least_squares(system, base_columns, "wls").weights
        scale = joint_scale_finding(system, base_columns, noise_model, model.joint_names)
        findings += [] if scale is None else [scale]
    findings += correlated_residual_findings(model.joint_names, fit.autocorrelation)
    held_out = worse_held_out(fit.validation, fit.validation_urdf, result.prior_check)
    findings += [] if held_out is None else [held_out]
    provisional = replace(result, findings=tuple(findings))
    findings += fit_findings(provisional)
    return replace(result, findings=unique(findings), status=status_of(findings, result))


def status_of(findings: list[Finding], result: IdentificationResult) -> Status:
    """The status of a result with a consistent fit (module docstring)."""
    if any(f.severity is Severity.SUSPECT for f in findings):
        return Status.SUSPECT
    check = result.prior_check
    if check is not None and not check.better_than_urdf:
        return Status.WORSE_THAN_URDF
    if any(f.code == WORSE_THAN_URDF.code for f in findings):
        return Status.WORSE_THAN_URDF
    return Status.OK


def correlated_residual_findings(joints: tuple[str, ...], autocorrelation) -> list[Finding]:  # noqa: ANN001
    """Paper C section 4.3: serially correlated residuals make eq. 6's standard deviations
    optimistic (params.json 'std' holds the Newey-West ones)."""
    if autocorrelation is None:
        return []
    lag1 = autocorrelation[:, 1]
    correlated = [(j, float(r)) for j, r in zip(joints, lag1, strict=True) if r > CORRELATED_LAG1]
    if not correlated:
        return []
    return [
        CORRELATED_RESIDUALS(
            "residuals are serially correlated (lag-1 autocorrelation "
            + ", ".join(f"{j} {r:.2f}" for j, r in correlated)
            + "): paper C eq. 6 standard deviations are optimistic; params.json 'std' holds the "
            "Newey-West ones, which account for it",
            numbers={f"{j}.lag1": r for j, r in correlated},
            names=[j for j, _ in correlated],
        )
    ]


def worse_held_out(validation, urdf: float | None, check: PriorCheck | None) -> Finding | None:  # noqa: ANN001
    """The identified model predicts the validation recordings worse than the URDF's own model
    (its inertias and joint terms, nothing fitted) on the same samples. ``check``: the two on
    the training folds; where the fit beat the URDF there clearly, what it fitted does not carry
    over (an effect the model lacks absorbed into its parameters, or a motion unlike the
    training one)."""
    if validation is None or urdf is None:
        return None
    identified = validation.relative_error
    if not identified > HELD_OUT_MARGIN * urdf:
        return None
    measured = (
        "the identified model predicts the validation recordings worse than the URDF's own "
        f"model ({100 * identified:.3g} % vs {100 * urdf:.3g} % raw torque error): "
    )
    numbers = {"identified": identified, "urdf": urdf}
    if check is not None and HELD_OUT_MARGIN * check.identified.total < check.urdf.total:
        return WORSE_THAN_URDF(
            measured
            + (
                f"on the training folds it predicted better ({100 * check.identified.total:.3g} % "
                f"vs {100 * check.urdf.total:.3g} %), so what it fitted there does not carry over: "
                "an effect the model lacks (a drag, a cable, a friction shape, a torque delay) "
                "absorbed into its parameters, or a validation motion unlike the training one; "
                "keep the URDF's model for that motion, and see the joints' torque panels"
            ),
            numbers=numbers,
        )
    return WORSE_THAN_URDF(
        measured
        + (
            "the training recordings do not determine what the validation motion needs (too "
            "short, or too little of it excited: their folds could not see it); keep the URDF's "
            "model for that motion, or record a longer, richer excitation"
        ),
        numbers=numbers,
    )
