"""One implicit-Euler step of paper D's time-stepping scheme (eqs. 16–19), solved two ways.

Unknowns of a step: the velocity v⁺ = v^{k+1}, the normal impulses c_n, the friction impulses
c_t = (c_t+, c_t-) per contact and the friction multipliers λ (eqs. 10–15). The grasp matrices are
frozen at q^k (eq. 16). Impulses are handled per unit mass (c̄ = c/m, [m/s]) so that the problem
is scaled the same for a 64 g ellipse and a 10 kg one.

Contact models, per included contact j:

* ``"irc"`` (impulse–restitution, paper D §3.2): the contact is included only when eq. (6)
  switches it on; then 0 ≤ c_n ⊥ Nᵀ(v⁺ + ε v^k) ≥ 0 — eq. (4). Where c_n > 0 this is exactly the
  equality the big-M form (eqs. 5, 7, 19 with z_nc = 0) imposes; keeping the complementarity lets a
  switched-on contact that would have to *pull* separate instead of making the step infeasible.
* ``"igc"`` (impulse–gap, §4.2): every candidate is included and 0 ≤ c_n ⊥ g_n(q^{k+1}) ≥ 0; the
  LCP linearises ``g_n(q^{k+1}) ≈ g_n(q^k) + h Nᵀ v⁺``, the NLP uses the exact gap.

``solve_step_lcp`` writes the step as one Stewart–Trinkle LCP and calls Lemke;
``NlpStepper`` is the paper's own form, eq. (20): an IPOPT solve whose objective is the squared
norm of the complementarity products, with the sign conditions as constraints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import casadi as cs
import numpy as np

from physid.impacts.geometry import Line, Shape, friction_pair_sum, gap_and_arm
from physid.impacts.lcp import lemke


@dataclass(frozen=True)
class StepData:
    """Everything one step needs, for the nc included contacts (frozen at q^k).

    ``inv_mass_diag`` is diag(M⁻¹)·m = (1, 1, m/J) so impulses are per unit mass.
    """

    q: np.ndarray  # q^k (3,)
    v: np.ndarray  # v^k (3,)
    v_free: np.ndarray  # v^k + h M⁻¹ (f_ext − ∇V): the velocity without contact (3,)
    N: np.ndarray  # (3, nc)
    T: np.ndarray  # (3, 2nc)
    gap: np.ndarray  # g_n(q^k) (nc,)
    inv_mass_diag: np.ndarray  # (3,)
    mu: float
    restitution: float
    h: float


@dataclass(frozen=True)
class StepSolution:
    """v⁺ (3,), per-mass impulses c̄_n (nc,), c̄_t (2nc,), multipliers λ (nc,), success flag."""

    v_next: np.ndarray
    cn: np.ndarray
    ct: np.ndarray
    lam: np.ndarray
    ok: bool
    message: str = ""


def solve_step_lcp(data: StepData, model: str) -> StepSolution:
    """Solve one step as the LCP in z = (c̄_n, c̄_t, λ) (Stewart–Trinkle with eq. 4 or IGC rows)."""
    nc = data.N.shape[1]
    W = data.inv_mass_diag[:, None]
    E = friction_pair_sum(nc)
    WN, WT = W * data.N, W * data.T
    M = np.zeros((4 * nc, 4 * nc))
    M[:nc, :nc], M[:nc, nc : 3 * nc] = data.N.T @ WN, data.N.T @ WT
    M[nc : 3 * nc, :nc], M[nc : 3 * nc, nc : 3 * nc] = data.T.T @ WN, data.T.T @ WT
    M[nc : 3 * nc, 3 * nc :] = E
    M[3 * nc :, :nc], M[3 * nc :, nc : 3 * nc] = data.mu * np.eye(nc), -E.T
    q = np.zeros(4 * nc)
    if model == "irc":
        q[:nc] = data.N.T @ (data.v_free + data.restitution * data.v)
    else:  # linearised gap at k+1, divided by h so that every row is a velocity
        q[:nc] = data.gap / data.h + data.N.T @ data.v_free
    q[nc : 3 * nc] = data.T.T @ data.v_free
    sol = lemke(M, q)
    z = sol.z
    cn, ct, lam = z[:nc], z[nc : 3 * nc], z[3 * nc :]
    v_next = data.v_free + data.inv_mass_diag * (data.N @ cn + data.T @ ct)
    return StepSolution(v_next, cn, ct, lam, sol.ok, "" if sol.ok else "Lemke: secondary ray")


class NlpStepper:
    """The per-step NLP of paper D eq. (20), built once per (model, contact set) and reused.

    The grasp matrices, velocities and parameters enter as NLP parameters, so IPOPT is called
    with new numbers each step without rebuilding the problem.
    """

    def __init__(self, shape: Shape, lines: list[Line], *, tol: float = 1e-14) -> None:
        self.shape, self.lines, self.tol = shape, lines, tol
        self._cache: dict[tuple[str, tuple[tuple[int, int], ...]], Any] = {}

    def _build(self, model: str, pairs: tuple[tuple[int, int], ...]) -> Any:
        nc = len(pairs)
        x = cs.SX.sym("x", 3 + 4 * nc)
        v_next, cn, ct, lam = x[:3], x[3 : 3 + nc], x[3 + nc : 3 + 3 * nc], x[3 + 3 * nc :]
        p = cs.SX.sym("p", 3 + 3 + 3 + 3 + 3 * nc + 6 * nc + 3)
        q, v, v_free, inv_m = p[:3], p[3:6], p[6:9], p[9:12]
        N = cs.reshape(p[12 : 12 + 3 * nc], 3, nc)
        T = cs.reshape(p[12 + 3 * nc : 12 + 9 * nc], 3, 2 * nc)
        mu, eps, h = p[12 + 9 * nc], p[13 + 9 * nc], p[14 + 9 * nc]
        E = cs.DM(friction_pair_sum(nc))
        # Dynamics (eq. 16) in per-mass impulses: v⁺ − v_free = M⁻¹ G~ c̄.
        dyn = v_next - v_free - inv_m * (cs.mtimes(N, cn) + cs.mtimes(T, ct))
        slip = cs.mtimes(T.T, v_next) + cs.mtimes(E, lam)  # eq. (14)
        cone = mu * cn - cs.mtimes(E.T, ct)  # eq. (12)
        if model == "irc":
            normal = cs.mtimes(N.T, v_next + eps * v)  # eq. (4) on switched-on contacts
        else:
            q_next = q + h * v_next
            normal = cs.vertcat(
                *[gap_and_arm(self.shape, self.lines[j], f, q_next)[0] for j, f in pairs]
            )
        products = cs.vertcat(
            *[ct[2 * j] * slip[2 * j] + ct[2 * j + 1] * slip[2 * j + 1] for j in range(nc)],
            lam * cone,
            cn * normal,
        )
        g = cs.vertcat(dyn, slip, cone, normal)
        nlp = {"x": x, "p": p, "f": cs.sumsqr(products), "g": g}
        opts = {
            "print_time": False,
            "ipopt": {
                "print_level": 0,
                "tol": self.tol,
                "acceptable_tol": 1e-10,
                "max_iter": 500,
                "sb": "yes",
            },
        }
        solver = cs.nlpsol("impacts_step", "ipopt", nlp, opts)
        lbg = np.r_[np.zeros(3), np.zeros(4 * nc)]
        ubg = np.r_[np.zeros(3), np.full(4 * nc, np.inf)]
        lbx = np.r_[np.full(3, -np.inf), np.zeros(4 * nc)]
        return solver, lbg, ubg, lbx

    def solve(self, data: StepData, model: str, pairs: list[tuple[int, int]]) -> StepSolution:
        key = (model, tuple(pairs))
        if key not in self._cache:
            self._cache[key] = self._build(model, key[1])
        solver, lbg, ubg, lbx = self._cache[key]
        nc = len(pairs)
        p = np.r_[
            data.q,
            data.v,
            data.v_free,
            data.inv_mass_diag,
            data.N.ravel(order="F"),
            data.T.ravel(order="F"),
            data.mu,
            data.restitution,
            data.h,
        ]
        x0 = np.r_[data.v_free, np.zeros(4 * nc)]
        res = solver(x0=x0, p=p, lbg=lbg, ubg=ubg, lbx=lbx, ubx=np.inf)
        stats = solver.stats()
        x = np.asarray(res["x"]).ravel()
        return StepSolution(
            x[:3],
            x[3 : 3 + nc],
            x[3 + nc : 3 + 3 * nc],
            x[3 + 3 * nc :],
            bool(stats["success"]),
            str(stats["return_status"]),
        )
