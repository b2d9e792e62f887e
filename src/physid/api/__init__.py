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

from physid.api.recording import Recording, sources
from physid.api.results import Named, Parameter, Result  # noqa: F401 - Result re-exported
from physid.errors import InputError
from physid.findings import Finding
from physid.status import Status
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.files.config import IdentifyConfig
    from physid.offline.result import IdentificationResult
    from physid.workflows import Identified

    PathLike = str | Path
    DataLike = PathLike | "Recording" | Sequence[PathLike | "Recording"]
    ConfigLike = PathLike | Mapping[str, Any] | IdentifyConfig | None


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
        """The :class:`physid.status.Status` code of the identification (``ok``, ``suspect``,
        ``worse_than_urdf``); ``findings`` say why."""
        return str(self.document.get("status", "ok"))

    @property
    def success(self) -> bool:
        """The parameters can be used as they are (status ``ok``)."""

        return Status(self.status).success

    @property
    def findings(self) -> tuple[Finding, ...]:
        """What the checks found (``params.json`` ``findings``): code, severity, numbers, names."""
        return tuple(Finding.from_dict(raw) for raw in self.document.get("findings") or [])

    @property
    def gravity(self) -> np.ndarray | None:
        """Gravity of training in the base frame [m/s^2] (an estimated base tilt included)."""
        value = self.document.get("extra", {}).get("gravity")
        return None if value is None else np.asarray(value, float)

    @property
    def message(self) -> str:
        """One line: the status's verdict."""
        if self.document.get("message"):
            return str(self.document["message"])
        reasons = self.document.get("suspect_reasons") or []
        return (
            "; ".join(reasons) if reasons else f"{len(self.bodies)} bodies, physically consistent"
        )

    @property
    def parameters(self) -> Named:
        """Every body and joint quantity as ``<joint>.<quantity>`` -> :class:`Parameter`
        (value, std, source, unit), read from the ``params.json`` document."""
        return Named(_document_parameters(self.document))

    def to_dict(self) -> dict:
        """The ``params.json`` document, JSON-ready (arrays as lists)."""
        import json

        from physid.files.io import to_json_text

        return json.loads(to_json_text(self.document))

    def save(self, out: str | Path) -> Path:
        """Write the document as ``out`` (a ``params.json`` file)."""
        from physid.files.io import write_json_atomic

        return write_json_atomic(out, self.document)


_BODY_UNITS = {"mass": "kg", "com": "m", "inertia": "kg m^2"}
_JOINT_UNITS = {  # revolute, prismatic
    "viscous": ("N m s/rad", "N s/m"),
    "coulomb": ("N m", "N"),
    "offset": ("N m", "N"),
    "armature": ("kg m^2", "kg"),
}


def _document_parameters(document: dict) -> dict[str, Parameter]:
    robot = document.get("robot") or {}
    types = dict(zip(robot.get("joint_names", []), robot.get("joint_types", []), strict=False))
    found = {}
    for joint, raw in document.get("bodies", {}).items():
        for key, unit in _BODY_UNITS.items():
            std = raw.get("std", {}).get(key)
            found[f"{joint}.{key}"] = Parameter(
                np.asarray(raw[key], float) if key != "mass" else float(raw[key]),
                np.asarray(std, float) if isinstance(std, list) else std,
                str(raw.get("source", {}).get(key, "")),
                unit,
            )
    for joint, raw in document.get("joints", {}).items():
        prismatic = str(types.get(joint, "")).startswith("P")
        for key, units in _JOINT_UNITS.items():
            if raw.get(key) is not None:
                found[f"{joint}.{key}"] = Parameter(
                    float(raw[key]),
                    raw.get("std", {}).get(key),
                    str(raw.get("source", {}).get(key, "")),
                    units[prismatic],
                )
    return found


@dataclass(frozen=True)
class IdentifyResult(Params):
    """What :func:`identify` returns: the parameters plus the fit and its diagnostics."""

    raw: IdentificationResult | None = None
    warnings: tuple[str, ...] = ()
    run: Identified | None = field(default=None, repr=False)

    @property
    def status(self) -> str:
        """The status code, as the CLI prints it (reasons in :attr:`findings`)."""
        return str(self.raw.status) if self.raw is not None else super().status

    @property
    def findings(self) -> tuple[Finding, ...]:
        """What the checks found: code, severity, numbers, names."""
        return tuple(self.raw.findings) if self.raw is not None else super().findings

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

    @property
    def message(self) -> str:
        """One line: the status's verdict and the fit's errors."""
        if self.raw is None:
            return super().message
        text = f"training relative error {100 * self.train_error:.2f} %"
        if self.validation_error is not None:
            text += f", validation {100 * self.validation_error:.2f} %"
        return f"{self.raw.message}; {text}"

    def save(self, out: str | Path) -> Path:
        """Write params.json and report.html into the folder ``out``, as
        ``physid identify --out`` does (all or nothing)."""
        if self.run is None:
            return super().save(out)
        return self.run.write(out, document=self.document)


def _config(config: ConfigLike) -> tuple[Any, PathLike | None]:
    from physid.files.config import IdentifyConfig, load_config, parse_config

    if config is None or isinstance(config, str | Path):
        return load_config(config), config
    if isinstance(config, IdentifyConfig):
        return config, None
    if isinstance(config, Mapping):
        return parse_config(dict(config), "config"), None
    raise InputError(f"config: expected a path, a dict or an IdentifyConfig, got {type(config)}")


@one_blas_thread
def identify(
    urdf: PathLike,
    data: DataLike,
    *,
    config: ConfigLike = None,
    validate: DataLike | None = None,
    out: PathLike | None = None,
) -> IdentifyResult:
    """Identify physically consistent dynamic parameters (what ``physid identify`` runs).

    Args:
        urdf: The robot file, URDF or MJCF (kinematics and a priori inertias).
        data: The training recordings: files (CSV, NPZ or Parquet in the trajectory contract,
            a YAML recording manifest, a ROS 2 bag, a LeRobot dataset), :class:`Recording`
            objects, or a list of them.
        config: The identify settings: a YAML path, a dict of the same keys, or an
            ``IdentifyConfig`` (None: the defaults).
        validate: Held-out recordings to predict, as ``data`` (None: none, or the config's
            ``split.train_fraction``).
        out: A folder to write params.json and report.html into, all or nothing
            (None: nothing written; ``result.save(folder)`` writes them later).

    Returns:
        The parameters (``bodies``, ``joints``, ``parameters``), the ``status`` with its
        ``message`` and ``findings``, and the training and held-out errors.

    Raises:
        InputError: Bad input, or no physically consistent model (nothing written).
    """
    from physid.report.identification import params_json
    from physid.workflows import identify_run

    parsed, config_path = _config(config)
    train, held_out = sources(data), sources(validate)
    run = identify_run(
        urdf,
        train,
        config_path=config_path,
        config=parsed,
        validate=held_out,
        out_dir=out,
    )
    raw = run.result
    document = params_json(raw, run.provenance)
    path = None if out is None else Path(out)
    return IdentifyResult(document, path, raw, tuple(raw.warnings), run)


def load_params(path: PathLike) -> Params:
    """Read a ``params.json`` (every body is checked to be physically consistent).

    Args:
        path: The ``params.json`` written by :func:`identify` or ``physid identify``.

    Returns:
        Its bodies, joint terms, status and findings.
    """
    from physid.files.params_file import read_params

    return Params(read_params(path).document, Path(path))


@dataclass(frozen=True)
class ValidationResult:
    """Prediction errors of a parameter file on recordings (raw recorded torque)."""

    overall: dict  # relative_error, relative_error_per_joint, rmse, n_samples
    per_file: dict  # the same per recording (keyed by path or Recording name)
    document: dict  # the validation.json document

    @property
    def relative_error(self) -> float:
        """Overall relative torque error ||tau - tau_hat|| / ||tau||."""
        return float(self.overall["relative_error"])

    @property
    def status(self) -> str:
        """``ok``, or ``suspect`` when the recordings look wrong (:attr:`findings` say why); a
        prediction that could not be made raises :class:`InputError`."""
        return str(self.document.get("status", "ok"))

    @property
    def success(self) -> bool:
        """The recordings passed the checks (status ``ok``)."""
        return self.status == Status.OK

    @property
    def findings(self) -> tuple[Finding, ...]:
        """What the checks found: code, severity, numbers, names."""
        return tuple(Finding.from_dict(raw) for raw in self.document.get("findings") or [])

    @property
    def message(self) -> str:
        """The overall relative error, as ``physid validate`` prints it."""
        samples = self.overall["n_samples"]
        return f"relative error {100 * self.relative_error:.2f} % over {samples} samples"

    @property
    def parameters(self) -> Named:
        """None: validation estimates nothing (the errors are in :attr:`overall`)."""
        return Named()

    def to_dict(self) -> dict:
        """The validation.json document (``physid validate --json``), JSON-ready."""
        import json

        from physid.files.io import to_json_text

        return json.loads(to_json_text(self.document))

    def save(self, out: str | Path) -> Path:
        """Write the document to the file ``out``, as ``physid validate --json out`` does."""
        from physid.files.io import write_json_atomic

        return write_json_atomic(out, self.document)


@one_blas_thread
def validate(
    urdf: PathLike, params: PathLike, data: DataLike, *, config: PathLike | None = None
) -> ValidationResult:
    """Predict the torques of recordings with a ``params.json`` (``physid validate``).

    Args:
        urdf: The robot file the parameters were identified on (URDF or MJCF).
        params: The ``params.json`` of the identification.
        data: The recordings to predict: files or :class:`Recording` objects, or a list.
        config: An identify config (YAML path) whose ``filter`` section overrides the
            training filter recorded in ``params`` (None: that filter).

    Returns:
        The relative torque error overall and per file and joint, the status (``suspect``
        when the recordings look wrong) and the findings.
    """
    from physid.workflows import run_validate

    report = run_validate(urdf, params, sources(data), config_path=config)
    return ValidationResult(report.overall, report.per_file, report.as_dict())
