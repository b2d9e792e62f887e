"""physid.multibody model: URDF + YAML -> maximal coordinates (paper A §2.1, Appendix F)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from physid.errors import InputError
from physid.multibody.model.build import load_model
from physid.multibody.model.kinematics import np_box_plus
from physid.multibody.step.simulate import Stepper, state_from_joints

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "multibody"
FURUTA = EXAMPLES / "furuta.urdf"
SLIDER = """<?xml version="1.0"?>
<robot name="slider"><link name="base"/>
  <link name="cart"><inertial><mass value="1.0"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
  <joint name="rail" type="prismatic"><parent link="base"/><child link="cart"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>"""


def test_bodies_and_parameters_come_from_the_urdf():
    import pinocchio as pin

    model = load_model(FURUTA, EXAMPLES / "furuta.yaml")
    pm = pin.buildModelFromUrdf(str(FURUTA))
    data = pm.createData()
    pin.forwardKinematics(pm, data, pin.neutral(pm))
    assert [b.name for b in model.bodies] == ["hinge1", "hinge2"]
    for i, body in enumerate(model.bodies, start=1):
        np.testing.assert_allclose(body.r0, data.oMi[i].act(pm.inertias[i].lever), atol=1e-12)
        assert model.values[model.index(f"{body.name}.mass")] == pm.inertias[i].mass
        assert model.values[model.index(f"{body.name}.Iyy")] == pm.inertias[i].inertia[1, 1]
    # YAML values (examples/multibody/furuta.yaml) land in the named parameter vector
    assert model.values[model.index("hinge1.gain")] == pytest.approx(0.1)
    assert model.values[model.index("hinge2.compliance_linear")] == pytest.approx(1e-6)
    assert model.hinges[0].has_motor and not model.hinges[1].has_motor


def test_state_from_joints_satisfies_the_hinges_and_reads_back():
    model = load_model(FURUTA, {})
    stepper = Stepper(model, 1e-3)
    rng = np.random.default_rng(3)
    for _ in range(5):
        angles, rates = rng.uniform(-3, 3, 2), rng.normal(size=2)
        q, v = state_from_joints(model, angles, rates)
        g = stepper.terms(q, v, np.zeros(2))[-1]
        assert np.abs(g).max() < 1e-12
        got_angles, got_rates = stepper.joint_states(q[None], v[None])
        np.testing.assert_allclose(got_angles[0], angles, atol=1e-12)
        np.testing.assert_allclose(got_rates[0], rates, atol=1e-12)


def test_constraint_jacobian_matches_finite_differences():
    """``G`` of (F.1) is the on-manifold Jacobian: g(q [+] s v) = g(q) + s G v + O(s^2)."""
    model = load_model(FURUTA, {})
    stepper = Stepper(model, 1e-3)
    rng = np.random.default_rng(4)
    q, _ = state_from_joints(model, [0.4, -1.2])
    q = np_box_plus(q, 1e-3 * rng.normal(size=12))  # off the constraint manifold
    v = rng.normal(size=12)
    _, _, G, *_, g0 = stepper.terms(q, v, np.zeros(2))
    s = 1e-6
    g_plus = stepper.terms(np_box_plus(q, s * v), v, np.zeros(2))[-1]
    g_minus = stepper.terms(np_box_plus(q, -s * v), v, np.zeros(2))[-1]
    np.testing.assert_allclose((g_plus - g_minus) / (2 * s), G @ v, atol=1e-8)


def test_free_axis_row_is_the_nullspace_of_the_hinge_jacobian():
    """D (F.2-F.4) is orthogonal to G's rows: joint rotation does not violate the hinge."""
    model = load_model(FURUTA, {})
    stepper = Stepper(model, 1e-3)
    q, _ = state_from_joints(model, [0.7, 2.0])
    terms = stepper.terms(q, np.zeros(12), np.zeros(2))
    G, D = terms[2], terms[5]
    for rates in np.eye(2):
        _, v = state_from_joints(model, [0.7, 2.0], rates)
        np.testing.assert_allclose(G @ v, 0, atol=1e-12)
        np.testing.assert_allclose(D @ v, rates, atol=1e-12)


def test_bad_inputs_name_file_and_key(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_model(tmp_path / "missing.urdf", {})
    slider = tmp_path / "slider.urdf"
    slider.write_text(SLIDER)
    with pytest.raises(InputError, match="joint 'rail'.*only revolute"):
        load_model(slider, {})
    with pytest.raises(InputError, match="gravity"):
        load_model(FURUTA, {"gravity": [0, -9.81]})
    with pytest.raises(InputError, match="joints.hinge1.viscous"):
        load_model(FURUTA, {"joints": {"hinge1": {"viscous": "a lot"}}})
    with pytest.raises(InputError, match="hinge9"):
        load_model(FURUTA, {"joints": {"hinge9": {"viscous": 0.1}}})
    bad = tmp_path / "bad.yaml"
    bad.write_text("defaults: {damping: [1, 2]}\n")
    with pytest.raises(InputError, match="defaults.damping"):
        load_model(FURUTA, bad)


@pytest.mark.filterwarnings("error")  # the tilt axes once divided by |g| = 0 (a stray warning)
def test_a_weightless_chain_conserves_its_spin():
    model = load_model(FURUTA, {"gravity": [0, 0, 0]})
    stepper = Stepper(model, 1e-3)
    q, v = state_from_joints(model, [0.3, 0.2], [1.0, 0.0])
    for _ in range(50):
        q, v, ok, _ = stepper.step(q, v, np.zeros(2))
    angles, rates = stepper.joint_states(q[None], v[None])
    assert ok and np.all(np.isfinite(angles))
    assert angles[0, 0] == pytest.approx(0.35, abs=0.01)  # no gravity: the arm coasts at 1 rad/s
