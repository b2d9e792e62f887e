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


@pytest.mark.filterwarnings("error")  # as above: the fuzz records warnings all the same
def test_a_stray_warning_is_counted_with_the_line_that_raised_it(tmp_path, monkeypatch):
    """A Python warning raised inside a command (here by a wrapped shape parser) is one
    'warning' problem naming its category, text and file:line; it was a 'message' problem only
    when it reached stderr, and under pytest's error filter a traceback."""
    import warnings

    import physid.impacts.specs as specs

    original = specs.parse_shape

    def noisy(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        warnings.warn("a stray warning", UserWarning, stacklevel=1)
        return original(*args, **kwargs)

    monkeypatch.setattr(specs, "parse_shape", noisy)
    args = [
        "impacts",
        "simulate",
        "--shape",
        "ellipse:0.05,0.025",
        "--surface",
        "line:0,0",
        "--q0",
        "0,0.1,0",
        "--v0",
        "0,0,0",
        "--mu",
        "0.3",
        "--restitution",
        "0.2",
        "--duration",
        "0.05",
        "--fps",
        "60",
        "--noise",
        "0",
        "--out",
        "p.csv",
    ]
    problems, outcome, _ = fuzz.invoke_and_judge(args, tmp_path, [tmp_path / "p.csv"])
    line = noisy.__code__.co_firstlineno + 1
    assert outcome == "exit 0" and problems == [
        f"warning: UserWarning: a stray warning ({__file__}:{line})"
    ]
