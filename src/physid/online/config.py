"""Settings of the online inertial filters and the ``--config`` YAML of ``physid online``.

Every key is optional; unknown keys are an error (a typo must not be silently ignored)::

    filter: ekf                  # ekf (log-Cholesky EKF, paper E eqs. 18-21) | kf (baseline on
                                 # raw pi, paper E eqs. 12 and 15)
    floating_base: false         # load the URDF with a free-flyer root joint named root_joint
    contact_frames: []           # frames with logged wrenches f_<frame>_x..m_<frame>_z
    nominal_params: null         # params.json for the nominal bodies (relative to this file),
                                 # its joint friction and its torque delay (each torque paired
                                 # with the motion that much earlier); default: URDF inertias
    initial_std:                 # prior std of theta = [alpha, d1..d3, s12, s13, s23, t1..t3]
      alpha: 0.5                 #   log sqrt(mass) [-]      (mass std ~ 2 * alpha * mass)
      d: 0.5                     #   log of the U-diagonal [-]
      s: 0.05                    #   shear entries of U [m]
      t: 0.05                    #   centre of mass [m]
    process_noise:               # random walk of theta (eq. 18), std per sqrt(second)
      alpha: 0.2
      d: 0.05
      s: 0.005
      t: 0.005
    measurement_noise:           # std of the rows of delta_tau (eq. 15)
      joint_torque: auto         #   N m (N for prismatic joints), all actuated joints; auto:
                                 #   per joint, the nominal params.json's training residual
                                 #   (fit.train.rmse, x sqrt(1 + 2 tau / dt) for its
                                 #   correlation time tau) and the acceleration window's noise
                                 #   through the mass matrix, in quadrature; 1.0 without one
      base_force: 10.0           #   N, floating-base rows 0-2
      base_torque: 3.0           #   N m, floating-base rows 3-5
    gating:                      # innovation gating, eq. 22
      probability: 0.999         #   chi-square quantile as threshold gamma; null = no gating
      release_after_s: 0.1       #   accept anyway after rejecting this long without a break
    rate_limit:                  # on the streamed estimate (paper E section IV-B: 3 kg/s)
      mass: null                 #   kg/s
      com: null                  #   m/s (each coordinate)
      inertia: null              #   kg m^2/s (each entry of the inertia about the com)
    calibration_s: 0.0           # start-up bias calibration window [s] (0 = off)
    acceleration_window: auto    # odd number of samples of the causal finite difference
                                 # (3 is paper E's central difference; 11 = 5 ms delay at 1 kHz),
                                 # or auto: the shortest from 11 up whose acceleration noise is
                                 # under 25 % of the motion's (physid.online.window)
    max_gap_s: null              # a longer time step is a dropped sample (default 2.5 x the
                                 # median step of the first window)
    max_update_std: 0.2          # trust region: largest change of a parameter in one update,
                                 # in prior stds (initial_std)
    angle_unit: radians          # radians | degrees: the revolute joints' q_ and dq_ columns
                                 # (as identify's config; converted to radians on reading)
    drive_gains: {}              # joint -> N m/A (joint side): tau_<joint> = gain x i_<joint>
                                 # for a joint logged as a motor current (as identify's
                                 # config); identify: the nominal params.json's identified
                                 # gains (extra.drive_gains)

Two additions to paper E, both for large changes of the load:

* ``release_after_s`` (eq. 22): an impact lasts milliseconds, a real change of the load persists,
  so a gate that has rejected every sample for that long lets the measurements in again and
  reopens the uncertainty (``P += P0``) so the filter can follow (paper E §IV-B leaves adaptive
  gating to future work);
* ``max_update_std``: the linearized update of the exponential mass parameter overshoots on
  large changes; the gain is scaled down so that no log-Cholesky parameter moves more than this
  many prior standard deviations per update (the Joseph form keeps P consistent with it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from physid.errors import ConfigError, InputError
from physid.files.config import IDENTIFY_GAINS, parse_drive_gains
from physid.files.io import config_number, config_section, read_yaml
from physid.recordings.trajectory import ANGLE_UNITS

FILTERS = ("ekf", "kf")
THETA_GROUPS = ("alpha", "d", "s", "t")
# theta = [alpha, d1, d2, d3, s12, s13, s23, t1, t2, t3] (paper E eq. 16 order)
_THETA_GROUP_OF_INDEX = ("alpha", "d", "d", "d", "s", "s", "s", "t", "t", "t")


@dataclass(frozen=True)
class ThetaStd:
    """A standard deviation per group of log-Cholesky parameters (see the module docstring)."""

    alpha: float
    d: float
    s: float
    t: float

    def vector(self) -> np.ndarray:
        """The ten per-parameter values in paper E eq. 16 order."""
        return np.array([getattr(self, g) for g in _THETA_GROUP_OF_INDEX], dtype=float)


AUTO_NOISE = "auto"  # joint_torque from the nominal params.json's residual
DEFAULT_JOINT_TORQUE_STD = 1.0  # N m (N): joint_torque auto without a nominal params.json


@dataclass(frozen=True)
class MeasurementNoise:
    joint_torque: float | str = AUTO_NOISE  # N m (N), or auto (the module docstring)
    base_force: float = 10.0  # N
    base_torque: float = 3.0  # N m


@dataclass(frozen=True)
class Gating:
    probability: float | None = 0.999
    release_after_s: float | None = 0.1


@dataclass(frozen=True)
class RateLimit:
    mass: float | None = None  # kg/s
    com: float | None = None  # m/s
    inertia: float | None = None  # kg m^2/s

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.mass, self.com, self.inertia))


AUTO_WINDOW = "auto"  # acceleration_window chosen from the recording (physid.online.window)
PAPER_E_WINDOW = 11  # samples


@dataclass(frozen=True)
class OnlineConfig:
    """Filter settings; see the module docstring for units and defaults."""

    filter: str = "ekf"
    floating_base: bool = False
    contact_frames: tuple[str, ...] = ()
    nominal_params: str | None = None
    initial_std: ThetaStd = field(default_factory=lambda: ThetaStd(0.5, 0.5, 0.05, 0.05))
    process_noise: ThetaStd = field(default_factory=lambda: ThetaStd(0.2, 0.05, 0.005, 0.005))
    measurement_noise: MeasurementNoise = field(default_factory=MeasurementNoise)
    gating: Gating = field(default_factory=Gating)
    rate_limit: RateLimit = field(default_factory=RateLimit)
    calibration_s: float = 0.0
    # odd number of samples, or AUTO_WINDOW: chosen from the recording (physid.online.window);
    # a filter built without one uses PAPER_E_WINDOW (:attr:`window_samples`)
    acceleration_window: int | str = "auto"
    max_gap_s: float | None = None
    max_update_std: float = 0.2
    angle_unit: str = "radians"  # of the revolute joints' q_ and dq_ columns
    # joint -> N m/A for current columns, or IDENTIFY_GAINS: the nominal params.json's
    drive_gains: dict[str, float] | str = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.filter not in FILTERS:
            raise ConfigError(f"config filter: '{self.filter}' is not one of {list(FILTERS)}")
        if self.angle_unit not in ANGLE_UNITS:
            raise ConfigError(
                f"config angle_unit: '{self.angle_unit}' is not one of {list(ANGLE_UNITS)}"
            )
        window = self.acceleration_window
        if window != AUTO_WINDOW and (
            isinstance(window, bool) or not isinstance(window, int) or window < 3 or window % 2 == 0
        ):
            raise ConfigError(
                f"config acceleration_window: expected an odd integer >= 3 or 'auto', got "
                f"{window!r}"
            )
        if not np.isfinite(self.calibration_s) or self.calibration_s < 0:
            raise ConfigError(f"config calibration_s: must be >= 0, got {self.calibration_s!r}")
        if not self.max_update_std > 0:
            raise ConfigError(f"config max_update_std: must be > 0, got {self.max_update_std!r}")
        if self.drive_gains == IDENTIFY_GAINS and self.nominal_params is None:
            raise ConfigError(
                "config drive_gains: identify reads the gains of the nominal "
                "params.json: set nominal_params, or give the gains"
            )
        p = self.gating.probability
        if p is not None and not 0.0 < p < 1.0:
            raise ConfigError(f"config gating.probability: must lie in (0, 1), got {p!r}")

    @property
    def window_samples(self) -> int:
        """The acceleration window [samples]: the configured one, or paper E's where it is to be
        chosen from a recording no one has given (``physid online`` chooses it first)."""
        window = self.acceleration_window
        return PAPER_E_WINDOW if window == AUTO_WINDOW else int(window)


# Sane upper bounds: beyond them a value is a typo or a unit mistake.
MAX_STD = 1e6  # standard deviations, rates and update bounds, in the quantity's SI unit
MAX_SECONDS = 1e5  # durations [s]


def _flag(raw: dict[str, Any], key: str, default: bool) -> bool:
    """A YAML boolean (the string 'no' is not one: a quoted word must not flip a switch)."""
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(f"config {key}: expected true or false, got {value!r}")
    return value


# --- YAML parsing --------------------------------------------------------------------------------
def _theta_std(raw: Any, default: ThetaStd, where: str) -> ThetaStd:
    raw = config_section(raw, set(THETA_GROUPS), where)
    return ThetaStd(
        **{
            g: config_number(raw.get(g, getattr(default, g)), f"{where}.{g}", high=MAX_STD)
            for g in THETA_GROUPS
        }
    )


def _measurement_noise(raw: dict[str, Any], default: MeasurementNoise) -> MeasurementNoise:
    values = {}
    for key in MeasurementNoise.__dataclass_fields__:
        value = raw.get(key, getattr(default, key))
        if not (key == "joint_torque" and value == AUTO_NOISE):
            value = config_number(value, f"measurement_noise.{key}", high=MAX_STD)
        values[key] = value
    return MeasurementNoise(**values)


def parse_online_config(raw: dict[str, Any] | None, base_dir: Path | None = None) -> OnlineConfig:
    """Validate a mapping (as loaded from YAML) into an :class:`OnlineConfig`.

    ``nominal_params`` is resolved relative to ``base_dir`` (the config file's folder).
    """
    allowed = {f.name for f in fields(OnlineConfig)}
    raw = config_section(raw, allowed, "(top level)")
    defaults = OnlineConfig()
    noise = config_section(
        raw.get("measurement_noise"),
        set(MeasurementNoise.__dataclass_fields__),
        "measurement_noise",
    )
    gating = config_section(raw.get("gating"), set(Gating.__dataclass_fields__), "gating")
    rate = config_section(raw.get("rate_limit"), set(RateLimit.__dataclass_fields__), "rate_limit")
    frames = raw.get("contact_frames") or []
    if not isinstance(frames, list) or not all(isinstance(f, str) for f in frames):
        raise ConfigError(f"config contact_frames: expected a list of frame names, got {frames!r}")
    nominal = raw.get("nominal_params")
    if nominal is not None:
        path = Path(str(nominal))
        nominal = str(path if path.is_absolute() or base_dir is None else base_dir / path)
    window = raw.get("acceleration_window", defaults.acceleration_window)
    return OnlineConfig(
        filter=str(raw.get("filter", defaults.filter)),
        floating_base=_flag(raw, "floating_base", False),
        contact_frames=tuple(frames),
        nominal_params=nominal,
        initial_std=_theta_std(raw.get("initial_std"), defaults.initial_std, "initial_std"),
        process_noise=_theta_std(raw.get("process_noise"), defaults.process_noise, "process_noise"),
        measurement_noise=_measurement_noise(noise, defaults.measurement_noise),
        gating=Gating(
            probability=config_number(
                gating.get("probability", defaults.gating.probability),
                "gating.probability",
                optional=True,
            ),
            release_after_s=config_number(
                gating.get("release_after_s", defaults.gating.release_after_s),
                "gating.release_after_s",
                optional=True,
                high=MAX_SECONDS,
            ),
        ),
        rate_limit=RateLimit(
            **{
                k: config_number(rate.get(k), f"rate_limit.{k}", optional=True, high=MAX_STD)
                for k in RateLimit.__dataclass_fields__
            }
        ),
        calibration_s=config_number(
            raw.get("calibration_s", 0.0), "calibration_s", positive=False, high=MAX_SECONDS
        ),
        acceleration_window=window,
        max_gap_s=config_number(raw.get("max_gap_s"), "max_gap_s", optional=True, high=MAX_SECONDS),
        max_update_std=config_number(
            raw.get("max_update_std", defaults.max_update_std), "max_update_std", high=MAX_STD
        ),
        angle_unit=str(raw.get("angle_unit", defaults.angle_unit)),
        drive_gains=parse_drive_gains(raw.get("drive_gains")),
    )


def load_online_config(path: str | Path | None) -> OnlineConfig:
    """Read and validate a YAML config file; ``None`` gives the defaults."""
    if path is None:
        return OnlineConfig()
    path = Path(path)
    raw = read_yaml(path, "config file")
    try:
        return parse_online_config(raw, path.parent)
    except InputError as error:
        raise InputError(str(error), source=str(path)) from None
