"""Issue 29 item 1: armature, viscous and smoothed Coulomb joint friction in the dynamics of
``physid oe`` (free, contact and impulse phases of a floating-base quadruped) against central
finite differences, and against their defining equations (Pinocchio's RNEA with the armature,
plus the friction torque)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from oe_checks import state_jacobian_by_central_differences

from physid.errors import InputError
from physid.oe.model import state
from physid.oe.model.contact import (
    ContactModels,
    contact_acceleration,
    contact_step,
    contact_step_derivatives,
)
from physid.oe.model.dynamics import JointTerms, ParametrizedModel
from physid.oe.model.joint_estimate import KINDS, JointEstimate
from physid.oe.solving.build import default_actuation
from physid.sim.oe_robots import GO1, load_model

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
EPS = 1e-6


@pytest.fixture(scope="module")
def go1() -> pin.Model:
    return load_model(GO1, floating=True)


def _terms(nv: int, speed: float = 0.3) -> JointTerms:
    legs = np.r_[np.zeros(6), np.ones(nv - 6)]
    return JointTerms(0.01 * legs, 2.0 * legs, 0.2 * legs, speed)


def _setup(model, seed, speed=0.3, estimate=None):
    rng = np.random.default_rng(seed)
    dyn = ParametrizedModel(
        model, ["root_joint"], "exp_eig", default_actuation(model), 0.01, _terms(model.nv, speed),
        estimate,
    )  # fmt: skip
    theta = dyn.nominal_theta() + 0.05 * rng.standard_normal(dyn.n_theta)
    dyn.set_theta(theta)
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    # joint speeds around the Coulomb smoothing speed: the tanh's curved part
    v = np.r_[rng.standard_normal(6), speed * rng.standard_normal(model.nv - 6)]
    return dyn, theta, np.r_[q, v], rng.standard_normal(model.nv - 6)


def _fd_x(fun, model, x, eps=EPS):  # noqa: ANN001, ANN202
    return state_jacobian_by_central_differences(fun, model, x, eps)


def _fd_theta(fun, dyn, theta, eps=1e-6):
    model = dyn.model
    dyn.set_theta(theta)
    y0 = fun()
    cols = []
    for i in range(theta.size):
        e = np.zeros(theta.size)
        e[i] = eps
        dyn.set_theta(dyn.retract(theta, e))
        plus = state.difference(model, y0, fun())
        dyn.set_theta(dyn.retract(theta, -e))
        minus = state.difference(model, y0, fun())
        cols.append((plus - minus) / (2 * eps))
    dyn.set_theta(theta)
    return np.column_stack(cols)


@pytest.mark.parametrize("active", [(), ("FL_foot",), FEET])
def test_joint_terms_step_derivatives_match_finite_differences(go1, active):
    dyn, theta, x, u = _setup(go1, seed=len(active))
    contacts = ContactModels(dyn.model, FEET)
    f, Fx, Ft = contact_step_derivatives(dyn, contacts, active, x, u)
    np.testing.assert_allclose(f[go1.nq :], contact_step(dyn, contacts, active, x, u)[go1.nq :])
    Fx_fd = _fd_x(lambda xx: contact_step(dyn, contacts, active, xx, u), go1, x)
    np.testing.assert_allclose(Fx, Fx_fd, atol=1e-6 * max(1.0, np.abs(Fx).max()))
    Ft_fd = _fd_theta(lambda: contact_step(dyn, contacts, active, x, u), dyn, theta)
    np.testing.assert_allclose(Ft, Ft_fd, rtol=1e-4, atol=1e-6 * np.abs(Ft).max())


def test_a_node_uses_its_own_coulomb_widths(go1):
    """``coulomb_speed_nodes``: after ``use_node(k)`` the step, its state and theta Jacobians
    (the estimated Coulomb columns included) are those of a model whose one width per joint
    is row k's; at node 0 they differ (else the row would not have been used)."""
    rng = np.random.default_rng(3)
    nv = go1.nv
    rows = np.c_[np.full((3, 6), 0.1), 0.05 + rng.uniform(size=(3, nv - 6))]
    estimate = JointEstimate(KINDS, tuple(range(6, nv)), 1.0)
    _, theta, x, u = _setup(go1, seed=7, estimate=estimate)
    t = _terms(nv)

    def model(speed, nodes=None):  # noqa: ANN001, ANN202
        terms = JointTerms(t.armature, t.viscous, t.coulomb, speed, nodes)
        dyn = ParametrizedModel(
            go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.01, terms, estimate
        )
        dyn.set_theta(theta)
        return dyn

    per_node, one = model(0.3, rows), model(rows[2])
    want = contact_step_derivatives(one, ContactModels(one.model, FEET), FEET[:2], x, u)
    same = []
    for node in (2, 0):
        per_node.use_node(node)
        got = contact_step_derivatives(
            per_node, ContactModels(per_node.model, FEET), FEET[:2], x, u
        )
        same.append(
            [np.allclose(g, w, rtol=1e-10, atol=1e-12) for g, w in zip(got, want, strict=True)]
        )
    assert same == [[True, True, True], [False, False, False]]


def test_joint_terms_change_the_derivatives(go1):
    """The friction's share of da/dv is not negligible here (else the test above proves
    nothing about it): at least 2 on the joint diagonal of df/dv / dt."""
    dyn, _, x, u = _setup(go1, seed=5)
    plain = ParametrizedModel(go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.01)
    plain.set_theta(dyn.nominal_theta())
    plain.model.armature[:] = dyn.model.armature
    _, Fx, _ = dyn.free_step_derivatives(x, u)
    _, Fx0, _ = plain.free_step_derivatives(x, u)
    nv = go1.nv
    diff = np.abs(np.diag(Fx - Fx0)[nv + 6 :]) / dyn.dt
    assert diff.min() > 2.0


@pytest.mark.parametrize("active", [(), FEET[:2]])
def test_joint_terms_satisfy_the_equations_of_motion(go1, active):
    """``(M + dt D_eff(v)) a + h = B u - D v - F_c tanh(v / v_c) + Jc^T lambda`` (the linearly
    implicit friction step, ``D_eff = D + F_c / v_c sech^2(v / v_c)``) with M including the
    armature (Pinocchio's RNEA of a model whose armature is set) and the contact feet not
    accelerating."""
    dyn, _, x, u = _setup(go1, seed=11)
    contacts = ContactModels(dyn.model, FEET)
    nq = go1.nq
    q, v = x[:nq], x[nq:]
    a = contact_acceleration(dyn, contacts, active, q, v, dyn.tau(x, u))
    true = go1.copy()
    true.inertias[1] = dyn.model.inertias[1]
    t = dyn.joints
    sech2 = 1.0 - np.tanh(v / t.coulomb_speed) ** 2
    true.armature[:] = t.armature + dyn.dt * (t.viscous + t.coulomb / t.coulomb_speed * sech2)
    data = true.createData()
    lhs = pin.rnea(true, data, q, v, a)
    rhs = default_actuation(go1) @ u - t.viscous * v - t.coulomb * np.tanh(v / t.coulomb_speed)
    if active:
        pin.computeJointJacobians(true, data, q)
        pin.framesForwardKinematics(true, data, q)
        J = np.vstack(
            [
                pin.getFrameJacobian(true, data, true.getFrameId(f), pin.LOCAL_WORLD_ALIGNED)[:3]
                for f in active
            ]
        )
        lam, *_ = np.linalg.lstsq(J.T, lhs - rhs, rcond=None)
        rhs = rhs + J.T @ lam
        # the contact points do not accelerate (eq. 3): J a + dJ v = 0
        pin.forwardKinematics(true, data, q, v, a)
        pin.updateFramePlacements(true, data)
        for f in active:
            acc = pin.getFrameClassicalAcceleration(
                true, data, true.getFrameId(f), pin.LOCAL_WORLD_ALIGNED
            ).linear
            np.testing.assert_allclose(acc, 0.0, atol=1e-9)
    np.testing.assert_allclose(lhs, rhs, atol=1e-9 * max(1.0, np.abs(lhs).max()))


def test_joint_terms_are_checked(go1):
    nv = go1.nv
    with pytest.raises(InputError, match="viscous"):
        JointTerms(np.zeros(nv), -np.ones(nv), np.zeros(nv))
    with pytest.raises(InputError, match="coulomb_speed"):
        JointTerms(np.zeros(nv), np.zeros(nv), np.zeros(nv), 0.0)
    with pytest.raises(InputError, match="nv"):
        ParametrizedModel(
            go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.01, JointTerms.none(3)
        )


def test_impulse_ignores_the_implicit_friction(go1):
    """The touch-down reset map after a friction step uses the plain armature (no friction
    acts during an instantaneous impact): it equals the reset map of a model with the armature
    alone."""
    from physid.oe.model.contact import impulse

    dyn, _, x, u = _setup(go1, seed=3)
    contacts = ContactModels(dyn.model, FEET)
    contact_step(dyn, contacts, FEET[:2], x, u)  # leaves the implicit friction in the model
    got = impulse(dyn, contacts, FEET, x)
    legs = np.r_[np.zeros(6), 0.01 * np.ones(go1.nv - 6)]
    plain = ParametrizedModel(
        go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.01,
        JointTerms(legs, 0 * legs, 0 * legs),
    )  # fmt: skip
    plain.set_theta(dyn.nominal_theta())
    want = impulse(plain, ContactModels(plain.model, FEET), FEET, x)
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_joints_config_reads_numbers_lists_and_the_model(go1, tmp_path):
    """oe.yaml ``joints``: 'model' takes the URDF's <dynamics> (Go1: damping 0.01, friction
    0.2), a number applies to every joint, a list is per joint; the free-flyer gets none."""
    from physid.oe.data.config import read_joint_terms

    path = tmp_path / "oe.yaml"
    per_joint = ", ".join(str(0.1 * i) for i in range(12))
    path.write_text(
        "joints:\n  armature: 0.01\n  damping: model\n  friction: model\n  coulomb_speed: 0.05\n"
    )
    terms = read_joint_terms(path, go1)
    np.testing.assert_array_equal(terms.armature, np.r_[np.zeros(6), np.full(12, 0.01)])
    np.testing.assert_array_equal(terms.viscous, np.r_[np.zeros(6), np.full(12, 0.01)])
    np.testing.assert_array_equal(terms.coulomb, np.r_[np.zeros(6), np.full(12, 0.2)])
    assert terms.coulomb_speed == 0.05
    path.write_text(f"joints:\n  damping: [{per_joint}]\n")
    terms = read_joint_terms(path, go1)
    np.testing.assert_allclose(terms.viscous[6:], 0.1 * np.arange(12))
    assert not terms.coulomb.any() and not terms.armature.any()
    path.write_text("joints:\n  damping: [1, 2]\n")
    with pytest.raises(InputError, match="12"):
        read_joint_terms(path, go1)
    path.write_text("noise:\n  encoder: 0.001\n")
    assert read_joint_terms(path, go1) is None


def test_joint_terms_a_robot_file_declares_are_read(go1):
    """The Go1 URDF declares damping 0.01 and friction 0.2 at every joint (none on the
    free-flyer): the largest of each kind, by kind."""
    from physid.oe.data.joints import declared_joint_terms

    assert declared_joint_terms(go1) == {"viscous": 0.01, "coulomb": 0.2}
    plain = go1.copy()
    plain.damping[:] = plain.friction[:] = plain.armature[:] = 0.0
    assert declared_joint_terms(plain) == {}


def test_without_a_joints_config_the_joint_terms_are_estimated(go1):
    """physid.oe.data.joints.choose_joint_terms without a config 'joints': an MJCF's declared
    terms are used as they are; a URDF's are estimated, each declared value the start and
    centre of a prior of std 1 in log, an undeclared one (the armature) from START under the
    wide prior; a floating base whose config gives joints without any term is cautioned."""
    from physid.oe.data.config import model_joint_terms
    from physid.oe.data.joints import choose_joint_terms
    from physid.oe.model.joint_estimate import KINDS, START, UNDECLARED_LOG_STD

    mjcf = choose_joint_terms(go1, "go1.xml", True, True, None, None)
    np.testing.assert_allclose(mjcf.joints.coulomb[6:], 0.2)
    assert mjcf.estimate is None and [f.code for f in mjcf.findings] == ["OE110"]
    urdf = choose_joint_terms(go1, "go1.urdf", False, True, None, None)
    assert urdf.estimate.kinds == KINDS and urdf.estimate.dofs == tuple(range(6, 18))
    s0, std = urdf.estimate.start(urdf.joints)
    np.testing.assert_allclose(np.exp(s0), np.repeat([START["armature"], 0.01, 0.2], 12))
    np.testing.assert_allclose(std, np.repeat([UNDECLARED_LOG_STD, 1.0, 1.0], 12))
    (finding,) = urdf.findings
    assert finding.code == "OE111" and finding.numbers["coulomb_declared_joints"] == 12
    assert finding.numbers["armature_declared_joints"] == 0
    plain = go1.copy()
    plain.damping[:] = plain.friction[:] = plain.armature[:] = 0.0
    free = choose_joint_terms(plain, "arm.urdf", False, False, None, None)
    assert free.estimate is not None and free.findings[0].code == "OE111"
    none = choose_joint_terms(plain, "go1.urdf", False, True, model_joint_terms(plain), None)
    assert none.estimate is None and [f.code for f in none.findings] == ["OE112"]
    fixed = choose_joint_terms(plain, "arm.urdf", False, False, model_joint_terms(plain), None)
    assert fixed.estimate is None and fixed.findings == ()


def test_an_mjcf_robot_brings_its_own_joint_terms(tmp_path):
    """physid.oe.data.config.model_joint_terms on an MJCF (the Menagerie-style test arm of
    test_mjcf.py: defaults damping 0.8 / armature 0.03 / frictionloss 0.2, the wrist class 0.15 /
    0.006 / 0.05): what MuJoCo compiled, joint by joint."""
    from test_mjcf import ARM

    from physid.oe.data.config import model_joint_terms
    from physid.oe.model.dynamics import COULOMB_SPEED
    from physid.robot.mjcf import is_mjcf
    from physid.robot.model import load_robot_file

    path = tmp_path / "arm.xml"
    path.write_text(ARM, encoding="utf-8")
    model = load_robot_file(path)
    terms = model_joint_terms(model)
    assert is_mjcf(path)
    np.testing.assert_allclose(terms.viscous, model.damping)
    np.testing.assert_allclose(terms.coulomb, model.friction)
    np.testing.assert_allclose(terms.armature, model.armature)
    assert terms.viscous[0] == pytest.approx(0.8) and terms.coulomb[0] == pytest.approx(0.2)
    assert terms.armature[0] == pytest.approx(0.03) and terms.coulomb_speed == COULOMB_SPEED
    assert set(np.round(terms.viscous, 6)) >= {0.8, 0.15}


def _estimate(model: pin.Model) -> JointEstimate:
    return JointEstimate(KINDS, tuple(range(6, model.nv)))


@pytest.mark.parametrize("active", [(), ("FL_foot",), FEET])
def test_estimated_joint_terms_step_derivatives_match_finite_differences(go1, active):
    """df/dtheta of the estimated armature, viscous and Coulomb friction (theta's log tail,
    physid.oe.model.joint_estimate) in the free and contact phases, against central differences."""
    dyn, theta, x, u = _setup(go1, seed=20 + len(active), estimate=_estimate(go1))
    assert dyn.n_theta == 10 + 3 * 12
    contacts = ContactModels(dyn.model, FEET)
    f, _, Ft = contact_step_derivatives(dyn, contacts, active, x, u)
    Ft_fd = _fd_theta(lambda: contact_step(dyn, contacts, active, x, u), dyn, theta)
    tail = Ft[:, 10:]
    assert np.abs(tail[go1.nv :]).max() > 1e-3  # the joint columns are not empty
    np.testing.assert_allclose(Ft, Ft_fd, rtol=1e-4, atol=1e-6 * np.abs(Ft).max())


def test_estimated_armature_enters_the_impulse(go1):
    """dDelta/dtheta of a touch-down (only the armature acts in an impact) against central
    differences; the friction columns are zero."""
    from physid.oe.model.contact import impulse, impulse_derivatives

    dyn, theta, x, _ = _setup(go1, seed=7, estimate=_estimate(go1))
    contacts = ContactModels(dyn.model, FEET)
    _, _, Ft = impulse_derivatives(dyn, contacts, FEET[:2], x)
    Ft_fd = _fd_theta(lambda: impulse(dyn, contacts, FEET[:2], x), dyn, theta)
    np.testing.assert_allclose(Ft, Ft_fd, rtol=1e-4, atol=1e-6 * np.abs(Ft).max())
    assert np.abs(Ft[:, 10:22]).max() > 1e-4  # armature columns
    np.testing.assert_array_equal(Ft[:, 22:], 0.0)


def test_estimated_joint_terms_start_at_the_declared_values_with_a_log_normal_prior(go1):
    """theta's tail is log(value): the file's values with their prior, START with a wide one
    where the file declares none; set_theta writes exp(tail) into the dynamics."""
    from physid.oe.model.joint_estimate import START

    legs = np.r_[np.zeros(6), np.ones(12)]
    terms = JointTerms(0.02 * legs, 0 * legs, 0.3 * legs)
    dyn = ParametrizedModel(
        go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.01, terms, _estimate(go1)
    )
    tail = dyn.nominal_theta()[10:]
    np.testing.assert_allclose(np.exp(tail[:12]), 0.02)
    np.testing.assert_allclose(np.exp(tail[12:24]), START["viscous"])
    np.testing.assert_allclose(np.exp(tail[24:]), 0.3)
    std = dyn.theta_prior_std(0.5)
    np.testing.assert_array_equal(std[:10], 0.5)
    assert np.all(std[22:34] == 3.0) and np.all(std[10:22] == 1.0) and np.all(std[34:] == 1.0)
    theta = dyn.nominal_theta()
    theta[10] += np.log(3.0)
    dyn.set_theta(theta)
    assert dyn.model.armature[6] == pytest.approx(0.06) and dyn.joints.armature[7] == 0.02
