"""A fixed, seeded sample of ``benchmarks/fuzz.py``'s all-commands fuzzing (issue 31).

Every command and subcommand gets damaged option values, input files (CSV/NPZ/Parquet/manifest,
YAML configs and sweep specs, params JSON, URDF, camera poses; recordings reversed, shuffled, in
ms, x1000, constant, a few rows; URDFs without inertial, zero mass, zero axis; special files) and
output paths (under a file, empty, existing, read-only, very long, Unicode, locked), run
in-process. Any traceback, unclean message, partial output, NaN written or printed on success,
or C-level stderr fails. The slow estimators (identify, impacts identify) are stubbed once their
inputs are accepted, so the sample stays under 3 minutes; ``python benchmarks/fuzz.py --cases
5000`` runs them for real.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import fuzz  # noqa: E402
import fuzz_commands  # noqa: E402

# cases per command: the sample is 20 per command (8 for the demo, whose simulation is slow)
CASES = {command.name: 20 for command in fuzz_commands.COMMANDS} | {"demo": 8}


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    return fuzz.make_all_seeds(tmp_path_factory.mktemp("fuzz_seeds"))


@pytest.mark.filterwarnings("error")  # a warning would reach stderr beside the one line
@pytest.mark.parametrize("name", sorted(CASES))
def test_damaged_command_lines_end_cleanly(seeds, tmp_path, name):
    (command,) = [c for c in fuzz_commands.COMMANDS if c.name == name]
    rng = random.Random(f"issue-31/{name}")
    problems = []
    for _ in range(CASES[name]):
        with fuzz.stub_estimator(True):
            found, _ = fuzz_commands.run_command_case(rng, command, seeds, tmp_path)
        problems += found
    assert not problems, problems
