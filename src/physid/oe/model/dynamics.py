"""Parametrized free dynamics of a Pinocchio model, one time step, with exact derivatives.

The step is semi-implicit Euler on the state manifold::

    a  = ABA(q, v, B u; pi(theta))          (paper B eq. 2 with lambda_c = 0)
    v' = v + dt a,   q' = q (+) dt v'

The joint terms of a real robot enter as known generalized forces and inertia:
the rotor ``armature`` on the diagonal of M (Pinocchio's ``model.armature``, which ABA, CRBA,
``constraintDynamics`` and ``impulseDynamics`` include), and per joint a viscous and a
smoothed Coulomb friction (:class:`JointTerms`)::

    tau = B u - D v - F_c tanh(v / v_c)

The friction is stiff at the node spacing (a Go2 calf: I/D ~ 6 ms against dt = 2 ms; the
Coulomb slope F_c / v_c even more), so it is integrated linearly implicitly: with
``D_eff(v) = -dtau/dv = D + F_c / v_c sech^2(v / v_c)`` the step solves
``(M + dt D_eff(v_k)) a = tau(v_k) - h (+ Jc^T lambda)``, the backward-Euler step of the
friction linearized at v_k (MuJoCo's Euler integrator treats joint damping the same way). It
is Pinocchio's dynamics with the armature ``armature + dt D_eff(v_k)``, set by
:meth:`ParametrizedModel.tau`. ``da/dv`` then gains ``K^-1 (dtau/dv - dt dD_eff/dv a)``,
``K^-1`` the top block of the (KKT) inverse: ``M_eff^-1`` in the free phase, eq. 18 in
contact.

Derivatives with respect to x = (q, v) come from Pinocchio's analytical ABA derivatives; with
respect to the inertial parameters theta of the estimated bodies they follow paper B eq. 17,
``da/dtheta = -M^-1 Y(q, v, a) dpi/dtheta`` (Y: the joint-torque regressor; the paper prints it
without the minus sign, which comes from ``M a + Y pi_rest = tau``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError
from physid.oe.model import charts
from physid.oe.model.charts import pis_and_jacobians, theta_from_pis
from physid.oe.model.compliance import SoftContact
from physid.oe.model.joint_estimate import JointEstimate
from physid.oe.model.state import ARG0, ARG1
from physid.robot.regressor import torque_regressor

COULOMB_SPEED = 0.1  # [rad/s] the default tanh smoothing of the Coulomb friction
# physid oe's default priors on each body's shape (exp_eig; make_problem's second_moment_std
# and axes_std), which hold what the data cannot tell and leave what they do:
SECOND_MOMENT_LOG_STD = 3.0  # log principal second moments: a factor 20 at one std
PRINCIPAL_AXES_STD = 1.0  # [rad] the axes between two nearly equal moments turn freely


@dataclass(frozen=True)
class JointTerms:
    """Known joint terms of the dynamics, one value per velocity coordinate (``nv``; 0 on a
    free-flyer's 6): ``armature`` [kg m^2] (rotor inertia on M's diagonal), ``viscous``
    [N m s/rad] (URDF ``<dynamics damping>``, MJCF ``damping``), ``coulomb`` [N m] (URDF
    ``<dynamics friction>``, MJCF ``frictionloss``), smoothed as ``F_c tanh(v / coulomb_speed)``
    (``coulomb_speed`` [rad/s] > 0, one number or one per velocity coordinate: the speed below
    which the friction fades linearly, ``F_c / coulomb_speed`` N m s/rad at rest; the
    derivatives stay bounded). ``coulomb_speed_nodes`` ``(nodes, nv)``: the width at each node
    instead (:meth:`speed`; widened only where the recorded velocity reverses within a node,
    :func:`physid.oe.data.joints.coulomb_widths`)."""

    armature: NDArray[np.float64]
    viscous: NDArray[np.float64]
    coulomb: NDArray[np.float64]
    coulomb_speed: float | NDArray[np.float64] = COULOMB_SPEED
    coulomb_speed_nodes: NDArray[np.float64] | None = None

    def __post_init__(self) -> None:
        for name in ("armature", "viscous", "coulomb"):
            values = np.asarray(getattr(self, name), dtype=float)
            if values.ndim != 1 or not np.all(np.isfinite(values)) or np.any(values < 0):
                raise InputError(f"joint {name} must be finite and >= 0 per joint, got {values}")
        speed = np.asarray(self.coulomb_speed, dtype=float)
        if speed.ndim > 1 or speed.size not in (1, len(self.armature)):
            raise InputError(f"joint coulomb_speed: one number or nv, got {speed.shape}")
        if not (np.all(np.isfinite(speed)) and np.all(speed > 0)):
            raise InputError(f"joint coulomb_speed must be > 0 [rad/s], got {self.coulomb_speed}")
        nodes = self.coulomb_speed_nodes
        if nodes is not None and (
            np.ndim(nodes) != 2
            or np.shape(nodes)[1] != len(self.armature)
            or not np.all(np.isfinite(nodes))
            or not np.all(np.asarray(nodes) > 0)
        ):
            raise InputError(f"joint coulomb_speed_nodes: (nodes, nv) > 0, got {np.shape(nodes)}")

    @classmethod
    def none(cls, nv: int) -> JointTerms:
        zero = np.zeros(nv)
        return cls(zero, zero, zero)

    def speed(self, node: int | None = None) -> float | NDArray[np.float64]:
        """The tanh width ``v_c`` [rad/s] at ``node`` (its row of ``coulomb_speed_nodes``; the
        last row past the end), else ``coulomb_speed``."""
        if node is None or self.coulomb_speed_nodes is None:
            return self.coulomb_speed
        return self.coulomb_speed_nodes[min(node, len(self.coulomb_speed_nodes) - 1)]

    def torque(self, v: NDArray, node: int | None = None) -> NDArray[np.float64]:
        """Friction torque ``-D v - F_c tanh(v / v_c)`` ``(nv,)`` (``v_c`` of ``node``)."""
        return -self.viscous * v - self.coulomb * np.tanh(v / self.speed(node))

    def torque_dv(self, v: NDArray, node: int | None = None) -> NDArray[np.float64]:
        """Diagonal of ``d torque / dv`` ``(nv,)``: ``-D_eff(v)``."""
        speed = self.speed(node)
        t = np.tanh(v / speed)
        return -self.viscous - self.coulomb / speed * (1.0 - t * t)

    def torque_dvv(self, v: NDArray, node: int | None = None) -> NDArray[np.float64]:
        """Diagonal of ``d^2 torque / dv^2`` ``(nv,)``: ``-dD_eff/dv``."""
        speed = self.speed(node)
        t = np.tanh(v / speed)
        return 2.0 * self.coulomb / speed**2 * t * (1.0 - t * t)


class ParametrizedModel:
    """A private copy of a Pinocchio model whose chosen bodies' inertias are set from theta.

    ``body_joints`` names the joints that move the estimated bodies (docs/architecture.md keying);
    ``actuation`` maps the commands u to generalized forces, ``tau = actuation @ u``;
    ``joints``: armature and joint friction (:class:`JointTerms`, default none: paper B);
    ``estimate``: the joint terms theta carries after the bodies' 10 each
    (:class:`~physid.oe.model.joint_estimate.JointEstimate`; their ``joints`` values are the start
    and the prior). ``soft``: the contacts' compliance and spring
    (:class:`~physid.oe.model.compliance.SoftContact`; default rigid), which theta's last three
    entries ``(log C, log tau, log rho)`` estimate when ``soft.estimate``. theta's layout is owned
    here: its retraction, prior residual and step limit are this class's methods.
    """

    def __init__(
        self,
        model: pin.Model,
        body_joints: Sequence[str],
        chart: str,
        actuation: NDArray[np.float64],
        dt: float,
        joints: JointTerms | None = None,
        estimate: JointEstimate | None = None,
        soft: SoftContact | None = None,
    ) -> None:
        self.model = model.copy()
        self.joints = JointTerms.none(model.nv) if joints is None else joints
        if self.joints.armature.shape != (model.nv,):
            raise InputError(f"joint terms must have nv = {model.nv} values each")
        self.declared_joints = self.joints
        self.estimate = estimate
        if estimate is not None and max(estimate.dofs) >= model.nv:
            raise InputError(f"estimated joint terms on dofs {estimate.dofs} of nv = {model.nv}")
        self._set_joints(
            self.joints
            if estimate is None
            else estimate.apply(self.joints, estimate.start(self.joints)[0])
        )
        self.data = self.model.createData()
        self.chart = chart
        self.dt = float(dt)
        self.actuation = np.asarray(actuation, dtype=float)
        if self.actuation.shape[0] != model.nv:
            raise InputError(f"actuation must have {model.nv} rows, got {self.actuation.shape}")
        ids = []
        for name in body_joints:
            if not self.model.existJointName(name):
                raise InputError(f"no joint named {name!r} in the model", source="--body")
            ids.append(self.model.getJointId(name))
        if not ids or len(set(ids)) != len(ids):
            raise InputError("estimated bodies must be given once each, at least one")
        self.body_joints = tuple(body_joints)
        self.joint_ids = tuple(int(i) for i in ids)
        self.n_inertial = 10 * len(ids)
        self.n_joint_terms = 0 if estimate is None else estimate.size
        self.soft_start = SoftContact() if soft is None else soft
        self.soft_prior = self.soft_start  # the prior's medians (the start may move)
        self.soft = self.soft_start  # the current values (set_theta)
        self.n_theta = self.n_inertial + self.n_joint_terms + self.n_soft
        self.G = np.zeros((len(ids), 10, 10))
        self.node: int | None = None  # the node whose friction width applies (use_node)

    def use_node(self, k: int) -> None:
        """Make node k's Coulomb widths (``JointTerms.coulomb_speed_nodes``) the ones the
        calls that follow use, as :meth:`physid.oe.model.phases.ContactSchedule.use` does for
        its contact points."""
        self.node = k

    def _set_joints(self, joints: JointTerms) -> None:
        self.joints = joints
        self.model.armature[:] = joints.armature
        # Pinocchio's ABA ignores model.damping / friction; tau() applies them
        self._friction = bool(np.any(joints.viscous) or np.any(joints.coulomb))

    @property
    def n_soft(self) -> int:
        """3 when theta's last entries are the contacts' ``(log C, log tau, log rho)``, else 0."""
        return 3 if self.soft_start.estimate else 0

    def _joint_tail(self, theta: NDArray) -> NDArray:
        n = self.n_inertial
        return np.asarray(theta, dtype=float)[n : n + self.n_joint_terms]

    def _compliance_tail(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(start, prior std)`` of the soft contact's entries (empty when fixed)."""
        if not self.n_soft:
            return np.zeros(0), np.zeros(0)
        s = self.soft_start
        std = np.array([s.prior_log_std, s.prior_log_std, s.ratio_log_std])
        return np.log([s.compliance, s.time_constant, s.tangential_ratio]), std

    @property
    def nx(self) -> int:
        return 2 * self.model.nv

    def nominal_theta(self) -> NDArray[np.float64]:
        """Chart coordinates of the model's current inertias of the estimated bodies, then
        the log of the estimated joint terms' start values."""
        pis = np.array([self.model.inertias[j].toDynamicParameters() for j in self.joint_ids])
        theta = theta_from_pis(self.chart, pis)
        if self.estimate is not None:
            theta = np.r_[theta, self.estimate.start(self.declared_joints)[0]]
        return np.r_[theta, self._compliance_tail()[0]]

    def theta_prior_std(
        self,
        inertial_std: float | NDArray,
        second_moment_std: float | None = None,
        axes_std: float | None = None,
    ) -> NDArray[np.float64]:
        """Prior standard deviations of theta: ``inertial_std`` on the bodies' coordinates
        (exp_eig only: ``second_moment_std`` instead on each body's log principal second
        moments, ``axes_std`` [rad] on the rotation of its principal axes), the log-normal
        priors of :mod:`physid.oe.model.joint_estimate` on the joint terms."""
        std = np.broadcast_to(np.asarray(inertial_std, float), (self.n_inertial,)).copy()
        if second_moment_std is not None and self.chart == "exp_eig":
            std.reshape(-1, 10)[:, 7:10] = second_moment_std
        if axes_std is not None and self.chart == "exp_eig":
            std.reshape(-1, 10)[:, 4:7] = axes_std
        if self.estimate is not None:
            std = np.r_[std, self.estimate.start(self.declared_joints)[1]]
        return np.r_[std, self._compliance_tail()[1]]

    @property
    def log_linear(self) -> NDArray[np.bool_]:
        """The coordinates ``s`` of theta that pi (or the joint torque) depends on through
        ``e^s`` linearly: each body's log principal second moments (exp_eig) and the joint
        terms' logarithms (:meth:`physid.oe.solving.problem.OEProblem.linearize` adds the
        curvature Gauss-Newton misses there)."""
        mask = np.zeros(self.n_theta, dtype=bool)
        if self.chart == "exp_eig":
            mask[: self.n_inertial].reshape(-1, 10)[:, 7:10] = True
        mask[self.n_inertial : self.n_inertial + self.n_joint_terms] = True
        return mask

    def rotation_curvature(self, theta: NDArray, log_gradient: NDArray) -> NDArray[np.float64]:
        """:func:`physid.oe.model.charts.rotation_curvature` of the bodies (exp_eig; zeros
        otherwise and on the joint terms), ``(n_theta,)``."""
        out = np.zeros(self.n_theta)
        if self.chart == "exp_eig":
            n = self.n_inertial
            out[:n] = charts.rotation_curvature(theta[:n], log_gradient[:n])
        return out

    def set_theta(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """Write ``pi(theta)`` (and the estimated joint terms) into the model; keeps
        ``dpi/dtheta`` in ``self.G``; returns pis."""
        theta = np.asarray(theta, dtype=float)
        pis, self.G = pis_and_jacobians(self.chart, theta[: self.n_inertial])
        for j, pi in zip(self.joint_ids, pis, strict=True):
            self.model.inertias[int(j)] = pin.Inertia.FromDynamicParameters(pi)
        if self.estimate is not None:
            self._set_joints(self.estimate.apply(self.declared_joints, self._joint_tail(theta)))
        if self.n_soft:
            c, tau, rho = np.exp(np.asarray(theta[-3:], dtype=float))
            drift = self.soft_start.drift
            self.soft = SoftContact(float(c), float(tau), tangential_ratio=float(rho), drift=drift)
        return pis

    def representable(self, theta: NDArray[np.float64]) -> bool:
        """Whether :meth:`set_theta` can take ``theta``: every body's pi and ``dpi/dtheta``
        and the joint terms finite. A trial point far out in the logarithmic coordinates
        (``exp`` overflows past 709) is a step to reject, not bad input, so the callers that
        try steps (the solver's line search, :func:`physid.oe.soft.contact_noise.fitted_defects`)
        ask first instead of letting set_theta's InputError end the run; the model is left
        as it was."""
        theta = np.asarray(theta, dtype=float)
        if not np.all(np.isfinite(theta)):
            return False
        with np.errstate(all="ignore"):  # the overflow is the answer, not a warning
            try:
                pis, G = pis_and_jacobians(self.chart, theta[: self.n_inertial])
                if self.estimate is not None:
                    self.estimate.apply(self.declared_joints, self._joint_tail(theta))
                if self.n_soft:
                    values = np.exp(theta[-3:])
                    # overflow, or an underflow to 0: not a compliance, spring or ratio
                    if not (np.all(np.isfinite(values)) and np.all(values > 0.0)):
                        return False
            except InputError:  # how the chart maps and JointTerms refuse non-finite values
                return False
        return bool(np.all(np.isfinite(pis)) and np.all(np.isfinite(G)))

    def torque_theta_jacobian(
        self, q: NDArray, v: NDArray, a: NDArray, friction: bool = True
    ) -> NDArray[np.float64]:
        """``d ID(q, v, a) / d theta = Y(q, v, a) dpi/dtheta`` ``(nv, n_theta)`` (eqs. 17-19),
        then the estimated joint terms' columns (:mod:`physid.oe.model.joint_estimate`; ``friction``
        False: an impact's, ``a`` the velocity jump)."""
        Y = torque_regressor(self.model, self.data, q, v, a)
        cols = [
            Y[:, 10 * (j - 1) : 10 * j] @ G for j, G in zip(self.joint_ids, self.G, strict=True)
        ]
        if self.estimate is not None:
            cols.append(
                self.estimate.torque_columns(self.joints, v, a, self.dt, friction, self.node)
            )
        cols.append(np.zeros((self.model.nv, self.n_soft)))  # no torque: the contacts'
        return np.hstack(cols)

    def retract(self, theta: NDArray, dtheta: NDArray) -> NDArray[np.float64]:
        """``theta (+) dtheta`` (eq. 32): the chart's on the bodies, additive on the joint
        terms' logarithms."""
        n = self.n_inertial
        body = charts.retract(self.chart, theta[:n], dtheta[:n])
        return np.r_[body, np.asarray(theta[n:], float) + dtheta[n:]]

    def prior_residual(
        self, theta: NDArray, prior: NDArray
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``theta (-) prior`` and its Jacobian (:func:`physid.oe.model.charts.prior_residual`; the
        joint terms' logarithms: plain difference)."""
        n, m = self.n_inertial, self.n_theta - self.n_inertial
        r, J = charts.prior_residual(self.chart, theta[:n], prior[:n])
        full = np.zeros((self.n_theta, self.n_theta))
        full[:n, :n] = J
        full[n:, n:] = np.eye(m)
        return np.r_[r, np.asarray(theta[n:], float) - prior[n:]], full

    def step_limit(self, dtheta: NDArray, max_log_step: float) -> float:
        """:func:`physid.oe.model.charts.step_limit` with the joint terms' logarithms limited
        too."""
        n = self.n_inertial
        alpha = charts.step_limit(self.chart, dtheta[:n], max_log_step)
        largest = float(np.abs(dtheta[n:]).max(initial=0.0))
        return alpha if largest * alpha <= max_log_step else max_log_step / largest

    def joint_summary(
        self, theta_std: NDArray, prior_std: NDArray | None, covariance: NDArray | None = None
    ) -> dict[str, dict]:
        """The estimated joint terms at the theta last set (params.json's ``joints``
        layout, :meth:`physid.oe.model.joint_estimate.JointEstimate.summary`); {} without. With
        theta's posterior ``covariance``, a term the prior decides names under
        ``confounded_with`` the estimated bodies it moves with (|correlation| > 0.5 with one
        of their 10 inertial parameters pi: a quarter or more of that parameter's posterior
        variance is the term's): what its prior's value then decides too."""
        if self.estimate is None:
            return {}
        n = self.n_inertial
        m = n + self.n_joint_terms
        prior = np.full(self.estimate.size, np.inf) if prior_std is None else prior_std[n:m]
        names = dof_names(self.model)
        out = self.estimate.summary(
            self.joints, self.declared_joints, np.asarray(theta_std)[n:m], prior, names
        )
        if covariance is None:
            return out
        cov = np.asarray(covariance)
        for i, (joint, kind) in enumerate(self.estimate.labels(names)):
            if out[joint]["source"][kind] != "prior":
                continue
            bodies = []
            for b, (name, G) in enumerate(zip(self.body_joints, self.G, strict=True)):
                s = slice(10 * b, 10 * b + 10)
                with np.errstate(all="ignore"):
                    cross = G @ cov[s, n + i]  # cov(pi_b, term)
                    var = np.einsum("ij,jk,ik->i", G, cov[s, s], G) * cov[n + i, n + i]
                    correlation = np.abs(cross) / np.sqrt(var)
                if np.nanmax(correlation, initial=0.0) > 0.5:
                    bodies.append(name)
            if bodies:
                out[joint].setdefault("confounded_with", {})[kind] = bodies
        return out

    def compliance_summary(self, theta_std: NDArray) -> dict:
        """The soft contact for result.json: ``compliance`` [1/kg] (the normal rows'),
        ``time_constant`` [s] (None: no spring), ``tangential_ratio`` (the tangential rows'
        compliance over the normal's), ``estimated``, and when estimated their std (of the
        values, from the logs'), the sag per newton ``C tau^2`` [m/N] and the priors' medians
        and log std."""
        s = self.soft
        tau = s.time_constant if np.isfinite(s.time_constant) else None
        out: dict = {
            "compliance": s.compliance,
            "time_constant": tau,
            "tangential_ratio": s.tangential_ratio,
            "estimated": self.n_soft > 0,
        }
        if self.n_soft:
            log_std = np.asarray(theta_std, dtype=float)[-3:]
            values = np.array([s.compliance, s.time_constant, s.tangential_ratio])
            std = [
                float(v * e) if np.isfinite(e) else None
                for v, e in zip(values, log_std, strict=True)
            ]
            start, prior = self.soft_start, self.soft_prior
            out |= {
                "compliance_std": std[0],
                "time_constant_std": std[1],
                "tangential_ratio_std": std[2],
                "sag_m_per_N": s.compliance * s.time_constant**2,
                "start": [start.compliance, start.time_constant, start.tangential_ratio],
                "prior_median": [prior.compliance, prior.time_constant, prior.tangential_ratio],
                "prior_log_std": [prior.prior_log_std, prior.prior_log_std, prior.ratio_log_std],
            }
        return out

    def tau(self, x: NDArray, u: NDArray) -> NDArray[np.float64]:
        """Generalized force of the commands and the joint friction, ``B u - D v - F_c tanh``,
        at the state x; also puts the implicit friction of x in the model's armature
        (``armature + dt D_eff(v)``, module docstring) for the dynamics call that follows."""
        tau = self.actuation @ u
        if self._friction:
            v = x[self.model.nq :]
            tau = tau + self.joints.torque(v, self.node)
            self.model.armature[:] = self.joints.armature - self.dt * self.joints.torque_dv(
                v, self.node
            )
        return tau

    def rigid(self) -> None:
        """The model's armature without the implicit friction (impulses: no friction acts
        during an instantaneous impact)."""
        if self._friction:
            self.model.armature[:] = self.joints.armature

    def friction_dv(self, x: NDArray, a: NDArray) -> NDArray[np.float64] | None:
        """``d(rhs)/dv`` ``(nv, nv)`` of the linearly implicit friction at the acceleration a:
        ``diag(dtau/dv - dt dD_eff/dv a)``, so that ``da/dv += K^-1 friction_dv`` (module
        docstring); None without joint friction."""
        if not self._friction:
            return None
        v = x[self.model.nq :]
        joints, node = self.joints, self.node
        return np.diag(joints.torque_dv(v, node) + self.dt * joints.torque_dvv(v, node) * a)

    def euler_step(self, x: NDArray, a: NDArray) -> NDArray[np.float64]:
        """One semi-implicit Euler step from the acceleration ``a`` of any phase:
        ``v' = v + dt a``, ``q' = q (+) dt v'``."""
        nq = self.model.nq
        v1 = x[nq:] + self.dt * a
        return np.concatenate([pin.integrate(self.model, x[:nq], self.dt * v1), v1])

    def free_step(self, x: NDArray, u: NDArray) -> NDArray[np.float64]:
        """``f(x; theta | u)`` of the free phase (semi-implicit Euler)."""
        nq = self.model.nq
        return self.euler_step(x, pin.aba(self.model, self.data, x[:nq], x[nq:], self.tau(x, u)))

    def free_acceleration_derivatives(
        self, x: NDArray, u: NDArray
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(a, da/dx (nv, 2 nv), da/dtheta)`` of the free dynamics (ABA, eq. 17); the joint
        friction adds ``M_eff^-1 friction_dv`` to ``da/dv``."""
        model, data, nq = self.model, self.data, self.model.nq
        q, v = x[:nq], x[nq:]
        da_dq, da_dv, Minv = pin.computeABADerivatives(model, data, q, v, self.tau(x, u))
        a = data.ddq.copy()
        Minv = np.triu(Minv) + np.triu(Minv, 1).T
        friction = self.friction_dv(x, a)
        if friction is not None:
            da_dv = da_dv + Minv @ friction
        da_dtheta = -Minv @ self.torque_theta_jacobian(q, v, a)
        return a, np.hstack([da_dq, da_dv]), da_dtheta

    def free_step_derivatives(
        self, x: NDArray, u: NDArray
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(f, df/dx, df/dtheta)`` of :meth:`free_step`, tangent-space Jacobians."""
        return self.euler_derivatives(x, *self.free_acceleration_derivatives(x, u))

    def euler_derivatives(
        self, x: NDArray, a: NDArray, da_dx: NDArray, da_dth: NDArray
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(f, df/dx, df/dtheta)`` of one semi-implicit Euler step from the acceleration ``a``
        of any phase and its derivatives: the chain through ``v' = v + dt a``,
        ``q' = q (+) dt v'``."""
        model, dt, nv = self.model, self.dt, self.model.nv
        q, v = x[: model.nq], x[model.nq :]
        v1 = v + dt * a
        step = dt * v1
        Jq = pin.dIntegrate(model, q, step, ARG0)
        Jv = pin.dIntegrate(model, q, step, ARG1)
        Fx = np.zeros((2 * nv, 2 * nv))
        Fx[nv:] = dt * da_dx
        Fx[nv:, nv:] += np.eye(nv)
        Fx[:nv, :] = dt * Jv @ Fx[nv:, :]
        Fx[:nv, :nv] += Jq
        Ft = np.zeros((2 * nv, da_dth.shape[1]))
        Ft[nv:] = dt * da_dth
        Ft[:nv] = dt * Jv @ Ft[nv:]
        return np.concatenate([pin.integrate(model, q, step), v1]), Fx, Ft


def dof_names(model: pin.Model) -> list[str]:
    """The joint name of every velocity coordinate ``(nv,)``."""
    names = [""] * model.nv
    for j in range(1, model.njoints):
        for i in range(model.joints[j].nv):
            names[model.joints[j].idx_v + i] = model.names[j]
    return names
