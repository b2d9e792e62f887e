"""Issue 29 item 2: the feet's radius and the contact-change noise floor chosen from what the
user gives (the robot file's collision spheres, the recording), not from a config."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from physid.oe.model.measurements import Measurements
from physid.oe.model.phases import change_distance
from physid.oe.soft.contact_noise import choose_change_floor
from physid.oe.soft.foot_radius import estimate_foot_radius
from physid.robot.contact_spheres import contact_spheres
from physid.robot.mjcf import load_mjcf
from physid.robot.model import load_urdf
from physid.sim.oe_robots import GO1, load_model
from physid.status import Status

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")

LEG_URDF = """<?xml version="1.0"?>
<robot name="two_feet">
  <link name="base"><inertial><mass value="5"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1"
    iyz="0" izz="0.1"/></inertial>
    <collision><geometry><mesh filename="package://nowhere/base.stl"/></geometry></collision>
  </link>
  {legs}
</robot>"""
LEG = """
  <link name="{n}_calf"><inertial><mass value="0.5"/><inertia ixx="0.01" ixy="0" ixz="0"
    iyy="0.01" iyz="0" izz="0.001"/></inertial></link>
  <joint name="{n}_knee" type="revolute"><parent link="base"/><child link="{n}_calf"/>
    <origin xyz="{x} 0 0"/><axis xyz="0 1 0"/><limit effort="10" velocity="10" lower="-3"
    upper="3"/></joint>
  <link name="{n}_foot"><inertial><mass value="0.05"/><inertia ixx="1e-5" ixy="0" ixz="0"
    iyy="1e-5" iyz="0" izz="1e-5"/></inertial>
    <collision><origin xyz="{cx} 0 0"/><geometry><sphere radius="{r}"/></geometry></collision>
  </link>
  <joint name="{n}_ankle" type="fixed"><parent link="{n}_calf"/><child link="{n}_foot"/>
    <origin xyz="0 0 -0.2"/></joint>"""

LEG_MJCF = """<mujoco model="leg">
  <worldbody>
    <body name="base" pos="0 0 0.5">
      <inertial pos="0 0 0" mass="5" diaginertia="0.1 0.1 0.1"/>
      <body name="calf" pos="0.1 0 0">
        <joint name="knee" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.1" mass="0.5" diaginertia="0.01 0.01 0.001"/>
        <geom name="shin" type="sphere" size="0.01" pos="0 0 -0.1"/>
        <body name="foot" pos="0 0 -0.2">
          <inertial pos="0 0 0" mass="0.05" diaginertia="1e-5 1e-5 1e-5"/>
          <geom name="foot" type="sphere" size="0.023"/>
          <site name="foot_site"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def test_radius_read_from_a_urdf_collision_sphere(tmp_path):
    # front foot: a 21.5 mm sphere at the foot frame; rear: a 30 mm sphere whose centre is 5 mm
    # off the frame (ANYmal B's: 23.25 mm above it), the frame inside it: the foot rolls about
    # that centre; a sphere that does not hold the frame (50 mm off a 30 mm sphere) is not the
    # foot's. The base's mesh is missing and must not matter
    legs = (LEG.format(n="front", x=0.2, cx=0, r=0.0215)
            + LEG.format(n="rear", x=-0.2, cx=0.005, r=0.03)
            + LEG.format(n="side", x=0.0, cx=0.05, r=0.03))  # fmt: skip
    path = tmp_path / "robot.urdf"
    path.write_text(LEG_URDF.format(legs=legs))
    model = load_urdf(path, floating_base=True)
    found, failure = contact_spheres(path, model, ("front_foot", "rear_foot", "side_foot"))
    assert failure is None and set(found) == {"front_foot", "rear_foot"}
    assert found["front_foot"][0] == pytest.approx(0.0215, abs=1e-12)
    assert np.all(found["front_foot"][1] == 0.0)
    assert found["rear_foot"][0] == pytest.approx(0.03, abs=1e-12)
    np.testing.assert_allclose(found["rear_foot"][1], [0.005, 0.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("radius", ["nan", "-0.02", "0"])
def test_a_sphere_without_a_positive_radius_is_no_round_foot(tmp_path, radius):
    path = tmp_path / "robot.urdf"
    path.write_text(LEG_URDF.format(legs=LEG.format(n="front", x=0.2, cx=0, r=radius)))
    model = load_urdf(path, floating_base=True)
    found, failure = contact_spheres(path, model, ("front_foot",))
    assert failure is None and found == {}


def test_radius_read_from_an_mjcf_sphere_geom(tmp_path):
    path = tmp_path / "leg.xml"
    path.write_text(LEG_MJCF)
    model = load_mjcf(path, floating_base=True)  # an added free-flyer (none in the file)
    found, failure = contact_spheres(path, model, ("foot_site", "calf"))
    assert failure is None
    # the shin's sphere rides on the knee too, but 0.1 m above the calf frame: not a foot
    assert set(found) == {"foot_site"} and found["foot_site"][0] == pytest.approx(0.023)


def _rolling_go1(radius: float, rng: np.random.Generator, noise: float, n: int = 1000):
    """Go1 standing on four round feet of ``radius`` that roll without slipping while the
    trunk sways (kinematics only): per node, each leg's joint rates solve
    ``v_c = radius (omega_foot x e_z)`` for the base's prescribed twist; q integrated by
    Euler on 10 sub-steps. Returns the measurements (joint velocities and gyro with white
    noise of std ``noise``), the flags and dt."""
    model = load_model(GO1, floating=True)
    data = model.createData()
    dt, sub = 0.002, 10
    q = pin.neutral(model)
    q[7:] = np.tile([0.0, 0.8, -1.6], 4)
    ids = [model.getFrameId(f) for f in FEET]
    ez = pin.skew(np.array([0.0, 0.0, 1.0]))
    qs, vs = [], []

    def velocity(q: np.ndarray, t: float) -> np.ndarray:
        v = np.zeros(model.nv)
        w = 2 * np.pi * np.array([0.7, 1.1, 0.9])
        amplitude = np.array([0.05, 0.04, 0.03, 0.3, 0.4, 0.2])  # m/s, rad/s
        v[:6] = amplitude * np.sin(w[[0, 1, 2, 1, 0, 2]] * t)
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        for leg, f in enumerate(ids):
            J = pin.getFrameJacobian(model, data, f, pin.LOCAL_WORLD_ALIGNED)
            A = J[:3] + radius * ez @ J[3:]  # v_c - radius (omega x e_z) = 0
            cols = slice(6 + 3 * leg, 9 + 3 * leg)
            v[cols] = np.linalg.solve(A[:, cols], -A[:, :6] @ v[:6])
        return v

    for k in range(n):
        v = velocity(q, k * dt)
        qs.append(q.copy())
        vs.append(v)
        for s in range(sub):
            q = pin.integrate(model, q, velocity(q, (k + s / sub) * dt) * dt / sub)
    q_all, v_all = np.array(qs), np.array(vs)
    meas = Measurements(
        q=q_all,
        v=v_all[:, 6:] + noise * rng.standard_normal((n, 12)),
        base_quat=q_all[:, 3:7],
        gyro=v_all[:, 3:6] + noise * rng.standard_normal((n, 3)),
    )
    return model, meas, np.ones((n, 4), bool), dt


def test_radius_fitted_to_feet_that_roll():
    model, meas, flags, dt = _rolling_go1(0.02, np.random.default_rng(0), 0.0)
    fit = estimate_foot_radius(model, FEET, flags, meas, dt)
    # the rolling relation holds exactly at every node's (q, v), and the moving average is
    # applied to both sides: without noise only rounding is left
    assert fit.radius == pytest.approx(0.02, abs=1e-9)
    # with 1e-2 rad/s white noise on the joint velocities and the gyro: the fit's own std
    # bounds its error, plus the errors-in-variables bias (a joint's velocity noise moves the
    # foot centre by -l times its rotation, l ~ 0.2 m the lever below the knee): -l times
    # the noise share of the regressor's variance, (1e-2)^2 / 25 nodes over (0.3 rad/s)^2,
    # i.e. about 1e-6 m
    model, meas, flags, dt = _rolling_go1(0.02, np.random.default_rng(1), 1e-2)
    fit = estimate_foot_radius(model, FEET, flags, meas, dt)
    assert fit.radius > 0  # decided: round feet
    assert abs(fit.radius - 0.02) < 4 * fit.std + 1e-5, (fit.radius, fit.std)
    assert fit.std < 2e-3


def test_radius_is_exactly_zero_for_feet_that_do_not_roll():
    # point feet (the contact frames stay put) with noise: the fit is 0 within its std, and
    # the radius used is exactly 0, so point-foot data are solved as before
    model, meas, flags, dt = _rolling_go1(0.0, np.random.default_rng(2), 1e-2)
    fit = estimate_foot_radius(model, FEET, flags, meas, dt)
    assert abs(fit.estimate) < 4 * fit.std
    assert fit.radius == 0.0 and "point feet" in fit.reason


def _soft_change_defects(rng: np.random.Generator, reach: int, floor: float):
    """Joint-velocity defects (N, 12) of a crawl-like flag sequence: white measurement noise
    (0.04, both velocities of the defect) at every node plus a slow (AR(1), rho 0.9) model
    error of std ``floor`` within ``reach`` nodes of each flag change."""
    n, m = 2000, 12
    flags = np.ones((n + 1, 4), bool)
    for start in range(30, n - 60, 140):  # one foot lifted for 60 nodes every 140
        flags[start : start + 60, (start // 140) % 4] = False
    distance = change_distance(flags, n)
    slow = np.zeros((n, m))
    rho = 0.9
    for k in range(1, n):
        slow[k] = rho * slow[k - 1] + np.sqrt(1 - rho**2) * rng.standard_normal(m)
    defects = 0.04 * rng.standard_normal((n, m)) + floor * slow * (distance <= reach)[:, None]
    return defects, distance


def test_contact_change_floor_from_variance_components():
    dt, reach, floor = 0.002, 15, 0.09
    defects, distance = _soft_change_defects(np.random.default_rng(3), reach, floor)
    chosen = choose_change_floor(defects, distance, dt, process_v=1e-3)
    # the window: the change point of the variance, within 2 nodes (4 ms)
    assert abs(chosen.window - reach * dt) <= 2 * dt + 1e-12, chosen.reason
    # the floor: sqrt(ms_near - ms_far), each mean square over ~n m samples; the AR(1) error
    # (rho 0.9) leaves (1 - rho^2)/(1 + rho^2) = 0.105 of the 12 x 620 near samples
    # independent: the near mean square has a relative std sqrt(2 / 780) = 5 %, the floor
    # half that; 4 std: 10 %
    assert chosen.floor == pytest.approx(floor, rel=0.10), chosen.reason
    # the same noise without the soft contact: no floor, and the reason says why
    defects, distance = _soft_change_defects(np.random.default_rng(4), reach, 0.0)
    none = choose_change_floor(defects, distance, dt, process_v=1e-3)
    assert none.floor is None and "no floor" in none.reason


def test_contact_change_floor_keeps_a_given_window():
    dt = 0.002
    defects, distance = _soft_change_defects(np.random.default_rng(5), 15, 0.09)
    chosen = choose_change_floor(defects, distance, dt, process_v=1e-3, window=0.01)
    assert chosen.window == pytest.approx(0.01)
    assert chosen.floor is not None and chosen.floor > 0.05


def test_go1_point_feet_solved_with_the_urdf_spheres_as_before(go1_payload_walk, tmp_path):
    """physid's own Go1 walk has point contacts at the foot frames while its URDF declares
    2 cm collision spheres there: the default now uses them (the file is not second-guessed
    by a fit that cannot tell soft creep from pinned points) and chooses no contact-change
    floor (no excess near the flag changes). Measured: payload error +15.6 g (0.52 % of
    3 kg, 0.9 std) against +1.7 g with point feet, CoM z +0.30 mm against +0.03 mm."""
    from oe_checks import torso_payload_mass

    from physid.api.oe_run import oe_estimate
    from physid.files.io import table_csv_text
    from physid.sim.oe_floating import contract_columns
    from physid.sim.oe_robots import robot_urdf

    nominal, true, rec = go1_payload_walk
    data = tmp_path / "go1.csv"
    data.write_text(table_csv_text(contract_columns(nominal, rec)))
    old = tmp_path / "point_feet.yaml"
    old.write_text("contacts:\n  radius: 0\nnoise:\n  contact_change_v: 0\n")
    payload = torso_payload_mass(go1_payload_walk)
    found = {}
    for name, config in (("default", None), ("point feet", old)):
        out = oe_estimate(robot_urdf(GO1), data, "root_joint", floating=True, config=config)
        assert out.status is Status.OK
        found[name] = (out.raw.body_summary()["root_joint"], out.to_dict()["soft_contacts"])
    default, soft = found["default"]
    assert soft["radius"]["radius"] == 0.02 and soft["radius"]["source"] == "robot file"
    assert soft["contact_change"]["contact_change_v"] is None
    assert found["point feet"][1]["radius"]["source"] == "config"
    for body, _ in found.values():
        assert abs(body["mass"] - true.inertias[1].mass) < 0.01 * payload
        assert abs(body["mass"] - true.inertias[1].mass) < 2 * body["std"]["mass"]
        com_error = np.array(body["com"]) - true.inertias[1].lever
        # each axis within 3 of its std (0.13-3 mm), the whole within 1.5 mm
        assert np.all(np.abs(com_error) < 3 * np.array(body["std"]["com"]))
        assert np.linalg.norm(com_error) < 1.5e-3


def test_fitted_defects_take_the_prior_parameter_error_out(go1_payload_walk):
    """At the true states of physid's Go1 walk the defects at the true trunk are 0 (1e-16);
    at the payload-free prior they are 0.054 rad/s RMS, a mean the variance components must
    not read as noise: one Gauss-Newton step of theta on them leaves 0.0059 (the chart is
    not linear over a 3 kg step), and the model's inertias are the prior's again after."""
    from physid.oe.soft.contact_noise import fitted_defects, velocity_defects
    from physid.oe.solving.build import make_problem

    nominal, _, rec = go1_payload_walk
    problem = make_problem(nominal.copy(), ["root_joint"], "exp_eig", rec.dt, rec.u,
                           rec.measurements, contact_frames=rec.contact_frames,
                           contact_flags=rec.contact_flags)  # fmt: skip
    theta = problem.dynamics.nominal_theta()
    before = np.sqrt(np.mean(velocity_defects(problem, rec.x, theta) ** 2))
    after = np.sqrt(np.mean(fitted_defects(problem, rec.x, theta) ** 2))
    assert before > 0.03 and after < 0.15 * before, (before, after)
    np.testing.assert_allclose(problem.dynamics.nominal_theta(), theta, atol=1e-12)


def test_fitted_defects_reach_joint_terms_the_robot_file_leaves_out(go1_payload_walk):
    """Commands that also drive a viscous friction of 2 N m s/rad on every leg joint (the
    Go2-like MJCF's), the model's viscous estimated from 1e-2 (undeclared): at the prior the
    defects are 3.70 rad/s RMS, almost all that friction's. One trust-region step moves a
    joint value by a factor e at most and left 3.57 (the floor then read the missing friction
    as contact error: 0.39 rad/s within 100 ms of every flag change on the Go2-like crawl);
    the steps of fitted_defects take it to 0.26 (measured), and the model's inertias are the
    prior's again after."""
    from physid.oe.model.dynamics import JointTerms
    from physid.oe.model.joint_estimate import JointEstimate
    from physid.oe.soft.contact_noise import fitted_defects, velocity_defects
    from physid.oe.solving.build import make_problem

    nominal, _, rec = go1_payload_walk
    nv = nominal.nv
    u = rec.u + 2.0 * rec.x[:-1, nominal.nq + 6 :]
    problem = make_problem(
        nominal.copy(),
        ["root_joint"],
        "exp_eig",
        rec.dt,
        u,
        rec.measurements,
        contact_frames=rec.contact_frames,
        contact_flags=rec.contact_flags,
        joints=JointTerms(np.zeros(nv), np.zeros(nv), np.zeros(nv)),
        joint_estimate=JointEstimate(("viscous",), tuple(range(6, nv))),
    )
    theta = problem.dynamics.nominal_theta()
    before = np.sqrt(np.mean(velocity_defects(problem, rec.x, theta) ** 2))
    after = np.sqrt(np.mean(fitted_defects(problem, rec.x, theta) ** 2))
    assert before > 3.0 and after < 0.1 * before, (before, after)
    np.testing.assert_allclose(problem.dynamics.nominal_theta(), theta, atol=1e-12)


def test_a_foot_rolls_about_its_spheres_centre(tmp_path):
    """ANYmal B's foot sphere sits 23.25 mm above its foot frame: the contact was placed at the
    frame (its trunk read 17.8 kg for 18.8 in MuJoCo; 19.09 kg with the contact at the centre).
    The run's model gets the frame moved to the sphere's centre, except where a force sensor's
    wrench is given at the frame."""
    from physid.oe.soft.choose import rolling_at_sphere_centres

    legs = (LEG.format(n="front", x=0.2, cx=0.005, r=0.03)
            + LEG.format(n="rear", x=-0.2, cx=0.004, r=0.03))  # fmt: skip
    path = tmp_path / "robot.urdf"
    path.write_text(LEG_URDF.format(legs=legs))
    model = load_urdf(path, floating_base=True)
    before = {f: model.frames[model.getFrameId(f)].placement.translation.copy()
              for f in ("front_foot", "rear_foot")}  # fmt: skip
    found, _ = contact_spheres(path, model, ("front_foot", "rear_foot"))
    said = rolling_at_sphere_centres(model, {f: o for f, (_, o) in found.items()}, {"rear_foot"})
    moved = model.frames[model.getFrameId("front_foot")].placement.translation
    np.testing.assert_allclose(moved - before["front_foot"], [0.005, 0.0, 0.0], atol=1e-12)
    kept = model.frames[model.getFrameId("rear_foot")].placement.translation
    np.testing.assert_array_equal(kept, before["rear_foot"])
    assert [f.code for f in said] == ["OE108", "OE108"]
    assert "front_foot: the foot rolls about its collision sphere's centre, 5 mm" in said[0].message
    assert said[0].numbers["offset_m"] == pytest.approx(0.005) and said[0].names == ("front_foot",)
    assert said[1].names == ("rear_foot",) and "the contact stays at the frame" in said[1].message
