"""Drive gains from currents and a known payload (issue 11 item 2; Gautier & Briot 2014).

Truth: the simulated six-axis arm (RK4 + Pinocchio ABA, friction, encoder quantisation, torque
noise) run twice, without and with a 2.5 kg payload on the last body; the drives log currents
``tau / g`` with known gains ``g``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from physid.body.inertia import pi_from_mass_com_inertia
from physid.errors import InputError
from physid.files.config import FilterConfig
from physid.offline.loads.drive_gains import KnownPayload, identify_drive_gains
from physid.sim.arm import arm6_model, simulate_random_excitation, true_parameters

GAINS = np.array([95.0, 120.0, 70.0, 35.0, 28.0, 12.0])  # N m per A, joint side


def _payload() -> KnownPayload:
    # a calibration mass on a 10 cm bracket: it loads every joint, the wrist roll included
    mass, com = 2.5, np.array([0.1, 0.05, 0.05])
    inertia = 0.4 * mass * 0.05**2 * np.eye(3)  # a solid sphere of 5 cm radius
    return KnownPayload("joint_6", pi_from_mass_com_inertia(mass, com, inertia))


@pytest.fixture(scope="module")
def recordings():
    rng = np.random.default_rng(21)
    model = arm6_model()
    theta = true_parameters(model, rng)
    loaded_theta = theta.copy()
    loaded_theta[model.layout.body_slice("joint_6")] += _payload().pi
    runs = []
    for truth in (theta, loaded_theta):
        sim = simulate_random_excitation(
            model, truth, duration_s=20.0, sample_rate_hz=1000.0, rng=rng
        )
        runs.append(replace(sim.recorded, tau=sim.recorded.tau / GAINS))  # what the drives log
    return model, runs


def test_gains_within_one_percent_of_the_truth(recordings):
    model, (unloaded, loaded) = recordings
    estimate = identify_drive_gains(model, [unloaded], [loaded], _payload(), FilterConfig())
    error = estimate.gains / GAINS - 1.0
    assert np.all(np.abs(error) < 0.01), f"relative gain errors {np.round(100 * error, 2)} %"
    # the reported uncertainty covers the error and is not a blanket
    z = np.abs(estimate.gains - GAINS) / estimate.std
    assert np.all(z < 4.0) and np.all(estimate.std / GAINS < 0.01)
    assert estimate.as_dict()["joint_2"]["value"] == pytest.approx(estimate.gains[1])


def test_without_a_payload_the_scale_is_refused(recordings):
    model, (unloaded, _) = recordings
    with pytest.raises(InputError, match="at least one recording with the payload"):
        identify_drive_gains(model, [unloaded], [], _payload(), FilterConfig())


def test_cli_identifies_gains_then_the_robot(recordings, tmp_path):
    import json

    from click.testing import CliRunner

    from physid.cli import main
    from physid.files.io import table_csv_text
    from physid.sim.arm import arm6_urdf_path

    model, runs = recordings
    files = []
    for name, run in zip(("unloaded", "loaded"), runs, strict=True):
        columns = {"t": run.t}
        columns |= {f"q_{j}": run.q[:, k] for k, j in enumerate(model.joint_names)}
        columns |= {f"i_{j}": run.tau[:, k] for k, j in enumerate(model.joint_names)}
        path = tmp_path / f"{name}.csv"
        path.write_text(table_csv_text(columns, fmt="%.12g"))
        files.append(path)
    config = tmp_path / "gains.yaml"
    config.write_text(
        "drive_gains: identify\n"
        "payload: {joint: joint_6, mass: 2.5, com: [0.1, 0.05, 0.05],"
        " inertia: [0.0025, 0, 0.0025, 0, 0, 0.0025]}\n"
    )
    out = tmp_path / "fit"
    args = ["identify", "--urdf", arm6_urdf_path(), "--data", str(files[0]), "--loaded-data",
            str(files[1]), "--config", str(config), "--out", str(out), "--quiet"]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "drive gains (known payload): joint_1" in result.output
    document = json.loads((out / "params.json").read_text())
    gains = np.array([document["extra"]["drive_gains"][j]["value"] for j in model.joint_names])
    assert np.all(np.abs(gains / GAINS - 1.0) < 0.01)
    assert document["provenance"]["loaded_data"] == [str(files[1])]
    # validate and payload with the same config read the currents with the identified gains:
    # the training run is predicted as identify scored it (with unit gains: 43x the torque)
    result = CliRunner().invoke(main, ["validate", "--urdf", arm6_urdf_path(), "--params",
                                       str(out / "params.json"), "--data", str(files[0]),
                                       "--config", str(config), "--json",
                                       str(tmp_path / "validated.json")])  # fmt: skip
    assert result.exit_code == 0, result.output
    validated = json.loads((tmp_path / "validated.json").read_text())["overall"]["relative_error"]
    assert validated == pytest.approx(document["fit"]["train"]["relative_error"], rel=0.02)
    result = CliRunner().invoke(main, ["payload", "--urdf", arm6_urdf_path(), "--params",
                                       str(out / "params.json"), "--data", str(files[1]),
                                       "--link", "joint_6", "--config", str(config), "--out",
                                       str(tmp_path / "payload")])  # fmt: skip
    assert result.exit_code == 0, result.output
    mass = float(result.output.split("mass ")[1].split()[0])
    assert mass == pytest.approx(2.5, rel=0.03), result.output
    # validate and payload need no payload section: 'identify' means the gains params.json
    # holds (it was refused: "needs a 'payload' section")
    bare = tmp_path / "bare.yaml"
    bare.write_text("drive_gains: identify\n")
    result = CliRunner().invoke(main, ["validate", "--urdf", arm6_urdf_path(), "--params",
                                       str(out / "params.json"), "--data", str(files[0]),
                                       "--config", str(bare)])  # fmt: skip
    assert result.exit_code == 0, result.output
    # a params.json without identified gains cannot stand in for them
    del document["extra"]["drive_gains"]
    (out / "params.json").write_text(json.dumps(document))
    result = CliRunner().invoke(main, ["validate", "--urdf", arm6_urdf_path(), "--params",
                                       str(out / "params.json"), "--data", str(files[0]),
                                       "--config", str(config)])  # fmt: skip
    assert result.exit_code == 2 and "holds no identified drive gains" in result.stderr
    # without the payload section the config is refused at once, before any file is read
    config.write_text("drive_gains: identify\n")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "needs a 'payload' section" in result.stderr
    garbage = tmp_path / "garbage.csv"
    garbage.write_text("not a recording\n")
    result = CliRunner().invoke(main, [str(garbage) if a == str(files[0]) else a for a in args])
    assert result.exit_code == 2 and "needs a 'payload' section" in result.stderr


def test_mass_only_payload_also_fixes_the_gains(recordings):
    # the centre of mass and inertia of the payload unknown: estimated with the gains
    model, (unloaded, loaded) = recordings
    known = _payload()
    mass_only = KnownPayload(known.joint, np.r_[known.pi[0], np.zeros(9)], moments_known=False)
    estimate = identify_drive_gains(model, [unloaded], [loaded], mass_only, FilterConfig())
    error = estimate.gains / GAINS - 1.0
    assert np.all(np.abs(error) < 0.02), f"relative gain errors {np.round(100 * error, 2)} %"
    assert np.all(np.abs(estimate.gains - GAINS) / estimate.std < 4.0)


def test_a_payload_on_a_joint_axis_leaves_its_gain_undecided_and_says_so(recordings):
    """A payload whose centre of mass sits on the wrist-roll axis hardly loads that joint: its
    gain is not decided (std tens of %), and the estimate names it instead of passing it as ok
    (issue 32 item 2: what the data cannot decide is said)."""
    model, (unloaded, _) = recordings
    mass, com = 2.5, np.array([0.0, 0.0, 0.05])
    payload = KnownPayload(
        "joint_6", pi_from_mass_com_inertia(mass, com, 0.4 * mass * 0.05**2 * np.eye(3))
    )
    loaded_theta = true_parameters(model, np.random.default_rng(21))  # the fixture's robot
    loaded_theta[model.layout.body_slice("joint_6")] += payload.pi
    sim = simulate_random_excitation(
        model, loaded_theta, duration_s=20.0, sample_rate_hz=1000.0, rng=np.random.default_rng(5)
    )
    loaded = replace(sim.recorded, tau=sim.recorded.tau / GAINS)
    estimate = identify_drive_gains(model, [unloaded], [loaded], payload, FilterConfig())
    relative_std = estimate.std / estimate.gains
    assert relative_std[5] > 0.2  # the wrist roll: undecided, and its std shows it
    assert np.all(relative_std[:5] < 0.02)  # the loaded joints stay decided
    assert estimate.payload_share[5] < 0.01 < estimate.payload_share[:5].min()
    (warning,) = estimate.undecided()
    assert "joint_6" in warning and "joint_5" not in warning
    assert abs(estimate.gains[5] / GAINS[5] - 1.0) < 3.0 * relative_std[5]  # std covers it


def test_well_loaded_gains_raise_no_warning(recordings):
    model, (unloaded, loaded) = recordings
    estimate = identify_drive_gains(model, [unloaded], [loaded], _payload(), FilterConfig())
    assert estimate.undecided() == []
    assert np.all(estimate.payload_share > 0.05)
