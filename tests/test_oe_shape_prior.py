"""physid oe's default priors on each estimated body's shape (exp_eig): log-normal on its
principal second moments (physid.oe.model.dynamics.SECOND_MOMENT_LOG_STD) and about its
principal axes (PRINCIPAL_AXES_STD): their cost terms, that they leave what the data decide
where it was, and the curvature Gauss-Newton leaves out where the chart is curved
(physid.oe.model.charts.rotation_curvature, OEProblem._chart_curvature)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from conftest import KINOVA_PAYLOAD_BODY

from physid.oe.model.charts import prior_residual, retract, rotation_curvature
from physid.oe.model.dynamics import PRINCIPAL_AXES_STD, SECOND_MOMENT_LOG_STD
from physid.oe.model.measurements import Measurements, NoiseStd
from physid.oe.solving.build import initial_guess, make_problem
from physid.oe.solving.solver import solve


def _problems(arm) -> tuple:  # noqa: ANN001
    """The payload arm's exp_eig problem without and with the shape priors."""
    nominal, _, rec = arm
    meas = Measurements(q=rec.q_meas, v=rec.v_meas)
    return tuple(
        make_problem(
            nominal,
            [KINOVA_PAYLOAD_BODY],
            "exp_eig",
            rec.dt,
            rec.tau,
            meas,
            NoiseStd(),
            second_moment_std=moments,
            axes_std=axes,
        )
        for moments, axes in ((None, None), (SECOND_MOMENT_LOG_STD, PRINCIPAL_AXES_STD))
    )


def test_the_shape_priors_cost_their_closed_form(kinova_payload_arm):
    """The cost with the priors minus the cost without, at the nominal body with its
    principal axes turned by (0.2, -0.4, 0.1) rad, its three log principal second moments
    moved by (0.3, -0.6, 0.9) and its mass by 0.5 in log: the closed form
    1/2 |domega|^2 / 1^2 + 1/2 sum (ds / 3)^2 (the mass and the CoM keep no prior)."""
    free, held = _problems(kinova_payload_arm)
    assert np.isinf(held.theta_prior_std[:4]).all()
    assert held.theta_prior_std[4:7] == pytest.approx([PRINCIPAL_AXES_STD] * 3)
    assert held.theta_prior_std[7:10] == pytest.approx([SECOND_MOMENT_LOG_STD] * 3)
    xs, ws = initial_guess(free)
    turn, shift = np.array([0.2, -0.4, 0.1]), np.array([0.3, -0.6, 0.9])
    step = np.r_[0.5, 0.0, 0.0, 0.0, turn, shift]
    theta = free.dynamics.retract(free.dynamics.nominal_theta(), step)
    difference = held.evaluate(xs, ws, theta)[0] - free.evaluate(xs, ws, theta)[0]
    closed_form = 0.5 * np.sum((turn / PRINCIPAL_AXES_STD) ** 2)
    closed_form += 0.5 * np.sum((shift / SECOND_MOMENT_LOG_STD) ** 2)
    assert difference == pytest.approx(closed_form, rel=1e-9)


def test_the_shape_priors_leave_what_the_data_decide(kinova_payload_arm):
    """On the payload arm, whose motion decides every parameter of the link: the same mass,
    CoM and inertia with and without the priors, each within 2e-2 of its std, the mass
    within its std of the simulation's truth."""
    results = []
    for problem in _problems(kinova_payload_arm):
        xs, ws = initial_guess(problem)
        results.append(solve(problem, xs, ws, problem.dynamics.nominal_theta()))
    free, held = results
    assert free.converged and held.converged
    assert np.all(np.abs(held.pis[0] - free.pis[0]) <= 2e-2 * free.pi_std[0])
    _, true, _ = kinova_payload_arm
    mass = true.inertias[true.getJointId(KINOVA_PAYLOAD_BODY)].mass
    assert abs(held.pis[0][0] - mass) <= held.pi_std[0][0]


def test_the_axes_prior_measures_to_the_nearest_half_turn():
    """A body whose principal axes are the prior's turned by pi - 0.1 rad about its x axis has
    the prior's inertia turned by 0.1 rad (a half-turn about a principal axis changes no
    inertia): the residual is 0.1 rad, not 3.04, and its Jacobian matches central
    differences of the retraction there."""
    from physid.oe.model.charts import pis_and_jacobians

    prior = np.r_[0.3, 0.01, 0.02, 0.03, 0.1, -0.2, 0.3, -4.0, -3.0, -2.5]
    theta = prior.copy()
    turned = pin.exp3(prior[4:7]) @ pin.exp3(np.array([np.pi - 0.1, 0.0, 0.0]))
    theta[4:7] = pin.log3(turned)
    near = prior.copy()
    near[4:7] = pin.log3(pin.exp3(prior[4:7]) @ pin.exp3(np.array([-0.1, 0.0, 0.0])))
    (pi_theta, pi_near), _ = pis_and_jacobians("exp_eig", np.stack([theta, near]))
    assert np.allclose(pi_theta, pi_near, atol=1e-12)  # the same inertia as a 0.1 rad turn
    r, J = prior_residual("exp_eig", theta, prior)
    assert np.linalg.norm(r[4:7]) == pytest.approx(0.1, abs=1e-12)
    h, numeric = 1e-6, np.zeros((10, 10))
    for i in range(10):
        step = np.zeros(10)
        step[i] = h
        numeric[:, i] = (
            prior_residual("exp_eig", retract("exp_eig", theta, step), prior)[0]
            - prior_residual("exp_eig", retract("exp_eig", theta, -step), prior)[0]
        ) / (2 * h)
    assert np.allclose(J, numeric, atol=1e-7)


def linear_cost(theta: np.ndarray, gamma: np.ndarray) -> float:
    """``<Gamma, R^T Sigma_c R>`` at the body ``theta`` (``R`` the rotation at theta = 0 of
    the increment): a cost linear in the second moments, as the data's is near a point."""
    R = pin.exp3(theta[4:7])
    sigma = R @ np.diag(np.exp(theta[7:10])) @ R.T
    return float(np.sum(gamma * sigma))


def test_rotation_curvature_matches_central_differences():
    """At a trunk-like body (log second moments -6.6, -8.7, -2.0) and a random symmetric
    gradient ``Gamma`` in the principal frame: the second derivative of ``<Gamma, Sigma_c>``
    along each local rotation increment equals the closed form within 1e-6 (relative)."""
    rng = np.random.default_rng(3)
    theta = np.r_[0.3, 0.01, 0.02, 0.03, 0.4, -0.2, 0.7, -6.6, -8.7, -2.0]
    R = pin.exp3(theta[4:7])
    gamma_principal = rng.normal(size=(3, 3))
    gamma_principal = gamma_principal + gamma_principal.T
    gamma = R @ gamma_principal @ R.T
    log_gradient = np.zeros(10)
    log_gradient[7:10] = np.diag(gamma_principal) * np.exp(theta[7:10])
    closed = rotation_curvature(theta, log_gradient)[4:7]
    h = 1e-4
    numeric = [
        (
            linear_cost(retract("exp_eig", theta, h * e), gamma)
            - 2.0 * linear_cost(theta, gamma)
            + linear_cost(retract("exp_eig", theta, -h * e), gamma)
        )
        / h**2
        for e in np.eye(10)[4:7]
    ]
    assert closed == pytest.approx(numeric, rel=1e-6)
    assert np.all(rotation_curvature(theta, log_gradient)[[0, 1, 2, 3, 7, 8, 9]] == 0.0)


def test_gauss_newton_curvature_of_the_axes_at_moments_pulled_to_zero(kinova_payload_arm):
    """The payload arm's problem with the default shape priors, its body's two smallest log
    second moments pulled 4 and 2.5 below the prior's (as the Go2-like crawl pulls its trunk's,
    towards e^-8): at the point where a cost linear in the second moments balances the prior
    (stationary in the moments and the axes), the Gauss-Newton curvature along each rotation
    of the axes (the prior's 1/1^2 plus the chart's term) equals the exact second derivative of
    that cost plus the prior, by central differences, within 1e-5. Without the chart's term
    it is 1 about the largest moment's axis, where the exact one is 3.94: Gauss-Newton's
    steps of the axes there were 4x too long."""
    problem = _problems(kinova_payload_arm)[1]
    prior, std = problem.theta_prior, problem.theta_prior_std
    theta = prior.copy()
    theta[7:10] += [-4.0, -2.5, 0.0]
    # the data's gradient in the moments that balances the prior: (s0 - s) / std^2
    g = -(theta[7:10] - prior[7:10]) / std[7:10] ** 2
    R = pin.exp3(theta[4:7])
    gamma = R @ np.diag(g / np.exp(theta[7:10])) @ R.T

    def total(t: np.ndarray) -> float:
        r = prior_residual("exp_eig", t, prior)[0][:10] / std[:10]
        finite = np.isfinite(std[:10])
        return linear_cost(t, gamma) + 0.5 * float(np.sum(r[finite] ** 2))

    r, J = problem.dynamics.prior_residual(theta, prior)
    finite = np.isfinite(std)
    Jw = J[finite] / std[finite, None]
    gauss_newton = np.diag(Jw.T @ Jw) + problem._chart_curvature(theta, r)
    h = 1e-4
    exact = []
    for e in np.eye(theta.size)[:10]:
        plus = total(problem.dynamics.retract(theta, h * e)[:10])
        minus = total(problem.dynamics.retract(theta, -h * e)[:10])
        exact.append((plus - 2.0 * total(theta[:10]) + minus) / h**2)
    exact = np.array(exact)
    assert gauss_newton[4:10] == pytest.approx(exact[4:10], rel=1e-5, abs=1e-6)
    largest = int(np.argmax(theta[7:10]))  # the axis of the largest second moment
    assert exact[4 + largest] == pytest.approx(3.94, abs=0.01)
