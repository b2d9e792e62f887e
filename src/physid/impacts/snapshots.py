"""Impact snapshots: one row per impact, the velocities just before and after it (paper D §3.2).

CSV columns (SI units, world frame, one planar body; a header names them in any order):

* ``vx_pre, vy_pre, omega_pre`` — centre-of-mass velocity [m/s] and angular velocity [rad/s]
  just before the impact; ``vx_post, vy_post, omega_post`` — just after it;
* ``px, py`` — the contact point relative to the centre of mass, GQ [m];
* ``nx, ny`` — the unit contact normal, pointing from the surface into the body;
* instead of ``px, py, nx, ny``: the planar contact Jacobian rows ``jn_x, jn_y, jn_w`` (normal,
  u_n = jn·(v_x, v_y, ω)) and ``jt_x, jt_y, jt_w`` (tangent); n = (jn_x, jn_y) and the tangent must
  be unit and perpendicular, and GQ follows from jn_w = GQ × n, jt_w = GQ × t;
* optional ``duration`` [s] — time between the pre and post samples: the gravity impulse over it
  is removed from the post velocity (0 for instantaneous snapshots); optional ``mass`` [kg] — only
  scales the reported impulses, the same in every row; optional ``body`` — a label that must be
  the same in every row (one body per file); optional ``id`` — a label used in the flags.

Every problem is an :class:`InputError` naming the file, the data row (from 1) and the column.
:func:`snapshots_from_simulation` cuts the same snapshots out of a physid simulation.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.files.io import read_text_file
from physid.impacts.geometry import Line, Shape, contact_frames
from physid.impacts.results import SimulationResult

VELOCITY_COLUMNS = ("vx_pre", "vy_pre", "omega_pre", "vx_post", "vy_post", "omega_post")
GEOMETRY_COLUMNS = ("px", "py", "nx", "ny")
REQUIRED_COLUMNS = VELOCITY_COLUMNS + GEOMETRY_COLUMNS
JACOBIAN_COLUMNS = ("jn_x", "jn_y", "jn_w", "jt_x", "jt_y", "jt_w")
OPTIONAL_NUMBERS = ("duration", "mass")
#: |value| limits per column kind: m/s, rad/s, m, s, kg.
LIMITS = {"v": 1e4, "omega": 1e5, "p": 1e3, "duration": 10.0, "mass": 1e6}
#: A normal whose length differs from 1 by more than this is refused (not silently normalised).
UNIT_TOLERANCE = 1e-3


@dataclass(frozen=True)
class Snapshots:
    """Impacts of one body: ``v_pre``, ``v_post`` (n, 3) [m/s, m/s, rad/s], ``arm`` GQ (n, 2) [m],
    ``normal`` (n, 2), ``duration`` (n,) [s], ``mass`` [kg], ``labels`` (n,) for messages;
    ``jacobian``: the file gave the contact Jacobian rows (the findings then name those
    columns)."""

    v_pre: np.ndarray
    v_post: np.ndarray
    arm: np.ndarray
    normal: np.ndarray
    duration: np.ndarray
    mass: float
    labels: tuple[str, ...]
    jacobian: bool = False

    def __len__(self) -> int:
        return int(self.v_pre.shape[0])


def _limit(name: str) -> float:
    if name.startswith("omega"):
        return LIMITS["omega"]
    if name.startswith("v"):
        return LIMITS["v"]
    return LIMITS.get(name, LIMITS["p"])


def read_snapshots_csv(path: str | Path) -> Snapshots:
    """Read and check a snapshot file (see the module docstring for the columns)."""
    source = str(path)
    header, data, jacobian = _table(path, source)
    geometry = JACOBIAN_COLUMNS if jacobian else GEOMETRY_COLUMNS
    numeric = [*VELOCITY_COLUMNS, *geometry] + [c for c in OPTIONAL_NUMBERS if c in header]
    col = _numbers(header, data, numeric, source)
    if jacobian:
        col |= _geometry_from_jacobian(col, source)
    length = np.hypot(col["nx"], col["ny"])
    names = "jn_x,jn_y" if jacobian else "nx,ny"
    bad = np.flatnonzero(np.abs(length - 1.0) > UNIT_TOLERANCE)
    if bad.size:
        raise InputError(
            f"row {bad[0] + 1}, columns {names}: the normal has length {length[bad[0]]:.6g}, "
            "not 1 (a unit vector is expected)",
            source=source,
        )
    _check_optional(header, data, col, source)
    labels = (
        tuple(f"row {r} (id {row[header.index('id')].strip()})" for r, row in enumerate(data, 1))
        if "id" in header
        else tuple(f"row {r}" for r in range(1, len(data) + 1))
    )
    return Snapshots(
        v_pre=np.column_stack([col[c] for c in VELOCITY_COLUMNS[:3]]),
        v_post=np.column_stack([col[c] for c in VELOCITY_COLUMNS[3:]]),
        arm=np.column_stack([col["px"], col["py"]]),
        normal=np.column_stack([col["nx"], col["ny"]]) / length[:, None],
        duration=col.get("duration", np.zeros(len(data))),
        mass=float(col["mass"][0]) if "mass" in col else 1.0,
        labels=labels,
        jacobian=jacobian,
    )


def _table(path: str | Path, source: str) -> tuple[list[str], list[list[str]], bool]:
    """The header, the data rows (trailing blank lines dropped) and whether the contact geometry
    is given as Jacobian rows; an error names the missing columns."""
    rows = list(csv.reader(io.StringIO(read_text_file(path, "snapshot file"))))
    while rows and not any(cell.strip() for cell in rows[-1]):
        rows.pop()
    if not rows:
        raise InputError("the file is empty", source=source)
    header = [h.strip() for h in rows[0]]
    jacobian = not all(c in header for c in GEOMETRY_COLUMNS) and all(
        c in header for c in JACOBIAN_COLUMNS
    )
    geometry = JACOBIAN_COLUMNS if jacobian else GEOMETRY_COLUMNS
    missing = [c for c in VELOCITY_COLUMNS + geometry if c not in header]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}; a snapshot file needs "
            f"{','.join(REQUIRED_COLUMNS)} (or {','.join(JACOBIAN_COLUMNS)} for px,py,nx,ny)",
            source=source,
        )
    if len(rows) < 2:
        raise InputError("no data rows after the header", source=source)
    return header, rows[1:], jacobian


def _numbers(
    header: list[str], data: list[list[str]], numeric: list[str], source: str
) -> dict[str, np.ndarray]:
    """The ``numeric`` columns as arrays; an error names the row and column of a cell that is
    not a finite number within its column's limit."""
    values = np.empty((len(data), len(numeric)))
    for r, row in enumerate(data, start=1):
        if len(row) != len(header):
            raise InputError(
                f"row {r}: {len(row)} fields, the header has {len(header)}", source=source
            )
        for c, name in enumerate(numeric):
            cell = row[header.index(name)].strip()
            try:
                value = float(cell)
            except ValueError:
                raise InputError(
                    f"row {r}, column {name}: {cell!r} is not a number", source=source
                ) from None
            if not math.isfinite(value) or abs(value) > _limit(name):
                raise InputError(
                    f"row {r}, column {name}: value is {cell}, outside ±{_limit(name):g}",
                    source=source,
                )
            values[r - 1, c] = value
    return {name: values[:, i] for i, name in enumerate(numeric)}


def _check_optional(
    header: list[str], data: list[list[str]], col: dict[str, np.ndarray], source: str
) -> None:
    """``duration`` ≥ 0 and ``mass`` > 0; ``mass`` and ``body`` the same in every row."""
    for name in OPTIONAL_NUMBERS:
        if name in col and np.any(col[name] < 0 if name == "duration" else col[name] <= 0):
            r = int(np.flatnonzero(col[name] < 0 if name == "duration" else col[name] <= 0)[0])
            raise InputError(
                f"row {r + 1}, column {name}: value is {col[name][r]:g}, must be "
                + ("≥ 0" if name == "duration" else "> 0"),
                source=source,
            )
    for name in ("mass", "body"):
        if name not in header:
            continue
        cells = [row[header.index(name)].strip() for row in data]
        first = col["mass"][0] if name == "mass" else cells[0]
        for r, cell in enumerate(cells, start=1):
            same = (
                abs(col["mass"][r - 1] - first) <= 1e-9 * first if name == "mass" else cell == first
            )
            if not same:
                raise InputError(
                    f"row {r}, column {name}: {cell!r} differs from row 1 ({cells[0]!r}): "
                    "mixed bodies; a snapshot file holds the impacts of one body",
                    source=source,
                )


def _geometry_from_jacobian(col: dict[str, np.ndarray], source: str) -> dict[str, np.ndarray]:
    """px, py, nx, ny from the contact Jacobian rows: n = jn[:2], t = jt[:2] (unit, n ⊥ t) and
    GQ from GQ × n = jn_w, GQ × t = jt_w (a 2×2 system of determinant n × t = ±1)."""
    n = np.column_stack([col["jn_x"], col["jn_y"]])
    t = np.column_stack([col["jt_x"], col["jt_y"]])
    n_len = np.hypot(n[:, 0], n[:, 1])
    short = np.flatnonzero(~(np.abs(n_len - 1.0) <= UNIT_TOLERANCE))  # NaN included
    if short.size:
        raise InputError(
            f"row {short[0] + 1}, columns jn_x,jn_y: the normal has length "
            f"{n_len[short[0]]:.6g}; a unit vector is expected",
            source=source,
        )
    t_len, dot = np.hypot(t[:, 0], t[:, 1]), np.abs(np.einsum("ij,ij->i", n, t))
    bad = np.flatnonzero((np.abs(t_len - 1.0) > UNIT_TOLERANCE) | (dot > UNIT_TOLERANCE))
    if bad.size:
        raise InputError(
            f"row {bad[0] + 1}, columns jt_x,jt_y: the tangent has length {t_len[bad[0]]:.6g} "
            f"and n·t = {dot[bad[0]]:.3g}; a unit vector perpendicular to the normal is expected",
            source=source,
        )
    det = n[:, 1] * (-t[:, 0]) + n[:, 0] * t[:, 1]  # of [[n_y, -n_x], [t_y, -t_x]]
    px = (col["jn_w"] * (-t[:, 0]) + n[:, 0] * col["jt_w"]) / det
    py = (n[:, 1] * col["jt_w"] - t[:, 1] * col["jn_w"]) / det
    return {"px": px, "py": py, "nx": n[:, 0], "ny": n[:, 1]}


def snapshots_csv_text(snaps: Snapshots) -> str:
    """The CSV text of ``snaps`` (17 significant digits, reads back exactly)."""
    header = [*REQUIRED_COLUMNS, "duration", "mass"]
    lines = [",".join(header)]
    for i in range(len(snaps)):
        cells = [*snaps.v_pre[i], *snaps.v_post[i], *snaps.arm[i], *snaps.normal[i]]
        cells += [snaps.duration[i], snaps.mass]
        lines.append(",".join(f"{float(c):.17g}" for c in cells))
    return "\n".join(lines) + "\n"


def snapshots_from_simulation(
    sim: SimulationResult, shape: Shape, lines: list[Line], *, min_approach: float = 0.05
) -> Snapshots:
    """The impacts of a physid simulation as snapshots: every step whose single active contact
    approaches faster than ``min_approach`` [m/s] (resting and sliding contact is no impact).

    GQ and n are those at q^k (the step freezes them, eq. 16); pre is v^k, post v^{k+1} and the
    duration the step h, over which gravity acted.
    """
    rows = []
    for k in np.flatnonzero(sim.active.sum(axis=1) == 1):
        j = int(np.flatnonzero(sim.active[k])[0])
        frames = contact_frames(shape, lines, sim.q[k])
        arm, n = frames.arm[j], frames.normal[j]
        u_n = n @ sim.v[k, :2] + sim.v[k, 2] * (arm[0] * n[1] - arm[1] * n[0])
        if u_n < -min_approach:
            rows.append((k, arm, n))
    return Snapshots(
        v_pre=np.array([sim.v[k] for k, _, _ in rows]).reshape(-1, 3),
        v_post=np.array([sim.v[k + 1] for k, _, _ in rows]).reshape(-1, 3),
        arm=np.array([a for _, a, _ in rows]).reshape(-1, 2),
        normal=np.array([n for _, _, n in rows]).reshape(-1, 2),
        duration=np.full(len(rows), sim.dt),
        mass=sim.mass,
        labels=tuple(f"step {k}" for k, _, _ in rows),
    )
