"""The automatic Coulomb deadband (as small as the data allow, as large as the data ask for),
and the friction-model term of the parameter uncertainty (:func:`friction_model_std`).

The linear friction model ``fc sign(dq)`` jumps at zero speed. Two things make the jump wrong
near zero, and both are read from the training data, not assumed:

* **velocity noise**: below a few standard deviations of the derivative filter's velocity noise
  (:func:`physid.signal.butterworth.derivative_noise_std`) the sign of the estimated velocity
  is noise, and ``fc sign(noise)`` predicts a friction torque a joint at standstill does not
  have (it holds any torque inside its static friction; 0 is the unbiased guess). This floor
  is ``DEADBAND_NOISE_STDS`` standard deviations per joint.
* **the friction transition**: real friction does not switch in zero time (pre-sliding, the
  Stribeck region, a servo's dither); the torque passes through zero over a band of speeds. A
  deadband a small fraction of each joint's RMS speed captures that, in the linear model.
  The fraction is one of :data:`CANDIDATE_FRACTIONS`, shared by all joints. Each candidate's
  ordinary least squares of the (filtered, decimated) training observations predicts the RAW
  training torques at every sample, as validation will; the lowest residual wins (one
  hyper-parameter against thousands of samples), a larger deadband needing a decrease of more
  than :data:`MIN_RELATIVE_GAIN`. Scoring on the decimated observations instead misleads when
  the decimation is narrow: low-passed sign columns fit a low-passed torque better with a band
  that the raw torque does not have (demo arm, 5 Hz decimation: 0.48 -> 0.41 % decimated, but
  3.14 -> 3.35 % raw).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from physid.config import FilterConfig
from physid.data import Trajectory
from physid.identify.least_squares import least_squares
from physid.identify.observations import Observations, joint_term_observations
from physid.identify.prediction import states_at_samples
from physid.identify.reduced import reduce_observations
from physid.model import RobotModel
from physid.regressor import base_parameters, predict_torques

DEADBAND_NOISE_STDS = 3.0  # floor of the deadband, in velocity-noise standard deviations
CANDIDATE_FRACTIONS = (0.0, 0.005, 0.01, 0.02, 0.05)  # of each joint's RMS speed
MIN_RELATIVE_GAIN = 1e-3  # residual decrease a wider deadband must bring


@dataclass(frozen=True)
class DeadbandChoice:
    """The chosen per-joint deadband (joint units / s) and how it was chosen."""

    deadband: np.ndarray
    fraction: float
    relative_residuals: dict[float, float]  # fraction -> raw training ||tau - tau_hat||/||tau||
    joint_terms: np.ndarray  # (M, n, n_terms) the observations' joint-term block under it

    def note(self, joint_names: tuple[str, ...]) -> str:
        listed = ", ".join(
            f"{joint} {value:.2g}" for joint, value in zip(joint_names, self.deadband, strict=True)
        )
        tried = ", ".join(f"{f:g}: {100 * r:.3g} %" for f, r in self.relative_residuals.items())
        return (
            f"Coulomb deadband max({DEADBAND_NOISE_STDS:g} x velocity noise std, "
            f"{self.fraction:g} x RMS speed): {listed} (training residual by fraction: {tried})"
        )


def _least_squares(W: np.ndarray, tau: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Standard parameters (p,) whose base ``columns`` solve the stacked (M, n, p) observations
    by least squares (columns normalised), the other entries 0. Solving for the base columns
    only matters: a minimum-norm solution over all standard columns puts huge, cancelling
    values on the near-null directions, which RNEA then predicts with round-off (1e25 %)."""
    A = W[..., columns].reshape(-1, len(columns))
    norms = np.linalg.norm(A, axis=0)
    norms[norms == 0.0] = 1.0
    solution, *_ = np.linalg.lstsq(A / norms, tau.reshape(-1), rcond=1e-10)
    theta = np.zeros(W.shape[-1])
    theta[columns] = solution / norms
    return theta


def _raw_relative_residual(
    model: RobotModel, theta: np.ndarray, states: list[tuple], trajectories: list[Trajectory]
) -> float:
    """||tau - tau_hat|| / ||tau|| on the raw training torques at every sample."""
    measured = np.concatenate([t.tau for t in trajectories])
    predicted = np.concatenate([predict_torques(model, theta, *x) for x in states])
    return float(np.linalg.norm(measured - predicted) / max(np.linalg.norm(measured), 1e-300))


def choose_deadband(
    model: RobotModel,
    trajectories: list[Trajectory],
    options: FilterConfig,
    observations: Observations,
    velocity_noise_std: np.ndarray,
) -> DeadbandChoice:
    """Pick the deadband (module docstring) for ``model`` on the training ``observations``
    (built by :func:`physid.identify.observations.observations_of` with ``options``)."""
    floor = DEADBAND_NOISE_STDS * np.asarray(velocity_noise_std, float)
    inertial = observations.W[..., : model.layout.n_inertial]
    columns = base_parameters(model).independent
    bands: list[np.ndarray] = []

    def candidates(rms_speed: np.ndarray) -> list[RobotModel]:
        bands.extend(np.maximum(floor, f * rms_speed) for f in CANDIDATE_FRACTIONS)
        return [replace(model, coulomb_deadband=band) for band in bands]

    blocks = joint_term_observations(model, trajectories, options, candidates)
    candidates_models = [replace(model, coulomb_deadband=band) for band in bands]
    states = [states_at_samples(t, options) for t in trajectories]
    residuals = {}
    for fraction, candidate, block in zip(
        CANDIDATE_FRACTIONS, candidates_models, blocks, strict=True
    ):
        W = np.concatenate([inertial, block], axis=-1)
        theta = _least_squares(W, observations.tau, columns)
        residuals[fraction] = _raw_relative_residual(candidate, theta, states, trajectories)
    best = 0
    for k in range(1, len(CANDIDATE_FRACTIONS)):
        if residuals[CANDIDATE_FRACTIONS[k]] < residuals[CANDIDATE_FRACTIONS[best]] * (
            1.0 - MIN_RELATIVE_GAIN
        ):
            best = k
    return DeadbandChoice(bands[best], CANDIDATE_FRACTIONS[best], residuals, blocks[best])


SENSITIVITY_SCALES = (0.5, 2.0)  # the deadband halved and doubled: the friction-model term


def friction_model_std(
    model: RobotModel,
    trajectories: list[Trajectory],
    options: FilterConfig,
    observations: Observations,
    columns: np.ndarray,
    weighting: str,
    theta: np.ndarray,
) -> np.ndarray:
    """Model-error standard deviation (b,) of the least-squares estimate ``theta`` of
    ``columns``: the RMS change of the estimate when the Coulomb deadband is halved and doubled.

    The friction model near zero speed is the least determined part of the linear model (the
    true transition is neither a sign nor a deadband), and its error is not noise: it biases
    friction, armature and, through the correlated columns, inertial estimates, which the
    residual-based (Newey-West) standard deviations do not see. Measured on the independent
    MuJoCo simulator (tanh Coulomb friction; ``benchmarks/vs_ols.py --coverage-seeds``): the
    3-sigma coverage of the base parameters rises from 0.87 to 0.97 with this term added in
    quadrature. Zero when the model has no deadband.
    """
    band = model.coulomb_deadband
    if band is None or not np.any(band > 0):
        return np.zeros(len(columns))
    inertial = observations.W[..., : model.layout.n_inertial]
    blocks = joint_term_observations(
        model,
        trajectories,
        options,
        lambda _rms: [replace(model, coulomb_deadband=s * band) for s in SENSITIVITY_SCALES],
    )
    changes = []
    for block in blocks:
        system = reduce_observations(np.concatenate([inertial, block], -1), observations.tau)
        changes.append(least_squares(system, columns, weighting).theta - theta)
    return np.sqrt(np.mean(np.square(changes), axis=0))
