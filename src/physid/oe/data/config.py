"""The ``physid oe --config`` YAML: noise standard deviations, contacts (damping, foot radius),
the IMU, the joints' own terms (armature, viscous and Coulomb friction) and the unit of the
joint angles (``angle_unit``)."""

from __future__ import annotations

from pathlib import Path

NOISE_KEYS = (
    "encoder",
    "joint_velocity",
    "orientation",
    "gyro",
    "base_velocity",
    "process_q",
    "process_v",
    "arrival_q",
    "arrival_v",
    "foot_velocity",
    "force",
    "torque",
    "accelerometer",
    "contact_change_v",
    "contact_change_window",
)
PER_DOF_KEYS = ("process_q", "process_v")  # one number, or a list of nv numbers


SECTIONS = {"noise", "contacts", "imu", "joints", "angle_unit"}
JOINT_KEYS = ("armature", "damping", "friction", "coulomb_speed", "estimate", "prior_std")
CONTACT_KEYS = ("damping", "radius", "compliance")


def read_oe_config(path: Path | None) -> tuple[dict, float, dict, float | None]:
    """The ``noise`` mapping (NoiseStd keyword arguments), the contact damping [1/s], the
    ``imu`` mapping (``frame``: the accelerometer's frame, None = the base; ``estimate_bias``,
    default True) and the contacts' foot radius [m] (``contacts.radius``; None when not given:
    :func:`physid.oe.soft.choose.choose_radius` chooses it; 0: point feet at the frames) of
    a ``physid oe --config`` YAML (``noise.contact_change_v`` 0: no floor; absent: chosen from
    the data); a bad entry is an InputError naming the file and its key."""
    from physid.files.io import config_errors_name

    if path is None:
        return {}, 0.0, {"frame": None, "estimate_bias": True}, None
    with config_errors_name(path):
        return _oe_config(path)


def read_angle_unit(path: Path | None) -> str:
    """``angle_unit`` of a ``physid oe --config`` YAML: ``radians`` (default) or ``degrees``,
    the unit of the revolute joints' ``q_`` and ``dq_`` columns (as identify's config)."""
    from physid.errors import ConfigError
    from physid.files.io import config_errors_name, config_section, read_yaml
    from physid.recordings.trajectory import ANGLE_UNITS

    if path is None:
        return "radians"
    with config_errors_name(path):
        raw = config_section(read_yaml(path, "config file"), SECTIONS, str(path))
        unit = raw.get("angle_unit", "radians")
        if unit not in ANGLE_UNITS:
            raise ConfigError(f"config angle_unit: {unit!r} is not one of {list(ANGLE_UNITS)}")
        return str(unit)


def read_joint_terms(path: Path | None, model):  # noqa: ANN001, ANN201
    """The ``joints`` mapping of a ``physid oe --config`` YAML as
    :class:`physid.oe.model.dynamics.JointTerms` (None without one): ``armature`` [kg m^2],
    ``damping`` (viscous) [N m s/rad], ``friction`` (Coulomb) [N m], each one number for every
    joint, a list with one per joint (the free-flyer excluded), or ``model``: the robot file's
    values (URDF ``<dynamics damping friction>``, MJCF ``damping frictionloss armature``);
    ``coulomb_speed`` [rad/s] (default :data:`physid.oe.model.dynamics.COULOMB_SPEED`): the
    tanh smoothing of the Coulomb friction."""
    from physid.files.io import config_errors_name

    if path is None:
        return None
    with config_errors_name(path):
        return _joint_terms(path, model)


def coulomb_speed_given(path: Path | None) -> bool:
    """Whether the config's ``joints`` mapping gives ``coulomb_speed`` (else it is chosen per
    joint from the data: :func:`physid.oe.data.joints.coulomb_widths`)."""
    from physid.files.io import config_errors_name

    if path is None:
        return False
    with config_errors_name(path):
        return "coulomb_speed" in (_joints_section(path) or {})


def read_joint_estimate(path: Path | None, model):  # noqa: ANN001, ANN201
    """The ``joints.estimate`` of a ``physid oe --config`` YAML as
    :class:`physid.oe.model.joint_estimate.JointEstimate` on every joint but a free-flyer (None
    without one): a list of ``armature``, ``damping``, ``friction`` (or ``all``), with
    ``joints.prior_std`` (default 1) the log-normal prior's std about the values given or
    read from the model (a value of 0 starts small under a wide prior, std 3 in log)."""
    from physid.files.io import config_errors_name

    if path is None:
        return None
    with config_errors_name(path):
        return _joint_estimate(path, model)


def _joint_estimate(path: Path, model):  # noqa: ANN001, ANN202
    from physid.errors import ConfigError
    from physid.files.io import config_number
    from physid.oe.model.joint_estimate import CONFIG_NAMES, JointEstimate
    from physid.oe.model.measurements import base_dofs

    section = _joints_section(path) or {}
    names = section.get("estimate")
    if names is None or names == []:
        return None
    names = list(CONFIG_NAMES) if names == "all" else names
    if not isinstance(names, list) or not all(
        isinstance(n, str) and n in CONFIG_NAMES for n in names
    ):
        choices = ", ".join(CONFIG_NAMES)
        raise ConfigError(
            f"config joints.estimate: expected 'all' or a list of {choices}, got {names!r}"
        )
    kinds = tuple(dict.fromkeys(CONFIG_NAMES[n] for n in names))
    std = config_number(section.get("prior_std", 1.0), "joints.prior_std")
    return JointEstimate(kinds, tuple(range(base_dofs(model)[1], model.nv)), float(std))


def model_joint_terms(model, coulomb_speed: float | None = None):  # noqa: ANN001, ANN201
    """:class:`physid.oe.model.dynamics.JointTerms` of the robot file's own values (armature,
    damping, friction: an MJCF's ``armature damping frictionloss``), none on the free-flyer."""
    import numpy as np

    from physid.oe.model.dynamics import COULOMB_SPEED, JointTerms
    from physid.oe.model.measurements import base_dofs

    bv = base_dofs(model)[1]
    values = [np.asarray(v, float).copy() for v in (model.armature, model.damping, model.friction)]
    for value in values:
        value[:bv] = 0.0
    return JointTerms(*values, float(coulomb_speed or COULOMB_SPEED))


def _joints_section(path: Path) -> dict | None:
    """The config's ``joints`` mapping, its keys checked (None without one)."""
    from physid.files.io import config_section, read_yaml

    raw = config_section(read_yaml(path, "config file"), SECTIONS, "")
    if raw.get("joints") is None:
        return None
    return config_section(raw["joints"], set(JOINT_KEYS), "joints")


def _joint_terms(path: Path, model):  # noqa: ANN001, ANN202
    import numpy as np

    from physid.errors import ConfigError
    from physid.files.io import config_number
    from physid.oe.model.dynamics import COULOMB_SPEED, JointTerms
    from physid.oe.model.measurements import base_dofs

    section = _joints_section(path)
    if section is None:
        return None
    bv = base_dofs(model)[1]
    n = model.nv - bv
    from_model = {"armature": model.armature, "damping": model.damping, "friction": model.friction}
    values = {}
    for key, file_values in from_model.items():
        value = section.get(key, 0.0)
        if value == "model":
            values[key] = np.asarray(file_values, float).copy()
            continue
        items = value if isinstance(value, list) else [value] * n
        if len(items) != n:
            raise ConfigError(f"config joints.{key}: expected one number or {n} (one per joint)")
        numbers = [config_number(v, f"joints.{key}", positive=False, low=0.0) for v in items]
        values[key] = np.r_[np.zeros(bv), numbers]
    speed = config_number(section.get("coulomb_speed", COULOMB_SPEED), "joints.coulomb_speed")
    values["armature"][:bv] = values["damping"][:bv] = values["friction"][:bv] = 0.0
    return JointTerms(values["armature"], values["damping"], values["friction"], float(speed))


def _oe_config(path: Path) -> tuple[dict, float, dict, float | None]:
    import numpy as np

    from physid.errors import InputError
    from physid.files.io import config_number, config_section, read_yaml

    raw = config_section(read_yaml(path, "config file"), SECTIONS, str(path))
    section = config_section(raw.get("noise"), set(NOISE_KEYS), "noise")
    noise = {}
    for key, value in section.items():
        if key in PER_DOF_KEYS and isinstance(value, list):
            items = [config_number(v, f"noise.{key}[{i}]") for i, v in enumerate(value)]
            noise[key] = np.array(items, dtype=float)
        elif key == "contact_change_v":  # 0: no floor; absent: chosen from the data
            noise[key] = config_number(value, f"noise.{key}", positive=False, low=0.0)
        else:
            noise[key] = config_number(value, f"noise.{key}")
    contacts = config_section(raw.get("contacts"), set(CONTACT_KEYS), "contacts")
    damping = config_number(contacts.get("damping", 0.0), "contacts.damping", positive=False, low=0)
    radius = config_number(
        contacts.get("radius"), "contacts.radius", positive=False, optional=True, low=0, high=1.0
    )
    imu = config_section(raw.get("imu"), {"frame", "estimate_bias"}, "imu")
    frame, estimate_bias = imu.get("frame"), imu.get("estimate_bias", True)
    if frame is not None and not isinstance(frame, str):
        raise InputError(f"imu.frame must be a frame name, got {frame!r}", source=str(path))
    if not isinstance(estimate_bias, bool):
        raise InputError(
            f"imu.estimate_bias must be true or false, got {estimate_bias!r}", source=str(path)
        )
    radius = None if radius is None else float(radius)
    return noise, float(damping), {"frame": frame, "estimate_bias": estimate_bias}, radius


def read_contact_compliance(path: Path | None) -> float | None:
    """``contacts.compliance``: ``estimate`` (None, the default): the data choose rigid or
    soft feet, a soft foot's compliance and spring estimated in theta
    (:mod:`physid.oe.model.compliance`, :func:`physid.oe.soft.choose.choose_soft`); or 0:
    rigid feet (paper B)."""
    from physid.errors import InputError
    from physid.files.io import config_number, config_section, read_yaml

    if path is None:
        return None
    raw = config_section(read_yaml(path, "config file"), SECTIONS, str(path))
    value = config_section(raw.get("contacts"), set(CONTACT_KEYS), "contacts")
    value = value.get("compliance", "estimate")
    if value == "estimate":
        return None
    if config_number(value, "contacts.compliance", positive=False, low=0) != 0:
        raise InputError(f"contacts.compliance: estimate or 0 (rigid), got {value!r}")
    return 0.0
