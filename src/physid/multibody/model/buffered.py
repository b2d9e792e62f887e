"""CasADi functions evaluated straight into NumPy memory (CasADi's buffer interface): a ``DM`` ->
NumPy conversion of a per-step function's outputs costs more than its evaluation. Shared by the
stepper and the estimator's residual assembly.
"""

from __future__ import annotations

import casadi as ca
import numpy as np


class Buffered:
    """A CasADi function evaluated into preallocated NumPy arrays (its structural non-zeros)."""

    def __init__(self, fn: ca.Function) -> None:
        self.fn = fn
        self.buffer, self.run = fn.buffer()
        self.out = [np.empty(fn.nnz_out(i)) for i in range(fn.n_out())]
        for i, out in enumerate(self.out):
            self.buffer.set_res(i, memoryview(out))
        self._args: list[np.ndarray] = []

    def __call__(self, *args: np.ndarray) -> list[np.ndarray]:
        self._args = [np.ascontiguousarray(a, dtype=float).ravel() for a in args]  # keep alive
        for i, arg in enumerate(self._args):
            if arg.size != self.fn.nnz_in(i):
                raise ValueError(f"{self.fn.name()}: input {i} has {arg.size} values")
            self.buffer.set_arg(i, memoryview(arg))
        self.run()
        return self.out
