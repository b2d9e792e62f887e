"""``physid excite``: URDF + config in, an optimised excitation trajectory and its summary out.

The trajectory is written in physid's trajectory contract (docs/architecture.md): ``t``,
``q_<joint>``, ``dq_<joint>``, ``ddq_<joint>`` and ``tau_<joint>``, where ``tau`` is the torque the
URDF's nominal parameters need (for a feasibility check and a feed-forward; it is not a
measurement). The summary (``physid.excitation/1`` JSON) holds the criterion, the condition number
and the log-det of the base regressor before and after the optimisation, the limits and how much of
each the trajectory uses, and the Fourier coefficients. Both files are written atomically.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from physid.errors import InputError, PhysidError
from physid.excite.codes import COLLISION_OFF
from physid.excite.config import load_excite_config
from physid.excite.design import ExcitationOptions, ExcitationResult, design_excitation
from physid.excite.geometry import (
    GeometryConstraints,
    WorkspaceChecker,
    collision_checker,
)
from physid.excite.limits import NominalTorques, joint_limits
from physid.files.config import robot_for
from physid.files.io import write_json_atomic
from physid.findings import Finding
from physid.recordings.trajectory import Trajectory, write_trajectory_csv
from physid.robot.regressor import base_parameters


def resolve_timing(
    duration_s: float | None, base_frequency_hz: float | None
) -> tuple[float, float]:
    """``(duration, base frequency)``: the duration is a whole number of periods; without a
    base frequency it is one period, without a duration one period of 0.1 Hz (10 s)."""
    for value, option in ((duration_s, "--duration"), (base_frequency_hz, "--base-frequency")):
        if value is not None and not (np.isfinite(value) and value > 0):
            raise InputError(f"must be a number > 0, got {value}", source=option)
    if base_frequency_hz is None:
        base_frequency_hz = 1.0 / duration_s if duration_s is not None else 0.1
    period = 1.0 / base_frequency_hz
    if duration_s is None:
        return period, base_frequency_hz
    periods = duration_s / period
    if abs(periods - round(periods)) > 1e-6 * max(periods, 1.0) or round(periods) < 1:
        raise InputError(
            f"{duration_s:g} s is not a whole number of periods of {period:g} s "
            f"(1 / --base-frequency {base_frequency_hz:g} Hz)",
            source="--duration",
        )
    return duration_s, base_frequency_hz


def check_sampling(
    duration_s: float,
    base_frequency_hz: float,
    harmonics: int,
    sample_rate_hz: float,
    options: tuple[str, str],
    n_joints: int | None = None,
    n_base: int | None = None,
) -> None:
    """InputError naming the option at fault (``options``: the one that set the base frequency,
    the one that set the duration) when the written trajectory cannot carry the design: its
    highest harmonic (``harmonics`` x ``base_frequency_hz``) at or above the Nyquist frequency
    of ``sample_rate_hz`` (the samples alias it and the regressor is singular), or, with
    ``n_base``, fewer distinct samples x joints over ``duration_s`` than
    base parameters (no identification can use them: the regressor is rank deficient). The end
    sample repeats the first (a periodic excitation at rest), so it is not counted."""
    band, nyquist = harmonics * base_frequency_hz, 0.5 * sample_rate_hz
    if band >= nyquist:
        raise InputError(
            f"{harmonics} harmonics x {base_frequency_hz:g} Hz = {band:g} Hz reaches the Nyquist "
            f"frequency {nyquist:g} Hz of the written trajectory (excitation.sample_rate_hz "
            f"{sample_rate_hz:g} Hz), whose samples cannot carry the highest harmonic: keep "
            f"--harmonics x --base-frequency below {nyquist:g} Hz (a base frequency below "
            f"{nyquist / harmonics:.4g} Hz, a duration above {harmonics / nyquist:.4g} s) or "
            "raise excitation.sample_rate_hz",
            source=options[0],
        )
    if n_base is None or n_joints is None:
        return
    samples = int(round(duration_s * sample_rate_hz))
    if samples * n_joints < n_base:
        needed = int(np.ceil(n_base / n_joints))
        raise InputError(
            f"{duration_s:g} s at excitation.sample_rate_hz {sample_rate_hz:g} Hz is "
            f"{samples} distinct samples x {n_joints} joints, fewer rows than the {n_base} base "
            f"parameters (no identification can use them): give a duration of at least "
            f"{needed / sample_rate_hz:.4g} s (a whole number of periods) or raise "
            "excitation.sample_rate_hz",
            source=options[1],
        )


def excitation_trajectory(
    result: ExcitationResult, torques: NominalTorques, duration_s: float, sample_rate_hz: float
) -> Trajectory:
    """The designed excitation sampled over ``duration_s`` (the end sample included)."""
    n_rows = int(round(duration_s * sample_rate_hz)) + 1
    if n_rows > 10_000_000:
        raise InputError(f"{n_rows} rows: lower excitation.sample_rate_hz or --duration")
    t = np.arange(n_rows) / sample_rate_hz
    q, dq, ddq = result.states(t)
    tau = torques.torques(q, dq, ddq)
    return Trajectory(t, q, tau, result.limits.joint_names, dq=dq, ddq=ddq, source="excitation")


def geometry_constraints(  # noqa: ANN001 - RobotModel, JointLimits, the excitation config
    model, urdf: str | Path, limits, excitation
) -> tuple[GeometryConstraints | None, tuple[Finding, ...]]:
    """The self-collision (unless ``excitation.collision`` is false) and workspace constraints
    of the config, and the findings on what they cover (codes EX1xx)."""
    collision, notes = None, []
    if excitation.collision:
        middle = 0.5 * (limits.lower + limits.upper)
        collision, notes = collision_checker(
            model, urdf, middle, excitation.min_distance, excitation.package_dirs
        )
    else:
        notes = [COLLISION_OFF("self-collision not checked (excitation.collision: false)")]
    workspace = None
    if excitation.workspace is not None:
        workspace = WorkspaceChecker(model, excitation.workspace)
    if collision is None and workspace is None:
        return None, tuple(notes)
    return GeometryConstraints(collision, excitation.min_distance, workspace), tuple(notes)


def _require_finite(trajectory: Trajectory, urdf: str | Path) -> None:
    """No NaN is ever written: a non-finite torque or state names its joint."""
    for kind, values in (("q", trajectory.q), ("dq", trajectory.dq), ("tau", trajectory.tau)):
        bad = np.flatnonzero(~np.all(np.isfinite(values), axis=0))
        if bad.size:
            joint = trajectory.joint_names[bad[0]]
            raise PhysidError(
                f"{urdf}: the designed trajectory has non-finite {kind}_{joint}; check the "
                "URDF's inertials and limits of that joint"
            )


def summary_path_for(out: str | Path) -> Path:
    """The summary's default path: the trajectory's, with ``.json`` for its suffix."""
    return Path(out).with_suffix(".json")


def check_trajectory_name(out: str | Path) -> None:
    """The trajectory is a CSV file: ``out`` must end in ``.csv``."""
    if Path(out).suffix.lower() != ".csv":
        raise InputError(f"the trajectory is written as CSV: give a .csv name, got {out}")


@dataclass(frozen=True)
class Excitation:
    """A designed excitation: the result, its sampled trajectory and the summary document
    (``trajectory``: the path of the CSV, set when written)."""

    result: ExcitationResult
    trajectory: Trajectory
    summary: dict

    def write(self, out: str | Path, summary_path: str | Path | None = None) -> Path:
        """The trajectory CSV to ``out`` and the summary JSON beside it (or to
        ``summary_path``), each atomically."""
        check_trajectory_name(out)
        write_trajectory_csv(out, self.trajectory)
        document = self.summary | {"trajectory": str(out)}
        write_json_atomic(summary_path or summary_path_for(out), document)
        return Path(out)


def run_excite(
    urdf: str | Path,
    out: str | Path,
    *,
    summary_path: str | Path | None = None,
    **options: object,
) -> ExcitationResult:
    """Design an excitation for the robot of ``urdf`` (:func:`design_run`) and write ``out``
    and its summary."""
    check_trajectory_name(out)
    run = design_run(urdf, **options)
    run.write(out, summary_path)
    return run.result


def design_run(
    urdf: str | Path,
    *,
    config_path: str | Path | None = None,
    duration_s: float | None = None,
    harmonics: int = 5,
    base_frequency_hz: float | None = None,
    criterion: str = "cond",
    seed: int = 0,
    verbose: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Excitation:
    """Design an excitation for the robot of ``urdf``; ``progress`` receives a line every few
    seconds. Nothing is written (:meth:`Excitation.write`)."""
    # the options that set the base frequency and the duration (resolve_timing's defaults)
    band = "--base-frequency" if base_frequency_hz is not None else "--duration"
    band = band if base_frequency_hz is not None or duration_s is not None else "--harmonics"
    length = "--duration" if duration_s is not None else band
    duration_s, base_frequency_hz = resolve_timing(duration_s, base_frequency_hz)
    identify_config, excitation = load_excite_config(config_path)
    timing = (duration_s, base_frequency_hz, harmonics, excitation.sample_rate_hz, (band, length))
    check_sampling(*timing)  # before the model is built
    model = robot_for(urdf, identify_config)
    check_sampling(*timing, model.n_joints, base_parameters(model).size)
    options = ExcitationOptions(
        base_frequency_hz=base_frequency_hz,
        harmonics=harmonics,
        criterion=criterion,
        seed=seed,
        margin=excitation.margin,
        prior_std_relative=excitation.prior_std_relative,
        noise_std=excitation.noise_std,
        constraint_points=excitation.constraint_points,
        information_points=excitation.information_points,
        max_iterations=excitation.max_iterations,
        starts=excitation.starts,
        time_limit_s=excitation.time_limit_s,
    )
    limits = joint_limits(
        model,
        excitation.limits,
        default_acceleration=excitation.acceleration,
        highest_frequency_hz=harmonics * base_frequency_hz,
    )
    geometry, findings = geometry_constraints(model, urdf, limits, excitation)
    result = design_excitation(
        model,
        limits,
        options,
        verbose=verbose,
        geometry=geometry,
        findings=findings,
        progress=progress,
    )
    trajectory = excitation_trajectory(
        result, NominalTorques(model), duration_s, excitation.sample_rate_hz
    )
    summary = result.summary() | {
        "duration_s": duration_s,
        "sample_rate_hz": excitation.sample_rate_hz,
        "urdf": str(urdf),
        "config": None if config_path is None else str(config_path),
        "trajectory": None,  # the CSV's path, set when written
        "base_parameters": list(result.base.names),
    }
    _require_finite(trajectory, urdf)
    return Excitation(result, trajectory, summary)
