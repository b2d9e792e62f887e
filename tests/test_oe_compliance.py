"""The compliant contact (physid.oe.model.compliance): its step and derivatives against central
finite differences and its defining equation, and the compliance estimated with the mass from a
simulation with a known compliance, against the rigid model's bias."""

from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest
from oe_checks import state_jacobian_by_central_differences

from physid.oe.model import state
from physid.oe.model.compliance import SoftContact
from physid.oe.model.contact import (
    ContactModels,
    contact_acceleration,
    contact_step,
    contact_step_derivatives,
)
from physid.oe.model.dynamics import JointTerms, ParametrizedModel
from physid.oe.solving.build import default_actuation
from physid.sim.oe_robots import GO1, load_model

FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")


@pytest.fixture(scope="module")
def go1() -> pin.Model:
    return load_model(GO1, floating=True)


def _fd(fun, model, x, eps=1e-6):  # noqa: ANN001, ANN202
    return state_jacobian_by_central_differences(fun, model, x, eps)


@pytest.mark.parametrize("damping", [0.0, 20.0])
@pytest.mark.parametrize("friction", [False, True])
@pytest.mark.parametrize("drift", [False, True])
def test_compliant_step_derivatives(go1, damping, friction, drift):
    rng = np.random.default_rng(3)
    nv = go1.nv
    joints = None
    if friction:
        joints = JointTerms(np.full(nv, 0.01), np.full(nv, 0.5), np.full(nv, 0.2))
    dyn = ParametrizedModel(
        go1,
        ["root_joint"],
        "exp_eig",
        default_actuation(go1),
        0.005,
        joints,
        soft=SoftContact(0.05, 0.08, estimate=True, tangential_ratio=2.5, drift=drift),
    )
    theta = dyn.nominal_theta() + 0.05 * rng.standard_normal(dyn.n_theta)
    dyn.set_theta(theta)
    contacts = ContactModels(dyn.model, FEET, damping)
    contacts.ground = -0.2
    contacts.set_points({"FL_foot": np.array([0.0, 0.01, -0.02])})
    q = pin.randomConfiguration(go1, -np.ones(go1.nq), np.ones(go1.nq))
    x = np.r_[q, rng.standard_normal(nv)]
    u = rng.standard_normal(nv - 6)
    active = ("FL_foot", "RR_foot", "RL_foot")
    f, Fx, Ft = contact_step_derivatives(dyn, contacts, active, x, u)
    np.testing.assert_allclose(f, contact_step(dyn, contacts, active, x, u), atol=1e-12)
    ref = _fd(lambda y: contact_step(dyn, contacts, active, y, u), go1, x)
    np.testing.assert_allclose(Fx, ref, atol=1e-5 * max(1.0, np.abs(ref).max()))
    cols = []
    for i in range(theta.size):
        e = 1e-6 * np.eye(theta.size)[i]
        dyn.set_theta(dyn.retract(theta, e))
        plus = contact_step(dyn, contacts, active, x, u)
        dyn.set_theta(dyn.retract(theta, -e))
        minus = contact_step(dyn, contacts, active, x, u)
        cols.append(state.difference(go1, minus, plus) / 2e-6)
    dyn.set_theta(theta)
    ref = np.column_stack(cols)
    assert np.all(np.abs(ref[:, -3:]).max(axis=0) > 1e-5)  # C, tau and rho move the step
    np.testing.assert_allclose(Ft, ref, atol=1e-5 * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("drift", [False, True])
def test_compliant_contact_yields_under_its_force(go1, drift):
    """``Jc a = -C_rows lambda`` (MuJoCo's rule: no drift ``gamma = Jc_dot v``; ``drift``:
    ``Jc a + gamma``, the points' classical acceleration): the foot points accelerate against
    their forces, the tangential rows ``rho`` times as compliant as the normal (world z)
    ones."""
    rng = np.random.default_rng(4)
    C, rho = 0.03, 3.0
    soft = SoftContact(C, tangential_ratio=rho, drift=drift)
    dyn = ParametrizedModel(
        go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.005, soft=soft
    )
    rigid = ParametrizedModel(go1, ["root_joint"], "exp_eig", default_actuation(go1), 0.005)
    q = pin.randomConfiguration(go1, -np.ones(go1.nq), np.ones(go1.nq))
    v = rng.standard_normal(go1.nv)
    tau = np.r_[np.zeros(6), rng.standard_normal(go1.nv - 6)]
    active = ("FL_foot", "FR_foot")
    contacts = ContactModels(dyn.model, FEET)
    a = contact_acceleration(dyn, contacts, active, q, v, tau)
    lam = contacts.get(active)[0].lambda_c.copy()
    a0 = contact_acceleration(rigid, ContactModels(rigid.model, FEET), active, q, v, tau)
    data = dyn.model.createData()
    point_acc = []
    for acc in (a, a0, np.zeros(go1.nv)):
        pin.forwardKinematics(dyn.model, data, q, v, acc)
        pin.updateFramePlacements(dyn.model, data)
        point_acc.append(
            np.concatenate(
                [
                    pin.getFrameClassicalAcceleration(
                        dyn.model, data, dyn.model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED
                    ).linear
                    for f in active
                ]
            )
        )
    np.testing.assert_allclose(point_acc[1], 0.0, atol=1e-8)
    gamma = point_acc[2]
    assert np.abs(gamma).max() > 1.0
    yielded = point_acc[0] if drift else point_acc[0] - gamma
    np.testing.assert_allclose(yielded, -np.tile([rho * C, rho * C, C], 2) * lam, atol=1e-8)
    assert np.abs(lam.reshape(2, 3)[:, :2]).max() > 1.0  # the tangential rows carry force
    M = pin.crba(dyn.model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.rnea(dyn.model, data, q, v, np.zeros(go1.nv))
    J = np.vstack(
        [
            pin.computeFrameJacobian(
                dyn.model, data, q, dyn.model.getFrameId(f), pin.LOCAL_WORLD_ALIGNED
            )[:3]
            for f in active
        ]
    )
    np.testing.assert_allclose(M @ a + h - tau, J.T @ lam, atol=1e-8)


PAYLOAD = pin.Inertia(3.0, np.array([0.02, -0.01, 0.03]), np.diag([0.02, 0.04, 0.05]))
# 1/kg, s: a sag of C tau^2 = 0.18 mm per N, 7 mm at 40 N; the tangential rows 3x as
# compliant as the normal (MuJoCo's pyramidal cone: 2 / mu^2)
SOFT = SoftContact(0.05, 0.06, tangential_ratio=3.0)


def _walking_go1(monkeypatch, soft: SoftContact, duration: float = 0.8):
    """A Go1 walking in place (:func:`physid.sim.oe_floating.simulate_go1`: one foot swings at
    a time, a controller that knows only the nominal model), integrated by the soft contact's
    own step with known ``soft`` (rigid: the plain simulation, plastic touch-downs), the floor
    at the feet's standing height."""
    from physid.sim import oe_floating

    nominal = load_model(GO1, floating=True)
    true = nominal.copy()
    true.inertias[1] = nominal.inertias[1] + PAYLOAD
    dyn = ParametrizedModel(
        true, ["root_joint"], "exp_eig", default_actuation(true), 0.005, soft=soft
    )
    contacts = ContactModels(dyn.model, FEET)
    data = true.createData()
    pin.framesForwardKinematics(true, data, oe_floating.go1_standing(true))
    contacts.ground = float(np.mean([data.oMf[true.getFrameId(f)].translation[2] for f in FEET]))

    def soft_step(model, cache, x, u, flags, flags_next, dt, substeps, integrator):  # noqa: ANN001, ANN202, ARG001
        active = tuple(f for f, on in zip(FEET, flags, strict=True) if on)
        return contact_step(dyn, contacts, active, x, u)  # a soft foot lands without impulse

    if not soft.rigid:
        monkeypatch.setattr(oe_floating, "_go1_step", soft_step)
    rec = oe_floating.simulate_go1(
        true,
        nominal,
        np.random.default_rng(0),
        duration=duration,
        dt=0.005,
    )
    return nominal, true, rec


def _problem(nominal, rec, soft, theta_prior_std=None):
    from physid.oe import NoiseStd, make_problem

    return make_problem(
        nominal,
        ["root_joint"],
        "exp_eig",
        rec.dt,
        rec.u,
        rec.measurements,
        NoiseStd(),
        x0_prior=np.r_[rec.x[0, : nominal.nq], np.zeros(nominal.nv)],
        contact_frames=rec.contact_frames,
        contact_flags=rec.contact_flags,
        soft_contact=soft,
        theta_prior_std=theta_prior_std,
    )


def _estimate(nominal, rec, soft, theta_prior_std=None):
    from physid.oe import OEOptions, initial_guess, solve

    problem = _problem(nominal, rec, soft, theta_prior_std)
    xs, ws = initial_guess(problem)
    theta0 = problem.dynamics.nominal_theta()
    result = solve(problem, xs, ws, theta0, OEOptions(max_iterations=60))
    mass = pin.Inertia.FromDynamicParameters(result.pis[0]).mass
    return result, mass


@pytest.mark.parametrize("truth", [SoftContact(), SOFT])
def test_data_choose_the_feet(monkeypatch, truth):
    """:func:`physid.oe.soft.choose.choose_soft` on walking data: rigid feet (plastic
    touch-downs, feet landing wherever the swing ends) get rigid feet back, soft feet soft."""
    from physid.oe import initial_guess
    from physid.oe.soft.choose import choose_soft

    nominal, _, rec = _walking_go1(monkeypatch, truth)
    rigid = _problem(nominal, rec, None)
    start = SoftContact.estimated_for_mass(pin.computeTotalMass(nominal))
    problem, record = choose_soft(rigid, _problem(nominal, rec, start), initial_guess(rigid)[0])
    print(record)
    assert record["feet"] == ("rigid" if truth.rigid else "soft")
    assert (problem is rigid) == truth.rigid


def test_soft_contact_and_mass_recovered(monkeypatch):
    """The compliance, the spring, the tangential rows' ratio and the trunk's mass from walking
    data with a known soft contact, within 3 std; the rigid model's mass on the same data is off
    by 10x more, and one compliance for every row (the ratio held at 1) misses the truth."""
    nominal, true, rec = _walking_go1(monkeypatch, SOFT)
    start = SoftContact.estimated_for_mass(pin.computeTotalMass(nominal))
    result, mass = _estimate(nominal, rec, start)  # the soft priors only
    c = result.contact_compliance
    true_mass = true.inertias[1].mass
    print(c, mass, true_mass, result.pi_std[0, 0], result.status, result.iterations)
    assert abs(mass - true_mass) < 3 * result.pi_std[0, 0]
    assert abs(c["compliance"] - SOFT.compliance) < 3 * c["compliance_std"]
    assert abs(c["time_constant"] - SOFT.time_constant) < 3 * c["time_constant_std"]
    assert abs(c["tangential_ratio"] - SOFT.tangential_ratio) < 3 * c["tangential_ratio_std"]
    _, rigid_mass = _estimate(nominal, rec, None)
    print("rigid", rigid_mass)
    assert abs(rigid_mass - true_mass) > 10 * abs(mass - true_mass)
    # the bodies' prior flat, the soft entries' own: rho held at 1 by its std
    one = dataclasses.replace(start, ratio_log_std=1e-4)
    scalar, scalar_mass = _estimate(nominal, rec, one)
    s = scalar.contact_compliance
    print("one compliance", s, scalar_mass, scalar.pi_std[0, 0], scalar.cost, result.cost)
    assert s["tangential_ratio"] == pytest.approx(1.0, abs=1e-3)
    assert 2.0 * (scalar.cost - result.cost) > 10.83  # the likelihood ratio rejects rho = 1


def test_the_data_choose_the_feet_by_default_and_rigid_ones_are_asked_for(tmp_path):
    # contacts.compliance: estimate (the data choose rigid or soft feet) unless the config
    # says 0 (paper B's rigid feet); another number is refused with the key named
    from physid.errors import InputError
    from physid.oe.data.config import read_contact_compliance

    def read(text):
        path = tmp_path / "oe.yaml"
        path.write_text(text)
        return read_contact_compliance(path)

    assert read_contact_compliance(None) is None
    assert read("contacts: {damping: 0.0}\n") is None
    assert read("contacts: {compliance: estimate}\n") is None
    assert read("contacts: {compliance: 0}\n") == 0.0
    with pytest.raises(InputError, match="contacts.compliance"):
        read("contacts: {compliance: 0.1}\n")


def test_soft_priors_kept_without_a_body_prior(monkeypatch):
    """``make_problem`` without ``theta_prior_std`` keeps the soft contact's log-normal priors
    (the bodies' then infinitely wide), as it keeps the joint terms': it dropped the whole
    prior, so an API user's compliance, spring and ratio ran free."""
    nominal, _, rec = _walking_go1(monkeypatch, SOFT)
    start = SoftContact.estimated_for_mass(pin.computeTotalMass(nominal))
    problem = _problem(nominal, rec, start)
    std = problem.theta_prior_std
    assert std is not None and np.all(np.isinf(std[:-3]))
    np.testing.assert_array_equal(
        std[-3:], [start.prior_log_std, start.prior_log_std, start.ratio_log_std]
    )
