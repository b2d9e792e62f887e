"""Planar rigid bodies with unscheduled frictional impacts (paper D, Gabiccini & Fusco).

* :mod:`~physid.impacts.geometry` — shapes (ellipse, convex polygon), environment lines, gap,
  contact frames and grasp matrices (§3.1–3.2, §4.1);
* :func:`simulate` — the implicit-Euler time-stepping simulator with restitution (IRC) or
  impulse–gap (IGC) contacts and Coulomb friction (§3.2–3.6), per-step LCP or IPOPT NLP;
* :func:`identify` — the identification NLP of §5.1, eq. (27): J/m and μ from noisy poses;
  :func:`identify_throws` — the same NLP over several throws of one body (shared J/m and μ)
  (:mod:`~physid.impacts.identify`);
* :func:`fit_snapshots` — J/m and μ from impact snapshots by the impact law (eq. 4, eqs. 10–15)
  in closed form (:mod:`~physid.impacts.snapshot_fit`), read by :func:`read_snapshots_csv`;
* :mod:`~physid.impacts.poses` — pose files and simulated cameras; :mod:`~physid.impacts.figures`;
* :mod:`~physid.impacts.codes` — the finding codes (IM...) of every result.

SI units everywhere, angles in radians. Only J/m is identifiable from poses (§5.2).
"""

from physid.impacts.geometry import (
    STANDARD_GRAVITY,
    ContactFrames,
    Ellipse,
    Line,
    Polygon,
    contact_frames,
    grasp_matrices,
    make_polygon,
)
from physid.impacts.identify import IdentifyOptions, identify, identify_throws
from physid.impacts.poses import camera_samples, read_poses_csv
from physid.impacts.results import ImpactsIdentification, SimulationResult
from physid.impacts.simulator import simulate
from physid.impacts.snapshot_fit import SnapshotResult, fit_snapshots
from physid.impacts.snapshots import Snapshots, read_snapshots_csv
from physid.impacts.specs import parse_shape, parse_surface

__all__ = [
    "STANDARD_GRAVITY",
    "ContactFrames",
    "Ellipse",
    "IdentifyOptions",
    "ImpactsIdentification",
    "Line",
    "Polygon",
    "SimulationResult",
    "SnapshotResult",
    "Snapshots",
    "camera_samples",
    "contact_frames",
    "fit_snapshots",
    "grasp_matrices",
    "identify",
    "identify_throws",
    "make_polygon",
    "parse_shape",
    "parse_surface",
    "read_poses_csv",
    "read_snapshots_csv",
    "simulate",
]
