"""Whether the logged torques carry the nominal model's scale: a drive gain or a torque unit
that is off is absorbed by the estimated bodies, which the filter cannot see.

Why: the online filter explains ``tau - tau_nominal(rest)`` by the estimated bodies alone
(paper E eq. 14-15). A torque logged ``s`` times too large (a current times a wrong gain, a
torque in another unit) leaves ``(s - 1) tau_nominal(rest)`` for those bodies to explain: they
stream a wrong mass with a small std and status ok. The static torques cannot tell: a payload
raises them too, by as much as a gain error does.

What can tell: ``tau = s (tau_rest + Y pi) = s tau_rest + Y (s pi)`` is linear in ``s`` and
``pi' = s pi``, and ``tau_rest`` (the nominal dynamics of every body not estimated) is not in
the span of the estimated bodies' regressor ``Y`` once the robot moves. So on windows of the
recording (:data:`WINDOW_S`) the least squares of ``delta = tau - tau_rest`` on ``(s - 1)
tau_rest``, with ``Y pi'``, a torque offset and viscous and Coulomb friction per joint free in
each window (a load may change between windows; friction the nominal model lacks is not read
as scale), gives one ``s`` per window; their median is the scale, their spread its uncertainty.

A simulated arm's gain error reads to about 1 % through payloads, noise, jittered stamps,
dropped rows and a torque delay; unmodelled joint friction moves it by a few percent; a payload
that changes faster than a window holds one body gives a scale with a wide spread, which is not
significant. Real arms read 0.88-0.99 with an identified nominal model or the URDF alone. Hence
:data:`SCALE_TOLERANCE`: a gross gain or unit error is called out, a 10 % one only reported
(``torque_scale`` in summary.json).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.signal import savgol_filter

from physid.findings import Finding
from physid.online.codes import TORQUE_SCALE
from physid.online.columns import OnlineSignals
from physid.online.measurement import SplitMeasurement

WINDOW_S = 10.0  # long enough to move the arm through poses that separate tau_rest from Y pi
MIN_WINDOW_ROWS = 200
MAX_ROWS = 20_000  # samples evaluated over the whole recording (every k-th)
# Savitzky-Golay window of the derivatives [s]: the scale lives in the slow torques (gravity,
# the low-frequency inertial torque); differentiated over a few samples, velocity noise at 1 kHz
# gives accelerations whose noise, in both tau_rest and Y, biases the scale by tens of percent
SMOOTHING_S = 0.1
# A scale off by more than this, and by 3 std, is reported. Real arms read 0.90-1.05 with a
# nominal model identified on them (weighted per joint and fitted to filtered torques, its misfit
# correlates with its own torque); a gross gain or unit error (x1.25, a gear ratio twice, mN m)
# is what the status calls out; a 10 % one is only reported.
SCALE_TOLERANCE = 0.2
SIGNIFICANCE = 3.0


@dataclass(frozen=True)
class TorqueScale:
    """Logged torque over the nominal model's, read from the bodies not estimated."""

    scale: float
    std: float  # of the median, from the windows' spread (1.4826 MAD / sqrt(windows))
    windows: int

    @property
    def significant(self) -> bool:
        off = abs(self.scale - 1.0)
        return bool(off > SCALE_TOLERANCE and off > SIGNIFICANCE * self.std)

    def as_dict(self) -> dict:
        return {"scale": self.scale, "std": self.std, "windows": self.windows}

    def finding(self, bodies: tuple[str, ...]) -> Finding:
        """The suspect finding when :attr:`significant` (:data:`~physid.online.codes.TORQUE_SCALE`;
        ``bodies``: the estimated ones, which absorb the scale)."""
        return TORQUE_SCALE(
            f"the measured torques read {self.scale:.3g} +- {self.std:.2g} x the nominal model's "
            f"torques of the bodies not estimated (median of {self.windows} windows of "
            f"{WINDOW_S:g} s): a drive gain or torque unit that is off, or a nominal model off "
            f"by that factor; the estimates of {', '.join(bodies)} absorb it. Check the gains "
            "(tau = gain x current) or give nominal_params (a params.json from physid identify "
            "on torques logged as these are)",
            numbers={
                "scale": self.scale,
                "std": self.std,
                "windows": self.windows,
                "tolerance": SCALE_TOLERANCE,
                "significance_std": SIGNIFICANCE,
            },
            names=bodies,
        )


def torque_scale(measurement: SplitMeasurement, signals: OnlineSignals) -> TorqueScale | None:
    """The scale of the module docstring; None for a floating base or contact wrenches (their
    rows carry no actuated torque to scale), or fewer than two windows of data."""
    if measurement.floating_base or measurement.frame_ids or signals.wrenches is not None:
        return None
    t = np.asarray(signals.t, dtype=float)
    finite = np.isfinite(t)
    if np.count_nonzero(finite) < 2 * MIN_WINDOW_ROWS:
        return None
    step = float(np.median(np.diff(t[finite])))
    if not step > 0.0:
        return None
    v = _derivative(signals.q, step) if signals.dq is None else np.asarray(signals.dq, float)
    a = _derivative(v, step)
    stride = max(1, len(t) // MAX_ROWS)
    rows = np.arange(0, len(t), stride)
    whole = np.all(
        np.isfinite(np.column_stack([signals.q[rows], v[rows], a[rows], signals.tau[rows]])), axis=1
    )
    rows = rows[whole & finite[rows]]
    n = len(measurement.rows)
    delta = np.empty((len(rows), n))
    Y = np.empty((len(rows), n, 10 * len(measurement.joint_ids)))
    for i, k in enumerate(rows):
        delta[i], Y[i] = measurement.evaluate(signals.q[k], v[k], a[k], signals.tau[k], None)
    # the joints whose torque the estimated bodies enter (the measurement's rows; fixed base:
    # the columns of the actuated torque)
    joints = measurement.rows
    rest = signals.tau[rows][:, joints] - delta  # the nominal torque of the bodies not estimated
    # windows of WINDOW_S from the start; a last one shorter than half of that joins the one
    # before (it would count as much in the median with a fraction of the motion)
    edges = np.arange(t[rows[0]], t[rows[-1]], WINDOW_S)
    if len(edges) > 1 and t[rows[-1]] - edges[-1] < 0.5 * WINDOW_S:
        edges = edges[:-1]
    edges = np.append(edges, np.inf)
    scales = []
    for start, end in zip(edges[:-1], edges[1:], strict=True):
        inside = (t[rows] >= start) & (t[rows] < end)
        if np.count_nonzero(inside) * stride >= MIN_WINDOW_ROWS:
            speed = v[rows][inside][:, joints]
            scale = _window_scale(delta[inside], rest[inside], Y[inside], speed)
            if scale is not None:
                scales.append(scale)
    if len(scales) < 2:
        return None
    values = np.array(scales)
    median = float(np.median(values))
    spread = 1.4826 * float(np.median(np.abs(values - median)))
    return TorqueScale(median, float(spread / np.sqrt(len(values))), len(values))


def _derivative(x: np.ndarray, step: float) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    samples = 2 * int(SMOOTHING_S / step / 2) + 1
    if samples < 5 or len(x) <= samples:
        return np.gradient(x, step, axis=0)
    return savgol_filter(x, samples, 2, deriv=1, delta=step, axis=0)


def _window_scale(
    delta: np.ndarray, rest: np.ndarray, Y: np.ndarray, v: np.ndarray
) -> float | None:
    """``s`` of one window: ``delta = (s - 1) rest + Y pi' + offset + fv v + fc sign(v)`` per
    joint, the nuisance terms projected out (QR of their columns)."""
    m, n = rest.shape
    eye = np.eye(n)[None]
    nuisance = np.concatenate(
        [
            Y.reshape(m * n, -1),
            np.tile(np.eye(n), (m, 1)),
            (v[:, :, None] * eye).reshape(m * n, n),
            (np.sign(v)[:, :, None] * eye).reshape(m * n, n),
        ],
        axis=1,
    )
    basis = np.linalg.qr(nuisance)[0]
    x, d = rest.reshape(-1), delta.reshape(-1)
    x = x - basis @ (basis.T @ x)
    d = d - basis @ (basis.T @ d)
    weight = float(x @ x)
    if weight <= 1e-12 * float(rest.reshape(-1) @ rest.reshape(-1)):
        return None  # the nominal torque lies in the nuisance span: no motion to read it from
    return 1.0 + float(x @ d) / weight
