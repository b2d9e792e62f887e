"""J/m and Coulomb's μ from camera poses by paper D's identification NLP (§5.1, eq. 27).

* :mod:`.options` — :class:`IdentifyOptions` and the solves' iteration budget;
* :mod:`.data` — the poses checked, the fine grid (eq. 25), the free flight, the warm starts;
* :mod:`.nlp` — the NLP in CasADi and its IPOPT solve by continuation;
* :mod:`.solves` — the multistart, the retry and the profiles;
* :mod:`.verdict` — status and findings (§5.2–5.3);
* :mod:`.single` — :func:`identify`, one throw; :mod:`.pooled` — :func:`identify_throws`,
  several throws of one body with one J/m and μ (:mod:`.pooled_start`).
"""

from physid.impacts.identify.data import validate_poses
from physid.impacts.identify.options import IdentifyOptions, default_budget
from physid.impacts.identify.pooled import identify_throws
from physid.impacts.identify.single import identify

__all__ = ["IdentifyOptions", "default_budget", "identify", "identify_throws", "validate_poses"]
