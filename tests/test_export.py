"""physid export: round trips of identified parameters through URDF (Pinocchio) and MJCF
(MuJoCo) on the real KUKA LWR4+ and Staubli TX40 identifications (issue 12, item 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pinocchio as pin
import pytest
from click.testing import CliRunner
from conftest import EXAMPLES, KUKA, TX40, require_dataset

from physid.cli import main
from physid.errors import InputError
from physid.export import write_export
from physid.files.params_file import apply_inertias, read_params
from physid.robot.model import load_urdf

ROBOTS = ("kuka", "tx40")


# One BLAS thread: on a shared machine, multithreaded BLAS inside the identification is many
# times slower than one thread (oversubscription); the environment must be set before NumPy
# loads, hence a fresh interpreter.
_SINGLE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_RUN = """
import sys
from physid.workflows import run_identify
urdf, out, config, *data = sys.argv[1:]
run_identify(urdf, data, config_path=config or None, out_dir=out)
"""


def _identify(urdf, data, out, config=None):
    """params.json written by ``run_identify(out_dir=...)``, run in a fresh interpreter."""
    arguments = [str(urdf), str(out), str(config or ""), *map(str, data)]
    env = os.environ | _SINGLE_THREAD
    run = subprocess.run(
        [sys.executable, "-c", _RUN, *arguments], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return urdf, out / "params.json"


@pytest.fixture(scope="module")
def identified(tmp_path_factory, request) -> dict:
    """params.json of ``run_identify``: KUKA without a config (one example manifest: conftest's
    kuka_file_2_identified), TX40 with the example config (motor-side data, coupled wrist)."""
    out = tmp_path_factory.mktemp("identified")
    runs = {}
    if KUKA.is_dir():
        kuka = request.getfixturevalue("kuka_file_2_identified")
        runs["kuka"] = kuka.urdf, kuka.out / "params.json"
    if TX40.is_dir():
        config = EXAMPLES / "staubli_tx40" / "config.yaml"
        data = [EXAMPLES / "staubli_tx40" / "recording.yaml"]
        runs["tx40"] = _identify(TX40 / "tx40_mdh_modified.urdf", data, out / "tx40", config)
    return runs


def _case(identified: dict, robot: str):
    require_dataset(KUKA if robot == "kuka" else TX40)
    return identified[robot]


def _states(model: pin.Model, count: int = 25):
    rng = np.random.default_rng(3)
    for _ in range(count):
        q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
        yield q, rng.uniform(-2, 2, model.nv), rng.uniform(-5, 5, model.nv)


def _reference(urdf, params_path) -> pin.Model:
    """The Pinocchio model of the params.json bodies (and its gravity) on the original URDF."""
    return apply_inertias(load_urdf(urdf), read_params(params_path))


@pytest.mark.parametrize("robot", ROBOTS)
def test_urdf_round_trip_in_pinocchio(identified, robot, tmp_path):
    urdf, params_path = _case(identified, robot)
    out = tmp_path / "exported.urdf"
    write_export(params_path, urdf, out, "urdf")
    reference = _reference(urdf, params_path)
    exported = load_urdf(out)
    exported.gravity = reference.gravity  # a URDF holds no gravity (written as a comment)
    worst = 0.0
    for q, v, a in _states(reference):
        tau_ref = pin.rnea(reference, reference.createData(), q, v, a)
        tau = pin.rnea(exported, exported.createData(), q, v, a)
        worst = max(worst, np.linalg.norm(tau - tau_ref) / np.linalg.norm(tau_ref))
    print(f"{robot} URDF/Pinocchio worst relative error {worst:.2e}")
    assert worst < 1e-9
    joints = read_params(params_path).joints
    names = list(exported.names)[1:]
    viscous = [joints[j]["viscous"] for j in names]
    coulomb = [joints[j]["coulomb"] for j in names]
    np.testing.assert_allclose(exported.damping, viscous, rtol=1e-12)
    np.testing.assert_allclose(exported.friction, coulomb, rtol=1e-12)


def mujoco_inverse(xml_path, q, v, a, joint_names, gravity=None) -> np.ndarray:
    """MuJoCo inverse dynamics without passive forces, constraints and armature: rigid body
    (``gravity``: instead of the file's, for a URDF, which cannot hold one)."""
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (physid[mujoco])")
    model = mujoco.MjModel.from_xml_path(str(xml_path))
    if gravity is not None:
        model.opt.gravity[:] = gravity
    off = mujoco.mjtDisableBit
    for flag in (off.mjDSBL_CONSTRAINT, off.mjDSBL_DAMPER, off.mjDSBL_SPRING):
        model.opt.disableflags |= int(flag)
    data = mujoco.MjData(model)
    dofs = [model.joint(name).dofadr[0] for name in joint_names]
    data.qpos[[model.joint(n).qposadr[0] for n in joint_names]] = q
    data.qvel[dofs], data.qacc[dofs] = v, a
    mujoco.mj_inverse(model, data)
    return (data.qfrc_inverse - model.dof_armature * data.qacc)[dofs]


@pytest.mark.parametrize("robot", ROBOTS)
def test_mjcf_round_trip_in_mujoco(identified, robot, tmp_path):
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is not installed (physid[mujoco])")
    urdf, params_path = _case(identified, robot)
    out = tmp_path / "exported.xml"
    notes = write_export(params_path, urdf, out, "mjcf")
    reference = _reference(urdf, params_path)
    names = list(reference.names)[1:]
    worst = 0.0
    for q, v, a in _states(reference):
        tau_ref = pin.rnea(reference, reference.createData(), q, v, a)
        tau = mujoco_inverse(out, q, v, a, names)
        worst = max(worst, np.linalg.norm(tau - tau_ref) / np.linalg.norm(tau_ref))
    print(f"{robot} MJCF/MuJoCo worst relative error {worst:.2e}")
    assert worst < 1e-6
    model = mujoco.MjModel.from_xml_path(str(out))
    # the URDF's collision shapes overlap at its zero pose (the KUKA's base box 70 mm into its
    # first link): excluded and said, so MuJoCo's own collision detection finds no overlap there
    data = mujoco.MjData(model)
    mujoco.mj_fwdPosition(model, data)
    assert all(data.contact[k].dist > -1e-3 for k in range(data.ncon))
    excluded = [n for n in notes if n.startswith("contacts between")]
    assert len(excluded) == model.nexclude == (2 if robot == "kuka" else 0), notes
    assert not [n for n in notes if "armature" in n], notes  # the MJCF holds it
    joints = read_params(params_path).joints
    for name in names:
        dof = model.joint(name).dofadr[0]
        assert model.dof_damping[dof] == pytest.approx(max(joints[name]["viscous"], 0.0))
        assert model.dof_frictionloss[dof] == pytest.approx(max(joints[name]["coulomb"], 0.0))
        assert model.dof_armature[dof] == pytest.approx(max(joints[name]["armature"], 0.0))
    np.testing.assert_allclose(model.opt.gravity, reference.gravity.linear, rtol=1e-12)


def test_tx40_export_lists_what_it_cannot_represent(identified, tmp_path):
    urdf, params_path = _case(identified, "tx40")
    notes = write_export(params_path, urdf, tmp_path / "tx40.urdf")
    text = " ".join(notes)
    assert "coupled motor m6" in text and "torque offset" in text
    assert "coulomb_deadband" in text and "armature" in text


def test_cli_export_and_bad_inputs(identified, tmp_path):
    urdf, params_path = _case(identified, "kuka")
    runner = CliRunner()
    out = tmp_path / "kuka.xml"
    args = ["export", "--params", str(params_path), "--urdf", str(urdf), "--out", str(out)]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert out.is_file() and "<mujoco" in out.read_text()
    bad = runner.invoke(main, [*args[:-1], str(tmp_path / "kuka.txt")])
    assert bad.exit_code == 2 and "--format" in bad.output
    document = json.loads(params_path.read_text())
    document["bodies"]["no_such_joint"] = document["bodies"].pop("lwr_3_joint")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(document))
    with pytest.raises(InputError, match="bodies.no_such_joint"):
        write_export(wrong, urdf, tmp_path / "wrong.urdf")
    assert not (tmp_path / "wrong.urdf").exists()


def test_an_export_of_a_suspect_identification_says_so_and_exits_3(identified, tmp_path):
    """The exported file cannot carry params.json's status: a probe's LeRobot arm, its torques
    in mA-like units, exported a 94.9 kg elbow (URDF 0.15 kg) with exit 0 and not a word of the
    identification's 'suspect'. The file is written; stderr names the status and its reason."""
    urdf, params_path = _case(identified, "kuka")
    document = json.loads(params_path.read_text())
    assert document["status"] == "ok"
    document["status"] = "suspect"
    document["suspect_reasons"] = ["torque scale implausible: 5.9e+02 x the URDF's"]
    suspect = tmp_path / "suspect.json"
    suspect.write_text(json.dumps(document))
    out = tmp_path / "kuka.xml"
    args = ["export", "--params", str(suspect), "--urdf", str(urdf), "--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 3 and out.is_file()
    assert "status is 'suspect': torque scale implausible: 5.9e+02" in result.output
    ok = CliRunner().invoke(main, [*args[:2], str(params_path), *args[3:]])
    assert ok.exit_code == 0 and "status is" not in ok.output


@pytest.mark.parametrize("suffix", [".urdf", ".xml"])
def test_bodies_the_data_do_not_determine_are_marked_in_the_exported_file(
    identified, tmp_path, suffix
):
    """params.json says which bodies' mass, com or inertia the prior set (source 'prior'); the
    exported URDF or MJCF said nothing, and a simulation engineer took a CAD mass the fit could
    not see for a measured one. Each such body's inertial is preceded by a comment naming
    what the data do not determine, and stderr lists them; a body the data determine has none."""
    import re

    urdf, params_path = _case(identified, "kuka")
    document = json.loads(params_path.read_text())
    joints = list(document["bodies"])
    document["bodies"][joints[2]]["source"] = {"mass": "prior", "com": "data", "inertia": "data"}
    for joint in joints[3:]:
        document["bodies"][joint]["source"] = dict.fromkeys(("mass", "com", "inertia"), "data")
    marked = tmp_path / "marked.json"
    marked.write_text(json.dumps(document))
    quantities = ("mass", "com", "inertia")
    expected = {j: ", ".join(k for k in quantities if b["source"][k] == "prior")
                for j, b in document["bodies"].items()
                if "prior" in b["source"].values()}  # fmt: skip
    assert joints[2] in expected and joints[3] not in expected
    out = tmp_path / f"kuka{suffix}"
    result = CliRunner().invoke(
        main, ["export", "--params", str(marked), "--urdf", str(urdf), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert f"{joints[2]} (mass)" in result.output
    comments = re.findall(r"<!-- physid: the data do not determine the ([a-z, ]+) of (\w+)'s "
                          r"body[^>]*-->\s*<inertial", out.read_text())  # fmt: skip
    assert {joint: what for what, joint in comments} == expected
