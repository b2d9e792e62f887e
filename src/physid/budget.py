"""Iteration and wall-time budgets of the iterative solvers (IPOPT, Levenberg-Marquardt,
Gauss-Newton).

Why: on data that cannot support the estimate (a body that never moves, time in milliseconds)
an interior-point or Gauss-Newton solver can grind for minutes before giving up, and a user
cannot tell a slow run from a stuck one. Each estimator makes one :class:`Budget` scaled to its
problem, asks :meth:`Budget.spend` once per iteration, stops when it says so, keeps its best
iterate and reports :attr:`Budget.status` (``not_converged`` for the iterations, ``time_limit``
for the wall clock) with :meth:`Budget.describe` in its message.

The iteration budget is the one that decides: the same data give the same result on any
machine. The wall clock is a safety stop only, sized well above what the iterations take.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from physid.status import Status


class Stop(StrEnum):
    """Which budget ended a solve."""

    ITERATIONS = "iterations"
    TIME = "time"


@dataclass
class Budget:
    """At most ``iterations`` iterations and ``seconds`` of wall time, from its creation."""

    seconds: float
    iterations: int
    started: float = field(default_factory=time.perf_counter)
    used: int = 0
    reason: Stop | None = None  # set once spent

    def spend(self, iterations: int = 1) -> bool:
        """Count ``iterations``; True when the budget is spent (the solver must stop)."""
        self.used += iterations
        return self.exhausted()

    def exhausted(self) -> bool:
        """True when the time or the iterations are used up (remembered in :attr:`reason`)."""
        if self.reason is None:
            if self.used >= self.iterations:
                self.reason = Stop.ITERATIONS
            elif self.elapsed() >= self.seconds:
                self.reason = Stop.TIME
        return self.reason is not None

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def portion(self, iterations: int) -> Budget:
        """A budget for at most the next ``iterations`` of this one, on the same clock: a stage
        of a solve that must leave the rest to later stages. :meth:`absorb` counts it back."""
        part = Budget(self.seconds, min(self.iterations, self.used + iterations), self.started)
        part.used = self.used
        return part

    def absorb(self, part: Budget) -> None:
        """Count the iterations a :meth:`portion` used, and its wall-clock stop, as this one's
        (its own iteration cap is not this budget's end)."""
        self.used = part.used
        if part.reason is Stop.TIME:
            self.reason = Stop.TIME

    @property
    def status(self) -> Status | None:
        """The status a solve stopped by this budget has (None: not spent)."""
        if self.reason is None:
            return None
        return Status.TIME_LIMIT if self.reason is Stop.TIME else Status.NOT_CONVERGED

    def describe(self) -> str:
        """Why the solver stopped, for a message: which budget, its size and what was used."""
        if self.reason is Stop.TIME:
            return f"the time budget of {self.seconds:.3g} s ({self.used} iterations)"
        return f"the iteration budget of {self.iterations} ({self.elapsed():.1f} s)"


def ipopt_stop_callback(budget: Budget, nx: int, ng: int, np_: int) -> Any:
    """A CasADi ``iteration_callback`` for an IPOPT ``nlpsol`` with ``nx`` variables, ``ng``
    constraints and ``np_`` parameters: it spends one iteration of ``budget`` per IPOPT
    iteration and asks IPOPT to stop (``User_Requested_Stop``, the current iterate returned)
    once the budget is spent. Keep a reference to it as long as the solver lives."""
    import casadi as cs

    sizes = {"x": nx, "lam_x": nx, "g": ng, "lam_g": ng, "f": 1, "lam_p": np_}

    class _StopWhenSpent(cs.Callback):
        def __init__(self) -> None:
            cs.Callback.__init__(self)
            self.construct("budget", {})

        def get_n_in(self) -> int:
            return cs.nlpsol_n_out()

        def get_n_out(self) -> int:
            return 1

        def get_name_in(self, i: int) -> str:
            return cs.nlpsol_out(i)

        def get_name_out(self, i: int) -> str:
            return "stop"

        def get_sparsity_in(self, i: int) -> Any:
            return cs.Sparsity.dense(sizes[cs.nlpsol_out(i)], 1)

        def eval(self, arg: list) -> list:
            return [1.0 if budget.spend() else 0.0]

    return _StopWhenSpent()
