"""Paper B: the parametrized Riccati step against the full KKT system, the nullspace step, and
parameter recovery on a simulated Kinova arm with a payload on its last link."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from scipy.sparse.linalg import spsolve

from physid.oe.model.measurements import Measurements, NoiseStd
from physid.oe.solving.build import initial_guess, make_problem
from physid.oe.solving.kkt import kkt_system, solve_kkt
from physid.oe.solving.riccati import SingularStepError, solve_step
from physid.oe.solving.solver import OEOptions, solve
from physid.sim.oe_arm import simulate_arm
from physid.sim.oe_robots import KINOVA, load_model
from physid.status import Status

BODY = "j2s6s200_joint_6"
PAYLOAD = pin.Inertia(0.8, np.array([0.02, -0.03, 0.08]), np.diag([2e-3, 2.5e-3, 1.5e-3]))


@pytest.fixture(scope="module")
def arm(kinova_payload_arm):
    nominal, true, rec = kinova_payload_arm
    return nominal, true.inertias[true.getJointId(BODY)], rec


def _problem(arm, chart, n=None, prior_std=None, model=None):
    nominal, _, rec = arm
    n = n or rec.tau.shape[0]
    meas = Measurements(q=rec.q_meas[: n + 1], v=rec.v_meas[: n + 1])
    return make_problem(
        model or nominal,
        [BODY],
        chart,
        rec.dt,
        rec.tau[:n],
        meas,
        NoiseStd(),
        theta_prior_std=prior_std,
    )


@pytest.mark.parametrize("chart", ["exp_eig", "log_cholesky"])
def test_riccati_step_equals_sparse_kkt_solution(arm, chart):
    problem = _problem(arm, chart, n=60, prior_std=1.0)
    xs, ws = initial_guess(problem)
    rng = np.random.default_rng(3)
    ws = 1e-4 * rng.standard_normal(ws.shape)  # gaps and noise both nonzero
    theta = problem.dynamics.nominal_theta() + 0.1 * rng.standard_normal(10)
    lin = problem.linearize(xs, ws, theta)
    assert lin.infeasibility > 0
    step = solve_step(lin, mu=0.0)
    dx, dw, dtheta = solve_kkt(lin)
    for mine, ref in ((step.dx, dx), (step.dw, dw), (step.dtheta, dtheta)):
        np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-8 * max(1.0, np.abs(ref).max()))


def test_nullspace_step_at_a_sphere_is_the_minimum_norm_kkt_solution(arm):
    """Exp-eig at a symmetric inertia: d pi/d theta has rank 7, V_theta_theta three zero
    eigenvalues; eq. 31 gives the KKT solution with no component along them."""
    nominal = arm[0].copy()
    j = nominal.getJointId(BODY)
    nominal.inertias[j] = pin.Inertia(1.2, np.array([0.0, 0.0, 0.05]), 4e-3 * np.eye(3))
    prior_std = np.ones(10)
    prior_std[4:7] = np.inf  # no prior on the rotation, so that it stays unobservable
    problem = _problem(arm, "exp_eig", n=20, model=nominal, prior_std=prior_std)
    xs, ws = initial_guess(problem)
    lin = problem.linearize(xs, ws, problem.dynamics.nominal_theta())
    step = solve_step(lin, mu=0.0, nullspace=True)
    assert step.null_dim == 3
    # At a sphere the rotation columns of d pi/d theta vanish: Z = span(e_4, e_5, e_6). The
    # reference solves the sparse KKT system with those three unknowns removed.
    K, rhs = kkt_system(lin)
    n_x, n_w = step.dx.size, step.dw.size
    keep = np.setdiff1d(np.arange(K.shape[0]), n_x + n_w + np.arange(4, 7))
    z = np.zeros(K.shape[0])
    z[keep] = spsolve(K[keep][:, keep].tocsc(), rhs[keep])
    ref_theta = z[n_x + n_w : n_x + n_w + 10]
    np.testing.assert_allclose(step.dtheta, ref_theta, atol=1e-8 * np.abs(ref_theta).max())
    np.testing.assert_allclose(step.dx, z[:n_x].reshape(step.dx.shape), atol=1e-8)
    with pytest.raises(SingularStepError):
        solve_step(lin, mu=0.0, nullspace=False)


@pytest.mark.parametrize(
    ("chart", "rollout"),
    [("log_cholesky", "multiple"), ("exp_eig", "multiple"), ("exp_eig", "feasible")],
)
def test_payload_recovered_on_kinova(arm, chart, rollout):
    _, truth, _ = arm
    problem = _problem(arm, chart)
    xs, ws = initial_guess(problem)
    result = solve(
        problem,
        xs,
        ws,
        problem.dynamics.nominal_theta(),
        OEOptions(rollout=rollout, max_iterations=80),
    )
    assert result.status is Status.OK, result.status
    body = result.body_summary()[BODY]
    assert abs(body["mass"] - truth.mass) < 0.01 * truth.mass
    np.testing.assert_allclose(body["com"], truth.lever, atol=2e-3)
    assert result.infeasibility < 1e-6
    assert np.all(np.isfinite(result.pi_std)) and 0 < result.pi_std[0, 0] < 0.05


def test_single_shooting_failure_is_a_status_not_an_exception(arm):
    problem = _problem(arm, "log_cholesky")
    xs, ws = initial_guess(problem)
    theta = problem.dynamics.nominal_theta()
    theta[0] -= 3.0  # a far lighter last link: the open-loop rollout diverges
    result = solve(problem, xs, ws, theta, OEOptions(rollout="single", max_iterations=5))
    assert result.status is not Status.OK


def test_levenberg_marquardt_term_damps_the_parameter_step(arm):
    """The LM term ``mu`` of the Riccati step is the one of the sparse KKT system with ``mu`` on
    the noise, arrival-state and parameter blocks (eq. 21), and it shrinks the parameter step to
    zero as it grows (it once left ``dtheta`` untouched: ``-Vtt^-1 Vt`` for any ``mu``)."""
    problem = _problem(arm, "exp_eig", n=40, prior_std=1.0)
    xs, ws = initial_guess(problem)
    theta = problem.dynamics.nominal_theta() + 0.1 * np.random.default_rng(4).standard_normal(10)
    lin = problem.linearize(xs, ws, theta)
    for mu in (1e-2, 1e4):
        step = solve_step(lin, mu=mu, nullspace=False)
        dx, dw, dtheta = solve_kkt(lin, mu)
        for mine, ref in ((step.dx, dx), (step.dw, dw), (step.dtheta, dtheta)):
            np.testing.assert_allclose(mine, ref, rtol=0, atol=1e-8 * max(1.0, np.abs(ref).max()))
    free = np.linalg.norm(solve_step(lin, mu=0.0).dtheta)
    assert np.linalg.norm(solve_step(lin, mu=1e12).dtheta) < 1e-3 * free


def test_feasibility_driven_rollout_converges_on_two_bodies_70_percent_off():
    """Two Kinova bodies, every inertial parameter 70 % off (paper B Table I setting): the
    feasibility-driven rollout (eq. 33) converges to the MAP estimate. Before the LM term
    acted on the parameter block and grew after short accepted steps, the line search
    crawled at alpha ~ 3e-4 and this start ended in line_search_failed at cost 18,873."""
    nominal = load_model(KINOVA)
    true = nominal.copy()
    j = true.getJointId(BODY)
    true.inertias[j] = true.inertias[j] + PAYLOAD
    rec = simulate_arm(true, nominal, np.random.default_rng(0), duration=1.0, dt=0.02)
    problem = make_problem(
        nominal,
        ["j2s6s200_joint_5", BODY],
        "exp_eig",
        rec.dt,
        rec.tau,
        Measurements(q=rec.q_meas, v=rec.v_meas),
        NoiseStd(),
    )
    theta = problem.dynamics.nominal_theta().reshape(2, 10)
    theta[:, 0] += np.log(1.7)  # masses
    theta[:, 1:4] *= np.array([[0.3], [1.7]])  # first moments
    theta[:, 7:10] += np.log([[0.3], [1.7]])  # principal second moments
    xs, ws = initial_guess(problem)
    result = solve(problem, xs, ws, theta.reshape(-1), OEOptions(rollout="feasible"))
    assert result.status is Status.OK, result.status
    # MAP cost of a fit at the noise level: 1/2 chi^2 with n = 12 whitened residuals per node
    n = 12 * rec.q.shape[0]
    assert abs(result.cost - 0.5 * n) < 3 * 0.5 * np.sqrt(2 * n)
    q_est = result.xs[:, : nominal.nq]
    error = max(
        np.abs(pin.difference(nominal, a, b)).max() for a, b in zip(rec.q, q_est, strict=True)
    )
    assert error < 5e-3  # rad: within a few encoder standard deviations (1e-3)
