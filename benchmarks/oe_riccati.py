"""Paper B: cost of one optimal-estimation iteration against the horizon length, and the
parametrized Riccati step (eqs. 20-31) against a general sparse direct solve of the same KKT
system (eq. 21) with ``scipy.sparse.linalg.spsolve`` (SuperLU), in the same run.

Kinova arm (6 joints, nx = 12), one estimated body (10 parameters), 1 ms nodes as in the paper's
Go1 experiment. Prints per horizon: linearization time, Riccati step time, spsolve time, their
ratio and the largest difference between the two steps.

    python benchmarks/oe_riccati.py [--nodes 500 1000 2000 4000 14000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pinocchio as pin

from physid.oe.build import initial_guess, make_problem
from physid.oe.kkt import solve_kkt
from physid.oe.measurements import Measurements, NoiseStd
from physid.oe.riccati import solve_step
from physid.sim.oe_arm import simulate_arm
from physid.sim.oe_robots import KINOVA, load_model

BODY = "j2s6s200_joint_6"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[500, 1000, 2000, 4000, 14000])
    parser.add_argument("--dt", type=float, default=1e-3)
    parser.add_argument(
        "--spsolve-max-nodes",
        type=int,
        default=4000,
        help="skip spsolve above this horizon (SuperLU fill-in from the dense parameter "
        "columns: 115 s at 4000 nodes and over 15 GB of memory at 14000)",
    )
    args = parser.parse_args()
    nominal = load_model(KINOVA)
    true = nominal.copy()
    j = true.getJointId(BODY)
    true.inertias[j] = true.inertias[j] + pin.Inertia(
        0.8, np.array([0.02, -0.03, 0.08]), np.diag([2e-3, 2.5e-3, 1.5e-3])
    )
    n_max = max(args.nodes)
    rec = simulate_arm(
        true, nominal, np.random.default_rng(0), duration=n_max * args.dt, dt=args.dt
    )
    print(
        f"{'nodes':>7} {'linearize':>10} {'riccati':>9} {'spsolve':>9} {'ratio':>7} "
        f"{'us/node (ric)':>14} {'max |diff|':>11}"
    )
    for n in args.nodes:
        meas = Measurements(q=rec.q_meas[: n + 1], v=rec.v_meas[: n + 1])
        problem = make_problem(
            nominal, [BODY], "exp_eig", args.dt, rec.tau[:n], meas, NoiseStd(), theta_prior_std=1.0
        )
        xs, ws = initial_guess(problem)
        theta = problem.dynamics.nominal_theta()
        t0 = time.perf_counter()
        lin = problem.linearize(xs, ws, theta)
        t1 = time.perf_counter()
        step = solve_step(lin)
        t2 = time.perf_counter()
        if n > args.spsolve_max_nodes:
            print(
                f"{n:7d} {t1 - t0:9.3f}s {t2 - t1:8.3f}s {'skipped':>9} {'-':>7} "
                f"{1e6 * (t2 - t1) / n:14.1f}",
                flush=True,
            )
            continue
        dx, dw, dtheta = solve_kkt(lin)
        t3 = time.perf_counter()
        diff = max(
            np.abs(step.dx - dx).max(),
            np.abs(step.dw - dw).max(),
            np.abs(step.dtheta - dtheta).max(),
        )
        print(
            f"{n:7d} {t1 - t0:9.3f}s {t2 - t1:8.3f}s {t3 - t2:8.3f}s {(t3 - t2) / (t2 - t1):6.1f}x "
            f"{1e6 * (t2 - t1) / n:14.1f} {diff:11.2e}",
            flush=True,
        )


if __name__ == "__main__":
    main()
