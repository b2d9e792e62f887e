"""Issue 2 acceptance 2 and 3 on real recordings (data/, $PHYSID_DATASETS; skipped if absent)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import DATASETS, EXAMPLES, KUKA, REPO, TX40, require_dataset

from physid.files.config import load_config, parse_config, robot_for
from physid.offline.observe.least_squares import ordinary_least_squares
from physid.offline.observe.metrics import fit_metrics
from physid.offline.observe.observations import observations_of
from physid.offline.observe.reduced import reduce_observations
from physid.offline.stages.base_fit import excited_parameters
from physid.robot.regressor import base_parameters
from physid.workflows import load_trajectories, run_identify

KUKA_EXAMPLE = EXAMPLES / "kuka_lwr4"
TX40_EXAMPLE = EXAMPLES / "staubli_tx40"


@pytest.fixture(scope="module")
def kuka_files():
    require_dataset(KUKA)
    return [KUKA_EXAMPLE / f"measurements_{k}.yaml" for k in (1, 2, 3)]


def test_kuka_plain_ols_reproduces_the_published_validation_error(kuka_files):
    # Dataset README: minimal OLS (given derivatives, fv/fc/offset, 64 base columns), trained on
    # files 2+3 and validated on 1: 2.58 %. An independent check of regressor, base and LS.
    # That reference uses a plain sign(dq) (given velocities: no automatic Coulomb deadband).
    config = parse_config(
        {
            "joint_terms": ["fv", "fc", "offset"],
            "filter": {"method": "given"},
        }
    )
    model = robot_for(KUKA / "kuka_lwr4.urdf", config)
    train = observations_of(model, load_trajectories(kuka_files[1:], model, config), config.filter)
    validation = observations_of(
        model, load_trajectories(kuka_files[:1], model, config), config.filter
    )
    base = base_parameters(model)
    system = reduce_observations(train.W, train.tau)
    columns = base.independent[excited_parameters(system, base)]
    ols = ordinary_least_squares(system, columns)
    error = fit_metrics(validation.tau, validation.W[:, :, columns] @ ols.theta).relative_error
    assert len(columns) == 64 and error == pytest.approx(0.0258, abs=0.0003)


def test_kuka_consistent_identification_meets_acceptance_2(kuka_files, tmp_path):
    result = run_identify(
        KUKA / "kuka_lwr4.urdf",
        kuka_files[1:],
        config_path=KUKA_EXAMPLE / "config.yaml",
        validate=kuka_files[:1],
        out_dir=tmp_path / "out",
    )
    assert result.status == "ok" and result.consistent.consistent
    # Measured: 2.33 % (plain OLS ignoring consistency: 2.58 %); base tilt 1.28, 0.40 deg.
    assert result.validation.relative_error <= 0.026
    # The moving mass is weakly determined (the first links' masses: source prior). With the
    # default prior the fit gave 15.76 +- 1.71 kg (URDF 14.4; FloBaRoID 15.96 with the 1.6 kg
    # fixed link; Gaz et al. 17.3), but three bodies outside 0.5-2 x the URDF's (the last three:
    # 0.48, 0.40, 0.94 kg against 1.7, 1.6, 0.3); the folds cannot tell that fit from one with
    # the bodies' prior std x0.3 (on folds by phase), which is kept. Measured: 12.33 +- 1.86 kg,
    # every body within 0.5-2 x the URDF's, validation error unchanged (2.33 %).
    document = json.loads((tmp_path / "out" / "params.json").read_text())
    masses = [body["mass"] for body in document["bodies"].values()]
    urdf = [body["prior"]["mass"] for body in document["bodies"].values()]
    assert all(0.5 <= m / u <= 2.0 for m, u in zip(masses, urdf, strict=True))
    assert 0.8 <= result.moving_mass() / 14.4 <= 1.25
    assert abs(result.moving_mass() - 14.4) <= 2 * result.moving_mass_std
    checked = document["fit"]["cross_validation"]
    assert checked["body_prior_scale"] < 1.0 and checked["implausible_masses"]
    # both files repeat their excitation (2 and 4 periods): judged on folds by phase
    assert checked["plausibility_folds"] == "phase"
    refit, given = checked["plausibility"]["candidates"]
    assert refit["relative_error"] <= given["relative_error"] + 0.001  # the folds cannot tell
    assert any(w.startswith("the prior decides the masses") for w in result.warnings)
    assert (tmp_path / "out" / "params.json").is_file() and (
        tmp_path / "out" / "report.html"
    ).is_file()


def test_tx40_as_shipped_identifies_the_coupled_wrist(tmp_path):
    require_dataset(TX40)
    config = load_config(TX40_EXAMPLE / "config.yaml")
    result = run_identify(
        TX40 / "tx40_mdh_modified.urdf",
        [TX40_EXAMPLE / "recording.yaml"],
        config_path=TX40_EXAMPLE / "config.yaml",
    )
    assert config.train_fraction == pytest.approx(0.6667)
    assert result.status == "ok" and result.base.size == 61
    names = np.asarray(result.base.short_names)[result.excited]
    values = dict(zip(names, result.least_squares.theta, strict=True))
    relative = dict(zip(names, result.least_squares.relative_std_percent, strict=True))
    # Paper C Table 1 (same robot, other recordings): fv_m6 0.61, fc_m6 1.83, fv1 8.07, fc1 6.90.
    assert values["m6.fvm"] == pytest.approx(0.61, rel=0.15) and relative["m6.fvm"] < 5
    assert values["m6.fcm"] == pytest.approx(1.83, rel=0.2) and relative["m6.fcm"] < 10
    assert values["joint_1.fv"] == pytest.approx(8.07, rel=0.1)
    assert values["joint_1.fc"] == pytest.approx(6.90, rel=0.15)
    # Paper C: 28 essential parameters of 60; training relative error 5.1 % (good knowledge),
    # on the filtered, decimated torque (on the raw 5 kHz current it is 42 %: sensor noise).
    assert 24 <= len(result.essential.names) <= 32
    assert result.train_filtered.relative_error == pytest.approx(0.051, abs=0.01)


def test_ur10e_example_reads_the_raw_logs_and_beats_plain_ols(tmp_path):
    """examples/ur10e: the shared UR10e logs read as recorded (no header, the logger's other
    packets dropped), currents x the literature's gains; scored on the benchmark's cropped
    held-out run by the independent scorer. Measured: physid 6.18 %, plain OLS 6.70 %."""
    import sys

    import pinocchio as pin

    folder = require_dataset(DATASETS / "ur10e")
    example = EXAMPLES / "ur10e"
    sys.path.insert(0, str(REPO / "benchmarks"))
    from real_cases import UR10E_GAINS, read_ur10e
    from scoring import (
        butterworth_states,
        ols_fit,
        ols_regressor,
        params_prediction,
        relative_error,
    )

    result = run_identify(folder / "ur10e.urdf", [example / "train.yaml"],
                          validate=[example / "validate.yaml"], config_path=example / "config.yaml",
                          out_dir=tmp_path / "out")  # fmt: skip
    assert result.status == "ok"
    document = json.loads((tmp_path / "out" / "params.json").read_text())
    found = {p.stem: p for p in folder.glob("*_data/*.csv")}
    gains = UR10E_GAINS["literature"]
    train = butterworth_states(read_ur10e(found["ur-20_02_10-30sec_12harm"], gains)[0])
    held = butterworth_states(read_ur10e(found["ur-20_01_17-ptp_10_points"], gains)[0])
    model = pin.buildModelFromUrdf(str(folder / "ur10e.urdf"))
    ours = relative_error([held], [params_prediction(model, document, held)])
    theta = ols_fit(model, [train], True, False)
    ols = relative_error([held], [(ols_regressor(model, held, True, False) @ theta)
                                  .reshape(-1, model.nv)])  # fmt: skip
    assert ours < ols


def test_kuka_without_a_body_prior_gives_consistent_bodies(kuka_files):
    # prior_std_relative: null (documented: no body prior): Clarabel left link 2's pseudo-inertia
    # 2.3e-6 kg m^2 below the cone and the run failed with "no physically consistent parameters"
    config = parse_config({"estimation": {"prior_std_relative": None}})
    result = run_identify(KUKA / "kuka_lwr4.urdf", kuka_files[1:2], config=config,
                          validate=kuka_files[:1])  # fmt: skip
    assert result.status == "ok" and result.consistent.consistent
    assert result.validation.relative_error < 0.03  # 2.71 %; 2.70 % with the default prior
