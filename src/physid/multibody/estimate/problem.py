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

from physid.multibody.estimate.assembly import CsrGather, SegmentEvaluator
from physid.multibody.estimate.residuals import build_residuals
from physid.multibody.model.kinematics import np_box_plus_rows
from physid.multibody.model.spec import MultibodyModel


@dataclass
class Segment:
    """One recording at step h: angles and control per step, and the weight of each angle's
    residual (0 at steps without a recorded sample, ``sigma_ref / sigma_j`` at the others:
    :mod:`physid.multibody.estimate.observe`; default 1 everywhere)."""

    y: np.ndarray  # (n, m)
    u: np.ndarray  # (n, m)
    w: np.ndarray | None = None  # (n, m)

    def __post_init__(self) -> None:
        if self.w is None:
            self.w = np.ones_like(np.asarray(self.y, float))


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
        compile: bool = False,
    ) -> None:
        self.model, self.h, self.names, self.kappa = model, h, list(names), kappa
        self.segments = segments
        self.fn = build_residuals(model, h, self.names, kappa, compile)
        self.ns = self.fn.n_state
        self.fixed = model.values.copy()
        self.n_params = len(self.names)
        self.state_offsets = np.cumsum([0] + [len(s.y) * self.ns for s in segments])
        self.n_state_vars = int(self.state_offsets[-1])
        self._evaluators: dict[int, SegmentEvaluator] = {}
        self._gather: CsrGather | None = None

    def _evaluator(self, n: int) -> SegmentEvaluator:
        if n not in self._evaluators:
            self._evaluators[n] = SegmentEvaluator(self.fn, n, self.n_params)
        return self._evaluators[n]

    def _csr(self) -> CsrGather:
        if self._gather is None:
            rows, cols, row0 = [], [], 0
            for s, seg in enumerate(self.segments):
                ev = self._evaluator(len(seg.y))
                rr, cc = ev.pattern(row0, int(self.state_offsets[s]), self.n_state_vars)
                rows.append(rr)
                cols.append(cc)
                row0 += ev.n_rows
            shape = (row0, self.n_state_vars + self.n_params)
            self._gather = CsrGather(np.concatenate(rows), np.concatenate(cols), shape)
        return self._gather

    def residual(self, states: States, p: np.ndarray, jacobian: bool = True):
        """``r`` and (if ``jacobian``) the sparse ``dr/dX`` (CSR)."""
        rs, vals = [], []
        p = np.asarray(p, float)
        for s, seg in enumerate(self.segments):
            ev = self._evaluator(len(seg.y))
            args = (states.q[s], states.v[s], seg.u, seg.y, seg.w, p, self.fixed)
            if not jacobian:
                rs.append(ev.residual(*args))
                continue
            r, values = ev.jacobian(*args)
            rs.append(r)
            vals.append(np.concatenate(values))  # a copy: the buffers are reused
        r = np.concatenate(rs)
        if not jacobian:
            return r
        return r, self._csr().matrix(np.concatenate(vals))

    def retract(
        self, states: States, p: np.ndarray, delta: np.ndarray
    ) -> tuple[States, np.ndarray]:
        """``X [+] delta``: configurations by the exact exponential, the rest additively."""
        out = states.copy()
        ns, n6 = self.ns, self.ns // 2
        for s in range(len(self.segments)):
            blk = delta[self.state_offsets[s] : self.state_offsets[s + 1]].reshape(-1, ns)
            out.q[s] = np_box_plus_rows(out.q[s], blk[:, :n6])
            out.v[s] = out.v[s] + blk[:, n6:]
        return out, p + delta[self.n_state_vars :]
