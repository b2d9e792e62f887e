"""Issue 24 item 4: masses far from the URDF's are refitted with a tighter prior on the bodies
(``physid.offline.against_prior.plausible_prior``), but strong data keep theirs.

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
