"""How late the measured torque is against the motion (issue 26 item 4: a constant delay between
commands or torque and motion, reported by identify).

If the logged torque is the model's torque ``d`` seconds late, ``tau(t) = y(t - d)`` with
``y = W theta``, then to first order ``tau = W theta - d dy/dt``. Read from the residual of a fit
that ignored it, ``d`` would be biased toward zero: the parameters absorb the part of
``-d dy/dt`` that lies in the regressor's span (measured: 4.5 ms read for 8 ms on the MJCF test
arm). So the delay is fitted jointly with the base parameters: least squares of the torque on
``[W_base, -dy/dt]``, with ``dy/dt`` recomputed from the latest parameters (two passes from the
weighted least squares of the pipeline), over every joint and sample of the filtered, decimated
observations as fitted (filter and decimation act alike on torque and regressor, so they keep a
delay between them), weighted per joint as the fit. Its standard deviation is the least-squares
one times the square root of the residuals' serial-correlation inflation (the Newey-West factor
of the fit). Config ``estimation.torque_delay`` compensates it (:func:`compensated`: each
logged torque paired with the motion that much earlier): with ``auto`` (the default) when
blocked cross-validation on the training data supports it (:mod:`.delay_choice`), or by a
given value (:func:`.pipeline.identify`);
``report`` only reports it. ``physid simfit`` estimates and compensates one for simulation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.recordings.streamed import RecordingFile
from physid.recordings.trajectory import Trajectory, interpolated, rows_with_motion_earlier

SIGNIFICANT_STDS = 3.0
# The longest delay compensated automatically [s]. Drives and loggers delay a torque by a few
# control periods (our real arms: TX40 0.86 ms, xMate7p 6.6, DFKI pendulum 8.4, UR10e 9.5,
# KUKA LWR4+ 16 ms estimated); a longer "delay" that the folds still prefer stands in for
# dynamics the model lacks: the UR10e with joint_terms: [] (no friction) had 321 ms compensated,
# the viscous friction's phase read as a delay, 32.8 % held out without a word. Reported, a
# given torque_delay is compensated whatever its length.
MAX_DELAY_S = 0.05


@dataclass(frozen=True)
class DelayEstimate:
    """The torque's delay behind the motion [s] (positive: the torque comes late)."""

    value_s: float
    std_s: float
    sample_period_s: float  # of the observations the estimate was read from
    compensated_s: float = 0.0  # the delay compensated before this estimate (.compensated)

    @property
    def beyond_noise(self) -> bool:
        """Beyond :data:`SIGNIFICANT_STDS` standard deviations: the data show a delay (whether
        compensating it helps, the training folds say: :mod:`.delay_choice`)."""
        return abs(self.value_s) > SIGNIFICANT_STDS * self.std_s

    @property
    def significant(self) -> bool:
        """Beyond noise and a quarter of a sample: worth a warning (a smaller delay, if the
        folds keep it, is compensated without one)."""
        return self.beyond_noise and abs(self.value_s) > 0.25 * self.sample_period_s

    @property
    def too_long(self) -> bool:
        """Longer than :data:`MAX_DELAY_S`, the longest delay compensated automatically."""
        return abs(self.value_s) > MAX_DELAY_S

    def as_dict(self) -> dict:
        return {
            "value_s": self.value_s,
            "std_s": self.std_s,
            "significant": self.significant,
            "sample_period_s": self.sample_period_s,
            "compensated_s": self.compensated_s,
        }

    def note(self) -> str:
        way = "lags" if self.value_s > 0 else "leads"
        if self.compensated_s:
            when = "earlier" if self.compensated_s > 0 else "later"
            return (
                f"the torque was paired with the motion {1e3 * abs(self.compensated_s):.3g} ms "
                f"{when} to compensate its delay; what remains {way} it by "
                f"{1e3 * abs(self.value_s):.3g} +- {1e3 * self.std_s:.2g} ms"
            )
        longer = self.too_long
        return (
            f"the measured torque {way} the motion by {1e3 * abs(self.value_s):.3g} +- "
            f"{1e3 * self.std_s:.2g} ms (the residual follows the torque's rate as such a delay "
            "would: a delay of the drive or the logger, or unmodelled dynamics that lag the "
            "torque, such as joint elasticity); not compensated"
            + (
                f": longer than the {1e3 * MAX_DELAY_S:g} ms compensated automatically, and a "
                "first-order estimate, which reads a long delay short (a known 80 ms shift of "
                "the real UR10e's torque read 59 ms); if the torque is that late, give the "
                "delay in seconds as estimation.torque_delay in the config"
                if longer
                else " — physid simfit estimates and compensates a delay for simulation"
            )
        )


def estimate_delay(
    store,
    columns: np.ndarray,
    weights: np.ndarray,
    theta: np.ndarray,
    fitted: np.ndarray,
    inflation: float = 1.0,
    passes: int = 2,
) -> DelayEstimate | None:
    """:class:`DelayEstimate` from the stored observations (chunks with ``t``, ``W``, ``tau``),
    the base ``columns`` and their weighted least-squares ``theta`` with the per-joint
    ``weights``; None when the prediction does not move or the system is singular."""
    value = 0.0
    normal = right = None
    for _ in range(passes):
        # the columns' own sums are the same in every pass: only the rate's are recomputed
        normal, right, tau2, count, periods = _delay_sums(
            store, columns, weights, theta, fitted, normal, right
        )
        if count <= len(right):
            return None
        try:
            solution = np.linalg.solve(normal, right)
        except np.linalg.LinAlgError:
            return None
        theta, value = solution[:-1], float(solution[-1])
    sigma2 = max(tau2 - right @ solution, 0.0) / (count - len(right))
    try:
        variance = float(np.linalg.inv(normal)[-1, -1]) * sigma2 * max(inflation, 1.0)
    except np.linalg.LinAlgError:
        return None
    if not (np.isfinite(value) and variance >= 0):
        return None
    return DelayEstimate(value, float(np.sqrt(variance)), float(np.median(periods)))


def _delay_sums(
    store,
    columns: np.ndarray,
    weights: np.ndarray,
    theta: np.ndarray,
    fitted: np.ndarray,
    normal: np.ndarray | None = None,
    right: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, float, int, list[float]]:
    """The normal equations of the torque on ``[W_base, -dy/dt]`` (``y = W_base theta``),
    weighted per joint, with the torque's sum of squares, the equations and the sample periods.
    Given the last pass's ``normal`` and ``right``, their block of the base columns is kept
    and the rate's row recomputed (the tall Gram matrix once per estimate, not per pass)."""
    k = len(columns)
    again = normal is not None
    normal = np.zeros((k + 1, k + 1)) if normal is None else normal.copy()
    right = np.zeros(k + 1) if right is None else right.copy()
    if again:
        normal[k, :] = normal[:, k] = 0.0
        right[k] = 0.0
    tau2, count, periods = 0.0, 0, []
    for chunk in store:
        if len(chunk.t) < 3:
            continue
        W = chunk.W[:, :, columns]
        rate = np.gradient(W @ theta, chunk.t, axis=0)
        y = chunk.tau[:, fitted] * weights[fitted]
        if again:
            X = W[:, fitted] * weights[fitted, None]
            r = (-rate[:, fitted] * weights[fitted]).ravel()
            X, y = X.reshape(-1, k), y.ravel()
            cross = X.T @ r
            normal[:k, k] += cross
            normal[k, :k] += cross
            normal[k, k] += r @ r
            right[k] += r @ y
        else:
            X = np.concatenate([W, -rate[:, :, None]], axis=-1)[:, fitted] * weights[fitted, None]
            X, y = X.reshape(-1, X.shape[-1]), y.ravel()
            normal += X.T @ X
            right += X.T @ y
        tau2 += float(y @ y)
        count += y.size
        periods.append(float(np.median(np.diff(chunk.t))))
    return normal, right, tau2, count, periods


def compensated(
    recording: Trajectory | RecordingFile, delay_s: float
) -> Trajectory | RecordingFile:
    """The recording as the model of a torque logged ``delay_s`` behind the motion sees it:
    at every kept sample ``t`` the torque as logged and the motion of ``t - delay_s``
    (positions, and logged velocities and accelerations, linearly interpolated; the rows whose
    ``t - delay_s`` leaves the recording are dropped). The torque is never interpolated:
    reading it between its samples averages its noise (a 0.42 ms shift at 1 kHz halves the
    variance), and the folds would keep any delay, and the scores improve, for that alone (the
    demo's simulated arm, which has no delay, kept 0.42 ms and scored 0.74 x its noise floor
    while the torque was read later). A recording streamed from disk stays there: its motion
    is read earlier when its rows are read
    (:meth:`~physid.recordings.streamed.RecordingFile.motion_earlier`)."""
    t = np.asarray(recording.t, dtype=float)
    kept = rows_with_motion_earlier(t, delay_s, getattr(recording, "source", None))
    if isinstance(recording, RecordingFile):  # the stamps increase: the kept rows are a range
        return recording.motion_earlier(delay_s, int(kept[0]), int(kept[-1]) + 1)
    at = t[kept] - delay_s

    def earlier(values: np.ndarray | None) -> np.ndarray | None:
        return None if values is None else interpolated(at, t, values)

    return recording.rows(
        kept, q=earlier(recording.q), dq=earlier(recording.dq), ddq=earlier(recording.ddq)
    )
