"""Joint state and parameter estimation for discrete multibody dynamics with regularised,
frictional constraints (paper A): maximal-coordinate model, SPOOK simulator with an MLCP for dry
friction, and a Levenberg–Marquardt estimator on impulse and observation residuals."""

from physid.multibody.estimate.fit import MultibodyFit, MultibodyRecording, identify
from physid.multibody.model.build import load_model
from physid.multibody.step.simulate import MultibodySimulation, simulate, state_from_joints

__all__ = [
    "MultibodyFit",
    "MultibodyRecording",
    "MultibodySimulation",
    "identify",
    "load_model",
    "simulate",
    "state_from_joints",
]
