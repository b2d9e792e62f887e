"""Model layout, transmissions and the observation matrix against independent truths."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import KUKA, TX40, require_dataset

from physid.errors import InputError
from physid.robot.model import Transmission, build_robot_model, load_urdf
from physid.robot.regressor import (
    base_parameters,
    data_rank_deficiency,
    joint_term_regressor,
    observation_matrix,
    predict_torques,
)
from physid.sim.arm import arm6_model, arm6_urdf_path, true_parameters


def tx40_transmission() -> Transmission:
    ratio = np.diag([32.0, 32.0, 45.0, -48.0, 45.0, 32.0])
    ratio[5, 4] = 32.0
    return Transmission(
        ("m1", "m2", "m3", "m4", "m5", "m6"), ratio, np.array([0, -np.pi / 2, np.pi / 2, 0, 0, 0])
    )


def test_layout_names_and_prior_match_pinocchio():
    model = arm6_model()
    names = model.layout.names
    assert names[:10] == tuple(
        f"joint_1.{p}" for p in ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")
    )
    assert "joint_3.fv" in names and "joint_6.Ia" in names and len(names) == 6 * 10 + 6 * 4
    prior = model.prior_parameters()
    inertia = model.pin_model.inertias[model.pin_model.getJointId("joint_2")]
    np.testing.assert_allclose(
        prior[model.layout.body_slice("joint_2")], inertia.toDynamicParameters()
    )


@pytest.mark.parametrize("deadband", [None, 0.5])
def test_regressor_times_parameters_equals_rnea_plus_friction(deadband):
    rng = np.random.default_rng(0)
    model = arm6_model(coulomb_deadband=deadband)
    theta = true_parameters(model, rng)
    pin_model = model.with_inertial_parameters(theta)
    data = pin_model.createData()
    q, dq, ddq = (rng.standard_normal((20, 6)) for _ in range(3))
    predicted = observation_matrix(model, q, dq, ddq) @ theta
    # The RNEA-based prediction used for validation is the same map.
    np.testing.assert_allclose(
        predict_torques(model, theta, q, dq, ddq), predicted, rtol=1e-10, atol=1e-10
    )
    layout = model.layout
    for k in range(20):
        tau = pin.rnea(pin_model, data, q[k], dq[k], ddq[k])
        for j, joint in enumerate(model.joint_names):
            fv, fc, offset, ia = (
                theta[layout.index(f"{joint}.{t}")] for t in ("fv", "fc", "offset", "Ia")
            )
            sign = np.sign(dq[k, j]) if abs(dq[k, j]) >= (deadband or 0.0) else 0.0
            tau[j] += fv * dq[k, j] + fc * sign + offset + ia * ddq[k, j]
        np.testing.assert_allclose(predicted[k], tau, rtol=1e-10, atol=1e-10)


def test_prediction_is_linear_for_any_parameters_even_massless_bodies():
    """Least-squares values (negative masses, a base solution's zero masses) are predicted as
    ``W theta`` too: Pinocchio's com needs a positive mass, predict_torques shifts around it."""
    rng = np.random.default_rng(5)
    model = arm6_model()
    theta = rng.standard_normal(model.layout.size)
    theta[model.layout.mass_indices[:2]] = [0.0, -0.7]
    q, dq, ddq = (rng.standard_normal((30, 6)) for _ in range(3))
    expected = observation_matrix(model, q, dq, ddq) @ theta
    predicted = predict_torques(model, theta, q, dq, ddq)
    np.testing.assert_allclose(predicted, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_base_parameters_reproduce_the_full_model_on_fresh_states():
    model = arm6_model()
    base = base_parameters(model)
    rng = np.random.default_rng(1)
    theta = rng.standard_normal(model.layout.size)
    q, dq, ddq = (rng.standard_normal((50, 6)) for _ in range(3))
    W = observation_matrix(model, q, dq, ddq)
    np.testing.assert_allclose(base.columns(W) @ base.from_standard(theta), W @ theta, atol=1e-9)
    np.testing.assert_allclose(base.projection @ theta, base.from_standard(theta), atol=1e-12)
    # A first joint about the vertical: only its Izz (plus regrouped terms) survives.
    assert "joint_1.Izz (R)" in base.short_names and "joint_1.Ixx" not in base.short_names


def test_base_parameter_counts_match_published_values():
    # Dataset READMEs: KUKA LWR4+ with fv, fc, offset has 64 base columns; the TX40 with
    # armature and the coupled wrist 61 (paper C counts 60 with its SYMORO+ friction model).
    require_dataset(TX40)
    model = build_robot_model(
        load_urdf(TX40 / "tx40_mdh_modified.urdf"), transmission=tx40_transmission()
    )
    assert base_parameters(model).size == 61
    require_dataset(KUKA)
    kuka = build_robot_model(load_urdf(KUKA / "kuka_lwr4.urdf"), joint_terms=("fv", "fc", "offset"))
    assert base_parameters(kuka).size == 64


def test_transmission_round_trip_and_power_balance():
    transmission = tx40_transmission()
    rng = np.random.default_rng(2)
    q_joint = rng.standard_normal((10, 6))
    np.testing.assert_allclose(
        transmission.joint_positions(transmission.motor_positions(q_joint)), q_joint
    )
    dq_joint, tau_motor = rng.standard_normal((10, 6)), rng.standard_normal((10, 6))
    dq_motor = dq_joint @ transmission.ratio.T
    # Virtual power: tau_joint . dq_joint == tau_motor . dq_motor.
    np.testing.assert_allclose(
        np.sum(transmission.joint_torques(tau_motor) * dq_joint, axis=1),
        np.sum(tau_motor * dq_motor, axis=1),
    )
    assert transmission.coupled_motors() == (5,)


def test_coupled_wrist_columns_follow_the_tx40_formula():
    # TX40 README: tau5 += Iam6 ddq6 + fvm6 dq6 + fcm6 sign(dq5 + dq6), tau6 += Iam6 ddq5 + ...
    model = build_robot_model(load_urdf(arm6_urdf_path()), transmission=tx40_transmission())
    rng = np.random.default_rng(3)
    dq, ddq = rng.standard_normal((30, 6)), rng.standard_normal((30, 6))
    columns = joint_term_regressor(model, dq, ddq)
    names = model.layout.names[model.layout.n_inertial :]
    iam, fvm, fcm = (columns[:, :, names.index(f"m6.{t}")] for t in ("Iam", "fvm", "fcm"))
    np.testing.assert_allclose(iam[:, 4], ddq[:, 5])
    np.testing.assert_allclose(iam[:, 5], ddq[:, 4])
    np.testing.assert_allclose(fvm[:, 4], dq[:, 5])
    np.testing.assert_allclose(fvm[:, 5], dq[:, 4])
    np.testing.assert_allclose(fcm[:, 4], np.sign(dq[:, 4] + dq[:, 5]))
    np.testing.assert_allclose(fcm[:, 5], np.sign(dq[:, 4] + dq[:, 5]))
    assert np.all(iam[:, :4] == 0) and np.all(fcm[:, :4] == 0)


def test_a_joint_that_never_moves_is_reported_by_the_rank_test():
    model = arm6_model()
    base = base_parameters(model)
    rng = np.random.default_rng(4)
    q, dq, ddq = (rng.standard_normal((400, 6)) for _ in range(3))
    q[:, 5], dq[:, 5], ddq[:, 5] = 0.3, 0.0, 0.0
    W = base.columns(observation_matrix(model, q, dq, ddq)).reshape(-1, base.size)
    names = {base.short_names[i] for i in data_rank_deficiency(W)}
    assert {"joint_6.fv", "joint_6.fc", "joint_6.Ia"} <= names
    assert "joint_6.offset" not in names  # a constant torque is still seen at standstill
    assert not any(n.startswith(("joint_1", "joint_2", "joint_3")) for n in names)


def test_unsupported_joints_and_bad_transmissions_are_rejected():
    free_flyer = load_urdf(arm6_urdf_path(), floating_base=True)
    with pytest.raises(InputError, match="root_joint.*fixed-base"):
        build_robot_model(free_flyer)
    with pytest.raises(InputError, match="invertible"):
        Transmission(("a", "b"), np.zeros((2, 2)), np.zeros(2))
    with pytest.raises(InputError, match="URDF file not found"):
        load_urdf("no/such/robot.urdf")
