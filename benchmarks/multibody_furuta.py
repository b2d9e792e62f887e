"""Synthetic Furuta pendulum (paper A §4.7, Appendix G.3): simulate the release at h = 1e-4 s
(compliance 1e-7, damping 0.02 s), add 0.001 rad angle noise, identify J_Azz, J_Byy, b1, b2 at
h = 1e-2 s from Table 1's initial values. Prints estimates vs truth, iterations and time.

The identification model's compliance defaults to 1e-5 (Table 1 range; the paper reports the
method breaking for stiffer hinges, Figs. 4 and 6). Estimates at h = 1e-2 are shadow parameters
(§4.9): biased against the h = 1e-4 truth by more than their linearised std; use --h 2e-3 to see
them approach the truth.

Usage: python benchmarks/multibody_furuta.py [--duration 5] [--h 1e-2] [--compliance-id 1e-5]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from physid.multibody import Recording, identify, load_model, simulate, state_from_joints

URDF = Path(__file__).resolve().parents[1] / "examples" / "multibody" / "furuta.urdf"
NAMES = ["hinge1.Izz", "hinge2.Iyy", "hinge1.viscous", "hinge2.viscous"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--h-sim", type=float, default=1e-4)
    ap.add_argument("--h", type=float, default=1e-2)
    ap.add_argument("--kappa", type=float, default=100.0)
    ap.add_argument("--compliance-id", type=float, default=1e-5)
    ap.add_argument("--iterations", type=int, default=20)
    args = ap.parse_args()
    soft = {"compliance_linear": 1e-7, "compliance_rotational": 1e-7, "damping": 0.02}
    truth_cfg = {
        "gravity": [0, 0, -9.82],
        "defaults": soft,
        "joints": {"hinge1": {"viscous": 1e-2, "shaft_inertia": 1e-4}, "hinge2": {"viscous": 1e-3}},
    }
    truth = load_model(URDF, truth_cfg)
    q0, v0 = state_from_joints(truth, [0.0, np.pi - 0.03])
    n = int(round(args.duration / args.h_sim))
    t0 = time.perf_counter()
    sim = simulate(truth, args.h_sim, n, q0, v0)
    print(f"simulated {n} steps of h = {args.h_sim} s in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(0)
    every = max(1, int(round(1e-3 / args.h_sim)))  # 1 kHz samples like the rig
    angles = sim.angles[::every] + 1e-3 * rng.normal(size=sim.angles[::every].shape)
    rec = Recording(sim.t[::every], angles, np.zeros_like(angles), "synthetic furuta")
    comp = args.compliance_id
    start_cfg = {
        "gravity": [0, 0, -9.82],
        "defaults": {"compliance_linear": comp, "compliance_rotational": comp, "damping": 0.02},
        "joints": {"hinge1": {"viscous": 1e-4, "shaft_inertia": 1e-4}, "hinge2": {"viscous": 1e-4}},
        "bodies": {"hinge1": {"Izz": 0.01}, "hinge2": {"Iyy": 0.01}},
        "estimate": NAMES,
    }
    model = load_model(URDF, start_cfg)
    fit = identify(model, [rec], h=args.h, kappa=args.kappa, max_iterations=args.iterations)
    print(f"status {fit.status}, {fit.iterations} iterations, {fit.seconds:.1f} s")
    print(f"cost per step {fit.cost_per_step:.3e}  history {np.round(fit.cost_history, 6)}")
    for name, value, std, start in zip(NAMES, fit.values, fit.std, fit.initial_values, strict=True):
        true = truth.values[truth.index(name)]
        print(
            f"{name:16s} truth {true:.5g}  start {start:.3g}  estimate {value:.5g} (+- {std:.2g})"
            f"  rel.err {(value - true) / true:+.1%}  z {(value - true) / std:+.1f}"
        )
    print("singular values (scaled):", np.array2string(fit.singular_values, precision=3))


if __name__ == "__main__":
    main()
