"""How often each check of ``physid identify`` speaks when nothing is wrong.

Correct-model simulations of the demo arm (``physid.sim.arm``: the URDF is the truth, 18-bit
encoders, 0.3 N m torque noise, closed-loop Fourier excitation drawn per seed), identified with
no config and validated on a second run of the same length; every finding of severity
``caution`` or worse is counted per code, and every status that is not ``ok``. A check that
claims a defect (a suspect code, a model that misses a joint, a drift, a delay, implausible
masses, worse than the URDF) must speak on at most 1 % of such runs.

Findings that describe the estimate rather than accuse the data (``ID301`` the prior decides
some quantities, ``ID305`` a still joint, ``ID306`` joint terms the motion cannot separate) are
counted too, and reported apart: on a short log they are true statements.

Run: python benchmarks/false_findings.py [--runs 100] [--seconds 3,20] [--rate 500]
[--json out.json]; each run prints one line, the table comes last.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402

from physid.files.config import parse_config  # noqa: E402
from physid.findings import Severity  # noqa: E402
from physid.offline.pipeline import identify  # noqa: E402
from physid.sim.arm import arm6_model, simulate_random_excitation, true_parameters  # noqa: E402

# codes that state a fact about the estimate, not an accusation of the data or the model
DESCRIPTIVE = {"ID301", "ID302", "ID305", "ID306", "ID307", "ID202", "ID603", "ID611"}


def one_run(seconds: float, rate_hz: float, seed: int) -> tuple[str, list[str], float]:
    """(status, codes of the caution-or-worse findings, CPU s) of one correct-model run."""
    started = time.process_time()
    rng = np.random.default_rng(seed)
    model = arm6_model()
    theta = true_parameters(model, rng)
    # the demo's tracking gains (kd dt = 0.08 at 500 Hz), scaled to the controller's rate: at a
    # fixed kd a 100 Hz controller rings at its Nyquist rate, a torque no model explains
    kd = 0.08 * rate_hz
    gains = {"kp": kd**2 / 4.0, "kd": kd}
    train = simulate_random_excitation(model, theta, duration_s=seconds, sample_rate_hz=rate_hz,
                                       rng=rng, **gains)  # fmt: skip
    held = simulate_random_excitation(model, theta, duration_s=seconds, sample_rate_hz=rate_hz,
                                      rng=rng, **gains)  # fmt: skip
    result = identify(model, [train.recorded], parse_config({}), validation=[held.recorded])
    codes = sorted({f.code for f in result.findings if f.severity.at_least(Severity.CAUTION)})
    return str(result.status), codes, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100, help="seeds per condition")
    parser.add_argument("--seconds", default="3,20", help="log lengths [s], comma-separated")
    parser.add_argument("--rate", type=float, default=500.0, help="sample rate [Hz]")
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--json", default=None, help="write the counts here")
    args = parser.parse_args()
    table = {}
    for seconds in (float(s) for s in args.seconds.split(",")):
        statuses, codes, cpu = collections.Counter(), collections.Counter(), 0.0
        for k in range(args.runs):
            status, found, used = one_run(seconds, args.rate, args.first_seed + k)
            statuses[status] += 1
            codes.update(found)
            cpu += used
            print(f"{seconds:g} s seed {args.first_seed + k}: {status} {' '.join(found)} "
                  f"({used:.1f} CPU s)", flush=True)  # fmt: skip
        table[seconds] = {"runs": args.runs, "statuses": dict(statuses), "codes": dict(codes),
                          "cpu_s": cpu}  # fmt: skip
    print(f"\ncorrect-model simulations of the demo arm at {args.rate:g} Hz, no config:")
    print(f"{'code':8s} " + " ".join(f"{s:>10g} s" for s in table))
    every = sorted({c for row in table.values() for c in row["codes"]})
    for code in every:
        rates = " ".join(f"{100 * row['codes'].get(code, 0) / row['runs']:>10.1f} %"
                         for row in table.values())  # fmt: skip
        kind = " (describes the estimate)" if code in DESCRIPTIVE else ""
        print(f"{code:8s} {rates}{kind}")
    for seconds, row in table.items():
        print(f"{seconds:g} s: statuses {row['statuses']}, {row['cpu_s'] / row['runs']:.1f} CPU s "
              "per run")  # fmt: skip
    if args.json:
        with open(args.json, "w") as file:
            json.dump(table, file, indent=1)


if __name__ == "__main__":
    sys.exit(main())
