"""The results table of a sweep: one row per job, written atomically as CSV (and Parquet when
pyarrow is installed).

Columns: ``job_id, kind, status, error, wall_time_s, host``, then the job's parameters (the grid
and job keys as written in the SPEC, and ``seed``), then its key result numbers (per kind, see
:mod:`physid.sweep.kinds`). A cell is empty when a job has no such value (a failed job has no
results).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from physid.files.io import write_bytes_atomic, write_text_atomic

FIXED = ("job_id", "kind", "status", "error", "wall_time_s", "host")


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if hasattr(value, "item"):  # NumPy scalars
        return value.item()
    return json.dumps(value, default=str)


def job_row(job: Any, outcome: dict[str, Any]) -> dict[str, Any]:
    """The row of one job (a :class:`~physid.sweep.spec.Job`) and its outcome."""
    row = {
        "job_id": job.job_id,
        "kind": job.kind,
        "status": outcome["status"],
        "error": outcome.get("error", ""),
        "wall_time_s": outcome.get("wall_time_s"),
        "host": outcome.get("host", ""),
    }
    row.update({key: _cell(value) for key, value in job.parameters.items()})
    for key, value in (outcome.get("metrics") or {}).items():
        row[f"result.{key}" if key in row else key] = _cell(value)
    return row


def columns(rows: list[dict[str, Any]], parameters: list[str] = ()) -> list[str]:
    """The fixed columns, the ``parameters`` (in this order), then every other key of the rows
    in the order of first appearance."""
    names = list(dict.fromkeys([*FIXED, *parameters]))
    for row in rows:
        names.extend(key for key in row if key not in names)
    return names


def write_table(
    rows: list[dict[str, Any]],
    out_dir: str | Path,
    *,
    parameters: list[str] = (),
    parquet: bool = True,
) -> list[Path]:
    """Write ``results.csv`` (and ``results.parquet`` if pyarrow is importable) into
    ``out_dir``, each atomically; returns the paths written. ``parameters``: their columns come
    right after the fixed ones."""
    out_dir = Path(out_dir)
    names = columns(rows, parameters)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if row.get(key) is None else row[key] for key in names})
    written = [write_text_atomic(out_dir / "results.csv", buffer.getvalue())]
    if parquet:
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            return written
        arrays = {}
        for name in names:
            values = [row.get(name) for row in rows]
            try:
                arrays[name] = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types: text
                arrays[name] = pa.array([None if v is None else str(v) for v in values])
        sink = io.BytesIO()
        pq.write_table(pa.table(arrays), sink)
        written.append(write_bytes_atomic(out_dir / "results.parquet", sink.getvalue()))
    return written


def read_table(path: str | Path) -> list[dict[str, str]]:
    """The rows of a ``results.csv`` (values as text)."""
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))
