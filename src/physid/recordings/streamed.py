"""Recordings too long to hold in memory: validated in one pass, re-read in row ranges.

A CSV or Parquet recording larger than :data:`STREAM_BYTES` is read block by block (memory must not
grow with the recording). Every block passes the same row checks as an in-memory file
(:func:`physid.recordings.trajectory.trajectory_block`: columns, finiteness, magnitudes, units, with
the file's own 1-based row numbers), the time stamps are checked as a whole at the end (they are the
only column kept in memory: 8 bytes per sample), and the joint-side arrays are spilled to a private
temporary folder as ``.npy`` blocks. :meth:`RecordingFile.time_slice` then returns any row range as
an ordinary :class:`~physid.recordings.trajectory.Trajectory`, so the windowed pipeline
(:mod:`physid.offline.observe.windows`) treats an in-memory trajectory and a long file alike.

The temporary folder is removed when the last :class:`RecordingFile` on it is garbage-collected
or the interpreter exits; one left by a killed process (``physid-recording-<pid>-*`` in the
system's temporary directory) is removed by the next run that spills a recording.
"""

from __future__ import annotations

import gzip
import itertools
import shutil
import weakref
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.files.io import is_gzipped_csv, open_data_file, scratch_dir
from physid.findings import Finding
from physid.recordings.codes import SAMPLES_REPAIRED
from physid.recordings.tables import (
    Table,
    csv_header_names,
    is_csv,
    parquet_batches,
    parquet_columns,
    parse_csv_numbers,
)
from physid.recordings.trajectory import (
    Trajectory,
    _check_time,
    check_some_torque,
    interpolated,
    trajectory_block,
)
from physid.robot.model import RobotModel

STREAM_BYTES = 64 * 1024**2  # CSV files larger than this are streamed (about 500,000 rows)
BLOCK_ROWS = 50_000  # rows parsed, checked and spilled at a time
_FIELDS = ("q", "tau", "dq", "ddq")


class _Spill:
    """The temporary folder of spilled blocks, removed with the last recording using it."""

    def __init__(self) -> None:
        self.folder = scratch_dir("recording")
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.folder, True)

    def remove(self) -> None:
        self._cleanup()


class _Rows:
    """One field of a :class:`RecordingFile` as a row-sliceable, array-like object (what
    :func:`physid.signal.butterworth.position_spectra` reads segment by segment)."""

    def __init__(self, recording: RecordingFile, name: str) -> None:
        self._recording, self._name = recording, name

    def __len__(self) -> int:
        return self._recording.n_samples

    @property
    def shape(self) -> tuple[int, int]:
        return (self._recording.n_samples, len(self._recording.joint_names))

    def __getitem__(self, rows: slice) -> np.ndarray:
        start, stop, step = rows.indices(len(self))
        values = self._recording._read(self._name, start, stop)
        # a copy: a strided view would keep every row read alive (every 50th row read holds 50
        # times the memory of the positions kept)
        return values if step == 1 else values[::step].copy()


@dataclass(frozen=True)
class _EarlierMotion:
    """Where a recording read with its motion ``delay_s`` earlier takes the motion from: the
    rows of the spilled recording whose time stamps are ``t`` (``t[0]`` at spilled row
    ``row_offset``), interpolated linearly at ``t - delay_s`` as
    :func:`physid.offline.choose.delay.compensated` does in memory."""

    t: np.ndarray  # (M,) s
    row_offset: int
    delay_s: float


_MOTION = ("q", "dq", "ddq")


@dataclass(frozen=True, eq=False)
class RecordingFile:
    """A validated recording on disk: its time stamps in memory, the rest read on demand."""

    t: np.ndarray  # (N,) s, every time stamp
    joint_names: tuple[str, ...]
    source: str
    warnings: tuple[Finding, ...]  # what reading did (physid.recordings.codes)
    spill: _Spill  # the folder of blocks block_<k>_<field>.npy
    block_starts: np.ndarray  # (blocks + 1,) first row of each block, then the row count
    has_velocities: bool
    has_accelerations: bool
    row_offset: int = 0  # of row 0 in the spilled blocks (a part of a longer recording)
    # the corrupt samples repaired block by block (physid.recordings.glitches), when checked
    row_repairs: dict | None = None
    earlier_motion: _EarlierMotion | None = None  # set by motion_earlier

    @property
    def q(self) -> _Rows:
        """The joint positions, read on demand (``q[a:b]`` is an (b - a, n) array)."""
        return _Rows(self, "q")

    def part(self, start: int, stop: int) -> RecordingFile:
        """Rows ``start:stop`` as a recording on the same spilled blocks (nothing is read)."""
        return replace(self, t=self.t[start:stop], row_offset=self.row_offset + start)

    @property
    def n_samples(self) -> int:
        return len(self.t)

    @property
    def sample_rate_hz(self) -> float:
        """Median sample rate, as :attr:`physid.recordings.trajectory.Trajectory.sample_rate_hz`."""
        step = float(np.median(np.diff(self.t)))
        return 1.0 / step if step > 0.0 else float("nan")

    def motion_earlier(self, delay_s: float, start: int, stop: int) -> RecordingFile:
        """Rows ``start:stop`` with the motion read ``delay_s`` earlier (positions, velocities
        and accelerations at ``t - delay_s``, the torque as logged; ``t - delay_s`` of every
        kept row must lie within the recording); nothing is read now. Applied to a recording
        already shifted, the delays add."""
        shift = self.earlier_motion or _EarlierMotion(self.t, self.row_offset, 0.0)
        earlier = replace(shift, delay_s=shift.delay_s + delay_s)
        return replace(self.part(start, stop), earlier_motion=earlier)

    def _read(self, name: str, start: int, stop: int) -> np.ndarray:
        """Field ``name`` of rows ``start:stop``, the motion shifted (:meth:`motion_earlier`)."""
        shift = self.earlier_motion
        if shift is None or name not in _MOTION:
            return self._field(name, start, stop)
        at = self.t[start:stop] - shift.delay_s
        first = max(int(np.searchsorted(shift.t, at[0], side="right")) - 1, 0)
        last = min(int(np.searchsorted(shift.t, at[-1], side="left")) + 1, len(shift.t))
        rows = shift.row_offset - self.row_offset  # the source's row 0 in this part's rows
        return interpolated(at, shift.t[first:last], self._field(name, rows + first, rows + last))

    def _field(self, name: str, start: int, stop: int) -> np.ndarray:
        start, stop = start + self.row_offset, stop + self.row_offset
        starts = self.block_starts
        first = int(np.searchsorted(starts, start, side="right")) - 1
        last = int(np.searchsorted(starts, stop - 1, side="right")) - 1
        parts = []
        for block in range(first, last + 1):
            offset = int(starts[block])
            array = np.load(self.spill.folder / f"block_{block}_{name}.npy", mmap_mode="r")
            parts.append(np.array(array[max(start - offset, 0) : stop - offset]))
            del array  # unmap now: mapped pages count in the resident set
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    def time_slice(self, start: int, stop: int) -> Trajectory:
        """Rows ``start:stop`` as an in-memory :class:`~physid.recordings.trajectory.Trajectory`."""
        start, stop = max(0, start), min(self.n_samples, stop)
        if stop <= start:
            raise ValueError(f"empty row range {start}:{stop}")
        read = lambda name: self._read(name, start, stop)  # noqa: E731
        return Trajectory(
            self.t[start:stop],
            read("q"),
            read("tau"),
            self.joint_names,
            read("dq") if self.has_velocities else None,
            read("ddq") if self.has_accelerations else None,
            self.source,
            self.warnings,
        )

    def in_memory(self) -> Trajectory:
        """The whole recording as a :class:`~physid.recordings.trajectory.Trajectory` (for the
        methods that need it at once: the Kalman smoothers, drive-gain and payload fits)."""
        return self.time_slice(0, self.n_samples)


def read_once(items: list) -> list:
    """Each recording file read into a :class:`Table` once (what the loaders then validate
    against the model; :func:`physid.recordings.trajectory.read_table`); files streamed from
    disk (:func:`should_stream`) and tables as they are."""
    from physid.recordings import trajectory

    return [
        item if isinstance(item, Table) or should_stream(item) else trajectory.read_table(item)
        for item in items
    ]


def streamed_column_names(path: str | Path) -> tuple[str, ...]:
    """The column names of a CSV or Parquet file that :func:`should_stream`, from its first
    block of one row (the file is not read further)."""
    path = Path(path)
    reader = _parquet_blocks if path.suffix.lower() == ".parquet" else _csv_blocks
    for _, table in reader(path, 1):
        return tuple(table.columns)
    return ()


def should_stream(path: str | Path) -> bool:
    """True for a CSV or Parquet file large enough to be read in blocks (Parquet: by its
    uncompressed size, rows x columns x 8 bytes)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.is_file() or not (is_csv(path) or suffix == ".parquet"):
        return False
    if is_gzipped_csv(path):
        return _gzip_text_bytes(path) > STREAM_BYTES
    if suffix == ".csv":
        return path.stat().st_size > STREAM_BYTES
    try:
        import pyarrow.parquet as pq

        metadata = pq.ParquetFile(path).metadata
    except Exception:  # noqa: BLE001 - unreadable: the in-memory reader words the error
        return False
    return metadata.num_rows * metadata.num_columns * 8 > STREAM_BYTES


def _gzip_text_bytes(path: Path) -> int:
    """The uncompressed size of a gzip file, from its trailer (ISIZE: the size modulo 2^32; a
    text past 4 GiB reads small and is then read whole); 0 when the file is too short."""
    with path.open("rb") as handle:
        handle.seek(0, 2)
        if handle.tell() < 18:  # header and trailer of an empty archive
            return 0
        handle.seek(-4, 2)
        return int.from_bytes(handle.read(4), "little")


def _parquet_blocks(path: Path, block_rows: int) -> Iterator[tuple[int, Table]]:
    """``(first data row, table)`` per batch of a Parquet file."""
    _, batches = parquet_batches(path, block_rows)
    row = 1
    for batch in batches:
        if batch.num_rows:
            yield row, Table(parquet_columns(batch, str(path)), str(path), first_row=row)
            row += batch.num_rows


def _csv_header(handle, source: str) -> list[str]:  # noqa: ANN001
    return csv_header_names(handle.readline(), source)


def _csv_blocks(path: Path, block_rows: int) -> Iterator[tuple[int, Table]]:
    """``(first data row, table)`` per block of the CSV file's numbers."""
    source = str(path)
    line_number = 1  # of the last line read (the header is line 1)
    row = 1  # 1-based data row of the next number row, as in physid's messages
    try:
        with open_data_file(path, "rt", encoding="utf-8", newline="") as handle:
            names = _csv_header(handle, source)
            while True:
                lines = list(itertools.islice(handle, block_rows))
                if not lines:
                    return
                if any("\x00" in line for line in lines):
                    raise InputError("the data file is binary (NUL byte)", source=source)
                try:
                    values = np.loadtxt(lines, delimiter=",", ndmin=2, comments="#")
                    if values.shape[1] != len(names):
                        raise ValueError
                except ValueError:  # text in a column physid does not read: NaN, noted
                    text = "header\n" + "".join(lines)
                    values = parse_csv_numbers(
                        text, names, source, first_line=line_number + 1, notes=[]
                    )
                line_number += len(lines)
                if len(values):
                    columns = {name: values[:, k] for k, name in enumerate(names)}
                    yield row, Table(columns, source, first_row=row)
                    row += len(values)
    except UnicodeDecodeError:
        raise InputError(
            f"the data file is not UTF-8 text (after line {line_number}); save it as UTF-8",
            source=source,
        ) from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as error:  # a .csv.gz cut short or damaged
        raise InputError(
            f"the data file is a damaged gzip archive (after line {line_number}: {error})",
            source=source,
        ) from None


def open_recording(
    path: str | Path,
    model: RobotModel,
    *,
    drive_gains: dict[str, float] | None = None,
    allow_large_angles: bool = False,
    block_rows: int | None = None,
    corrupt_samples: str = "repair",
    angles_in_degrees: bool = False,
) -> RecordingFile:
    """Read and validate a CSV or Parquet recording in blocks (same checks and messages as
    :func:`physid.recordings.trajectory.load_trajectory`); the joint-side data go to a temporary
    folder. ``corrupt_samples="repair"``: isolated corrupt samples are repaired block by block
    (:mod:`physid.recordings.glitches`; a block's first and last samples are judged against the
    block's own neighbours). Angles are not unwrapped, and duplicate rows and gaps are errors
    (they would change the row count or split the file)."""
    from physid.recordings.glitches import GlitchRepair, repair_corrupt_samples

    path = Path(path)
    if not path.is_file():
        raise InputError(f"data file not found: {path}")
    spill = _Spill()
    folder = spill.folder
    try:
        times, first, starts, repaired = [], None, [0], []
        reader = _parquet_blocks if path.suffix.lower() == ".parquet" else _csv_blocks
        for block, (_, table) in enumerate(reader(path, block_rows or BLOCK_ROWS)):
            trajectory = trajectory_block(
                table,
                model,
                table.columns.get("t", np.zeros(table.n_rows)),
                drive_gains=drive_gains,
                allow_large_angles=allow_large_angles,
                angles_in_degrees=angles_in_degrees,
            )
            if corrupt_samples == "repair":
                q, tau, repair = repair_corrupt_samples(
                    trajectory.q, trajectory.tau, trajectory.joint_names
                )
                trajectory = replace(trajectory, q=q, tau=tau)
                offset = starts[-1]
                repaired += [replace(s, row=s.row + offset) for s in repair.samples]
            first = first or trajectory
            if "t" in table.columns:
                times.append(table.columns["t"].copy())  # a view would keep the block
            for name in _FIELDS:
                values = getattr(trajectory, name)
                if values is not None:
                    np.save(folder / f"block_{block}_{name}.npy", values)
            starts.append(starts[-1] + table.n_rows)
        if first is None:
            raise InputError("no data rows", source=str(path))
        t = _check_time(Table({"t": np.concatenate(times)} if times else {}, str(path)))
        repair = GlitchRepair(len(t), tuple(repaired))
        notes = (SAMPLES_REPAIRED(repair.note(str(path))),) if repaired else ()
        recording = RecordingFile(
            t,
            model.joint_names,
            str(path),
            (*first.warnings, *notes),
            spill,
            np.asarray(starts),
            first.dq is not None,
            first.ddq is not None,
            row_repairs={"source": str(path), **repair.as_dict()}
            if corrupt_samples == "repair"
            else None,
        )
        _check_torque_present(recording)
    except BaseException:
        spill.remove()
        raise
    return recording


def _check_torque_present(recording: RecordingFile) -> None:
    starts = recording.block_starts
    for start, stop in zip(starts[:-1], starts[1:], strict=True):
        if np.any(recording._field("tau", int(start), int(stop))):
            return
    check_some_torque(np.zeros(1), recording.source)


PREVIEW_SAMPLES = 200_000  # what the data-plausibility checks read of a long recording


def preview(recording: Trajectory | RecordingFile) -> Trajectory:
    """The recording in memory, or the first :data:`PREVIEW_SAMPLES` of a long one (for the
    plausibility checks of :mod:`physid.offline.checks.suspect`: units, swapped columns, sign)."""
    if isinstance(recording, Trajectory):
        return recording
    return recording.time_slice(0, min(recording.n_samples, PREVIEW_SAMPLES))
