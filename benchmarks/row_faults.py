"""Real logs with the row faults real loggers make: physid (no config) against plain OLS.

Each case of :mod:`real_cases` (a real arm, a stated train / held-out split) is identified on
its clean training file and on the same file with one kind of fault written into it:

* ``zero row``: one row of positions read as zero (a dropped encoder word);
* ``spike``: one torque sample x 1000 on the most loaded joint (a flipped bit, a unit slip);
* ``duplicates``: 1 % of the rows written twice (a logger that resends);
* ``gap``: 0.5 s of rows missing from the middle (a logger that paused);
* ``wrapped``: the vertical base joint shifted by 3 rad and logged modulo one turn, in the
  training and the held-out file (ROS ``JointState`` of a continuous joint; the torques do not
  change: gravity is along that axis);
* ``all``: every fault above at once.

Printed per case and fault: the held-out relative error on the raw torque (one independent
scorer for every model: :mod:`scoring`, no physid code) of physid as a user runs it, of physid
with ``corrupt_samples: keep`` (no repair: what the fault does to the fit), of a plain OLS
fitted on the faulted file (:mod:`scoring`; a recording whose stamps repeat or jump is not
defined for its fixed filter: "-"), and the moving mass. Clean rows for reference.

Run: python benchmarks/row_faults.py [--only kuka_2_1,ur10e_30s,xmate_1_3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from real_cases import DEFAULT_DATASETS, RealCase, corpus, write_contract_csv  # noqa: E402
from scoring import (  # noqa: E402
    Signals,
    butterworth_states,
    ols_fit,
    ols_regressor,
    params_error,
    relative_error,
)

CASES = ("kuka_2_1", "ur10e_30s", "xmate_1_3")
FAULTS = ("clean", "zero row", "spike", "duplicates", "gap", "wrapped", "all")


def _faulted(s: Signals, fault: str, rng: np.random.Generator) -> Signals:
    """The recording ``s`` with ``fault`` written into it (module docstring)."""
    t, q, tau = s.t.copy(), s.q.copy(), s.tau.copy()
    n = len(t)
    faults = FAULTS[1:-1] if fault == "all" else (fault,)
    if "zero row" in faults:
        q[int(0.3 * n)] = 0.0
    if "spike" in faults:
        joint = int(np.argmax(np.std(tau, axis=0)))
        tau[int(0.6 * n), joint] *= 1000.0
    if "wrapped" in faults:
        q[:, 0] = _wrapped(q[:, 0])
    rows = np.arange(n)
    if "gap" in faults:
        middle = t[0] + 0.5 * (t[-1] - t[0])
        rows = rows[(t[rows] < middle) | (t[rows] > middle + 0.5)]
    if "duplicates" in faults:
        again = rng.choice(rows.size, size=max(1, rows.size // 100), replace=False)
        rows = np.sort(np.r_[rows, rows[again]])
    return Signals(t[rows], q[rows], tau[rows])


def _wrapped(angle: np.ndarray) -> np.ndarray:
    return np.angle(np.exp(1j * (angle + 3.0)))


def _shifted(s: Signals) -> Signals:
    q = s.q.copy()
    q[:, 0] = q[:, 0] + 3.0
    return Signals(s.t, q, s.tau)


def _physid(case: RealCase, train: Path, held: list[Path], out: Path, keep: bool) -> dict | None:
    script = Path(sys.executable).with_name("physid")
    command = [str(script), "identify", "--urdf", str(case.urdf), "--data", str(train),
               "--out", str(out), "--quiet", "--overwrite"]  # fmt: skip
    for path in held:
        command += ["--validate", str(path)]
    if keep:
        config = out.with_suffix(".yaml")
        config.write_text("corrupt_samples: keep\n", encoding="utf-8")
        command += ["--config", str(config)]
    done = subprocess.run(command, capture_output=True, text=True)
    params = out / "params.json"
    if done.returncode not in (0, 3) or not params.is_file():
        return {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:90]}
    return json.loads(params.read_text(encoding="utf-8"))


def _ols(model: pin.Model, case: RealCase, train: Signals, held_states: list) -> float | None:
    steps = np.diff(train.t)
    if np.any(steps <= 0) or np.max(steps) > 10 * np.median(steps):
        return None  # the scorer's fixed filter needs increasing stamps without gaps
    theta = ols_fit(model, [butterworth_states(train)], case.armature, case.wrist)
    predictions = [(ols_regressor(model, s, case.armature, case.wrist) @ theta)
                   .reshape(-1, model.nv) for s in held_states]  # fmt: skip
    return relative_error(held_states, predictions)


def _pct(x: float | None) -> str:
    return "     -" if x is None else f"{100 * x:6.2f}"


def run_case(case: RealCase, folder: Path, rng: np.random.Generator) -> None:
    model = pin.buildModelFromUrdf(str(case.urdf))
    train = case.train[0]
    print(f"\n{case.name}: held-out relative error [%] on raw torque (independent scorer)")
    print(f"{'fault':12s} {'physid':>7s} {'keep':>7s} {'OLS':>7s} {'mass':>7s} {'keep':>7s}  "
          "what physid said")  # fmt: skip
    for fault in FAULTS:
        wrapped = fault in ("wrapped", "all")
        held = [_shifted(s) for s in case.validate] if wrapped else case.validate
        held_paths = [write_contract_csv(folder / f"held_{fault}_{k}.csv", case.joints, s)
                      for k, s in enumerate(held)]  # fmt: skip
        held_states = [butterworth_states(s) for s in held]
        faulted = train if fault == "clean" else _faulted(train, fault, rng)
        path = write_contract_csv(folder / f"train_{fault}.csv", case.joints, faulted)
        documents = [_physid(case, path, held_paths, folder / f"out_{fault}_{k}", keep)
                     for k, keep in enumerate((False, True))]  # fmt: skip
        errors, masses = [], []
        for document in documents:
            if "error" in document:
                errors.append(None)
                masses.append(None)
                continue
            errors.append(params_error(model, document, held, held_states))
            masses.append(sum(float(b["mass"]) for b in document["bodies"].values()))
        ols = _ols(model, case, faulted, held_states)
        said = documents[0].get("error") or "; ".join(
            w.split(": ", 1)[1][:70] for w in documents[0]["provenance"]["warnings_from_data"]
            if "time base" not in w
        )  # fmt: skip
        mass = ["      -" if m is None else f"{m:7.2f}" for m in masses]
        print(f"{fault:12s} {_pct(errors[0])} {_pct(errors[1])} {_pct(ols)} {mass[0]} {mass[1]}"
              f"  {said}", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    parser.add_argument("--only", default=",".join(CASES), help="comma-separated case labels")
    parser.add_argument("--keep", type=Path, default=None, help="keep the files here")
    args = parser.parse_args()
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as temporary:
        tmp = args.keep or Path(temporary)
        tmp.mkdir(parents=True, exist_ok=True)
        wanted = args.only.split(",")
        for label, build in corpus(args.datasets, tmp):
            if label in wanted:
                folder = tmp / label
                folder.mkdir(exist_ok=True)
                run_case(build(), folder, rng)
    print(f"\ntotal wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
