"""Quantities of the ``physid oe`` report (physid.oe.outputs.report) against closed forms."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from physid.oe.model.charts import theta_from_pis
from physid.oe.model.measurements import Measurements
from physid.oe.outputs.report import (
    base_pose_errors,
    contact_force_columns,
    contact_forces,
    ellipsoid_outline,
    equivalent_ellipsoid,
)
from physid.oe.solving.build import make_problem
from physid.sim.oe_floating import GO1_FEET, go1_standing
from physid.sim.oe_robots import GO1, load_model


def _rotated(inertia: pin.Inertia, R: np.ndarray, com: np.ndarray) -> np.ndarray:
    """pi of ``inertia`` (about its com) turned by R and moved to ``com``."""
    return pin.Inertia(inertia.mass, com, R @ inertia.inertia @ R.T).toDynamicParameters()


def test_ellipsoid_semi_axes_of_an_ellipsoid_a_box_and_a_sphere():
    R = pin.exp3(np.array([0.3, -0.7, 0.4]))
    com = np.array([0.01, -0.02, 0.05])
    com_e, axes_e, dirs = equivalent_ellipsoid(
        _rotated(pin.Inertia.FromEllipsoid(2.0, 0.1, 0.2, 0.3), R, com)
    )
    assert np.allclose(np.sort(axes_e), [0.1, 0.2, 0.3], rtol=1e-10) and np.allclose(com_e, com)
    shape = R @ np.diag([0.1, 0.2, 0.3]) ** 2 @ R.T  # the ellipsoid {c + A^1/2 s, |s| <= 1}
    assert np.allclose((dirs * axes_e**2) @ dirs.T, shape, rtol=0, atol=1e-12)
    # box of sides (lx, ly, lz): I_x = m (ly^2 + lz^2) / 12 -> a = lx sqrt(5 / 12)
    sides = np.array([0.4, 0.1, 0.25])
    box = equivalent_ellipsoid(pin.Inertia.FromBox(3.0, *sides).toDynamicParameters())[1]
    assert np.allclose(np.sort(box), np.sort(sides) * np.sqrt(5.0 / 12.0), rtol=1e-10)
    ball = equivalent_ellipsoid(pin.Inertia.FromSphere(1.5, 0.07).toDynamicParameters())[1]
    assert np.allclose(ball, 0.07, rtol=1e-10)


def test_projected_outline_is_the_shadow_of_the_ellipsoid():
    """Support function of the outline == that of dense points of the ellipsoid's surface."""
    R = pin.exp3(np.array([0.9, 0.2, -0.5]))
    com = np.array([0.03, 0.0, -0.01])
    ellipsoid = equivalent_ellipsoid(
        _rotated(pin.Inertia.FromEllipsoid(1.0, 0.05, 0.12, 0.2), R, com)
    )
    u, w = np.meshgrid(np.linspace(0, np.pi, 400), np.linspace(0, 2 * np.pi, 800))
    sphere = np.stack([np.sin(u) * np.cos(w), np.sin(u) * np.sin(w), np.cos(u)], -1).reshape(-1, 3)
    surface = com[:, None] + (ellipsoid[2] * ellipsoid[1]) @ sphere.T
    for plane in ((0, 1), (0, 2)):
        outline = ellipsoid_outline(*ellipsoid, plane=plane, n=2001)
        for angle in np.linspace(0, np.pi, 7):
            d = np.array([np.cos(angle), np.sin(angle)])
            assert (outline @ d).max() == pytest.approx((d @ surface[list(plane)]).max(), abs=2e-5)


def test_base_pose_errors_of_a_known_offset():
    rng = np.random.default_rng(3)
    n = 6
    quats = np.array([pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs() for _ in range(n)])
    deltas = rng.normal(scale=0.02, size=(n, 3))
    xs = np.zeros((n, 7))
    xs[:, :3] = rng.normal(size=(n, 3))
    for k in range(n):
        R = pin.Quaternion(quats[k]).toRotationMatrix() @ pin.exp3(deltas[k])
        xs[k, 3:7] = pin.Quaternion(R).coeffs()
    offsets = rng.normal(scale=0.01, size=(n, 3))
    angle, position = base_pose_errors(xs, quats, xs[:, :3] + offsets)
    assert np.allclose(angle, np.linalg.norm(deltas, axis=1), atol=1e-12)
    assert np.allclose(position, np.linalg.norm(offsets, axis=1), atol=1e-15)
    assert base_pose_errors(xs, quats)[1] is None


def _standing_problem(true_model: pin.Model, nominal: pin.Model, nodes: int = 4):
    """Go1 at rest on four feet with joint torques that hold it: the ground forces f* solve the
    base rows of the static equilibrium ``g(q) = Jc^T f`` (minimum norm) and the joints get
    ``tau = g_j - Jc_j^T f*``, all at ``true_model``; the problem is built on ``nominal``."""
    q = go1_standing(true_model)
    data = true_model.createData()
    g = pin.computeGeneralizedGravity(true_model, data, q).copy()
    pin.computeJointJacobians(true_model, data, q)
    pin.framesForwardKinematics(true_model, data, q)
    Jc = np.vstack(
        [
            pin.getFrameJacobian(
                true_model, data, true_model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED
            )[:3]
            for f in GO1_FEET
        ]
    )
    f_star = np.linalg.lstsq(Jc[:, :6].T, g[:6], rcond=None)[0]
    tau = g[6:] - Jc[:, 6:].T @ f_star
    problem = make_problem(
        nominal,
        ["root_joint"],
        "exp_eig",
        0.002,
        np.tile(tau, (nodes, 1)),
        Measurements(q=np.tile(q, (nodes + 1, 1))),
        contact_frames=GO1_FEET,
        contact_flags=np.ones((nodes + 1, 4), dtype=bool),
    )
    xs = np.tile(np.r_[q, np.zeros(true_model.nv)], (nodes + 1, 1))
    return problem, xs, f_star.reshape(4, 3)


def test_contact_forces_of_a_standing_go1_carry_its_weight():
    nominal = load_model(GO1, floating=True)
    problem, xs, f_star = _standing_problem(nominal, nominal)
    forces = contact_forces(problem, xs, problem.dynamics.nominal_theta())
    weight = pin.computeTotalMass(nominal) * np.linalg.norm(nominal.gravity.linear)
    assert forces.shape == (4, 4, 3)
    assert np.allclose(forces[:, :, 2].sum(axis=1), weight, rtol=1e-6, atol=0)
    assert np.allclose(forces, f_star, atol=1e-6 * weight)


def test_contact_forces_use_the_given_theta():
    """A 3 kg payload on the torso, torques that hold the heavier robot at rest: the forces at
    the payload's theta equal the static ones; at the URDF's theta the lighter torso
    accelerates and the forces differ (measured: 0.216 N more in total, 1e3 x the tolerance;
    the joint torques, not the torso's weight, set the feet's forces of a rigid stance)."""
    nominal = load_model(GO1, floating=True)
    true = nominal.copy()
    payload = pin.Inertia(3.0, np.array([0.02, 0.0, 0.05]), np.diag([0.02, 0.04, 0.05]))
    true.inertias[1] = nominal.inertias[1] + payload
    problem, xs, f_star = _standing_problem(true, nominal)
    theta = theta_from_pis("exp_eig", true.inertias[1].toDynamicParameters())
    forces = contact_forces(problem, xs, theta)
    weight = pin.computeTotalMass(true) * np.linalg.norm(true.gravity.linear)
    assert np.allclose(forces[:, :, 2].sum(axis=1), weight, rtol=1e-6, atol=0)
    assert np.allclose(forces, f_star, atol=1e-6 * weight)
    light = contact_forces(
        problem, xs, theta_from_pis("exp_eig", nominal.inertias[1].toDynamicParameters())
    )
    assert abs(light[0, :, 2].sum() - weight) > 0.1


def test_contact_forces_zero_off_contact_and_csv_columns():
    nominal = load_model(GO1, floating=True)
    problem, xs, f_star = _standing_problem(nominal, nominal)
    problem.contacts.flags[1:3, 0] = False  # FL lifted at nodes 1, 2 (the others hold on)
    forces = contact_forces(problem, xs, problem.dynamics.nominal_theta())
    assert np.all(forces[1:3, 0] == 0.0) and np.allclose(forces[0], f_star, atol=1e-6)
    assert forces[1, 1:, 2].sum() > 0.0
    cols = contact_force_columns(np.arange(5) * 0.002, GO1_FEET, forces)
    assert list(cols)[:4] == ["t", "fx_FL_foot", "fy_FL_foot", "fz_FL_foot"]
    assert len(cols) == 13 and cols["t"].shape == (4,)
    assert np.array_equal(cols["fz_RR_foot"], forces[:, 3, 2])
