"""Which dynamics f_p applies at each node (paper B eq. 16): the phase dispatch.

Only the free phase exists so far: every node uses the free dynamics of
:mod:`physid.oe.dynamics` (contact phases and impulse reset maps are not implemented yet).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from physid.oe.problem import OEProblem


def step(problem: OEProblem, k: int, x: NDArray) -> NDArray[np.float64]:
    """``f_p(x_k; theta | u_k)`` of the phase of node k."""
    return problem.dynamics.free_step(x, problem.u[k])


def step_derivatives(
    problem: OEProblem, k: int, x: NDArray
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(f_p, df_p/dx, df_p/dtheta)`` of the phase of node k."""
    return problem.dynamics.free_step_derivatives(x, problem.u[k])
