"""CLI: ``physid sweep`` — a grid of identify / validate / payload / impacts-identify jobs on Ray.

Ray is imported only when a sweep runs, so ``--help`` stays fast and works without it.
"""

from __future__ import annotations

from pathlib import Path

import click

from physid.cli.options import OUTPUT_DIR

SPEC_HELP = """Run the jobs of SPEC (a YAML file) on Ray and write one folder per job and a
results table.

\b
SPEC keys (docs/sweep.md):
  kind:   identify | validate | payload | impacts_identify
  base:   arguments of every job (file paths relative to SPEC)
  grid:   argument -> list of values; the cartesian product of all keys
          (a key 'config.filter.butterworth_cutoff_hz' edits the identify config)
  jobs:   a list of explicit jobs (argument -> value, optional name), after the grid ones
  seeds:  a count or a list: every job once per seed (kinds with 'simulate')

\b
Writes into --out:
  jobs/<job_id>/   job.json (arguments, status, error, results), config.yaml, the job's files
  results.csv      one row per job: parameters, status, error, wall time, key results
  results.parquet  the same, when pyarrow is installed
  sweep.json, spec.yaml

A job that fails is recorded with its one-line error and the sweep goes on; the exit code is 0
when the sweep ran (failed jobs or not), 2 on a bad SPEC or option. Needs Ray:
pip install ray (in physid's checkout: pip install -e '.[sweep]').
"""


@click.command("sweep", help=SPEC_HELP)
@click.argument("spec", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=OUTPUT_DIR,
    required=True,
    help="Output folder (new, or without a previous sweep unless --resume): jobs/<job_id>/, "
    "results.csv, results.parquet, sweep.json, spec.yaml.",
)
@click.option(
    "--address",
    default=None,
    metavar="ADDR",
    help="An existing Ray cluster to run on: 'auto' (the cluster this machine belongs to), "
    "'HOST:6379', or a Ray client address 'ray://HOST:10001'. Its nodes must have physid "
    "installed and read the SPEC's input files at the same paths. Default: start a local Ray "
    "instance for this sweep and stop it at the end.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 4096),
    default=None,
    help="Most jobs running at once (one CPU each), at most 4096. Default: every CPU of this "
    "machine for a local instance; as many as the cluster schedules with --address.",
)
@click.option(
    "--retries",
    type=click.IntRange(0, 100),
    default=2,
    show_default=True,
    help="Times a task is re-run when its worker or node dies or it raises an unexpected "
    "exception (Ray's max_retries). A job refused with a physid error (bad input, no "
    "consistent result) is recorded at once, not retried.",
)
@click.option(
    "--resume",
    is_flag=True,
    help="--out holds an earlier run of this sweep (interrupted, or with failed jobs): keep "
    "the jobs that finished ok with unchanged arguments and run the others.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Check SPEC and list its jobs (id and parameters) without running them or needing Ray.",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def sweep(
    spec: Path,
    out: Path,
    address: str | None,
    workers: int | None,
    retries: int,
    resume: bool,
    dry_run: bool,
    quiet: bool,
) -> None:
    from physid.sweep.spec import load_spec

    parsed = load_spec(spec)
    if dry_run:
        from physid.sweep.runner import check_address

        check_address(address)  # checked like the SPEC (the help); not reached
        for job in parsed.jobs:
            shown = ", ".join(f"{k}={v}" for k, v in job.parameters.items())
            click.echo(f"{job.job_id}  {shown}")
        click.echo(f"{len(parsed.jobs)} {parsed.kind} job(s); nothing run")
        return
    from physid.sweep.runner import run_sweep

    summary = run_sweep(
        spec,
        out,
        address=address,
        workers=workers,
        retries=retries,
        progress=not quiet,
        resume=resume,
    )
    for row in summary.rows:
        if row["status"] != "ok":
            click.echo(f"physid: job {row['job_id']} {row['status']}: {row['error']}", err=True)
    tables = " and ".join(str(path) for path in summary.tables)
    click.echo(
        f"{len(summary.rows)} jobs in {summary.wall_time_s:.1f} s: {summary.n_ok} ok, "
        f"{summary.n_failed} failed; wrote {tables}"
    )


def register(group: click.Group) -> None:
    """Add this module's commands to the physid group."""
    group.add_command(sweep)
