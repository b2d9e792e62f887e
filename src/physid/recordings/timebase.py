"""The time base of a recording, checked against its own motion before anything is filtered.

Real logs are not sampled when their time stamps say. A controller that logs every tick may send a
row late (two ticks in one row) or twice (no new sample), while the stamp is taken when the row is
written, so rows that advance 0, 1 and 2 ticks are stamped nearly the same step apart.
Differentiating the positions twice on such stamps turns the timing error into false acceleration,
several times that of the real motion, which the fit then explains with wrong masses. The positions
themselves say when they were sampled: a smooth motion advances in proportion to the time that
passed.

:func:`check_time_base` therefore

1. drops *repeated samples*: rows whose positions equal the previous row's on every joint while
   the arm moves by several position quanta per step (a resent packet, not a standstill);
2. estimates the controller *tick* ``T`` and the whole number of ticks ``k_i`` each remaining row
   advanced, from position increments against the local velocity (iterated: the velocity is
   re-estimated on the rebuilt timeline), and scales ``T`` so that the ticks span the stamps'
   duration; counts that need ``T`` more than :data:`TICK_MATCH` away from the stamps' own step
   for one tick were read from the motion (a jolt, a step of the positions), not from a clock,
   and are not a candidate;
3. compares how smooth the positions are on three timelines (the stamps, the ticks, a uniform
   grid), by the residual of a local quadratic fit per row, and keeps the stamps unless another
   timeline is clearly smoother (:data:`CLEAR_EVIDENCE`): the ticks when most fast rows land on
   whole ticks, else the uniform grid (the stamps are then jitter that does not track the
   samples).

4. finds *breaks in the motion*: fast rows whose position increment is more than
   :data:`~physid.recordings.tables.MAX_GAP_PERIODS` ticks' worth of the local velocity, forward
   or backward (a logger that froze while the arm moved on, rows lost under stamps that went on
   ticking, a block sent again with new stamps). The stamps cannot show such a gap; whatever
   timeline is kept, differentiating across it turns the jump into a burst of false
   acceleration, which a fit explains with a moving mass several times the arm's. The caller
   splits the recording there, as at a gap in the stamps
   (:func:`physid.recordings.trajectory.split_at_motion_breaks`).

What was done is returned with counts (:class:`TimeBaseCheck`) for the output and ``params.json``.
Rows at rest carry no timing evidence and change nothing; a recording whose stamps do track its
samples (a loop that measures its own time) keeps them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from physid.recordings.tables import MAX_GAP_PERIODS

HALF_WINDOW = 4  # rows on each side of the local quadratic fits
CLEAR_EVIDENCE = 1.5  # the stamps must be this much rougher (RMS residual) to be replaced
MIN_EVIDENCE_ROWS = 50  # fast rows needed before any timeline may replace the stamps
ON_TICK_SHARE = 0.9  # share of fast rows within ON_TICK_TOLERANCE of a whole tick count
ON_TICK_TOLERANCE = 0.2
FAST_ROW_SNR = 8.0  # per-step increment over the position noise for a row to be evidence
# The ticks the rows are counted in must span the stamps' duration at the stamps' own step for
# one tick (the median stamp step of the rows counted as one): a tick that has to shrink or grow
# by more than this to do so was counted from the motion, not from a clock: ticks counted from
# a clock land within 0.5 % (sim.log_quirks), ticks counted from a start-up jolt several per
# cent off.
TICK_MATCH = 0.02


@dataclass(frozen=True)
class TimeBaseCheck:
    """What :func:`check_time_base` found and did on one recording."""

    action: str  # "kept" | "rebuilt from ticks" | "uniform grid"
    n_rows: int  # rows read
    repeated_rows: int  # dropped: positions identical to the previous row's while moving
    jitter: float  # std / median of the stamps' steps
    tick_s: float | None = None  # the controller tick, when the rows were counted in ticks
    tick_counts: dict[int, int] = field(default_factory=dict)  # rows advancing k ticks (k >= 1)
    stamp_error_rms_s: float | None = None  # stamps minus the timeline kept, RMS
    roughness: dict[str, float] = field(default_factory=dict)  # per timeline, relative RMS
    evidence_rows: int = 0  # fast rows that could show the timing
    # rows (indices into the rows given) whose motion jumps from the row kept before them
    # (module docstring, item 4), and by how many ticks' worth of the local velocity (< 0: back)
    breaks: tuple[int, ...] = ()
    break_ticks: tuple[float, ...] = ()
    break_from: tuple[int, ...] = ()  # the row kept before each break (repeated rows between)

    @property
    def changed(self) -> bool:
        return self.action != "kept" or self.repeated_rows > 0 or bool(self.breaks)

    def note(self, source: str) -> str:
        """One line for the terminal and the report."""
        parts = [f"{source}: time base {self.action}"]
        if self.repeated_rows:
            parts.append(f"{self.repeated_rows} of {self.n_rows} rows dropped as repeated samples")
        if self.action == "rebuilt from ticks":
            counts = ", ".join(f"{n} rows x {k}" for k, n in sorted(self.tick_counts.items()))
            parts.append(f"tick {1e3 * self.tick_s:.4g} ms ({counts})")
        if self.action != "kept" and self.stamp_error_rms_s is not None:
            parts.append(
                f"the stamps were off by {1e3 * self.stamp_error_rms_s:.3g} ms RMS "
                f"(positions {self.roughness.get('stamps', np.nan) / self.best_roughness:.3g} x "
                "rougher on them)"
            )
        return "; ".join(parts)

    @property
    def best_roughness(self) -> float:
        return min(self.roughness.values()) if self.roughness else float("nan")

    def as_dict(self) -> dict:
        return {
            "action": self.action,
            "rows": self.n_rows,
            "repeated_rows_dropped": self.repeated_rows,
            "stamp_jitter_relative": self.jitter,
            "tick_s": self.tick_s,
            "rows_per_tick_count": {str(k): n for k, n in sorted(self.tick_counts.items())},
            "stamp_error_rms_s": self.stamp_error_rms_s,
            "position_roughness": dict(self.roughness),
            "evidence_rows": self.evidence_rows,
            "motion_breaks": [
                {"row": int(r), "from_row": int(f), "ticks": float(k)}
                for r, f, k in zip(self.breaks, self.break_from, self.break_ticks, strict=True)
            ],
        }


def _windows(x: np.ndarray, half: int, centres: np.ndarray | None = None) -> np.ndarray:
    """(N, 2 half + 1, ...) neighbourhoods of every row (or of the rows ``centres``), edge rows
    reflected inward."""
    n = len(x)
    offsets = np.arange(-half, half + 1)
    rows = (np.arange(n) if centres is None else centres)[:, None] + offsets[None, :]
    rows = np.abs(rows)
    rows = np.where(rows >= n, 2 * (n - 1) - rows, rows)
    return x[np.clip(rows, 0, n - 1)]


def local_quadratic(t: np.ndarray, q: np.ndarray, half: int = HALF_WINDOW):
    """Residual of each row from the quadratic fitted to its neighbours (itself excluded), and
    the fitted velocity at each row: ``(residual (N, n), velocity (N, n))``.

    Leaving the row out of its own fit makes the residual a prediction error: on the right
    timeline it is position noise, on a wrong one it adds ``velocity x timing error``.
    """
    tw = _windows(t, half) - t[:, None]  # (N, w) times relative to the row
    keep = np.ones(2 * half + 1, dtype=bool)
    keep[half] = False
    scale = np.maximum(np.abs(tw).max(axis=1), 1e-12)[:, None]  # conditioning
    tw = (tw / scale)[:, keep]  # (N, w - 1) in [-1, 1]
    # rows whose neighbours are evenly spaced (a grid, the stamps of a steady clock, a tick
    # timeline between its late rows) share one scaled design: one small solve serves them,
    # applied as a correlation over q (3.5x faster than a solve per row); the others (edges,
    # gaps, jitter) are solved one by one
    even = np.delete(np.linspace(-1.0, 1.0, 2 * half + 1), half)
    regular = np.max(np.abs(tw - even), axis=1) <= 1e-9
    regular[:half] = regular[len(t) - half :] = False  # edge rows: reflected windows
    coefficients = np.empty((len(t), 3, q.shape[1]))
    if np.any(regular):
        projection = _batched_lstsq(_design(even[None]), np.eye(2 * half)[None])[0][0]
        # the row's own sample weighted 0: one matrix product over the windows' strided view
        # (no copy of them; an einsum over the copy took 3.7x as long)
        weights = np.insert(projection, half, 0.0, axis=1)  # (3, 2 half + 1)
        windows = np.lib.stride_tricks.sliding_window_view(q, 2 * half + 1, axis=0)
        rows = np.flatnonzero(regular)
        coefficients[rows] = (windows @ weights.T)[rows - half].transpose(0, 2, 1)
    rows = np.flatnonzero(~regular)
    if rows.size:
        coefficients[rows] = _batched_lstsq(_design(tw[rows]), _windows(q, half, rows)[:, keep])[0]
    residual = q - coefficients[:, 0]
    velocity = coefficients[:, 1] / scale
    return residual, velocity


def _design(tw: np.ndarray) -> np.ndarray:
    """(M, w, 3) local design matrices ``[1, tau, tau^2]`` of scaled relative times (M, w)."""
    return np.stack([np.ones_like(tw), tw, tw**2], axis=-1)


def _batched_lstsq(A: np.ndarray, b: np.ndarray):
    """Least squares of every row's small system (normal equations: 3 well-scaled columns)."""
    At = A.transpose(0, 2, 1)
    AtA = At @ A  # batched matmul: 5x faster than the same einsum
    Atb = At @ b
    AtA += 1e-12 * np.eye(3)
    return (np.linalg.solve(AtA, Atb),)


# local_quadratic, or a cache of it (_Fits): (t, q) -> (residual, velocity)
QuadraticFit = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]


class _Fits:
    """:func:`local_quadratic` of the timelines and positions asked, each computed once: on a
    log whose rows are all distinct and kept, :func:`check_time_base` asks for the stamps' fit
    four times and the uniform grid's twice (9 passes over the recording, 5 distinct)."""

    def __init__(self) -> None:
        self._done: list[tuple[np.ndarray, np.ndarray, tuple]] = []

    def __call__(self, t: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        for t_done, q_done, result in self._done:
            if np.array_equal(t_done, t) and np.array_equal(q_done, q):
                return result
        result = local_quadratic(t, q)
        self._done.append((t, q, result))
        return result


def roughness(
    t: np.ndarray, q: np.ndarray, weights: np.ndarray, fit: QuadraticFit = local_quadratic
) -> float:
    """RMS of the leave-one-out local-quadratic residual, joints weighted (1 / their noise)."""
    residual, _ = fit(t, q)
    return float(np.sqrt(np.mean((residual[HALF_WINDOW:-HALF_WINDOW] * weights) ** 2)))


def _noise(q: np.ndarray, t: np.ndarray, fit: QuadraticFit = local_quadratic) -> np.ndarray:
    """Per joint: position noise (robust scale of the residual) floored at the quantum."""
    residual, _ = fit(t, q)
    mad = 1.4826 * np.median(np.abs(residual - np.median(residual, axis=0)), axis=0)
    steps = np.abs(np.diff(q, axis=0))
    quantum = np.array([np.min(s[s > 0]) if np.any(s > 0) else 0.0 for s in steps.T])
    return np.maximum(np.maximum(mad, 0.5 * quantum), 1e-12)


def _position_noise(
    t: np.ndarray, q: np.ndarray, fit: QuadraticFit = local_quadratic
) -> np.ndarray:
    """Per joint: the position noise of the rows that moved, the smaller of its readings on the
    stamps and on a uniform grid. Resent rows make the positions look rough, and a noise read
    with them raises the bar that finds them; stamps that do not track the samples add their
    timing error too, which a uniform grid may not (a noise read on even stamps over resent
    rows finds few of them)."""
    distinct = np.r_[True, np.any(q[1:] != q[:-1], axis=1)]
    if np.sum(distinct) < 8 * (2 * HALF_WINDOW + 1):
        return _noise(q, t, fit)
    q, t = q[distinct], t[distinct]
    return np.minimum(_noise(q, t, fit), _noise(q, np.linspace(t[0], t[-1], len(t)), fit))


def repeated_rows(
    t: np.ndarray, q: np.ndarray, noise: np.ndarray, fit: QuadraticFit = local_quadratic
) -> np.ndarray:
    """Rows (bool, N) whose positions equal the previous row's on every joint while some joint
    moves by more than 3 noise levels per step (a resent sample, not a standstill)."""
    same = np.zeros(len(t), dtype=bool)
    same[1:] = np.all(q[1:] == q[:-1], axis=1)
    if not np.any(same):
        return same
    _, velocity = fit(t, q)
    step = float(np.median(np.diff(t)))
    moving = np.max(np.abs(velocity) * step / noise, axis=1) > 3.0
    return same & moving


def _tick_counts(t, q, tick, weights, iterations=3, fit: QuadraticFit = local_quadratic):  # noqa: ANN001
    """Whole ticks per row from the increments against the local velocity; returns
    ``(tick, counts (N-1,), ratio (N-1,), fast (N-1,) bool)``. Two ticks in one row is rarer
    than one: if most fast rows of the first pass sit on half-ticks, ``tick`` is halved. That
    is read on the stamps, in the first pass: the passes after it re-time the rows by their
    counts, and a row of half a tick counted as one smears every ratio around it."""
    timeline = t
    counts = ratio = fast = None
    for iteration in range(iterations):
        _, velocity = fit(timeline, q)
        v_mid = 0.5 * (velocity[1:] + velocity[:-1]) * weights  # per tick, weighted joints
        increment = np.diff(q, axis=0) * weights
        speed2 = np.sum(v_mid**2, axis=1)
        ratio = np.sum(increment * v_mid, axis=1) / np.maximum(speed2 * tick, 1e-300)
        fast = np.sqrt(speed2) * tick > FAST_ROW_SNR
        halve = (
            iteration == 0
            and np.any(fast)
            and np.median(np.abs(ratio[fast] - np.rint(ratio[fast]))) > 0.3
        )
        if halve:
            tick = tick / 2.0
            ratio = np.sum(increment * v_mid, axis=1) / np.maximum(speed2 * tick, 1e-300)
            fast = np.sqrt(speed2) * tick > FAST_ROW_SNR
        if iteration == 0:
            step_counts = np.maximum(np.rint(np.diff(t) / tick), 1.0)
        counts = np.where(fast, np.maximum(np.rint(ratio), 1.0), step_counts)
        timeline = t[0] + tick * np.concatenate([[0.0], np.cumsum(counts)])
    return tick, counts.astype(int), ratio, fast


def check_time_base(
    t: np.ndarray, q: np.ndarray, fresh: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, TimeBaseCheck]:
    """Check a recording's stamps against its motion (module docstring).

    ``t`` (N,) strictly increasing stamps [s], ``q`` (N, n) positions. ``fresh`` (N,) bool: rows
    known to be new samples (their logged torque or command changed), never dropped as
    repeated: a sample resent by the logger repeats every value, while a hobby servo's frame
    at 30 fps may leave all its quantised positions unchanged as the arm starts to move.
    Returns the rows to keep (indices), their times on the timeline chosen, and what was found.
    """
    n_rows = len(t)
    steps = np.diff(t)
    median = float(np.median(steps))
    jitter = float(np.std(steps) / median)
    keep = np.arange(n_rows)
    if n_rows < 8 * (2 * HALF_WINDOW + 1):
        return keep, t, TimeBaseCheck("kept", n_rows, 0, jitter)
    fit = _Fits()
    noise = _position_noise(t, q, fit)
    repeats = repeated_rows(t, q, noise, fit)
    if fresh is not None:
        repeats &= ~np.asarray(fresh, dtype=bool)
    keep = np.flatnonzero(~repeats)
    t_kept, q_kept = t[keep], q[keep]
    weights = 1.0 / noise
    tick, counts, ratio, fast = _tick_counts(t_kept, q_kept, median, weights, fit=fit)
    evidence = int(np.sum(fast))
    duration = t_kept[-1] - t_kept[0]
    one = counts == 1
    stamped = float(np.median(np.diff(t_kept)[one])) if np.any(one) else tick
    tick = duration / max(int(np.sum(counts)), 1)  # the ticks span the stamps' duration
    clock = abs(tick / stamped - 1.0) <= TICK_MATCH
    ticks = t_kept[0] + tick * np.concatenate([[0], np.cumsum(counts)])
    uniform = np.linspace(t_kept[0], t_kept[-1], len(t_kept))
    rough = {
        "stamps": roughness(t_kept, q_kept, weights, fit),
        "ticks": roughness(ticks, q_kept, weights, fit),
        "uniform": roughness(uniform, q_kept, weights, fit),
    }
    on_tick = np.mean(np.abs(ratio[fast] - counts[fast]) < ON_TICK_TOLERANCE) if evidence else 0.0
    values, numbers = np.unique(counts, return_counts=True)
    tick_counts = {int(k): int(n) for k, n in zip(values, numbers, strict=True)}
    jumps = np.flatnonzero(fast & (np.abs(ratio) > MAX_GAP_PERIODS))
    base = dict(
        n_rows=n_rows,
        repeated_rows=int(np.sum(repeats)),
        jitter=jitter,
        roughness=rough,
        evidence_rows=evidence,
        breaks=tuple(int(keep[k + 1]) for k in jumps),
        break_from=tuple(int(keep[k]) for k in jumps),
        break_ticks=tuple(float(ratio[k]) for k in jumps),
    )
    candidates = []  # (timeline key, action, times)
    ticked_log = evidence >= MIN_EVIDENCE_ROWS and on_tick >= ON_TICK_SHARE
    if ticked_log and len(tick_counts) > 1 and clock:
        candidates.append(("ticks", "rebuilt from ticks", ticks))
    if evidence >= MIN_EVIDENCE_ROWS:
        candidates.append(("uniform", "uniform grid", uniform))
    if candidates:
        key, action, times = min(candidates, key=lambda c: rough[c[0]])
        if rough["stamps"] > CLEAR_EVIDENCE * rough[key]:
            error = float(np.sqrt(np.mean((t_kept - times) ** 2)))
            ticked = key == "ticks"
            check = TimeBaseCheck(
                action,
                tick_s=tick if ticked else None,
                tick_counts=tick_counts if ticked else {},
                stamp_error_rms_s=error,
                **base,
            )
            return keep, times, check
    return keep, t_kept, TimeBaseCheck("kept", **base)
