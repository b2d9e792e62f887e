"""Self-collision and the workspace box of ``physid excite`` (issue 28 item 2).

Truth: a two-link arm over a table, written here; the designed trajectory is checked at every
row of its CSV by Pinocchio's boolean collision test and by a forward kinematics of its own,
independently of the distances and Jacobians the optimiser used.
"""

from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest
from click.testing import CliRunner

from physid.cli import main
from physid.excite.codes import (
    COLLISION_OFF,
    CONVEX_HULLS,
    LIMITS_VIOLATED,
    MESH_NOT_FOUND,
    NO_COLLISION_CHECK,
)
from physid.excite.geometry import Workspace, WorkspaceChecker, collision_checker
from physid.files.config import IdentifyConfig, robot_for
from physid.recordings.trajectory import read_table

# Shoulder 0.5 m above a 1.4 m wide table top at z = 0.3 m; two 0.4 m links; the forearm's
# sphere (r 0.05 m, at the tool) swings down to the table when both joints turn down: through it
# without the collision constraint.
ARM = """<robot name="two_link">
  <link name="base"><inertial><mass value="5"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0"
    ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.15"/><geometry><box size="1.4 1.4 0.3"/></geometry></collision>
  </link>
  <link name="upper"><inertial><origin xyz="0.2 0 0"/><mass value="2"/><inertia ixx="0.003"
    iyy="0.03" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.2 0 0" rpy="0 1.5708 0"/><geometry><cylinder radius="0.03"
      length="0.3"/></geometry></collision></link>
  <link name="fore"><inertial><origin xyz="0.2 0 0"/><mass value="1.5"/><inertia ixx="0.002"
    iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.4 0 0"/><geometry><sphere radius="0.05"/></geometry></collision>
  </link>
  <link name="tool"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 1 0"/>
    <limit lower="-1.2" upper="1.2" effort="200" velocity="2"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2.6" upper="2.6" effort="100" velocity="2"/></joint>
  <joint name="tool_joint" type="fixed"><parent link="fore"/><child link="tool"/>
    <origin xyz="0.4 0 0"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def urdf(tmp_path_factory):
    path = tmp_path_factory.mktemp("arm") / "two_link.urdf"
    path.write_text(ARM)
    return path


def test_distance_is_the_closed_form_and_its_gradient_the_finite_difference(urdf):
    robot = robot_for(urdf, IdentifyConfig(joint_terms=("fv",)))
    checker, notes = collision_checker(robot, urdf, np.zeros(2), 0.02)
    assert checker is not None and checker.pair_names() == ["base_0-fore_0"], notes
    rng = np.random.default_rng(1)
    for q in rng.uniform([-1.2, -2.6], [1.2, 2.6], (6, 2)):
        # the sphere's centre by hand (rotations about y), then its gap to the box
        s1, c1, s12, c12 = np.sin(q[0]), np.cos(q[0]), np.sin(q.sum()), np.cos(q.sum())
        centre = np.array([0.4 * c1 + 0.4 * c12, 0.0, 0.5 - 0.4 * s1 - 0.4 * s12])
        outside = np.maximum(np.abs(centre - [0.0, 0.0, 0.15]) - [0.7, 0.7, 0.15], 0.0)
        gap = np.linalg.norm(outside) - 0.05
        if np.linalg.norm(outside) > 0:  # the centre outside the box: the gap in closed form
            assert checker.distances(q)[0] == pytest.approx(gap, abs=1e-6)
        value, jacobian = checker.distances_and_jacobian(q[None])
        h = 3e-4  # coal's distances are accurate to ~1e-8 m: a small step would show its noise
        fd = [(checker.distances(q + h * e) - checker.distances(q - h * e))[0] / (2 * h)
              for e in np.eye(2)]  # fmt: skip
        np.testing.assert_allclose(jacobian[0], fd, atol=1e-5)


def _collides(urdf, q: np.ndarray) -> np.ndarray:
    """Pinocchio's own boolean collision test of the table and the elbow sphere, per row."""
    model = pin.buildModelFromUrdf(str(urdf))
    geometry = pin.buildGeomFromUrdf(model, str(urdf), pin.COLLISION)
    names = [o.name for o in geometry.geometryObjects]
    geometry.addCollisionPair(pin.CollisionPair(names.index("base_0"), names.index("fore_0")))
    data, geometry_data = model.createData(), pin.GeometryData(geometry)
    return np.array([pin.computeCollisions(model, data, geometry, geometry_data, row, True)
                     for row in q])  # fmt: skip


def _design(urdf, tmp_path, excitation: str) -> tuple[dict, np.ndarray]:
    config = tmp_path / "excite.yaml"
    config.write_text(
        "joint_terms: [fv]\nexcitation: {starts: 1, max_iterations: 40, time_limit_s: 60, "
        f"margin: 0.02, {excitation}}}\n"
    )
    out = tmp_path / "traj.csv"
    args = ["excite", "--urdf", str(urdf), "--config", str(config), "--out", str(out),
            "--harmonics", "3", "--base-frequency", "0.2"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    summary = json.loads(out.with_suffix(".json").read_text())
    # 40 IPOPT iterations may stop short of convergence: then written with exit code 3
    assert result.exit_code == (0 if summary["status"] == "ok" else 3), result.output
    columns = read_table(str(out)).columns
    return summary, np.column_stack([columns["q_shoulder"], columns["q_elbow"]])


def test_the_design_keeps_off_the_table_and_inside_the_box(urdf, tmp_path):
    free, q_free = _design(urdf, tmp_path, "collision: false")
    assert _collides(urdf, q_free).any(), "without the constraint the design goes through it"
    summary, q = _design(urdf, tmp_path, "min_distance: 0.02")
    assert summary["collision"]["checked"]
    assert not [f for f in summary["findings"] if f["code"] == LIMITS_VIOLATED.code]
    (off,) = [f for f in free["findings"] if f["code"] == COLLISION_OFF.code]
    assert off["severity"] == "info"
    assert not _collides(urdf, q).any()
    assert summary["collision"]["min_distance_m"] > 0.0
    # a workspace box: the tool (0.8 m from the shoulder) kept above z = 0.45 m
    box = "collision: false, workspace: {frames: [tool], lower: [-2, -2, 0.45], upper: [2, 2, 2]}"
    summary, q = _design(urdf, tmp_path, box)
    model = pin.buildModelFromUrdf(str(urdf))
    z = 0.5 - 0.4 * np.sin(q[:, 0]) - 0.4 * np.sin(q.sum(axis=1))  # the tool by hand
    assert np.all(z >= 0.45 - 1e-6) and model.existFrame("tool")
    assert summary["outside_workspace_m"] == 0.0


def test_unknown_workspace_frames_and_missing_meshes_are_named(urdf, tmp_path):
    robot = robot_for(urdf, IdentifyConfig(joint_terms=("fv",)))
    with pytest.raises(Exception, match="'hand' is not a frame"):
        WorkspaceChecker(robot, Workspace(("hand",), np.zeros(3), np.ones(3)))
    meshed = tmp_path / "meshed.urdf"
    meshed.write_text(
        ARM.replace('<sphere radius="0.05"/>', '<mesh filename="package://x/y.stl"/>')
    )
    checker, said = collision_checker(robot, meshed, np.zeros(2), 0.02)
    missing = [f for f in said if f.code == MESH_NOT_FOUND.code]
    assert checker is None and [f.names for f in missing] == [("fore",)]
    assert "not found" in missing[0].message
    # every mesh missing (the shared UR10e's): the note says why there is no check, not that
    # the URDF has no collision geometry (it has; its meshes were not found)
    all_meshes = tmp_path / "all_meshes.urdf"
    text = ARM.replace('<sphere radius="0.05"/>', '<mesh filename="package://x/y.stl"/>')
    text = text.replace('<box size="1.4 1.4 0.3"/>', '<mesh filename="package://x/z.stl"/>')
    all_meshes.write_text(text)
    checker, said = collision_checker(robot, all_meshes, np.zeros(2), 0.02)
    assert checker is None and said[-1].code == NO_COLLISION_CHECK.code
    assert "fewer than two collision bodies are left" in said[-1].message, said


def test_meshes_are_checked_as_their_hulls_never_farther_than_the_meshes():
    """The SO-101 arm's STL collision meshes (up to 14,000 vertices) took 220 ms per
    configuration between meshes: the design's first scaling ran for over ten minutes before its
    time budget began. They are checked as convex hulls: never farther apart than the meshes
    (Pinocchio's own mesh distances, the URDF loaded as it is)."""
    from physid.sim.oe_robots import robot_urdf

    urdf = robot_urdf("so_arm_description/urdf/so101.urdf")
    robot = robot_for(urdf, IdentifyConfig())
    model = robot.pin_model
    middle = 0.5 * (model.lowerPositionLimit + model.upperPositionLimit)
    checker, said = collision_checker(robot, urdf, middle, 0.01)
    assert any(f.code == CONVEX_HULLS.code for f in said)
    kinds = [type(item.geometry).__name__ for item in checker.geometry.geometryObjects]
    assert all(kind.startswith("Convex") for kind in kinds), kinds
    meshes = pin.buildGeomFromUrdf(model, str(urdf), pin.COLLISION,
                                   package_dirs=[str(urdf.parents[4])])  # fmt: skip
    names = [item.name for item in meshes.geometryObjects]
    hulls = checker.geometry
    for pair in hulls.collisionPairs:
        a = names.index(hulls.geometryObjects[pair.first].name)
        b = names.index(hulls.geometryObjects[pair.second].name)
        meshes.addCollisionPair(pin.CollisionPair(a, b))
    rng = np.random.default_rng(0)
    for q in [middle, *(middle + rng.uniform(-0.5, 0.5, model.nq) for _ in range(2))]:
        mesh_data = pin.GeometryData(meshes)
        pin.computeDistances(model, model.createData(), meshes, mesh_data, q)
        mesh = np.array([r.min_distance for r in mesh_data.distanceResults])
        hull_data = pin.GeometryData(hulls)
        pin.computeDistances(model, model.createData(), hulls, hull_data, q)
        hull = np.array([r.min_distance for r in hull_data.distanceResults])
        assert np.all(hull <= mesh + 1e-5)  # GJK stops within ~1 um (measured 1.02 um)
        assert checker.distances(q)[0] == pytest.approx(hull.min())
