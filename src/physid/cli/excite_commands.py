"""CLI: ``physid excite`` (optimal excitation-trajectory design)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import numpy as np

from physid.api.robot_runs import EXCITE
from physid.cli.options import EXISTING_FILE, OUTPUT_FILE, number_in, robot_file_option
from physid.cli.verdict import codes_hint, print_verdict, verbose_option


@click.command("excite")
@robot_file_option(
    "The robot: kinematics, nominal inertias (for the torques) and joint limits "
    "(<limit lower upper velocity effort>). An MJCF (MuJoCo XML) works too: the kind is read "
    "from the file."
)
@click.option(
    "--config",
    "config_path",
    type=EXISTING_FILE,
    default=None,
    help="YAML: the identify keys that shape the model (joint_terms, transmission, joints, "
    "locked, ...) and an 'excitation' section (limit overrides incl. acceleration, margin, "
    "prior weighting, grids, IPOPT iterations, sample rate); see docs/excitation.md.",
)
@click.option(
    "--out",
    required=True,
    type=OUTPUT_FILE,
    help="Trajectory CSV to write (t, q_<joint>, dq_<joint>, ddq_<joint>, and tau_<joint> of "
    "the URDF's nominal parameters). A summary JSON goes beside it (same name, .json).",
)
@click.option(
    "--duration",
    type=float,
    default=None,
    callback=number_in(*EXCITE["duration"]),
    help="Length of the written trajectory [s], 0.001-1e6, a whole number of periods (default: "
    "one period; alone, it sets the period: base frequency = 1 / duration).",
)
@click.option(
    "--harmonics",
    type=int,
    callback=number_in(*EXCITE["harmonics"]),
    default=5,
    show_default=True,
    help="Harmonics L of the Fourier series per joint, 1-50 (bandwidth = L x base frequency).",
)
@click.option(
    "--base-frequency",
    type=float,
    default=None,
    callback=number_in(*EXCITE["base_frequency"]),
    help="Base frequency f0 [Hz], 1e-4-1000; the period is 1/f0 (default: 1 / --duration, else "
    "0.1 Hz). The band, --harmonics x f0, must stay below the Nyquist frequency of "
    "excitation.sample_rate_hz (default 200 Hz: below 100 Hz), and the written samples x "
    "joints must outnumber the base parameters; otherwise a one-line error.",
)
@click.option(
    "--criterion",
    type=click.Choice(["cond", "logdet"]),
    default="cond",
    show_default=True,
    help="cond: minimise the condition number of the column-scaled base regressor (identifies "
    "best in benchmarks/excitation.py); logdet: maximise log det of the base parameters' "
    "information matrix (D-optimal; Bayesian when the config gives a prior).",
)
@click.option(
    "--seed",
    type=int,
    callback=number_in(*EXCITE["seed"]),
    default=0,
    show_default=True,
    help="Seed of the first random Fourier start (scaled into the limits), 0-4294967295; the "
    "config's excitation.starts (default 3) starts use seeds --seed, --seed + 1, ...",
)
@click.option(
    "--summary",
    "summary_path",
    type=OUTPUT_FILE,
    default=None,
    help="Where to write the JSON summary (default: --out with the suffix .json).",
)
@click.option("--ipopt-log", is_flag=True, help="Print IPOPT's iteration log.")
@verbose_option
def excite_command(
    urdf: Path,
    config_path: Path | None,
    out: Path,
    duration: float | None,
    harmonics: int,
    base_frequency: float | None,
    criterion: str,
    seed: int,
    summary_path: Path | None,
    ipopt_log: bool,
    verbose: bool,
) -> None:
    """Design an excitation trajectory that identifies the base parameters well.

    A finite Fourier series per joint (Swevers et al. 1997) with zero velocity and
    acceleration at the start and end, periodic, optimised by IPOPT (CasADi) for the chosen
    criterion under position, velocity, acceleration and torque limits checked on a dense time
    grid (limits from the URDF, overridable in the config; acceleration default: velocity limit
    x 2 pi x the highest harmonic), bodies kept apart by the URDF's collision geometry and, if
    configured, frames kept inside a workspace box. Stops at excitation.time_limit_s (default
    180 s) and prints a progress line every 5 s on stderr. Ends with the status, the criterion,
    condition number and log-det of the start and of the result (how far it got), the largest
    use of each limit, the smallest distance between bodies, and the findings that should change
    what you do (all of them in the summary; --verbose prints them all; 'physid codes EX201'
    explains a code). See docs/excitation.md.

    Exit codes: 0 ok; 2 bad input (nothing written); 3 written, but the status is not ok:
    not_converged (IPOPT's excitation.max_iterations ran out, or the dense check finds a limit
    broken), time_limit (excitation.time_limit_s ran out: the trajectory is its best iterate
    within the limits), stalled or numerical_failure; the findings say which.
    """
    from physid.api.excite_run import excite_design
    from physid.errors import InputError
    from physid.excite.workflow import check_trajectory_name, summary_path_for
    from physid.files.output_paths import check_output_file
    from physid.status import Status

    summary = check_output_file(summary_path or summary_path_for(out), "--summary")
    if summary.resolve() == out.resolve():
        raise InputError(f"{summary} is the trajectory's own path (--out)", source="--summary")
    check_trajectory_name(out)
    run = excite_design(
        urdf,
        config=config_path,
        duration=duration,
        harmonics=harmonics,
        base_frequency=base_frequency,
        criterion=criterion,
        seed=seed,
        verbose=ipopt_log,
        progress=None if ipopt_log else lambda line: click.echo(f"excite: {line}", err=True),
    )
    run.save(out, summary_path)
    status = Status(run.status)
    print_verdict(status, run.message, _numbers(run.raw), run.findings, verbose=verbose)
    click.echo(f"wrote {out} and {summary}")
    click.echo(codes_hint(str(summary)))
    if status.exit_code:
        sys.exit(status.exit_code)


def _numbers(result) -> list[str]:  # noqa: ANN001 - a physid.excite.design.ExcitationResult
    """The key numbers: the start's and the result's information, the limits' use, the
    smallest distance between bodies and the workspace excursion."""
    start, best, check = result.start_quality, result.quality, result.limit_check
    lines = [f"{'':22s}{'start':>12s}{'optimised':>12s}"]
    for label, attribute in (
        (f"criterion ({result.options.criterion})", "criterion"),
        ("condition number", "condition_number"),
        ("cond (columns scaled)", "condition_number_scaled"),
        ("log det(W^T W / rows)", "logdet"),
    ):
        lines.append(
            f"{label:22s}{getattr(start, attribute):12.4g}{getattr(best, attribute):12.4g}"
        )
    lines.append(
        f"limit use (1 = at the limit): position {check.position:.3f}, velocity "
        f"{check.velocity:.3f}, acceleration {check.acceleration:.3f}, torque {check.torque:.3f}"
    )
    if np.isfinite(check.min_distance):
        lines.append(
            f"self-collision: smallest distance between bodies {1000 * check.min_distance:.1f} mm "
            f"({len(result.geometry.collision.pairs)} pairs checked)"
        )
    if result.geometry is not None and result.geometry.workspace is not None:
        lines.append(f"workspace: largest excursion out of the box {check.outside_workspace:.4f} m")
    return lines


def register(group: click.Group) -> None:
    """Add this module's commands to the ``physid`` group."""
    group.add_command(excite_command)
