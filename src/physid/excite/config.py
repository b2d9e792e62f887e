"""The ``--config`` YAML of ``physid excite``.

The file holds the ``physid identify`` keys that shape the model (``joint_terms``,
``transmission``, ``joints``, ``locked``, ...; see ``physid config --template``), so the design
targets the base parameters that will be identified, plus one ``excitation`` section (every key
optional)::

    excitation:
      limits:                      # override the URDF per joint (rad, rad/s, rad/s^2, N m)
        joint_1: {lower: -2.5, upper: 2.5, velocity: 2.0, acceleration: 8.0, effort: 100}
      acceleration: null           # |ddq| limit of every joint without its own (default:
                                   # velocity limit x 2 pi x highest harmonic frequency)
      margin: 0.02                 # the NLP keeps this fraction away from every limit
      prior_std_relative: null     # weigh by a prior: base-parameter std = this x |nominal|
                                   # (floored at 1e-3 x the largest); null: no prior
      noise_std: 1.0               # N m, torque noise the prior is weighed against
      constraint_points: 0         # limit-check grid per period (0: 40 x harmonics, >= 200)
      information_points: 0        # criterion grid per period (0: 12 x harmonics, >= 60)
      max_iterations: 150          # IPOPT iterations per start
      starts: 3                    # random starts (seeds --seed, --seed + 1, ...); best kept
      time_limit_s: 180            # wall-clock budget of the design, shared by the starts
      sample_rate_hz: 200          # rows of the written trajectory
      collision: true              # keep bodies apart: the URDF's collision geometry
      min_distance: 0.02           # m between bodies that can meet (NLP; the check needs > 0)
      package_dirs: []             # folders holding the packages of package:// meshes
      workspace: null              # {frames: [tool0], lower: [x, y, z], upper: [x, y, z]} m,
                                   # base frame: these frames' origins stay inside the box

``physid identify`` refuses the ``excitation`` key: keep the shared keys in a file of their own
or give identify a copy without the section.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from physid.errors import ConfigError, InputError
from physid.excite.geometry import Workspace
from physid.excite.limits import LIMIT_KEYS
from physid.files.config import IdentifyConfig, parse_config
from physid.files.io import config_number, config_section, read_yaml


@dataclass(frozen=True)
class ExcitationConfig:
    limits: dict[str, dict[str, float]] = field(default_factory=dict)
    acceleration: float | None = None
    margin: float = 0.02
    prior_std_relative: float | None = None
    noise_std: float = 1.0
    constraint_points: int = 0
    information_points: int = 0
    max_iterations: int = 150
    starts: int = 3
    sample_rate_hz: float = 200.0
    time_limit_s: float = 180.0
    collision: bool = True
    min_distance: float = 0.02  # m
    package_dirs: tuple[str, ...] = ()
    workspace: Workspace | None = None


def _integer(raw: dict, key: str, default: int, low: int, high: int) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ConfigError(f"config excitation.{key}: expected an integer in [{low}, {high}]")
    return value


def parse_excitation(raw: Any) -> ExcitationConfig:
    """Validate the ``excitation`` section (None: the defaults)."""
    section = config_section(raw, set(ExcitationConfig.__dataclass_fields__), "excitation")
    limits: dict[str, dict[str, float]] = {}
    joints = section.get("limits") or {}
    if not isinstance(joints, dict):
        raise ConfigError("config excitation.limits: expected a mapping joint -> limits")
    for joint, entries in joints.items():
        entries = config_section(entries, set(LIMIT_KEYS), f"excitation.limits.{joint}")
        limits[str(joint)] = {
            key: config_number(
                value,
                f"excitation.limits.{joint}.{key}",
                positive=key not in ("lower", "upper"),
                low=-1e6,
                high=1e6,
            )
            for key, value in entries.items()
        }
    defaults = ExcitationConfig()

    def number(key: str, low: float, high: float, *, optional: bool = False) -> Any:
        value = section.get(key, getattr(defaults, key))
        return config_number(
            value, f"excitation.{key}", positive=low > 0, optional=optional, low=low, high=high
        )

    return ExcitationConfig(
        limits=limits,
        acceleration=number("acceleration", 1e-6, 1e6, optional=True),
        margin=number("margin", 0.0, 0.5),
        prior_std_relative=number("prior_std_relative", 1e-6, 1e6, optional=True),
        noise_std=number("noise_std", 1e-9, 1e6),
        constraint_points=_integer(section, "constraint_points", 0, 0, 100_000),
        information_points=_integer(section, "information_points", 0, 0, 100_000),
        max_iterations=_integer(section, "max_iterations", 150, 1, 100_000),
        starts=_integer(section, "starts", 3, 1, 100),
        sample_rate_hz=number("sample_rate_hz", 1e-3, 1e6),
        time_limit_s=number("time_limit_s", 1.0, 1e6),
        collision=_flag(section, "collision", True),
        min_distance=number("min_distance", 0.0, 10.0),
        package_dirs=_strings(section.get("package_dirs"), "package_dirs"),
        workspace=_workspace(section.get("workspace")),
    )


def _flag(section: dict, key: str, default: bool) -> bool:
    value = section.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"config excitation.{key}: expected true or false, got {value!r}")
    return value


def _strings(raw: Any, key: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(item, str) for item in raw):
        raise ConfigError(f"config excitation.{key}: expected a list of strings, got {raw!r}")
    return tuple(raw)


def _workspace(raw: Any) -> Workspace | None:
    """``{frames: [...], lower: [x, y, z], upper: [x, y, z]}`` [m], or None."""
    if raw is None:
        return None
    section = config_section(raw, {"frames", "lower", "upper"}, "excitation.workspace")
    frames = _strings(section.get("frames"), "workspace.frames")
    if not frames:
        raise ConfigError("config excitation.workspace.frames: name at least one frame")
    bounds = {}
    for key in ("lower", "upper"):
        value = section.get(key)
        if not isinstance(value, list) or len(value) != 3:
            raise ConfigError(f"config excitation.workspace.{key}: expected [x, y, z] in m")
        bounds[key] = np.array(
            [
                config_number(v, f"excitation.workspace.{key}", positive=False, low=-1e3, high=1e3)
                for v in value
            ]
        )
    if np.any(bounds["lower"] >= bounds["upper"]):
        raise ConfigError("config excitation.workspace: lower must be below upper on every axis")
    return Workspace(frames, bounds["lower"], bounds["upper"])


def load_excite_config(path: str | Path | None) -> tuple[IdentifyConfig, ExcitationConfig]:
    """The model keys (as ``physid identify`` reads them) and the ``excitation`` section."""
    if path is None:
        return IdentifyConfig(), ExcitationConfig()
    raw = read_yaml(path, "config file")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InputError(f"expected a mapping, got {type(raw).__name__}", source=str(path))
    raw = dict(raw)
    try:
        excitation = parse_excitation(raw.pop("excitation", None))
        return parse_config(raw, str(path)), excitation
    except InputError as error:
        raise InputError(str(error), source=str(path)) from None
