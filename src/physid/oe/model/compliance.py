"""Soft feet: a contact that sinks with its load (MuJoCo's soft contact, in the estimator).

Paper B's contact (eq. 3) is rigid: a foot point in contact does not accelerate (up to the
Baumgarte velocity gain ``Kd``), whatever it carries, so it cannot sink as a soft foot or floor
lets it. The soft contact is MuJoCo's (Todorov 2014: ``J a = a_ref - R f``,
``a_ref = -b v - k d``), one constraint per foot point, in the world's axes::

    Jc a + Jc_dot v + Kd Jc v + Kp e = -C_rows lambda,   e = (0, 0, p_z - h)

``C_rows = C diag(rho, rho, 1)`` per point [1/kg]: the normal compliance ``C`` and the
tangential rows' ``rho C`` (MuJoCo's regularizer R: a point carrying ``lambda`` yields along
it, the normal sinks and the tangential directions creep). MuJoCo's pyramidal cone gives every
edge ``J_n +- mu J_t`` one ``R`` (``engine_core_constraint.c``, ``mj_makeImpedance``: ``Rpy =
2 mu^2 R[0]``), and its four edge rows, all carrying force, are the 3D contact above with the
normal compliance ``Rpy / 4`` and the tangential ``Rpy / (2 mu^2)``: ``rho = 2 / mu^2`` (the
elliptic cone: ``rho = 1 / impratio``, 1 by default). ``diagApprox``, R's scale, is
``body_invweight0`` of the foot body, fixed at the model's reference configuration, so one
``C`` serves every foot and node. ``Kp = 1/tau^2`` and ``Kd = 2/tau`` the critically damped
spring of time constant ``tau`` [s] that returns the point's height ``p_z`` to the ground's
``h`` (MuJoCo's ``solref (tau, 1)``; the tangential rows have no position reference, as
MuJoCo's friction rows). MuJoCo's constraint is on ``Jc a`` without the drift ``Jc_dot v``
(its ``a_ref = -b Jc v - k imp r``); ``drift=False`` drops it here too, at the cost of the
drift's derivatives (a kinematics-derivative pass per contact node). In equilibrium the point
sinks ``C tau^2 lambda_z`` below ``h``: the sag follows the load, and every term depends on the
node's own state, so the Riccati recursion's Markov structure stays. ``h`` is the data's: the
mean height of the feet in contact at the arrival prior's configuration (a flat floor). The
KKT system (eq. 18) gains ``-diag(C_rows)`` in its lower right block::

    [M  Jc^T       ] [ a      ]   [tau - h(q, v)                  ]
    [Jc  -diag(C_r)] [-lambda ] = [-Jc_dot v - Kd Jc v - Kp e     ]

``C = 0`` with no spring (``tau`` infinite) is paper B's rigid contact, ``physid oe``'s default;
with ``contacts.compliance: estimate`` it estimates ``log C``, ``log tau`` and ``log rho`` as
theta's last three entries, each under a log-normal prior (:class:`SoftContact`), so that the
data decide them.

Derivatives (exact): with respect to theta from the compliant KKT matrix ``K_C``; with respect
to (q, v) from Pinocchio's rigid derivatives of the same motion written as a rigid contact
held by a unit position gain about the anchor ``p - Kp e - C_rows lambda`` (``+ Jc_dot v``
without the drift; that rigid problem has this node's ``a`` and ``lambda``): its derivatives
``z_0`` give the partials ``R = -K_0 z_0 - [0; Jc] + [0; Kp P_z Jc]`` (the anchor's term
replaced by the spring's; ``- [0; d(Jc_dot v)]`` without the drift), and the derivatives are
``-K_C^-1 R`` (:func:`physid.oe.model.contact.contact_acceleration_derivatives`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from physid.errors import InputError

# The start and prior median of an estimated soft contact. The compliance: 1 % of the
# robot's inverse mass (nearly rigid); the time constant: 0.1 s, a slow spring. Both priors
# are wide (a factor 20 at one std): the data decide, the prior only bounds.
START_FRACTION = 0.01
START_TIME_CONSTANT = 0.1  # [s]
PRIOR_LOG_STD = 3.0
# The tangential rows' compliance over the normal's: isotropic at the start and prior median
# (MuJoCo's elliptic cone), a factor e at one std (MuJoCo's pyramid with mu 0.5-1: 8-2).
START_RATIO = 1.0
RATIO_LOG_STD = 1.0


@dataclass(frozen=True)
class SoftContact:
    """The contacts' normal compliance ``compliance`` [1/kg] (0: rigid), spring
    ``time_constant`` [s] (``inf``: none) and the tangential rows' compliance over the normal's
    ``tangential_ratio``; ``estimate``: theta estimates the three (these values the start and
    the log-normal priors' medians, ``prior_log_std`` the first two's std in the logarithms,
    ``ratio_log_std`` the ratio's); ``drift``: the constraint carries ``Jc_dot v`` (the points'
    classical acceleration; False: MuJoCo's ``Jc a``)."""

    compliance: float = 0.0
    time_constant: float = float("inf")
    estimate: bool = False
    prior_log_std: float = PRIOR_LOG_STD
    tangential_ratio: float = START_RATIO
    ratio_log_std: float = RATIO_LOG_STD
    drift: bool = True

    def __post_init__(self) -> None:
        if not (np.isfinite(self.compliance) and self.compliance >= 0):
            raise InputError(f"contact compliance must be >= 0 [1/kg], got {self.compliance}")
        if not (self.time_constant > 0):  # inf allowed: no spring
            raise InputError(f"contact time constant must be > 0 [s], got {self.time_constant}")
        if self.estimate and not (self.compliance > 0 and np.isfinite(self.time_constant)):
            raise InputError("an estimated soft contact starts at a compliance > 0, finite tau")
        if not (np.isfinite(self.prior_log_std) and self.prior_log_std > 0):
            raise InputError(f"soft contact prior std must be > 0, got {self.prior_log_std}")
        if not (np.isfinite(self.tangential_ratio) and self.tangential_ratio > 0):
            raise InputError(f"contact tangential ratio must be > 0, got {self.tangential_ratio}")
        if not (np.isfinite(self.ratio_log_std) and self.ratio_log_std > 0):
            raise InputError(f"tangential ratio prior std must be > 0, got {self.ratio_log_std}")

    @property
    def rigid(self) -> bool:
        return self.compliance == 0.0 and not np.isfinite(self.time_constant)

    @classmethod
    def estimated_for_mass(cls, total_mass: float) -> SoftContact:
        """``contacts.compliance: estimate``: estimated, from :data:`START_FRACTION` of the
        inverse of the robot's total mass and :data:`START_TIME_CONSTANT`."""
        return cls(START_FRACTION / float(total_mass), START_TIME_CONSTANT, estimate=True)

    def gains(self) -> tuple[float, float]:
        """``(Kp, Kd)`` of the spring [1/s^2, 1/s]; (0, 0) without one."""
        if not np.isfinite(self.time_constant):
            return 0.0, 0.0
        return 1.0 / self.time_constant**2, 2.0 / self.time_constant

    def row_compliance(self, n_points: int) -> NDArray[np.float64]:
        """``C_rows`` ``(3 n_points,)``: ``C (rho, rho, 1)`` per point, world axes x, y, z."""
        rows = self.compliance * np.array([self.tangential_ratio, self.tangential_ratio, 1.0])
        return np.tile(rows, n_points)

    def tangential_rows(self, n_points: int) -> NDArray[np.float64]:
        """``d C_rows / d log rho`` ``(3 n_points,)``: the tangential rows' compliance."""
        return self.row_compliance(n_points) * np.tile([1.0, 1.0, 0.0], n_points)
