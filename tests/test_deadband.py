"""The automatic Coulomb deadband (issue 9 item 3): its noise floor and its data-driven width."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from physid.files.config import FilterConfig
from physid.offline.deadband import CANDIDATE_FRACTIONS, candidate_models, choose_deadband
from physid.offline.observations import joint_speed_rms, observation_chunks
from physid.offline.preprocessing import resolve_preprocessing
from physid.offline.reduced import ReductionAccumulator
from physid.signal.butterworth import classical_derivatives, derivative_noise_std


def test_velocity_noise_of_the_derivative_filter_matches_a_monte_carlo():
    """The closed-form noise gain against the empirical std of differentiated white noise."""
    rng = np.random.default_rng(3)
    rate, cutoff, n = 1000.0, 40.0, 60_000
    t = np.arange(n) / rate
    noise_std = np.array([1e-4, 1e-3])
    motion = np.column_stack([0.5 * np.sin(2 * np.pi * 0.3 * t), 0.2 * np.sin(2 * np.pi * t)])
    noise = rng.standard_normal((n, 2)) * noise_std
    predicted = derivative_noise_std([(motion + noise, rate)], cutoff)
    _, dq_noise, _ = classical_derivatives(noise, 1.0 / rate, cutoff)
    measured = dq_noise[1000:-1000].std(axis=0)
    np.testing.assert_allclose(predicted, measured, rtol=0.1)


def _training(arm_experiment, friction_transition_fraction: float | None):
    """The simulated arm's recording, its Coulomb friction made smooth (``fc tanh(dq / v)``,
    ``v`` a fraction of each joint's RMS speed) when a fraction is given. The motion is kept:
    inverse dynamics only needs the torque that this motion took."""
    sim = arm_experiment.train
    recorded = sim.recorded
    if friction_transition_fraction is not None:
        model = arm_experiment.model
        fc = np.array([arm_experiment.theta_true[model.layout.index(f"{j}.fc")]
                       for j in model.joint_names])  # fmt: skip
        width = friction_transition_fraction * np.sqrt(np.mean(sim.dq**2, axis=0))
        smooth = fc * (np.tanh(sim.dq / width) - np.sign(sim.dq))
        recorded = replace(recorded, tau=recorded.tau + smooth)
    return recorded


def _choice(arm_experiment, transition):
    model = arm_experiment.model
    trajectory = _training(arm_experiment, transition)
    preprocessing = resolve_preprocessing(FilterConfig(), [trajectory], model.layout.size)
    options = preprocessing.filter
    noise = np.asarray(preprocessing.velocity_noise_std)
    candidates = candidate_models(model, joint_speed_rms(model, [trajectory], options), noise)
    sums = [ReductionAccumulator() for _ in candidates]
    n_inertial = model.layout.n_inertial
    chunks = observation_chunks(model, trajectory, options, joint_term_models=tuple(candidates))
    for chunk in chunks:
        for total, block in zip(sums, chunk.joint_terms, strict=True):
            total.add(np.concatenate([chunk.W[..., :n_inertial], block], -1), chunk.tau)
    choice = choose_deadband(candidates, [s.system() for s in sums], [trajectory], options)
    assert np.all(choice.deadband >= 3.0 * noise - 1e-15)
    assert set(choice.relative_residuals) == set(CANDIDATE_FRACTIONS)
    return choice


def test_the_deadband_follows_how_smoothly_friction_switches(arm_experiment):
    """A sign-friction plant gets at most the narrowest band (its estimated velocity crosses
    zero a little off the true crossing); a plant whose Coulomb friction is a tanh over 3 % of
    the RMS speed gets a band of that order, with a lower raw residual than none (the torque
    noise of the simulation is most of what remains)."""
    sign_plant = _choice(arm_experiment, None)
    smooth_plant = _choice(arm_experiment, 0.03)
    assert sign_plant.fraction <= 0.005
    assert 0.01 <= smooth_plant.fraction <= 0.05
    residuals = smooth_plant.relative_residuals
    assert residuals[smooth_plant.fraction] < 0.97 * residuals[0.0]  # measured: 0.94


def test_the_simulators_friction_law_is_the_regressors():
    """physid.sim.arm's friction from vectors taken once equals the joint-term regressor times
    theta (ddq = 0), deadband included, at speeds on both sides of it and at zero."""
    from physid.robot.model import build_robot_model
    from physid.robot.regressor import joint_term_regressor
    from physid.sim.arm import _friction_law, arm6_model, true_parameters

    arm = arm6_model()
    model = build_robot_model(arm.pin_model, coulomb_deadband=0.05)
    theta = true_parameters(model, np.random.default_rng(4))
    law = _friction_law(model, theta)
    zeros = np.zeros((1, model.n_joints))
    rng = np.random.default_rng(5)
    for dq in (rng.standard_normal(model.n_joints) * 0.06, np.zeros(model.n_joints)):
        want = joint_term_regressor(model, dq[None], zeros)[0] @ theta[model.layout.n_inertial :]
        np.testing.assert_allclose(law(dq), want, rtol=1e-13, atol=1e-13)


def test_each_deadband_block_is_that_model_s_own_decimated_joint_terms(arm_experiment):
    # the blocks after the first filter only the columns where they differ from it: each must
    # still be exactly what observing the recording under that model alone gives
    model = arm_experiment.model
    trajectory = _training(arm_experiment, None)
    preprocessing = resolve_preprocessing(FilterConfig(), [trajectory], model.layout.size)
    options = preprocessing.filter
    noise = np.asarray(preprocessing.velocity_noise_std)
    candidates = candidate_models(model, joint_speed_rms(model, [trajectory], options), noise)
    n_inertial = model.layout.n_inertial
    chunks = list(
        observation_chunks(model, trajectory, options, joint_term_models=tuple(candidates))
    )
    assert chunks[0].W.shape[-1] == n_inertial  # W's own joint terms are the blocks' business
    for k, candidate in enumerate(candidates):
        alone = list(observation_chunks(candidate, trajectory, options))
        assert len(alone) == len(chunks)
        for chunk, own in zip(chunks, alone, strict=True):
            np.testing.assert_array_equal(chunk.W, own.W[..., :n_inertial])
            np.testing.assert_array_equal(chunk.joint_terms[k], own.W[..., n_inertial:])
    differs = [np.any(chunks[0].joint_terms[k] != chunks[0].joint_terms[0]) for k in (1, 2)]
    assert all(differs)  # the candidates' sign columns differ (the test compares something)
