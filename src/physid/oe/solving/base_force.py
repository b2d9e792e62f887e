"""The unmodelled mean force on a floating base, read from the process noise, and the bound it
puts on a mass estimated on the base.

Eq. 16's process noise is white with zero mean. The noise ``w_k`` on the base's linear
velocity (a generalized velocity increment of the free-flyer: it moves the whole robot) is a
momentum change ``M w_k`` the model did not produce, ``M`` the robot's total mass; its mean
over the record, ``F = M mean_k(R_k w_k) / dt`` (world frame, ``R_k`` the base orientation),
is a force the model lacks: soft feet that sink under load and creep, which a rigid point
contact cannot follow, leave one. Under the noise model ``F`` is zero within its standard
error ``M sigma / (sqrt(N) dt)``, ``sigma`` the base's process std away from contact changes:
the floor near a change (``NoiseStd.contact_change_v``) is room for the soft touch-downs'
model error, not noise, and the mean of the kicks it allows is exactly such a force (on the
Go2-like crawl nearly all of it: docs/oe.md, "Sixth round"). A constant
vertical force and a mass on the base are confounded (``m g`` against ``F_z``): whatever
pushed the estimate away from the momentum balance the model could have met with a mass
``|F_z| / g`` different, so that bound, beyond its standard error, is a systematic
uncertainty of that mass which the Laplace (and sandwich) covariance do not see: it is added
to the mass's variance in quadrature (:func:`mass_bound`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

# a mean force beyond this many standard errors of the white-noise model is reported
SIGNIFICANT = 3.0


@dataclass(frozen=True)
class BaseForce:
    """The mean unmodelled force [N] (world frame) on the base, its standard error [N] per
    axis under the noise model, and the mass bound [kg]: ``sqrt(max(F_z^2 - se_z^2, 0)) / g``
    (the part of the vertical force beyond its noise)."""

    force: tuple[float, float, float]
    standard_error: float
    mass_bound: float

    @property
    def significant(self) -> bool:
        return abs(self.force[2]) > SIGNIFICANT * self.standard_error


def mean_base_force(
    model: pin.Model, xs: NDArray, ws: NDArray, w_std: NDArray, dt: float
) -> BaseForce:
    """:class:`BaseForce` of a free-flyer ``model`` (inertias as estimated) from the states
    ``xs`` ``(N + 1, nq + nv)``, the process noise ``ws`` ``(N, 2 nv)`` and its per-node
    standard deviations ``w_std`` ``(N, 2 nv)`` (the smallest per axis is the noise's)."""
    nq, nv = model.nq, model.nv
    n = ws.shape[0]
    total = float(pin.computeTotalMass(model))
    rotations = (pin.Quaternion(q[3:7]).normalized().toRotationMatrix() for q in xs[:n, :nq])
    world = np.array([R @ w for R, w in zip(rotations, ws[:, nv : nv + 3], strict=True)])
    force = total * world.mean(axis=0) / dt
    sigma = float(np.sqrt(np.mean(np.min(w_std[:, nv : nv + 3], axis=0) ** 2)))
    se = total * sigma / (np.sqrt(n) * dt)
    g = float(np.linalg.norm(model.gravity.linear)) or 9.81
    bound = float(np.sqrt(max(force[2] ** 2 - se**2, 0.0))) / g
    return BaseForce(tuple(float(f) for f in force), float(se), bound)
