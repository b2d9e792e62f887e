"""Write ``go1_walk.csv``: the input of the README's ``physid oe`` command, made by physid's own
simulator (a Go1 from example-robot-data with a 3 kg payload on its torso, walking 0.8 s at
5 ms nodes: physid.sim.oe_floating.simulate_go1, seed 2, the recording of
tests/test_oe_cli_floating.py).

    python examples/oe/make_go1_walk.py [--out examples/oe/go1_walk.csv]

Columns: the trajectory contract plus the floating-base, IMU and contact_<foot> columns of
docs/oe.md. The true torso mass (URDF 5.561 kg + 3 kg) is printed; ``physid oe`` should find it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pinocchio as pin

from physid.files.io import table_csv_text
from physid.sim.oe_floating import contract_columns, simulate_go1
from physid.sim.oe_robots import GO1, load_model

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "go1_walk.csv")
    out = parser.parse_args().out
    payload = pin.Inertia(3.0, np.array([0.02, 0.0, 0.05]), np.diag([0.02, 0.04, 0.05]))
    nominal = load_model(GO1, floating=True)
    true = nominal.copy()
    true.inertias[1] = nominal.inertias[1] + payload
    rec = simulate_go1(true, nominal, np.random.default_rng(2), duration=0.8, dt=0.005)
    out.write_text(table_csv_text(contract_columns(nominal, rec), fmt="%.9g"))
    print(f"wrote {out}: torso mass {true.inertias[1].mass:.4f} kg "
          f"(URDF {nominal.inertias[1].mass:.4f} kg + 3 kg payload)")  # fmt: skip


if __name__ == "__main__":
    main()
