"""What the fit itself shows beside the numbers: parameters held at a bound of the consistent
fit, joints whose torque the identified model misses badly, a held-out joint moved far faster
than in training, a Coulomb level least squares puts below zero, bodies on a raised margin.

All are read from the result, not re-estimated. A value pinned at its bound (a viscous
coefficient of 3e-9 N m s/rad) is where the non-negativity constraint of the consistent fit
stopped the data, so its standard deviation does not describe it; a joint predicted with a
relative error of tens of per cent has dynamics the model does not have (a missing friction
shape, a cable, a torque-sensor problem), and a reader of the overall error, a few per cent,
would not see it.
"""

from __future__ import annotations

import numpy as np

from physid.findings import Finding
from physid.offline.codes import (
    AT_NON_NEGATIVITY,
    FASTER_HELD_OUT,
    HELD_OUT_JOINT,
    MISSED_JOINT,
    NEGATIVE_COULOMB,
    RAISED_MARGIN,
)
from physid.offline.fit.consistent import default_margin, parameter_scales
from physid.offline.observe.prediction import RecordingFit
from physid.offline.result import IdentificationResult
from physid.recordings.glitches import position_noise
from physid.robot.model import is_revolute

# The joint and motor terms the consistent fit constrains to be >= 0
# (physid.offline.fit.consistent; tests/test_report_flags.py keeps the two lists equal).
NON_NEGATIVE_TERMS = ("fv", "fc", "fs", "phi1", "Ia", "Iam", "fvm", "fcm")
AT_BOUND_RELATIVE = 1e-6  # of the parameter's typical scale (1 N m, 1 N m s/rad, 0.01 kg m^2)
MISSED_JOINT_ERROR = 0.25  # relative error of one joint's torque above which the report warns
MARGIN_RAISED = 10.0  # a configured consistency margin this many times the default is the user's


def parameters_at_bound(result: IdentificationResult) -> set[int]:
    """Indices of standard parameters held at 0 by the consistent fit's ``>= 0`` constraint (not
    those held at their prior, a still joint's: the warning that says so names them, and one
    parameter is not said to be held both ways)."""
    model, theta = result.model, result.theta
    if theta is None:
        return set()
    prior = result.prior if result.prior is not None else model.prior_parameters()
    scales = parameter_scales(model, prior)
    held = set() if result.joint_prior is None else set(np.flatnonzero(result.joint_prior.held))
    return {
        index
        for index, name in enumerate(model.layout.names)
        if name.rsplit(".", 1)[-1] in NON_NEGATIVE_TERMS
        and theta[index] <= AT_BOUND_RELATIVE * scales[index]
        and index not in held
    }


# A joint above MISSED_JOINT_ERROR is not missed when its residual is within this factor of its
# torque's own noise: there is nothing more for a model to explain (a wrist joint whose torque
# is all sensor noise would read a relative error of 100 %).
AT_NOISE_FACTOR = 1.5


def torque_noise(fits: tuple[RecordingFit, ...] | list[RecordingFit]) -> np.ndarray | None:
    """(n,) the recorded torques' noise std over ``fits``, from their fourth differences
    (:func:`~physid.recordings.glitches.position_noise`: a smooth torque adds ``(omega dt)^4`` of
    its amplitude there); None without samples. Joints without torque read NaN."""
    power, rows = 0.0, 0
    for fit in fits:
        tau = np.asarray(fit.tau, float)
        if len(tau) < 9:
            continue
        noise = position_noise(np.nan_to_num(tau), order=4)
        noise[~np.all(np.isfinite(tau), axis=0)] = np.nan
        power, rows = power + len(tau) * noise**2, rows + len(tau)
    return None if rows == 0 else np.sqrt(power / rows)


def missed_joints(result: IdentificationResult, *, training: bool = False) -> dict[str, float]:
    """Joints whose torque is predicted with a relative error above :data:`MISSED_JOINT_ERROR`,
    on the held-out recordings when there are some (``training``: always the training ones),
    by more than their torque's noise (:data:`AT_NOISE_FACTOR`)."""
    held_out = result.validation is not None and not training
    metrics = result.validation if held_out else result.train
    if metrics is None:
        return {}
    errors = np.asarray(metrics.relative_error_per_joint, float)
    noise = torque_noise(result.validation_fits if held_out else result.train_fits)
    beyond_noise = (
        np.ones(len(errors), dtype=bool)
        if noise is None
        else ~(np.asarray(metrics.rmse, float) <= AT_NOISE_FACTOR * noise)
    )
    return {
        joint: float(error)
        for joint, error, beyond in zip(result.model.joint_names, errors, beyond_noise, strict=True)
        if np.isfinite(error) and error > MISSED_JOINT_ERROR and beyond
    }


# A held-out joint faster than in training by this factor (95th percentile of |dq|) was fitted
# on speeds the held-out runs leave: its friction is extrapolated (friction fitted on a creep
# can be tens of times the truth), which is not "dynamics not in the model".
FASTER_THAN_TRAINING = 3.0
SPEED_PERCENTILE = 95.0


def faster_than_training(result: IdentificationResult) -> dict[str, tuple[float, float]]:
    """Joints whose held-out speed (the :data:`SPEED_PERCENTILE` of |dq| over the held-out
    recordings) is above :data:`FASTER_THAN_TRAINING` x their training speed: ``{joint:
    (training, held-out)}`` [rad/s or m/s]; empty without held-out recordings."""

    def speeds(fits) -> np.ndarray | None:  # noqa: ANN001
        rows = [np.abs(np.asarray(fit.dq, float)) for fit in fits if len(fit.dq)]
        return np.percentile(np.concatenate(rows), SPEED_PERCENTILE, axis=0) if rows else None

    if result.validation is None:
        return {}
    trained, held = speeds(result.train_fits), speeds(result.validation_fits)
    if trained is None or held is None:
        return {}
    return {
        joint: (float(a), float(b))
        for joint, a, b in zip(result.model.joint_names, trained, held, strict=True)
        if np.isfinite(b) and b > FASTER_THAN_TRAINING * a
    }


# Least squares' Coulomb level this many (Newey-West) standard deviations below zero is no
# noise: the torque pushes with the motion at every reversal. Sound joints of real
# identifications read above -0.6 sigma, a wrist torque whose sign flipped -3.4 to -17 sigma
# (gravity-loaded joints are named by the suspect check instead).
NEGATIVE_COULOMB_SIGMA = 3.0
# ... and this share of the joint's RMS torque: a flipped sign turns the joint's real Coulomb
# level (a few % of its torque) negative, while a drag the model lacks (velocity-squared
# damping, fitted by viscous and Coulomb terms) can leave a few sigma of a negligible share of
# the torque (0.02 %): nothing to check the signs for.
NEGATIVE_COULOMB_SHARE = 0.01


def coulomb_below_zero(result: IdentificationResult) -> dict[str, tuple[float, float]]:
    """Joints whose Coulomb friction the consistent fit holds at 0 while (unconstrained) least
    squares puts it more than :data:`NEGATIVE_COULOMB_SIGMA` standard deviations and
    :data:`NEGATIVE_COULOMB_SHARE` of the joint's RMS torque below zero:
    ``{joint: (least-squares value, its std)}`` [N m or N]."""
    model, ls = result.model, result.least_squares
    # data that already look wrong (a gravity-loaded joint's flipped sign is named there) make
    # a garbled fit whose negative Coulomb level may sit on another joint
    if result.theta is None or ls is None or result.suspect:
        return {}
    bound, names = parameters_at_bound(result), model.layout.names
    rms = _torque_rms(result.train_fits)
    found = {}
    for k, joint in enumerate(model.joint_names):
        name = f"{joint}.fc"
        if name not in names or names.index(name) not in bound:
            continue
        column = np.flatnonzero(ls.columns == names.index(name))
        base = np.flatnonzero(result.base.independent == names.index(name))
        if column.size == 0 or base.size == 0:
            continue
        # the Newey-West std: the white-noise one is several times too small on real residuals
        value, std = float(ls.theta[column[0]]), float(result.base_std_robust[base[0]])
        small = rms is not None and -value < NEGATIVE_COULOMB_SHARE * rms[k]
        if np.isfinite(std) and value < -NEGATIVE_COULOMB_SIGMA * std and not small:
            found[joint] = (value, std)
    return found


def _torque_rms(fits: tuple[RecordingFit, ...]) -> np.ndarray | None:
    """(n,) RMS of the recorded torque over ``fits`` (NaN for joints without one); None without
    samples."""
    rows = [np.asarray(fit.tau, float) for fit in fits if len(fit.tau)]
    return np.sqrt(np.mean(np.concatenate(rows) ** 2, axis=0)) if rows else None


def fit_findings(result: IdentificationResult) -> list[Finding]:
    """The findings the fit itself shows (module docstring)."""
    return [
        *_missed_findings(result),
        *_negative_coulomb_findings(result),
        *_bound_findings(result),
    ]


def _missed_findings(result: IdentificationResult) -> list[Finding]:
    """Joints the model misses: held out faster than in training (ID603), held out only
    (ID611: a motion the training does not determine), or in training too (ID602: dynamics the
    model does not have)."""
    findings = []
    model = result.model
    missed = missed_joints(result)
    faster = {j: speeds for j, speeds in faster_than_training(result).items() if j in missed}
    for joint, (trained, held) in faster.items():
        unit = "rad/s" if is_revolute(model, joint) else "m/s"
        error = missed.pop(joint)
        findings.append(
            FASTER_HELD_OUT(
                f"{joint}: held-out torque error {100 * error:.0f} %, and it moves "
                f"{held / max(trained, 1e-300):.3g} x faster there than in training ({held:.3g} "
                f"against {trained:.3g} {unit}, {SPEED_PERCENTILE:.0f}th percentile of |dq|): its "
                "friction and armature were fitted on speeds the held-out runs leave (a joint that "
                "barely moved in training: its creep taken for friction), not on the motion they "
                "are judged on; identify on a recording that moves it as fast",
                numbers={
                    "relative_error": error,
                    "speed_training": trained,
                    "speed_held_out": held,
                },
                names=(joint,),
            )
        )
    # a joint missed held out but fitted in training did not generalise: the training motion
    # does not determine what the held-out one needs (a short log), no dynamics are missing
    fitted = missed_joints(result, training=True)
    unseen = {j: e for j, e in missed.items() if j not in fitted}
    missed = {j: e for j, e in missed.items() if j in fitted}
    if unseen:
        train_errors = dict(
            zip(model.joint_names, result.train.relative_error_per_joint, strict=True)
        )
        listed = ", ".join(
            f"{joint} {100 * error:.0f} % (training {100 * train_errors[joint]:.0f} %)"
            for joint, error in unseen.items()
        )
        findings.append(
            HELD_OUT_JOINT(
                f"these joints' held-out torque is predicted badly although the training torque is "
                f"not (relative error per joint above {100 * MISSED_JOINT_ERROR:.0f} %): {listed}; "
                "the training recordings do not determine what the held-out motion needs there: "
                "record longer or richer motion of these joints",
                numbers={f"{j}.relative_error": e for j, e in unseen.items()},
                names=tuple(unseen),
            )
        )
    if missed:
        held_out = "held-out" if result.validation is not None else "training"
        listed = ", ".join(f"{joint} {100 * error:.0f} %" for joint, error in missed.items())
        findings.append(
            MISSED_JOINT(
                f"the model misses these joints' {held_out} torque badly (relative error per joint "
                f"above {100 * MISSED_JOINT_ERROR:.0f} %): {listed}; their dynamics are not in the "
                "model (friction shape, cable, sensor): do not trust their joint terms, and see "
                "their torque and friction panels",
                numbers={f"{joint}.relative_error": error for joint, error in missed.items()},
                names=tuple(missed),
            )
        )
    return findings


def _negative_coulomb_findings(result: IdentificationResult) -> list[Finding]:
    findings = []
    for joint, (value, std) in coulomb_below_zero(result).items():
        unit = "N" if not is_revolute(result.model, joint) else "N m"
        findings.append(
            NEGATIVE_COULOMB(
                f"least squares puts the Coulomb friction of {joint} below zero ({value:.3g} +- "
                f"{std:.2g} {unit}; held at 0 by the consistent fit): its measured torque pushes "
                "with the motion at every reversal, which no friction does; check this joint's "
                "torque and position signs (one of them flipped), or whether its drive compensates "
                "its own friction",
                numbers={"value": value, "std": std},
                names=(f"{joint}.fc",),
            )
        )
    return findings


def _bound_findings(result: IdentificationResult) -> list[Finding]:
    """Terms held at 0 by the non-negativity constraint, bodies on a raised margin."""
    findings = []
    model = result.model
    bound = [model.layout.names[index] for index in sorted(parameters_at_bound(result))]
    if bound:
        findings.append(
            AT_NON_NEGATIVITY(
                "held at 0 by the consistent fit's non-negativity constraint (the constraint is "
                f"active: their std does not describe them): {', '.join(bound)}",
                names=bound,
            )
        )
    held = bodies_at_a_raised_margin(result)
    if held:
        margin = result.consistent.margin
        findings.append(
            RAISED_MARGIN(
                f"the consistency margin {margin:g} kg m^2 (raised in the config above the "
                f"default {default_margin(model, result.prior):.2g}) holds these bodies' "
                f"pseudo-inertia at its bound: {', '.join(held)}; their masses and inertias are "
                "the margin's, not the data's",
                numbers={"margin_kg_m2": margin},
                names=held,
            )
        )
    return findings


def bodies_at_a_raised_margin(result: IdentificationResult) -> list[str]:
    """The bodies whose pseudo-inertia sits on a consistency margin the config raised above
    :func:`~physid.offline.fit.consistent.default_margin` (a raised margin can hold every link's
    inertia far above the URDF's, and the held-out error rises with nothing said why); none at
    the default margin, where a point-mass link may rest on it by design."""
    fit, prior = result.consistent, result.prior
    if result.theta is None or prior is None or not fit.bodies:
        return []
    if fit.margin <= MARGIN_RAISED * default_margin(result.model, prior):
        return []
    return [
        body
        for body, report in fit.bodies.items()
        if report.min_eigenvalue <= fit.margin * (1.0 + 1e-3)
    ]
