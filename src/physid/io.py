"""File I/O helpers: atomic output (write to a temporary name beside the target, then rename,
so a crash never leaves a half-written result behind), YAML input with one-line errors, and
CSV text of named columns.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np


def _to_jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _to_jsonable(value.tolist())
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        value = float(value)
        # JSON has no NaN/inf; null is the honest encoding of "not available".
        return value if math.isfinite(value) else None
    if isinstance(value, Path):
        return str(value)
    return value


def to_json_text(obj: Any) -> str:
    """Serialise ``obj`` (dicts, lists, NumPy arrays and scalars) as indented JSON."""
    return json.dumps(_to_jsonable(obj), indent=2, allow_nan=False) + "\n"


def write_bytes_atomic(path: str | os.PathLike[str], payload: bytes) -> Path:
    """Write ``payload`` to ``path`` through a temporary file in the same folder and a rename."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return target


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (NaN and inf become null)."""
    return write_text_atomic(path, to_json_text(obj))


def read_yaml(path: str | os.PathLike[str], what: str) -> Any:
    """Parse a YAML file; a missing file or bad YAML is an InputError naming the file.

    ``what`` names the kind of file for the message ("config file", "recording manifest").
    """
    import yaml

    from physid.errors import InputError

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} not found: {path}")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise InputError(f"invalid YAML: {str(error).splitlines()[0]}", source=str(path)) from None


def config_section(raw: Any, allowed: set[str], where: str) -> dict[str, Any]:
    """A YAML config mapping with only ``allowed`` keys (``None`` is an empty one).

    Anything else is an InputError naming the section ``where``.
    """
    from physid.errors import InputError

    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InputError(f"config {where}: expected a mapping, got {type(raw).__name__}")
    unknown = sorted(set(map(str, raw)) - allowed)
    if unknown:
        raise InputError(f"config {where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
    return raw


def config_number(
    value: Any, where: str, *, positive: bool = True, optional: bool = False
) -> float | None:
    """A finite YAML number as float (> 0 if ``positive``; ``None`` allowed if ``optional``).

    Anything else is an InputError naming the key ``where``.
    """
    from physid.errors import InputError

    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(value):
        raise InputError(f"config {where}: expected a finite number, got {value!r}")
    if positive and value <= 0:
        raise InputError(f"config {where}: must be > 0, got {value!r}")
    return float(value)


def table_csv_text(columns: dict[str, np.ndarray], fmt: str = "%.10g") -> str:
    """CSV text with a header of the column names, one equal-length 1-D array per column."""
    buffer = StringIO()
    np.savetxt(
        buffer,
        np.column_stack(list(columns.values())),
        delimiter=",",
        header=",".join(columns),
        comments="",
        fmt=fmt,
    )
    return buffer.getvalue()


@contextmanager
def atomic_output_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a fresh staging folder whose files replace those of ``path`` only on success.

    Files are written into a hidden sibling folder; when the ``with`` block ends without an
    exception each staged file is moved into ``path`` (created if needed) with an atomic rename.
    On an exception the staging folder is removed and ``path`` is left untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(
        tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".staging", dir=target.parent)
    )
    try:
        yield staging
        target.mkdir(parents=True, exist_ok=True)
        for staged in sorted(staging.rglob("*")):
            if staged.is_dir():
                continue
            destination = target / staged.relative_to(staging)
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged, destination)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
