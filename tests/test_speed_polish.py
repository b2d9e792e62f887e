"""The consistent fit's objective as the Newton steps evaluate it (physid.offline.fit.polish,
batched products and a Hessian assembled once per objective) against its definition: the value
from the log-determinant itself, the gradient and Hessian from central differences."""

from __future__ import annotations

import numpy as np
import pytest

from physid.body.inertia import pi_from_pseudo_inertia, pseudo_inertia
from physid.offline.fit.consistent import ConsistentProblem
from physid.offline.observe.reduced import reduce_observations
from physid.robot.regressor import observation_matrix
from physid.sim.arm import arm6_model, true_parameters


@pytest.fixture(scope="module")
def objective():
    rng = np.random.default_rng(11)
    model = arm6_model()
    theta = true_parameters(model, rng)
    n = 300
    q, dq, ddq = rng.uniform(-2, 2, (n, 6)), rng.standard_normal((n, 6)), rng.normal(size=(n, 6))
    W = observation_matrix(model, q, dq, ddq)
    tau = W @ theta + rng.normal(0.0, 0.1, (n, 6))
    prior = model.prior_parameters()
    problem = ConsistentProblem(model, prior, margin=1e-6, prior_metric="logdet")
    return problem.objective(
        reduce_observations(W, tau),
        np.ones(6),
        noise_variance=0.01,
        prior_std_relative=0.3,
        prior_total_mass_std_relative=0.02,
        joint=None,
    )


def _by_definition(objective, x: np.ndarray) -> float:
    """The objective written out: data, joint prior, total mass, each body's log-det
    divergence ``tr(J0^-1 J) - 4 - log det(J0^-1 J)``."""
    theta = objective.prior + objective.scales * x
    value = float(np.sum((objective.A @ x - objective.b) ** 2))
    value += float(np.sum((objective.joint_weight * x) ** 2))
    masses = theta[: 10 * objective.n_bodies : 10]
    value += objective.mass_weight * (float(np.sum(masses)) - objective.prior_mass) ** 2
    for k in range(objective.n_bodies):
        J = pseudo_inertia(theta[10 * k : 10 * k + 10])
        J0 = pseudo_inertia(objective.prior[10 * k : 10 * k + 10])  # regular: not lifted
        (sign, logdet), (sign0, logdet0) = np.linalg.slogdet(J), np.linalg.slogdet(J0)
        assert sign > 0 and sign0 > 0
        divergence = np.trace(np.linalg.solve(J0, J)) - 4.0 - (logdet - logdet0)
        value += objective.inertial_weight * divergence
    return value


def test_value_gradient_and_hessian_match_the_definition(objective) -> None:
    rng = np.random.default_rng(12)
    x = 1e-3 * rng.standard_normal(objective.b.size)
    x[objective.held] = 0.0
    value, gradient, hessian = objective.value_gradient_hessian(x)
    assert value == pytest.approx(_by_definition(objective, x), rel=1e-10)
    assert objective.value_gradient_hessian(x, derivatives=False)[0] == value
    step = 1e-6
    for i in rng.choice(x.size, 12, replace=False):
        e = np.zeros_like(x)
        e[i] = step
        upper = objective.value_gradient_hessian(x + e)
        lower = objective.value_gradient_hessian(x - e)
        numeric = (upper[0] - lower[0]) / (2 * step)
        assert gradient[i] == pytest.approx(numeric, rel=1e-5, abs=1e-6 * np.abs(gradient).max())
        column = (upper[1] - lower[1]) / (2 * step)
        scale = np.abs(hessian).max()
        assert np.allclose(hessian[:, i], column, rtol=1e-5, atol=1e-6 * scale)
    assert np.allclose(hessian, hessian.T, rtol=0, atol=1e-12 * np.abs(hessian).max())


def test_feasibility_reads_the_pseudo_inertia(objective) -> None:
    """The first body's pseudo-inertia with its smallest eigenvalue just above the margin is
    feasible, just below it is not."""
    free = np.zeros(objective.b.size, bool)  # the bodies only
    assert objective.feasible(np.zeros(objective.b.size), free)
    J0 = pseudo_inertia(objective.prior[:10])
    values, vectors = np.linalg.eigh(J0)
    for smallest, expected in ((1.001 * objective.margin, True), (0.999 * objective.margin, False)):
        J = J0 + (smallest - values[0]) * np.outer(vectors[:, 0], vectors[:, 0])
        x = np.zeros(objective.b.size)
        x[:10] = (pi_from_pseudo_inertia(J) - objective.prior[:10]) / objective.scales[:10]
        assert objective.feasible(x, free) is expected
