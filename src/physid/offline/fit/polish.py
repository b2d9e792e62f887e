"""Newton polish of the consistent MAP fit
(:class:`physid.offline.fit.consistent.ConsistentProblem`).

An interior-point solver stops at a duality gap (1e-8 for the reported fit, 1e-6 for the folds).
Along the directions the data barely excite and the prior decides (a first link's mass, a
regrouped inertia) the objective is nearly flat, so the solver's point there is only as good as
that gap: the last bits of the input (a log's stamps rounded to nanoseconds, or BLAS run on
another number of threads) move such a mass by far more than rounding while the training error
agrees to rounding. The objective is smooth and strictly convex: a
least-squares term, quadratic priors and, per body, the log-det divergence of Lee, Wensing and
Park (2020), ``-log det S + tr S - 4`` with ``S = L0^-1 J(theta) L0^-T`` affine in theta, which
is itself a barrier that keeps every pseudo-inertia off the boundary of the cone. So from the
solver's point a few Newton steps on the same objective reach the optimum to rounding, with the
non-negative terms the solver left at zero (friction, armature: their constraint active) held at
zero and the terms the fit holds fixed left alone. The Karush-Kuhn-Tucker conditions are checked
at the end (every pseudo-inertia above the margin, every free non-negative term positive, every
term held at zero pushing against its bound); when one fails the solver's point is kept.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from scipy.linalg.lapack import dpotrf, dpotrs

from physid.body.inertia import PSEUDO_INERTIA_BASIS

# a non-negative term the solver left below this share of its scale is taken as at its bound
_AT_BOUND = 1e-6
_MAX_STEPS = 30
_BASIS = PSEUDO_INERTIA_BASIS.reshape(10, 16)
# From the prior the first steps are damped (the data pull far from it): a few dozen steps
# reach almost every fit's optimum (docs/benchmarks.md); beyond 60 the continuation takes over
_MAX_STEPS_FROM_PRIOR = 60
# where a term bounded below by zero starts when its prior is at (or below) zero: inside its
# bound, by this share of its scale, so that it is free until a step runs into the bound
_INTERIOR = 1e-3


@dataclass(frozen=True)
class MapObjective:
    """The objective of ``ConsistentProblem`` in its scaled variable ``x``
    (``theta = prior + scales * x``), evaluated numerically:

    ``||A x - b||^2 + inertial_weight * prior term + ||joint_weight * x||^2
    + mass_weight * (sum of the n_bodies masses - prior_mass)^2``, subject to ``x[held] = 0``,
    ``theta[non_negative] >= 0`` and ``J_k(theta) >= margin I`` for every body.
    The prior term is the log-det divergence of each body (``body_maps[k]`` (10, 4, 4): the
    matrices ``L0^-1 B_i L0^-T`` whose combination by the body's ten parameters is ``S_k``) or,
    for the ``euclidean`` metric (``body_maps`` None), ``||x[:10 n_bodies]||^2``.
    """

    A: np.ndarray  # (p, p)
    b: np.ndarray  # (p,)
    scales: np.ndarray  # (p,)
    prior: np.ndarray  # (p,)
    n_bodies: int
    inertial_weight: float
    joint_weight: np.ndarray  # (p,)
    mass_weight: float
    prior_mass: float
    held: np.ndarray  # (p,) bool
    non_negative: np.ndarray  # (p,) bool
    body_maps: np.ndarray | None  # (n_bodies, 10, 4, 4)
    margin: float
    # x of the prior with each body lifted inside the cone as the divergence's centre is
    # (0 for a regular URDF body; None: the prior itself): where Newton steps start
    lifted_start: np.ndarray | None = None

    @cached_property
    def _masses(self) -> np.ndarray:
        return np.arange(0, 10 * self.n_bodies, 10)

    @cached_property
    def _constant_curvature(self) -> np.ndarray:
        """The Hessian of the quadratic terms (data, joint prior, total mass): the same at
        every x."""
        hessian = 2.0 * (self.A.T @ self.A)
        hessian[np.diag_indices_from(hessian)] += 2.0 * self.joint_weight**2
        masses = self._masses
        hessian[np.ix_(masses, masses)] += (
            2.0 * self.mass_weight * np.outer(self.scales[masses], self.scales[masses])
        )
        return hessian

    @cached_property
    def _body_constants(self) -> tuple[np.ndarray, ...]:
        """Per body: its maps as (n_bodies, 10, 16) and side by side (n_bodies, 4, 40), their
        traces ``tr N_i`` (n_bodies, 10), the outer products of the body's scales
        (n_bodies, 10, 10) and where those blocks lie in the flattened Hessian."""
        n = self.n_bodies
        maps = self.body_maps.reshape(n, 10, 16)
        side_by_side = self.body_maps.transpose(0, 2, 1, 3).reshape(n, 4, 40)
        traces = np.einsum("kiaa->ki", self.body_maps)
        scales = self.scales[: 10 * n].reshape(n, 10)
        rows = 10 * np.arange(n)[:, None, None] + np.arange(10)[None, :, None]
        cols = 10 * np.arange(n)[:, None, None] + np.arange(10)[None, None, :]
        blocks = (rows * self.scales.size + cols).reshape(-1)
        return maps, side_by_side, traces, scales[:, :, None] * scales[:, None, :], blocks

    def value_gradient_hessian(
        self, x: np.ndarray, *, derivatives: bool = True
    ) -> tuple[float, np.ndarray | None, np.ndarray | None]:
        """f(x), its gradient and Hessian in x; f = inf outside the log-det's domain."""
        residual = self.A @ x - self.b
        value = float(residual @ residual) + float(np.sum((self.joint_weight * x) ** 2))
        n_inertial = 10 * self.n_bodies
        theta = self.prior + self.scales * x
        masses = self._masses
        excess = float(np.sum(theta[masses])) - self.prior_mass
        value += self.mass_weight * excess**2
        gradient = hessian = None
        if derivatives:
            gradient = 2.0 * (self.A.T @ residual) + 2.0 * self.joint_weight**2 * x
            gradient[masses] += 2.0 * self.mass_weight * excess * self.scales[masses]
            hessian = self._constant_curvature.copy()
        if self.body_maps is None:
            value += self.inertial_weight * float(x[:n_inertial] @ x[:n_inertial])
            if derivatives:
                gradient[:n_inertial] += 2.0 * self.inertial_weight * x[:n_inertial]
                hessian[np.diag_indices(n_inertial)] += 2.0 * self.inertial_weight
            return value, gradient, hessian
        maps, side_by_side, traces, scale_products, blocks = self._body_constants
        n = self.n_bodies
        parameters = theta[:n_inertial].reshape(n, 1, 10)
        S = (parameters @ maps).reshape(n, 4, 4)
        eigenvalues = np.linalg.eigvalsh(S)
        if np.any(eigenvalues <= 0.0):
            return np.inf, gradient, hessian
        value += self.inertial_weight * float(np.sum(eigenvalues - 1.0 - np.log(eigenvalues)))
        if derivatives:
            inverse = np.linalg.inv(S)
            # d/dtheta_i [-log det S + tr S] = tr(N_i) - tr(S^-1 N_i);
            # d2/dtheta_i dtheta_j = tr(S^-1 N_i S^-1 N_j)  (S and every N_i symmetric)
            weighted = (maps @ inverse.reshape(n, 16, 1))[..., 0]
            products = (inverse @ side_by_side).reshape(n, 4, 10, 4)  # [k, a, i, c]: S^-1 N_i
            flat = products.transpose(0, 2, 1, 3).reshape(n, 10, 16)
            turned = products.transpose(0, 2, 3, 1).reshape(n, 10, 16)
            curvature = flat @ turned.transpose(0, 2, 1)
            body_scales = self.scales[:n_inertial].reshape(n, 10)
            gradient[:n_inertial] += (
                self.inertial_weight * (traces - weighted) * body_scales
            ).reshape(-1)
            hessian.reshape(-1)[blocks] += (
                self.inertial_weight * curvature * scale_products
            ).reshape(-1)
        return value, gradient, hessian

    def feasible(self, x: np.ndarray, free_non_negative: np.ndarray) -> bool:
        """Every pseudo-inertia at least ``margin`` and every free non-negative term positive."""
        theta = self.prior + self.scales * x
        if np.any(theta[free_non_negative] <= 0.0):
            return False
        n_inertial = 10 * self.n_bodies
        # J as the basis' combination (physid.body.inertia's pseudo_inertia, in one product)
        J = theta[:n_inertial].reshape(self.n_bodies, 10) @ _BASIS
        return bool(np.all(np.linalg.eigvalsh(J.reshape(-1, 4, 4))[:, 0] >= self.margin))


def solve_from_prior(objective: MapObjective) -> np.ndarray | None:
    """The optimum of ``objective`` by the same Newton steps started at the prior (a singular or
    inconsistent URDF body lifted inside the cone, ``objective.lifted_start``), without an
    interior-point solver; None when the metric is euclidean (no barrier: the consistency
    constraints can be active) or the optimum is not reached: the caller then solves the SDP.

    The objective is smooth and strictly convex and its log-det term keeps every pseudo-inertia
    inside the cone, so from the prior (the non-negative terms moved just inside their bound)
    damped Newton steps with the active set of :func:`polish` reach the unique optimum, checked
    by the same Karush-Kuhn-Tucker conditions. Where the data pull a body toward the cone's
    boundary against a weak prior the damped steps shrink and may need hundreds; those follow
    the prior's weight down instead (:func:`_continuation`). The optimum reached is the SDP's
    to rounding, at a fraction of an interior-point solve's cost and without CVXPY's
    compilation.
    """
    if objective.body_maps is None or objective.inertial_weight <= 0.0:
        return None
    candidates = objective.non_negative & ~objective.held
    lower = -objective.prior / objective.scales
    start = np.zeros_like(objective.b)
    if objective.lifted_start is not None:  # a point-mass URDF body is outside the margin
        start += objective.lifted_start
    start[candidates] = np.maximum(0.0, lower[candidates] + _INTERIOR)
    direct = polish(objective, start, max_steps=_MAX_STEPS_FROM_PRIOR)
    return direct if direct is not None else _continuation(objective, start)


def nearest_start(objective: MapObjective, starts: list[np.ndarray]) -> np.ndarray | None:
    """Of ``starts`` (recent optima of related fits), the one where ``objective`` is lowest,
    its held terms put back at the prior; None when none is inside the log-det's domain. The
    damped Newton steps a start needs grow with its objective gap: the same fold of the previous
    candidate (another cut-off or deadband) is usually far closer than the previous fold."""
    best, best_value = None, np.inf
    for start in starts:
        x = np.array(start, dtype=float)
        x[objective.held] = 0.0
        value = objective.value_gradient_hessian(x, derivatives=False)[0]
        if value < best_value:
            best, best_value = x, value
    return best


def solve_from(objective: MapObjective, start: np.ndarray) -> np.ndarray | None:
    """The optimum of ``objective`` by the Newton steps of :func:`solve_from_prior` started at
    ``start`` instead (the optimum of a closely related fit: the previous fold's; its held terms
    are put back at the prior), or None when that is no strictly feasible start or the optimum
    is not reached from it. Consecutive folds share most of their rows, so their optima are
    close and this start saves about half the Newton evaluations of a start from the prior,
    reaching the same optimum."""
    x = np.array(start, dtype=float)
    x[objective.held] = 0.0
    return polish(objective, x, max_steps=_MAX_STEPS_FROM_PRIOR)


def _continuation(objective: MapObjective, start: np.ndarray) -> np.ndarray | None:
    """The optimum along the prior's weight, from ten times per decade above it down to it,
    each optimum the next start: the central path of a barrier method, whose every point is a
    few Newton steps from the last, so the whole path costs fewer evaluations than damped
    steps from a start far from the optimum."""
    weight = objective.inertial_weight
    decades = int(np.ceil(np.log10(1.0 / weight))) if weight < 1.0 else 0
    if decades == 0:
        return None  # the direct start already had this barrier's strength
    x = start
    for decade in range(decades, -1, -1):
        stage = replace(objective, inertial_weight=weight * 10.0**decade)
        x = polish(stage, x, max_steps=_MAX_STEPS_FROM_PRIOR)
        if x is None:
            return None
    return x


def polish(
    objective: MapObjective, x0: np.ndarray, *, max_steps: int = _MAX_STEPS
) -> np.ndarray | None:
    """The optimum of ``objective`` by Newton steps from the solver's point ``x0`` (module
    docstring), or None when it is not reached (keep ``x0``).

    A primal active set on the non-negative terms: those the solver left within ``_AT_BOUND``
    of their scale start at zero; a term that a Newton step would take below zero is stopped
    there and held; a held term whose gradient pulls it up is freed again. ``max_steps``: Newton
    steps per active set.
    """
    scales, prior = objective.scales, objective.prior
    if np.any(objective.held & objective.non_negative & (prior < 0.0)):
        return None  # a term held below its bound: no feasible point (the SDP: infeasible)
    candidates = objective.non_negative & ~objective.held
    theta0 = prior + scales * x0
    bound = candidates & (theta0 <= _AT_BOUND * scales)
    x = x0.copy()
    x[objective.held] = 0.0
    lower = -prior / scales  # x where theta = 0
    x[bound] = lower[bound]
    if not objective.feasible(x, candidates & ~bound):
        return None
    for _ in range(2 * int(np.count_nonzero(candidates)) + 5):
        reached = _newton(objective, x, bound, candidates, lower, max_steps)
        if reached is None:
            return None
        x, gradient = reached
        tolerance = 1e-8 * max(1.0, float(np.max(np.abs(gradient[~objective.held]), initial=0.0)))
        # a held term must push against its bound: a negative gradient would lower the
        # objective by raising it
        pulling = np.flatnonzero(bound & (gradient < -tolerance))
        if pulling.size == 0:
            return x
        bound[pulling[np.argmin(gradient[pulling])]] = False
    return None


def _newton_step(H: np.ndarray, g: np.ndarray) -> np.ndarray | None:
    """``-H^-1 g`` by Cholesky (LAPACK's potrf and potrs, without SciPy's wrappers: a few
    hundred small solves per identification), or None when H is not finite or not positive
    definite."""
    if not (np.all(np.isfinite(H)) and np.all(np.isfinite(g))):
        return None
    factor, info = dpotrf(H, lower=0, clean=0)
    if info != 0:
        return None
    solution, info = dpotrs(factor, g, lower=0)
    return None if info != 0 else -solution


def _newton(
    objective: MapObjective,
    x: np.ndarray,
    bound: np.ndarray,
    candidates: np.ndarray,
    lower: np.ndarray,
    max_steps: int,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Damped Newton steps on the terms neither held nor at their bound (``bound`` grows, in
    place, by the non-negative terms a step runs into), to a Newton decrement at rounding;
    returns the point and the objective's gradient there."""
    value, gradient, hessian = objective.value_gradient_hessian(x)
    for _ in range(max_steps):
        free = ~objective.held & ~bound
        # take by index twice: np.ix_ of two masks costs as much as the Cholesky factorisation
        index = np.flatnonzero(free)
        g, H = gradient[index], hessian.take(index, axis=0).take(index, axis=1)
        step = _newton_step(H, g)
        if step is None:
            return None
        decrement = float(-g @ step)  # the Newton decrement, squared
        if not np.isfinite(decrement) or decrement < 0.0:
            return None
        if decrement <= 1e-20 * max(1.0, abs(value)):
            # below rounding in the objective, not in x along the flat directions the prior
            # decides: the last step is taken, so the point does not depend on where the steps
            # started (otherwise two starts leave points apart by more than rounding)
            trial = x.copy()
            trial[free] += step
            if objective.feasible(trial, candidates & ~bound):
                return trial, objective.value_gradient_hessian(trial)[1]
            return x, gradient
        direction = np.zeros_like(x)
        direction[free] = step
        # the longest step that keeps every free non-negative term >= 0
        falling = candidates & free & (direction < 0.0)
        reach = (lower[falling] - x[falling]) / direction[falling]
        t = min(1.0, float(np.min(reach))) if reach.size else 1.0
        blocking = np.flatnonzero(falling)[np.argmin(reach)] if t < 1.0 else None
        while True:
            trial = x + t * direction
            if blocking is not None:
                trial[blocking] = lower[blocking]
            if objective.feasible(trial, candidates & ~bound & (np.arange(x.size) != blocking)):
                # with its derivatives: almost every trial is taken, and they are the next
                # step's (a trial then costs one evaluation, not two)
                evaluated = objective.value_gradient_hessian(trial)
                quadratic_regime = decrement < 1e-14 * max(1.0, abs(value))
                if quadratic_regime or evaluated[0] <= value - 0.25 * t * decrement:
                    break
            t *= 0.5
            blocking = None
            if t < 1e-10:
                return None
        if blocking is not None:
            bound[blocking] = True
        x = trial
        value, gradient, hessian = evaluated
    return None
