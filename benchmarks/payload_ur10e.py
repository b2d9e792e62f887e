"""``physid payload`` on the UR10e's known-payload pairs (2.805 kg) against the OLS a careful
engineer writes by hand: least squares of the loaded-minus-unloaded torque difference.

For each pair (the same trajectory without and with the load: ``14harm50sec`` and
``15harm50sec``) and each drive-gain set of the dataset README (the repository's own and the
one used in the literature; they differ by up to 49 %):

* physid, as a user runs it: contract CSVs with the motor currents (``i_<joint>``) and a config
  with the ``drive_gains``; ``physid identify`` on ``30sec_12harm``, then ``physid payload
  --data <loaded> --unloaded <unloaded> --link tool0``;
* the OLS written here (no physid code): the runs aligned by the time shift that best lays one
  onto the other's positions, a 10 Hz zero-phase Butterworth on the positions
  (``scoring.butterworth_states``), the difference of the two runs' torques regressed on the
  wrist-3 body's ten Pinocchio regressor columns of the loaded run.

Targets (issue 24 item 6): physid's mass within 10 % of 2.805 kg and at least as close as the
OLS on the difference, with the literature's gain set (the repository's puts every method 12-16 %
low: a gain error, which physid's output quantifies); physid says which gains it used and how
the mass moves with them.

RESULTS (2 shared cores, 2026-11-24)::

    pair           gains                physid        OLS diff  physid closer?
    14harm50sec    repository    2.469 (-12.0)   2.468 (-12.0)  yes
    15harm50sec    repository    2.346 (-16.3)   2.444 (-12.9)  NO
    14harm50sec    literature    3.077 ( +9.7)   3.078 ( +9.7)  yes
    15harm50sec    literature    3.031 ( +8.1)   3.079 ( +9.8)  yes

    mass per +1 % of a joint's gain: shoulder_lift +0.41..0.47 %, elbow +0.34..0.58 %

With the torque delay physid's identification now compensates (9.5 ms on 30sec_12harm, docs/
identify.md §12; ``physid payload`` reads the payload runs as late), 2026-11-26 07:05 UTC::

    14harm50sec    repository    2.471 (-11.9)   2.468 (-12.0)  yes
    15harm50sec    repository    2.345 (-16.4)   2.444 (-12.9)  NO
    14harm50sec    literature    3.079 ( +9.8)   3.078 ( +9.7)  NO (by 1 g)
    15harm50sec    literature    3.029 ( +8.0)   3.079 ( +9.8)  yes

VOID (that 9.5 ms delay was kept only because the torque was read between its samples, its
noise averaged; docs/identify.md section 12). With the motion shifted instead no delay is kept
and the table is the one above (2026-11-26 10:45 UTC: 2.469, 2.346, 3.077, 3.031 kg; target
MET).

Run: python benchmarks/payload_ur10e.py [--datasets PATH] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pinocchio as pin
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from real_cases import DEFAULT_DATASETS, UR10E_GAINS, UR10E_JOINTS, read_ur10e  # noqa: E402
from scoring import Signals, butterworth_states  # noqa: E402

PAYLOAD_KG = 2.805
PAIRS = ("14harm50sec", "15harm50sec")
TRAIN = "ur-20_02_10-30sec_12harm"


def write_currents(path: Path, s: Signals, gains: np.ndarray) -> Path:
    """Contract CSV with the motor currents (the loader returned gain x current)."""
    header = ",".join(["t", *(f"q_{j}" for j in UR10E_JOINTS), *(f"i_{j}" for j in UR10E_JOINTS)])
    np.savetxt(path, np.column_stack([s.t, s.q, s.tau / gains]), delimiter=",", header=header,
               comments="", fmt="%.17g")  # fmt: skip
    return path


def physid(*arguments: str) -> None:
    script = Path(sys.executable).with_name("physid")
    subprocess.run([str(script), *arguments], check=True, capture_output=True)


def align(loaded: Signals, unloaded: Signals) -> tuple[Signals, Signals]:
    """The overlap of the two runs, the unloaded one shifted in time to match the loaded
    positions (grid search over the shift at 10 ms, then 1 ms)."""
    t_l, t_u = loaded.t - loaded.t[0], unloaded.t - unloaded.t[0]
    grid = np.arange(0.0, t_l[-1], 0.05)
    q_l = np.column_stack([np.interp(grid, t_l, c) for c in loaded.q.T])

    def cost(shift: float) -> float:
        inside = (grid + shift >= 0) & (grid + shift <= t_u[-1])
        if inside.sum() < 0.5 * len(grid):
            return np.inf
        q_u = np.column_stack([np.interp(grid[inside] + shift, t_u, c) for c in unloaded.q.T])
        return float(np.mean((q_l[inside] - q_u) ** 2))

    best = min(np.arange(-t_l[-1], t_u[-1], 0.01), key=cost)
    best = min(best + np.arange(-0.01, 0.0105, 0.001), key=cost)
    rows = (t_l + best >= 0) & (t_l + best <= t_u[-1])
    at = t_l[rows] + best
    moved = Signals(loaded.t[rows], np.column_stack([np.interp(at, t_u, c) for c in unloaded.q.T]),
                    np.column_stack([np.interp(at, t_u, c) for c in unloaded.tau.T]))  # fmt: skip
    return Signals(loaded.t[rows], loaded.q[rows], loaded.tau[rows]), moved


def ols_on_difference(model: pin.Model, loaded: Signals, unloaded: Signals) -> float:
    """Payload mass from least squares of tau_loaded - tau_unloaded on the last body's columns."""
    loaded, unloaded = align(loaded, unloaded)
    states = butterworth_states(loaded)
    data = model.createData()
    last = model.njoints - 1
    columns = slice(10 * (last - 1), 10 * last)
    Y = np.stack([pin.computeJointTorqueRegressor(model, data, q, dq, ddq)[:, columns]
                  for q, dq, ddq in zip(states.q, states.dq, states.ddq, strict=True)])  # fmt: skip
    difference = loaded.tau - unloaded.tau
    pi, *_ = np.linalg.lstsq(Y.reshape(-1, 10), difference.reshape(-1), rcond=None)
    return float(pi[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    folder = args.datasets / "ur10e"
    if not folder.is_dir():
        print(f"skipped: no ur10e/ in {args.datasets}")
        return
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    found = {p.stem: p for p in folder.glob("*_data/*.csv")}
    urdf = folder / "ur10e.urdf"
    model = pin.buildModelFromUrdf(str(urdf))
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        tmp = args.keep or Path(temporary)
        tmp.mkdir(parents=True, exist_ok=True)
        for name, gains in UR10E_GAINS.items():
            config = tmp / f"config_{name}.yaml"
            drive_gains = dict(zip(UR10E_JOINTS, map(float, gains), strict=True))
            config.write_text(yaml.safe_dump({"drive_gains": drive_gains}))
            train = write_currents(tmp / f"train_{name}.csv", read_ur10e(found[TRAIN], gains)[0],
                                   gains)  # fmt: skip
            robot = tmp / f"robot_{name}"
            physid("identify", "--urdf", str(urdf), "--data", str(train), "--config", str(config),
                   "--out", str(robot), "--quiet", "--overwrite")  # fmt: skip
            for pair in PAIRS:
                loaded = read_ur10e(found[f"ur-20_02_19_{pair}Load"], gains)[0]
                unloaded = read_ur10e(found[f"ur-20_02_19_{pair}"], gains)[0]
                files = [write_currents(tmp / f"{pair}{tag}_{name}.csv", s, gains)
                         for tag, s in (("Load", loaded), ("", unloaded))]  # fmt: skip
                out = tmp / f"payload_{pair}_{name}"
                physid("payload", "--urdf", str(urdf), "--params", str(robot / "params.json"),
                       "--data", str(files[0]), "--unloaded", str(files[1]), "--link", "tool0",
                       "--config", str(config), "--out", str(out))  # fmt: skip
                result = json.loads((out / "payload.json").read_text())
                ols = ols_on_difference(model, loaded, unloaded)
                rows.append((pair, name, result["mass"], ols, result))
    print(f"\npayload mass [kg], truth {PAYLOAD_KG} kg (error in %)")
    print(f"{'pair':14s} {'gains':11s} {'physid':>15s} {'OLS diff':>15s}  physid closer?")
    met = True
    for pair, name, mass, ols, result in rows:
        error, ols_error = (100 * (m / PAYLOAD_KG - 1) for m in (mass, ols))
        closer = abs(error) <= abs(ols_error) + 1e-9
        if name == "literature":  # the gain set the data support (both pairs within 10 %)
            met &= closer and abs(error) <= 10.0
        print(f"{pair:14s} {name:11s} {mass:7.3f} ({error:+5.1f}) {ols:7.3f} ({ols_error:+5.1f})"
              f"  {'yes' if closer else 'NO'}")  # fmt: skip
        sensitivity = result["mass_sensitivity_to_torque_scale"]
        top = sorted(sensitivity.items(), key=lambda item: -abs(item[1]))[:2]
        print("    " + result["method"][:60] + "...; mass per +1 % gain: "
              + ", ".join(f"{j} {s:+.2f} %" for j, s in top))  # fmt: skip
    print(f"target (literature gains: within 10 % and at least as close as the OLS on the "
          f"difference): {'MET' if met else 'NOT MET'}")  # fmt: skip


if __name__ == "__main__":
    main()
