"""Issue 11 item 1: joints that were not recorded are locked (Pinocchio's reduced model).

Robots of ``example-robot-data``: TIAGo (mobile manipulator: torso, arm, hand, head, continuous
wheels) and Panda (arm + gripper fingers). Truth for the locking: the full model's RNEA with the
locked joints held still at their positions (no shared code with buildReducedModel's merging).
"""

from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest
import yaml

from physid.errors import InputError
from physid.files.config import parse_config, robot_for
from physid.offline.observe.prediction import predict_recording
from physid.recordings.trajectory import write_trajectory_csv
from physid.sim.arm import SensorNoise, simulate_random_excitation, true_parameters
from physid.sim.oe_robots import robot_urdf
from physid.workflows import run_identify

TIAGO = "tiago_description/robots/tiago.urdf"
PANDA = "panda_description/urdf/panda.urdf"
TIAGO_ARM = [f"arm_{k}_joint" for k in range(1, 8)]
PANDA_ARM = [f"panda_joint{k}" for k in range(1, 8)]


# A cart on a planar joint (three DoF: not identifiable) carrying a two-link arm whose second
# joint is continuous (revolute without limits)
CART = """<robot name="cart">
  <link name="world"/>
  <link name="base"><inertial><mass value="5"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="base_planar" type="planar"><parent link="world"/><child link="base"/>
    <axis xyz="0 0 1"/></joint>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="10" velocity="2"/></joint>
  <link name="forearm"><inertial><origin xyz="0.15 0 0.01"/><mass value="0.5"/>
    <inertia ixx="0.004" iyy="0.006" izz="0.005" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="wrist" type="continuous"><parent link="arm"/><child link="forearm"/>
    <origin xyz="0.4 0 0"/><axis xyz="1 0 1"/></joint>
</robot>
"""


@pytest.fixture
def cart(tmp_path):
    path = tmp_path / "cart.urdf"
    path.write_text(CART, encoding="utf-8")
    return path


def test_multi_dof_joints_are_locked_automatically_with_a_note(cart):
    model = robot_for(cart, parse_config({}))
    assert model.joint_names == ("shoulder", "wrist")
    assert any("base_planar (Planar)" in note for note in model.notes)


def test_a_continuous_joint_is_an_unbounded_revolute_joint_with_the_same_dynamics(cart):
    """A continuous joint is a revolute joint without limits: one angle (Pinocchio's own
    reading has two coordinates, cos and sin, and physid used to lock such joints at 0 as
    "not 1-DoF", ignoring their recorded columns); TIAGo's wheels are identified like any
    other joint."""
    model = robot_for(cart, parse_config({}))
    pin_model = model.pin_model
    assert pin_model.nq == pin_model.nv == 2
    wrist = pin_model.joints[pin_model.getJointId("wrist")].idx_q
    assert pin_model.lowerPositionLimit[wrist] == -np.inf
    assert pin_model.upperPositionLimit[wrist] == np.inf
    full = pin.buildModelFromUrdf(str(cart))  # planar (4 q, 3 v), RZ, RUB (cos, sin)
    data_full, data = full.createData(), pin_model.createData()
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, dq, ddq = rng.uniform(-7, 7, 2), rng.standard_normal(2), rng.standard_normal(2)
        q_full = np.r_[pin.neutral(full)[:4], q[0], np.cos(q[1]), np.sin(q[1])]
        v_full, a_full = np.r_[np.zeros(3), dq], np.r_[np.zeros(3), ddq]
        np.testing.assert_allclose(pin.rnea(pin_model, data, q, dq, ddq),
                                   pin.rnea(full, data_full, q_full, v_full, a_full)[3:],
                                   rtol=1e-12, atol=1e-12)  # fmt: skip
    tiago = robot_for(robot_urdf(TIAGO), parse_config({}))
    assert {"wheel_left_joint", "arm_7_joint"} <= set(tiago.joint_names)
    assert not any("locked automatically" in note for note in tiago.notes)


def test_locked_without_joints_holds_the_named_joints_still():
    """`locked:` alone (what the mimic-joint error advises for Panda's fingers) holds those
    joints still; until 2026-11-27 its positions were only used for joints left out of a
    `joints:` list, so the fingers stayed and the mimic error came back."""
    with pytest.raises(InputError, match=r"hold them still in the config \(locked: "
                       r"\{panda_finger_joint1: 0.0, panda_finger_joint2: 0.0\}"):  # fmt: skip
        robot_for(robot_urdf(PANDA), parse_config({}))
    fingers = {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}
    model = robot_for(robot_urdf(PANDA), parse_config({"locked": fingers}))
    assert model.joint_names == tuple(PANDA_ARM)
    assert any("panda_finger_joint1 at 0.02" in note for note in model.notes)
    # the same reduced model as listing the arm's joints
    listed = robot_for(robot_urdf(PANDA), parse_config({"joints": PANDA_ARM, "locked": fingers}))
    q = np.linspace(-1.0, 1.0, 7)
    np.testing.assert_array_equal(
        pin.rnea(model.pin_model, model.pin_model.createData(), q, q, q),
        pin.rnea(listed.pin_model, listed.pin_model.createData(), q, q, q),
    )


def test_the_reduced_model_equals_the_full_model_with_locked_joints_held_still():
    urdf = robot_urdf(TIAGO)
    config = parse_config({"joints": TIAGO_ARM, "locked": {"torso_lift_joint": 0.2}})
    model = robot_for(urdf, config)
    assert model.joint_names == tuple(TIAGO_ARM)
    full = pin.buildModelFromUrdf(str(urdf))
    rng = np.random.default_rng(4)
    q_full = pin.neutral(full)
    q_full[full.joints[full.getJointId("torso_lift_joint")].idx_q] = 0.2
    arm_q = [full.joints[full.getJointId(j)].idx_q for j in TIAGO_ARM]
    arm_v = [full.joints[full.getJointId(j)].idx_v for j in TIAGO_ARM]
    data_full, data = full.createData(), model.pin_model.createData()
    for _ in range(5):
        q, dq, ddq = (rng.uniform(-1, 1, 7) for _ in range(3))
        q_full[arm_q] = q
        v_full, a_full = np.zeros(full.nv), np.zeros(full.nv)
        v_full[arm_v], a_full[arm_v] = dq, ddq
        expected = pin.rnea(full, data_full, q_full, v_full, a_full)[arm_v]
        reduced = pin.rnea(model.pin_model, data, q, dq, ddq)
        np.testing.assert_allclose(reduced, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"joints": ["arm_9_joint"]}, "joint 'arm_9_joint' is not in the URDF"),
        ({"joints": "arm_1_joint"}, "config joints: expected a list"),
        (
            {"joints": TIAGO_ARM, "locked": {"arm_7_joint": 0.1}},
            "joint 'arm_7_joint' is both identified \\(joints:\\) and held still \\(locked:\\)",
        ),
    ],
)
def test_bad_joint_selections_are_named(raw, message):
    with pytest.raises(InputError, match=message):
        robot_for(robot_urdf(TIAGO), parse_config(raw))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"joints": ["base_planar"]}, "'base_planar' is of type Planar"),
        ({"locked": {"base_planar": 0.1}}, "locked.base_planar: a position"),
        ({"locked": {"base_planar": "recorded"}}, "needs a 1-DoF revolute or prismatic"),
    ],
)
def test_a_multi_dof_joint_cannot_be_identified_or_given_one_position(cart, raw, message):
    with pytest.raises(InputError, match=message):
        robot_for(cart, parse_config(raw))


def _train_and_validate(model, seed: int, amplitude: np.ndarray, folder,  # noqa: ANN001, ANN202
                        seconds: tuple[float, float] = (15.0, 5.0)):  # fmt: skip
    """True parameters, train/validate CSV files (``seconds``, 15 s / 5 s by default, at 500 Hz,
    0.05 N m torque noise) and their recordings of ``model`` under random excitation."""
    rng = np.random.default_rng(seed)
    theta = true_parameters(model, rng)
    files, recordings = [], []
    for name, duration in zip(("train", "validate"), seconds, strict=True):
        simulation = simulate_random_excitation(
            model, theta, duration_s=duration, sample_rate_hz=500.0, rng=rng,
            noise=SensorNoise(torque_noise_std=0.05), amplitude_rad=amplitude,
        )  # fmt: skip
        files.append(write_trajectory_csv(folder / f"{name}.csv", simulation.recorded))
        recordings.append(simulation.recorded)
    return theta, files, recordings


def test_an_arm_with_locked_fingers_is_identified_from_its_arm_columns_only(tmp_path):
    """Panda recorded without its fingers: the fit sees 7 joints, the fingers ride on link 7."""
    urdf = robot_urdf(PANDA)
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump({"joints": PANDA_ARM}), encoding="utf-8")
    model = robot_for(urdf, parse_config({"joints": PANDA_ARM}))
    theta, files, recordings = _train_and_validate(model, 8, np.full(7, 0.5), tmp_path)
    result = run_identify(urdf, files[:1], config_path=config_path, validate=files[1:],
                          out_dir=tmp_path / "out")  # fmt: skip
    assert result.status == "ok" and result.consistent.consistent
    assert result.model.joint_names == tuple(PANDA_ARM)
    assert any("panda_finger_joint1" in w for w in result.warnings)
    # At the noise floor: the true parameters scored the same way (measured 7.13 vs 7.18 %; the
    # floor is high because the plant's sign friction chatters faster than 14 Hz derivatives).
    floor = predict_recording(result.model, recordings[1], result.preprocessing.filter, theta)
    assert result.validation.relative_error < 1.05 * floor.metrics.relative_error


def test_joints_no_recording_logs_are_held_still_without_a_config(tmp_path):
    """The stock Panda URDF (fingers prismatic, one a mimic) with arm-only recordings and no
    config: the fingers are held at 0 as ``locked:`` would hold them (it was an error naming
    the mimic joint, then the missing q_panda_finger_joint1 column), with a warning; the fit
    is the one the explicit config gives, and validate on the params.json needs no config
    either. With the fingers logged, the mimic follower moves by its recorded positions (it was
    refused too). A recording that names a joint the URDF lacks gets the errors as before (its
    names may be off: nothing is held still in its place)."""
    from physid.files.params_file import read_params
    from physid.workflows import run_validate

    urdf = robot_urdf(PANDA)
    model = robot_for(urdf, parse_config({"joints": PANDA_ARM}))
    # short runs: what is asserted (the same fit as the config's, the same validation) does not
    # depend on their length
    _, files, _ = _train_and_validate(model, 8, np.full(7, 0.5), tmp_path, seconds=(5.0, 2.0))
    automatic = run_identify(urdf, files[:1], validate=files[1:], out_dir=tmp_path / "auto")
    given = run_identify(urdf, files[:1], config=parse_config({"joints": PANDA_ARM}),
                         validate=files[1:])  # fmt: skip
    assert automatic.status == "ok" and automatic.model.joint_names == tuple(PANDA_ARM)
    (held,) = [w for w in automatic.warnings if w.startswith("joints of the robot file")]
    assert "'locked: {panda_finger_joint1: 0, panda_finger_joint2: 0}'" in held, held
    np.testing.assert_allclose(automatic.theta, given.theta, rtol=1e-9, atol=1e-12)
    document = read_params(tmp_path / "auto" / "params.json").document
    assert document["provenance"]["locked_unlogged"] == {"panda_finger_joint1": 0.0,
                                                         "panda_finger_joint2": 0.0}  # fmt: skip
    # exported, the fingers keep their own bodies and the hand no longer carries them too: the
    # exported URDF with its fingers at 0 has the identified model's dynamics (it had their
    # 0.03 kg twice)
    from physid.export import write_export
    from physid.files.params_file import apply_inertias

    write_export(tmp_path / "auto" / "params.json", urdf, tmp_path / "panda.urdf")
    exported = pin.buildModelFromUrdf(str(tmp_path / "panda.urdf"))
    identified = apply_inertias(model.pin_model, read_params(tmp_path / "auto" / "params.json"))
    identified.gravity, identified.armature[:] = exported.gravity, 0.0
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v, a = rng.uniform(-1.0, 1.0, (3, 7))
        np.testing.assert_allclose(
            pin.rnea(exported, exported.createData(), *(np.r_[x, 0.0, 0.0] for x in (q, v, a)))[:7],
            pin.rnea(identified, identified.createData(), q, v, a),
            rtol=1e-9,
            atol=1e-9,
        )
    report = run_validate(urdf, tmp_path / "auto" / "params.json", files[1:])
    assert report.overall["relative_error"] == pytest.approx(
        automatic.validation.relative_error, rel=1e-9
    )
    # fingers logged (still, as a Franka's joint states give them): the mimic follower moves by
    # its recorded positions, the leader stays a joint of the fit
    logged = tmp_path / "with_fingers.csv"
    header, *rows = files[0].read_text().splitlines()
    fingers = ("q_panda_finger_joint1", "q_panda_finger_joint2", "tau_panda_finger_joint1",
               "tau_panda_finger_joint2")  # fmt: skip
    logged.write_text("\n".join([header + "," + ",".join(fingers)]
                                + [row + ",0.01,0.01,0,0" for row in rows]) + "\n")  # fmt: skip
    with_fingers = run_identify(urdf, [logged], out_dir=tmp_path / "fingers")
    assert "panda_finger_joint1" in with_fingers.model.joint_names
    assert any("(locked: {panda_finger_joint2: recorded})" in w for w in with_fingers.warnings)
    # the leader's effort is 0 in every row and the finger never moves: held by its motor, not
    # free, so its 0 is no torque to fit (fitted, the finger kept almost no mass and its centre
    # of mass 0.94 m away, in 41 fits the Newton steps could not solve)
    assert with_fingers.model.fitted_joints == tuple(PANDA_ARM)
    assert any("tau_panda_finger_joint1 is 0 in every row" in w and "never moves" in w
               and "left out of the fit" in w for w in with_fingers.warnings)  # fmt: skip
    finger = read_params(tmp_path / "fingers" / "params.json").document["bodies"]
    assert np.linalg.norm(finger["panda_finger_joint1"]["com"]) < 0.1
    from click.testing import CliRunner

    from physid.cli import main

    shown = CliRunner().invoke(main, ["validate", "--urdf", str(urdf), "--params",
                                      str(tmp_path / "fingers" / "params.json"), "--data",
                                      str(logged)])  # fmt: skip
    assert shown.exit_code == 0 and "nan" not in shown.stdout, shown.stdout
    unscored = "not scored (torque not fitted): panda_finger_joint1, panda_finger_joint2"
    assert unscored in shown.stdout, shown.stdout
    renamed = tmp_path / "renamed.csv"
    renamed.write_text(files[0].read_text().replace("q_panda_joint7", "q_panda_joint_7"))
    with pytest.raises(InputError, match="mimic joint"):  # nothing held still: the old error
        run_identify(urdf, [renamed])


def test_joints_the_config_locked_are_held_where_it_held_them_without_the_config(tmp_path):
    """Panda identified with its fingers locked open (0.04 m) by the config: validate and export
    read the locks from params.json (provenance.locked_by_config), so they hold the fingers
    where the identification did without being given the config again. Before, validate
    without the config stopped at the URDF's mimic fingers (an error line that asks for the
    locks the file was identified with), and export took the finger bodies out of the hand at
    0 (the exported robot, fingers at 0.04 m: inverse dynamics 1e-4 off the identified)."""
    from physid.export import write_export
    from physid.files.params_file import apply_inertias, read_params
    from physid.workflows import run_validate

    urdf = robot_urdf(PANDA)
    locks = {"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump({"locked": locks}), encoding="utf-8")
    model = robot_for(urdf, parse_config({"locked": locks}))
    _, files, _ = _train_and_validate(model, 8, np.full(7, 0.5), tmp_path, seconds=(5.0, 2.0))
    result = run_identify(urdf, files[:1], config_path=config_path, out_dir=tmp_path / "o")
    params = tmp_path / "o" / "params.json"
    assert read_params(params).document["provenance"]["locked_by_config"] == locks
    configured = run_validate(urdf, params, files[1:], config_path=config_path)
    alone = run_validate(urdf, params, files[1:])
    assert alone.overall["relative_error"] == pytest.approx(
        configured.overall["relative_error"], rel=1e-12
    )
    write_export(params, urdf, tmp_path / "panda.urdf")
    exported = pin.buildModelFromUrdf(str(tmp_path / "panda.urdf"))
    identified = apply_inertias(model.pin_model, read_params(params))
    identified.gravity, identified.armature[:] = exported.gravity, 0.0
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v, a = rng.uniform(-1.0, 1.0, (3, 7))
        full = [np.r_[q, 0.04, 0.04], np.r_[v, 0.0, 0.0], np.r_[a, 0.0, 0.0]]
        np.testing.assert_allclose(pin.rnea(exported, exported.createData(), *full)[:7],
                                   pin.rnea(identified, identified.createData(), q, v, a),
                                   rtol=1e-9, atol=1e-9)  # fmt: skip
    assert result.status == "ok"


def _without_columns(path, names):
    """Rewrite a CSV without the named columns (what a log without those channels looks like)."""
    header, *rows = path.read_text().splitlines()
    columns = header.split(",")
    keep = [k for k, c in enumerate(columns) if c not in names]
    lines = [",".join(line.split(",")[k] for k in keep) for line in [header, *rows]]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_moving_torso_locked_at_its_recorded_position(tmp_path):
    """TIAGo with its torso lift moving while the arm is excited, the torso's force not logged
    (``locked: {torso_lift_joint: recorded}``): the torso moves the model by its recorded
    position, only the arm's torques are fitted, and the arm is identified at the noise floor.
    Locked at a fixed height instead, the model misses the torso's vertical acceleration
    (measured, torso moving +-0.3 m: held-out error 3.88 % recorded, floor 3.93 %, fixed 6.12 %)."""
    urdf = robot_urdf(TIAGO)
    recorded = {"joints": TIAGO_ARM, "locked": {"torso_lift_joint": "recorded"}}
    model = robot_for(urdf, parse_config(recorded))
    assert model.joint_names == ("torso_lift_joint", *TIAGO_ARM)
    assert model.fitted_joints == tuple(TIAGO_ARM) and not model.fitted[0]
    assert any("torques not fitted" in note and "torso_lift_joint" in note for note in model.notes)
    amplitude = np.r_[0.3, np.full(7, 0.5)]
    theta, files, recordings = _train_and_validate(model, 5, amplitude, tmp_path)
    for path in files:
        _without_columns(path, {"tau_torso_lift_joint"})
    config = tmp_path / "recorded.yaml"
    config.write_text(yaml.safe_dump(recorded), encoding="utf-8")
    out = tmp_path / "out"  # the outputs written: the report draws the unfitted torso too
    result = run_identify(urdf, files[:1], config_path=config, validate=files[1:], out_dir=out)
    assert result.status == "ok"
    assert 'id="fig-torque_validation_1"' in (out / "report.html").read_text(encoding="utf-8")
    document = json.loads((out / "params.json").read_text())
    assert "torso_lift_joint" in document["fit"]["train"]["rmse"]
    validation = result.validation
    assert np.isnan(validation.rmse[0]) and np.all(np.isfinite(validation.rmse[1:]))
    floor = predict_recording(result.model, recordings[1], result.preprocessing.filter, theta)
    assert result.validation.relative_error < 1.05 * floor.metrics.relative_error
    # The fixed lock, on the same recordings without the torso's position: clearly worse.
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(yaml.safe_dump({"joints": TIAGO_ARM, "locked": {"torso_lift_joint": 0.0}}))
    for path in files:
        _without_columns(path, {"q_torso_lift_joint"})
    locked = run_identify(urdf, files[:1], config_path=fixed, validate=files[1:])
    assert locked.validation.relative_error > 1.3 * result.validation.relative_error


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"fit_joints": ["arm_9_joint"]}, "fit_joints: 'arm_9_joint' is not a joint"),
        (
            {"locked": {"torso_lift_joint": "recorded"}, "fit_joints": ["torso_lift_joint"]},
            "is locked at its recorded position",
        ),
        ({"locked": {"torso_lift_joint": "later"}}, "locked.torso_lift_joint"),
    ],
)
def test_bad_recorded_locks_and_fit_joints_are_named(raw, message):
    with pytest.raises(InputError, match=message):
        robot_for(robot_urdf(TIAGO), parse_config(raw))


def test_online_holds_a_nominal_identifications_config_locks_where_it_held_them(tmp_path):
    """physid online reads the joints its recording does not log from the nominal params.json:
    those its config locked (provenance.locked_by_config, Panda's fingers open at 0.04 m) are
    held there too, as validate and export hold them; they were held at 0 (only the joints no
    recording logged were read from the file)."""
    from types import SimpleNamespace

    from physid.api.online_run import _unlogged_locks
    from physid.recordings.tables import Table

    locks = {"panda_finger_joint1": 0.04, "panda_finger_joint2": 0.04}
    params = tmp_path / "params.json"
    params.write_text(json.dumps({"format": "physid.params/1", "bodies": {}, "joints": {},
                                  "provenance": {"locked_by_config": locks,
                                                 "locked_unlogged": {}}}))  # fmt: skip
    columns = {"t": np.zeros(3), **{f"{p}_{j}": np.zeros(3) for j in PANDA_ARM
                                    for p in ("q", "tau")}}  # fmt: skip
    held, _ = _unlogged_locks(robot_urdf(PANDA), SimpleNamespace(nominal_params=params),
                              Table(columns, "log.csv"))  # fmt: skip
    assert held == locks
