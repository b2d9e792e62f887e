"""The Coulomb friction's tanh width chosen per node from the recorded velocities
(:func:`physid.oe.data.joints.coulomb_widths`): around a sample pair across which a joint's
velocity jumps through zero, the band is as wide as half that jump, so the friction cannot flip
inside one node, where the linearly implicit step's model of it is wrong; everywhere else it
keeps the default, so slow motion keeps its full friction."""

from __future__ import annotations

import json

import mujoco
import numpy as np
import pytest

from physid.api.oe_run import oe_estimate
from physid.files.io import table_csv_text
from physid.oe.data.joints import coulomb_widths
from physid.oe.model.dynamics import COULOMB_SPEED

# a two-link arm in a vertical plane; physid reads it without joint terms, the config gives them
ARM = """<mujoco model="arm2">
  <option timestep="0.001" integrator="implicitfast" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="l1" pos="0 0 0.2">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <inertial pos="0.1 0 0" mass="1.0" diaginertia="0.004 0.01 0.01"/>
      <body name="l2" pos="0.2 0 0">
        <joint name="j2" type="hinge" axis="0 1 0"/>
        <inertial pos="0.08 0 0" mass="0.4" diaginertia="0.0005 0.002 0.002"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
ARMATURE, VISCOUS, COULOMB = (0.01, 0.005), (0.1, 0.05), (0.3, 0.2)
JOINTS = (
    f"joints: {{armature: {list(ARMATURE)}, damping: {list(VISCOUS)}, friction: {list(COULOMB)}"
)


def _simulate(seconds: float = 2.0, dt: float = 0.005) -> dict:
    """Rows every dt of MuJoCo at 1 ms: square-wave torques about a gravity feed-forward and a
    stiff spring, so each joint reverses at 60-80 rad/s^2 (0.3-0.4 rad/s per row); the Coulomb
    friction near a sign function (tanh over 5 mm/s)."""
    model = mujoco.MjModel.from_xml_string(ARM)
    model.dof_armature[:] = ARMATURE
    model.dof_damping[:] = VISCOUS
    data = mujoco.MjData(model)
    rows = round(seconds / dt) + 1
    q, v, tau = np.zeros((rows, 2)), np.zeros((rows, 2)), np.zeros((rows, 2))
    for k in range(rows):
        q[k], v[k] = data.qpos, data.qvel
        square = np.sign(np.sin(2 * np.pi * k * dt / 0.5 * np.array([1.0, 1.7]) + 0.3))
        tau[k] = data.qfrc_bias + np.array([1.5, 0.6]) * square - 20.0 * data.qpos
        for _ in range(round(dt / model.opt.timestep)):
            data.qfrc_applied[:] = tau[k] - np.array(COULOMB) * np.tanh(data.qvel / 0.005)
            mujoco.mj_step(model, data)
    rng = np.random.default_rng(1)
    cols = {"t": np.arange(rows) * dt}
    for i, name in enumerate(("j1", "j2")):
        cols[f"q_{name}"] = q[:, i] + 1e-4 * rng.standard_normal(rows)
        cols[f"dq_{name}"] = v[:, i] + 1e-2 * rng.standard_normal(rows)
        cols[f"tau_{name}"] = np.r_[tau[:-1, i], 0.0]
    return cols


def test_widths_are_half_the_jump_through_the_band_around_it():
    """Closed form: a velocity that jumps 0.3 -> -0.5 rad/s between samples 999 and 1000 gets
    0.4 on nodes 997-1001 (that node and 2 either side) and the default elsewhere; a start from
    rest, 0.02 -> 0.62, gets 0.3 there (the friction saturates within the node); one that only
    crosses zero slowly, white noise of 0.03 rad/s (2,000 samples), or a jump far from zero
    (2.3 -> 1.5) keep the default everywhere."""
    rng = np.random.default_rng(0)
    slow = np.linspace(-1.0, 1.0, 2000)  # 1 mrad/s per sample across zero
    fast = np.r_[np.full(1000, 0.3), np.full(1000, -0.5)]
    start = np.r_[np.full(1000, 0.02), np.full(1000, 0.62)]
    noise = 0.03 * rng.standard_normal(2000)
    widths = coulomb_widths(np.c_[slow, fast, noise, fast + 2.0, start])
    assert widths.shape == (2000, 5)
    for j, wide in ((1, 0.4), (4, 0.3)):
        expected = np.full(2000, COULOMB_SPEED)
        expected[997:1002] = wide
        assert widths[:, j] == pytest.approx(expected)
    for j in (0, 2, 3):
        assert widths[:, j] == pytest.approx(np.full(2000, COULOMB_SPEED))


def test_widths_near_a_contact_change_are_each_joints_widest():
    """With contact flags, the 2 nodes either side of a flag change (a foot down from sample
    501 on) take each joint's widest band of the record: the velocities above, 0.4 and 0.3
    on nodes 498-502 as well; joints that never widen keep the default there."""
    fast = np.r_[np.full(1000, 0.3), np.full(1000, -0.5)]
    start = np.r_[np.full(1000, 0.02), np.full(1000, 0.62)]
    still = np.zeros(2000)
    flags = np.zeros((2000, 2), dtype=bool)
    flags[501:, 0] = True
    widths = coulomb_widths(np.c_[fast, start, still], flags=flags)
    for j, wide in ((0, 0.4), (1, 0.3), (2, COULOMB_SPEED)):
        expected = np.full(2000, COULOMB_SPEED)
        expected[997:1002] = wide
        expected[498:503] = wide
        assert widths[:, j] == pytest.approx(expected)


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    root = tmp_path_factory.mktemp("arm2")
    (root / "arm.xml").write_text(ARM)
    (root / "run.csv").write_text(table_csv_text(_simulate()))
    return root


def _solve(root, config: str):  # noqa: ANN001, ANN202
    (root / "oe.yaml").write_text(f"noise: {{encoder: 1.0e-4, joint_velocity: 1.0e-2}}\n{config}")
    return oe_estimate(
        root / "arm.xml", root / "run.csv", "j2", config=root / "oe.yaml", max_iterations=15
    )


def test_chosen_widths_let_a_reversing_arm_converge(arm, tmp_path):
    """With the widths chosen from the data (widest j1 0.13, j2 0.42 rad/s, around each
    reversal only) the solve converges within 15 iterations and the link's mass is within 2 %
    of MuJoCo's 0.4 kg; with one width of 0.1 rad/s everywhere the friction flips inside a
    node at every reversal and 15 iterations do not reach convergence (it takes 28)."""
    chosen = _solve(arm, JOINTS + "}\n")
    assert str(chosen.status) == "ok", chosen.message
    assert chosen.raw.body_summary()["j2"]["mass"] == pytest.approx(0.4, rel=0.02)
    chosen.save(tmp_path / "out")
    used = json.loads((tmp_path / "out" / "result.json").read_text())["inputs"]["joints"]
    assert used["coulomb_speed"] == pytest.approx(COULOMB_SPEED)
    assert used["coulomb_speed_widest"] == pytest.approx([0.132, 0.422], abs=2e-3)
    (said,) = [f for f in chosen.findings if f.code == "OE113"]
    assert said.names == ("j1", "j2") and said.numbers["widest_rad_s"] == pytest.approx(
        0.422, abs=2e-3
    )
    # the arm passes through rest several times a second, 5 nodes widened each: not all of them
    assert 0.05 < said.numbers["widened_fraction"] < 0.4
    narrow = _solve(arm, JOINTS + f", coulomb_speed: {COULOMB_SPEED}}}\n")
    assert str(narrow.status) == "not_converged"
