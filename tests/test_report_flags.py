"""The report's flags (issue 28 item 8): parameters held at the bound of the consistent fit and
joints the model misses badly, checked on a fit whose truth puts them there."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from physid.files.config import IdentifyConfig
from physid.offline import consistent
from physid.offline.metrics import FitMetrics
from physid.offline.pipeline import identify
from physid.report.flags import (
    NON_NEGATIVE_TERMS,
    missed_joints,
    parameters_at_bound,
    report_warnings,
)
from physid.sim.arm import arm6_model, simulate_random_excitation, true_parameters


def test_the_flagged_terms_are_the_ones_the_consistent_fit_constrains():
    assert NON_NEGATIVE_TERMS == consistent._NON_NEGATIVE_TERMS


def test_a_frictionless_joint_is_flagged_at_the_bound_and_a_missed_joint_is_warned():
    model = arm6_model()
    rng = np.random.default_rng(8)
    theta = true_parameters(model, rng)
    # joint_4 truly has no viscous friction: noise makes its least-squares estimate negative
    # about half of the time, and the consistent fit then holds it at 0 (this seed does).
    theta[model.layout.index("joint_4.fv")] = 0.0
    sim = simulate_random_excitation(model, theta, duration_s=10.0, sample_rate_hz=500.0, rng=rng)
    result = identify(model, [sim.recorded], IdentifyConfig())
    fv = model.layout.index("joint_4.fv")
    # The independent check: the unconstrained least squares put joint_4.fv below 0 (its own
    # base parameter), which the consistent fit may not follow.
    base = list(result.base.names).index("joint_4.fv")
    unconstrained = np.full(result.base.size, np.nan)
    unconstrained[result.excited] = result.least_squares.theta
    assert unconstrained[base] < 0, "this seed was chosen for a negative least-squares fv"
    bound = parameters_at_bound(result)
    assert fv in bound and result.theta[fv] < 1e-6
    assert all(result.theta[i] <= 1e-6 * (0.01 if ".Ia" in model.layout.names[i] else 1.0)
               for i in bound)  # fmt: skip
    assert not missed_joints(result)  # the simulated model is the identified one: no joint missed
    # the same result with joint_2's held-out error at 40 %: warned, by name and number
    per_joint = np.full(model.n_joints, 0.02)
    per_joint[1] = 0.4
    bad = replace(result, validation=FitMetrics(0.05, np.ones(6), 100, per_joint))
    assert missed_joints(bad) == {"joint_2": 0.4}
    assert any("joint_2 40 %" in w for w in report_warnings(bad))
