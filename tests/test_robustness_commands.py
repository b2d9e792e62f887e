"""Issue 31: one regression test per root cause found by fuzzing every command. Each bad input
ends in one ``physid: error:`` line naming the culprit (nothing written) or a non-ok status
with the numbers seen; never a traceback, a NaN, a hang or a partial output."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from test_robustness_inputs import URDF, assert_one_line_error, invoke, make_params

from physid.cli import main
from physid.errors import InputError
from physid.sim.arm import two_link_urdf_path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "multibody"
PENDULUM = EXAMPLES / "pendulum.urdf"
TWO_LINK = Path(two_link_urdf_path()).read_text()
EXCITE_CONFIG = (
    "excitation: {max_iterations: 10, constraint_points: 40, information_points: 20, "
    "starts: 1, sample_rate_hz: 20}\n"
)
IMPACTS_SIMULATE = ["impacts", "simulate", "--shape", "ellipse:0.05,0.025", "--surface",
                    "line:0,0", "--q0", "0,0.1,-0.785", "--v0", "1,-1,0", "--mu", "0.3",
                    "--restitution", "0.2", "--duration", "0.3", "--fps", "60", "--noise",
                    "0.001"]  # fmt: skip
SHAPE = ["--shape", "ellipse:0.05,0.025", "--surface", "line:0,0"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("seeds")
    (folder / "two_link.urdf").write_text(TWO_LINK)
    (folder / "excite.yaml").write_text(EXCITE_CONFIG)
    return {"folder": folder, "params": make_params(folder), "two_link": folder / "two_link.urdf"}


def _nothing_new(folder: Path, before: set[str]) -> None:
    assert {p.name for p in folder.iterdir()} == before


# ---- 1. one output-path check, before any work ----------------------------------------------


@pytest.mark.parametrize("damage", ["under_file", "empty", "folder", "long_name"])
def test_output_paths_are_checked_before_any_work(files, tmp_path, damage):
    """export, excite (and its --summary), impacts simulate: a bad path is one line naming the
    option, and nothing is written (excite --summary a_file/sub left out.csv behind)."""
    (tmp_path / "a_file").write_text("x")
    bad = {
        "under_file": str(tmp_path / "a_file" / "sub.csv"),
        "empty": "",
        "folder": str(tmp_path),
        "long_name": str(tmp_path / ("n" * 300 + ".csv")),
    }[damage]
    before = {p.name for p in tmp_path.iterdir()}
    out = str(tmp_path / "out.csv")
    cases = [
        (["export", "--params", files["params"], "--urdf", URDF, "--out", bad], "--out"),
        (["excite", "--urdf", files["two_link"], "--config", files["folder"] / "excite.yaml",
          "--out", out, "--summary", bad, "--harmonics", "2"], "--summary"),
        (["excite", "--urdf", files["two_link"], "--out", bad], "--out"),
        ([*IMPACTS_SIMULATE, "--out", bad], "--out"),
    ]  # fmt: skip
    for args, option in cases:
        assert_one_line_error(args, option)
        _nothing_new(tmp_path, before)


def test_write_bytes_atomic_names_the_path_instead_of_an_os_error(tmp_path):
    from physid.files.io import write_bytes_atomic

    (tmp_path / "a_file").write_text("x")
    with pytest.raises(InputError, match="a_file"):
        write_bytes_atomic(tmp_path / "a_file" / "sub" / "x.json", b"{}")
    with pytest.raises(InputError, match="not a file name"):
        write_bytes_atomic("", b"{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]


def test_a_killed_writer_leaves_no_temporary_beside_the_next_output(tmp_path):
    """A ``.<name>.<pid>.*.tmp`` of a dead process (SIGKILL between write and rename) is
    removed by the next write of that file."""
    import subprocess
    import sys

    from physid.files.io import write_text_atomic

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".out.csv.{dead.pid}.abc123.tmp"
    stale.write_text("half")
    write_text_atomic(tmp_path / "out.csv", "t\n0\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_outputs_honour_the_umask(files, tmp_path):
    """With umask 0022 every output is 0644 (tempfile made the atomic writers' files 0600)."""
    from physid.files.io import atomic_output_dir, write_text_atomic
    from physid.sweep import parse_spec
    from physid.sweep.runner import _write_job_folder

    old = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "plain.txt", "x")
        with atomic_output_dir(tmp_path / "dir") as staging:
            write_text_atomic(staging / "inside.json", "{}")
        assert invoke("export", "--params", files["params"], "--urdf", URDF, "--out",
                      tmp_path / "e.urdf")[0] == 0  # fmt: skip
        assert invoke(*IMPACTS_SIMULATE, "--out", tmp_path / "poses.csv")[0] == 0
        job = parse_spec({"kind": "identify", "base": {"simulate": {}}}, tmp_path).jobs[0]
        folder = _write_job_folder(tmp_path / "jobs", job, {"status": "ok", "files": {}})
        assert folder.stat().st_mode & 0o777 == 0o755
        os.umask(0o077)
        write_text_atomic(tmp_path / "private.txt", "x")
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.rglob("*") if p.is_file()}
    assert modes.pop("private.txt") == 0o600
    modes.pop(".physid-outputs.json", None)
    assert set(modes.values()) == {0o644}, modes


# ---- 2. URDF parsing in one place -------------------------------------------------------------


@pytest.mark.parametrize("text", ["<robot name='x'><link name='a'>", "", "not xml at all"])
def test_a_urdf_the_parser_rejects_is_one_line_for_oe_and_multibody(tmp_path, capfd, text):
    """oe raised Pinocchio's ValueError; multibody printed urdfdom's own lines on descriptor 2
    beside physid's error."""
    bad = tmp_path / "broken.urdf"
    bad.write_text(text)
    data = tmp_path / "d.csv"
    data.write_text("t,q_elbow,tau_elbow\n0,0,0\n")
    capfd.readouterr()
    assert_one_line_error(["oe", "--urdf", bad, "--data", data, "--body", "elbow", "--out",
                           tmp_path / "o"], "broken.urdf")  # fmt: skip
    assert_one_line_error(["multibody", "simulate", "--urdf", bad, "--control", data, "--out",
                           tmp_path / "m"], "broken.urdf")  # fmt: skip
    native = capfd.readouterr()
    assert "urdf" not in (native.err + native.out).lower()
    assert not (tmp_path / "o").exists() and not (tmp_path / "m").exists()


def test_the_multibody_commands_refuse_an_mjcf_as_the_readme_says(tmp_path):
    """The README: the multibody commands read URDF only. An MJCF was read (Pinocchio's parser)
    and simulated without MuJoCo's damping, armature and frictionloss: a UR10e MJCF ended in
    'constraint violated' where its URDF did not. Now one line naming the file."""
    mjcf = tmp_path / "arm.xml"
    mjcf.write_text(
        '<mujoco model="arm"><worldbody><body name="link"><joint name="hinge" axis="0 1 0"/>'
        '<inertial pos="0.2 0 0" mass="1" diaginertia="0.01 0.01 0.01"/></body></worldbody>'
        "</mujoco>"
    )
    control = tmp_path / "u.csv"
    control.write_text("t\n0\n0.1\n")
    args = ["multibody", "simulate", "--urdf", mjcf, "--control", control, "--duration", "0.1",
            "--out", tmp_path / "o"]  # fmt: skip
    assert_one_line_error(args, "arm.xml", "an MJCF", "URDF only")


def test_a_zero_joint_axis_is_named(tmp_path):
    """<axis xyz="0 0 0"/> was normalised to NaN: multibody simulate wrote NaN with exit 0."""
    bad = tmp_path / "axis.urdf"
    bad.write_text(PENDULUM.read_text().replace('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'))
    control = tmp_path / "u.csv"
    control.write_text("t\n0\n0.1\n")
    args = ["multibody", "simulate", "--urdf", bad, "--control", control, "--out", tmp_path / "o"]
    assert_one_line_error(args, "axis.urdf", "joint 'pendulum'", "axis")


def test_a_link_without_inertial_gives_finite_torques(files, tmp_path):
    """A moving link without <inertial> (mass 0) made Pinocchio's com 0/0: excite wrote NaN
    torques and 'torque nan' with exit 0."""
    from physid.body.inertia import pin_inertia

    inertia = pin_inertia(np.r_[0.0, np.zeros(3), 1e-3, 0, 1e-3, 0, 0, 1e-3])
    assert np.all(np.isfinite(inertia.lever)) and inertia.mass == 0.0
    urdf = tmp_path / "massless.urdf"
    urdf.write_text(re.sub(r'(<link name="fore">).*?(</link>)', r"\1\2", TWO_LINK, flags=re.S))
    out = tmp_path / "x.csv"
    code, stdout, _ = invoke("excite", "--urdf", urdf, "--config", files["folder"] /
                             "excite.yaml", "--out", out, "--harmonics", "2")  # fmt: skip
    # written (3: the small test config stops IPOPT before it converges), finite
    assert code in (0, 3) and "nan" not in stdout.lower()
    assert "nan" not in out.read_text().lower()
    assert "NaN" not in out.with_suffix(".json").read_text()


# ---- 3. configs and sweep specs against their schema ------------------------------------------


@pytest.mark.parametrize(
    ("config", "culprit"),
    [
        ("gravity: [0.0, [1, x], -9.82]\n", "gravity[1]"),
        ("gravity: {a: {b: 1}}\n", "gravity"),
        ("gravity: [0, 0, -1.0e+300]\n", "gravity[2]"),
        ("tilt: [0, x]\n", "tilt[1]"),
        ("estimate: pendulum.Iyy\n", "estimate"),
        ("joints: {pendulum: {damping: -1}}\n", "joints.pendulum.damping"),
        ("bodies: {pendulum: {mass: 0}}\n", "bodies.pendulum.mass"),
    ],
)
def test_multibody_config_values_are_checked_before_numpy(tmp_path, config, culprit):
    path = tmp_path / "c.yaml"
    path.write_text(config)
    control = tmp_path / "u.csv"
    control.write_text("t\n0\n0.1\n")
    args = ["multibody", "simulate", "--urdf", PENDULUM, "--config", path, "--control", control,
            "--out", tmp_path / "o"]  # fmt: skip
    assert_one_line_error(args, "c.yaml", culprit)


def test_huge_integers_in_configs_are_named_not_overflow(tmp_path):
    """A 400-digit integer in a YAML config raised OverflowError/TypeError in isfinite."""
    from physid.files.io import config_number

    with pytest.raises(InputError, match="calibration_s: expected a finite number"):
        config_number(10**400, "calibration_s")
    path = tmp_path / "c.yaml"
    path.write_text("noise: {encoder: 1" + "0" * 400 + "}\n")
    data = tmp_path / "d.csv"
    data.write_text("t,q_elbow,tau_elbow\n0,0,0\n")
    args = ["oe", "--urdf", PENDULUM, "--data", data, "--body", "pendulum", "--config", path,
            "--out", tmp_path / "o"]  # fmt: skip
    assert_one_line_error(args, "c.yaml", "noise.encoder")


@pytest.mark.parametrize(
    ("spec", "culprit"),
    [
        ({"kind": {"a": 1}}, "kind"),
        ({"kind": ["validate"]}, "kind"),
        ({"kind": "validate", "base": {"urdf": "p" * 300, "params": "p", "data": ["d"]}},
         "base.urdf"),
    ],
)  # fmt: skip
def test_sweep_spec_types_and_long_paths(tmp_path, spec, culprit):
    path = tmp_path / "spec.yaml"
    path.write_text(json.dumps(spec))
    assert_one_line_error(["sweep", path, "--out", tmp_path / "out", "--dry-run"], culprit)


@pytest.mark.parametrize(
    ("option", "value"), [("--workers", "2147483648"), ("--address", "x,x"), ("--retries", "-1")]
)
def test_sweep_options_are_refused_before_ray_and_leave_nothing(tmp_path, option, value):
    """--workers 2**31 made Ray's local node time out after 34 s, and that and --address x,x
    left out/spec.yaml behind."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(json.dumps({"kind": "identify", "base": {"simulate": {"train_s": 1}}}))
    assert_one_line_error(["sweep", spec, "--out", tmp_path / "out", option, value], option)
    assert not (tmp_path / "out").exists()


# ---- 4. ranges on numbers -------------------------------------------------------------------


def _poses(tmp_path: Path, change=None) -> Path:
    t = np.arange(13) / 60.0
    y = 0.1 + 0.4 * t - 4.905 * t**2
    table = np.column_stack([t, 0.5 * t, np.maximum(y, 0.03), 2.0 * t])
    if change is not None:
        change(table)
    path = tmp_path / "poses.csv"
    np.savetxt(path, table, delimiter=",", header="t,x,y,theta", comments="", fmt="%.17g")
    return path


def _set(row, col, value):
    def change(table):
        table[row, col] = value

    return change


@pytest.mark.parametrize(
    ("change", "culprit"),
    [
        (_set(3, 0, -1e308), "row 4, column t"),
        (_set(3, 1, -1e308), "row 4, column x"),
        (lambda table: table.__setitem__((slice(None), 0), table[:, 0] * 1000), "is t in seconds"),
        (lambda table: table.__setitem__((slice(None), slice(1, 4)), table[0, 1:]), "not move"),
    ],
)
def test_impacts_identify_refuses_poses_out_of_range(tmp_path, change, culprit):
    """t = -1e308 overflowed (OverflowError); x = -1e308 wrote NaN with exit 0; time in ms and
    a constant pose ran 53-133 s of IPOPT."""
    data = _poses(tmp_path, change)
    args = ["impacts", "identify", "--data", data, *SHAPE, "--out", tmp_path / "o"]
    assert_one_line_error(args, "poses.csv", culprit)
    assert not (tmp_path / "o").exists()


def _pendulum(tmp_path: Path, seconds: float = 0.5, angle0: float = 0.8) -> Path:
    from physid.multibody import load_model, simulate, state_from_joints

    model = load_model(PENDULUM, {"gravity": [0, 0, -9.81]})
    sim = simulate(model, 1e-3, int(seconds * 1e3), *state_from_joints(model, [angle0], [0.0]))
    noise = 1e-3 * np.random.default_rng(1).normal(size=len(sim.t[::10]))
    path = tmp_path / "swing.csv"
    np.savetxt(path, np.column_stack([sim.t[::10], sim.angles[::10, 0] + noise]), delimiter=",",
               header="t,q_pendulum", comments="")  # fmt: skip
    return path


@pytest.fixture()
def identify_config(tmp_path):
    path = tmp_path / "id.yaml"
    path.write_text("gravity: [0, 0, -9.81]\nestimate: [pendulum.Iyy, pendulum.viscous]\n")
    return path


def test_multibody_identify_ranges_gaps_and_units(tmp_path, identify_config):
    """--dt 1e-300 overflowed; a 100 s gap in t or time in ms ran over 60 s; a pendulum at rest
    gave viscous 250,001 +- 6.6e4 with exit 0."""
    data = _pendulum(tmp_path)
    base = ["multibody", "identify", "--urdf", PENDULUM, "--config", identify_config, "--out",
            tmp_path / "o", "--data"]  # fmt: skip
    assert_one_line_error([*base, data, "--dt", "1e-300"], "--dt")
    table = np.loadtxt(data, delimiter=",", skiprows=1)
    for name, edit, culprit in (
        ("gap", lambda t: t.__setitem__((slice(25, None), 0), t[25:, 0] + 100), "at row 26"),
        ("ms", lambda t: t.__setitem__((slice(None), 0), t[:, 0] * 1000), "is t in seconds"),
        ("rest", lambda t: t.__setitem__((slice(None), 1), 1e-3 * np.sin(np.arange(len(t)))),
         "no hinge moves"),
    ):  # fmt: skip
        changed = table.copy()
        edit(changed)
        bad = tmp_path / f"{name}.csv"
        np.savetxt(bad, changed, delimiter=",", header="t,q_pendulum", comments="")
        assert_one_line_error([*base, bad], culprit)
    assert not (tmp_path / "o").exists()


# ---- 5. online with time that does not run forward ------------------------------------------


@pytest.fixture(scope="module")
def online_files(tmp_path_factory):
    from physid.online.columns import OnlineSignals, signals_table
    from physid.sim.payload_arm import PayloadProfile, load_arm, simulate_payload_arm

    folder = tmp_path_factory.mktemp("online")
    profile = PayloadProfile(hold_s=0.3, sine_s=0.0, square_s=0.0, plateau_s=0.0, step_s=0.7,
                             step_to_kg=2.0)  # fmt: skip
    rec = simulate_payload_arm(np.random.default_rng(9), profile, rate_hz=200.0)
    columns = signals_table(OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, None), load_arm())
    config = folder / "online.yaml"
    config.write_text("calibration_s: 0.1\nacceleration_window: 11\n"
                      "measurement_noise: {joint_torque: 1.0}\n")  # fmt: skip
    return columns, config


def _online(tmp_path, columns, config, name):
    from physid.files.io import table_csv_text
    from physid.sim.payload_arm import ARM_URDF

    data = tmp_path / f"{name}.csv"
    data.write_text(table_csv_text(columns, fmt="%.17g"))
    return ["online", "--urdf", ARM_URDF, "--data", data, "--body", "arm_joint_7", "--config",
            config, "--out", tmp_path / "out", "--quiet"]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "rows", "culprit"),
    [
        ("reversed", slice(None, None, -1), "does not increase at row 2"),
        ("one_row", slice(0, 1), "nothing to replay"),
        ("shuffled", np.random.default_rng(0).permutation(200), "go backwards or stand still"),
    ],
)
def test_online_refuses_time_that_does_not_run_forward(tmp_path, online_files, name, rows, culprit):
    """Reversed rows raised ValueError ('no estimate in the window'); 1 row, one stamp and
    shuffled stamps ended '0 updates', exit 0, the URDF's nominal 0.3 kg as the estimate."""
    columns, config = online_files
    damaged = {k: v[rows] for k, v in columns.items()}
    assert_one_line_error(_online(tmp_path, damaged, config, name), f"{name}.csv", culprit)
    damaged["t"] = np.full(len(damaged["t"]), 0.5)
    assert_one_line_error(_online(tmp_path, damaged, config, "stamp"), "stamp.csv")
    assert not (tmp_path / "out").exists()


def test_online_positions_x1000_are_flagged_not_ok(tmp_path, online_files):
    columns, config = online_files
    scaled = {k: v * 1000 if k.startswith("q_") else v for k, v in columns.items()}
    # beside velocities in rad/s the positions' rate disagrees with them: one error line
    # (physid.recordings.velocity_check), nothing written
    code, _, stderr = invoke(*_online(tmp_path, scaled, config, "mm"))
    assert code == 2 and "reads 0.001 x the rate of q_" in stderr, stderr
    assert "one of the two in another unit?" in stderr and not (tmp_path / "out").exists()
    # without velocity columns: the positions beyond the URDF's limits make it suspect
    scaled = {k: v for k, v in scaled.items() if not k.startswith("dq_")}
    code, stdout, stderr = invoke(*_online(tmp_path, scaled, config, "mm"))
    assert code == 3 and "status: suspect" in stdout and "outside its URDF limits" in stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["status"] == "suspect"
    assert any(f["code"] == "ON104" for f in summary["findings"])
    code, _, _ = invoke(*_online(tmp_path, columns, config, "valid"))
    assert code == 0
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["status"] == "ok"


# ---- 6. nonsense refused: oe --------------------------------------------------------------------


def test_oe_refuses_zero_commands_and_a_constant_recording(files, tmp_path):
    """All torques zero gave 0.96 kg, a constant recording 1.03 kg, each with exit 0."""
    t = np.arange(41) * 0.01
    q = np.column_stack([0.3 * np.sin(3 * t), 0.2 * np.cos(2 * t)])
    for name, tau, angles, culprit in (
        ("zero", np.zeros((41, 2)), q, "every command tau_ is zero"),
        ("constant", np.ones((41, 2)), np.tile(q[0], (41, 1)), "no joint moves"),
    ):
        data = tmp_path / f"{name}.csv"
        table = np.column_stack([t, angles, tau])
        np.savetxt(data, table, delimiter=",", comments="",
                   header="t,q_shoulder,q_elbow,tau_shoulder,tau_elbow")  # fmt: skip
        args = ["oe", "--urdf", files["two_link"], "--data", data, "--body", "elbow", "--out",
                tmp_path / "o"]  # fmt: skip
        assert_one_line_error(args, f"{name}.csv", culprit)
    assert not (tmp_path / "o").exists()


def test_cli_exit_codes_documented():
    """The non-ok exit codes are documented in --help (online 3: status suspect)."""
    text = CliRunner().invoke(main, ["online", "--help"]).output
    assert "3 the outputs were written" in " ".join(text.split())


def test_notes_about_inputs_never_precede_the_error_line(tmp_path):
    """'physid: note: ... ignoring column(s)' was printed before a later error: two lines."""
    data = _pendulum(tmp_path)
    table = np.loadtxt(data, delimiter=",", skiprows=1)
    extra = tmp_path / "extra.csv"
    np.savetxt(extra, np.column_stack([table, table[:, 1]]), delimiter=",", comments="",
               header="t,q_pendulum,temperature")  # fmt: skip
    config = tmp_path / "scale.yaml"
    config.write_text("estimate: [pendulum.mass, pendulum.Ixx, pendulum.Iyy, pendulum.Izz]\n")
    args = ["multibody", "identify", "--urdf", PENDULUM, "--config", config, "--data", extra,
            "--out", tmp_path / "o"]  # fmt: skip
    assert_one_line_error(args, "estimate", "only their ratios")
    config.write_text("estimate: [pendulum.Iyy]\nbounds: {pendulum.Iyy: [1, 0]}\n")
    assert_one_line_error(args, "scale.yaml", "bounds.pendulum.Iyy", "above upper")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_an_output_folder_the_system_refuses_is_named_before_any_work(tmp_path):
    """os.access says yes to root under /proc (or on a read-only mount): impacts identify ran
    its whole fit, then raised an OSError creating the folder."""
    data = _poses(tmp_path)
    args = ["impacts", "identify", "--data", data, *SHAPE, "--out", "/proc/physid-out"]
    assert_one_line_error(args, "--out", "/proc is not writable")


def test_online_refuses_non_finite_stamps_and_huge_values(tmp_path, online_files):
    """A NaN time stamp was echoed into estimates.csv (and as the first one made the summary
    raise 'no estimate in the window'); 1e300 in a torque overflowed the innovation covariance
    (numpy warnings on stderr, exit 0). A NaN torque stays a skipped sample."""
    columns, config = online_files
    damaged = {k: v.copy() for k, v in columns.items()}
    damaged["t"][0] = np.nan
    assert_one_line_error(_online(tmp_path, damaged, config, "nan_t"), "nan_t.csv", "'t' row 1")
    damaged = {k: v.copy() for k, v in columns.items()}
    damaged["tau_arm_joint_5"][100] = 1e300
    args = _online(tmp_path, damaged, config, "huge")
    assert_one_line_error(args, "huge.csv", "'tau_arm_joint_5' row 101")
    damaged["tau_arm_joint_5"][100] = np.nan
    code, _, stderr = invoke(*_online(tmp_path, damaged, config, "skipped"))
    assert code == 0 and not stderr.strip()
    text = (tmp_path / "out" / "estimates.csv").read_text().lower()
    assert "nan" not in text and "inf" not in text


def test_huge_cells_are_refused_and_a_broken_simulation_is_not_ok(files, tmp_path):
    """1e300 in an oe torque cell raised LinAlgError in the Riccati step; in a multibody
    control cell it simulated NaN (numpy warnings, exit 0); a control of 1e4 on the pendulum
    opened its hinge by 0.15 m and was reported as a trajectory with exit 0."""
    t = np.arange(41) * 0.01
    tau = np.column_stack([np.sin(t), np.cos(t)])
    tau[5, 1] = 1e300
    data = tmp_path / "huge.csv"
    np.savetxt(
        data,
        np.column_stack([t, 0.3 * np.sin(3 * t), 0.2 * np.cos(2 * t), tau]),
        delimiter=",",
        comments="",
        header="t,q_shoulder,q_elbow,tau_shoulder,tau_elbow",
    )
    args = ["oe", "--urdf", files["two_link"], "--data", data, "--body", "elbow", "--out",
            tmp_path / "o"]  # fmt: skip
    assert_one_line_error(args, "huge.csv", "'tau_elbow' row 6", "beyond any plausible")
    config = tmp_path / "motor.yaml"
    config.write_text("joints: {pendulum: {gain: 0.5}}\n")
    control = tmp_path / "u.csv"
    base = ["multibody", "simulate", "--urdf", PENDULUM, "--config", config, "--control",
            control, "--out", tmp_path / "m"]  # fmt: skip
    control.write_text("t,u_pendulum\n0,0\n0.1,1e300\n0.2,0\n")
    assert_one_line_error(base, "u.csv", "'u_pendulum' row 2")
    control.write_text("t,u_pendulum\n0,1e4\n0.5,1e4\n")
    code, _, stderr = invoke(*base)
    status = json.loads((tmp_path / "m" / "simulation.json").read_text())["status"]
    assert code == 3 and status == "suspect" and "MB402" in stderr
    violation = json.loads((tmp_path / "m" / "simulation.json").read_text())
    assert violation["max_constraint_violation"] > 0.01
    control.write_text("t,u_pendulum\n0,0.2\n0.5,0.2\n")
    assert invoke(*base)[0] == 0
    assert json.loads((tmp_path / "m" / "simulation.json").read_text())["status"] == "ok"


def test_a_folder_locked_by_a_live_run_is_refused_before_the_work(tmp_path, online_files):
    """The lock was only tried when the outputs were written: online replayed in full and
    printed its progress bar, then 'in use' (two lines, the work wasted)."""
    import subprocess
    import sys

    from test_robustness_outputs import _HOLDER

    columns, config = online_files
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(tmp_path / "out"), "30"],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        args = [a for a in _online(tmp_path, columns, config, "rec") if a != "--quiet"]
        # one line: without --quiet a replay would have printed its progress bar first
        assert_one_line_error(args, "--out", f"in use by another physid run (pid {holder.pid})")
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
