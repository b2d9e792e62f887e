"""Paper B Fig. 3: log-Cholesky (eqs. 9-10) against exponential-eigenvalue (eqs. 11-15)
convergence on the Table I problems (Kinova arm, Hector quadrotor, Go1 walking), the same
random starts (every estimated body 70 % off, the same bodies in either chart), no parameter
prior, feasibility-driven rollout (as the paper configures it).

Writes out/oe_fig3/fig3.png (top: cost per node against the iteration, bottom: the l_1 norm
of the estimated trajectory's difference to the truth, per node; median over the starts and
every start in a thin line) and out/oe_fig3/runs.json, and prints per system and chart: how
many starts converged, iterations, iterations to come within 1e-6 (relative) of the final
cost, final cost and error.

    nice -n 10 python benchmarks/oe_fig3.py [--starts 10] [--max-iterations 200]

RESULTS: see docs/oe.md ("Fig. 3").
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # small dense matrices: BLAS threads only contend

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from oe_table1 import HORIZONS, SYSTEMS, guesses  # noqa: E402

from physid.oe import OEOptions, initial_guess, solve  # noqa: E402
from physid.oe.model import state  # noqa: E402

CHARTS = ("log_cholesky", "exp_eig")


def l1_error(model, x_true: np.ndarray, xs: np.ndarray) -> float:
    """Mean over the nodes of ``|x (-) x_true|_1`` (Fig. 3 bottom, per node)."""
    diffs = [state.difference(model, a, b) for a, b in zip(x_true, xs, strict=True)]
    return float(np.mean(np.abs(diffs).sum(axis=1)))


def run(system: str, chart: str, starts: int, seed: int, max_iterations: int) -> list[dict]:
    duration, dt = HORIZONS[system]
    problem, x_true, _ = SYSTEMS[system](chart, duration, dt)
    model, runs = problem.dynamics.model, []
    for k, theta0 in enumerate(guesses(problem, chart, starts, seed, system)):
        xs, ws = initial_guess(problem)
        errors = [l1_error(model, x_true, xs)]

        def record(iteration: int, theta: np.ndarray, xs: np.ndarray, errors=errors) -> None:
            errors.append(l1_error(model, x_true, xs))

        options = OEOptions(rollout="feasible", max_iterations=max_iterations)
        result = solve(problem, xs, ws, theta0, options, callback=record)
        cost0 = problem.evaluate(xs, ws, theta0)[0]
        runs.append(
            {
                "start": k,
                "status": result.status,
                "converged": result.converged,
                "iterations": result.iterations,
                "cost": [c / problem.horizon for c in [cost0, *result.history["cost"]]],
                "error": errors,
                "time_s": result.solve_time,
            }
        )
        print(
            f"{system} {chart} #{k}: {result.status}, {result.iterations} it, "
            f"cost/node {result.cost / problem.horizon:.4f}, error {errors[-1]:.4g}",
            flush=True,
        )
    return runs


def iterations_to_final(costs: list[float], rtol: float = 1e-6) -> int:
    final = costs[-1]
    return next(i for i, c in enumerate(costs) if abs(c - final) <= rtol * abs(final))


def _stat(values) -> str:
    v = np.asarray(values, float)
    return f"{v.mean():.3g} ± {v.std():.2g}" if v.size else "-"


def summary(results: dict) -> str:
    lines = [
        f"{'':10s}{'chart':14s}{'converged':>10s}{'iterations':>16s}{'to 1e-6 of final':>18s}"
        f"{'final cost/node':>20s}{'final l1 error':>20s}"
    ]
    for system, per_chart in results.items():
        for chart, runs in per_chart.items():
            ok = [r for r in runs if r["converged"]]
            lines.append(
                f"{system:10s}{chart:14s}{len(ok):>6d}/{len(runs):<3d}"
                f"{_stat([r['iterations'] for r in ok]):>16s}"
                f"{_stat([iterations_to_final(r['cost']) for r in ok]):>18s}"
                f"{_stat([r['cost'][-1] for r in ok]):>20s}"
                f"{_stat([r['error'][-1] for r in ok]):>20s}"
            )
    return "\n".join(lines)


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(results), figsize=(4.2 * len(results), 6), squeeze=False)
    colors = {"log_cholesky": "tab:orange", "exp_eig": "tab:blue"}
    for col, (system, per_chart) in enumerate(results.items()):
        for chart, runs in per_chart.items():
            for row, key in enumerate(("cost", "error")):
                ax = axes[row, col]
                curves = [np.asarray(r[key]) for r in runs]
                for c in curves:
                    ax.semilogy(c, color=colors[chart], lw=0.4, alpha=0.4)
                n = max(len(c) for c in curves)  # a finished run keeps its last value
                padded = np.array([np.r_[c, np.full(n - len(c), c[-1])] for c in curves])
                ax.semilogy(np.median(padded, axis=0), color=colors[chart], lw=2, label=chart)
        axes[0, col].set(title=system, ylabel="cost per node")
        axes[1, col].set(xlabel="iteration", ylabel="l1 error per node")
        axes[0, col].legend(fontsize=8)
    fig.suptitle("log-Cholesky vs exponential-eigenvalue, feasibility-driven rollout")
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--max-iterations", type=int, default=200)
    parser.add_argument("--systems", nargs="*", default=list(SYSTEMS), choices=list(SYSTEMS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("out/oe_fig3"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = {
        s: {c: run(s, c, args.starts, args.seed, args.max_iterations) for c in CHARTS}
        for s in args.systems
    }
    tmp = args.out / "runs.json.tmp"
    tmp.write_text(json.dumps(results))
    tmp.replace(args.out / "runs.json")
    plot(results, args.out / "fig3.png")
    print(summary(results))
    print(f"figure: {args.out / 'fig3.png'}")


if __name__ == "__main__":
    main()
