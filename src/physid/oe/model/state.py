"""The state manifold X = (q, v) of a Pinocchio model: x (+) dx, x1 (-) x0 and their Jacobians.

A state is stored as one array ``x = [q (nq), v (nv)]``; its tangent vectors as
``dx = [dq (nv), dv (nv)]``. Configuration parts use Pinocchio's ``integrate`` and
``difference`` (Lie groups of free-flyers and unbounded revolute joints); velocities are a vector
space. These are the (+) and (-) of paper B eqs. 1, 16, 32-34.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

ARG0, ARG1 = pin.ArgumentPosition.ARG0, pin.ArgumentPosition.ARG1


def integrate(model: pin.Model, x: NDArray, dx: NDArray) -> NDArray[np.float64]:
    """``x (+) dx``."""
    nq, nv = model.nq, model.nv
    return np.concatenate([pin.integrate(model, x[:nq], dx[:nv]), x[nq:] + dx[nv:]])


def difference(model: pin.Model, x0: NDArray, x1: NDArray) -> NDArray[np.float64]:
    """``x1 (-) x0``, the tangent vector at ``x0`` with ``x0 (+) (x1 (-) x0) = x1``.

    Unbounded revolute joints (``(cos, sin)`` coordinates) are differenced by ``atan2`` of the
    cross and dot products: Pinocchio 4.1's difference returns exactly 0 for some angle steps
    below about 1e-8 rad (0.5 % of random 1e-9 steps), which halved one entry of a central
    finite difference of the parameter Jacobian.
    """
    nq = model.nq
    dq = pin.difference(model, x0[:nq], x1[:nq])
    for joint in model.joints[1:]:
        if joint.shortname().startswith("JointModelRUB"):
            c0, s0 = x0[joint.idx_q : joint.idx_q + 2]
            c1, s1 = x1[joint.idx_q : joint.idx_q + 2]
            dq[joint.idx_v] = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
    return np.concatenate([dq, x1[nq:] - x0[nq:]])


def _block(config_jacobian: NDArray, nv: int, velocity: float) -> NDArray[np.float64]:
    out = np.zeros((2 * nv, 2 * nv))
    out[:nv, :nv] = config_jacobian
    out[nv:, nv:] = velocity * np.eye(nv)
    return out


def d_integrate(model: pin.Model, x: NDArray, dx: NDArray, arg: int) -> NDArray[np.float64]:
    """Jacobian of ``x (+) dx`` with respect to ``x`` (``arg=0``, tangent at x) or ``dx``."""
    nq, nv = model.nq, model.nv
    which = ARG0 if arg == 0 else ARG1
    return _block(pin.dIntegrate(model, x[:nq], dx[:nv], which), nv, 1.0)


def d_difference(model: pin.Model, x0: NDArray, x1: NDArray, arg: int) -> NDArray[np.float64]:
    """Jacobian of ``x1 (-) x0`` with respect to ``x0`` (``arg=0``) or ``x1`` (``arg=1``)."""
    nq, nv = model.nq, model.nv
    which = ARG0 if arg == 0 else ARG1
    return _block(pin.dDifference(model, x0[:nq], x1[:nq], which), nv, -1.0 if arg == 0 else 1.0)
