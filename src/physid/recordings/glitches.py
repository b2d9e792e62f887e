"""Sample faults of a recording, found and repaired before anything is filtered: revolute angles
wrapped into one turn (or a full turn off for a while), and isolated corrupt samples.

A continuous joint logged modulo one turn (ROS ``JointState`` of a continuous joint often is, in
[-pi, pi)) jumps by 2 pi whenever it crosses the seam; differentiated, each jump is an impulse of
acceleration that a consistent fit cannot explain. A revolute column whose every value lies within
one turn and that steps by 2 pi (within :data:`WRAP_TOLERANCE_RAD`) is unwrapped
(:func:`unwrap_angles`): no motion turns a joint by nearly a full turn between two samples.

Real logs carry single-sample faults that simulations never have: a dropped encoder packet read
as zero, a flipped bit in a torque word, a current logged in the wrong unit for one row. One such
sample, differentiated twice and given to least squares, moves every parameter, while the fit's
status stays ``ok``.

A sample is *corrupt* when it departs from the running median of the samples around it (five for
positions, seven for torques) by more than a threshold times that signal's ordinary step
(:func:`step_scale`). A running median keeps every step edge and every monotone stretch of a signal
exactly (those are its root signals), so a friction jump at a velocity reversal or a sample-and-hold
staircase departs from it by nothing; a departure of up to two (positions) or three (torques)
samples that comes back is what it removes. The thresholds sit far above what clean real recordings
show (docs/benchmarks.md, "Why the defaults are what they are"). The torques take the wider median,
as a logger that repeats a bad word corrupts three samples and their threshold keeps a factor of
three to spare; the positions keep five, as a median of seven would leave clean positions much
closer to their threshold. Real transients (a hard stop, a controller's kick) are kept; only
departures that no motion can produce are repaired.

A corrupt sample is replaced by linear interpolation between its nearest sound neighbours in the
same column (the row and its other columns are kept: one bad word does not make a bad row), and
reported by row, column, value and replacement.

A *stuck torque* holds one value to the bit for a second or more while the robot moves
(:func:`stuck_torque_runs`): a sensor or a logger that stopped updating one column. No real
torque does that (even a coarsely quantised current changes within a fraction of a second), and a
frozen column biases the fit while its status stays ``ok``. A torque of exactly 0 is not stuck: it
is a motor switched off, and the motion then is free, or a passive joint, whose torque is truly 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from physid.recordings.running import running_median

WRAP_TOLERANCE_RAD = 0.5  # a step within this of +-2 pi is a wrap, not motion
POSITION_MEDIAN_WIDTH = 5  # removes departures up to 2 samples wide
TORQUE_MEDIAN_WIDTH = 7  # ... up to 3 samples wide (module docstring)
# departure / ordinary step beyond which a sample is corrupt (module docstring: clean real
# recordings reach 0.33 in positions and 16 in torques). A smooth position departs from the
# median of five by at most about one step, at a turning point; a zero read on a slow log can
# be as few as 16 steps from its neighbours, so the position threshold stays well below that.
POSITION_THRESHOLD = 5.0
TORQUE_THRESHOLD = 50.0
ORDINARY_STEP_PERCENTILE = 99.0
MAX_LISTED = 5  # rows named in the one-line note (every sample in params.json)


@dataclass(frozen=True)
class CorruptSample:
    row: int  # 0-based row of the recording
    column: str  # e.g. "q_joint1", "tau_joint1"
    value: float
    replacement: float
    departure_steps: float  # |value - running median| / the column's ordinary step

    def as_dict(self, first_row: int = 1) -> dict:
        return {
            "row": self.row + first_row,
            "column": self.column,
            "value": self.value,
            "replacement": self.replacement,
            "departure_in_ordinary_steps": self.departure_steps,
        }


@dataclass(frozen=True)
class GlitchRepair:
    """What :func:`repair_corrupt_samples` found and did on one recording."""

    n_rows: int
    samples: tuple[CorruptSample, ...] = field(default=())

    def note(self, source: str, first_row: int = 1) -> str:
        """One line for the terminal and the report."""
        by_row: dict[int, list[CorruptSample]] = {}
        for sample in self.samples:
            by_row.setdefault(sample.row, []).append(sample)
        listed = "; ".join(
            f"row {row + first_row} "
            + ", ".join(f"{s.column} {s.value:.6g} -> {s.replacement:.6g}" for s in samples[:2])
            + (f" and {len(samples) - 2} more columns" if len(samples) > 2 else "")
            for row, samples in list(by_row.items())[:MAX_LISTED]
        )
        more = f"; and {len(by_row) - MAX_LISTED} more rows" if len(by_row) > MAX_LISTED else ""
        rows = len(by_row)
        return (
            f"{source}: {len(self.samples)} corrupt samples in {rows} of {self.n_rows} rows "
            f"repaired ({listed}{more}): each departed from its neighbours by more than "
            f"{POSITION_THRESHOLD:g} (positions) or {TORQUE_THRESHOLD:g} (torques) times the "
            "signal's ordinary step (99th percentile of |x[k+1] - x[k]|), or lay in a row "
            "corrupt in most of its columns or whose torques all read 0 (a dropped record), "
            "and was replaced by interpolating its neighbours "
            "(config corrupt_samples: keep leaves them)"
        )

    def as_dict(self, first_row: int = 1) -> dict:
        return {
            "rows": self.n_rows,
            "corrupt_samples_repaired": [s.as_dict(first_row) for s in self.samples],
            "position_threshold_steps": POSITION_THRESHOLD,
            "torque_threshold_steps": TORQUE_THRESHOLD,
        }


def step_scale(x: np.ndarray) -> np.ndarray:
    """Per column of ``x`` (N, n): the ordinary step, the 99th percentile of ``|x[k+1] - x[k]|``,
    floored at the smallest non-zero step (a still, quantised signal that toggles by one quantum
    now and then is not corrupt) and at a relative 1e-12."""
    steps = np.abs(np.diff(x, axis=0))
    ordinary = np.percentile(steps, ORDINARY_STEP_PERCENTILE, axis=0)
    positive = np.where(steps > 0, steps, np.inf)
    smallest = np.min(positive, axis=0)
    smallest = np.where(np.isfinite(smallest), smallest, 0.0)
    floor = 1e-12 * np.maximum(np.max(np.abs(x), axis=0), 1.0)
    return np.maximum(np.maximum(ordinary, smallest), floor)


def corrupt_mask(
    x: np.ndarray, threshold: float, width: int = POSITION_MEDIAN_WIDTH
) -> tuple[np.ndarray, np.ndarray]:
    """``(corrupt (N, n) bool, departure in ordinary steps (N, n))`` of the columns of ``x``,
    against their running median of ``width`` samples."""
    # "mirror" reflects about the end sample (x2, x1, x0, x1, x2): a corrupt first or last
    # sample is judged against real neighbours, not against copies of itself
    median = running_median(x, width)
    departure = np.abs(x - median)
    # ... but a steep monotone stretch at an end (a servo catching the arm in the first rows)
    # is no root signal of the mirrored median and departs from it by many ordinary steps; such
    # a sample continues the straight line of its two inner neighbours, a corrupt one does not
    half = min(width // 2, max(len(x) - 2, 0) // 2)
    for k in range(half):
        start = np.abs(x[k] - (2.0 * x[k + 1] - x[k + 2]))
        end = np.abs(x[-1 - k] - (2.0 * x[-2 - k] - x[-3 - k]))
        departure[k] = np.minimum(departure[k], start)
        departure[-1 - k] = np.minimum(departure[-1 - k], end)
    departure = departure / step_scale(x)
    return departure > threshold, departure


def _interpolated(x: np.ndarray, corrupt: np.ndarray) -> np.ndarray:
    repaired = x.copy()
    index = np.arange(len(x))
    for k in np.flatnonzero(corrupt.any(axis=0)):
        sound = ~corrupt[:, k]
        repaired[corrupt[:, k], k] = np.interp(index[corrupt[:, k]], index[sound], x[sound, k])
    return repaired


MAX_ZERO_ROWS = 3  # an all-zero torque record this short between others is a dropped packet


def corrupt_rows(q_corrupt: np.ndarray, tau_corrupt: np.ndarray, tau: np.ndarray):
    """``(whole (N,), torques (N,))`` bool: the rows that are corrupt records, every sample of which
    is replaced, and those whose torques are. A row whose positions are corrupt in most columns is
    corrupt whole: a packet dropped and read as zeros departs in every position, but a small torque
    read as 0 departs from its neighbours by less than the torque threshold, and kept, those zeros
    alone move the masses. A row whose torques are corrupt in most columns, or a run of at most
    :data:`MAX_ZERO_ROWS` rows whose every torque reads exactly 0 (its positions may be sound;
    between rows that do not, or at either end) has its torques replaced; a longer run of zero
    torques is a motor switched off."""

    def most(corrupt: np.ndarray) -> np.ndarray:
        width = corrupt.shape[1]
        if width < 2:
            return np.zeros(len(corrupt), dtype=bool)
        return corrupt.sum(axis=1) >= max(2, (width + 1) // 2)

    torques = most(tau_corrupt)
    if tau.shape[1] >= 2 and len(tau):
        zero = np.all(tau == 0.0, axis=1)
        edges = np.flatnonzero(np.diff(np.r_[0, zero.astype(int), 0]))
        for start, stop in zip(edges[::2], edges[1::2], strict=True):
            # at either end too: a simulator's logger records the torque before the first
            # step as 0 (Drake's VectorLogSink)
            if stop - start <= MAX_ZERO_ROWS:
                torques[start:stop] = True
    whole = most(q_corrupt)
    return whole, torques | whole


def repair_corrupt_samples(
    q: np.ndarray, tau: np.ndarray, joint_names: tuple[str, ...] | list[str]
) -> tuple[np.ndarray, np.ndarray, GlitchRepair]:
    """``(q, tau, what was done)`` with every corrupt sample (module docstring) of the positions
    ``q`` (N, n) and torques ``tau`` (N, n) replaced; the inputs are not modified."""
    n_rows = len(q)
    if n_rows < 2 * TORQUE_MEDIAN_WIDTH:
        return q, tau, GlitchRepair(n_rows)
    found = []
    blocks = []
    signals = [
        (prefix, np.asarray(x, float), *corrupt_mask(np.asarray(x, float), threshold, width))
        for prefix, x, threshold, width in (
            ("q_", q, POSITION_THRESHOLD, POSITION_MEDIAN_WIDTH),
            ("tau_", tau, TORQUE_THRESHOLD, TORQUE_MEDIAN_WIDTH),
        )
    ]
    rows = corrupt_rows(signals[0][2], signals[1][2], signals[1][1])
    for (prefix, x, corrupt, departure), bad in zip(signals, rows, strict=True):
        corrupt = corrupt | bad[:, None]
        repaired = _interpolated(x, corrupt) if corrupt.any() else x
        blocks.append(repaired)
        for row, k in zip(*np.nonzero(corrupt), strict=True):
            column = f"{prefix}{joint_names[k]}"
            value, replacement = float(x[row, k]), float(repaired[row, k])
            found.append(
                CorruptSample(int(row), column, value, replacement, float(departure[row, k]))
            )
    found.sort(key=lambda s: (s.row, s.column))
    return blocks[0], blocks[1], GlitchRepair(n_rows, tuple(found))


def full_turn_steps(column: np.ndarray) -> np.ndarray:
    """(N - 1,) bool: the steps of a revolute column within :data:`WRAP_TOLERANCE_RAD` of
    +-2 pi, which no motion makes between two samples (a wrap, or a turn counter misread)."""
    return np.abs(np.abs(np.diff(column)) - 2.0 * np.pi) < WRAP_TOLERANCE_RAD


def unwrap_angles(
    q: np.ndarray, revolute: np.ndarray | list[bool]
) -> tuple[np.ndarray, dict[int, int]]:
    """``(q, {column: wraps undone})``: every revolute column of ``q`` (N, n) with at least one
    step within :data:`WRAP_TOLERANCE_RAD` of +-2 pi, either logged modulo one turn (all values
    within an interval of 2 pi + that tolerance: unwrapped) or carrying rows a full turn off
    that come back (a turn counter misread for a while, which left in reads as a column in
    degrees: those steps undone, when that leaves the column within one turn); the others as
    they were."""
    unwrapped = q
    wraps = {}
    one_turn = 2.0 * np.pi + WRAP_TOLERANCE_RAD
    for k in np.flatnonzero(np.asarray(revolute, dtype=bool)):
        column = q[:, k]
        jumps = full_turn_steps(column)
        if not np.any(jumps):
            continue
        if np.ptp(column) <= one_turn:
            fixed = np.unwrap(column)
        else:  # only the full-turn steps undone, and only if that brings the column into a turn
            turns = np.where(jumps, np.round(np.diff(column) / (2.0 * np.pi)), 0.0)
            fixed = column - 2.0 * np.pi * np.r_[0.0, np.cumsum(turns)]
            if np.ptp(fixed) > one_turn:
                continue
        if unwrapped is q:
            unwrapped = q.copy()
        unwrapped[:, k] = fixed
        wraps[int(k)] = int(np.sum(jumps))
    return unwrapped, wraps


# A torque column holding one value this long (and this many rows) while some joint moves by this
# share of its span over the recording is stuck (module docstring: real runs reach 0.18 s)
STUCK_MIN_S = 1.0
STUCK_MIN_ROWS = 50
STUCK_MOTION_SHARE = 0.05
MOVING_SPAN = 1e-3  # [rad or m] a joint spanning less over a recording did not move
# ... nor one spanning less than this many times its position noise (moving_joints): white noise
# of std s spans about 2 s sqrt(2 ln N), 9.6 s over 1e5 samples and 10.5 s over 1e6, and a still
# joint on a 12-bit encoder (1.5 mrad a tick) toggles over one or two ticks
NOISE_SPANS = 15.0


def position_noise(q: np.ndarray, order: int = 2) -> np.ndarray:
    """(n,) the positions' noise per row: the robust spread of their differences of ``order``
    over sqrt(binomial(2 order, order)) (white noise: sqrt 6 for the second), floored at the
    smallest non-zero step (an encoder's quantum). Motion adds about ``(omega dt)^order`` of
    its amplitude to the differences: a higher order reads the noise of faster motion."""
    difference = np.diff(q, n=order, axis=0)
    if not len(difference):  # fewer rows than the order needs (a 3-row log)
        return encoder_quantum(q)
    spread = 1.4826 * np.median(np.abs(difference - np.median(difference, axis=0)), axis=0)
    spread /= np.sqrt(math.comb(2 * order, order))
    return np.maximum(spread, encoder_quantum(q))


QUANTUM_SHARE = 0.9  # of the non-zero steps that must be whole multiples of the smallest


def encoder_quantum(q: np.ndarray) -> np.ndarray:
    """(n,) per column of ``q`` (N, n), its encoder's quantum: the smallest non-zero step when
    at least :data:`QUANTUM_SHARE` of the non-zero steps are whole multiples of it (within 5 %),
    else 0. A smooth motion sampled in step with its period (a noiseless sine, 10 samples a
    period) has few step sizes, the smallest of them large, and no quantum: taken for one, it
    floors the noise so high that the motion reads as still."""
    steps = np.abs(np.diff(q, axis=0))
    out = np.zeros(q.shape[1])
    for k in range(q.shape[1]):
        moved = steps[:, k][steps[:, k] > 0]
        if not moved.size:
            continue
        ratio = moved / moved.min()
        if np.mean(np.abs(ratio - np.round(ratio)) <= 0.05) >= QUANTUM_SHARE:
            out[k] = moved.min()
    return out


def moving_joints(q: np.ndarray) -> np.ndarray:
    """(n,) bool: whether each joint moves in the positions ``q`` (N, n): its span is at least
    :data:`MOVING_SPAN` and :data:`NOISE_SPANS` times its :func:`position_noise` (the noise, or
    an encoder's tick). A still joint whose noise or ticks span more than :data:`MOVING_SPAN`
    does not move: its speed is noise, as often above as below any share of its own RMS.

    The noise is read from fourth differences, to which a sine adds ``(omega dt)^4`` of its
    amplitude: one sampled fewer than about 6 times a period would read as still (12 with the
    second differences)."""
    q = np.asarray(q, dtype=float)
    if len(q) < 5:
        return np.zeros(q.shape[1], dtype=bool)
    return moves(np.ptp(q, axis=0), motion_noise(q))


def motion_noise(q: np.ndarray) -> np.ndarray:
    """(n,) the position noise :func:`moving_joints` compares the span with: from fourth
    differences (module constants there)."""
    return position_noise(q, order=4)


def moves(span: np.ndarray, noise: np.ndarray) -> np.ndarray:
    """(n,) bool: a span of positions that is motion, beyond the still bound and
    :data:`NOISE_SPANS` x the ``noise`` (:func:`motion_noise`) of its joint; the rule of
    :func:`moving_joints`, for spans and noise read block by block (a streamed recording)."""
    return (span >= MOVING_SPAN) & (span >= NOISE_SPANS * noise)


@dataclass(frozen=True)
class StuckRun:
    """Rows ``start:stop`` of torque column ``column`` that hold ``value`` while the robot
    moves."""

    column: int
    start: int
    stop: int  # exclusive
    value: float


def stuck_torque_runs(t: np.ndarray, q: np.ndarray, tau: np.ndarray) -> list[StuckRun]:
    """The stuck stretches (module docstring) of the torque columns of ``tau`` (N, n), with
    stamps ``t`` (N,) [s] and positions ``q`` (N, n), in column then row order."""
    t, q, tau = np.asarray(t, float), np.asarray(q, float), np.asarray(tau, float)
    span = np.ptp(q, axis=0) if len(q) else np.zeros(q.shape[1])
    moving = moving_joints(q)
    runs = []
    for k in range(tau.shape[1]):
        starts = np.r_[0, np.flatnonzero(np.diff(tau[:, k]) != 0.0) + 1]
        stops = np.r_[starts[1:], len(tau)]
        long = (stops - starts >= STUCK_MIN_ROWS) & (t[stops - 1] - t[starts] >= STUCK_MIN_S)
        long &= tau[starts, k] != 0.0  # a motor switched off (module docstring)
        for a, b in zip(starts[long], stops[long], strict=True):
            share = np.ptp(q[a:b][:, moving], axis=0) / span[moving] if np.any(moving) else []
            if np.any(np.asarray(share) >= STUCK_MOTION_SHARE):
                runs.append(StuckRun(k, int(a), int(b), float(tau[a, k])))
    return runs


# A torque that sits at its largest (or smallest) value to the bit in this share of the rows is an
# actuator at its limit. No real torque does that for more than a few rows, while a servo
# chattering at its force range sits there in a large share of them.
SATURATED_SHARE = 0.02
SATURATED_MIN_ROWS = 20


@dataclass(frozen=True)
class Saturation:
    """Torque column ``column`` sits at its extreme ``value`` in ``rows`` of ``n_rows`` rows."""

    column: int
    value: float
    rows: int
    n_rows: int


def saturated_torques(tau: np.ndarray) -> list[Saturation]:
    """The extremes of the torque columns of ``tau`` (N, n) that hold in at least
    :data:`SATURATED_SHARE` and :data:`SATURATED_MIN_ROWS` of the rows, in column order. Zero is
    no limit (a motor switched off, a passive joint), nor is a column that never changes (a
    torque not logged: :func:`stuck_torque_runs`)."""
    tau = np.asarray(tau, float)
    found = []
    for k in range(tau.shape[1]):
        x = tau[:, k][np.isfinite(tau[:, k])]
        if x.size == 0 or x.min() == x.max():
            continue
        for value in (x.min(), x.max()):
            rows = int(np.count_nonzero(x == value))
            if value != 0.0 and rows >= max(SATURATED_MIN_ROWS, SATURATED_SHARE * len(tau)):
                found.append(Saturation(k, float(value), rows, len(tau)))
    return found
