"""The SPOOK stepper (paper A eqs. 2.8-2.19) with viscous friction (F.2), motor (F.3) and dry
friction as an MLCP (eqs. 2.24-2.28, F.4), in maximal coordinates.

Viscous and motor rows are regularised nonholonomic constraints whose multipliers are eliminated
exactly: (F.2) gives ``l_b = -b h D v_{k+1}`` and (F.3) ``l_m = J_s D (v_k - v_{k+1}) + h K u_k``,
so they add ``(h b + J_s) D^T D`` to the mass matrix and ``D^T (J_s D v_k + h K u_k)`` to the
momentum (this also covers ``b = 0``, where ``Sigma = 1/(b h)`` of F.2 would be infinite).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import casadi as ca
import numpy as np

from physid.errors import InputError
from physid.multibody.model.buffered import Buffered
from physid.multibody.model.dynamics import hinge_vectors, step_expressions
from physid.multibody.model.kinematics import (
    np_box_plus,
    np_box_plus_rows,
    np_quat_from_matrices,
    np_quat_from_matrix,
)
from physid.multibody.model.spec import MultibodyModel
from physid.multibody.step.mlcp import BOX_MAX_HINGES, box_friction_velocity, solve_velocity


@dataclass(frozen=True)
class MultibodySimulation:
    """A simulated trajectory: maximal coordinates, joint angles/rates and the control used."""

    t: np.ndarray  # (N,)
    q: np.ndarray  # (N, 7n) [r, e] per body
    v: np.ndarray  # (N, 6n) [v, w] per body, world frame
    angles: np.ndarray  # (N, m)
    rates: np.ndarray  # (N, m)
    u: np.ndarray  # (N, m) control per hinge (zero where no motor)
    constraint_violation: np.ndarray  # (N,) max |g| over the holonomic rows
    lcp_failures: int = 0


def inertia_problem(model: MultibodyModel, chi: np.ndarray) -> str | None:
    """Why parameters ``chi`` cannot be simulated (None: they can): a body with zero mass or a
    singular inertia makes the SPOOK mass matrix singular (an identification can drive one
    there, e.g. a free-swing fit that collapses a body to zero)."""
    for body in model.bodies:
        name = body.name
        mass = chi[model.index(f"{name}.mass")]
        if not mass > 0:
            return f"{name}.mass = {mass:g}: a simulated body needs a positive mass"
        ix, iy, iz, ixy, ixz, iyz = (
            chi[model.index(f"{name}.{k}")] for k in ("Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz")
        )
        inertia = np.array([[ix, ixy, ixz], [ixy, iy, iyz], [ixz, iyz, iz]])
        if not (np.all(np.isfinite(inertia)) and np.linalg.eigvalsh(inertia)[0] > 0):
            return (
                f"{name}.Ixx/Iyy/Izz = {ix:g}/{iy:g}/{iz:g}: a simulated body needs a positive "
                "definite inertia"
            )
    return None


def _require_positive_inertia(model: MultibodyModel, chi: np.ndarray) -> None:
    """One line naming the parameter instead of a LinAlgError from the first step."""
    problem = inertia_problem(model, chi)
    if problem is not None:
        raise InputError(problem)


class Stepper:
    """One model, one step size ``h``: CasADi functions built once, stepped in NumPy."""

    def __init__(self, model: MultibodyModel, h: float, chi: np.ndarray | None = None) -> None:
        self.model, self.h = model, float(h)
        self.chi = model.values.copy() if chi is None else np.asarray(chi, float)
        _require_positive_inertia(model, self.chi)
        nb, m = model.n_bodies, len(model.hinges)
        q, v = ca.SX.sym("q", 7 * nb), ca.SX.sym("v", 6 * nb)
        u, chi_s = ca.SX.sym("u", m), ca.SX.sym("chi", len(model.names))
        ex = step_expressions(model, q, ca.SX.zeros(6 * nb), v, chi_s)
        hv = hinge_vectors(model, chi_s, h)
        omega = ex.D @ v
        M_eff = ex.M + ex.D.T @ ca.diag(h * hv["b"] + hv["Js"]) @ ex.D
        p = ex.M @ v + h * ex.f + ex.D.T @ (hv["Js"] * omega + h * hv["K"] * u)
        a = -4 / h * hv["upsilon"] * ex.g + hv["upsilon"] * (ex.G @ v)
        bound = hv["dry"] + hv["sdelta"] * ca.exp(-hv["sc"] * omega**2)  # eq. 4.1
        constant = h * hv["coulomb"]  # impulse bound of a constant Coulomb torque
        relax = hv["fups"] * omega  # the stick velocity's relaxation target (friction_row)
        outs = [M_eff, p, ex.G, hv["sigma"], a, ex.D, bound, hv["fsig"], constant, relax, ex.g]
        # one flat output (column-major blocks): a single CasADi -> NumPy conversion per step
        self._shapes = [o.shape for o in outs]
        flat = ca.vertcat(*[ca.vec(o) for o in outs])
        self._terms = ca.Function("spook_terms", [q, v, u, chi_s], [flat])
        angle = ca.atan2(ex.angles_cs[:, 1], ex.angles_cs[:, 0])
        self._joint = ca.Function("joint_state", [q, v], [ca.densify(ca.vertcat(angle, omega))])
        self.dry = np.array([hng.has_dry for hng in model.hinges], bool)
        self._mapped: dict[int, Buffered] = {}
        self._joint_maps: dict[int, Buffered] = {}
        pattern = self._terms.sparsity_out(0)
        self._size, self._rows = pattern.size1(), np.array(pattern.row(), int)

    def terms(self, q: np.ndarray, v: np.ndarray, u: np.ndarray) -> list[np.ndarray]:
        """``[M_eff, p, G, Sigma, a, D, r mu, Sigma_t, h tau_c, upsilon_t D v_k, g]`` of eq. 2.26
        at step ``k`` (``upsilon_t``: :func:`physid.multibody.model.dynamics.friction_row`)."""
        batch = self.terms_batch(q[None], v[None], np.asarray(u, float)[None], self.chi[None])
        return [block[0] for block in batch]

    def terms_batch(self, q: np.ndarray, v: np.ndarray, u: np.ndarray, chi: np.ndarray) -> list:
        """:meth:`terms` of ``B`` states at once (rows of ``q`` (B, 7n), ``v``, ``u``, ``chi``
        (B, p)): each block with a leading batch axis, (B, rows) or (B, rows, cols)."""
        B = len(q)
        mapped = self._mapped.get(B)
        if mapped is None:
            mapped = self._mapped[B] = Buffered(self._terms.map(B))
        # evaluated into NumPy memory, structural non-zeros only (272 of 338 entries for the
        # Furuta): a DM's conversion to NumPy cost more than the evaluation itself
        flat = np.zeros((B, self._size))
        flat[:, self._rows] = mapped(q, v, u, chi)[0].reshape(B, -1)
        out, start = [], 0
        for rows, cols in self._shapes:
            block = flat[:, start : start + rows * cols].reshape(B, cols, rows)
            out.append(block[:, 0, :] if cols == 1 else np.swapaxes(block, 1, 2))
            start += rows * cols
        return out

    def step_batch(
        self, q: np.ndarray, v: np.ndarray, u: np.ndarray, chi: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One step of ``B`` independent trajectories, each with its own parameters ``chi``
        (B, p): ``(q_{k+1}, v_{k+1}, ok)``. Steps whose dry hinges carry a constant Coulomb
        torque only go through :func:`physid.multibody.step.mlcp.box_friction_velocity` together;
        the others one by one through Lemke (:meth:`step`'s solver)."""
        M, p, G, sig, a, D, bound, sig_t, constant, relax, _ = self.terms_batch(q, v, u, chi)
        dry = self.dry
        ok = np.ones(len(q), bool)
        # without dry hinges the box has no friction row: its holonomic elimination alone
        box = ~np.any(bound[:, dry], axis=1) & (dry.sum() <= BOX_MAX_HINGES)
        v1 = np.empty_like(v)
        if box.any():
            v1[box], _ = box_friction_velocity(
                M[box],
                p[box],
                G[box],
                sig[box],
                a[box],
                D[box][:, dry],
                constant[box][:, dry],
                sig_t[box][:, dry],
                relax[box][:, dry],
            )
        for i in np.flatnonzero(~box):
            v1[i], _, ok[i] = solve_velocity(
                M[i],
                p[i],
                G[i],
                sig[i],
                a[i],
                D[i],
                bound[i],
                sig_t[i],
                dry,
                constant[i],
                relax[i],
            )
        return np_box_plus_rows(q, self.h * v1), v1, ok

    def step(self, q: np.ndarray, v: np.ndarray, u: np.ndarray) -> tuple:
        """``(q_{k+1}, v_{k+1}, ok, max|g_k|)``: velocity from eq. 2.26, configuration eq. 2.16."""
        M, p, G, sig, a, D, bound, sig_t, constant, relax, g = self.terms(q, v, u)
        v1, _, ok = solve_velocity(M, p, G, sig, a, D, bound, sig_t, self.dry, constant, relax)
        return np_box_plus(q, self.h * v1), v1, ok, float(np.abs(g).max())

    def joint_states(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Joint angles in (-pi, pi] and rates ``n_P.(w_C - w_P)`` for (N, 7n) / (N, 6n) rows."""
        m, n = len(self.model.hinges), len(q)
        mapped = self._joint_maps.get(n)
        if mapped is None:  # built once per row count: the refinement asks every sample step
            mapped = self._joint_maps[n] = Buffered(self._joint.map(n))
        out = mapped(q, v)[0].reshape(n, 2 * m).copy()  # the buffer is the next call's
        return out[:, :m], out[:, m:]


def state_from_joints(
    model: MultibodyModel,
    angles: np.ndarray,
    rates: np.ndarray | None = None,
    data: object | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Maximal coordinates ``(q, v)`` at zero constraint violation from joint angles/rates
    (Pinocchio forward kinematics; bodies in joint order). ``data``: a Pinocchio ``Data`` of
    ``model.pin_model`` to reuse over many calls."""
    import pinocchio as pin

    from physid.multibody.model.build import pin_configuration

    pm = model.pin_model
    data = pm.createData() if data is None else data
    qp = pin_configuration(pm, model.q_slot, np.asarray(angles, float))
    dq = np.zeros(pm.nv) if rates is None else np.asarray(rates, float)
    pin.forwardKinematics(pm, data, qp, dq)
    q, v = [], []
    for i in range(1, pm.njoints):
        lever = pm.inertias[i].lever
        R = data.oMi[i].rotation
        q += [data.oMi[i].act(lever), np_quat_from_matrix(R)]
        w_local, v_local = data.v[i].angular, data.v[i].linear
        v += [R @ (v_local + np.cross(w_local, lever)), R @ w_local]
    return np.concatenate(q), np.concatenate(v)


def configurations_from_joints(model: MultibodyModel, angles: np.ndarray) -> np.ndarray:
    """The ``q`` of :func:`state_from_joints` for every row of ``angles`` (N, m): (N, 7n). One
    Pinocchio forward kinematics per row, the rest vectorised over the rows (a per-row call is
    mostly NumPy overhead on 3-vectors)."""
    import pinocchio as pin

    pm = model.pin_model
    angles = np.asarray(angles, float).reshape(len(angles), -1)
    qp = np.tile(pin.neutral(pm), (len(angles), 1))
    for slot, joint, a in zip(model.q_slot, pm.joints[1:], angles.T, strict=True):
        if joint.nq == 1:
            qp[:, slot] = a
        else:
            qp[:, slot], qp[:, slot + 1] = np.cos(a), np.sin(a)
    nb = pm.njoints - 1
    R, t = np.empty((len(qp), nb, 3, 3)), np.empty((len(qp), nb, 3))
    data = pm.createData()
    for k, qk in enumerate(qp):
        pin.forwardKinematics(pm, data, qk)
        for i in range(nb):
            R[k, i], t[k, i] = data.oMi[i + 1].rotation, data.oMi[i + 1].translation
    q = np.empty((len(qp), nb, 7))
    for i in range(nb):
        q[:, i, :3] = np.einsum("kab,b->ka", R[:, i], pm.inertias[i + 1].lever) + t[:, i]
        q[:, i, 3:] = np_quat_from_matrices(R[:, i])
    return q.reshape(len(qp), 7 * nb)


def simulate(
    model: MultibodyModel,
    h: float,
    n_steps: int,
    q0: np.ndarray,
    v0: np.ndarray,
    u: np.ndarray | None = None,
    chi: np.ndarray | None = None,
    controller: Callable[[int, np.ndarray, np.ndarray], np.ndarray | None] | None = None,
) -> MultibodySimulation:
    """``n_steps`` SPOOK steps from ``(q0, v0)``; ``u`` is (n_steps, m) control per hinge.
    ``controller(k, q_k, v_k)``, if given, returns the control row of step ``k`` (or None to
    keep ``u[k]``); the control used is recorded in ``MultibodySimulation.u``."""
    m = len(model.hinges)
    u = np.zeros((n_steps, m)) if u is None else np.array(u, float).reshape(n_steps, m)
    stepper = Stepper(model, h, chi)
    qs, vs = [np.asarray(q0, float)], [np.asarray(v0, float)]
    violation, failures = [], 0
    for k in range(n_steps):
        if controller is not None:
            row = controller(k, qs[-1], vs[-1])
            u[k] = u[k] if row is None else row
        q1, v1, ok, gmax = stepper.step(qs[-1], vs[-1], u[k])
        failures += not ok
        violation.append(gmax)
        qs.append(q1)
        vs.append(v1)
    q_arr, v_arr = np.array(qs), np.array(vs)
    angles, rates = stepper.joint_states(q_arr, v_arr)
    violation.append(float(np.abs(stepper.terms(q_arr[-1], v_arr[-1], u[-1])[-1]).max()))
    return MultibodySimulation(
        t=h * np.arange(n_steps + 1),
        q=q_arr,
        v=v_arr,
        angles=np.unwrap(angles, axis=0),
        rates=rates,
        u=np.vstack([u, u[-1:]]),
        constraint_violation=np.array(violation),
        lcp_failures=failures,
    )


def energy(model: MultibodyModel, q: np.ndarray, v: np.ndarray, chi: np.ndarray) -> float:
    """Kinetic plus potential energy (nominal gravity direction with the tilt ignored)."""
    total = 0.0
    for b, body in enumerate(model.bodies):
        n = body.name
        mass = chi[model.index(f"{n}.mass")]
        Ixx, Iyy, Izz, Ixy, Ixz, Iyz = (
            chi[model.index(f"{n}.{s}")] for s in ("Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz")
        )
        J = np.array([[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]])
        e = q[7 * b + 3 : 7 * b + 7]
        R = _np_matrix(e)
        w, lin = v[6 * b + 3 : 6 * b + 6], v[6 * b : 6 * b + 3]
        total += 0.5 * mass * lin @ lin + 0.5 * w @ (R @ J @ R.T) @ w
        total -= mass * model.gravity @ q[7 * b : 7 * b + 3]
    return float(total)


def _np_matrix(e: np.ndarray) -> np.ndarray:
    import pinocchio as pin

    return pin.Quaternion(e[0], e[1], e[2], e[3]).normalized().toRotationMatrix()
