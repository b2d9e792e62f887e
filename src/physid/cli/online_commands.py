"""CLI commands: ``physid online`` (paper E; docs/online.md)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click

from physid.cli.options import (
    DATA_HELP,
    OUTPUT_DIR,
    log_options,
    robot_file_option,
    wrench_topic_option,
)
from physid.cli.verdict import codes_hint, print_verdict, verbose_option


def register(group: click.Group) -> None:
    """Add this module's commands to the physid group."""
    group.add_command(online)


@click.command("online")
@robot_file_option(
    "Robot model (URDF or MJCF). Its inertias are the nominal model unless the config names a "
    "params.json (nominal_params).",
    must_exist=False,
)
@click.option(
    "--data",
    required=True,
    type=click.Path(path_type=Path),
    help="Recording: CSV, .npz, .parquet or a YAML recording manifest with t, q_<joint>, "
    "dq_<joint>, tau_<joint> (+ base_* and f_/m_<frame>_* columns for a floating base; see "
    "docs/online.md)." + DATA_HELP,
)
@click.option(
    "--body",
    "bodies",
    required=True,
    multiple=True,
    metavar="JOINT",
    help="Joint whose body is estimated online (repeat for several bodies; 'root_joint' is the "
    "floating base itself).",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="YAML filter settings: filter (ekf|kf), noises, gating probability, rate limits, "
    "calibration window, floating_base, contact_frames, nominal_params, angle_unit (radians or "
    "degrees: the revolute joints' q_ and dq_ columns), drive_gains (N m/A per joint logged as a "
    "motor current i_, or identify: the nominal params.json's) (docs/online.md).",
)
@click.option(
    "--out",
    required=True,
    type=OUTPUT_DIR,
    help="Output folder: estimates.csv, estimates_std.csv, summary.json, estimates.png "
    "(written atomically: all or nothing).",
)
@click.option(
    "--summary-window",
    default=None,
    metavar="START:END",
    callback=lambda _ctx, _param, text: parse_summary_window(text),
    help="Time window [s, the recording's clock] summarised in summary.json and on the terminal "
    "by the median of the streamed estimates, their spread and the medoid estimate (robust to "
    "a late transient). Either end may be empty ('5:' = from 5 s to the end). Default: the last "
    "quarter of the recording.",
)
@log_options
@wrench_topic_option
@click.option(
    "--quiet",
    is_flag=True,
    help="No progress display (the notes and the result lines are still printed).",
)
@verbose_option
def online(
    urdf: Path,
    data: Path,
    bodies: tuple[str, ...],
    config: Path | None,
    out: Path,
    summary_window: tuple[float | None, float | None] | None,
    topic: str | None,
    episodes: tuple[int, ...],
    wrench_topics: tuple[str, ...],
    quiet: bool,
    verbose: bool,
) -> None:
    """Replay a recording through the online inertial filter of paper E.

    Streams, for each sample, the estimated mass, centre of mass and inertia about the centre
    of mass (joint frame) of every --body, physically consistent at every sample (log-Cholesky
    EKF), with innovation gating, rate limiting and start-up bias calibration as configured.

    Ends with the status (ok, or suspect: the data cannot support the estimate), each body's
    mass over the summary window and the findings that should change what you do (all of them
    in summary.json; --verbose prints them all; 'physid codes ON301' explains a code).

    Exit codes: 0 ok; 2 bad input (time stamps not finite or not increasing, a value beyond
    1e8, too few samples, all torques zero; nothing written); 3 the outputs were written but
    the status is suspect, its findings say why (too few updates, most measurements gated,
    the model does not explain the torques, a torque scale off, time not in seconds,
    positions outside the URDF's limits, no joint moving).
    """
    from physid.api.online_run import online_replay
    from physid.status import Status

    def note(text: str) -> None:
        click.echo(f"physid: note: {text}", err=True)

    run = online_replay(
        urdf,
        data,
        bodies,
        config=config,
        summary_window=summary_window,
        topic=topic,
        episodes=episodes,
        wrench_topics=wrench_topics,
        progress=not quiet,
        warn=note,
    )
    run.save(out)
    result, summary = run.raw, run.document
    numbers = [
        f"{len(result.t)} samples, {result.n_updates} updates, {int(result.gated.sum())} gated "
        f"({100 * summary['gated_fraction']:.1f} % of the filter's measurements), "
        f"{int(result.skipped.sum())} skipped"
    ]
    for joint in result.bodies:
        w = summary["bodies"][joint]["window"]
        numbers.append(
            f"{joint}: mass {w['median']['mass']:.4g} kg (median; spread "
            f"{w['spread_std']['mass']:.2g}) over {w['start_s']:.3g}-{w['end_s']:.3g} s"
        )
    status = Status(run.status)
    verdict = (
        f"{len(result.bodies)} {'body' if len(result.bodies) == 1 else 'bodies'} estimated online"
        if status.success
        else "the data cannot support the estimate"
    )
    print_verdict(status, verdict, numbers, run.findings, verbose=verbose)
    click.echo(codes_hint(str(out / "summary.json")))
    if status.exit_code:
        sys.exit(status.exit_code)


def parse_summary_window(text: str | None) -> tuple[float | None, float | None] | None:
    """``--summary-window START:END`` [s] as ``(start, end)``, an empty end None (the
    recording's first or last stamp); a one-line error naming the option otherwise."""
    from physid.errors import InputError

    if text is None:
        return None
    parts = text.split(":")
    try:
        if len(parts) != 2:
            raise ValueError
        start, end = (float(part) if part.strip() else None for part in parts)
    except ValueError:
        raise InputError(f"--summary-window {text!r}: expected START:END in seconds") from None
    given = [v for v in (start, end) if v is not None]
    if not all(math.isfinite(v) for v in given) or (len(given) == 2 and end < start):
        raise InputError(f"--summary-window {text!r}: needs START <= END, finite")
    return start, end
