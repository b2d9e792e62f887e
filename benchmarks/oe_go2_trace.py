"""Diagnosis: ``oe_mujoco_go2.py`` in-process (``--split``) with the solver's stopping tests and
every line-search trial logged to stderr (lines ``DIAG test`` / ``DIAG trial``, the solver's
own ``_trial`` wrapped, so the interpolated trials too); the solve itself is unchanged
(docs/oe.md "Eighth round"). Usage, from the repository root::

    PYTHONPATH=src:benchmarks python benchmarks/oe_go2_trace.py --gait crawl --seed 2 \
        --soft-feet --split --time-budget 430 --out out/trace
"""

import runpy
import sys
from pathlib import Path

import numpy as np

import physid.api.oe_run as R  # noqa: N812
import physid.oe.solving.solver as S  # noqa: N812
from physid.oe.solving.riccati import parameter_hessian

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # oe_mujoco_go2 imports its sibling modules


def log(*a):
    print(*a, file=sys.stderr, flush=True)


orig_small = S._small_step


def small(problem, run, opt, step):
    lin = run.lin
    dec = abs(step.gradient_dot)
    unknowns = lin.lx.size + lin.lw.size + lin.lt.size
    wh = lin.gaps / problem.process_std_nodes
    grms = float(np.sqrt(np.mean(wh**2)))
    H = parameter_hessian(step.policy)
    maha = float(step.dtheta @ (0.5 * (H + H.T)) @ step.dtheta)
    lim = problem.dynamics.step_limit(step.dtheta, opt.max_log_step)
    log(
        f"DIAG test: cost {run.cost:.6f} infeas {run.infeas:.4g} dec {dec:.4g} "
        f"(cls {opt.tolerance * (1 + abs(run.cost)):.3g}, "
        f"stat {opt.decrease_tolerance * unknowns:.3g}) gapRMS {grms:.4g} "
        f"(tol {opt.gap_tolerance}) maha {maha:.4g} (tol {opt.parameter_tolerance**2:.1e}) "
        f"d2 {step.curvature:.4g} mu {run.mu:.2e} nu {run.nu:.4g} steplimit {lim:.4g} "
        f"|dth| {np.abs(step.dtheta).max():.3g} argmax {int(np.argmax(np.abs(step.dtheta)))} "
        f"ntheta {step.dtheta.size} "
        f"theta[-2:] {run.theta[-2:]}"
    )
    return orig_small(problem, run, opt, step)


S._small_step = small


orig_trial = S._trial


def trial(problem, run, opt, step, alpha):
    """The solver's own trial, logged: the line search (and its interpolation) is unchanged."""
    out = orig_trial(problem, run, opt, step, alpha)
    _, cost, gaps, merit = out
    m0 = run.merit(run.cost, run.infeas)
    reference = max(run.merit(c, f) for c, f in run.recent[-opt.window :])
    d1, d2 = step.gradient_dot, step.curvature
    predicted = alpha * d1 + 0.5 * alpha**2 * d2 - alpha * run.nu * run.infeas
    log(
        f"DIAG trial a {alpha:.4g} cost {cost:.6f} infeas {float(np.abs(gaps).sum()):.4g} "
        f"merit {merit:.6f} m0 {m0:.6f} ref {reference:.6f} pred {predicted:.4g} "
        f"actual {merit - m0:.4g} dcost {cost - run.cost:.4g} "
        f"qmodel {alpha * d1 + 0.5 * alpha**2 * d2:.4g}"
    )
    return out


S._trial = trial

orig_solve = R._solve


def _solve(*a):
    a = list(a)
    a[-1] = log
    return orig_solve(*a)


R._solve = _solve
sys.argv = ["oe_mujoco_go2.py"] + sys.argv[1:]
runpy.run_path(str(HERE / "oe_mujoco_go2.py"), run_name="__main__")
