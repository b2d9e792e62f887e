"""API faces of ``physid impacts simulate``, ``identify`` and ``identify-snapshots`` (paper D:
planar rigid bodies with frictional impacts)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from physid.api.results import Named, Outcome, Parameter
from physid.errors import Bound, check_numbers
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.api.recording import PathLike

# The numbers the impacts faces accept, one table per command: the CLI's option callbacks
# (physid.cli.impacts_commands) and the functions below check them through
# physid.errors.in_range, so a bad number is the same one-line error from either face. (Here,
# not in physid.impacts: importing that package loads its solvers, which every CLI call, --help
# included, would pay.)
MAX_FPS = 1e5  # frames/s: beyond any camera
MAX_DURATION_S = 3600.0
SIMULATE: dict[str, Bound] = {
    "mu": Bound(0.0, 10.0),
    "restitution": Bound(0.0, 1.0),
    "duration": Bound(0.0, MAX_DURATION_S, True),
    "fps": Bound(0.0, MAX_FPS, True),
    "noise": Bound(0.0, 1.0),
    "noise_angle": Bound(0.0, math.pi),
    "inertia_ratio": Bound(0.0, 100.0, True),
    "dt": Bound(0.0, 0.1, True),
    "seed": Bound(0, 2**32 - 1, integer=True),  # numpy's default_rng takes no negative seed
}
IDENTIFY: dict[str, Bound] = {
    "mass": Bound(1e-9, 1e6),
    "noise": Bound(1e-9, 1.0),
    "noise_angle": Bound(1e-9, math.pi),
    "max_substep": Bound(1e-6, 0.1),
}
SNAPSHOTS: dict[str, Bound] = {
    "noise_velocity": Bound(1e-9, 100.0),
    "max_inertia_ratio": Bound(0.0, 1e6, True),
    "mu_max": Bound(0.0, 10.0, True),
}

MAX_STEPS = 2e6  # simulation steps: bounds time and memory


@dataclass(frozen=True)
class Poses:
    """One throw held in memory: time ``t`` (n,) [s] and poses ``q`` (n, 3): x, y [m] and
    theta [rad] (continuous), as a pose CSV holds them; ``name`` names it in the outputs."""

    t: Any
    q: Any
    name: str = "arrays"

    def __str__(self) -> str:
        return self.name


def shape_and_lines(shape_text: str, surfaces: str | Sequence[str]):  # noqa: ANN201
    """The body shape (``ellipse:A,B`` or ``polygon:X1,Y1;...``) and surface lines
    (``line:ANGLE,OFFSET``) of their text specs."""
    from physid.impacts.specs import parse_shape, parse_surface

    surfaces = [surfaces] if isinstance(surfaces, str) else list(surfaces)
    return parse_shape(shape_text), [parse_surface(s) for s in surfaces]


@one_blas_thread
def impacts_simulate(
    shape_text: str,
    surfaces: str | Sequence[str],
    q0: str | Sequence[float],
    v0: str | Sequence[float],
    *,
    mu: float,
    restitution: float,
    duration: float,
    fps: float,
    noise: float,
    noise_angle: float | None = None,
    seed: int = 0,
    inertia_ratio: float | None = None,
    dt: float | None = None,
    model: str = "irc",
    solver: str = "lcp",
    progress: bool = False,
) -> Outcome:
    """Simulate a throw with paper D's time-stepping model and sample noisy camera poses at
    ``fps`` (``physid impacts simulate``): body ``shape_text``, ``surfaces``, initial pose
    ``q0`` (x, y, theta) and velocity ``v0``, Coulomb ``mu`` and restitution. ``save(out)``
    writes the pose CSV ``out`` (t, x, y, theta); ``raw`` is ``(t, q)``."""
    from physid.errors import InputError
    from physid.files.io import write_text_atomic
    from physid.impacts.poses import camera_samples, frame_stride, poses_to_csv_text
    from physid.impacts.simulator import simulate
    from physid.impacts.specs import parse_vector3

    numbers = {"mu": mu, "restitution": restitution, "duration": duration, "fps": fps}
    numbers |= {"noise": noise, "noise_angle": noise_angle, "inertia_ratio": inertia_ratio}
    numbers |= {"dt": dt, "seed": seed}
    check_numbers(SIMULATE, numbers)  # the CLI's bounds (SIMULATE above)
    shape, lines = shape_and_lines(shape_text, surfaces)
    q0_v = parse_vector3(_text(q0), "--q0", "X [m], Y [m], TH [rad]", (1e6, 1e6, 1e6))
    v0_v = parse_vector3(_text(v0), "--v0", "VX [m/s], VY [m/s], W [rad/s]", (1e4, 1e4, 1e5))
    if dt is None:
        dt = 1.0 / (fps * math.ceil(1.0 / (fps * 5e-4) - 1e-9))
    if not (math.isfinite(dt) and dt > 0 and duration / dt <= MAX_STEPS):
        raise InputError(
            f"{dt!r} gives more than {MAX_STEPS:.0e} steps over {duration} s", source="--dt"
        )
    frame_stride(fps, dt)  # a frame rate that does not fit the step is refused before the run
    if inertia_ratio is not None and inertia_ratio > shape.max_radius**2:
        # J about the centre of mass <= m r_max^2: all mass on the rim is the most a body can have
        raise InputError(
            f"J/m = {inertia_ratio!r} m² exceeds the shape's largest radius squared "
            f"({shape.max_radius**2:.3g} m²): no body of this shape has it",
            source="--inertia-ratio",
        )
    ratio = inertia_ratio if inertia_ratio is not None else shape.uniform_inertia_ratio()
    sim = simulate(
        shape,
        lines,
        q0_v,
        v0_v,
        inertia_ratio=ratio,
        mu=mu,
        restitution=restitution,
        dt=dt,
        duration=duration,
        model=model,
        solver=solver,
        progress=progress,
    )
    if sim.status != "ok":
        other = "nlp" if solver == "lcp" else "lcp"
        raise InputError(f"{sim.status}; the other per-step solver (--solver {other}) or a "
                         "smaller --dt may get past it", source="simulate")  # fmt: skip
    sigma_angle = noise_angle if noise_angle is not None else noise / shape.max_radius
    t, q = camera_samples(
        sim, fps, noise_position=noise, noise_angle=sigma_angle, rng=np.random.default_rng(seed)
    )
    document = {
        "shape": shape.spec(),
        "surfaces": [line.spec() for line in lines],
        "q0": q0_v.tolist(),
        "v0": v0_v.tolist(),
        "inertia_ratio": ratio,
        "mu": mu,
        "restitution": restitution,
        "dt": dt,
        "fps": fps,
        "noise": noise,
        "noise_angle": sigma_angle,
        "seed": seed,
        "samples": len(t),
        "contact_steps": int(sim.active.any(axis=1).sum()),
    }

    def write(path: Path) -> None:
        write_text_atomic(path, poses_to_csv_text(t, q))

    parameters = Named(
        {
            "inertia_ratio": Parameter(ratio, None, "given", "m^2"),
            "mu": Parameter(mu, None, "given", ""),
            "restitution": Parameter(restitution, None, "given", ""),
        }
    )
    message = (
        f"{len(t)} poses (h = {dt * 1e3:.4g} ms, J/m = {ratio:.6g} m², "
        f"{document['contact_steps']} contact steps)"
    )
    return Outcome("ok", message, parameters, document, (t, q), write, False)


def pose_files(paths: Sequence[Any]) -> list:
    """The pose files named by ``--data``: files as given, folders as their ``*.csv`` files
    (sorted by name); a folder without any is an InputError naming it. In-memory
    :class:`Poses` are kept."""
    from physid.errors import InputError

    files: list = []
    for path in paths:
        if isinstance(path, Poses):
            files.append(path)
            continue
        path = Path(path)
        if path.is_dir():
            found = sorted(p for p in path.glob("*.csv") if p.is_file())
            if not found:
                raise InputError("the folder holds no *.csv pose file", source=str(path))
            files += found
        else:
            files.append(path)
    return files


@one_blas_thread
def impacts_identify(
    data: PathLike | Poses | Sequence[PathLike | Poses],
    shape_text: str,
    surfaces: str | Sequence[str],
    *,
    gravity_text: str | None = None,
    mass: float = 1.0,
    noise: float = 1e-3,
    noise_angle: float | None = None,
    max_substep: float = 1e-3,
    progress: bool = False,
) -> Outcome:
    """Identify J/m [m²] and Coulomb's μ from camera poses (``physid impacts identify``, paper
    D §5.1): one throw, or several pooled (pose CSV files, folders of them, or :class:`Poses`).
    ``save(out)`` writes result.json (``to_dict()``), trajectory.csv, fit.png and
    impulses.png; ``notes`` name the ignored columns, ``warnings`` the fit's."""
    from physid.errors import InputError
    from physid.files.io import write_json_atomic, write_text_atomic
    from physid.impacts.figures import plot_fit, plot_impulses
    from physid.impacts.geometry import STANDARD_GRAVITY
    from physid.impacts.identify import IdentifyOptions, identify
    from physid.impacts.pooled import identify_throws
    from physid.impacts.poses import pose_file_body, trajectory_csv_text
    from physid.impacts.specs import parse_gravity

    numbers = {"mass": mass, "noise": noise, "noise_angle": noise_angle}
    check_numbers(IDENTIFY, numbers | {"max_substep": max_substep})  # the CLI's bounds
    data_paths = [data] if isinstance(data, str | Path | Poses) else list(data)
    shape, lines = shape_and_lines(shape_text, surfaces)
    gravity = STANDARD_GRAVITY if gravity_text is None else tuple(parse_gravity(gravity_text))
    files = pose_files(data_paths)
    notes: list[str] = []
    throws, ignored_all, bodies = [], {}, {}
    for path in files:
        t, q, ignored = _poses(path)
        throws.append((t, q))
        body = None if isinstance(path, Poses) else pose_file_body(path)
        if body is not None:
            bodies.setdefault(body, path)
            if len(bodies) > 1:
                first, where = next(iter(bodies.items()))
                raise InputError(
                    f"column body: {body!r} differs from {first!r} in {where}: mixed bodies; "
                    "pooled throws must be of one body",
                    source=str(path),
                )
        ignored = [c for c in ignored if c != "body"]
        if ignored:
            ignored_all[str(path)] = ignored
            notes.append(f"{path}: ignoring unknown column(s) {', '.join(ignored)}")
    options = IdentifyOptions(
        max_substep=max_substep, noise_position=noise, noise_angle=noise_angle, gravity=gravity
    )
    if len(files) == 1:
        result = identify(
            shape,
            lines,
            *throws[0],
            mass=mass,
            options=options,
            source=str(files[0]),
            progress=progress,
        )
    else:
        result = identify_throws(
            shape, lines, throws, sources=[str(p) for p in files], mass=mass, options=options
        )
    payload = result.to_json_dict()
    payload["inputs"] = {
        "data": [str(p) for p in files] if len(files) > 1 else str(files[0]),
        "shape": shape.spec(),
        "surfaces": [line.spec() for line in lines],
        "gravity_m_s2": options.gravity_vector.tolist(),
        "ignored_columns": ignored_all.get(str(files[0]), []) if len(files) == 1 else ignored_all,
    }

    def write(staging: Path) -> None:
        write_json_atomic(staging / "result.json", payload)
        write_text_atomic(staging / "trajectory.csv", trajectory_csv_text(result))
        plot_fit(result, shape, lines, staging / "fit.png")
        plot_impulses(result, staging / "impulses.png")

    identified = "data" if result.identifiable else "not identified"
    parameters = Named(
        {
            "inertia_ratio": Parameter(
                result.inertia_ratio, _std(result, "inertia_ratio"), identified, "m^2"
            ),
            "mu": Parameter(result.friction, _std(result, "friction"), identified, ""),
            "mass": Parameter(mass, None, "given", "kg"),
        }
    )
    ratio = f"{result.inertia_ratio:.6g} m²" if result.identifiable else "not identified"
    mu_text = f"{result.friction:.3g}" if result.identifiable else "not identified"
    pooled = f" pooled over {len(files)} throws" if len(files) > 1 else ""
    message = f"J/m = {ratio}, mu = {mu_text}{pooled}"
    return Outcome(
        result.status,
        message,
        parameters,
        payload,
        result,
        write,
        notes=tuple(notes),
        warnings=tuple(result.warnings),
    )


def _std(result: Any, name: str) -> float | None:
    value = getattr(result, f"{name}_std", None)
    return None if value is None else float(value)


def _poses(item: Any) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(t, q, ignored columns) of a pose file or of in-memory :class:`Poses` (checked as a
    file's columns are)."""
    from physid.errors import InputError
    from physid.impacts.poses import read_poses_csv

    if not isinstance(item, Poses):
        return read_poses_csv(item)
    try:
        t, q = np.asarray(item.t, dtype=float), np.asarray(item.q, dtype=float)
    except (TypeError, ValueError) as error:
        raise InputError(f"t and q must be numeric arrays ({error})", source=item.name) from None
    if t.ndim != 1 or t.size == 0 or q.shape != (t.size, 3):
        raise InputError(
            f"t has shape {t.shape} and q {q.shape}: expected (n,) and (n, 3) = x, y, theta",
            source=item.name,
        )
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q))):
        raise InputError("t and q must be finite", source=item.name)
    return t, q, []


@one_blas_thread
def impacts_snapshots(
    data: PathLike,
    *,
    gravity_text: str | None = None,
    noise_velocity: float = 0.01,
    max_inertia_ratio: float | None = None,
    mu_max: float = 3.0,
) -> Outcome:
    """Identify J/m [m²] and Coulomb's μ from impact snapshots by paper D's impact law
    (``physid impacts identify-snapshots``), flagging impacts no rigid body could produce.
    ``save(out)`` writes result.json (``to_dict()``) and impacts.csv; ``warnings`` are the
    fit's (an estimate at a bound, residuals far above the noise), then the flags (impact
    label: reason)."""
    from physid.files.io import write_json_atomic, write_text_atomic
    from physid.impacts.geometry import STANDARD_GRAVITY
    from physid.impacts.snapshot_fit import fit_snapshots, impacts_csv_text
    from physid.impacts.snapshots import read_snapshots_csv
    from physid.impacts.specs import parse_gravity

    numbers = {"noise_velocity": noise_velocity, "max_inertia_ratio": max_inertia_ratio}
    check_numbers(SNAPSHOTS, numbers | {"mu_max": mu_max})  # the CLI's bounds
    gravity = STANDARD_GRAVITY if gravity_text is None else tuple(parse_gravity(gravity_text))
    snaps = read_snapshots_csv(data)
    result = fit_snapshots(
        snaps,
        gravity=gravity,
        noise_velocity=noise_velocity,
        max_inertia_ratio=max_inertia_ratio,
        mu_max=mu_max,
    )
    payload = result.to_json_dict()
    payload["inputs"] = {"data": str(data), "mass": snaps.mass}

    def write(staging: Path) -> None:
        write_json_atomic(staging / "result.json", payload)
        write_text_atomic(staging / "impacts.csv", impacts_csv_text(result, snaps))

    parameters = Named(
        {
            "inertia_ratio": Parameter(
                result.inertia_ratio, result.inertia_ratio_std, "data", "m^2"
            ),
            "mu": Parameter(
                result.friction,
                None if result.friction_is_lower_bound else result.friction_std,
                "lower bound" if result.friction_is_lower_bound else "data",
                "",
            ),
        }
    )
    message = f"from {int(result.used.sum())} of {len(snaps)} impacts"
    flags = tuple(f"{label}: {reason}" for label, reason in result.flags)
    warnings = (*result.warnings, *flags)  # the fit's (a bound, the residuals), then the impacts'
    return Outcome(result.status, message, parameters, payload, result, write, warnings=warnings)


def _text(value: str | Sequence[float]) -> str:
    """A vector option as the command line gives it (``X,Y,TH``)."""
    return value if isinstance(value, str) else ",".join(repr(float(v)) for v in value)
