"""Contact dynamics (paper B eqs. 2-3) and impulse reset maps, parametrized by theta.

A contact set is a tuple of foot frame names, each a rigid point contact (3D, the foot point
does not accelerate, eq. 3, no Baumgarte term). One time step of a contact phase is the
semi-implicit Euler step of :mod:`physid.oe.dynamics` with the constrained acceleration of
``pin.constraintDynamics``::

    [M  Jc^T] [ a      ]   [tau - h    ]
    [Jc  0  ] [-lambda ] = [-Jc_dot v  ]                       (eqs. 2-3)

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
from physid.oe.dynamics import ParametrizedModel

_PROX = pin.ProximalSettings(1e-12, 0.0, 1)


class ContactModels:
    """Pinocchio rigid-constraint models and work data, one set per contact combination."""

    def __init__(self, model: pin.Model, frames: Sequence[str]) -> None:
        self.model = model
        self.frames = tuple(frames)
        for name in self.frames:
            if not model.existFrame(name):
                raise InputError(f"no frame named {name!r} in the model", source="contacts")
        self._cache: dict[tuple[str, ...], tuple] = {}

    def get(self, active: tuple[str, ...]) -> tuple:
        """``(data, constraint_models, constraint_datas)`` for the contact set ``active``."""
        if active not in self._cache:
            model = self.model
            cms = pin.StdVec_RigidConstraintModel()
            for name in active:
                frame = model.frames[model.getFrameId(name)]
                cms.append(
                    pin.RigidConstraintModel(
                        pin.ContactType.CONTACT_3D,
                        model,
                        frame.parentJoint,
                        frame.placement,
                        pin.LOCAL_WORLD_ALIGNED,
                    )
                )
            cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
            data = model.createData()
            pin.initConstraintDynamics(model, data, cms, cds)
            self._cache[active] = (data, cms, cds)
        return self._cache[active]


def _kkt_solve(model: pin.Model, data: pin.Data, q: NDArray, Jc: NDArray, rhs: NDArray):  # noqa: ANN202
    """Top block of ``[[M, Jc^T], [Jc, 0]]^-1 [rhs; 0]`` by the Schur complement (eq. 18)."""
    M = pin.crba(model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    chol = sla.cho_factor(M, lower=True, check_finite=False)
    Minv_rhs = sla.cho_solve(chol, rhs, check_finite=False)
    if Jc.shape[0] == 0:
        return Minv_rhs
    Minv_JT = sla.cho_solve(chol, Jc.T, check_finite=False)
    S = Jc @ Minv_JT
    return Minv_rhs - Minv_JT @ np.linalg.solve(S, Jc @ Minv_rhs)


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
    data, cms, cds = contacts.get(active)
    return pin.constraintDynamics(dyn.model, data, q, v, tau, cms, cds, _PROX).copy()


def contact_step(
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], x: NDArray, u
) -> NDArray[np.float64]:  # noqa: ANN001
    """One semi-implicit Euler step of the contact phase ``active`` (eqs. 2-3, 16)."""
    nq = dyn.model.nq
    q, v = x[:nq], x[nq:]
    a = contact_acceleration(dyn, contacts, active, q, v, dyn.actuation @ u)
    v1 = v + dyn.dt * a
    return np.concatenate([pin.integrate(dyn.model, q, dyn.dt * v1), v1])


def contact_step_derivatives(
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], x: NDArray, u
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:  # noqa: ANN001
    """``(f, df/dx, df/dtheta)`` of :func:`contact_step`; da/dtheta by eq. 18."""
    if not active:
        return dyn.free_step_derivatives(x, u)
    model, nq = dyn.model, dyn.model.nq
    q, v = x[:nq], x[nq:]
    data, cms, cds = contacts.get(active)
    a = pin.constraintDynamics(model, data, q, v, dyn.actuation @ u, cms, cds, _PROX).copy()
    derivatives = pin.computeConstraintDynamicsDerivatives(model, data, cms, cds, _PROX)
    da_dq, da_dv = derivatives[0].copy(), derivatives[1].copy()
    Jc = _jacobian(model, data, cms, cds)
    da_dtheta = -_kkt_solve(model, data, q, Jc, dyn.torque_theta_jacobian(q, v, a))
    return dyn._euler(q, v, a, da_dq, da_dv, da_dtheta)


def impulse(
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], x: NDArray
) -> NDArray[np.float64]:
    """Reset map Delta at touch-down: ``(q, v) -> (q, v+)`` with every foot of ``active`` at
    rest after the (plastic) impact."""
    model, nq = dyn.model, dyn.model.nq
    data, cms, cds = contacts.get(active)
    v_plus = pin.impulseDynamics(model, data, x[:nq], x[nq:], cms, cds, 0.0, _PROX)
    return np.concatenate([x[:nq], v_plus])


def impulse_derivatives(
    dyn: ParametrizedModel, contacts: ContactModels, active: tuple[str, ...], x: NDArray
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(Delta, dDelta/dx, dDelta/dtheta)``; the theta part by eqs. 18-19."""
    model, nq, nv = dyn.model, dyn.model.nq, dyn.model.nv
    q, v = x[:nq], x[nq:]
    data, cms, cds = contacts.get(active)
    v_plus = pin.impulseDynamics(model, data, q, v, cms, cds, 0.0, _PROX).copy()
    pin.computeImpulseDynamicsDerivatives(model, data, cms, cds, 0.0, _PROX)
    Fx = np.zeros((2 * nv, 2 * nv))
    Fx[:nv, :nv] = np.eye(nv)
    Fx[nv:, :nv] = data.ddq_dq
    Fx[nv:, nv:] = data.ddq_dv + np.eye(nv)  # Pinocchio returns d(v+ - v)/dv
    Jc = _jacobian(model, data, cms, cds)
    zero = np.zeros(nv)
    dtau = dyn.torque_theta_jacobian(q, zero, v_plus - v) - dyn.torque_theta_jacobian(q, zero, zero)
    Ft = np.zeros((2 * nv, dyn.n_theta))
    Ft[nv:] = -_kkt_solve(model, data, q, Jc, dtau)
    return np.concatenate([q, v_plus]), Fx, Ft
