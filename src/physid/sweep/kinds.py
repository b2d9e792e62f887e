"""The job kinds a sweep runs: their arguments, checks (made before anything runs) and runs.

Each kind calls a public entry point of the layers above (docs/architecture.md layer 8): the
workflow functions of :mod:`physid.workflows` (what ``physid identify``, ``validate`` and
``payload`` run) or the public API of :mod:`physid.impacts` (what ``physid impacts identify`` runs).
A run writes its files into the folder it is given and returns the key numbers of its result, a flat
mapping that becomes the job's row of the results table.

Heavy imports (Pinocchio, CasADi) happen inside the functions: the Ray workers import them, the
driver only as far as the checks need.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from physid.errors import InputError
from physid.findings import Severity, with_code
from physid.impacts.codes import AMBIGUOUS_INERTIA_RATIO
from physid.status import Status

Args = dict[str, Any]


@dataclass(frozen=True)
class Kind:
    """One kind of job. ``arguments``: name -> help; ``paths``/``path_lists``: the arguments
    holding one file / a list of files (resolved against the spec's folder, checked to exist);
    ``check(args, where)`` raises a one-line :class:`InputError`; ``run(args, out, seed)`` does
    the job (writing into ``out``) and returns its key numbers."""

    name: str
    summary: str
    arguments: dict[str, str]
    required: tuple[str, ...]
    paths: tuple[str, ...]
    path_lists: tuple[str, ...]
    uses_seed: Callable[[Args], bool]
    check: Callable[[Args, str], None]
    run: Callable[[Args, Path, int | None], dict[str, Any]]


# ---- shared checks -------------------------------------------------------------------------


def _mapping(value: Any, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _check_config(args: Args, where: str, identify: bool = False) -> None:
    from physid.files.config import parse_config, require_known_payload

    try:
        config = parse_config(_mapping(args.get("config"), f"{where}.config"))
        if identify:
            require_known_payload(config)
    except InputError as error:
        raise InputError(f"{where}.config: {error}") from None


def _number(value: Any, where: str, low: float = 0.0, high: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low < value <= high:
        raise InputError(f"{where}: expected a number in ({low:g}, {high:g}], got {value!r}")
    return float(value)


def _keys(raw: dict, allowed: set[str], where: str) -> None:
    unknown = sorted(set(map(str, raw)) - allowed)
    if unknown:
        raise InputError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")


def _write_config(args: Args, out: Path) -> Path | None:
    """The job's config as a file beside its outputs (``None``: defaults, no config given)."""
    from physid.files.io import write_text_atomic

    config = args.get("config")
    if not config:
        return None
    import yaml

    return write_text_atomic(out / "config.yaml", yaml.safe_dump(config, sort_keys=False))


def _flatten(value: Any, prefix: str, into: dict[str, Any]) -> dict[str, Any]:
    """Nested mappings and short lists as ``a.b`` / ``a.0`` columns of scalars."""
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), into)
    elif isinstance(value, list | tuple) and len(value) <= 12:
        for index, item in enumerate(value):
            _flatten(item, f"{prefix}.{index}", into)
    elif hasattr(value, "tolist"):
        _flatten(value.tolist(), prefix, into)
    elif value is None or isinstance(value, bool | int | float | str):
        into[prefix] = value
    return into


# ---- identify ------------------------------------------------------------------------------

ARM_SIMULATION = {"train_s": 8.0, "validation_s": 4.0, "sample_rate_hz": 500.0}


def _check_identify(args: Args, where: str) -> None:
    simulate = args.get("simulate")
    if simulate is None:
        for key in ("urdf", "data"):
            if not args.get(key):
                raise InputError(f"{where}.{key}: required (or 'simulate' for the demo arm)")
    else:
        _keys(_mapping(simulate, f"{where}.simulate"), set(ARM_SIMULATION), f"{where}.simulate")
        for key, value in simulate.items():
            _number(value, f"{where}.simulate.{key}", high=1e5)
        given = [key for key in ("urdf", "data", "validate") if args.get(key)]
        if given:
            raise InputError(
                f"{where}.{given[0]}: not with 'simulate' (the demo arm brings its own)"
            )
    _check_config(args, where, identify=True)


def _simulate_arm(args: Args, out: Path, seed: int | None) -> tuple[str, list, list, Any]:
    """The demo arm's training and validation recordings (physid.sim.arm, as ``physid demo``)."""
    import numpy as np

    from physid.recordings.trajectory import write_trajectory_csv
    from physid.sim.arm import (
        arm6_model,
        arm6_urdf_path,
        simulate_random_excitation,
        true_parameters,
    )

    options = ARM_SIMULATION | dict(args["simulate"])
    rng = np.random.default_rng(seed)
    model = arm6_model()
    theta = true_parameters(model, rng)
    files = []
    for name in ("train", "validation"):
        simulation = simulate_random_excitation(
            model,
            theta,
            duration_s=options[f"{name}_s"],
            sample_rate_hz=options["sample_rate_hz"],
            rng=rng,
        )
        files.append(write_trajectory_csv(out / "data" / f"{name}.csv", simulation.recorded))
    return arm6_urdf_path(), [files[0]], [files[1]], theta


def _run_identify(args: Args, out: Path, seed: int | None) -> dict[str, Any]:
    import numpy as np

    from physid.workflows import run_identify

    theta_true = None
    if args.get("simulate") is not None:
        urdf, data, validate, theta_true = _simulate_arm(args, out, seed)
    else:
        urdf, data, validate = args["urdf"], args["data"], args.get("validate")
    result = run_identify(
        urdf,
        data,
        config_path=_write_config(args, out),
        validate=validate,
        loaded=args.get("loaded"),
        out_dir=out / "output",
    )
    metrics: dict[str, Any] = {
        "result_status": str(result.status),
        "train_relative_error": result.train.relative_error,
        "validation_relative_error": None
        if result.validation is None
        else result.validation.relative_error,
        "moving_mass_kg": result.moving_mass(),
        "base_parameters": int(np.count_nonzero(result.excited)),
    }
    if theta_true is not None:  # Monte-Carlo on the demo arm: compare with the truth
        excited = result.excited
        true_base = result.base.from_standard(theta_true)[excited]
        z = (result.theta_base[excited] - true_base) / result.base_std[excited]
        metrics["truth_base_within_3_sigma"] = float(np.mean(np.abs(z) < 3.0))
        metrics["truth_base_max_abs_z"] = float(np.max(np.abs(z)))
    return metrics


# ---- validate and payload ------------------------------------------------------------------


def _check_validate(args: Args, where: str) -> None:
    for key in ("urdf", "params", "data"):
        if not args.get(key):
            raise InputError(f"{where}.{key}: required")
    _check_config(args, where)


def _run_validate(args: Args, out: Path, seed: int | None) -> dict[str, Any]:
    from physid.files.io import write_json_atomic
    from physid.workflows import run_validate

    report = run_validate(
        args["urdf"], args["params"], args["data"], config_path=_write_config(args, out)
    )
    write_json_atomic(out / "output" / "validation.json", report.as_dict())
    return _flatten(report.overall, "", {})


def _check_payload(args: Args, where: str) -> None:
    for key in ("urdf", "params", "loaded", "link"):
        if not args.get(key):
            raise InputError(f"{where}.{key}: required")
    if not isinstance(args["link"], str):
        raise InputError(f"{where}.link: expected a link name, got {args['link']!r}")
    if args.get("mass_kg") is not None:
        _number(args["mass_kg"], f"{where}.mass_kg", high=1e4)
    _check_config(args, where)


def _run_payload(args: Args, out: Path, seed: int | None) -> dict[str, Any]:
    from physid.files.io import write_json_atomic
    from physid.workflows import run_payload

    result = run_payload(
        args["urdf"],
        args["params"],
        args["loaded"],
        args["link"],
        unloaded=args.get("unloaded"),
        mass_kg=args.get("mass_kg"),
        config_path=_write_config(args, out),
    )
    write_json_atomic(out / "output" / "payload.json", result.as_dict())
    return {
        "result_status": str(result.status),
        "consistent": bool(result.consistent),
        "mass": result.mass,
        "mass_std": _flatten(result.std, "", {}).get("mass"),
        **_flatten(result.com_in_link, "com_in_link", {}),
        "relative_error_robot_only": result.relative_error_robot_only,
        "relative_error_with_payload": result.relative_error_with_payload,
    }


# ---- impacts identify (paper D) ------------------------------------------------------------

IMPACTS_SIMULATION = {
    "q0": "initial pose X, Y [m], TH [rad] (required)",
    "v0": "initial velocity VX, VY [m/s], W [rad/s] (required)",
    "mu": "Coulomb friction coefficient (required)",
    "restitution": "Newton restitution coefficient in [0, 1] (required)",
    "duration": "simulated time [s] (required)",
    "fps": "camera frame rate [frames/s] (required)",
    "noise": "standard deviation of x and y [m] (required)",
    "noise_angle": "standard deviation of theta [rad] (default noise / largest radius)",
    "inertia_ratio": "true J/m [m^2] (default: uniform lamina of the shape)",
    "dt": "simulation step [s] (default: the largest <= 0.5 ms dividing 1/fps)",
    "model": "irc | igc (default irc)",
    "solver": "lcp | nlp (default lcp)",
}


def _impacts_setup(args: Args, where: str):  # noqa: ANN202
    from physid.impacts import IdentifyOptions, parse_shape, parse_surface

    shape = parse_shape(str(args["shape"]), f"{where}.shape")
    surfaces = args["surfaces"]
    if isinstance(surfaces, str):
        surfaces = [surfaces]
    if not isinstance(surfaces, list) or not surfaces:
        raise InputError(f"{where}.surfaces: expected a list like ['line:0,0']")
    lines = [parse_surface(str(s), f"{where}.surfaces") for s in surfaces]
    simulate = args.get("simulate")
    defaults = {}
    if simulate is not None:
        defaults = {"noise_position": simulate["noise"]}
        defaults["noise_angle"] = simulate.get("noise_angle", simulate["noise"] / shape.max_radius)
    options = _mapping(args.get("options"), f"{where}.options")
    fields = {f.name: f.default for f in dataclasses.fields(IdentifyOptions)}
    _keys(options, set(fields), f"{where}.options")
    for key, value in options.items():
        if key == "gravity" and isinstance(value, list):  # (g_x, g_y) [m/s²], as --gravity
            if len(value) != 2:
                raise InputError(
                    f"{where}.options.gravity: expected [GX, GY] in m/s², got {value!r}"
                )
            for i, g in enumerate(value):
                _number(g, f"{where}.options.gravity[{i}]", low=-100.0, high=100.0)
            continue
        _option_like(value, fields[key], f"{where}.options.{key}")
    converted = {k: tuple(map(tuple, v)) if k == "continuations" else v for k, v in options.items()}
    converted = {k: tuple(v) if isinstance(v, list) else v for k, v in converted.items()}
    return shape, lines, IdentifyOptions(**(defaults | converted))


def _option_like(value: Any, default: Any, where: str) -> None:
    """``value`` of the kind of the option's ``default``: a finite positive number for a
    number (or an unset one), text for text, a list for a tuple (its content is checked by
    IdentifyOptions' users)."""
    if isinstance(default, str):
        if not isinstance(value, str):
            raise InputError(f"{where}: expected text, got {value!r}")
    elif isinstance(default, tuple):
        if not isinstance(value, list):
            raise InputError(f"{where}: expected a list, got {value!r}")
    elif isinstance(default, int | float) or (default is None and value is not None):
        _number(value, where, low=-1e-300, high=1e9)
        if isinstance(default, int) and not isinstance(value, int):
            raise InputError(f"{where}: expected a whole number, got {value!r}")


def _check_impacts(args: Args, where: str) -> None:
    for key in ("shape", "surfaces"):
        if not args.get(key):
            raise InputError(f"{where}.{key}: required")
    simulate, data = args.get("simulate"), args.get("data")
    if (simulate is None) == (data is None):
        raise InputError(f"{where}: give exactly one of 'data' (a pose CSV) and 'simulate'")
    if simulate is not None:
        _keys(_mapping(simulate, f"{where}.simulate"), set(IMPACTS_SIMULATION), f"{where}.simulate")
        for key in ("q0", "v0", "mu", "restitution", "duration", "fps", "noise"):
            if key not in simulate:
                raise InputError(f"{where}.simulate.{key}: required")
        for key, limit in (("q0", 1e6), ("v0", 1e4)):
            vector = simulate[key]
            if not isinstance(vector, list) or len(vector) != 3:
                raise InputError(f"{where}.simulate.{key}: expected 3 numbers, got {vector!r}")
            for k, value in enumerate(vector):
                _number(value, f"{where}.simulate.{key}[{k}]", low=-limit, high=limit)
        _number(simulate["fps"], f"{where}.simulate.fps", high=1e5)
        _number(simulate["duration"], f"{where}.simulate.duration", high=3600.0)
        _number(simulate["noise"], f"{where}.simulate.noise", low=-1e-300, high=1.0)
        _number(simulate["mu"], f"{where}.simulate.mu", low=-1e-300, high=10.0)
        _number(simulate["restitution"], f"{where}.simulate.restitution", low=-1e-300, high=1.0)
        for key, high in (("noise_angle", 3.2), ("inertia_ratio", 100.0), ("dt", 0.1)):
            if simulate.get(key) is not None:
                _number(simulate[key], f"{where}.simulate.{key}", high=high)
        for key, allowed in (("model", ("irc", "igc")), ("solver", ("lcp", "nlp"))):
            if simulate.get(key, allowed[0]) not in allowed:
                raise InputError(f"{where}.simulate.{key}: one of {allowed}, got {simulate[key]!r}")
    if args.get("mass") is not None:
        _number(args["mass"], f"{where}.mass", high=1e6)
    try:
        _impacts_setup(args, where)
    except TypeError as error:
        raise InputError(f"{where}.options: {error}") from None


def _run_impacts(args: Args, out: Path, seed: int | None) -> dict[str, Any]:
    import numpy as np

    from physid.files.io import write_json_atomic, write_text_atomic
    from physid.impacts import camera_samples, identify, read_poses_csv, simulate
    from physid.impacts.figures import plot_fit, plot_impulses
    from physid.impacts.poses import poses_to_csv_text, trajectory_csv_text

    shape, lines, options = _impacts_setup(args, "job")
    mass = float(args.get("mass") or 1.0)
    spec, truth = args.get("simulate"), None
    if spec is None:
        t, q, _ignored = read_poses_csv(args["data"])
        source = str(args["data"])
    else:
        fps = float(spec["fps"])
        dt = spec.get("dt") or 1.0 / (fps * math.ceil(1.0 / (fps * 5e-4) - 1e-9))
        truth = {
            "inertia_ratio": spec.get("inertia_ratio") or shape.uniform_inertia_ratio(),
            "mu": float(spec["mu"]),
        }
        sim = simulate(
            shape,
            lines,
            spec["q0"],
            spec["v0"],
            restitution=float(spec["restitution"]),
            dt=float(dt),
            duration=float(spec["duration"]),
            mass=mass,
            model=spec.get("model", "irc"),
            solver=spec.get("solver", "lcp"),
            **truth,
        )
        if sim.status != Status.OK:
            raise InputError(sim.message, source="simulate")
        t, q = camera_samples(
            sim,
            fps,
            noise_position=float(spec["noise"]),
            noise_angle=float(spec.get("noise_angle", spec["noise"] / shape.max_radius)),
            rng=np.random.default_rng(seed),
        )
        source = "simulated"
        write_text_atomic(out / "data" / "poses.csv", poses_to_csv_text(t, q))
    result = identify(shape, lines, t, q, mass=mass, options=options, source=source)
    write_json_atomic(out / "output" / "result.json", result.to_json_dict())
    write_text_atomic(out / "output" / "trajectory.csv", trajectory_csv_text(result))
    if args.get("figures"):
        plot_fit(result, shape, lines, out / "output" / "fit.png")
        plot_impulses(result, out / "output" / "impulses.png")
    found = result.identifiable
    metrics = {
        "result_status": result.status,
        "identifiable": found,
        "inertia_ratio": result.inertia_ratio if found else None,
        "inertia_ratio_std": result.inertia_ratio_std if found else None,
        "friction": result.friction if found else None,
        "friction_is_lower_bound": result.friction_is_lower_bound,
        "iterations": result.iterations,
        "solve_time_s": result.solve_time,
        "frames": int(t.size),
        "fit_chi2": result.diagnostics.get("fit_chi2"),
        # what result.json warns (a table row would otherwise read "ok" while its result warns that
        # J/m is ambiguous between two warm starts)
        "ambiguous_inertia_ratio": bool(with_code(result.findings, AMBIGUOUS_INERTIA_RATIO)),
        "warnings": sum(f.severity.at_least(Severity.CAUTION) for f in result.findings),
    }
    if truth is not None:
        metrics["inertia_ratio_error_pct"] = (
            100.0 * (result.inertia_ratio / truth["inertia_ratio"] - 1.0) if found else None
        )
        metrics["friction_error"] = result.friction - truth["mu"] if found else None
    return metrics


# ---- the table of kinds --------------------------------------------------------------------

_COMMON = {"config": "identify config: a YAML file or a mapping; grid keys 'config.a.b' edit it"}

KINDS: dict[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            "identify",
            "physid identify (physid.workflows.run_identify)",
            {
                "urdf": "robot URDF",
                "data": "training recording(s)",
                "validate": "validation recording(s)",
                "loaded": "recordings with the config's known payload (drive_gains: identify)",
                "simulate": "instead of urdf/data: the demo arm simulated with the job's seed, "
                f"{ARM_SIMULATION}",
                **_COMMON,
            },
            (),
            ("urdf",),
            ("data", "validate", "loaded"),
            lambda args: args.get("simulate") is not None,
            _check_identify,
            _run_identify,
        ),
        Kind(
            "validate",
            "physid validate (physid.workflows.run_validate)",
            {
                "urdf": "robot URDF",
                "params": "params.json",
                "data": "recording(s) to predict",
                **_COMMON,
            },
            ("urdf", "params", "data"),
            ("urdf", "params"),
            ("data",),
            lambda args: False,
            _check_validate,
            _run_validate,
        ),
        Kind(
            "payload",
            "physid payload (physid.workflows.run_payload)",
            {
                "urdf": "robot URDF",
                "params": "params.json of the robot without payload",
                "loaded": "recording(s) with the payload",
                "unloaded": "recording(s) without it",
                "link": "link carrying the payload",
                "mass_kg": "known payload mass [kg]",
                **_COMMON,
            },
            ("urdf", "params", "loaded", "link"),
            ("urdf", "params"),
            ("loaded", "unloaded"),
            lambda args: False,
            _check_payload,
            _run_payload,
        ),
        Kind(
            "impacts_identify",
            "physid impacts identify (physid.impacts.identify, paper D)",
            {
                "shape": "'ellipse:A,B' or 'polygon:X1,Y1;...' [m]",
                "surfaces": "list of 'line:ANGLE,OFFSET'",
                "mass": "mass [kg] (default 1)",
                "data": "pose CSV t,x,y,theta",
                "simulate": "instead of data: a throw simulated and sampled with the job's seed; "
                f"keys {sorted(IMPACTS_SIMULATION)}",
                "options": "IdentifyOptions fields (noise defaults to the simulation's)",
                "figures": "write fit.png and impulses.png (default false)",
            },
            ("shape", "surfaces"),
            ("data",),
            (),
            lambda args: args.get("simulate") is not None,
            _check_impacts,
            _run_impacts,
        ),
    )
}
ALIASES = {"impacts identify": "impacts_identify", "impacts-identify": "impacts_identify"}
