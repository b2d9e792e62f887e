"""Settings of the identification from poses (paper D §5.1) and the budget of its solves."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from physid.budget import Budget
from physid.impacts.geometry import STANDARD_GRAVITY, Shape, gravity_vector


@dataclass(frozen=True)
class IdentifyOptions:
    """Settings of the identification; SI units, angles in radians.

    ``max_substep``: h̄ of eq. (25) [s]. ``noise_position`` [m], ``noise_angle`` [rad]: the data's
    noise, W_χ = diag(1/σ²) (``noise_angle=None``: σ_pos / largest body radius — the angle error of
    a rim point tracked with σ_pos). ``weight_slip`` [s²/m²] multiplies the two friction products,
    ``weight_gap`` [s/m²] the impulse–gap product (per-mass impulses). ``continuations``: schedules
    of factors applied to both weights in successive warm-started IPOPT solves; every schedule is
    run from every warm start and the lowest objective wins (neither schedule is best on all data:
    each ends in a worse local minimum on some throws). ``warm_starts``: initial
    trajectories — ``"bridged"`` (linear interpolation, except where the ballistic flight
    predicted from the two previous frames reaches a surface before the next frame: then that
    flight up to the contact) and ``"linear"``. ``inertia_ratio_init`` (None: half the bound ρ²)
    and ``mu_init`` start J/m [m²] and μ; μ ≤ ``mu_max``; ``mu_weight`` is the small price per
    unit μ that selects the least μ consistent with data showing no sliding.
    ``retry_inertia_ratios``: fractions of ρ² at which every warm start and schedule is solved
    again when the best fit does not explain the data to the noise level (its χ² exceeds
    3 N_m + 3·sqrt(6 N_m), the 3σ bound of χ²(3 N_m)): with few frames per contact the start
    value of J/m can decide which local minimum IPOPT reaches; fits at the noise level skip the
    retries.
    ``profile_step``: relative step of J/m for the curvature-based standard deviation (0: skip
    the profiles; μ then counts as a lower bound when no contact slides faster than 1 cm/s);
    ``profile_polish``: how often a profile point with a lower objective may restart the solve.
    ``iteration_budget``: the most IPOPT iterations of all solves together (None:
    :func:`default_budget`, scaled to the fine grid); when it is spent the solves stop and the
    status is ``not_converged`` with the best iterate in the diagnostics. ``time_budget_s``:
    the wall-clock safety stop (None: :func:`default_budget`'s, far above what the iterations
    take, so that the iterations decide on any machine; a stop by it is ``time_limit``).
    """

    max_substep: float = 1.0e-3
    noise_position: float = 1.0e-3
    noise_angle: float | None = None
    weight_slip: float = 1.0e2
    weight_gap: float = 1.0e4
    penalty: Literal["l1", "l2"] = "l1"
    continuations: tuple[tuple[float, ...], ...] = ((1e-3, 1e-2, 1e-1, 1.0), (1e-2, 1.0))
    warm_starts: tuple[str, ...] = ("bridged", "linear")
    inertia_ratio_init: float | None = None
    retry_inertia_ratios: tuple[float, ...] = (0.3, 0.7)
    mu_init: float = 0.5
    mu_max: float = 3.0
    mu_weight: float = 10.0
    profile_step: float = 0.02
    profile_polish: int = 3
    gravity: float | tuple[float, float] = STANDARD_GRAVITY
    max_iter: int = 3000
    tol: float = 1e-8
    print_level: int = 0
    time_budget_s: float | None = None
    iteration_budget: int | None = None

    @property
    def gravity_vector(self) -> np.ndarray:
        """(g_x, g_y) [m/s²]: ``gravity`` as a number is its magnitude along −y."""
        return gravity_vector(self.gravity)


#: IPOPT iterations of the budget: per throw, and per step of the fine grid.
ITERATIONS_PER_THROW, ITERATIONS_PER_STEP = 4000, 10
#: The wall-clock safety stop: at least this long [s], and this many times what the iteration
#: budget takes at :data:`SECONDS_PER_STEP_ITERATION` (an IPOPT iteration costs about 50 µs per
#: fine step on a loaded 2-core machine).
SAFETY_SECONDS, SAFETY_FACTOR, SECONDS_PER_STEP_ITERATION = 600.0, 10.0, 5e-5


def default_budget(n_steps: int, throws: int = 1) -> Budget:
    """The budget of a fit on ``n_steps`` fine steps of ``throws`` throws: 4,000 IPOPT
    iterations per throw + 10 per step. The iterations are what decide: a valid throw converges
    in several hundred to about a thousand, a recording without a usable throw (a constant pose,
    positions in mm) runs past ten thousand, and they count the same on any machine. The wall
    clock is a safety stop only, :data:`SAFETY_FACTOR` times what those iterations take (at
    least :data:`SAFETY_SECONDS`): a machine would have to be ten times slower than a loaded
    2-core box for it to end a solve, which is then ``time_limit``."""
    iterations = ITERATIONS_PER_THROW * throws + ITERATIONS_PER_STEP * n_steps
    expected = iterations * n_steps * SECONDS_PER_STEP_ITERATION
    return Budget(seconds=max(SAFETY_SECONDS, SAFETY_FACTOR * expected), iterations=iterations)


def budget_of(opts: IdentifyOptions, n_steps: int, throws: int = 1) -> Budget:
    """:func:`default_budget` with the options' ``iteration_budget`` and ``time_budget_s``."""
    budget = default_budget(n_steps, throws)
    budget.iterations = opts.iteration_budget or budget.iterations
    budget.seconds = opts.time_budget_s or budget.seconds
    return budget


def noise_levels(opts: IdentifyOptions, shape: Shape) -> tuple[float, float]:
    """Position [m] and angle [rad] noise of the poses: the angle's, when not given, is the
    position noise over the shape's largest radius (a point on its rim moves that much)."""
    sig_p = opts.noise_position
    return sig_p, opts.noise_angle if opts.noise_angle is not None else sig_p / shape.max_radius
