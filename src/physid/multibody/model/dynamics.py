"""CasADi expressions of one SPOOK step: mass matrix, forces, hinge constraints and their
multipliers (paper A eqs. 2.3, 2.8-2.11, 2.17-2.18, Appendix F), shared by the simulator
(:mod:`physid.multibody.step.simulate`) and the estimator's inverse dynamics (eqs. 3.7-3.8).

Per hinge the holonomic rows are ``g = [x_P - x_C; n_P.u_C; n_P.w_C]`` (F.1) and the free-axis
row ``D v = n_P.(w_C - w_P)`` carries viscous friction (F.2), the motor (F.3) and dry friction
(F.4). ``G`` is the on-manifold Jacobian of ``g`` (``g_dot = G v``), obtained by differentiating
``g(q [+] d)`` at ``d = 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from physid.multibody.model.kinematics import (
    first_order_exp,
    perturbed_quaternions,
    quat_matrix,
    quat_mul,
)
from physid.multibody.model.spec import MultibodyModel


def _rodrigues(axis: np.ndarray, angle: ca.SX) -> ca.SX:
    K = ca.SX(np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]]))
    return ca.SX.eye(3) + ca.sin(angle) * K + (1 - ca.cos(angle)) * (K @ K)


def _tilt_axes(gravity: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(gravity))
    if not norm > 0.0:  # no gravity (a horizontal or weightless mechanism): no tilt to speak of
        return np.eye(3)[:2]
    g = gravity / norm
    seed = np.eye(3)[int(np.argmin(np.abs(g)))]
    a1 = np.cross(g, seed)
    a1 /= np.linalg.norm(a1)
    return np.stack([a1, np.cross(g, a1)])


@dataclass
class StepExpressions:
    """Symbolic quantities of one step at configuration ``q [+] d`` with velocity ``v``."""

    M: ca.SX  # (6n, 6n) block-diagonal mass matrix, world-frame inertia (eq. 2.3)
    f: ca.SX  # (6n,) gravity and fictitious force -w x J w (eq. 2.3)
    g: ca.SX  # (5m,) holonomic constraint values (F.1)
    G: ca.SX  # (5m, 6n) their Jacobian
    D: ca.SX  # (m, 6n) free-axis rows (F.2-F.4)
    angles_cs: ca.SX  # (m, 2) cos-like and sin-like parts of the joint angles


def slot(model: MultibodyModel, chi: ca.SX, name: str) -> ca.SX:
    return chi[model.index(name)]


def _poses_matrices(
    model: MultibodyModel, q: ca.SX, d: ca.SX, e: ca.SX | None = None
) -> list[tuple[ca.SX, ca.SX]]:
    """Per body ``(r, R)`` at ``q [+] d`` or, with ``e``, at ``(q [+] d) [+] e``."""
    poses = perturbed_quaternions(q, d, model.n_bodies)
    if e is not None:
        poses = [
            (r + e[6 * b : 6 * b + 3], quat_mul(first_order_exp(e[6 * b + 3 : 6 * b + 6]), quat))
            for b, (r, quat) in enumerate(poses)
        ]
    return [(r, quat_matrix(quat)) for r, quat in poses]


def _hinge_values(model: MultibodyModel, poses: list) -> tuple[ca.SX, ca.SX]:
    """``g`` (5 rows per hinge) and the joint angle parts ``(cos, sin)`` per hinge."""
    g_rows, cs = [], []
    for hinge in model.hinges:
        if hinge.parent < 0:
            xP, nP, mP = ca.SX(hinge.p_parent), ca.SX(hinge.axis_parent), ca.SX(hinge.ref_parent)
        else:
            rP, RP = poses[hinge.parent]
            xP = rP + RP @ ca.DM(hinge.p_parent)
            nP, mP = RP @ ca.DM(hinge.axis_parent), RP @ ca.DM(hinge.ref_parent)
        rC, RC = poses[hinge.child]
        xC = rC + RC @ ca.DM(hinge.p_child)
        uC, wC = RC @ ca.DM(hinge.perp_child[0]), RC @ ca.DM(hinge.perp_child[1])
        mC = RC @ ca.DM(hinge.ref_child)
        g_rows += [xP - xC, ca.dot(nP, uC), ca.dot(nP, wC)]
        cs.append(ca.horzcat(ca.dot(mP, mC), ca.dot(nP, ca.cross(mP, mC))))
    return ca.vertcat(*g_rows), ca.vertcat(*cs)


def _free_axis_rows(model: MultibodyModel, poses: list) -> ca.SX:
    nb = model.n_bodies
    rows = []
    for hinge in model.hinges:
        row = ca.SX.zeros(1, 6 * nb)
        if hinge.parent < 0:
            n = ca.SX(hinge.axis_parent)
        else:
            n = poses[hinge.parent][1] @ ca.DM(hinge.axis_parent)
            row[0, 6 * hinge.parent + 3 : 6 * hinge.parent + 6] = -n.T
        row[0, 6 * hinge.child + 3 : 6 * hinge.child + 6] = n.T
        rows.append(row)
    return ca.vertcat(*rows)


def gravity_vector(model: MultibodyModel, chi: ca.SX) -> ca.SX:
    """Gravity ``R(a1, tilt_1) R(a2, tilt_2) g0``: the tilt as two rotations about horizontal
    axes (a smooth 2-parameter version of the paper's tilt quaternion, §4.6)."""
    a1, a2 = _tilt_axes(model.gravity)
    R = _rodrigues(a1, chi[model.index("tilt_1")]) @ _rodrigues(a2, chi[model.index("tilt_2")])
    return R @ ca.DM(model.gravity)


def step_expressions(model: MultibodyModel, q: ca.SX, d: ca.SX, v: ca.SX, chi: ca.SX):
    """The :class:`StepExpressions` at ``q [+] d``."""
    nb = model.n_bodies
    poses = _poses_matrices(model, q, d)
    grav = gravity_vector(model, chi)
    M = ca.SX.zeros(6 * nb, 6 * nb)
    f = []
    for b, body in enumerate(model.bodies):
        n = body.name
        mass = slot(model, chi, f"{n}.mass")
        Ixy, Ixz, Iyz = (slot(model, chi, f"{n}.{s}") for s in ("Ixy", "Ixz", "Iyz"))
        J_body = ca.vertcat(
            ca.horzcat(slot(model, chi, f"{n}.Ixx"), Ixy, Ixz),
            ca.horzcat(Ixy, slot(model, chi, f"{n}.Iyy"), Iyz),
            ca.horzcat(Ixz, Iyz, slot(model, chi, f"{n}.Izz")),
        )
        R = poses[b][1]
        J = R @ J_body @ R.T
        w = v[6 * b + 3 : 6 * b + 6]
        M[6 * b : 6 * b + 3, 6 * b : 6 * b + 3] = mass * ca.SX.eye(3)
        M[6 * b + 3 : 6 * b + 6, 6 * b + 3 : 6 * b + 6] = J
        f += [mass * grav, -ca.cross(w, J @ w)]
    g, cs = _hinge_values(model, poses)
    e = ca.SX.sym("e", 6 * nb)
    g_e, _ = _hinge_values(model, _poses_matrices(model, q, d, e))
    G = ca.substitute(ca.jacobian(g_e, e), e, ca.SX.zeros(6 * nb))
    D = _free_axis_rows(model, poses)
    return StepExpressions(M, ca.vertcat(*f), g, G, D, cs)


def hinge_vectors(model: MultibodyModel, chi: ca.SX, h: float) -> dict[str, ca.SX]:
    """Per-row SPOOK coefficients (eqs. 2.9-2.11) and per-hinge friction/motor coefficients."""
    sigma, upsilon, fdamp = [], [], []
    per = {k: [] for k in ("b", "dry", "sdelta", "sc", "fcomp", "coulomb", "K", "Js")}
    keys = {
        "b": "viscous",
        "dry": "dry",
        "sdelta": "stribeck_delta",
        "sc": "stribeck_c",
        "fcomp": "friction_compliance",
        "coulomb": "coulomb",
        "K": "gain",
        "Js": "shaft_inertia",
    }
    for hinge in model.hinges:
        tau = slot(model, chi, f"{hinge.name}.damping")
        ups = 1 / (1 + 4 * tau / h)
        for eps_name, count in (("compliance_linear", 3), ("compliance_rotational", 2)):
            eps = slot(model, chi, f"{hinge.name}.{eps_name}")
            sigma += [4 * eps * ups / h**2] * count
            upsilon += [ups] * count
        for key, name in keys.items():
            per[key].append(slot(model, chi, f"{hinge.name}.{name}"))
        fdamp.append(slot(model, chi, f"{hinge.name}.friction_damping"))
    out = {"sigma": ca.vertcat(*sigma), "upsilon": ca.vertcat(*upsilon)}
    out.update({k: ca.vertcat(*v) for k, v in per.items()})
    out.update(friction_row(out["fcomp"], ca.vertcat(*fdamp), h))
    return out


def friction_row(fcomp: ca.SX, tau_f: ca.SX, h: float) -> dict[str, ca.SX]:
    """Regularisation of the dry-friction row (the ``Sigma_t`` block of paper A eq. 2.24, F.4)
    with a SPOOK-like relaxation of the stick velocity (the ``Upsilon G v_k`` term of eq. 2.8
    applied to the free axis, as the motor row F.3 carries ``G v_k``):

        D v_{k+1} + Sigma_t l_t = upsilon_t D v_k   while stuck (|l_t| < bound),
        upsilon_t = tau_f / (tau_f + h),  Sigma_t = friction_compliance / (tau_f + h).

    A constant torque ``T`` then creeps at ``friction_compliance * T`` (the steady state, for
    any ``tau_f``) and a stick velocity relaxes with the time constant ``tau_f``
    (``friction_damping``). ``tau_f = 0`` is the instantaneous row of eq. 2.24
    (``Sigma_t = friction_compliance / h``, ``upsilon_t = 0``). MuJoCo's ``frictionloss`` is this
    row with ``tau_f = 1/b`` and ``friction_compliance = R/b`` (its soft-constraint reference
    acceleration ``-b v`` and regulariser ``R``): :func:`mujoco_friction_row`."""
    return {"fups": tau_f / (tau_f + h), "fsig": fcomp / (tau_f + h)}


def mujoco_friction_row(
    inverse_weight: float, timeconst: float = 0.02, dmin: float = 0.9, dmax: float = 0.95
) -> dict[str, float]:
    """``friction_damping`` and ``friction_compliance`` of the row that MuJoCo's default
    ``frictionloss`` constraint integrates (MuJoCo's soft constraints: reference acceleration
    ``-b v`` with ``b = 2 / (dmax timeconst)``, regulariser ``R = (1 - d) / d * A`` with the
    impedance ``d = dmin`` at zero violation and ``A = dof_invweight0``, the inverse of the
    joint's effective inertia at the model's reference pose; ``solreffriction`` /
    ``solimpfriction`` give ``timeconst, dmin, dmax``). Per step MuJoCo solves
    ``v_{k+1} = (1 - h b) v_k - h R f`` while stuck: the creep rate per torque is ``R / b`` and
    the relaxation time ``1 / b``."""
    b = 2.0 / (dmax * timeconst)
    R = (1.0 - dmin) / dmin * inverse_weight
    return {"friction_damping": 1.0 / b, "friction_compliance": R / b}


def dry_masks(model: MultibodyModel) -> np.ndarray:
    """(m, 5m) 0/1 matrix summing each dry hinge's five holonomic rows (U of F.4)."""
    m = len(model.hinges)
    mask = np.zeros((m, 5 * m))
    for j, hinge in enumerate(model.hinges):
        if hinge.has_dry:
            mask[j, 5 * j : 5 * j + 5] = 1.0
    return mask
