"""One recording processed in overlapping windows, with the result of processing it whole.

Identification must not hold a long recording's regressor (or the recording) in memory. Every filter
of the offline pipeline (the zero-phase Butterworth of the derivatives, both stages of the parallel
decimation; :mod:`physid.signal.butterworth`) is an IIR filter run forward and backward, whose
response to anything outside a window decays exponentially. A window that overlaps its neighbours by
:data:`SETTLING_PERIODS` periods of the lowest cut-off in use therefore reproduces, on the rows it
owns, what filtering the whole recording gives, to rounding (the slowest pole of an order-8
Butterworth decays by exp(-1.2) per period: 30 periods leave 1e-16). Windows start on multiples of
the first decimation stage's factor, and the rows kept as equations, the end transients left out and
the uniform resampling grid are those of the whole recording (:class:`RecordingPlan`), so the owned
rows of all windows, concatenated, are the rows of the whole.

A recording no longer than one window plus its overlaps is a single window: exactly the
computation on the whole array. The Kalman smoothers (``irwsm1``/``irwsm2``) are global (their
noise ratio is a maximum-likelihood fit over the whole recording) and always take one window.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from physid.errors import InputError
from physid.files.config import FilterConfig
from physid.offline.observe.preprocessing import is_resolved, resolve_preprocessing
from physid.recordings.streamed import RecordingFile
from physid.recordings.trajectory import Trajectory
from physid.recordings.velocity_check import given_derivative_problems
from physid.robot.model import RobotModel
from physid.signal.butterworth import MultirateDecimation

Recording = Trajectory | RecordingFile
# Rows a window owns at the intermediate rate (where the regressor is built: 4,096 rows of a
# six-axis arm's 84 columns are 17 MB), and recorded samples per window of the prediction.
WINDOW_ROWS = 4_096
RAW_WINDOW_SAMPLES = 32_768
# rows of a recording on disk whose recorded derivatives are checked (require_given_derivatives):
# at 1 kHz over three minutes, hundreds of the check's 0.2 s windows
CHECKED_ROWS = 200_000
SETTLING_PERIODS = 30.0  # overlap on each side, in periods of the lowest cut-off in use
_JITTER_TOLERANCE = 0.01  # relative deviation of a time step from the median before resampling
# Periods of the Butterworth cut-off at each end of a recording whose equations are left out:
# there the derivatives lean on the extrapolated padding (physid.signal.butterworth).
EDGE_PERIODS = 3.0


def is_uniform(t: np.ndarray, dt: float) -> bool:
    return bool(np.max(np.abs(np.diff(t) - dt)) <= _JITTER_TOLERANCE * dt)


def interpolate_columns(t_new: np.ndarray, t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Each column of ``x`` (N, k), sampled at ``t``, linearly interpolated at ``t_new``."""
    return np.column_stack([np.interp(t_new, t, x[:, k]) for k in range(x.shape[1])])


def median_step(t: np.ndarray) -> float:
    return float(np.median(np.diff(t)))


@dataclass(frozen=True)
class RecordingPlan:
    """What every window of one recording must agree on (the whole recording's grid, filters,
    and which rows become equations)."""

    options: FilterConfig  # resolved
    dt: float  # s, the grid step (median recorded step)
    resample: bool  # the filters need a uniform grid and the recorded one jitters
    decimation: MultirateDecimation | None
    n_grid: int  # samples of the grid (the recorded ones unless resampled)
    edge_s: float  # derivative-filter transient at each end, left out of the equations
    kept: np.ndarray  # intermediate-rate grid indices (global) that become equations
    margin: int  # grid samples of overlap on each side of a window (a multiple of first_factor)
    window: int  # grid samples owned by a window (a multiple of first_factor)
    info: dict

    @property
    def first_factor(self) -> int:
        return 1 if self.decimation is None else self.decimation.first_factor

    def grid_times(self, recording: Recording, start: int, stop: int) -> np.ndarray:
        """Times [s] of grid samples ``start:stop``."""
        if self.resample:
            return recording.t[0] + self.dt * np.arange(start, stop)
        return recording.t[start:stop]

    def owned_ranges(self) -> Iterator[tuple[int, int]]:
        """The grid ranges the windows own, in order; together exactly ``0:n_grid``."""
        if self.n_grid <= self.window + 2 * self.margin:
            yield 0, self.n_grid
            return
        for start in range(0, self.n_grid, self.window):
            yield start, min(start + self.window, self.n_grid)


def _lowest_cutoff_hz(options: FilterConfig, decimation: MultirateDecimation | None) -> float:
    cutoffs = []
    if options.method == "classical":
        cutoffs.append(options.butterworth_cutoff_hz)
    if decimation is not None:
        cutoffs.append(decimation.second.cutoff_hz)
    return min(cutoffs) if cutoffs else np.inf


def plan_recording(
    model: RobotModel,
    recording: Recording,
    options: FilterConfig,
    *,
    window_rows: int | None = None,
) -> RecordingPlan:
    """The plan of one recording; unresolved ``options`` are resolved on it alone."""
    if not is_resolved(options):
        options = resolve_preprocessing(options, [recording], model.layout.size).filter
    t = recording.t
    dt = median_step(t)
    sample_rate = 1.0 / dt
    info: dict = {
        "method": options.method,
        "source": recording.source,
        "sample_rate_hz": sample_rate,
        "n_raw_samples": recording.n_samples,
    }
    decimation = None
    if options.decimation_cutoff_hz:
        try:
            decimation = MultirateDecimation.plan(
                sample_rate, options.decimation_cutoff_hz, options.decimation_factor
            )
        except InputError as error:  # a configured factor on a slower recording: name it
            raise InputError(
                f"{error} at its {sample_rate:.4g} Hz (a configured decimation_factor "
                "applies to every recording)",
                source=recording.source,
            ) from error
    uniform_needed = options.method == "classical" or decimation is not None
    resample = uniform_needed and not is_uniform(t, dt)
    info["resampled_to_uniform"] = resample
    n_grid = int(np.floor((t[-1] - t[0]) / dt)) + 1 if resample else len(t)
    first = 1 if decimation is None else decimation.first_factor
    grid = t[0] + dt * np.arange(0, n_grid, first) if resample else t[::first]
    edge_s = 0.0
    if options.method == "classical":
        edge_s = EDGE_PERIODS / options.butterworth_cutoff_hz
        if grid[-1] - grid[0] < 4.0 * edge_s:  # short recording: keep every sample
            edge_s = 0.0
    info["edge_s"] = edge_s
    rows = np.arange(len(grid)) if decimation is None else decimation.second.kept_rows(len(grid))
    kept = rows[(grid[rows] >= grid[0] + edge_s) & (grid[rows] <= grid[-1] - edge_s)]
    if options.method.startswith("irwsm"):
        margin, window = 0, n_grid  # global smoothers: one window
    else:
        cutoff = _lowest_cutoff_hz(options, decimation)
        margin = int(np.ceil(SETTLING_PERIODS * sample_rate / cutoff)) if np.isfinite(cutoff) else 2
        margin = first * -(-margin // first)
        window = first * max(1, window_rows or WINDOW_ROWS)
    return RecordingPlan(
        options, dt, resample, decimation, n_grid, edge_s, kept, margin, window, info
    )


def grid_window(recording: Recording, plan: RecordingPlan, start: int, stop: int) -> Trajectory:
    """Grid samples ``start:stop`` as a trajectory (resampled by linear interpolation of the
    recorded samples around them, exactly as resampling the whole recording would)."""
    if not plan.resample:
        return recording.time_slice(start, stop)
    times = plan.grid_times(recording, start, stop)
    t = recording.t
    first = max(int(np.searchsorted(t, times[0], side="right")) - 1, 0)
    last = min(int(np.searchsorted(t, times[-1], side="left")) + 1, len(t))
    raw = recording.time_slice(first, last)
    interp = lambda x: interpolate_columns(times, raw.t, x)  # noqa: E731
    return Trajectory(
        times,
        interp(raw.q),
        interp(raw.tau),
        raw.joint_names,
        None if raw.dq is None else interp(raw.dq),
        None if raw.ddq is None else interp(raw.ddq),
        raw.source,
        raw.warnings,
    )


def missing_derivatives(recording: Recording) -> list[str]:
    """Which of ``dq``, ``ddq`` the recording lacks (a recording on disk says so by its flags)."""
    flags = {"dq": "has_velocities", "ddq": "has_accelerations"}
    return [
        name
        for name in ("dq", "ddq")
        if not (
            getattr(recording, flags[name])
            if hasattr(recording, flags[name])
            else getattr(recording, name) is not None
        )
    ]


def require_given_derivatives(recording: Recording, revolute: np.ndarray | None = None) -> None:
    """Filter method ``given`` takes the recorded velocities and accelerations: one line naming
    the file and the columns it lacks; given ``revolute`` (per joint), also one naming those
    that are not the rates they stand for (:func:`recorded_derivative_problems`).
    Without it, derivatives in degrees go to a fit whose status blames a joint's torque scale,
    and a negated velocity, exchanged accelerations or accelerations of 0 give status ok with
    a worse error and wrong masses."""
    missing = missing_derivatives(recording)
    if missing:
        columns = " and ".join(f"{name}_<joint>" for name in missing)
        raise InputError(
            f"filter method 'given' takes the recorded velocities and accelerations, and there "
            f"are no {columns} columns: add them, or use filter method classical (the default), "
            "irwsm1 or irwsm2",
            source=recording.source,
        )
    if revolute is None:
        return
    said = recorded_derivative_problems(recording, revolute)
    if said:
        raise InputError(
            f"the recorded derivatives are not the rates they stand for: {said}: correct them, "
            "or use filter method classical (the default), irwsm1 or irwsm2, which "
            "differentiate the positions",
            source=recording.source,
        )


def recorded_derivative_problems(recording: Recording, revolute: np.ndarray) -> str:
    """:func:`~physid.recordings.velocity_check.given_derivative_problems` of a recording with
    ``dq_`` and ``ddq_`` columns (of its first :data:`CHECKED_ROWS` rows when it is on disk)."""
    if isinstance(recording, RecordingFile):
        recording = recording.time_slice(0, min(recording.n_samples, CHECKED_ROWS))
    return given_derivative_problems(
        recording.t, recording.q, recording.dq, recording.ddq, recording.joint_names, revolute
    )


def estimate_states(
    trajectory: Trajectory, options: FilterConfig, sample_time_s: float, info: dict
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, velocities and accelerations (N, n) by the configured pipeline.

    The Kalman smoothers take the recorded time stamps when the sampling jitters (their model
    handles it); the Butterworth pipeline needs, and gets, uniformly sampled data.
    """
    from physid.signal.butterworth import classical_derivatives

    method = options.method
    if method == "given":
        require_given_derivatives(trajectory)
        return trajectory.q, trajectory.dq, trajectory.ddq
    if method == "classical":
        info["butterworth_cutoff_hz"] = options.butterworth_cutoff_hz
        return classical_derivatives(trajectory.q, sample_time_s, options.butterworth_cutoff_hz)
    from physid.signal.kalman import irwsm1_derivatives, irwsm2_derivatives

    smoother = irwsm1_derivatives if method == "irwsm1" else irwsm2_derivatives
    timing = sample_time_s if is_uniform(trajectory.t, sample_time_s) else trajectory.t
    q_hat, dq_hat, ddq_hat = smoother(timing, trajectory.q, nvr=options.nvr)
    info["nvr"] = "maximum likelihood" if options.nvr is None else options.nvr
    return q_hat, dq_hat, ddq_hat


class LastWindowStates:
    """Each recording's last window and its states (:func:`estimate_states`), handed to the
    next pass that asks for the same window under the same filter: one cut-off candidate's
    cross-validation rows (:func:`raw_windows`) and observations (:func:`prepared_windows`)
    filter a recording that fits in one window once. One window per recording is held, as
    each pass holds one."""

    def __init__(self) -> None:
        self._last: dict[int, tuple] = {}  # id(recording) -> (recording, key, states, info)

    def estimate(
        self,
        recording: Recording,
        window: Trajectory,
        bounds: tuple[int, int],
        plan: RecordingPlan,
        info: dict,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:func:`estimate_states` of ``window`` (grid rows ``bounds`` of ``recording``)."""
        key = (bounds, plan.options, plan.dt)
        held = self._last.get(id(recording))
        if held is None or held[0] is not recording or held[1] != key:
            noted: dict = {}
            states = estimate_states(window, plan.options, plan.dt, noted)
            held = (recording, key, states, noted)
            self._last[id(recording)] = held
        info.update(held[3])
        return held[2]


@dataclass(frozen=True)
class PreparedWindow:
    """States and torques of one window at the intermediate rate (after the first decimation
    stage), ready for the regressor; ``kept`` are the local rows that become equations and
    ``owned`` the local rows this window owns."""

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray
    kept: np.ndarray
    owned: slice
    plan: RecordingPlan


def prepared_windows(
    recording: Recording,
    plan: RecordingPlan,
    note: Callable[[str], None] | None = None,
    states: LastWindowStates | None = None,
) -> Iterator[PreparedWindow]:
    """The recording's windows, filtered, differentiated and through the first decimation
    stage, in order (``states``: another pass's, to share)."""
    say = note or (lambda _message: None)
    states = states or LastWindowStates()
    first = plan.first_factor
    for start, stop in plan.owned_ranges():
        low, high = max(0, start - plan.margin), min(plan.n_grid, stop + plan.margin)
        window = grid_window(recording, plan, low, high)
        say(f"derivatives ({plan.options.method})")
        q, dq, ddq = states.estimate(recording, window, (low, high), plan, plan.info)
        t, tau = window.t, window.tau
        if plan.decimation is not None:
            say("anti-aliasing")
            # Stage 1: band-limit and thin the states and torques alike; the regressor is then
            # built at the intermediate rate (see MultirateDecimation).
            t = t[::first]
            q, dq, ddq, tau = (plan.decimation.first_stage(x) for x in (q, dq, ddq, tau))
        offset = low // first
        owned = slice(start // first - offset, -(-stop // first) - offset)
        kept = plan.kept[(plan.kept >= owned.start + offset) & (plan.kept < owned.stop + offset)]
        yield PreparedWindow(t, q, dq, ddq, tau, kept - offset, owned, plan)


def raw_windows(
    recording: Recording,
    plan: RecordingPlan,
    samples: int | None = None,
    states: LastWindowStates | None = None,
) -> Iterator[tuple[Trajectory, np.ndarray, np.ndarray, np.ndarray]]:
    """``(owned recorded samples, q, dq, ddq)`` per window: the states at the recorded time
    stamps by the plan's filter (derivatives on the grid, interpolated back to the recorded
    instants when the grid was resampled), as differentiating the whole recording would
    (``states``: another pass's, to share)."""
    states = states or LastWindowStates()
    t = recording.t
    n = len(t)
    samples = samples or RAW_WINDOW_SAMPLES
    method = plan.options.method
    step = n if method.startswith("irwsm") or n <= samples + 2 * plan.margin else samples
    for start in range(0, n, step):
        stop = min(start + step, n)
        owned = recording.time_slice(start, stop)
        if method == "given":
            require_given_derivatives(owned)
            yield owned, owned.q, owned.dq, owned.ddq
            continue
        if method.startswith("irwsm"):  # the smoother takes the recorded time stamps
            _, dq, ddq = estimate_states(owned, plan.options, plan.dt, {})
            yield owned, owned.q, dq, ddq
            continue
        if plan.resample:
            low = int(np.floor((t[start] - t[0]) / plan.dt)) - plan.margin
            high = int(np.ceil((t[stop - 1] - t[0]) / plan.dt)) + 1 + plan.margin
        else:
            low, high = start - plan.margin, stop + plan.margin
        low, high = max(low, 0), min(high, plan.n_grid)
        window = grid_window(recording, plan, low, high)
        _, dq, ddq = states.estimate(recording, window, (low, high), plan, {})
        if plan.resample:
            dq, ddq = (interpolate_columns(owned.t, window.t, x) for x in (dq, ddq))
        else:
            dq, ddq = dq[start - low : stop - low], ddq[start - low : stop - low]
        yield owned, owned.q, dq, ddq
