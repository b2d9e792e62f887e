"""Position steps: some joints' positions jump between two rows while the other joints move on
as before — an encoder reset, a homing offset applied mid-run, a glitch of one axis
(:func:`position_step_rows`). Lost rows (a logger that froze while the arm moved on) move every
moving joint by the same number of periods' worth of its speed; a step moves only some joints,
and the positions on its two sides disagree by that offset. Read as lost rows, a step splits
the recording and both sides are identified in different frames, with status ``ok``.

Which side of a step is right is read from the torques (:func:`plan_steps`): all rows are
brought into the frame of each side in turn, and in each the URDF's rigid-body torque, with
each joint's scale, friction and offset fitted to the smoothed torque, leaves a relative
residual (:func:`urdf_agreement`). With a good URDF the right frame leaves about a third of
the others' residual, and the rows are shifted into it; a poor URDF can favour the wrong frame
by a third, or leave the frames a few per cent apart. So a frame is taken only when it is
:data:`FRAME_CLEAR` (2 x) better than every other; a step that changes no torque (a vertical
base axis: every frame within :data:`FRAME_NEUTRAL`) is undone in the longest piece's frame;
otherwise the rows at the longest piece's offset are kept, the others dropped, and the choice
is reported as a guess (the identification's status is then ``suspect``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from physid.recordings.glitches import position_noise, step_scale
from physid.recordings.running import running_mean
from physid.recordings.tables import MAX_GAP_PERIODS
from physid.robot.model import RobotModel

# An increment (and an offset) past this many ordinary steps (the 99th percentile of the
# joint's row-to-row steps) is a jump no motion makes between two rows: clean real recordings
# stay within a couple of ordinary steps. It sits below the time base's gap rule (10), which a
# step of a slow log (a few samples a swing) can fall short of.
STEP_THRESHOLD = 5.0
STEP_SPEED_ROWS = 3  # rows on each side of a break that give a joint's speed there
# a joint moves at a break when its speed there is this many times its position noise per row
# (a joint in a slow phase is evidence too: a bound in ordinary steps leaves too few moving
# witnesses, and the step is read as lost ticks)
STEP_MOVING_NOISE = 5.0


def position_steps(
    q: np.ndarray, breaks: list[tuple[int, int]], scale: np.ndarray | None = None
) -> np.ndarray:
    """``(len(breaks), n)``: the offset each joint's positions ``q`` (N, n) take at each motion
    break ``(from_row, row)`` (the row kept before the jump, the jumping row) beyond what lost
    rows explain (module docstring), or zeros where the break is no step.

    At each break a joint's increment is compared with its speed there (the mean increment of
    :data:`STEP_SPEED_ROWS` rows on each side); the periods lost are the median, over the joints
    moving there (faster than :data:`STEP_MOVING_NOISE` x their noise per row), of increment
    over speed, and what a joint moved beyond that many periods of its own speed is its
    offset. A break is a step only if it has an offset beyond
    :data:`STEP_THRESHOLD` ordinary steps (:func:`step_scale`) and
    more moving joints without one than with one, at least two, and at most
    :data:`~physid.recordings.tables.MAX_GAP_PERIODS` periods lost (with fewer joints, or more
    rows lost, lost rows and a step cannot be told apart). ``scale``: :func:`step_scale` of
    ``q``, if the caller has it."""
    q = np.asarray(q, float)
    scale = step_scale(q) if scale is None else scale
    witness = np.maximum(STEP_MOVING_NOISE * position_noise(q), 1e-12)
    offsets = np.zeros((len(breaks), q.shape[1]))
    for i, (before, row) in enumerate(breaks):
        back = max(before - STEP_SPEED_ROWS, 0)
        ahead = min(row + STEP_SPEED_ROWS, len(q) - 1)
        speeds = [(q[before] - q[back]) / (before - back)] if before > back else []
        if ahead > row:
            speeds.append((q[ahead] - q[row]) / (ahead - row))
        if not speeds:
            continue
        speed = np.mean(speeds, axis=0)  # per row
        jump = q[row] - q[before] - speed
        moving = np.abs(speed) >= witness
        if np.count_nonzero(moving) < 2:
            continue
        lost = float(np.median(jump[moving] / speed[moving]))
        offset = jump - lost * speed
        stepped = np.abs(offset) > STEP_THRESHOLD * scale
        smooth = np.count_nonzero(moving & ~stepped)
        # rows lost as well, up to the time base's gap rule (a step with a few rows lost at it
        # is still a step, not lost ticks); over a longer gap a curving motion departs from its
        # speeds too, and is not told from a step
        if abs(lost) > MAX_GAP_PERIODS:
            continue
        if np.any(stepped) and smooth >= 2 and smooth > np.count_nonzero(moving & stepped):
            offsets[i] = np.where(stepped, offset, 0.0)
    return offsets


def position_step_rows(
    q: np.ndarray, scale: np.ndarray | None = None
) -> tuple[list[int], np.ndarray]:
    """``(rows, steps)``: the rows of ``q`` (N, n) at which some joints' positions step (module
    docstring; the row after the jump) and each step (len(rows), n), found among the rows whose
    increment exceeds :data:`STEP_THRESHOLD` ordinary steps on some
    joint and judged by :func:`position_steps` (lost rows are no step). ``scale``:
    :func:`step_scale` of ``q``, if the caller has it."""
    q = np.asarray(q, float)
    if len(q) < 2 * STEP_SPEED_ROWS + 2:
        return [], np.zeros((0, q.shape[1]))
    scale = step_scale(q) if scale is None else scale
    jumps = np.flatnonzero(np.any(np.abs(np.diff(q, axis=0)) > STEP_THRESHOLD * scale, axis=1))
    steps = position_steps(q, [(int(k), int(k) + 1) for k in jumps], scale)
    found = np.any(steps != 0.0, axis=1)
    return [int(k) + 1 for k in jumps[found]], steps[found]


FRAME_CLEAR = 2.0  # the best frame's residual must be this many times below every other's
FRAME_NEUTRAL = 1e-3  # frames whose residuals differ by less (relative): the step moves no torque
FRAME_ROWS = 2000  # rows at which the URDF's torque is computed for the frame comparison
SMOOTHING_S = 0.125  # moving average of positions and torques (twice): about 3.5 Hz


def urdf_agreement(model: RobotModel, t: np.ndarray, q: np.ndarray, tau: np.ndarray) -> float:
    """How far the URDF's rigid-body torque at ``q`` is from the recorded ``tau`` (N, n): the
    relative residual, over the fitted joints, of a per-joint least-squares fit of the smoothed
    torque on that joint's URDF torque (scale free), viscous and Coulomb friction and an offset.
    A moving average stands in for a low-pass (differentiated twice it is smooth enough for a
    comparison of frames)."""
    rate = 1.0 / float(np.median(np.diff(t)))
    width = max(1, int(round(SMOOTHING_S * rate)))
    smooth = lambda x: running_mean(running_mean(x, width), width)  # noqa: E731
    qs = smooth(np.asarray(q, float))
    dq = smooth(np.gradient(qs, t, axis=0))
    ddq = np.gradient(dq, t, axis=0)
    measured = smooth(np.asarray(tau, float))
    inner = np.arange(2 * width, len(t) - 2 * width)
    if inner.size < 20:
        return float("nan")
    rows = inner[np.unique(np.linspace(0, inner.size - 1, min(inner.size, FRAME_ROWS)).astype(int))]
    data = model.pin_model.createData()
    urdf = np.array([pin.rnea(model.pin_model, data, qs[k], dq[k], ddq[k]) for k in rows])
    residual, total = 0.0, 0.0
    for j in np.flatnonzero(model.fitted):
        y = measured[rows, j]
        columns = np.column_stack(
            [urdf[:, j], dq[rows, j], np.sign(dq[rows, j]), np.ones(rows.size)]
        )
        coefficients = np.linalg.lstsq(columns, y, rcond=None)[0]
        residual += float(np.sum((y - columns @ coefficients) ** 2))
        total += float(np.sum((y - y.mean()) ** 2))
    return float(np.sqrt(residual / total)) if total > 0.0 else float("nan")


@dataclass(frozen=True)
class StepPlan:
    """What to do with a recording's position steps (:func:`plan_steps`)."""

    rows: list[int]  # the row after each step
    steps: np.ndarray  # (len(rows), n) each step [rad or m]
    pieces: list[tuple[int, int]]  # row ranges between the steps
    offsets: np.ndarray  # (len(pieces), n) each piece's offset from the first piece's frame
    frame: int  # the piece whose frame the rows are shifted into, or -1 (pieces dropped)
    how: str  # "torques" (that frame clearly best), "neutral" (no torque changes), "guessed"
    residuals: dict[int, float]  # URDF agreement (relative residual) per frame tried (a piece)
    corrected: np.ndarray | None  # (N, n) positions in the chosen frame; None: not chosen
    # the pieces at the longest piece's offset (kept when no frame is chosen)
    level_pieces: list[tuple[int, int]]


def plan_steps(model: RobotModel, t: np.ndarray, q: np.ndarray, tau: np.ndarray) -> StepPlan | None:
    """The position steps of a recording and which side of them the torques say is right
    (module docstring); None when it has none."""
    t, q = np.asarray(t, float), np.asarray(q, float)
    scale = step_scale(q)
    rows, steps = position_step_rows(q, scale)
    if not rows:
        return None
    bounds = [0, *rows, len(t)]
    pieces = list(zip(bounds[:-1], bounds[1:], strict=True))
    offsets = np.vstack([np.zeros(steps.shape[1]), np.cumsum(steps, axis=0)])
    piece_of_row = np.repeat(np.arange(len(pieces)), [b - a for a, b in pieces])
    same = lambda a, b: bool(np.all(np.abs(offsets[a] - offsets[b]) <= STEP_THRESHOLD * scale))  # noqa: E731
    frames: dict[int, np.ndarray] = {}  # one piece per distinct offset
    for k, offset in enumerate(offsets):
        if not any(same(k, f) for f in frames):
            frames[k] = q - (offsets[piece_of_row] - offset)
    longest_piece = int(np.argmax([b - a for a, b in pieces]))
    longest = next(f for f in frames if same(f, longest_piece))  # its frame
    level = [piece for k, piece in enumerate(pieces) if same(k, longest_piece)]
    residuals = {k: urdf_agreement(model, t, shifted, tau) for k, shifted in frames.items()}
    values = np.array(list(residuals.values()))
    ranked = sorted(residuals, key=lambda k: residuals[k])
    best = ranked[0]
    plan = lambda frame, how: StepPlan(  # noqa: E731
        rows,
        steps,
        pieces,
        offsets,
        frame,
        how,
        residuals,
        frames.get(frame),
        level,
    )
    if not np.all(np.isfinite(values)):
        return plan(-1, "guessed")
    if np.max(values) <= (1.0 + FRAME_NEUTRAL) * np.min(values):
        return plan(longest, "neutral")
    if all(residuals[k] >= FRAME_CLEAR * residuals[best] for k in ranked[1:]):
        return plan(best, "torques")
    return plan(-1, "guessed")
