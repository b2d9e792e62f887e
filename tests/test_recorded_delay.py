"""The torque delay an identification compensated is part of its model: ``validate`` and
``payload`` pair each logged torque with the motion that much earlier
(physid.workflows.recorded_delay, reading ParamsFile.torque_delay_s; the end-to-end check on
delayed MuJoCo data is tests/test_mjcf.py::test_identify_compensates_a_torque_delay_...)."""

from __future__ import annotations

import numpy as np
import pytest

from physid.errors import InputError
from physid.files.params_file import ParamsFile
from physid.recordings.trajectory import Trajectory
from physid.workflows import recorded_delay


def _params(document: dict) -> ParamsFile:
    return ParamsFile({}, {}, document=document, source="params.json")


def _recording() -> Trajectory:
    t = np.arange(0.0, 2.0, 0.002)
    q = np.column_stack([np.sin(t), np.cos(t)])
    tau = np.column_stack([np.sin(3.0 * t), t**2])
    return Trajectory(t, q, tau, ("a", "b"), source="sine")


def test_a_recorded_delay_reads_the_motion_that_much_earlier():
    recording = _recording()
    document = {"fit": {"torque_delay": {"value_s": 1e-4, "compensated_s": 0.01}}}
    (late,), delay = recorded_delay(_params(document), [recording])
    assert delay == 0.01
    # the rows whose t - 10 ms leaves the recording are dropped; the others hold the motion of
    # t - 10 ms and the torque logged at t, never interpolated (that would average its noise)
    assert late.t[0] >= recording.t[0] + 0.01 - 1e-12 and len(late.t) == len(recording.t) - 5
    np.testing.assert_array_equal(late.tau, recording.tau[5:])
    np.testing.assert_array_equal(late.t, recording.t[5:])
    expected = np.column_stack([np.sin(late.t - 0.01), np.cos(late.t - 0.01)])
    # 10 ms is 5 samples of 2 ms: the shifted instants are samples, so exact to round-off
    np.testing.assert_allclose(late.q, expected, rtol=0, atol=1e-12)
    (between,), _ = recorded_delay(_params({"fit": {"torque_delay": {"compensated_s": 0.011}}}),
                                   [recording])  # fmt: skip
    expected = np.column_stack([np.sin(between.t - 0.011), np.cos(between.t - 0.011)])
    # linear interpolation between 2 ms samples: error <= h^2/8 max|q''| = 5e-7
    np.testing.assert_allclose(between.q, expected, rtol=0, atol=6e-7)
    np.testing.assert_array_equal(between.tau, recording.tau[6:])


@pytest.mark.parametrize(
    "document",
    [{}, {"fit": {}}, {"fit": {"torque_delay": None}},
     {"fit": {"torque_delay": {"value_s": 0.002, "compensated_s": 0.0}}}],
)  # fmt: skip
def test_without_a_compensated_delay_the_recordings_are_read_as_they_are(document):
    recording = _recording()
    (same,), delay = recorded_delay(_params(document), [recording])
    assert delay == 0.0 and same is recording


@pytest.mark.parametrize("value", ["late", float("nan"), 5.0, True, [0.01]])
def test_a_damaged_recorded_delay_is_one_clear_error(value):
    document = {"fit": {"torque_delay": {"compensated_s": value}}}
    with pytest.raises(InputError, match=r"params.json: fit.torque_delay.compensated_s: expected"):
        recorded_delay(_params(document), [_recording()])


def test_a_recording_shorter_than_the_delay_is_one_clear_error():
    recording = _recording()
    short = Trajectory(recording.t[:20], recording.q[:20], recording.tau[:20], ("a", "b"),
                       source="short.csv")  # fmt: skip
    document = {"fit": {"torque_delay": {"compensated_s": 0.5}}}
    with pytest.raises(InputError, match=r"short.csv: the recording .* too short"):
        recorded_delay(_params(document), [short])


def test_a_delay_too_long_to_compensate_automatically_says_how_to_give_it():
    """The real UR10e with its torque shifted 80 ms read 59 +- 2.4 ms, reported 'not compensated'
    with a pointer to simfit only: a delay beyond the 50 ms compensated automatically now says
    its estimate reads long delays short and names the config key that compensates it."""
    from physid.offline.choose.delay import DelayEstimate

    long = DelayEstimate(0.059, 0.0024, 0.008).note()
    assert "longer than the 50 ms compensated automatically" in long
    assert "estimation.torque_delay" in long and "simfit" not in long
    short = DelayEstimate(0.0095, 0.0006, 0.008).note()
    assert "torque_delay" not in short and "physid simfit" in short


def test_a_given_delay_is_compensated_by_the_pipeline_itself(arm_experiment):
    """estimation.torque_delay given in seconds was compensated by physid.workflows only, which
    then rewrote the pipeline's delay warning by matching its text: the pipeline's identify
    called directly compensated nothing. Now identify pairs every torque with the motion that
    much earlier and says so."""
    from physid.files.config import parse_config
    from physid.offline.pipeline import identify

    config = parse_config({"estimation": {"torque_delay": 0.004}})
    result = identify(arm_experiment.model, [arm_experiment.train.recorded], config)
    assert result.delay is not None and result.delay.compensated_s == 0.004
