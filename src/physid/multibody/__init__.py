"""Joint state and parameter estimation for discrete multibody dynamics with regularised,
frictional constraints (paper A): maximal-coordinate model, SPOOK simulator with an MLCP for dry
friction, and a Levenberg–Marquardt estimator on impulse and observation residuals."""

from physid.multibody.build import load_model
from physid.multibody.estimate import MultibodyFit, Recording, identify
from physid.multibody.simulate import Simulation, simulate, state_from_joints

__all__ = [
    "MultibodyFit",
    "Recording",
    "Simulation",
    "identify",
    "load_model",
    "simulate",
    "state_from_joints",
]
