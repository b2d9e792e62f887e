"""The apparent direction of gravity in the base frame, from the torque data.

A base mounted a degree off level (or a URDF whose base frame is not exactly level) leaves a
gravity torque that no physically consistent set of inertial parameters can explain, while an
unconstrained fit silently absorbs it into inconsistent first moments. The regressor is affine in
the gravity vector ``g``: ``W(q, dq, ddq; g) = W(q, dq, ddq; g0) + sum_i (g - g0)_i G_i(q)`` with
``G_i`` the static regressor for unit gravity along base axis ``i``. So for each candidate tilt
the base-parameter least squares is linear, and the two tilt angles are found by minimising its
residual on the reduced system: separable least squares, by Levenberg-Marquardt on the
variable-projection functional (Golub and Pereyra).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
import scipy.linalg

from physid.numerics.small_lm import minimise
from physid.offline.observe.reduced import ReducedSystem
from physid.robot.model import RobotModel

# Tilts (about base x, then y) of the other usual mountings: on a wall (four ways) and hanging
# from a ceiling
# Levenberg-Marquardt iterations of one tilt search (a few suffice: the residual is nearly
# quadratic in the tilt over a degree or two)
_MAX_ITERATIONS = 100

MOUNTING_TILTS_RAD = tuple(
    np.radians(t) for t in ((90.0, 0.0), (-90.0, 0.0), (0.0, 90.0), (0.0, -90.0), (180.0, 0.0))
)


@dataclass(frozen=True)
class GravityEstimate:
    """Gravity vector in the base frame and the tilt that turns the URDF's into it."""

    gravity: np.ndarray  # (3,) m/s^2, base frame
    tilt_rad: np.ndarray  # (2,) rotation about base x, then about base y, of the URDF gravity
    tilt_std_rad: np.ndarray  # (2,) standard deviations from the residual's curvature
    residual_ratio: float  # residual norm with this gravity / with the URDF gravity
    evaluations: int


def static_gravity_regressors(model: RobotModel, q: np.ndarray) -> np.ndarray:
    """``G`` (N, n, 3 p_inertial): inertial regressors at rest for unit gravity along x, y, z.

    Column ``a * p_inertial + i`` is inertial column ``i`` for gravity along base axis ``a``.
    """
    pin_model = model.pin_model.copy()
    data = pin_model.createData()
    zeros = np.zeros(model.n_joints)
    n_inertial = model.layout.n_inertial
    out = np.empty((q.shape[0], model.n_joints, 3 * n_inertial))
    for axis in range(3):
        pin_model.gravity = pin.Motion(np.eye(3)[axis], np.zeros(3))
        block = slice(axis * n_inertial, (axis + 1) * n_inertial)
        for k in range(q.shape[0]):
            out[k, :, block] = pin.computeJointTorqueRegressor(pin_model, data, q[k], zeros, zeros)
    return out


def tilted_gravity(gravity_urdf: np.ndarray, tilt_rad: np.ndarray) -> np.ndarray:
    """URDF gravity rotated by ``tilt_rad[0]`` about base x, then ``tilt_rad[1]`` about base y."""
    rotation = pin.rpy.rpyToMatrix(float(tilt_rad[0]), float(tilt_rad[1]), 0.0)
    return rotation @ np.asarray(gravity_urdf, float)


def gravity_shift(system: ReducedSystem, n_inertial: int, delta: np.ndarray) -> ReducedSystem:
    """The reduced system re-expressed for gravity ``g0 + delta`` (its extras are ``G``)."""
    p = system.n_standard
    return system.shifted(
        [(p + axis * n_inertial + np.arange(n_inertial), float(delta[axis])) for axis in range(3)]
    )


class _TiltProblem:
    """The residual of the base-parameter least squares as a function of the tilt, on one QR
    of every column the search can visit: the upright columns, their unit-gravity extras along
    x, y, z (:func:`gravity_shift`) and the torques. Each evaluation then works on a square
    triangle of at most 4 b + 1 rows, with the same singular values and residuals as the
    stacked system (Q has orthonormal columns)."""

    def __init__(
        self,
        system: ReducedSystem,
        columns: np.ndarray,
        n_inertial: int,
        gravity_urdf: np.ndarray,
        weights: np.ndarray,
    ) -> None:
        self.n_columns = len(columns)
        self.tilted = np.flatnonzero(columns < n_inertial)  # the columns that gravity moves
        self.gravity_urdf = gravity_urdf
        p = system.n_standard
        upright, u = system.stacked(columns, weights)
        extras = [
            system.stacked(p + axis * n_inertial + columns[self.tilted], weights)[0]
            for axis in range(3)
        ]
        stacked = np.column_stack([upright, *extras, u])
        self.triangle = scipy.linalg.qr(stacked, mode="r", check_finite=False)[0][
            : stacked.shape[1]
        ]
        width = self.tilted.size
        self.blocks = [
            self.triangle[:, self.n_columns + k * width : self.n_columns + (k + 1) * width]
            for k in range(3)
        ]
        self.u = self.triangle[:, -1]

    def design(self, tilt: np.ndarray) -> np.ndarray:
        delta = tilted_gravity(self.gravity_urdf, tilt) - self.gravity_urdf
        X = self.triangle[:, : self.n_columns].copy()
        X[:, self.tilted] += sum(delta[axis] * self.blocks[axis] for axis in range(3))
        return X

    def evaluate(self, tilt: np.ndarray) -> tuple[float, tuple]:
        """``(residual sum of squares, ((u - X theta, orthonormal basis of X's range),
        theta))``: the least squares by SVD, as ``lstsq`` with ``rcond=1e-12`` (near zero tilt
        some columns vanish, and a QR would then misplace the residual: its free directions
        absorb part of u)."""
        U, singular, Vt = np.linalg.svd(self.design(tilt), full_matrices=False)
        rank = int(np.sum(singular > 1e-12 * singular[0])) if singular.size else 0
        coordinates = U[:, :rank].T @ self.u
        theta = Vt[:rank].T @ (coordinates / singular[:rank])
        r = self.u - U[:, :rank] @ coordinates
        return float(r @ r), ((r, U[:, :rank]), theta)

    def residual(self, tilt: np.ndarray) -> float:
        return self.evaluate(tilt)[0]

    def linearize(self, tilt: np.ndarray, state: tuple) -> tuple[np.ndarray, np.ndarray]:
        """Kaufman's Jacobian ``-(I - P) dX/dtilt theta`` and the projected residual; gravity's
        derivative by central differences (a rotation of a 3-vector: exact to about 1e-11)."""
        (r, basis), theta = state
        h = 1e-6
        moved = np.empty((self.u.size, 2))
        for i in range(2):
            shift = np.eye(2)[i] * h
            dg = (
                tilted_gravity(self.gravity_urdf, tilt + shift)
                - tilted_gravity(self.gravity_urdf, tilt - shift)
            ) / (2 * h)
            moved[:, i] = sum(
                dg[axis] * (self.blocks[axis] @ theta[self.tilted]) for axis in range(3)
            )
        return -(moved - basis @ (basis.T @ moved)), r

    def search(self, start: np.ndarray, reference: float) -> tuple[np.ndarray, float, int]:
        """Levenberg-Marquardt on the variable-projection functional (Golub and Pereyra) from
        ``start``: converged when a step moves the tilt by under 1e-9 rad or lowers the
        residual by under 1e-13 of ``reference`` (the URDF gravity's)."""
        found = minimise(
            self.evaluate,
            self.linearize,
            start,
            max_iterations=_MAX_ITERATIONS,
            converged=lambda y0, y1, before, after: bool(
                np.max(np.abs(y1 - y0)) < 1e-9 or before - after < 1e-13 * reference
            ),
        )
        return found.y, found.cost, found.evaluations


def estimate_gravity_direction(
    system: ReducedSystem,
    columns: np.ndarray,
    n_inertial: int,
    gravity_urdf: np.ndarray,
    weights: np.ndarray,
) -> GravityEstimate:
    """Tilt minimising the weighted least-squares residual of the regressor columns ``columns``.

    ``system`` was reduced with the static unit-gravity regressors as extra columns; ``columns``
    should be the base columns for a *generic* gravity direction, because a tilt makes first
    moments identifiable that vertical gravity regroups (e.g. those of the first link).
    """
    problem = _TiltProblem(system, columns, n_inertial, gravity_urdf, weights)
    reference = problem.residual(np.zeros(2))
    tilt, value, evaluations = problem.search(np.zeros(2), reference)
    # A base on a wall or a ceiling is a quarter or half turn from level, beyond the basin of
    # the level start. Each such mounting is searched only when its own residual already beats
    # the level optimum's (five evaluations on an upright robot).
    for start in MOUNTING_TILTS_RAD:
        evaluations += 1
        if problem.residual(start) < value:
            candidate = problem.search(start, reference)
            evaluations += candidate[2]
            if candidate[1] < value:
                tilt, value = candidate[0], candidate[1]
    n_rows = system.n_rows
    sigma2 = value / max(n_rows - len(columns) - 2, 1)
    # Gauss-Newton: Cov(tilt) = 2 sigma^2 H^-1 with H the Hessian of the residual sum of squares.
    hessian = _hessian(problem.residual, tilt, step=1e-4)
    try:
        covariance = 2.0 * sigma2 * np.linalg.inv(hessian)
        std = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    except np.linalg.LinAlgError:
        std = np.full(2, np.inf)
    return GravityEstimate(
        tilted_gravity(gravity_urdf, tilt),
        tilt,
        std,
        float(np.sqrt(value / max(reference, 1e-300))),
        evaluations,
    )


def _hessian(function, x: np.ndarray, step: float) -> np.ndarray:
    """Central finite-difference Hessian of a scalar function of two variables."""
    hessian = np.empty((2, 2))
    basis = np.eye(2) * step
    center = function(x)
    for i in range(2):
        hessian[i, i] = (function(x + basis[i]) - 2 * center + function(x - basis[i])) / step**2
    cross = (
        function(x + basis[0] + basis[1])
        - function(x + basis[0] - basis[1])
        - function(x - basis[0] + basis[1])
        + function(x - basis[0] - basis[1])
    ) / (4 * step**2)
    hessian[0, 1] = hessian[1, 0] = cross
    return hessian
