"""One BLAS thread for physid's Python API, as the ``physid`` command already has.

physid's linear algebra is many small factorisations (per-joint QRs of ~100 columns, SDPs of a
few hundred variables, SVDs of a few hundred rows) on which OpenBLAS' worker threads spin
instead of work. The command line sets ``OPENBLAS_NUM_THREADS=1`` before NumPy loads
(:mod:`physid.cli`); a Python user has usually imported NumPy long before physid, so the API
functions limit the BLAS pool for the duration of the call instead (``threadpoolctl``, made for
this) and restore it afterwards: on a busy machine the spinning threads can cost ten times the
CPU and wall time of one thread.

A user who sets ``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS`` keeps
that choice: the limit only replaces the library's default.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import ParamSpec, TypeVar

# the variables through which a user chooses the thread count (the CLI sets them to 1 when unset)
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

P = ParamSpec("P")
R = TypeVar("R")


def one_blas_thread(function: Callable[P, R]) -> Callable[P, R]:
    """Run ``function`` with one BLAS (and OpenMP) thread unless the user chose a thread
    count (module docstring)."""

    @functools.wraps(function)
    def limited(*args: P.args, **kwargs: P.kwargs) -> R:
        if any(os.environ.get(name) for name in BLAS_THREAD_VARIABLES):
            return function(*args, **kwargs)
        # threadpoolctl limits the libraries loaded when the limit is set: load SciPy's own
        # OpenBLAS (the calls below import SciPy lazily) before, not after
        import scipy.linalg  # noqa: F401
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            return function(*args, **kwargs)

    return limited
