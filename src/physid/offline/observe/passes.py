"""The one plan of a run over its recordings: every pass that goes back to the samples.

A recording is read and validated once per run (``physid.workflows.load_trajectories``: one
:func:`physid.recordings.trajectory.load_trajectory` per file, one time-base check,
:mod:`physid.recordings.timebase`); a large CSV stays on disk as a
:class:`~physid.recordings.streamed.RecordingFile`, whose windows are read again (not parsed or
validated again) by each pass below. The passes that need the samples again are listed here and
nowhere else, and get them from one windowed reader: :func:`filtered_windows` (filtered,
differentiated, through the first decimation stage) or :func:`recorded_windows` (the states at the
recorded time stamps), both over :mod:`.windows`.

================  ========  ======================  ================================================
pass              reader    needs                   why the stored observations do not do
================  ========  ======================  ================================================
``observations``  filtered  states, regressor, τ    it is what builds them: once per cut-off
                                                    candidate (.choices) and training recording
                                                    (.training)
``speed_rms``     filtered  dq                      the deadband's scale is set before the deadband
                                                    exists, so before the store
``joint_terms``   filtered  dq, ddq per candidate   each deadband candidate (.deadband) has its own
                                                    joint-term columns; the store holds one model's
``friction``      filtered  dq                      the friction-shape derivatives
                                                    (.friction_shapes) change with the shape
                                                    parameters being fitted
``deadband``      recorded  raw τ, states           picks by the raw residual, which the decimated
                                                    store has filtered away
``crossval``      recorded  raw τ, states           the cross-validated choices (cut-off, deadband,
                                                    gravity) are scored on raw torques (.crossval)
``prediction``    recorded  raw τ, states           the reported fit (params.json, report,
                                                    validation) is on the recorded torques
                                                    (.prediction)
================  ========  ======================  ================================================

``observations`` also builds the validation recordings' observations (.training), and those of
the training recordings with a torque delay compensated (.delay_choice: once for its folds'
scores and, if the delay is kept, once in full).
The delay estimate (.delay) works on the store and the jackknife (.jackknife) on the fitted
systems: neither goes back to the samples. The filtered states are not kept between passes: with
a long recording they are, like its regressor, bounded to one window in memory; the
filters are deterministic, so every pass sees the same states. One cut-off candidate's
``crossval`` and ``observations`` passes share a :class:`~.windows.LastWindowStates`: a
recording that fits in one window is filtered once for both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from physid.offline.observe.windows import (
    LastWindowStates,
    PreparedWindow,
    Recording,
    RecordingPlan,
    prepared_windows,
    raw_windows,
)
from physid.recordings.trajectory import Trajectory

FILTERED_PASSES = ("observations", "speed_rms", "joint_terms", "friction")
RECORDED_PASSES = ("deadband", "crossval", "prediction")


def _known(name: str, passes: tuple[str, ...]) -> None:
    # A pass not in the table is a new trip back to the samples: it must be listed (docstring).
    if name not in passes:
        raise ValueError(f"{name!r} is not one of the listed passes {passes}")


def filtered_windows(
    name: str,
    recording: Recording,
    plan: RecordingPlan,
    note: Callable[[str], None] | None = None,
    states: LastWindowStates | None = None,
) -> Iterator[PreparedWindow]:
    """The windows of ``recording`` filtered by ``plan`` for the listed pass ``name``
    (``states``: shared with another pass, module docstring)."""
    _known(name, FILTERED_PASSES)
    return prepared_windows(recording, plan, note, states)


def recorded_windows(
    name: str,
    recording: Recording,
    plan: RecordingPlan,
    samples: int | None = None,
    states: LastWindowStates | None = None,
) -> Iterator[tuple[Trajectory, np.ndarray, np.ndarray, np.ndarray]]:
    """``(owned recorded samples, q, dq, ddq)`` per window for the listed pass ``name``
    (``states``: shared with another pass, module docstring)."""
    _known(name, RECORDED_PASSES)
    return raw_windows(recording, plan, samples, states)
