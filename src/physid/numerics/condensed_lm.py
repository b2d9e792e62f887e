"""Bounded Levenberg-Marquardt for multiple shooting, the window states condensed out.

The shooting Jacobian (:mod:`.shooting`) is block-arrow shaped: window ``w``'s residuals ``r_w``
depend on the global parameters ``x`` (block ``G_w``) and on its own initial-state offsets
``d_w`` (block ``S_w``) only, and a prior row per parameter (diagonal ``P``). The Gauss-Newton
normal equations with Marquardt's damping ``lam D`` (``D`` the largest diagonal of ``J^T J``
seen so far, as MINPACK scales),

    [H_xx + lam D_x   H_xw          ] [dx ]     [g_x ]
    [H_wx             H_ww + lam D_w] [dd_w] = -[g_w ],   H_xx = sum G_w^T G_w + P^T P,
                                                          H_xw = G_w^T S_w, H_ww = S_w^T S_w,

are solved exactly by eliminating each window's ``dd_w`` (the Schur complement, "condensing"
of multiple shooting): ``(H_xx + lam D_x - sum H_xw L_w^-1 H_wx) dx = -g_x + sum H_xw L_w^-1
g_w`` with ``L_w = H_ww + lam D_w``, then ``dd_w = -L_w^-1 (g_w + H_wx dx)``. Each solve costs
``W`` small ``2n x 2n`` factorisations and one ``len(x)``-square one, against the hundreds of
sparse products an iterative (LSMR) trust-region step takes on the same system (there, most of
the CPU outside the simulator).

Bounds on ``x`` (each tuned number >= 0, the delay <= 0.1 s): a parameter at a bound whose
gradient points outward is held (its row and column dropped from the condensed system); a step
that crosses a bound is projected back onto it, its reduction predicted by the linear model of
the projected step. Damping update of Nielsen (``lam *= max(1/3, 1 - (2 rho - 1)^3)`` on
success, doubling factors on failure). Stops as SciPy's ``least_squares`` does: the cost
falling by less than ``ftol`` (relative) on a step the model predicted well (status 2), a step
smaller than ``xtol (xtol + |z|)`` in the Marquardt scaling (status 3; -1 when no step from
the start decreased the cost), or the evaluation budget (status 0); given the
parameters' standard deviations (``std_of``), also once the undamped Gauss-Newton step moves
every free parameter by less than a fraction of its std (status 2).

A finite-difference Jacobian costs ``len(x) + 2n`` batched rollouts against one for a residual;
between two of them, up to ``secant_steps`` accepted steps update it by Broyden's secant formula
(:func:`secant_update`; Dennis & Schnabel, Numerical Methods for Unconstrained Optimization,
ch. 8 and 11, Schubert's sparse variant), as Madsen, Nielsen & Tingleff's Levenberg-Marquardt
with Broyden updating does (Methods for Non-Linear Least Squares Problems, 2004, sec. 3.4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from physid.numerics.linalg import scaled_pinv


@dataclass
class Blocks:
    """Residual and Jacobian blocks of one point: ``r`` (W, R) window residuals (zero-padded
    rows), ``rp`` (n_x,) prior residuals; ``G`` (W, R, n_x), ``S`` (W, R, n_s), ``p`` (n_x,)."""

    r: np.ndarray
    rp: np.ndarray
    G: np.ndarray | None = None
    S: np.ndarray | None = None
    p: np.ndarray | None = None

    @property
    def cost(self) -> float:
        return 0.5 * float(np.sum(self.r**2) + np.sum(self.rp**2))


@dataclass
class Normal:
    """The undamped normal equations' blocks and gradient."""

    Hxx: np.ndarray
    Hxw: np.ndarray  # (W, n_x, n_s)
    Hww: np.ndarray  # (W, n_s, n_s)
    gx: np.ndarray
    gw: np.ndarray  # (W, n_s)
    gxw: np.ndarray  # (W, n_x): each window's share of ``gx`` (the prior's is not in it)

    @classmethod
    def of(cls, b: Blocks) -> Normal:
        Hxx = np.einsum("wri,wrj->ij", b.G, b.G) + np.diag(b.p**2)
        gxw = np.einsum("wri,wr->wi", b.G, b.r)
        return cls(
            Hxx,
            np.einsum("wri,wrj->wij", b.G, b.S),
            np.einsum("wri,wrj->wij", b.S, b.S),
            gxw.sum(axis=0) + b.p * b.rp,
            np.einsum("wri,wr->wi", b.S, b.r),
            gxw,
        )

    def quadratic(self, dx: np.ndarray, dd: np.ndarray) -> float:
        """``|J d|^2`` of a step ``d = (dx, dd)``."""
        return float(
            dx @ self.Hxx @ dx
            + 2.0 * np.einsum("i,wij,wj->", dx, self.Hxw, dd)
            + np.einsum("wi,wij,wj->", dd, self.Hww, dd)
        )

    def step(self, lam: float, Dx, Dw, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The damped Gauss-Newton step, windows condensed out (module docstring); the
        parameters not ``free`` held."""
        L = self.Hww + lam * Dw[:, :, None] * np.eye(Dw.shape[1])
        solved = np.linalg.solve(
            L, np.concatenate([self.Hxw.transpose(0, 2, 1), self.gw[:, :, None]], axis=2)
        )
        K, k = solved[:, :, :-1], solved[:, :, -1]  # L^-1 H_wx, L^-1 g_w
        schur = self.Hxx + np.diag(lam * Dx) - np.einsum("wij,wjk->ik", self.Hxw, K)
        rhs = -self.gx + np.einsum("wij,wj->i", self.Hxw, k)
        dx = np.zeros(len(self.gx))
        if free.any():
            sub = schur[np.ix_(free, free)]
            try:
                dx[free] = np.linalg.solve(sub, rhs[free])
            except np.linalg.LinAlgError:
                dx[free] = np.linalg.lstsq(sub, rhs[free], rcond=None)[0]
        dd = -k - np.einsum("wij,j->wi", K, dx)
        return dx, dd

    def covariance_x(self) -> np.ndarray:
        """``(J^T J)^+`` restricted to ``x``: the pseudo-inverse of the undamped Schur
        complement (the windows' states marginalised)."""
        return scaled_pinv(self._schur()[0], rcond=1e-12)

    def _schur(self) -> tuple[np.ndarray, np.ndarray]:
        """The undamped Schur complement and ``H_ww^+ H_wx`` (W, n_s, n_x)."""
        K = np.linalg.pinv(self.Hww, rcond=1e-12) @ self.Hxw.transpose(0, 2, 1)
        return self.Hxx - np.einsum("wij,wjk->ik", self.Hxw, K), K

    def clustered_covariance_x(self) -> np.ndarray:
        """The sandwich covariance of ``x`` with each window a cluster (Liang & Zeger 1986):
        ``C^+ (sum_w s_w s_w^T) C^+`` with ``C`` the Schur complement and ``s_w = G_w^T r_w -
        H_xw H_ww^+ S_w^T r_w`` window ``w``'s score of ``x`` with its own state profiled out. The
        residuals of one window (a position error carried through its whole rollout) are
        strongly correlated, which ``s^2 (J^T J)^-1`` assumes away; windows are independent
        to first order. In the residuals' own units (no ``s^2``)."""
        schur, K = self._schur()
        scores = self.gxw - np.einsum("wji,wj->wi", K, self.gw)
        inverse = scaled_pinv(schur, rcond=1e-12)
        return inverse @ (scores.T @ scores) @ inverse


@dataclass
class Solution:
    x: np.ndarray
    offsets: np.ndarray
    cost: float
    nfev: int
    njev: int
    status: int
    message: str
    optimality: float
    normal: Normal  # of the last Jacobian
    residual: np.ndarray  # (W, R) the window residuals at (x, offsets), as Blocks.r


def solve(
    evaluate: Callable[[np.ndarray, np.ndarray], Blocks],
    jacobian: Callable[[np.ndarray, np.ndarray, Blocks], Blocks],
    x0: np.ndarray,
    offsets0: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray],
    *,
    max_nfev: int,
    ftol: float,
    xtol: float,
    lam0: float = 1e-3,
    progress: Callable[[int, int, float], None] | None = None,
    secant_steps: int = 0,
    std_of: Callable[[Normal, float], np.ndarray] | None = None,
    std_tolerance: float = 0.1,
    final_jacobian: bool = True,
) -> Solution:
    """Minimise ``0.5 |r(x, d)|^2`` over ``lower <= x <= upper`` and free offsets ``d``
    (module docstring). ``evaluate`` gives the residual blocks of a point, ``jacobian`` the
    same with ``G``, ``S``, ``p`` filled (given the point's residual); ``progress(steps,
    evaluations, cost)`` is called after every accepted step. ``secant_steps``: after a
    finite-difference Jacobian, up to this many accepted steps whose model agreed (rho > 0.25)
    update the Jacobian by :func:`secant_update` instead; a step rejected on a secant Jacobian
    first recomputes it, and the solution's standard deviations always come from a
    finite-difference one. ``std_of(normal, cost)``: the parameters' standard deviations; with
    it the solve also stops (status 2) once the undamped Gauss-Newton step moves every free
    parameter by at most ``std_tolerance`` of its standard deviation: the minimum the local
    model predicts is closer than the data can tell apart, and more iterations would only
    polish digits (nearly half the evaluations of a solve can move the held-out error by a
    tenth of a per cent). Without ``final_jacobian`` a solve that ends on a
    secant Jacobian keeps it (the solution's ``normal`` then describes no standard deviation:
    for a stage whose only product is where the next one starts)."""
    lower, upper = bounds
    x = np.clip(x0, lower, upper)
    run = _Run(
        x,
        offsets0.copy(),
        jacobian(x, offsets0, evaluate(x, offsets0)),
        lam0,
        Dx=np.zeros(len(x0)),
        Dw=np.zeros(offsets0.shape),
    )
    options = _Options(evaluate, jacobian, bounds, max_nfev, ftol, xtol, progress, secant_steps)
    normal = None
    while run.status is None:
        normal = Normal.of(run.current)
        run.Dx = np.maximum(run.Dx, np.diag(normal.Hxx))
        run.Dw = np.maximum(run.Dw, np.einsum("wii->wi", normal.Hww))
        run.Dx[run.Dx == 0.0], run.Dw[run.Dw == 0.0] = 1.0, 1.0
        x = run.x
        held = ((x <= lower) & (normal.gx > 0.0)) | ((x >= upper) & (normal.gx < 0.0))
        if (
            std_of is not None
            and run.accepted
            and _within_std(normal, run.current.cost, std_of, std_tolerance, run.Dx, run.Dw, ~held)
        ):
            run.status = 2
            run.message = (
                f"the Gauss-Newton step is below {std_tolerance:g} standard "
                "deviation of every parameter"
            )
            break
        _iterate(run, normal, held, options)
        if run.status is None and run.nfev >= max_nfev:
            run.status, run.message = 0, "the evaluation budget was used up"
    return _solution(run, normal, bounds, jacobian, final_jacobian)


@dataclass
class _Options:
    """What :func:`solve` was asked, as its steps read it."""

    evaluate: Callable
    jacobian: Callable
    bounds: tuple[np.ndarray, np.ndarray]
    max_nfev: int
    ftol: float
    xtol: float
    progress: Callable | None
    secant_steps: int


@dataclass
class _Run:
    """The state of one solve: the point, its blocks, the damping and the counts."""

    x: np.ndarray
    d: np.ndarray
    current: Blocks
    lam: float
    Dx: np.ndarray  # Marquardt scaling (MINPACK's running maximum of the diagonal)
    Dw: np.ndarray
    nu: float = 2.0
    nfev: int = 1
    njev: int = 1
    accepted: int = 0
    secants: int = 0  # updates since the last finite-difference Jacobian
    status: int | None = None
    message: str = ""


def _iterate(run: _Run, normal: Normal, held: np.ndarray, o: _Options) -> None:
    """Damped steps from ``run``'s point until one is accepted, the secant model is renewed, or
    the solve ends (``run.status``)."""
    lower, upper = o.bounds
    x, d = run.x, run.d
    while True:
        dx, dd = normal.step(run.lam, run.Dx, run.Dw, ~held)
        trial = np.clip(x + dx, lower, upper)
        dx = trial - x
        predicted = -(normal.gx @ dx + np.sum(normal.gw * dd)) - 0.5 * normal.quadratic(dx, dd)
        candidate = o.evaluate(trial, d + dd)
        run.nfev += 1
        actual = run.current.cost - candidate.cost
        rho = actual / predicted if predicted > 0.0 else -1.0
        # in the Marquardt scaling, as MINPACK measures it: unscaled, one large parameter (a
        # servo's kp of 1e6 N m/rad) makes every step of the others "small"
        small = np.sqrt(dx @ (run.Dx * dx) + np.sum(run.Dw * dd**2)) <= o.xtol * (
            o.xtol + np.sqrt(x @ (run.Dx * x) + np.sum(run.Dw * d**2))
        )
        if np.isfinite(candidate.cost) and rho > 1e-4:
            _accept(run, candidate, trial, dx, dd, rho, actual, small, o)
            return
        if run.secants and run.nfev < o.max_nfev:  # the secant model may be what failed
            run.current, run.secants = o.jacobian(x, d, run.current), 0
            run.njev += 1
            return
        run.lam *= run.nu
        run.nu *= 2.0
        if small or not np.isfinite(run.lam) or run.lam > 1e20:
            run.status, run.message = 3, "no decrease along ever shorter steps"
            if not run.accepted:  # the start itself: nothing was fitted
                run.status = -1
                run.message = "no step from the start values decreased the cost: nothing fitted"
            return
        if run.nfev >= o.max_nfev:
            return


def _accept(
    run: _Run,
    candidate: Blocks,
    trial: np.ndarray,
    dx: np.ndarray,
    dd: np.ndarray,
    rho: float,
    actual: float,
    small: bool,
    o: _Options,
) -> None:
    """Move to an accepted step, test convergence, and renew the Jacobian (a secant update
    while the model agrees, else finite differences)."""
    run.lam *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3)
    run.nu = 2.0
    run.x, run.d = trial, run.d + dd
    if actual < o.ftol * run.current.cost and rho > 0.25:
        run.status, run.message = 2, "the cost fell by less than ftol (relative)"
    elif small:
        run.status, run.message = 3, "the step was smaller than xtol"
    # at convergence the step is below the tolerances: the last Jacobian describes the
    # solution, its standard deviations, as well as a new one would, and a new one costs
    # len(x) + 2n rollouts
    if run.status is not None:
        run.current = candidate
    elif run.secants < o.secant_steps and rho > 0.25:
        run.current = secant_update(run.current, candidate, dx, dd, run.Dx, run.Dw)
        run.secants += 1
    else:
        run.current, run.secants = o.jacobian(run.x, run.d, candidate), 0
        run.njev += 1
    run.accepted += 1
    if o.progress is not None:
        o.progress(run.accepted, run.nfev, float(candidate.cost))


def _solution(
    run: _Run,
    normal: Normal | None,
    bounds: tuple[np.ndarray, np.ndarray],
    jacobian: Callable,
    final_jacobian: bool,
) -> Solution:
    """The solution, with the normal equations its standard deviations come from (a
    finite-difference Jacobian when the solve ended on a secant one, unless not asked)."""
    lower, upper = bounds
    x, d = run.x, run.d
    if run.secants and final_jacobian:
        run.current = jacobian(x, d, run.current)
        run.njev += 1
        final = Normal.of(run.current)
    else:
        final = normal if run.status in (2, 3) and normal is not None else Normal.of(run.current)
    gx = final.gx.copy()
    gx[((x <= lower) & (gx > 0.0)) | ((x >= upper) & (gx < 0.0))] = 0.0
    optimality = float(np.max(np.abs(np.concatenate([gx, final.gw.ravel()])), initial=0.0))
    return Solution(
        x,
        d,
        run.current.cost,
        run.nfev,
        run.njev,
        run.status,
        run.message,
        optimality,
        final,
        run.current.r,
    )


def _within_std(normal: Normal, cost: float, std_of, tolerance: float, Dx, Dw, free) -> bool:
    """Whether the undamped Gauss-Newton step (a ``1e-10`` ridge keeps a window without motion
    solvable) moves every free parameter by at most ``tolerance`` of its standard deviation."""
    if not free.any():
        return False
    newton, _ = normal.step(1e-10, Dx, Dw, free)
    spread = std_of(normal, cost)
    return bool(np.all(np.abs(newton[free]) <= tolerance * spread[free]))


def secant_update(
    at: Blocks, new: Blocks, dx: np.ndarray, dd: np.ndarray, Dx: np.ndarray, Dw: np.ndarray
) -> Blocks:
    """``new`` with the Jacobian of ``at`` updated along the step ``(dx, dd)`` by Broyden's
    rank-one secant update, one per window (Schubert's sparse Broyden: window ``w``'s block
    ``[G_w S_w]`` sees only ``s_w = (dx, dd_w)``, so the block-arrow sparsity stays), in the
    metric of the Marquardt scaling ``D``: ``J_w += (y_w - J_w s_w) (D s_w)^T / (s_w^T D s_w)``
    with ``y_w`` the change of window ``w``'s residual. The prior rows are linear: unchanged."""
    miss = new.r - at.r - np.einsum("wri,i->wr", at.G, dx) - np.einsum("wrj,wj->wr", at.S, dd)
    norm = float(dx @ (Dx * dx)) + np.einsum("wj,wj->w", dd, Dw * dd)
    scale = np.divide(1.0, norm, out=np.zeros_like(norm), where=norm > 0.0)
    G = at.G + np.einsum("wr,i,w->wri", miss, Dx * dx, scale)
    S = at.S + np.einsum("wr,wj,w->wrj", miss, Dw * dd, scale)
    return Blocks(new.r, new.rp, G, S, at.p)


def parameter_std(normal: Normal, cost: float, m: int, n: int) -> np.ndarray:
    """Standard deviations of the tuned parameters, the window states marginalised (the Schur
    complement above): per parameter the larger of the Gauss-Newton ``s^2 (J^T
    J)^-1`` (``s^2`` the residual variance over ``m`` residuals and ``n`` unknowns; white
    residuals) and the window-clustered sandwich (:meth:`Normal.clustered_covariance_x`: the
    residuals of one window correlated as a rollout's errors are). On real logs the second is
    the larger (the model's misfit runs through whole windows); never below the first."""
    variance = 2.0 * cost / max(m - n, 1)
    try:
        white = np.diag(normal.covariance_x()) * variance
        clustered = np.diag(normal.clustered_covariance_x())
    except np.linalg.LinAlgError:
        return np.full(len(normal.gx), np.nan)
    return np.sqrt(np.clip(np.maximum(white, clustered), 0.0, None))
