"""Stage 5b: plausible masses where the data leave them undecided (issue 72's rule).

Where the residuals are mostly the model's misfit, the fit with the default prior is the
plausibility choice's conservative candidate (:func:`~physid.offline.choose.against_prior.
plausible_prior`): a tighter body prior is not taken for a fold score the folds cannot show.
It is taken where the data do not decide against it: every body's mass and the moving mass of
the plausible refit within :data:`~physid.offline.choose.against_prior.UNDECIDED_STD` of their
posterior std (stage 5's, of the default prior's fit) from where the data put them. Then the
prior decides the masses, and the uncertainty is quantified again for the refit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from physid.files.config import IdentifyConfig
from physid.offline.fit.uncertainty import BodyUncertainty
from physid.offline.stages.base_fit import BaseFit
from physid.offline.stages.consistent_fit import Consistent
from physid.offline.stages.prepare import Prepared
from physid.offline.stages.quantify import Quantified, quantify
from physid.robot.model import RobotModel

Note = Callable[[str], None]


def settle_undecided(
    prepared: Prepared,
    base_fit: BaseFit,
    consistent: Consistent,
    quantified: Quantified,
    config: IdentifyConfig,
    note: Note = lambda _message: None,
) -> tuple[Consistent, Quantified]:
    """Stage 5b (module docstring): the consistent fit and its uncertainty, with the plausible
    refit the misfit rule left pending taken where the data leave the masses undecided."""
    check = consistent.check
    bodies = quantified.uncertainty.bodies
    if check is None or not check.refit_pending or consistent.fit.theta is None or not bodies:
        return consistent, quantified
    refit = consistent.fits.theta(consistent.fits.system, check.scale, check.refit_scale)
    if refit is None:
        return consistent, quantified
    shift = mass_shift_std(
        prepared.model,
        consistent.fit.theta,
        refit,
        bodies,
        quantified.uncertainty.moving_mass_std,
    )
    weighed = check.weighed(shift)
    settled = consistent.with_check(weighed)
    if weighed.body_scale == consistent.body_scale:
        return settled, quantified  # the same fit; only the finding's numbers changed
    note("uncertainty of the plausible refit")
    return settled, quantify(prepared, base_fit, settled, config, note)


def mass_shift_std(
    model: RobotModel,
    theta: np.ndarray,
    other: np.ndarray,
    bodies: dict[str, BodyUncertainty],
    moving_mass_std: float,
) -> float:
    """The largest change of a body's mass, or of the moving mass, from the standard parameters
    ``theta`` to ``other``, in ``theta``'s posterior std (``bodies``, ``moving_mass_std``)."""
    layout = model.layout
    change = (np.asarray(other) - np.asarray(theta))[layout.mass_indices]
    by_body = dict(zip(layout.body_joints, change, strict=True))
    shifts = [abs(by_body[joint]) / body.mass for joint, body in bodies.items() if body.mass > 0.0]
    if moving_mass_std > 0.0:
        shifts.append(abs(float(change.sum())) / moving_mass_std)
    return float(max(shifts, default=np.inf))
