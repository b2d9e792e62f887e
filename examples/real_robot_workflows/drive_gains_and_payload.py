"""Drive gains from a payload run, then an unknown payload, from motor currents only
(issue 11; docs/identify.md §6 and §8). Simulated: no shipped dataset has a known payload.

    OPENBLAS_NUM_THREADS=1 python examples/real_robot_workflows/drive_gains_and_payload.py \
        [--out gains_and_payload]

The six-axis arm logs currents ``i = tau / g`` with gains ``g`` the user does not trust. Three
runs of 20 s at 1 kHz: unloaded; with a 2.5 kg calibration mass of known placement (a sphere on
a 10 cm bracket on the last link); with an unknown 1.8 kg tool. ``physid identify`` with
``drive_gains: identify`` and ``--loaded-data`` estimates the gains and the robot; ``physid
payload`` then estimates the tool from its run. Prints the gains and the tool against the truth.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from physid.body.inertia import pi_from_mass_com_inertia
from physid.cli import main as physid_main
from physid.files.io import table_csv_text
from physid.sim.arm import arm6_model, arm6_urdf_path, simulate_random_excitation, true_parameters

GAINS = np.array([95.0, 120.0, 70.0, 35.0, 28.0, 12.0])  # N m per A, joint side: the truth
CALIBRATION = (2.5, np.array([0.1, 0.05, 0.05]))  # kg, m (known: it calibrates the gains)
TOOL = (1.8, np.array([0.02, -0.03, 0.12]))  # kg, m (unknown: estimated at the end)


def _sphere(mass: float, com: np.ndarray, radius: float = 0.05) -> np.ndarray:
    return pi_from_mass_com_inertia(mass, com, 0.4 * mass * radius**2 * np.eye(3))


def _write_currents(path: Path, model, recorded) -> Path:  # noqa: ANN001
    columns = {"t": recorded.t}
    columns |= {f"q_{j}": recorded.q[:, k] for k, j in enumerate(model.joint_names)}
    columns |= {f"i_{j}": recorded.tau[:, k] / GAINS[k] for k, j in enumerate(model.joint_names)}
    path.write_text(table_csv_text(columns, fmt="%.12g"))
    return path


def _physid(*args: str) -> None:
    physid_main(list(args), standalone_mode=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("gains_and_payload"))
    parser.add_argument(
        "--duration", type=float, default=20.0, help="seconds per simulated run (tests: shorter)"
    )
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(21)
    model = arm6_model()
    theta = true_parameters(model, rng)
    files = {}
    for name, payload in (("unloaded", None), ("calibration", CALIBRATION), ("tool", TOOL)):
        truth = theta.copy()
        if payload is not None:
            truth[model.layout.body_slice("joint_6")] += _sphere(*payload)
        sim = simulate_random_excitation(
            model, truth, duration_s=args.duration, sample_rate_hz=1000.0, rng=rng
        )
        files[name] = _write_currents(out / f"{name}.csv", model, sim.recorded)
    mass, com = CALIBRATION
    inertia = 0.4 * mass * 0.05**2
    (out / "gains.yaml").write_text(
        "drive_gains: identify\n"
        f"payload: {{joint: joint_6, mass: {mass}, com: {com.tolist()},\n"
        f"          inertia: [{inertia}, 0, {inertia}, 0, 0, {inertia}]}}\n"
    )
    urdf = str(arm6_urdf_path())
    _physid("identify", "--urdf", urdf, "--data", str(files["unloaded"]),
            "--loaded-data", str(files["calibration"]), "--config", str(out / "gains.yaml"),
            "--out", str(out / "robot"), "--overwrite", "--quiet")  # fmt: skip
    params = json.loads((out / "robot" / "params.json").read_text())
    gains = params["extra"]["drive_gains"]
    print("drive gains [N m/A]      truth   estimate   error")
    for k, joint in enumerate(model.joint_names):
        value, std = gains[joint]["value"], gains[joint]["std"]
        error = 100 * (value / GAINS[k] - 1)
        print(f"  {joint:10s} {GAINS[k]:12.1f} {value:10.2f}   {error:+.2f} % (std {std:.2f})")
    # The tool run, in torques (the identified gains applied), against the identified robot.
    tool = np.loadtxt(files["tool"], delimiter=",", skiprows=1)
    header = files["tool"].read_text().partition("\n")[0].split(",")
    columns = {name: tool[:, k] for k, name in enumerate(header)}
    for joint in model.joint_names:
        columns[f"tau_{joint}"] = columns.pop(f"i_{joint}") * gains[joint]["value"]
    (out / "tool_torques.csv").write_text(table_csv_text(columns, fmt="%.12g"))
    _physid("payload", "--urdf", urdf, "--params", str(out / "robot" / "params.json"),
            "--data", str(out / "tool_torques.csv"), "--link", "link_6",
            "--out", str(out / "tool"))  # fmt: skip
    result = json.loads((out / "tool" / "payload.json").read_text())
    print(f"tool mass: truth {TOOL[0]} kg, estimated {result['mass']:.3f} kg "
          f"(std {result['std']['mass']:.3f})")  # fmt: skip
    print(f"tool com [m]: truth {TOOL[1]}, estimated {np.round(result['com_in_link'], 4)}")
    print(f"outputs in {out}/")


if __name__ == "__main__":
    main()
