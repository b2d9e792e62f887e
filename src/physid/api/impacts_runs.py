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
from physid.findings import as_dicts
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


def shape_and_lines(shape: Any, surfaces: Any) -> tuple[Any, list]:
    """The body shape and surface lines of their text specs (``ellipse:A,B`` or
    ``polygon:X1,Y1;...``; ``line:ANGLE,OFFSET``) or typed values
    (:func:`physid.impacts.specs.shape_of`, :func:`~physid.impacts.specs.surfaces_of`)."""
    from physid.impacts.specs import shape_of, surfaces_of

    return shape_of(shape, "--shape"), surfaces_of(surfaces, "--surface")


@one_blas_thread
def impacts_simulate(
    shape: str | Any,
    surfaces: str | Any,
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
    """Simulate a throw with paper D's time-stepping model and sample noisy camera poses
    (``physid impacts simulate``).

    Args:
        shape: the body, ``ellipse:A,B`` / ``polygon:X1,Y1;...`` text [m], an ``Ellipse`` or
            ``Polygon``, two semi-axes (A, B) or (k, 2) polygon vertices [m].
        surfaces: ``line:ANGLE,OFFSET`` text, a ``Line`` or an (ANGLE [rad], OFFSET [m]) pair,
            or a sequence of them.
        q0: initial pose X, Y [m], TH [rad] (text ``X,Y,TH`` or three numbers).
        v0: initial velocity VX, VY [m/s], W [rad/s] (text or three numbers).
        mu: Coulomb's coefficient, in [0, 10].
        restitution: Newton's ε of paper D eq. (4), in [0, 1].
        duration: simulated time [s].
        fps: camera frame rate [frames/s].
        noise: standard deviation of the Gaussian noise on x, y [m].
        noise_angle: standard deviation of the noise on theta [rad] (None: ``noise`` over the
            largest body radius).
        seed: the noise's seed (``default_rng``).
        inertia_ratio: J/m [m²] (None: the uniform lamina of the shape).
        dt: simulation step [s] (None: the largest ≤ 0.5 ms that divides 1/fps).
        model: ``irc`` (impulse-restitution) or ``igc`` (impulse-gap).
        solver: ``lcp`` or ``nlp``.
        progress: show a progress display.

    Returns:
        An :class:`Outcome`: ``save(out)`` writes the pose CSV ``out`` (t, x, y, theta); ``raw``
        is ``(t, q)``; status ``numerical_failure`` (with its finding) when a step's solver
        failed, the poses then ending there.
    """
    from physid.files.io import write_text_atomic
    from physid.impacts.poses import camera_samples, poses_to_csv_text
    from physid.impacts.simulator import simulate

    numbers = {"mu": mu, "restitution": restitution, "duration": duration, "fps": fps}
    numbers |= {"noise": noise, "noise_angle": noise_angle, "inertia_ratio": inertia_ratio}
    check_numbers(SIMULATE, numbers | {"dt": dt, "seed": seed})  # the CLI's bounds
    body, lines, q0_v, v0_v, dt, ratio = _simulation_inputs(
        shape, surfaces, q0, v0, fps, duration, dt, inertia_ratio
    )
    given = {"inertia_ratio": ratio, "mu": mu, "restitution": restitution, "dt": dt}
    run = {"duration": duration, "model": model, "solver": solver, "progress": progress}
    sim = simulate(body, lines, q0_v, v0_v, **run, **given)
    sigma_angle = noise_angle if noise_angle is not None else noise / body.max_radius
    rng = np.random.default_rng(seed)
    t, q = camera_samples(sim, fps, noise_position=noise, noise_angle=sigma_angle, rng=rng)
    document = {"shape": body.spec(), "surfaces": [line.spec() for line in lines]}
    document |= {"q0": q0_v.tolist(), "v0": v0_v.tolist(), **given, "fps": fps, "noise": noise}
    document |= {"noise_angle": sigma_angle, "seed": seed, "samples": len(t)}
    document |= {"contact_steps": int(sim.active.any(axis=1).sum()), "status": str(sim.status)}
    document["findings"] = as_dicts(sim.findings)

    def write(path: Path) -> None:
        write_text_atomic(path, poses_to_csv_text(t, q))

    units = {"inertia_ratio": "m^2", "mu": "", "restitution": ""}
    parameters = Named({k: Parameter(given[k], None, "given", unit) for k, unit in units.items()})
    message = sim.message or (
        f"{len(t)} poses (h = {dt * 1e3:.4g} ms, J/m = {ratio:.6g} m², "
        f"{document['contact_steps']} contact steps)"
    )
    return Outcome(
        sim.status, message, parameters, document, (t, q), write, False, findings=sim.findings
    )


def _simulation_inputs(
    shape: Any,
    surfaces: Any,
    q0: Any,
    v0: Any,
    fps: float,
    duration: float,
    dt: float | None,
    inertia_ratio: float | None,
) -> tuple[Any, list, np.ndarray, np.ndarray, float, float]:
    """The body, lines, initial pose and velocity, step and J/m of a simulation, each checked
    as the command line checks it (one error line naming the option)."""
    from physid.errors import InputError
    from physid.impacts.poses import frame_stride
    from physid.impacts.specs import vector3_of

    body, lines = shape_and_lines(shape, surfaces)
    q0_v = vector3_of(q0, "--q0", "X [m], Y [m], TH [rad]", (1e6, 1e6, 1e6))
    v0_v = vector3_of(v0, "--v0", "VX [m/s], VY [m/s], W [rad/s]", (1e4, 1e4, 1e5))
    dt = _step(fps, duration, dt)
    frame_stride(fps, dt)  # a frame rate that does not fit the step is refused before the run
    if inertia_ratio is not None and inertia_ratio > body.max_radius**2:
        # J about the centre of mass <= m r_max^2: all mass on the rim is the most a body can have
        raise InputError(
            f"J/m = {inertia_ratio!r} m² exceeds the shape's largest radius squared "
            f"({body.max_radius**2:.3g} m²): no body of this shape has it",
            source="--inertia-ratio",
        )
    ratio = inertia_ratio if inertia_ratio is not None else body.uniform_inertia_ratio()
    return body, lines, q0_v, v0_v, dt, ratio


def _step(fps: float, duration: float, dt: float | None) -> float:
    """The simulation step: ``dt``, or the largest ≤ 0.5 ms that divides 1/fps; more than
    :data:`MAX_STEPS` steps is an error naming ``--dt``."""
    from physid.errors import InputError

    if dt is None:
        dt = 1.0 / (fps * math.ceil(1.0 / (fps * 5e-4) - 1e-9))
    if not (math.isfinite(dt) and dt > 0 and duration / dt <= MAX_STEPS):
        raise InputError(
            f"{dt!r} gives more than {MAX_STEPS:.0e} steps over {duration} s", source="--dt"
        )
    return dt


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
    shape: str | Any,
    surfaces: str | Any,
    *,
    gravity: str | Sequence[float] | None = None,
    mass: float = 1.0,
    noise: float = 1e-3,
    noise_angle: float | None = None,
    max_substep: float = 1e-3,
    progress: bool = False,
) -> Outcome:
    """Identify J/m [m²] and Coulomb's μ from camera poses (``physid impacts identify``, paper
    D §5.1): one throw, or several pooled with one J/m and μ.

    Args:
        data: pose CSV files (t, x, y, theta), folders of them, or :class:`Poses`; one or a
            sequence.
        shape: the body (text, ``Ellipse``/``Polygon``, semi-axes or vertices; as
            :func:`impacts_simulate`).
        surfaces: the surface lines (as :func:`impacts_simulate`).
        gravity: ``GX,GY`` text or two numbers [m/s²] (None: 0, -9.81).
        mass: the body's mass [kg], fixed (only J/m is identifiable); scales the impulses.
        noise: standard deviation of x and y [m].
        noise_angle: standard deviation of theta [rad] (None: ``noise`` over the largest body
            radius).
        max_substep: the largest model step h̄ [s] (paper D eq. 25).
        progress: show a progress display.

    Returns:
        An :class:`Outcome` whose ``status`` and ``findings`` say what to make of it;
        ``save(out)`` writes result.json (``to_dict()``), trajectory.csv, fit.png and
        impulses.png; ``raw`` is the :class:`~physid.impacts.ImpactsIdentification`.
    """
    from physid.files.io import write_json_atomic, write_text_atomic
    from physid.impacts.figures import plot_fit, plot_impulses
    from physid.impacts.identify import IdentifyOptions
    from physid.impacts.poses import trajectory_csv_text

    numbers = {"mass": mass, "noise": noise, "noise_angle": noise_angle}
    check_numbers(IDENTIFY, numbers | {"max_substep": max_substep})  # the CLI's bounds
    data_paths = [data] if isinstance(data, str | Path | Poses) else list(data)
    body, lines = shape_and_lines(shape, surfaces)
    g = _gravity(gravity)
    files = pose_files(data_paths)
    throws, ignored = _throws(files)
    options = IdentifyOptions(
        max_substep=max_substep, noise_position=noise, noise_angle=noise_angle, gravity=g
    )
    result = _fit_throws(files, throws, body, lines, mass, options, progress)
    findings = (*result.findings, *_ignored_findings(ignored))
    payload = result.to_json_dict() | {"findings": as_dicts(findings)}
    payload["inputs"] = {
        "data": [str(p) for p in files] if len(files) > 1 else str(files[0]),
        "shape": body.spec(),
        "surfaces": [line.spec() for line in lines],
        "gravity_m_s2": options.gravity_vector.tolist(),
        "ignored_columns": ignored.get(str(files[0]), []) if len(files) == 1 else ignored,
    }

    def write(staging: Path) -> None:
        write_json_atomic(staging / "result.json", payload)
        write_text_atomic(staging / "trajectory.csv", trajectory_csv_text(result))
        plot_fit(result, body, lines, staging / "fit.png")
        plot_impulses(result, staging / "impulses.png")

    pooled = f" (pooled over {len(files)} throws)" if len(files) > 1 else ""
    parameters = _identified_parameters(result, mass)
    outcome = (result.status, result.message + pooled, parameters, payload, result, write)
    return Outcome(*outcome, findings=findings)


def _fit_throws(
    files: list, throws: list, body: Any, lines: list, mass: float, options: Any, progress: bool
) -> Any:
    """One throw's fit (:func:`physid.impacts.identify.identify`), or several pooled."""
    from physid.impacts.identify import identify, identify_throws

    if len(files) == 1:
        t, q = throws[0]
        return identify(
            body, lines, t, q, mass=mass, options=options, source=str(files[0]), progress=progress
        )
    sources = [str(p) for p in files]
    return identify_throws(body, lines, throws, sources=sources, mass=mass, options=options)


def _identified_parameters(result: Any, mass: float) -> Named:
    """J/m with its standard deviation, μ (a lower bound, or not identified) and the mass."""
    source = "data" if result.identifiable else "not identified"
    mu_source = "lower bound" if result.identifiable and result.friction_is_lower_bound else source
    return Named(
        {
            "inertia_ratio": Parameter(
                result.inertia_ratio, result.inertia_ratio_std, source, "m^2"
            ),
            "mu": Parameter(result.friction, None, mu_source, ""),
            "mass": Parameter(mass, None, "given", "kg"),
        }
    )


def _gravity(gravity: str | Sequence[float] | None) -> Any:
    """The gravity option as IdentifyOptions and fit_snapshots take it (None: standard)."""
    from physid.impacts.geometry import STANDARD_GRAVITY
    from physid.impacts.specs import gravity_of

    return STANDARD_GRAVITY if gravity is None else tuple(gravity_of(gravity, "--gravity"))


def _throws(files: list) -> tuple[list, dict[str, list[str]]]:
    """Each file's (t, q) and the unknown columns of each file that has any; files naming
    different bodies are an error naming them."""
    from physid.errors import InputError
    from physid.impacts.poses import pose_file_body

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
    return throws, ignored_all


def _ignored_findings(ignored: dict[str, list[str]]) -> list:
    from physid.impacts.codes import UNKNOWN_COLUMNS

    return [
        UNKNOWN_COLUMNS(
            f"{path}: ignoring unknown column(s) {', '.join(columns)}", names=[path, *columns]
        )
        for path, columns in ignored.items()
    ]


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
    gravity: str | Sequence[float] | None = None,
    noise_velocity: float = 0.01,
    max_inertia_ratio: float | None = None,
    mu_max: float = 3.0,
) -> Outcome:
    """Identify J/m [m²] and Coulomb's μ from impact snapshots by paper D's impact law
    (``physid impacts identify-snapshots``), flagging impacts no rigid body could produce and
    naming another sign convention of the contact geometry that admits clearly more of them.

    Args:
        data: the snapshot CSV (one row per impact; docs/impacts.md lists its columns).
        gravity: ``GX,GY`` text or two numbers [m/s²] (None: 0, -9.81); its impulse over each
            row's ``duration`` is removed.
        noise_velocity: standard deviation of the velocities [m/s].
        max_inertia_ratio: upper bound on J/m [m²] (None: (2 × the largest lever arm)²).
        mu_max: upper bound on μ.

    Returns:
        An :class:`Outcome` whose ``status`` and ``findings`` say what to make of it;
        ``save(out)`` writes result.json (``to_dict()``) and impacts.csv; ``raw`` is the
        :class:`~physid.impacts.SnapshotResult`.
    """
    from physid.files.io import write_json_atomic, write_text_atomic
    from physid.impacts.snapshot_fit import fit_snapshots, impacts_csv_text
    from physid.impacts.snapshots import read_snapshots_csv

    numbers = {"noise_velocity": noise_velocity, "max_inertia_ratio": max_inertia_ratio}
    check_numbers(SNAPSHOTS, numbers | {"mu_max": mu_max})  # the CLI's bounds
    g = _gravity(gravity)
    snaps = read_snapshots_csv(data)
    result = fit_snapshots(
        snaps,
        gravity=g,
        noise_velocity=noise_velocity,
        max_inertia_ratio=max_inertia_ratio,
        mu_max=mu_max,
    )
    payload = result.to_json_dict()
    payload["inputs"] = {"data": str(data), "mass": snaps.mass}

    def write(staging: Path) -> None:
        write_json_atomic(staging / "result.json", payload)
        write_text_atomic(staging / "impacts.csv", impacts_csv_text(result, snaps))

    lower = result.friction_is_lower_bound
    parameters = Named(
        {
            "inertia_ratio": Parameter(
                result.inertia_ratio, result.inertia_ratio_std, "data", "m^2"
            ),
            "mu": Parameter(
                result.friction,
                None if lower else result.friction_std,
                "lower bound" if lower else "data",
                "",
            ),
        }
    )
    return Outcome(
        result.status, result.message, parameters, payload, result, write, findings=result.findings
    )
