"""Which time scale the torques say the motion ran at: a check of the stamps' unit and step.

A recording whose stamps run at the wrong rate — a manifest's ``sample_time`` of 10 ms for a
200 Hz log, stamps written at a fixed step while rows came one or two controller ticks apart,
a clock in other units — still differentiates and still fits: velocities come out ``1/c`` and
accelerations ``1/c^2`` times the true ones, and the free inertial parameters absorb much of it.
A real arm with its stamps halved fits with several times its mass and its held-out error, with
status ``ok`` and no warning.

What the free parameters cannot absorb is the tie between gravity and inertia: a body's mass and
first moment set both its gravity torque and its share of the inertial torque. Scaling the
velocities by ``c`` scales every rigid-body torque but gravity by ``c^2``
(``M(q) c^2 ddq + C(q, c dq) c dq``, Pinocchio's joint-torque regressor ``Y(q, dq, ddq)``
split into its static part ``Y(q, 0, 0)`` and the rest), viscous friction by ``c`` and armature
by ``c^2``; Coulomb friction and offsets not at all. So least squares of the recorded torque on
``Y(q, 0, 0) + c^2 (Y(q, dq, ddq) - Y(q, 0, 0))`` plus per-joint friction, offset and armature
columns, every parameter free (the URDF's kinematics only, none of its inertias), fits best
near the true ``c``. The friction and armature columns span the same space at every ``c``; their
projection is taken out once (one QR), and each ``c`` costs a small least squares.

Robots that barely accelerate (slow, quasi-static excitation) give a flat curve: nothing is
said then; nor on robots whose moving joints gravity does not load (a SCARA: its quill's
constant weight is one column with its offset), which leave no mass tied to gravity. The
check is one-sided in practice: stamps too *short* (the motion looks faster than it was)
inflate the inertial torques against gravity, which no inertia can undo (stamps x0.5 fit about a
quarter better at the right scale); stamps too *long* shrink them, and larger free inertias undo
most of it (x2: the right scale fits best by a few per cent at most, under the threshold). A
recording stamped too slowly still passes unnoticed.

Correct stamps fit within a few per cent of the best scale, while halved stamps, or stamps made
up at a fixed step over rows one or two ticks apart, fit far worse than the best:
:data:`CLEAR_IMPROVEMENT` sits between (docs/benchmarks.md, "Why the defaults are what they
are").
"""

from __future__ import annotations

import numpy as np

from physid.findings import Finding
from physid.numerics.linalg import unit_norm_columns
from physid.offline.codes import TIME_SCALE
from physid.offline.observe.reduced import reduce_observations, triangular_factor
from physid.robot.model import RobotModel
from physid.robot.regressor import inertial_regressor

# factors on the velocities (c: the stamps' intervals are c times the true ones), log-spaced
# (12 % apart); a best factor at either end must fit far better (time_scale_reason)
FACTORS = tuple(float(f) for f in np.exp(np.linspace(np.log(0.125), np.log(8.0), 37)))
# the best factor must fit the torques this much better (relative error ratio) than c = 1 ...
CLEAR_IMPROVEMENT = 1.1
# ... at the end of the range searched, this much better (see time_scale_reason) ...
END_IMPROVEMENT = 2.0
# ... and lie outside this band (a 20 % rate error is within what a user may not notice, and
# the curve is too flat there to tell)
TOLERATED = (0.7, 1.4)


def time_scale_regressors(
    model: RobotModel, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(full, static) joint-torque regressors (N, n, p) of the samples: ``Y(q, dq, ddq)`` and
    ``Y(q, 0, 0)`` (module docstring)."""
    zero = np.zeros_like(q)
    return inertial_regressor(model, q, dq, ddq), inertial_regressor(model, q, zero, zero)


def fit_by_time_scale(
    model: RobotModel,
    q: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray,
    tau: np.ndarray,
    joints: np.ndarray | None = None,
    regressors: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Relative error of the least-squares fit of ``tau`` (N, n) at every factor of
    :data:`FACTORS` (module docstring); ``dq``, ``ddq`` per second on the stamps' timeline.
    ``joints``: (n,) bool, the joints whose torques are fitted (default: the model's fitted);
    ``regressors``: :func:`time_scale_regressors` of the samples, when already computed.

    Each joint's rows ``[nuisance | static | full - static | tau]`` are reduced to their
    triangular factor first (:func:`_joint_factors`): every least squares below, weighted or
    not, is the same on the stacked factors as on the stacked rows."""
    full, static = regressors or time_scale_regressors(model, q, dq, ddq)
    fitted = np.flatnonzero(model.fitted if joints is None else joints)
    factors = _joint_factors(full, static, dq, ddq, tau, fitted)
    n_nuisance, n_inertial = 4 * tau.shape[1], full.shape[2]
    F = factors[:, :, :n_nuisance]
    G = factors[:, :, n_nuisance : n_nuisance + n_inertial]
    D = factors[:, :, n_nuisance + n_inertial : n_nuisance + 2 * n_inertial]
    y = factors[:, :, -1:]
    weights = _joint_weights(np.concatenate([F, G + D], axis=2), y, len(tau))
    stacked = (factors * weights[:, None, None]).reshape(-1, factors.shape[2])
    scale = np.linalg.norm(stacked, axis=0)
    scale[scale == 0.0] = 1.0
    triangle = triangular_factor(stacked / scale)
    square = triangle * scale  # the same normal equations, columns restored
    widths = np.cumsum([0, n_nuisance, n_inertial, n_inertial, 1])
    F, G, D, y = (square[:, a:b] for a, b in zip(widths[:-1], widths[1:], strict=True))
    total = max(float(np.linalg.norm(y)), 1e-300)
    spanning = _spanning_columns(F, G, D)
    errors = []
    for factor in FACTORS:
        X = np.hstack([F, G + factor**2 * D])
        residual = None if spanning is None else _spanned_residual(X[:, spanning], y[:, 0])
        if residual is None:
            residual = _truncated_residual(X, y[:, 0])
        errors.append(residual / total)
    return np.array(errors)


# singular values below this share of the largest are dropped (numpy's lstsq rcond): the
# columns' exact dependencies (regrouped inertial parameters, bodies no fitted joint carries)
_RCOND = 1e-10


def _truncated_residual(X: np.ndarray, y: np.ndarray) -> float:
    """||y - X b|| for the least squares with singular values below :data:`_RCOND` dropped."""
    scaled, _ = unit_norm_columns(X)
    solution, *_ = np.linalg.lstsq(scaled, y, rcond=_RCOND)
    return float(np.linalg.norm(y - scaled @ solution))


def _rank(X: np.ndarray) -> int:
    singular = np.linalg.svd(unit_norm_columns(X)[0], compute_uv=False)
    return int(np.sum(singular > _RCOND * singular[0])) if singular.size else 0


def _spanning_columns(F: np.ndarray, G: np.ndarray, D: np.ndarray) -> np.ndarray | None:
    """Columns of ``[F, G + c^2 D]`` that span its column space at every factor c, or None
    when they cannot be chosen once. What the truncated least squares drops are the regressor's
    structural dependencies (regrouped inertial parameters, bodies no fitted joint carries, a
    rotor's inertia along its body's): their number is the same at every c, so one pivoted QR
    at c = 1 picks the columns, and each factor costs a QR of those instead of an SVD of all
    of them. None (an SVD per factor) when the ends of the range have another rank than c = 1."""
    import scipy.linalg

    at_one = np.hstack([F, G + D])
    rank = _rank(at_one)
    ends = (np.hstack([F, G + c**2 * D]) for c in (FACTORS[0], FACTORS[-1]))
    if rank == 0 or any(_rank(end) != rank for end in ends):
        return None
    _, _, pivots = scipy.linalg.qr(unit_norm_columns(at_one)[0], mode="economic", pivoting=True)
    return np.sort(pivots[:rank])


def _spanned_residual(X: np.ndarray, y: np.ndarray) -> float | None:
    """||y - X b|| of the least squares on ``X``'s columns (full column rank), from the last
    diagonal entry of ``[X | y]``'s triangular factor; None when the columns are close to
    dependent here (a factor c where the columns picked at c = 1 lose their rank)."""
    scaled, _ = unit_norm_columns(X)
    square = triangular_factor(np.column_stack([scaled, y]))
    diagonal = np.abs(np.diag(square))
    rank = X.shape[1]
    if square.shape[0] <= rank or diagonal[:rank].min() <= 1e3 * _RCOND * diagonal[:rank].max():
        return None
    return float(diagonal[rank])


def _joint_factors(
    full: np.ndarray,
    static: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray,
    tau: np.ndarray,
    fitted: np.ndarray,
) -> np.ndarray:
    """(fitted joints, k, k): the triangular factor of each fitted joint's rows ``[viscous,
    Coulomb, offset, armature of every joint | static | full - static | tau]`` (k columns), as
    :func:`~physid.offline.observe.reduced.reduce_observations` reduces the observations (the
    columns zero on a joint's rows left out of its QR)."""
    n_rows, n_joints = tau.shape
    nuisance = np.zeros((n_rows, n_joints, 4 * n_joints))
    for j in range(n_joints):
        nuisance[:, j, 4 * j : 4 * j + 4] = np.column_stack(
            [dq[:, j], np.sign(dq[:, j]), np.ones(n_rows), ddq[:, j]]
        )
    system = reduce_observations((nuisance, static, full - static), tau)
    return np.concatenate([system.R, system.z[:, :, None]], axis=2)[fitted]


def _joint_weights(X: np.ndarray, y: np.ndarray, n_rows: int) -> np.ndarray:
    """(joints,) each joint's weight in the fit, the inverse of its residual std at the stamps'
    own scale (paper C's weighted least squares): unweighted, a lift's force in newtons decides
    for the arm's newton metres, and correct stamps can read "19 % better on a shorter
    timeline" from the lift alone. ``X`` (joints, k, c), ``y`` (joints, k, 1): each joint's
    triangular factors of its ``n_rows`` unweighted rows, whose residual norm is the rows'."""
    n_joints = X.shape[0]
    stacked, target = X.reshape(-1, X.shape[2]), y.reshape(-1)
    scaled, _ = unit_norm_columns(stacked)
    solution, *_ = np.linalg.lstsq(scaled, target, rcond=_RCOND)
    residual = (target - scaled @ solution).reshape(n_joints, -1)
    sigma = np.sqrt(np.sum(residual**2, axis=1) / n_rows)
    return 1.0 / np.maximum(sigma, 1e-9 * max(float(sigma.max()), 1e-300))


# Without any one joint, a clock's error still leaves the best factor outside TOLERATED and fitting
# this much better than the stamps' (halved stamps still read about 1.07 x without their most
# telling joint); a torque column of another scale is one joint's, and without that joint the
# stamps' own scale fits best
CLOCK_IN_EVERY_JOINT = 1.02


def still_a_clock(errors: np.ndarray) -> bool:
    """Whether ``errors`` (:func:`fit_by_time_scale` of all joints but one) still point at
    another time scale (:data:`CLOCK_IN_EVERY_JOINT`)."""
    at_one = float(np.interp(0.0, np.log(FACTORS), errors))
    best = int(np.argmin(errors))
    outside = not TOLERATED[0] <= FACTORS[best] <= TOLERATED[1]
    return outside and at_one > CLOCK_IN_EVERY_JOINT * errors[best]


def time_scale_finding(errors: np.ndarray) -> Finding | None:
    """A finding when another time scale fits the torques clearly better than the stamps'. A
    best factor at the end of the range searched must fit :data:`END_IMPROVEMENT` times better:
    a curve still falling there, by a modest margin, prefers ever faster (or slower) motion,
    the free inertias absorbing a short recording's noise rather than a clock (a few seconds of
    a correct run can read "45 % better" at an end of the range), while stamps 4-10 x off
    overshoot the range's end with fits 2.3-6.6 x better (halved stamps have their minima
    inside)."""
    at_one = float(np.interp(0.0, np.log(FACTORS), errors))
    best = int(np.argmin(errors))
    factor = FACTORS[best]
    if best in (0, len(FACTORS) - 1) and at_one < END_IMPROVEMENT * errors[best]:
        return None
    if TOLERATED[0] <= factor <= TOLERATED[1] or at_one <= CLEAR_IMPROVEMENT * errors[best]:
        return None
    longer = "longer" if factor < 1.0 else "shorter"
    return TIME_SCALE(
        f"the time stamps do not match how fast the robot moved: on a {longer} timeline than "
        f"the stamps' the torques follow the motion {100 * (at_one / errors[best] - 1):.0f} % "
        f"better (best of {FACTORS[0]:g}-{FACTORS[-1]:g} x: {1 / factor:.2g} x their duration; "
        "gravity and inertia share each body's mass): a wrong sample_time or time unit, or "
        "stamps written at a fixed step while rows came late or twice",
        numbers={"best_factor": float(factor), "gain": float(at_one / errors[best] - 1)},
        names=("t",),
    )
