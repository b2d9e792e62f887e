"""Issue 24 item 4: masses far from the URDF's are refitted with a tighter prior on the bodies
(``physid.offline.choose.against_prior.plausible_prior``), but strong data keep theirs.

Known truth: the demo arm (``physid.sim.arm``) carrying on its last body 4x that body's
pseudo-inertia (a tool the CAD does not have: 1.38 kg where the URDF says 0.4 kg). The data see
the extra first moment through every gravity-loaded joint; a prior tight enough to bring the body
back within 2x the URDF's cannot fit it, and the folds say so. The real-data side (the prior
deciding where the folds cannot tell) is checked on the KUKA LWR4+ and xMate7p recordings
(tests/test_real_data.py, tests/test_real_corpus.py).
"""

from __future__ import annotations

import numpy as np

import physid
from physid.recordings.trajectory import write_trajectory_csv
from physid.sim.arm import arm6_model, arm6_urdf_path, simulate_random_excitation, true_parameters


def test_a_tool_the_urdf_lacks_keeps_its_mass_and_is_named(tmp_path):
    model = arm6_model()
    rng = np.random.default_rng(5)
    theta = true_parameters(model, rng)
    last = model.layout.body_joints[-1]
    theta[model.layout.body_slice(last)] *= 4.0  # mass, first and second moments: consistent
    runs = [
        write_trajectory_csv(tmp_path / f"{name}.csv", simulate_random_excitation(
            model, theta, duration_s=duration, sample_rate_hz=500.0, rng=rng).recorded)
        for name, duration in (("train", 10.0), ("held", 6.0))
    ]  # fmt: skip
    result = physid.identify(arm6_urdf_path(), [runs[0]], validate=[runs[1]], out=tmp_path / "o")
    document = result.document
    assert document["status"] == "ok"
    checked = document["fit"]["cross_validation"]
    # Measured: the fit finds 1.18 +- 0.16 kg (truth 1.375, URDF 0.4); with the bodies' prior std
    # x0.03, the first scale that brings it within 2x, the folds' error rises 2.92 -> 3.87 %
    # (spread 0.38 points): the data's masses are kept.
    assert checked["implausible_masses"] and checked["body_prior_scale"] == 1.0
    refit, given = checked["plausibility"]["candidates"]
    assert checked["plausibility"]["chosen"] == given["label"]
    assert refit["relative_error"] > given["relative_error"]
    body = document["bodies"][last]
    truth = theta[model.layout.body_slice(last)][0]
    assert body["mass"] > 2.0 * body["prior"]["mass"]
    assert abs(body["mass"] - truth) <= 2.0 * body["std"]["mass"]
    assert any(w.startswith("the data ask for these masses") for w in document["fit"]["warnings"])
    assert document["fit"]["validation"]["relative_error"] < 0.05  # measured 3.76 %


def test_a_moving_mass_the_static_torques_contradict_is_named():
    """``static_contradiction``: a fit whose moving mass leaves 1/3-3 x the URDF's while every
    gravity-loaded joint's static torque reads the URDF's gravity torque within 0.5-2 x is paying
    with the masses for something else (a MuJoCo Panda logged with its command before the
    actuator clipped it: 9 x, static torques 0.99-1.21 x). A URDF that is wrong by that much
    reads so in the static torques too (a tool, placeholder masses): not named then."""
    from physid.offline.checks.plausibility import static_contradiction

    model = arm6_model()
    prior = model.prior_parameters()
    heavy = prior.copy()
    heavy[model.layout.mass_indices] *= 4.0
    agree = {"joint_2": 0.99, "joint_3": 1.21}
    phrase = static_contradiction(model, heavy, prior, agree)
    assert phrase is not None and "is 4 x the URDF's 30.6 kg" in phrase, phrase
    assert "static torques read 0.99-1.21 x" in phrase
    assert static_contradiction(model, heavy, prior, {"joint_2": 3.9, "joint_3": 1.2}) is None
    assert static_contradiction(model, heavy, prior, {}) is None
    twice = prior.copy()
    twice[model.layout.mass_indices] *= 2.5  # implausible, not absurd: the folds decide
    assert static_contradiction(model, twice, prior, agree) is None
    light = prior.copy()
    light[model.layout.mass_indices] *= 0.25
    assert "is 0.25 x the URDF's" in static_contradiction(model, light, prior, agree)


def test_implausible_masses_need_more_than_a_sliver_of_the_error():
    """On nearly noise-free data the folds' spread is tiny: a dual-arm robot in MuJoCo with one
    arm held still kept 9.2 kg on a 2.6 kg link for 0.0037 points of 2.26 % ("the data ask for
    these masses ... 2.26 % vs 2.26 %"). The implausible fit must also win by 1 % of the error;
    the real case that keeps one (the DFKI pendulum) does so by 23 %."""
    from physid.offline.choose.against_prior import plausibility_choice
    from physid.offline.observe.crossval import CVScore

    folds = np.array([0.0225, 0.0228, 0.0226, 0.0227])
    refit = CVScore("0.23", folds, 0.02264)
    sliver = CVScore("1", folds - 0.00004, 0.02260)  # wins every fold, by 0.18 % of the error
    choice = plausibility_choice(refit, sliver)
    assert choice.chosen == 0 and "0.18 % of the error" in choice.reason
    clear = CVScore("1", folds - 0.0005, 0.02214)  # by 2.2 %
    assert plausibility_choice(refit, clear).chosen == 1
