"""The Newton polish of the consistent fit (physid.offline.polish): its point is the optimum of
the problem CVXPY states, checked through CVXPY's own evaluation of that objective (an
implementation the polish shares nothing with), and it does not move with the last bits of
the data as the interior-point solver's stopping point does."""

from __future__ import annotations

import numpy as np
import pytest

from physid.offline.consistent import ConsistentProblem, consistent_least_squares, solve_sdp
from physid.offline.reduced import reduce_observations
from physid.robot.regressor import observation_matrix
from physid.sim.arm import arm6_model, true_parameters


@pytest.fixture(scope="module")
def arm():
    rng = np.random.default_rng(3)
    model = arm6_model()
    theta = true_parameters(model, rng)
    # the last joint's Coulomb friction truly 0: the data push it below its bound
    theta[model.layout.index("joint_6.fc")] = 0.0
    n = 400
    q, dq, ddq = (rng.uniform(-2, 2, (n, 6)), rng.standard_normal((n, 6)),
                  rng.standard_normal((n, 6)))  # fmt: skip
    W = observation_matrix(model, q, dq, ddq)
    tau = W @ theta
    noise = 0.05 * tau.std()
    noisy = tau + rng.normal(0.0, noise, tau.shape)
    return model, W, noisy, noise**2


def _fit(arm, tau, problem=None):
    model, W, _, variance = arm
    return consistent_least_squares(
        model, reduce_observations(W, tau), np.ones(6), model.prior_parameters(),
        noise_variance=variance, problem=problem,
    )  # fmt: skip


def _cvxpy_objective(problem: ConsistentProblem, x: np.ndarray) -> float:
    problem.x.value = x
    return float(problem.problem.objective.value)


def test_the_polished_point_is_the_optimum_of_the_stated_problem(arm):
    model, W, tau, _ = arm
    problem = ConsistentProblem(model, model.prior_parameters(), margin=1e-6, prior_metric="logdet")
    fit = _fit(arm, tau, problem)
    assert fit.status == "optimal" and fit.consistent and fit.polished
    polished = (fit.theta - problem.prior) / problem.scales
    assert solve_sdp(problem.problem) == "optimal"  # the solver's own point, same data
    solver = problem.x.value.copy()
    assert _cvxpy_objective(problem, polished) <= _cvxpy_objective(problem, solver) + 1e-12

    # stationary on the terms not at a bound (CVXPY's objective by central differences; the
    # solver's own point measured 1.1e-5 here, the polished one the differences' truncation)
    bound = problem.non_negative & (fit.theta == 0.0)
    fc = model.layout.index("joint_6.fc")
    assert bound[fc]  # the data want it negative
    held = np.asarray(problem.held.value) > 0
    h = 1e-6
    gradient = np.zeros(polished.size)
    for i in np.flatnonzero(~held):
        step = np.zeros(polished.size)
        step[i] = h
        gradient[i] = (
            _cvxpy_objective(problem, polished + step) - _cvxpy_objective(problem, polished - step)
        ) / (2 * h)
    scale = np.max(np.abs(gradient))
    assert np.max(np.abs(gradient[~bound & ~held])) < 1e-7 * scale
    assert np.all(gradient[bound] > 0.0)  # every term at its bound pushes against it


def test_the_polished_fit_does_not_move_with_the_last_bits_of_the_data(arm):
    _, _, tau, _ = arm
    nudged = tau * (1.0 + 1e-13 * np.random.default_rng(7).standard_normal(tau.shape))
    a, b = _fit(arm, tau).theta, _fit(arm, nudged).theta
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
