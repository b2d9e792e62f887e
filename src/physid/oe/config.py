"""The ``physid oe --config`` YAML: noise standard deviations, contact damping and the IMU."""

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
)
PER_DOF_KEYS = ("process_q", "process_v")  # one number, or a list of nv numbers


def read_oe_config(path: Path | None) -> tuple[dict, float, dict]:
    """The ``noise`` mapping (NoiseStd keyword arguments), the contact damping [1/s] and the
    ``imu`` mapping (``frame``: the accelerometer's frame, None = the base; ``estimate_bias``,
    default True) of a ``physid oe --config`` YAML; a bad entry is an InputError naming the
    file and its key."""
    from physid.files.io import config_errors_name

    if path is None:
        return {}, 0.0, {"frame": None, "estimate_bias": True}
    with config_errors_name(path):
        return _oe_config(path)


def _oe_config(path: Path) -> tuple[dict, float, dict]:
    import numpy as np

    from physid.errors import InputError
    from physid.files.io import config_number, config_section, read_yaml

    raw = config_section(read_yaml(path, "config file"), {"noise", "contacts", "imu"}, str(path))
    section = config_section(raw.get("noise"), set(NOISE_KEYS), "noise")
    noise = {}
    for key, value in section.items():
        if key in PER_DOF_KEYS and isinstance(value, list):
            items = [config_number(v, f"noise.{key}[{i}]") for i, v in enumerate(value)]
            noise[key] = np.array(items, dtype=float)
        else:
            noise[key] = config_number(value, f"noise.{key}")
    contacts = config_section(raw.get("contacts"), {"damping"}, "contacts")
    damping = config_number(contacts.get("damping", 0.0), "contacts.damping", positive=False, low=0)
    imu = config_section(raw.get("imu"), {"frame", "estimate_bias"}, "imu")
    frame, estimate_bias = imu.get("frame"), imu.get("estimate_bias", True)
    if frame is not None and not isinstance(frame, str):
        raise InputError(f"imu.frame must be a frame name, got {frame!r}", source=str(path))
    if not isinstance(estimate_bias, bool):
        raise InputError(
            f"imu.estimate_bias must be true or false, got {estimate_bias!r}", source=str(path)
        )
    return noise, float(damping), {"frame": frame, "estimate_bias": estimate_bias}
