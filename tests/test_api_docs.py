"""docs/api.md: every python block runs, in order, in one namespace, in a fresh interpreter in a
scratch folder (as a user would paste them), so the documentation stays true in CI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
# One BLAS thread: multithreaded BLAS is many times slower on a shared CI machine.
_SINGLE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_RUNNER = """
import sys
blocks = {blocks!r}
namespace = {{"__name__": "__main__"}}
for number, block in enumerate(blocks, start=1):
    exec(compile(block, "{doc} python block " + str(number), "exec"), namespace)
assert namespace["result"].status in ("ok", "suspect")
"""


def python_blocks(text: str) -> list[str]:
    """The bodies of the ```python fenced blocks of a Markdown text."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.S | re.M)


def test_api_md_examples_run(tmp_path):
    blocks = python_blocks(DOC.read_text(encoding="utf-8"))
    assert len(blocks) >= 4
    script = _RUNNER.format(blocks=blocks, doc=DOC.name)
    run = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env=os.environ | _SINGLE_THREAD,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "identified" / "params.json").is_file()
    assert (tmp_path / "identified" / "report.html").is_file()
    assert (tmp_path / "arm_identified.urdf").is_file()
    assert "validation error" in run.stdout
    # every estimator's section ran and saved what its command writes
    for written in (
        "identified_again/params.json",
        "tool/payload.json",
        "excitation.csv",
        "excitation.json",
        "online/summary.json",
        "oe/result.json",
        "swing/trajectory.csv",
        "pendulum_fit/params.json",
        "throw.csv",
        "throw_fit/result.json",
        "snapshots_fit/result.json",
        "tuned/simfit.json",
    ):
        assert (tmp_path / written).is_file(), written


def test_api_md_shows_every_estimator():
    import physid

    text = DOC.read_text(encoding="utf-8")
    faces = [name for name in physid.__all__ if name[0].islower() and name != "load_params"]
    code = "".join(python_blocks(text))
    missing = [name for name in faces if f"physid.{name}(" not in code]
    assert missing == []
