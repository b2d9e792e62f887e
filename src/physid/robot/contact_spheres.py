"""Round feet declared by the robot file: the collision spheres of the contact frames.

A legged robot's URDF usually gives each foot link a collision ``<sphere radius>`` at or near
the foot frame (Unitree's Go1/Go2 at it; ANYmal B's 31 mm sphere 23.25 mm above it), and an
MJCF a ``type="sphere"`` geom on the foot body. Pinocchio's collision model of the file
(``buildGeomFromUrdfString`` / ``buildGeomFromMJCF``, with coal's ``Sphere`` shapes) holds each
geometry's parent joint and placement; a sphere belongs to a contact frame when it rides on the
frame's joint and holds the frame's origin (its centre within its radius of it; the nearest
such sphere): the foot rolls on that sphere, about its centre, whose offset from the frame is
returned too (a foot whose sphere sits above its frame rolls about the sphere's centre: a
contact placed at the frame instead biases the trunk's mass). Meshes are never loaded: the
URDF's mesh collisions are dropped before Pinocchio reads it (a foot's sphere is all this
looks for).
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
) -> tuple[dict[str, tuple[float, np.ndarray]], str | None]:
    """``({frame: (radius [m], centre offset (3,) [m])}, note)``: the collision sphere of each of
    ``frames`` that has one (module docstring), its radius and its centre's offset from the
    frame's origin in the frame's parent joint coordinates; and why none could be read (None
    when the file loaded)."""
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
    found: dict[str, tuple[float, np.ndarray]] = {}
    for name in frames:
        frame = model.frames[model.getFrameId(name)]
        best = None
        for obj in geometry.geometryObjects:
            radius = getattr(obj.geometry, "radius", None)
            if type(obj.geometry).__name__ != "Sphere" or radius is None:
                continue
            if not (np.isfinite(radius) and radius > 0):  # a file's nan or -1: no round foot
                continue
            offset = obj.placement.translation - frame.placement.translation
            distance = float(np.linalg.norm(offset))
            if obj.parentJoint != frame.parentJoint or distance > radius + CENTRE_TOLERANCE:
                continue
            if best is None or distance < best[0]:
                best = (distance, float(radius), np.where(distance < CENTRE_TOLERANCE, 0.0, offset))
        if best is not None:
            found[name] = (best[1], np.asarray(best[2], float))
    return found, None


def _without_meshes(urdf: Path) -> str:
    """The URDF text without its mesh collision elements (never loaded: spheres are sought)."""
    root = ET.parse(urdf).getroot()
    for link in root.iter("link"):
        for element in list(link.findall("collision")):
            if element.find("geometry/mesh") is not None:
                link.remove(element)
    return ET.tostring(root, encoding="unicode")
