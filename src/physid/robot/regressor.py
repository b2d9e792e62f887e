"""The observation matrix of the inverse dynamic identification model and its base parameters.

``tau = W(q, dq, ddq) theta`` (paper C eqs. 2–4): ``W`` stacks Pinocchio's joint-torque regressor
(``pin.computeJointTorqueRegressor``, the inertial columns) and the joint and coupled-motor
columns of :mod:`physid.robot.model`. Base parameters are found by a QR factorisation of ``W``
evaluated
on random states, so they are a property of the model, not of one trajectory; whether a given
trajectory excites them is checked separately (:func:`data_rank_deficiency`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pinocchio as pin
import scipy.linalg

from physid.robot.friction import (
    COEFFICIENTS,
    coulomb_sign,
    friction_column_derivatives,
    friction_columns,
    friction_torque,
    initial_shape,
)
from physid.robot.model import RobotModel

# Order in which the inertial parameters of one body are offered to the sequential QR: a column
# that is a combination of earlier ones is "dependent" and regrouped into them. Putting Izz first
# and Iyy, mz, m last reproduces Khalil's regrouping (zz_jR = zz_j + yy_j, xx_jR = xx_j - yy_j,
# m_{j+1}, mz_{j+1} into body j) for joints about z, and stays valid for any axis.
_BODY_COLUMN_ORDER = (9, 4, 5, 7, 8, 1, 2, 6, 3, 0)  # Izz Ixx Ixy Ixz Iyz mx my Iyy mz m


def torque_regressor(pin_model: pin.Model, data: pin.Data, q, v, a) -> np.ndarray:  # noqa: ANN001
    """Pinocchio's joint-torque regressor as an (nv, 10 bodies) matrix: for a one-DoF model
    Pinocchio returns a vector (10,), which indexed as a matrix raises or picks single
    values."""
    return np.atleast_2d(pin.computeJointTorqueRegressor(pin_model, data, q, v, a))


def inertial_regressor(
    model: RobotModel,
    q: np.ndarray,
    dq: np.ndarray,
    ddq: np.ndarray,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Pinocchio's joint-torque regressor for every sample: shape (N, n_joints, 10 n_bodies)
    (written into ``out`` when given, e.g. a slice of the full regressor)."""
    q, dq, ddq = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, dq, ddq))
    data = model.pin_model.createData()
    n_samples, n_joints = q.shape
    if out is None:
        out = np.empty((n_samples, n_joints, model.layout.n_inertial))
    regressor = pin.computeJointTorqueRegressor
    pin_model = model.pin_model
    for k in range(n_samples):
        out[k] = regressor(pin_model, data, q[k], dq[k], ddq[k])
    return out


def joint_term_regressor(model: RobotModel, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
    """Columns of the joint and coupled-motor terms: shape (N, n_joints, n_terms).

    Joint terms (docs/architecture.md): ``fv*dq + fc*sign(dq) + offset + Ia*ddq`` on the
    joint's own row, with ``sign`` taken as 0 below ``model.coulomb_deadband`` (per joint, if
    set); a joint with a sigmoid or Stribeck model has its coefficients' columns instead of ``sign``
    (:func:`physid.robot.friction.friction_columns`, shapes ``model.friction_shape``).
    A coupled motor k with ratio row ``r`` (paper C §4.1; TX40 dataset README) adds, with the
    motor speed ``dq_m = r @ dq`` and scale ``s = r[k]``:
    ``tau_i += Iam * sum_{j != i} r_i r_j / s^2 ddq_j + fvm * sum_{j != i} r_i r_j / s^2 dq_j
    + fcm * r_i / |s| * sign(dq_m)``. The diagonal parts (``i == j``) are already the joints' own
    armature and viscous terms, so only the cross terms are new parameters.
    """
    dq, ddq = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (dq, ddq))
    layout = model.layout
    n_samples, n_joints = dq.shape
    coupled = layout.coupled_motor_names
    n_own = sum(len(layout.terms_of(joint)) for joint in model.joint_names)
    # filled in place: the columns are mostly zeros; allocating one (N, n) array per term and
    # stacking them is markedly slower
    out = np.zeros((n_samples, n_joints, n_own + 3 * len(coupled)))
    deadband = model.coulomb_deadband
    per_term = {"fv": dq, "offset": np.ones_like(dq), "Ia": ddq}
    column = 0
    for j, joint in enumerate(model.joint_names):
        kind = layout.friction_of(joint)
        friction = friction_columns(
            kind, dq[:, j], model.shape_of(j), None if deadband is None else deadband[j]
        )
        for term in layout.terms_of(joint):
            out[:, j, column] = friction[term] if term in friction else per_term[term][:, j]
            column += 1
    if coupled:
        transmission = model.transmission
        for motor in coupled:
            k = transmission.motor_names.index(motor)
            row = transmission.ratio[k]
            scale = row[k]
            cross = np.outer(row, row) / scale**2
            np.fill_diagonal(cross, 0.0)
            out[:, :, column] = ddq @ cross.T
            out[:, :, column + 1] = dq @ cross.T
            # |s| keeps fcm = |s| * (motor Coulomb torque) >= 0 whatever the gear direction.
            motor_speed = dq @ row / abs(scale)  # joint-side units, comparable to the deadband
            deadband_k = None if deadband is None else deadband[k]
            out[:, :, column + 2] = np.outer(
                coulomb_sign(motor_speed, deadband_k), row / abs(scale)
            )
            column += 3
    return out


def joint_friction_torque(model: RobotModel, theta: np.ndarray, dq: np.ndarray) -> np.ndarray:
    """The friction torque (N, n) of every joint's own terms in ``theta`` at joint speeds ``dq``
    (N, n): ``fv dq + offset`` plus its Coulomb, sigmoid or Stribeck part with the model's
    shapes and deadband, exactly as :func:`joint_term_regressor` contains it (armature and
    coupled-motor terms excluded)."""
    dq = np.atleast_2d(np.asarray(dq, dtype=float))
    layout, deadband = model.layout, model.coulomb_deadband
    torque = np.zeros(dq.shape)
    for j, joint in enumerate(model.joint_names):
        coefficients = {
            term: float(theta[layout.index(f"{joint}.{term}")])
            for term in layout.terms_of(joint)
            if term != "Ia"
        }
        torque[:, j] = friction_torque(
            layout.friction_of(joint),
            dq[:, j],
            model.shape_of(j),
            coefficients,
            None if deadband is None else deadband[j],
        )
    return torque


def friction_shape_pairs(model: RobotModel) -> np.ndarray:
    """(k, 2) integer pairs ``(standard parameter index, shape index)``: every coefficient of a
    nonlinear friction model (:data:`physid.robot.friction.COEFFICIENTS`) with each shape parameter
    of its joint; shape indices count every joint's shape parameters in joint order. The columns of
    :func:`friction_shape_derivatives` follow this order."""
    layout = model.layout
    pairs, shape_index = [], 0
    for j, joint in enumerate(model.joint_names):
        n_shape = len(model.shape_of(j))
        for term in COEFFICIENTS[layout.friction_of(joint)] if n_shape else ():
            index = layout.index(f"{joint}.{term}")
            pairs.extend((index, shape_index + s) for s in range(n_shape))
        shape_index += n_shape
    return np.array(pairs, dtype=int).reshape(-1, 2)


def friction_shape_derivatives(model: RobotModel, dq: np.ndarray) -> np.ndarray:
    """(N, n_joints, k): per pair of :func:`friction_shape_pairs` ``(i, s)``, the derivative of
    the regressor column of standard parameter i with respect to shape parameter s, on its
    joint's row (the other rows are 0). ``dW/ds theta`` is the sum over the pairs of s of
    ``theta_i`` times these columns."""
    dq = np.atleast_2d(np.asarray(dq, dtype=float))
    layout = model.layout
    deadband = model.coulomb_deadband
    blocks = []
    for j, joint in enumerate(model.joint_names):
        shape = model.shape_of(j)
        if not shape:
            continue
        kind = layout.friction_of(joint)
        band = None if deadband is None else deadband[j]
        derivatives = friction_column_derivatives(kind, dq[:, j], shape, band)
        for term in COEFFICIENTS[kind]:
            for s in range(len(shape)):
                block = np.zeros(dq.shape)
                block[:, j] = derivatives[term][:, s]
                blocks.append(block)
    if not blocks:
        return np.zeros((*dq.shape, 0))
    return np.stack(blocks, axis=-1)


def observation_matrix(
    model: RobotModel, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray
) -> np.ndarray:
    """Full standard regressor ``W`` with shape (N, n_joints, n_parameters)."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    n_inertial = model.layout.n_inertial
    W = np.empty((*q.shape, model.layout.size))
    inertial_regressor(model, q, dq, ddq, out=W[..., :n_inertial])
    W[..., n_inertial:] = joint_term_regressor(model, dq, ddq)
    return W


def predict_torques(model: RobotModel, theta: np.ndarray, q, dq, ddq) -> np.ndarray:
    """Joint torques (N, n) predicted by standard parameters ``theta``: ``W(q, dq, ddq) theta``.

    Evaluated as Pinocchio's RNEA of the bodies of ``theta`` plus the joint-term columns, which
    is several times cheaper than the full regressor at every sample.
    """
    theta = np.asarray(theta, float)
    q, dq, ddq = (np.atleast_2d(np.asarray(a, dtype=float)) for a in (q, dq, ddq))
    n_inertial = model.layout.n_inertial
    masses = theta[:n_inertial:10]
    # RNEA is linear in the bodies' parameters, but Pinocchio stores a body as mass, com and
    # inertia: a zero or negative mass (a least-squares value, or a body the base parameters
    # leave at 0) has no com. Such parameters are shifted by c x a unit point mass at every
    # joint origin, and the shift's torques (c x those of the unit masses) subtracted.
    shift = 0.0 if np.all(masses > 0) else 1.0 + float(np.max(np.abs(masses)))
    unit = np.tile([1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0], n_inertial // 10)
    tau = _rnea_samples(model, theta[:n_inertial] + shift * unit, q, dq, ddq)
    if shift:
        tau -= shift * _rnea_samples(model, unit, q, dq, ddq)
    if model.layout.size > n_inertial:
        tau += joint_term_regressor(model, dq, ddq) @ theta[n_inertial:]
    return tau


def _rnea_samples(model: RobotModel, inertial: np.ndarray, q, dq, ddq) -> np.ndarray:
    """Pinocchio RNEA (N, n) of the bodies ``inertial`` (positive masses), no armature."""
    pin_model = model.with_inertial_parameters(inertial)
    pin_model.armature = np.zeros(pin_model.nv)  # armature is a joint term of theta, not the URDF's
    data = pin_model.createData()
    rnea = pin.rnea
    tau = np.empty_like(q)
    for k in range(q.shape[0]):
        tau[k] = rnea(pin_model, data, q[k], dq[k], ddq[k])
    return tau


@dataclass(frozen=True)
class BaseParameters:
    """A base (minimal, identifiable) reparametrisation ``theta_b = K theta`` of the standard set.

    ``independent`` are the standard columns kept; each base parameter is its independent
    parameter plus ``beta`` times the dependent ones it absorbs.
    """

    independent: np.ndarray  # (b,) standard indices
    dependent: np.ndarray  # (p - b,) standard indices
    beta: np.ndarray  # (b, p - b)
    names: tuple[str, ...]  # full readable combination, e.g. "joint_2.Izz + 0.0625*joint_3.m"
    short_names: tuple[str, ...]  # "joint_2.Izz" or "joint_2.Izz (R)" when regrouped

    @property
    def size(self) -> int:
        return len(self.independent)

    @property
    def projection(self) -> np.ndarray:
        """Matrix ``K`` (b, p) with ``theta_b = K theta``."""
        n_standard = len(self.independent) + len(self.dependent)
        K = np.zeros((self.size, n_standard))
        K[np.arange(self.size), self.independent] = 1.0
        K[:, self.dependent] = self.beta
        return K

    def from_standard(self, theta: np.ndarray) -> np.ndarray:
        """Base parameters of standard parameters ``theta`` (..., p)."""
        theta = np.asarray(theta, float)
        return theta[..., self.independent] + theta[..., self.dependent] @ self.beta.T

    def columns(self, W: np.ndarray) -> np.ndarray:
        """The base regressor: the independent columns of a standard regressor (..., p)."""
        return W[..., self.independent]


def _random_states(model: RobotModel, n_samples: int, rng: np.random.Generator):
    n = model.n_joints
    lower = np.where(
        np.isfinite(model.pin_model.lowerPositionLimit), model.pin_model.lowerPositionLimit, -np.pi
    )
    upper = np.where(
        np.isfinite(model.pin_model.upperPositionLimit), model.pin_model.upperPositionLimit, np.pi
    )
    span = np.maximum(upper - lower, 1e-3)
    q = lower + span * rng.random((n_samples, n))
    return q, rng.standard_normal((n_samples, n)), rng.standard_normal((n_samples, n))


def _column_order(model: RobotModel) -> np.ndarray:
    n_inertial = model.layout.n_inertial
    inertial = [10 * b + c for b in range(n_inertial // 10) for c in _BODY_COLUMN_ORDER]
    return np.array(inertial + list(range(n_inertial, model.layout.size)), dtype=int)


def _combination_name(lead: str, coefficients: np.ndarray, names: list[str]) -> str:
    text = lead
    for k in np.flatnonzero(coefficients):
        c, name = float(coefficients[k]), names[k]
        sign = "-" if c < 0 else "+"
        magnitude = abs(c)
        unit = abs(magnitude - 1.0) <= 1e-8 + 1e-5  # np.isclose(magnitude, 1.0)
        text += f" {sign} {name}" if unit else f" {sign} {magnitude:.6g}*{name}"
    return text


def base_parameters(
    model: RobotModel, *, n_samples: int = 0, seed: int = 0, tolerance: float = 1e-8
) -> BaseParameters:
    """Base parameters by QR factorisation of the regressor on random states (Gautier 1990).

    Columns are offered in :data:`_BODY_COLUMN_ORDER` (bodies from the base outward, then joint
    and motor terms); a column whose QR diagonal is below ``tolerance`` times its norm is a
    combination of earlier ones, and its coefficients ``beta`` follow from ``R11^-1 R12``.
    Computed once per model and arguments (:meth:`RobotModel.remembered`: every stage asks).
    """
    key = ("base_parameters", n_samples, seed, tolerance)
    return model.remembered(key, lambda: _base_parameters(model, n_samples, seed, tolerance))


def _base_parameters(
    model: RobotModel, n_samples: int, seed: int, tolerance: float
) -> BaseParameters:
    rng = np.random.default_rng(seed)
    p = model.layout.size
    if model.layout.nonlinear_friction and not model.friction_shape:
        # Which columns are independent does not depend on the shapes' values: any will do.
        shapes = tuple(initial_shape(model.layout.friction_of(j), 1.0) for j in model.joint_names)
        model = replace(model, friction_shape=shapes)
    n_samples = n_samples or max(60, 3 * p // max(model.n_joints, 1))
    q, dq, ddq = _random_states(model, n_samples, rng)
    order = _column_order(model)
    W = observation_matrix(model, q, dq, ddq).reshape(-1, p)[:, order]
    norms = np.linalg.norm(W, axis=0)
    # Round-off leaves ~1e-15 in columns that are structurally zero; normalising those would
    # blow the noise up into a spurious "independent" column.
    nonzero = norms > 1e-10 * norms.max()
    scaled = np.where(nonzero, W / np.where(nonzero, norms, 1.0), 0.0)
    _, R = scipy.linalg.qr(scaled, mode="economic")
    keep = (np.abs(np.diag(R)) > tolerance) & nonzero
    independent_pos = np.flatnonzero(keep)
    dependent_pos = np.flatnonzero(~keep)
    # W_dep = W_ind beta_T exactly; least squares on the (well conditioned) scaled columns.
    solution, *_ = np.linalg.lstsq(W[:, independent_pos], W[:, dependent_pos], rcond=None)
    beta = solution.copy()
    beta[np.abs(beta) < 1e-10 * max(1.0, np.abs(beta).max(initial=0.0))] = 0.0
    independent = order[independent_pos]
    dependent = order[dependent_pos]
    sort = np.argsort(independent)  # present base parameters in the standard order
    independent, beta = independent[sort], beta[sort]
    names_all = list(model.layout.names)
    dependent_names = [names_all[i] for i in dependent]
    long_names, short_names = [], []
    for i, row in zip(independent, beta, strict=True):
        long_names.append(_combination_name(names_all[i], row, dependent_names))
        short_names.append(names_all[i] + (" (R)" if np.any(row != 0.0) else ""))
    for shared in (independent, dependent, beta):  # one result for every stage that asks
        shared.flags.writeable = False
    return BaseParameters(independent, dependent, beta, tuple(long_names), tuple(short_names))


def data_rank_deficiency(W_base: np.ndarray, *, tolerance: float = 1e-6) -> np.ndarray:
    """Base columns the data cannot identify: indices beyond the numerical rank.

    ``W_base`` is the stacked (rows, b) base regressor of the actual trajectory. Columns are
    normalised, then a pivoted QR ranks them; a pivot below ``tolerance`` times the largest one
    marks the remaining columns as unidentifiable from these data (e.g. the terms of a joint that
    never moves).
    """
    norms = np.linalg.norm(W_base, axis=0)
    zero = norms <= 1e-12 * max(norms.max(initial=0.0), 1e-300)
    scaled = W_base[:, ~zero] / norms[~zero]
    if scaled.shape[1] == 0:
        return np.arange(W_base.shape[1])
    _, R, pivots = scipy.linalg.qr(scaled, mode="economic", pivoting=True)
    diagonal = np.abs(np.diag(R))
    rank = int(np.sum(diagonal > tolerance * diagonal[0]))
    nonzero_cols = np.flatnonzero(~zero)
    deficient = np.concatenate([np.flatnonzero(zero), nonzero_cols[pivots[rank:]]])
    return np.sort(deficient)


def condition_number(W_base: np.ndarray, *, scaled: bool = False) -> float:
    """2-norm condition number of a stacked base regressor (optionally column-normalised)."""
    if scaled:
        W_base = W_base / np.maximum(np.linalg.norm(W_base, axis=0), 1e-300)
    singular = np.linalg.svd(W_base, compute_uv=False)
    return float(singular[0] / singular[-1]) if singular[-1] > 0 else float("inf")
