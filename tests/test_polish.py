"""The Newton solve and polish of the consistent fit (physid.offline.fit.polish): their point is the
optimum of the problem CVXPY states, checked through CVXPY's own evaluation of that objective
and Clarabel's own solution (implementations the Newton steps share nothing with), and it does
not move with the last bits of the data as the interior-point solver's stopping point does."""

from __future__ import annotations

import numpy as np
import pytest

from physid.body.inertia import pseudo_inertia
from physid.offline.fit import polish as newton
from physid.offline.fit.consistent import ConsistentProblem, consistent_least_squares, solve_sdp
from physid.offline.fit.joint_prior import JointPrior
from physid.offline.observe.reduced import reduce_observations
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
    problem.sdp.x.value = x
    return float(problem.sdp.problem.objective.value)


def _options(arm) -> dict:
    return dict(noise_variance=arm[3], prior_std_relative=0.3,
                prior_total_mass_std_relative=0.02, joint=None)  # fmt: skip


@pytest.mark.parametrize("method", ["auto", "sdp"])
def test_the_newton_point_is_the_optimum_of_the_stated_problem(arm, method):
    # auto: Newton steps from the prior, no interior-point solver; sdp: Clarabel, then the polish
    model, W, tau, _ = arm
    problem = ConsistentProblem(model, model.prior_parameters(), margin=1e-6, prior_metric="logdet")
    system = reduce_observations(W, tau)
    fit = problem.solve(system, np.ones(6), **_options(arm), method=method)
    assert fit.status == "optimal" and fit.consistent and fit.polished
    assert fit.method == ("newton" if method == "auto" else "clarabel")
    polished = (fit.theta - problem.prior) / problem.scales
    problem.sdp.fill(problem.objective(system, np.ones(6), **_options(arm)))
    assert solve_sdp(problem.sdp.problem) == "optimal"  # the solver's own point, same data
    solver = problem.sdp.x.value.copy()
    assert _cvxpy_objective(problem, polished) <= _cvxpy_objective(problem, solver) + 1e-12

    # stationary on the terms not at a bound (CVXPY's objective by central differences; the
    # solver's own point measured 1.1e-5 here, the polished one the differences' truncation)
    bound = problem.non_negative & (fit.theta == 0.0)
    fc = model.layout.index("joint_6.fc")
    assert bound[fc]  # the data want it negative
    held = np.asarray(problem.sdp.held.value) > 0
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


def test_newton_from_the_prior_and_clarabel_reach_the_same_fit(arm):
    model, W, tau, _ = arm
    problem = ConsistentProblem(model, model.prior_parameters(), margin=1e-6, prior_metric="logdet")
    system = reduce_observations(W, tau)
    newton = problem.solve(system, np.ones(6), **_options(arm))
    clarabel = problem.solve(system, np.ones(6), **_options(arm), method="sdp")
    assert (newton.method, clarabel.method) == ("newton", "clarabel")
    np.testing.assert_allclose(newton.theta, clarabel.theta, rtol=1e-8, atol=1e-10)


def test_clarabel_solves_what_newton_steps_cannot(arm):
    # the euclidean metric: no barrier, a body's cone constraint may be active
    model, W, tau, _ = arm
    euclidean = ConsistentProblem(model, model.prior_parameters(), margin=1e-6,
                                  prior_metric="euclidean")  # fmt: skip
    fit = euclidean.solve(reduce_observations(W, tau), np.ones(6), **_options(arm))
    assert fit.method == "clarabel" and fit.status == "optimal" and fit.consistent


@pytest.mark.parametrize("inertia", ["point mass", "point mass off the origin", "not a rigid body"])
def test_a_degenerate_urdf_body_is_fitted_by_newton_steps(arm, inertia):
    """A URDF body outside the cone or on its boundary (the Staubli TX40's last link is a 0.2 kg
    point mass) is the divergence's centre lifted 10 margins inside it. Lifted only to 1e-6 of
    its trace (2e-7 kg m^2 for the TX40's), that centre lay below the 1e-6 margin, the
    constraint was active at every optimum and every fit went to Clarabel; now Newton steps
    from the lifted prior reach the optimum of Clarabel's SDP."""
    import pinocchio as pin

    model, W, tau, _ = arm
    prior = model.prior_parameters().copy()
    body = model.layout.body_slice("joint_3")
    if inertia == "point mass":
        prior[body.start + 1 : body.stop] = 0.0  # at the origin, no rotational inertia
    elif inertia == "point mass off the origin":
        point = pin.Inertia(float(prior[body.start]), np.array([0.0, 0.0, 0.05]), np.zeros((3, 3)))
        prior[body] = point.toDynamicParameters()
    else:
        prior[body.start + 4] = -abs(prior[body.start + 4]) - 1.0  # Ixx < 0
    assert np.linalg.eigvalsh(pseudo_inertia(prior[body]))[0] < 1e-12
    problem = ConsistentProblem(model, prior, margin=1e-6, prior_metric="logdet")
    system = reduce_observations(W, tau)
    fit = problem.solve(system, np.ones(6), **_options(arm))
    assert (fit.method, fit.status, fit.consistent) == ("newton", "optimal", True)
    clarabel = problem.solve(system, np.ones(6), **_options(arm), method="sdp")
    assert clarabel.method == "clarabel" and clarabel.consistent
    np.testing.assert_allclose(fit.theta, clarabel.theta, rtol=1e-6, atol=1e-9)


def test_the_continuation_along_the_prior_weight_reaches_the_same_optimum(arm):
    # the path a weak prior's hardest fits take (direct damped steps that shrink): from the
    # prior, the optimum at 10^k times the weight, k down to 0, each the next start
    model, W, tau, _ = arm
    problem = ConsistentProblem(model, model.prior_parameters(), margin=1e-6, prior_metric="logdet")
    system = reduce_observations(W, tau)
    options = {**_options(arm), "prior_std_relative": 3.0}  # a weak prior: several decades
    objective = problem.objective(system, np.ones(6), **options)
    assert objective.inertial_weight < 1e-3
    start = np.zeros(objective.b.size)
    candidates = objective.non_negative & ~objective.held
    start[candidates] = np.maximum(0.0, -objective.prior[candidates]
                                   / objective.scales[candidates] + 1e-3)  # fmt: skip
    x = newton._continuation(objective, start)
    clarabel = problem.solve(system, np.ones(6), **options, method="sdp")
    np.testing.assert_allclose(problem.prior + problem.scales * x, clarabel.theta,
                               rtol=1e-7, atol=1e-9)  # fmt: skip


def test_a_fit_does_not_depend_on_the_fit_solved_before_it(arm):
    # each solve starts at the last optimum: a weak prior leaves flat directions where the steps
    # stopped 4e-9 apart (relative) until the last Newton step was taken (review of stop 51)
    model, W, tau, _ = arm
    problem = ConsistentProblem(model, model.prior_parameters(), margin=1e-6, prior_metric="logdet")
    options = {**_options(arm), "prior_std_relative": 3.0}
    whole, fold = reduce_observations(W, tau), reduce_observations(W[:300], tau[:300])
    first = problem.solve(whole, np.ones(6), **options)
    problem.solve(fold, np.ones(6), **options)
    again = problem.solve(whole, np.ones(6), **options)
    assert first.method == again.method == "newton"
    np.testing.assert_allclose(again.theta, first.theta, rtol=1e-11, atol=1e-14)


def test_a_term_held_below_its_bound_is_left_to_clarabel(arm):
    # a URDF friction below zero, held at its prior: Newton steps would return it as optimal,
    # the SDP (non-negative friction) calls it infeasible; both paths now say so
    model, W, tau, _ = arm
    prior = model.prior_parameters().copy()
    n_params, first = model.layout.size, model.layout.n_inertial
    fv = model.layout.index("joint_1.fv")
    prior[fv] = -0.1
    std = np.full(n_params, np.nan)
    std[first:] = 0.5
    held = np.zeros(n_params, bool)
    held[fv] = True
    joint = JointPrior(mean=prior.copy(), std=std, held=held, torque_rms=np.ones(6))
    problem = ConsistentProblem(model, prior, margin=1e-6, prior_metric="logdet")
    options = {**_options(arm), "joint": joint}
    fit = problem.solve(reduce_observations(W, tau), np.ones(6), **options)
    assert fit.method == "clarabel" and fit.status == "infeasible" and fit.theta is None
    # and so after a solve where the term was free: the Newton steps from that optimum obey it
    free = problem.solve(reduce_observations(W, tau), np.ones(6), **_options(arm))
    assert free.method == "newton" and free.theta[fv] >= 0.0
    fit = problem.solve(reduce_observations(W, tau), np.ones(6), **options)
    assert fit.method == "clarabel" and fit.status == "infeasible" and fit.theta is None


def test_a_small_robot_gets_a_margin_its_bodies_can_keep():
    """The margin J >= m I scales down for small robots (consistent.default_margin): 1e-6 kg m^2
    was a large part of the SO-101 arm's 12 g gripper (smallest pseudo-inertia eigenvalue
    2.6e-7), so its prior sat on the constraint and every fit went to Clarabel, which stopped
    "optimal_inaccurate"; the shared real arms keep 1e-6."""
    from physid.files.config import parse_config, robot_for
    from physid.offline.fit.consistent import DEFAULT_MARGIN, default_margin
    from physid.sim.oe_robots import robot_urdf

    arm6 = arm6_model()
    assert default_margin(arm6, arm6.prior_parameters()) == DEFAULT_MARGIN
    so101 = robot_for(robot_urdf("so_arm_description/urdf/so101.urdf"), parse_config({}))
    prior = so101.prior_parameters()
    gripper = pseudo_inertia(prior[so101.layout.body_slice("gripper")])
    smallest = float(np.linalg.eigvalsh(gripper)[0])
    assert smallest == pytest.approx(2.6016e-7, rel=1e-4)
    assert default_margin(so101, prior) == pytest.approx(0.1 * smallest, rel=1e-12)
    # a margin given in the config is a constraint, not a change of the prior: the gripper, a
    # regular body, stays the URDF's centre of the divergence even under a 1e-6 margin
    given = ConsistentProblem(so101, prior, margin=1e-6, prior_metric="logdet")
    centres = np.linalg.inv(given.root_inverses.transpose(0, 2, 1) @ given.root_inverses)
    k = so101.layout.body_joints.index("gripper")
    np.testing.assert_allclose(centres[k], gripper, rtol=1e-9, atol=1e-15)
    assert not np.any(given.lifted_start)


def test_a_small_body_is_fitted_by_newton_steps_under_the_default_margin(arm):
    # arm6's last body shrunk to the SO-101 gripper's size (its pseudo-inertia scaled down)
    model, W, tau, _ = arm
    prior = model.prior_parameters().copy()
    body = model.layout.body_slice("joint_6")
    prior[body] *= 2.6e-7 / float(np.linalg.eigvalsh(pseudo_inertia(prior[body]))[0])
    system = reduce_observations(W, tau)
    auto = ConsistentProblem(model, prior, margin=None, prior_metric="logdet")
    fit = auto.solve(system, np.ones(6), **_options(arm))
    assert (fit.method, fit.status, fit.consistent) == ("newton", "optimal", True)
    assert fit.margin == pytest.approx(2.6e-8)
    clarabel = auto.solve(system, np.ones(6), **_options(arm), method="sdp")
    np.testing.assert_allclose(fit.theta, clarabel.theta, rtol=1e-6, atol=1e-9)


def test_a_sub_gram_body_sets_no_margin_and_is_lifted():
    # one criterion for "singular" (smallest pseudo-inertia eigenvalue below 1e-6 of its trace,
    # the trace floored at 1e-3): a 0.5 g body whose eigenvalue is 7.5e-10 kg m^2 once set the
    # default margin to 7.5e-11 while its prior was lifted as a singular body's
    import pinocchio as pin

    from physid.offline.fit.consistent import DEFAULT_MARGIN, default_margin

    model = arm6_model()
    prior = model.prior_parameters().copy()
    body = model.layout.body_slice("joint_6")
    tiny = pin.Inertia(5e-4, np.array([0.0, 0.0, 0.01]), 1.5e-9 * np.eye(3))
    prior[body] = tiny.toDynamicParameters()
    smallest = float(np.linalg.eigvalsh(pseudo_inertia(prior[body]))[0])
    assert 1e-6 * 5e-4 < smallest < 1e-9
    assert default_margin(model, prior) == DEFAULT_MARGIN
    problem = ConsistentProblem(model, prior, margin=None, prior_metric="logdet")
    assert np.any(problem.lifted_start[body])
