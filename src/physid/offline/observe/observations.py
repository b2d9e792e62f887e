"""From a recorded trajectory to the observation system ``tau = W theta`` (paper C §2.3 / §3).

Derivatives come from one of the pipelines of :mod:`physid.signal` (classical Butterworth,
IRWSM 1/2 Kalman smoothing, or the recording's own ``dq``/``ddq``); the regressor is built at the
intermediate rate of the decimation plan, then the regressor columns and the torques are
low-passed by the *same* zero-phase filter and down-sampled together ("parallel decimation",
§2.3 steps 3–4). Where the Butterworth derivatives band-limit the states below half the
decimation cut-off, the inertial columns are built at the kept rows instead
(:func:`inertial_at_kept_rows`): the filter would pass them unchanged. A recording is processed
in overlapping windows (:mod:`.windows`), so only one window's regressor is ever in memory;
:func:`observation_chunks` yields them one at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from physid.files.config import FilterConfig
from physid.offline.observe.gravity import static_gravity_regressors
from physid.offline.observe.passes import filtered_windows
from physid.offline.observe.windows import (
    LastWindowStates,
    PreparedWindow,
    Recording,
    RecordingPlan,
    plan_recording,
)
from physid.robot.model import RobotModel
from physid.robot.regressor import (
    friction_shape_derivatives,
    inertial_regressor,
    joint_term_regressor,
    observation_matrix,
)


@dataclass(frozen=True)
class Observations:
    """Stacked, filtered and decimated identification data of one trajectory."""

    t: np.ndarray  # (M,) s
    # (M, n, p) standard regressor; its inertial columns only when joint_terms are given
    W: np.ndarray
    tau: np.ndarray  # (M, n) joint torques, filtered like W
    q: np.ndarray  # (M, n) estimated states at the kept samples
    dq: np.ndarray
    ddq: np.ndarray
    info: dict = field(default_factory=dict)
    G: np.ndarray | None = None  # (M, n, 3 p_inertial) unit-gravity static regressors, if asked
    # (M, n, n_terms) joint-term blocks under other models (observation_chunks' joint_term_models)
    joint_terms: tuple[np.ndarray, ...] = ()

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
    blocks = tuple(
        np.concatenate([o.joint_terms[k] for o in observations])
        for k in range(len(observations[0].joint_terms))
    )
    return Observations(
        cat("t"), cat("W"), cat("tau"), cat("q"), cat("dq"), cat("ddq"), info, G, blocks
    )


def _structural_columns(W: np.ndarray) -> np.ndarray:
    """Flat (row, column) entries of W that are not identically zero (about half of them)."""
    return np.flatnonzero(np.any(W != 0.0, axis=0).reshape(-1))


# Columns filtered at a time by the second stage: bounds its temporaries (sosfiltfilt pads and
# copies its input several times) to a block instead of the whole regressor.
_FILTER_BLOCK_COLUMNS = 64


def _second_stage(window: PreparedWindow, columns: np.ndarray) -> np.ndarray:
    """Stage 2 of the parallel decimation of (N, n, k) columns: (M, n, k) at the kept rows."""
    rows = window.kept
    decimation = window.plan.decimation
    if decimation is None:
        return columns[rows]
    flat = columns.reshape(columns.shape[0], -1)
    entries = _structural_columns(columns)
    decimated = np.zeros((rows.size, flat.shape[1]))
    for start in range(0, entries.size, _FILTER_BLOCK_COLUMNS):
        block = entries[start : start + _FILTER_BLOCK_COLUMNS]
        decimated[:, block] = decimation.second.filter(flat[:, block])[rows]
    return decimated.reshape(rows.size, *columns.shape[1:])


def _decimated_blocks(
    window: PreparedWindow, blocks: Iterable[np.ndarray]
) -> tuple[np.ndarray, ...]:
    """:func:`_second_stage` of joint-term blocks that differ in a few columns (the Coulomb
    deadband candidates change the sign columns only): each later block filters only the
    columns where it differs from the first and copies the rest (the filter acts column by
    column: the same values). ``blocks`` may be a generator: only the first and the current
    block are then held at the window's rate."""
    blocks = iter(blocks)
    reference = next(blocks, None)
    if reference is None:
        return ()
    first = _second_stage(window, reference)
    decimated = [first]
    for block in blocks:
        differs = np.any(block != reference, axis=0)  # (n, k)
        out = first.copy()
        if np.any(differs):
            out[:, differs] = _second_stage(window, block[:, differs][:, None, :])[:, 0, :]
        decimated.append(out)
    return tuple(decimated)


def inertial_at_kept_rows(plan: RecordingPlan) -> bool:
    """Whether the inertial columns of the regressor are built at the kept rows of the parallel
    decimation rather than at the intermediate rate and low-passed like the torque.

    They are polynomials of the states of degree two at most in the velocities (``W(q, dq, ddq)
    = Y_a(q) ddq + Y_c(q, dq) + Y_g(q)``, Coriolis and centrifugal terms products ``dq_i
    dq_j``), so states band-limited by the Butterworth derivatives at ``f_q`` give columns within
    ``2 f_q``; where the decimation filter passes that band (its cut-off at least ``2 f_q``: by
    default it is ``3 f_q``) filtering them changes them by the filter's passband ripple only,
    and building them at the intermediate rate cost most of an identification (every cut-off
    candidate builds its own). The Kalman smoothers and recorded derivatives have no such band
    limit: there the columns are built and filtered as paper C §2.3 does."""
    decimation, options = plan.decimation, plan.options
    if decimation is None or options.method != "classical" or not options.butterworth_cutoff_hz:
        return False
    return decimation.second.cutoff_hz >= 2.0 * options.butterworth_cutoff_hz


def _decimation_info(plan: RecordingPlan) -> dict:
    info = dict(plan.info)
    if plan.decimation is None:
        info["decimation"] = None
    else:
        second = plan.decimation.second
        info["decimation"] = {
            "cutoff_hz": second.cutoff_hz,
            "factor": plan.decimation.first_factor * second.factor,
            "intermediate_rate_hz": plan.decimation.intermediate_rate_hz,
        }
    return info


def observation_chunks(
    model: RobotModel,
    recording: Recording,
    options: FilterConfig,
    *,
    gravity_regressors: bool = False,
    joint_term_models: tuple[RobotModel, ...] = (),
    progress: Callable[[str], None] | None = None,
    states: LastWindowStates | None = None,
) -> Iterator[Observations]:
    """The observations of one recording, window by window (:mod:`.windows`): concatenated,
    they are those of the whole recording, while only one window's regressor is in memory.

    ``options`` should be resolved
    (:func:`physid.offline.observe.preprocessing.resolve_preprocessing`
    over all training recordings); unset cut-offs are otherwise resolved on this recording alone.
    With ``gravity_regressors`` the static unit-gravity regressors (:mod:`.gravity`) are built at
    the kept rows, for estimating the direction of gravity; ``joint_term_models`` adds the
    joint-term block under each of those models (``Observations.joint_terms``), and ``W`` then
    holds the inertial columns only; ``states``: shared with the candidate's cross-validation
    rows (:mod:`.passes`).
    """
    note = progress or (lambda _message: None)
    plan = plan_recording(model, recording, options)
    info = _decimation_info(plan)
    at_kept_rows = inertial_at_kept_rows(plan)
    for window in filtered_windows("observations", recording, plan, note, states):
        note("regressor")
        q, dq, ddq = window.q, window.dq, window.ddq
        rows = window.kept
        if at_kept_rows:
            # the inertial columns at the kept rows only (the joint terms, whose sign columns
            # are not band-limited, are decimated as before)
            W_decimated = inertial_regressor(model, q[rows], dq[rows], ddq[rows])
            if not joint_term_models:
                terms = _second_stage(window, joint_term_regressor(model, dq, ddq))
                W_decimated = np.concatenate([W_decimated, terms], axis=2)
        else:
            # with joint_term_models each model's block stands for W's own joint terms
            W = (
                inertial_regressor(model, q, dq, ddq)
                if joint_term_models
                else observation_matrix(model, q, dq, ddq)
            )
            W_decimated = _second_stage(window, W)
            del W  # the intermediate-rate regressor: the largest array of the run
        # G(q) at the kept rows only, not built at the intermediate rate and decimated like W:
        # it depends on the filtered positions alone, whose band (the motion's) the decimation
        # filter passes with unit gain, so G at the kept rows equals the decimated G to
        # rounding, at a fraction of the cost on highly decimated recordings
        G = static_gravity_regressors(model, q[rows]) if gravity_regressors else None
        blocks = (joint_term_regressor(m, dq, ddq) for m in joint_term_models)
        if plan.decimation is not None:
            note("parallel decimation")
        tau = window.tau if plan.decimation is None else plan.decimation.second.filter(window.tau)
        yield Observations(
            window.t[rows],
            W_decimated,
            tau[rows],
            q[rows],
            dq[rows],
            ddq[rows],
            info,
            G,
            _decimated_blocks(window, blocks),
        )


def build_observations(
    model: RobotModel,
    trajectory: Recording,
    options: FilterConfig,
    *,
    gravity_regressors: bool = False,
    progress: Callable[[str], None] | None = None,
) -> Observations:
    """Filter, differentiate, build the regressor and decimate one trajectory (all its
    :func:`observation_chunks` stacked)."""
    chunks = list(
        observation_chunks(
            model, trajectory, options, gravity_regressors=gravity_regressors, progress=progress
        )
    )
    return replace(stack(chunks), info=chunks[0].info)


def joint_speed_rms(
    model: RobotModel, recordings: list[Recording], options: FilterConfig
) -> np.ndarray:
    """RMS (n,) of the estimated velocities of all recordings at the intermediate rate (the
    scale of the automatic Coulomb deadband, :mod:`.deadband`)."""
    total, count = np.zeros(model.n_joints), 0
    for recording in recordings:
        plan = plan_recording(model, recording, options)
        for window in filtered_windows("speed_rms", recording, plan):
            owned = window.dq[window.owned]
            total += np.sum(owned**2, axis=0)
            count += len(owned)
    return np.sqrt(total / count)


def joint_term_chunks(
    model: RobotModel, recording: Recording, options: FilterConfig, models: list[RobotModel]
) -> Iterator[tuple[np.ndarray, ...]]:
    """Per window of ``recording`` (as :func:`observation_chunks`), the joint-term block of the
    observation matrix under each of ``models`` (which differ in joint-term options such as the
    Coulomb deadband): the regressor's rigid-body part is not rebuilt."""
    plan = plan_recording(model, recording, options)
    for window in filtered_windows("joint_terms", recording, plan):
        blocks = (joint_term_regressor(m, window.dq, window.ddq) for m in models)
        yield _decimated_blocks(window, blocks)


def friction_chunks(
    model: RobotModel,
    recording: Recording,
    options: FilterConfig,
    windows: list[PreparedWindow] | None = None,
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Per window of ``recording`` (as :func:`observation_chunks`): the joint-term block of the
    observation matrix and its derivatives with respect to the friction shape parameters
    (:func:`physid.robot.regressor.friction_shape_derivatives`), decimated like the observations.
    ``windows``: the recording's :func:`friction_windows`, when the caller keeps them."""
    if windows is None:
        windows = filtered_windows("friction", recording, plan_recording(model, recording, options))
    for window in windows:
        yield (
            _second_stage(window, joint_term_regressor(model, window.dq, window.ddq)),
            _second_stage(window, friction_shape_derivatives(model, window.dq)),
        )


def friction_windows(
    model: RobotModel, recording: Recording, options: FilterConfig
) -> list[PreparedWindow]:
    """The filtered windows of ``recording``, kept: for a search that evaluates many joint-term
    models on the same states (:mod:`.friction_shapes`)."""
    return list(filtered_windows("friction", recording, plan_recording(model, recording, options)))


def observations_of(
    model: RobotModel,
    trajectories: list[Recording],
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
