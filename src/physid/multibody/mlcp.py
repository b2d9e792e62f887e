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

import numpy as np

from physid.impacts.lcp import lemke


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
    free = ~rows_dry
    Af, sf, af = G[free], sigma[free], a[free]
    C, sc, ac = G[rows_dry], sigma[rows_dry], a[rows_dry]
    Dd, mu, st = D[dry], bound[dry], sigma_t[dry]
    nc, nd, nv = C.shape[0], Dd.shape[0], M.shape[0]
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
    # slack rows: r mu (l+ + l-) + h tau_c - l_t+ - l_t- >= 0 (the constant enters q)
    extra = np.zeros(nd) if constant is None else -np.asarray(constant, float)[dry]
    # friction rows: +-(D v_{k+1} - upsilon_t D v_k) + Sigma_t l_t + sigma >= 0 (friction_row)
    target = np.zeros(nd) if relax is None else np.asarray(relax, float)[dry]
    b_B = np.concatenate([ac, -ac, target, -target, extra])
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
