"""Quantities of the ``physid oe`` report (paper B section VI): each estimated body's equivalent
ellipsoid, the base pose error and the contact forces at the estimate. Arrays only; the figure
is drawn by :func:`physid.oe.outputs.plot.plot_report`.

- Equivalent ellipsoid: the uniform-density solid ellipsoid with the body's mass and rotational
  inertia about its centre of mass (the picture of paper B Fig. 5). A solid ellipsoid of
  semi-axes ``(a, b, c)`` has principal moments ``m (b^2 + c^2) / 5`` etc., so
  ``a^2 = 5 (I_y + I_z - I_x) / (2 m)``: real exactly when the triangle inequalities hold,
  which both charts of paper B guarantee (eqs. 9-15).
- Force/torque sensors: the RMS of the recorded minus the estimated wrench per axis, next to
  the RMS of the recorded wrench (how much of the signal the estimate explains).
- Contact forces: the ``lambda`` of eqs. 2-3 at the estimated states, commands and final theta,
  from the same ``pin.constraintDynamics`` call the estimator's contact phases make
  (:func:`physid.oe.model.contact.contact_acceleration`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.body.inertia import mass_com_inertia_from_pi
from physid.oe.model.phases import acceleration
from physid.oe.model.wrench import WRENCH_AXES
from physid.oe.solving.problem import OEProblem


def equivalent_ellipsoid(
    pi: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(com_in_body, semi_axes, axes)`` of the body ``pi`` (Pinocchio order): the solid
    ellipsoid of the same mass and inertia about the com; ``axes[:, i]`` is the principal
    direction of ``semi_axes[i]`` in the body frame. A violated triangle inequality (only an
    inconsistent ``pi``) gives a zero semi-axis instead of an imaginary one."""
    mass, com, inertia = mass_com_inertia_from_pi(np.asarray(pi, dtype=float))
    moments, axes = np.linalg.eigh(inertia)
    squared = 5.0 * (moments.sum() - 2.0 * moments) / (2.0 * mass)
    return com, np.sqrt(np.maximum(squared, 0.0)), axes


def ellipsoid_outline(
    com: NDArray, semi_axes: NDArray, axes: NDArray, plane: Sequence[int] = (0, 1), n: int = 97
) -> NDArray[np.float64]:
    """Outline ``(n, 2)`` of the ellipsoid's orthogonal projection on the coordinate plane
    ``plane`` (e.g. ``(0, 2)``: x-z). The ellipsoid is ``{c + A^1/2 s, |s| <= 1}`` with
    ``A = axes diag(semi_axes^2) axes^T``; its projection is the ellipse of the 2x2 block of A
    (drawn through that block's eigen-decomposition, which also covers a flat body)."""
    idx = list(plane)
    shape = (axes * np.asarray(semi_axes) ** 2) @ axes.T
    block = shape[np.ix_(idx, idx)]
    w, V = np.linalg.eigh(block)
    root = V * np.sqrt(np.maximum(w, 0.0))
    angle = np.linspace(0.0, 2.0 * np.pi, n)
    return np.asarray(com)[idx] + (root @ np.vstack([np.cos(angle), np.sin(angle)])).T


def base_pose_errors(
    xs: NDArray, base_quat: NDArray, base_position: NDArray | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """Per node, ``|Log(R_meas^T R_est)|`` [rad] between the recorded (IMU) orientation
    ``base_quat`` ``(n, 4)`` (x, y, z, w) and the estimated base of ``xs`` (free-flyer
    configuration first), and ``|p_est - p_ref|`` [m] when a reference ``(n, 3)`` is given."""
    xs = np.asarray(xs, dtype=float)
    angle = np.empty(xs.shape[0])
    for k, (x, quat) in enumerate(zip(xs, base_quat, strict=True)):
        R_est = pin.Quaternion(x[3:7]).normalized().toRotationMatrix()
        R_meas = pin.Quaternion(np.asarray(quat, float)).normalized().toRotationMatrix()
        angle[k] = np.linalg.norm(pin.log3(R_meas.T @ R_est))
    if base_position is None:
        return angle, None
    return angle, np.linalg.norm(xs[:, :3] - np.asarray(base_position, float), axis=1)


def contact_forces(problem: OEProblem, xs: NDArray, theta: NDArray) -> NDArray[np.float64]:
    """World-frame forces ``(N, n_frames, 3)`` [N] of the ground on each foot of
    ``problem.contacts.frames`` at nodes 0..N-1 (the nodes with a command), computed at the
    states ``xs`` and ``theta`` with the estimator's contact dynamics (eqs. 2-3, Baumgarte
    damping included); zero for a foot not in contact. The impulses of the touch-down reset
    maps are not included. Sets ``theta`` on ``problem.dynamics``."""
    sched, dyn = problem.contacts, problem.dynamics
    if sched is None:
        raise ValueError("the problem has no contact schedule")
    dyn.set_theta(np.asarray(theta, dtype=float))
    forces = np.zeros((problem.horizon, len(sched.frames), 3))
    for k in range(problem.horizon):
        active = sched.active(k)
        if not active:
            continue
        acceleration(problem, k, xs[k])  # node k's contact solve: its forces in lambda_c
        lam = np.asarray(sched.models.get(active)[0].lambda_c).reshape(len(active), 3)
        for name, f in zip(active, lam, strict=True):
            forces[k, sched.frames.index(name)] = f
    return forces


def contact_force_columns(
    t: NDArray, frames: Sequence[str], forces: NDArray
) -> dict[str, NDArray[np.float64]]:
    """``contact_forces.csv`` columns: ``t`` and ``f<x|y|z>_<frame>`` [N], world frame."""
    out = {"t": np.asarray(t, dtype=float)[: forces.shape[0]]}
    for j, name in enumerate(frames):
        out |= {f"f{a}_{name}": forces[:, j, i] for i, a in enumerate("xyz")}
    return out


def wrench_fit(problem: OEProblem, xs: NDArray, ws: NDArray, theta: NDArray) -> dict[str, dict]:
    """Per force/torque sensor, ``{"rms_residual": {axis: ...}, "rms_measured": {axis: ...}}``
    [N, N m] at the estimate, over the nodes that observe it
    (``OEProblem.acceleration_observed``), with the estimator's sensor model (process noise
    included). Sets ``theta`` on ``problem.dynamics``."""
    frames = problem.wrench_frames
    if not frames:
        return {}
    problem.dynamics.set_theta(np.asarray(theta, dtype=float))
    std = np.tile(problem.wrench_std, len(frames))
    nodes = [k for k in range(problem.horizon) if problem.acceleration_observed(k)]
    residual = np.empty((len(nodes), 6 * len(frames)))
    for row, k in enumerate(nodes):
        a = acceleration(problem, k, xs[k])
        residual[row] = problem.wrench_terms(k, xs[k], ws[k], a)[0] * std
    measured = problem.measurements.wrench or {}
    out = {}
    for i, name in enumerate(frames):
        rms = np.sqrt(np.mean(residual[:, 6 * i : 6 * i + 6] ** 2, axis=0))
        scale = np.sqrt(np.mean(np.asarray(measured[name])[nodes] ** 2, axis=0))
        out[name] = {
            "rms_residual": dict(zip(WRENCH_AXES, rms.tolist(), strict=True)),
            "rms_measured": dict(zip(WRENCH_AXES, scale.tolist(), strict=True)),
        }
    return out
