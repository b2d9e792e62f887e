"""Recording manifests: adapt files that do not follow the trajectory contract, without copying.

A manifest is a small YAML file::

    format: physid.recording/1
    sample_time: 0.0002          # only if no source maps a 't' column: t = k * sample_time
    time_unit: ns                # of a mapped 't' column: s (default), ms, us or ns
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

``time_unit`` reads a mapped ``t`` column logged in other units than seconds, as ROS tools
write it (``rostopic echo -p``'s ``%time`` in nanoseconds since 1970, 256 ns apart at double
precision) or a controller counting milliseconds, without rewriting the file.

``bad_rows: drop`` (top level) reads a raw log whose logger also wrote lines that are not samples
(other packets with another number of fields, 1e+259 values, a truncated last line, rows whose stamp
runs back to 0): a line with another number of fields than most lines, a cell that is not a finite
number of at most 1e8 in size, and (once ``t`` is mapped) a row out of time order (outside the
longest run of rows whose stamps increase, or in a piece of it too short to identify) is dropped,
and the lines dropped are named in the recording's notes. More than :data:`MAX_BAD_ROWS_SHARE` of a
source's lines (and more than :data:`MAX_BAD_ROWS_ANYWAY`) is an error: that is not a log with a few
bad lines but another format.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.files.io import read_text_file, read_yaml
from physid.recordings.tables import (
    MAX_MAGNITUDE,
    Table,
    csv_header_names,
    gap_pieces,
    is_csv,
    is_number,
    long_enough,
    npz_arrays,
    parse_csv_numbers,
    read_file_table,
)

FORMAT = "physid.recording/1"
BAD_ROWS_CHOICES = ("error", "drop")
TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}  # seconds per unit of a 't' column
MAX_BAD_ROWS_SHARE = 0.01  # of a source's lines, or MAX_BAD_ROWS_ANYWAY in a short file
MAX_BAD_ROWS_ANYWAY = 5
_INDEXED = re.compile(r"^(?P<name>[^\[\]]+)\[(?P<index>-?\d+)\]$")


def _raw_columns(
    path: Path, header: bool = True, drop_bad: bool = False
) -> tuple[dict[str, np.ndarray], list[int]]:
    """All arrays of a file, 2-D ones kept as they are, and the 1-based lines dropped
    (``drop_bad``, CSV only: :func:`_sound_rows`); a headerless CSV's columns are named by
    their 0-based position ("0", "1", ...)."""
    if path.suffix.lower() == ".npz":
        if not path.is_file():
            raise InputError(f"data file not found: {path}")
        return npz_arrays(path), []
    if header and drop_bad and is_csv(path):
        # bad_rows: drop holds under a header line too: a half-written last line or a few empty
        # cells must not stop the run
        text = read_text_file(path, "data file")
        first, _, body = text.partition("\n")
        names = csv_header_names(first, str(path))
        values, dropped = _sound_rows(body, str(path), width=len(names))
        return (
            {name: values[:, k] for k, name in enumerate(names)},
            [line + 1 for line in dropped],
        )
    if header:
        return dict(read_file_table(path).columns), []
    if not is_csv(path):
        raise InputError("header: false is for CSV files", source=str(path))
    text = read_text_file(path, "data file")
    # a logger's trailing comma ends every line with an empty field: not a column
    text = "\n".join(line.rstrip().removesuffix(",") for line in text.splitlines())
    if drop_bad:
        values, dropped = _sound_rows(text, str(path))
    else:
        width = len(text.partition("\n")[0].split(","))
        # an empty header line in front: the file's first line is then line 1, data row 1
        values = parse_csv_numbers(
            "\n" + text, [str(k) for k in range(width)], str(path), first_line=1, header=False
        )
        dropped = []
    return {str(k): values[:, k] for k in range(values.shape[1])}, dropped


def _sound_rows(text: str, source: str, width: int | None = None) -> tuple[np.ndarray, list[int]]:
    """The numbers of the lines of a CSV's body that can be samples (module docstring), and the
    1-based numbers of those that cannot (blank lines are neither). ``width``: the number of
    fields a sample has (a header's names); None: the most common. A column that holds text in
    most lines (a ROS frame id, a logger's mode) is no sample's number: read as NaN."""
    numbered = [(k, line) for k, line in enumerate(text.splitlines(), start=1) if line.strip()]
    split = [(k, line.split(",")) for k, line in numbered]
    if width is None:
        widths = [len(cells) for _, cells in split]
        width = max(set(widths), key=widths.count) if widths else 0
    complete = [cells for _, cells in split if len(cells) == width]
    textual = {
        k
        for k in range(width)
        if 2 * sum(not is_number(cells[k]) for cells in complete) > len(complete)
    }
    kept, dropped = [], []
    for number, cells in split:
        try:
            values = [np.nan if k in textual else float(cell) for k, cell in enumerate(cells)]
        except ValueError:
            values = []
        if len(values) == width and all(
            k in textual or (np.isfinite(v) and abs(v) <= MAX_MAGNITUDE)
            for k, v in enumerate(values)
        ):
            kept.append(values)
        else:
            dropped.append(number)
    _check_bad_share(len(dropped), len(numbered), source)
    if not kept:
        raise InputError("no data rows", source=source)
    return np.array(kept, dtype=float), dropped


def _check_bad_share(bad: int, total: int, source: str) -> None:
    if bad > max(MAX_BAD_ROWS_SHARE * total, MAX_BAD_ROWS_ANYWAY):
        raise InputError(
            f"bad_rows: drop would drop {bad} of {total} lines, more than "
            f"{100 * MAX_BAD_ROWS_SHARE:g} % (or {MAX_BAD_ROWS_ANYWAY}): this is another format, "
            "not a log with a few bad lines",
            source=source,
        )


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
    bad_rows = spec.get("bad_rows", "error")
    if bad_rows not in BAD_ROWS_CHOICES:
        raise InputError(
            f"bad_rows: {bad_rows!r} is not one of {list(BAD_ROWS_CHOICES)}", source=str(path)
        )
    time_unit = spec.get("time_unit", "s")
    if not isinstance(time_unit, str) or time_unit not in TIME_UNITS:
        raise InputError(
            f"time_unit: {time_unit!r} is not one of {list(TIME_UNITS)}", source=str(path)
        )
    columns: dict[str, np.ndarray] = {}
    origin: dict[str, str] = {}
    notes: list[str] = []
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
            raise InputError(
                f"sources[{number}].header must be true or false, got {header!r}", source=str(path)
            )
        raw, dropped = _raw_columns(file, header, bad_rows == "drop")
        if dropped:
            notes.append(
                f"{file.name}: {len(dropped)} lines that are not samples dropped "
                f"(lines {_listed(dropped)})"
            )
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
    if "t" in columns:
        columns["t"] = columns["t"] * TIME_UNITS[time_unit]
    elif "time_unit" in spec:
        raise InputError(
            "time_unit is the unit of a mapped 't' column, and none is mapped "
            "('sample_time' is in s)",
            source=str(path),
        )
    if bad_rows == "drop" and "t" in columns:
        columns, late = _in_time_order(columns)
        _check_bad_share(len(late), lengths[first], str(path))
        if late:
            notes.append(
                f"{len(late)} rows out of time order or stranded by a gap dropped "
                f"(rows {_listed(late)} of the lines kept)"
            )
    if "t" not in columns:
        sample_time = spec.get("sample_time")
        if not isinstance(sample_time, int | float) or sample_time <= 0:
            raise InputError(
                "no 't' column is mapped, so 'sample_time' (s, > 0) is required", source=str(path)
            )
        columns = {"t": np.arange(lengths[first]) * float(sample_time), **columns}
    return Table(columns, str(path), notes=tuple(notes))


def _in_time_order(columns: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], list[int]]:
    """The most rows that are in time order (the longest strictly increasing subsequence of
    ``t``: a stray packet stamped 0, or far in the future, costs itself only), and the 1-based
    rows left out."""
    import bisect

    t = columns["t"]
    tails: list[float] = []  # smallest last stamp of an increasing run of each length
    ends: list[int] = []  # the row ending that run
    previous = np.full(len(t), -1)
    for k, value in enumerate(t):
        length = bisect.bisect_left(tails, value)
        if length == len(tails):
            tails.append(value)
            ends.append(k)
        else:
            tails[length], ends[length] = value, k
        previous[k] = ends[length - 1] if length else -1
    keep = np.zeros(len(t), dtype=bool)
    k = ends[-1] if ends else -1
    while k >= 0:
        keep[k] = True
        k = previous[k]
    # stray rows that happen to be in order (two packets stamped -0.12 and 0 before the log's
    # 3047.7 s) sit apart from the samples: pieces between gaps too short to identify go too
    rows = np.flatnonzero(keep)
    pieces = gap_pieces(t[rows])
    longest = max(pieces, key=lambda piece: piece[1] - piece[0])
    for a, b in pieces:
        if (a, b) != longest and not long_enough(t[rows], a, b):
            keep[rows[a:b]] = False
    late = (np.flatnonzero(~keep) + 1).tolist()
    return {name: values[keep] for name, values in columns.items()}, late


def _listed(rows: list[int], limit: int = 8) -> str:
    return ", ".join(str(r) for r in rows[:limit]) + (" ..." if len(rows) > limit else "")


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
