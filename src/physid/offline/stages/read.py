"""Stage 1: read and check the recordings before any fit.

Suspect data (:mod:`physid.offline.checks.suspect`), validation samples that are training
samples, logged derivatives that are not the rates they claim; the folds of the training
recordings; the compiled consistent problem every later fit re-solves.
"""

from __future__ import annotations

from dataclasses import dataclass

from physid.errors import InputError
from physid.files.config import IdentifyConfig
from physid.findings import Finding
from physid.offline.checks.held_out import not_held_out_findings
from physid.offline.checks.suspect import motionless_finding, suspect_findings
from physid.offline.choose.friction_shapes import START_FRACTIONS, with_initial_shapes
from physid.offline.codes import DERIVATIVES_WRONG
from physid.offline.fit.consistent import ConsistentProblem
from physid.offline.observe.folds import FoldPlan
from physid.offline.observe.observations import joint_speed_rms
from physid.offline.observe.preprocessing import resolve_preprocessing
from physid.offline.observe.windows import (
    Recording,
    missing_derivatives,
    recorded_derivative_problems,
)
from physid.recordings.streamed import preview
from physid.recordings.trajectory import Trajectory
from physid.robot.model import RobotModel, revolute_mask
from physid.robot.regressor import base_parameters


@dataclass(frozen=True)
class Inputs:
    """The recordings as the later stages use them, and what reading them found."""

    model: RobotModel  # with starting friction shapes when the model has nonlinear ones
    model_urdf: RobotModel  # as given
    train: list[Recording]
    validation: list[Recording]
    previews: list[Trajectory]  # the training recordings in memory (the first rows of long ones)
    folds: FoldPlan
    problem: ConsistentProblem
    want_gravity: bool  # the gravity direction may be estimated
    n_estimated: int  # base parameters, and the tilt's two angles when it may be estimated
    rms_speed: object | None  # (n,) per-joint RMS speed, when friction shapes need a start
    recorded_derivatives: bool  # every recording has dq_ and ddq_ that are their rates
    velocities_only: bool  # some recording has dq_ columns but no ddq_
    findings: tuple[Finding, ...]


def read_inputs(
    model: RobotModel,
    train: list[Recording],
    config: IdentifyConfig,
    validation: list[Recording] | None = None,
) -> Inputs:
    """Stage 1 (module docstring)."""
    if not train:
        raise InputError("no training recording given")
    validation = list(validation or [])
    estimation = config.estimation
    want_gravity = estimation.estimate_gravity_direction is not False
    previews = [preview(t) for t in train]
    findings = not_held_out_findings(list(train), validation)
    motionless = motionless_finding(model, list(train))  # every row, streamed ones too
    if motionless is not None:
        findings.append(motionless)
    else:
        findings += suspect_findings(model, previews + [preview(t) for t in validation])
    n_estimated = base_parameters(model).size + (2 if want_gravity else 0)
    model_urdf, rms_speed = model, None
    if model.layout.nonlinear_friction:  # the first pass needs shapes; the fit picks the start
        start = resolve_preprocessing(config.filter, train, n_estimated).filter
        rms_speed = joint_speed_rms(model, train, start)
        model = with_initial_shapes(model, rms_speed, START_FRACTIONS[0])
    problem = ConsistentProblem(
        model,
        model.prior_parameters(),
        margin=estimation.consistency_margin,
        prior_metric=estimation.prior_metric,
    )
    lacking = [missing_derivatives(r) for r in [*train, *validation]]
    wrong = [] if any(lacking) else _wrong_derivatives(model, [*train, *validation], config)
    findings += wrong
    return Inputs(
        model,
        model_urdf,
        list(train),
        validation,
        previews,
        FoldPlan.of(train),
        problem,
        want_gravity,
        n_estimated,
        rms_speed,
        recorded_derivatives=not any(lacking) and not wrong,
        velocities_only=any(m == ["ddq"] for m in lacking),
        findings=tuple(findings),
    )


def _wrong_derivatives(
    model: RobotModel, recordings: list[Recording], config: IdentifyConfig
) -> list[Finding]:
    """Logged derivatives that are not the rates they stand for: no cut-off candidate, and their
    columns named (the mistake may run through the rest of the log). Under filter method
    ``given`` the loaders refuse them before any work, so nothing is said here."""
    if config.filter.method == "given":
        return []
    said = [
        (recording.source, problems)
        for recording in recordings
        if (
            problems := recorded_derivative_problems(
                recording, revolute_mask(model, recording.joint_names)
            )
        )
    ]
    if not said:
        return []
    return [
        DERIVATIVES_WRONG(
            "the recorded derivatives are not the rates they stand for, and not used (the "
            "derivatives come from the positions): "
            + "; ".join(f"{source}: {problems}" for source, problems in said),
            names=[str(source) for source, _ in said],
        )
    ]
