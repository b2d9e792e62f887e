"""Multi-contact optimal estimation of inertial parameters and trajectories (paper B).

MAP estimation over a horizon (eq. 16) of the states, process noise and the inertial parameters
of chosen bodies in the log-Cholesky or exponential-eigenvalue chart, solved by a parametrized
Riccati recursion (eqs. 20-31) with feasibility-driven, multiple- or single-shooting rollouts and
a merit line search (eqs. 32-38). Fixed-base and free-flyer models (IMU terms, thrust
actuation), multi-phase rigid contact dynamics with impulse reset maps at touch-down (eqs. 2-3,
16-19) from a known contact sequence. Optional observations that see a node's acceleration:
six-axis force/torque sensors and the base's accelerometer (with its bias estimated by
:func:`solve_with_accelerometer_bias`).
"""

from physid.oe.model.measurements import Measurements, NoiseStd
from physid.oe.model.phases import ContactSchedule
from physid.oe.outputs.result import OEResult
from physid.oe.solving.build import initial_guess, make_problem
from physid.oe.solving.imu_bias import solve_with_accelerometer_bias
from physid.oe.solving.problem import OEProblem
from physid.oe.solving.solver import OEOptions, solve

__all__ = [
    "ContactSchedule",
    "Measurements",
    "NoiseStd",
    "OEOptions",
    "OEProblem",
    "OEResult",
    "initial_guess",
    "make_problem",
    "solve",
    "solve_with_accelerometer_bias",
]
