"""physid's results hold no reference cycles: the command line collects cycles rarely
(``physid.cli._collect_cycles_rarely``), so an array held by a cycle would stay in memory until
the next pass instead of being freed when its last reference goes."""

from __future__ import annotations

import gc

import numpy as np
from conftest import EXAMPLES, KUKA


def test_identify_leaves_no_cycles_of_physid_objects_or_arrays(tmp_path) -> None:
    from physid.workflows import run_identify

    urdf, manifest = KUKA / "kuka_lwr4.urdf", EXAMPLES / "kuka_lwr4" / "measurements_2.yaml"
    run_identify(urdf, [manifest], out_dir=tmp_path / "warm", overwrite=True)  # imports, caches
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run_identify(urdf, [manifest], out_dir=tmp_path / "run", overwrite=True)
        gc.collect()
        garbage = list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    physid_objects = sorted(
        {type(o).__qualname__ for o in garbage if type(o).__module__.startswith("physid")}
    )
    held = [r for o in garbage for r in gc.get_referents(o) if isinstance(r, np.ndarray)]
    assert physid_objects == []
    assert sum(a.nbytes for a in held) == 0
