"""The simfit solve, optionally in two stages (``--coarse-windows N``): a coarse fit on every k-th
shooting window, then the fit on all of them from there.

Far from the optimum each Levenberg-Marquardt step needs only the direction the data give, and a
subset of the windows gives it at a fraction of the rollouts (a finite-difference Jacobian costs
``len(x) + 2 n`` batched rollouts of every window). Near the optimum every window counts: the
second stage starts at the coarse optimum (the windows the first stage skipped start at the
recorded state, as every window does in a one-stage fit) with a small Marquardt damping, and its
stopping rules and standard deviations are those of the whole data set. This is the
subsampled-then-full ("progressive sampling") use of Gauss-Newton: the coarse stage's result only
chooses where the full fit starts.

It pays on long recordings: every 2nd window first roughly halves the CPU of a real arm's fit
for the same cost and held-out errors, while on a few tens of windows the coarse stage takes as
many Jacobians as the one-stage fit, hence only from 2 N windows. Sparser strides leave the
second stage further to go.

Not the default: a barely moving joint gives this problem several minima, and the coarse stage
changes which one is reached; it can settle where that joint's damping and armature sit at 0,
which the second stage keeps (status ok, the joint several times its position noise), where
the one-stage fit would find the truth, or the other way round (docs/simfit.md).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from physid.numerics.condensed_lm import Solution, parameter_std, solve
from physid.simfit.shooting import DIFF_STEP

STAGE_TWO_DAMPING = 1e-3  # the second stage starts near its optimum (SciPy's and MINPACK's tau)


def coarse_stride(n_windows: int, coarse_windows: int) -> int:
    """Every how many windows the coarse stage fits so that about ``coarse_windows`` remain; 1
    (no coarse stage) when ``coarse_windows`` is 0 or the recordings hold fewer than twice as
    many windows."""
    if coarse_windows <= 0 or n_windows < 2 * coarse_windows:
        return 1
    return n_windows // coarse_windows


def staged_solve(
    shooting_of: Callable[[int], object],
    x0: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray],
    max_evaluations: int,
    options: dict,
    note: Callable[[str], None],
    coarse_windows: int = 0,
) -> tuple[object, Solution, list[dict]]:
    """Fit ``x`` (and every window's offsets, from zero) on the windows of ``shooting_of(1)``,
    after a coarse stage on ``shooting_of(k)`` when :func:`coarse_stride` says so (about
    ``coarse_windows`` windows; 0: one stage).

    ``shooting_of(stride)``: the :class:`~physid.simfit.shooting.Shooting` of every
    ``stride``-th window; ``options``: :func:`~physid.numerics.condensed_lm.solve`'s keywords
    common to both stages (its first stage's ``lam0`` among them). ``max_evaluations`` bounds
    both stages' evaluations together, the first taking at most half. Returns the full
    shooting, its solution and one record per stage (windows, evaluations, Jacobians, status).
    """
    shooting = shooting_of(1)
    offsets = np.zeros((len(shooting.windows), shooting.n_state))
    stride = coarse_stride(len(shooting.windows), coarse_windows)
    stages: list[dict] = []
    budget = max_evaluations
    stage_options = dict(options)
    if stride > 1:
        coarse = shooting_of(stride)
        note(
            f"coarse stage: {coarse.n_global} parameters over {len(coarse.windows)} of the "
            f"{len(shooting.windows)} windows (every {stride})"
        )
        first = _solve(
            coarse,
            x0,
            offsets[::stride],
            bounds,
            max(budget // 2, 1),
            {**stage_options, "final_jacobian": False},
            note,
        )
        stages.append(_record(coarse, first))
        budget = max(budget - first.nfev, 1)
        merged = offsets.copy()
        merged[::stride] = first.offsets
        # the coarse optimum must be a better start for all windows than the start itself (two
        # rollouts; a coarse stage lost in a local minimum of its subset is dropped)
        if shooting.blocks(first.x, merged).cost < shooting.blocks(x0, offsets).cost:
            x0, offsets = first.x, merged
            stage_options["lam0"] = STAGE_TWO_DAMPING
        else:
            note("the coarse stage's result fits all windows worse than the start: dropped")
            stages[-1]["dropped"] = True
    note(f"fitting {shooting.n_global} parameters over {len(shooting.windows)} windows")
    solution = _solve(shooting, x0, offsets, bounds, budget, stage_options, note)
    stages.append(_record(shooting, solution))
    return shooting, solution, stages


def _solve(shooting, x0, offsets, bounds, max_evaluations: int, options: dict, note) -> Solution:  # noqa: ANN001
    return solve(
        shooting.blocks,
        lambda x, d, at: shooting.jacobian(x, d, at, bounds, DIFF_STEP),
        x0,
        offsets,
        bounds,
        max_nfev=max_evaluations,
        progress=lambda steps, evaluations, cost: note(
            f"step {steps}: cost {cost:.6g} after {evaluations} of {max_evaluations} evaluations"
        ),
        std_of=lambda normal, cost: parameter_std(
            normal, cost, shooting.residual_count, shooting.size
        ),
        **options,
    )


def _record(shooting, solution: Solution) -> dict:  # noqa: ANN001
    return {
        "windows": len(shooting.windows),
        "evaluations": int(solution.nfev),
        "jacobians": int(solution.njev),
        "solver_status": int(solution.status),
        "cost": float(solution.cost),
    }
