"""Observations of the estimator at the recorded samples only, their per-joint noise and the
initialisation filter (paper A §3.3 eq. 3.18 with ``R^-1 = diag(w_j^2)``, §4.4).

A recording sampled more coarsely than the model step ``h`` (a 20 Hz encoder, h = 0.01 s) is
observed only at the model steps nearest to a real sample: the states between samples are
estimated by the dynamics (eqs. 3.7-3.8), never by residuals on interpolated angles. Each
observation residual of joint ``j`` is weighted by ``w_j = min(1, NOISE_REF / sigma_j)``: the
default ``kappa`` (100 at h = 0.01 s) is paper A's, calibrated with ``R^-1 = I`` on angles with
:data:`NOISE_REF` = 1 mrad of noise, so a joint recorded with more noise gets
``R^-1 = (NOISE_REF / sigma_j)^2`` (the dynamics weigh more against its noisier angles, as in
a maximum-likelihood weighting), and a joint recorded better keeps weight 1 (with encoder noise
of some 1e-5 rad the model error dominates the residuals, not the noise). With weight 1 on
noisy low-rate angles the states follow the noise (observation MSE below the noise variance)
and dry friction turns into viscous; weighted, a fit started at the truth stays there.
"""

from __future__ import annotations

import numpy as np
from scipy.special import comb

from physid.errors import InputError
from physid.multibody.estimate.problem import Segment
from physid.multibody.model.kinematics import np_box_minus_rows
from physid.multibody.model.spec import MultibodyModel
from physid.multibody.step.simulate import configurations_from_joints

# the noise [rad] at which an angle residual has weight 1 (paper A's synthetic noise, with which
# its kappa = 100 at h = 0.01 s goes)
NOISE_REF = 1e-3
# the orders of the finite differences the noise estimate tries (see noise_from_data)
NOISE_ORDERS = (2, 3, 4, 5, 6)


def noise_from_data(y: np.ndarray) -> np.ndarray:
    """Per column of ``y`` (N, m) the standard deviation of white measurement noise: the
    smallest over the orders k of :data:`NOISE_ORDERS` of the robust scale
    ``median|Delta^k y| / 0.6745 / sqrt(C(2k, k))`` (the k-th difference of white noise has
    variance ``C(2k, k) sigma^2``; it is the high-frequency residual of a local polynomial of
    degree k - 1). A smooth motion adds ``(omega T)^k`` of its amplitude, which falls with k
    while ``omega T < 2``, so the smallest order-wise estimate is the least biased; a stuck
    joint gives the noise itself. Floor 1e-9 rad (a noise-free simulation)."""
    y = np.asarray(y, float).reshape(len(y), -1)
    best = np.full(y.shape[1], np.inf)
    for k in NOISE_ORDERS:
        if len(y) <= k + 2:
            continue
        scale = np.median(np.abs(np.diff(y, k, axis=0)), axis=0) / 0.6745
        best = np.minimum(best, scale / np.sqrt(comb(2 * k, k)))
    return np.maximum(np.where(np.isfinite(best), best, 1e-9), 1e-9)


def init_cutoff(fs: float, requested: float | None | str = "auto") -> float | None:
    """The cutoff [Hz] of the zero-phase initialisation filter (§4.4) at sample rate ``fs``:
    ``"auto"`` gives ``min(10 Hz, 0.4 x Nyquist)`` (10 Hz at 1 kHz, 4 Hz at 20 Hz; the 10 Hz
    of paper A's 100 Hz data, but always below Nyquist); a number is used as given (an
    InputError at or above Nyquist), ``None`` or 0 means no filter."""
    if requested == "auto":
        return min(10.0, 0.2 * fs)
    if requested is None or requested == 0:
        return None
    value = float(requested)
    if not (np.isfinite(value) and 0 < value < 0.5 * fs):
        raise InputError(
            f"{value:g} Hz is not below the Nyquist frequency {0.5 * fs:g} Hz of the "
            f"recording ({fs:g} Hz)",
            source="--init-filter",
        )
    return value


def sample_steps(t: np.ndarray, t0: float, h: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(steps, samples)``: for every model step that has a recorded sample within ``h / 2``
    (the nearest one when several fall on a step), its index and that sample's index. The
    timing error is at most ``h / 2`` times the joint rate (zero when the samples fall on the
    step grid, as at 20 Hz with h = 0.01 s)."""
    k = np.rint((np.asarray(t, float) - t0) / h).astype(int)
    dist = np.abs(np.asarray(t, float) - t0 - k * h)
    ok = (k >= 0) & (k < n)
    order = np.lexsort((dist[ok], k[ok]))  # by step, nearest first
    steps, idx = k[ok][order], np.flatnonzero(ok)[order]
    first = np.concatenate([[True], steps[1:] != steps[:-1]]) if len(steps) else steps.astype(bool)
    return steps[first], idx[first]


def quantum(y: np.ndarray) -> float | None:
    """The step of an encoder-quantised column ``y``: the smallest non-zero difference between
    successive samples when at least 99 % of the non-zero differences are whole multiples of it
    (within 1 % of the step) and at least 10 differ; None for unquantised angles."""
    d = np.abs(np.diff(np.asarray(y, float)))
    moved = d[d > 1e-12 * max(float(np.max(np.abs(y), initial=0.0)), 1.0)]
    if len(moved) < 10:
        return None
    step = float(moved.min())
    ratio = moved / step
    whole = np.abs(ratio - np.round(ratio)) <= 0.01
    return step if np.mean(whole) >= 0.99 else None


def joint_noise(
    recordings: list, names: list[str], given: dict[str, float]
) -> tuple[np.ndarray, list[str], dict[str, float]]:
    """Per joint the noise [rad]: ``given`` (the config's ``noise:``) or, for joints it does not
    name, the median over the recordings of :func:`noise_from_data`, at least the quantisation
    noise ``step / sqrt(12)`` of an encoder-quantised joint (:func:`quantum`: a joint that
    stands still repeats one count, and the differences read as no noise at all); the source
    of each; and the step of each quantised joint whose noise was floored by it."""
    sigma, source, floored = [], [], {}
    estimates = [noise_from_data(rec.angles) for rec in recordings]
    for j, name in enumerate(names):
        if name in given:
            sigma.append(float(given[name]))
            source.append("config")
            continue
        value = float(np.median([e[j] for e in estimates]))
        steps = [quantum(np.asarray(rec.angles, float)[:, j]) for rec in recordings]
        steps = [s for s in steps if s is not None]
        if steps and value < max(steps) / np.sqrt(12.0):
            floored[name] = max(steps)
            value = max(steps) / np.sqrt(12.0)
        sigma.append(value)
        source.append("data")
    return np.array(sigma), source, floored


def _at(grid: np.ndarray, t: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.column_stack([np.interp(grid, t, x[:, j]) for j in range(x.shape[1])])


def resample(
    recording,  # noqa: ANN001 (a MultibodyRecording: t, angles, control, source)
    h: float,
    cutoff_hz: float | None | str = "auto",
    weights: np.ndarray | None = None,
) -> tuple[Segment, np.ndarray]:
    """The segment at the step ``h`` and the angles smoothed for initialisation (§4.4).

    Observations only at recorded samples: a step nearest to a sample (within ``h / 2``,
    :func:`sample_steps`) carries that sample's angles with the per-joint ``weights`` (default
    1); the other steps have weight 0 (their ``y`` is the linear interpolation, shown in the
    report only). The control is interpolated to every step. The initialisation angles are the
    recording filtered by a zero-phase 2nd-order Butterworth (forward and backward) at
    :func:`init_cutoff` of ``cutoff_hz``, interpolated to the steps."""
    from scipy.signal import butter, filtfilt

    t, y = np.asarray(recording.t, float), np.asarray(recording.angles, float)
    fs = 1.0 / float(np.median(np.diff(t)))
    grid = t[0] + h * np.arange(int(np.floor((t[-1] - t[0]) / h + 1e-9)) + 1)
    if len(grid) < 3:  # before the filter, which a recording this short makes singular
        raise InputError(f"{recording.source}: fewer than 3 steps of h = {h} s in the recording")
    cutoff = init_cutoff(fs, cutoff_hz)
    smooth = y
    if cutoff is not None and len(t) > 12:
        b, a = butter(2, cutoff / (0.5 * fs))
        smooth = filtfilt(b, a, y, axis=0)
    control = np.asarray(recording.control, float)
    observed = _at(grid, t, y)
    w = np.zeros_like(observed)
    steps, samples = sample_steps(t, t[0], h, len(grid))
    observed[steps] = y[samples]
    w[steps] = 1.0 if weights is None else np.asarray(weights, float)
    return Segment(observed, _at(grid, t, control), w), _at(grid, t, smooth)


def initial_states(model: MultibodyModel, angles: np.ndarray, h: float) -> tuple:
    """Configurations at zero constraint violation (forward kinematics) and velocities by
    eq. 4.3, ``v_{k+1} = (q_{k+1} [-] q_k) / h`` (``v_0 = v_1``)."""
    Q = configurations_from_joints(model, angles)
    V = np_box_minus_rows(Q[1:], Q[:-1]) / h
    return Q, np.vstack([V[:1], V])
