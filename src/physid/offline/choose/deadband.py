"""The automatic Coulomb deadband (as small as the data allow, as large as the data ask for),
and the friction-model term of the parameter uncertainty (:func:`halved_doubled_bands`,
:func:`friction_model_changes`).

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
  that the raw torque does not have, so a band chosen there predicts the raw torque worse.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from physid.errors import InputError
from physid.files.config import FilterConfig
from physid.offline.observe.crossval import least_squares_fit
from physid.offline.observe.folds import taken_apart
from physid.offline.observe.least_squares import least_squares
from physid.offline.observe.metrics import MetricsAccumulator
from physid.offline.observe.observations import joint_term_chunks
from physid.offline.observe.passes import recorded_windows
from physid.offline.observe.reduced import ReducedSystem, ReductionAccumulator
from physid.offline.observe.store import ObservationStore
from physid.offline.observe.windows import Recording, plan_recording
from physid.robot.model import RobotModel
from physid.robot.regressor import base_parameters, predict_torques

DEADBAND_NOISE_STDS = 3.0  # floor of the deadband, in velocity-noise standard deviations
CANDIDATE_FRACTIONS = (0.0, 0.005, 0.01, 0.02, 0.05)  # of each joint's RMS speed
MIN_RELATIVE_GAIN = 1e-3  # residual decrease a wider deadband must bring


@dataclass(frozen=True)
class DeadbandChoice:
    """The chosen per-joint deadband (joint units / s) and how it was chosen."""

    deadband: np.ndarray
    fraction: float
    relative_residuals: dict[float, float]  # fraction -> raw training ||tau - tau_hat||/||tau||
    index: int  # of the chosen candidate in CANDIDATE_FRACTIONS

    def note(self, joint_names: tuple[str, ...]) -> str:
        listed = ", ".join(
            f"{joint} {value:.2g}" for joint, value in zip(joint_names, self.deadband, strict=True)
        )
        tried = ", ".join(f"{f:g}: {100 * r:.3g} %" for f, r in self.relative_residuals.items())
        return (
            f"Coulomb deadband max({DEADBAND_NOISE_STDS:g} x velocity noise std, "
            f"{self.fraction:g} x RMS speed): {listed} (training residual by fraction: {tried})"
        )


def candidate_models(
    model: RobotModel, rms_speed: np.ndarray, velocity_noise_std: np.ndarray
) -> list[RobotModel]:
    """``model`` under each candidate deadband ``max(noise floor, fraction x RMS speed)``.

    Joints with a sigmoid or Stribeck model get none: their model describes the low-speed
    friction itself, and zeroing the Stribeck columns below the band removes the static peak it
    is there to fit (with a band such a model predicts worse than the linear one; without, as
    well as the true parameters)."""
    floor = DEADBAND_NOISE_STDS * np.asarray(velocity_noise_std, float)
    linear = np.array([model.layout.friction_of(j) == "linear" for j in model.joint_names])
    return [
        replace(model, coulomb_deadband=np.where(linear, np.maximum(floor, f * rms_speed), 0.0))
        for f in CANDIDATE_FRACTIONS
    ]


def choose_deadband(
    candidates: list[RobotModel],
    systems: list[ReducedSystem],
    trajectories: list[Recording],
    options: FilterConfig,
) -> DeadbandChoice:
    """Pick the deadband (module docstring) among the ``candidates`` (:func:`candidate_models`),
    given each one's reduced training observations ``systems`` (standard columns: the inertial
    ones, then the candidate's joint terms), by the raw residual of each one's least squares."""
    columns = base_parameters(candidates[0]).independent
    thetas = [least_squares_fit(columns, system.n_standard)(system) for system in systems]
    sums = [MetricsAccumulator(candidates[0].fitted) for _ in candidates]
    for trajectory in trajectories:
        plan = plan_recording(candidates[0], trajectory, options)
        for owned, q, dq, ddq in recorded_windows("deadband", trajectory, plan):
            for total, candidate, theta in zip(sums, candidates, thetas, strict=True):
                total.add(owned.tau, predict_torques(candidate, theta, q, dq, ddq))
    residuals = {
        fraction: total.metrics().relative_error
        for fraction, total in zip(CANDIDATE_FRACTIONS, sums, strict=True)
    }
    best = 0
    for k in range(1, len(CANDIDATE_FRACTIONS)):
        if residuals[CANDIDATE_FRACTIONS[k]] < residuals[CANDIDATE_FRACTIONS[best]] * (
            1.0 - MIN_RELATIVE_GAIN
        ):
            best = k
    deadband = candidates[best].coulomb_deadband
    return DeadbandChoice(deadband, CANDIDATE_FRACTIONS[best], residuals, best)


SENSITIVITY_SCALES = (0.5, 2.0)  # the deadband halved and doubled: the friction-model term


def halved_doubled_bands(model: RobotModel) -> list[np.ndarray]:
    """The chosen Coulomb deadband halved and doubled (:data:`SENSITIVITY_SCALES`), the probes
    of the friction-model term of the parameter uncertainty; none without a band.

    The friction model near zero speed is the least determined part of the linear model (the
    true transition is neither a sign nor a deadband), and its error is not noise: it biases
    friction, armature and, through the correlated columns, inertial estimates, which the
    residual-based (Newey-West) standard deviations do not see; the RMS change of the estimate
    under these probes (:func:`friction_model_changes`, :func:`rms_change`), added in
    quadrature, brings the 3-sigma coverage of the base parameters near its nominal value on a
    simulator whose friction is not physid's (docs/benchmarks.md). Without a deadband there is
    nothing to probe (halving or doubling none is the model itself)."""
    band = model.coulomb_deadband
    if band is None or not np.any(band > 0):
        return []
    return [s * band for s in SENSITIVITY_SCALES]


def friction_model_changes(
    model: RobotModel,
    trajectories: list[Recording],
    options: FilterConfig,
    store: ObservationStore,
    columns: np.ndarray,
    weighting: str,
    theta: np.ndarray,
    bands: list[np.ndarray],
) -> list[np.ndarray | None]:
    """The change (b,) of the least-squares estimate ``theta`` of ``columns`` with the Coulomb
    deadband set to each of ``bands`` (per joint), in their order; None for a band that leaves
    a column unexcited. One pass over the recordings for all of them; ``store`` holds the
    training observations (:mod:`.store`) of ``trajectories``, in order."""
    if not bands:
        return []
    n_inertial = model.layout.n_inertial
    scaled = [replace(model, coulomb_deadband=b) for b in bands]
    total = ReductionAccumulator()  # [inertial | every band's block], taken apart below
    for k, trajectory in enumerate(trajectories):
        blocks_of = joint_term_chunks(model, trajectory, options, scaled)
        for chunk, blocks in zip(store.of_recording(k), blocks_of, strict=True):
            total.add((chunk.W[..., :n_inertial], *blocks), chunk.tau)
    changes: list[np.ndarray | None] = []
    for band_system in taken_apart(total.system(), n_inertial, len(bands)):
        try:
            changes.append(least_squares(band_system, columns, weighting).theta - theta)
        except InputError:  # the widened band leaves a column unexcited (a Stribeck static
            changes.append(None)  # level seen only below ~vs): no estimate to compare
    return changes


def rms_change(changes: list[np.ndarray], size: int) -> np.ndarray:
    """The RMS (size,) of ``changes``; zeros when there are none."""
    if not changes:
        return np.zeros(size)
    return np.sqrt(np.mean(np.square(changes), axis=0))
