"""The training observations of :func:`physid.offline.pipeline.identify`, gathered in one pass
over the recordings' windows, and the statistics later steps read back from them.

One pass builds every window's observations (:func:`.observations.observation_chunks`), keeps
them in an :class:`~.store.ObservationStore` and accumulates the exact per-joint reduction of
each cross-validation fold (:class:`~.folds.FoldAccumulator`) — under each candidate Coulomb
deadband when the deadband is chosen automatically (:mod:`.deadband`), whose joint-term blocks
are built in the same pass; the raw scoring rows of each fold come from one more pass
(:func:`.crossval.raw_rows`). What needs the rows again after the fit (Newey-West scores,
residual series, ranges of motion) reads the store chunk by chunk, so the stacked regressor is
never formed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from physid.files.config import AUTO_DEADBAND, IdentifyConfig
from physid.offline.choose.deadband import candidate_models
from physid.offline.fit.joint_prior import ColumnStatistics
from physid.offline.observe.crossval import RawRows, RowPool, row_pool
from physid.offline.observe.folds import (
    FoldAccumulator,
    FoldPlan,
    FoldSystems,
    combine,
    store_systems,
    taken_apart,
)
from physid.offline.observe.least_squares import LeastSquaresResult, newey_west_covariance
from physid.offline.observe.metrics import FitMetrics, MetricsAccumulator
from physid.offline.observe.observations import Observations, observation_chunks
from physid.offline.observe.preprocessing import Preprocessing
from physid.offline.observe.reduced import ReducedSystem
from physid.offline.observe.store import ObservationStore
from physid.offline.observe.windows import LastWindowStates, Recording
from physid.recordings.glitches import MOVING_SPAN
from physid.robot.model import RobotModel


@dataclass(frozen=True)
class TrainingData:
    """The model (with the chosen deadband), the notes, the stored observations as fitted and
    their reduced system ([W | G] when the gravity regressors were asked for), the same per
    cross-validation fold, and the raw scoring rows of each fold (:mod:`.crossval`)."""

    model: RobotModel
    preprocessing: Preprocessing
    store: ObservationStore
    system: ReducedSystem
    folds: Sequence[ReducedSystem]  # a FoldSystems: each fold's complement combined once
    rows: list[RawRows]
    # what the joint-term prior reads, when the chunks were not stored (a scoring pass)
    statistics: ColumnStatistics | None = None

    def joint_observations(self) -> ObservationStore | ColumnStatistics:
        """The observations the joint-term prior is computed from (:func:`.joint_prior`)."""
        return self.store if self.statistics is None else self.statistics


@dataclass(frozen=True)
class CandidateObservations:
    """One candidate preprocessing's training data with every joint-term model (the Coulomb
    deadband candidates; one model when the deadband is given): per model the fold systems."""

    models: list[RobotModel]
    preprocessing: Preprocessing
    store: ObservationStore  # every model's joint-term block in chunk.joint_terms
    folds: list[FoldSystems]  # [model][fold]
    rows: list[RawRows]
    n_inertial: int
    blocks: bool  # the stored chunks carry one joint-term block per model
    statistics: ColumnStatistics | None = None  # of model 0, when no chunk was stored
    # with several models the fold systems hold the standard columns only: the gravity
    # regressors' columns are reduced for the model chosen (``training(extras=True)``) alone
    plan: FoldPlan | None = None

    def training(self, index: int, *, extras: bool = False) -> TrainingData:
        """The observations under joint-term model ``index``; ``extras``: the whole system
        keeps the gravity regressors' columns (for estimating the tilt)."""
        store = self.store
        if self.blocks:
            store = store.mapped(_with_joint_terms(self.n_inertial, index))
        folds = self.folds[index]
        if extras and self.plan is not None:
            folds = store_systems(store, self.plan, folds[0].fitted, gravity=True)
        whole = combine(folds if extras else [f.standard_only() for f in folds if f.n_samples])
        statistics = self.statistics if index == 0 else None
        return TrainingData(
            self.models[index], self.preprocessing, store, whole, folds, self.rows, statistics
        )


def _with_joint_terms(n_inertial: int, index: int) -> Callable[[Observations], Observations]:
    def view(chunk: Observations) -> Observations:
        W = np.concatenate([chunk.W[..., :n_inertial], chunk.joint_terms[index]], axis=-1)
        return replace(chunk, W=W, joint_terms=())

    return view


def without_unfitted(chunk: Observations, fitted: np.ndarray) -> Observations:
    """The chunk with the rows of joints whose torque is not fitted set to zero (config
    ``fit_joints``): they add nothing to any reduction, residual or score."""
    if np.all(fitted):
        return chunk
    zero = lambda x: None if x is None else np.where(fitted[:, None], x, 0.0)  # noqa: E731
    return replace(
        chunk,
        W=zero(chunk.W),
        G=zero(chunk.G),
        tau=np.where(fitted, chunk.tau, 0.0),
        joint_terms=tuple(zero(block) for block in chunk.joint_terms),
    )


def observe_candidate(
    model: RobotModel,
    config: IdentifyConfig,
    preprocessing: Preprocessing,
    train: list[Recording],
    folds: FoldPlan,
    *,
    gravity_regressors: bool,
    note: Callable[[str], None],
    scoring_only: bool = False,
    pool: RowPool | None = None,
    rests: list[np.ndarray] | None = None,
) -> CandidateObservations:
    """Observe, store and reduce (per fold) the training recordings under one preprocessing,
    with every automatic-deadband candidate's joint-term block built in the same pass.

    ``scoring_only``: what the cut-off's cross-validation reads and nothing more — the fold
    systems under the narrowest deadband only, no stored chunks, no gravity regressors (the
    chosen cut-off is observed again in full). The candidates that lose would otherwise each
    keep their whole decimated regressor with five joint-term blocks (hundreds of MB for a
    high cut-off on long recordings, spilled to disk) and reduce all five per fold. ``pool``:
    the raw scoring samples of these recordings under this preprocessing, when a scoring pass
    read them already (:func:`~.crossval.row_pool`); ``rests``: the recordings' rests, when
    another candidate found them (:func:`~.crossval.rest_intervals`)."""
    options = preprocessing.filter
    noise = preprocessing.velocity_noise_std
    given = config.coulomb_deadband != AUTO_DEADBAND or model.coulomb_deadband is not None
    states = LastWindowStates()  # the pool's windows, filtered again by the observations
    rows = (pool or row_pool(model, train, options, rests=rests, states=states)).by_fold(folds)
    rows = rows.split(folds)
    candidates: list[RobotModel] = []
    if options.method == "given" and noise is None:  # recorded velocities: their noise is
        noise = np.zeros(model.n_joints)  # not known, the fractions of the RMS speed decide
    if not given and noise is not None:
        rms_speed = np.sqrt(np.mean(np.concatenate([r.dq for r in rows]) ** 2, axis=0))
        candidates = candidate_models(model, rms_speed, noise)
        if scoring_only:
            candidates = candidates[:1]
    if scoring_only:
        gravity_regressors = False
    n_inertial = model.layout.n_inertial
    store = ObservationStore()
    statistics = ColumnStatistics(n_inertial) if scoring_only else None
    # every deadband model's block side by side with the inertial columns, reduced once and
    # taken apart per model (folds.taken_apart): the blocks differ in their Coulomb columns
    total = FoldAccumulator(folds)
    for k, recording in enumerate(train):
        chunks = observation_chunks(
            model,
            recording,
            options,
            gravity_regressors=gravity_regressors,
            joint_term_models=tuple(candidates),
            progress=note,
            states=states,
        )
        for chunk in map(lambda c: without_unfitted(c, model.fitted), chunks):  # noqa: C417
            if not scoring_only:
                store.append(chunk, k)
            if not candidates:
                total.add(k, chunk.t, chunk.W, chunk.tau, chunk.G)
                if statistics is not None:
                    statistics.add(chunk)
                continue
            blocks = chunk.joint_terms[: len(candidates)]
            # the gravity columns (3 x the inertial ones) would triple the reduction: they are
            # reduced for the chosen model only (training(extras))
            total.add(k, chunk.t, (chunk.W[..., :n_inertial], *blocks), chunk.tau)
            if statistics is not None:
                statistics.add_terms(chunk.tau, blocks[0], chunk.dq)
    fitted = None if np.all(model.fitted) else model.fitted
    systems = [replace(system, fitted=fitted) for system in total.systems()]
    fold_systems = [FoldSystems(systems)]
    if len(candidates) > 1:  # [fold][model] -> [model][fold]
        apart = [taken_apart(s, n_inertial, len(candidates)) for s in systems]
        fold_systems = [FoldSystems(models) for models in zip(*apart, strict=True)]
    return CandidateObservations(
        candidates or [model],
        preprocessing,
        store,
        fold_systems,
        rows,
        n_inertial,
        bool(candidates),
        statistics,
        folds if candidates and gravity_regressors else None,
    )


def gravity_shifted(
    store: ObservationStore, delta: np.ndarray, n_inertial: int
) -> ObservationStore:
    """The store's regressor for gravity ``g0 + delta`` (exact, linear in g; needs ``G``)."""

    def shift(chunk: Observations) -> Observations:
        W = chunk.W.copy()
        for axis in range(3):
            block = chunk.G[:, :, axis * n_inertial : (axis + 1) * n_inertial]
            W[:, :, :n_inertial] += delta[axis] * block
        return replace(chunk, W=W, G=None)

    return store.mapped(shift)


def still_joints(
    model: RobotModel, store: ObservationStore, moving: np.ndarray | None = None
) -> dict[str, str]:
    """The joints that (almost) never move, with a one-line description of how little: those
    whose filtered positions span less than the still bound or move slower than 1e-4 per
    second, and those that ``moving`` (per joint, from the raw positions:
    :func:`~physid.recordings.glitches.moving_joints`) says stay within their sensor's noise
    (a still joint on a 12-bit encoder toggles over 1.5 mrad, and its friction would be fitted
    to the toggling)."""
    low = high = speed2 = None
    rows = 0
    for chunk in store:
        if not len(chunk.q):  # a window that kept no equation
            continue
        low = chunk.q.min(axis=0) if low is None else np.minimum(low, chunk.q.min(axis=0))
        high = chunk.q.max(axis=0) if high is None else np.maximum(high, chunk.q.max(axis=0))
        speed2 = np.sum(chunk.dq**2, axis=0) + (0.0 if speed2 is None else speed2)
        rows += len(chunk.q)
    span, speed = high - low, np.sqrt(speed2 / rows)
    still = (span < MOVING_SPAN) | (speed < 1e-4)
    noise_only = ~still & (False if moving is None else ~np.asarray(moving, dtype=bool))
    return {
        joint: f"range {span[k]:.2g}, rms speed {speed[k]:.2g}"
        + (", within its position noise" if noise_only[k] else "")
        for k, joint in enumerate(model.joint_names)
        if still[k] or noise_only[k]
    }


def robust_std(training: TrainingData, columns: np.ndarray, ls: LeastSquaresResult) -> np.ndarray:
    """Standard deviations valid for serially correlated residuals (Newey–West) of ``ls``, a
    least-squares fit of ``training``'s system, once per fit (the weighting's choice and the
    uncertainty both ask for WLS's); read-only."""
    key = ("robust_std", np.asarray(columns).tobytes(), np.asarray(ls.weights).tobytes())
    return training.system.remembered(key, lambda: _robust_std(training.store, columns, ls))


def _robust_std(store: ObservationStore, columns: np.ndarray, ls: LeastSquaresResult) -> np.ndarray:
    """:func:`robust_std` from the weighted scores accumulated chunk by chunk."""
    weights = ls.weights[None, :]
    # filled in place: a list of chunks' scores and its concatenation held twice the scores
    # (1e7 samples: 2 x 184 MB)
    scores = np.empty((store.n_rows, len(columns)))
    residuals = np.empty((store.n_rows, len(ls.weights)))
    start = 0
    for chunk in store:
        rows = slice(start, start + len(chunk.t))
        W = chunk.W[:, :, columns]
        residuals[rows] = (chunk.tau - W @ ls.theta) * weights
        scores[rows] = np.einsum("tjb,tj->tb", W * weights[:, :, None], residuals[rows])
        start = rows.stop
    covariance, _ = newey_west_covariance(scores, residuals, ls.covariance / ls.sigma2)
    std = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    std.flags.writeable = False
    return std


def variance_inflation(std: np.ndarray, std_robust: np.ndarray) -> float:
    """How much serially correlated residuals inflate the estimates' variance: the median over
    parameters of ``(std_robust / std)^2`` (Newey-West over paper C's eq. 6), at least 1. About 1
    where the residuals are white noise; large where they are a misfit of the model, smooth in
    time like the motion that causes it."""
    ratio = (np.asarray(std_robust) / np.asarray(std)) ** 2
    ratio = ratio[np.isfinite(ratio)]
    return float(max(np.median(ratio), 1.0)) if ratio.size else 1.0


def filtered_fit(
    model: RobotModel,
    store: ObservationStore,
    theta: np.ndarray,
    columns: np.ndarray | None = None,
) -> tuple[FitMetrics, np.ndarray]:
    """Metrics of ``W[:, :, columns] @ theta`` against the filtered torques, and the residual
    series (M, n) (columns None: every standard column)."""
    sums, residuals = MetricsAccumulator(model.fitted), []
    for chunk in store:
        W = chunk.W if columns is None else chunk.W[:, :, columns]
        predicted = W @ theta
        sums.add(chunk.tau, predicted)
        residuals.append(chunk.tau - predicted)
    return sums.metrics(), np.concatenate(residuals)


def observe_validation(
    model: RobotModel, validation: list[Recording], options: list, theta: np.ndarray | None
) -> tuple[ObservationStore, FitMetrics | None]:
    """The validation recordings' observations (stored; ``options``: each one's filter) and,
    with ``theta``, the metrics of its prediction of their filtered torques."""
    store, sums = ObservationStore(), MetricsAccumulator(model.fitted)
    for k, (recording, filter_options) in enumerate(zip(validation, options, strict=True)):
        for chunk in observation_chunks(model, recording, filter_options):
            chunk = without_unfitted(chunk, model.fitted)
            store.append(chunk, k)
            if theta is not None:
                sums.add(chunk.tau, chunk.W @ theta)
    return store, None if theta is None else sums.metrics()
