"""Run a sweep on Ray: a local instance (no address) or an existing cluster (an address).

The driver submits the jobs (at most ``workers`` at a time), shows a progress bar as they
finish, writes each job's folder ``DIR/jobs/<job_id>/`` (its files, its ``config.yaml`` and a
``job.json`` with arguments, status, error and key numbers) and, after every job, the results
table ``DIR/results.csv`` (``results.parquet`` at the end when pyarrow is installed). Every file
is written under a temporary name and renamed. A job that fails is recorded with its one-line
error and the sweep goes on; Ray re-runs a task whose worker or node died, or that raised
anything but a :class:`~physid.errors.PhysidError`, up to ``retries`` times.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from physid.errors import InputError, PhysidError, install_hint
from physid.files.io import claim_output_dir, folder_mode, write_bytes_atomic, write_json_atomic
from physid.sweep.execute import execute_job, one_line
from physid.sweep.reaper import start_reaper, stop_reaper
from physid.sweep.spec import Job, SweepSpec, load_spec
from physid.sweep.table import job_row, write_table

INSTALL_HINT = f"the sweep runs on Ray, which is not installed: {install_hint('ray', 'sweep')}"


@dataclass(frozen=True)
class SweepSummary:
    out_dir: Path
    rows: list[dict[str, Any]]
    wall_time_s: float
    tables: list[Path]

    @property
    def n_ok(self) -> int:
        return sum(row["status"] == "ok" for row in self.rows)

    @property
    def n_failed(self) -> int:
        return len(self.rows) - self.n_ok


def import_ray():  # noqa: ANN201
    """The ``ray`` module, or a one-line PhysidError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise PhysidError(INSTALL_HINT) from None
    return ray


def run_sweep(
    spec: SweepSpec | str | Path,
    out_dir: str | Path,
    *,
    address: str | None = None,
    workers: int | None = None,
    retries: int = 2,
    progress: bool = True,
    resume: bool = False,
) -> SweepSummary:
    """Run every job of ``spec`` (a :class:`SweepSpec` or a SPEC file) into ``out_dir``.

    ``address``: an existing Ray cluster (``ray://host:10001``, ``host:6379`` or ``auto``);
    ``None`` starts a local instance with ``workers`` CPUs (default: all) and shuts it down at
    the end. A Ray session already initialised in this process is used as it is.
    ``workers``: the most jobs running at once. ``retries``: Ray's ``max_retries``.
    ``resume``: into the folder of an earlier run of this sweep, keep the jobs that finished
    ``ok`` with the same arguments (their folders and rows) and run the others again.
    """
    source_text = None
    if not isinstance(spec, SweepSpec):
        source_text = Path(spec).read_bytes() if Path(spec).is_file() else None
        spec = load_spec(spec)
    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        raise InputError(f"must be in [1, {MAX_WORKERS}], got {workers}", source="--workers")
    if not 0 <= retries <= MAX_RETRIES:
        raise InputError(f"must be in [0, {MAX_RETRIES}], got {retries}", source="--retries")
    check_address(address)
    ray = import_ray()
    start = time.perf_counter()
    with claim_output_dir(out_dir, option="--out") as target:
        jobs_dir = target / "jobs"
        previous = (target / "results.csv").exists() or (
            jobs_dir.is_dir() and any(jobs_dir.iterdir())
        )
        if previous and not resume:
            raise InputError(
                f"{target} holds a previous sweep (results.csv, jobs/); choose a new folder, "
                "or pass --resume to keep its finished jobs",
                source="--out",
            )
        done = _finished_rows(jobs_dir, spec.jobs) if resume else {}
        with _ray_session(ray, address, workers):  # (no Ray, no file: nothing ran)
            if source_text is not None:
                write_bytes_atomic(target / "spec.yaml", source_text)
            rows = _run_jobs(ray, spec.jobs, target, workers, retries, progress, done)
        tables = write_table(rows, target, parameters=parameter_names(spec.jobs))
        elapsed = time.perf_counter() - start
        write_json_atomic(
            target / "sweep.json",
            {
                "format": "physid.sweep/1",
                "spec": spec.source,
                "kind": spec.kind,
                "description": spec.description,
                "jobs": len(rows),
                "ok": sum(row["status"] == "ok" for row in rows),
                "failed": [row["job_id"] for row in rows if row["status"] != "ok"],
                "wall_time_s": elapsed,
                "ray": {"address": address or "local", "workers": workers, "retries": retries},
            },
        )
    return SweepSummary(target, rows, elapsed, tables)


# Ray schedules one CPU per job: more workers than this is a typo (2**31 made Ray's local
# node time out after 34 s), and more retries than this only hides a broken job
MAX_WORKERS = 4096
MAX_RETRIES = 100
_ADDRESS = re.compile(r"^(auto|local|(ray://)?([A-Za-z0-9_.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5}))$")


def check_address(address: str | None) -> None:
    """``--address``: ``auto``, ``HOST:PORT`` or ``ray://HOST:PORT`` (port 1-65535); anything
    else is a one-line InputError before a folder is claimed or Ray is asked."""
    if address is None:
        return
    match = _ADDRESS.match(address)
    if match is None or (match[4] is not None and not 1 <= int(match[4]) <= 65535):
        raise InputError(
            f"{address!r} is not a Ray address: 'auto', 'HOST:PORT' or 'ray://HOST:PORT'",
            source="--address",
        )


CONNECT_TIMEOUT_S = 5.0


def check_reachable(address: str) -> None:
    """A ``HOST:PORT`` address (a cluster's GCS) that accepts no connection within
    :data:`CONNECT_TIMEOUT_S` is a one-line error: ``ray.init`` retried an unreachable GCS for
    minutes ("Failed to get cluster ID from GCS server: TimedOut") with no end in sight. A
    ``ray://`` client address fails quickly by itself, and ``auto`` names no host."""
    import socket

    match = _ADDRESS.match(address)
    if match is None or match[2] or match[3] is None:  # auto, local, ray://
        return
    host = match[3].strip("[]")
    try:
        with socket.create_connection((host, int(match[4])), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as error:
        raise PhysidError(
            f"cannot reach the Ray cluster at {address}: {one_line(error) or 'no answer'} "
            f"(no connection within {CONNECT_TIMEOUT_S:g} s; is the head node's GCS port right?)"
        ) from None


@contextlib.contextmanager
def _ray_session(ray: Any, address: str | None, workers: int | None):  # noqa: ANN202
    """Connect to ``address`` or start a local instance; shut down only what was started here."""
    if ray.is_initialized():
        yield
        return
    options: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False}
    if address:
        options["address"] = address
    else:  # 'local': never attach to a cluster named by RAY_ADDRESS by accident
        options |= {
            "address": "local",
            "num_cpus": workers or os.cpu_count() or 1,
            "include_dashboard": False,
        }
    if address:
        check_reachable(address)
    # A local instance dies with this process, even a SIGKILLed one (sweep.reaper)
    reaper = None if address else start_reaper()
    try:
        ray.init(**options)
    except BaseException as error:
        stop_reaper(reaper)
        if not isinstance(error, ConnectionError | RuntimeError | ValueError | TimeoutError):
            raise
        where = f"the Ray cluster at {address}" if address else "a local Ray instance"
        raise PhysidError(f"cannot start or reach {where}: {one_line(error)}") from None
    try:
        yield
    finally:
        ray.shutdown()
        stop_reaper(reaper)


def _finished_rows(jobs_dir: Path, jobs: tuple[Job, ...]) -> dict[int, dict[str, Any]]:
    """Rows of the jobs an earlier run finished ``ok`` with the arguments they have now."""
    import json

    from physid.files.io import to_json_text

    rows = {}
    for index, job in enumerate(jobs):
        try:
            record = json.loads((jobs_dir / job.job_id / "job.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        same = record.get("arguments") == json.loads(to_json_text(job.args))
        if record.get("status") == "ok" and same and record.get("seed") == job.seed:
            outcome = {key: record.get(key) for key in ("status", "error", "wall_time_s", "host")}
            rows[index] = job_row(job, outcome | {"metrics": record.get("results")})
    return rows


def _run_jobs(
    ray: Any,
    jobs: tuple[Job, ...],
    target: Path,
    workers: int | None,
    retries: int,
    progress: bool,
    done: dict[int, dict[str, Any]],
) -> list[dict[str, Any]]:
    from physid.progress import progress as progress_display

    task = ray.remote(execute_job).options(num_cpus=1, max_retries=retries, retry_exceptions=True)
    cap = workers or len(jobs)
    queue = [(index, job) for index, job in enumerate(jobs) if index not in done][::-1]
    in_flight: dict[Any, tuple[int, Job]] = {}
    rows: dict[int, dict[str, Any]] = dict(done)
    failed, names = 0, parameter_names(jobs)
    with progress_display(
        total=len(jobs), initial=len(done), unit="job", desc="sweep", enabled=progress
    ) as bar:
        try:
            while queue or in_flight:
                while queue and len(in_flight) < cap:
                    index, job = queue.pop()
                    in_flight[task.remote(job)] = (index, job)
                ready, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in ready:
                    index, job = in_flight.pop(ref)
                    try:
                        outcome = ray.get(ref)
                    except Exception as error:  # retries spent: the task's error or a crash
                        cause = getattr(error, "cause", None)
                        outcome = {"status": "failed", "error": one_line(cause or error)}
                    _write_job_folder(target / "jobs", job, outcome)
                    rows[index] = job_row(job, outcome)
                    failed += outcome["status"] != "ok"
                    bar.set_postfix_str(f"failed={failed}")
                    bar.update(1)
                done = [rows[i] for i in sorted(rows)]
                write_table(done, target, parameters=names, parquet=False)
        except KeyboardInterrupt:
            for ref, (index, job) in in_flight.items():
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
                rows[index] = job_row(job, {"status": "cancelled", "error": "interrupted"})
            for index, job in queue:
                rows[index] = job_row(job, {"status": "cancelled", "error": "not started"})
            write_table([rows[i] for i in sorted(rows)], target, parameters=names)
            raise
    return [rows[i] for i in sorted(rows)]


def parameter_names(jobs: tuple[Job, ...]) -> list[str]:
    """Every parameter key of the jobs, in the order of first appearance."""
    return list(dict.fromkeys(key for job in jobs for key in job.parameters))


def _write_job_folder(jobs_dir: Path, job: Job, outcome: dict[str, Any]) -> Path:
    """``jobs_dir/<job_id>/``: the job's files and ``job.json``, staged and renamed in place."""
    jobs_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{job.job_id}.", suffix=".staging", dir=jobs_dir))
    staging.chmod(folder_mode())  # it is renamed into place: not mkdtemp's 0700
    try:
        for name, payload in (outcome.get("files") or {}).items():
            path = (staging / name).resolve()
            if staging.resolve() not in path.parents:
                continue  # never outside the job's folder
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(payload)
        write_json_atomic(
            staging / "job.json",
            {
                "format": "physid.sweep-job/1",
                "job_id": job.job_id,
                "kind": job.kind,
                "status": outcome["status"],
                "error": outcome.get("error", ""),
                "wall_time_s": outcome.get("wall_time_s"),
                "host": outcome.get("host"),
                "seed": job.seed,
                "parameters": job.parameters,
                "arguments": job.args,
                "results": outcome.get("metrics") or {},
            },
        )
        final = jobs_dir / job.job_id
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return jobs_dir / job.job_id
