"""CLI commands: ``physid online`` (paper E; docs/online.md)."""

from __future__ import annotations

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

SUSPECT_EXIT_CODE = 3  # outputs written, but the data cannot support the estimate (status)


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
    help="No progress display (the warnings and the result lines are still printed).",
)
def online(
    urdf: Path,
    data: Path,
    bodies: tuple[str, ...],
    config: Path | None,
    out: Path,
    summary_window: str | None,
    topic: str | None,
    episodes: tuple[int, ...],
    wrench_topics: tuple[str, ...],
    quiet: bool,
) -> None:
    """Replay a recording through the online inertial filter of paper E.

    Streams, for each sample, the estimated mass, centre of mass and inertia about the centre
    of mass (joint frame) of every --body, physically consistent at every sample (log-Cholesky
    EKF), with innovation gating, rate limiting and start-up bias calibration as configured.

    Exit codes: 0 ok; 2 bad input (time stamps not finite or not increasing, a value beyond
    1e8, too few samples, all torques zero; nothing written); 3 the outputs were written but
    summary.json's status is "suspect" with its reasons (too few updates, most measurements
    gated, time not in seconds, positions outside the URDF's limits, no joint moving).
    """
    from physid.api.online_run import online_replay

    def warn(text: str) -> None:
        click.echo(f"physid: warning: {text}", err=True)

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
        warn=warn,
    )
    run.save(out)
    result, summary = run.raw, run.document
    click.echo(
        f"physid online: {len(result.t)} samples, {result.n_updates} updates, "
        f"{int(result.gated.sum())} gated ({100 * summary['gated_fraction']:.1f} % of the "
        f"filter's measurements), {int(result.skipped.sum())} skipped -> {out}"
    )
    for joint in result.bodies:
        w = summary["bodies"][joint]["window"]
        click.echo(
            f"  {joint}: mass {w['median']['mass']:.4g} kg (median; spread "
            f"{w['spread_std']['mass']:.2g}) over {w['start_s']:.3g}-{w['end_s']:.3g} s"
        )
    if run.status != "ok":
        reasons = "; ".join(summary["status_reasons"])
        click.echo(f"physid: warning: status {run.status}: {reasons}", err=True)
        sys.exit(SUSPECT_EXIT_CODE)
