"""The per-step mixed LCP of SPOOK with frictional hinges (paper A eqs. 2.24-2.28, Appendix A).

Bilateral holonomic rows stay equalities; the rows of a dry-friction hinge become a pair of
unilateral constraints ``g >= 0``, ``-g >= 0`` (Appendix F), whose multipliers bound the friction
impulse along the free axis through ``U = [r mu ... r mu]`` (F.4) in the Stewart–Trinkle box form
with the slack multiplier ``sigma``. The velocity is eliminated with the (small, dense) effective
mass matrix, the equality multipliers by a Schur complement (eq. 2.27, the block-LDL^T step of
Appendix A) and the remaining LCP is solved by Lemke's algorithm
(:func:`physid.impacts.lcp.lemke`); eq. 2.28 then gives the velocity.
"""

from __future__ import annotations

import itertools

import numpy as np

from physid.impacts.lcp import lemke


def _unilateral_block(
    C: np.ndarray,
    sc: np.ndarray,
    ac: np.ndarray,
    Dd: np.ndarray,
    mu: np.ndarray,
    st: np.ndarray,
    constant: np.ndarray | None,
    relax: np.ndarray | None,
    dry: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows ``B``, the regularisation ``K`` and the right-hand side ``b_B`` of the dry
    hinges' LCP block (eqs. 2.24-2.25 in the Stewart-Trinkle box form, F.4): the holonomic rows
    as pairs ``g >= 0``, ``-g >= 0``, the friction rows ``+-D`` and the slack rows
    ``r mu (l+ + l-) + h tau_c - l_t+ - l_t- >= 0``."""
    nc, nd, nv = C.shape[0], Dd.shape[0], C.shape[1]
    Bv = np.vstack([C, -C, Dd, -Dd, np.zeros((nd, nv))])
    nb = Bv.shape[0]
    K = np.zeros((nb, nb))
    K[:nc, :nc] = np.diag(sc)
    K[nc : 2 * nc, nc : 2 * nc] = np.diag(sc)
    E = np.eye(nd)
    t0, s0 = 2 * nc, 2 * nc + 2 * nd
    K[t0 : t0 + nd, t0 : t0 + nd] = np.diag(st)
    K[t0 + nd : s0, t0 + nd : s0] = np.diag(st)
    K[t0 : t0 + nd, s0:] = E
    K[t0 + nd : s0, s0:] = E
    U = np.zeros((nd, nc))
    for j in range(nd):
        U[j, 5 * j : 5 * j + 5] = mu[j]
    K[s0:, :nc] = U
    K[s0:, nc : 2 * nc] = U
    K[s0:, t0 : t0 + nd] = -E
    K[s0:, t0 + nd : s0] = -E
    # slack rows: the constant h tau_c enters the right-hand side
    extra = np.zeros(nd) if constant is None else -np.asarray(constant, float)[dry]
    # friction rows: +-(D v_{k+1} - upsilon_t D v_k) + Sigma_t l_t + sigma >= 0 (friction_row)
    target = np.zeros(nd) if relax is None else np.asarray(relax, float)[dry]
    return Bv, K, np.concatenate([ac, -ac, target, -target, extra])


def solve_velocity(
    M: np.ndarray,
    p: np.ndarray,
    G: np.ndarray,
    sigma: np.ndarray,
    a: np.ndarray,
    D: np.ndarray,
    bound: np.ndarray,
    sigma_t: np.ndarray,
    dry: np.ndarray,
    constant: np.ndarray | None = None,
    relax: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """``v_{k+1}`` and the holonomic impulses of ``M v - G^T l - B^T l_B = p`` (eq. 2.26).

    ``M`` already contains viscous and motor terms; ``dry`` is a boolean mask of the hinges with
    dry friction (``bound`` = r mu per hinge, ``sigma_t`` friction regularisation, ``constant``
    the impulse ``h tau_c`` of a constant Coulomb torque added to the bound, ``relax`` the
    stick velocity target ``upsilon_t D v_k`` per hinge, zero by default). Returns
    ``(v_next, lambda_holonomic, ok)``; ``ok`` is False if Lemke ended on a ray.
    """
    rows_dry = np.repeat(dry, 5)
    if not rows_dry.any():
        Mi_GT = np.linalg.solve(M, G.T)
        Mi_p = np.linalg.solve(M, p)
        lam = np.linalg.solve(G @ Mi_GT + np.diag(sigma), a - G @ Mi_p)
        return Mi_p + Mi_GT @ lam, lam, True
    constant_only = constant is not None and not np.any(bound[dry])
    if constant_only and dry.sum() <= BOX_MAX_HINGES:
        target = np.zeros(dry.sum()) if relax is None else np.asarray(relax, float)[dry]
        v1, lam = box_friction_velocity(
            M[None],
            p[None],
            G[None],
            sigma[None],
            a[None],
            D[dry][None],
            np.asarray(constant, float)[dry][None],
            sigma_t[dry][None],
            target[None],
        )
        return v1[0], lam[0], True
    free = ~rows_dry
    Af, sf, af = G[free], sigma[free], a[free]
    Bv, K, b_B = _unilateral_block(
        G[rows_dry],
        sigma[rows_dry],
        a[rows_dry],
        D[dry],
        bound[dry],
        sigma_t[dry],
        constant,
        relax,
        dry,
    )
    nc = int(rows_dry.sum())
    Mi = np.linalg.inv(M)
    Mi_p = Mi @ p
    S_BB = Bv @ Mi @ Bv.T + K
    r_B = Bv @ Mi_p - b_B
    if Af.shape[0]:
        S_ff = Af @ Mi @ Af.T + np.diag(sf)
        S_fB = Af @ Mi @ Bv.T
        r_f = Af @ Mi_p - af
        X = np.linalg.solve(S_ff, np.column_stack([S_fB, r_f]))
        S_Bf = Bv @ Mi @ Af.T
        lcp_M, lcp_q = S_BB - S_Bf @ X[:, :-1], r_B - S_Bf @ X[:, -1]
    else:
        lcp_M, lcp_q = S_BB, r_B
    sol = lemke(lcp_M, lcp_q)
    lam_B = sol.z
    force = Bv.T @ lam_B
    lam = np.zeros(G.shape[0])
    if Af.shape[0]:
        lam_f = -np.linalg.solve(S_ff, S_fB @ lam_B + r_f)
        force = force + Af.T @ lam_f
        lam[free] = lam_f
    lam[rows_dry] = lam_B[:nc] - lam_B[nc : 2 * nc]
    return Mi_p + Mi @ force, lam, sol.ok


#: Most dry hinges :func:`box_friction_velocity` enumerates (3^n active sets); beyond, Lemke.
BOX_MAX_HINGES = 4


def box_friction_velocity(
    M: np.ndarray,
    p: np.ndarray,
    G: np.ndarray,
    sigma: np.ndarray,
    a: np.ndarray,
    Dd: np.ndarray,
    limit: np.ndarray,
    sigma_t: np.ndarray,
    target: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(v_next, lambda_holonomic)`` of eq. 2.26 for a batch of steps whose dry hinges carry a
    constant Coulomb torque only (``r mu = 0``): leading axis ``B`` on every argument (``Dd``
    (B, nd, nv) the dry hinges' free-axis rows, ``limit`` (B, nd) their impulse bound ``h
    tau_c``, ``sigma_t`` and ``target`` their row's regularisation and stick target).

    With ``r mu = 0`` the pair of unilateral rows of F.4 is one bilateral row (both multipliers
    cannot be positive at once when ``Sigma > 0``), so every holonomic row is an equality and
    the Stewart-Trinkle LCP of :func:`solve_velocity` shrinks to a box: the friction impulses
    ``l`` minimise ``l^T (A + Sigma_t) l / 2 + b^T l`` over ``|l_i| <= limit_i`` with ``A`` the
    free axes' inverse effective mass after the holonomic rows' Schur complement and ``b`` their
    velocity without friction minus the stick target. The QP is strictly convex (``Sigma_t >
    0`` or ``A`` definite), so exactly one of the ``3^nd`` active sets (stuck, sliding +, -)
    satisfies its conditions; all are evaluated for the whole batch at once and the one with
    the least violation is kept, which is exact, needs no tolerance, and replaces the ~24
    Lemke pivots of a two-hinge step (most of its time)."""
    Mi = np.linalg.inv(M)
    Mi_p = np.einsum("bij,bj->bi", Mi, p)
    Mi_Gt = Mi @ np.swapaxes(G, 1, 2)
    Mi_Dt = Mi @ np.swapaxes(Dd, 1, 2)
    S = G @ Mi_Gt + sigma[:, :, None] * np.eye(G.shape[1])
    rhs = np.concatenate([G @ Mi_Dt, (a - np.einsum("bij,bj->bi", G, Mi_p))[:, :, None]], axis=2)
    X = np.linalg.solve(S, rhs)  # [S^-1 G M^-1 Dd^T, lambda without friction]
    lam0 = X[:, :, -1]
    v_free = Mi_p + np.einsum("bij,bj->bi", Mi_Gt, lam0)
    Y = Mi_Dt - Mi_Gt @ X[:, :, :-1]  # velocity per unit friction impulse
    nd = Dd.shape[1]
    A = Dd @ Y + sigma_t[:, :, None] * np.eye(nd)
    b = np.einsum("bij,bj->bi", Dd, v_free) - target
    best_l = np.zeros_like(b)
    best_violation = np.full(len(b), np.inf)
    for pattern in itertools.product((0, 1, -1), repeat=nd):
        state = np.array(pattern)
        inner = state == 0
        l = np.broadcast_to(state * 1.0, b.shape) * limit
        if inner.any():
            coupling = np.einsum("bij,bj->bi", A[:, inner][:, :, ~inner], l[:, ~inner])
            rhs_i = -(b[:, inner] + coupling)
            l = l.copy()
            l[:, inner] = np.linalg.solve(A[:, inner][:, :, inner], rhs_i[:, :, None])[:, :, 0]
        y = np.einsum("bij,bj->bi", A, l) + b
        # stuck: |l| <= limit; sliding +: l = +limit and y <= 0; sliding -: y >= 0
        miss = np.where(inner, np.abs(l) - limit, state * y)
        violation = np.max(np.maximum(miss, 0.0), axis=1, initial=0.0)
        better = violation < best_violation
        best_l[better], best_violation[better] = l[better], violation[better]
    lam = lam0 - np.einsum("bij,bj->bi", X[:, :, :-1], best_l)
    return v_free + np.einsum("bij,bj->bi", Y, best_l), lam
