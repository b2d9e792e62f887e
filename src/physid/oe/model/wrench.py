"""Six-axis force/torque sensor observation, an ``h(x; theta | u)`` of paper B eq. 1.

A sensor named by a frame F of the model measures the wrench that F's parent joint J transmits
from J's parent body to J's whole subtree, expressed in F (force [N] then torque [N m], about
F's origin). By Newton-Euler this is what the subtree's motion requires::

    f_J = sum_{b in subtree(J)} X*_{J<-b} (I_b a_b + v_b x* I_b v_b)    (gravity in a_b, RNEA)

so at node k it depends on the state and, through the node's acceleration
``a_k = a(x_k, u_k; theta)`` (free or contact dynamics, eqs. 2-3, 17-18), on the parameters:
it is the one observation of physid.oe with a ``theta`` Jacobian.

Derivatives are Pinocchio's analytical RNEA derivatives on an *augmented* copy of the model in
which a 6-DoF free-flyer joint, held at the identity, is inserted between J and its body: the
generalized force of that joint is ``f_J`` in J's frame (``tau = S^T f``, ``S = I``), and
``computeRNEADerivatives`` gives its derivatives with respect to every original (q, v, a);
``computeJointTorqueRegressor`` gives its (linear) dependence on the bodies' inertial
parameters. A subtree that holds a contact frame would also carry the contact force; that
case is refused. Pinocchio merges bodies joined by fixed joints, so a sensor frame on J's
child body still measures the whole body (a flange sensor between a link and a tool sees
the link too): model the part beyond the sensor as its own body to separate them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError
from physid.oe.model.dynamics import ParametrizedModel
from physid.oe.model.measurements import base_dofs
from physid.recordings.tables import FORCE_TORQUE_AXES

WRENCH_AXES = FORCE_TORQUE_AXES  # the ft_<frame>_<axis> columns' axes (recordings.tables)


def _subtree(model: pin.Model, joint_id: int) -> set[int]:
    ids = {joint_id}
    for i in range(joint_id + 1, model.njoints):
        if model.parents[i] in ids:
            ids.add(i)
    return ids


def unsupported_sensor(
    model: pin.Model, name: str, contact_frames: Sequence[str] = ()
) -> str | None:
    """Why a sensor at frame ``name`` cannot be modelled (one line naming it), or None."""
    if not model.existFrame(name):
        return f"force/torque sensor {name!r}: no such frame in the model"
    joint = int(model.frames[model.getFrameId(name)].parentJoint)
    if joint == 0 or (joint == 1 and base_dofs(model)[1]):
        where = "world" if joint == 0 else "base"
        return (
            f"force/torque sensor {name!r} sits on the {where}: "
            "nothing transmits a measurable wrench there"
        )
    subtree = _subtree(model, joint)
    for contact in contact_frames:
        if model.frames[model.getFrameId(contact)].parentJoint in subtree:
            return (
                f"force/torque sensor {name!r}: contact frame {contact!r} is beyond it "
                "(a wrench with contact forces is not modelled)"
            )
    return None


class WrenchSensor:
    """The augmented model of one sensor (frame ``name``) and the maps into it."""

    def __init__(self, model: pin.Model, name: str, contact_frames: Sequence[str] = ()) -> None:
        reason = unsupported_sensor(model, name, contact_frames)
        if reason is not None:
            raise InputError(reason)
        frame = model.frames[model.getFrameId(name)]
        joint = int(frame.parentJoint)
        self.name, self.joint = name, joint
        # force in J's frame -> force in the sensor frame F (dual action of F^-1)
        self.to_sensor = frame.placement.inverse().toDualActionMatrix()
        self.aug, self.body_of = self._augment(model, joint)
        self.data = self.aug.createData()
        ff = self.aug.joints[self.body_of[joint]]
        self.ff_q, self.ff_v = ff.idx_q, ff.idx_v
        keep_q = np.r_[0 : self.ff_q, self.ff_q + 7 : self.aug.nq]
        keep_v = np.r_[0 : self.ff_v, self.ff_v + 6 : self.aug.nv]
        self.keep_q, self.keep_v = keep_q, keep_v
        self.q_aug = pin.neutral(self.aug)
        self.v_aug, self.a_aug = np.zeros(self.aug.nv), np.zeros(self.aug.nv)

    @staticmethod
    def _augment(model: pin.Model, joint: int) -> tuple[pin.Model, dict[int, int]]:
        """The model with a free-flyer inserted below ``joint``; ``body_of[i]``: the joint of
        the augmented model that carries original joint i's body."""
        aug = pin.Model()
        aug.name, aug.gravity = model.name, model.gravity
        body_of = {0: 0}
        parent_of = {0: 0}  # where original joint i's children attach
        for i in range(1, model.njoints):
            new = aug.addJoint(
                parent_of[int(model.parents[i])],
                model.joints[i],
                model.jointPlacements[i],
                model.names[i],
            )
            body_of[i] = parent_of[i] = new
            if i == joint:
                new = aug.addJoint(
                    new, pin.JointModelFreeFlyer(), pin.SE3.Identity(), model.names[i] + "__ft"
                )
                body_of[i] = parent_of[i] = new  # J itself keeps a zero inertia
            aug.appendBodyToJoint(new, model.inertias[i], pin.SE3.Identity())
        return aug, body_of

    def _load(self, model: pin.Model, q: NDArray, v: NDArray, a: NDArray) -> None:
        for i in range(1, model.njoints):
            self.aug.inertias[self.body_of[i]] = model.inertias[i]
        self.q_aug[self.keep_q], self.v_aug[self.keep_v], self.a_aug[self.keep_v] = q, v, a

    def wrench(self, model: pin.Model, q: NDArray, v: NDArray, a: NDArray) -> NDArray[np.float64]:
        """The measured wrench ``(6,)`` [N, N m] at ``(q, v, a)`` with ``model``'s inertias."""
        self._load(model, q, v, a)
        tau = pin.rnea(self.aug, self.data, self.q_aug, self.v_aug, self.a_aug)
        return self.to_sensor @ tau[self.ff_v : self.ff_v + 6]

    def derivatives(
        self, model: pin.Model, q: NDArray, v: NDArray, a: NDArray, joint_ids: Sequence[int]
    ) -> tuple[NDArray[np.float64], ...]:
        """``(f, df/dq, df/dv, df/da, df/dpi)``: tangent-space Jacobians ``(6, nv)`` and the
        regressor ``(6, 10 n)`` of the bodies of ``joint_ids`` (dynamic-parameter order of
        ``pin.Inertia.toDynamicParameters``), all in the sensor frame."""
        self._load(model, q, v, a)
        aug, data, rows = self.aug, self.data, slice(self.ff_v, self.ff_v + 6)
        dq, dv, M = pin.computeRNEADerivatives(aug, data, self.q_aug, self.v_aug, self.a_aug)
        M = np.triu(M) + np.triu(M, 1).T  # Pinocchio fills the upper triangle
        f = self.to_sensor @ data.tau[rows]
        Y = pin.computeJointTorqueRegressor(aug, data, self.q_aug, self.v_aug, self.a_aug)
        cols = [Y[rows, 10 * (self.body_of[j] - 1) : 10 * self.body_of[j]] for j in joint_ids]
        X, keep = self.to_sensor, self.keep_v
        return (
            f,
            X @ dq[rows][:, keep],
            X @ dv[rows][:, keep],
            X @ M[rows][:, keep],
            X @ np.hstack(cols) if cols else np.zeros((6, 0)),
        )


def wrench_residuals(
    sensors: Sequence[WrenchSensor],
    samples: Sequence[NDArray],
    std: NDArray,
    dyn: ParametrizedModel,
    x: NDArray,
    w: NDArray,
    accel: tuple[NDArray, NDArray, NDArray] | NDArray,
) -> tuple[NDArray[np.float64], ...]:
    """Whitened residuals ``(f(x, w; theta) - f_hat) / std`` of every sensor at one node
    and, when ``accel`` is ``(a, da/dx, da/dtheta)`` rather than ``a``, their Jacobians
    ``(Jx, Jw, Jtheta)``.

    The sensor sees the acceleration the recorded motion really had over the node,
    ``a + w_v / dt`` (semi-implicit Euler: ``v_{k+1} = v_k + dt a_k + w_v``): the process noise
    is the torque the commands did not predict, and the sensor observes it. ``samples`` are the
    node's measured wrenches ``(6,)`` per sensor; ``std`` ``(6,)`` [N, N m]."""
    nq, nv, dt = dyn.model.nq, dyn.model.nv, dyn.dt
    q, v = x[:nq], x[nq:]
    jacobian = isinstance(accel, tuple)
    a = (accel[0] if jacobian else accel) + w[nv:] / dt
    if not jacobian:
        r = [
            (s.wrench(dyn.model, q, v, a) - z) / std for s, z in zip(sensors, samples, strict=True)
        ]
        return (np.concatenate(r),)
    _, da_dx, da_dtheta = accel
    rs, jx, jw, jt = [], [], [], []
    for sensor, z in zip(sensors, samples, strict=True):
        f, df_dq, df_dv, df_da, df_dpi = sensor.derivatives(dyn.model, q, v, a, dyn.joint_ids)
        df_dtheta = np.zeros((6, dyn.n_theta))  # joint terms: only through the acceleration
        df_dtheta[:, : dyn.n_inertial] = np.hstack(
            [df_dpi[:, 10 * n : 10 * n + 10] @ G for n, G in enumerate(dyn.G)]
        )
        rs.append((f - z) / std)
        jx.append((np.hstack([df_dq, df_dv]) + df_da @ da_dx) / std[:, None])
        jw.append(np.hstack([np.zeros((6, nv)), df_da / dt]) / std[:, None])
        jt.append((df_dtheta + df_da @ da_dtheta) / std[:, None])
    return tuple(
        np.concatenate(p) if i == 0 else np.vstack(p) for i, p in enumerate((rs, jx, jw, jt))
    )
