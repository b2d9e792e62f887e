"""The stacked least-squares problem ``min ||Dz(X)||^2`` over states and parameters (paper A
eqs. 3.15-3.20) for one or more recordings (segments) sharing the parameters, with the
block-bidiagonal / block-diagonal sparse Jacobian of eq. 3.25 assembled from per-step dense
blocks (CasADi ``map`` over the steps, Appendix B).

Variable order: for each segment, for each step ``k``: ``[d_k (6n), v_k (6n)]`` (tangent of the
configuration, velocity), then the estimated parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from physid.multibody.kinematics import np_box_plus
from physid.multibody.model import MultibodyModel
from physid.multibody.residuals import build_residuals


@dataclass
class Segment:
    """One recording resampled at step h: observed angles and control per step."""

    y: np.ndarray  # (n, m)
    u: np.ndarray  # (n, m)


@dataclass
class States:
    """Maximal-coordinate states of every segment: ``q`` (n, 7nb), ``v`` (n, 6nb)."""

    q: list[np.ndarray]
    v: list[np.ndarray]

    def copy(self) -> States:
        return States([a.copy() for a in self.q], [a.copy() for a in self.v])


class Problem:
    """Residuals and sparse Jacobian for a model, step ``h``, weight ``kappa`` and segments."""

    def __init__(
        self,
        model: MultibodyModel,
        h: float,
        names: list[str],
        kappa: float,
        segments: list[Segment],
    ) -> None:
        self.model, self.h, self.names, self.kappa = model, h, list(names), kappa
        self.segments = segments
        self.fn = build_residuals(model, h, self.names, kappa)
        self.ns = self.fn.n_state
        self.fixed = model.values.copy()
        self.n_params = len(self.names)
        self.state_offsets = np.cumsum([0] + [len(s.y) * self.ns for s in segments])
        self.n_state_vars = int(self.state_offsets[-1])
        self._maps: dict[int, tuple] = {}

    def _mapped(self, n: int):
        if n not in self._maps:
            self._maps[n] = (self.fn.dyn_jac.map(n - 1), self.fn.obs_jac.map(n))
        return self._maps[n]

    def residual(self, states: States, p: np.ndarray, jacobian: bool = True):
        """``r`` and (if ``jacobian``) the sparse ``dr/dX`` (CSR)."""
        ns, npar = self.ns, self.n_params
        n6 = ns // 2
        rs, rows, cols, vals = [], [], [], []
        row0 = 0
        for s, seg in enumerate(self.segments):
            Q, V = states.q[s], states.v[s]
            n = len(Q)
            col0 = int(self.state_offsets[s])
            dyn_map, obs_map = self._mapped(n)
            ri, Jx, Jp = self.fn.init_jac(Q[0], V[0], p, self.fixed)
            rd, Jdx, Jdp = dyn_map(
                Q[:-1].T, V[:-1].T, Q[1:].T, V[1:].T, seg.u[:-1].T, p, self.fixed
            )
            ro, Jo = obs_map(Q.T, seg.y.T, p, self.fixed)
            ri, rd, ro = (np.asarray(a, float) for a in (ri, rd, ro))
            rs += [ri.ravel(), rd.T.ravel(), ro.T.ravel()]
            if jacobian:
                m = self.fn.n_obs
                blocks = [
                    (np.asarray(Jx, float)[None], row0, col0, ns),
                    (
                        np.asarray(Jdx, float).reshape(ns, n - 1, 2 * ns).transpose(1, 0, 2),
                        row0 + ns,
                        col0,
                        ns,
                    ),
                ]
                for B, r_start, c_start, c_step in blocks:
                    nblk, nr, nc = B.shape
                    rr = (
                        r_start + np.arange(nblk)[:, None, None] * nr + np.arange(nr)[None, :, None]
                    )
                    cc = (
                        c_start
                        + np.arange(nblk)[:, None, None] * c_step
                        + np.arange(nc)[None, None, :]
                    )
                    rows.append(np.broadcast_to(rr, B.shape).ravel())
                    cols.append(np.broadcast_to(cc, B.shape).ravel())
                    vals.append(B.ravel())
                Jo = np.asarray(Jo, float).reshape(m, n, n6).transpose(1, 0, 2)
                obs_row0 = row0 + ns + (n - 1) * ns
                rr = obs_row0 + np.arange(n)[:, None, None] * m + np.arange(m)[None, :, None]
                cc = col0 + np.arange(n)[:, None, None] * ns + np.arange(n6)[None, None, :]
                rows.append(np.broadcast_to(rr, Jo.shape).ravel())
                cols.append(np.broadcast_to(cc, Jo.shape).ravel())
                vals.append(Jo.ravel())
                if npar:
                    Pp = np.vstack(
                        [
                            np.asarray(Jp, float),
                            np.asarray(Jdp, float)
                            .reshape(ns, n - 1, npar)
                            .transpose(1, 0, 2)
                            .reshape(-1, npar),
                        ]
                    )
                    rr = row0 + np.arange(Pp.shape[0])[:, None]
                    cc = self.n_state_vars + np.arange(npar)[None, :]
                    rows.append(np.broadcast_to(rr, Pp.shape).ravel())
                    cols.append(np.broadcast_to(cc, Pp.shape).ravel())
                    vals.append(Pp.ravel())
            row0 += ns + (n - 1) * ns + n * self.fn.n_obs
        r = np.concatenate(rs)
        if not jacobian:
            return r
        shape = (len(r), self.n_state_vars + npar)
        J = sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=shape
        )
        return r, J

    def retract(
        self, states: States, p: np.ndarray, delta: np.ndarray
    ) -> tuple[States, np.ndarray]:
        """``X [+] delta``: configurations by the exact exponential, the rest additively."""
        out = states.copy()
        ns, n6 = self.ns, self.ns // 2
        for s in range(len(self.segments)):
            blk = delta[self.state_offsets[s] : self.state_offsets[s + 1]].reshape(-1, ns)
            out.q[s] = np.array(
                [np_box_plus(q, d) for q, d in zip(out.q[s], blk[:, :n6], strict=True)]
            )
            out.v[s] = out.v[s] + blk[:, n6:]
        return out, p + delta[self.n_state_vars :]
