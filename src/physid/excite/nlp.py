"""The excitation design NLP, solved by IPOPT through CasADi.

Decision variables: the packed Fourier coefficients ``x`` (:mod:`physid.excite.fourier`).

    minimise    criterion(q(x), dq(x), ddq(x))        (physid.excite.criterion)
    subject to  E x = 0                               zero velocity/acceleration at the ends
                lower <= P x <= upper, |V x| <= dq_max, |A x| <= ddq_max   on a dense grid
                |tau(q, dq, ddq)| <= tau_max          nominal torques on the same grid
                dist(q) >= d_min, box_lo <= p(q) <= box_hi   (optional) self-collision and
                                                      workspace on the same grid
                                                      (:mod:`physid.excite.geometry`)

The linear constraints are CasADi expressions. Pinocchio's CasADi bindings
(``pinocchio.casadi``) are absent from the PyPI ``pin`` wheels, so the regressor and the torques
enter as CasADi callbacks that evaluate Pinocchio numerically and give exact first derivatives
(chain rule through the linear Fourier basis); IPOPT uses a limited-memory Hessian.

IPOPT's iterates are watched by an iteration callback: it reports progress, stops the solve at
a wall-clock budget (the design must end on a 7-joint arm in minutes), and keeps the best
iterate within every constraint, which is what is returned: the log condition number is not
smooth (the extreme singular values cross), so the last iterate is often not the best. IPOPT's
return status becomes a :class:`physid.status.Status` through one table, :data:`IPOPT_STATUS`
(the callback's stop: ``time_limit``); its own string is kept as a solver detail.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import casadi as ca
import numpy as np

from physid.excite.criterion import Criterion
from physid.excite.fourier import FourierBasis
from physid.excite.geometry import GeometryConstraints
from physid.excite.limits import JointLimits, NominalTorques
from physid.status import Status


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
        geometry: GeometryConstraints | None = None,
    ) -> None:
        self.basis, self.criterion, self.torques = basis, criterion, torques
        self.geometry = geometry
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

    def geometry_values(self, x: np.ndarray) -> np.ndarray:
        q = self._states(x, self.constraint_rows)[0]
        return self.geometry.values(q).reshape(-1)

    def geometry_jacobian(self, x: np.ndarray) -> np.ndarray:
        q = self._states(x, self.constraint_rows)[0]
        d_q = self.geometry.jacobian(q)  # (K, r, n)
        J = np.einsum("krj,kc->krjc", d_q, self.constraint_rows[0])
        return J.reshape(d_q.shape[0] * d_q.shape[1], -1)


# IPOPT's return status (CasADi's ``stats()["return_status"]``, the ApplicationReturnStatus of
# IPOPT's documentation) as a physid status; one not listed is a numerical failure.
IPOPT_STATUS: dict[str, Status] = {
    "Solve_Succeeded": Status.OK,
    "Solved_To_Acceptable_Level": Status.OK,
    "Feasible_Point_Found": Status.OK,
    "Maximum_Iterations_Exceeded": Status.NOT_CONVERGED,
    "User_Requested_Stop": Status.TIME_LIMIT,  # _Watch stops a solve at its time limit only
    "Maximum_CpuTime_Exceeded": Status.TIME_LIMIT,
    "Maximum_WallTime_Exceeded": Status.TIME_LIMIT,
    "Search_Direction_Becomes_Too_Small": Status.STALLED,
    "Restoration_Failed": Status.STALLED,
    "Infeasible_Problem_Detected": Status.STALLED,
}


@dataclass(frozen=True)
class SolveResult:
    x: np.ndarray  # the best iterate within the constraints (the last one if none was)
    status: Status  # what IPOPT's end means (IPOPT_STATUS; its wall-clock stop: time_limit)
    ipopt_status: str  # IPOPT's return status as it gave it (a solver detail)
    success: bool
    iterations: int
    objective: float


class _Watch(ca.Callback):
    """IPOPT's iteration callback: progress, the wall-clock budget, the best feasible iterate."""

    def __init__(self, nx: int, lbg: np.ndarray, ubg: np.ndarray, deadline: float, report) -> None:
        ca.Callback.__init__(self)
        self.nx, self.lbg, self.ubg, self.deadline, self.report = nx, lbg, ubg, deadline, report
        self.iteration, self.best_x, self.best_f, self.timed_out = 0, None, np.inf, False
        self.construct("watch", {})

    def get_n_in(self) -> int:
        return ca.nlpsol_n_out()

    def get_n_out(self) -> int:
        return 1

    def get_name_in(self, i: int) -> str:
        return ca.nlpsol_out(i)

    def get_name_out(self, i: int) -> str:
        return "stop"

    def get_sparsity_in(self, i: int) -> ca.Sparsity:
        name = ca.nlpsol_out(i)
        if name == "f":
            return ca.Sparsity.scalar()
        if name in ("x", "lam_x"):
            return ca.Sparsity.dense(self.nx)
        if name in ("g", "lam_g"):
            return ca.Sparsity.dense(len(self.lbg))
        return ca.Sparsity(0, 0)

    def eval(self, arg: list) -> list:
        f, g = float(arg[1]), np.asarray(arg[2], float).reshape(-1)
        violation = max(np.max(self.lbg - g, initial=0.0), np.max(g - self.ubg, initial=0.0))
        if violation <= 1e-6 and f < self.best_f:
            self.best_x, self.best_f = np.asarray(arg[0], float).reshape(-1), f
        if self.report is not None:
            self.report(self.iteration, f, self.best_f)
        self.iteration += 1
        self.timed_out = time.monotonic() > self.deadline
        return [1 if self.timed_out else 0]


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
    time_limit_s: float = np.inf,
    report=None,
) -> SolveResult:
    """IPOPT on the design NLP from ``x0`` (which should satisfy the constraints), stopped after
    ``time_limit_s`` of wall-clock time; ``report(iteration, criterion, best feasible)`` is
    called at every iteration."""
    basis = problem.basis
    size = basis.size
    n_tau = problem.constraint_rows[0].shape[0] * basis.n_joints
    objective = _Numeric("criterion", size, 1, problem.objective, problem.objective_gradient)
    torque = _Numeric("torques", size, n_tau, problem.torque_values, problem.torque_jacobian)
    x = ca.MX.sym("x", size)
    E = basis.end_condition_matrix()
    L, low, high = _linear_constraints(basis, limits, problem.constraint_rows)
    effort = np.tile(limits.effort, problem.constraint_rows[0].shape[0])
    blocks = [ca.mtimes(_sparse(E), x), ca.mtimes(_sparse(L), x), torque(x)]
    lbg = [np.zeros(E.shape[0]), low, -effort]
    ubg = [np.zeros(E.shape[0]), high, effort]
    geometry = problem.geometry
    if geometry is not None:
        K = problem.constraint_rows[0].shape[0]
        block = _Numeric(
            "geometry", size, K * geometry.size, problem.geometry_values, problem.geometry_jacobian
        )
        blocks.append(block(x))
        lbg.append(np.tile(geometry.lower, K))
        ubg.append(np.tile(geometry.upper, K))
    g, lbg, ubg = ca.vertcat(*blocks), np.concatenate(lbg), np.concatenate(ubg)
    deadline = time.monotonic() + time_limit_s
    watch = _Watch(size, lbg, ubg, deadline, report)
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
        "iteration_callback": watch,
    }
    solver = ca.nlpsol("excite", "ipopt", {"x": x, "f": objective(x), "g": g}, options)
    solution = solver(x0=ca.DM(x0), lbg=ca.DM(lbg), ubg=ca.DM(ubg))
    stats = solver.stats()
    ipopt_status = str(stats.get("return_status", "unknown"))
    status = IPOPT_STATUS.get(ipopt_status, Status.NUMERICAL_FAILURE)
    last = np.asarray(solution["x"], float).reshape(-1)
    return SolveResult(
        x=last if watch.best_x is None else watch.best_x,
        status=status,
        ipopt_status=ipopt_status,
        success=bool(stats.get("success", False)),
        iterations=int(stats.get("iter_count", -1)),
        objective=float(solution["f"]) if watch.best_x is None else watch.best_f,
    )
