"""physid's results hold no reference cycles: the command line collects cycles rarely
(``physid.cli._collect_cycles_rarely``), so an array held by a cycle would stay in memory until
the next pass instead of being freed when its last reference goes.

Checked in a fresh interpreter: in the test process, another test's cached objects can become
cyclic garbage during the run (a cache evicting them) and would be counted as this run's."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import EXAMPLES, KUKA

SCRIPT = """
import gc, json, sys
import numpy as np
from physid.workflows import run_identify

urdf, manifest, out = sys.argv[1:4]
run_identify(urdf, [manifest], out_dir=out + "/warm", overwrite=True)  # imports, caches
gc.collect()
gc.set_debug(gc.DEBUG_SAVEALL)
run_identify(urdf, [manifest], out_dir=out + "/run", overwrite=True)
gc.collect()
garbage = list(gc.garbage)
gc.set_debug(0)


def described(holder):
    code = getattr(holder, "f_code", None)
    if code is not None:
        return f"frame {code.co_name} {code.co_filename}:{holder.f_lineno}"
    return f"{type(holder).__module__}.{type(holder).__qualname__}"


physid_objects = sorted(
    {type(o).__qualname__ for o in garbage if type(o).__module__.startswith("physid")}
)
holders = [o for o in garbage if any(isinstance(r, np.ndarray) for r in gc.get_referents(o))]
held = sum(r.nbytes for o in holders for r in gc.get_referents(o) if isinstance(r, np.ndarray))
found = {"physid": physid_objects, "bytes": held, "holders": [described(o) for o in holders]}
print(json.dumps(found))
"""


def test_identify_leaves_no_cycles_of_physid_objects_or_arrays(tmp_path) -> None:
    urdf, manifest = KUKA / "kuka_lwr4.urdf", EXAMPLES / "kuka_lwr4" / "measurements_2.yaml"
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(urdf), str(manifest), str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["physid"] == []
    assert found["bytes"] == 0, found["holders"]
