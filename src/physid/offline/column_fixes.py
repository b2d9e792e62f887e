"""Which single fix of the recording's columns makes its torques follow the URDF's gravity?

The suspect verdict (:mod:`.suspect`) sees *that* a gravity-loaded joint's torque runs against
its gravity torque; several different mistakes look alike there. A position column negated (a
joint that counts the other way than the URDF's axis) or offset by a quarter or half turn
(another zero convention) changes the gravity torque of every joint below it; a torque column
negated, two columns exchanged, or every torque negated, change what is compared with it. Each
such single fix is tried and judged by the same comparison: the one after which every
gravity-loaded joint follows its gravity torque (correlation >= :data:`FOLLOWS`), where the
recording as given did not, is named with the numbers.

Measured on the real KUKA LWR4+ file 2 (correlations 1.00 / 0.995 / 1.00 as recorded): with
the shoulder's position negated the verdict was "torque sign looks flipped" (its correlations
-0.995 / -0.995 / 0.85), with the elbow's negated or half a turn off "torque of lwr_2_joint does
not follow its gravity torque", with the shoulder a quarter turn off "lwr_3_joint does not
follow" — each now named as the fix that restores 0.995 (the next best fix reaches at most 0.82).
A wrist's position, which moves no gravity torque enough, cannot be judged this way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from physid.recordings.trajectory import Trajectory
from physid.robot.model import RobotModel

FOLLOWS = 0.9  # real recordings: >= 0.89 per gravity-loaded joint, 0.995 and more on most
TIE = 0.005  # fixes within this of the best are listed together: the data cannot tell them apart
_OFFSETS_DEG = (90.0, -90.0, 180.0)
# Exchanged columns are tried up to this many joints (n (n - 1) pairs, 12 ms each on 50 s of a
# 7-joint arm: 0.9 s in all); a larger robot gets the single-column fixes only.
MAX_JOINTS_FOR_PAIRS = 12


@dataclass(frozen=True)
class ColumnFix:
    """One single fix and what the comparison reads after it."""

    description: str  # what looks wrong, e.g. "the position of 'j2' looks negated"
    applied: str  # the fix, e.g. "with it negated"
    columns: int  # how many columns the fix changes: the simplest of equal fixes is named
    correlations: np.ndarray  # per gravity-loaded joint, after the fix

    @property
    def score(self) -> float:
        return float(np.min(self.correlations)) if self.correlations.size else -np.inf


def best_fix(
    model: RobotModel,
    trajectory: Trajectory,
    correlations_of: Callable[[RobotModel, Trajectory], np.ndarray | None],
) -> str | None:
    """The clause naming the single fix after which every gravity-loaded joint follows its
    gravity torque, with the correlations before and after; None when the recording already
    follows, when no single fix does, or when the comparison cannot judge.
    ``correlations_of`` gives the per-joint correlations of a recording (None: cannot judge)."""
    recorded = correlations_of(model, trajectory)
    if recorded is None or recorded.size == 0 or float(np.min(recorded)) >= FOLLOWS:
        return None
    fixes = []
    for description, applied, columns, fixed in _candidates(trajectory):
        correlations = correlations_of(model, fixed)
        if correlations is not None and correlations.size:
            fixes.append(ColumnFix(description, applied, columns, correlations))
    top = max((fix.score for fix in fixes), default=-np.inf)
    if top < FOLLOWS:
        return None
    # Equal fixes, in the order tried: joints moved in step by the excitation (the KUKA's 4th
    # and 7th) make an exchange of the two as good as the one column's own fix, so the
    # simplest is named; a shoulder half a turn off negates every gravity torque as a
    # robot-wide torque sign does, and both are named.
    tied = [fix for fix in fixes if fix.score >= top - TIE]
    simplest = min(fix.columns for fix in tied)
    tied = [fix for fix in tied if fix.columns == simplest]
    best = max(tied, key=lambda fix: fix.score)
    after = (f"every gravity-loaded joint follows its gravity torque (correlations "
             f"{_listed(best.correlations)}; as recorded {_listed(recorded)})")  # fmt: skip
    if len(tied) == 1:
        return f"{best.description}: {best.applied}, {after}"
    return f"{' or '.join(fix.description for fix in tied)}: after either fix, {after}"


def _listed(correlations: np.ndarray) -> str:
    return ", ".join(f"{r:.2f}" for r in correlations)


def _candidates(trajectory: Trajectory):  # noqa: ANN202 - a generator of (str, str, Trajectory)
    """Every single fix: (what looks wrong, the fix, columns changed, the fixed recording)."""
    q, tau = np.asarray(trajectory.q, float), np.asarray(trajectory.tau, float)
    names = trajectory.joint_names
    n = len(names)
    # one convention, one mistake: counted as one column
    yield ("torque sign looks flipped on every joint", "with every torque negated", 1,
           _with(trajectory, tau=-tau))  # fmt: skip
    for j, joint in enumerate(names):
        if np.ptp(q[:, j]) == 0.0:
            continue
        yield (f"the position of '{joint}' looks negated (the joint counts the other way than "
               "the URDF's axis)", "with it negated", 1,
               _with(trajectory, q=_column(q, j, -q[:, j])))  # fmt: skip
        for offset in _OFFSETS_DEG:
            yield (f"the position of '{joint}' looks {offset:+.0f} deg off the URDF's zero",
                   f"with {offset:+.0f} deg taken off", 1,
                   _with(trajectory, q=_column(q, j, q[:, j] - np.radians(offset))))  # fmt: skip
    pairs = n <= MAX_JOINTS_FOR_PAIRS
    for a in range(n if pairs else 0):
        for b in range(a + 1, n):
            yield (f"joint columns may be in another order: the position columns of "
                   f"'{names[a]}' and '{names[b]}' look exchanged", "exchanged back", 2,
                   _with(trajectory, q=_swapped(q, a, b)))  # fmt: skip
            yield (f"joint columns may be in another order: the torque columns of "
                   f"'{names[a]}' and '{names[b]}' look exchanged", "exchanged back", 2,
                   _with(trajectory, tau=_swapped(tau, a, b)))  # fmt: skip
    for j, joint in enumerate(names):
        yield (f"the torque of '{joint}' looks to have its sign flipped", "with it negated", 1,
               _with(trajectory, tau=_column(tau, j, -tau[:, j])))  # fmt: skip


def _with(trajectory: Trajectory, **columns: np.ndarray) -> Trajectory:
    return replace(trajectory, **columns)


def _column(values: np.ndarray, j: int, column: np.ndarray) -> np.ndarray:
    out = values.copy()
    out[:, j] = column
    return out


def _swapped(values: np.ndarray, a: int, b: int) -> np.ndarray:
    out = values.copy()
    out[:, [a, b]] = values[:, [b, a]]
    return out
