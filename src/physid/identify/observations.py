"""From a measured trajectory to the observation system ``tau = W theta`` (paper C §2.3 / §3).

Derivatives come from one of the pipelines of :mod:`physid.signal` (classical Butterworth,
IRWSM 1/2 Kalman smoothing, or the recording's own ``dq``/``ddq``); the regressor is built at the
full rate, then the regressor columns and the torques are low-passed by the *same* zero-phase
filter and down-sampled together ("parallel decimation", §2.3 steps 3–4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from physid.config import FilterConfig
from physid.data import Trajectory
from physid.errors import InputError
from physid.identify.gravity import static_gravity_regressors
from physid.identify.preprocessing import is_resolved, resolve_preprocessing
from physid.model import RobotModel
from physid.regressor import joint_term_regressor, observation_matrix
from physid.signal.butterworth import MultirateDecimation, classical_derivatives

_JITTER_TOLERANCE = 0.01  # relative deviation of a time step from the median before resampling
# Periods of the Butterworth cut-off at each end of a recording whose equations are left out:
# there the derivatives lean on the extrapolated padding (physid.signal.butterworth).
EDGE_PERIODS = 3.0


@dataclass(frozen=True)
class Observations:
    """Stacked, filtered and decimated identification data of one trajectory."""

    t: np.ndarray  # (M,) s
    W: np.ndarray  # (M, n, p) standard regressor
    tau: np.ndarray  # (M, n) joint torques, filtered like W
    q: np.ndarray  # (M, n) estimated states at the kept samples
    dq: np.ndarray
    ddq: np.ndarray
    info: dict = field(default_factory=dict)
    G: np.ndarray | None = None  # (M, n, 3 p_inertial) unit-gravity static regressors, if asked

    @property
    def n_samples(self) -> int:
        return len(self.t)


def stack(observations: list[Observations]) -> Observations:
    """Concatenate several trajectories' observations (time restarts per experiment)."""
    if len(observations) == 1:
        return observations[0]
    cat = lambda name: np.concatenate([getattr(o, name) for o in observations])  # noqa: E731
    info = {"experiments": [o.info for o in observations]}
    G = None if any(o.G is None for o in observations) else cat("G")
    return Observations(cat("t"), cat("W"), cat("tau"), cat("q"), cat("dq"), cat("ddq"), info, G)


def _is_uniform(t: np.ndarray, dt: float) -> bool:
    return bool(np.max(np.abs(np.diff(t) - dt)) <= _JITTER_TOLERANCE * dt)


def uniform_trajectory(trajectory: Trajectory, dt: float) -> tuple[Trajectory, bool]:
    """Resample onto a uniform grid when the time steps jitter (filters need uniform sampling)."""
    if _is_uniform(trajectory.t, dt):
        return trajectory, False
    t_uniform = trajectory.t[0] + dt * np.arange(
        int(np.floor((trajectory.t[-1] - trajectory.t[0]) / dt)) + 1
    )
    interp = lambda x: np.column_stack(  # noqa: E731
        [np.interp(t_uniform, trajectory.t, x[:, k]) for k in range(x.shape[1])]
    )
    resampled = Trajectory(
        t_uniform,
        interp(trajectory.q),
        interp(trajectory.tau),
        trajectory.joint_names,
        None if trajectory.dq is None else interp(trajectory.dq),
        None if trajectory.ddq is None else interp(trajectory.ddq),
        trajectory.source,
        trajectory.warnings,
    )
    return resampled, True


def estimate_states(
    trajectory: Trajectory, options: FilterConfig, sample_time_s: float, info: dict
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, velocities and accelerations (N, n) by the configured pipeline.

    The Kalman smoothers take the recorded time stamps when the sampling jitters (their model
    handles it); the Butterworth pipeline needs, and gets, uniformly resampled data.
    """
    method = options.method
    if method == "given":
        if trajectory.dq is None or trajectory.ddq is None:
            raise InputError(
                "filter method 'given' needs dq_<joint> and ddq_<joint> columns in the data",
                source=trajectory.source,
            )
        return trajectory.q, trajectory.dq, trajectory.ddq
    if method == "classical":
        info["butterworth_cutoff_hz"] = options.butterworth_cutoff_hz
        return classical_derivatives(trajectory.q, sample_time_s, options.butterworth_cutoff_hz)
    from physid.signal.kalman import irwsm1_derivatives, irwsm2_derivatives

    smoother = irwsm1_derivatives if method == "irwsm1" else irwsm2_derivatives
    timing = sample_time_s if _is_uniform(trajectory.t, sample_time_s) else trajectory.t
    q_hat, dq_hat, ddq_hat = smoother(timing, trajectory.q, nvr=options.nvr)
    info["nvr"] = "maximum likelihood" if options.nvr is None else options.nvr
    return q_hat, dq_hat, ddq_hat


def _decimation(options: FilterConfig, sample_rate_hz: float) -> MultirateDecimation | None:
    if not options.decimation_cutoff_hz:
        return None
    return MultirateDecimation.plan(
        sample_rate_hz, options.decimation_cutoff_hz, options.decimation_factor
    )


def _structural_columns(W: np.ndarray) -> np.ndarray:
    """Flat (row, column) entries of W that are not identically zero (about half of them)."""
    return np.flatnonzero(np.any(W != 0.0, axis=0).reshape(-1))


@dataclass(frozen=True)
class _PreparedStates:
    """States and torques ready for the regressor, before the final decimation stage."""

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray
    decimation: MultirateDecimation | None
    info: dict
    edge_s: float  # derivative-filter transient at each end, left out of the equations


def _prepare(
    model: RobotModel,
    trajectory: Trajectory,
    options: FilterConfig,
    note: Callable[[str], None],
) -> _PreparedStates:
    if not is_resolved(options):
        options = resolve_preprocessing(options, [trajectory], model.layout.size).filter
    dt = float(np.median(np.diff(trajectory.t)))
    sample_rate = 1.0 / dt
    info: dict = {
        "method": options.method,
        "source": trajectory.source,
        "sample_rate_hz": sample_rate,
        "n_raw_samples": trajectory.n_samples,
    }
    decimation = _decimation(options, sample_rate)
    resampled = False
    if options.method == "classical" or decimation is not None:
        trajectory, resampled = uniform_trajectory(trajectory, dt)
    info["resampled_to_uniform"] = resampled
    note(f"derivatives ({options.method})")
    q, dq, ddq = estimate_states(trajectory, options, dt, info)
    t, tau = trajectory.t, trajectory.tau
    if decimation is not None:
        note("anti-aliasing")
        # Stage 1: band-limit and thin the states and torques alike; the regressor is then
        # built at the intermediate rate (see MultirateDecimation).
        t = t[:: decimation.first_factor]
        q, dq, ddq, tau = (decimation.first_stage(x) for x in (q, dq, ddq, tau))
    edge_s = 0.0
    if options.method == "classical":
        edge_s = EDGE_PERIODS / options.butterworth_cutoff_hz
        if t[-1] - t[0] < 4.0 * edge_s:  # short recording: keep every sample
            edge_s = 0.0
    info["edge_s"] = edge_s
    return _PreparedStates(t, q, dq, ddq, tau, decimation, info, edge_s)


def _kept_rows(prepared: _PreparedStates) -> np.ndarray:
    """Rows of the prepared (intermediate-rate) samples that become equations: those the
    decimation keeps, minus the derivative filter's end transients (``edge_s`` at each end)."""
    t = prepared.t
    if prepared.decimation is None:
        rows = np.arange(len(t))
    else:
        rows = prepared.decimation.second.kept_rows(len(t))
    interior = (t[rows] >= t[0] + prepared.edge_s) & (t[rows] <= t[-1] - prepared.edge_s)
    return rows[interior]


# Columns filtered at a time by the second stage: bounds its temporaries (sosfiltfilt pads and
# copies its input several times) to a block instead of the whole regressor.
_FILTER_BLOCK_COLUMNS = 64


def _second_stage(prepared: _PreparedStates, columns: np.ndarray) -> np.ndarray:
    """Stage 2 of the parallel decimation of (N, n, k) columns: (M, n, k) at the kept rows."""
    rows = _kept_rows(prepared)
    if prepared.decimation is None:
        return columns[rows]
    second = prepared.decimation.second
    flat = columns.reshape(columns.shape[0], -1)
    entries = _structural_columns(columns)
    decimated = np.zeros((rows.size, flat.shape[1]))
    for start in range(0, entries.size, _FILTER_BLOCK_COLUMNS):
        block = entries[start : start + _FILTER_BLOCK_COLUMNS]
        decimated[:, block] = second.filter(flat[:, block])[rows]
    return decimated.reshape(rows.size, *columns.shape[1:])


def build_observations(
    model: RobotModel,
    trajectory: Trajectory,
    options: FilterConfig,
    *,
    gravity_regressors: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Observations:
    """Filter, differentiate, build the regressor and decimate one trajectory.

    ``options`` should be resolved (:func:`physid.identify.preprocessing.resolve_preprocessing`
    over all training recordings); unset cut-offs are otherwise resolved on this recording alone.
    With ``gravity_regressors`` the static unit-gravity regressors (:mod:`.gravity`) are built and
    decimated alike, for estimating the direction of gravity.
    """
    note = progress or (lambda _message: None)
    prepared = _prepare(model, trajectory, options, note)
    t, q, dq, ddq, tau, info = (
        prepared.t, prepared.q, prepared.dq, prepared.ddq, prepared.tau, prepared.info
    )  # fmt: skip
    note("regressor")
    W = observation_matrix(model, q, dq, ddq)
    G = static_gravity_regressors(model, q) if gravity_regressors else None
    rows = _kept_rows(prepared)
    if prepared.decimation is None:
        info["decimation"] = None
        G = None if G is None else G[rows]
        return Observations(t[rows], W[rows], tau[rows], q[rows], dq[rows], ddq[rows], info, G)
    note("parallel decimation")
    second = prepared.decimation.second
    W_decimated = _second_stage(prepared, W)
    del W  # the full-rate regressor: the largest array of the run
    tau_decimated = second.filter(tau)[rows]
    if G is not None:
        G = _second_stage(prepared, G)
    info["decimation"] = {
        "cutoff_hz": second.cutoff_hz,
        "factor": prepared.decimation.first_factor * second.factor,
        "intermediate_rate_hz": prepared.decimation.intermediate_rate_hz,
    }
    return Observations(t[rows], W_decimated, tau_decimated, q[rows], dq[rows], ddq[rows], info, G)


def joint_term_observations(
    model: RobotModel,
    trajectories: list[Trajectory],
    options: FilterConfig,
    models_for: Callable[[np.ndarray], list[RobotModel]],
) -> list[np.ndarray]:
    """The joint-term block of the observation matrix (stacked like :func:`stack` of
    :func:`build_observations`, shape (M, n, n_terms)) under each model of
    ``models_for(rms_speed)``, where ``rms_speed`` (n,) is the RMS of the estimated velocities
    of all trajectories (the models differ in joint-term options such as the Coulomb deadband).
    The states are estimated once."""
    prepared = [_prepare(model, t, options, lambda _message: None) for t in trajectories]
    speeds = np.concatenate([p.dq for p in prepared])
    models = models_for(np.sqrt(np.mean(speeds**2, axis=0)))
    return [
        np.concatenate(
            [_second_stage(p, joint_term_regressor(candidate, p.dq, p.ddq)) for p in prepared]
        )
        for candidate in models
    ]


def observations_of(
    model: RobotModel,
    trajectories: list[Trajectory],
    options: FilterConfig,
    progress: Callable[[str], None] | None = None,
    *,
    gravity_regressors: bool = False,
) -> Observations:
    """Observations of several trajectories, processed alike (``options`` resolved) and stacked."""
    return stack(
        [
            build_observations(
                model, t, options, gravity_regressors=gravity_regressors, progress=progress
            )
            for t in trajectories
        ]
    )
