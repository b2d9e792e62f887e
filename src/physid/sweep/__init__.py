"""Sweeps: many estimator jobs on Ray (docs/architecture.md layer 8, orchestration).

* :mod:`~physid.sweep.spec` — the SPEC file (kind, base arguments, grid, jobs, seeds), checked
  and expanded into :class:`Job` s before anything runs;
* :mod:`~physid.sweep.kinds` — the job kinds: identify, validate, payload, impacts_identify,
  each calling the public entry point the CLI uses;
* :mod:`~physid.sweep.execute` — one job on a worker; :mod:`~physid.sweep.runner` — the Ray
  driver; :mod:`~physid.sweep.table` — ``results.csv`` / ``results.parquet``.

Ray is an optional dependency (``pip install ray``, or ``pip install -e ".[sweep]"`` in the
checkout); only the runner imports it.
Nothing in physid imports this package.
"""

from physid.sweep.runner import SweepSummary, run_sweep
from physid.sweep.spec import Job, SweepSpec, load_spec, parse_spec

__all__ = ["Job", "SweepSpec", "SweepSummary", "load_spec", "parse_spec", "run_sweep"]
