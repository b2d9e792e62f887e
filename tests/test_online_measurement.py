"""physid.online.measurement and the EKF's measurement model (paper E eqs. 7, 14, 15, 19-21)
against independent truths: Pinocchio's RNEA of the full model with the true inertias, virtual
power of contact wrenches, physid.body.inertia's log-Cholesky map and finite differences."""

import numpy as np
import pinocchio as pin
import pytest

from physid.body.inertia import (
    log_cholesky_from_pi,
    log_cholesky_jacobian,
    log_cholesky_pi_and_jacobian,
    pi_from_log_cholesky,
    random_consistent_pi,
)
from physid.errors import InputError
from physid.online import InertialEKF
from physid.online.measurement import SplitMeasurement
from physid.sim.legged import CONTACT_FRAMES, TORSO_JOINT, load_humanoid
from physid.sim.payload_arm import PAYLOAD_JOINT, load_arm


@pytest.fixture
def rng():
    return np.random.default_rng(20250301)


def random_state(model, rng):
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    return q, rng.normal(size=model.nv), rng.normal(size=model.nv)


def with_inertias(model, bodies, pis):
    truth = model.copy()
    for body, pi in zip(bodies, pis, strict=True):
        truth.inertias[truth.getJointId(body)] = pin.Inertia.FromDynamicParameters(pi)
    return truth


@pytest.mark.parametrize(
    "load, bodies",
    [
        (load_arm, ["arm_joint_3", PAYLOAD_JOINT]),
        (load_humanoid, [TORSO_JOINT, "root_joint", "left_knee"]),
    ],
)
def test_split_equals_rnea_of_full_model_with_true_inertias(load, bodies, rng):
    """Eq. 7: Y_est pi_true + tau_nom(nominal inertias zeroed) = RNEA(true model)."""
    nominal = load()
    meas = SplitMeasurement(nominal, bodies)
    for _ in range(5):
        pis = random_consistent_pi(rng, len(bodies))
        truth = with_inertias(nominal, bodies, pis)
        q, v, a = random_state(nominal, rng)
        expected = pin.rnea(truth, truth.createData(), q, v, a)
        got = meas.regressor(q, v, a) @ pis.ravel() + meas.tau_nominal(q, v, a)
        assert np.max(np.abs(got - expected)) <= 1e-10 * max(1.0, np.abs(expected).max())


def test_dropped_rows_carry_no_information(rng):
    """Rows outside SplitMeasurement.rows have an identically zero Y_est, so keeping only the
    rows of the supporting joints leaves the Kalman update unchanged."""
    model = load_humanoid()
    meas = SplitMeasurement(model, [TORSO_JOINT])
    assert meas.n_rows == 8  # six free-flyer rows, waist yaw and waist pitch
    others = np.setdiff1d(np.arange(model.nv), meas.rows)
    for _ in range(3):
        Y = meas.regressor(*random_state(model, rng))
        assert np.all(Y[others] == 0.0)
        assert np.abs(Y[meas.rows]).max() > 1.0


def test_evaluate_is_eq_14_with_contacts(rng):
    """delta_tau = S^T tau - tau_nom + sum J_c^T lambda_c (eq. 14), rows restricted."""
    model = load_humanoid()
    meas = SplitMeasurement(model, [TORSO_JOINT], CONTACT_FRAMES)
    q, v, a = random_state(model, rng)
    tau = rng.normal(size=model.nv - 6)
    wrenches = rng.normal(size=(2, 6)) * [50, 50, 300, 10, 10, 2]
    delta, Y = meas.evaluate(q, v, a, tau, wrenches)
    full = np.r_[np.zeros(6), tau] - meas.tau_nominal(q, v, a) + meas.contact_torque(q, wrenches)
    np.testing.assert_allclose(delta, full[meas.rows], rtol=0, atol=1e-9)
    np.testing.assert_allclose(Y, meas.regressor(q, v, a)[meas.rows], rtol=0, atol=1e-12)


def test_contact_torque_by_virtual_power(rng):
    """J_c^T lambda . v = lambda . (frame twist, LOCAL_WORLD_ALIGNED) for any v: the wrench
    convention documented (force at the frame origin, world axes) checked without Jacobians."""
    model = load_humanoid()
    meas = SplitMeasurement(model, [TORSO_JOINT], CONTACT_FRAMES)
    data = model.createData()
    for _ in range(3):
        q, v, _ = random_state(model, rng)
        wrenches = rng.normal(size=(2, 6))
        pin.forwardKinematics(model, data, q, v)
        power = 0.0
        for frame, wrench in zip(CONTACT_FRAMES, wrenches, strict=True):
            twist = pin.getFrameVelocity(
                model, data, model.getFrameId(frame), pin.LOCAL_WORLD_ALIGNED
            )
            power += wrench[:3] @ twist.linear + wrench[3:] @ twist.angular
        assert meas.contact_torque(q, wrenches) @ v == pytest.approx(power, rel=1e-10)


def test_log_cholesky_hot_path_is_physid_inertia_chart(rng):
    """The Pinocchio-backed pi and G used per update equal physid.body.inertia's (J = U U^T)."""
    theta = np.concatenate(
        [log_cholesky_from_pi(random_consistent_pi(rng, 20)), rng.normal(size=(20, 10))]
    )
    pi, G = log_cholesky_pi_and_jacobian(theta)
    np.testing.assert_allclose(pi, pi_from_log_cholesky(theta), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(G, log_cholesky_jacobian(theta), rtol=1e-12, atol=1e-13)


def test_measurement_jacobian_matches_finite_differences(rng):
    """H = Y_est G (eq. 21) against central differences of h(theta) = Y_est g(theta) (eq. 19),
    g from physid.body.inertia, for two bodies (block-diagonal G)."""
    model = load_arm()
    bodies = ["arm_joint_5", PAYLOAD_JOINT]
    ekf = InertialEKF(model, bodies)
    q, v, a = random_state(model, rng)
    Y = ekf.measurement.regressor(q, v, a)
    theta = log_cholesky_from_pi(random_consistent_pi(rng, 2)).ravel()
    ekf._pi, ekf._G = log_cholesky_pi_and_jacobian(theta.reshape(2, 10))
    H = ekf._measurement_jacobian(Y)

    def h(x):
        return Y @ pi_from_log_cholesky(x.reshape(2, 10)).ravel()

    step = 1e-6
    fd = np.column_stack(
        [(h(theta + step * e) - h(theta - step * e)) / (2 * step) for e in np.eye(20)]
    )
    assert np.max(np.abs(H - fd)) <= 1e-7 * max(1.0, np.abs(fd).max())


def test_bad_configuration_is_an_input_error():
    model = load_arm()
    with pytest.raises(InputError, match="'wrist_joint' is not a joint of the model"):
        SplitMeasurement(model, ["wrist_joint"])
    with pytest.raises(InputError, match="contact frame 'hand'"):
        SplitMeasurement(model, [PAYLOAD_JOINT], ["hand"])
    with pytest.raises(InputError, match="at least one body"):
        SplitMeasurement(model, [])
    broken = model.copy()  # principal moments (0.1, 0.1, 0.5) violate I1 + I2 > I3
    broken.inertias[3] = pin.Inertia(2.0, np.zeros(3), np.diag([0.1, 0.1, 0.5]))
    with pytest.raises(InputError, match="arm_joint_3.*triangle inequality"):
        InertialEKF(broken, [PAYLOAD_JOINT])
    negative = model.copy()
    negative.inertias[2] = pin.Inertia.FromDynamicParameters(
        -negative.inertias[2].toDynamicParameters()
    )
    with pytest.raises(InputError, match="arm_joint_2.*mass"):
        InertialEKF(negative, [PAYLOAD_JOINT])
    massless = model.copy()
    massless.inertias[7] = pin.Inertia.Zero()
    with pytest.raises(InputError, match="no inertia in the nominal model"):
        InertialEKF(massless, [PAYLOAD_JOINT])
