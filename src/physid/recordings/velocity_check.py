"""Logged joint velocities checked against the positions they belong to.

A ``dq_`` column that is not the rate of its ``q_`` column is used as it is by the commands that
read logged velocities (``physid online``), and the estimate is wrong without a word. Real logs
have such columns: a driver that publishes ``velocity`` as zeros (ROS 2 ``JointState`` allows
any content), degrees per second beside positions in radians, a velocity with the other sign
convention, a commanded velocity of another joint. Such a column passes every other check: all
zeros reads as an arm at rest, a flipped sign as a model that does not explain the torques, and
on a frictionless arm both pass with status ``ok``.

The test integrates each logged velocity over windows of :data:`WINDOW_S` (shorter on a short
recording) and compares it with the position change over the same window (the trapezoid rule: noise
averages out, and a filter's lag of a few samples barely matters). Over the windows where the joint
clearly moves, the position change against the integrated velocity has a slope near 1 for a velocity
that is the positions' rate; far from 1 (another unit, the sign flipped), or uncorrelated (another
joint's column), or a column of zeros, the column is named. The same test judges a recording's
``ddq_`` columns against its velocities (:func:`given_derivative_problems`), for identify and
validate, which use recorded derivatives as they are under filter method ``given`` and as a
candidate of the cut-off choice.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from physid.errors import InputError
from physid.recordings.glitches import position_noise

WINDOW_S = 0.2  # s: the windows over which the logged velocity is integrated
MIN_WINDOWS = 10  # windows in which the joint moves, needed before anything is judged
MOVES = 20.0  # a window moves when its position change exceeds this many position noises
SLOPE = (0.8, 1.25)  # position change / integrated velocity of a velocity that is the rate
FOLLOWS = 0.5  # correlation below which the column does not follow the positions' rate
DEGREES = float(np.degrees(1.0))


def window_edges(t: np.ndarray, min_steps: float) -> np.ndarray:
    """Sample indices of the edges of windows of :data:`WINDOW_S` over the increasing times
    ``t``: shorter on a short recording (oe's are a second or two, and :data:`MIN_WINDOWS`
    windows must fit twice), ``min_steps`` median sample steps at least."""
    window = max(
        min(WINDOW_S, (t[-1] - t[0]) / (2 * MIN_WINDOWS)), min_steps * np.median(np.diff(t))
    )
    return np.unique(np.minimum(np.searchsorted(t, np.arange(t[0], t[-1], window)), len(t) - 1))


def window_integrals(t: np.ndarray, rate: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The trapezoid integral of ``rate`` (N, k) over each window between ``edges``: noise
    averages out, and a filter's lag of a few samples barely matters."""
    steps = np.diff(t)[:, None]
    integral = np.vstack(
        [np.zeros((1, rate.shape[1])), np.cumsum(0.5 * (rate[1:] + rate[:-1]) * steps, axis=0)]
    )
    return np.diff(integral[edges], axis=0)


def velocity_problems(
    t: np.ndarray, q: np.ndarray, dq: np.ndarray, names: tuple[str, ...], revolute: np.ndarray
) -> list[tuple[str, str, float]]:
    """``(joint, kind, number)`` of every joint whose logged velocity ``dq`` (N, n) is not the
    rate of its positions ``q`` (N, n, radians or metres) at times ``t`` (N,, seconds,
    increasing): kind ``zero`` (a column of zeros), ``unrelated`` (number: the correlation),
    ``degrees`` (the velocity in degrees per second), ``positions in degrees``, ``sign`` or
    ``scale`` (number: logged velocity / the positions' rate).
    ``revolute`` (n,) bool: angles, unwrapped before differencing. Joints that barely move,
    and recordings too short to tell, are not judged."""
    t, q, dq = (np.asarray(x, float) for x in (t, q, dq))
    finite = np.isfinite(t) & np.all(np.isfinite(q), axis=1) & np.all(np.isfinite(dq), axis=1)
    t, q, dq = t[finite], q[finite].copy(), dq[finite]  # a NaN sample is skipped downstream
    if len(t) < 3 or not np.all(np.diff(t) > 0.0):
        return []
    q[:, revolute] = np.unwrap(q[:, revolute], axis=0)
    edges = window_edges(t, 3.0)
    if len(edges) < MIN_WINDOWS + 1:
        return []
    moved = np.diff(q[edges], axis=0)
    integrated = window_integrals(t, dq, edges)
    noise = np.maximum(position_noise(q), 1e-12)
    problems = []
    for k, name in enumerate(names):
        moving = np.abs(moved[:, k]) > MOVES * noise[k]
        if np.count_nonzero(moving) < MIN_WINDOWS:
            continue
        change, rate = moved[moving, k], integrated[moving, k]
        if not np.any(dq[:, k] != 0.0):
            problems.append((name, "zero", 0.0))
            continue
        if np.std(rate) == 0.0:
            continue
        correlation = float(np.corrcoef(change, rate)[0, 1])
        if not abs(correlation) >= FOLLOWS:
            problems.append((name, "unrelated", correlation))
            continue
        # logged velocity / positions' rate: the median over the windows, not a least-squares
        # slope, which a few spikes move (a simulator's ddq_ at its friction's reversals)
        ratio = float(np.median(rate / change))
        if SLOPE[0] <= 1.0 / ratio <= SLOPE[1]:
            continue
        if abs(abs(ratio) / DEGREES - 1.0) < 0.05:
            problems.append((name, "degrees", ratio))
        elif abs(abs(ratio) * DEGREES - 1.0) < 0.05:
            problems.append((name, "positions in degrees", ratio))
        elif abs(ratio + 1.0) < 0.25:
            problems.append((name, "sign", ratio))
        else:
            problems.append((name, "scale", ratio))
    return problems


@dataclass(frozen=True)
class RatePair:
    """A logged rate and the signal it is the rate of, as the error line names them."""

    rate: str  # column prefix of the logged rate
    of: str  # column prefix of the signal it is the rate of
    things: str  # what that signal is
    moves: str  # what it does when the joint moves
    rate_in_degrees: str  # the likely mistake when the rate reads 57.3 x
    of_in_degrees: str  # and when it reads 1/57.3


VELOCITIES = RatePair(
    "dq",
    "q",
    "positions",
    "move",
    "degrees per second beside positions in radians",
    "positions in degrees beside velocities in radians per second",
)
ACCELERATIONS = RatePair(
    "ddq",
    "dq",
    "velocities",
    "change",
    "degrees per second squared beside velocities in radians per second",
    "velocities in degrees per second beside accelerations in radians per second squared",
)

_SAID = {
    "zero": "{columns} {verb} 0 in every row while the {things} {moves}",
    "degrees": "{columns} {verb} 57.3 x the rate of the {things} ({rate_in_degrees}?)",
    "positions in degrees": "{columns} {verb} 1/57.3 of the rate of the {things} "
    "({of_in_degrees}?)",
    "sign": "{columns} {verb} -1 x the rate of the {things} (the sign flipped)",
}


def _said(problems: list[tuple[str, str, float]], pair: RatePair = VELOCITIES) -> str:
    """The problems in one clause: joints alike grouped, the others one by one."""
    clauses = []
    for kind, text in _SAID.items():
        columns = [f"{pair.rate}_{name}" for name, found, _ in problems if found == kind]
        if columns:
            verb = "is" if len(columns) == 1 else "are"
            clauses.append(text.format(columns=", ".join(columns), verb=verb, **asdict(pair)))
    clauses += [
        f"{pair.rate}_{name} reads {number:.3g} x the rate of {pair.of}_{name} (one of "
        "the two in another unit?)"
        for name, kind, number in problems
        if kind == "scale"
    ]
    clauses += [
        f"{pair.rate}_{name} does not follow the rate of {pair.of}_{name} (correlation "
        f"{number:.2f}: another joint's column?)"
        for name, kind, number in problems
        if kind == "unrelated"
    ]
    return "; ".join(clauses)


def check_velocities(
    t: np.ndarray,
    q: np.ndarray,
    dq: np.ndarray,
    names: tuple[str, ...],
    revolute: np.ndarray,
    source: str,
    *,
    optional: bool,
    zeros_left_out: bool = False,
) -> str | None:
    """One error line naming every ``dq_`` column of :func:`velocity_problems`; ``optional``:
    the command estimates the velocities from the positions when no ``dq_`` column is given.
    ``zeros_left_out`` (with ``optional``): velocities that are 0 in every column and row while
    the positions move are no velocities at all (a driver that does not fill them: a ROS 2
    bag's ``velocity``, which the user cannot leave out), and the note returned says they are
    left out (the caller estimates them). None when the velocities pass."""
    problems = velocity_problems(t, q, dq, names, revolute)
    if not problems:
        return None
    logged = np.asarray(dq, float)
    if optional and zeros_left_out and not np.any(logged[np.isfinite(logged)] != 0.0):
        return (
            f"{source}: the logged velocities (dq_) are 0 in every row while the positions "
            "move: left out, the velocities are estimated from the positions"
        )
    remedy = (
        "correct them, or leave the dq_ columns out (the velocities are then estimated "
        "from the positions)"
        if optional
        else "correct them"
    )
    raise InputError(
        f"the logged velocities are not the positions' rate: {_said(problems)}: {remedy}",
        source=source,
    )


def given_derivative_problems(
    t: np.ndarray,
    q: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray,
    names: tuple[str, ...],
    revolute: np.ndarray,
) -> str:
    """Every recorded derivative that is not the rate of what it derives, in one clause ("" when
    they pass): each ``dq_`` against its positions, and each ``ddq_`` against its velocities
    where those passed (a velocity in degrees per second would make its right acceleration read
    1/57.3: one mistake, named once)."""
    velocity = velocity_problems(t, q, dq, names, revolute)
    wrong = {name for name, _, _ in velocity}
    acceleration = [
        problem
        for problem in velocity_problems(t, dq, ddq, names, np.zeros(len(names), dtype=bool))
        if problem[0] not in wrong
    ]
    return "; ".join(
        _said(found, pair)
        for found, pair in ((velocity, VELOCITIES), (acceleration, ACCELERATIONS))
        if found
    )
