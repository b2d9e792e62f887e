"""Corrupt rows of real logs (physid.recordings.glitches and the row checks of
physid.recordings.trajectory): isolated corrupt samples are repaired and reported, exact
duplicate rows dropped, a time column in milliseconds refused — and clean real recordings are
left exactly as they are."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import DATASETS, REPO, kuka_slice

import physid
from physid.cli import main
from physid.errors import InputError
from physid.recordings.glitches import (
    POSITION_THRESHOLD,
    repair_corrupt_samples,
    saturated_torques,
    stuck_torque_runs,
    unwrap_angles,
)
from physid.recordings.steps import position_step_rows
from physid.recordings.trajectory import load_segments, load_trajectory
from physid.robot.model import build_robot_model, load_urdf
from physid.workflows import unlogged_torque_warning

sys.path.insert(0, str(REPO / "benchmarks"))
from real_cases import (  # noqa: E402
    KUKA_JOINTS,
    UR10E_GAINS,
    kuka_signals,
    read_dfki,
    read_ur10e,
    read_xmate,
    write_contract_csv,
)
from scoring import Signals  # noqa: E402

KUKA = REPO / "data" / "kuka_lwr4"


def _signals(seed: int = 0, n: int = 5000, rate_hz: float = 500.0):
    """Two joints: smooth positions (encoder quanta), torques with noise and Coulomb steps at
    every velocity reversal (edges a glitch detector must not touch)."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) / rate_hz
    q = np.column_stack([0.8 * np.sin(2 * np.pi * 0.3 * t), 0.5 * np.cos(2 * np.pi * 0.7 * t)])
    q = np.round(q / 1e-5) * 1e-5
    dq = np.gradient(q, t, axis=0)
    tau = 5.0 * np.cos(q) + 2.0 * np.sign(dq) + rng.normal(0.0, 0.1, q.shape)
    return t, q, tau


def test_clean_signals_with_friction_steps_are_untouched():
    _, q, tau = _signals()
    q_out, tau_out, repair = repair_corrupt_samples(q, tau, ("a", "b"))
    assert repair.samples == ()
    assert q_out is q and tau_out is tau


def test_isolated_corrupt_samples_are_found_and_repaired():
    _, q, tau = _signals(seed=1)
    bad_q, bad_tau = q.copy(), tau.copy()
    bad_q[1000, 0] = 0.0  # an encoder word read as zero (the arm is at 0.8 sin(...) there)
    bad_q[0, 1] += 0.3  # the very first row: judged against real neighbours
    bad_tau[3000, 1] = 1e4  # a flipped bit
    bad_tau[2000:2002, 0] -= 300.0  # two samples wide
    bad_tau[4000:4003, 1] = 2e3  # three samples wide: a logger that repeated a bad word
    q_out, tau_out, repair = repair_corrupt_samples(bad_q, bad_tau, ("a", "b"))
    found = {(s.row, s.column) for s in repair.samples}
    assert found == {(1000, "q_a"), (0, "q_b"), (3000, "tau_b"), (2000, "tau_a"), (2001, "tau_a"),
                     (4000, "tau_b"), (4001, "tau_b"), (4002, "tau_b")}  # fmt: skip
    # repaired to the truth within what the neighbours say (positions: curvature; torques:
    # the noise of the two neighbours)
    assert np.max(np.abs(q_out - q)) < 2e-4
    assert np.max(np.abs(tau_out - tau)) < 1.0
    untouched = np.ones(len(q), dtype=bool)
    untouched[[0, 1000, 2000, 2001, 3000, 4000, 4001, 4002]] = False
    assert np.array_equal(q_out[untouched], bad_q[untouched])
    assert np.array_equal(tau_out[untouched], bad_tau[untouched])
    assert bad_q[1000, 0] == 0.0  # the inputs are not modified
    note = repair.note("log.csv")
    assert "8 corrupt samples in 8 of 5000 rows" in note and "row 1001 q_a 0 ->" in note


def test_a_start_up_transient_at_either_end_is_motion_not_corruption():
    """A servo catching the arm in the first rows (the torques of a MuJoCo UR5 log at 500 Hz:
    19.3, 9.57, 3.43, -0.66 N m) and the same at the end are kept, though the first sample
    departs from its mirrored running median by more than the torque threshold; a first sample
    that breaks the line of its neighbours is still repaired."""
    _, q, tau = _signals(seed=3)
    decay = 30.0 * np.exp(-np.arange(12) / 1.1)  # 30, 12.1, 4.9, 2.0, ... N m
    transient = tau.copy()
    transient[:12, 0] += decay
    transient[-12:, 1] -= decay[::-1]
    assert repair_corrupt_samples(q, transient, ("a", "b"))[2].samples == ()
    broken = transient.copy()
    broken[0, 0] = transient[1, 0] - 40.0  # the line of its neighbours says about +7 N m
    found = repair_corrupt_samples(q, broken, ("a", "b"))[2].samples
    assert [(s.row, s.column) for s in found] == [(0, "tau_a")]


def test_a_small_position_departure_is_motion_not_corruption():
    """Below the threshold in ordinary steps nothing is repaired."""
    _, q, tau = _signals(seed=2)
    step = np.percentile(np.abs(np.diff(q[:, 0])), 99)
    bumped = q.copy()
    bumped[2500, 0] += 0.5 * POSITION_THRESHOLD * step
    assert repair_corrupt_samples(bumped, tau, ("a", "b"))[2].samples == ()


def _wrap(angle):
    return np.angle(np.exp(1j * angle))


def test_angles_logged_modulo_one_turn_are_unwrapped():
    t = np.arange(2000) / 100.0
    wheel = 0.3 + 2.0 * t + 0.5 * np.sin(t)  # turns 6 times
    swing = np.sin(t)  # within one turn, never wrapped
    slide = np.where(t < 10, 0.0, 2 * np.pi)  # a prismatic joint may jump 2 pi metres? not ours
    wide = 4.0 * np.sin(0.5 * t)  # a revolute joint over more than a turn, logged unwrapped
    q = np.column_stack([_wrap(wheel), swing, slide, wide])
    out, wraps = unwrap_angles(q, [True, True, False, True])
    assert np.allclose(out[:, 0], wheel, atol=1e-12)
    assert wraps == {0: int(np.sum(np.abs(np.diff(q[:, 0])) > np.pi))}
    assert wraps[0] == 6
    assert np.array_equal(out[:, 1:], q[:, 1:])


def test_rows_a_full_turn_off_for_a_while_are_brought_back_and_degrees_are_left_alone():
    """A turn counter misread for 11 rows (+2 pi, then back): the column is no longer within one
    turn, so it is not "logged modulo one turn", and was refused as degrees; the full-turn steps
    are undone when that brings it within a turn. A fast joint logged in degrees at 50 Hz whose
    steps reach 6 (degrees) is no such thing: left for the degrees check."""
    t = np.arange(3000) / 500.0
    arm = 0.9 * np.sin(1.3 * t)
    burst = arm.copy()
    burst[1000:1011] += 2.0 * np.pi
    out, wraps = unwrap_angles(burst[:, None], [True])
    assert wraps == {0: 2}
    np.testing.assert_allclose(out[:, 0], arm, atol=1e-12)
    slow = np.arange(500) / 50.0
    degrees = 170.0 * np.sin(2.0 * slow)  # up to 340 deg/s: steps up to 6.8 (degrees)
    steps = np.abs(np.diff(degrees))
    assert np.any(np.abs(steps - 2.0 * np.pi) < 0.5)
    out, wraps = unwrap_angles(degrees[:, None], [True])
    assert wraps == {} and np.array_equal(out[:, 0], degrees)


def test_a_torque_stuck_while_the_robot_moves_is_found_and_a_still_one_is_not():
    """A column that holds one value for 2 s while the joints move is found with its rows; the
    same value held while the robot rests (a brake, a quantised current at a pose), or for
    less than STUCK_MIN_S, is a measurement."""
    t, q, tau = _signals(seed=2)  # 500 Hz
    stuck = tau.copy()
    stuck[1000:2000, 1] = stuck[999, 1]
    (run,) = stuck_torque_runs(t, q, stuck)
    assert (run.column, run.start, run.stop, run.value) == (1, 999, 2000, stuck[999, 1])
    short = tau.copy()
    short[1000:1400, 0] = 3.0  # 0.8 s
    assert stuck_torque_runs(t, q, short) == []
    resting = q.copy()
    resting[1000:2000] = q[1000]
    assert stuck_torque_runs(t, resting, stuck) == []
    # a joint that never moves, read with 0.3 mrad of noise (it spans ~2 mrad, above the 1 mrad
    # still bound): its noise is no motion, and the robot still rests there
    resting[:, 0] = 3e-4 * np.random.default_rng(7).standard_normal(len(t))
    assert stuck_torque_runs(t, resting, stuck) == []
    off = tau.copy()
    off[1000:2000, 1] = 0.0  # a motor switched off: free motion, no stuck sensor
    assert stuck_torque_runs(t, q, off) == []


def _real_recordings():
    yield "kuka", [kuka_signals(KUKA, k) for k in (1, 2, 3)]
    ur10e = DATASETS / "ur10e"
    if ur10e.is_dir():
        files = sorted(ur10e.glob("*_data/ur-20_0*.csv"))
        yield "ur10e", [read_ur10e(p, UR10E_GAINS["literature"])[0] for p in files]
    xmate = DATASETS / "xmate7p"
    if xmate.is_dir():
        files = sorted(xmate.glob("**/*.csv"))
        yield "xmate", [read_xmate(p, 0.02 if "50Hz" in str(p) else 0.001) for p in files]
    dfki = DATASETS / "dfki_double_pendulum"
    if dfki.is_dir():
        yield "dfki", [read_dfki(p) for p in sorted(dfki.glob("sys_id_*/*.csv"))]


@pytest.mark.slow
def test_real_recordings_have_nothing_to_repair():
    """The thresholds against every real recording we have: their transients (the UR10e's stop
    at the end of a run, a PD-driven pendulum's kicks) are motion, kept as they are."""
    checked = 0
    for name, recordings in _real_recordings():
        for k, s in enumerate(recordings):
            repair = repair_corrupt_samples(s.q, s.tau, tuple(str(j) for j in range(s.q.shape[1])))[
                2
            ]
            assert repair.samples == (), (name, k, repair.samples[:3])
            assert stuck_torque_runs(s.t, s.q, s.tau) == [], (name, k)
            assert position_step_rows(s.q)[0] == [], (name, k)
            assert saturated_torques(s.tau) == [], (name, k)
            checked += 1
    assert checked >= 3


@pytest.mark.slow
def test_one_corrupt_row_of_a_real_log_no_longer_moves_the_fit(tmp_path):
    """Real KUKA LWR4+ (12 s of file 2 -> 12 s of file 1): a row of positions read as zero and
    three torques of 1e5 N m in a row. Repaired, the fit is the clean one's; left as read
    (config corrupt_samples: keep), the same file is far off (measured on the whole file without
    the repair: 44.8 kg moving mass with one zero row, a fit that explains nothing with a spike;
    the three-sample burst, before torques had a median of seven, was left in and the verdict
    blamed the column order)."""
    urdf = KUKA / "kuka_lwr4.urdf"
    clean = kuka_slice(2)
    held = write_contract_csv(tmp_path / "held.csv", KUKA_JOINTS, kuka_slice(1))
    corrupt_q, corrupt_tau = clean.q.copy(), clean.tau.copy()
    row = 500 + int(np.argmax(np.min(np.abs(clean.q[500:1500]), axis=1)))  # every joint off 0
    assert np.min(np.abs(clean.q[row])) > 0.2
    corrupt_q[row] = 0.0
    corrupt_tau[1300:1303, 1] = 1e5
    files = {
        "clean": write_contract_csv(tmp_path / "clean.csv", KUKA_JOINTS, clean),
        "corrupt": write_contract_csv(
            tmp_path / "corrupt.csv", KUKA_JOINTS, Signals(clean.t, corrupt_q, corrupt_tau)
        ),
    }
    reference = physid.identify(urdf, files["clean"], validate=held)
    kept = physid.identify(urdf, files["corrupt"], validate=held,
                           config={"corrupt_samples": "keep"})  # fmt: skip
    # repaired by default, as the command runs it (and says so)
    command = ["identify", "--urdf", urdf, "--data", files["corrupt"], "--validate", held,
               "--out", tmp_path / "cli", "--quiet", "--verbose"]  # fmt: skip
    out = CliRunner().invoke(main, [str(c) for c in command]).output
    repaired = json.loads((tmp_path / "cli" / "params.json").read_text(encoding="utf-8"))
    error = lambda r: r.raw.validation.relative_error  # noqa: E731
    assert repaired["status"] == reference.status and not repaired["suspect_reasons"]
    assert repaired["fit"]["validation"]["relative_error"] <= 1.01 * error(reference)
    mass = reference.raw.moving_mass()
    assert abs(repaired["moving_mass"]["value"] - mass) < 0.05 * mass
    assert error(kept) > 2.0 * error(reference)
    repairs = repaired["preprocessing"]["row_repairs"]
    found = [s for r in repairs for s in r["corrupt_samples_repaired"]]
    # the row read as zero is a corrupt record: its torques are replaced with its positions
    assert {(s["row"], s["column"]) for s in found} == (
        {(row + 1, f"{kind}_{j}") for j in KUKA_JOINTS for kind in ("q", "tau")}
        | {(r, "tau_lwr_1_joint") for r in (1301, 1302, 1303)}
    )
    assert "17 corrupt samples in 4 of" in out and "row 1301 tau_lwr_1_joint 100000 ->" in out


def test_a_record_read_as_zeros_is_replaced_whole_and_a_motor_switched_off_is_not():
    """A row whose positions are corrupt in most columns is a corrupt record: its torques are
    replaced too, though a small torque read as 0 departs by less than a torque threshold. So
    is a short run of rows whose every torque reads exactly 0 between rows that do not; a
    long run of zero torques is a motor switched off, and is kept."""
    _, q, tau = _signals(seed=4)
    tau = tau * 0.02  # small torques: 0 departs by a few ordinary steps only
    zero_row = q.copy(), tau.copy()
    zero_row[0][1000] = zero_row[1][1000] = 0.0
    _, tau_out, repair = repair_corrupt_samples(*zero_row, ("a", "b"))
    assert {(s.row, s.column) for s in repair.samples} == {
        (1000, c) for c in ("q_a", "q_b", "tau_a", "tau_b")
    }
    np.testing.assert_allclose(tau_out[1000], 0.5 * (tau[999] + tau[1001]))
    zero_torques = tau.copy()
    zero_torques[2000:2002] = 0.0
    _, tau_out, repair = repair_corrupt_samples(q, zero_torques, ("a", "b"))
    assert {(s.row, s.column) for s in repair.samples} == {
        (r, c) for r in (2000, 2001) for c in ("tau_a", "tau_b")
    }
    switched_off = tau.copy()
    switched_off[2000:2500] = 0.0
    assert repair_corrupt_samples(q, switched_off, ("a", "b"))[2].samples == ()
    # a simulator's logger writes the torque before its first step as 0 (Drake): the first
    # row's torques, 49 ordinary steps off the line of the next two, passed the threshold
    first = tau.copy()
    first[0] = 0.0
    _, tau_out, repair = repair_corrupt_samples(q, first, ("a", "b"))
    assert {(s.row, s.column) for s in repair.samples} == {(0, "tau_a"), (0, "tau_b")}
    np.testing.assert_allclose(tau_out[0], tau[1])  # the nearest sound sample
    off_at_start = tau.copy()
    off_at_start[:500] = 0.0  # a motor switched on half a second into the run
    assert repair_corrupt_samples(q, off_at_start, ("a", "b"))[2].samples == ()


@pytest.mark.skipif(not (DATASETS / "xmate7p").is_dir(), reason="xMate7p dataset not present")
def test_a_row_of_zeros_in_a_real_log_no_longer_moves_a_mass(tmp_path):
    """Real xMate7p, 50 Hz, one period, file 1 -> 2: one row (of 1001) of zero positions and
    torques. Its positions were repaired and its torques kept, which moved joint2 from 6.6 to
    13.4 kg and the arm from 25.7 to 30.4 kg with status ok; now the fit is the clean one's."""
    root = DATASETS / "xmate7p"
    urdf = root / "XM7p.urdf"
    train, held = (
        read_xmate(root / "50Hz_1period" / f"xMate7p_traj{k}_results.csv", 0.02) for k in (1, 2)
    )
    joints = tuple(f"joint{k}" for k in range(1, train.q.shape[1] + 1))
    q, tau = train.q.copy(), train.tau.copy()
    q[len(q) // 2] = tau[len(q) // 2] = 0.0
    files = {name: write_contract_csv(tmp_path / f"{name}.csv", joints, signals)
             for name, signals in (("clean", train), ("zeros", Signals(train.t, q, tau)),
                                   ("held", held))}  # fmt: skip
    clean = physid.identify(urdf, files["clean"], validate=files["held"])
    zeros = physid.identify(urdf, files["zeros"], validate=files["held"])
    assert zeros.status == clean.status == "ok"
    assert abs(zeros.raw.moving_mass() - clean.raw.moving_mass()) < 0.01 * clean.raw.moving_mass()
    assert zeros.raw.validation.relative_error < 1.01 * clean.raw.validation.relative_error


@pytest.mark.slow
def test_a_dead_and_a_stuck_torque_of_a_real_log_are_left_out_of_the_fit(tmp_path):
    """Real KUKA LWR4+ (12 s of file 2 -> 12 s of file 1): the base joint's torque logged as one
    value in every row, and joint 5's frozen from 7.5 s on. The fit leaves the base joint's
    torque out (as fit_joints would) and the frozen rows out, and is then exactly the fit of
    the sound rows with those joints (measured on the whole file 2 with the faults fitted as
    logged: 4.26 % and 3.78 % held-out error against 2.70 % clean, status ok, no warning). A
    column of zeros may be a passive joint's torque: it is fitted, and named."""
    urdf = KUKA / "kuka_lwr4.urdf"
    clean = kuka_slice(2)
    held = write_contract_csv(tmp_path / "held.csv", KUKA_JOINTS, kuka_slice(1))
    cut = int(np.searchsorted(clean.t - clean.t[0], 7.5))
    tau = clean.tau.copy()
    tau[:, 0] = 0.35
    tau[cut:, 4] = tau[cut, 4]
    faulty = write_contract_csv(tmp_path / "faulty.csv", KUKA_JOINTS,
                                Signals(clean.t, clean.q, tau))  # fmt: skip
    sound = write_contract_csv(tmp_path / "sound.csv", KUKA_JOINTS,
                               Signals(clean.t[:cut], clean.q[:cut], tau[:cut]))  # fmt: skip
    others = list(KUKA_JOINTS[1:])
    reference = physid.identify(urdf, sound, validate=held, config={"fit_joints": others})
    result = physid.identify(urdf, faulty, validate=held)
    assert result.raw.model.fitted_joints == tuple(others)
    assert any(
        w.startswith("torque not logged? tau_lwr_0_joint (0.35) holds") for w in result.warnings
    ), result.warnings
    (stuck,) = result.document["preprocessing"]["row_repairs"][0]["stuck_torques"]
    assert (stuck["joint"], stuck["rows"]) == ("lwr_4_joint", len(clean.t) - cut)
    assert stuck["t"] == [clean.t[cut], clean.t[-1]]
    assert result.validation_error == pytest.approx(reference.validation_error, rel=1e-9)
    assert result.raw.moving_mass() == pytest.approx(reference.raw.moving_mass(), rel=1e-9)
    # physid validate on its params.json leaves that joint out as identify's validation did
    # (it scored the dead column: every file reads which torques were no torque)
    result.save(tmp_path / "fit")
    assert result.document["provenance"]["torques_not_logged"] == ["lwr_0_joint"]
    validated = physid.validate(urdf, tmp_path / "fit" / "params.json", held)
    assert validated.relative_error == pytest.approx(result.validation_error, rel=1e-9)
    assert np.isnan(validated.overall["rmse"]["lwr_0_joint"])
    # its terms are in no equation: their std is undefined (null), not a prior std read from
    # an empty column (4e13 N m on the UR10e), and no one-way offset is reported for them
    assert all(np.isnan(v) for v in result.document["joints"]["lwr_0_joint"]["std"].values())
    assert not any("'lwr_0_joint' moved one way" in w for w in result.warnings)
    tau[:, 0] = 0.0
    zeros = write_contract_csv(tmp_path / "zeros.csv", KUKA_JOINTS,
                               Signals(clean.t, clean.q, tau))  # fmt: skip
    model = _kuka_model()
    kept, warning = unlogged_torque_warning(model, [load_trajectory(zeros, model)])
    assert kept is model and "tau_lwr_0_joint is 0 in every row" in warning
    # frozen in the middle: two pieces, named for what happened (not "rows lost")
    tau = clean.tau.copy()
    tau[cut - 400 : cut + 400, 4] = tau[cut - 400, 4]
    middle = write_contract_csv(tmp_path / "middle.csv", KUKA_JOINTS,
                                Signals(clean.t, clean.q, tau))  # fmt: skip
    pieces = load_segments(middle, model)
    assert [p.n_samples for p in pieces] == [cut - 400, len(clean.t) - cut - 400]
    said = [f.message for f in pieces[0].warnings]
    assert any("800 of" in w and "lwr_4_joint's torque holds" in w for w in said)
    assert not any("positions jump" in w for p in pieces for w in [f.message for f in p.warnings])
    assert load_trajectory(middle, model).n_samples == cut - 400  # one recording: the longest


def _kuka_model():
    return build_robot_model(load_urdf(KUKA / "kuka_lwr4.urdf"))


@pytest.mark.slow
def test_a_wrapped_real_joint_identifies_as_the_unwrapped_one(tmp_path):
    """Real KUKA LWR4+ (8 s of file 2 -> 8 s of file 1): its base joint turns about the vertical,
    so shifting its angle by 3 rad changes no torque; logged modulo one turn it wraps (the fit
    failed: "no physically consistent parameters"). Unwrapped, the fit is the shifted one's."""
    urdf = KUKA / "kuka_lwr4.urdf"
    fits = {}
    for kind in ("shifted", "wrapped"):
        files = []
        for k in (2, 1):
            s = kuka_slice(k, 8.0)
            q = s.q.copy()
            q[:, 0] += 3.0
            if kind == "wrapped":
                q[:, 0] = _wrap(q[:, 0])
            files.append(write_contract_csv(tmp_path / f"{kind}_{k}.csv", KUKA_JOINTS,
                                            Signals(s.t, q, s.tau)))  # fmt: skip
        fits[kind] = physid.identify(urdf, files[0], validate=files[1])
    shifted, wrapped = fits["shifted"].raw, fits["wrapped"].raw
    assert wrapped.validation.relative_error == pytest.approx(
        shifted.validation.relative_error, rel=1e-6
    )
    # the moving mass to the solver's tolerance (its std here is ~8 kg; measured 7e-5 kg apart)
    assert wrapped.moving_mass() == pytest.approx(shifted.moving_mass(), abs=1e-3)
    repairs = fits["wrapped"].document["preprocessing"]["row_repairs"]
    crossings = [int(np.sum(np.diff(np.sign(kuka_slice(k, 8.0).q[:, 0] + 3.0 - np.pi)) != 0))
                 for k in (2, 1)]  # fmt: skip
    assert min(crossings) > 0
    assert [r["angles_unwrapped"] for r in repairs] == [{"lwr_0_joint": n} for n in crossings]


def _write(path: Path, t, q, tau) -> Path:
    signals = Signals(np.asarray(t), np.asarray(q), np.asarray(tau))
    return write_contract_csv(path, KUKA_JOINTS, signals)


def test_a_torque_at_its_limit_is_kept_and_named(tmp_path):
    """Real KUKA LWR4+ (4 s of file 2) with joint 3's torque clipped where it passes its 90th
    percentile (an actuator at its limit): the rows are kept as logged and the warning names the
    joint, the limit and its share of the rows; the unclipped file gets no such warning. Held at
    that limit for 1.5 s while the arm moves, the rows are not dropped as a stuck sensor's."""
    s = kuka_slice(2, 4.0)
    limit = float(np.percentile(s.tau[:, 3], 90))
    clipped = s.tau.copy()
    clipped[:, 3] = np.minimum(clipped[:, 3], limit)
    (found,) = saturated_torques(clipped)
    assert (found.column, found.value) == (3, limit)
    assert found.rows == np.count_nonzero(s.tau[:, 3] >= limit)
    trajectory = load_trajectory(_write(tmp_path / "clip.csv", s.t, s.q, clipped), _kuka_model())
    assert np.array_equal(trajectory.tau, clipped)
    (note,) = [w for w in [f.message for f in trajectory.warnings] if "torque limit" in w]
    share = 100 * found.rows / len(s.t)
    assert f"lwr_3_joint at {limit:.6g} in {share:.1f} % of the rows" in note
    clean = load_trajectory(_write(tmp_path / "clean.csv", s.t, s.q, s.tau), _kuka_model())
    assert not [w for w in [f.message for f in clean.warnings] if "torque limit" in w]
    # held at the limit for 1.5 s while the arm moves: an actuator, not a sensor that froze
    held = clipped.copy()
    start = int(np.searchsorted(s.t - s.t[0], 1.0))
    stop = int(np.searchsorted(s.t - s.t[0], 2.5))
    held[start:stop, 3] = limit
    assert stuck_torque_runs(s.t, s.q, held)  # one value for 1.5 s of motion
    kept = load_trajectory(_write(tmp_path / "held.csv", s.t, s.q, held), _kuka_model())
    assert kept.n_samples == len(s.t)
    assert not [w for w in [f.message for f in kept.warnings] if "stopped changing" in w]


def test_exact_duplicate_rows_are_dropped_and_said(tmp_path):
    s = kuka_slice(2, 4.0)
    rows = np.r_[np.arange(300), 299, np.arange(300, len(s.t))]  # row 300 written twice
    path = _write(tmp_path / "dup.csv", s.t[rows], s.q[rows], s.tau[rows])
    trajectory = load_trajectory(path, _kuka_model())
    assert trajectory.n_samples == len(s.t)
    assert np.array_equal(trajectory.q, s.q)
    assert trajectory.row_repairs["duplicate_rows_dropped"] == [301]
    said = [f.message for f in trajectory.warnings]
    assert any("1 rows dropped as exact copies" in w for w in said)


def test_a_repeated_stamp_with_other_values_is_an_error_naming_the_row(tmp_path):
    s = kuka_slice(2, 4.0)
    t = s.t.copy()
    t[300] = t[299]
    path = _write(tmp_path / "stamp.csv", t, s.q, s.tau)
    with pytest.raises(InputError, match=r"stamp.csv: column 't' is not strictly increasing at "
                                         r"row 301 .*0 s after the previous row"):  # fmt: skip
        load_trajectory(path, _kuka_model())


def test_a_real_joint_a_full_turn_off_for_eleven_rows(tmp_path):
    """Real KUKA LWR4+ file 2: eleven rows of a joint read a full turn off (a turn counter
    misread). Within 2 pi they are brought back and the recording equals the clean one; past
    2 pi the error says a full-turn step, not "degrees" (it did)."""
    s = kuka_slice(2, 4.0)
    lwr_3 = KUKA_JOINTS.index("lwr_3_joint")
    q = s.q.copy()
    q[300:311, lwr_3] -= 2.0 * np.pi * np.sign(q[300, lwr_3])  # toward zero: within 2 pi
    assert np.max(np.abs(q[:, lwr_3])) < 2.0 * np.pi
    loaded = load_trajectory(_write(tmp_path / "turn.csv", s.t, q, s.tau), _kuka_model())
    np.testing.assert_allclose(loaded.q, s.q, atol=1e-12)
    assert loaded.row_repairs["angles_unwrapped"] == {"lwr_3_joint": 2}
    q = s.q.copy()
    q[300:311, lwr_3] += 2.0 * np.pi * np.sign(q[300, lwr_3])  # away from zero: past 2 pi
    with pytest.raises(
        InputError,
        match=r"turn.csv: position of joint 'lwr_3_joint' reaches .*"
        r"steps by a full turn .* 2 times \(between data "
        r"rows 300-301, 311-312, .*\): a turn counter",
    ):
        load_trajectory(_write(tmp_path / "turn.csv", s.t, q, s.tau), _kuka_model())


def test_time_in_milliseconds_is_refused(tmp_path):
    s = kuka_slice(2, 4.0)
    path = _write(tmp_path / "ms.csv", 1000.0 * s.t, s.q, s.tau)
    with pytest.raises(InputError, match=r"ms.csv: column 't' advances 4.99.* is t in seconds"):
        load_trajectory(path, _kuka_model())
    # a 1 kHz log in ms steps by exactly 1 (it passed, and the fit failed: "rank deficient")
    t = np.arange(len(s.t), dtype=float)
    path = _write(tmp_path / "khz.csv", t, s.q, s.tau)
    with pytest.raises(InputError, match=r"khz.csv: column 't' advances 1 per row"):
        load_trajectory(path, _kuka_model())


@pytest.mark.slow
def test_a_gap_in_the_stamps_splits_the_recording(tmp_path):
    """Real KUKA LWR4+: 0.5 s cut out of the training file (a logger pause; was an error) is
    identified exactly as its two pieces given as two files; a piece under 1 s is dropped."""
    urdf = KUKA / "kuka_lwr4.urdf"
    s = kuka_slice(2, 10.0)
    t = s.t - s.t[0]
    cut = (t > 4.0) & (t < 4.5)
    first, second = np.flatnonzero(t <= 4.0), np.flatnonzero(t >= 4.5)
    gap = _write(tmp_path / "gap.csv", s.t[~cut], s.q[~cut], s.tau[~cut])
    parts = [_write(tmp_path / f"part{k}.csv", s.t[rows], s.q[rows], s.tau[rows])
             for k, rows in enumerate((first, second))]  # fmt: skip
    held = write_contract_csv(tmp_path / "held.csv", KUKA_JOINTS, kuka_slice(1, 6.0))
    split = physid.identify(urdf, gap, validate=held)
    two = physid.identify(urdf, parts, validate=held)
    # (to the SDP solver's tolerance: measured 2e-8 apart)
    assert split.raw.validation.relative_error == pytest.approx(
        two.raw.validation.relative_error, rel=1e-6
    )
    assert split.raw.moving_mass() == pytest.approx(two.raw.moving_mass(), abs=1e-3)
    note = next(w for w in split.document["provenance"]["warnings_from_data"] if "gaps" in w)
    rows = f"rows 1-{first.size}, rows {first.size + 1}-{first.size + second.size}"
    assert f"identified as 2 separate recordings ({rows})" in note
    # a piece shorter than a second between two gaps is dropped, and said
    short = (t > 4.0) & (t < 4.5) | (t > 5.2) & (t < 5.7)
    path = _write(tmp_path / "short.csv", s.t[~short], s.q[~short], s.tau[~short])
    pieces = physid.identify(urdf, path).document["provenance"]["warnings_from_data"]
    assert any("identified as 2 separate recordings" in w and "dropped as shorter than 1 s" in w
               for w in pieces)  # fmt: skip


def test_a_streamed_recording_is_repaired_block_by_block(tmp_path):
    """A file too large to hold is read in blocks: its corrupt samples are repaired there too,
    with the file's row numbers (one inside a block, one on a block's first row)."""
    from physid.recordings.streamed import open_recording

    s = kuka_slice(2, 8.0)
    tau = s.tau.copy()
    tau[700, 1] = 1e5  # inside the second block of 500 rows
    tau[1000, 3] = -1e5  # the first row of the third block
    path = _write(tmp_path / "long.csv", s.t, s.q, tau)
    model = _kuka_model()
    whole = load_trajectory(path, model, time_base="stamps")
    streamed = open_recording(path, model, block_rows=500)
    blocks = streamed.in_memory()
    found = [(r["row"], r["column"]) for r in streamed.row_repairs["corrupt_samples_repaired"]]
    assert found == [(701, "tau_lwr_1_joint"), (1001, "tau_lwr_3_joint")]
    assert any("2 corrupt samples in 2 of" in w for w in [f.message for f in streamed.warnings])
    np.testing.assert_array_equal(blocks.q, whole.q)
    # inside a block the same interpolation as in memory; on a block's first row the block's
    # own next sample stands in (no neighbour before it in the block)
    np.testing.assert_array_equal(blocks.tau[:1000], whole.tau[:1000])
    assert blocks.tau[1000, 3] == pytest.approx(s.tau[1001, 3])
    assert abs(whole.tau[1000, 3] - s.tau[1000, 3]) < 1.0


def test_a_joint_moves_beyond_the_still_bound_and_its_own_noise():
    """moving_joints: white noise of 0.3 mrad over 1e5 samples (span about 3 mrad) and a 12-bit
    encoder toggling between two ticks do not move; a sine sampled 8 times a period, a slow
    drift of 10 mrad under 10 urad of noise, and a tick-quantised motion do."""
    from physid.recordings.glitches import moving_joints

    rng = np.random.default_rng(2)
    n = 100_000
    tick = 2 * np.pi / 4096
    t = np.arange(n) / 1000.0
    q = np.column_stack([
        3e-4 * rng.standard_normal(n),
        tick * (rng.uniform(size=n) < 0.5),
        0.5 * np.sin(2 * np.pi * t / 0.0083) + 1e-6 * rng.standard_normal(n),  # 8.3 a period
        0.01 * t / t[-1] + 1e-5 * rng.standard_normal(n),
        tick * np.round(0.8 * np.sin(2 * np.pi * 0.3 * t) / tick),
        np.zeros(n),
    ])  # fmt: skip
    assert np.ptp(q[:, 0]) > 2e-3 and np.ptp(q[:, 1]) > 1e-3
    np.testing.assert_array_equal(moving_joints(q), [False, False, True, True, True, False])


def test_the_position_noise_of_fewer_rows_than_its_differences_need_is_the_quantum():
    """A 3-row recording read in blocks (fuzz seed 194) asked fourth differences of 3 rows:
    NumPy's "Mean of empty slice" RuntimeWarning reached the user's terminal before the error
    line. Too few rows to read a noise from leave the encoder's quantum (0 for smooth
    values)."""
    import warnings

    from physid.recordings.glitches import position_noise

    q = np.array([[0.0, 1.0], [0.001, 1.002], [0.002, 1.004]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        noise = position_noise(q, order=4)
    np.testing.assert_allclose(noise, [0.001, 0.002])  # whole multiples: a quantum each
