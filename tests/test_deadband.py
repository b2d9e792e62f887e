"""The automatic Coulomb deadband (issue 9 item 3): its noise floor and its data-driven width."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from physid.files.config import FilterConfig
from physid.offline.choose.deadband import CANDIDATE_FRACTIONS, candidate_models, choose_deadband
from physid.offline.observe.observations import joint_speed_rms, observation_chunks
from physid.offline.observe.preprocessing import resolve_preprocessing
from physid.offline.observe.reduced import ReductionAccumulator
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


def test_a_per_joint_mix_is_exactly_those_rows_of_the_shared_candidates(arm_experiment):
    """The per-joint candidate (physid.offline.choose.deadband_joints) takes each joint's rows of
    the
    fold systems and of the stored joint-term block from the candidate it picks: it must equal
    observing the recording under that mixed deadband alone (normal equations per fold, and the
    stored regressor)."""
    from physid.files.config import IdentifyConfig
    from physid.offline.choose.deadband_joints import with_per_joint_candidate
    from physid.offline.choose.training import observe_candidate
    from physid.offline.observe.folds import FoldPlan

    model = arm_experiment.model
    train = [_training(arm_experiment, 0.03)]
    preprocessing = resolve_preprocessing(FilterConfig(), train, model.layout.size)
    folds = FoldPlan.of(train)

    def observe(robot):
        return observe_candidate(robot, IdentifyConfig(), preprocessing, train, folds,
                                 gravity_regressors=False, note=lambda _message: None)  # fmt: skip

    shared = observe(model)
    picks = np.array([0, 4, 0, 2, 0, 1])
    mixed = with_per_joint_candidate(shared, picks)
    index = len(mixed.models) - 1
    alone = observe(mixed.models[index])
    assert len(alone.models) == 1  # the mixed deadband is given: observed as it is
    np.testing.assert_array_equal(
        mixed.models[index].coulomb_deadband,
        [shared.models[k].coulomb_deadband[j] for j, k in enumerate(picks)],
    )
    for ours, theirs in zip(mixed.folds[index], alone.folds[0], strict=True):
        for j in range(model.n_joints):
            R, z = ours.R[j], ours.z[j]
            R0, z0 = theirs.R[j], theirs.z[j]
            for got, want in ((R.T @ R, R0.T @ R0), (R.T @ z, R0.T @ z0)):
                np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    ours = list(mixed.training(index).store)
    theirs = list(alone.training(0).store)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.W, b.W)
    first = next(iter(shared.training(0).store)).W
    assert all(np.any(first != next(iter(shared.training(k).store)).W) for k in (1, 4))


def test_a_joint_whose_friction_switches_smoothly_gets_its_own_deadband(
    arm_experiment, monkeypatch
):
    """The simulated arm with joint_2's Coulomb friction 3 fc tanh(dq / (0.1 x RMS speed)) and
    sign friction on the others: every shared band makes the others worse, so the shared
    candidates keep none (held-out 6.69 %, joint_2 7.12 %); the per-joint candidate gives
    joint_2 alone the widest band (5.53 %, joint_2 5.60 %, the others unchanged)."""
    import physid.offline.choose.choices as choices
    from physid.files.config import parse_config
    from physid.offline.pipeline import identify

    model = arm_experiment.model
    theta = arm_experiment.theta_true
    fc = theta[model.layout.index("joint_2.fc")]
    rms = np.sqrt(np.mean(arm_experiment.train.dq[:, 1] ** 2))

    def plant(sim):
        extra = np.zeros_like(sim.dq)
        extra[:, 1] = 3 * fc * (np.tanh(sim.dq[:, 1] / (0.1 * rms)) - np.sign(sim.dq[:, 1]))
        return replace(sim.recorded, tau=sim.recorded.tau + extra)

    train, held = plant(arm_experiment.train), plant(arm_experiment.validation)

    def run():  # WLS in both: the folds' weighting choice would confound the deadband's effect
        config = parse_config({"estimation": {"weighting": "wls"}})
        result = identify(model, [train], config, validation=[held])
        choice = next(c for c in result.choices.scored if c.what == "Coulomb deadband")
        return choice, result.validation

    choice, per_joint = run()
    monkeypatch.setattr(choices, "per_joint_picks", lambda scores: None)
    shared_choice, shared = run()
    assert choice.label.startswith("per joint (joint_1 0, joint_2 0.05, joint_3 0,")
    assert shared_choice.label == "0 x RMS speed"
    errors, shared_errors = per_joint.relative_error_per_joint, shared.relative_error_per_joint
    assert errors[1] < 0.85 * shared_errors[1]
    others = [0, 2, 3, 4, 5]
    np.testing.assert_allclose(errors[others], shared_errors[others], rtol=0.01)
    assert per_joint.relative_error < 0.9 * shared.relative_error
