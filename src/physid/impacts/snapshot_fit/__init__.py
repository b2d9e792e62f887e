"""J/m and μ from impact snapshots by paper D's impact law (eq. 4 with eqs. 10–15, one contact).

* :mod:`.law` — the impact law in closed form (stick or slide) for many impacts at once;
* :mod:`.checks` — what any rigid body could do in one impact;
* :mod:`.conventions` — the sign conventions of the contact geometry, and which one the impacts
  favour;
* :mod:`.fit` — :func:`fit_snapshots`, the robust least-squares fit;
* :mod:`.verdict` — its status and findings; :mod:`.result` — :class:`SnapshotResult`,
  ``result.json`` and ``impacts.csv``.
"""

from physid.impacts.snapshot_fit.fit import fit_snapshots
from physid.impacts.snapshot_fit.result import ImpactFlag, SnapshotResult, impacts_csv_text

__all__ = ["ImpactFlag", "SnapshotResult", "fit_snapshots", "impacts_csv_text"]
