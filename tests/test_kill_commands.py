"""SIGKILL and concurrent runs of real ``physid`` processes (issue 31, item 5), through
``benchmarks/kill_runs.py`` (which runs every command, 30 kills each): a run killed at a random
moment leaves no output that does not parse, the next run into the same path succeeds and
leaves no staging folder or temporary file, and two runs started together into one folder end
0 or 2 'in use' with a folder that parses."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import kill_runs  # noqa: E402

CLEAN = {"orphans": 0, "partial outputs": 0, "rerun failures": 0, "left behind": 0}


@pytest.fixture(scope="module")
def lines(tmp_path_factory):
    return kill_runs.command_lines(tmp_path_factory.mktemp("kills"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
@pytest.mark.parametrize("name", ["online", "multibody simulate", "export", "excite"])
def test_a_sigkill_at_a_random_moment_leaves_nothing_partial(lines, name):
    argv, out = lines[name]
    delay = random.Random(f"issue-31/{name}").uniform(0.5, 4.0)  # imports, reading, writing
    assert kill_runs.kill_once(argv, out, delay, grace=1.0) == CLEAN


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
def test_two_runs_into_one_folder_at_once(lines):
    argv, out = lines["multibody simulate"]
    assert kill_runs.race_once(argv, out) == {"race failures": 0, "race corrupt": 0}
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "simulation.json",
        "trajectory.csv",
    ]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="uses /proc")
def test_a_killed_sweep_takes_its_local_ray_instance_with_it(lines):
    """Ray's processes outlived a SIGKILLed ``physid sweep`` by about 60 s (its raylet dies with
    the driver, its agents and workers did not); physid.sweep.reaper kills them within the
    grace second. Killed at 5 s: Ray is up (it starts in 3-5 s here), the two jobs are not done."""
    argv, out = lines["sweep"]
    assert kill_runs.kill_once(argv, out, 5.0, grace=2.0) == CLEAN
