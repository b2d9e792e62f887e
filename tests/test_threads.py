"""physid's Python API runs with one BLAS thread unless the user chose a count (physid.threads).

The command line sets OPENBLAS_NUM_THREADS before NumPy loads; a Python user imports NumPy
first, and OpenBLAS' spinning workers made ``physid.identify`` 13x more CPU-hungry
(83.9 against 6.3 CPU s on the KUKA LWR4+ file, 2 shared cores). Checked in a fresh
interpreter: tests/conftest.py sets the thread variables before NumPy loads, which caps the
pools of this process at one thread.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import pytest

import physid
from physid.threads import BLAS_THREAD_VARIABLES

_PROBE = """
import json
import numpy, scipy.linalg
from threadpoolctl import threadpool_info, threadpool_limits
from physid.threads import one_blas_thread

def blas():
    return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]

with threadpool_limits(limits=2, user_api="blas"):  # a user's pools, 2 threads each
    outer = blas()
    inside = one_blas_thread(blas)()
    after = blas()
print(json.dumps({"outer": outer, "inside": inside, "after": after}))
"""


def _probe(**settings: str) -> dict:
    environment = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}
    done = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                          env=environment | settings, check=True)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_inside_an_api_call_every_blas_pool_has_one_thread():
    seen = _probe()
    if max(seen["outer"]) < 2:
        pytest.skip("one CPU: OpenBLAS starts with one thread, nothing to limit")
    assert seen["inside"] and all(n == 1 for n in seen["inside"])
    assert seen["after"] == seen["outer"]  # restored on the way out


def test_a_user_who_chose_a_thread_count_keeps_it():
    seen = _probe(OPENBLAS_NUM_THREADS="2")
    if max(seen["outer"]) < 2:
        pytest.skip("one CPU: OpenBLAS starts with one thread, nothing to limit")
    assert seen["inside"] == seen["outer"]


def test_every_api_function_is_limited():
    faces = {n: getattr(physid, n) for n in physid.__all__ if n != "load_params"}
    functions = {n: f for n, f in faces.items() if inspect.isfunction(f)}
    assert len(functions) >= 13  # identify, validate and the eleven estimator faces
    bare = [n for n, f in functions.items() if getattr(f, "__wrapped__", None) is None]
    assert not bare, f"not run with one BLAS thread: {bare}"
