"""Honest prediction: torques predicted at a recording's own samples, against the raw measurement.

The identification fits filtered and decimated data (paper C §2.3), but a user judges parameters
by how well they predict the torque the robot measured. Here the measured torque is neither
low-passed nor decimated; only the positions are differentiated, by the training filter (the
same :class:`~physid.config.FilterConfig` that ``params.json`` records), and the derivatives are
brought back to the recorded time stamps when the filter needed a uniform grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.config import FilterConfig
from physid.data import Trajectory
from physid.identify.metrics import FitMetrics, fit_metrics
from physid.identify.observations import estimate_states, uniform_trajectory
from physid.model import RobotModel
from physid.regressor import predict_torques


@dataclass(frozen=True)
class RecordingFit:
    """Measured and predicted torque of one recording, at its own samples."""

    name: str
    t: np.ndarray  # (N,) s from the recording's first sample
    tau: np.ndarray  # (N, n) measured, raw [N m or N]
    tau_predicted: np.ndarray  # (N, n)
    dq: np.ndarray  # (N, n) the velocity estimate the prediction used [rad/s or m/s]

    @property
    def metrics(self) -> FitMetrics:
        return fit_metrics(self.tau, self.tau_predicted)


def states_at_samples(
    trajectory: Trajectory, options: FilterConfig
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, velocities and accelerations (N, n) at the recorded time stamps.

    The positions are the recorded ones; the derivatives come from ``options`` (a resolved
    filter). A jittered recording is differentiated on a uniform grid (as in training) and the
    derivatives are interpolated back to the recorded instants.
    """
    dt = float(np.median(np.diff(trajectory.t)))
    info: dict = {}
    if options.method == "classical":
        uniform, resampled = uniform_trajectory(trajectory, dt)
        _, dq, ddq = estimate_states(uniform, options, dt, info)
        if resampled:
            back = lambda x: np.column_stack(  # noqa: E731
                [np.interp(trajectory.t, uniform.t, x[:, k]) for k in range(x.shape[1])]
            )
            dq, ddq = back(dq), back(ddq)
        return trajectory.q, dq, ddq
    _, dq, ddq = estimate_states(trajectory, options, dt, info)
    return trajectory.q, dq, ddq


def predict_recording(
    model: RobotModel,
    trajectory: Trajectory,
    options: FilterConfig,
    theta: np.ndarray,
    name: str = "",
) -> RecordingFit:
    """Predict a recording's raw torques with standard parameters ``theta``."""
    q, dq, ddq = states_at_samples(trajectory, options)
    predicted = predict_torques(model, theta, q, dq, ddq)
    return RecordingFit(
        name or trajectory.source, trajectory.t - trajectory.t[0], trajectory.tau, predicted, dq
    )


def stacked_metrics(fits: list[RecordingFit]) -> FitMetrics:
    """Metrics of several recordings' predictions together (all samples, all joints)."""
    return fit_metrics(
        np.concatenate([f.tau for f in fits]), np.concatenate([f.tau_predicted for f in fits])
    )
