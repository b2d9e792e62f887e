"""Where an excitation puts the robot's bodies: self-collision and a workspace box.

An excitation optimised for information alone sweeps every joint through its whole range, which
can take the arm through itself or the table. Two optional constraints keep it physical, both on
the NLP's constraint grid and re-checked on the dense one:

* **self-collision**: Pinocchio's ``GeometryModel`` of the URDF's ``<collision>`` geometry and
  coal (hpp-fcl) distances between every pair of bodies that can meet — not the same joint, not
  adjacent joints, and not already closer than ``min_distance`` at the middle of the joint
  ranges (what an SRDF's "adjacent"/"default" disabled pairs say, derived here). Per sample the
  smallest distance must stay above ``min_distance``; its gradient is exact from the witness
  points, ``d dist / dq = n^T (J_b(p_b) - J_a(p_a))`` with ``n`` coal's unit normal from body
  a to body b (``p_b - p_a`` normalised when they are apart) and ``J(p)`` the linear Jacobian
  of the body point ``p``. A collision element whose
  mesh file cannot be found is left out with a note (the others are still checked); a URDF
  without collision geometry gets a note and no check.
* **workspace box**: the origins of the named frames stay inside ``[lower, upper]`` (base
  frame of the URDF root, m), e.g. a tool kept above the table.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin

from physid.errors import InputError
from physid.excite.codes import (
    CLOSE_PAIRS_UNCHECKED,
    CONVEX_HULLS,
    MESH_NOT_FOUND,
    NO_COLLISION_CHECK,
    NO_PAIR_CAN_MEET,
)
from physid.files.io import quiet_stderr
from physid.findings import Finding
from physid.robot.mjcf import is_mjcf
from physid.robot.model import RobotModel


@dataclass(frozen=True)
class Workspace:
    """A box in the base frame [m] that the origins of ``frames`` must not leave."""

    frames: tuple[str, ...]
    lower: np.ndarray  # (3,)
    upper: np.ndarray  # (3,)


def _mesh_path(filename: str, urdf: Path, package_dirs: tuple[Path, ...]) -> Path | None:
    """The file a URDF mesh reference names, or None when it cannot be found."""
    if filename.startswith("file://"):
        path = Path(filename[len("file://") :])
        return path if path.is_file() else None
    if not filename.startswith("package://"):
        path = Path(filename) if Path(filename).is_absolute() else urdf.parent / filename
        return path if path.is_file() else None
    package, _, rest = filename[len("package://") :].partition("/")
    roots = list(package_dirs)
    roots += [Path(p) for p in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if p]
    candidates = [root / package / rest for root in roots]
    candidates += [parent / rest for parent in urdf.resolve().parents if parent.name == package]
    return next((c for c in candidates if c.is_file()), None)


def _collision_xml(urdf: Path, package_dirs: tuple[Path, ...]) -> tuple[str, list[Finding]]:
    """The URDF text without the collision elements whose mesh is missing, and a
    :data:`~physid.excite.codes.MESH_NOT_FOUND` each."""
    root = ET.parse(urdf).getroot()
    notes = []
    for link in root.iter("link"):
        for element in list(link.findall("collision")):
            mesh = element.find("geometry/mesh")
            if mesh is None:
                continue
            path = _mesh_path(mesh.get("filename", ""), urdf, package_dirs)
            if path is None:
                link.remove(element)
                notes.append(
                    MESH_NOT_FOUND(
                        f"collision geometry of link {link.get('name')} not checked: mesh "
                        f"{mesh.get('filename')} not found (excitation.package_dirs)",
                        names=(str(link.get("name")),),
                    )
                )
            else:
                mesh.set("filename", str(path))
    return ET.tostring(root, encoding="unicode"), notes


class CollisionChecker:
    """Smallest distance between the bodies that can meet, per sample, and its gradient."""

    def __init__(self, model: pin.Model, geometry: pin.GeometryModel) -> None:
        """``geometry`` holds exactly the pairs to check."""
        self.model, self.geometry = model, geometry
        self.pairs = list(range(len(geometry.collisionPairs)))
        self.data = model.createData()
        self.geometry_data = pin.GeometryData(geometry)

    def pair_names(self) -> list[str]:
        objects = self.geometry.geometryObjects
        return [
            f"{objects[p.first].name}-{objects[p.second].name}"
            for p in (self.geometry.collisionPairs[k] for k in self.pairs)
        ]

    def _closest(self, q: np.ndarray) -> tuple[float, int]:
        pin.computeDistances(self.model, self.data, self.geometry, self.geometry_data, q)
        results = self.geometry_data.distanceResults
        distances = [results[k].min_distance for k in self.pairs]
        best = int(np.argmin(distances))
        return float(distances[best]), self.pairs[best]

    def distances(self, q: np.ndarray) -> np.ndarray:
        """(K,) smallest distance [m] over the checked pairs at each sample of ``q`` (K, nq)."""
        return np.array([self._closest(row)[0] for row in np.atleast_2d(q)])

    def distances_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`distances` and their gradients (K, nv) w.r.t. the joint positions."""
        q = np.atleast_2d(q)
        values, jacobian = np.empty(len(q)), np.zeros((len(q), self.model.nv))
        for k, row in enumerate(q):
            values[k], pair_index = self._closest(row)
            pin.computeJointJacobians(self.model, self.data, row)
            pair = self.geometry.collisionPairs[pair_index]
            result = self.geometry_data.distanceResults[pair_index]
            p_a, p_b = np.asarray(result.getNearestPoint1()), np.asarray(result.getNearestPoint2())
            normal = np.asarray(result.normal)  # from a to b, also when they overlap
            point_jacobians = []
            for index, point in ((pair.first, p_a), (pair.second, p_b)):
                joint = self.geometry.geometryObjects[index].parentJoint
                frame = pin.LOCAL_WORLD_ALIGNED
                J = pin.getJointJacobian(self.model, self.data, joint, frame)
                offset = point - self.data.oMi[joint].translation
                point_jacobians.append(J[:3] - pin.skew(offset) @ J[3:])
            jacobian[k] = normal @ (point_jacobians[1] - point_jacobians[0])
        return values, jacobian


def collision_checker(
    robot: RobotModel,
    urdf: str | Path,
    reference: np.ndarray,
    min_distance: float,
    package_dirs: tuple[str | Path, ...] = (),
) -> tuple[CollisionChecker | None, list[Finding]]:
    """The checker of ``robot``'s self-collision from the URDF's collision geometry, and the
    findings on it (geometry left out, meshes as hulls, pairs not checked, or why there is no
    check at all: codes EX101-EX104). ``reference``: the joint positions (the middle of the
    ranges) at which already-close pairs are disabled."""
    urdf = Path(urdf)
    dirs = tuple(Path(d) for d in package_dirs)
    model = robot.pin_model
    try:
        with quiet_stderr():  # urdfdom prints its complaints on descriptor 2; the note says why
            if is_mjcf(urdf):  # MuJoCo's geoms; mesh paths resolved by the MJCF itself
                text, notes = "", []
                geometry = pin.buildGeomFromMJCF(model, str(urdf), pin.COLLISION)
            else:
                text, notes = _collision_xml(urdf, dirs)
                geometry = pin.buildGeomFromUrdfString(
                    model, text, pin.COLLISION, package_dirs=[str(d) for d in dirs]
                )
    except (ValueError, RuntimeError) as error:
        why = f"the collision geometry did not load ({' '.join(str(error).split())})"
        return None, [*notes, NO_COLLISION_CHECK(f"no self-collision check: {why}")]
    if geometry.ngeoms < 2:
        kind = "MJCF" if is_mjcf(urdf) else "URDF"
        why = (
            "fewer than two collision bodies are left once the meshes not found are set aside"
            if notes
            else f"the {kind} has no collision geometry"
        )
        return None, [*notes, NO_COLLISION_CHECK(f"no self-collision check: {why}")]
    if _meshes_as_convex_hulls(geometry):
        notes.append(
            CONVEX_HULLS(
                "collision meshes checked as their convex hulls (conservative: a hull encloses "
                "its mesh)"
            )
        )
    geometry.addAllCollisionPairs()
    objects = geometry.geometryObjects
    data, geometry_data = model.createData(), pin.GeometryData(geometry)
    pin.computeDistances(model, data, geometry, geometry_data, reference)
    pairs, close = [], []
    for k, pair in enumerate(geometry.collisionPairs):
        a, b = objects[pair.first].parentJoint, objects[pair.second].parentJoint
        if a == b or model.parents[a] == b or model.parents[b] == a:
            continue  # one body, or bodies joined by a joint: they touch by design
        if geometry_data.distanceResults[k].min_distance < min_distance:
            close.append(f"{objects[pair.first].name}-{objects[pair.second].name}")
            continue
        pairs.append(k)
    if close:
        notes.append(
            CLOSE_PAIRS_UNCHECKED(
                "pairs closer than excitation.min_distance at the middle of the joint ranges, "
                f"not checked: {', '.join(close)}",
                numbers={"min_distance_m": min_distance},
                names=close,
            )
        )
    if not pairs:
        return None, [
            *notes,
            NO_PAIR_CAN_MEET("no self-collision check: no pair of bodies can meet"),
        ]
    kept = [geometry.collisionPairs[k] for k in pairs]
    geometry.removeAllCollisionPairs()
    for pair in kept:
        geometry.addCollisionPair(pin.CollisionPair(pair.first, pair.second))
    return CollisionChecker(model, geometry), notes


def _meshes_as_convex_hulls(geometry: pin.GeometryModel) -> int:
    """Replace every triangle mesh of ``geometry`` by its convex hull; the number replaced.

    A distance between two meshes walks their triangles' bounding-volume trees, some hundred
    times slower than coal's GJK between convex hulls; the design evaluates it at every sample
    of every scaling and iteration. A hull encloses its mesh, so its distance is never larger
    than the mesh's: the constraint stays on the safe side. The hull is built from the mesh's
    vertices: coal's own ``buildConvexRepresentation`` can give distances larger than the
    mesh's, which would not be safe."""
    try:
        import coal
    except ImportError:  # pragma: no cover - Pinocchio before 3.4 ships hpp-fcl
        import hppfcl as coal

    replaced = 0
    for item in geometry.geometryObjects:
        shape = item.geometry
        if not isinstance(shape, coal.BVHModelBase):
            continue
        vertices = np.asarray(shape.vertices(), float).reshape(-1, 3)
        if len(vertices) < 4:
            continue
        points = coal.StdVec_Vec3s()
        for vertex in vertices:
            points.append(vertex)
        try:
            item.geometry = coal.Convex.convexHull(points, False, "Qt")
        except (RuntimeError, ValueError):  # a flat mesh has no hull: keep the mesh
            continue
        replaced += 1
    return replaced


class WorkspaceChecker:
    """Positions (K, 3 F) of the workspace frames' origins and their Jacobians."""

    def __init__(self, robot: RobotModel, workspace: Workspace) -> None:
        model = robot.pin_model
        self.model, self.data, self.workspace = model, model.createData(), workspace
        self.frames = []
        for name in workspace.frames:
            if not model.existFrame(name):
                raise InputError(
                    f"config excitation.workspace.frames: '{name}' is not a frame of the URDF"
                )
            self.frames.append(model.getFrameId(name))

    @property
    def lower(self) -> np.ndarray:
        return np.tile(self.workspace.lower, len(self.frames))

    @property
    def upper(self) -> np.ndarray:
        return np.tile(self.workspace.upper, len(self.frames))

    def positions(self, q: np.ndarray) -> np.ndarray:
        out = []
        for row in np.atleast_2d(q):
            pin.framesForwardKinematics(self.model, self.data, row)
            out.append(np.concatenate([self.data.oMf[f].translation for f in self.frames]))
        return np.array(out)

    def positions_and_jacobian(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = np.atleast_2d(q)
        values = np.empty((len(q), 3 * len(self.frames)))
        jacobian = np.empty((len(q), 3 * len(self.frames), self.model.nv))
        for k, row in enumerate(q):
            pin.computeJointJacobians(self.model, self.data, row)
            pin.updateFramePlacements(self.model, self.data)
            for i, frame in enumerate(self.frames):
                values[k, 3 * i : 3 * i + 3] = self.data.oMf[frame].translation
                J = pin.getFrameJacobian(self.model, self.data, frame, pin.LOCAL_WORLD_ALIGNED)
                jacobian[k, 3 * i : 3 * i + 3] = J[:3]
        return values, jacobian

    def outside(self, q: np.ndarray) -> float:
        """Largest distance [m] by which a frame leaves the box (0 inside)."""
        p = self.positions(q)
        return float(max(np.max(self.lower - p, initial=0.0), np.max(p - self.upper, initial=0.0)))


class GeometryConstraints:
    """The geometric constraints of the NLP per sample: the smallest collision distance
    (>= ``min_distance``) and the workspace frames' positions (inside the box), either optional."""

    def __init__(
        self,
        collision: CollisionChecker | None,
        min_distance: float,
        workspace: WorkspaceChecker | None,
    ) -> None:
        self.collision, self.min_distance, self.workspace = collision, min_distance, workspace
        lower, upper = [], []
        if collision is not None:
            lower.append([min_distance])
            upper.append([np.inf])
        if workspace is not None:
            lower.append(workspace.lower)
            upper.append(workspace.upper)
        self.lower = np.concatenate(lower) if lower else np.zeros(0)
        self.upper = np.concatenate(upper) if upper else np.zeros(0)
        self.size = self.lower.size

    def values(self, q: np.ndarray) -> np.ndarray:
        """(K, size) constraint values at the samples ``q`` (K, n)."""
        parts = []
        if self.collision is not None:
            parts.append(self.collision.distances(q)[:, None])
        if self.workspace is not None:
            parts.append(self.workspace.positions(q))
        return np.hstack(parts)

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """(K, size, n) derivatives of :meth:`values` w.r.t. the joint positions."""
        parts = []
        if self.collision is not None:
            parts.append(self.collision.distances_and_jacobian(q)[1][:, None, :])
        if self.workspace is not None:
            parts.append(self.workspace.positions_and_jacobian(q)[1])
        return np.concatenate(parts, axis=1)

    def check(self, q: np.ndarray) -> tuple[float, float]:
        """(smallest collision distance [m] or inf, largest excursion out of the box [m] or 0)."""
        distance = np.inf if self.collision is None else float(self.collision.distances(q).min())
        outside = 0.0 if self.workspace is None else self.workspace.outside(q)
        return distance, outside
