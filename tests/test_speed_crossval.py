"""The raw scoring samples of the cross-validation (physid.offline.observe.crossval.RowPool): the
folds of any fold plan partition them, and the regressor built once for the pool, sliced, is
the regressor of each fold's own states."""

from __future__ import annotations

import numpy as np

from physid.files.config import FilterConfig
from physid.offline.observe.crossval import raw_rows, row_pool
from physid.offline.observe.folds import FoldPlan
from physid.robot.regressor import inertial_regressor, joint_term_regressor


def test_folds_of_any_plan_partition_the_pool_and_share_its_regressor(arm_experiment) -> None:
    model = arm_experiment.model
    recording = arm_experiment.train.recorded
    options = FilterConfig()
    pool = row_pool(model, [recording], options)
    by_time = FoldPlan.of([recording])
    by_phase = FoldPlan(by_time.edges, (3.0,))  # quarters of a 3 s "period"
    samples = np.arange(len(pool.t))
    for plan in (by_time, by_phase):
        folds = pool.split(plan)
        index = np.concatenate([samples[fold.rows] for fold in folds])
        assert np.array_equal(np.sort(index), samples)  # each sample once
        for k, fold in enumerate(folds):
            assert np.all(np.diff(samples[fold.rows]) > 0)  # in recording order
            assert np.all(plan.fold(0, pool.t[fold.rows]) == k)
            np.testing.assert_array_equal(fold.q, pool.q[fold.rows])
            direct = np.concatenate(
                [
                    inertial_regressor(model, fold.q, fold.dq, fold.ddq),
                    joint_term_regressor(model, fold.dq, fold.ddq),
                ],
                axis=-1,
            )
            np.testing.assert_array_equal(fold.regressor(model), direct)
            theta = arm_experiment.theta_true
            np.testing.assert_allclose(
                fold.predict(model, theta),
                direct @ theta,
                rtol=1e-12,
                atol=1e-12 * np.abs(direct @ theta).max(),
            )
    assert len(pool._inertial) == 1  # one regressor for both plans' folds
    again = raw_rows(model, [recording], options, by_time)
    for fold, same in zip(again, pool.split(by_time), strict=True):
        np.testing.assert_array_equal(fold.tau, same.tau)
        assert (fold.scored is None) == (same.scored is None)


def test_a_pool_by_fold_hands_out_views_with_the_same_scores(arm_experiment) -> None:
    """Two recordings' pool (recording order: a time block's rows lie apart) put fold by fold:
    each fold's regressor rows are a view of the pool's (no copy), and every fold holds the
    same samples, in the same order, with the same predictions."""
    model = arm_experiment.model
    recording = arm_experiment.train.recorded
    half = len(recording.t) // 2
    first, second = recording.time_slice(0, half), recording.time_slice(half, len(recording.t))
    pool = row_pool(model, [first, second], FilterConfig())
    plan = FoldPlan.of([first, second])
    theta = arm_experiment.theta_true
    as_recorded = pool.split(plan)
    grouped = pool.by_fold(plan)
    assert grouped is not pool and grouped.by_fold(plan) is grouped
    for before, after in zip(as_recorded, grouped.split(plan), strict=True):
        assert isinstance(after.rows, slice) and not isinstance(before.rows, slice)
        np.testing.assert_array_equal(after.q, before.q)
        np.testing.assert_array_equal(after.tau, before.tau)
        assert np.shares_memory(after.inertial(model), grouped.inertial(model))
        np.testing.assert_array_equal(after.predict(model, theta), before.predict(model, theta))


def test_the_pool_and_the_observations_share_one_filtering(arm_experiment, monkeypatch) -> None:
    """A cut-off candidate's scoring rows and observations of a one-window recording filter
    it once when they share a LastWindowStates, with the same rows, states and regressors as
    each pass filtering on its own."""
    import physid.offline.observe.windows as windows
    from physid.offline.observe.observations import observation_chunks
    from physid.offline.observe.preprocessing import resolve_preprocessing

    model = arm_experiment.model
    recording = arm_experiment.train.recorded
    options = resolve_preprocessing(FilterConfig(), [recording], model.layout.size).filter
    filtered = []
    estimate = windows.estimate_states
    monkeypatch.setattr(windows, "estimate_states", lambda *a: filtered.append(1) or estimate(*a))
    alone = (
        row_pool(model, [recording], options),
        list(observation_chunks(model, recording, options)),
    )
    filtered_alone = len(filtered)
    states = windows.LastWindowStates()
    shared = (
        row_pool(model, [recording], options, states=states),
        list(observation_chunks(model, recording, options, states=states)),
    )
    assert filtered_alone == 2 and len(filtered) - filtered_alone == 1
    for name in ("q", "dq", "ddq", "tau", "t"):
        np.testing.assert_array_equal(getattr(shared[0], name), getattr(alone[0], name))
    assert len(shared[1]) == len(alone[1])
    for mine, theirs in zip(shared[1], alone[1], strict=True):
        np.testing.assert_array_equal(mine.W, theirs.W)
        np.testing.assert_array_equal(mine.tau, theirs.tau)
