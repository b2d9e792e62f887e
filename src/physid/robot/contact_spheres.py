"""Round feet declared by the robot file: the collision spheres centred on contact frames.

A legged robot's URDF usually gives each foot link a collision ``<sphere radius>`` at the
foot frame (Unitree's Go1/Go2, ANYmal), and an MJCF a ``type="sphere"`` geom on the foot body.
Pinocchio's collision model of the file (``buildGeomFromUrdfString`` / ``buildGeomFromMJCF``,
with coal's ``Sphere`` shapes) holds each geometry's parent joint and placement; a sphere
belongs to a contact frame when it rides on the frame's joint and its centre is the frame's
origin (within ``CENTRE_TOLERANCE``). Meshes are never loaded: the URDF's mesh collisions are
dropped before Pinocchio reads it (a foot's sphere is all this looks for).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pinocchio as pin

CENTRE_TOLERANCE = 1e-4  # m: a sphere this close to the frame's origin is centred on it


def contact_spheres(
    path: str | Path, model: pin.Model, frames: Sequence[str]
) -> tuple[dict[str, float], str | None]:
    """``({frame: radius [m]}, note)``: the radius of the collision sphere centred on each of
    ``frames`` that has one, and why none could be read (None when the file loaded)."""
    from physid.files.io import quiet_stderr
    from physid.robot.mjcf import is_mjcf

    try:
        with quiet_stderr():  # urdfdom and the MJCF parser print on descriptor 2
            if is_mjcf(path):
                geometry = pin.buildGeomFromMJCF(model, str(path), pin.COLLISION)
            else:
                text = _without_meshes(Path(path))
                geometry = pin.buildGeomFromUrdfString(model, text, pin.COLLISION)
    except (ValueError, RuntimeError, ET.ParseError) as error:
        return {}, f"the collision geometry did not load ({' '.join(str(error).split())})"
    found: dict[str, float] = {}
    for name in frames:
        frame = model.frames[model.getFrameId(name)]
        for obj in geometry.geometryObjects:
            radius = getattr(obj.geometry, "radius", None)
            if type(obj.geometry).__name__ != "Sphere" or radius is None:
                continue
            if not (np.isfinite(radius) and radius > 0):  # a file's nan or -1: no round foot
                continue
            offset = obj.placement.translation - frame.placement.translation
            if obj.parentJoint == frame.parentJoint and np.linalg.norm(offset) < CENTRE_TOLERANCE:
                found[name] = float(radius)
                break
    return found, None


def _without_meshes(urdf: Path) -> str:
    """The URDF text without its mesh collision elements (never loaded: spheres are sought)."""
    root = ET.parse(urdf).getroot()
    for link in root.iter("link"):
        for element in list(link.findall("collision")):
            if element.find("geometry/mesh") is not None:
                link.remove(element)
    return ET.tostring(root, encoding="unicode")
