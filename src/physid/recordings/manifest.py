"""Recording manifests: adapt files that do not follow the trajectory contract, without copying.

A manifest is a small YAML file::

    format: physid.recording/1
    sample_time: 0.0002          # only if no source maps a 't' column: t = k * sample_time
    sources:
      - file: ../data/pos_read_data.csv   # relative to the manifest; $VARS are expanded
        columns: {qm_motor_1: Joint_1, qm_motor_2: Joint_2}
      - file: measurements.npz
        columns: {t: times, q_lwr_0_joint: "positions[0]"}   # column 0 of a 2-D array

Keys are contract names (see :mod:`physid.recordings.trajectory`), values are a CSV/Parquet column,
an ``.npz``
array, or ``array[k]`` for column ``k`` of a 2-D array. All sources must have the same length.

A CSV without a header line (a controller's dump, MATLAB's ``writematrix``) says so with
``header: false`` and names its columns by their 0-based position::

      - file: xMate7p_traj1_results.csv
        header: false
        columns: {q_joint1: 0, q_joint2: 1, tau_joint1: 21, tau_joint2: 22}
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.files.io import read_text_file, read_yaml
from physid.recordings.tables import Table, npz_arrays, parse_csv_numbers, read_file_table

FORMAT = "physid.recording/1"
_INDEXED = re.compile(r"^(?P<name>[^\[\]]+)\[(?P<index>-?\d+)\]$")


def _raw_columns(path: Path, header: bool = True) -> dict[str, np.ndarray]:
    """All arrays of a file, 2-D ones kept as they are; a headerless CSV's columns are named
    by their 0-based position ("0", "1", ...)."""
    if path.suffix.lower() == ".npz":
        if not path.is_file():
            raise InputError(f"data file not found: {path}")
        return npz_arrays(path)
    if header:
        return dict(read_file_table(path).columns)
    if path.suffix.lower() != ".csv":
        raise InputError("header: false is for CSV files", source=str(path))
    text = read_text_file(path, "data file")
    width = len(text.partition("\n")[0].split(","))
    names = [str(k) for k in range(width)]
    # an empty header line in front: the file's first line is then line 1, data row 1
    values = parse_csv_numbers("\n" + text, names, str(path), first_line=1, header=False)
    return {name: values[:, k] for k, name in enumerate(names)}


def _select(raw: dict[str, np.ndarray], spec: str, source: str) -> np.ndarray:
    match = _INDEXED.match(spec.strip())
    name, index = (match["name"], int(match["index"])) if match else (spec.strip(), None)
    if name not in raw:
        raise InputError(
            f"no column or array '{name}'; present: {', '.join(sorted(raw))}", source=source
        )
    array = raw[name]
    if index is None:
        if array.ndim != 1:
            raise InputError(
                f"array '{name}' has shape {array.shape}; write '{name}[k]'", source=source
            )
        return array
    if array.ndim != 2 or not -array.shape[1] <= index < array.shape[1]:
        raise InputError(f"'{spec}' is out of range for shape {array.shape}", source=source)
    return array[:, index]


def read_recording(path: str | Path):
    """Assemble the contract :class:`~physid.recordings.tables.Table` that a manifest describes."""
    path = Path(path)
    spec = read_yaml(path, "recording manifest")
    if not isinstance(spec, dict) or spec.get("format") != FORMAT:
        raise InputError(f"a recording manifest needs 'format: {FORMAT}'", source=str(path))
    sources = spec.get("sources")
    if not isinstance(sources, list) or not sources:
        raise InputError("manifest has no 'sources' list", source=str(path))
    columns: dict[str, np.ndarray] = {}
    origin: dict[str, str] = {}
    for number, entry in enumerate(sources, start=1):
        if not isinstance(entry, dict) or "file" not in entry or "columns" not in entry:
            raise InputError(f"sources[{number}] needs 'file' and 'columns'", source=str(path))
        file = (path.parent / _expand(str(entry["file"]), number, path)).resolve()
        if not isinstance(entry["columns"], dict):
            raise InputError(
                f"sources[{number}].columns must be a mapping of contract name: source column, "
                f"got a {type(entry['columns']).__name__}",
                source=str(path),
            )
        if file.suffix.lower() in (".yaml", ".yml"):
            raise InputError(
                f"sources[{number}].file is a YAML file; manifests cannot be nested",
                source=str(path),
            )
        header = entry.get("header", True)
        if not isinstance(header, bool):
            raise InputError(f"sources[{number}].header must be true or false, got {header!r}",
                             source=str(path))  # fmt: skip
        raw = _raw_columns(file, header)
        for contract_name, selector in entry["columns"].items():
            if contract_name in columns:
                raise InputError(f"column '{contract_name}' is mapped twice", source=str(path))
            columns[contract_name] = _select(raw, str(selector), str(file))
            origin[contract_name] = f"{file.name}:{selector}"
    if not columns:
        raise InputError("the manifest maps no columns", source=str(path))
    lengths = {name: len(values) for name, values in columns.items()}
    first = next(iter(lengths))
    for name, length in lengths.items():
        if length != lengths[first]:
            raise InputError(
                f"'{name}' ({origin[name]}) has {length} rows but '{first}' ({origin[first]}) "
                f"has {lengths[first]}",
                source=str(path),
            )
    if "t" not in columns:
        sample_time = spec.get("sample_time")
        if not isinstance(sample_time, int | float) or sample_time <= 0:
            raise InputError(
                "no 't' column is mapped, so 'sample_time' (s, > 0) is required", source=str(path)
            )
        columns = {"t": np.arange(lengths[first]) * float(sample_time), **columns}
    return Table(columns, str(path))


def _expand(file: str, number: int, manifest: Path) -> str:
    """Environment variables in a source path (``${PHYSID_DATASETS}/staubli_tx40/x.csv``), so a
    manifest can point at data kept outside the repository; an unset one is named."""
    expanded = os.path.expandvars(file)
    if "$" in expanded:
        raise InputError(
            f"sources[{number}].file {file!r}: environment variable not set "
            f"(e.g. export PHYSID_DATASETS=/path/to/datasets)",
            source=str(manifest),
        )
    return expanded
