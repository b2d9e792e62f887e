"""The public Python API: a thin face over :mod:`physid.workflows` (what the CLI runs too).

Sketch (runnable examples: ``docs/api.md``)::

    rec = physid.Recording.from_arrays(t, q, tau, joint_names=["joint_1", "joint_2"])
    result = physid.identify("robot.urdf", rec, out="out")
    result.bodies["joint_2"].mass, result.joints["joint_2"].viscous

Heavy imports (Pinocchio, CVXPY) happen inside the functions, so ``import physid`` stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from physid.errors import InputError

if TYPE_CHECKING:
    from physid.files.config import IdentifyConfig
    from physid.offline.pipeline import IdentificationResult
    from physid.recordings.tables import Table

    PathLike = str | Path
    DataLike = PathLike | "Recording" | Sequence[PathLike | "Recording"]
    ConfigLike = PathLike | Mapping[str, Any] | IdentifyConfig | None


@dataclass(frozen=True)
class Recording:
    """A measured joint-side trajectory held in memory; columns are matched to the URDF's joints
    by ``joint_names`` when used (a missing or unknown name is an :class:`InputError`)."""

    t: np.ndarray  # (N,) s, strictly increasing
    q: np.ndarray  # (N, n) rad or m
    tau: np.ndarray  # (N, n) N m or N
    joint_names: tuple[str, ...]
    dq: np.ndarray | None = None  # (N, n), optional measured velocities
    name: str = "arrays"

    @classmethod
    def from_arrays(
        cls,
        t: Any,
        q: Any,
        tau: Any,
        *,
        joint_names: Sequence[str],
        dq: Any = None,
        name: str = "arrays",
    ) -> Recording:
        """Check shapes (``t`` (N,), ``q``/``tau``/``dq`` (N, n), n names) and keep the arrays."""
        where = f"Recording '{name}'"
        if isinstance(joint_names, str) or not all(isinstance(j, str) for j in joint_names):
            raise InputError(f"{where}: joint_names must be a sequence of joint-name strings")
        names = tuple(joint_names)
        duplicated = sorted({j for j in names if names.count(j) > 1})
        if duplicated:
            raise InputError(f"{where}: joint name(s) given twice: {', '.join(duplicated)}")
        try:
            t = np.asarray(t, dtype=float)
            arrays = {"q": q, "tau": tau} | ({} if dq is None else {"dq": dq})
            arrays = {key: np.asarray(value, dtype=float) for key, value in arrays.items()}
        except (TypeError, ValueError) as error:
            raise InputError(
                f"{where}: t, q, tau and dq must be numeric arrays ({error})"
            ) from None
        if t.ndim != 1 or t.size < 2:
            raise InputError(f"{where}: t must be 1-D with at least 2 samples, shape {t.shape}")
        checked = {}
        for key, value in arrays.items():
            if value.ndim == 1 and len(names) == 1:
                value = value[:, None]
            if value.shape != (t.size, len(names)):
                raise InputError(
                    f"{where}: {key} has shape {value.shape}, expected ({t.size}, {len(names)}) "
                    f"= (samples of t, joint_names)"
                )
            checked[key] = value
        return cls(t, checked["q"], checked["tau"], names, checked.get("dq"), name)

    def to_table(self) -> Table:
        """The recording as contract columns (``t``, ``q_<joint>``, ``dq_<joint>``,
        ``tau_<joint>``), validated against a model by :mod:`physid.recordings.trajectory` when
        used."""
        from physid.recordings.tables import Table

        columns = {"t": self.t}
        blocks = (("q_", self.q), ("dq_", self.dq), ("tau_", self.tau))
        for prefix, block in blocks:
            if block is not None:
                columns.update(
                    {f"{prefix}{j}": block[:, k] for k, j in enumerate(self.joint_names)}
                )
        return Table(columns, f"Recording '{self.name}'")


class Named(dict):
    """A dict whose missing keys fail with the names that exist."""

    def __missing__(self, key: str) -> Any:
        raise KeyError(f"'{key}' is not here; known: {', '.join(self)}")


@dataclass(frozen=True)
class Body:
    """One identified body (``params.json``: com and inertia in the frame of its joint)."""

    mass: float  # kg
    com: np.ndarray  # (3,) m
    inertia: np.ndarray  # (3, 3) kg m^2 about the com
    std: dict = field(default_factory=dict)  # mass, com, inertia standard deviations
    source: dict = field(default_factory=dict)  # "data" | "regrouped" | "prior" per quantity


@dataclass(frozen=True)
class Joint:
    """One joint's friction and armature terms (None: not modelled)."""

    viscous: float | None = None
    coulomb: float | None = None
    offset: float | None = None
    armature: float | None = None
    std: dict = field(default_factory=dict)
    source: dict = field(default_factory=dict)


def _body(raw: dict) -> Body:
    std = {k: (np.asarray(v) if isinstance(v, list) else v) for k, v in raw.get("std", {}).items()}
    return Body(
        float(raw["mass"]),
        np.asarray(raw["com"], float),
        np.asarray(raw["inertia"], float),
        std,
        dict(raw.get("source", {})),
    )


def _joint(raw: dict) -> Joint:
    terms = {k: raw.get(k) for k in ("viscous", "coulomb", "offset", "armature")}
    return Joint(**terms, std=dict(raw.get("std", {})), source=dict(raw.get("source", {})))


@dataclass(frozen=True)
class Params:
    """Identified parameters: per-body and per-joint accessors over a ``params.json`` document."""

    document: dict
    path: Path | None = None

    @property
    def bodies(self) -> Named:
        """Bodies keyed by the joint that moves them: ``.mass``, ``.com``, ``.inertia``,
        ``.std``, ``.source``."""
        return Named({k: _body(v) for k, v in self.document.get("bodies", {}).items()})

    @property
    def joints(self) -> Named:
        """Joint terms keyed by joint: ``.viscous``, ``.coulomb``, ``.offset``, ``.armature``."""
        return Named({k: _joint(v) for k, v in self.document.get("joints", {}).items()})

    @property
    def status(self) -> str:
        """``ok`` or ``suspect`` (reasons in ``document["suspect_reasons"]``)."""
        return str(self.document.get("status", "ok"))

    @property
    def gravity(self) -> np.ndarray | None:
        """Gravity of training in the base frame [m/s^2] (an estimated base tilt included)."""
        value = self.document.get("extra", {}).get("gravity")
        return None if value is None else np.asarray(value, float)


@dataclass(frozen=True)
class IdentifyResult(Params):
    """What :func:`identify` returns: the parameters plus the fit and its diagnostics."""

    raw: IdentificationResult | None = None
    warnings: tuple[str, ...] = ()

    @property
    def status(self) -> str:
        """``ok``, ``suspect`` (reasons in :attr:`suspect`), as the CLI prints it."""
        return self.raw.status if self.raw is not None else super().status

    @property
    def suspect(self) -> tuple[str, ...]:
        """Why the data look wrong though well-formed (empty when ``status == "ok"``)."""
        return tuple(self.raw.suspect) if self.raw is not None else ()

    @property
    def train_error(self) -> float:
        """Relative torque error on the training recordings (raw samples)."""
        return float(self.raw.train.relative_error)

    @property
    def validation_error(self) -> float | None:
        """Relative torque error on the held-out recordings, if any."""
        return None if self.raw.validation is None else float(self.raw.validation.relative_error)


def _sources(data: DataLike | None) -> list:
    if data is None:
        return []
    items = [data] if isinstance(data, str | Path | Recording) else list(data)
    return [item.to_table() if isinstance(item, Recording) else item for item in items]


def _config(config: ConfigLike) -> tuple[Any, PathLike | None]:
    from physid.files.config import IdentifyConfig, load_config, parse_config

    if config is None or isinstance(config, str | Path):
        return load_config(config), config
    if isinstance(config, IdentifyConfig):
        return config, None
    if isinstance(config, Mapping):
        return parse_config(dict(config), "config"), None
    raise InputError(f"config: expected a path, a dict or an IdentifyConfig, got {type(config)}")


def identify(
    urdf: PathLike,
    data: DataLike,
    *,
    config: ConfigLike = None,
    validate: DataLike | None = None,
    out: PathLike | None = None,
) -> IdentifyResult:
    """Identify physically consistent dynamic parameters (what ``physid identify`` runs).

    ``data``/``validate``: recording files (CSV/NPZ/Parquet/YAML manifest), :class:`Recording`
    objects, or lists of them. ``config``: a YAML path, a dict of the same keys, or an
    ``IdentifyConfig``. ``out``: a folder for params.json, report.html and figures. Raises
    :class:`InputError` when no consistent model exists (nothing written).
    """
    from physid.report.identification import params_json
    from physid.workflows import run_identify, source_name

    parsed, config_path = _config(config)
    train, held_out = _sources(data), _sources(validate)
    raw = run_identify(
        urdf,
        train,
        config_path=config_path,
        config=parsed,
        validate=held_out,
        out_dir=out,
    )
    provenance = {"urdf": str(urdf), "data": [source_name(s) for s in train]}
    document = params_json(raw, provenance)
    return IdentifyResult(document, None if out is None else Path(out), raw, tuple(raw.warnings))


def load_params(path: PathLike) -> Params:
    """Read a ``params.json`` (every body is checked to be physically consistent)."""
    from physid.files.params_file import read_params

    return Params(read_params(path).document, Path(path))


@dataclass(frozen=True)
class ValidationResult:
    """Prediction errors of a parameter file on recordings (raw measured torque)."""

    overall: dict  # relative_error, relative_error_per_joint, rmse, n_samples
    per_file: dict  # the same per recording (keyed by path or Recording name)
    document: dict  # the validation.json document

    @property
    def relative_error(self) -> float:
        """Overall relative torque error ||tau - tau_hat|| / ||tau||."""
        return float(self.overall["relative_error"])


def validate(
    urdf: PathLike, params: PathLike, data: DataLike, *, config: PathLike | None = None
) -> ValidationResult:
    """Predict the torques of recordings with a ``params.json`` (``physid validate``).

    Positions are differentiated with the training filter recorded in the file, unless the
    config (a YAML path) sets a ``filter`` section.
    """
    from physid.workflows import run_validate

    report = run_validate(urdf, params, _sources(data), config_path=config)
    return ValidationResult(report.overall, report.per_file, report.as_dict())
