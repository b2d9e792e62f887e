"""Robot models of ``example-robot-data`` for paper B's tests and benchmarks.

The pip wheel ships the URDFs under ``cmeel.prefix/share/example-robot-data/robots`` without a
Python loader; this module finds that folder from Pinocchio's install location.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pinocchio as pin

from physid.errors import InputError

KINOVA = "kinova_description/robots/kinova.urdf"
GO1 = "go1_description/urdf/go1.urdf"
HECTOR = "hector_description/robots/quadrotor_base.urdf"
BORINOT = "borinot_description/urdf/borinot_flying_arm_2.urdf"


def robots_folder() -> Path:
    """``.../share/example-robot-data/robots`` of the installed ``example-robot-data``."""
    candidates = [Path(pin.__file__).resolve().parents[4]]
    candidates += [Path(p) / "cmeel.prefix" for p in sys.path if p]
    for prefix in candidates:
        folder = prefix / "share" / "example-robot-data" / "robots"
        if folder.is_dir():
            return folder
    raise InputError("example-robot-data not found (pip install example-robot-data)")


def robot_urdf(relative: str) -> Path:
    """Path of a URDF given relative to the robots folder (e.g. :data:`KINOVA`)."""
    path = robots_folder() / relative
    if not path.is_file():
        raise InputError(f"no such robot file in example-robot-data: {relative}")
    return path


def load_model(relative: str, floating: bool = False) -> pin.Model:
    """A Pinocchio model of an example-robot-data URDF, with a free-flyer root if asked."""
    path = str(robot_urdf(relative))
    if floating:
        return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    return pin.buildModelFromUrdf(path)
