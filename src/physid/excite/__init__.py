"""Excitation-trajectory design: optimal finite Fourier series (Swevers et al. 1997) that
maximise the information on the base parameters (log-det of the information matrix, or minimal
condition number of the base regressor) under joint position, velocity, acceleration and torque
limits, solved by IPOPT through CasADi. See docs/excitation.md.

Modules: :mod:`.fourier` (the basis), :mod:`.limits` (limits, nominal torques, checks),
:mod:`.criterion` (the information criteria and their gradients), :mod:`.nlp` (the CasADi/IPOPT
problem), :mod:`.design` (start, solve, verify), :mod:`.config` and :mod:`.workflow` (the
``physid excite`` command).
"""

from physid.excite.design import (
    ExcitationOptions,
    ExcitationResult,
    design_excitation,
    scale_into_limits,
)
from physid.excite.fourier import FourierBasis
from physid.excite.limits import JointLimits, check_limits, joint_limits
from physid.excite.workflow import run_excite

__all__ = [
    "ExcitationOptions",
    "ExcitationResult",
    "FourierBasis",
    "JointLimits",
    "check_limits",
    "design_excitation",
    "joint_limits",
    "run_excite",
    "scale_into_limits",
]
