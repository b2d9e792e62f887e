"""Issue 29 item 2: a process-noise floor near contact flag changes (``contact_change_v``).
The per-node noise enters the Riccati recursion through the per-node ww blocks; checked against
the sparse KKT solution (eq. 21), the cost's gradient in w against central differences, and
the nodes it reaches against the flags."""

from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from physid.oe import NoiseStd, initial_guess, make_problem
from physid.oe.solving.kkt import solve_kkt
from physid.oe.solving.riccati import solve_step
from physid.sim.oe_floating import simulate_go1
from physid.sim.oe_robots import GO1, load_model

PAYLOAD = pin.Inertia(3.0, np.array([-0.03, 0.01, 0.07]), np.diag([0.02, 0.05, 0.06]))
N = 100


@pytest.fixture(scope="module")
def problem():
    nominal = load_model(GO1, floating=True)
    true = nominal.copy()
    true.inertias[1] = nominal.inertias[1] + PAYLOAD
    rec = simulate_go1(true, nominal, np.random.default_rng(0), duration=0.6, dt=0.005)
    m = rec.measurements
    cut = {f.name: getattr(m, f.name) for f in dataclasses.fields(m)}
    meas = type(m)(**{k: None if v is None else v[: N + 1] for k, v in cut.items()})
    return make_problem(
        nominal, ["root_joint"], "exp_eig", rec.dt, rec.u[:N], meas,
        NoiseStd(contact_change_v=0.05, contact_change_window=0.01), theta_prior_std=1.0,
        x0_prior=np.r_[rec.x[0, : nominal.nq], np.zeros(nominal.nv)],
        contact_frames=rec.contact_frames, contact_flags=rec.contact_flags[: N + 1],
    )  # fmt: skip


def test_noise_floor_covers_the_nodes_near_flag_changes(problem):
    std = problem.process_std_nodes
    flags = problem.contacts.flags
    changes = np.flatnonzero(np.any(flags[1:] != flags[:-1], axis=1))
    assert changes.size >= 2
    nv = problem.dynamics.model.nv
    near = np.zeros(N, bool)
    for k in changes:  # window 10 ms = 2 nodes of 5 ms on either side
        near[max(k - 2, 0) : k + 3] = True
    np.testing.assert_array_equal(std[near, nv:], 0.05)
    np.testing.assert_array_equal(std[~near, nv:], NoiseStd().process_v)
    np.testing.assert_array_equal(std[:, :nv], NoiseStd().process_q)


def test_riccati_equals_kkt_with_the_noise_floor(problem):
    xs, ws = initial_guess(problem)
    ws = 1e-3 * np.random.default_rng(5).standard_normal(ws.shape)
    lin = problem.linearize(xs, ws, problem.dynamics.nominal_theta())
    mine = solve_step(lin, mu=0.0)
    dx, dw, dtheta = solve_kkt(lin)
    for a, b in ((mine.dx, dx), (mine.dw, dw), (mine.dtheta, dtheta)):
        np.testing.assert_allclose(a, b, atol=1e-8 * max(1.0, np.abs(b).max()))


def test_noise_gradient_matches_finite_differences(problem):
    xs, ws = initial_guess(problem)
    std = problem.process_std_nodes
    ws = 0.5 * std * np.random.default_rng(6).standard_normal(ws.shape)
    theta = problem.dynamics.nominal_theta()
    lin = problem.linearize(xs, ws, theta)
    assert lin.cost == pytest.approx(problem.evaluate(xs, ws, theta)[0], rel=1e-12)
    nv = problem.dynamics.model.nv
    k = int(np.argmax(std[:, nv]))  # a node with the floor
    for i in (0, nv, nv + 8):
        eps = 1e-3 * std[k, i]
        e = np.zeros_like(ws)
        e[k, i] = eps
        fd = (problem.evaluate(xs, ws + e, theta)[0] - problem.evaluate(xs, ws - e, theta)[0]) / (
            2 * eps
        )
        assert lin.lw[k, i] == pytest.approx(fd, rel=1e-5)
        assert lin.lw[k, i] == pytest.approx(ws[k, i] / std[k, i] ** 2, rel=1e-12)


def test_leg_odometry_warm_start_follows_the_base():
    """Issue 29 item 3: without base_v* columns the initial guess takes the base velocity and
    position from the feet in contact (leg odometry) instead of rest at the first position:
    on the simulated Go1 walk (rigid contacts, noisy encoders, joint velocities and gyro) its
    velocity error is a fraction of the base's speed (measured 7.8e-3 against 5.5e-2 m/s RMS)
    and the position stays within 1 cm (1.3 mm)."""
    from physid.oe.solving.build import leg_odometry

    nominal = load_model(GO1, floating=True)
    rec = simulate_go1(nominal, nominal, np.random.default_rng(1), duration=1.0, dt=0.005)
    meas = dataclasses.replace(rec.measurements, base_velocity=None)
    problem = make_problem(
        nominal, ["root_joint"], "exp_eig", rec.dt, rec.u, meas, NoiseStd(),
        x0_prior=np.r_[rec.x[0, : nominal.nq], np.zeros(nominal.nv)],
        contact_frames=rec.contact_frames, contact_flags=rec.contact_flags,
    )  # fmt: skip
    vel, pos = leg_odometry(problem)
    true_v = rec.x[:, nominal.nq : nominal.nq + 3]
    error = np.sqrt(np.mean((vel - true_v) ** 2))
    assert error < 0.25 * np.sqrt(np.mean(true_v**2))
    assert np.abs(pos - rec.x[:, :3]).max() < 0.01
    xs, _ = initial_guess(problem)
    np.testing.assert_array_equal(xs[:, nominal.nq : nominal.nq + 3], vel)
