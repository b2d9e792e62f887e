"""physid.offline.checks.suspect: well-formed but wrong data are named, good data are left alone.

Simulated arm data (known truth) corrupted one way at a time must give exactly one reason of
the expected kind; the clean simulation and the shipped real recordings must give none.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from conftest import DATASETS, EXAMPLES, KUKA, TX40, kuka_slice, require_dataset

from physid.offline.checks.gravity_comparison import gravity_comparison
from physid.offline.checks.suspect import suspect_reasons
from physid.recordings.trajectory import Trajectory, split_by_fraction
from physid.robot.model import with_gravity


@pytest.fixture(scope="module")
def clean(arm_experiment) -> Trajectory:
    """The 10 s, 1 kHz validation run of the simulated arm: quantised q, noisy tau."""
    return arm_experiment.validation.recorded


def _swapped_columns(trajectory: Trajectory, a: int, b: int) -> Trajectory:
    tau = trajectory.tau.copy()
    tau[:, [a, b]] = tau[:, [b, a]]
    return replace(trajectory, tau=tau)


def _one_joint_constant(trajectory: Trajectory, joint: int) -> Trajectory:
    tau = trajectory.tau.copy()
    tau[:, joint] = 0.0
    return replace(trajectory, tau=tau)


def _one_joint_flipped(trajectory: Trajectory, joint: int) -> Trajectory:
    tau = trajectory.tau.copy()
    tau[:, joint] *= -1.0
    return replace(trajectory, tau=tau)


def _one_joint_scaled(trajectory: Trajectory, joint: int, factor: float) -> Trajectory:
    """One joint's torque column in another unit (x1000: mN m) or motor-side (/ a gear)."""
    tau = trajectory.tau.copy()
    tau[:, joint] *= factor
    return replace(trajectory, tau=tau)


def _position_changed(trajectory: Trajectory, joint: int, sign: float, offset: float):
    """One joint's position counted the other way (``sign`` -1) or from another zero."""
    q = trajectory.q.copy()
    q[:, joint] = sign * q[:, joint] + offset
    return replace(trajectory, q=q)


def _copied(trajectory: Trajectory, field: str, source: int, target: int) -> Trajectory:
    """Column ``source`` of ``field`` written over column ``target`` (a logger's mapping error)."""
    values = getattr(trajectory, field).copy()
    values[:, target] = values[:, source]
    return replace(trajectory, **{field: values})


def test_clean_simulation_is_not_suspect(arm_experiment, clean):
    assert suspect_reasons(arm_experiment.model, [clean, arm_experiment.train.recorded]) == []
    comparison = gravity_comparison(arm_experiment.model, clean)
    # The shoulder and elbow carry the gravity torque; the true bodies are the URDF's +-20 %.
    # Measured: scale 0.99, correlation 0.995 (joint_2 0.995, joint_3 0.997).
    assert comparison.joints == ("joint_2", "joint_3")
    assert comparison.scale == pytest.approx(1.0, abs=0.2)
    assert comparison.correlation > 0.95 and np.all(comparison.joint_correlations > 0.95)
    assert comparison.swap is None


@pytest.mark.parametrize(
    ("corrupt", "keyword"),
    [
        (lambda tr: replace(tr, tau=-tr.tau), "sign looks flipped"),
        (lambda tr: replace(tr, tau=0.1 * tr.tau), "scale implausible"),
        (lambda tr: replace(tr, tau=10.0 * tr.tau), "scale implausible"),
        (lambda tr: replace(tr, t=1000.0 * tr.t), "milliseconds"),
        (lambda tr: replace(tr, q=np.degrees(tr.q)), "degrees"),
        (lambda tr: _swapped_columns(tr, 1, 2), "another order"),
        (lambda tr: _swapped_columns(tr, 1, 4), "another order"),
        (lambda tr: _one_joint_flipped(tr, 2), "sign flipped"),
        (lambda tr: _one_joint_constant(tr, 2), "the torque of 'joint_3' (0) is the same in"),
        (lambda tr: _copied(tr, "tau", 4, 5), "torque columns of 'joint_5' and 'joint_6' are "),
        (lambda tr: _copied(tr, "q", 5, 4), "position columns of 'joint_5' and 'joint_6' are "),
        (
            lambda tr: _one_joint_scaled(tr, 2, 1000.0),
            "'joint_3' 931.7 x, where the other gravity-loaded joint reads 0.95 x "
            "(a factor of 1000",
        ),
        (
            lambda tr: _one_joint_scaled(tr, 1, 0.01),
            "'joint_2' 0.009541 x, where the other gravity-loaded joint reads 0.93 x (another unit",
        ),
        (
            lambda tr: _position_changed(tr, 2, -1.0, 0.0),
            "the position of 'joint_3' looks negated (the joint counts the other way than the URDF",
        ),
        (
            lambda tr: _position_changed(tr, 1, 1.0, np.pi / 2),
            "the position of 'joint_2' looks +90 deg off the URDF's zero: with +90 deg taken off",
        ),
        (
            lambda tr: replace(tr, q=tr.q[:, [0, 2, 1, 3, 4, 5]]),
            "the position columns of 'joint_2' and 'joint_3' look exchanged: exchanged back",
        ),
    ],
    ids=[
        "sign",
        "scale-0.1",
        "scale-10",
        "milliseconds",
        "degrees",
        "swap-2-3",
        "swap-2-5",
        "j3",
        "j3-not-logged",
        "wrist-torque-copied",
        "wrist-position-copied",
        "j3-in-mNm",
        "j2-motor-side",
        "q3-negated",
        "q2-quarter-turn",
        "q2-q3-exchanged",
    ],  # fmt: skip
)
def test_each_corruption_gives_one_reason_of_its_kind(arm_experiment, clean, corrupt, keyword):
    reasons = suspect_reasons(arm_experiment.model, [corrupt(clean)])
    assert len(reasons) == 1, reasons
    assert reasons[0].startswith("simulation: ") and keyword in reasons[0]
    assert "\n" not in reasons[0]


def test_the_checks_of_one_recording_low_pass_its_signals_once(arm_experiment, clean, monkeypatch):
    # the unit, torque, dead-encoder and time-scale checks read the same low-passed positions
    # and torques (CheckBand): filtered once per recording, not once per check
    import physid.offline.checks.gravity_comparison as comparison_module

    filtered = []
    lowpass = comparison_module.lowpass
    monkeypatch.setattr(
        comparison_module, "lowpass", lambda x, rate: filtered.append(x.shape) or lowpass(x, rate)
    )
    assert suspect_reasons(arm_experiment.model, [clean]) == []
    assert filtered == [clean.q.shape, clean.tau.shape]


def test_a_slow_log_in_seconds_is_not_told_its_time_is_in_milliseconds(arm_experiment, clean):
    """5 Hz is below the rates robots log at, but were its stamps in ms this arm's joints would
    move 1000 x faster than they read, beyond 50 rad/s: the motion says seconds (the real KUKA
    at 10 Hz was suspect for it). The 1 kHz run stamped in ms (1 "Hz") stays suspect."""
    slow = clean.rows(slice(None, None, 200))
    assert slow.sample_rate_hz == pytest.approx(5.0)
    assert not any("milliseconds" in r for r in suspect_reasons(arm_experiment.model, [slow]))
    in_ms = replace(clean, t=1000.0 * clean.t)  # 1 "Hz": a 1 kHz log's stamps in ms
    assert any("milliseconds" in r for r in suspect_reasons(arm_experiment.model, [in_ms]))


def test_a_fast_arm_at_5_khz_stamped_in_ms_is_told_its_time_is_in_milliseconds():
    """The real Staubli TX40 (5 kHz) with t in ms reads as a 5 Hz log whose row-to-row speeds
    (noise included) peak at 11.5 rad/s once x 1000: above the old 10 rad/s bound it passed as
    seconds, status ok, a joint's mass x2.7. No arm's joints move at 50 rad/s."""
    from physid.offline.checks.recording_checks import sample_rate_finding

    assert "milliseconds" in sample_rate_finding(5.0, 11.5e-3).message
    assert sample_rate_finding(5.0, 1.1) is None  # the real KUKA kept at every 20th row: seconds


def test_reported_values_of_the_corruptions(arm_experiment, clean):
    model = arm_experiment.model
    flipped = gravity_comparison(model, replace(clean, tau=-clean.tau))
    scaled = gravity_comparison(model, replace(clean, tau=0.1 * clean.tau))
    swapped = gravity_comparison(model, _swapped_columns(clean, 1, 2))
    assert flipped.scale == pytest.approx(-gravity_comparison(model, clean).scale)
    assert scaled.scale == pytest.approx(0.1 * gravity_comparison(model, clean).scale)
    # Column 3 holds joint_2's torque: it follows joint_2's gravity torque at r 0.99.
    joint, other, r_own, r_other = swapped.swap
    assert (joint, other) == ("joint_2", "joint_3") and r_other > 0.95 > r_own


def test_time_unit_does_not_change_the_torque_comparison(arm_experiment, clean):
    # Derivatives are taken per sample: the nuisance columns scale with the time unit.
    in_ms = gravity_comparison(arm_experiment.model, replace(clean, t=1000.0 * clean.t))
    assert in_ms.scale == pytest.approx(gravity_comparison(arm_experiment.model, clean).scale, 0.1)


def test_unnamed_recordings_are_numbered(arm_experiment, clean):
    unnamed = replace(clean, source="", tau=-clean.tau)
    reasons = suspect_reasons(arm_experiment.model, [clean, unnamed])
    assert len(reasons) == 1 and reasons[0].startswith("recording 2: ")


def test_no_gravity_no_torque_verdict(arm_experiment, clean):
    # A horizontal robot (here: no gravity at all) gives nothing to compare torques with.
    weightless = with_gravity(arm_experiment.model, np.zeros(3))
    assert gravity_comparison(weightless, clean) is None
    assert suspect_reasons(weightless, [replace(clean, tau=-clean.tau)]) == []


def test_unlimited_joint_may_turn_in_radians_but_not_in_degrees(arm_experiment, clean):
    # joint_1 turns about the vertical: winding it up 1 rad/s over 10 s leaves gravity alone.
    pin_model = arm_experiment.model.pin_model.copy()
    lower, upper = pin_model.lowerPositionLimit.copy(), pin_model.upperPositionLimit.copy()
    lower[0] = upper[0] = 0.0  # how Pinocchio stores a revolute joint without limits
    pin_model.lowerPositionLimit, pin_model.upperPositionLimit = lower, upper
    unlimited = replace(arm_experiment.model, pin_model=pin_model)
    q = clean.q.copy()
    q[:, 0] += 1.0 * clean.t
    assert np.abs(q[:, 0]).max() > 2.0 * np.pi + 0.5
    assert suspect_reasons(unlimited, [replace(clean, q=q)]) == []
    in_degrees = suspect_reasons(unlimited, [replace(clean, q=np.degrees(q))])
    assert len(in_degrees) == 1 and "joint_1" in in_degrees[0] and "degrees" in in_degrees[0]
    # With its URDF limit of 2.8 rad the same radians are suspect.
    assert "degrees" in suspect_reasons(arm_experiment.model, [replace(clean, q=q)])[0]


def _kuka():
    from physid.files.config import load_config, robot_for
    from physid.workflows import load_trajectories

    require_dataset(KUKA)
    config = load_config(EXAMPLES / "kuka_lwr4" / "config.yaml")
    model = robot_for(KUKA / "kuka_lwr4.urdf", config)
    files = [EXAMPLES / "kuka_lwr4" / f"measurements_{k}.yaml" for k in (1, 2, 3)]
    return model, load_trajectories(files, model, config)


def _tx40():
    from physid.files.config import load_config, robot_for
    from physid.workflows import load_trajectories

    require_dataset(TX40)
    config = load_config(EXAMPLES / "staubli_tx40" / "config.yaml")
    model = robot_for(TX40 / "tx40_mdh_modified.urdf", config)
    return model, load_trajectories([EXAMPLES / "staubli_tx40" / "recording.yaml"], model, config)


@pytest.mark.parametrize("dataset", [_kuka, _tx40], ids=["kuka_lwr4", "staubli_tx40"])
def test_shipped_real_recordings_are_not_suspect(dataset):
    model, trajectories = dataset()
    assert suspect_reasons(model, trajectories) == []
    # Also the pieces identify and validate on (TX40: first two thirds / last third).
    pieces = [p for t in trajectories for p in split_by_fraction(t, 0.6667)]
    assert suspect_reasons(model, pieces) == []
    # Measured: KUKA scale 0.95 .. 0.98, r >= 0.99 on lwr_1..3; TX40 scale 0.95, r 0.93, 0.89.
    for trajectory in trajectories:
        comparison = gravity_comparison(model, trajectory)
        assert 0.8 < comparison.scale < 1.25 and np.all(comparison.joint_correlations > 0.8)


def test_pure_noise_torque_is_suspect_not_ok(arm_experiment):
    """Issue 10 item 4: noise in place of the torques identifies nothing; the status says so."""
    from physid.files.config import IdentifyConfig
    from physid.offline.pipeline import identify

    recording = arm_experiment.train.recorded
    rng = np.random.default_rng(2)
    noise = replace(recording, tau=rng.standard_normal(recording.tau.shape) * 5.0)
    result = identify(arm_experiment.model, [noise], IdentifyConfig())
    assert result.status != "ok"
    assert any("unexplained" in reason for reason in result.suspect)
    clean = identify(arm_experiment.model, [recording], IdentifyConfig())
    assert not any("unexplained" in reason for reason in clean.suspect)


def test_a_pendulum_driven_above_its_natural_frequency_is_not_called_swapped():
    """Real DFKI double pendulum, open-loop torque (0.4 sin 10t, 0.8 cos 10t) N m: the shoulder
    is driven faster than it swings by itself, so its torque runs against its gravity torque
    (correlation -0.16) while the URDF's whole inverse dynamics follows it (0.50). It was called
    'joint columns may be in another order'; the authors' own model fits the file with the
    columns as stored (dataset README). A real swap is still named (the same file swapped)."""
    from physid.files.config import parse_config, robot_for
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import trajectory_from_table

    folder = require_dataset(DATASETS / "dfki_double_pendulum")
    model = robot_for(
        folder / "identified_parameters" / "model_2.1" / "pendubot_world.urdf", parse_config({})
    )
    raw = np.genfromtxt(
        folder / "sys_id_20220812" / "20220812-055032-PM_measured.csv", delimiter=",", names=True
    )
    names = raw.dtype.names  # time, pos1, pos2, vel1, vel2, tau1, tau2
    columns = {"t": raw[names[0]], "q_Joint1": raw[names[1]], "q_Joint2": raw[names[2]],
               "tau_Joint1": raw[names[5]], "tau_Joint2": raw[names[6]]}  # fmt: skip
    trajectory = trajectory_from_table(Table(columns, "055032"), model)
    comparison = gravity_comparison(model, trajectory)
    assert comparison.joint_correlations[0] < 0.3  # the gravity test alone would flag it
    assert comparison.model_correlations[0] > 0.3
    assert suspect_reasons(model, [trajectory]) == []
    swapped = suspect_reasons(model, [_swapped_columns(trajectory, 0, 1)])
    assert any("another order" in reason or "sign" in reason for reason in swapped), swapped


def test_a_short_correct_real_log_is_not_called_reordered(arm_experiment, clean):
    """Real xMate7p at 1 kHz, the start of each run: after friction and inertia are taken out of
    a 10 Hz comparison, 0.5 s leaves 5 degrees of freedom, and the joints' gravity correlations
    read -0.40 / -0.51 on correct columns ("joint columns may be in another order"); 1.5 s of
    run 3 read a 2.1 x torque scale. Too short to judge: no torque verdict. The simulated arm's
    swapped columns are still named from 3 s."""
    import sys

    sys.path.insert(0, str(EXAMPLES.parent / "benchmarks"))
    from real_cases import XMATE_JOINTS, read_xmate

    from physid.files.config import parse_config, robot_for
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import trajectory_from_table

    folder = require_dataset(DATASETS / "xmate7p")
    model = robot_for(folder / "XM7p.urdf", parse_config({}))
    for run, rows in ((1, 500), (2, 500), (3, 1500)):
        s = read_xmate(folder / "1kHz_5s" / f"xMate7p_traj{run}_results.csv", 0.001)
        columns = {"t": s.t[:rows]}
        columns |= {f"q_{j}": s.q[:rows, k] for k, j in enumerate(XMATE_JOINTS)}
        columns |= {f"tau_{j}": s.tau[:rows, k] for k, j in enumerate(XMATE_JOINTS)}
        trajectory = trajectory_from_table(Table(columns, f"traj{run}"), model)
        assert gravity_comparison(model, trajectory) is None
        assert suspect_reasons(model, [trajectory]) == []
    three_seconds = replace(clean, t=clean.t[:3000], q=clean.q[:3000], tau=clean.tau[:3000])
    swapped = suspect_reasons(arm_experiment.model, [_swapped_columns(three_seconds, 1, 2)])
    assert any("another order" in reason for reason in swapped)


def test_real_kuka_position_mistakes_are_named_by_their_fix():
    """Real KUKA LWR4+ file 2 (20 s). With the shoulder's position negated the verdict was
    "torque sign looks flipped"; with the elbow half a turn off, "lwr_2_joint does not follow
    its gravity torque". The single fix that makes every gravity-loaded joint follow its
    gravity torque again is named instead (physid.offline.checks.column_fixes); the file as recorded
    stays unsuspected."""
    from physid.files.config import parse_config, robot_for
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import trajectory_from_table

    require_dataset(KUKA)
    model = robot_for(KUKA / "kuka_lwr4.urdf", parse_config({}))
    s = kuka_slice(2, 20.0)
    joints = [f"lwr_{k}_joint" for k in range(7)]

    def recording(q: np.ndarray, tau: np.ndarray = s.tau) -> Trajectory:
        columns = {"t": s.t} | {f"q_{j}": q[:, k] for k, j in enumerate(joints)}
        columns |= {f"tau_{j}": tau[:, k] for k, j in enumerate(joints)}
        return trajectory_from_table(Table(columns, "kuka_2"), model)

    assert suspect_reasons(model, [recording(s.q)]) == []
    shoulder_negated, elbow_half_turn = s.q.copy(), s.q.copy()
    shoulder_negated[:, 1] *= -1.0
    elbow_half_turn[:, 3] += np.pi
    (negated,) = suspect_reasons(model, [recording(shoulder_negated)])
    assert "position of 'lwr_1_joint' looks negated" in negated, negated
    assert "sign looks flipped" not in negated
    (turned,) = suspect_reasons(model, [recording(elbow_half_turn)])
    assert "position of 'lwr_3_joint' looks +180 deg off the URDF's zero" in turned, turned
    assert turned.endswith("as recorded: lwr_1_joint 1.00 / 1.00, lwr_2_joint 1.00 / -0.99, "
                           "lwr_3_joint 1.00 / -1.00)"), turned  # fmt: skip
    # the elbow's axis reversed against the URDF's (its angle and its torque negated, as a
    # driver of the other convention logs them) read "lwr_2_joint +180 deg off", first
    reversed_q, reversed_tau = s.q.copy(), s.tau.copy()
    reversed_q[:, 3] *= -1.0
    reversed_tau[:, 3] *= -1.0
    (axis,) = suspect_reasons(model, [recording(reversed_q, reversed_tau)])
    assert axis.startswith("kuka_2: the axis of 'lwr_3_joint' looks reversed"), axis
    assert "with both negated" in axis and "lwr_3_joint 1.00 / 0.8" in axis, axis
    # the roll joint half a turn off reads in gravity exactly as the shoulder's axis reversed:
    # one answer, the position fix first; with that roll joint negated, four single fixes are
    # within 0.1 of the right one (two of them alike): it is still named, the weakest dropped
    roll_half_turn, roll_negated = s.q.copy(), s.q.copy()
    roll_half_turn[:, 2] += np.pi
    roll_negated[:, 2] *= -1.0
    (half,) = suspect_reasons(model, [recording(roll_half_turn)])
    assert half.startswith(
        "kuka_2: the position of 'lwr_2_joint' looks +180 deg off the URDF's "
        "zero (alike in gravity: the axis of 'lwr_1_joint' looks reversed"
    ), half
    (negated,) = suspect_reasons(model, [recording(roll_negated)])
    assert negated.startswith("kuka_2: the position of 'lwr_2_joint' looks negated"), negated
    assert negated.count("; or ") == 2, negated


def test_a_short_stretch_of_a_correct_ur10e_run_is_not_called_swapped():
    """Real UR10e, ptp_10_points, 3 s stretches (torque = literature gain x current). At 12-15 s
    the shoulder's and elbow's gravity torques have the same shape: the shoulder's own column
    follows its gravity torque at r 0.97, the elbow's at 0.99, and "the gravity torque of
    'shoulder_lift_joint' is followed by the torque of 'elbow_joint'" was reported. An exchange
    must show both ways: the elbow's own column follows its gravity torque better than the
    shoulder's column does. At 21-24 s the shoulder moves one way at constant speed and its
    torque stays flat while its gravity torque rises 11 N m (r 0.14): said as such, without
    guessing "another order". (Exchanged, the 12-15 s columns read alike both ways: the stretch
    cannot tell; the simulated arm's exchanged columns are named, above.)"""
    import sys

    sys.path.insert(0, str(EXAMPLES.parent / "benchmarks"))
    from real_cases import UR10E_GAINS, UR10E_JOINTS, read_ur10e

    from physid.files.config import parse_config, robot_for
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import trajectory_from_table

    folder = require_dataset(DATASETS / "ur10e")
    model = robot_for(folder / "ur10e.urdf", parse_config({}))
    path = next(folder.glob("*_data/ur-20_01_17-ptp_10_points.csv"))
    signals, _ = read_ur10e(path, UR10E_GAINS["literature"])

    def stretch(start: float) -> Trajectory:
        rows = (signals.t >= start) & (signals.t < start + 3.0)
        columns = {"t": signals.t[rows]}
        columns |= {f"q_{j}": signals.q[rows, k] for k, j in enumerate(UR10E_JOINTS)}
        columns |= {f"tau_{j}": signals.tau[rows, k] for k, j in enumerate(UR10E_JOINTS)}
        return trajectory_from_table(Table(columns, "ptp"), model)

    similar = stretch(12.0)
    comparison = gravity_comparison(model, similar)
    assert np.all(comparison.joint_correlations > 0.95) and comparison.swap is None
    assert suspect_reasons(model, [similar]) == []
    one_sided = suspect_reasons(model, [stretch(21.0)])
    assert len(one_sided) == 1 and "another order:" not in one_sided[0]
    assert (
        "'shoulder_lift_joint' torque does not follow its gravity torque (correlation 0.1"
        in (one_sided[0])
    )
    assert "no exchange of two columns explains it" in one_sided[0]


def test_short_stretches_of_the_real_pendulum_runs_are_not_suspect():
    """Real DFKI double pendulum, trajectories 00 and 01 (correct files; the authors' model fits
    them), cut in 3 s stretches. The pendulum is driven faster than it swings: its gravity torque
    alone read "torque sign looks flipped" (r -0.64, while the URDF's whole inverse dynamics
    follows both joints at 0.49 / 0.98), "scale implausible 0.18 x" (r 0.32), "the torques are
    0.048 x and 0.95 x their gravity torques" (the first at r 0.05). None of these on correct
    data now; a flipped stretch is still called flipped, and the whole 10 s file with its
    torques x 10 out of scale. (The time-scale check, every inertial parameter free on 120
    equations for 48 columns, read three of these stretches as mis-stamped; two of them at the
    end of the factors searched, which is no minimum and no longer a verdict; one, at 0.45 x,
    still is: a known limit, docs/identify.md.)"""
    import sys

    sys.path.insert(0, str(EXAMPLES.parent / "benchmarks"))
    from real_cases import DFKI_JOINTS, read_dfki

    from physid.files.config import parse_config, robot_for
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import trajectory_from_table

    folder = require_dataset(DATASETS / "dfki_double_pendulum")
    model = robot_for(
        folder / "identified_parameters" / "model_2.1" / "pendubot_world.urdf", parse_config({})
    )
    found = {p.stem: p for p in folder.glob("sys_id_*/*.csv")}
    stretches = []
    for name in ("trajectory_00", "trajectory_01"):
        signals = read_dfki(found[name])
        for start in np.arange(signals.t[0], signals.t[-1] - 3.0, 3.0):
            rows = (signals.t >= start) & (signals.t < start + 3.0)
            columns = {"t": signals.t[rows]}
            columns |= {f"q_{j}": signals.q[rows, k] for k, j in enumerate(DFKI_JOINTS)}
            columns |= {f"tau_{j}": signals.tau[rows, k] for k, j in enumerate(DFKI_JOINTS)}
            stretches.append(trajectory_from_table(Table(columns, f"{name}@{start:.0f}"), model))
    assert len(stretches) >= 6
    for stretch in stretches:
        reasons = suspect_reasons(model, [stretch])
        assert [r for r in reasons if "time stamps do not match" not in r] == [], reasons
        if stretch.source in ("trajectory_00@3", "trajectory_00@6"):  # minima at the range's end
            assert reasons == [], reasons
    flipped = suspect_reasons(model, [replace(stretches[0], tau=-stretches[0].tau)])
    assert len(flipped) == 1 and "sign" in flipped[0], flipped
    signals = read_dfki(found["trajectory_01"])
    columns = {"t": signals.t}
    columns |= {f"q_{j}": signals.q[:, k] for k, j in enumerate(DFKI_JOINTS)}
    columns |= {f"tau_{j}": 10.0 * signals.tau[:, k] for k, j in enumerate(DFKI_JOINTS)}
    scaled = suspect_reasons(model, [trajectory_from_table(Table(columns, "x10"), model)])
    assert (
        len(scaled) == 1 and "torque scale implausible: measured torques are 5.7 x" in (scaled[0])
    ), scaled


def _held_still(arm_experiment, pose: np.ndarray, seconds: float = 10.0) -> Trajectory:
    """The demo arm held at ``pose`` within 0.25 mrad for ``seconds`` at 500 Hz: its true
    static torques plus 0.05 N m noise."""
    import pinocchio as pin

    model = arm_experiment.model
    pin_model = model.pin_model.copy()
    layout = model.layout
    for j, name in enumerate(layout.body_joints, start=1):
        pin_model.inertias[j] = pin.Inertia.FromDynamicParameters(
            arm_experiment.theta_true[layout.body_slice(name)]
        )
    data = pin_model.createData()
    rng = np.random.default_rng(5)
    t = np.arange(int(seconds * 500)) / 500.0
    q = pose + 1e-4 * np.sin(2 * np.pi * 0.5 * t)[:, None] + rng.normal(0, 1e-5, (t.size, 6))
    tau = np.array([pin.computeGeneralizedGravity(pin_model, data, row) for row in q])
    tau = tau + rng.normal(0.0, 0.05, tau.shape)
    return Trajectory(t, q, tau, model.joint_names, source=f"still at {pose[1]:.2f}")


def test_a_robot_that_never_moved_is_named_as_such_not_as_reordered_columns(arm_experiment):
    """Every joint within 0.25 mrad for 10 s: the verdict says the robot did not move (with
    each joint's span), instead of guessing from the torque checks, which correlated noise
    ("joint_3 torque does not follow ... columns in another order?"). Several still poses (a
    static identification) are not called motionless, and a still recording beside moving
    ones gets no torque verdict of its own."""
    from physid.files.config import IdentifyConfig
    from physid.offline.checks.suspect import motionless_finding
    from physid.offline.pipeline import identify

    model = arm_experiment.model
    pose = np.array([0.3, -0.5, 0.8, 0.1, 0.4, -0.2])
    still = _held_still(arm_experiment, pose)
    result = identify(model, [still], IdentifyConfig())
    assert result.status == "suspect"
    assert len(result.suspect) == 1 and "the robot did not move" in result.suspect[0]
    assert "'joint_3' 0.00026" in result.suspect[0]
    again = _held_still(arm_experiment, pose + np.r_[0.002, np.zeros(5)])  # the same pose
    assert "the robot did not move" in motionless_finding(model, [still, again]).message
    other = _held_still(arm_experiment, pose + 0.3)
    assert motionless_finding(model, [still, other]) is None
    assert suspect_reasons(model, [still, other]) == []
    moving = arm_experiment.train.recorded
    assert motionless_finding(model, [moving, still]) is None
    assert suspect_reasons(model, [moving, still]) == []


def test_a_robot_at_rest_on_12_bit_encoders_did_not_move(arm_experiment):
    """Held still, a 12-bit encoder toggles between two ticks (1.5 mrad, above the 1 mrad still
    bound): the verdict still says the robot did not move, and does not read the noise as
    motion."""
    from physid.offline.checks.suspect import motionless_finding

    still = _held_still(arm_experiment, np.array([0.3, -0.5, 0.8, 0.1, 0.4, -0.2]))
    tick = 2 * np.pi / 4096
    q = tick * np.round(still.q / tick) + tick * (
        np.random.default_rng(6).uniform(size=still.q.shape) < 0.2
    )
    assert np.all(np.ptp(q, axis=0) > 1e-3)
    quantised = replace(still, q=q)
    assert "the robot did not move" in motionless_finding(arm_experiment.model, [quantised]).message


def test_torques_with_gravity_already_subtracted_are_not_called_flipped():
    """Real KUKA LWR4+ file 2 (20 s) with the URDF's gravity torque taken out of the measured
    torque (what an external-torque estimate or a gravity-compensated signal logs): every
    gravity-loaded joint keeps 5-8 % of it, of the sign of the URDF's mass error. The verdict
    was "torque sign looks flipped" (scale -0.049, r -0.94); it names gravity already
    subtracted first. The torques in units 1000 x too large the other way name units first."""
    import pinocchio as pin

    from physid.files.config import parse_config, robot_for
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import trajectory_from_table

    require_dataset(KUKA)
    model = robot_for(KUKA / "kuka_lwr4.urdf", parse_config({}))
    s = kuka_slice(2, 20.0)
    data = model.pin_model.createData()
    gravity = np.array([pin.computeGeneralizedGravity(model.pin_model, data, q) for q in s.q])
    joints = model.joint_names

    def recording(tau: np.ndarray) -> Trajectory:
        columns = {"t": s.t} | {f"q_{j}": s.q[:, k] for k, j in enumerate(joints)}
        columns |= {f"tau_{j}": tau[:, k] for k, j in enumerate(joints)}
        return trajectory_from_table(Table(columns, "kuka_2"), model)

    (external,) = suspect_reasons(model, [recording(s.tau - gravity)])
    assert "torque scale implausible: measured torques are -0.049 x" in external, external
    assert "): gravity already subtracted" in external and "flipped" not in external
    (kilo,) = suspect_reasons(model, [recording(1e-3 * s.tau)])
    assert "): torques in other units" in kilo, kilo
    # one unit for every joint (a LeRobot arm's effort in mA-like units): the factor is named
    # with the gain the URDF's gravity implies and how to give it; a 20 kg tool the URDF lacks
    # loads the joints unlike, and keeps the general reason
    (milli,) = suspect_reasons(model, [recording(590.0 * s.tau)])
    assert "on every gravity-loaded joint alike (539 to 562 x)" in milli, milli
    assert "near 0.00178 N m per unit" in milli and "drive_gains" in milli
    tool = model.pin_model.copy()
    tool.inertias[tool.njoints - 1] += pin.Inertia.FromSphere(20.0, 0.05)
    extra = np.array([pin.computeGeneralizedGravity(tool, tool.createData(), q) for q in s.q])
    (heavy,) = suspect_reasons(model, [recording(s.tau + extra - gravity)])
    assert "torque scale implausible" in heavy and "alike" not in heavy, heavy
    # a current of the other sign convention through a 0.3 gain: one factor on every joint
    (current,) = suspect_reasons(model, [recording(-0.3 * s.tau)])
    assert current.startswith("kuka_2: torque sign looks flipped and its scale off: measured "
                              "torques are -0.29 x"), current  # fmt: skip
    # with two columns exchanged as well, the exchange is named (the joints' scales differ)
    (exchanged,) = suspect_reasons(model, [recording(0.3 * s.tau[:, [0, 3, 2, 1, 4, 5, 6]])])
    assert "look exchanged" in exchanged, exchanged


def test_a_prismatic_joint_in_millimetres_is_named_not_read_as_a_torque_scale():
    """TIAGo's torso lift (prismatic, 0-0.35 m in its URDF) logged in mm: the positions are
    named with the URDF's travel (the arm5p of benchmarks/independent_sim.py so logged was
    told "torque scale implausible: 0.013 x"); in metres nothing is said of them."""
    from physid.files.config import parse_config, robot_for
    from physid.offline.checks.recording_checks import millimetres_finding
    from physid.sim.oe_robots import robot_urdf

    joints = ["torso_lift_joint", *(f"arm_{k}_joint" for k in range(1, 8))]
    model = robot_for(robot_urdf("tiago_description/robots/tiago.urdf"),
                      parse_config({"joints": joints}))  # fmt: skip
    t = np.arange(2000) / 100.0
    q = np.zeros((t.size, 8))
    q[:, 0] = 0.15 + 0.1 * np.sin(0.5 * t)
    q[:, 1:] = 0.3 * np.sin(np.outer(t, np.linspace(0.3, 0.9, 7)))
    metres = Trajectory(t, q, np.zeros_like(q), model.joint_names)
    assert millimetres_finding(model, metres) is None
    q_mm = q.copy()
    q_mm[:, 0] *= 1000.0
    reason = millimetres_finding(model, replace(metres, q=q_mm)).message
    assert reason.startswith("prismatic joint 'torso_lift_joint' positions reach 250, 714 x its "
                             "URDF limit of 0.35 m: are they in millimetres?"), reason  # fmt: skip


def test_a_streamed_recording_that_rests_before_it_moves_did_move(arm_experiment, tmp_path,
                                                                   monkeypatch):  # fmt: skip
    """A long log streamed from disk is read whole for the motion check, not through its
    preview (its first rows): the demo arm at rest for 10 s, then moving, with a preview of
    the first 2,000 rows (at rest) is not "did not move" (review 2026-11-27)."""
    from physid.offline.checks.suspect import motionless_finding
    from physid.recordings import streamed
    from physid.recordings.trajectory import write_trajectory_csv

    model = arm_experiment.model
    moving = arm_experiment.train.recorded
    pose = np.asarray(moving.q[0])
    still = _held_still(arm_experiment, pose)
    t = np.r_[still.t, still.t[-1] + 0.002 + moving.t - moving.t[0]]
    both = Trajectory(t, np.vstack([still.q, moving.q]), np.vstack([still.tau, moving.tau]),
                      model.joint_names, source="rest then motion")  # fmt: skip
    path = write_trajectory_csv(tmp_path / "rest_then_motion.csv", both)
    recording = streamed.open_recording(path, model, block_rows=3_000)
    monkeypatch.setattr(streamed, "PREVIEW_SAMPLES", 2_000)
    assert "did not move" in motionless_finding(model, [streamed.preview(recording)]).message
    assert motionless_finding(model, [recording]) is None


def test_a_position_sensor_that_stopped_is_named_and_a_joint_held_still_is_not(arm_experiment):
    """A joint whose positions freeze while it moves (a dead encoder): its torque carries its own
    motion, which no model of the recorded (still) position gives it. Real UR10e, elbow frozen:
    status ok, 30.6 % held out (clean 6.4 %); real KUKA: "columns in another order". A joint
    held still by its controller while the others move is not named: its torque is the others'
    gravity and inertial coupling, which the URDF's model gives up to a scale."""
    from physid.sim.arm import EXCURSION_RAD, simulate_random_excitation

    model, theta = arm_experiment.model, arm_experiment.theta_true
    rng = np.random.default_rng(3)
    moving = simulate_random_excitation(model, theta, duration_s=10.0, sample_rate_hz=500.0,
                                        rng=rng).recorded  # fmt: skip
    q = moving.q.copy()
    q[:, 2] = q[0, 2] + rng.normal(0.0, 1e-5, len(q))  # joint_3's encoder stopped
    reasons = suspect_reasons(model, [replace(moving, q=q)])
    assert len(reasons) == 1 and "a position sensor that stopped" in reasons[0], reasons
    assert "'joint_3'" in reasons[0] and "columns" not in reasons[0].split("dead encoder")[0]
    assert "default joint motors" in reasons[0]  # a PyBullet joint held by its motor reads so
    amplitude = EXCURSION_RAD.copy()
    amplitude[2] = 0.0  # joint_3 held still by its controller
    held = simulate_random_excitation(model, theta, duration_s=10.0, sample_rate_hz=500.0,
                                      rng=rng, amplitude_rad=amplitude).recorded  # fmt: skip
    assert suspect_reasons(model, [held]) == []


def test_a_10_hz_log_of_fast_motion_moves_in_memory_and_on_disk(tmp_path):
    """Sines of 0.5 rad at 1.3 Hz logged at 10 Hz (7.7 samples a period, noise-free): read from
    disk (streamed) the noise came from second differences and every joint was still ("the
    robot did not move"); in memory, at 1 Hz, the smallest step of a sine sampled in step with
    its period was taken for an encoder's tick and two joints read as still."""
    from physid.offline.checks.recording_checks import span_and_mean
    from physid.offline.checks.suspect import motionless_finding
    from physid.recordings.streamed import open_recording
    from physid.recordings.trajectory import load_trajectory
    from physid.sim.arm import arm6_model

    model = arm6_model()
    rng = np.random.default_rng(0)
    phase = rng.uniform(0.0, 2.0 * np.pi, 6)
    for hz in (1.3, 1.0):
        t = np.arange(3000) / 10.0
        q = 0.5 * np.sin(2.0 * np.pi * hz * t[:, None] + phase)
        tau = 5.0 * np.sin(2.0 * np.pi * hz * t[:, None] + phase + 1.0)
        header = ",".join(["t", *(f"q_{j}" for j in model.joint_names),
                           *(f"tau_{j}" for j in model.joint_names)])  # fmt: skip
        path = tmp_path / f"slow_{hz}.csv"
        np.savetxt(path, np.column_stack([t, q, tau]), delimiter=",", header=header,
                   comments="", fmt="%.17g")  # fmt: skip
        for recording in (load_trajectory(path, model), open_recording(path, model)):
            assert np.all(span_and_mean(recording)[2]), hz
            assert motionless_finding(model, [recording]) is None


def test_a_torque_of_noise_is_no_drive_gain(arm_experiment):
    """joint_3's torque replaced by noise (a brake holds it, the drive reads nothing): the best
    scale of that torque is at the search's end (0: it carries none of the model's), which is
    no gain and no sign: the scale check leaves it to the gravity check (it read 'x-0.05')."""
    clean = arm_experiment.train.recorded
    tau = clean.tau.copy()
    tau[:, 2] = 0.3 * np.random.default_rng(1).standard_normal(len(tau))
    from physid.files.config import IdentifyConfig
    from physid.offline.pipeline import identify

    result = identify(arm_experiment.model, [replace(clean, tau=tau)], IdentifyConfig())
    assert result.status == "suspect"
    assert not any("not on the others' scale" in r for r in result.suspect), result.suspect


def test_torques_with_gravity_compensated_exactly_are_suspect(arm_experiment, clean):
    """A simulator's gravity compensation (MuJoCo's gravcomp) or a torque command net of an exact
    gravity model leaves nothing of gravity's shape for the faint-gravity rule to correlate: the
    simulated arm's torque minus its true gravity torque read status ok before, every gravity-
    loaded joint at about 0 x its URDF gravity torque. The clean run and the arm's torque with
    half its gravity taken out (0.5 x: not absent) are not called so."""
    from physid.robot.regressor import torque_regressor

    model = arm_experiment.model
    pin_model = model.pin_model
    data = pin_model.createData()
    zero = np.zeros(pin_model.nv)
    inertial = arm_experiment.theta_true[: model.layout.n_inertial]
    gravity = np.array([torque_regressor(pin_model, data, q, zero, zero) @ inertial
                        for q in clean.q])  # fmt: skip
    (reason,) = suspect_reasons(model, [replace(clean, tau=clean.tau - gravity)])
    assert reason.startswith("simulation: the torques carry none of the URDF's gravity torque"), (
        reason
    )
    assert "'joint_2' " in reason and "'joint_3' " in reason and "gravcomp" in reason
    assert "without gravity (PyBullet's default" in reason
    comparison = gravity_comparison(model, replace(clean, tau=clean.tau - gravity))
    assert np.all(np.abs(comparison.joint_scales) < 0.05)
    assert np.max(comparison.gravity_shares) > 2.0
    half = suspect_reasons(model, [replace(clean, tau=clean.tau - 0.5 * gravity)])
    assert not any("none of the URDF's gravity" in r for r in half), half
    assert not any("none of the URDF's gravity" in r for r in suspect_reasons(model, [clean]))


def _pressed_against(trajectory: Trajectory, joint: int, limit: float, stiffness: float):
    """``joint`` shifted so that its motion overruns ``limit`` (upper) in about 8 % of the rows,
    held there by a stiff stop: the position stays within a few mrad beyond the limit and the
    torque carries the stop's reaction, which no rigid-body term explains."""
    q, tau = trajectory.q.copy(), trajectory.tau.copy()
    shifted = q[:, joint] - np.quantile(q[:, joint], 0.92) + limit
    over = np.maximum(shifted - limit, 0.0)
    q[:, joint] = np.minimum(shifted, limit + over / (1.0 + stiffness * over))  # a soft stop
    tau[:, joint] -= 2e3 * over  # the stop pushes back; the drive pushes on
    return replace(trajectory, q=q, tau=tau)


def test_a_joint_pressed_against_its_limit_is_named_not_called_a_wrong_column(
    arm_experiment, clean
):
    """A MuJoCo Panda whose 4th joint was driven into its limit (8.5 % of the rows, 4.8 mrad
    beyond) read "not this joint's torque (columns in another order?)". The stop is named; the
    clean run (every real recording we have stays 49 mrad or more inside) and a joint logged
    from another zero (far beyond: the angle checks' case) are not."""
    model = arm_experiment.model
    pressed = _pressed_against(clean, 2, 2.3, stiffness=300.0)
    (reason,) = suspect_reasons(model, [pressed])
    assert reason.startswith("simulation: joints pressed against their URDF position limits: "
                             "'joint_3' beyond its limit 2.3 rad in "), reason  # fmt: skip
    beyond = pressed.q[:, 2] - 2.3
    assert 0.001 < beyond.max() < 0.01 and 0.05 < np.mean(beyond > 0) < 0.1
    assert suspect_reasons(model, [clean]) == []
    far = _position_changed(clean, 2, 1.0, np.pi / 2)  # beyond its limit by far more than a stop
    assert not any("pressed against" in r for r in suspect_reasons(model, [far]))
