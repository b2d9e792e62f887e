"""Contact dynamics (paper B eqs. 2-3) and impulse reset maps, parametrized by theta.

A contact set is a tuple of foot frame names, each a rigid point contact (3D, the foot point
does not accelerate, eq. 3). One time step of a contact phase is the semi-implicit Euler step
of :mod:`physid.oe.model.dynamics` with the constrained acceleration of ``pin.constraintDynamics``::

    [M  Jc^T] [ a      ]   [tau - h              ]
    [Jc  0  ] [-lambda ] = [-Jc_dot v - Kd Jc v  ]              (eqs. 2-3)

``Kd`` (``damping``, 1/s, default 0: eq. 3 as printed) is Pinocchio's Baumgarte velocity gain,
the ``a_c(q, v)`` of eq. 3 as Crocoddyl's contact models define it: a foot velocity in contact
decays like ``exp(-Kd t)`` instead of being carried. There is no position gain: its reference
(the foot's touch-down point) is a function of an earlier node's state, which would couple
non-adjacent nodes and break the Markov structure the Riccati recursion relies on.

Round feet: with a foot radius r the contact point of node k is not the
foot frame's origin (the sphere's centre) but the sphere's lowest point at node k, the material
point ``R_foot(q_k)^T (0, 0, -r)`` in the foot frame, where MuJoCo and the floor push on a
soft foot. It is fixed per node from the recorded configuration (encoders and IMU), as data:
the point moves along the sole from node to node as the foot rolls, and the derivatives stay
exact (:meth:`ContactModels.set_points`).

Soft feet (``dyn.soft``, :mod:`physid.oe.model.compliance`): a compliance per row ``C_rows``
puts ``-diag(C_rows)`` in the KKT matrix's lower right block (the foot yields under its
force) and a spring of time constant ``tau`` returns its height to the floor's
(``ContactModels.ground``) as Pinocchio's Baumgarte position gain; a soft foot lands without
an impulse (the spring-damper stops it), so the reset map below is the rigid contact's only
(:mod:`physid.oe.model.phases`).

The reset map at touch-down is ``pin.impulseDynamics`` (perfectly plastic impact of every foot
of the new contact set): ``M (v+ - v) = Jc^T Lambda``, ``Jc v+ = 0``, q unchanged.

Derivatives with respect to (q, v, tau) come from Pinocchio's analytical
``computeConstraintDynamicsDerivatives`` / ``computeImpulseDynamicsDerivatives``; with respect
to theta from the same KKT matrix (eq. 18) with ``dtau/dtheta = Y(q, v, a) dpi/dtheta``, and for
the impulse ``(Y(q, 0, v+ - v) - Y(q, 0, 0)) dpi/dtheta`` (eq. 19). The KKT matrix is inverted
through its Schur complement ``Jc M^-1 Jc^T`` with M's Cholesky factor, as in the paper.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin
import scipy.linalg as sla
from numpy.typing import NDArray

from physid.errors import InputError
from physid.oe.model.dynamics import ParametrizedModel

_PROX = pin.ProximalSettings(1e-12, 0.0, 1)


class ContactModels:
    """Pinocchio rigid-constraint models and work data, one set per contact combination."""

    def __init__(self, model: pin.Model, frames: Sequence[str], damping: float = 0.0) -> None:
        self.model = model
        self.frames = tuple(frames)
        for name in self.frames:
            if not model.existFrame(name):
                raise InputError(f"no frame named {name!r} in the model", source="contacts")
        if not (np.isfinite(damping) and damping >= 0.0):
            raise InputError(f"contact damping must be >= 0 [1/s], got {damping!r}")
        self.damping = float(damping)
        self.ground = 0.0  # [m] the floor's height h of a soft contact (compliance module)
        self._cache: dict[tuple[str, ...], tuple] = {}
        self._points: dict[str, NDArray[np.float64]] = {}
        self.work = model.createData()  # the soft contact's drift (kinematics only)

    def set_points(self, points: dict[str, NDArray] | None) -> None:
        """Contact points [m] in each foot frame (default its origin) for the next calls of
        :meth:`get`: a node's rolling contact point (module docstring)."""
        self._points = {} if points is None else points

    def get(self, active: tuple[str, ...]) -> tuple:
        """``(data, constraint_models, constraint_datas)`` for the contact set ``active``."""
        if active not in self._cache:
            model = self.model
            cms = pin.StdVec_RigidConstraintModel()
            for name in active:
                frame = model.frames[model.getFrameId(name)]
                cm = pin.RigidConstraintModel(
                    pin.ContactType.CONTACT_3D,
                    model,
                    frame.parentJoint,
                    frame.placement,
                    pin.LOCAL_WORLD_ALIGNED,
                )
                gains = cm.m_baumgarte_parameters
                gains.Kp, gains.Kd = 0.0, self.damping
                cm.setBaumgarteCorrectorParameters(gains)
                cms.append(cm)
            cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
            data = model.createData()
            pin.initConstraintDynamics(model, data, cms, cds)
            self._cache[active] = (data, cms, cds)
        data, cms, cds = self._cache[active]
        if self._points:
            for name, cm in zip(active, cms, strict=True):
                frame = self.model.frames[self.model.getFrameId(name)]
                offset = pin.SE3(np.eye(3), self._points.get(name, np.zeros(3)))
                cm.joint1_placement = frame.placement * offset
        return data, cms, cds


def _mass_matrix(model: pin.Model, data: pin.Data, q: NDArray) -> NDArray[np.float64]:
    """The joint-space inertia matrix at ``q``, both triangles (Pinocchio's CRBA fills the upper
    one)."""
    M = pin.crba(model, data, q)
    return np.triu(M) + np.triu(M, 1).T


def _kkt_solve(  # noqa: ANN202
    model: pin.Model, data: pin.Data, q: NDArray, Jc: NDArray, rhs: NDArray, compliance=0.0
):
    """Top block of ``[[M, Jc^T], [Jc, -diag(C)]]^-1 [rhs; 0]`` by the Schur complement (eq. 18;
    ``compliance`` a scalar or one value per row, 0: rigid)."""
    M = _mass_matrix(model, data, q)
    chol = sla.cho_factor(M, lower=True, check_finite=False)
    Minv_rhs = sla.cho_solve(chol, rhs, check_finite=False)
    if Jc.shape[0] == 0:
        return Minv_rhs
    Minv_JT = sla.cho_solve(chol, Jc.T, check_finite=False)
    S = Jc @ Minv_JT + np.diag(np.broadcast_to(compliance, (Jc.shape[0],)))
    return Minv_rhs - Minv_JT @ np.linalg.solve(S, Jc @ Minv_rhs)


def _kkt_matrix(model: pin.Model, data: pin.Data, q: NDArray, Jc: NDArray, compliance):  # noqa: ANN001, ANN202
    """``[[M, Jc^T], [Jc, -diag(C)]]`` (dense: nv + 3 feet is small; ``compliance`` a scalar
    or one value per row)."""
    M = _mass_matrix(model, data, q)
    nc = Jc.shape[0]
    return np.block([[M, Jc.T], [Jc, -np.diag(np.broadcast_to(compliance, (nc,)))]])


def _drift(contacts: ContactModels, cms, q, v, derivatives: bool):  # noqa: ANN001, ANN202
    """``gamma = Jc_dot v`` ``(3 n,)`` in the world's axes, the contact points' classical
    acceleration at ``a = 0``, and with ``derivatives`` ``(d gamma/dq, d gamma/dv)`` ``(3 n,
    nv)`` each (Pinocchio's LOCAL point derivatives rotated to the world, ``d(R g_l) = R (dg_l
    - g_l x dtheta)``, as :func:`feet_velocity`); ``None`` for them otherwise."""
    model, data = contacts.model, contacts.work
    zero = np.zeros(model.nv)
    if derivatives:
        pin.computeForwardKinematicsDerivatives(model, data, q, v, zero)
        g_q, g_v = np.zeros((3 * len(cms), model.nv)), np.zeros((3 * len(cms), model.nv))
    else:
        pin.forwardKinematics(model, data, q, v, zero)
        g_q = g_v = None
    gamma = np.zeros(3 * len(cms))
    for i, cm in enumerate(cms):
        rows, joint, placement = slice(3 * i, 3 * i + 3), cm.joint1_id, cm.joint1_placement
        vel, acc, p = data.v[joint], data.a[joint], placement.translation
        point_v = vel.linear + np.cross(vel.angular, p)
        point_a = acc.linear + np.cross(acc.angular, p) + np.cross(vel.angular, point_v)
        gamma[rows] = data.oMi[joint].rotation @ point_a
        if derivatives:
            _, da_dq, da_dv, _ = pin.getPointClassicAccelerationDerivatives(
                model, data, joint, placement, pin.LOCAL
            )
            R = data.oMi[joint].rotation @ placement.rotation
            omega = placement.rotation.T @ pin.getJointJacobian(model, data, joint, pin.LOCAL)[3:]
            g_q[rows] = R @ (da_dq - pin.skew(R.T @ gamma[rows]) @ omega)
            g_v[rows] = R @ da_dv
    return gamma, g_q, g_v


def _soft_solve(dyn: ParametrizedModel, contacts: ContactModels, active, q, v, tau):  # noqa: ANN001, ANN202
    """``(a, lambda, e, Jc)`` of the soft contact (:mod:`physid.oe.model.compliance`) from
    Pinocchio's rigid solve ``(a0, lambda0)`` with the spring's gains: the two KKT systems'
    right-hand sides differ by MuJoCo's dropped drift ``[0; gamma]`` (none with
    ``soft.drift``), so ``(A + diag C_rows) lambda = A lambda0 + gamma`` with ``A = Jc M^-1
    Jc^T`` and ``a = a0 + M^-1 Jc^T (lambda - lambda0)`` (a compliance per row, which
    Pinocchio's proximal solver with its one scalar cannot take). ``lambda`` is left in
    ``data.lambda_c``."""
    model = dyn.model
    data, cms, cds = contacts.get(active)
    e = _soft_gains(dyn, contacts, active, q)
    a0 = pin.constraintDynamics(model, data, q, v, tau, cms, cds, _PROX).copy()
    lam0 = data.lambda_c.copy()
    Jc = _jacobian(model, data, cms, cds)
    M = _mass_matrix(model, data, q)
    Minv_JT = sla.cho_solve(sla.cho_factor(M, lower=True, check_finite=False), Jc.T)
    A = Jc @ Minv_JT
    rhs = A @ lam0
    if not dyn.soft.drift:
        rhs += _drift(contacts, cms, q, v, False)[0]
    lam = np.linalg.solve(A + np.diag(dyn.soft.row_compliance(len(cms))), rhs)
    data.lambda_c[:] = lam
    return a0 + Minv_JT @ (lam - lam0), lam, e, Jc


def _soft_gains(dyn: ParametrizedModel, contacts: ContactModels, active, q) -> NDArray:  # noqa: ANN001
    """Sets the soft contact's spring on the constraint models of ``active`` at ``q``
    (:mod:`physid.oe.model.compliance`: ``Kp e`` as Pinocchio's position gain about the
    anchor ``(p_x, p_y, h)``, the velocity gain ``damping + Kd``); returns the points' height
    errors ``e`` stacked ``(3 n,)``."""
    model = dyn.model
    data, cms, _ = contacts.get(active)
    kp, kd = dyn.soft.gains()
    pin.forwardKinematics(model, data, q)
    errors = np.zeros(3 * len(cms))
    for i, cm in enumerate(cms):
        point = data.oMi[cm.joint1_id].act(cm.joint1_placement).translation
        errors[3 * i + 2] = point[2] - contacts.ground
        cm.joint2_placement = pin.SE3(np.eye(3), np.array([point[0], point[1], contacts.ground]))
        gains = cm.m_baumgarte_parameters
        gains.Kp, gains.Kd = kp, contacts.damping + kd
        cm.setBaumgarteCorrectorParameters(gains)
    return errors


def _soft_state_derivatives(  # noqa: ANN202
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], q, v, tau
):
    """``(a, da/dq, da/dv, Jc, lambda, e)`` of the soft contact (module docstring of
    :mod:`physid.oe.model.compliance`): Pinocchio's rigid derivatives of the same motion
    held by a unit position gain about the anchor ``p - Kp e - C_rows lambda + gamma``
    (MuJoCo's rule, no drift; without ``gamma`` under ``soft.drift``), mapped through ``K_C^-1
    (K_0 z_0 + [0; Jc - Kp P_z Jc + d gamma])``."""
    model, nv = dyn.model, dyn.model.nv
    kp = dyn.soft.gains()[0]
    data, cms, cds = contacts.get(active)
    a, lam, e, _ = _soft_solve(dyn, contacts, active, q, v, tau)
    C = dyn.soft.row_compliance(len(cms))
    gamma = g_q = g_v = None
    if not dyn.soft.drift:
        gamma, g_q, g_v = _drift(contacts, cms, q, v, True)
    for i, cm in enumerate(cms):
        rows = slice(3 * i, 3 * i + 3)
        point = data.oMi[cm.joint1_id].act(cm.joint1_placement).translation
        anchor = point - kp * e[rows] - C[rows] * lam[rows]
        cm.joint2_placement = pin.SE3(np.eye(3), anchor if gamma is None else anchor + gamma[rows])
        gains = cm.m_baumgarte_parameters
        gains.Kp = 1.0
        cm.setBaumgarteCorrectorParameters(gains)
    pin.constraintDynamics(model, data, q, v, tau, cms, cds, _PROX)
    d = pin.computeConstraintDynamicsDerivatives(model, data, cms, cds, _PROX)
    Jc = _jacobian(model, data, cms, cds)
    K0 = _kkt_matrix(model, data, q, Jc, 0.0)
    KC = K0.copy()
    KC[nv:, nv:] = -np.diag(C)
    spring = Jc.copy()
    spring[2::3] *= 1.0 - kp  # the anchor's unit gain out, the spring's Kp on the heights in
    z_q = K0 @ np.vstack([d[0], -d[3]])
    z_q[nv:] += spring
    z_v = K0 @ np.vstack([d[1], -d[4]])
    if gamma is not None:  # the rigid problem's drift, which MuJoCo's contact does not have
        z_q[nv:] += g_q
        z_v[nv:] += g_v
    z = np.linalg.solve(KC, np.hstack([z_q, z_v]))
    return a, z[:nv, :nv], z[:nv, nv:], Jc, lam, e


def _soft_columns(dyn: ParametrizedModel, data: pin.Data, q, v, Jc, lam, e):  # noqa: ANN001, ANN202
    """``d a / d (log C, log tau, log rho)`` ``(nv, 3)``: ``K_C z = [tau - h; -gamma - Kd v_c -
    Kp e]`` with ``z = [a; -lambda]``; ``dK_C/dlog C = [[0, 0], [0, -diag C_rows]]`` gives
    ``[0; -C_rows lambda]``, ``log rho`` the same on the tangential rows only, ``dKp/dlog tau
    = -2 Kp`` and ``dKd/dlog tau = -2/tau`` give ``[0; 2/tau v_c + 2 Kp e]``."""
    soft, nv, n = dyn.soft, dyn.model.nv, Jc.shape[0] // 3
    kp = soft.gains()[0]
    K = _kkt_matrix(dyn.model, data, q, Jc, soft.row_compliance(n))
    rhs = np.zeros((nv + Jc.shape[0], 3))
    rhs[nv:, 0] = -soft.row_compliance(n) * lam
    rhs[nv:, 1] = 2.0 / soft.time_constant * (Jc @ v) + 2.0 * kp * e
    rhs[nv:, 2] = -soft.tangential_rows(n) * lam
    return np.linalg.solve(K, rhs)[:nv]


def _jacobian(model: pin.Model, data: pin.Data, cms, cds) -> NDArray[np.float64]:  # noqa: ANN001
    if len(cms) == 0:
        return np.zeros((0, model.nv))
    return pin.getConstraintsJacobian(model, data, cms, cds)


def contact_acceleration(
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], q, v, tau
) -> NDArray[np.float64]:  # noqa: ANN001
    """``a`` of eqs. 2-3 (``lambda`` stays in ``data.lambda_c``)."""
    if not active:
        return pin.aba(dyn.model, dyn.data, q, v, tau).copy()
    if not dyn.soft.rigid:
        return _soft_solve(dyn, contacts, active, q, v, tau)[0]
    data, cms, cds = contacts.get(active)
    return pin.constraintDynamics(dyn.model, data, q, v, tau, cms, cds, _PROX).copy()


def contact_step(
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], x: NDArray, u
) -> NDArray[np.float64]:  # noqa: ANN001
    """One semi-implicit Euler step of the contact phase ``active`` (eqs. 2-3, 16)."""
    nq = dyn.model.nq
    a = contact_acceleration(dyn, contacts, active, x[:nq], x[nq:], dyn.tau(x, u))
    return dyn.euler_step(x, a)


def contact_acceleration_derivatives(
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], x: NDArray, u
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:  # noqa: ANN001
    """``(a, da/dx (nv, 2 nv), da/dtheta)`` of eqs. 2-3; da/dtheta by eq. 18, and the joint
    friction's ``dtau/dv`` through the same KKT matrix; with a compliance (module docstring)
    the compliant KKT matrix's, and an estimated compliance's column ``C d a / d C``."""
    if not active:
        return dyn.free_acceleration_derivatives(x, u)
    model, nq = dyn.model, dyn.model.nq
    q, v = x[:nq], x[nq:]
    data, cms, cds = contacts.get(active)
    tau = dyn.tau(x, u)
    C = dyn.soft.row_compliance(len(active))
    if dyn.soft.rigid:
        a = pin.constraintDynamics(model, data, q, v, tau, cms, cds, _PROX).copy()
        derivatives = pin.computeConstraintDynamicsDerivatives(model, data, cms, cds, _PROX)
        da_dx = np.hstack([derivatives[0], derivatives[1]])
        Jc = _jacobian(model, data, cms, cds)
    else:
        a, da_dq, da_dv, Jc, lam, e = _soft_state_derivatives(dyn, contacts, active, q, v, tau)
        da_dx = np.hstack([da_dq, da_dv])
    friction = dyn.friction_dv(x, a)
    if friction is not None:
        da_dx[:, model.nv :] += _kkt_solve(model, data, q, Jc, friction, C)
    da_dtheta = -_kkt_solve(model, data, q, Jc, dyn.torque_theta_jacobian(q, v, a), C)
    if dyn.n_soft:
        da_dtheta[:, -3:] = _soft_columns(dyn, data, q, v, Jc, lam, e)
    return a, da_dx, da_dtheta


def contact_step_derivatives(
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], x: NDArray, u
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:  # noqa: ANN001
    """``(f, df/dx, df/dtheta)`` of :func:`contact_step`."""
    accel = contact_acceleration_derivatives(dyn, contacts, active, x, u)
    return dyn.euler_derivatives(x, *accel)


def impulse(
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], x: NDArray
) -> NDArray[np.float64]:
    """Reset map Delta at touch-down: ``(q, v) -> (q, v+)`` with every foot of ``active`` at
    rest after the (plastic) impact."""
    model, nq = dyn.model, dyn.model.nq
    data, cms, cds = contacts.get(active)
    dyn.rigid()
    v_plus = pin.impulseDynamics(model, data, x[:nq], x[nq:], cms, cds, 0.0, _PROX)
    return np.concatenate([x[:nq], v_plus])


def impulse_derivatives(
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], x: NDArray
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(Delta, dDelta/dx, dDelta/dtheta)``; the theta part by eqs. 18-19."""
    model, nq, nv = dyn.model, dyn.model.nq, dyn.model.nv
    q, v = x[:nq], x[nq:]
    data, cms, cds = contacts.get(active)
    dyn.rigid()
    v_plus = pin.impulseDynamics(model, data, q, v, cms, cds, 0.0, _PROX).copy()
    pin.computeImpulseDynamicsDerivatives(model, data, cms, cds, 0.0, _PROX)
    Fx = np.zeros((2 * nv, 2 * nv))
    Fx[:nv, :nv] = np.eye(nv)
    Fx[nv:, :nv] = data.ddq_dq
    Fx[nv:, nv:] = data.ddq_dv + np.eye(nv)  # Pinocchio returns d(v+ - v)/dv
    Jc = _jacobian(model, data, cms, cds)
    zero = np.zeros(nv)
    jump = dyn.torque_theta_jacobian(q, zero, v_plus - v, friction=False)
    dtau = jump - dyn.torque_theta_jacobian(q, zero, zero, friction=False)
    Ft = np.zeros((2 * nv, dyn.n_theta))
    Ft[nv:] = -_kkt_solve(model, data, q, Jc, dtau)
    return np.concatenate([q, v_plus]), Fx, Ft


def feet_velocity(
    model: pin.Model, data: pin.Data, frames: Sequence[str], x: NDArray, jacobian: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """World linear velocities of the frames' origins ``(3 n,)`` at the state ``x`` and, if
    asked, their Jacobian ``(3 n, 2 nv)`` in the tangent space (``pin`` velocity derivatives).

    The no-slip observation of :class:`physid.oe.model.measurements.NoiseStd` ``foot_velocity``:
    a foot in contact does not move, up to a slip of that standard deviation per node."""
    nq, nv = model.nq, model.nv
    q, v = x[:nq], x[nq:]
    ids = [model.getFrameId(f) for f in frames]
    if not jacobian:
        pin.forwardKinematics(model, data, q, v)
        r = [pin.getFrameVelocity(model, data, i, pin.LOCAL_WORLD_ALIGNED).linear for i in ids]
        return (np.concatenate(r) if r else np.zeros(0)), None
    # LOCAL derivatives rotated to the world: Pinocchio 4.1's LOCAL_WORLD_ALIGNED velocity
    # derivative is not the derivative of the world velocity of the point (it moves with a
    # base translation, as central differences show)
    pin.computeForwardKinematicsDerivatives(model, data, q, v, np.zeros(nv))
    pin.updateFramePlacements(model, data)
    r, J = np.empty(3 * len(ids)), np.zeros((3 * len(ids), 2 * nv))
    for n, i in enumerate(ids):
        rows = slice(3 * n, 3 * n + 3)
        R = data.oMf[i].rotation
        local = pin.getFrameVelocity(model, data, i, pin.LOCAL).linear
        dv_dq, dv_dv = pin.getFrameVelocityDerivatives(model, data, i, pin.LOCAL)
        # d(R v_l) = R (dv_l - v_l x dtheta), dtheta = the frame's angular Jacobian (LOCAL)
        r[rows] = R @ local
        J[rows, :nv] = R @ (dv_dq[:3] - pin.skew(local) @ dv_dv[3:])
        J[rows, nv:] = R @ dv_dv[:3]
    return r, J
