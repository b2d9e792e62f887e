"""One data file as named columns: CSV (header row), ``.npz`` and ``.parquet`` readers.

The lowest layer of reading recordings: a :class:`Table` of equal-length columns with its
source, and the parsers the whole-file (:func:`read_file_table`) and block-by-block
(:mod:`physid.recordings.streamed`) readers share. A YAML recording manifest
(:mod:`physid.recordings.manifest`) assembles a Table from these; the trajectory contract is
checked in :mod:`physid.recordings.trajectory`. Every failure is a one-line
:class:`~physid.errors.InputError` naming the file and row.
"""

from __future__ import annotations

import csv
import datetime
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from physid.errors import InputError, install_hint
from physid.files.io import first_text_line, is_gzipped_csv, read_text_file

# a six-axis force/torque sensor's wrench in its own frame's axes: ft_<frame>_<axis> columns
FORCE_TORQUE_AXES = ("fx", "fy", "fz", "tx", "ty", "tz")


def force_torque_columns(frame: str) -> tuple[str, ...]:
    """``ft_<frame>_fx, _fy, _fz, _tx, _ty, _tz``: the columns of a force/torque sensor at
    ``frame`` (force [N], torque [N m], in the frame's axes; docs/oe.md)."""
    return tuple(f"ft_{frame}_{axis}" for axis in FORCE_TORQUE_AXES)


@dataclass(frozen=True)
class Table:
    """Named 1-D columns of equal length, as read from one file."""

    columns: dict[str, np.ndarray]
    source: str
    first_row: int = 1  # 1-based data row of the first entry (a block of a longer file: more)
    notes: tuple[str, ...] = ()  # what reading did to the rows (e.g. a log's dropped rows)

    @property
    def n_rows(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else 0


def is_csv(path: str | Path) -> bool:
    """Whether ``path`` names a CSV file, plain or gzip-compressed (``.csv.gz``)."""
    return Path(path).suffix.lower() == ".csv" or is_gzipped_csv(path)


def read_file_table(path: str | Path) -> Table:
    """Read a CSV (header row; ``.csv`` or ``.csv.gz``), ``.npz`` or ``.parquet`` file into a
    :class:`Table` (a CSV's
    columns outside the contract that hold text are read as NaN, named in its notes)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file not found: {path}")
    suffix = path.suffix.lower()
    readers = {".npz": _read_npz, ".parquet": _read_parquet}
    if not is_csv(path) and suffix not in readers:
        raise InputError(
            f"unsupported data format '{suffix}' (use .csv, .csv.gz, .npz, .parquet or a .yaml "
            "manifest)",
            source=str(path),
        )
    notes: list[str] = []
    columns = _read_csv(path, notes) if is_csv(path) else readers[suffix](path)
    check_equal_lengths(columns, str(path))
    return Table(columns, str(path), notes=tuple(notes))


# The columns physid reads: the trajectory contract (t, q_, dq_, ddq_, tau_, i_, qm_, taum_,
# ctrl_) and the sensor columns of oe and online (ft_, base_, acc_, gyro_, contact_, f_). A cell
# that is not a number there is an error naming it; in any other column (a logger's mode, a ROS
# frame id, an empty spare column) it is read as missing (NaN), and the column is named in a
# note: physid does not read it (the README's "other columns are ignored").
CONTRACT_PREFIXES = (
    "q_",
    "dq_",
    "ddq_",
    "tau_",
    "i_",
    "qm_",
    "taum_",
    "ctrl_",
    "ft_",
    "base_",
    "acc_",
    "gyro_",
    "contact_",
    "f_",
)


def is_contract_column(name: str) -> bool:
    """Whether physid reads a column of this name (:data:`CONTRACT_PREFIXES`, or ``t``)."""
    return name == "t" or name.startswith(CONTRACT_PREFIXES)


MAX_MAGNITUDE = 1e8  # no position, rate, torque or current of a robot is this large
MAX_GAP_PERIODS = 10.0  # a longer step between samples is a gap (or a mistyped time stamp)
MIN_SEGMENT_S = 1.0  # a piece between gaps shorter than this is dropped (with a note)
MIN_SEGMENT_ROWS = 50


def gap_pieces(t: np.ndarray, duplicates: np.ndarray | None = None) -> list[tuple[int, int]]:
    """Row ranges ``[a, b)`` between gaps of the stamps ``t`` (steps of more than
    :data:`MAX_GAP_PERIODS` median steps; ``duplicates``: rows that are no step)."""
    steps = np.diff(t)
    moving = steps if duplicates is None else steps[~duplicates[1:]]
    if moving.size == 0:
        return [(0, len(t))]
    cuts = np.flatnonzero(steps > MAX_GAP_PERIODS * float(np.median(moving))) + 1
    bounds = np.r_[0, cuts, len(t)]
    return [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def long_enough(t: np.ndarray, a: int, b: int) -> bool:
    """Whether rows ``[a, b)`` are a piece worth identifying on its own."""
    return b - a >= MIN_SEGMENT_ROWS and t[b - 1] - t[a] >= MIN_SEGMENT_S


def csv_header_names(line: str, source: str) -> list[str]:
    """The column names of a CSV header line, checked: present, comma-separated, none empty,
    not numbers (a file without a header), none twice."""
    header = line.strip().removeprefix("\ufeff")
    if not header:
        raise InputError("CSV header is missing", source=source)
    # quoted names ("t","q_joint1": pandas' QUOTE_NONNUMERIC, R's write.csv) are unquoted
    names = [name.strip() for name in next(csv.reader([header]))]
    for separator, label in ((";", "semicolon"), ("\t", "tab")):
        if len(names) == 1 and separator in header:
            decimal = ", decimal=','" if separator == ";" else ""  # a spreadsheet's export
            raise InputError(
                f"the header has no comma but {header.count(separator)} {label}s: physid reads "
                "comma-separated files with a decimal point (e.g. pandas: read_csv(path, "
                f"sep={separator!r}{decimal}).to_csv(new_path, index=False)"
                + (", decimal=',' where its numbers have decimal commas)" if decimal else ")"),
                source=source,
            )
    empty = [k + 1 for k, name in enumerate(names) if not name]
    if empty == [1] and len(names) > 1:  # pandas' to_csv with its index: an unnamed first column
        names[0], empty = "Unnamed: 0", []
    if empty:
        trailing = " (a comma at the end of the line?)" if empty == [len(names)] else ""
        raise InputError(
            f"CSV header: column {empty[0]} of {len(names)} has no name{trailing}", source=source
        )
    if any(is_number(name) for name in names):
        raise InputError("first CSV line must be a header of column names", source=source)
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise InputError(f"duplicate column(s) {duplicates}", source=source)
    return names


def _read_csv(path: Path, notes: list[str] | None = None) -> dict[str, np.ndarray]:
    # the fast parser reads the file itself: the whole text (and its bytes, twice the file) is
    # read only when it cannot, so a large file's text is not held for nothing
    header = first_text_line(path)
    values = None
    if header is not None:
        names = csv_header_names(header, str(path))
        values = parse_csv_numbers_fast(path, names)
    if values is None:
        text = read_text_file(path, "data file")
        names = csv_header_names(text.partition("\n")[0], str(path))
        values = parse_csv_numbers(text, names, str(path), notes=notes)
    return {name: values[:, k] for k, name in enumerate(names)}


def parse_csv_numbers(
    text: str,
    names: list[str],
    source: str,
    first_line: int = 2,
    *,
    header: bool = True,
    notes: list[str] | None = None,
) -> np.ndarray:
    """The numbers under the header; an unreadable cell is named by its column, its 1-based data
    row (as everywhere in physid) and its line in an editor (the header is line 1); quoted cells
    are unquoted. ``first_line``: the line number of the first line after the header line of
    ``text``. ``header=False``: the file has no header line (``text``'s first line is then
    skipped all the same: the caller puts an empty one there), and data row k is line k.
    ``notes`` (a list to append to): a column physid does not read (not
    :func:`is_contract_column`) whose cells are not all numbers is read as NaN there and named
    in a note, instead of failing."""
    header_lines = 1 if header else 0
    rows, numbers = [], []
    for number, line in enumerate(text.splitlines()[1:], start=first_line):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = next(csv.reader([line])) if '"' in line else line.split(",")
        if len(cells) != len(names):
            expected = (
                f"the header names {len(names)} columns"
                if header
                else (
                    f"line 1 has {len(names)} (a raw log with a few such lines: bad_rows: drop in "
                    "the manifest)"
                )
            )
            raise InputError(f"line {number} has {len(cells)} values but {expected}", source=source)
        rows.append(cells)
        numbers.append(number)
    if not rows:
        raise InputError("no data rows", source=source)
    values = np.empty((len(rows), len(names)))
    failed = {}  # column -> its first row (index into rows) that is not a number
    for k, column in enumerate(zip(*rows, strict=True)):
        try:
            values[:, k] = np.array(column, dtype=float)
        except ValueError:  # Python's float() reads what NumPy's parser may not
            bad = next((i for i, cell in enumerate(column) if not is_number(cell)), None)
            if bad is None:
                values[:, k] = [float(cell) for cell in column]
            elif _may_be_time(names[k]) and iso_seconds(column[bad]) is not None:
                values[:, k], bad = _iso_column(column)
                if bad is None:
                    if notes is not None:
                        notes.append(iso_time_note(names[k]))
                else:
                    failed[k] = bad
            else:
                failed[k] = bad
    strict = {k: i for k, i in failed.items() if notes is None or is_contract_column(names[k])}
    if strict:
        k, i = min(strict.items(), key=lambda item: (item[1], item[0]))  # the first in the file
        # an empty cell is how pandas' to_csv writes NaN: said, with the spelling the commands that
        # skip NaN rows read
        empty = (
            "; an empty cell is how pandas writes a missing value: drop or repair the "
            "row (physid online skips rows written as nan: to_csv(..., na_rep='nan'))"
            if not rows[i][k].strip()
            else ""
        )
        iso = (
            " or an ISO 8601 date-time"
            if _may_be_time(names[k]) and iso_seconds(rows[0][k]) is not None
            else ""
        )
        raise InputError(
            f"column '{names[k]}' row {numbers[i] - header_lines} (line {numbers[i]}): "
            f"{rows[i][k].strip()[:40]!r} is not a number{iso}{empty}",
            source=source,
        )
    for k, i in failed.items():
        column = [row[k] for row in rows]
        values[:, k] = [float(cell) if is_number(cell) else np.nan for cell in column]
        what = (
            "is empty"
            if all(not cell.strip() for cell in column)
            else f"holds text (row {numbers[i] - header_lines}, line {numbers[i]}: "
            f"{rows[i][k].strip()[:40]!r})"
        )
        notes.append(f"column '{names[k]}' {what}: physid does not read it (read as missing)")
    return values


def iso_time_note(column: str) -> str:
    """The note of a column read from ISO 8601 date-times (:func:`iso_seconds`)."""
    return (
        f"column '{column}' holds ISO 8601 date-times: read as seconds since 1970-01-01 UTC "
        "(a stamp without a time zone taken as UTC)"
    )


def _may_be_time(column: str) -> bool:
    """``t``, or a column physid does not read by its name (a logger's ``stamp``, which a
    recording manifest may map to ``t``): the columns whose date-times are read as seconds."""
    return column == "t" or not is_contract_column(column)


def iso_seconds(text: str) -> float | None:
    """Seconds since 1970-01-01 UTC of an ISO 8601 date-time (``1999-12-31T23:59:59.125``,
    a space for the ``T``, ``Z`` or ``+01:00``; without a zone: UTC), None for anything else.
    A logger's stamp (ROS 2 bag exports, pandas' ``to_csv`` of a datetime index): seconds since
    the epoch are what physid already reads from a numeric ``t`` (float64 keeps 0.4 us there)."""
    text = text.strip().strip('"')
    if len(text) < 10 or not text[:4].isdigit() or text[4] != "-":
        return None  # fromisoformat reads '20261128' too: a number, not a date
    try:
        moment = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()


def _iso_column(cells: tuple[str, ...]) -> tuple[np.ndarray, int | None]:
    """The seconds of every ISO 8601 cell, and the index of the first cell that is none."""
    seconds = np.empty(len(cells))
    for i, cell in enumerate(cells):
        value = iso_seconds(cell)
        if value is None:
            return seconds, i
        seconds[i] = value
    return seconds, None


def parse_csv_numbers_fast(path: Path, names: list[str]) -> np.ndarray | None:
    """The numbers under the header with pyarrow's multi-threaded CSV parser (about 6x faster
    than ``np.loadtxt``), when pyarrow is installed (``physid[parquet]``).

    None when it is not, or when the file is anything but a plain, complete table of numbers
    (empty cells, comments, text, ragged rows): :func:`parse_csv_numbers` then reads it, or
    words the error.
    """
    try:
        import pyarrow as pa
        import pyarrow.csv as pa_csv
    except ImportError:
        return None
    read = pa_csv.ReadOptions(skip_rows=1, column_names=names)
    convert = pa_csv.ConvertOptions(
        column_types={name: pa.float64() for name in names},
        null_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    try:
        table = pa_csv.read_csv(path, read_options=read, convert_options=convert)
    except (pa.ArrowException, OSError):  # a .csv.gz cut short raises an OSError
        return None
    if table.num_rows == 0:
        return None
    values = np.column_stack([_float64_values(table.column(name)) for name in names])
    del table
    # Arrow's allocator keeps what the parse used (the text buffers, nearly the file's size),
    # held for the rest of the run unless handed back
    pa.default_memory_pool().release_unused()
    return values


def _float64_values(column) -> np.ndarray:  # noqa: ANN001 - a pyarrow ChunkedArray of float64
    """The values of a null-free float64 column, read from its data buffers.

    ``to_numpy`` would do the same, but pyarrow imports pandas for it (0.3 s of every run's
    start-up); the parser above allows no nulls, so each chunk's second
    buffer holds exactly its values."""
    parts = [
        np.frombuffer(chunk.buffers()[1], np.float64, count=len(chunk), offset=8 * chunk.offset)
        for chunk in column.chunks
    ]
    return np.concatenate(parts) if parts else np.empty(0)


def npz_arrays(path: Path) -> dict[str, np.ndarray]:
    """Every array of an ``.npz`` file as floats (any shape); anything else is an InputError
    naming the file and the array (pickled objects, strings, a damaged or empty archive)."""
    try:
        with path.open("rb") as handle:  # closed even when numpy gives up half-way
            archive = np.load(handle, allow_pickle=False)
            if not hasattr(archive, "files"):
                raise ValueError("a single .npy array, not an .npz archive")
            with archive:
                raw = {key: archive[key] for key in archive.files}
    except Exception as error:  # zipfile/pickle/format errors: numpy raises many kinds
        detail = (str(error).strip().splitlines() or [type(error).__name__])[0][:120]
        raise InputError(f"not a readable .npz archive ({detail})", source=str(path)) from None
    if not isinstance(raw, dict) or not raw:
        raise InputError("the .npz archive holds no arrays", source=str(path))
    arrays = {}
    for key, array in raw.items():
        if array.dtype.kind not in "biuf":
            raise InputError(
                f"array '{key}' holds {array.dtype} values, not numbers", source=str(path)
            )
        arrays[key] = np.asarray(array, dtype=float)
    return arrays


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    columns = npz_arrays(path)
    for key, array in columns.items():
        if array.ndim != 1:
            raise InputError(
                f"array '{key}' has shape {array.shape}; the contract wants one 1-D array per "
                "column (use a recording manifest to map 2-D arrays)",
                source=str(path),
            )
    return columns


def _read_parquet(path: Path) -> dict[str, np.ndarray]:
    pq = _pyarrow_parquet(path)
    try:
        table = pq.read_table(path)
    except Exception as error:  # noqa: BLE001 - Arrow raises many kinds on a damaged file
        raise _unreadable_parquet(path, error) from None
    columns = parquet_columns(table, str(path))
    del table
    import pyarrow as pa

    pa.default_memory_pool().release_unused()  # as parse_csv_numbers_fast: the allocator's cache
    return columns


def _pyarrow_parquet(path: Path):  # noqa: ANN202
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"reading Parquet needs pyarrow: {install_hint('pyarrow', 'parquet')}", source=str(path)
        ) from None
    return pq


def _unreadable_parquet(path: Path, error: Exception) -> InputError:
    detail = (str(error).strip().splitlines() or [type(error).__name__])[0][:120]
    return InputError(f"not a readable Parquet file ({detail})", source=str(path))


def parquet_columns(table, source: str) -> dict[str, np.ndarray]:  # noqa: ANN001
    """The numeric columns of a pyarrow table (a whole file or one batch of it)."""
    try:
        names = list(table.column_names)
    except Exception as error:  # noqa: BLE001 - e.g. column names that are not UTF-8
        raise _unreadable_parquet(Path(source), error) from None
    columns = {}
    for k, name in enumerate(names):
        try:
            column = table.column(k).to_numpy(zero_copy_only=False)
            columns[name] = np.asarray(column, dtype=float).reshape(-1)
        except Exception:  # noqa: BLE001 - strings, structs, dictionaries, ...
            kind = table.schema.field(k).type
            raise InputError(
                f"column '{name}' holds {kind} values, not numbers", source=source
            ) from None
    if not columns:
        raise InputError("the Parquet file has no columns", source=source)
    return columns


def parquet_batches(path: Path, rows: int):  # noqa: ANN201
    """``(number of rows, batches of at most ``rows`` rows as pyarrow tables)`` of a Parquet
    file, read one batch at a time (:mod:`physid.recordings.streamed`)."""
    pq = _pyarrow_parquet(path)
    import pyarrow as pa

    try:
        handle = pq.ParquetFile(path)
        n_rows = handle.metadata.num_rows
    except Exception as error:  # noqa: BLE001
        raise _unreadable_parquet(path, error) from None

    def batches():  # noqa: ANN202
        try:
            for batch in handle.iter_batches(batch_size=rows):
                yield pa.Table.from_batches([batch])
        except Exception as error:  # noqa: BLE001
            raise _unreadable_parquet(path, error) from None

    return n_rows, batches()


def repeats_previous(columns) -> np.ndarray:  # noqa: ANN001 - 1-D arrays of equal length
    """Rows (bool, N) equal to the previous row in every one of ``columns``, NaN equal to NaN
    (a column physid does not read holds NaN for text); row 0 repeats nothing."""
    columns = list(columns)
    repeated = np.zeros(len(columns[0]) if columns else 0, dtype=bool)
    if len(repeated) > 1:
        repeated[1:] = np.all(
            [(c[1:] == c[:-1]) | (np.isnan(c[1:]) & np.isnan(c[:-1])) for c in columns], axis=0
        )
    return repeated


def is_number(text: str) -> bool:
    try:
        float(text)
    except (ValueError, TypeError):
        return False
    return True


def check_equal_lengths(columns: dict[str, np.ndarray], source: str) -> None:
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        reference = "t" if "t" in lengths else next(iter(lengths))
        odd = next(n for n, length in lengths.items() if length != lengths[reference])
        raise InputError(
            f"column '{odd}' has {lengths[odd]} rows but '{reference}' has {lengths[reference]}",
            source=source,
        )


def source_name(item: str | Path | Table) -> str:
    """How a data source is named in outputs: its path, or an in-memory table's ``source``."""
    return item.source if isinstance(item, Table) else str(item)
