"""physid.offline.stages.undecided: how far a refit moves the masses, in their posterior std."""

from __future__ import annotations

import numpy as np

from physid.offline.fit.uncertainty import BodyUncertainty
from physid.offline.stages.undecided import mass_shift_std
from physid.sim.arm import arm6_model, true_parameters


def _bodies(model, mass_std: float) -> dict[str, BodyUncertainty]:  # noqa: ANN001
    zero3 = np.zeros(3)
    return {
        joint: BodyUncertainty(mass_std, zero3, np.zeros((3, 3)), "data", "data", "data")
        for joint in model.layout.body_joints
    }


def test_the_largest_shift_of_a_body_or_the_moving_mass_in_its_std():
    model = arm6_model()
    theta = true_parameters(model, np.random.default_rng(0))
    layout = model.layout
    other = theta.copy()
    joints = layout.body_joints
    other[layout.body_slice(joints[1])][0] += 0.6  # +0.6 kg on one body (std 0.2: 3 std)
    other[layout.body_slice(joints[2])][0] -= 0.2  # -0.2 kg on another (1 std)
    # moving mass +0.4 kg against a std of 1 kg: 0.4; the bodies decide
    assert np.isclose(mass_shift_std(model, theta, other, _bodies(model, 0.2), 1.0), 3.0)
    # a moving mass pinned tighter than its bodies: +0.4 kg at 0.1 kg is 4 std
    assert np.isclose(mass_shift_std(model, theta, other, _bodies(model, 10.0), 0.1), 4.0)
    # no shift at all
    assert mass_shift_std(model, theta, theta, _bodies(model, 0.2), 1.0) == 0.0
