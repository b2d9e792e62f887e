"""Paper B Table I, reduced: local convergence of single, feasibility-driven and multiple shooting
from random initial guesses on an arm (Kinova), a quadrotor (Hector, thrust model) and a
quadruped (Go1 walking, contact phases and impulses), all simulated with Pinocchio (known truth).

Every trial draws an initial guess of every estimated body 70 % off: mass, each second moment
of mass and the first moment scaled by a random factor 1 +- 0.7 (sign random), the principal
axes rotated by up to 0.7 rad (exp-eig chart coordinates, so every guess is physically
consistent). No parameter prior (as paper B section VI-A). Columns as in the paper: iterations,
final cost [1e-1] (cost per node, the paper's horizon lengths differ from ours) and the l_inf
error of the estimated trajectory against the truth; plus the relative mass error and how
many trials converged. 'X' marks a rollout with no converged trial.

    nice -n 10 python benchmarks/oe_table1.py [--trials 3] [--max-iterations 100]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pinocchio as pin

from physid.oe import NoiseStd, OEOptions, make_problem, solve, state
from physid.oe.build import initial_guess
from physid.oe.charts import pis_and_jacobians, theta_from_pis
from physid.sim.oe_arm import simulate_arm
from physid.sim.oe_floating import hector_flight, simulate_go1
from physid.sim.oe_robots import GO1, KINOVA, load_model

ROLLOUTS = ("single", "feasible", "multiple")


def kinova(rng, chart):
    nominal = load_model(KINOVA)
    true = nominal.copy()
    j = true.getJointId("j2s6s200_joint_6")
    true.inertias[j] += pin.Inertia(
        0.8, np.array([0.02, -0.03, 0.08]), np.diag([2e-3, 2.5e-3, 1.5e-3])
    )
    rec = simulate_arm(true, nominal, rng, duration=1.0, dt=0.01)
    from physid.oe import Measurements

    problem = make_problem(
        nominal,
        ["j2s6s200_joint_5", "j2s6s200_joint_6"],
        "exp_eig",
        rec.dt,
        rec.tau,
        Measurements(q=rec.q_meas, v=rec.v_meas),
        NoiseStd(),
    )
    return problem, np.c_[rec.q, rec.v], true


def quadrotor(rng, chart):
    flight = hector_flight(rng, duration=2.0, dt=0.01)
    rec = flight.recording
    problem = make_problem(
        flight.nominal, ["root_joint"], "exp_eig", rec.dt, rec.u, rec.measurements, NoiseStd(),
        actuation=flight.actuation, x0_prior=np.r_[rec.x[0, :7], np.zeros(6)],
    )  # fmt: skip
    return problem, rec.x, flight.true


def quadruped(rng, chart):
    nominal = load_model(GO1, floating=True)
    true = nominal.copy()
    true.inertias[1] += pin.Inertia(7.2, np.array([-0.03, 0.01, 0.07]), np.diag([0.035, 0.09, 0.1]))
    rec = simulate_go1(true, nominal, rng, duration=1.0, dt=0.005)
    problem = make_problem(
        nominal,
        ["root_joint"],
        "exp_eig",
        rec.dt,
        rec.u,
        rec.measurements,
        NoiseStd(),
        x0_prior=np.r_[rec.x[0, : nominal.nq], np.zeros(nominal.nv)],
        contact_frames=rec.contact_frames,
        contact_flags=rec.contact_flags,
    )
    return problem, rec.x, true


SYSTEMS = {"Kinova": kinova, "Quadrotor": quadrotor, "Go1": quadruped}


def perturbed(theta: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Every body 70 % off (exp-eig coordinates, see the module docstring)."""
    out = theta.reshape(-1, 10).copy()
    for block in out:
        factor = lambda n: 1.0 + 0.7 * rng.choice([-1.0, 1.0], n)  # noqa: E731
        block[0] += np.log(factor(1))[0]
        block[1:4] *= factor(3)
        block[4:7] = pin.log3(pin.exp3(block[4:7]) @ pin.exp3(0.7 * rng.uniform(-1, 1, 3)))
        block[7:10] += np.log(factor(3))
    return out.reshape(-1)


def trial(problem, x_true, true, rollout, theta0, max_iterations):
    xs, ws = initial_guess(problem)
    result = solve(
        problem, xs, ws, theta0, OEOptions(rollout=rollout, max_iterations=max_iterations)
    )
    model = problem.dynamics.model
    err = max(
        np.abs(state.difference(model, a, b)).max() for a, b in zip(x_true, result.xs, strict=True)
    )
    masses = np.array([true.inertias[true.getJointId(j)].mass for j in result.body_joints])
    mass_err = np.abs(result.pis[:, 0] - masses).max() / masses.max()
    return result, err, mass_err


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=3, help="random initial guesses (paper: 100)")
    parser.add_argument("--max-iterations", type=int, default=100, help="paper: 200")
    parser.add_argument("--systems", nargs="*", default=list(SYSTEMS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--chart",
        default="exp_eig",
        choices=["exp_eig", "log_cholesky"],
        help="inertial chart of the solver (Fig. 3: the same guesses in either chart)",
    )
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(
        f"{'':10s}{'':10s}{'Iterations':>16s}{'Cost/node [1e-1]':>22s}{'Error [l_inf]':>22s}"
        f"{'mass err [%]':>16s}{'converged':>11s}"
    )
    start = time.perf_counter()
    for name in args.systems:
        problem, x_true, true = SYSTEMS[name](np.random.default_rng(args.seed), args.chart)
        chart = args.chart
        nominal_pis = pis_and_jacobians(chart, problem.dynamics.nominal_theta())[0]
        nominal_theta = theta_from_pis("exp_eig", nominal_pis)
        guesses = [
            theta_from_pis(chart, pis_and_jacobians("exp_eig", perturbed(nominal_theta, rng))[0])
            for _ in range(args.trials)
        ]
        for rollout in ROLLOUTS:
            rows, statuses = [], []
            for theta0 in guesses:
                result, err, mass_err = trial(
                    problem, x_true, true, rollout, theta0, args.max_iterations
                )
                rows.append(
                    (
                        result.converged,
                        result.iterations,
                        result.cost / problem.horizon,
                        err,
                        mass_err,
                    )
                )
                statuses.append(result.status.split(":")[0])
            ok = [r for r in rows if r[0]]
            label = name if rollout == "single" else ""
            if not ok:
                why = ", ".join(f"{s} x{statuses.count(s)}" for s in sorted(set(statuses)))
                print(
                    f"{label:10s}{rollout:10s}{'X':>16s}{'X':>22s}{'X':>22s}{'X':>16s}"
                    f"{0:>7d}/{len(rows)}  ({why})",
                    flush=True,
                )
                continue
            a = np.array([r[1:] for r in ok])
            cells = [f"{m:.3g} ± {s:.2g}" for m, s in zip(a.mean(0), a.std(0), strict=True)]
            cost = f"{10 * a[:, 1].mean():.3g} ± {10 * a[:, 1].std():.2g}"
            mass = f"{100 * a[:, 3].mean():.2g} ± {100 * a[:, 3].std():.2g}"
            print(
                f"{label:10s}{rollout:10s}{cells[0]:>16s} {cost:>21s} {cells[2]:>21s} {mass:>15s}"
                f"{len(ok):>7d}/{len(rows)}",
                flush=True,
            )
    print(
        f"X: no trial converged within {args.max_iterations} iterations; "
        f"{args.trials} trials per row; {time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
