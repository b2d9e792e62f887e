"""Issue 24 item 1: on slices of the real recordings, physid with no config predicts held-out
raw torque at least as well as plain least squares, by the independent scorer of
``benchmarks/scoring.py`` (a fixed 10 Hz Butterworth for both; no physid code).

The full benchmark is ``benchmarks/real_corpus.py``; these slices keep the suite fast. KUKA is
vendored (data/); the others are read from ``$PHYSID_DATASETS`` and skipped when absent.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import DATASETS, KUKA, kuka_slice, require_dataset

import physid
from physid.offline.choose.against_prior import UNDECIDED_STD
from physid.offline.choose.weighting import MISFIT_INFLATION
from physid.offline.codes import IMPLAUSIBLE, MASSES_LEFT_TO_DATA, WEIGHTING_CHOICE

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from real_cases import (  # noqa: E402
    KUKA_JOINTS,
    REPO,
    UR10E_GAINS,
    UR10E_JOINTS,
    XMATE_JOINTS,
    kuka_signals,
    read_ur10e,
    read_xmate,
    write_contract_csv,
)
from scoring import (  # noqa: E402
    Signals,
    butterworth_states,
    consistent_ols_fit,
    ols_fit,
    ols_regressor,
    params_prediction,
    relative_error,
)

pytestmark = pytest.mark.slow


def _slice(s: Signals, seconds: float) -> Signals:
    rows = s.t - s.t[0] <= seconds
    return Signals(s.t[rows], s.q[rows], s.tau[rows])


def _compare(tmp_path, urdf, joints, train, held_out, armature):
    """(physid, OLS) held-out relative errors on the raw torque, one scorer for both."""
    files = [write_contract_csv(tmp_path / f"train_{k}.csv", joints, s)
             for k, s in enumerate(train)]  # fmt: skip
    held = [write_contract_csv(tmp_path / f"held_{k}.csv", joints, s)
            for k, s in enumerate(held_out)]  # fmt: skip
    result = physid.identify(urdf, files, validate=held, out=tmp_path / "out")
    model = pin.buildModelFromUrdf(str(urdf))
    train_states = [butterworth_states(s) for s in train]
    held_states = [butterworth_states(s) for s in held_out]
    theta = ols_fit(model, train_states, armature, False)
    ols = relative_error(held_states, [(ols_regressor(model, s, armature, False) @ theta)
                                       .reshape(-1, model.nv) for s in held_states])  # fmt: skip
    ours = relative_error(held_states, [params_prediction(model, result.document, s)
                                        for s in held_states])  # fmt: skip
    return result, ours, ols


def test_kuka_slices(tmp_path):
    """12 s of files 2 and 3 -> 12 s of file 1. Measured: physid 2.42 %, OLS 2.76 %."""
    folder = require_dataset(REPO / "data" / "kuka_lwr4")
    train = [_slice(kuka_signals(folder, k), 12.0) for k in (2, 3)]
    held = [_slice(kuka_signals(folder, 1), 12.0)]
    result, ours, ols = _compare(tmp_path, folder / "kuka_lwr4.urdf", KUKA_JOINTS, train, held,
                                 armature=False)  # fmt: skip
    assert result.status in ("ok", "suspect")
    assert ours <= ols


@pytest.mark.parametrize("held_run", [2, 3])
def test_xmate_slices(tmp_path, held_run):
    """traj1 -> traj2 and traj3 (50 Hz, 20 s each; real_corpus's xmate_1_2 and xmate_1_3).
    The residuals are mostly the model's misfit (Newey-West variance inflation 2.5), so the
    simplest consistent fit is the conservative candidate of both choices: plain weighting (the
    folds prefer WLS by 0.02 points, spread 0.07) and the default prior (the folds cannot show
    the plausible refit, the bodies' prior std x0.17, better). Measured: held out 3.74 / 4.00 %
    against the consistent least squares' 3.73 / 4.07 % (with WLS and the refit, the old
    default: 3.90 / 3.96 %). The data put 16.6 kg on the 4.68 kg shoulder link (32.9 kg
    moving, URDF 20.7; the dataset README measures holding torques 1.1-1.3 x the URDF's): kept,
    and named where it is implausible."""
    folder = require_dataset(DATASETS / "xmate7p")
    read = lambda k: read_xmate(folder / "50Hz_1period" / f"xMate7p_traj{k}_results.csv", 0.02)  # noqa: E731
    result, ours, ols = _compare(tmp_path, folder / "XM7p.urdf", XMATE_JOINTS, [read(1)],
                                 [read(held_run)], armature=False)  # fmt: skip
    model = pin.buildModelFromUrdf(str(folder / "XM7p.urdf"))
    train, held = [butterworth_states(read(1))], [butterworth_states(read(held_run))]
    theta = consistent_ols_fit(model, train, False, False)[0]
    consistent = relative_error(held, [(ols_regressor(model, s, False, False) @ theta)
                                       .reshape(-1, model.nv) for s in held])  # fmt: skip
    assert ours <= 1.01 * consistent, (ours, consistent, ols)
    findings = {f["code"]: f for f in result.document["findings"]}
    assert findings[WEIGHTING_CHOICE.code]["numbers"]["serial_inflation"] >= MISFIT_INFLATION
    assert result.document["fit"]["cross_validation"]["body_prior_scale"] == 1.0
    kept = findings[MASSES_LEFT_TO_DATA.code]["message"]
    # the plausible refit would move the shoulder link 2.7 std: the data decide against it
    assert findings[MASSES_LEFT_TO_DATA.code]["numbers"]["mass_shift_std"] > UNDECIDED_STD
    named = findings[IMPLAUSIBLE.code]["message"]
    assert kept.startswith("the data decide the implausible masses"), kept
    for joint, body in result.document["bodies"].items():
        if not 0.5 <= body["mass"] / body["prior"]["mass"] <= 2.0:
            assert joint in named, (joint, named)


def _ur10e_to_ptp(tmp_path, train_run: str):
    """``train_run`` -> the first 15 s of ptp_10_points, currents x the literature gains:
    :func:`_compare`'s (result, physid, OLS)."""
    folder = require_dataset(DATASETS / "ur10e")
    train, _ = read_ur10e(folder / "identification_data" / f"ur-{train_run}.csv",
                          UR10E_GAINS["literature"])  # fmt: skip
    held, _ = read_ur10e(folder / "validation_data" / "ur-20_01_17-ptp_10_points.csv",
                         UR10E_GAINS["literature"])  # fmt: skip
    return _compare(tmp_path, folder / "ur10e.urdf", UR10E_JOINTS, [train],
                    [_slice(held, 15.0)], armature=True)  # fmt: skip


def test_ur10e_slices(tmp_path):
    """30sec_12harm -> the first 15 s of ptp_10_points. Measured: physid 5.94 %, OLS 6.86 %."""
    result, ours, ols = _ur10e_to_ptp(tmp_path, "20_02_10-30sec_12harm")
    assert ours <= ols
    assert np.isfinite(result.document["moving_mass"]["std"])
    assert np.isfinite(result.document["moving_mass"]["std"])


def test_ur10e_run_that_rests_for_a_third_of_its_rows(tmp_path):
    """20sec_7harm rests 35 % of its rows (before and after the motion) -> the first 15 s of
    ptp_10_points. With the rest rows scored, the folds chose a 3.36 Hz cut-off and a 0.05 x
    RMS-speed deadband: 7.50 % here (8.87 % on the whole held-out run); scored on the moving
    rows, which every candidate reads as motion (offline/observe/crossval.py): 6.41 % (6.69 %).
    Plain
    least squares: 16.2 %."""
    _, ours, ols = _ur10e_to_ptp(tmp_path, "20_02_10-20sec_7harm")
    assert ours <= ols and ours < 0.07


def _scale_named(tmp_path, urdf, joints, train: Signals, joint: str, factor: float) -> float:
    """Identify ``train`` with ``joint``'s torque times ``factor``: the status must be suspect
    with the joint-scale reason (a flipped sign named as such); returns the scale that reason
    gives ``joint``."""
    tau = train.tau.copy()
    tau[:, joints.index(joint)] *= factor
    path = write_contract_csv(tmp_path / "scaled.csv", joints, Signals(train.t, train.q, tau))
    result = physid.identify(urdf, path)
    assert result.status == "suspect"
    (reason,) = [r for r in result.raw.suspect if "not on the others' scale" in r]
    assert ("sign flipped" in reason) == (factor == -1.0), reason
    return float(reason.split(f"'{joint}' x")[1].split()[0])


def test_one_joints_torque_on_another_scale_is_suspect_and_named(tmp_path):
    """Real UR10e, 30sec_12harm, currents x the literature gains, the shoulder-lift torque
    halved (its current read with half the torque constant): status ok, 49.4 % held out (clean
    6.4 %), nothing named. A free scale on that joint alone fits the training torque a third
    better (offline/checks/joint_scales.py) at x0.49: suspect, the joint named. The clean run is ok
    (test_ur10e_slices; no real recording we have gains more than 5 %)."""
    folder = require_dataset(DATASETS / "ur10e")
    train, _ = read_ur10e(folder / "identification_data" / "ur-20_02_10-30sec_12harm.csv",
                          UR10E_GAINS["literature"])  # fmt: skip
    scale = _scale_named(tmp_path, folder / "ur10e.urdf", UR10E_JOINTS, train,
                         "shoulder_lift_joint", 0.5)  # fmt: skip
    assert 0.45 <= scale <= 0.55


def test_a_joints_torque_with_the_opposite_sign_is_suspect_and_named(tmp_path):
    """Real xMate7p, 50 Hz traj1, joint6's torque logged with the opposite sign: status ok and
    joint2's mass x2.2 with no sign hint; a free scale on joint6 alone, searched over both
    signs, fits the training torque a quarter better at about -1: suspect, joint6 named."""
    folder = require_dataset(DATASETS / "xmate7p")
    train = read_xmate(folder / "50Hz_1period" / "xMate7p_traj1_results.csv", 0.02)
    scale = _scale_named(tmp_path, folder / "XM7p.urdf", XMATE_JOINTS, train, "joint6", -1.0)
    assert -1.2 <= scale <= -0.8


def test_a_held_out_run_sampled_below_the_training_cut_offs_is_predicted_within_its_band():
    """A probe's UR5 trained at 1 kHz (decimation cut-off 52.5 Hz) and held out at 100 Hz failed
    after the whole fit ("decimation cut-off = 52.5026 Hz must lie in (0, 50) Hz ... a configured
    decimation_factor applies to every recording", none configured). The real KUKA LWR4+ at
    200 Hz, held out on file 1 at every 10th row (20 Hz): the cut-offs are resolved on it, a
    warning says so, and it is predicted as well as at its full rate (2.68 % against 2.74 %)."""
    from physid.files.config import IdentifyConfig, parse_config, robot_for
    from physid.offline.pipeline import identify
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import trajectory_from_table

    require_dataset(KUKA)
    model = robot_for(KUKA / "kuka_lwr4.urdf", parse_config({}))

    def recording(signals, name: str, every: int = 1):
        columns = {"t": signals.t[::every]}
        for k, joint in enumerate(model.joint_names):
            columns[f"q_{joint}"] = signals.q[::every, k]
            columns[f"tau_{joint}"] = signals.tau[::every, k]
        return trajectory_from_table(Table(columns, name), model)

    train = [recording(kuka_slice(2, 20.0), "kuka_2")]
    held = kuka_slice(1, 20.0)
    full = identify(model, train, IdentifyConfig(), validation=[recording(held, "kuka_1")])
    slow = identify(model, train, IdentifyConfig(), validation=[recording(held, "20 Hz", 10)])
    assert full.preprocessing.filter.decimation_cutoff_hz > 8.0  # 40 % of 20 Hz
    said = [w for w in slow.warnings if w.startswith("20 Hz: sampled at 20 Hz, too slowly")]
    assert len(said) == 1, slow.warnings
    assert not any("too slowly" in w for w in full.warnings)
    assert slow.validation.relative_error < 1.1 * full.validation.relative_error


def test_a_held_out_run_faster_than_training_is_predicted_with_a_filter_for_its_own_band(tmp_path):
    """The real DFKI double pendulum: trained on a PD run (0.25 Hz excitation bandwidth; 2.5 Hz
    derivative cut-off), held out on two sinusoid runs of 1.8 Hz. The training filter
    attenuates their motion: identify's own validation read 108.9 % (an independent 10 Hz
    scorer: 57 %). Each is now predicted at 10 x its own bandwidth, said in a warning naming
    it (91.2 %), and ``physid validate`` on the params.json gives the same number."""
    from real_cases import dfki_case

    from physid.files.config import IdentifyConfig
    from physid.offline.observe.prediction import predict_recording, stacked_metrics
    from physid.workflows import load_trajectories, run_identify, run_validate

    require_dataset(DATASETS / "dfki_double_pendulum")
    case = dfki_case(DATASETS, tmp_path, ("20220812-061157-PM_measured",),
                     ("20220812-055032-PM_measured", "20220812-055640-PM_measured"))  # fmt: skip
    result = run_identify(case.urdf, case.physid_train, validate=case.physid_validate,
                          out_dir=tmp_path / "out")  # fmt: skip
    faster = [w for w in result.warnings if "moves faster than the training runs" in w]
    assert len(faster) == 2 and all("at 18 Hz" in w for w in faster), result.warnings
    held = load_trajectories(list(case.physid_validate), result.model, IdentifyConfig())
    training_filter = stacked_metrics([
        predict_recording(result.model, t, result.preprocessing.filter, result.theta)
        for t in held])  # fmt: skip
    assert result.validation.relative_error < 0.9 * training_filter.relative_error
    report = run_validate(case.urdf, tmp_path / "out" / "params.json", case.physid_validate)
    assert report.overall["relative_error"] == pytest.approx(
        result.validation.relative_error, rel=1e-9
    )
