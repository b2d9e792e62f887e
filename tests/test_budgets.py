"""Iteration and wall-time budgets of the iterative solvers (issue 31, item 3): a spent budget
stops the solver, which keeps its best iterate and says in its status which budget stopped it.
Independent truths: the iterations and time actually spent, the cost re-evaluated at the
returned iterate, and the unbudgeted solve of the same problem."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from physid.budget import Budget


def test_budget_counts_iterations_and_time():
    budget = Budget(seconds=1e9, iterations=3)
    assert [budget.spend() for _ in range(4)] == [False, False, True, True]
    assert budget.reason == "iterations" and "iteration budget of 3" in budget.describe()
    slow = Budget(seconds=0.05, iterations=10**9)
    time.sleep(0.06)
    assert slow.spend() and slow.reason == "time" and "time budget of 0.05 s" in slow.describe()


def _mm_poses():
    """13 frames of a bouncing ellipse with positions in mm read as m: no throw of this shape
    explains them (IPOPT ground 53-133 s on such poses before the budget)."""
    from physid.impacts.poses import camera_samples
    from physid.impacts.simulator import simulate
    from physid.impacts.specs import parse_shape, parse_surface

    shape = parse_shape("ellipse:0.05,0.025")
    lines = [parse_surface("line:0,0")]
    sim = simulate(shape, lines, np.array([0.0, 0.1, -0.785]), np.array([1.0, -1.0, 0.0]),
                   inertia_ratio=shape.uniform_inertia_ratio(), mu=0.3, restitution=0.2,
                   dt=1.0 / 9600, duration=0.2)  # fmt: skip
    t, q = camera_samples(sim, 60.0, noise_position=1e-3, noise_angle=0.02,
                          rng=np.random.default_rng(0))  # fmt: skip
    q[:, :2] *= 1000.0
    return shape, lines, t, q


def test_impacts_identify_stops_at_its_time_budget_with_a_status():
    from physid.impacts.identify import IdentifyOptions, identify

    shape, lines, t, q = _mm_poses()
    result = identify(shape, lines, t, q, options=IdentifyOptions(time_budget_s=2.0))
    assert result.status == "time_limit" and "safety stop of 2 s" in result.message
    assert not result.identifiable and math.isnan(result.inertia_ratio)
    assert "estimates_not_identified" in result.diagnostics
    capped = identify(shape, lines, t, q, options=IdentifyOptions(iteration_budget=50))
    assert capped.status == "not_converged" and "iteration budget of 50" in capped.message
    assert capped.iterations <= 60


def test_levenberg_marquardt_keeps_its_best_iterate_when_the_budget_stops_it():
    """A 2-iteration budget on a curve fit that needs more: the returned parameters are those of
    the last accepted step (their cost, recomputed, is the last of the history and below the
    start), and an unbudgeted run goes on to a lower cost."""
    import scipy.sparse as sp

    from physid.multibody.estimate.lm import LMTermination, levenberg_marquardt

    x = np.linspace(0.0, 2.0, 40)
    y = 2.0 * np.exp(-1.3 * x) + 0.01 * np.random.default_rng(0).normal(size=x.size)

    def residual(_state, p, jacobian):
        r = p[0] * np.exp(-p[1] * x) - y
        if not jacobian:
            return r
        J = np.column_stack([np.exp(-p[1] * x), -p[0] * x * np.exp(-p[1] * x)])
        return r, sp.csr_matrix(J)

    def retract(state, p, dx):
        return state, p + dx

    args = (residual, retract, None, np.array([0.5, 0.1]), np.full(2, -10.0), np.full(2, 10.0), 0)
    stopped = levenberg_marquardt(*args, max_iterations=50, budget=Budget(1e9, 2))
    assert stopped.termination is LMTermination.BUDGET_ITERATIONS
    assert "iteration budget of 2" in stopped.message
    assert stopped.iterations == 1  # the budget's second spend stops before a second step
    cost = float(residual(None, stopped.p, False) @ residual(None, stopped.p, False))
    assert cost == pytest.approx(stopped.cost_history[-1]) and cost < stopped.cost_history[0]
    free = levenberg_marquardt(*args, max_iterations=50)
    assert free.converged and free.cost_history[-1] < cost


def test_a_portion_stops_at_its_share_and_counts_back():
    from physid.budget import Stop

    budget = Budget(seconds=1e6, iterations=10)
    budget.spend(3)
    part = budget.portion(4)
    spent = [part.spend() for _ in range(4)]
    assert spent == [False, False, False, True] and part.reason is Stop.ITERATIONS
    budget.absorb(part)
    assert budget.used == 7 and budget.reason is None  # the portion's cap is not the budget's
    last = budget.portion(8)  # only 3 left in the budget
    while not last.spend():
        pass
    budget.absorb(last)
    assert budget.used == 10 and budget.exhausted() and budget.reason is Stop.ITERATIONS
    clock = Budget(seconds=0.0, iterations=10).portion(5)
    assert clock.exhausted() and clock.reason is Stop.TIME
