"""Plausible, not only consistent: masses far from the URDF's are named, with what the data show
that drives them.

A physically consistent body can still be the wrong robot: an 11 kg link where the CAD says
1.16 kg, a 72 kg arm where the URDF has 16 kg. A CAD model's masses are rarely off by a factor
of two per body, and its total by a quarter; outside :data:`BODY_MASS_RANGE` (per body) or
:data:`MOVING_MASS_RANGE` (all moving bodies) the result is named in a warning together with
the numbers that can explain it:

- the static torques of the recordings against the URDF's gravity torque (per gravity-loaded
  joint, :func:`physid.offline.checks.suspect.gravity_comparison`): a ratio well above 1 is a tool
  on the flange or a light URDF, which the data do support;
- the estimated base tilt, if any;
- large torque offsets and friction levels (against the joint's RMS torque), which trade with
  first moments on slow or one-way motion.

The warning states what was seen; it does not guess a cause (``suspect`` is reserved for the
data, :mod:`.suspect`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from physid.findings import Finding
from physid.offline.checks.gravity_comparison import gravity_comparison
from physid.offline.checks.torque_checks import SCALE_RANGE
from physid.offline.codes import IMPLAUSIBLE
from physid.offline.fit.joint_prior import JointPrior
from physid.offline.observe.gravity import GravityEstimate
from physid.recordings.streamed import preview
from physid.robot.model import RobotModel

BODY_MASS_RANGE = (0.5, 2.0)  # identified / URDF mass of one body
MOVING_MASS_RANGE = (0.8, 1.25)  # of the total moving mass
LARGE_TERM = 0.5  # an offset or Coulomb level above this share of the joint's RMS torque
_NEGLIGIBLE_BODY = 0.01  # bodies lighter than this share of the URDF's moving mass are skipped
# A moving mass outside this range x the URDF's is no CAD error (a tool the URDF lacks reads in
# the static torques: see static_contradiction) ...
ABSURD_MOVING_MASS = (1.0 / 3.0, 3.0)
# ... where every gravity-loaded joint's static torque reads the URDF's gravity torque within
# the range the torque-scale check accepts
STATIC_AGREES = SCALE_RANGE


def static_torque_ratios(model: RobotModel, recordings: list) -> dict[str, float]:
    """Per gravity-loaded joint, the median over recordings of recorded / URDF static torque."""
    ratios: dict[str, list[float]] = {}
    for recording in recordings:
        comparison = gravity_comparison(model, preview(recording))
        if comparison is None:
            continue
        for joint, scale in zip(comparison.joints, comparison.joint_scales, strict=True):
            ratios.setdefault(joint, []).append(float(scale))
    return {joint: float(np.median(values)) for joint, values in ratios.items()}


def _drivers(
    model: RobotModel,
    theta: np.ndarray,
    joint: JointPrior | None,
    gravity: GravityEstimate | None,
    static_ratios: Callable[[], dict[str, float]],
) -> str:
    parts = []
    ratios = static_ratios()
    if ratios:
        listed = ", ".join(f"{j} {r:.2f}" for j, r in ratios.items())
        parts.append(f"measured / URDF static gravity torque: {listed}")
    if gravity is not None:
        tilt = np.degrees(gravity.tilt_rad)
        parts.append(f"estimated base tilt {tilt[0]:.2f}, {tilt[1]:.2f} deg")
    if joint is not None:
        layout = model.layout
        large = []
        for k, name in enumerate(model.joint_names):
            for term in ("offset", "fc"):
                index = layout.joint_term_index(name, term)
                if index is not None and abs(theta[index]) > LARGE_TERM * joint.torque_rms[k]:
                    large.append(
                        f"{name}.{term} {theta[index]:.3g} (RMS torque {joint.torque_rms[k]:.3g})"
                    )
        if large:
            parts.append("large joint terms: " + ", ".join(large))
    return "; ".join(parts) if parts else "no static-torque, tilt or joint-term evidence found"


def implausible_masses(model: RobotModel, theta: np.ndarray, prior: np.ndarray) -> list[str]:
    """What is implausible about the masses of ``theta`` against the URDF's ``prior`` (module
    docstring): the moving mass outside :data:`MOVING_MASS_RANGE` and every body outside
    :data:`BODY_MASS_RANGE`, as phrases; empty when nothing is."""
    layout = model.layout
    masses, prior_masses = theta[layout.mass_indices], prior[layout.mass_indices]
    total, prior_total = float(masses.sum()), float(prior_masses.sum())
    if prior_total <= 0:
        return []
    bodies = []
    for name, mass, prior_mass in zip(layout.body_joints, masses, prior_masses, strict=True):
        if prior_mass < _NEGLIGIBLE_BODY * prior_total:
            continue
        ratio = mass / prior_mass
        if not BODY_MASS_RANGE[0] <= ratio <= BODY_MASS_RANGE[1]:
            bodies.append(f"{name} {mass:.3g} kg ({ratio:.2g} x the URDF's {prior_mass:.3g} kg)")
    ratio = total / prior_total
    what = []
    if not MOVING_MASS_RANGE[0] <= ratio <= MOVING_MASS_RANGE[1]:
        what.append(f"moving mass {total:.3g} kg is {ratio:.2g} x the URDF's {prior_total:.3g} kg")
    if bodies:
        what.append("body masses outside 0.5-2 x the URDF's: " + ", ".join(bodies))
    return what


def static_contradiction(
    model: RobotModel, theta: np.ndarray, prior: np.ndarray, ratios: dict[str, float]
) -> str | None:
    """A phrase when the moving mass of ``theta`` leaves :data:`ABSURD_MOVING_MASS` x the URDF's
    while the recordings' static torques (``ratios``, :func:`static_torque_ratios`) read the
    URDF's gravity torque within :data:`STATIC_AGREES` on every gravity-loaded joint; None
    otherwise.

    The static torques weigh the bodies' first moments directly: a URDF that is wrong by a
    factor of three reads so in them (a tool it lacks, placeholder masses). When they agree
    with the URDF, a fit that triples its mass is paying with the masses for something else in
    the torques (a command logged in place of a clipped torque can make a fit choose a link of
    two hundred times the URDF's mass while the static torques agree within 20 %).
    """
    layout = model.layout
    total = float(np.sum(theta[layout.mass_indices]))
    prior_total = float(np.sum(prior[layout.mass_indices]))
    if not ratios or prior_total <= 0.0:
        return None
    ratio = total / prior_total
    if ABSURD_MOVING_MASS[0] <= ratio <= ABSURD_MOVING_MASS[1]:
        return None
    values = np.array(list(ratios.values()))
    if not np.all((values >= STATIC_AGREES[0]) & (values <= STATIC_AGREES[1])):
        return None
    return (
        f"its moving mass {total:.3g} kg is {ratio:.2g} x the URDF's {prior_total:.3g} kg while "
        f"the recordings' static torques read {values.min():.2f}-{values.max():.2f} x the "
        "URDF's gravity torque: the masses pay for something else in the torques (a torque "
        "logged before a drive limit clipped it, a contact or a stop, an unmodelled drive effect)"
    )


def plausibility_findings(
    model: RobotModel,
    theta: np.ndarray,
    prior: np.ndarray,
    joint: JointPrior | None,
    gravity: GravityEstimate | None,
    static_ratios: Callable[[], dict[str, float]],
) -> list[Finding]:
    """Findings for body masses and a moving mass far from the URDF's (module docstring);
    ``static_ratios``: :func:`static_torque_ratios` of the recordings on the upright model,
    read only when a warning is given."""
    what = implausible_masses(model, theta, prior)
    if not what:
        return []
    drivers = _drivers(model, theta, joint, gravity, static_ratios)
    layout = model.layout
    ratio = layout.total_mass(theta) / max(layout.total_mass(prior), 1e-300)
    return [
        IMPLAUSIBLE(
            "implausible masses: " + "; ".join(what) + f" (what the data show: {drivers})",
            numbers={"moving_mass_ratio": ratio},
        )
    ]
