"""A contact that yields under its load: the compliant constraint of soft-contact engines.

Paper B's contact (eq. 3) is rigid: the foot point's acceleration is the Baumgarte drift
``a_c = -Kd v_c`` whatever the force. A soft foot (rubber, a soft floor, MuJoCo's contacts)
yields: the point accelerates against the force it carries. The compliant constraint, MuJoCo's
``J a = a_ref - R f`` (Todorov 2014, the regularizer R) and Pinocchio's proximal KKT with
``mu = C``, is::

    [M  Jc^T ] [ a      ]   [tau - h            ]
    [Jc  -C I] [-lambda ] = [-Jc_dot v - Kd Jc v]

so ``lambda = -(Jc M^-1 Jc^T + C I)^-1 (Jc a_free + gamma)``: with ``C = 0`` eqs. 2-3, with
``C > 0`` a foot carrying ``lambda`` moves at ``-C lambda`` against it (isotropic: the normal
sinks, the tangential directions creep). ``C`` [1/kg = m/s^2 per N] is one number for all
feet, theta's last entry as ``log C`` with a log-normal prior when estimated
(:class:`ContactCompliance`), so that the data decide it; ``C = 0`` (a fixed value) is the
rigid contact of paper B.

Derivatives (exact): with respect to theta and C from the compliant KKT matrix ``K_C``
(``d a / d C`` is the top of ``K_C^-1 [0; lambda]``); with respect to (q, v) from Pinocchio's
rigid derivatives of the same motion written as a rigid contact with a Baumgarte position gain
``Kp = 1`` about the anchor ``p(q) - C lambda``: that rigid problem has this node's (a,
lambda), its derivatives ``z_0`` hold the partials ``R = -K_0 z_0 - [0; Jc]`` (the anchor's
term taken out), and the compliant derivatives are ``-K_C^-1 R``
(:func:`physid.oe.model.contact.contact_acceleration_derivatives`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.errors import InputError

# The start and prior median as a fraction of the robot's inverse total mass: a foot that
# yields 1 % of what a free robot would accelerate under the same force (nearly rigid).
START_FRACTION = 0.01
PRIOR_LOG_STD = 3.0  # a factor 20 at one std: the data decide, the prior only bounds


@dataclass(frozen=True)
class ContactCompliance:
    """An estimated contact compliance: ``start`` [1/kg] is the start and the log-normal
    prior's median, ``prior_log_std`` its std in ``log C``."""

    start: float
    prior_log_std: float = PRIOR_LOG_STD

    def __post_init__(self) -> None:
        if not (np.isfinite(self.start) and self.start > 0):
            raise InputError(f"contact compliance start must be > 0 [1/kg], got {self.start}")
        if not (np.isfinite(self.prior_log_std) and self.prior_log_std > 0):
            raise InputError(f"contact compliance prior std must be > 0, got {self.prior_log_std}")

    @classmethod
    def for_mass(cls, total_mass: float) -> ContactCompliance:
        """The default: :data:`START_FRACTION` of the inverse of the robot's total mass."""
        return cls(START_FRACTION / float(total_mass))


def check_compliance(value: float) -> float:
    """A fixed compliance [1/kg]: finite and >= 0 (0: rigid)."""
    if not (np.isfinite(value) and value >= 0.0):
        raise InputError(f"contact compliance must be >= 0 [1/kg], got {value!r}")
    return float(value)
