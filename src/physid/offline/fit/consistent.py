"""Physically consistent identification as a semidefinite program (CVXPY + Clarabel).

Fit the torques with *standard* parameters subject to, for every body, pseudo-inertia
``J(pi) >= margin * I`` (Wensing, Kim, Slotine 2017: J positive definite is exactly "a real rigid
body could have these parameters"), and non-negative viscous/Coulomb friction, armature and
coupled-motor inertia. A small pull toward the URDF prior picks one member of the family of
standard parameters that share the same base parameters and fills the directions the data do
not excite: the fit is a maximum a posteriori estimate with a Gaussian prior centred on the
URDF. With the log-det prior (the default) the objective is smooth and keeps every body inside
the cone by itself, so Newton steps from the prior solve it (:mod:`physid.offline.fit.polish`,
checked by the optimality conditions); otherwise Clarabel solves the SDP and its point is
polished by the same Newton steps: the directions the prior decides are otherwise only as exact
as the solver's duality gap, and moved with the last bits of the data.
:func:`consistent_standard_from_base` instead recovers consistent standard parameters that
reproduce given base parameters exactly, or says how far from consistency they are.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from physid.body.inertia import (
    PSEUDO_INERTIA_BASIS,
    ConsistencyReport,
    bodies_consistency,
    check_consistency,
    pi_from_pseudo_inertia,
    pseudo_inertia,
)
from physid.files.io import quiet_stderr
from physid.offline.fit.joint_prior import JointPrior
from physid.offline.fit.polish import (
    MapObjective,
    nearest_start,
    polish,
    solve_from,
    solve_from_prior,
)
from physid.offline.observe.reduced import ReducedSystem, triangular_factor
from physid.robot.model import RobotModel
from physid.robot.regressor import BaseParameters

if TYPE_CHECKING:  # CVXPY is imported where a problem is built: 0.7 s that Newton solves skip
    import cvxpy as cp

_NON_NEGATIVE_TERMS = ("fv", "fc", "fs", "phi1", "Ia", "Iam", "fvm", "fcm")
INACCURATE = "optimal_inaccurate"  # CVXPY's status of a solve at reduced accuracy
SOLVED = ("optimal", INACCURATE)  # CVXPY's statuses of a solved problem
# Clarabel's KKT solver. Its "auto" picks faer, whose supernodal factorisation is built for
# large systems; physid's SDPs are small (hundreds of variables, PSD blocks of 4 and 8) and are
# solved dozens of times per identification, where QDLDL's simple factorisation is faster.
DIRECT_SOLVE_METHOD = "qdldl"
# Clarabel's duality-gap and feasibility tolerances: its own default for the fits physid
# reports, and a looser one for fits on part of the data (the choices' and the prior check's
# cross-validation folds, the jackknife's block refits for the standard deviations) and for the
# tilt's mass comparison (a warning's threshold): they rank candidates or measure a spread, where
# the differences that matter are 1e-3 and up, and 1e-6 takes a quarter fewer interior-point
# iterations without changing a score or a choice.
DEFAULT_TOLERANCE = 1e-8
FOLD_TOLERANCE = 1e-6
# optima kept as Newton starts: a candidate's four folds and the fit of its whole data
RECENT_OPTIMA = 5


@dataclass(frozen=True)
class ConsistentFit:
    """Standard parameters from a constrained fit, with the solver's and the checker's verdicts."""

    theta: np.ndarray | None  # (p,) standard parameters, None if the solver failed
    status: str  # CVXPY status: "optimal", "optimal_inaccurate", "infeasible", ...
    consistent: bool  # every body passes inertia.check_consistency with margin 0
    bodies: dict[str, ConsistencyReport] = field(default_factory=dict)
    solve_time_s: float = 0.0
    message: str = ""  # one line; why it failed, or how far the base parameters had to move
    polished: bool = False  # the solver's point refined to the optimum (physid.offline.fit.polish)
    method: str = ""  # "newton" (physid.offline.fit.polish: from a recent optimum or the prior) or
    # "clarabel" (then polished); solve_time_s is that method's (Clarabel's with its compilation)
    margin: float = 0.0  # every body's pseudo-inertia was held at least this [kg m^2] x identity

    @property
    def inaccurate(self) -> bool:
        """Clarabel stopped at reduced accuracy (CVXPY's ``optimal_inaccurate``)."""
        return self.status == INACCURATE


DEFAULT_MARGIN = 1e-6  # kg m^2: J >= margin I keeps a body strictly inside the cone
MARGIN_FRACTION = 0.1  # of the URDF's smallest body eigenvalue, for robots whose bodies are small


def default_margin(model: RobotModel, prior: np.ndarray) -> float:
    """The consistency margin when the config gives none: :data:`DEFAULT_MARGIN`, or 10 % of the
    smallest eigenvalue of the URDF's body pseudo-inertias where that is smaller.

    An absolute 1e-6 kg m^2 is nothing for an industrial arm (its bodies' smallest eigenvalues
    are ten times that and more) but not for a small one: a gripper of a few grams lies below it,
    so the margin would force it heavier than its URDF, put the prior on the constraint and send
    every fit to the interior-point solver, which stops at reduced accuracy there; 10 % of the
    body's eigenvalue keeps the Newton steps and changes no error. Bodies whose URDF pseudo-inertia
    is singular (a point mass, a massless link: smallest eigenvalue below 1e-6 of its trace) do not
    set the scale; their prior is lifted :data:`LIFT_MARGINS` margins inside the cone by
    :func:`_positive_definite`.
    """
    return _margin_for(_prior_pseudo_inertias(model, prior))


def _margin_for(pseudo_inertias: np.ndarray) -> float:
    """:func:`default_margin` of the URDF bodies' pseudo-inertias (n_bodies, 4, 4)."""
    smallest = np.linalg.eigvalsh(pseudo_inertias)[:, 0] if len(pseudo_inertias) else []
    traces = np.trace(pseudo_inertias, axis1=1, axis2=2)
    regular = [e for e, trace in zip(smallest, traces, strict=True) if e >= _lift_floor(trace)]
    return min([DEFAULT_MARGIN, *(MARGIN_FRACTION * float(e) for e in regular)])


def _lift_floor(trace: float) -> float:
    """The smallest pseudo-inertia eigenvalue of a regular body of this trace: below it a body
    is singular (a point mass, a massless link), sets no margin (:func:`_margin_for`) and is
    lifted (:func:`_positive_definite`)."""
    return 1e-6 * max(float(trace), 1e-3)


def parameter_scales(model: RobotModel, prior: np.ndarray) -> np.ndarray:
    """Typical magnitude of each standard parameter, to condition the SDP and weigh the prior.

    Per body: mass scale ``m_s = max(prior mass, 0.1 kg)``, first moments ``m_s * 0.1 m``,
    inertias ``m_s * 0.01 m^2``. Joint and motor terms: 1 (N m s/rad, N m), armature 0.01 kg m^2.
    """
    layout = model.layout
    scales = np.ones(layout.size)
    for k in range(len(layout.body_joints)):
        mass_scale = max(float(prior[10 * k]), 0.1)
        scales[10 * k] = mass_scale
        scales[10 * k + 1 : 10 * k + 4] = 0.1 * mass_scale
        scales[10 * k + 4 : 10 * k + 10] = 0.01 * mass_scale
    for index, name in enumerate(layout.names[layout.n_inertial :], start=layout.n_inertial):
        if name.endswith((".Ia", ".Iam")):
            scales[index] = 0.01
    return scales


def _constraints(model: RobotModel, theta: cp.Expression, margin: float) -> list:
    import cvxpy as cp

    # A PSD variable equal to J, not ``(J + J.T) / 2 - margin I >> 0`` on the expression: the
    # latter compiles in half the time (no 16 extra variables and equalities per body) but on
    # real data Clarabel then needs almost twice the iterations and can fail a fold, which
    # changes the choices.
    layout = model.layout
    constraints = []
    identity = np.eye(4)
    for k in range(len(layout.body_joints)):
        J = pseudo_inertia_expression(theta[10 * k : 10 * k + 10])
        constraints.append(cp.Variable((4, 4), PSD=True) == J - margin * identity)
    non_negative = _non_negative_indices(model)
    if non_negative:
        constraints.append(theta[non_negative] >= 0)
    return constraints


def _non_negative_indices(model: RobotModel) -> list[int]:
    """Friction, armature and motor-inertia terms: constrained to be >= 0."""
    names = model.layout.names
    return [i for i, name in enumerate(names) if name.rsplit(".", 1)[1] in _NON_NEGATIVE_TERMS]


def pseudo_inertia_expression(pi: cp.Expression, left: np.ndarray | None = None) -> cp.Expression:
    """``L J(pi) L^T`` (``L = I`` by default) as one affine map of the 10 inertial parameters.

    One matrix product instead of a sum of ten scaled basis matrices: CVXPY compiles it several
    times faster, and compiling is most of the cost of these small SDPs.
    """
    import cvxpy as cp

    basis = PSEUDO_INERTIA_BASIS if left is None else left @ PSEUDO_INERTIA_BASIS @ left.T
    return cp.reshape(basis.reshape(10, 16).T @ pi, (4, 4), order="C")


# A singular URDF body's prior is lifted this many consistency margins inside the cone.
LIFT_MARGINS = 10.0


def _positive_definite(J0: np.ndarray, margin: float) -> np.ndarray:
    """A URDF body may be massless, a point mass or inconsistent (smallest pseudo-inertia
    eigenvalue below 1e-6 of its trace); lift its pseudo-inertia inside the cone so the
    divergence is defined (the prior then says "tiny body", which is what it meant), by at
    least :data:`LIFT_MARGINS` consistency ``margin`` s, so that the prior is itself a feasible
    fit. Lifted only to the margin itself, a small point mass would sit on the constraint at
    every optimum and send every fit to Clarabel instead of Newton steps; lifted by a few
    margins (a body of millimetres) it leaves the errors and masses as they are. A regular
    body is the URDF's, whatever the margin (a margin given in the config is a constraint on the
    fit, not a change of the prior)."""
    floor = _lift_floor(np.trace(J0))
    smallest = float(np.linalg.eigvalsh(J0)[0])
    if smallest >= floor:
        return J0
    return J0 + (max(floor, LIFT_MARGINS * margin) - smallest) * np.eye(4)


def _prior_pseudo_inertias(model: RobotModel, prior: np.ndarray) -> np.ndarray:
    """Each body's prior pseudo-inertia ``J0``, as the URDF has it (n_bodies, 4, 4)."""
    bodies = np.asarray(prior[: model.layout.n_inertial], float).reshape(-1, 10)
    return np.array([pseudo_inertia(pi) for pi in bodies]).reshape(-1, 4, 4)


def _lifted(pseudo_inertias: np.ndarray, margin: float) -> np.ndarray:
    """Each body's prior pseudo-inertia ``J0``, lifted inside the cone (:func:`_positive_definite`)
    where the URDF's is not (n_bodies, 4, 4)."""
    lifted = [_positive_definite(J0, margin) for J0 in pseudo_inertias]
    return np.array(lifted).reshape(-1, 4, 4)


def _root_inverses(lifted: np.ndarray) -> np.ndarray:
    """``L0^-1`` of each ``J0 = L0 L0^T`` (n_bodies, 4, 4)."""
    return np.linalg.inv(np.linalg.cholesky(lifted))


def _logdet_divergence(theta: cp.Expression, root_inverses: np.ndarray) -> cp.Expression:
    """Sum over bodies of ``D(J || J0) = -log det(J0^-1 J) + tr(J0^-1 J) - 4`` (Lee, Wensing and
    Park 2020): convex in J, invariant to units and frames, and a barrier that keeps each body
    off the boundary of physical consistency. Near J0 it equals ``1/2 ||J0^-1/2 dJ J0^-1/2||_F^2``,
    so weighting it by ``1 / rho^2`` makes ``rho`` a relative standard deviation."""
    import cvxpy as cp

    total = 0
    for k, root_inverse in enumerate(root_inverses):
        scaled = pseudo_inertia_expression(theta[10 * k : 10 * k + 10], root_inverse)
        total += -cp.log_det(scaled) + cp.trace(scaled) - 4
    return total


# A body whose pseudo-inertia's smallest eigenvalue misses the margin by at most this share of
# its largest is one the solver left outside the cone within its own accuracy (see _onto_cone):
# ten times the fold fits' tolerance (FOLD_TOLERANCE)
SOLVER_SLACK = 1e-5


def _onto_cone(model: RobotModel, theta: np.ndarray, margin: float) -> np.ndarray:
    """``theta`` with every body that Clarabel left just outside the cone moved onto ``J >=
    margin I`` (the nearest such J in the Frobenius norm: its eigenvalues raised to the margin,
    or to a hair above 0 for a margin of 0, so that it passes :func:`check_consistency`).

    The interior-point solver meets its constraints to a tolerance relative to the problem's
    scale, not to each body's: without a body prior (``prior_std_relative: null``) a body the
    data leave free goes to the cone's boundary, where the solver's point may lie outside it
    by a few parts in 1e9 of the body's largest eigenvalue: refusing that point would fail the
    run with "no physically consistent parameters" while a consistent fit lies next to it. Only a
    miss within :data:`SOLVER_SLACK` of the body's own largest eigenvalue is moved; a larger one is
    the solver's failure, and reported as such."""
    theta = theta.copy()
    for joint in model.layout.body_joints:
        part = model.layout.body_slice(joint)
        theta[part] = body_onto_cone(theta[part], margin)
    return theta


def body_onto_cone(pi: np.ndarray, margin: float) -> np.ndarray:
    """One body's inertial parameters ``pi`` (10,) as :func:`_onto_cone` moves them: onto
    ``J >= margin I`` when the solver left J's smallest eigenvalue at or below 0 within
    :data:`SOLVER_SLACK` of its largest; unchanged otherwise."""
    values, vectors = np.linalg.eigh(pseudo_inertia(pi))
    if values[0] > 0.0 or values[0] < margin - SOLVER_SLACK * max(values[-1], 0.0):
        return pi
    floor = max(margin, 1e-12 * values[-1])
    raised = (vectors * np.maximum(values, floor)) @ vectors.T
    return pi_from_pseudo_inertia(0.5 * (raised + raised.T))


def _verify(model: RobotModel, theta: np.ndarray) -> tuple[bool, dict[str, ConsistencyReport]]:
    joints = model.layout.body_joints
    if not np.all(np.isfinite(theta[: model.layout.n_inertial])):  # named by check_consistency
        reports = {
            joint: check_consistency(theta[model.layout.body_slice(joint)]) for joint in joints
        }
    else:
        bodies = np.array([theta[model.layout.body_slice(joint)] for joint in joints])
        reports = dict(zip(joints, bodies_consistency(bodies), strict=True))
    return all(r.consistent for r in reports.values()), reports


def _clean_signs(model: RobotModel, theta: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """Solver round-off can leave -1e-10 on a constrained-non-negative term: make it 0."""
    theta = theta.copy()
    for i, name in enumerate(model.layout.names):
        if name.rsplit(".", 1)[1] in _NON_NEGATIVE_TERMS and -1e-7 * scales[i] < theta[i] < 0:
            theta[i] = 0.0
    return theta


def solve_sdp(problem: cp.Problem, tolerance: float | None = None) -> str:
    """Solve with Clarabel; the status says whether the solution is accurate (no warnings).
    ``tolerance``: its duality-gap and feasibility tolerances (None: :data:`DEFAULT_TOLERANCE`),
    always passed: CVXPY may reuse the solver of the problem's last solve, settings included.

    A panic inside Clarabel's Rust code (seen on fuzzed inputs) reaches Python as pyo3's
    ``PanicException``, a ``BaseException``: it becomes a ``solver_error`` status, and what the
    panic prints on file descriptor 2 is kept off the terminal.
    """
    import cvxpy as cp

    tolerance = DEFAULT_TOLERANCE if tolerance is None else tolerance
    settings = {"tol_gap_abs": tolerance, "tol_gap_rel": tolerance, "tol_feas": tolerance}
    try:
        with quiet_stderr():  # also silences the solver's UserWarnings: the status reports them
            problem.solve(solver=cp.CLARABEL, direct_solve_method=DIRECT_SOLVE_METHOD, **settings)
    except cp.SolverError as error:
        return f"solver_error: {str(error).splitlines()[0]}"
    except BaseException as error:  # noqa: BLE001 - pyo3 panics are BaseExceptions
        if type(error).__name__ != "PanicException":
            raise
        return f"solver_error: the solver panicked ({str(error).splitlines()[0][:120]})"
    return str(problem.status)


class ConsistentProblem:
    """The consistent MAP problem of one model and prior, set up once and solved for any data.

    Cross-validation solves it for every fold of every candidate (:mod:`.choices`,
    :mod:`.against_prior`). With the log-det prior the objective is smooth and its barrier keeps
    the bodies inside the cone, so each solve first runs Newton steps from the last solve's
    optimum (:func:`~physid.offline.fit.polish.solve_from`: the folds of one candidate share most
    of their rows), else from the prior (:func:`~physid.offline.fit.polish.solve_from_prior`),
    checked by the optimality conditions;
    where they cannot reach it (the euclidean metric, where constraints can be active; a step
    that stalls) the SDP is solved by Clarabel
    (:attr:`sdp`, compiled by CVXPY on first use) and its point polished. The Newton solves
    reach the SDP's optimum to rounding at a fraction of Clarabel's cost, and skip CVXPY's
    compilation altogether (docs/benchmarks.md, "Why the defaults are what they are").
    """

    def __init__(
        self, model: RobotModel, prior: np.ndarray, *, margin: float | None, prior_metric: str
    ) -> None:
        layout = model.layout
        self.model, self.prior = model, prior
        urdf_bodies = _prior_pseudo_inertias(model, prior)
        self.margin = _margin_for(urdf_bodies) if margin is None else margin
        self.scales = parameter_scales(model, prior)
        self.prior_mass = layout.total_mass(prior)
        self.root_inverses = self.body_maps = None
        # The prior term pulls each body toward its URDF pseudo-inertia J0 (a singular one lifted
        # LIFT_MARGINS margins inside the cone): Newton steps start there (newton_start); where
        # a regular body lies under a margin given in the config they cannot, and Clarabel
        # solves (the euclidean metric has no barrier: the SDP only).
        self.lifted_start = None
        if prior_metric == "logdet":
            lifted = _lifted(urdf_bodies, self.margin)
            self.lifted_start = np.zeros(layout.size)
            for k in np.flatnonzero(np.any(lifted != urdf_bodies, axis=(1, 2))):  # lifted bodies
                block = slice(10 * k, 10 * k + 10)
                self.lifted_start[block] = (
                    pi_from_pseudo_inertia(lifted[k]) - prior[block]
                ) / self.scales[block]
            self.root_inverses = _root_inverses(lifted)
            self.body_maps = np.einsum(
                "kab,ibc,kdc->kiad", self.root_inverses, PSEUDO_INERTIA_BASIS, self.root_inverses
            )
        self.non_negative = np.zeros(layout.size, bool)
        self.non_negative[_non_negative_indices(model)] = True
        self._sdp: _CompiledSdp | None = None
        # the last solves' optima (scaled variable): the next solve's Newton steps start at the
        # one nearest its optimum (nearest_start; folds of one candidate share three quarters
        # of their rows, a fold of the next candidate most of its numbers), else at the prior
        self._recent_optima: list[np.ndarray] = []

    @property
    def newton_start(self) -> bool:
        """Whether Newton steps are tried before the SDP: the log-det prior's barrier."""
        return self.body_maps is not None

    @property
    def sdp(self) -> _CompiledSdp:
        """The same problem stated in CVXPY for Clarabel, built on first use."""
        if self._sdp is None:
            self._sdp = _CompiledSdp(self)
        return self._sdp

    def objective(
        self,
        system: ReducedSystem,
        weights: np.ndarray,
        *,
        noise_variance: float,
        prior_std_relative: float | None,
        prior_total_mass_std_relative: float | None,
        joint: JointPrior | None,
    ) -> MapObjective:
        """The objective of :func:`consistent_least_squares` on ``system`` in the scaled variable
        ``x`` (``theta = prior + scales * x``)."""
        layout = self.model.layout
        scales, prior = self.scales, self.prior
        n_params = layout.size
        X, u = system.stacked(np.arange(n_params), weights)
        filled = system.filled()[0].reshape(-1)  # rows of the joints' factors that hold data
        X, u = X[filled], u[filled]
        rows = system.n_rows
        # Everything divided by the rows (and the data by the noise variance): the solver sees
        # O(1) numbers whatever the data length. The data term ||A x - b||^2 through the
        # triangular factor of [A | b]: p x p.
        factor = 1.0 / np.sqrt(noise_variance * rows)
        augmented = np.column_stack([(X * scales) * factor, (u - X @ prior) * factor])
        triangle = triangular_factor(augmented)
        square = np.zeros((n_params + 1, n_params + 1))
        square[: triangle.shape[0]] = triangle[: n_params + 1]
        inertial_weight = 1e-8 if prior_std_relative is None else prior_std_relative**-2 / rows
        joint_terms = np.arange(layout.n_inertial, n_params)
        weight = np.zeros(n_params)
        held = np.zeros(n_params, bool)
        if joint is None:
            weight[joint_terms] = 1e-4  # sqrt of the 1e-8 tie-breaker per row
        else:
            free = joint_terms[~joint.held[joint_terms]]
            weight[free] = scales[free] / joint.std[free] / np.sqrt(rows)
            held[joint_terms[joint.held[joint_terms]]] = True
        mass_weight = 0.0
        if prior_total_mass_std_relative is not None and self.prior_mass > 0:
            mass_weight = (prior_total_mass_std_relative * self.prior_mass) ** -2 / rows
        return MapObjective(
            A=square[:n_params, :n_params],
            b=square[:n_params, n_params],
            scales=scales,
            prior=prior,
            n_bodies=len(layout.body_joints),
            inertial_weight=inertial_weight,
            joint_weight=weight,
            mass_weight=mass_weight,
            prior_mass=float(self.prior_mass),
            held=held,
            non_negative=self.non_negative,
            body_maps=self.body_maps,
            margin=self.margin,
            lifted_start=self.lifted_start,
        )

    def solve(
        self,
        system: ReducedSystem,
        weights: np.ndarray,
        *,
        tolerance: float | None = None,
        method: str = "auto",
        **terms: Any,
    ) -> ConsistentFit:
        """The fit of :func:`consistent_least_squares` on ``system`` (module docstring there);
        ``terms``: the noise variance and prior strengths of :meth:`objective`; ``tolerance``:
        Clarabel's when it solves (:func:`solve_sdp`; :data:`FOLD_TOLERANCE` for fold fits);
        ``method``: ``auto`` (Newton steps from the nearest recent optimum or the prior, else
        Clarabel) or ``sdp`` (Clarabel, then the polish)."""
        if method not in ("auto", "sdp"):
            raise ValueError(f"method must be auto or sdp, not {method!r}")
        objective = self.objective(system, weights, **terms)
        started = time.perf_counter()
        x = None
        # without a body prior (prior_std_relative None) the barrier is a 1e-8 tie-breaker:
        # Newton steps from the prior crawl to the boundary and give up, 0.1 s per fit
        newton = method == "auto" and self.newton_start
        if newton and terms.get("prior_std_relative") is not None:
            start = nearest_start(objective, self._recent_optima)
            if start is not None:
                x = solve_from(objective, start)
            if x is None:
                x = solve_from_prior(objective)
        status, used, polished = "optimal", "newton", True
        if x is None:
            used = "clarabel"
            started = time.perf_counter()  # the time of the method that solved (and compiled)
            status, x = self.sdp.solve(objective, tolerance)
            if status not in SOLVED or x is None:
                elapsed = time.perf_counter() - started
                return ConsistentFit(
                    None,
                    status,
                    False,
                    {},
                    elapsed,
                    f"consistent fit failed: {status}",
                    method=used,
                    margin=self.margin,
                )
            refined = polish(objective, x)
            polished = refined is not None
            x = x if refined is None else refined
        elapsed = time.perf_counter() - started
        self._recent_optima = [x, *self._recent_optima[: RECENT_OPTIMA - 1]]
        prior, held = self.prior, objective.held
        value = _clean_signs(self.model, prior + self.scales * x, self.scales)
        value[held] = prior[held]  # exactly, not to the solver's tolerance
        if used == "clarabel":
            value = _onto_cone(self.model, value, self.margin)
        consistent, reports = _verify(self.model, value)
        message = "" if consistent else _first_violation(reports)
        return ConsistentFit(
            value,
            status,
            consistent,
            reports,
            elapsed,
            message,
            polished=polished,
            method=used,
            margin=self.margin,
        )


class _CompiledSdp:
    """:class:`ConsistentProblem` in CVXPY (disciplined parametrized programming): compiled once,
    each solve refills the parameters from a :class:`MapObjective` and runs Clarabel."""

    def __init__(self, owner: ConsistentProblem) -> None:
        import cvxpy as cp

        layout = owner.model.layout
        n_params = layout.size
        self.x = cp.Variable(n_params)
        theta = owner.prior + cp.multiply(owner.scales, self.x)
        self.A = cp.Parameter((n_params, n_params), name="A")
        self.b = cp.Parameter(n_params, name="b")
        self.inertial_weight = cp.Parameter(nonneg=True, name="inertial_weight")
        self.joint_weight = cp.Parameter(n_params, nonneg=True, name="joint_weight")
        self.mass_weight = cp.Parameter(nonneg=True, name="mass_weight")
        self.held = cp.Parameter(n_params, nonneg=True, name="held")
        objective = cp.sum_squares(self.A @ self.x - self.b)
        if owner.root_inverses is not None:
            objective += self.inertial_weight * _logdet_divergence(theta, owner.root_inverses)
        else:
            objective += self.inertial_weight * cp.sum_squares(self.x[: layout.n_inertial])
        objective += cp.sum_squares(cp.multiply(self.joint_weight, self.x))
        if owner.prior_mass > 0:
            objective += self.mass_weight * cp.square(
                cp.sum(theta[layout.mass_indices]) - owner.prior_mass
            )
        constraints = _constraints(owner.model, theta, owner.margin)
        constraints.append(cp.multiply(self.held, self.x) == 0)
        self.problem = cp.Problem(cp.Minimize(objective), constraints)

    def fill(self, objective: MapObjective) -> None:
        """Set the parameters to ``objective``'s values."""
        self.A.value, self.b.value = objective.A, objective.b
        self.inertial_weight.value = objective.inertial_weight
        self.joint_weight.value = objective.joint_weight
        self.mass_weight.value = objective.mass_weight
        self.held.value = objective.held.astype(float)

    def solve(
        self, objective: MapObjective, tolerance: float | None
    ) -> tuple[str, np.ndarray | None]:
        """Clarabel's status and point for ``objective`` (:func:`solve_sdp`)."""
        self.fill(objective)
        status = solve_sdp(self.problem, tolerance)
        return status, None if self.x.value is None else np.array(self.x.value)


def consistent_least_squares(
    model: RobotModel,
    system: ReducedSystem,
    weights: np.ndarray,
    prior: np.ndarray,
    *,
    noise_variance: float = 1.0,
    margin: float = 1e-6,
    prior_std_relative: float | None = 0.3,
    prior_total_mass_std_relative: float | None = 0.02,
    prior_metric: str = "logdet",
    joint: JointPrior | None = None,
    problem: ConsistentProblem | None = None,
    tolerance: float | None = None,
) -> ConsistentFit:
    """Maximum a posteriori standard parameters under the consistency constraints.

    Minimises ``||w (tau - W theta)||^2 / noise_variance`` plus a Gaussian prior centred on the
    URDF: each body's pseudo-inertia with relative standard deviation ``rho = prior_std_relative``
    through the log-det divergence (``prior_metric="logdet"``, :func:`_logdet_divergence`), or
    each inertial parameter with standard deviation ``rho * s`` (``"euclidean"``, ``s`` from
    :func:`parameter_scales`), and the total moving mass with
    relative standard deviation ``prior_total_mass_std_relative`` (a robot's weight is usually
    known far better than how it splits between links, and joint torques of a fixed-base arm
    cannot tell it); joint and motor terms get the Gaussian prior of ``joint``
    (:mod:`physid.offline.fit.joint_prior`: centred on the URDF's values, a stated std in torque,
    the terms it holds fixed at their prior), or without it only a 1e-8 tie-breaker.
    Subject to ``J_b(theta) >= margin I`` for every body and non-negative friction/armature.
    ``system`` holds the standard regressor in its first p columns, ``weights`` (n,) are the WLS
    row weights and ``noise_variance`` the residual variance of that weighted system (eq. 7), so
    the data term is a chi-square. None switches a prior term off. ``problem``: a compiled
    :class:`ConsistentProblem` of this model, prior, margin and metric to reuse;
    ``tolerance``: the solver's (:func:`solve_sdp`).
    """
    system = system.standard_only()
    if problem is None:
        problem = ConsistentProblem(model, prior, margin=margin, prior_metric=prior_metric)
    return problem.solve(
        system,
        weights,
        noise_variance=noise_variance,
        prior_std_relative=prior_std_relative,
        prior_total_mass_std_relative=prior_total_mass_std_relative,
        joint=joint,
        tolerance=tolerance,
    )


def _first_violation(reports: dict[str, ConsistencyReport]) -> str:
    for joint, report in reports.items():
        if not report.consistent:
            return f"body '{joint}': {report.reason}"
    return ""


def consistent_standard_from_base(
    model: RobotModel,
    base: BaseParameters,
    theta_base: np.ndarray,
    base_covariance: np.ndarray,
    prior: np.ndarray,
    *,
    margin: float = 1e-6,
) -> ConsistentFit:
    """Consistent standard parameters whose base parameters equal ``theta_base``.

    Among all such, the one closest to the prior (scaled). If none exists, the base parameters
    themselves are inconsistent: the closest consistent set in the Mahalanobis metric of
    ``base_covariance`` is returned with ``status = "infeasible"``-derived message giving the
    distance in standard deviations, so the caller can say why.
    """
    import cvxpy as cp

    scales = parameter_scales(model, prior)
    K = base.projection
    x = cp.Variable(model.layout.size)
    theta = prior + cp.multiply(scales, x)
    constraints = _constraints(model, theta, margin)
    exact = cp.Problem(cp.Minimize(cp.sum_squares(x)), [K @ theta == theta_base, *constraints])
    started = time.perf_counter()
    status = solve_sdp(exact)
    if status in SOLVED and x.value is not None:
        value = _clean_signs(model, prior + scales * x.value, scales)
        consistent, reports = _verify(model, value)
        return ConsistentFit(
            value, status, consistent, reports, time.perf_counter() - started, margin=margin
        )
    # Infeasible: how far must the base parameters move, in standard deviations?
    whitening = np.linalg.inv(np.linalg.cholesky(base_covariance + 1e-18 * np.eye(len(theta_base))))
    nearest = cp.Problem(
        cp.Minimize(
            cp.sum_squares(whitening @ (K @ theta - theta_base)) + 1e-9 * cp.sum_squares(x)
        ),
        constraints,
    )
    nearest_status = solve_sdp(nearest)
    elapsed = time.perf_counter() - started
    if nearest_status not in SOLVED or x.value is None:
        return ConsistentFit(
            None, status, False, {}, elapsed, f"no consistent set found: {status}", margin=margin
        )
    value = _clean_signs(model, prior + scales * x.value, scales)
    shift = (K @ value - theta_base) / np.sqrt(np.diag(base_covariance))
    worst = int(np.argmax(np.abs(shift)))
    consistent, reports = _verify(model, value)
    message = (
        f"the base parameters are not physically consistent: the nearest consistent set moves "
        f"them by {np.linalg.norm(whitening @ (K @ value - theta_base)):.3g} sigma in total, most "
        f"'{base.short_names[worst]}' by {shift[worst]:+.3g} sigma"
    )
    return ConsistentFit(value, "infeasible", consistent, reports, elapsed, message, margin=margin)
