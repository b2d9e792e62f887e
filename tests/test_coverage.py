"""Issue 9 item 6: calibrated uncertainty on the independent simulator.

Fifteen cases (five seeds of each MuJoCo robot of ``benchmarks/independent_sim.py``: arm5p
with a prismatic joint, arm6, scara4; its own engine, tanh Coulomb friction, damping, armature,
jitter, quantisation, torque noise), each with its own robot prior, excitations and noise,
identified with physid's defaults: 95-99.9 % of the identified base parameters, all cases
together, must lie within 3 standard deviations (params.json ``base_parameters.std``) of the
truth. Too few means overconfident standard deviations, too many means useless ones.
(``benchmarks/vs_ols.py --coverage-seeds 20``, 60 cases: 0.977; per robot arm5p 0.998, arm6
0.985, scara4 0.917 — the SCARA's vertical prismatic joint mixes armature, mass and offset.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import independent_sim as bench  # noqa: E402

from physid.files.io import to_json_text  # noqa: E402
from physid.files.params_file import read_params, standard_parameters  # noqa: E402
from physid.report.identification import params_json  # noqa: E402
from physid.workflows import identify_run  # noqa: E402

ROBOTS = ("arm5p", "arm6", "scara4")
SEEDS_PER_ROBOT = 5  # 7 took 189 s of the suite with cross-validated defaults (two recordings each)


def _within_three_sigma(folder: Path, robot: str, seed: int) -> tuple[int, int]:
    # one 20 s training recording per case (the benchmark uses two): the claim is the same at
    # any length, and it halves the test's 2 minutes (measured 0.977 of 622 with one, 0.981 of
    # 626 with two, these seeds)
    paths = bench.write_case(
        folder,
        bench.make_spec(robot),
        np.random.default_rng(2000 + seed),
        n_train=1,
        validate_s=2.0,
    )
    # The params.json document as `physid identify` writes it (write_identification writes
    # to_json_text(params_json(result, provenance))), without rendering the report's figures
    # into a folder nobody reads here: 3 s of each case's 11 s (the report has its own tests).
    run = identify_run(paths.prior_urdf, list(paths.train))
    result = run.result
    document = json.loads(to_json_text(params_json(result, run.provenance)))
    truth = result.base.projection @ standard_parameters(
        result.model, read_params(paths.truth_json)
    )
    std = np.array([np.nan if v is None else v for v in document["base_parameters"]["std"]])
    estimate = np.asarray(result.theta_base, float)
    counted = np.isfinite(std) & (std > 0)
    within = np.abs(estimate - truth)[counted] <= 3.0 * std[counted]
    return int(within.sum()), int(counted.sum())


@pytest.mark.slow
def test_base_parameters_lie_within_three_sigma_of_the_truth(tmp_path):
    counts = np.array(
        [
            _within_three_sigma(tmp_path / f"{robot}_{seed}", robot, seed)
            for robot in ROBOTS
            for seed in range(SEEDS_PER_ROBOT)
        ]
    )
    within, counted = counts.sum(axis=0)
    assert counted >= 20 * len(counts)
    coverage = within / counted
    assert 0.95 <= coverage <= 0.999, f"3-sigma coverage {coverage:.3f} of {counted}"
