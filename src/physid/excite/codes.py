"""The finding codes of ``physid.excite`` (documented in docs/findings.md; ``physid codes``).

EX1xx: the self-collision check's geometry; EX2xx: the design and its solver.
"""

from __future__ import annotations

from physid.findings import Severity, define

# --- the geometry of the self-collision check ---------------------------------------------------
MESH_NOT_FOUND = define(
    "EX101",
    "mesh-not-found",
    Severity.CAUTION,
    "a collision mesh was not found",
    "A link's collision mesh file could not be found, so that geometry is left out of the "
    "self-collision check (the other links' are still checked): the trajectory may bring that "
    "link into another.",
    "Give the folder that holds the package in excitation.package_dirs (or ROS_PACKAGE_PATH).",
)
NO_COLLISION_CHECK = define(
    "EX102",
    "no-collision-check",
    Severity.CAUTION,
    "the self-collision check could not be made",
    "The collision geometry did not load, the robot file has none, fewer than two bodies are "
    "left once missing meshes are set aside, or no pair of bodies can meet: the trajectory "
    "keeps the joint limits only.",
    "Check the trajectory against the robot's geometry before running it, or give the missing "
    "meshes (excitation.package_dirs).",
)
CONVEX_HULLS = define(
    "EX103",
    "convex-hulls",
    Severity.INFO,
    "collision meshes checked as convex hulls",
    "Triangle meshes are checked as their convex hulls, which enclose them: the check is "
    "conservative (the trajectory keeps farther apart than it must).",
    "Nothing.",
)
CLOSE_PAIRS_UNCHECKED = define(
    "EX104",
    "close-pairs-unchecked",
    Severity.CAUTION,
    "pairs of bodies already close are not checked",
    "These pairs of bodies are closer than excitation.min_distance at the middle of the joint "
    "ranges (they touch by design, or the geometry is coarse): the check leaves them out.",
    "Check those pairs' motion yourself, or lower excitation.min_distance.",
)
COLLISION_OFF = define(
    "EX105",
    "collision-off",
    Severity.INFO,
    "self-collision not checked, as configured",
    "The config sets excitation.collision: false, so the trajectory keeps the joint limits "
    "(and the workspace box, if given) only.",
    "Nothing, unless the robot can hit itself: then remove the key.",
)
NO_PAIR_CAN_MEET = define(
    "EX106",
    "no-pair-can-meet",
    Severity.INFO,
    "no pair of bodies can meet",
    "Every pair of collision bodies is one body, joined by a joint, or left out as already "
    "close (EX104): there is nothing for the self-collision check to check.",
    "Nothing.",
)

# --- the design ---------------------------------------------------------------------------------
SOLVER_STOPPED = define(
    "EX201",
    "solver-stopped",
    Severity.ERROR,
    "IPOPT stopped before it converged",
    "IPOPT ended without meeting its convergence test (its iteration budget, the time limit, "
    "or a failure its return status names): the trajectory is its best iterate within the "
    "limits, whose information the summary compares with the start's.",
    "Raise excitation.max_iterations or excitation.time_limit_s, or use the trajectory if its "
    "condition number is good enough.",
)
LIMITS_VIOLATED = define(
    "EX202",
    "limits-violated",
    Severity.ERROR,
    "the trajectory breaks a limit on the dense check",
    "Checked on a grid ten times denser than the optimiser's, the trajectory exceeds a joint "
    "limit (a use above 1), comes closer than excitation.min_distance between bodies, or leaves "
    "the workspace box.",
    "Raise excitation.constraint_points or excitation.margin and design again; do not run it.",
)
NO_IMPROVEMENT = define(
    "EX203",
    "no-improvement",
    Severity.CAUTION,
    "the optimiser did not improve on its start",
    "IPOPT's result identifies no better than the random start it began from: the start is "
    "returned when it keeps the limits, else the optimiser's result.",
    "Try other seeds (--seed) or more starts (excitation.starts).",
)
