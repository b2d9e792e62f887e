"""Which single fix of the recording's columns makes its torques follow the URDF's gravity?

The suspect verdict (:mod:`.suspect`) sees *that* a gravity-loaded joint's torque runs against
its gravity torque; several different mistakes look alike there. A position column negated (a
joint that counts the other way than the URDF's axis) or offset by a quarter or half turn
(another zero convention) changes the gravity torque of every joint below it; a torque column
negated, two columns exchanged, or every torque negated, change what is compared with it. Each
such single fix is tried and judged by the same comparison: the one after which every
gravity-loaded joint follows its gravity torque (correlation >= :data:`FOLLOWS`), where the
recording as given did not, is named with the numbers.

Several fixes can explain the data equally. A URDF axis reversed against the driver's negates both
the angle and the torque of a joint, and reads like a roll joint half a turn off (which mirrors
the pitch joint after it): the reversed axis is a fix of its own, named first, beside the fixes
gravity cannot tell from it. Every fix is judged on the joints the recording as given loads: a
fix that moved a joint out of that set would otherwise win by no longer being asked about it. A
wrist's position, which moves no gravity torque enough, cannot be judged this way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from physid.recordings.trajectory import Trajectory
from physid.robot.model import RobotModel

# A fix must make every gravity-loaded joint follow its gravity torque at least this well (real
# recordings as logged read 0.889 .. 1.00 per joint).
FOLLOWS = 0.8
# A fix is named only on a recording long enough to tell mistakes apart: on a few seconds of a
# correct run a position "fix" can lift a shoulder's correlation from 0.68 to 0.92 (the torque
# checks' own verdict on such a slice stands; no fix is invented for it).
MIN_FIX_SECONDS = 5.0
# Fixes within NEAR of the best explain the data equally: the simplest of them is named (an
# excitation that moves two joints in step makes exchanging them as good as one joint's own
# fix). A fix no more complex within CLEAR of the best is a rival explanation and named beside
# it, the strongest MAX_NAMED of them; more than MAX_NAMED within NEAR are no answer. Fixes whose
# correlations agree within ALIKE on every judged joint are one explanation (a roll joint half a
# turn off and the next pitch joint's axis reversed read alike to 1e-5).
NEAR = 0.02
CLEAR = 0.1
MAX_NAMED = 3
ALIKE = 1e-3
ORDER = "joint columns may be in another order: "
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
    joints: tuple[str, ...],
    recorded: np.ndarray,
    correlations_of: Callable[[RobotModel, Trajectory, tuple[str, ...]], np.ndarray | None],
) -> str | None:
    """The clause naming the single fix after which every gravity-loaded joint follows its
    gravity torque, with the correlations before and after; None when the recording already
    follows, when no single fix does or none clearly beats the others. ``joints`` are the
    joints the recording as given loads and ``recorded`` their correlations (the caller's
    comparison); ``correlations_of(model, recording, joints)`` gives those joints'
    correlations in another recording, or None when it cannot be judged. Every fix is judged
    on ``joints``: a fix that moved a joint out of that set would otherwise win by no longer
    being asked about it."""
    if float(trajectory.t[-1] - trajectory.t[0]) < MIN_FIX_SECONDS:
        return None
    if recorded.size == 0 or float(np.min(recorded)) >= FOLLOWS:
        return None
    fixes = []
    for description, applied, columns, fixed in _candidates(trajectory):
        correlations = correlations_of(model, fixed, joints)
        if correlations is not None and correlations.size:
            fixes.append(ColumnFix(description, applied, columns, correlations))
    top = max((fix.score for fix in fixes), default=-np.inf)
    if top < FOLLOWS:
        return None
    near = [fix for fix in fixes if fix.score >= top - NEAR]
    simplest = min(fix.columns for fix in near)
    rivals = [
        fix
        for fix in fixes
        if top - CLEAR <= fix.score
        and fix.columns <= simplest
        and (fix.columns == simplest or fix.score < top - NEAR)
    ]
    # by score; ties (to rounding) in the order tried: position fixes before reversed axes
    groups = _alike_groups(sorted(rivals, key=lambda fix: -round(fix.score, 9)))
    if sum(group[0].score >= top - NEAR for group in groups) > MAX_NAMED:
        return None  # more equal explanations than an answer can hold
    groups = groups[:MAX_NAMED]  # the weakest rivals give way to the stronger
    best = groups[0][0]
    after = (
        f"every gravity-loaded joint follows its gravity torque (correlations after / as "
        f"recorded: {_listed(joints, best.correlations, recorded)})"
    )
    head = f"{best.description}{_alike(groups[0])}: {best.applied}, {after}"
    if len(groups) == 1:
        return head
    others = "; or ".join(
        f"{group[0].description.removeprefix(ORDER)}{_alike(group)} ({group[0].score:.2f})"
        for group in groups[1:]
    )
    return f"{head}; or {others}"


def _alike_groups(fixes: list[ColumnFix]) -> list[list[ColumnFix]]:
    """``fixes`` (by score) grouped where every judged joint's correlation agrees within
    :data:`ALIKE`: gravity cannot tell them apart (a roll joint half a turn off and the next
    pitch joint's axis reversed read the same to 1e-5), so they are one answer, not rivals."""
    groups: list[list[ColumnFix]] = []
    for fix in fixes:
        for group in groups:
            if np.allclose(group[0].correlations, fix.correlations, rtol=0.0, atol=ALIKE):
                group.append(fix)
                break
        else:
            groups.append([fix])
    return groups


def _alike(group: list[ColumnFix]) -> str:
    if len(group) == 1:
        return ""
    others = ", or ".join(fix.description.removeprefix(ORDER) for fix in group[1:])
    return f" (alike in gravity: {others})"


def _listed(joints: tuple[str, ...], after: np.ndarray, recorded: np.ndarray) -> str:
    return ", ".join(
        f"{joint} {a:.2f} / {r:.2f}" for joint, a, r in zip(joints, after, recorded, strict=True)
    )


def _candidates(trajectory: Trajectory):  # noqa: ANN202 - a generator of (str, str, Trajectory)
    """Every single fix: (what looks wrong, the fix, columns changed, the fixed recording)."""
    q, tau = np.asarray(trajectory.q, float), np.asarray(trajectory.tau, float)
    names = trajectory.joint_names
    n = len(names)
    # one convention, one mistake: counted as one column
    yield (
        "torque sign looks flipped on every joint",
        "with every torque negated",
        1,
        replace(trajectory, tau=-tau),
    )
    for j, joint in enumerate(names):
        if np.ptp(q[:, j]) == 0.0:
            continue
        yield (
            f"the position of '{joint}' looks negated (the joint counts the other way than "
            "the URDF's axis)",
            "with it negated",
            1,
            replace(trajectory, q=_column(q, j, -q[:, j])),
        )
        for offset in _OFFSETS_DEG:
            yield (
                f"the position of '{joint}' looks {offset:+.0f} deg off the URDF's zero",
                f"with {offset:+.0f} deg taken off",
                1,
                replace(trajectory, q=_column(q, j, q[:, j] - np.radians(offset))),
            )
    # one convention: a driver whose joint turns about the URDF's axis reversed logs both its
    # angle and its torque negated. Tried after every position fix, so that a tie in gravity (a
    # roll joint half a turn off reads exactly as the next pitch joint's axis reversed) names the
    # position fix first
    for j, joint in enumerate(names):
        if np.ptp(q[:, j]) == 0.0:
            continue
        yield (
            f"the axis of '{joint}' looks reversed (its position and torque both count the "
            "other way than the URDF's axis)",
            "with both negated (or the URDF joint's axis reversed)",
            1,
            replace(trajectory, q=_column(q, j, -q[:, j]), tau=_column(tau, j, -tau[:, j])),
        )
    pairs = n <= MAX_JOINTS_FOR_PAIRS
    for a in range(n if pairs else 0):
        for b in range(a + 1, n):
            yield (
                f"{ORDER}the position columns of '{names[a]}' and '{names[b]}' look exchanged",
                "exchanged back",
                2,
                replace(trajectory, q=_swapped(q, a, b)),
            )
            yield (
                f"{ORDER}the torque columns of '{names[a]}' and '{names[b]}' look exchanged",
                "exchanged back",
                2,
                replace(trajectory, tau=_swapped(tau, a, b)),
            )
    for j, joint in enumerate(names):
        yield (
            f"the torque of '{joint}' looks to have its sign flipped",
            "with it negated",
            1,
            replace(trajectory, tau=_column(tau, j, -tau[:, j])),
        )


def _column(values: np.ndarray, j: int, column: np.ndarray) -> np.ndarray:
    out = values.copy()
    out[:, j] = column
    return out


def _swapped(values: np.ndarray, a: int, b: int) -> np.ndarray:
    out = values.copy()
    out[:, [a, b]] = values[:, [b, a]]
    return out
