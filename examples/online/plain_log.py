"""Online payload estimation from a plain log: positions and torques only, joint friction from
an offline params.json (issue 11; docs/online.md "Python API" and "Limitations").

    OPENBLAS_NUM_THREADS=1 python examples/online/plain_log.py [--out online_plain_log]

Simulates the 7-axis arm with tanh Coulomb + viscous joint friction and a 2 kg payload step,
writes ``plain.csv`` (t, q_*, tau_* — no velocities) and a ``params.json`` holding the joints'
friction as ``physid identify`` reports it, then runs ``physid online`` on them twice — with the
friction model and without — and prints the mass after the step against the truth. Without
the friction model the mass is wrong and the run says so: status suspect, exit code 3.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from physid.cli import main as physid_main
from physid.files.io import table_csv_text
from physid.sim.payload_arm import (
    ARM_URDF,
    PAYLOAD_JOINT,
    ArmFriction,
    PayloadProfile,
    simulate_payload_arm,
)

VISCOUS = np.array([2.0, 2.5, 1.5, 1.2, 0.8, 0.6, 0.4])  # N m s/rad
COULOMB = np.array([4.0, 5.0, 3.0, 2.5, 1.5, 1.0, 0.8])  # N m
STEP = PayloadProfile(hold_s=0.6, sine_s=0.0, square_s=0.0, plateau_s=2.5, step_s=3.0,
                      offset_kg=2.5, step_to_kg=4.5)  # fmt: skip
SETTINGS = (
    "calibration_s: 0.5\nacceleration_window: 61\n"
    "process_noise: {alpha: 2.0, d: 0.05, s: 0.01, t: 0.005}\n"
    "gating: {probability: 0.9999, release_after_s: 0.05}\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("online_plain_log"))
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    rec = simulate_payload_arm(
        np.random.default_rng(0), STEP, friction=ArmFriction(VISCOUS, COULOMB, 0.005)
    )
    columns = {"t": rec.t}
    columns |= {f"q_{j}": rec.q[:, k] for k, j in enumerate(rec.joint_names)}
    columns |= {f"tau_{j}": rec.tau[:, k] for k, j in enumerate(rec.joint_names)}
    (out / "plain.csv").write_text(table_csv_text(columns))
    joints = {
        j: {"viscous": VISCOUS[k], "coulomb": COULOMB[k], "coulomb_deadband": 0.005}
        for k, j in enumerate(rec.joint_names)
    }
    document = {"format": "physid.params/1", "bodies": {}, "joints": joints}
    (out / "params.json").write_text(json.dumps(document, indent=1))
    (out / "with_friction.yaml").write_text(SETTINGS + "nominal_params: params.json\n")
    (out / "without_friction.yaml").write_text(SETTINGS)
    window = f"{STEP.step_time_s + 1.0}:"
    for name in ("with_friction", "without_friction"):
        args = ["online", "--urdf", str(ARM_URDF), "--data", str(out / "plain.csv"),
                "--body", PAYLOAD_JOINT, "--config", str(out / f"{name}.yaml"),
                "--out", str(out / name), "--summary-window", window, "--quiet"]  # fmt: skip
        print("physid " + " ".join(args))
        try:
            physid_main(args, standalone_mode=False)
        except SystemExit as stop:  # exit 3: outputs written, status suspect (without friction)
            if stop.code != 3:
                raise
        summary = json.loads((out / name / "summary.json").read_text())
        mass = summary["bodies"][PAYLOAD_JOINT]["window"]["median"]["mass"]
        print(
            f"  {name}: mass {mass:.3f} kg after the step (truth {rec.body_mass[-1]:.3f} kg), "
            f"{100 * summary['gated_fraction']:.1f} % gated, velocities {summary['velocities']}, "
            f"status {summary['status']}"
        )


if __name__ == "__main__":
    main()
