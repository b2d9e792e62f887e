"""The nominal/estimated split of paper E §III-A and the measurement of eqs. 13-15.

``Y pi = Y_est pi_est + tau_nom`` (eq. 7): ``tau_nom`` is one RNEA call on a copy of the model
whose estimated bodies have zero inertia, ``Y_est`` the estimated bodies' ten columns each of
Pinocchio's joint-torque regressor (computed per body as ``J_k^T A_k``, joint Jacobian times body
regressor, with one forward pass). The measurement is (eq. 14)

    delta_tau = S^T tau_obs - tau_nom + sum_c J_c^T lambda_c  ~=  Y_est pi_est   (eq. 15)

with ``S^T tau_obs`` the observed actuated torques (zero on the six rows of a free-flyer root),
``J_c`` the 6 x nv Jacobian of contact frame ``c`` in ``LOCAL_WORLD_ALIGNED`` and
``lambda_c = [f; m]`` the sensed wrench that the environment applies to the robot: force ``f``
[N] at the frame origin and moment ``m`` [N m] about that origin, both along the world axes.
With the joint terms of an offline identification (:mod:`physid.online.friction`), their torque
is part of ``tau_nom`` (on the actuated rows).

Only the rows that can see an estimated body are kept: those of the joints that support it
(Pinocchio's ``model.supports``), including the six free-flyer rows. On the other rows ``Y_est``
is zero, so they carry no information about ``pi_est`` and dropping them leaves the Kalman update
unchanged (with a diagonal R) while making it cheaper.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike, NDArray

from physid.body.inertia import check_consistency
from physid.errors import InputError
from physid.online.friction import JointFriction
from physid.robot.regressor import torque_regressor

#: Tolerance of the nominal-model check: a body whose pseudo-inertia has an eigenvalue below
#: ``-_PSD_TOLERANCE * scale`` is rejected; degenerate bodies (massless links, point masses,
#: J positive semi-definite) are fine for RNEA and accepted.
_PSD_TOLERANCE = 1e-9


def is_floating_base(model: pin.Model) -> bool:
    """True when the first joint is a free flyer (as :func:`physid.robot.model.load_urdf` builds
    it)."""
    return model.njoints > 1 and model.joints[1].shortname() == "JointModelFreeFlyer"


def check_nominal_model(model: pin.Model, source: str = "nominal model") -> None:
    """InputError naming the first body whose inertia no rigid body could have (J not PSD)."""
    for joint_id in range(1, model.njoints):
        pi = model.inertias[joint_id].toDynamicParameters()
        scale = max(float(np.abs(pi).max()), 1e-300)
        report = check_consistency(pi, margin=-_PSD_TOLERANCE * scale, name=model.names[joint_id])
        if not report.consistent:
            raise InputError(
                f"body of joint '{model.names[joint_id]}' is not physically consistent: "
                f"{report.reason}",
                source=source,
            )


class SplitMeasurement:
    """Evaluate ``delta_tau`` and ``Y_est`` (paper E eqs. 7, 14, 15) for chosen bodies.

    ``model`` holds the nominal inertias of every body (it is copied, never modified);
    ``bodies`` are the names of the joints that move the estimated bodies (``root_joint`` for
    the floating base itself); ``contact_frames`` the frames whose wrenches are sensed.
    Pinocchio ``Data`` buffers are allocated once here.
    """

    def __init__(
        self,
        model: pin.Model,
        bodies: Sequence[str],
        contact_frames: Sequence[str] = (),
        joint_friction: JointFriction | None = None,
    ) -> None:
        bodies = tuple(bodies)
        if not bodies:
            raise InputError("choose at least one body to estimate (a joint name)")
        duplicates = sorted({b for b in bodies if bodies.count(b) > 1})
        if duplicates:
            raise InputError(f"bodies named more than once: {duplicates}")
        names = [model.names[i] for i in range(1, model.njoints)]
        for body in bodies:
            if not model.existJointName(body) or body == "universe":
                raise InputError(
                    f"body '{body}' is not a joint of the model{_joint_of(model, body)}; joints: "
                    f"{', '.join(names)}"
                )
        for frame in contact_frames:
            if not model.existFrame(frame):
                raise InputError(f"contact frame '{frame}' is not a frame of the model")
        check_nominal_model(model)
        self.model = model.copy()
        self.bodies = bodies
        self.contact_frames = tuple(contact_frames)
        self.floating_base = is_floating_base(model)
        self.joint_ids = tuple(int(model.getJointId(b)) for b in bodies)
        self.nominal_pi = np.array(
            [model.inertias[j].toDynamicParameters() for j in self.joint_ids]
        )
        self.nv = model.nv
        self.n_actuated = model.nv - 6 if self.floating_base else model.nv
        self.joint_friction = joint_friction
        if joint_friction is not None and joint_friction.viscous.shape != (self.n_actuated,):
            raise InputError(
                f"joint friction for {joint_friction.viscous.size} joints, the model actuates "
                f"{self.n_actuated}"
            )
        # Columns of the estimated bodies in Pinocchio's joint-torque regressor (body of joint
        # id k: 10(k-1) .. 10k).
        self.columns = np.concatenate([np.arange(10 * (j - 1), 10 * j) for j in self.joint_ids])
        # Rows that see an estimated body: velocity indices of every joint supporting one.
        rows: set[int] = set()
        for j in self.joint_ids:
            for support in model.supports[j]:
                if support == 0:
                    continue
                start = model.joints[support].idx_v
                rows.update(range(start, start + model.joints[support].nv))
        self.rows = np.array(sorted(rows), dtype=int)
        self.is_base_row = self.rows < (6 if self.floating_base else 0)
        self.frame_ids = tuple(int(model.getFrameId(f)) for f in self.contact_frames)
        # Nominal part: the same model with the estimated bodies' inertias zeroed (eq. 7).
        self._model_nominal = model.copy()
        for j in self.joint_ids:
            self._model_nominal.inertias[j] = pin.Inertia.Zero()
        self._data_nominal = self._model_nominal.createData()
        self._data = self.model.createData()
        self._tau_full = np.zeros(self.nv)
        self._Y = np.empty((len(self.rows), 10 * len(bodies)))

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    # --- full-size pieces (tests and diagnostics) -----------------------------------------------
    def tau_nominal(self, q: ArrayLike, v: ArrayLike, a: ArrayLike) -> NDArray[np.float64]:
        """``tau_nom`` (nv,): RNEA with the estimated bodies' inertias zeroed (paper E eq. 7),
        plus the joint terms when given."""
        tau = pin.rnea(self._model_nominal, self._data_nominal, q, v, a).copy()
        return tau + self._joint_terms(np.asarray(v, float), np.asarray(a, float))

    def model_variance(self, v: NDArray[np.float64]) -> NDArray[np.float64] | None:
        """Extra measurement variance per row (as :attr:`rows`) from the joint-friction model
        near zero speed (:meth:`JointFriction.torque_variance`); None without joint friction."""
        if self.joint_friction is None:
            return None
        return self._on_rows(self.joint_friction.torque_variance(self._actuated(v)))

    def resting_rows(self, v: NDArray[np.float64]) -> NDArray[np.bool_] | None:
        """Rows (as :attr:`rows`) of joints held by static friction
        (:meth:`JointFriction.resting`); None without joint friction."""
        if self.joint_friction is None:
            return None
        return self._on_rows(self.joint_friction.resting(self._actuated(v)))

    def _actuated(self, v: ArrayLike) -> NDArray[np.float64]:
        """The actuated joints' entries (n_actuated,) of a velocity-sized vector."""
        return np.asarray(v, float)[self.nv - self.n_actuated :]

    def _on_rows(self, actuated: ArrayLike) -> NDArray:
        """Values per actuated joint (or one for all) as values per row (as :attr:`rows`),
        zero on the free-flyer rows."""
        values = np.asarray(actuated)
        out = np.zeros(self.nv, dtype=values.dtype)
        out[self.nv - self.n_actuated :] = values
        return out[self.rows]

    def _joint_terms(self, v: NDArray[np.float64], a: NDArray[np.float64]) -> NDArray:
        """Joint-term torques (nv,), zero on free-flyer rows (0 without joint friction)."""
        out = np.zeros(self.nv)
        if self.joint_friction is not None:
            actuated = slice(self.nv - self.n_actuated, self.nv)
            out[actuated] = self.joint_friction.torque(v[actuated], a[actuated])
        return out

    def regressor(self, q: ArrayLike, v: ArrayLike, a: ArrayLike) -> NDArray[np.float64]:
        """``Y_est`` (nv, 10 n_bodies): the estimated bodies' regressor columns (eq. 6)."""
        Y = torque_regressor(self.model, self._data, q, v, a)
        return Y[:, self.columns]

    def contact_torque(self, q: ArrayLike, wrenches: ArrayLike) -> NDArray[np.float64]:
        """``sum_c J_c^T lambda_c`` (nv,) for wrenches (n_contacts, 6) [f; m], world axes."""
        wrenches = np.asarray(wrenches, dtype=float).reshape(len(self.frame_ids), 6)
        out = np.zeros(self.nv)
        if not self.frame_ids:
            return out
        pin.computeJointJacobians(self.model, self._data, q)
        for frame_id, wrench in zip(self.frame_ids, wrenches, strict=True):
            J = pin.getFrameJacobian(self.model, self._data, frame_id, pin.LOCAL_WORLD_ALIGNED)
            out += J.T @ wrench
        return out

    # --- hot path --------------------------------------------------------------------------------
    def evaluate(
        self,
        q: NDArray[np.float64],
        v: NDArray[np.float64],
        a: NDArray[np.float64],
        tau_actuated: NDArray[np.float64],
        wrenches: NDArray[np.float64] | None,
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(delta_tau[rows], Y_est[rows])`` of eq. 14-15 for one sample.

        ``tau_actuated`` has ``n_actuated`` entries (the free-flyer rows of ``S^T tau`` are zero);
        ``wrenches`` is ``(n_contacts, 6)`` or None when there are no contact frames.
        """
        rows, model, data = self.rows, self.model, self._data
        tau_full = self._tau_full
        tau_full[self.nv - self.n_actuated :] = tau_actuated
        delta = tau_full[rows] - pin.rnea(self._model_nominal, self._data_nominal, q, v, a)[rows]
        if self.joint_friction is not None:
            delta -= self._joint_terms(v, a)[rows]
        # Y_est column block of body k = J_k^T A_k: the body regressor A_k (spatial force of the
        # body as a linear map of its pi, gravity as an acceleration) pulled back by the body's
        # LOCAL joint Jacobian. Equal to the columns of pin.computeJointTorqueRegressor (see
        # regressor(), tested), but one forward pass instead of the whole regressor: about
        # twice as fast on a humanoid.
        pin.forwardKinematics(model, data, q, v, a)
        body_regressors = [
            pin.bodyRegressor(data.v[j], data.a[j] - data.oMi[j].actInv(model.gravity))
            for j in self.joint_ids
        ]
        pin.computeJointJacobians(model, data, q)
        Y_est = self._Y
        for b, (j, A) in enumerate(zip(self.joint_ids, body_regressors, strict=True)):
            # (6, nv); a 1-DoF model's comes back from eigenpy as a vector
            J = pin.getJointJacobian(model, data, j, pin.LOCAL).reshape(6, -1)
            Y_est[:, 10 * b : 10 * b + 10] = J[:, rows].T @ A
        for frame_id, wrench in zip(
            self.frame_ids, () if wrenches is None else wrenches, strict=True
        ):
            J = pin.getFrameJacobian(model, data, frame_id, pin.LOCAL_WORLD_ALIGNED).reshape(6, -1)
            delta += J[:, rows].T @ wrench
        return delta, Y_est.copy()

    def noise_std(
        self, joint_torque: float | ArrayLike, base_force: float, base_torque: float
    ) -> NDArray:
        """Per-row measurement noise std (rows as :attr:`rows`): free-flyer rows 0-2 are forces
        along the root frame axes, rows 3-5 moments; the others joint torques, ``joint_torque``
        one value for all or one per actuated joint (velocity order)."""
        std = self._on_rows(np.asarray(joint_torque, dtype=float))
        base = np.array([base_force] * 3 + [base_torque] * 3, dtype=float)
        std[self.is_base_row] = base[self.rows[self.is_base_row]]
        return std


def _joint_of(model: pin.Model, name: str) -> str:
    """What ``name`` is where it is a link or body of the model (a body is named by the joint
    that moves it; a user may give an MJCF body's name), else ''."""
    if not model.existFrame(name):
        return ""
    joint = model.frames[model.getFrameId(name)].parentJoint
    if joint == 0:
        return f" ('{name}' is a link fixed to the base: no joint moves it)"
    moved_by = model.names[joint]
    return f" ('{name}' is a link: the joint that moves it, which names it here, is '{moved_by}')"


def acceleration_torque_std(
    model: pin.Model, q_samples: NDArray[np.float64], acceleration_std: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Per velocity row (nv,), the torque noise that white acceleration noise of std
    ``acceleration_std`` (nv,) puts on inverse dynamics through the mass matrix,
    ``sqrt((M o M) sigma^2)``, the median over the configurations ``q_samples`` (k, nq)."""
    data = model.createData()
    variance = []
    for q in q_samples:
        upper = np.triu(pin.crba(model, data, q))  # Pinocchio fills the upper half
        variance.append(((upper + np.triu(upper, 1).T) ** 2) @ acceleration_std**2)
    return np.sqrt(np.median(variance, axis=0))
