"""Actuation maps ``tau = B u`` for :class:`physid.oe.model.dynamics.ParametrizedModel`.

The quadrotor thrust model (paper B section VI-A, "asymmetric quadrotor"): the commands are the
rotor thrusts ``u = [f_1 .. f_n]`` [N]; rotor i sits at ``p_i`` in the base frame, pushes along
the base z axis and spins with direction ``s_i = +-1``, giving the reaction torque
``s_i c_tau f_i`` about z. Pinocchio's free-flyer generalized force is the spatial force in the
base frame ``[f; tau]``, so column i of B is ``[0, 0, 1, p_i x e_z, s_i c_tau]`` (+ zeros for any
joints after the base).
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError
from physid.oe.model.measurements import base_dofs


def thrust_actuation(
    model: pin.Model,
    rotor_positions: NDArray,
    spin: NDArray,
    torque_coefficient: float = 0.016,
    joints_actuated: bool = True,
) -> NDArray[np.float64]:
    """``B (nv, n_rotors [+ nv - 6])``: rotor thrusts, then (if asked) one torque per joint."""
    if base_dofs(model) != (7, 6):
        raise InputError("a thrust model needs a free-flyer base")
    p = np.atleast_2d(np.asarray(rotor_positions, dtype=float))
    spin = np.asarray(spin, dtype=float)
    if p.shape[1] != 3 or spin.shape != (p.shape[0],):
        raise InputError("rotor_positions must be (n, 3) and spin (n,)")
    B = np.zeros((model.nv, p.shape[0]))
    B[2] = 1.0
    B[3:6] = np.cross(p, [0.0, 0.0, 1.0]).T
    B[5] += torque_coefficient * spin
    if joints_actuated and model.nv > 6:
        B = np.hstack([B, np.eye(model.nv)[:, 6:]])
    return B


def quad_x_rotors(arm_length: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rotor positions and spin directions of a '+' quadrotor with arms of ``arm_length``."""
    a = arm_length
    pos = np.array([[a, 0.0, 0.0], [0.0, a, 0.0], [-a, 0.0, 0.0], [0.0, -a, 0.0]])
    return pos, np.array([1.0, -1.0, 1.0, -1.0])
