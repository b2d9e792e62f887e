"""Output folders stay true (issue 10): a run owns its --out (lock), stale files and staging
folders of earlier or killed runs go, foreign files need --overwrite, and figure workers die
with their parent."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_robustness_inputs import URDF, assert_one_line_error, make_recording

from physid.errors import InputError
from physid.files.io import LOCK_NAME, atomic_output_dir


def _write(target: Path, *names: str, overwrite=None) -> None:
    with atomic_output_dir(target, overwrite=overwrite) as staging:
        for name in names:
            (staging / name).write_text(name)


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    return make_recording(tmp_path_factory.mktemp("rec"), seconds=1.0, rate_hz=100.0)


_HOLDER = """
import sys, time
from physid.files.io import claim_output_dir
with claim_output_dir(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_a_live_lock_refuses_a_second_run(recording, tmp_path):
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(out), "30"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        args = ("identify", "--urdf", URDF, "--data", recording, "--out", out, "--quiet")
        assert_one_line_error(args, "--out", f"in use by another physid run (pid {holder.pid})")
        assert (out / LOCK_NAME).exists()
    finally:
        holder.kill()
        holder.wait()
    # killed while holding it: the kernel released the lock, the next run takes the folder
    _write(out, "params.json")
    assert not (out / LOCK_NAME).exists()


_RACER = """
import os, sys, time
from physid.errors import InputError
from physid.files.io import claim_output_dir
out, log, start = sys.argv[1], sys.argv[2], float(sys.argv[3])
while time.time() < start:
    pass
try:
    with claim_output_dir(out):
        entered = time.time()
        time.sleep(0.05)
        with open(log, "a") as f:
            f.write(f"{entered} {time.time()}\\n")
except InputError:
    pass
"""


def test_concurrent_runs_on_a_stale_lock_never_both_own_the_folder(tmp_path):
    """Eight runs released at once on a folder whose lock names a dead process: at most one
    owns it at any time (a pid-file lock let two that both saw the dead pid both proceed)."""
    out, log = tmp_path / "out", tmp_path / "log.txt"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / LOCK_NAME).write_text(str(dead.pid))
    start = time.time() + 3.0
    racers = [
        subprocess.Popen([sys.executable, "-c", _RACER, str(out), str(log), str(start)])
        for _ in range(8)
    ]
    for racer in racers:
        assert racer.wait(timeout=60) == 0
    intervals = sorted(tuple(map(float, line.split())) for line in log.read_text().splitlines())
    assert intervals  # someone got it
    for (_, end), (begin, _) in zip(intervals, intervals[1:], strict=False):
        assert begin >= end  # no two owners at once
    assert not (out / LOCK_NAME).exists()


def test_a_dead_lock_and_a_stale_staging_folder_are_cleaned(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / LOCK_NAME).write_text(str(dead.pid))
    stale = tmp_path / f".out.{dead.pid}.abcd1234.staging"
    stale.mkdir()
    (stale / "params.json").write_text("{")
    _write(out, "params.json")
    assert not stale.exists() and not (out / LOCK_NAME).exists()
    assert (out / "params.json").read_text() == "params.json"
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_files_of_the_previous_run_that_were_not_rewritten_are_removed(tmp_path):
    out = tmp_path / "out"
    _write(out, "params.json", "torque_validation.png")
    _write(out, "params.json")
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["params.json"]


def test_foreign_files_are_refused_unless_overwrite(recording, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="--overwrite"):
        _write(out, "params.json", overwrite=False)
    assert (out / "notes.txt").exists() and not (out / LOCK_NAME).exists()
    args = ("identify", "--urdf", URDF, "--data", recording, "--out", out, "--quiet")
    assert_one_line_error(args, "--out", "notes.txt")
    _write(out, "params.json", overwrite=True)
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["params.json"]


def test_a_failed_run_leaves_no_folder_and_no_lock(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(RuntimeError), atomic_output_dir(out) as staging:
        (staging / "params.json").write_text("{}")
        raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []
