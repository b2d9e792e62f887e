"""SPOOK simulator of physid.multibody against closed forms (paper A §2, Appendix F)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from physid.errors import InputError
from physid.multibody.model.build import load_model
from physid.multibody.step.simulate import energy, simulate, state_from_joints

ROOT = Path(__file__).resolve().parents[1]
PENDULUM = ROOT / "examples" / "multibody" / "pendulum.urdf"
TURNTABLE = """<?xml version="1.0"?>
<robot name="turntable"><link name="base"/>
  <link name="disc"><inertial><origin xyz="0 0 0"/><mass value="2.0"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.04"/></inertial></link>
  <joint name="spin" type="revolute"><parent link="base"/><child link="disc"/>
    <origin xyz="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-100" upper="100" effort="10" velocity="100"/></joint>
</robot>"""
G = 9.81


def _pendulum(compliance: float = 1e-8, **joint):
    cfg = {
        "gravity": [0, 0, -G],
        "defaults": {"compliance_linear": compliance, "compliance_rotational": compliance},
        "joints": {"pendulum": joint} if joint else {},
    }
    return load_model(PENDULUM, cfg)


def _zero_crossing_times(t, a):
    idx = np.flatnonzero((a[:-1] < 0) & (a[1:] >= 0))
    return t[idx] - a[idx] * (t[idx + 1] - t[idx]) / (a[idx + 1] - a[idx])


def test_small_angle_period_matches_closed_form():
    model = _pendulum()
    q0, v0 = state_from_joints(model, [0.02], [0.0])
    sim = simulate(model, 1e-3, 2600, q0, v0)
    period = np.diff(_zero_crossing_times(sim.t, sim.angles[:, 0])).mean()
    mass, lever, inertia = 0.5, 0.3, 0.01  # pendulum.urdf
    expected = 2 * np.pi * np.sqrt((inertia + mass * lever**2) / (mass * G * lever))
    assert period == pytest.approx(expected, rel=2e-3)


def _energies(model, sim):
    return np.array([energy(model, q, v, model.values) for q, v in zip(sim.q, sim.v, strict=True)])


SWING = 0.5 * G * 0.3 * (1 - np.cos(1.0))  # potential energy of a release from 1 rad
PERIOD = 2 * np.pi * np.sqrt((0.01 + 0.5 * 0.3**2) / (0.5 * G * 0.3))  # small-angle period


def test_energy_band_is_first_order_in_h():
    model = _pendulum()
    q0, v0 = state_from_joints(model, [1.0], [0.0])
    bands = []
    for h in (2e-3, 1e-3):
        e = _energies(model, simulate(model, h, int(1.5 / h), q0, v0))
        bands.append(np.ptp(e))
    # the oscillation band of the symplectic-Euler-type update (eq. 2.8 + 2.16) is O(h)
    assert bands[1] < 0.01 * SWING
    assert bands[0] / bands[1] == pytest.approx(2.0, rel=0.1)


def test_energy_does_not_drift_over_many_periods():
    h = 2e-3
    model = _pendulum(damping=2 * h)  # SPOOK relaxation tau = 2h: no viscous friction
    q0, v0 = state_from_joints(model, [1.0], [0.0])
    e = _energies(model, simulate(model, h, int(30 / h), q0, v0))  # ~25 periods
    n = int(round(PERIOD / h))
    # variational integrator: the energy oscillates in a band that does not grow, and its mean
    # after 25 periods is within 1e-3 of the swing energy of its first period (measured 3e-4)
    assert abs(e[-n:].mean() - e[:n].mean()) < 1e-3 * SWING
    assert np.ptp(e[-n:]) == pytest.approx(np.ptp(e[:n]), rel=0.05)


def test_viscous_friction_decays_like_linear_damping():
    model = _pendulum(viscous=0.02)
    q0, v0 = state_from_joints(model, [0.02], [0.0])
    sim = simulate(model, 1e-3, 4000, q0, v0)
    a = sim.angles[:, 0]
    peaks = [i for i in range(1, len(a) - 1) if a[i] > a[i - 1] and a[i] >= a[i + 1]]
    rate = np.polyfit(sim.t[peaks], np.log(a[peaks]), 1)[0]
    inertia = 0.01 + 0.5 * 0.3**2
    assert rate == pytest.approx(-0.02 / (2 * inertia), rel=0.03)


def test_constraint_violation_is_compliance_times_force():
    eps = 1e-5
    model = _pendulum(compliance=eps)
    q0, v0 = state_from_joints(model, [0.0], [0.0])
    sim = simulate(model, 1e-3, 1500, q0, v0)
    # at rest the hinge carries the weight: violation -> eps * m g (SPOOK regularisation, eq. 2.8)
    assert sim.constraint_violation[-1] == pytest.approx(eps * 0.5 * G, rel=1e-3)
    assert sim.constraint_violation.max() <= 1.01 * eps * 0.5 * G


def _largest_pivot_force_component(theta0: float) -> float:
    """Closed-form hinge force of a compound pendulum released from rest at ``theta0``: the
    largest of its horizontal and vertical components over the swing."""
    mass, lever, inertia = 0.5, 0.3, 0.01 + 0.5 * 0.3**2
    theta = np.linspace(0, theta0, 2001)
    omega2 = 2 * mass * G * lever * (np.cos(theta) - np.cos(theta0)) / inertia
    radial = mass * G * np.cos(theta) + mass * lever * omega2
    tangential = mass * G * np.sin(theta) * (1 - mass * lever**2 / inertia)
    fx = radial * np.sin(theta) - tangential * np.cos(theta)
    fz = radial * np.cos(theta) + tangential * np.sin(theta)
    return float(max(np.abs(fx).max(), np.abs(fz).max()))


@pytest.mark.parametrize("eps", [1e-5, 1e-4])
def test_swinging_violation_scales_with_compliance(eps):
    h = 5e-4  # the compliance-free drift (O(h^2) with tau = 2h) stays < 3 % of the bound
    model = _pendulum(compliance=eps, damping=2 * h)
    q0, v0 = state_from_joints(model, [1.0], [0.0])
    sim = simulate(model, h, 3000, q0, v0)
    bound = eps * _largest_pivot_force_component(1.0)
    assert sim.constraint_violation.max() == pytest.approx(bound, rel=0.05)


@pytest.mark.parametrize("torque", [0.5, 0.9, 1.1, 2.0])
def test_dry_friction_stick_slip_against_coulomb_threshold(tmp_path, torque):
    urdf = tmp_path / "turntable.urdf"
    urdf.write_text(TURNTABLE)
    r_mu, mass, j_zz, shaft = 0.05, 2.0, 0.04, 0.01
    cfg = {
        "gravity": [0, 0, -G],
        "joints": {"spin": {"dry": r_mu, "gain": 1.0, "shaft_inertia": shaft}},
    }
    model = load_model(urdf, cfg)
    q0, v0 = state_from_joints(model, [0.0], [0.0])
    sim = simulate(model, 1e-3, 300, q0, v0, u=np.full((300, 1), torque))
    assert sim.lcp_failures == 0
    threshold = r_mu * mass * G  # Coulomb bound r mu |normal impulse| / h (F.4)
    if torque < threshold:
        assert abs(sim.rates[-1, 0]) < 1e-5  # sticks (creep = friction compliance * torque)
    else:
        acceleration = (torque - threshold) / (j_zz + shaft)  # slips, motor inertia F.3
        assert sim.rates[-1, 0] == pytest.approx(acceleration * 0.3, rel=1e-3)


def test_bad_config_names_the_key():
    with pytest.raises(InputError, match="joints.pendulum"):
        load_model(PENDULUM, {"joints": {"pendulum": {"viscosity": 1.0}}})
    with pytest.raises(InputError, match="nope"):
        load_model(PENDULUM, {"estimate": ["pendulum.nope"]})


def test_massless_body_is_one_line_naming_the_parameter():
    """A fit can drive a body to zero mass or inertia (the double pendulum did); simulating it
    must name the parameter instead of failing with a singular-matrix traceback."""
    model = _pendulum()
    q0, v0 = state_from_joints(model, [0.3])
    assert np.isfinite(simulate(model, 1e-3, 2, q0, v0).angles).all()
    with pytest.raises(InputError, match="pendulum.mass = 0"):
        simulate(model.with_values({"pendulum.mass": 0.0}), 1e-3, 2, q0, v0)
    with pytest.raises(InputError, match="pendulum.Ixx/Iyy/Izz"):
        simulate(model.with_values({"pendulum.Iyy": 0.0}), 1e-3, 2, q0, v0)


@pytest.mark.parametrize(("torque", "sticks"), [(1.3, True), (2.0, False)])
def test_stribeck_breakaway_exceeds_kinetic_friction(tmp_path, torque, sticks):
    """Eq. 4.1: the bound r mu + r dmu exp(-c w^2) holds the hinge above the kinetic threshold."""
    urdf = tmp_path / "turntable.urdf"
    urdf.write_text(TURNTABLE)
    dry, delta, mass, j_zz = 0.05, 0.03, 2.0, 0.04
    joint = {"dry": dry, "stribeck_delta": delta, "stribeck_c": 100.0, "gain": 1.0}
    model = load_model(urdf, {"gravity": [0, 0, -G], "joints": {"spin": joint}})
    q0, v0 = state_from_joints(model, [0.0], [0.0])
    sim = simulate(model, 1e-3, 300, q0, v0, u=np.full((300, 1), torque))
    kinetic, static = dry * mass * G, (dry + delta) * mass * G
    assert kinetic < 1.3 < static < 2.0
    if sticks:
        assert abs(sim.rates[-1, 0]) < 1e-5
    else:  # once sliding fast (c w^2 >> 1) the friction is the kinetic one
        slow, fast = (torque - static) / j_zz * 0.3, (torque - kinetic) / j_zz * 0.3
        assert slow < sim.rates[-1, 0] < fast
        late = np.diff(sim.rates[-101:, 0]).mean() / 1e-3
        assert late == pytest.approx((torque - kinetic) / j_zz, rel=1e-3)


def test_gravity_tilt_moves_the_equilibrium():
    """The tilt parameters rotate gravity (§4.6); a damped pendulum settles along it."""
    model = load_model(
        PENDULUM,
        {"gravity": [0, 0, -G], "tilt": [0.1, 0.0], "joints": {"pendulum": {"viscous": 0.2}}},
    )
    q0, v0 = state_from_joints(model, [0.0], [0.0])
    sim = simulate(model, 2e-3, 3000, q0, v0)
    # tilt_1 turns gravity about -y (the first horizontal axis normal to g0 = -z): q_eq = -tilt_1
    assert sim.angles[-1, 0] == pytest.approx(-0.1, abs=1e-5)  # residual swing 2e-6


def _turntable_with_friction_row(tmp_path, **row):
    urdf = tmp_path / "turntable.urdf"
    urdf.write_text(TURNTABLE)
    joint = {"coulomb": 1.0, "gain": 1.0, **row}
    return load_model(urdf, {"gravity": [0, 0, -G], "joints": {"spin": joint}})


@pytest.mark.parametrize("torque", [0.5, 2.0])
def test_relaxed_friction_row_against_its_closed_form(tmp_path, torque):
    """The dry-friction row with friction_damping tau_f (dynamics.friction_row): while stuck
    ``J (v1 - v0) = h T + l``, ``l = -(v1 - upsilon v0) / Sigma`` give
    ``v_k = c T (1 - rho^k)``, ``rho = (J Sigma + upsilon) / (J Sigma + 1)``; sliding, the
    impulse saturates at ``h tau_c`` and the rate grows like ``(T - tau_c) t / J``."""
    h, tau_f, creep, j_zz = 1e-3, 0.01, 0.05, 0.04
    model = _turntable_with_friction_row(
        tmp_path, friction_damping=tau_f, friction_compliance=creep
    )
    q0, v0 = state_from_joints(model, [0.0], [0.0])
    sim = simulate(model, h, 100, q0, v0, u=np.full((100, 1), torque))
    assert sim.lcp_failures == 0
    if torque < 1.0:
        sigma, upsilon = creep / (tau_f + h), tau_f / (tau_f + h)
        rho = (j_zz * sigma + upsilon) / (j_zz * sigma + 1)
        expected = creep * torque * (1 - rho ** np.arange(101))
        np.testing.assert_allclose(sim.rates[:, 0], expected, rtol=1e-4, atol=1e-9)
    else:
        np.testing.assert_allclose(sim.rates[:, 0], (torque - 1.0) * sim.t / j_zz, rtol=1e-4)


@pytest.mark.parametrize("torque", [0.5, 0.9, 1.5])
def test_relaxed_friction_row_follows_mujoco_frictionloss(tmp_path, torque):
    """MuJoCo's soft ``frictionloss`` (an independent simulator at 1e-4 s) against physid's row
    with mujoco_friction_row's constants at the same step: the creep and its rise while stuck, the
    slip above the bound. The instantaneous row (friction_damping 0) sticks without creep."""
    mujoco = pytest.importorskip("mujoco")
    from physid.multibody.model.dynamics import mujoco_friction_row

    xml = """<mujoco><option timestep="1e-4" gravity="0 0 -9.81"/><worldbody><body>
      <joint name="spin" type="hinge" axis="0 0 1" frictionloss="1.0"/>
      <inertial pos="0 0 0" mass="2.0" diaginertia="0.02 0.02 0.04"/></body></worldbody></mujoco>"""
    mj_model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj_model)
    data.qfrc_applied[0] = torque
    rate = []
    for _ in range(20):  # 0.01 s per sample
        for _ in range(100):
            mujoco.mj_step(mj_model, data)
        rate.append(data.qvel[0])
    row = mujoco_friction_row(float(mj_model.dof_invweight0[0]))
    model = _turntable_with_friction_row(tmp_path, **row)
    q0, v0 = state_from_joints(model, [0.0], [0.0])
    sim = simulate(model, 1e-4, 2000, q0, v0, u=np.full((2000, 1), torque))
    np.testing.assert_allclose(sim.rates[100::100, 0], rate, rtol=0.01)
    if torque < 1.0:  # creeping at R/b times the torque, MuJoCo's regularised stick
        assert rate[-1] == pytest.approx(row["friction_compliance"] * torque, rel=0.01)
        hard_row = _turntable_with_friction_row(tmp_path)
        hard = simulate(hard_row, 1e-3, 200, q0, v0, u=np.full((200, 1), torque))
        assert abs(hard.rates[-1, 0]) < 1e-5 < 0.1 * rate[-1]
