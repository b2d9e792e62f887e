"""A start for the pooled NLP of eq. (27) stitched from the throws' own fits.

Each throw fitted alone ends in a trajectory whose impulses already satisfy eqs. (16)–(17) and
the complementarity of eq. (26) for its own J/m; laid end to end (with the flight between throws
interpolated) and given the median J/m and μ of the throws, they make a start from which IPOPT
only has to reconcile the throws, instead of rediscovering every contact of every throw from the
generic warm starts (which can spend a pooled budget before they converge).
The multipliers λ and the slacks are set from their definitions (eqs. 12, 14, 23) and clipped at 0.
"""

from __future__ import annotations

import numpy as np

from physid.impacts.geometry import Line, Shape, contact_frames, grasp_matrices
from physid.impacts.identify.nlp import IdentificationNlp
from physid.impacts.results import ImpactsIdentification


def stitched_start(
    nlp: IdentificationNlp,
    shape: Shape,
    lines: list[Line],
    singles: list[ImpactsIdentification],
    first: list[int],
    ns: int,
    t_fine: np.ndarray,
    inertia_ratio: float,
    mu: float,
) -> np.ndarray | None:
    """The decision vector of the pooled NLP, or None when a throw's fine grid differs from the
    pooled one (another n_s: the throws were filmed at different frame rates)."""
    N, nc = nlp.layout.N, nlp.layout.nc
    q, v = np.zeros((N + 1, 3)), np.zeros((N + 1, 3))
    cn, ct = np.zeros((N, nc)), np.zeros((N, 2 * nc))
    filled = np.zeros(N + 1, dtype=bool)
    for res, f in zip(singles, first, strict=True):
        if res.n_substeps != ns:
            return None
        k0, n = ns * f, res.t.size
        q[k0 : k0 + n], v[k0 : k0 + n] = res.q, res.v
        filled[k0 : k0 + n] = True
        per_mass_n = res.impulse_normal / res.mass
        per_mass_t = res.impulse_tangent / res.mass
        cn[k0 : k0 + n - 1] = per_mass_n
        ct[k0 : k0 + n - 1, 0::2] = np.maximum(per_mass_t, 0.0)
        ct[k0 : k0 + n - 1, 1::2] = np.maximum(-per_mass_t, 0.0)
    gaps = np.flatnonzero(~filled)
    for i in range(3):  # the flights between throws: straight lines (their start is free)
        q[gaps, i] = np.interp(t_fine[gaps], t_fine[filled], q[filled, i])
        v[gaps, i] = np.interp(t_fine[gaps], t_fine[filled], v[filled, i])
    lam, slack = np.zeros((N, nc)), np.zeros((N, 4 * nc))
    for k in range(N):
        frames = contact_frames(shape, lines, q[k])
        _, T = grasp_matrices(frames.arm, frames.normal, frames.tangent)
        slip = T.T @ v[k + 1]  # (2nc): d+ and d- velocities
        lam[k] = np.maximum(-slip[0::2], -slip[1::2]).clip(min=0.0)  # eq. (14) feasible
        slack[k, : 2 * nc] = slip + np.repeat(lam[k], 2)
        slack[k, 2 * nc : 3 * nc] = (mu * cn[k] - ct[k, 0::2] - ct[k, 1::2]).clip(min=0.0)
        slack[k, 3 * nc :] = frames.gap.clip(min=0.0)
    x = np.r_[
        q.ravel(),
        v.ravel(),
        cn.ravel(),
        ct.ravel(),
        lam.ravel(),
        slack.ravel(),
        inertia_ratio / nlp.r_scale,
        mu,
    ]
    return np.clip(x, nlp.lbx, nlp.ubx)
