"""What the online filters stream: one :class:`OnlineEstimate` per ``update`` call.

A body's estimate is its pi (Pinocchio order ``[m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``,
inertia about the joint-frame origin); mass [kg], centre of mass [m, joint frame] and inertia
about the centre of mass [kg m^2, joint-frame axes] are derived from it on first access, so the
hot path stays cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from physid.body.inertia import inertia_vector_from_matrix, mass_com_inertia_from_pi
from physid.online.stream import Skip

#: Names of the streamed quantities of one body, in the order of :attr:`BodyEstimate.vector`
#: and :attr:`BodyEstimate.covariance` (inertia about the centre of mass).
QUANTITY_NAMES = ("mass", "com_x", "com_y", "com_z", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
#: The SI unit of each of :data:`QUANTITY_NAMES`.
QUANTITY_UNITS = dict(zip(QUANTITY_NAMES, ("kg", "m", "m", "m", *(["kg m^2"] * 6)), strict=True))

# (row, col) of (Ixx, Ixy, Iyy, Ixz, Iyz, Izz) in the 3x3 matrix
_SYM = ((0, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 2))


def quantity_jacobian(pi: NDArray[np.float64]) -> NDArray[np.float64]:
    """``d [m, c, vech(I_c)] / d pi`` (..., 10, 10) for ``c = h/m`` and the parallel-axis
    theorem ``I_c = I - (|h|^2 1 - h h^T)/m`` (as
    :func:`physid.body.inertia.mass_com_inertia_from_pi`).

    Batched over ``pi (..., 10)``; needs ``m != 0``.
    """
    pi = np.asarray(pi, dtype=float)
    m, h = pi[..., 0, None], pi[..., 1:4]
    jac = np.zeros(pi.shape + (10,))
    jac[..., 0, 0] = 1.0
    jac[..., 1:4, 0] = -h / m**2
    jac[..., 1:4, 1:4] = np.eye(3) / m[..., None]
    hh = np.einsum("...i,...i", h, h)[..., None]
    for row, (i, j) in enumerate(_SYM):
        delta = 1.0 if i == j else 0.0
        shift = hh[..., 0] * delta - h[..., i] * h[..., j]
        jac[..., 4 + row, 0] = shift / m[..., 0] ** 2
        d_shift = 2.0 * h * delta
        d_shift[..., i] -= h[..., j]
        d_shift[..., j] -= h[..., i]
        jac[..., 4 + row, 1:4] = -d_shift / m
        jac[..., 4 + row, 4 + row] = 1.0
    return jac


@dataclass(frozen=True)
class BodyEstimate:
    """Streamed estimate of one body (the rate-limited output; see the module docstring).

    ``covariance_pi`` (10 x 10) is the filter's covariance mapped to pi (``G P G^T`` for the EKF,
    eq. 21); it describes the filter state, which the rate limiter may still be moving toward.
    """

    joint: str
    pi: NDArray[np.float64]
    covariance_pi: NDArray[np.float64]

    @cached_property
    def _mci(self) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        mass, com, inertia = mass_com_inertia_from_pi(self.pi)
        return float(mass), com, inertia

    @property
    def mass(self) -> float:
        """Mass [kg]."""
        return self._mci[0]

    @property
    def com(self) -> NDArray[np.float64]:
        """Centre of mass in the joint frame [m]."""
        return self._mci[1]

    @property
    def inertia(self) -> NDArray[np.float64]:
        """Rotational inertia about the centre of mass, joint-frame axes [kg m^2] (3 x 3)."""
        return self._mci[2]

    @cached_property
    def vector(self) -> NDArray[np.float64]:
        """``[mass, com_x, com_y, com_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` (about the com)."""
        return np.concatenate([[self.mass], self.com, inertia_vector_from_matrix(self.inertia)])

    @cached_property
    def covariance(self) -> NDArray[np.float64]:
        """Covariance of :attr:`vector` (first-order propagation of :attr:`covariance_pi`)."""
        jac = quantity_jacobian(self.pi)
        return jac @ self.covariance_pi @ jac.T

    @property
    def std(self) -> NDArray[np.float64]:
        """Standard deviations of :attr:`vector`."""
        return np.sqrt(np.clip(np.diag(self.covariance), 0.0, None))


@dataclass(frozen=True)
class OnlineEstimate:
    """The result of one ``update``.

    ``t`` is the time of the sample passed to ``update``; the measurement used came from the
    window's middle sample at ``t_measurement`` (``(W-1)/2`` samples earlier, NaN if none).
    ``gated``: the innovation failed eq. 22 and the measurement update was not applied.
    ``skipped``: no measurement update was possible (``reason``, a
    :class:`~physid.online.stream.Skip`, says why: bad sample, dropped samples, window
    refilling); ``calibrating``: the sample went into the bias calibration.
    In all three cases the bodies hold the previous estimate, never NaN.
    """

    t: float
    t_measurement: float
    bodies: tuple[BodyEstimate, ...]
    gated: bool = False
    skipped: bool = False
    calibrating: bool = False
    nis: float = float("nan")  # normalized innovation squared, left side of eq. 22
    reason: Skip | None = None
    # A body failed the consistency test after rounding and was projected onto the consistent
    # set (physid.body.inertia.project_consistent): the emitted estimate is consistent either way.
    projected: bool = False

    def body(self, joint: str) -> BodyEstimate:
        for body in self.bodies:
            if body.joint == joint:
                return body
        raise KeyError(joint)


def window_estimate(
    t: NDArray[np.float64],
    values: NDArray[np.float64],
    pi: NDArray[np.float64],
    start_s: float,
    end_s: float,
) -> dict:
    """A robust summary of one body's streamed estimates over ``start_s <= t <= end_s``.

    ``values`` (N, 10) are the quantities of :data:`QUANTITY_NAMES` and ``pi`` (N, 10) the
    parameters. The summary is the per-quantity median and the spread (1.4826 x the median
    absolute deviation: the std of Gaussian scatter, insensitive to a few outliers), and, as the
    one body to use, the streamed estimate nearest to the medians (the medoid, in spread units):
    an estimate the filter actually emitted, so it is physically consistent. The last sample of
    a run is no summary: it carries whatever the final seconds did (paper E's rate limit makes a
    late transient linger).
    """
    inside = (t >= start_s) & (t <= end_s)
    if not inside.any():
        raise ValueError(f"no estimate in the window [{start_s:g}, {end_s:g}] s")
    window = values[inside]
    median = np.median(window, axis=0)
    spread = 1.4826 * np.median(np.abs(window - median), axis=0)
    scale = np.where(spread > 0, spread, 1.0)
    medoid = int(np.argmin(np.sum(((window - median) / scale) ** 2, axis=1)))
    return {
        "start_s": float(t[inside][0]),
        "end_s": float(t[inside][-1]),
        "samples": int(inside.sum()),
        "median": dict(zip(QUANTITY_NAMES, median.tolist(), strict=True)),
        "spread_std": dict(zip(QUANTITY_NAMES, spread.tolist(), strict=True)),
        "medoid_t": float(t[inside][medoid]),
        "medoid_pi": pi[inside][medoid].tolist(),
    }
