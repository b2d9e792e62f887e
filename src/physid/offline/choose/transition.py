"""The joint terms' model error: the Coulomb transitions the user's folds could not tell apart.

The linear friction model switches its Coulomb term at the chosen deadband
(:mod:`.deadband`); a real joint's friction passes through zero over a band of speeds whose shape
no candidate has (a simulator's ``tanh``, pre-sliding, a servo's dither). Among the deadband
candidates, those the folds cannot rule out against the chosen one (their cross-validated error
is not worse by more than the folds' spread, :mod:`.selection`) describe the data as well: the
viscous and Coulomb estimates' change between them is an error of the model, not noise, which
neither the residuals' (Newey-West) nor the time blocks' (jackknife) spread sees, since every
block shares it. Its RMS over those candidates and the chosen band halved and doubled
(:func:`~.deadband.friction_model_changes`), the change of the least-squares estimate, times the
gain with which the prior-weighted estimate follows it (:func:`widened`), is added in
quadrature to the variance of each joint's viscous and Coulomb terms in the consistent fit's
covariance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.offline.choose.deadband import (
    SENSITIVITY_SCALES,
    candidate_models,
    friction_model_changes,
    halved_doubled_bands,
    rms_change,
)
from physid.offline.choose.selection import Choice
from physid.offline.choose.training import TrainingData
from physid.offline.observe.least_squares import LeastSquaresResult
from physid.offline.observe.windows import Recording
from physid.robot.model import RobotModel

WIDENED_TERMS = ("fv", "fc")  # the joint terms whose std the transition's error widens


@dataclass(frozen=True)
class TransitionError:
    """The deadbands probed and the model-error std of the excited base parameters they give."""

    bands: tuple[np.ndarray, ...]  # per joint: the chosen halved and doubled, the undecided
    undecided: int  # how many of them are candidates the folds could not rule out
    std: np.ndarray  # (b,) RMS change of the least-squares estimate over the probes


@dataclass(frozen=True)
class FrictionModelError:
    """The least-squares estimate's changes with the chosen deadband halved and doubled (the
    friction-model term of the base parameters' std; zeros without a band) and the transition
    error of the joint terms (module docstring)."""

    halved_doubled: list[np.ndarray]
    transition: TransitionError


def friction_model_error(
    model: RobotModel,
    choice: Choice | None,
    training: TrainingData,
    trajectories: list[Recording],
    ls: LeastSquaresResult,
) -> FrictionModelError:
    """The friction-model error of the least squares ``ls`` of ``training`` (the observations
    of ``trajectories``) under the deadband ``choice``: every probe (the band halved and
    doubled, the undecided candidates) in one pass over the recordings."""
    undecided = undecided_bands(model, choice, training)
    scaled = halved_doubled_bands(model)
    changes = friction_model_changes(
        model,
        trajectories,
        training.preprocessing.filter,
        training.store,
        ls.columns,
        ls.method,
        ls.theta,
        [*scaled, *undecided],
    )
    size = len(ls.columns)
    if scaled:
        halved_doubled = [c for c in changes[: len(scaled)] if c is not None]
    else:
        halved_doubled = [np.zeros(size) for _ in SENSITIVITY_SCALES]
    probed = [*halved_doubled, *(c for c in changes[len(scaled) :] if c is not None)]
    bands = probes(model, undecided)
    transition = TransitionError(tuple(bands), len(undecided), rms_change(probed, size))
    return FrictionModelError(halved_doubled, transition)


def undecided_bands(
    model: RobotModel, choice: Choice | None, training: TrainingData
) -> list[np.ndarray]:
    """The per-joint deadbands the folds could not rule out against the chosen one: every
    candidate (one fraction of every joint's RMS speed, :func:`~.deadband.candidate_models`)
    whose folds' error is not worse than the chosen one's by more than their spread, and one
    band per joint, each joint's widest candidate that its own torque's folds cannot rule out;
    none without a scored choice."""
    if choice is None or not any(np.isfinite(s.total) for s in choice.scores):
        return []
    rms_speed = np.sqrt(np.mean(np.concatenate([r.dq for r in training.rows]) ** 2, axis=0))
    noise = training.preprocessing.velocity_noise_std
    noise = np.zeros(model.n_joints) if noise is None else noise
    chosen = choice.scores[choice.chosen]
    band = model.coulomb_deadband
    per_joint = np.zeros(model.n_joints) if band is None else np.array(band, float)
    bands = []
    for k, candidate in enumerate(candidate_models(model, rms_speed, noise)):
        if k == choice.chosen or k >= len(choice.scores):
            continue
        score = choice.scores[k]
        if _undecided(score.fold_errors, chosen.fold_errors):
            bands.append(candidate.coulomb_deadband)
        if score.joint_fold_errors is None or chosen.joint_fold_errors is None:
            continue
        for j in range(model.n_joints):
            joint = score.joint_fold_errors[:, j], chosen.joint_fold_errors[:, j]
            if candidate.coulomb_deadband[j] > per_joint[j] and _undecided(*joint):
                per_joint[j] = candidate.coulomb_deadband[j]
    if band is not None and np.any(per_joint != band):
        bands.append(per_joint)
    return bands


def _undecided(candidate: np.ndarray, chosen: np.ndarray) -> bool:
    """Whether the candidate's fold errors are not worse than the chosen one's by more than
    the spread of their paired differences."""
    difference = candidate - chosen
    difference = difference[np.isfinite(difference)]
    if difference.size < 2:
        return False
    return float(np.mean(difference)) - float(np.std(difference, ddof=1)) <= 0.0


def probes(model: RobotModel, undecided: list[np.ndarray]) -> list[np.ndarray]:
    """The chosen deadband halved and doubled, then the ``undecided`` candidates' bands."""
    band = model.coulomb_deadband
    band = np.zeros(model.n_joints) if band is None else np.asarray(band, float)
    return [s * band for s in SENSITIVITY_SCALES] + list(undecided)


def widened(
    covariance: np.ndarray,
    model: RobotModel,
    columns: np.ndarray,
    std: np.ndarray,
    least_squares_variance: np.ndarray,
) -> np.ndarray:
    """``covariance`` (p, p) of the consistent fit's standard parameters with the model error
    ``std`` of the least-squares estimate of the excited base ``columns`` (standard indices)
    added to the variance of every joint's :data:`WIDENED_TERMS` (a joint term's base parameter
    is that term alone). A prior-weighted estimate follows its data's least squares by the
    posterior over the least-squares variance (``least_squares_variance``, per column; the
    linear-Gaussian posterior mean's gain, at most 1): a term the data barely decide, whose
    least-squares estimate any change of the model swings, moves only as far as the prior lets
    it."""
    layout = model.layout
    terms = {
        index
        for joint in model.joint_names
        for term in WIDENED_TERMS
        if (index := layout.joint_term_index(joint, term)) is not None
    }
    out = covariance.copy()
    for k, index in enumerate(columns):
        if int(index) not in terms or not np.isfinite(std[k]) or least_squares_variance[k] <= 0:
            continue
        gain = min(1.0, covariance[index, index] / least_squares_variance[k])
        out[index, index] += (gain * std[k]) ** 2
    return out
