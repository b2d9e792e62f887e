"""A mobile manipulator identified from its arm: every other joint locked, the moving torso
at its recorded position (issue 11; docs/identify.md §7). Simulated: TIAGo from
``example-robot-data`` (wheels, torso lift, arm, head, gripper).

    OPENBLAS_NUM_THREADS=1 python examples/real_robot_workflows/mobile_manipulator_locking.py \
        [--out tiago_arm]

The torso lift moves +-0.3 m while the arm is excited; the log has the torso's position but not
its force, and no column for the head, the gripper or the wheels. Two configs are compared on
held-out data: the torso locked at its recorded position (``locked: {torso_lift_joint:
recorded}``), and locked at a fixed height (the only option for a joint without any column).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from physid.cli import main as physid_main
from physid.files.config import parse_config, robot_for
from physid.recordings.trajectory import write_trajectory_csv
from physid.sim.arm import SensorNoise, simulate_random_excitation, true_parameters
from physid.sim.oe_robots import robot_urdf

ARM = [f"arm_{k}_joint" for k in range(1, 8)]
RECORDED = {"joints": ARM, "locked": {"torso_lift_joint": "recorded"}}
FIXED = {"joints": ARM, "locked": {"torso_lift_joint": 0.0}}


def _drop_columns(path: Path, names: set[str]) -> Path:
    header, *rows = path.read_text().splitlines()
    keep = [k for k, c in enumerate(header.split(",")) if c not in names]
    path.write_text("\n".join(",".join(r.split(",")[k] for k in keep) for r in [header, *rows]))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tiago_arm"))
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    urdf = str(robot_urdf("tiago_description/robots/tiago.urdf"))
    model = robot_for(urdf, parse_config(RECORDED))  # torso + arm: the simulated joints
    rng = np.random.default_rng(5)
    theta = true_parameters(model, rng)
    for name, duration in (("train", 15.0), ("validate", 5.0)):
        sim = simulate_random_excitation(
            model, theta, duration_s=duration, sample_rate_hz=500.0, rng=rng,
            noise=SensorNoise(torque_noise_std=0.05), amplitude_rad=np.r_[0.3, np.full(7, 0.5)],
        )  # fmt: skip
        path = write_trajectory_csv(out / f"{name}.csv", sim.recorded)
        _drop_columns(path, {"tau_torso_lift_joint"})  # the torso's force is not logged
        no_torso = write_trajectory_csv(out / f"{name}_no_torso.csv", sim.recorded)
        _drop_columns(no_torso, {"tau_torso_lift_joint", "q_torso_lift_joint"})
    for label, config, suffix in (("recorded", RECORDED, ""), ("fixed", FIXED, "_no_torso")):
        (out / f"{label}.yaml").write_text(json.dumps(config))  # JSON is YAML
        physid_main(
            ["identify", "--urdf", urdf, "--config", str(out / f"{label}.yaml"),
             "--data", str(out / f"train{suffix}.csv"),
             "--validate", str(out / f"validate{suffix}.csv"),
             "--out", str(out / label), "--overwrite", "--quiet"],
            standalone_mode=False,
        )  # fmt: skip
    print("\nheld-out raw torque error of the arm:")
    for label in ("recorded", "fixed"):
        fit = json.loads((out / label / "params.json").read_text())["fit"]
        print(f"  torso locked at its {label} position: "
              f"{100 * fit['validation']['relative_error']:.2f} %")  # fmt: skip
    print(f"outputs in {out}/")


if __name__ == "__main__":
    main()
