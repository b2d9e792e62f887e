"""The identification NLP of paper D eq. (27) in CasADi, and its IPOPT solve by continuation.

Decision variables, in this order: poses q^k and velocities v^k (k = 0..N) on the fine grid,
per-mass impulses c̄_n^{k+1} [m/s], c̄_t^{k+1} = (c̄_t+, c̄_t-) and multipliers λ^{k+1} [m/s] for
every contact candidate (k = 0..N-1), slacks s ≥ 0 of the three complementarity partners, then
r/ρ² (r = J/m, ρ the largest body radius, so that J/m ≤ ρ² is the bound 1) and μ.

Constraints: eqs. (16)–(17) divided by m — only J/m remains, §5.2 — and the definitions of the
slacks: s_slip = T~ᵀv^{k+1} + Eλ (eq. 14), s_cone = μ c̄_n − Eᵀc̄_t (eq. 12), s_gap = g_n(q^k)
(eq. 23); the bounds c̄, λ, s ≥ 0 are the remaining inequalities of eq. (27). Objective:
χᵀW_χχ (eqs. 24–25) plus the products of eq. (26), c̄_tᵀs_slip, λᵀs_cone and c̄_nᵀs_gap, each
non-negative, weighted and summed (ℓ1, default) or squared (ℓ2, the paper's ΓᵀW_ΓΓ).

Why slacks: IPOPT keeps variable bounds exactly, so the products can never turn negative; with
the products written on the constraint expressions, a huge λ times a constraint violated within
tolerance lowered the penalty without bound. Why continuation: with the weights at their final
values from the start, IPOPT settles on the contact sequence suggested by the warm start; the
weights are therefore raised in stages (``continuation`` factors), each stage warm-started from the
previous one, which lets impulses move to where the data need them before the gap must close.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import casadi as cs
import numpy as np

from physid.budget import Budget, ipopt_stop_callback
from physid.impacts.geometry import (
    Line,
    Shape,
    friction_pair_sum,
    gap_and_arm,
    grasp_matrices,
)
from physid.impacts.identify.options import IdentifyOptions


def _interval_function(
    shape: Shape, lines: list[Line], pairs: list[tuple[int, int]], gravity: np.ndarray
) -> cs.Function:
    """Equalities and the three product vectors of one interval k → k+1."""
    nc = len(pairs)
    qk, qk1, vk, vk1 = (cs.SX.sym(n, 3) for n in ("qk", "qk1", "vk", "vk1"))
    cn, ct, lam = cs.SX.sym("cn", nc), cs.SX.sym("ct", 2 * nc), cs.SX.sym("lam", nc)
    s = cs.SX.sym("s", 4 * nc)  # slacks: slip (2nc), cone (nc), gap (nc)
    h, r, mu = cs.SX.sym("h"), cs.SX.sym("r"), cs.SX.sym("mu")
    gaps, arms = [], []
    for j, f in pairs:
        g, ax, ay = gap_and_arm(shape, lines[j], f, qk)
        gaps.append(g)
        arms.append((ax, ay))
    normals = np.array([lines[j].normal for j, _ in pairs])
    tangents = np.array([lines[j].tangent for j, _ in pairs])
    N, T = grasp_matrices(arms, normals, tangents)
    E = cs.DM(friction_pair_sum(nc))
    dyn = (
        cs.vertcat(1, 1, r) * (vk1 - vk)
        - cs.mtimes(N, cn)
        - cs.mtimes(T, ct)
        - cs.vertcat(float(gravity[0]) * h, float(gravity[1]) * h, 0)
    )  # eq. (16) / m, gravity (g_x, g_y) [m/s²]
    kin = qk1 - qk - h * vk1  # eq. (17)
    slip = cs.mtimes(T.T, vk1) + cs.mtimes(E, lam)
    cone = mu * cn - cs.mtimes(E.T, ct)
    s_slip, s_cone, s_gap = s[: 2 * nc], s[2 * nc : 3 * nc], s[3 * nc :]
    eqs = cs.vertcat(dyn, kin, s_slip - slip, s_cone - cone, s_gap - cs.vertcat(*gaps))
    p_slip = cs.vertcat(
        *[ct[2 * j] * s_slip[2 * j] + ct[2 * j + 1] * s_slip[2 * j + 1] for j in range(nc)]
    )
    return cs.Function(
        "interval",
        [qk, qk1, vk, vk1, cn, ct, lam, s, h, r, mu],
        [eqs, p_slip, lam * s_cone, cn * s_gap],
    )


@dataclass(frozen=True)
class Layout:
    """Sizes of the decision vector: N intervals, nc candidates."""

    N: int
    nc: int

    @property
    def n_x(self) -> int:
        return 6 * (self.N + 1) + 8 * self.nc * self.N + 2

    def split(self, x: np.ndarray) -> dict[str, np.ndarray]:
        """Named views (q, v: (N+1, 3); cn, lam: (N, nc); ct: (N, 2nc); r_s, mu: scalars)."""
        N, nc, o = self.N, self.nc, 0
        out: dict[str, Any] = {}
        for name, rows, cols in (
            ("q", N + 1, 3),
            ("v", N + 1, 3),
            ("cn", N, nc),
            ("ct", N, 2 * nc),
            ("lam", N, nc),
            ("s", N, 4 * nc),
        ):
            out[name] = x[o : o + rows * cols].reshape(rows, cols)
            o += rows * cols
        out["r_s"], out["mu"] = x[o], x[o + 1]
        return out


@dataclass(frozen=True)
class SolveOutcome:
    """A solution vector, its objective at the final weights and IPOPT's verdict."""

    x: np.ndarray
    objective: float
    iterations: int
    success: bool
    status: str


def _problem(
    shape: Shape,
    lines: list[Line],
    pairs: list[tuple[int, int]],
    h: np.ndarray,
    ns: int,
    q_meas: np.ndarray,
    fit_weights: np.ndarray,
    gravity: np.ndarray,
    r_scale: float,
    penalty: str,
) -> tuple[Any, Any, Any, tuple[Any, Any], Any]:
    """The symbols of eq. (27): decision vector x, constraints g (eqs. 16–17, the slacks'
    definitions and the last gap), the fit χᵀW_χχ (eqs. 24–25), the weighted products of
    eq. (26) with their weight parameter w, and μ."""
    N, nc = h.size, len(pairs)
    Q, V = cs.SX.sym("q", 3, N + 1), cs.SX.sym("v", 3, N + 1)
    CN, CT, LAM = cs.SX.sym("cn", nc, N), cs.SX.sym("ct", 2 * nc, N), cs.SX.sym("lam", nc, N)
    S = cs.SX.sym("s", 4 * nc, N)
    r_s, mu = cs.SX.sym("r_s"), cs.SX.sym("mu")
    interval = _interval_function(shape, lines, pairs, gravity).map(N, "serial")
    eqs, p_slip, p_cone, p_gap = interval(
        Q[:, :-1], Q[:, 1:], V[:, :-1], V[:, 1:], CN, CT, LAM, S, cs.DM(h).T, r_s * r_scale, mu
    )
    last_gap = cs.vertcat(*[gap_and_arm(shape, lines[j], f, Q[:, N])[0] for j, f in pairs])
    chi = Q[:, ::ns] - cs.DM(q_meas.T)  # eq. (25): fine index n_s·i ↔ camera frame i
    fit = cs.sum2(cs.sum1(cs.DM(fit_weights) * chi**2))
    w = cs.SX.sym("w", 2)  # (weight_slip, weight_gap) × the continuation factor
    if penalty == "l1":
        comp = w[0] * cs.sum2(cs.sum1(p_slip + p_cone)) + w[1] * cs.sum2(cs.sum1(p_gap))
    else:
        friction = cs.vertcat(cs.vec(p_slip), cs.vec(p_cone))
        comp = w[0] * cs.sumsqr(friction) + w[1] * cs.sumsqr(p_gap)
    x = cs.vertcat(cs.vec(Q), cs.vec(V), cs.vec(CN), cs.vec(CT), cs.vec(LAM), cs.vec(S), r_s, mu)
    return x, cs.vertcat(cs.vec(eqs), last_gap), fit, (comp, w), mu


def _bounds(
    layout: Layout, mu_max: float, breaks: tuple[int, ...], idle: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """lbg, ubg, lbx, ubx: equalities (dropped on the ``breaks``), gaps ≥ 0 at the end;
    impulses, multipliers and slacks ≥ 0 (impulses 0 and slacks free on ``idle`` intervals),
    r/ρ² ∈ [1e-4, 1], μ ∈ [0, μ_max]."""
    N, nc = layout.N, layout.nc
    n_eq = (6 + 4 * nc) * N
    lbg, ubg = np.zeros(n_eq + nc), np.r_[np.zeros(n_eq), np.full(nc, np.inf)]
    for k in breaks:
        rows = slice(k * (6 + 4 * nc), k * (6 + 4 * nc) + 6)
        lbg[rows], ubg[rows] = -np.inf, np.inf
    n_free = 6 * (N + 1)
    lbx = np.r_[np.full(n_free, -np.inf), np.zeros(8 * nc * N), 1e-4, 0.0]
    ubx = np.r_[np.full(n_free + 8 * nc * N, np.inf), 1.0, mu_max]
    if idle is not None and np.any(idle):
        o = n_free
        for width in (nc, 2 * nc, nc):  # impulses c̄_n, c̄_t and λ: zero where idle
            block = np.zeros((N, width), dtype=bool)
            block[idle] = True
            ubx[o : o + N * width][block.ravel()] = 0.0
            o += N * width
        block = np.zeros((N, 4 * nc), dtype=bool)
        block[idle] = True
        lbx[o : o + N * 4 * nc][block.ravel()] = -np.inf
    return lbg, ubg, lbx, ubx


class IdentificationNlp:
    """Eq. (27) for given data, built once; ``solve`` runs one continuation from a warm start."""

    def __init__(
        self,
        shape: Shape,
        lines: list[Line],
        pairs: list[tuple[int, int]],
        h: np.ndarray,
        ns: int,
        q_meas: np.ndarray,
        fit_weights: np.ndarray,
        *,
        weights: tuple[float, float],
        penalty: str,
        mu_weight: float,
        mu_max: float,
        gravity: np.ndarray,
        tol: float,
        max_iter: int,
        print_level: int,
        budget: Budget | None = None,
        breaks: tuple[int, ...] = (),
        idle: np.ndarray | None = None,
    ) -> None:
        """``breaks``: fine intervals whose eqs. (16)–(17) are dropped (the link between two
        pooled throws); ``idle`` (N,) bool: intervals with no contact (impulses fixed at 0, free
        slacks) — the flight that carries the next throw's initial state."""
        N, nc = h.size, len(pairs)
        self.layout, self.pairs = Layout(N, nc), pairs
        self.r_scale = shape.max_radius**2  # any mass inside the shape has J/m ≤ ρ²
        x, g, fit, comp, mu = _problem(
            shape, lines, pairs, h, ns, q_meas, fit_weights, gravity, self.r_scale, penalty
        )
        w = comp[1]
        # A small price on μ picks, when the data never show sliding, the least μ that explains
        # them (the behaviour reported in paper D Fig. 19) instead of an arbitrary one.
        nlp = {"x": x, "f": fit + comp[0] + mu_weight * mu, "g": g, "p": w}
        self._fit_function = cs.Function("fit", [x], [fit])
        self.budget = budget
        ipopt = {
            "print_level": print_level,
            "max_iter": max_iter,
            "tol": tol,
            "mu_strategy": "adaptive",
            "bound_relax_factor": 0.0,
            "sb": "yes",
        }
        common: dict[str, Any] = {"print_time": False}
        if budget is not None:  # IPOPT stops, with its current iterate, once it is spent
            self._stop = ipopt_stop_callback(budget, x.numel(), g.numel(), w.numel())
            common |= {"iteration_callback": self._stop, "iteration_callback_step": 1}
        self._cold = cs.nlpsol("impacts_id", "ipopt", nlp, common | {"ipopt": ipopt})
        warm = dict(
            ipopt,
            mu_init=1e-4,
            warm_start_init_point="yes",
            warm_start_bound_push=1e-9,
            warm_start_mult_bound_push=1e-9,
        )
        self._warm = cs.nlpsol("impacts_id_warm", "ipopt", nlp, common | {"ipopt": warm})
        self.lbg, self.ubg, self.lbx, self.ubx = _bounds(self.layout, mu_max, breaks, idle)
        self.weights = np.asarray(weights, dtype=float)

    def initial_vector(
        self, q0: np.ndarray, v0: np.ndarray, r_init: float, mu_init: float
    ) -> np.ndarray:
        """Decision vector from an initial trajectory; impulses, λ and slacks start at 1e-3."""
        fill = np.full(8 * self.layout.nc * self.layout.N, 1e-3)
        return np.r_[q0.ravel(), v0.ravel(), fill, r_init / self.r_scale, mu_init]

    def fit_value(self, x: np.ndarray) -> float:
        """χᵀW_χχ at x (the noise-normalised misfit, ≈ 3 N_m at the truth)."""
        return float(self._fit_function(x))

    def solve(
        self,
        x0: np.ndarray,
        continuation: tuple[float, ...],
        *,
        fix_inertia: float | None = None,
        fix_mu: float | None = None,
        warm: tuple[Any, Any] | None = None,
        on_stage: Any = None,
    ) -> tuple[SolveOutcome, tuple[Any, Any]]:
        """Run the stages of ``continuation`` from x0; optionally hold J/m or μ fixed."""
        lbx, ubx, x0 = self.lbx.copy(), self.ubx.copy(), x0.copy()
        if fix_inertia is not None:
            lbx[-2] = ubx[-2] = x0[-2] = fix_inertia / self.r_scale
        if fix_mu is not None:
            lbx[-1] = ubx[-1] = x0[-1] = fix_mu
        iterations, x, sol, solver = 0, x0, None, self._cold
        multipliers = warm
        for factor in continuation:
            if self.budget is not None and self.budget.exhausted():
                break  # (the stages left would stop at their first iteration)
            if multipliers is not None:
                solver = self._warm
                extra = {"lam_x0": multipliers[0], "lam_g0": multipliers[1]}
            else:
                extra = {}
            sol = solver(
                x0=x, lbx=lbx, ubx=ubx, lbg=self.lbg, ubg=self.ubg, p=factor * self.weights, **extra
            )
            stats = solver.stats()
            iterations += int(stats["iter_count"])
            x = np.asarray(sol["x"]).ravel()
            multipliers = (sol["lam_x"], sol["lam_g"])
            if on_stage is not None:
                on_stage()
        if sol is None:
            return SolveOutcome(x, math.inf, 0, False, "not run: budget spent"), multipliers
        outcome = SolveOutcome(
            x, float(sol["f"]), iterations, bool(stats["success"]), str(stats["return_status"])
        )
        return outcome, multipliers


def make_nlp(
    shape: Shape,
    lines: list[Line],
    pairs: list[tuple[int, int]],
    h: np.ndarray,
    ns: int,
    q_meas: np.ndarray,
    fit_weights: np.ndarray,
    opts: IdentifyOptions,
    budget: Budget,
    **extra: Any,
) -> IdentificationNlp:
    """Paper D's identification NLP (eq. 27) with the options' weights, penalty and solver
    settings; ``extra``: the pooled throws' ``breaks`` and ``idle`` intervals."""
    return IdentificationNlp(
        shape,
        lines,
        pairs,
        h,
        ns,
        q_meas,
        fit_weights,
        weights=(opts.weight_slip, opts.weight_gap),
        penalty=opts.penalty,
        mu_weight=opts.mu_weight,
        mu_max=opts.mu_max,
        gravity=opts.gravity_vector,
        tol=opts.tol,
        max_iter=opts.max_iter,
        print_level=opts.print_level,
        budget=budget,
        **extra,
    )
