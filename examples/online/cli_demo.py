"""Write simulated recordings in the trajectory contract and replay them with ``physid online``.

    OPENBLAS_NUM_THREADS=1 python examples/online/cli_demo.py [--out online_cli_demo]

Creates ``arm.csv`` (7-DoF arm, payload put on at 1 s then stepped) and ``humanoid.csv``
(floating base: ``base_*`` and ``f_/m_<sole>_*`` columns), then runs, for each, the command it
prints, e.g.::

    physid online --urdf .../arm7.urdf --data arm.csv --body arm_joint_7 \\
        --config examples/online/payload_arm.yaml --out arm_estimates
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

import numpy as np

from physid.cli import main as physid_main
from physid.files.io import table_csv_text
from physid.online.columns import OnlineSignals, signals_table
from physid.sim.legged import (
    CONTACT_FRAMES,
    HUMANOID_URDF,
    TORSO_JOINT,
    SteppingScenario,
    load_humanoid,
    simulate_stepping,
)
from physid.sim.payload_arm import (
    ARM_URDF,
    PAYLOAD_JOINT,
    PayloadProfile,
    load_arm,
    simulate_payload_arm,
)

HERE = Path(__file__).resolve().parent


def write_csv(path: Path, columns: dict[str, np.ndarray]) -> None:
    path.write_text(table_csv_text(columns, fmt="%.9g"))


def run(args: list[str]) -> None:
    print("$ physid " + " ".join(shlex.quote(a) for a in args))
    physid_main(args, standalone_mode=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("online_cli_demo"))
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)

    profile = PayloadProfile(hold_s=1.0, sine_s=4.0, square_s=4.0, plateau_s=2.0, step_s=3.0)
    arm = simulate_payload_arm(rng, profile)
    arm_columns = signals_table(OnlineSignals(arm.t, arm.q, arm.dq, arm.tau, None), load_arm())
    write_csv(out / "arm.csv", arm_columns)
    run(
        [
            "online",
            "--urdf",
            str(ARM_URDF),
            "--data",
            str(out / "arm.csv"),
            "--body",
            PAYLOAD_JOINT,
            "--config",
            str(HERE / "payload_arm.yaml"),
            "--out",
            str(out / "arm_estimates"),
        ]
    )

    legged = simulate_stepping(rng, SteppingScenario(duration_s=8.0, payload_time_s=4.0))
    signals = OnlineSignals(legged.t, legged.q, legged.dq, legged.tau, legged.wrenches)
    write_csv(out / "humanoid.csv", signals_table(signals, load_humanoid(), CONTACT_FRAMES))
    run(
        [
            "online",
            "--urdf",
            str(HUMANOID_URDF),
            "--data",
            str(out / "humanoid.csv"),
            "--body",
            TORSO_JOINT,
            "--config",
            str(HERE / "stepping.yaml"),
            "--out",
            str(out / "humanoid_estimates"),
        ]
    )
    print(f"recordings and results in {out}/")


if __name__ == "__main__":
    main()
