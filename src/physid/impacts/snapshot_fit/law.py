"""Paper D's impact law for one contact, in closed form: the post-impact velocity of a planar body.

For an impact the time-stepping step of paper D (eqs. 16–19 with h → 0: gravity carries no impulse)
with the restitution conditions of eq. (4) and Coulomb's friction with maximal dissipation
(eqs. 10–15) on a single contact is the 2-variable LCP

    v⁺ = v⁻ + W (n̄ c̄_n + t̄ c̄_t),   W = diag(1, 1, m/J),
    0 ≤ c̄_n ⊥ n̄ᵀ(v⁺ + ε v⁻) ≥ 0,   |c̄_t| ≤ μ c̄_n, c̄_t t̄ᵀv⁺ ≤ 0, (μ c̄_n − |c̄_t|) t̄ᵀv⁺ = 0,

with n̄ = (n, GQ × n), t̄ = (t, GQ × t) the columns of the grasp matrices of §4.1 and per-mass
impulses c̄ = c/m. With the Delassus matrix A = [n̄ t̄]ᵀ W [n̄ t̄] its unique solution (for
A_nn ± μ A_nt > 0, no Painlevé paradox) is: sticking, A c̄ = (−(1+ε) u_n, −u_t), when that c̄ lies in
the friction cone; otherwise sliding, c̄_t = σ μ c̄_n with σ the sign of the sticking c̄_t and
c̄_n = −(1+ε) u_n / (A_nn + σ μ A_nt). u = (u_n, u_t) = (n̄ᵀv⁻, t̄ᵀv⁻) is the pre-impact velocity
of the contact point; :func:`impact_response` evaluates all of this for many impacts at once.
"""

from __future__ import annotations

import numpy as np


def contact_columns(arm: np.ndarray, normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """n̄ and t̄ (n, 3) of impacts with lever arms GQ (n, 2) [m] and unit normals (n, 2).

    The tangent is d+ = (n_y, −n_x) as in :mod:`physid.impacts.geometry`.
    """
    tangent = np.column_stack([normal[:, 1], -normal[:, 0]])
    cross = lambda d: arm[:, 0] * d[:, 1] - arm[:, 1] * d[:, 0]  # noqa: E731
    return (
        np.column_stack([normal, cross(normal)]),
        np.column_stack([tangent, cross(tangent)]),
    )


def impact_response(
    v_pre: np.ndarray,
    nbar: np.ndarray,
    tbar: np.ndarray,
    inertia_ratio: float,
    mu: float,
    restitution: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Velocity change v⁺ − v⁻ (n, 3) of impacts, their per-mass impulses (c̄_n, c̄_t) (n, 2)
    [m/s] and whether each slides (n,) bool. ``v_pre`` (n, 3): (v_x, v_y, ω) before the impact
    [m/s, rad/s]; ``inertia_ratio`` J/m [m²]; ``restitution`` ε (n,) of eq. (4)."""
    W = np.array([1.0, 1.0, 1.0 / inertia_ratio])
    wn, wt = nbar * W, tbar * W
    a_nn = np.einsum("ij,ij->i", nbar, wn)
    a_nt = np.einsum("ij,ij->i", nbar, wt)
    a_tt = np.einsum("ij,ij->i", tbar, wt)
    u_n = np.einsum("ij,ij->i", nbar, v_pre)
    u_t = np.einsum("ij,ij->i", tbar, v_pre)
    det = a_nn * a_tt - a_nt**2
    un_target = (1.0 + restitution) * u_n
    cn = (-un_target * a_tt + a_nt * u_t) / det  # sticking: A c = (−(1+ε) u_n, −u_t)
    ct = (a_nt * un_target - a_nn * u_t) / det
    slides = np.abs(ct) > mu * cn
    sigma = np.sign(ct)
    denominator = a_nn + sigma * mu * a_nt
    cn_slide = -un_target / np.where(denominator > 0, denominator, np.nan)
    cn = np.where(slides, cn_slide, cn)
    ct = np.where(slides, sigma * mu * cn_slide, ct)
    w = wn * cn[:, None] + wt * ct[:, None]
    return w, np.column_stack([cn, ct]), slides
