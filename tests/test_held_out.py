"""Validation recordings that share samples with the training ones are said to be not held out
(physid.offline.checks.held_out)."""

from __future__ import annotations

import numpy as np

from physid.offline.checks.held_out import not_held_out_findings


def not_held_out_warnings(train, validation):  # noqa: ANN001, ANN201
    return [f.message for f in not_held_out_findings(train, validation)]


def test_a_validation_recording_that_is_training_data_is_named(arm_experiment):
    train = arm_experiment.train.recorded
    held = arm_experiment.validation.recorded
    assert not_held_out_warnings([train], [held]) == []
    same = not_held_out_warnings([train], [held, train])
    assert len(same) == 1 and "100 % of its samples are training samples" in same[0]
    tail = train.part(train.n_samples // 2, train.n_samples)  # the second half again
    assert "100 %" in not_held_out_warnings([train], [tail])[0]
    quarter = train.part(0, train.n_samples // 4)  # trained on a quarter, validated on all
    assert "25 %" in not_held_out_warnings([quarter], [train])[0]


def test_recordings_of_mixed_float_types_are_compared(arm_experiment):
    """float32 arrays (a Python API user's) beside float64 ones: compared as float64, in which
    float32 values are exact (a view of rows of different byte sizes raised a type promotion
    error, review 2026-11-27)."""
    from dataclasses import replace

    train = arm_experiment.train.recorded
    single = replace(train, t=train.t.astype(np.float32), q=train.q.astype(np.float32),
                     tau=train.tau.astype(np.float32))  # fmt: skip
    assert not_held_out_warnings([single], [arm_experiment.validation.recorded]) == []
    assert "100 %" in not_held_out_warnings([single], [single])[0]
