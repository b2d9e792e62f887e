"""The ``--config`` YAML of ``physid identify`` / ``validate``: what flags cannot say well.

Every key is optional; unknown keys are an error (a typo must not be silently ignored). The
dataclasses below are the one source of the keys and their defaults: ``physid config
--template`` prints them, with comments and commented-out examples
(:mod:`physid.files.config_template`), and :func:`parse_config` of an empty mapping returns exactly
those defaults. A new key needs a field here (with its default), its parsing in
:func:`parse_config`, and a comment in :data:`physid.files.config_template.COMMENTS`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from physid.body.inertia import check_consistency, pi_from_mass_com_inertia
from physid.errors import ConfigError, InputError
from physid.files.io import config_number, config_section, read_yaml
from physid.recordings.trajectory import (
    ANGLE_UNITS,
    CORRUPT_SAMPLE_CHOICES,
    TIME_BASE_CHOICES,
    hold_still,
    positions_named,
)
from physid.robot.friction import FRICTION_MODELS
from physid.robot.joint_locking import lock_joints
from physid.robot.model import (
    JOINT_TERM_NAMES,
    RobotModel,
    Transmission,
    build_robot_model,
    load_robot_file,
    mimic_joints,
    position_limits,
    refuse_mimic_joints,
    with_gravity,
)

METHODS = ("classical", "irwsm1", "irwsm2", "given")


AUTO_DEADBAND = "auto"  # coulomb_deadband chosen from the velocity noise of the data


@dataclass(frozen=True)
class FilterConfig:
    method: str = "classical"
    butterworth_cutoff_hz: float | None = None
    decimation_cutoff_hz: float | None = None
    decimation_factor: int | None = None
    nvr: float | None = None


@dataclass(frozen=True)
class EstimationConfig:
    # wls | ols | auto: the training folds choose (offline.choose.weighting)
    weighting: str = "auto"
    essential_ratio: float = 30.0
    consistency_margin: float | None = None  # None: offline.consistent.default_margin
    prior_std_relative: float | None = 0.3
    prior_total_mass_std_relative: float | None = None
    prior_metric: str = "logdet"
    # implausible masses refitted with a tighter bodies' prior where the folds cannot tell
    # (offline.against_prior.plausible_prior); off by default when prior_std_relative is given
    plausible_masses: bool = True
    # true | false | "auto": the base tilt, if blocked cross-validation on the training data
    # supports it (offline.choices)
    estimate_gravity_direction: bool | str = "auto"
    # "auto" | "report" | seconds: a torque logged late against the motion is compensated when
    # blocked cross-validation on the training data supports it (offline.delay_choice), only
    # reported (offline.delay), or compensated by the given delay (workflows)
    torque_delay: str | float = "auto"


@dataclass(frozen=True)
class TransmissionConfig:
    motors: tuple[str, ...]
    reduction: tuple[float, ...]
    coupling: dict[str, dict[str, float]] = field(default_factory=dict)
    joint_offset: dict[str, float] = field(default_factory=dict)
    coupled_motor_terms: bool = True

    def build(self, joint_names: tuple[str, ...]) -> Transmission:
        """The :class:`Transmission` for a model with these joints (in model order)."""
        n = len(joint_names)
        if len(self.motors) != n or len(self.reduction) != n:
            raise ConfigError(
                f"config transmission: {len(self.motors)} motors and {len(self.reduction)} "
                f"reductions given, the model has {n} joints"
            )
        ratio = np.diag(np.asarray(self.reduction, dtype=float))
        for motor, entries in self.coupling.items():
            if motor not in self.motors:
                raise ConfigError(f"config transmission.coupling: unknown motor '{motor}'")
            for joint, value in entries.items():
                if joint not in joint_names:
                    raise ConfigError(
                        f"config transmission.coupling.{motor}: unknown joint '{joint}'"
                    )
                ratio[self.motors.index(motor), joint_names.index(joint)] = float(value)
        offset = np.zeros(n)
        for joint, value in self.joint_offset.items():
            if joint not in joint_names:
                raise ConfigError(f"config transmission.joint_offset: unknown joint '{joint}'")
            offset[joint_names.index(joint)] = float(value)
        return Transmission(tuple(self.motors), ratio, offset)


@dataclass(frozen=True)
class IdentifyConfig:
    joint_terms: tuple[str, ...] = JOINT_TERM_NAMES
    # "linear" | "sigmoid" | "stribeck" for every joint, or {joint: model} (others linear)
    friction: str | dict[str, str] = "linear"
    transmission: TransmissionConfig | None = None
    drive_gains: dict[str, float] | str = field(default_factory=dict)  # or IDENTIFY_GAINS
    payload: KnownPayload | None = None  # the known payload of the --loaded-data recordings
    filter: FilterConfig = field(default_factory=FilterConfig)
    train_fraction: float | None = None
    estimation: EstimationConfig = field(default_factory=EstimationConfig)
    allow_large_angles: bool = False
    # ANGLE_UNITS: revolute joints' (and motors') q_, dq_, ddq_ columns in radians or degrees
    angle_unit: str = "radians"
    # physid.recordings.trajectory.TIME_BASE_CHOICES: check the stamps, or trust them
    time_base: str = "auto"
    # physid.recordings.trajectory.CORRUPT_SAMPLE_CHOICES: repair isolated corrupt samples or not
    corrupt_samples: str = "repair"
    coulomb_deadband: float | dict[str, float] | str = "auto"  # AUTO_DEADBAND: from the data
    joints: tuple[str, ...] | None = None  # identify these; None: every 1-DoF joint of the URDF
    # positions of locked joints, or RECORDED: kept in the model, moved by the recorded position,
    # the torque not fitted
    locked: dict[str, float | str] = field(default_factory=dict)
    fit_joints: tuple[str, ...] | None = None  # whose torques are fitted; None: all not locked
    # gravity in the robot's base frame [m/s^2] (a robot on a wall, a ceiling or an incline);
    # None: the URDF convention (0, 0, -9.81), or an MJCF's <option gravity>
    gravity: tuple[float, float, float] | None = None


# Sane ranges of the numeric options (beyond them a value is a typo or a unit mistake, and would
# run away in time or memory, or end in a meaningless fit).
@dataclass(frozen=True)
class KnownPayload:
    """A payload of known inertia fixed to the body moved by ``joint``: ``pi`` (10,) in that
    joint's frame, Pinocchio order ``[m, m c, I_origin (xx, xy, yy, xz, yz, zz)]``."""

    joint: str
    pi: np.ndarray
    # False: only the mass is known (com and inertia not given); the payload's first and second
    # moments are then estimated with the gains (offline.drive_gains)
    moments_known: bool = True


IDENTIFY_GAINS = "identify"  # config drive_gains: estimate them (offline.drive_gains)

RANGES: dict[str, tuple[float, float]] = {
    "filter.butterworth_cutoff_hz": (1e-3, 1e5),
    "filter.decimation_cutoff_hz": (0.0, 1e5),
    "filter.nvr": (1e-12, 1e12),
    "estimation.essential_ratio": (1.0, 1e6),
    "estimation.consistency_margin": (0.0, 1.0),  # kg m^2
    "coulomb_deadband": (0.0, 100.0),  # rad/s or m/s
    "locked": (-1e3, 1e3),  # rad or m
    "estimation.prior_std_relative": (1e-6, 1e6),
    "estimation.torque_delay": (-1.0, 1.0),
    "estimation.prior_total_mass_std_relative": (1e-6, 10.0),
    "transmission.reduction": (-1e5, 1e5),
    "drive_gains": (-1e6, 1e6),
}


def _number(raw: dict[str, Any], key: str, where: str, *, positive: bool = False) -> float | None:
    """Optional number ``raw[key]`` of section ``where``, within its :data:`RANGES` entry."""
    low, high = RANGES.get(f"{where}.{key}", (-np.inf, np.inf))
    return config_number(
        raw.get(key), f"{where}.{key}", positive=positive, optional=True, low=low, high=high
    )


def _torque_delay(estimation: dict[str, Any]) -> str | float:
    """``estimation.torque_delay``: auto (default), report, or a delay in seconds."""
    value = estimation.get("torque_delay")
    if value is None or value in ("report", "auto"):
        return value or "auto"
    if isinstance(value, str | bool):
        raise ConfigError(
            f"config estimation.torque_delay: expected report, auto or a delay in "
            f"seconds, got {value!r}"
        )
    return _number(estimation, "torque_delay", "estimation")


def parse_drive_gains(raw: Any) -> dict[str, float] | str:
    """A config's ``drive_gains``: ``{joint: N m/A}`` (joint side, non-zero; absent: {}) or
    :data:`IDENTIFY_GAINS`."""
    if raw == IDENTIFY_GAINS:
        return IDENTIFY_GAINS
    gains = _numbers(raw, "drive_gains", RANGES["drive_gains"])
    for joint, gain in gains.items():
        if gain == 0:
            raise ConfigError(f"config drive_gains.{joint}: a gain of 0 makes every torque 0")
    return gains


def parse_config(raw: dict[str, Any] | None, source: str = "config") -> IdentifyConfig:
    """Validate a config mapping (as loaded from YAML) into an :class:`IdentifyConfig`."""
    raw = config_section(
        raw or {},
        set(IdentifyConfig.__dataclass_fields__) - {"train_fraction"} | {"split"},
        source,
    )
    joint_terms = _joint_terms(raw)
    transmission = _transmission(raw.get("transmission"))
    filter_config = _filter(raw.get("filter") or {})
    train_fraction = _train_fraction(raw.get("split") or {})
    estimation = _estimation(raw.get("estimation") or {})
    gains = parse_drive_gains(raw.get("drive_gains"))
    payload = _payload(raw.get("payload"))
    # 'identify' without a payload is identify's error (workflows.run_identify), not the
    # config's: validate and payload read it as the gains params.json holds
    if payload is not None and gains != IDENTIFY_GAINS:
        raise ConfigError(
            "config payload: the known payload of the --loaded-data recordings is used only with "
            "drive_gains: identify; remove the section, or set drive_gains: identify"
        )
    friction = _friction(raw.get("friction", "linear"))
    if gains == IDENTIFY_GAINS and friction not in ("linear", {}):
        raise ConfigError(
            "config drive_gains: identify fits the linear friction model only; identify the "
            "gains with friction: linear, then give them as numbers beside friction: "
            f"{friction if isinstance(friction, str) else 'sigmoid/stribeck'}"
        )
    return IdentifyConfig(
        joint_terms=joint_terms,
        friction=friction,
        transmission=transmission,
        drive_gains=gains,
        payload=payload,
        filter=filter_config,
        train_fraction=train_fraction,
        estimation=estimation,
        allow_large_angles=_flag(raw, "allow_large_angles", False, ""),
        angle_unit=_choice(raw, "angle_unit", ANGLE_UNITS),
        time_base=_choice(raw, "time_base", TIME_BASE_CHOICES),
        corrupt_samples=_choice(raw, "corrupt_samples", CORRUPT_SAMPLE_CHOICES),
        coulomb_deadband=_deadband(raw.get("coulomb_deadband", AUTO_DEADBAND)),
        joints=_joint_list(raw.get("joints")),
        locked=_locked(raw.get("locked")),
        fit_joints=_joint_list(raw.get("fit_joints"), "fit_joints"),
        gravity=_gravity(raw.get("gravity")),
    )


def _joint_terms(raw: dict[str, Any]) -> tuple[str, ...]:
    joint_terms = raw.get("joint_terms", JOINT_TERM_NAMES)
    if not isinstance(joint_terms, list | tuple) or not all(
        isinstance(term, str) for term in joint_terms
    ):
        raise ConfigError(
            f"config joint_terms: expected a list of {list(JOINT_TERM_NAMES)}, got {joint_terms!r}"
        )
    joint_terms = tuple(joint_terms)
    bad_terms = sorted(set(joint_terms) - set(JOINT_TERM_NAMES))
    if bad_terms:
        raise ConfigError(
            f"config joint_terms: unknown {bad_terms}; allowed: {list(JOINT_TERM_NAMES)}"
        )

    return joint_terms


def _transmission(section: Any) -> TransmissionConfig | None:
    if section is None:
        return None
    t = config_section(section, set(TransmissionConfig.__dataclass_fields__), "transmission")
    if "motors" not in t or "reduction" not in t:
        raise ConfigError("config transmission: 'motors' and 'reduction' are required")
    if not isinstance(t["motors"], list) or not isinstance(t["reduction"], list):
        raise ConfigError("config transmission: 'motors' and 'reduction' must be lists")
    low, high = RANGES["transmission.reduction"]
    reduction = [
        config_number(r, "transmission.reduction", positive=False, low=low, high=high)
        for r in t["reduction"]
    ]
    if any(r == 0 for r in reduction):
        raise ConfigError("config transmission.reduction: a ratio of 0 is not invertible")
    coupling = _mapping(t.get("coupling"), "transmission.coupling")
    return TransmissionConfig(
        motors=tuple(str(m) for m in t["motors"]),
        reduction=tuple(reduction),
        coupling={str(k): _numbers(e, f"transmission.coupling.{k}") for k, e in coupling.items()},
        joint_offset=_numbers(t.get("joint_offset"), "transmission.joint_offset"),
        coupled_motor_terms=_flag(t, "coupled_motor_terms", True, "transmission"),
    )


def _filter(section: Any) -> FilterConfig:
    f = config_section(section, set(FilterConfig.__dataclass_fields__), "filter")
    method = f.get("method", "classical")
    if method not in METHODS:
        raise ConfigError(f"config filter.method: '{method}' is not one of {list(METHODS)}")
    factor = f.get("decimation_factor")
    if factor is not None and (
        isinstance(factor, bool) or not isinstance(factor, int) or not 1 <= factor <= 10_000
    ):
        raise ConfigError(
            f"config filter.decimation_factor: expected an integer in [1, 10000], got {factor!r}"
        )
    decimation_cutoff = _number(f, "decimation_cutoff_hz", "filter")
    if decimation_cutoff is not None and decimation_cutoff < 0:
        raise ConfigError("config filter.decimation_cutoff_hz: must be >= 0 (0 = no decimation)")
    return FilterConfig(
        method=method,
        butterworth_cutoff_hz=_number(f, "butterworth_cutoff_hz", "filter", positive=True),
        decimation_cutoff_hz=decimation_cutoff,
        decimation_factor=factor,
        nvr=_number(f, "nvr", "filter", positive=True),
    )


def _train_fraction(section: Any) -> float | None:
    split = config_section(section, {"train_fraction"}, "split")
    train_fraction = _number(split, "train_fraction", "split")
    if train_fraction is not None and not 0.0 < train_fraction < 1.0:
        raise ConfigError(f"config split.train_fraction: must lie in (0, 1), got {train_fraction}")

    return train_fraction


def _estimation(section: Any) -> EstimationConfig:
    e = config_section(section, set(EstimationConfig.__dataclass_fields__), "estimation")
    prior_metric = e.get("prior_metric", "logdet")
    if prior_metric not in ("logdet", "euclidean"):
        raise ConfigError(
            f"config estimation.prior_metric: '{prior_metric}' is not logdet|euclidean"
        )
    weighting = e.get("weighting", EstimationConfig.weighting)
    if weighting not in ("wls", "ols", "auto"):
        raise ConfigError(f"config estimation.weighting: '{weighting}' is not wls|ols|auto")
    defaults = EstimationConfig()
    return EstimationConfig(
        weighting=weighting,
        essential_ratio=_number(e, "essential_ratio", "estimation", positive=True)
        or defaults.essential_ratio,
        consistency_margin=_number(e, "consistency_margin", "estimation")
        if e.get("consistency_margin") is not None
        else defaults.consistency_margin,
        prior_std_relative=_number(e, "prior_std_relative", "estimation", positive=True)
        if "prior_std_relative" in e
        else defaults.prior_std_relative,
        prior_total_mass_std_relative=_number(
            e, "prior_total_mass_std_relative", "estimation", positive=True
        )
        if "prior_total_mass_std_relative" in e
        else defaults.prior_total_mass_std_relative,
        prior_metric=prior_metric,
        # a prior strength the user states is not second-guessed
        plausible_masses=_flag(e, "plausible_masses", "prior_std_relative" not in e, "estimation"),
        estimate_gravity_direction="auto"
        if e.get("estimate_gravity_direction", "auto") in ("auto", None)
        else _flag(e, "estimate_gravity_direction", True, "estimation"),
        torque_delay=_torque_delay(e),
    )


def _gravity(raw: Any) -> tuple[float, float, float] | None:
    """Config ``gravity``: three finite numbers [m/s^2] in the base frame, or null."""
    if raw is None:
        return None
    if not isinstance(raw, list | tuple) or len(raw) != 3:
        raise ConfigError(f"config gravity: expected [gx, gy, gz] in m/s^2, got {raw!r}"[:120])
    values = tuple(config_number(v, "gravity", positive=False, low=-100.0, high=100.0) for v in raw)
    return values  # type: ignore[return-value]


def _friction(raw: Any) -> str | dict[str, str]:
    """Config ``friction``: one model for every joint, or a mapping joint -> model."""
    if isinstance(raw, str):
        if raw not in FRICTION_MODELS:
            raise ConfigError(f"config friction: '{raw}' is not one of {list(FRICTION_MODELS)}")
        return raw
    mapping = _mapping(raw, "friction")
    for joint, kind in mapping.items():
        if kind not in FRICTION_MODELS:
            raise ConfigError(
                f"config friction.{joint}: {kind!r} is not one of {list(FRICTION_MODELS)}"
            )
    return {str(joint): str(kind) for joint, kind in mapping.items()}


def _choice(raw: dict[str, Any], key: str, choices: tuple[str, ...]) -> str:
    """A word out of ``choices`` (the first is the default)."""
    value = raw.get(key, choices[0])
    if value is None:
        return choices[0]
    if value not in choices:
        raise ConfigError(f"config {key}: {value!r} is not one of {list(choices)}")
    return value


def _flag(raw: dict[str, Any], key: str, default: bool, where: str) -> bool:
    """A YAML boolean (``'no'`` as a string is not one: a quoted word must not flip a switch)."""
    value = raw.get(key, default)
    if not isinstance(value, bool):
        name = f"{where}.{key}" if where else key
        raise ConfigError(f"config {name}: expected true or false, got {value!r}")
    return value


def _mapping(raw: Any, where: str) -> dict:
    """An optional YAML mapping (``None`` is an empty one)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config {where}: expected a mapping, got {raw!r}")
    return raw


def _numbers(
    raw: Any, where: str, bounds: tuple[float, float] = (-np.inf, np.inf)
) -> dict[str, float]:
    """An optional mapping of names to finite numbers within ``bounds``."""
    low, high = bounds
    return {
        str(k): config_number(v, f"{where}.{k}", positive=False, low=low, high=high)
        for k, v in _mapping(raw, where).items()
    }


def _deadband(raw: Any) -> float | dict[str, float] | str:
    if raw is None or raw == AUTO_DEADBAND:  # an empty YAML value means the default
        return AUTO_DEADBAND
    if isinstance(raw, str):
        raise ConfigError(
            f"config coulomb_deadband: expected auto, a number or a mapping, got {raw!r}"
        )
    values = raw if isinstance(raw, dict) else {None: raw}
    checked = {}
    for key, value in values.items():
        where = "coulomb_deadband" if key is None else f"coulomb_deadband.{key}"
        low, high = RANGES["coulomb_deadband"]
        checked[key] = config_number(value, where, positive=False, low=low, high=high)
    return checked[None] if not isinstance(raw, dict) else {str(k): v for k, v in checked.items()}


def _payload(raw: Any) -> KnownPayload | None:
    """Config ``payload``: a known mass (and optionally its com and inertia) fixed to a body."""
    if raw is None:
        return None
    section = config_section(raw, {"joint", "mass", "com", "inertia"}, "payload")
    if not isinstance(section.get("joint"), str):
        raise ConfigError("config payload.joint: the joint whose body carries the payload")
    mass = config_number(section.get("mass"), "payload.mass", low=1e-6, high=1e4)
    moments_known = "com" in section
    if "inertia" in section and not moments_known:
        raise ConfigError("config payload.inertia: give the centre of mass (payload.com) too")
    com = _vector(section.get("com", [0.0, 0.0, 0.0]), 3, "payload.com", 10.0)
    values = _vector(section.get("inertia", [0.0] * 6), 6, "payload.inertia", 1e4)
    xx, xy, yy, xz, yz, zz = values
    inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    pi = pi_from_mass_com_inertia(mass, com, inertia)
    report = check_consistency(pi, name="payload")
    if not report.consistent and np.any(values):
        raise ConfigError(f"config payload: no rigid body has this inertia ({report.reason})")
    return KnownPayload(section["joint"], pi, moments_known)


def _vector(raw: Any, size: int, where: str, bound: float) -> np.ndarray:
    if not isinstance(raw, list) or len(raw) != size:
        raise ConfigError(f"config {where}: expected a list of {size} numbers, got {raw!r}")
    return np.array([config_number(v, where, positive=False, low=-bound, high=bound) for v in raw])


def _joint_list(raw: Any, key: str = "joints") -> tuple[str, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not raw or not all(isinstance(j, str) for j in raw):
        raise ConfigError(f"config {key}: expected a list of joint names, got {raw!r}")
    return tuple(raw)


RECORDED = "recorded"  # config locked: {joint: recorded}


def _locked(raw: Any) -> dict[str, float | str]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(
            f"config locked: expected a mapping joint -> position or '{RECORDED}', got {raw!r}"
        )
    fixed = {joint: value for joint, value in raw.items() if value != RECORDED}
    positions = _numbers(fixed, "locked", RANGES["locked"])  # any sign: 0 rad is a common lock
    return {joint: positions.get(joint, RECORDED) for joint in raw}


def _split_locks(locked: dict[str, float | str]) -> tuple[dict[str, float], tuple[str, ...]]:
    """``(fixed positions, joints locked at their recorded positions)`` of config ``locked``."""
    recorded = tuple(joint for joint, value in locked.items() if value == RECORDED)
    return {j: v for j, v in locked.items() if j not in recorded}, recorded


def _fitted_joints(
    config: IdentifyConfig, recorded: tuple[str, ...], joint_names: tuple[str, ...], source: str
) -> tuple:
    """Whose torques are fitted: ``fit_joints``, else every kept joint not locked at its
    ``recorded`` position. Names are checked against the model."""
    fitted = config.fit_joints or tuple(j for j in joint_names if j not in recorded)
    for joint in fitted:
        if joint not in joint_names:
            raise InputError(
                f"fit_joints: '{joint}' is not a joint of the model ({', '.join(joint_names)})",
                source=source,
            )
        if joint in recorded:
            raise InputError(
                f"fit_joints: '{joint}' is locked at its recorded position (locked: "
                f"{{{joint}: {RECORDED}}}): its torque cannot be fitted",
                source=source,
            )
    if not fitted:
        raise InputError("no joint left whose torque is fitted (fit_joints)", source=source)
    return fitted


def lock_unlogged(
    urdf: str | Path, config: IdentifyConfig, logged: frozenset[str]
) -> tuple[IdentifyConfig, dict[str, float | str]]:
    """The config with the URDF's joints that no recording logs held still, as ``locked:``
    would hold them, and what was added (empty: the config as given).

    A robot description carries more joints than its logs: a gripper's fingers on the Panda of
    example-robot-data, an arm's URDF with its hand, a mobile manipulator's head. Each 1-DoF
    joint with no ``q_`` column in any recording (``logged``: the joints they log) is held at 0
    (within its limits); a mimic joint that is logged is held at its recorded positions (its
    torque not fitted), one that is not at its ``offset``. Nothing is added when the config
    chooses ``joints:``, when every joint is unlogged or none is, or when a recording names a
    joint the URDF lacks (the names may be off): the missing-column error says which. An
    unlogged joint with a logged one beyond it (a column missing from the middle of the chain)
    is an error naming its column."""
    pin_model = load_robot_file(urdf)
    names = [pin_model.names[j] for j in range(1, pin_model.njoints)]
    one_dof = [
        pin_model.names[j]
        for j in range(1, pin_model.njoints)
        if pin_model.joints[j].nq == 1 and pin_model.joints[j].nv == 1
    ]
    candidates = [j for j in one_dof if j not in config.locked]
    unlogged = [j for j in candidates if j not in logged]
    if (
        config.joints is not None
        or not logged
        or not (logged <= set(names))
        or len(unlogged) == len(candidates)
    ):
        return config, {}
    # only the ends of the tree: a joint with a logged joint beyond it is a column missing
    # from the middle of the chain, not a hand. Said here: left to the loading, a gripper's
    # coupled fingers beyond it would be refused first, and the error would ask to leave out
    # finger columns the log has
    for joint in unlogged:
        beyond = pin_model.subtrees[pin_model.getJointId(joint)]
        found = [pin_model.names[k] for k in beyond if pin_model.names[k] in logged]
        if found:
            listed = ", ".join(found[:3]) + (" ..." if len(found) > 3 else "")
            raise InputError(
                f"missing column 'q_{joint}' (joint position) in every recording, while joints "
                f"beyond it are logged ({listed}): a joint in the middle of the chain must be "
                f"logged; if it did not move, {hold_still(joint)}",
                source=str(urdf),
            )
    mimics = mimic_joints(urdf)
    added: dict[str, float | str] = {}
    for joint in candidates:
        at = mimics[joint][1] if joint in mimics else 0.0
        if joint not in logged:
            limits = position_limits(pin_model, joint)
            added[joint] = at if limits is None else float(np.clip(at, *limits))
        elif joint in mimics:
            added[joint] = RECORDED
    if not added:
        return config, {}
    return replace(config, locked={**config.locked, **added}), added


def unlogged_holds(
    urdf: str | Path, columns: Iterable[str], held: Mapping[str, float | str] | None = None
) -> tuple[dict[str, float], tuple[str, ...]]:
    """For the commands that read one recording against a robot file (``online``, ``oe``): the
    file's joints the recording's ``columns`` do not log, held still as :func:`lock_unlogged`
    holds them for identify (a gripper's fingers beside an arm's log), at ``held``'s positions
    where given (a nominal identification's, :meth:`ParamsFile.held_joints`) else its own,
    and the warning; none when a logged mimic joint would need its recorded positions."""
    _, added = lock_unlogged(urdf, IdentifyConfig(), positions_named(columns))
    if not added or RECORDED in added.values():
        return {}, ()
    held = held or {}
    positions = {
        joint: float(held[joint]) if held.get(joint, RECORDED) != RECORDED else value
        for joint, value in added.items()
    }
    listed = ", ".join(f"{joint} at {value:g}" for joint, value in positions.items())
    return positions, (
        f"joints of the robot file the recording does not log held still (rad or "
        f"m): {listed}; their bodies ride on their parents, as in physid identify",
    )


def robot_for(urdf: str | Path, config: IdentifyConfig) -> RobotModel:
    """The :class:`RobotModel` of a URDF under a config (joint terms, transmission, deadband)."""
    positions, recorded = _split_locks(config.locked)
    keep = config.joints
    if keep is not None:
        keep = tuple(keep) + tuple(j for j in recorded if j not in keep)
    pin_model, _, notes = lock_joints(load_robot_file(urdf), keep, positions, str(urdf))
    refuse_mimic_joints(pin_model, urdf, recorded)  # moved by their recorded positions: fine
    joint_names = tuple(pin_model.names[1:])
    for joint in recorded:
        if joint not in joint_names:
            raise InputError(
                f"locked.{joint}: '{RECORDED}' needs a 1-DoF revolute or prismatic joint of "
                "the URDF",
                source=str(urdf),
            )
    fitted = _fitted_joints(config, recorded, joint_names, str(urdf))
    if len(fitted) < len(joint_names):
        unfitted = [j for j in joint_names if j not in fitted]
        notes = (
            *notes,
            "torques not fitted (the joints move the model by their recorded positions): "
            + ", ".join(unfitted),
        )
    transmission = None if config.transmission is None else config.transmission.build(joint_names)
    model = build_robot_model(
        pin_model,
        joint_terms=config.joint_terms,
        friction=config.friction,
        transmission=transmission,
        coupled_motor_terms=config.transmission.coupled_motor_terms
        if config.transmission
        else False,
        coulomb_deadband=None
        if config.coulomb_deadband == AUTO_DEADBAND
        else config.coulomb_deadband,
        source=str(urdf),
    )
    if config.gravity is not None:
        model = with_gravity(model, np.asarray(config.gravity, float))
    return replace(
        model,
        notes=notes,
        fitted_joints=None if len(fitted) == len(joint_names) else tuple(fitted),
    )


def require_known_payload(config: IdentifyConfig, source: str | None = None) -> None:
    """``physid identify`` with ``drive_gains: identify`` needs the known payload of its
    --loaded-data recordings (config ``payload``); validate and payload read the same key as
    the gains params.json holds, so the config parser cannot refuse it. Checked before any
    recording is read (and by a sweep's --dry-run)."""
    if config.drive_gains == IDENTIFY_GAINS and config.payload is None:
        raise ConfigError(
            "config drive_gains: identify needs a 'payload' section (the known payload of the "
            "--loaded-data recordings)",
            source=source,
        )


def load_config(path: str | Path | None) -> IdentifyConfig:
    """Read and validate a YAML config file; ``None`` gives the defaults."""
    if path is None:
        return IdentifyConfig()
    raw = read_yaml(path, "config file")
    try:
        return parse_config(raw, str(path))
    except InputError as error:
        raise InputError(str(error), source=str(path)) from None
