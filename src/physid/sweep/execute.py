"""One job on a worker: run its kind in a private temporary folder and hand back the outcome.

The outcome carries the job's files as bytes, so the driver writes every job folder itself: the
workers need no access to the sweep's output folder (a Ray cluster without a shared disk works;
the inputs named in the SPEC must still be readable on every node).

A :class:`~physid.errors.PhysidError` (bad input, an estimator that refused) is the job's
result: it is recorded, not retried. Any other exception propagates, so Ray retries the task
(``retry_exceptions``) before the driver records it.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from physid.errors import PhysidError
from physid.sweep.kinds import KINDS
from physid.sweep.spec import Job

MAX_FILE_BYTES = 200 * 2**20  # a job's files travel through the object store


def one_line(error: BaseException) -> str:
    """``Type: first line of the message`` (a PhysidError's message alone: it is one line)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = " ".join(lines[0].split()) if lines else ""
    if isinstance(error, PhysidError):
        return text or type(error).__name__
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def execute_job(job: Job) -> dict[str, Any]:
    """Run ``job``; returns ``{job_id, status, error, wall_time_s, host, metrics, files}``."""
    start = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="physid-sweep-"))
    status, error, metrics = "ok", "", {}
    try:
        metrics = KINDS[job.kind].run(job.args, work, job.seed)
    except PhysidError as failure:
        status, error = "failed", one_line(failure)
    try:
        files = _collect(work)
    except PhysidError as failure:
        files, status, error = {}, "failed", one_line(failure)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {
        "job_id": job.job_id,
        "status": status,
        "error": error,
        "wall_time_s": time.perf_counter() - start,
        "host": f"{socket.gethostname()}:{os.getpid()}",
        "metrics": metrics,
        "files": files,
    }


def _collect(folder: Path) -> dict[str, bytes]:
    files, total = {}, 0
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.name.startswith(".physid"):  # locks, output lists
            continue
        total += path.stat().st_size
        if total > MAX_FILE_BYTES:
            raise PhysidError(f"job outputs exceed {MAX_FILE_BYTES // 2**20} MB")
        files[str(path.relative_to(folder))] = path.read_bytes()
    return files
