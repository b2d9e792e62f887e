"""Honest prediction: torques predicted at a recording's own samples, against the raw measurement.

The identification fits filtered and decimated data (paper C §2.3), but a user judges parameters
by how well they predict the torque the robot measured. Here the measured torque is neither
low-passed nor decimated; only the positions are differentiated, by the training filter (the
same :class:`~physid.files.config.FilterConfig` that ``params.json`` records), and the derivatives
are brought back to the recorded time stamps when the filter needed a uniform grid. Long recordings
are predicted window by window (:func:`physid.offline.observe.passes.recorded_windows`): the
metrics cover
every sample, the arrays kept for figures every k-th one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.files.config import FilterConfig
from physid.offline.observe.metrics import FitMetrics, MetricsAccumulator
from physid.offline.observe.passes import recorded_windows
from physid.offline.observe.windows import Recording, plan_recording
from physid.robot.model import RobotModel
from physid.robot.regressor import predict_torques

DISPLAY_SAMPLES = 200_000  # a longer recording keeps every k-th sample for its figures


@dataclass(frozen=True)
class RecordingFit:
    """Measured and predicted torque of one recording, at its own samples (every
    ``display_every``-th sample of a long recording; the metrics cover all of them)."""

    name: str
    t: np.ndarray  # (N,) s from the recording's first sample
    tau: np.ndarray  # (N, n) measured, raw [N m or N]; NaN for joints not fitted
    tau_predicted: np.ndarray  # (N, n)
    dq: np.ndarray  # (N, n) the velocity estimate the prediction used [rad/s or m/s]
    sums: MetricsAccumulator | None = None  # over every sample; None: from the arrays
    display_every: int = 1

    @property
    def metrics(self) -> FitMetrics:
        if self.sums is not None:
            return self.sums.metrics()
        return _sums(self).metrics()


def _sums(fit: RecordingFit) -> MetricsAccumulator:
    if fit.sums is not None:
        return fit.sums
    sums = MetricsAccumulator()
    sums.add(fit.tau, fit.tau_predicted)
    return sums


def predict_recording(
    model: RobotModel,
    trajectory: Recording,
    options: FilterConfig,
    theta: np.ndarray,
    name: str = "",
) -> RecordingFit:
    """Predict a recording's raw torques with standard parameters ``theta``."""
    plan = plan_recording(model, trajectory, options)
    every = int(np.ceil(trajectory.n_samples / DISPLAY_SAMPLES))
    sums = MetricsAccumulator(model.fitted)
    parts: list[tuple[np.ndarray, ...]] = []
    start = 0
    for owned, q, dq, ddq in recorded_windows("prediction", trajectory, plan):
        predicted = predict_torques(model, theta, q, dq, ddq)
        sums.add(owned.tau, predicted)
        keep = np.flatnonzero((start + np.arange(owned.n_samples)) % every == 0)
        measured = np.where(model.fitted, owned.tau[keep], np.nan)  # not logged: not drawn
        parts.append((owned.t[keep], measured, predicted[keep], dq[keep]))
        start += owned.n_samples
    t, tau, predicted, dq = (np.concatenate(column) for column in zip(*parts, strict=True))
    return RecordingFit(
        name or trajectory.source,
        t - trajectory.t[0],
        tau,
        predicted,
        dq,
        sums,
        every,
    )


def stacked_metrics(fits: list[RecordingFit]) -> FitMetrics:
    """Metrics of several recordings' predictions together (all samples, all joints)."""
    total = MetricsAccumulator()
    for fit in fits:
        total.merge(_sums(fit))
    return total.metrics()


def residual_correlation_time(fits: list[RecordingFit], joint_names: tuple[str, ...]) -> dict:
    """Per joint, the integrated correlation time [s] of the raw-torque residual: ``(r - 1) / 2``
    sample periods, ``r`` the ratio of its long-run variance to its variance, by batch means
    (``sqrt(N)`` batches of ``sqrt(N)`` samples; Flegal & Jones, Ann. Statist. 2010), pooled over
    the recordings by their sample counts; 0 for white residuals. The online filter counts a
    measurement of such a residual as ``1 / (1 + 2 tau / dt)`` of an independent one
    (``physid online``): the UR10e's misfit stays correlated for 0.1 s (ratio 2-20 at 100 Hz)."""
    times: dict[str, list[tuple[float, int]]] = {joint: [] for joint in joint_names}
    for fit in fits:
        if len(fit.t) < 4:
            continue
        period = float(np.median(np.diff(fit.t)))
        for j, joint in enumerate(joint_names):
            e = fit.tau[:, j] - fit.tau_predicted[:, j]
            e = e[np.isfinite(e)]
            size = int(np.sqrt(len(e)))
            batches = len(e) // max(size, 1)
            variance = np.var(e, ddof=1) if len(e) > 1 else 0.0
            if size < 2 or batches < 2 or not variance > 0:
                continue
            means = e[: batches * size].reshape(batches, size).mean(axis=1)
            ratio = size * np.var(means, ddof=1) / variance
            times[joint].append((max(ratio - 1.0, 0.0) / 2.0 * period, len(e)))
    return {
        joint: float(np.average([t for t, _ in pairs], weights=[n for _, n in pairs]))
        for joint, pairs in times.items()
        if pairs
    }


# A validation whose error a single factor on the prediction mostly removes is a torque scale
# (a gain or unit) that differs from the identification's recordings, not a model that misses
SCALE_OFF = 0.1  # |scale - 1| beyond this ...
SCALE_EXPLAINS = 0.5  # ... and the scaled prediction's error below this share of the error


def torque_scale_warning(fits: list[RecordingFit]) -> str | None:
    """One line when the measured torque of ``fits`` reads a factor ``s`` of the prediction
    (least squares over every joint and kept sample, ``s = <tau, hat> / <hat, hat>``) off by
    more than :data:`SCALE_OFF`, and ``s`` times the prediction leaves less than
    :data:`SCALE_EXPLAINS` of the error; None otherwise. A params.json validated on currents
    times another gain (the KUKA LWR4+ file 1 with its torques x1.25: 20.4 % where 2.7 % is
    its error) got the error and no reason."""
    measured = np.concatenate([fit.tau.ravel() for fit in fits]) if fits else np.zeros(0)
    predicted = np.concatenate([fit.tau_predicted.ravel() for fit in fits]) if fits else measured
    rows = np.isfinite(measured) & np.isfinite(predicted)
    measured, predicted = measured[rows], predicted[rows]
    energy, power = float(measured @ measured), float(predicted @ predicted)
    if energy <= 0.0 or power <= 0.0:
        return None
    scale = float(measured @ predicted) / power
    error = float(np.linalg.norm(measured - predicted)) / np.sqrt(energy)
    scaled = float(np.linalg.norm(measured - scale * predicted)) / np.sqrt(energy)
    if abs(scale - 1.0) <= SCALE_OFF or scaled >= SCALE_EXPLAINS * error:
        return None
    return (
        f"the measured torque reads {scale:.3g} x the prediction (least squares over every "
        f"joint and sample); scaled by that factor the error would be {100 * scaled:.3g} % "
        f"instead of {100 * error:.3g} %: a torque gain or unit that differs from the "
        "identification's recordings (tau = gain x current)?"
    )
