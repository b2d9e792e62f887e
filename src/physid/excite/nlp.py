"""The excitation design NLP, solved by IPOPT through CasADi.

Decision variables: the packed Fourier coefficients ``x`` (:mod:`physid.excite.fourier`).

    minimise    criterion(q(x), dq(x), ddq(x))        (physid.excite.criterion)
    subject to  E x = 0                               zero velocity/acceleration at the ends
                lower <= P x <= upper, |V x| <= dq_max, |A x| <= ddq_max   on a dense grid
                |tau(q, dq, ddq)| <= tau_max          nominal torques on the same grid

The linear constraints are CasADi expressions. Pinocchio's CasADi bindings
(``pinocchio.casadi``) are absent from the PyPI ``pin`` wheels, so the regressor and the torques
enter as CasADi callbacks that evaluate Pinocchio numerically and give exact first derivatives
(chain rule through the linear Fourier basis); IPOPT uses a limited-memory Hessian.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import casadi as ca
import numpy as np

from physid.excite.criterion import Criterion
from physid.excite.fourier import FourierBasis
from physid.excite.limits import JointLimits, NominalTorques


class _Jacobian(ca.Callback):
    """The Jacobian (n_out, n_in) of a :class:`_Numeric`; inputs ``x`` and the (unused) output."""

    def __init__(self, name: str, n_in: int, n_out: int, jac: Callable) -> None:
        ca.Callback.__init__(self)
        self.n_in_, self.n_out_, self.jac = n_in, n_out, jac
        self.construct(name, {})

    def get_n_in(self) -> int:
        return 2

    def get_n_out(self) -> int:
        return 1

    def get_sparsity_in(self, i: int) -> ca.Sparsity:
        return ca.Sparsity.dense(self.n_in_, 1) if i == 0 else ca.Sparsity(self.n_out_, 1)

    def get_sparsity_out(self, i: int) -> ca.Sparsity:
        return ca.Sparsity.dense(self.n_out_, self.n_in_)

    def eval(self, arg: list) -> list:
        value = self.jac(np.asarray(arg[0], float).reshape(-1))
        return [ca.DM(np.asarray(value, float).reshape(self.n_out_, self.n_in_))]


class _Numeric(ca.Callback):
    """A CasADi function ``R^n_in -> R^n_out`` evaluated in NumPy, with a NumPy Jacobian."""

    def __init__(
        self,
        name: str,
        n_in: int,
        n_out: int,
        fun: Callable[[np.ndarray], np.ndarray],
        jac: Callable[[np.ndarray], np.ndarray],
    ) -> None:
        ca.Callback.__init__(self)
        self.n_in_, self.n_out_, self.fun, self.jac = n_in, n_out, fun, jac
        self.construct(name, {})

    def get_n_in(self) -> int:
        return 1

    def get_n_out(self) -> int:
        return 1

    def get_sparsity_in(self, i: int) -> ca.Sparsity:
        return ca.Sparsity.dense(self.n_in_, 1)

    def get_sparsity_out(self, i: int) -> ca.Sparsity:
        return ca.Sparsity.dense(self.n_out_, 1)

    def eval(self, arg: list) -> list:
        value = self.fun(np.asarray(arg[0], float).reshape(-1))
        return [ca.DM(np.asarray(value, float).reshape(self.n_out_, 1))]

    def has_jacobian(self) -> bool:
        return True

    def get_jacobian(self, name: str, inames: list, onames: list, opts: dict) -> ca.Function:
        self._jacobian = _Jacobian(name, self.n_in_, self.n_out_, self.jac)  # keep it alive
        return self._jacobian


@dataclass
class _Cache:
    x: np.ndarray | None = None
    value: float = float("nan")
    gradient: np.ndarray | None = None


class ExcitationProblem:
    """Criterion and torques of Fourier coefficients, on fixed time grids."""

    def __init__(
        self,
        basis: FourierBasis,
        criterion: Criterion,
        torques: NominalTorques,
        information_times: np.ndarray,
        constraint_times: np.ndarray,
    ) -> None:
        self.basis, self.criterion, self.torques = basis, criterion, torques
        self.info_rows = basis.rows(information_times)
        self.constraint_rows = basis.rows(constraint_times)
        self._cache = _Cache()
        self.evaluations = 0

    def _states(self, x: np.ndarray, rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X = np.asarray(x, float).reshape(self.basis.n_joints, self.basis.per_joint)
        return tuple(R @ X.T for R in rows)

    def objective(self, x: np.ndarray) -> float:
        return float(self.criterion.value(*self._states(x, self.info_rows)))

    def objective_gradient(self, x: np.ndarray) -> np.ndarray:
        cache = self._cache
        if cache.x is None or not np.array_equal(cache.x, x):
            self.evaluations += 1
            value, g_q, g_dq, g_ddq = self.criterion.value_and_gradient(
                *self._states(x, self.info_rows)
            )
            P, V, A = self.info_rows
            gradient = g_q.T @ P + g_dq.T @ V + g_ddq.T @ A  # (n, 1 + 2L)
            cache.x, cache.value, cache.gradient = np.array(x), value, gradient.reshape(1, -1)
        return cache.gradient

    def torque_values(self, x: np.ndarray) -> np.ndarray:
        return self.torques.torques(*self._states(x, self.constraint_rows)).reshape(-1)

    def torque_jacobian(self, x: np.ndarray) -> np.ndarray:
        _, d_q, d_dq, d_ddq = self.torques.derivatives(*self._states(x, self.constraint_rows))
        P, V, A = self.constraint_rows
        J = (
            np.einsum("kij,kc->kijc", d_q, P)
            + np.einsum("kij,kc->kijc", d_dq, V)
            + np.einsum("kij,kc->kijc", d_ddq, A)
        )
        K, n = d_q.shape[:2]
        return J.reshape(K * n, -1)


@dataclass(frozen=True)
class SolveResult:
    x: np.ndarray
    status: str  # IPOPT's return status
    success: bool
    iterations: int
    objective: float


def _linear_constraints(
    basis: FourierBasis, limits: JointLimits, rows
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Matrix and bounds of the position, velocity and acceleration limits on the grid."""
    n, m = basis.n_joints, basis.per_joint
    blocks, lower, upper = [], [], []
    P, V, A = rows
    bounds = (
        (P, limits.lower, limits.upper),
        (V, -limits.velocity, limits.velocity),
        (A, -limits.acceleration, limits.acceleration),
    )
    for R, low, high in bounds:
        for j in range(n):
            block = np.zeros((R.shape[0], n * m))
            block[:, j * m : (j + 1) * m] = R
            blocks.append(block)
            lower.append(np.full(R.shape[0], low[j]))
            upper.append(np.full(R.shape[0], high[j]))
    return np.vstack(blocks), np.concatenate(lower), np.concatenate(upper)


def _sparse(matrix: np.ndarray) -> ca.DM:
    """A CasADi matrix holding only the non-zeros of ``matrix`` (a sparse constraint Jacobian)."""
    cols, rows = np.nonzero(matrix.T)  # column-major, the order of CasADi's non-zeros
    pattern = ca.Sparsity.triplet(*matrix.shape, rows.tolist(), cols.tolist())
    return ca.DM(pattern, matrix[rows, cols])


def solve(
    problem: ExcitationProblem,
    limits: JointLimits,
    x0: np.ndarray,
    *,
    max_iterations: int = 150,
    tolerance: float = 1e-6,
    verbose: bool = False,
) -> SolveResult:
    """IPOPT on the design NLP from ``x0`` (which should satisfy the constraints)."""
    basis = problem.basis
    size = basis.size
    n_tau = problem.constraint_rows[0].shape[0] * basis.n_joints
    objective = _Numeric("criterion", size, 1, problem.objective, problem.objective_gradient)
    torque = _Numeric("torques", size, n_tau, problem.torque_values, problem.torque_jacobian)
    x = ca.MX.sym("x", size)
    E = basis.end_condition_matrix()
    L, low, high = _linear_constraints(basis, limits, problem.constraint_rows)
    effort = np.tile(limits.effort, problem.constraint_rows[0].shape[0])
    g = ca.vertcat(ca.mtimes(_sparse(E), x), ca.mtimes(_sparse(L), x), torque(x))
    lbg = np.concatenate([np.zeros(E.shape[0]), low, -effort])
    ubg = np.concatenate([np.zeros(E.shape[0]), high, effort])
    options = {
        "ipopt.hessian_approximation": "limited-memory",
        "ipopt.max_iter": int(max_iterations),
        "ipopt.tol": tolerance,
        "ipopt.acceptable_tol": 1e-4,
        # The start is feasible and interior (scaled into the limits): a small initial barrier
        # keeps IPOPT near it instead of first wandering to the centre of the feasible set.
        "ipopt.mu_strategy": "monotone",
        "ipopt.mu_init": 1e-3,
        "ipopt.print_level": 5 if verbose else 0,
        "ipopt.sb": "yes",
        "print_time": False,
    }
    solver = ca.nlpsol("excite", "ipopt", {"x": x, "f": objective(x), "g": g}, options)
    solution = solver(x0=ca.DM(x0), lbg=ca.DM(lbg), ubg=ca.DM(ubg))
    stats = solver.stats()
    return SolveResult(
        x=np.asarray(solution["x"], float).reshape(-1),
        status=str(stats.get("return_status", "unknown")),
        success=bool(stats.get("success", False)),
        iterations=int(stats.get("iter_count", -1)),
        objective=float(solution["f"]),
    )
