"""What the report points out beside the numbers: parameters held at a bound of the consistent
fit, and joints whose torque the identified model misses badly.

Both are read from the result, not re-estimated. A value pinned at its bound (a viscous
coefficient of 3e-9 N m s/rad) is where the non-negativity constraint of the consistent fit
stopped the data, so its standard deviation does not describe it; a joint predicted with a
relative error of tens of per cent (KUKA lwr_6_joint: 84 % held out) has dynamics the model
does not have (a missing friction shape, a cable, a torque-sensor problem), and a reader of the
overall error (2.6 % there) would not see it.
"""

from __future__ import annotations

import numpy as np

from physid.offline.consistent import parameter_scales
from physid.offline.pipeline import IdentificationResult

# The joint and motor terms the consistent fit constrains to be >= 0
# (physid.offline.consistent; tests/test_report_flags.py keeps the two lists equal).
NON_NEGATIVE_TERMS = ("fv", "fc", "fs", "phi1", "Ia", "Iam", "fvm", "fcm")
AT_BOUND_RELATIVE = 1e-6  # of the parameter's typical scale (1 N m, 1 N m s/rad, 0.01 kg m^2)
MISSED_JOINT_ERROR = 0.25  # relative error of one joint's torque above which the report warns


def parameters_at_bound(result: IdentificationResult) -> set[int]:
    """Indices of standard parameters held at 0 by the consistent fit's ``>= 0`` constraint."""
    model, theta = result.model, result.theta
    if theta is None:
        return set()
    prior = result.prior if result.prior is not None else model.prior_parameters()
    scales = parameter_scales(model, prior)
    return {
        index
        for index, name in enumerate(model.layout.names)
        if name.rsplit(".", 1)[-1] in NON_NEGATIVE_TERMS
        and theta[index] <= AT_BOUND_RELATIVE * scales[index]
    }


def missed_joints(result: IdentificationResult) -> dict[str, float]:
    """Joints whose torque is predicted with a relative error above :data:`MISSED_JOINT_ERROR`,
    on the held-out recordings when there are some, else on the training ones."""
    metrics = result.validation if result.validation is not None else result.train
    if metrics is None:
        return {}
    errors = np.asarray(metrics.relative_error_per_joint, float)
    return {
        joint: float(error)
        for joint, error in zip(result.model.joint_names, errors, strict=True)
        if np.isfinite(error) and error > MISSED_JOINT_ERROR
    }


def report_warnings(result: IdentificationResult) -> list[str]:
    """The report's own warnings (params.json ``fit.warnings``, the HTML and the CLI)."""
    warnings = []
    missed = missed_joints(result)
    if missed:
        held_out = "held-out" if result.validation is not None else "training"
        listed = ", ".join(f"{joint} {100 * error:.0f} %" for joint, error in missed.items())
        warnings.append(
            f"the model misses these joints' {held_out} torque badly (relative error per joint "
            f"above {100 * MISSED_JOINT_ERROR:.0f} %): {listed}; their dynamics are not in the "
            "model (friction shape, cable, sensor): do not trust their joint terms, and see "
            "their torque and friction panels"
        )
    bound = sorted(parameters_at_bound(result))
    if bound:
        names = ", ".join(result.model.layout.names[index] for index in bound)
        warnings.append(
            "held at 0 by the consistent fit's non-negativity constraint (the constraint is "
            f"active: their std does not describe them): {names}"
        )
    return warnings
