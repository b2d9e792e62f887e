"""The plain-line progress of physid.progress (logs, pipes, CI): a final "(done)" line only for
work that was done; a loop stopped early or a block left by an error leaves the error's own line
as the last word (fuzzed: 'simulate: 115/612 steps (done)' above a step-solver error)."""

from __future__ import annotations

import io

import pytest

from physid.progress import progress


def _lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


def test_a_finished_loop_ends_with_done():
    stream = io.StringIO()
    assert list(progress(range(5), desc="simulate", unit="step", stream=stream)) == list(range(5))
    assert _lines(stream) == ["simulate: 5/5 steps, 0 s (done)"]


def test_a_loop_stopped_early_does_not_say_done():
    stream = io.StringIO()
    for k in progress(range(612), desc="simulate", unit="step", stream=stream):
        if k == 115:
            break
    assert _lines(stream) == []


def test_a_block_left_by_an_error_does_not_say_done():
    stream = io.StringIO()
    with pytest.raises(RuntimeError), progress(total=3, desc="fit", stream=stream) as bar:
        bar.update()
        raise RuntimeError("step failed")
    assert _lines(stream) == []
    with progress(total=3, desc="fit", stream=stream) as bar:
        bar.update(3)
    assert _lines(stream) == ["fit: 3/3 its, 0 s (done)"]
