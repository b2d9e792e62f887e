"""Signal handling around the online filters (paper E §III-D and §IV-B).

* :class:`SampleWindow` — the last ``W`` samples; accelerations by a causal finite difference
  (least-squares slope of the velocity over the window, ``W = 3`` is the central difference),
  valid at the window's middle sample, so positions, torques and wrenches are delayed by
  ``(W - 1) / 2`` samples to match (§III-D). Without logged velocities, velocity and
  acceleration both come from a least-squares quadratic in time fitted to the window's positions
  (a Savitzky-Golay derivative), valid at the same middle sample with the same delay. Bad samples
  (non-finite values, time not increasing) are rejected; a non-finite sample or a time gap
  longer than ``max_gap_s`` (a dropped sample) empties the window, since a difference across
  the hole would be wrong.
* :class:`BiasCalibration` — the start-up calibration of §IV-B: the mean residual over a window
  is afterwards subtracted from ``delta_tau`` (an extra constant term in eq. 14).
* :class:`RateLimiter` — limits how fast the streamed estimate may move (§IV-B, 3 kg/s).
"""

from __future__ import annotations

import math
from enum import StrEnum

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.online.config import RateLimit

#: Without ``max_gap_s``, a step longer than this many times the median step of the first full
#: window counts as dropped samples.
GAP_FACTOR = 2.5


class Skip(StrEnum):
    """Why a sample did not update the estimate (:attr:`OnlineEstimate.reason
    <physid.online.results.OnlineEstimate.reason>`; the keys of summary.json's
    ``skip_reasons``)."""

    NON_FINITE_TIME = "non-finite time"
    TIME_NOT_INCREASING = "time does not increase"
    NON_FINITE_Q = "non-finite q"
    NON_FINITE_DQ = "non-finite dq"
    NON_FINITE_TAU = "non-finite tau"
    NON_FINITE_WRENCH = "non-finite contact wrench"
    TIME_GAP = "time gap"  # dropped samples: the window starts again
    FILLING_WINDOW = "filling the acceleration window"
    NON_FINITE_MEASUREMENT = "non-finite measurement"
    AT_REST = "at rest: static friction holds every joint"
    SINGULAR_INNOVATION = "singular innovation covariance"
    NUMERICAL_FAILURE = "numerical failure"  # of the update: the prior is kept


class SampleWindow:
    """Ring buffer of the last ``size`` samples with a causal derivative of the velocity."""

    def __init__(
        self, nq: int, nv: int, n_tau: int, n_wrench: int, size: int, max_gap_s: float | None = None
    ) -> None:
        self.size = size
        self.t = np.zeros(size)
        self.q = np.zeros((size, nq))
        self.v = np.zeros((size, nv))
        self.tau = np.zeros((size, n_tau))
        self.wrench = np.zeros((size, n_wrench))
        self.max_gap_s = max_gap_s
        self._count = 0  # samples in the window since the last reset
        self._head = -1  # slot of the newest sample
        self._last_t = -np.inf
        self.velocity_from_positions: bool | None = None  # fixed by the first sample

    @property
    def full(self) -> bool:
        return self._count >= self.size

    def reset(self) -> None:
        self._count = 0

    def push(
        self,
        t: float,
        q: NDArray,
        v: NDArray,
        tau: NDArray,
        wrench: NDArray,
        *,
        velocity_from_positions: bool = False,
    ) -> Skip | None:
        """Add a sample; None if it was taken, else why it was not (the window may reset; a
        sample after a time gap is taken into the emptied window).

        ``velocity_from_positions``: ``v`` is a placeholder, the velocity is estimated from the
        positions (every sample of a stream alike: mixing raises InputError).
        """
        if self.velocity_from_positions is None:
            self.velocity_from_positions = velocity_from_positions
        elif self.velocity_from_positions != velocity_from_positions:
            from physid.errors import InputError

            raise InputError("give dq for every sample or for none (then it is estimated)")
        if not math.isfinite(t):
            self.reset()
            return Skip.NON_FINITE_TIME
        if t <= self._last_t:
            return Skip.TIME_NOT_INCREASING
        # one sum per signal: NaN or inf anywhere makes it non-finite (cheaper than isfinite)
        signals = (
            (Skip.NON_FINITE_Q, q),
            (Skip.NON_FINITE_DQ, v),
            (Skip.NON_FINITE_TAU, tau),
            (Skip.NON_FINITE_WRENCH, wrench),
        )
        for skip, values in signals:
            if not np.isfinite(values.sum()):
                self.reset()
                self._last_t = t
                return skip
        reason = None
        if self._count and self.max_gap_s is not None and t - self._last_t > self.max_gap_s:
            reason = Skip.TIME_GAP
            self.reset()
        self._head = (self._head + 1) % self.size
        k = self._head
        self.t[k], self.q[k], self.v[k], self.tau[k], self.wrench[k] = t, q, v, tau, wrench
        self._count += 1
        self._last_t = t
        if self.max_gap_s is None and self._count == self.size:
            self.max_gap_s = GAP_FACTOR * float(np.median(np.diff(np.sort(self.t))))
        return reason

    def middle(self) -> tuple[float, NDArray, NDArray, NDArray, NDArray, NDArray]:
        """``(t, q, v, tau, wrench, dv/dt)`` of the middle sample of a full window.

        The derivative is the least-squares slope of v over the window (order-free sums, so the
        ring buffer needs no rotation); for uniform sampling it is exact for quadratic v at the
        middle sample.
        """
        k = (self._head - (self.size - 1) // 2) % self.size
        if self.velocity_from_positions:
            # q(t) ~ c0 + c1 s + c2 s^2 with s = t - t_middle (centred: well conditioned)
            s = self.t - self.t[k]
            basis = np.column_stack([np.ones_like(s), s, s * s])
            c = np.linalg.solve(basis.T @ basis, basis.T @ self.q)
            return self.t[k], self.q[k], c[1], self.tau[k], self.wrench[k], 2.0 * c[2]
        dt = self.t - self.t.mean()
        weights = dt / (dt @ dt)
        return self.t[k], self.q[k], self.v[k], self.tau[k], self.wrench[k], weights @ self.v


class BiasCalibration:
    """Mean of the residual ``delta_tau - h(x0)`` over the first ``duration_s`` of valid samples."""

    def __init__(self, n_rows: int, duration_s: float) -> None:
        self.duration_s = float(duration_s)
        self._sum = np.zeros(n_rows)
        self._count = 0
        self._t_start: float | None = None
        self.bias = np.zeros(n_rows)
        self.done = self.duration_s <= 0.0

    def add(self, t: float, residual: NDArray[np.float64]) -> bool:
        """Accumulate one residual; True while calibrating (the filter must not update)."""
        if self.done:
            return False
        if self._t_start is None:
            self._t_start = t
        if t - self._t_start >= self.duration_s and self._count:
            self.bias = self._sum / self._count
            self.done = True
            return False
        self._sum += residual
        self._count += 1
        return True


def _limited_step(old: NDArray, new: NDArray, max_step: float | None) -> NDArray:
    """Move from ``old`` toward ``new`` along the straight line, max-norm step <= ``max_step``.

    Straight lines keep a convex set: mass > 0 and the inertias about the centre of mass that
    satisfy the triangle inequalities are convex sets, the centre of mass is free, so a body
    interpolated this way between two consistent bodies is consistent.
    """
    if max_step is None:
        return new
    largest = float(np.abs(new - old).max())
    if largest <= max_step:
        return new
    return old + (max_step / largest) * (new - old)


class RateLimiter:
    """Per-body rate limits on mass [kg/s], centre of mass [m/s] and inertia about it [kg m^2/s].

    Each quantity moves along the straight line toward the filter's estimate (see
    :func:`_limited_step`), so consistency is kept. A body whose mass is not positive (possible
    only for the baseline KF) is interpolated in pi with the mass limit.
    """

    def __init__(self, limits: RateLimit, initial_pi: NDArray[np.float64]) -> None:
        self.limits = limits
        self._out = np.array(initial_pi, dtype=float)  # (n_bodies, 10) last streamed pi
        self._t: float | None = None

    def __call__(self, t: float, pi: NDArray[np.float64]) -> NDArray[np.float64]:
        """The streamed pi (n_bodies, 10) at time ``t`` for the filter's estimate ``pi``.

        The output starts at ``initial_pi`` when first called, so switching the filter on does
        not step the controller's model either (paper E §IV-B).
        """
        if not self.limits.active:
            return pi
        if self._t is None:
            self._t = t
            return self._out
        dt = max(t - self._t, 0.0)
        self._t = t
        limits = self.limits
        scaled = [None if r is None else r * dt for r in (limits.mass, limits.com, limits.inertia)]
        out = np.empty_like(pi)
        for b in range(pi.shape[0]):
            old, new = self._out[b], pi[b]
            # Pinocchio's Inertia stores (mass, lever = com, inertia about the com): the same
            # split as physid.body.inertia.mass_com_inertia_from_pi, 20x cheaper in the hot path.
            before = pin.Inertia.FromDynamicParameters(old)
            after = pin.Inertia.FromDynamicParameters(new)
            mass = _limited_step(np.array([before.mass]), np.array([after.mass]), scaled[0])[0]
            com = _limited_step(before.lever, after.lever, scaled[1])
            inertia = _limited_step(before.inertia, after.inertia, scaled[2])
            try:
                out[b] = pin.Inertia(mass, com, inertia).toDynamicParameters()
            except RuntimeError:  # an inconsistent baseline-KF body: interpolate pi by mass
                step = abs(new[0] - old[0])
                limited = scaled[0] is not None and step > scaled[0]
                out[b] = old + (scaled[0] / step if limited else 1.0) * (new - old)
        self._out = out
        return out
