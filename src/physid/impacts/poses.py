"""Camera pose files (CSV ``t,x,y,theta``: seconds, metres, radians) and simulated cameras.

A pose file has a header naming at least ``t``, ``x``, ``y`` and ``theta``; ``theta`` must be
continuous (not wrapped to (−π, π]), since a spinning body legitimately turns by more than π between
frames. An optional ``body`` column labels the body (throws pooled together must name the same
one). Other columns are reported and ignored.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.files.io import read_text_file, table_csv_text
from physid.impacts.results import ImpactsIdentification, SimulationResult

POSE_COLUMNS = ("t", "x", "y", "theta")
MAX_STRIDE = 1e9  # simulation steps per camera frame


def frame_stride(fps: float, dt: float) -> int:
    """Simulation steps per camera frame; an error naming ``--fps`` unless 1/fps is a whole
    number of steps of ``dt`` [s] (checked before a simulation, so none is run in vain)."""
    if not fps > 0:
        raise InputError(f"fps = {fps!r} must be positive", source="--fps")
    stride = 1.0 / (fps * dt)
    if not stride < MAX_STRIDE:  # also inf: fewer than one frame in any recording
        raise InputError(
            f"fps = {fps!r} is below one frame in {MAX_STRIDE:.0e} simulation steps", source="--fps"
        )
    if abs(stride - round(stride)) > 1e-6 or round(stride) < 1:
        raise InputError(
            f"1/fps = {1 / fps:.6g} s is not a multiple of the simulation step {dt:.6g} s",
            source="--fps",
        )
    return int(round(stride))


def camera_samples(
    sim: SimulationResult,
    fps: float,
    *,
    noise_position: float,
    noise_angle: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Sample a simulation at ``fps`` frames/s and add Gaussian noise (paper D §6.1).

    Frames fall on simulation steps: 1/fps must be a multiple of the simulation step (checked).
    ``noise_position`` [m] is the standard deviation on x and y, ``noise_angle`` [rad] on θ.
    Returns times (n,) [s] and noisy poses (n, 3).
    """
    idx = np.arange(0, sim.t.size, frame_stride(fps, sim.dt))
    sigma = np.array([noise_position, noise_position, noise_angle])
    noisy = sim.q[idx] + rng.standard_normal((idx.size, 3)) * sigma
    return sim.t[idx].copy(), noisy


def poses_to_csv_text(t: np.ndarray, q: np.ndarray) -> str:
    """CSV text with header ``t,x,y,theta``; 17 significant digits, so floats read back exactly."""
    return table_csv_text(dict(zip(POSE_COLUMNS, (t, *np.asarray(q).T), strict=True)), "%.17g")


def read_poses_csv(path: str | Path) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Read a pose file; returns (t (n,), q (n, 3), ignored column names).

    Raises :class:`InputError` naming the file, row and column of anything unreadable. Row numbers
    count data rows from 1 (the header is row 0). Monotonic time and finiteness are checked by
    :func:`physid.impacts.identify.validate_poses`.
    """
    path = Path(path)
    source = str(path)
    text = read_text_file(path, "pose file")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise InputError("the file is empty", source=source)
    header = [h.strip() for h in rows[0]]
    missing = [c for c in POSE_COLUMNS if c not in header]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)}; the header must name "
            f"{','.join(POSE_COLUMNS)}",
            source=source,
        )
    index = [header.index(c) for c in POSE_COLUMNS]
    ignored = [h for h in header if h not in POSE_COLUMNS]
    values = []
    data = rows[1:]
    while data and not any(cell.strip() for cell in data[-1]):
        data.pop()  # trailing blank lines are harmless; blank lines inside would shift row numbers
    for r, row in enumerate(data, start=1):
        if not any(cell.strip() for cell in row):
            raise InputError(f"row {r}: empty line inside the data", source=source)
        if len(row) != len(header):
            raise InputError(
                f"row {r}: {len(row)} fields, the header has {len(header)}", source=source
            )
        parsed = []
        for name, i in zip(POSE_COLUMNS, index, strict=True):
            try:
                value = float(row[i])
            except ValueError:
                raise InputError(
                    f"row {r}, column {name}: {row[i]!r} is not a number", source=source
                ) from None
            if not math.isfinite(value):
                raise InputError(
                    f"row {r}, column {name}: value is {row[i].strip()}", source=source
                )
            parsed.append(value)
        values.append(parsed)
    if not values:
        raise InputError("no data rows after the header", source=source)
    arr = np.array(values)
    return arr[:, 0], arr[:, 1:], ignored


def pose_file_body(path: str | Path) -> str | None:
    """The label in the optional ``body`` column of a pose file (None without one); a file whose
    rows name different bodies is an InputError naming the row (one file is one throw)."""
    rows = list(csv.reader(io.StringIO(read_text_file(Path(path), "pose file"))))
    header = [h.strip() for h in rows[0]] if rows else []
    if "body" not in header:
        return None
    col = header.index("body")
    labels = [
        row[col].strip() for row in rows[1:] if len(row) > col and any(c.strip() for c in row)
    ]
    for r, label in enumerate(labels, start=1):
        if label != labels[0]:
            raise InputError(
                f"row {r}, column body: {label!r} differs from row 1 ({labels[0]!r}): one pose "
                "file holds one throw of one body",
                source=str(path),
            )
    return labels[0] if labels else None


def csv_number(value: float) -> str:
    """A number's CSV cell: its shortest exact form, or empty when it is not finite (no output
    of physid holds ``nan``: an empty cell is a value that does not exist)."""
    value = float(value)
    return repr(value) if math.isfinite(value) else ""


def trajectory_csv_text(result: ImpactsIdentification) -> str:
    """The reconstructed fine-grid trajectory with the impulses acting over [t, t + h] [N·s].

    Columns ``t,x,y,theta,vx,vy,omega,cn_<i>,ct_<i>`` for every contact candidate i (1-based,
    surface and vertex in the header). The last row ends the horizon: nothing acts after it, so
    its impulses are 0. A value IPOPT left non-finite (a failed solve) is an empty cell.
    """
    names = [f"s{j + 1}" + (f"v{f + 1}" if len(result.pairs) > 1 else "") for j, f in result.pairs]
    header = ["t", "x", "y", "theta", "vx", "vy", "omega"]
    header += [f"cn_{n}" for n in names] + [f"ct_{n}" for n in names]
    out = io.StringIO()
    out.write(",".join(header) + "\n")
    n = result.t.size
    for k in range(n):
        cells = [result.t[k], *result.q[k], *result.v[k]]
        if k < n - 1:
            cells += [*result.impulse_normal[k], *result.impulse_tangent[k]]
        else:
            cells += [0.0] * (2 * len(names))
        text = [csv_number(c) for c in cells]
        out.write(",".join(text) + "\n")
    return out.getvalue()
