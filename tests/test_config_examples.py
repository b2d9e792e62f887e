"""``physid config --template`` prints the true defaults, and every documented example runs.

Issue 28 items 1 and 3: the template is generated from the config dataclasses (a file of it
changes nothing), and each commented-out example of it — every key the identify config
documents — runs end to end through ``physid identify`` with its outputs (params.json,
report.html, figures) written, on a simulated demo arm whose true parameters are known: the
held-out error must reach the floor that the true parameters themselves score (or, for the
drive gains, the gains must match the simulator's).
"""

from __future__ import annotations

import hashlib
import json
import pickle
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from conftest import shared_across_workers

from physid.body.inertia import pi_from_mass_com_inertia
from physid.cli import main
from physid.errors import InputError
from physid.files.config import FilterConfig, IdentifyConfig, parse_config, robot_for
from physid.files.config_template import COMMENTS, EXAMPLES, config_keys, example_config
from physid.files.io import table_csv_text
from physid.offline.observe.prediction import predict_recording
from physid.recordings.trajectory import load_trajectory, split_by_fraction, write_trajectory_csv
from physid.sim.arm import (
    EXCURSION_RAD,
    SensorNoise,
    arm6_urdf_path,
    simulate_random_excitation,
    true_parameters,
)

URDF = arm6_urdf_path()
GAINS = np.array([2.5, 2.5, 2.5, 0.8, 0.8, 0.8])  # the drive_gains example [N m per unit]

# Which examples run together (compatible keys share one identification).
GROUPS: dict[str, tuple[str, ...]] = {
    "terms_and_estimation": (
        "joint_terms",
        "coulomb_deadband",
        "estimation.weighting",
        "estimation.prior_metric",
        "estimation.plausible_masses",
        "estimation.estimate_gravity_direction",
        "estimation.torque_delay",
        "allow_large_angles",
    ),
    "kalman_and_split": ("filter.method", "filter.nvr", "split.train_fraction"),
    "classical_cut_offs": (
        "filter.butterworth_cutoff_hz",
        "filter.decimation_cutoff_hz",
        "filter.decimation_factor",
    ),
    "stribeck": ("friction",),
    "joint_selection": ("joints", "locked"),
    "fit_joints": ("fit_joints",),
    "mass_prior": ("estimation.prior_total_mass_std_relative",),
    "transmission": ("transmission",),
    "currents": ("drive_gains",),
    "payload": ("payload",),
    "mounting": ("gravity",),  # simulated hanging from a ceiling: the config's gravity
}


def test_template_prints_the_true_defaults():
    result = CliRunner().invoke(main, ["config", "--template"])
    assert result.exit_code == 0, result.output
    assert parse_config(yaml.safe_load(result.output)) == parse_config({}) == IdentifyConfig()
    assert max(len(line) for line in result.output.splitlines()) <= 100
    for key in config_keys():
        assert COMMENTS.get(key), f"config key {key} has no comment in physid.files.config_template"
    for key in EXAMPLES:
        assert key in config_keys(), f"example of {key}, which is not a config key"
        commented = f"e.g. {key.rpartition('.')[2]}:"
        assert commented in result.output, f"the example of {key} is not in the template"


def test_every_example_belongs_to_a_group_that_runs():
    grouped = [key for keys in GROUPS.values() for key in keys]
    assert sorted(grouped) == sorted(EXAMPLES)


def _config(group: str) -> dict:
    config: dict = {}
    for key in GROUPS[group]:
        for name, value in example_config(key).items():
            config[name] = {**config[name], **value} if isinstance(value, dict) and name in (
                "filter", "estimation", "split"
            ) and name in config else value  # fmt: skip
    if group == "payload":
        config["drive_gains"] = "identify"
    return config


def _truth(model, rng):
    """True parameters, with the shapes a nonlinear-friction joint needs and the coupled
    motor's viscous and Coulomb terms (its inertia stays 0: the simulator's ABA has none)."""
    theta = true_parameters(model, rng)
    layout = model.layout
    shapes = []
    for joint in model.joint_names:
        kind = layout.friction_of(joint)
        if kind == "stribeck":
            fc = theta[layout.index(f"{joint}.fc")]
            theta[layout.index(f"{joint}.fs")] = 1.6 * fc
            shapes.append((0.15,))  # vs [rad/s]
        else:
            shapes.append(())
    if any(shapes):
        model = replace(model, friction_shape=tuple(shapes))
    for motor in layout.coupled_motor_names:
        theta[layout.index(f"{motor}.fvm")] = 0.3
        theta[layout.index(f"{motor}.fcm")] = 0.5
    return model, theta


def _write(path: Path, model, recorded, group: str) -> Path:
    """The recording as the group's config expects it: motor side, currents, or joint side."""
    columns = {"t": recorded.t}
    if group == "transmission":
        transmission = model.transmission
        q_motor = transmission.motor_positions(recorded.q)
        tau_motor = np.linalg.solve(transmission.ratio.T, recorded.tau.T).T
        for k, motor in enumerate(transmission.motor_names):
            columns[f"qm_{motor}"] = q_motor[:, k]
            columns[f"taum_{motor}"] = tau_motor[:, k]
    elif group in ("currents", "payload"):
        gains = GAINS[: model.n_joints]
        columns |= {f"q_{j}": recorded.q[:, k] for k, j in enumerate(model.joint_names)}
        for k, joint in enumerate(model.joint_names):
            columns[f"i_{joint}"] = recorded.tau[:, k] / gains[k]
    else:
        path = write_trajectory_csv(path, recorded)
        if group == "fit_joints":  # joint_1's torque is not logged
            header, *rows = path.read_text().splitlines()
            keep = [k for k, c in enumerate(header.split(",")) if c != "tau_joint_1"]
            lines = [",".join(r.split(",")[k] for k in keep) for r in [header, *rows]]
            path.write_text("\n".join(lines) + "\n")
        return path
    path.write_text(table_csv_text(columns, fmt="%.12g"))
    return path


def _payload_pi(config: dict) -> np.ndarray:
    payload = config["payload"]
    return pi_from_mass_com_inertia(payload["mass"], np.asarray(payload["com"]), np.zeros((3, 3)))


def _simulated(tmp_path_factory, model, truth, duration, rng, noise):  # noqa: ANN001, ANN202
    """The recording of ``simulate_random_excitation`` (500 Hz, the demo arm's excursions), and
    ``rng`` left as the simulation leaves it. Five groups (kalman_and_split, classical_cut_offs,
    mass_prior, currents, payload) have the same model and truth, so the same simulations: the
    key is a hash of every input (the pickled model, the truth, the duration, the noise and the
    generator's state), so equal keys are equal simulations, computed once per test run."""
    key = hashlib.sha256(pickle.dumps((model, truth, duration, noise, rng.bit_generator.state)))

    def simulate():  # noqa: ANN202
        sim = simulate_random_excitation(
            model, truth, duration_s=duration, sample_rate_hz=500.0, rng=rng, noise=noise,
            amplitude_rad=EXCURSION_RAD[: model.n_joints],
        )  # fmt: skip
        return sim.recorded, rng.bit_generator.state

    name = f"config_example_simulation-{key.hexdigest()}"
    recorded, state = shared_across_workers(tmp_path_factory, name, simulate)
    rng.bit_generator.state = state
    return recorded


@pytest.mark.parametrize("group", list(GROUPS))
def test_documented_example_runs_end_to_end_with_its_report(group, tmp_path, tmp_path_factory):
    config = _config(group)
    model, theta = _truth(robot_for(URDF, parse_config(config)), np.random.default_rng(3))
    rng = np.random.default_rng(11)
    noise = SensorNoise(torque_noise_std=0.1)
    runs = {}
    for name, duration in (("train", 12.0), ("validate", 6.0)):
        truth = theta
        if group == "payload" and name == "validate":  # the loaded calibration run
            truth = theta.copy()
            truth[model.layout.body_slice(config["payload"]["joint"])] += _payload_pi(config)
        recorded = _simulated(tmp_path_factory, model, truth, duration, rng, noise)
        runs[name] = _write(tmp_path / f"{name}.csv", model, recorded, group)
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    out = tmp_path / "out"
    args = ["identify", "--urdf", URDF, "--data", str(runs["train"]), "--config",
            str(config_path), "--out", str(out), "--quiet"]  # fmt: skip
    if group == "payload":
        args += ["--loaded-data", str(runs["validate"])]
    elif group != "kalman_and_split":
        args += ["--validate", str(runs["validate"])]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    document = json.loads((out / "params.json").read_text())
    report = (out / "report.html").read_text()
    assert document["fit"]["status"] == "ok"
    assert 'id="fig-torque_train_1"' in report
    if group == "payload":
        gains = document["extra"]["drive_gains"]
        estimate = np.array([gains[j]["value"] for j in model.joint_names])
        np.testing.assert_allclose(estimate, GAINS, rtol=0.02)
        assert "drive gains" in report.lower()
        return
    # The held-out error at the floor the true parameters score with the fit's own filter.
    validation = load_trajectory(
        runs["validate" if group != "kalman_and_split" else "train"], model,
        drive_gains=dict(zip(model.joint_names, GAINS, strict=False)) if group == "currents"
        else None,
    )  # fmt: skip
    if group == "kalman_and_split":
        validation = split_by_fraction(validation, config["split"]["train_fraction"])[1]
    fit_filter = replace(parse_config(config).filter, **_chosen(document))
    floor = predict_recording(model, validation, fit_filter, theta).metrics.relative_error
    error = document["fit"]["validation"]["relative_error"]
    assert error < 1.1 * floor, f"held-out error {error:.4f} against the truth's {floor:.4f}"


def _chosen(document: dict) -> dict:
    """The filter settings the fit chose (cut-offs, decimation, NVR), as FilterConfig fields."""
    chosen = document["preprocessing"]
    return {key: chosen[key] for key in FilterConfig.__dataclass_fields__ if key in chosen}


def test_sections_the_data_do_not_use_are_errors(tmp_path):
    """A config copied from another robot must not change a fit silently (issue 28: the old
    template's 6-motor transmission turned the demo arm's 60 base parameters into 63)."""
    model = robot_for(URDF, parse_config({}))
    theta = true_parameters(model, np.random.default_rng(0))
    sim = simulate_random_excitation(
        model, theta, duration_s=2.0, sample_rate_hz=200.0, rng=np.random.default_rng(1)
    )
    data = write_trajectory_csv(tmp_path / "run.csv", sim.recorded)  # joint side, torques
    for key, message in (
        ("transmission", "config transmission: motors m1, m2, m3, m4, m5, m6 are configured"),
        ("drive_gains", "config drive_gains: no current column for joint_1"),
    ):
        (tmp_path / "c.yaml").write_text(yaml.safe_dump(example_config(key)))
        args = ["identify", "--urdf", URDF, "--data", str(data), "--config",
                str(tmp_path / "c.yaml"), "--out", str(tmp_path / key)]  # fmt: skip
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2 and message in result.output, result.output
        assert not (tmp_path / key).exists()
    with pytest.raises(InputError, match="config payload: .* used only with drive_gains"):
        parse_config(example_config("payload"))


def test_exponent_floats_in_a_config_are_numbers(tmp_path):
    # PyYAML reads YAML 1.1, where 1e-3 (no dot) is the string '1e-3': configs refused it with
    # "expected a finite number, got '1e-3'" (online noise, oe noise, identify filter alike)
    from physid.files.config import load_config

    path = tmp_path / "exponent.yaml"
    path.write_text("filter: {method: classical, butterworth_cutoff_hz: 1e1}\n"
                    "estimation: {prior_std_relative: 3E-1}\n")  # fmt: skip
    config = load_config(path)
    assert config.filter.butterworth_cutoff_hz == 10.0
    assert config.estimation.prior_std_relative == pytest.approx(0.3)
    path.write_text("estimation: {prior_std_relative: 'e5'}\n")  # a string stays a string
    with pytest.raises(InputError, match="expected a finite number, got 'e5'"):
        load_config(path)


def test_a_key_given_twice_is_refused_naming_it(tmp_path):
    # a second 'estimate:' silently replaced the first (YAML keeps the last)
    from physid.files.config import load_config

    path = tmp_path / "twice.yaml"
    path.write_text("estimation: {prior_std_relative: 0.3}\nfilter: {method: classical}\n"
                    "estimation: {weighting: ols}\n")  # fmt: skip
    with pytest.raises(InputError, match=r"key 'estimation' given twice \(lines 1 and 3\)"):
        load_config(path)
    from physid.files.io import read_yaml

    path.write_text("base: &b {method: classical, x: 1}\nfilter: {<<: *b, method: irwsm1}\n")
    # a merged key may be overridden: that is what '<<' is for
    assert read_yaml(path, "config file")["filter"] == {"method": "irwsm1", "x": 1}
