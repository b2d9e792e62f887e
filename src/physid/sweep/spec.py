"""The sweep SPEC file: which job kind, the base arguments, a grid and/or a list of jobs, seeds.

::

    kind: identify              # identify | validate | payload | impacts_identify
    base:                       # arguments of every job (paths relative to this file)
      urdf: robot.urdf
      data: [train.csv]
      config: {filter: {method: classical}}   # or a YAML file
    grid:                       # cartesian product; keys are argument paths
      config.filter.butterworth_cutoff_hz: [10, 20, 40]
      config.estimation.weighting: [ols, wls]
    jobs:                       # explicit jobs, after the grid ones (optional 'name')
      - {name: kalman, config.filter.method: irwsm1}
    seeds: 3                    # or [0, 5, 7]: every job once per seed (kinds that simulate)

Everything is checked before anything runs; a problem is one :class:`InputError` line naming the
key (``grid.config.filter.method``, ``jobs[2].data``, or the job id and argument).
"""

from __future__ import annotations

import copy
import itertools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from physid.errors import InputError
from physid.files.io import is_file
from physid.sweep.kinds import ALIASES, KINDS, Kind

TOP_KEYS = ("kind", "description", "base", "grid", "jobs", "seeds")
NESTED = ("config", "simulate", "options")  # arguments that are mappings (keys 'a.b' edit them)
MAX_JOBS = 100_000


@dataclass(frozen=True)
class Job:
    """One job: its folder name, what varies (``parameters``) and every argument, resolved."""

    job_id: str
    kind: str
    parameters: dict[str, Any]
    args: dict[str, Any]
    seed: int | None = None


@dataclass(frozen=True)
class SweepSpec:
    kind: str
    jobs: tuple[Job, ...]
    source: str
    description: str = ""
    raw: dict = field(default_factory=dict)


def load_spec(path: str | Path) -> SweepSpec:
    """Read and check a SPEC YAML file; every error is one line starting with the file name."""
    from physid.files.io import read_yaml

    path = Path(path)
    raw = read_yaml(path, "sweep spec")
    try:
        return parse_spec(raw, path.resolve().parent, str(path))
    except InputError as error:
        raise InputError(str(error), source=str(path)) from None


def parse_spec(raw: Any, base_dir: Path, source: str = "spec") -> SweepSpec:
    """Check a SPEC mapping (as loaded from YAML) and expand it into its jobs."""
    if not isinstance(raw, dict):
        raise InputError(f"expected a mapping with keys {list(TOP_KEYS)}, got {type(raw).__name__}")
    unknown = sorted(set(map(str, raw)) - set(TOP_KEYS))
    if unknown:
        raise InputError(f"unknown key(s) {unknown}; allowed: {list(TOP_KEYS)}")
    name = raw.get("kind")
    name = ALIASES.get(name, name) if isinstance(name, str) else None
    if name not in KINDS:
        raise InputError(f"kind: expected one of {sorted(KINDS)}, got {raw.get('kind')!r}")
    kind = KINDS[name]
    loader = _Loader(kind, base_dir)
    base = raw.get("base") or {}
    if not isinstance(base, dict):
        raise InputError(f"base: expected a mapping of arguments, got {type(base).__name__}")
    base_args: dict[str, Any] = {}
    for key, value in base.items():
        _check_key(kind, str(key), "base")
        loader.set(base_args, str(key), value, f"base.{key}")
    seeds = _seeds(raw.get("seeds"))
    variants = _grid(kind, raw.get("grid")) + _explicit(kind, raw.get("jobs"), bool(seeds))
    variants = variants or [({}, None, "base")]
    total = len(variants) * max(len(seeds), 1)
    if total > MAX_JOBS:
        raise InputError(f"grid: {total} jobs, more than {MAX_JOBS}; split the sweep")
    jobs = []
    for overrides, label, origin in variants:
        for seed in seeds or [overrides.get("seed")]:
            parameters = {k: v for k, v in overrides.items() if k != "seed"}
            if seed is not None:
                parameters["seed"] = seed
            job_id = _job_id(len(jobs), parameters, label)
            args = copy.deepcopy(base_args)
            # whole arguments first, then the keys inside them ('config' before 'config.a.b')
            for key in sorted(parameters, key=lambda k: k.count(".")):
                if key != "seed":
                    loader.set(args, key, parameters[key], f"{job_id}: {key}")
            where = f"job[{job_id}]"
            try:
                loader.resolve_paths(args, where)
                kind.check(args, where)
            except InputError as error:
                raise _located(error, where, parameters, origin) from None
            if seed is not None and not kind.uses_seed(args):
                raise InputError(
                    f"seeds: {kind.name} jobs without 'simulate' use no random numbers ({job_id})"
                )
            jobs.append(Job(job_id, kind.name, parameters, args, seed))
    return SweepSpec(kind.name, tuple(jobs), source, str(raw.get("description") or ""), raw)


def _located(error: InputError, where: str, parameters: dict, origin: str) -> InputError:
    """A job's error under the SPEC key it comes from: ``base.urdf: ...`` when the argument is
    the base one, ``grid.data (job 0002_data=b): ...`` when the grid or a job set it."""
    text = str(error)
    if not text.startswith(where):
        return error
    rest = text[len(where) :]
    key, _, message = rest.lstrip(".").partition(": ")
    changed = [
        p for p in parameters if p == key or key.startswith(f"{p}.") or p.startswith(f"{key}.")
    ]
    if not key or not changed or origin == "base":
        return InputError(f"base.{key}: {message}" if key else f"base{rest}")
    return InputError(f"{origin}.{changed[0]} ({where}): {message}")


def _check_key(kind: Kind, key: str, where: str) -> None:
    head, dot, _rest = key.partition(".")
    if head not in kind.arguments:
        raise InputError(
            f"{where}.{key}: not an argument of {kind.name} jobs; allowed: {sorted(kind.arguments)}"
        )
    if dot and head not in NESTED:
        raise InputError(f"{where}.{key}: '{head}' has no keys inside it")


def _seeds(raw: Any) -> list[int]:
    if raw is None:
        return []
    if isinstance(raw, int) and not isinstance(raw, bool):
        if not 1 <= raw <= MAX_JOBS:
            raise InputError(f"seeds: expected a count >= 1 or a list of seeds, got {raw!r}")
        return list(range(raw))
    if (
        not isinstance(raw, list)
        or not raw
        or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in raw)
    ):
        raise InputError(f"seeds: expected a count or a list of integers >= 0, got {raw!r}")
    if len(set(raw)) != len(raw):
        raise InputError(f"seeds: a seed is given twice in {raw!r}")
    return list(raw)


def _grid(kind: Kind, raw: Any) -> list[tuple[dict, str | None, str]]:
    if raw is None:
        return []
    if not isinstance(raw, dict) or not raw:
        raise InputError("grid: expected a mapping of argument -> list of values")
    for key, values in raw.items():
        _check_key(kind, str(key), "grid")
        if not isinstance(values, list) or not values:
            raise InputError(f"grid.{key}: expected a non-empty list of values, got {values!r}")
    keys = [str(k) for k in raw]
    combos = itertools.product(*raw.values())
    return [(dict(zip(keys, combo, strict=True)), None, "grid") for combo in combos]


def _explicit(kind: Kind, raw: Any, seeded: bool) -> list[tuple[dict, str | None, str]]:
    if raw is None:
        return []
    if not isinstance(raw, list) or not raw:
        raise InputError("jobs: expected a non-empty list of mappings (argument -> value)")
    variants = []
    for index, job in enumerate(raw):
        if not isinstance(job, dict):
            raise InputError(f"jobs[{index}]: expected a mapping, got {type(job).__name__}")
        job = {str(k): v for k, v in job.items()}
        label = job.pop("name", None)
        if label is not None and not isinstance(label, str | int):
            raise InputError(f"jobs[{index}].name: expected a short text, got {label!r}")
        for key in job:
            if key == "seed":
                if seeded:
                    raise InputError(f"jobs[{index}].seed: not with the top-level 'seeds'")
                _seeds([job[key]])
                continue
            _check_key(kind, key, f"jobs[{index}]")
        variants.append((job, None if label is None else str(label), f"jobs[{index}]"))
    return variants


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return "+".join(_short(v) for v in value)
    if isinstance(value, str | Path):
        return Path(str(value)).stem if "/" in str(value) else str(value)
    return str(value)


def _job_id(index: int, parameters: dict[str, Any], label: str | None) -> str:
    """``0003_mu=0.3_fps=120_seed=0``: the index keeps ids unique, the rest is for reading."""
    parts = (
        [label] if label else [f"{k.rsplit('.', 1)[-1]}={_short(v)}" for k, v in parameters.items()]
    )
    text = re.sub(r"[^A-Za-z0-9._=+-]+", "-", "_".join(parts)).strip("-.")
    return f"{index:04d}" + (f"_{text[:80]}" if text else "")


class _Loader:
    """Sets arguments (loading a 'config' given as a file) and resolves file arguments."""

    def __init__(self, kind: Kind, base_dir: Path) -> None:
        self.kind, self.base_dir = kind, base_dir

    def path(self, value: Any, where: str) -> str:
        if not isinstance(value, str | Path) or not str(value):
            raise InputError(f"{where}: expected a file path, got {value!r}")
        path = Path(value).expanduser()
        path = Path(os.path.normpath(path if path.is_absolute() else self.base_dir / path))
        if not is_file(path):  # (Path.is_file raises on a name too long)
            raise InputError(f"{where}: file not found: {path}")
        return str(path)

    def set(self, args: dict, key: str, value: Any, where: str) -> None:
        value = copy.deepcopy(value)
        if key == "config" and isinstance(value, str | Path):  # a config file: its mapping
            from physid.files.io import read_yaml

            value = read_yaml(self.path(value, where), "config file") or {}
        if key in NESTED and value is not None and not isinstance(value, dict):
            raise InputError(f"{where}: expected a mapping, got {type(value).__name__}")
        *parents, last = key.split(".")
        node = args
        for depth, part in enumerate(parents):
            child = node.setdefault(part, {})
            if child is None:
                child = node[part] = {}
            if not isinstance(child, dict):
                inner = ".".join(parents[: depth + 1])
                raise InputError(f"{where}: '{inner}' is {child!r}, not a mapping")
            node = child
        node[last] = value

    def resolve_paths(self, args: dict, where: str) -> None:
        for key in self.kind.paths:
            if args.get(key) is not None:
                args[key] = self.path(args[key], f"{where}.{key}")
        for key in self.kind.path_lists:
            value = args.get(key)
            if value is None:
                continue
            items = value if isinstance(value, list) else [value]
            args[key] = [self.path(item, f"{where}.{key}") for item in items]
