"""physid oe's default log-normal prior on each estimated body's principal second moments
(physid.oe.model.dynamics.SECOND_MOMENT_LOG_STD): its cost term, and that it leaves what the
data decide where it was."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import KINOVA_PAYLOAD_BODY

from physid.oe.model.dynamics import SECOND_MOMENT_LOG_STD
from physid.oe.model.measurements import Measurements, NoiseStd
from physid.oe.solving.build import initial_guess, make_problem
from physid.oe.solving.solver import solve


def _problems(arm) -> tuple:  # noqa: ANN001
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
            second_moment_std=std,
        )
        for std in (None, SECOND_MOMENT_LOG_STD)
    )


def test_the_prior_is_log_normal_on_the_principal_second_moments_alone(kinova_payload_arm):
    """The cost with the prior minus the cost without, at the nominal body with its three log
    principal second moments moved by (0.3, -0.6, 0.9) and its mass by 0.5 in log: the closed
    form 1/2 sum (ds / 3)^2 of the moments' shifts alone (the mass keeps no prior)."""
    free, held = _problems(kinova_payload_arm)
    assert np.isinf(held.theta_prior_std[:7]).all()
    assert held.theta_prior_std[7:10] == pytest.approx([SECOND_MOMENT_LOG_STD] * 3)
    xs, ws = initial_guess(free)
    theta = free.dynamics.nominal_theta()
    shift = np.array([0.3, -0.6, 0.9])
    theta[7:10] += shift
    theta[0] += 0.5
    difference = held.evaluate(xs, ws, theta)[0] - free.evaluate(xs, ws, theta)[0]
    assert difference == pytest.approx(0.5 * np.sum((shift / SECOND_MOMENT_LOG_STD) ** 2), rel=1e-9)


def test_the_prior_leaves_what_the_data_decide(kinova_payload_arm):
    """On the payload arm, whose motion decides every parameter of the link: the same estimate
    with and without the prior, each coordinate within 1e-2 of its std, the mass within its
    std of the simulation's truth."""
    results = []
    for problem in _problems(kinova_payload_arm):
        xs, ws = initial_guess(problem)
        results.append(solve(problem, xs, ws, problem.dynamics.nominal_theta()))
    free, held = results
    assert free.converged and held.converged
    assert np.all(np.abs(held.theta - free.theta) <= 1e-2 * free.theta_std)
    _, true, _ = kinova_payload_arm
    mass = true.inertias[true.getJointId(KINOVA_PAYLOAD_BODY)].mass
    assert abs(held.pis[0][0] - mass) <= held.pi_std[0][0]
