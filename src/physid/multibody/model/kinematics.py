"""Symbolic (CasADi SX) rigid-body kinematics on (R^3 x H_1)^n (paper A §2.1, eqs. 2.12-2.16).

Angular velocities are in the world frame, so the configuration update is
``e_{k+1} = exp(h w_{k+1}) * e_k`` (left multiplication; eq. 2.13 written for world-frame
rotation vectors). A tangent perturbation ``d = [dr, dtheta]`` per body enters through the
first-order exponential ``[1, dtheta/2]`` (Appendix D.2: its derivative at ``d = 0`` equals that
of the exact map), so Jacobians with respect to ``d`` at ``d = 0`` are on-manifold Jacobians.
"""

from __future__ import annotations

import casadi as ca
import numpy as np


def quat_mul(a: ca.SX, b: ca.SX) -> ca.SX:
    """Hamilton product ``a * b`` of quaternions ``[w, x, y, z]``."""
    av, bv = a[1:4], b[1:4]
    return ca.vertcat(a[0] * b[0] - ca.dot(av, bv), a[0] * bv + b[0] * av + ca.cross(av, bv))


def quat_conj(e: ca.SX) -> ca.SX:
    return ca.vertcat(e[0], -e[1:4])


def quat_matrix(e: ca.SX) -> ca.SX:
    """Rotation matrix of a quaternion of any non-zero norm (homogeneous form)."""
    w, x, y, z = e[0], e[1], e[2], e[3]
    n = w * w + x * x + y * y + z * z
    return (
        ca.vertcat(
            ca.horzcat(w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)),
            ca.horzcat(2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)),
            ca.horzcat(2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z),
        )
        / n
    )


def first_order_exp(d: ca.SX) -> ca.SX:
    """``[1, d/2]``: the quaternion exponential to first order (App. D.2)."""
    return ca.vertcat(1, d / 2)


def perturbed_quaternions(q: ca.SX, d: ca.SX, n_bodies: int) -> list[tuple[ca.SX, ca.SX]]:
    """Per body ``(r + dr, [1, dtheta/2] * e)`` from stacked ``q`` (7n) and ``d`` (6n)."""
    poses = []
    for b in range(n_bodies):
        r, e = q[7 * b : 7 * b + 3], q[7 * b + 3 : 7 * b + 7]
        dr, dt = d[6 * b : 6 * b + 3], d[6 * b + 3 : 6 * b + 6]
        poses.append((r + dr, quat_mul(first_order_exp(dt), e)))
    return poses


def _atan_ratio(t: ca.SX) -> ca.SX:
    """``atan(sqrt(t)) / sqrt(t)`` for ``t >= 0``, smooth at 0 (series below 1e-8, where the
    closed form's derivative is 0/0; both branches stay finite so no NaN leaks into AD)."""
    safe = ca.fmax(t, 1e-8)
    return ca.if_else(t < 1e-8, 1 - t / 3 + t * t / 5, ca.atan(ca.sqrt(safe)) / ca.sqrt(safe))


def box_minus(q1: ca.SX, q0: ca.SX, n_bodies: int) -> ca.SX:
    """``q1 [-] q0``: translation difference and the exact rotation vector of
    ``e' = e1 * conj(e0)`` (eq. 3.23, world frame), written ``2 (e'_v / e'_s) atan(x) / x`` with
    ``x = |e'_v| / e'_s``: invariant under the sign of ``e'`` and smooth wherever the step turns
    by less than pi (``e'_s != 0``), which is where eq. 3.23's ``arccos`` form is singular.

    The paper's small-angle form ``2 e'_s e'_v`` (eq. 3.24) is ``sin(theta)`` instead of
    ``theta`` along the axis; the simulator steps with the exact exponential (eq. 2.13), so with
    3.24 the residual of an exact simulated trajectory is not zero: where a body turns by a
    tenth of a radian per step, LM started at the truth moves a friction by percents with 3.24,
    and nothing with the exact form."""
    out = []
    for b in range(n_bodies):
        r1, e1 = q1[b][0], q1[b][1]
        r0, e0 = q0[b][0], q0[b][1]
        rel = quat_mul(e1, quat_conj(e0))
        axis = rel[1:4] / rel[0]
        out += [r1 - r0, 2 * axis * _atan_ratio(ca.dot(axis, axis))]
    return ca.vertcat(*out)


# ----------------------------------------------------------------- numeric counterparts (NumPy)


def np_quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a * b`` of quaternions ``[w, x, y, z]`` (NumPy)."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return np.array(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + bw * ax + ay * bz - az * by,
            aw * by + bw * ay + az * bx - ax * bz,
            aw * bz + bw * az + ax * by - ay * bx,
        ]
    )


def np_exp(psi: np.ndarray) -> np.ndarray:
    """Exact quaternion of rotation vector ``psi`` (eq. 2.13)."""
    angle = float(np.linalg.norm(psi))
    if angle < 1e-12:
        return np.concatenate([[1.0], psi / 2])
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * psi / angle])


def np_box_plus(q: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``q [+] d``: translation added, rotation ``exp(dtheta) * e`` (eqs. 2.14, 2.16)."""
    out = q.copy()
    for b in range(len(q) // 7):
        out[7 * b : 7 * b + 3] += d[6 * b : 6 * b + 3]
        e = np_quat_mul(np_exp(d[6 * b + 3 : 6 * b + 6]), q[7 * b + 3 : 7 * b + 7])
        out[7 * b + 3 : 7 * b + 7] = e / np.linalg.norm(e)
    return out


def np_box_plus_rows(Q: np.ndarray, D: np.ndarray) -> np.ndarray:
    """:func:`np_box_plus` of every row of ``Q`` (N, 7n) with the row of ``D`` (N, 6n)."""
    out = Q.copy()
    for b in range(Q.shape[1] // 7):
        out[:, 7 * b : 7 * b + 3] += D[:, 6 * b : 6 * b + 3]
        psi = D[:, 6 * b + 3 : 6 * b + 6]
        angle = np.linalg.norm(psi, axis=1)
        half = 0.5 * angle
        # sin(angle/2)/angle, with its series where the division is inaccurate
        ratio = np.where(
            angle > 1e-6, np.sin(half) / np.maximum(angle, 1e-300), 0.5 - angle**2 / 48
        )
        ew, ev = np.cos(half), ratio[:, None] * psi
        e = Q[:, 7 * b + 3 : 7 * b + 7]
        w, v = e[:, :1], e[:, 1:]
        new = np.column_stack(
            [
                ew * w[:, 0] - np.einsum("ij,ij->i", ev, v),
                ew[:, None] * v + w * ev + np.cross(ev, v),
            ]
        )
        out[:, 7 * b + 3 : 7 * b + 7] = new / np.linalg.norm(new, axis=1, keepdims=True)
    return out


def np_box_minus(q1: np.ndarray, q0: np.ndarray) -> np.ndarray:
    """Exact ``q1 [-] q0`` (eq. 3.23), the rotation vector of ``e1 * conj(e0)``."""
    out = []
    for b in range(len(q1) // 7):
        out.append(q1[7 * b : 7 * b + 3] - q0[7 * b : 7 * b + 3])
        e0 = q0[7 * b + 3 : 7 * b + 7] * np.array([1, -1, -1, -1])
        rel = np_quat_mul(q1[7 * b + 3 : 7 * b + 7], e0)
        rel = rel if rel[0] >= 0 else -rel
        s = np.linalg.norm(rel[1:])
        out.append(np.zeros(3) if s < 1e-15 else 2 * np.arctan2(s, rel[0]) * rel[1:] / s)
    return np.concatenate(out)


def np_box_minus_rows(Q1: np.ndarray, Q0: np.ndarray) -> np.ndarray:
    """:func:`np_box_minus` of every row of ``Q1`` (N, 7n) and ``Q0`` (N, 7n): (N, 6n)."""
    out = np.empty((Q1.shape[0], Q1.shape[1] // 7 * 6))
    for b in range(Q1.shape[1] // 7):
        out[:, 6 * b : 6 * b + 3] = Q1[:, 7 * b : 7 * b + 3] - Q0[:, 7 * b : 7 * b + 3]
        a, e = Q1[:, 7 * b + 3 : 7 * b + 7].T, Q0[:, 7 * b + 3 : 7 * b + 7].T
        rel = np_quat_mul(a, e * np.array([1.0, -1.0, -1.0, -1.0])[:, None])
        rel = np.where(rel[0] >= 0, rel, -rel)
        s = np.linalg.norm(rel[1:], axis=0)
        rot = 2 * np.arctan2(s, rel[0]) * rel[1:] / np.where(s < 1e-15, 1.0, s)
        out[:, 6 * b + 3 : 6 * b + 6] = np.where(s < 1e-15, 0.0, rot).T
    return out


def np_quat_from_matrices(R: np.ndarray) -> np.ndarray:
    """Unit quaternions ``[w, x, y, z]`` (N, 4), ``w >= 0``, of rotation matrices (N, 3, 3):
    Eigen's branch on the trace and the largest diagonal entry (the formula behind
    :func:`np_quat_from_matrix`), vectorised."""
    e = np.empty((R.shape[0], 4))
    trace = R[:, 0, 0] + (R[:, 1, 1] + R[:, 2, 2])  # Eigen's summation order: same bits
    pos = trace > 0
    t = np.sqrt(np.where(pos, trace, 0.0) + 1.0)
    half = 0.5 / t
    e[:, 0] = 0.5 * t
    e[:, 1] = (R[:, 2, 1] - R[:, 1, 2]) * half
    e[:, 2] = (R[:, 0, 2] - R[:, 2, 0]) * half
    e[:, 3] = (R[:, 1, 0] - R[:, 0, 1]) * half
    n = np.flatnonzero(~pos)  # turned more than 120 deg from the reference
    d = R[n][:, [0, 1, 2], [0, 1, 2]]
    i = np.where(d[:, 1] > d[:, 0], 1, 0)
    i = np.where(d[:, 2] > d[np.arange(len(n)), i], 2, i)
    j, k = (i + 1) % 3, (i + 2) % 3
    t = np.sqrt(R[n, i, i] - R[n, j, j] - R[n, k, k] + 1.0)
    half = 0.5 / t
    e[n, 1 + i] = 0.5 * t
    e[n, 0] = (R[n, k, j] - R[n, j, k]) * half
    e[n, 1 + j] = (R[n, j, i] + R[n, i, j]) * half
    e[n, 1 + k] = (R[n, k, i] + R[n, i, k]) * half
    return np.where(e[:, :1] >= 0, e, -e)


def np_quat_from_matrix(R: np.ndarray) -> np.ndarray:
    """Unit quaternion ``[w, x, y, z]`` of a rotation matrix."""
    import pinocchio as pin

    c = pin.Quaternion(R).coeffs()  # x, y, z, w
    e = np.array([c[3], c[0], c[1], c[2]])
    return e if e[0] >= 0 else -e
