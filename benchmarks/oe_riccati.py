"""Paper B: cost of one optimal-estimation iteration against the horizon length, and the
parametrized Riccati step (eqs. 20-31) against sparse direct solves of the same KKT system
(eq. 21) by SuperLU, in the same run.

Kinova arm (6 joints, nx = 12), one estimated body (10 parameters), 1 ms nodes as in the paper's
Go1 experiment. Direct solves of the KKT matrix ``[[H, G^T], [G, 0]]`` of
:func:`physid.oe.kkt.kkt_system`:

- ``spsolve``: ``scipy.sparse.linalg.spsolve`` as called by default (SuperLU, COLAMD column
  ordering, partial pivoting). Its fill grows quadratically with the horizon; it runs only
  while the memory its factors would need (extrapolated from the previous horizon) stays
  below ``--max-lu-gb``;
- ``splu-sym``: ``splu`` with the fill-reducing minimum-degree ordering of ``A^T + A`` and
  ``SymmetricMode`` (diagonal pivots preferred): linear fill;
- ``splu-stage``: the unknowns reordered node by node (``dx_k, dw_k, lambda_k``, then
  ``dx_N`` and ``theta``), natural ordering, ``SymmetricMode``: the banded structure the
  Riccati recursion exploits, handed to a general sparse LU.

Times are CPU seconds of this process (``time.process_time``; BLAS limited to one thread):
the machine is shared, so wall-clock times swing with the load, CPU times do not. The memory
of an LU is ``12 bytes x nnz(L + U)``. Prints per horizon the linearization and Riccati
times, each direct solve's time, its ratio to the Riccati step and its memory, the largest
difference between the steps, and the slope of (linearization + Riccati) against the horizon.

    nice -n 10 python benchmarks/oe_riccati.py [--nodes 500 1000 2000 4000 8000 14000]

RESULTS: see docs/oe.md ("Speed").
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # small dense matrices: BLAS threads only contend

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
from scipy.sparse.linalg import splu  # noqa: E402

from physid.oe.build import initial_guess, make_problem  # noqa: E402
from physid.oe.kkt import kkt_system  # noqa: E402
from physid.oe.measurements import Measurements, NoiseStd  # noqa: E402
from physid.oe.riccati import solve_step  # noqa: E402
from physid.sim.oe_arm import simulate_arm  # noqa: E402
from physid.sim.oe_robots import KINOVA, load_model  # noqa: E402

BODY = "j2s6s200_joint_6"
SOLVERS = ("spsolve", "splu-sym", "splu-stage")


def stage_order(N: int, nx: int, nt: int) -> np.ndarray:
    """Permutation of the KKT unknowns of :func:`kkt_system` into node order."""
    n_x, n_w = (N + 1) * nx, N * nx
    n_primal = n_x + n_w + nt
    k = np.arange(N)[:, None] * nx + np.arange(nx)[None, :]
    per_node = np.hstack([k, n_x + k, n_primal + k])  # dx_k, dw_k, lambda_k
    return np.r_[per_node.ravel(), N * nx + np.arange(nx), n_x + n_w + np.arange(nt)]


def direct_solve(name: str, K, rhs: np.ndarray, order: np.ndarray):  # noqa: ANN001, ANN201
    """``(solution, nnz(L + U))`` of one direct solver of the KKT system."""
    if name == "spsolve":  # what scipy.sparse.linalg.spsolve does with its defaults
        lu = splu(K, permc_spec="COLAMD")
        return lu.solve(rhs), lu.L.nnz + lu.U.nnz
    options = {"SymmetricMode": True}
    if name == "splu-sym":
        lu = splu(K, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options=options)
        return lu.solve(rhs), lu.L.nnz + lu.U.nnz
    Kp = K[order][:, order].tocsc()
    lu = splu(Kp, permc_spec="NATURAL", diag_pivot_thresh=0.0, options=options)
    z = np.empty_like(rhs)
    z[order] = lu.solve(rhs[order])
    return z, lu.L.nnz + lu.U.nnz


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--nodes", type=int, nargs="+", default=[500, 1000, 2000, 4000, 8000, 14000]
    )
    parser.add_argument("--dt", type=float, default=1e-3)
    parser.add_argument(
        "--max-lu-gb",
        type=float,
        default=4.0,
        help="skip a direct solve whose factors would exceed this (extrapolated)",
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
    print(f"{'nodes':>6} {'linearize':>9} {'riccati':>8}", end="")
    for name in SOLVERS:
        print(f" | {name:>10} {'ratio':>7} {'LU GB':>7}", end="")
    print(f" | {'max |diff|':>10}")
    last: dict[str, tuple[int, int]] = {}  # solver -> (nodes, nnz) of its last run
    per_iteration = []
    for n in sorted(args.nodes):
        meas = Measurements(q=rec.q_meas[: n + 1], v=rec.v_meas[: n + 1])
        problem = make_problem(
            nominal, [BODY], "exp_eig", args.dt, rec.tau[:n], meas, NoiseStd(), theta_prior_std=1.0
        )
        xs, ws = initial_guess(problem)
        theta = problem.dynamics.nominal_theta()
        t0 = time.process_time()
        lin = problem.linearize(xs, ws, theta)
        t1 = time.process_time()
        step = solve_step(lin)
        t2 = time.process_time()
        per_iteration.append((n, t2 - t0))
        ref = np.r_[step.dx.ravel(), step.dw.ravel(), step.dtheta]
        K, rhs = kkt_system(lin)
        order = stage_order(n, lin.lw.shape[1], lin.lt.shape[0])
        print(f"{n:6d} {t1 - t0:8.3f}s {t2 - t1:7.3f}s", end="", flush=True)
        diff = 0.0
        for name in SOLVERS:
            if name in last:  # fill of COLAMD + pivoting grows ~quadratically, the others ~n
                n0, nnz0 = last[name]
                power = 2.0 if name == "spsolve" else 1.0
                if 12 * nnz0 * (n / n0) ** power > args.max_lu_gb * 1e9:
                    print(f" | {'skipped':>10} {'-':>7} {'-':>7}", end="", flush=True)
                    continue
            t3 = time.process_time()
            z, nnz = direct_solve(name, K, rhs, order)
            t4 = time.process_time()
            last[name] = (n, nnz)
            diff = max(diff, float(np.abs(z[: ref.size] - ref).max()))
            ratio = (t4 - t3) / (t2 - t1)
            print(f" | {t4 - t3:9.3f}s {ratio:6.1f}x {12e-9 * nnz:7.3f}", end="", flush=True)
        print(f" | {diff:10.2e}", flush=True)
    n_arr, t_arr = np.array(per_iteration, float).T
    slope, intercept = np.polyfit(n_arr, t_arr, 1)
    worst = np.abs(t_arr - (slope * n_arr + intercept)).max() / t_arr.max()
    print(
        f"linearization + Riccati step: {1e6 * slope:.1f} us per node (+ {intercept:.3f} s), "
        f"largest departure from the line {100 * worst:.1f} % of the longest"
    )


if __name__ == "__main__":
    main()
