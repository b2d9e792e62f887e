"""Issue 25 item 5: one pass plan over a recording (physid.offline.observe.passes).

A ``physid identify`` run reads and validates each recording file once, and every trip back to
the samples goes through the listed passes; the counts are those of the run itself, taken by
wrapping the reader, the time-base check and the windowed readers."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import physid.offline.observe.passes as passes
import physid.recordings.timebase as timebase
import physid.recordings.trajectory as trajectory
from physid.recordings.trajectory import write_trajectory_csv
from physid.sim.arm import arm6_urdf_path
from physid.workflows import run_identify


def _counting(monkeypatch: pytest.MonkeyPatch, module: object, name: str, key) -> Counter:  # noqa: ANN001
    counts: Counter = Counter()
    original = getattr(module, name)

    def wrapped(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        counts[key(*args, **kwargs)] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)
    return counts


@pytest.fixture(scope="module")
def recording_files(arm_experiment, tmp_path_factory) -> tuple[Path, Path]:  # noqa: ANN001
    folder = tmp_path_factory.mktemp("passes")
    return (
        write_trajectory_csv(folder / "train.csv", arm_experiment.train.recorded),
        write_trajectory_csv(folder / "validate.csv", arm_experiment.validation.recorded),
    )


def test_identify_reads_and_validates_each_recording_file_once(
    monkeypatch: pytest.MonkeyPatch, recording_files: tuple[Path, Path], tmp_path: Path
) -> None:
    reads = _counting(monkeypatch, trajectory, "read_table", lambda path: Path(path).name)
    checks = _counting(monkeypatch, timebase, "check_time_base", lambda t, q: len(t))
    windows = _counting(monkeypatch, passes, "prepared_windows", lambda r, *_: id(r))
    recorded = _counting(monkeypatch, passes, "raw_windows", lambda r, *_: id(r))
    train, validate = recording_files
    run_identify(arm6_urdf_path(), [train], validate=[validate], out_dir=tmp_path / "out")
    assert reads == {"train.csv": 1, "validate.csv": 1}
    assert sorted(checks.values()) == [1, 1]  # one time-base check per file
    assert sum(windows.values()) > 0 and sum(recorded.values()) > 0  # the passes took them all
