"""A vertical lift's weight (physid.offline.checks.lift_load): the mean force of a moving lift
against
the weight the URDF puts on it, which the gravity comparison cannot see (constant in q)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from physid.offline.checks.lift_load import lift_load_findings, lift_loads, lift_sign_finding
from physid.offline.checks.suspect import suspect_reasons
from physid.recordings.trajectory import Trajectory
from physid.robot.model import build_robot_model

LIFT_URDF = """<?xml version="1.0"?>
<robot name="lift_arm">
  <link name="base"/>
  <joint name="lift" type="prismatic">
    <parent link="base"/><child link="torso"/><axis xyz="0 0 1"/>
    <limit lower="0" upper="0.5" effort="1000" velocity="0.2"/>
  </joint>
  <link name="torso">
    <inertial><origin xyz="0 0 0.2"/><mass value="8.0"/>
      <inertia ixx="0.2" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.1"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <origin xyz="0 0 0.5"/><parent link="torso"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="100" velocity="3"/>
  </joint>
  <link name="arm">
    <inertial><origin xyz="0.3 0 0"/><mass value="2.0"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial>
  </link>
</robot>
"""
WEIGHT_N = 10.0 * 9.81  # torso and arm on the lift


def _recording(tmp_path, lift_scale: float = 1.0, lift_friction_n: float = 0.0,
               lopsided: bool = False) -> tuple:  # fmt: skip
    path = tmp_path / "lift_arm.urdf"
    path.write_text(LIFT_URDF)
    pin_model = pin.buildModelFromUrdf(str(path))
    model = build_robot_model(pin_model)
    t = np.arange(0.0, 20.0, 0.01)
    w = np.array([0.5, 0.7])
    amplitude, centre = np.array([0.1, 0.8]), np.array([0.2, 0.0])
    q = centre + amplitude * np.sin(np.outer(t, w))
    dq = amplitude * w * np.cos(np.outer(t, w))
    ddq = -amplitude * w**2 * np.sin(np.outer(t, w))
    if lopsided:  # the lift rises slowly and drops fast: more time going up than down
        phase = w[0] * t
        q[:, 0] = centre[0] + amplitude[0] * (np.sin(phase) - 0.3 * np.sin(2 * phase))
        dq[:, 0] = amplitude[0] * w[0] * (np.cos(phase) - 0.6 * np.cos(2 * phase))
        ddq[:, 0] = -amplitude[0] * w[0] ** 2 * (np.sin(phase) - 1.2 * np.sin(2 * phase))
    data = pin_model.createData()
    tau = np.array([pin.rnea(pin_model, data, *s) for s in zip(q, dq, ddq, strict=True)])
    tau[:, 0] += lift_friction_n * np.sign(dq[:, 0])
    tau += np.random.default_rng(0).normal(0.0, 0.5, tau.shape)
    tau[:, 0] *= lift_scale
    return model, Trajectory(t, q, tau, ("lift", "shoulder"), source="run.csv")


def test_a_lift_carries_the_weight_above_it_and_nothing_is_said(tmp_path):
    model, run = _recording(tmp_path)
    ((joint, (measured, weight)),) = lift_loads(model, run).items()
    assert joint == "lift" and abs(weight - WEIGHT_N) < 1e-9
    # the inertial force of a sinusoidal lift averages out over whole periods, nearly
    assert abs(measured - WEIGHT_N) < 0.01 * WEIGHT_N
    assert lift_sign_finding(model, run) is None and lift_load_findings(model, [run]) == []


def test_a_flipped_lift_is_suspect_and_a_lift_off_scale_is_named(tmp_path):
    """Its force with the sign flipped: no gravity comparison saw it (the lift's gravity is
    constant), and the fit's offset took -2 x the weight with status ok (a TIAGo-like arm in
    MuJoCo: 4 x plain least squares' held-out error)."""
    model, flipped = _recording(tmp_path, -1.0)
    (reason,) = suspect_reasons(model, [flipped])
    assert reason.startswith("run.csv: a lift's force runs against the weight")
    assert "'lift' -98" in reason and "against 98.1 N" in reason
    model, light = _recording(tmp_path, 0.05)
    assert lift_sign_finding(model, light) is None
    (warning,) = [f.message for f in lift_load_findings(model, [light])]
    assert "the lift 'lift' carries 0.05 x the weight the URDF puts on it" in warning
    model, heavy = _recording(tmp_path, 2.5)
    assert "carries 2.5 x the weight" in lift_load_findings(model, [heavy])[0].message
    # half the weight: the TIAGo-like lift so logged gave a moving mass 0.56 x the truth
    model, half = _recording(tmp_path, 0.5)
    assert "carries 0.5 x the weight" in lift_load_findings(model, [half])[0].message


def test_a_still_lift_or_a_revolute_robot_has_no_lift_to_judge(tmp_path):
    model, run = _recording(tmp_path)
    still = Trajectory(run.t, np.column_stack([np.full(len(run.t), 0.2), run.q[:, 1]]),
                       run.tau, run.joint_names, source="still.csv")  # fmt: skip
    assert lift_loads(model, still) == {}  # held: a screw's friction may carry the weight
    revolute = build_robot_model(
        pin.buildModelFromXML(LIFT_URDF.replace('type="prismatic"', 'type="revolute"'))
    )
    assert lift_loads(revolute, run) == {}


def test_dry_friction_of_a_lift_that_goes_one_way_longer_is_no_missing_weight(tmp_path):
    """A SCARA's quill in MuJoCo with 20 N of dry friction, moving down a third more of the time
    than up: the plain mean force read 0.63 x the URDF's weight on correct data, and a warning
    blamed a counterbalance. The force at zero speed (friction taken out) reads the weight."""
    model, run = _recording(tmp_path, lift_friction_n=20.0, lopsided=True)
    lean = float(np.mean(np.sign(np.gradient(run.q[:, 0], run.t))))
    assert abs(lean) > 0.15  # the plain mean would be off by 20 N x that
    ((_, (measured, weight)),) = lift_loads(model, run).items()
    assert abs(measured - weight) < 0.02 * weight
    assert lift_load_findings(model, [run]) == []
