"""Recorded trajectories: reading, validation and conversion to the joint side.

The trajectory contract (docs/architecture.md): a table with ``t`` [s] strictly increasing,
``q_<joint>``, optional ``dq_<joint>`` and ``ddq_<joint>``, and ``tau_<joint>`` (joint torque/force)
or ``i_<joint>`` (motor current, scaled by a drive gain). With a transmission, motor-side columns
``qm_<motor>`` and ``taum_<motor>`` or ``i_<motor>`` are accepted and converted. Files are CSV with
a header, ``.npz`` or ``.parquet``; a YAML *recording manifest* (:mod:`physid.recordings.manifest`)
adapts files that do not follow the contract.

Every check fails with a one-line :class:`~physid.errors.InputError` naming file, column and row.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.files.io import table_csv_text, write_text_atomic
from physid.findings import Code, Finding
from physid.recordings.codes import (
    DUPLICATE_ROWS,
    FRAME_SHIFT,
    FROZEN_TORQUE,
    GAP_SPLIT,
    MOTION_BREAK,
    READING_NOTE,
    SAMPLES_REPAIRED,
    STALE_ROWS,
    TIME_BASE,
    TORQUE_AT_LIMIT,
)
from physid.recordings.glitches import moving_joints
from physid.recordings.manifest import FORMAT as MANIFEST_FORMAT
from physid.recordings.manifest import read_recording
from physid.recordings.tables import (
    MAX_GAP_PERIODS,
    MAX_MAGNITUDE,
    MIN_SEGMENT_ROWS,
    MIN_SEGMENT_S,
    Table,
    gap_pieces,
    long_enough,
    read_file_table,
    repeats_previous,
)
from physid.robot.model import RobotModel, is_revolute, is_unbounded, revolute_mask

JOINT_PREFIXES = ("q_", "dq_", "ddq_", "tau_", "i_")
MOTOR_PREFIXES = ("qm_", "taum_", "i_")
_CONTRACT_PREFIXES = JOINT_PREFIXES + MOTOR_PREFIXES
# A revolute angle beyond its bound (one turn, or a wider URDF limit) by more than this is no
# calibration offset: almost surely degrees. Shared by identify's suspect check and physid oe.
ANGLE_MARGIN_RAD = 0.5
_MAX_PLAUSIBLE_ANGLE_RAD = 2.0 * np.pi + ANGLE_MARGIN_RAD


@dataclass(frozen=True)
class Trajectory:
    """A validated joint-side trajectory (SI units, joints in model order)."""

    t: np.ndarray  # (N,) s
    q: np.ndarray  # (N, n) rad or m
    tau: np.ndarray  # (N, n) N m or N, joint side
    joint_names: tuple[str, ...]
    dq: np.ndarray | None = None
    ddq: np.ndarray | None = None
    source: str = ""
    # what reading did to the rows and saw in them (physid.recordings.codes)
    warnings: tuple[Finding, ...] = field(default=())
    # what physid.recordings.timebase found and did to the time stamps (as_dict), when checked
    time_base: dict | None = None
    # rows dropped as duplicates and samples repaired (physid.recordings.glitches), when checked
    row_repairs: dict | None = None

    def __post_init__(self) -> None:
        """Shapes must agree: t (N,), q/tau/dq/ddq (N, n) with n joint names."""
        n_rows, n_joints = (
            np.shape(self.t)[0] if np.ndim(self.t) == 1 else -1,
            len(self.joint_names),
        )
        for name in ("q", "tau", "dq", "ddq"):
            block = getattr(self, name)
            if block is not None and np.shape(block) != (n_rows, n_joints):
                raise InputError(
                    f"trajectory '{name}' has shape {np.shape(block)}, expected ({n_rows}, "
                    f"{n_joints}) for {n_joints} joints {list(self.joint_names)}",
                    source=self.source or None,
                )

    @property
    def n_samples(self) -> int:
        return len(self.t)

    @cached_property
    def sample_rate_hz(self) -> float:
        """Median sample rate [1/unit of t]; the median ignores dropped samples and jitter."""
        if self.n_samples < 2:
            return float("nan")
        step = float(np.median(np.diff(np.asarray(self.t, float))))
        return 1.0 / step if step > 0.0 else float("nan")

    @cached_property
    def moving(self) -> np.ndarray:
        """(n,) bool, read-only: the joints that move in ``q``
        (:func:`~physid.recordings.glitches.moving_joints`), read once for the dozen checks and
        choices that ask (each reads the medians of the whole recording's differences)."""
        moving = moving_joints(self.q)
        moving.flags.writeable = False
        return moving

    def part(self, start: int, stop: int) -> Trajectory:
        """Rows ``start:stop`` (as :meth:`time_slice`; a long recording on disk,
        :class:`physid.recordings.streamed.RecordingFile`, answers with a part of itself)."""
        return self.time_slice(start, stop)

    def time_slice(self, start: int, stop: int) -> Trajectory:
        """Rows ``start:stop`` as a new trajectory."""
        return self.rows(slice(start, stop))

    def rows(self, index: slice | np.ndarray, **changes) -> Trajectory:
        """The rows ``index`` (a slice or indices) as a new trajectory, with ``changes``
        (other field values, e.g. new time stamps) applied."""
        pick = lambda x: None if x is None else x[index]  # noqa: E731
        fields = {
            "t": self.t[index],
            "q": self.q[index],
            "tau": self.tau[index],
            "dq": pick(self.dq),
            "ddq": pick(self.ddq),
        }
        return replace(self, **{**fields, **changes})


def split_by_fraction(
    trajectory: Trajectory, train_fraction: float
) -> tuple[Trajectory, Trajectory]:
    """Split one recording into a training head and a validation tail block."""
    if not 0.0 < train_fraction < 1.0:
        raise InputError(f"train fraction must lie in (0, 1), got {train_fraction}")
    cut = int(round(train_fraction * trajectory.n_samples))
    return trajectory.part(0, cut), trajectory.part(cut, trajectory.n_samples)


def read_table(path: str | Path) -> Table:
    """Read a CSV (header row), ``.npz`` or ``.parquet`` file, or a YAML recording manifest."""
    if Path(path).suffix.lower() in (".yaml", ".yml") and Path(path).is_file():
        return read_recording(path)
    return read_file_table(path)


def positions_named(columns) -> frozenset[str]:  # noqa: ANN001 - column names
    """The joints a recording's columns give positions of (``q_<joint>``)."""
    return frozenset(name[2:] for name in columns if name.startswith("q_") and len(name) > 2)


# a time column under another name (a logger's, ROS's): suggested for a missing ``t``
_TIME_NAMES = ("time", "times", "timestamp", "stamp", "time_s", "t_s", "sec", "seconds")


# 't [s]', 'q_joint1 (rad)': a name with a unit, which the contract's names do not carry
_UNIT_SUFFIX = re.compile(r"^\s*(.*?)\s*[\[(][^\])]*[\])]\s*$")


def hold_still(joint: str) -> str:
    """The config line that holds an unlogged ``joint`` still, as error messages give it."""
    return f"a config holds it still: locked: {{{joint}: <its position, rad or m>}}"


def _require(table: Table, name: str, what: str) -> np.ndarray:
    if name in table.columns:
        return table.columns[name]
    # Suggest a column that the contract does not already claim: the likely typo.
    unclaimed = [c for c in table.columns if c != "t" and not c.startswith(_CONTRACT_PREFIXES)]
    hint = difflib.get_close_matches(name, unclaimed, n=1, cutoff=0.6)
    if name == "t":  # '%time' (rostopic echo -p), 'header.stamp', 'Time [s]' count too
        bare = {c: re.sub(r"\[.*?\]|[^a-z_.]", "", c.lower()).rsplit(".", 1)[-1] for c in unclaimed}
        hint = [c for c in unclaimed if bare[c] in _TIME_NAMES][:1] or hint
    suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
    with_units = {c: _UNIT_SUFFIX.match(c).group(1) for c in table.columns if _UNIT_SUFFIX.match(c)}
    contract = [
        c for c, bare in with_units.items() if bare == "t" or bare.startswith(_CONTRACT_PREFIXES)
    ]
    if name == "t" and not hint and not contract:
        suggestion = (
            " (a file without a time column: a YAML recording manifest gives it with "
            "sample_time: <the sample period in s>)"
        )
    if contract:
        listed = ", ".join(f"'{c}'" for c in contract[:3]) + (" ..." if len(contract) > 3 else "")
        suggestion += (
            f"; the column names carry units ({listed}) and the contract's do not "
            "(t in s, q_ in rad or m, tau_ in N m or N): rename the columns without "
            "them"
        )
    positions = [c for c in table.columns if c.startswith("q_")]
    if name.startswith("q_") and positions and not hint:
        # a joint between logged ones (its own position absent, not a misspelt one): the
        # config line that holds it still (without a config only the ends of the tree are)
        suggestion += f"; if joint '{name[2:]}' was not logged, {hold_still(name[2:])}"
    manifest = (
        "; a YAML recording manifest given to --data maps a file's own column names "
        f"(format: {MANIFEST_FORMAT}, sources: [{{file: ..., columns: {{t: <its time>, "
        "q_<joint>: <its position>, tau_<joint>: <its torque>}}]: see "
        "examples/kuka_lwr4/measurements_1.yaml)"
        if len(unclaimed) >= 2
        else ""
    )
    raise InputError(
        f"missing column '{name}' ({what}){suggestion}; columns present: "
        f"{', '.join(sorted(table.columns))}{manifest}",
        source=table.source,
    )


def _check_finite(table: Table, names: list[str]) -> None:
    for name in names:
        values = table.columns[name]
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            row = int(bad[0])
            raise InputError(
                f"column '{name}' row {row + table.first_row} is {values[row]} "
                f"({bad.size} non-finite rows); "
                "remove or repair those samples",
                source=table.source,
            )


def _check_magnitude(table: Table, names: list[str]) -> None:
    for name in names:
        values = table.columns[name]
        bad = np.flatnonzero(np.abs(values) > MAX_MAGNITUDE)
        if bad.size:
            row = int(bad[0])
            raise InputError(
                f"column '{name}' row {row + table.first_row} is {values[row]:.6g}, beyond any "
                "plausible "
                f"value ({bad.size} such rows); check the units or repair those samples",
                source=table.source,
            )


# a robot sampled at 1 Hz or slower is a time column in other units; the bound is inclusive, as
# a 1 kHz log in ms steps by exactly 1
MAX_SAMPLE_PERIOD_S = 1.0


def check_seconds(period: float, source: str) -> None:
    """One error line when the median step of ``t`` reads as time in other units than s."""
    if period >= MAX_SAMPLE_PERIOD_S:
        raise InputError(
            f"column 't' advances {period:.4g} per row (median), a robot sampled at "
            f"{1 / period:.3g} Hz: is t in seconds? (convert milliseconds, micro- or "
            "nanoseconds, or read the file through a recording manifest with time_unit: ms, us "
            "or ns)",
            source=source,
        )


def duplicate_rows(table: Table) -> np.ndarray:
    """Rows (bool, N) equal to the previous row in every column, time included: a logger that
    wrote the same row twice. They carry nothing and are dropped (:func:`trajectory_from_table`);
    a repeated time stamp with other values is an error (which of the two rows is right?)."""
    return repeats_previous(table.columns.values())


def _check_time(
    table: Table, duplicates: np.ndarray | None = None, *, allow_gaps: bool = False
) -> np.ndarray:
    """The time column, checked: finite, increasing (``duplicates``: rows allowed to repeat
    the previous row, dropped by the caller), in seconds, and (unless ``allow_gaps``: the
    caller splits there) without gaps."""
    t = _require(table, "t", "time in seconds")
    _check_finite(table, ["t"])
    steps = np.diff(t)
    bad = steps <= 0
    if duplicates is not None:
        bad &= ~duplicates[1:]
    bad = np.flatnonzero(bad)
    if bad.size:
        row = int(bad[0]) + 1
        advice = "sort the rows or repair the time stamps"
        period = float(np.median(steps[steps > 0])) if np.any(steps > 0) else 0.0
        if period > 0.0 and all(_starts_again(t, int(k) + 1, period) for k in bad):
            times = "" if bad.size == 1 else f" {bad.size} times"
            advice = (
                f"the stamps start again{times}: recordings appended in one file? give "
                "each part as its own --data file"
            )
        elif abs(t[0]) >= 1e6 and np.sum(steps == 0) > 0.1 * len(steps):
            # epoch seconds (1.7e9) printed with 9-10 significant digits keep whole seconds
            advice = (
                f"the stamps repeat ({int(np.sum(steps == 0))} steps of 0 s) at "
                f"t = {t[0]:.10g} s: clock time written with too few digits? write them "
                "with 6 decimals, or relative to the first sample"
            )
        raise InputError(
            f"column 't' is not strictly increasing at row {row + 1} "
            f"(t = {t[row]:.10g} s, {t[row] - t[row - 1]:.3g} s after the previous row; "
            f"{bad.size} such rows): {advice}",
            source=table.source,
        )
    kept = t if duplicates is None else t[~duplicates]
    steps = np.diff(kept)
    if len(kept) < 3:
        raise InputError(f"only {len(kept)} samples; at least 3 are needed", source=table.source)
    period = float(np.median(steps))
    check_seconds(period, table.source)
    pieces = [] if allow_gaps else gap_pieces(t, duplicates)
    if len(pieces) > 1:
        row = pieces[1][0]  # the first row after the first gap, in the file
        jump = t[row] - t[row - 1]
        raise InputError(
            f"column 't' jumps by {jump:.4g} s to {t[row]:.10g} s at row {row + 1}, "
            f"{jump / period:.3g} sample periods ({len(pieces) - 1} such gaps); physid does "
            "not fill gaps: split the recording there, or fix the time stamp",
            source=table.source,
        )
    return t


def _starts_again(t: np.ndarray, row: int, period: float) -> bool:
    """Row ``row``'s stamp falls back to where the file began (within 10 periods of ``t[0]``)
    and the stamps rise from there for 10 rows without reaching where they were: another run
    appended, not a corrupt stamp or two (which the next rows leave behind) nor a counter that
    wrapped (which falls back to 0 from a file that began elsewhere)."""
    ahead = t[row : row + 10]
    return (
        abs(t[row] - t[0]) <= 10.0 * period
        and len(ahead) >= 2
        and bool(np.all(np.diff(ahead) > 0))
        and ahead[-1] < t[row - 1]
    )


def _drive_gain(gains: dict[str, float], name: str, source: str) -> float:
    if name not in gains:
        raise InputError(
            f"column 'i_{name}' is a motor current but no drive gain is configured for '{name}': "
            "give the gains in the config (drive_gains: {joint: N m/A, joint side}) or identify "
            "them from a run with a known payload (drive_gains: identify and --loaded-data, "
            "docs/identify.md §8)",
            source=source,
        )
    return float(gains[name])


def _torque_from_current(table: Table, name: str, gains: dict[str, float]) -> np.ndarray:
    """``gain x i_<name>`` [N m], the current checked first: a bad current is an error line
    naming the ``i_`` column the file has, not the ``tau_`` column made from it."""
    gain = _drive_gain(gains, name, table.source)
    column = f"i_{name}"
    _check_finite(table, [column])
    _check_magnitude(table, [column])
    with np.errstate(over="ignore", invalid="ignore"):
        torque = gain * table.columns[column]
    bad = np.flatnonzero(~np.isfinite(torque))
    if bad.size:  # a finite current times a huge finite gain
        raise InputError(
            f"column '{column}' row {int(bad[0]) + table.first_row} times the drive gain "
            f"{gain:.6g} N m/A is not a finite torque ({bad.size} such rows); check the gain",
            source=table.source,
        )
    return torque


def with_torques_from_currents(
    table: Table, joints: tuple[str, ...], gains: dict[str, float]
) -> Table:
    """``table`` with ``tau_<joint> = gain * i_<joint>`` for every joint logged as a motor
    current only (``i_`` and no ``tau_`` column; a current without its gain is one error line);
    ``table`` itself when there is none."""
    added = {
        f"tau_{name}": _torque_from_current(table, name, gains)
        for name in joints
        if f"tau_{name}" not in table.columns and f"i_{name}" in table.columns
    }
    return replace(table, columns={**table.columns, **added}) if added else table


def _effort(table: Table, name: str, torque_prefix: str, gains: dict[str, float]) -> np.ndarray:
    torque_column = f"{torque_prefix}{name}"
    if torque_column in table.columns:
        return table.columns[torque_column]
    if f"i_{name}" in table.columns:
        return _torque_from_current(table, name, gains)
    return _require(table, torque_column, f"torque of '{name}', or current 'i_{name}'")


TIME_BASE_CHOICES = ("auto", "stamps")
ANGLE_UNITS = ("radians", "degrees")  # config angle_unit: what the q_, dq_, ddq_ columns hold
CORRUPT_SAMPLE_CHOICES = ("repair", "keep")


def trajectory_from_table(
    table: Table,
    model: RobotModel,
    *,
    drive_gains: dict[str, float] | None = None,
    allow_large_angles: bool = False,
    time_base: str = "auto",
    corrupt_samples: str = "repair",
    angles_in_degrees: bool = False,
) -> Trajectory:
    """Validate a table against ``model`` and convert it to a joint-side :class:`Trajectory`.

    ``time_base="auto"``: the stamps are checked against the motion
    (:mod:`physid.recordings.timebase`):
    repeated samples are dropped and stamps that do not track the samples are replaced by the
    controller's ticks or a uniform grid, with a warning that says so with counts;
    ``"stamps"``: the stamps are trusted as they are. ``corrupt_samples="repair"``: angles
    logged modulo one turn are unwrapped and isolated corrupt samples repaired
    (:func:`repaired_samples`). A gap in the time stamps is an error
    (:func:`trajectory_segments` splits the recording there instead). ``angles_in_degrees``:
    the revolute joints' (and motors') positions, velocities and accelerations are in degrees
    and converted to radians on reading (config ``angle_unit: degrees``).
    """
    options = dict(
        drive_gains=drive_gains,
        allow_large_angles=allow_large_angles,
        time_base=time_base,
        corrupt_samples=corrupt_samples,
        angles_in_degrees=angles_in_degrees,
    )
    return trajectory_segments(table, model, split_gaps=False, **options)[0]


def trajectory_segments(
    table: Table,
    model: RobotModel,
    *,
    drive_gains: dict[str, float] | None = None,
    allow_large_angles: bool = False,
    time_base: str = "auto",
    corrupt_samples: str = "repair",
    split_gaps: bool = True,
    angles_in_degrees: bool = False,
) -> list[Trajectory]:
    """The recording of ``table`` as :func:`trajectory_from_table` makes it, split where its time
    stamps have a gap (a step of more than :data:`MAX_GAP_PERIODS` sample periods: a logger that
    paused, messages lost) into pieces that are identified as separate recordings: physid does
    not fill gaps. Every check and repair runs on each piece (a corrupt sample is judged against
    its neighbours, not across a gap); pieces shorter than :data:`MIN_SEGMENT_S` or
    :data:`MIN_SEGMENT_ROWS` are dropped. The first piece's warnings say what was done."""
    duplicates = duplicate_rows(table)
    _check_time(table, duplicates, allow_gaps=split_gaps)
    t = table.columns["t"]
    whole = trajectory_block(
        table,
        model,
        t,
        drive_gains=drive_gains,
        allow_large_angles=allow_large_angles,
        angles_in_degrees=angles_in_degrees,
    )
    check_some_torque(whole.tau, table.source)
    whole = _with_saturation_note(whole)
    pieces = gap_pieces(t, duplicates)
    if len(pieces) == 1:
        return _checked_piece(
            whole, duplicates, table.first_row, time_base, corrupt_samples, model, split_gaps
        )
    kept = [(a, b) for a, b in pieces if long_enough(t, a, b)]
    first = table.first_row
    if not kept:
        raise InputError(
            f"column 't' has {len(pieces) - 1} gaps (steps of more than {MAX_GAP_PERIODS:g} "
            f"sample periods) and no piece between them lasts {MIN_SEGMENT_S:g} s "
            f"({MIN_SEGMENT_ROWS} rows); physid does not fill gaps: fix the time stamps",
            source=table.source,
        )
    rows = _row_span(first)
    note = _gap_note(table.source, t, pieces, kept, first)
    segments, stale = [], []
    for a, b in kept:
        said = (*whole.warnings, GAP_SPLIT(note)) if not segments else ()
        piece = whole.rows(slice(a, b), source=f"{table.source} {rows(a, b)}", warnings=said)
        try:
            segments.extend(
                _checked_piece(
                    piece, duplicates[a:b], first + a, time_base, corrupt_samples, model, split_gaps
                )
            )
        except MostlyStaleError as error:  # dropped like a piece too short, unless all are
            stale.append(error)
    if not segments:
        raise stale[0]
    if stale:
        dropped = "; ".join(f"dropped {error}" for error in stale)
        segments[0] = replace(segments[0], warnings=(*segments[0].warnings, STALE_ROWS(dropped)))
    return segments


def _checked_piece(
    trajectory: Trajectory,
    duplicates: np.ndarray,
    first_row: int,
    time_base: str,
    corrupt_samples: str,
    model: RobotModel,
    split: bool = True,
) -> list[Trajectory]:
    """One piece of a recording, repaired (rows numbered from ``first_row`` as in the file),
    without its duplicate rows, on its checked time base: split where its motion breaks
    (:func:`split_at_motion_breaks`; ``split`` False: that is an error)."""
    if corrupt_samples == "repair":
        trajectory = repaired_samples(trajectory, model, first_row)
    if np.any(duplicates):
        trajectory = _without_duplicates(trajectory, duplicates, first_row)
    if time_base != "auto":  # the stamps trusted as they are: every row a sample
        return [trajectory]
    pieces = _without_stuck_torques(_without_stale_rows(trajectory), split=split)
    pieces = [p for piece in pieces for p in without_position_steps(piece, model, split=split)]
    return [s for piece in pieces for s in split_at_motion_breaks(piece, split=split)]


class MostlyStaleError(InputError):
    """A recording (or a piece between gaps) whose rows nearly all repeat the row before."""


def _without_stale_rows(trajectory: Trajectory) -> Trajectory:
    """``trajectory`` without its *stale* rows: every position and every torque equal to the
    previous row's to the bit, under a new stamp — a logger that froze or resent a packet. A real
    torque is almost never bit-identical on every joint twice in a row, even at rest, while
    positions alone often repeat. Left in, a frozen logger reads as the robot standing still for
    that time, then jumping, which the fit explains with masses several times the arm's. A
    :class:`MostlyStaleError` when at least half the rows are stale and fewer than
    :data:`MIN_SEGMENT_ROWS` are left: a constant file, or a logger frozen for nearly all of it, has
    nothing to identify from (the cut-off's spectrum would fail, or the fit would rest on a few
    moving rows); a piece between gaps that is so is dropped like a piece too short
    (:func:`trajectory_segments`)."""
    same = np.zeros(trajectory.n_samples, dtype=bool)
    same[1:] = np.all(trajectory.q[1:] == trajectory.q[:-1], axis=1) & np.all(
        trajectory.tau[1:] == trajectory.tau[:-1], axis=1
    )
    if not np.any(same):
        return trajectory
    left = trajectory.n_samples - int(same.sum())
    if left < MIN_SEGMENT_ROWS and 2 * int(same.sum()) >= trajectory.n_samples:
        raise MostlyStaleError(
            f"{int(same.sum())} of {trajectory.n_samples} rows repeat every position and torque "
            f"of the row before (a logger that froze, or a robot that never moved): {left} "
            f"rows remain, fewer than the {MIN_SEGMENT_ROWS} a recording needs",
            source=trajectory.source,
        )
    t = np.asarray(trajectory.t, float)
    first = ", ".join(f"{t[k]:.6g}" for k in np.flatnonzero(same)[:5])
    note = (
        f"{trajectory.source}: {int(same.sum())} rows dropped as stale (every position and "
        f"torque equal to the row before, under a new stamp: a logger that froze or resent; "
        f"at t = {first}{' ...' if same.sum() > 5 else ''} s)"
    )
    record = {
        "source": trajectory.source,
        **(trajectory.row_repairs or {}),
        "stale_rows_dropped": int(same.sum()),
    }
    return trajectory.rows(
        np.flatnonzero(~same), row_repairs=record, warnings=(*trajectory.warnings, STALE_ROWS(note))
    )


MAX_LISTED_RUNS = 3  # stuck stretches named in the one-line note (all in params.json)


def moving_joints_of(recording: object, q: np.ndarray) -> np.ndarray:
    """:func:`~physid.recordings.glitches.moving_joints` of the positions ``q`` of
    ``recording``: the recording's own (:attr:`Trajectory.moving`, read once) when they are all
    its rows, else read from ``q`` (a sample of a long or streamed recording)."""
    if isinstance(recording, Trajectory) and len(q) == recording.n_samples:
        return recording.moving
    return moving_joints(q)


def unlogged_torque_joints(trajectories: list[Trajectory]) -> list[tuple[str, float]]:
    """``(joint, value)`` of the torque columns that hold one value in every row of every
    recording given while the robot moves in some: a torque that was not logged (a dead sensor,
    an empty column). None is found among recordings streamed from disk (not read for it)."""
    held = [t for t in trajectories if isinstance(getattr(t, "tau", None), np.ndarray)]
    if len(held) < len(trajectories) or not any(np.any(t.moving) for t in held if t.n_samples > 1):
        return []
    names = held[0].joint_names
    found = []
    for k, joint in enumerate(names):
        values = {float(t.tau[0, k]) for t in held}
        if len(values) == 1 and all(np.ptp(t.tau[:, k]) == 0.0 for t in held):
            found.append((joint, values.pop()))
    return found


def _frozen_from(q: np.ndarray, row: int) -> int:
    """The end (exclusive) of the piece before a break at ``row``: ``row``, or, when the rows
    before it repeat one position (more than one repeat), the row after the first of them."""
    first = row - 1
    while first > 0 and np.array_equal(q[first - 1], q[row - 1]):
        first -= 1
    return first + 1 if row - 1 - first >= 2 else row


def stamp_text(value: float, period: float) -> str:
    """A time stamp [s] with the digits that resolve ``period`` (an epoch stamp of 1.46e9 s is
    no place in a recording at 6 significant digits)."""
    digits = max(6, int(np.ceil(np.log10(max(abs(value), 1.0) / max(period, 1e-12)))) + 1)
    return f"{value:.{digits}g}"


def _stamps(t: np.ndarray):  # noqa: ANN202 - (row) -> str
    """``t[row]`` as :func:`stamp_text` writes it, at the recording's median step."""
    period = float(np.median(np.diff(t)))
    return lambda row: stamp_text(t[row], period)


def split_at_motion_breaks(trajectory: Trajectory, *, split: bool = True) -> list[Trajectory]:
    """``trajectory`` on its checked time base (:func:`checked_time_base`), in pieces where its
    positions jump by more than :data:`MAX_GAP_PERIODS` sample periods' worth of their speed
    (:mod:`physid.recordings.timebase`, item 4: rows lost or frozen under stamps that went on,
    rows sent again): each piece is checked on its own, pieces shorter than
    :data:`MIN_SEGMENT_S` or :data:`MIN_SEGMENT_ROWS` are dropped (all but the longest, if
    none is longer), and the first kept piece's
    warnings say so. ``split`` False (a command that takes one recording): a break that leaves
    more than one piece is an error."""
    checked = checked_time_base(trajectory)
    breaks = (checked.time_base or {}).get("motion_breaks", [])
    if not breaks:
        return [checked]
    t = np.asarray(trajectory.t, float)
    rows = [int(b["row"]) for b in breaks]
    period = float(np.median(np.diff(t)))
    at = _stamps(t)
    where = ", ".join(
        f"t = {at(r)} s ({b['ticks']:+.3g} periods' worth of their speed in a stamp step of "
        f"{t[r] - t[int(b.get('from_row', r - 1))]:.3g} s)"
        for r, b in zip(rows, breaks, strict=True)
    )
    # positions frozen before a jump (a logger that held its last sample while the torques went
    # on) are no standstill: the piece before ends at the run's first row
    ends = [_frozen_from(trajectory.q, r) for r in rows]
    frozen = sum(r - e for r, e in zip(rows, ends, strict=True))
    what = (
        f"the positions jump at {where}; sample period {period:.3g} s: rows lost or frozen "
        "while the robot moved, or rows sent again; physid does not fill gaps"
        + (f"; {frozen} rows of positions frozen before the jump dropped" if frozen else "")
    )
    bounds = [0, *rows, len(t)]
    ends_of = [*ends, len(t)]
    pieces = [(a, b) for a, b in zip(bounds[:-1], ends_of, strict=True) if b > a]
    # a recording too short for any piece to last MIN_SEGMENT_S keeps its longest piece
    kept = [(a, b) for a, b in pieces if long_enough(t, a, b)] or [
        max(pieces, key=lambda piece: piece[1] - piece[0])
    ]
    if not split and len(kept) > 1:
        raise InputError(f"{what}: split the recording there", source=trajectory.source)
    spans = ", ".join(f"t = {at(a)}-{at(b - 1)} s" for a, b in kept)
    note = f"{trajectory.source}: {what}: identified as {len(kept)} recording(s) ({spans})"
    dropped = len(pieces) - len(kept)
    if dropped:
        note += f"; {dropped} shorter piece(s) dropped"
    result = []
    for a, b in kept:
        piece = trajectory.rows(
            slice(a, b),
            source=f"{trajectory.source} t = {at(a)}-{at(b - 1)} s",
            warnings=(*trajectory.warnings, MOTION_BREAK(note)) if not result else (),
        )
        result.extend(split_at_motion_breaks(piece, split=split))
    return result


def _kept_pieces(
    trajectory: Trajectory,
    pieces: list[tuple[int, int]],
    what: str,
    split: bool,
    code: Code = MOTION_BREAK,
) -> list[Trajectory]:
    """The ``pieces`` (row ranges) of ``trajectory`` that physid keeps after dropping rows for
    ``what`` (a fault it found): those long enough (:func:`long_enough`; the longest if none
    is), only the longest when ``split`` is False (a command that takes one recording), each
    named by its span; the first carries a note of what was done."""
    t = np.asarray(trajectory.t, float)
    at = _stamps(t)
    pieces = [(a, b) for a, b in pieces if b > a]
    longest = max(pieces, key=lambda piece: piece[1] - piece[0])
    kept = [(a, b) for a, b in pieces if long_enough(t, a, b)] or [longest]
    if not split:
        kept = [max(kept, key=lambda piece: piece[1] - piece[0])]
    spans = ", ".join(f"t = {at(a)}-{at(b - 1)} s" for a, b in kept)
    n_kept = sum(b - a for a, b in kept)
    note = (
        f"{trajectory.source}: {what}: {len(t) - n_kept} of {len(t)} rows dropped, "
        f"identified on {spans}"
    )
    if len(kept) == 1 and kept[0] == (0, len(t)):
        return [replace(trajectory, warnings=(*trajectory.warnings, code(note)))]
    result = []
    for a, b in kept:
        result.append(
            trajectory.rows(
                slice(a, b),
                source=f"{trajectory.source} t = {at(a)}-{at(b - 1)} s",
                warnings=(*trajectory.warnings, code(note)) if not result else (),
            )
        )
    return result


def without_position_steps(
    trajectory: Trajectory, model: RobotModel, *, split: bool = True
) -> list[Trajectory]:
    """``trajectory`` with its position steps (:mod:`physid.recordings.steps`: some joints jump
    while the others move on, an encoder reset or glitch) undone in the frame the torques chose,
    every row kept; when they chose none, the pieces between the steps that share the longest
    piece's offset (a step that comes back leaves the pieces before and after it at one offset:
    both are kept)."""
    from physid.recordings.steps import plan_steps

    plan = plan_steps(model, trajectory.t, trajectory.q, trajectory.tau)
    if plan is None:
        return [trajectory]
    t = np.asarray(trajectory.t, float)
    at = _stamps(t)
    names = trajectory.joint_names
    where = "; ".join(
        f"t = {at(r)} s ("
        + ", ".join(f"{names[k]} {step[k]:+.3g}" for k in np.flatnonzero(step))
        + ")"
        for r, step in zip(plan.rows, plan.steps, strict=True)
    )
    span = lambda k: f"t = {at(plan.pieces[k][0])}-{at(plan.pieces[k][1] - 1)} s"  # noqa: E731
    ranked = sorted(plan.residuals.items(), key=lambda item: item[1])
    agreement = ", ".join(
        f"{100 * r:.3g} % in the frame of {span(k)}" for k, r in ranked if np.isfinite(r)
    )
    compared = (
        f"with each joint's scale, friction and offset fitted, the URDF's torque leaves "
        f"{agreement} of the smoothed torque"
        if agreement
        else "too short to compare the frames by their torques"
    )
    what = (
        f"the positions of some joints step while the other joints move on smoothly (an "
        f"encoder reset, a homing offset or a glitch, not lost rows) at {where} [rad or m]; "
        f"{compared}"
    )
    record = {
        "source": trajectory.source,
        **(trajectory.row_repairs or {}),
        "position_steps": {
            "t": [float(t[r]) for r in plan.rows],
            "steps": [
                {names[k]: float(step[k]) for k in np.flatnonzero(step)} for step in plan.steps
            ],
            "frame": plan.how,
        },
    }
    if plan.corrected is not None:
        why = (
            "clearly best"
            if plan.how == "torques"
            else "no torque depends on the step: the longest piece's"
        )
        note = (
            f"{trajectory.source}: {what}: the rows in other frames were shifted into the "
            f"frame of {span(plan.frame)} ({why}; no row dropped)"
        )
        return [
            replace(
                trajectory,
                q=plan.corrected,
                row_repairs=record,
                warnings=(*trajectory.warnings, FRAME_SHIFT(note)),
            )
        ]
    what += (
        ": the torques cannot tell which side is right (no frame 2 x better), so the rows "
        "at the longest piece's offset are kept and the others dropped, a guess"
    )
    return _kept_pieces(replace(trajectory, row_repairs=record), plan.level_pieces, what, split)


def _without_stuck_torques(trajectory: Trajectory, *, split: bool = True) -> list[Trajectory]:
    """``trajectory`` without the rows where a torque column is stuck while the robot moves
    (:func:`physid.recordings.glitches.stuck_torque_runs`: a sensor or logger that stopped
    updating it), in the pieces between them. A column stuck in every row is kept and named:
    that joint's torque was not logged in this recording; where it is so in every training
    recording the fit leaves that joint's torque out (:func:`unlogged_torque_joints`). A run at
    a limit the column holds often (:func:`_with_saturation_note`) is an actuator, not a sensor,
    and is kept."""
    from physid.recordings.glitches import STUCK_MIN_S, saturated_torques, stuck_torque_runs

    # an actuator held at its limit holds one value too, and that torque was applied
    limits = {(s.column, s.value) for s in saturated_torques(trajectory.tau)}
    runs = [
        r
        for r in stuck_torque_runs(trajectory.t, trajectory.q, trajectory.tau)
        if (r.column, r.value) not in limits
    ]
    if not runs:
        return [trajectory]
    n = trajectory.n_samples
    names = trajectory.joint_names
    whole = [r for r in runs if r.stop - r.start == n]
    if whole:
        listed = ", ".join(f"{names[r.column]} ({r.value:g})" for r in whole)
        trajectory = replace(
            trajectory,
            warnings=(
                *trajectory.warnings,
                FROZEN_TORQUE(
                    f"{trajectory.source}: the torque of {listed} holds one value in every row "
                    "while the robot moves: not logged? (a joint so in every training recording is "
                    "left out of the fit; otherwise give fit_joints without it)"
                ),
            ),
        )
    runs = [r for r in runs if r.stop - r.start < n]
    if not runs:
        return [trajectory]
    t = np.asarray(trajectory.t, float)
    at = _stamps(t)
    stuck = np.zeros(n, dtype=bool)
    for run in runs:
        stuck[run.start : run.stop] = True
    edges = np.flatnonzero(np.diff(np.r_[0, (~stuck).astype(int), 0]))
    pieces = list(zip(edges[::2], edges[1::2], strict=True))
    if not pieces:
        return [trajectory]
    listed = "; ".join(
        f"{names[r.column]}'s torque holds {r.value:.6g} from t = {at(r.start)} to "
        f"{at(r.stop - 1)} s"
        for r in runs[:MAX_LISTED_RUNS]
    ) + (f"; and {len(runs) - MAX_LISTED_RUNS} more" if len(runs) > MAX_LISTED_RUNS else "")
    what = (
        f"a torque stopped changing while the robot moved (a sensor or logger that froze "
        f"one column; no measured torque holds one value to the bit for {STUCK_MIN_S:g} "
        f"s): {listed}"
    )
    record = {
        "source": trajectory.source,
        **(trajectory.row_repairs or {}),
        "stuck_torques": [
            {
                "joint": names[r.column],
                "value": r.value,
                "t": [float(t[r.start]), float(t[r.stop - 1])],
                "rows": r.stop - r.start,
            }
            for r in runs
        ],
    }
    return _kept_pieces(replace(trajectory, row_repairs=record), pieces, what, split, FROZEN_TORQUE)


def _with_saturation_note(trajectory: Trajectory) -> Trajectory:
    """``trajectory`` with a warning naming the torque columns that sit at their limit
    (:func:`physid.recordings.glitches.saturated_torques`). The rows are kept: a clipped torque
    is still the torque the actuator applied, and least squares is not biased by it; but the
    filtered motion cannot follow a torque that chatters between its limits, which leaves that
    joint's error high, and the user should know why."""
    from physid.recordings.glitches import saturated_torques

    found = saturated_torques(trajectory.tau)
    if not found:
        return trajectory
    names = trajectory.joint_names
    listed = ", ".join(
        f"{names[s.column]} at {s.value:.6g} in {100 * s.rows / s.n_rows:.1f} % of the rows"
        for s in found
    )
    note = (
        f"{trajectory.source}: torques that sit exactly at their largest or smallest value "
        f"(an actuator at its torque limit): {listed}. Kept as logged (a clipped torque is still "
        "the torque applied); where it chatters between its limits, that joint's error is high"
    )
    return replace(trajectory, warnings=(*trajectory.warnings, TORQUE_AT_LIMIT(note)))


def _without_duplicates(trajectory: Trajectory, duplicates: np.ndarray, first_row: int):
    rows = np.flatnonzero(duplicates) + first_row
    listed = ", ".join(str(r) for r in rows[:5]) + (" ..." if rows.size > 5 else "")
    note = (
        f"{trajectory.source}: {rows.size} rows dropped as exact copies of the row before "
        f"them (rows {listed})"
    )
    record = {
        "source": trajectory.source,
        **(trajectory.row_repairs or {}),
        "duplicate_rows_dropped": rows.tolist(),
    }
    return trajectory.rows(
        np.flatnonzero(~duplicates),
        row_repairs=record,
        warnings=(*trajectory.warnings, DUPLICATE_ROWS(note)),
    )


def repaired_samples(trajectory: Trajectory, model: RobotModel, first_row: int = 1) -> Trajectory:
    """``trajectory`` with its revolute angles unwrapped where they were logged modulo one turn
    and its isolated corrupt samples repaired (:mod:`physid.recordings.glitches`); what was
    done is kept in ``row_repairs`` and, if anything was, in warnings. Rows are numbered as in
    the file (``first_row``: the first's)."""
    from physid.recordings.glitches import repair_corrupt_samples, unwrap_angles

    revolute = revolute_mask(model, trajectory.joint_names)
    q, wraps = unwrap_angles(trajectory.q, revolute)
    q, tau, repair = repair_corrupt_samples(q, trajectory.tau, trajectory.joint_names)
    names = trajectory.joint_names
    record = {
        "source": trajectory.source,
        **(trajectory.row_repairs or {}),
        "angles_unwrapped": {names[k]: n for k, n in wraps.items()},
        **repair.as_dict(first_row),
    }
    notes = []
    if wraps:
        listed = ", ".join(f"{names[k]} ({n} wraps)" for k, n in wraps.items())
        notes.append(
            f"{trajectory.source}: angles that step by a full turn between two rows "
            f"(logged modulo one turn, or a turn counter misread), unwrapped: {listed}"
        )
    if repair.samples:
        notes.append(repair.note(trajectory.source, first_row))
    if not notes:
        return replace(trajectory, row_repairs=record)
    said = (*trajectory.warnings, *(SAMPLES_REPAIRED(n) for n in notes))
    return replace(trajectory, q=q, tau=tau, row_repairs=record, warnings=said)


def checked_time_base(trajectory: Trajectory) -> Trajectory:
    """``trajectory`` on the time base its own motion supports (:func:`physid.recordings.timebase.
    check_time_base`); the finding is kept in ``time_base`` and, if anything changed, in a
    warning."""
    from physid.recordings.timebase import check_time_base

    keep, t, check = check_time_base(np.asarray(trajectory.t, float), trajectory.q)
    record = {"source": trajectory.source, **check.as_dict()}
    if not check.changed:
        return replace(trajectory, time_base=record)
    note = check.note(trajectory.source)
    said = (*trajectory.warnings, TIME_BASE(note))
    return trajectory.rows(keep, t=t, warnings=said, time_base=record)


def rows_with_motion_earlier(t: np.ndarray, delay_s: float, source: str | None) -> np.ndarray:
    """The rows whose motion can be read ``delay_s`` earlier, ``t - delay_s`` within the
    recording (a torque delay compensated: physid.offline.choose.delay); InputError naming the
    recording when fewer than 3 remain."""
    t = np.asarray(t, dtype=float)
    shifted = t - delay_s
    kept = np.flatnonzero((shifted >= t[0]) & (shifted <= t[-1]))
    if kept.size < 3:
        raise InputError(
            f"the recording ({t[-1] - t[0]:.3g} s) is too short to compensate a "
            f"torque delay of {1e3 * delay_s:.3g} ms",
            source=source,
        )
    return kept


def interpolated(at: np.ndarray, t: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``values`` (N, n) sampled at ``t`` (N,), linearly interpolated at the times ``at``."""
    columns = [np.interp(at, t, column) for column in np.asarray(values).T]
    return np.column_stack(columns).reshape(len(at), np.shape(values)[1])


def check_some_torque(tau: np.ndarray, source: str) -> None:
    """A recording whose torques are all zero carries nothing to identify from."""
    if not np.any(tau):
        raise InputError(
            "every torque is zero: nothing to identify from (check the tau_/i_ columns)",
            source=source,
        )


def trajectory_block(
    table: Table,
    model: RobotModel,
    t: np.ndarray,
    *,
    drive_gains: dict[str, float] | None = None,
    allow_large_angles: bool = False,
    angles_in_degrees: bool = False,
) -> Trajectory:
    """The checks of :func:`trajectory_from_table` that hold row by row (columns, finiteness,
    magnitudes, units), for a whole table or one block of a long file
    (:mod:`physid.recordings.streamed`); the time stamps ``t`` are checked by the caller.
    ``angles_in_degrees``: angles converted to radians first (:func:`_in_radians`)."""
    gains = dict(drive_gains or {})
    motor_side = model.transmission is not None and any(c.startswith("qm_") for c in table.columns)
    _check_unknown_joints(table, model, motor_side)
    _check_configured_columns(table, model, gains, motor_side)
    if motor_side:
        motors = model.transmission.motor_names
        q_cols = [f"qm_{m}" for m in motors]
        q_motor = np.column_stack([_require(table, c, "motor position") for c in q_cols])
        tau_motor = np.column_stack([_effort(table, m, "taum_", gains) for m in motors])
        if angles_in_degrees:  # motor angles: every motor turns (a transmission maps rad to rad)
            q_motor = np.radians(q_motor)
        q = model.transmission.joint_positions(q_motor)
        tau = model.transmission.joint_torques(tau_motor)
        used = set(q_cols) | {f"taum_{m}" for m in motors} | {f"i_{m}" for m in motors}
        dq = ddq = None
    else:
        joints = model.joint_names
        q = np.column_stack([_require(table, f"q_{j}", "joint position") for j in joints])
        fitted = model.fitted
        tau = np.column_stack(
            [
                _effort(table, j, "tau_", gains)
                if fitted[k] or {f"tau_{j}", f"i_{j}"} & set(table.columns)
                else np.zeros(table.n_rows)  # not fitted (config fit_joints): may be absent
                for k, j in enumerate(joints)
            ]
        )
        dq = _optional_block(table, "dq_", joints)
        ddq = _optional_block(table, "ddq_", joints)
        if angles_in_degrees:
            q, dq, ddq = (_in_radians(block, model) for block in (q, dq, ddq))
        used = {f"{p}{j}" for p in JOINT_PREFIXES for j in joints}
    _check_finite(table, sorted(used & set(table.columns)))
    _check_magnitude(table, sorted(used & set(table.columns)))
    if not allow_large_angles:
        _check_radians(q, model, table.source)
    unknown = sorted(set(table.columns) - used - {"t"})
    warnings = tuple(READING_NOTE(f"{table.source}: {note}") for note in table.notes)
    if unknown:
        warnings += (
            READING_NOTE(
                f"{table.source}: ignored unknown column(s): {', '.join(unknown)}", names=unknown
            ),
        )
    return Trajectory(t, q, tau, model.joint_names, dq, ddq, table.source, warnings)


def _in_radians(block: np.ndarray | None, model: RobotModel) -> np.ndarray | None:
    """Revolute joints' columns of ``block`` (angles, rates or accelerations, one column per
    joint) from degrees to radians; prismatic joints' (m) as they are."""
    if block is None:
        return None
    revolute = revolute_mask(model, model.joint_names)
    out = np.asarray(block, float).copy()
    out[:, revolute] = np.radians(out[:, revolute])
    return out


def _optional_block(table: Table, prefix: str, joints: tuple[str, ...]) -> np.ndarray | None:
    present = [f"{prefix}{j}" in table.columns for j in joints]
    if not any(present):
        return None
    if not all(present):
        missing = [f"{prefix}{j}" for j, ok in zip(joints, present, strict=True) if not ok]
        raise InputError(
            f"columns {prefix}* are given for some joints only; missing {', '.join(missing)}",
            source=table.source,
        )
    return np.column_stack([table.columns[f"{prefix}{j}"] for j in joints])


def _check_configured_columns(
    table: Table, model: RobotModel, gains: dict[str, float], motor_side: bool
) -> None:
    """Config sections that the recording gives nothing to act on are errors, not silently
    unused: a transmission without motor-side columns would still add its coupled-motor
    parameters to the fit, and a drive gain without its current column means the config was
    written for other data."""
    if model.transmission is not None and not motor_side:
        motors = model.transmission.motor_names
        raise InputError(
            f"config transmission: motors {', '.join(motors)} are configured but the recording "
            f"has no motor-side position column (qm_{motors[0]}, ...): for joint-side data "
            "(q_/tau_ columns) remove the transmission section",
            source=table.source,
        )
    check_gains_have_currents(table, gains)


def check_gains_have_currents(table: Table, gains: Mapping[str, float]) -> None:
    """A drive gain without its current column ``i_<joint>`` is an error: the config was
    written for other data."""
    unused = [name for name in gains if f"i_{name}" not in table.columns]
    if unused:
        raise InputError(
            f"config drive_gains: no current column for {', '.join(unused)} (expected "
            f"i_{unused[0]}, ...); a gain applies to a current column only: remove it, or give "
            "the currents",
            source=table.source,
        )


def _check_unknown_joints(table: Table, model: RobotModel, motor_side: bool) -> None:
    """A column naming a joint (motor) the model does not have is an error while one of the
    model's own position columns is missing (a misspelt name); otherwise other joints' columns
    (a gripper's fingers in a ROS ``JointState``) are ignored, with a warning
    (:func:`trajectory_block`)."""
    known = set(model.joint_names)
    motors = set(model.transmission.motor_names) if model.transmission is not None else set()
    complete = all(f"q_{joint}" in table.columns for joint in model.joint_names)
    for column in table.columns:
        for prefix in ("ddq_", "dq_", "qm_", "taum_", "q_", "tau_", "i_"):
            if not column.startswith(prefix):
                continue
            name = column[len(prefix) :]
            motor = prefix in ("qm_", "taum_")
            allowed = motors if motor else known | motors
            if name not in allowed and not (complete and not motor):
                kind = "motor" if prefix in ("qm_", "taum_") else "joint"
                choices = sorted(allowed) or ["(none: no transmission configured)"]
                bare = _UNIT_SUFFIX.match(name)
                unit = (
                    f" (the name carries a unit: rename the column '{prefix}{bare.group(1)}')"
                    if bare and bare.group(1) in allowed
                    else ""
                )
                hint = unit or _affix_hint(table, prefix, motors if motor else known)
                raise InputError(
                    f"column '{column}' names {kind} '{name}', which is not in the model "
                    f"{model.source}{hint}; known: {', '.join(choices)}",
                    source=table.source,
                )
            break


def _affix_hint(table: Table, prefix: str, allowed: set[str]) -> str:
    """Where every name of the model appears in the columns of ``prefix`` inside one common
    affix (a logger that namespaces its joints: ``q_ur5_shoulder_pan_joint``, ``q_joint1_pos``),
    the affix, said (the columns are otherwise only "not in the model"); else ''."""
    names = [c[len(prefix) :] for c in table.columns if c.startswith(prefix)]
    affixes = set()
    for joint in allowed:
        found = [n for n in names if joint in n and n != joint]
        if len(found) != 1:
            return ""
        head, _, tail = found[0].partition(joint)
        affixes.add((head, tail))
    if len(affixes) != 1:
        return ""
    head, tail = affixes.pop()
    where = " and ".join(
        [f"the prefix '{head}'"] * bool(head) + [f"the suffix '{tail}'"] * bool(tail)
    )
    return (
        f" (every joint of the model is in the columns with {where}: rename the columns "
        "to the model's joint names, or map them with a YAML recording manifest, "
        "examples/kuka_lwr4/measurements_1.yaml)"
    )


def _check_radians(q: np.ndarray, model: RobotModel, source: str) -> None:
    for k, joint in enumerate(model.joint_names):
        if not is_revolute(model, joint):
            continue
        peak = float(np.max(np.abs(q[:, k])))
        if peak > _MAX_PLAUSIBLE_ANGLE_RAD:
            from physid.recordings.glitches import full_turn_steps

            turn = np.flatnonzero(full_turn_steps(q[:, k]))
            if turn.size:  # no motion turns a joint by a full turn between two samples
                step = q[turn[0] + 1, k] - q[turn[0], k]
                rows = ", ".join(f"{r + 1}-{r + 2}" for r in turn[:5])
                rows += ", ..." if turn.size > 5 else ""
                raise InputError(
                    f"position of joint '{joint}' reaches {peak:.4g}, more than 2*pi, and steps "
                    f"by a full turn ({step:+.4g} rad) between two rows, "
                    f"{turn.size} times (between data rows {rows}, counted from 1 after "
                    "the header): a turn counter misread or a position glitch, not "
                    "motion; fix those rows (or set allow_large_angles: true if the angles are "
                    "right)",
                    source=source,
                )
            if is_unbounded(model, joint):
                continue  # it may turn any number of times (suspect checks its speed)
            raise InputError(
                f"position of joint '{joint}' reaches {peak:.4g}, more than 2*pi: it looks like "
                "degrees (or motor-side angles without a transmission): set angle_unit: "
                "degrees in the config (or convert to radians), or set allow_large_angles: "
                "true if this is intended",
                source=source,
            )


def trajectory_csv_text(trajectory: Trajectory) -> str:
    """Contract CSV text of a trajectory: t, q_*, optional dq_* and ddq_*, tau_*."""
    blocks = [
        ("q_", trajectory.q),
        ("dq_", trajectory.dq),
        ("ddq_", trajectory.ddq),
        ("tau_", trajectory.tau),
    ]
    columns = {"t": trajectory.t}
    for prefix, block in blocks:
        if block is not None:
            names = (f"{prefix}{j}" for j in trajectory.joint_names)
            columns.update(zip(names, block.T, strict=True))
    return table_csv_text(columns)


def write_trajectory_csv(path: str | Path, trajectory: Trajectory) -> Path:
    """Write a trajectory as a contract CSV file, atomically."""
    return write_text_atomic(path, trajectory_csv_text(trajectory))


def load_trajectory(path: str | Path, model: RobotModel, **options) -> Trajectory:
    """Read a file (or manifest) and return its validated joint-side trajectory."""
    return trajectory_from_table(read_table(path), model, **options)


def load_segments(path: str | Path, model: RobotModel, **options) -> list[Trajectory]:
    """Read a file (or manifest): its validated joint-side trajectory, split where its time
    stamps have gaps (:func:`trajectory_segments`)."""
    return trajectory_segments(read_table(path), model, **options)


def _row_span(first: int):  # noqa: ANN202
    """``rows(a, b)``: a piece's rows as the file numbers them."""
    return lambda a, b: f"rows {a + first}-{b - 1 + first}"


def _gap_note(source: str, t: np.ndarray, pieces: list, kept: list, first: int) -> str:
    """The one line that says where the time stamps have gaps and which pieces were kept."""
    rows = _row_span(first)
    gaps = [t[a] - t[a - 1] for a, _ in pieces[1:]]
    dropped = [rows(a, b) for a, b in pieces if (a, b) not in kept]
    spans = ", ".join(rows(a, b) for a, b in kept)
    at_row = pieces[1 + int(np.argmax(gaps))][0] + first
    kept_said = (
        f"identified as {len(kept)} separate recordings ({spans})"
        if len(kept) > 1
        else f"identified on {spans}"
    )
    dropped_said = f"; dropped as shorter than {MIN_SEGMENT_S:g} s: {', '.join(dropped)}"
    return (
        f"{source}: {len(gaps)} gap{'s' if len(gaps) > 1 else ''} in the time stamps "
        f"(longest {max(gaps):.4g} s, at row {at_row}): {kept_said}"
        + (dropped_said if dropped else "")
        + "; physid does not fill gaps"
    )
