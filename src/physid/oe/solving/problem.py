"""The optimal-estimation problem of paper B eq. 16 and its Gauss-Newton linearization.

Decision variables: states x_0..x_N on the manifold, process noise w_0..w_{N-1} in the tangent
space, and the chart coordinates theta of the estimated bodies. Dynamics
``x_{k+1} = f_p(x_k; theta | u_k) (+) w_k``. Cost (MAP, all terms whitened)::

    1/2 |x_0 (-) x_bar|^2_{S0^-1} + 1/2 |theta - theta_bar|^2_{St^-1}
      + 1/2 sum_k |w_k|^2_{Sw^-1} + 1/2 sum_k |z_k (-) h(x_k)|^2_{Sz^-1}
      [+ 1/2 sum_k sum_{feet in contact at k} |v_foot(x_k)|^2 / s_slip^2]
      [+ 1/2 sum_{k<N} |f(x_k, w_k; theta) - f_hat_k|^2_{Sf^-1}]  (and the accelerometer)

``Sw`` is diagonal, one standard deviation per tangent direction (``NoiseStd.process_std``).
The last sum (optional, ``NoiseStd.foot_velocity = s_slip``) is a no-slip observation of the
feet in contact: a zero-velocity pseudo-measurement of each such foot at every node. A foot
velocity the dynamics would otherwise carry through the stance (eq. 3 only zeroes its
acceleration) then costs ``n / s_slip^2`` per unit squared over n nodes — the foot-position
random walk of a leg-kinematics EKF (Bloesch et al. 2012) with ``s_walk^2 = dt s_slip^2``.
The last (optional, ``Measurements.wrench`` / ``accelerometer``) are force/torque sensors and
the base's accelerometer (:mod:`physid.oe.model.node_acceleration`): they see the node's
acceleration, hence theta and the process noise, which couples dx_k, dw_k and dtheta in the
Hessian (``ObservationCoupling``, carried by the Riccati recursion).

The linearization around a guess gives the data of the KKT system eq. 21 (Gauss-Newton: the
second derivatives of f and h are dropped, as in Crocoddyl) with the linearized dynamics
``dx_{k+1} = A_k dx_k + B_k dw_k + C_k dtheta + fbar_{k+1}``, ``fbar_{k+1} = f(x_k, w_k) (-)
x_{k+1}`` the gaps (eqs. 21, 34).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from physid.errors import InputError
from physid.oe.model import state
from physid.oe.model.contact import feet_velocity
from physid.oe.model.dynamics import ParametrizedModel
from physid.oe.model.measurements import Measurements, NoiseStd, base_dofs, residuals
from physid.oe.model.node_acceleration import NodeAccelerationObservations
from physid.oe.model.phases import (
    ContactSchedule,
    acceleration,
    acceleration_derivatives,
    change_distance,
    step,
    step_derivatives,
)


@dataclass
class ObservationCoupling:
    """Per-node Gauss-Newton blocks of observations that see ``w_k`` and ``theta`` (force/torque
    sensors), nodes 0..N-1: ``J_x^T J_w``, ``J_w^T J_w``, ``J_x^T J_theta``, ``J_w^T J_theta``.
    Their ``J_x^T J_x`` / ``J_x^T r`` are in ``Lxx`` / ``lx``, ``J_w^T r`` in ``lw``, and the
    theta-only terms in ``Ltt`` / ``lt`` (theta is one vector for all nodes: its terms add)."""

    Lxw: NDArray[np.float64]  # (N, nx, nx)
    Lww: NDArray[np.float64]  # (N, nx, nx)
    Lxt: NDArray[np.float64]  # (N, nx, nt)
    Lwt: NDArray[np.float64]  # (N, nx, nt)


@dataclass
class Linearization:
    """Gauss-Newton data of eq. 21 at one guess (N nodes with noise, N + 1 states)."""

    A: NDArray[np.float64]  # (N, nx, nx)
    B: NDArray[np.float64]  # (N, nx, nx)
    C: NDArray[np.float64]  # (N, nx, nt)
    gaps: NDArray[np.float64]  # (N, nx): fbar_{k+1}
    Lxx: NDArray[np.float64]  # (N+1, nx, nx)
    lx: NDArray[np.float64]  # (N+1, nx)
    Lww: NDArray[np.float64]  # (nx, nx), the same at every node
    lw: NDArray[np.float64]  # (N, nx)
    Ltt: NDArray[np.float64]  # (nt, nt), parameter prior (+ theta terms of observations)
    lt: NDArray[np.float64]  # (nt,)
    cost: float
    infeasibility: float  # sum_k |fbar_k|_1 (eq. 37)
    coupling: ObservationCoupling | None = None  # force/torque sensors, accelerometer only
    # (N, nt): each node's share of lt from those observations (the parameter prior's is not
    # a node's), for the node scores of physid.oe.solving.sandwich; None without them
    lt_nodes: NDArray[np.float64] | None = None


@dataclass
class OEProblem:
    """Problem data; ``theta_prior_std = None`` omits the prior (as in paper B section VI-A);
    ``contacts = None``: free dynamics at every node, else the known contact sequence."""

    dynamics: ParametrizedModel
    u: NDArray[np.float64]  # (N, nu) commands
    measurements: Measurements
    noise: NoiseStd
    x0_prior: NDArray[np.float64]
    theta_prior: NDArray[np.float64]
    theta_prior_std: NDArray[np.float64] | None = None
    contacts: ContactSchedule | None = None
    imu_frame: str | None = None  # the accelerometer's frame on the base (None: the base)

    def __post_init__(self) -> None:
        model = self.dynamics.model
        if self.u.ndim != 2 or self.u.shape[1] != self.dynamics.actuation.shape[1]:
            raise InputError(f"commands u must be (N, {self.dynamics.actuation.shape[1]})")
        if self.x0_prior.shape != (model.nq + model.nv,):
            raise InputError(f"x0_prior must have nq + nv = {model.nq + model.nv} entries")
        if self.theta_prior.shape != (self.dynamics.n_theta,):
            raise InputError(f"theta_prior must have {self.dynamics.n_theta} entries")
        if self.contacts is not None and self.contacts.flags.shape[0] != self.u.shape[0] + 1:
            raise InputError(f"contact flags must have N + 1 = {self.u.shape[0] + 1} rows")
        nv = model.nv
        self._w_std = self.noise.process_std(nv)
        self._w_nodes = self._node_process_std(nv)
        slip = self.noise.foot_velocity
        if slip is not None and not (np.isfinite(slip) and slip > 0):
            raise InputError(f"noise foot_velocity must be positive (or None), got {slip!r}")
        self._kinematics = model.createData()  # work data of the no-slip term
        self._x0_std = np.r_[np.full(nv, self.noise.arrival_q), np.full(nv, self.noise.arrival_v)]
        frames = () if self.contacts is None else self.contacts.frames
        self._accel_obs = NodeAccelerationObservations(
            self.dynamics, self.measurements, self.noise, self.horizon, frames, self.imu_frame
        )

    def _node_process_std(self, nv: int) -> NDArray[np.float64] | None:
        """``(N, 2 nv)`` process standard deviations per node when ``contact_change_v`` raises
        them near contact flag changes, else None (the same at every node)."""
        extra, sched = self.noise.contact_change_v, self.contacts
        if extra is None or sched is None:
            return None
        window = self.noise.contact_change_window
        if not (np.isfinite(extra) and extra > 0 and np.isfinite(window) and window >= 0):
            raise InputError("noise contact_change_v must be > 0 and contact_change_window >= 0")
        near = change_distance(sched.flags, self.horizon) <= int(round(window / self.dynamics.dt))
        std = np.tile(self._w_std, (self.horizon, 1))
        std[near, nv:] = np.maximum(std[near, nv:], extra)
        return std

    @property
    def process_std_nodes(self) -> NDArray[np.float64]:
        """Process-noise standard deviations ``(N, 2 nv)`` of every node."""
        if self._w_nodes is not None:
            return self._w_nodes.copy()
        return np.tile(self._w_std, (self.horizon, 1))

    @property
    def wrench_frames(self) -> tuple[str, ...]:
        """The force/torque sensors' frames, in the order of :meth:`wrench_terms`."""
        return tuple(sensor.name for sensor in self._accel_obs.sensors)

    @property
    def wrench_std(self) -> NDArray[np.float64]:
        """Per-axis standard deviations ``(6,)`` [N, N m] that whiten a sensor's residual."""
        return self._accel_obs.wrench_std.copy()

    def wrench_terms(self, k: int, x: NDArray, w: NDArray, accel) -> tuple:  # noqa: ANN001
        """Force/torque residuals of node ``k < N``
        (:func:`physid.oe.model.wrench.wrench_residuals`;
        ``accel``: node k's acceleration, or it and its derivatives for the Jacobians)."""
        return self._accel_obs.wrench_terms(self.dynamics, k, x, w, accel)

    @property
    def accelerometer_bias(self) -> NDArray[np.float64]:
        """Constant accelerometer bias [m/s^2] (sensor axes) added to the modelled reading;
        zero unless set (:func:`physid.oe.solving.imu_bias.solve_with_accelerometer_bias`)."""
        return self._accel_obs.acc_bias.copy()

    @accelerometer_bias.setter
    def accelerometer_bias(self, bias: NDArray) -> None:
        self._accel_obs.acc_bias = np.asarray(bias, dtype=float).reshape(3).copy()

    def accelerometer_residuals(self, xs: NDArray, ws: NDArray, theta: NDArray) -> NDArray:
        """Recorded minus modelled accelerometer readings ``(n, 3)`` [m/s^2], bias included,
        at the nodes that observe it (sets theta on the dynamics)."""
        obs = self._accel_obs
        if obs.imu is None:
            return np.zeros((0, 3))
        self.dynamics.set_theta(theta)
        rows = [
            -obs.accelerometer_error(self.dynamics, k, xs[k], ws[k], acceleration(self, k, xs[k]))
            for k in range(self.horizon)
            if self.acceleration_observed(k)
        ]
        return np.array(rows).reshape(-1, 3)

    def observation_count(self) -> int:
        """Scalar observation residuals in the cost (every sensor term of every node)."""
        meas, model = self.measurements, self.dynamics.model
        bv = base_dofs(model)[1]
        per_node = (model.nv - bv) * ((meas.q is not None) + (meas.v is not None))
        if bv:
            per_node += 3 * sum(
                s is not None for s in (meas.base_quat, meas.gyro, meas.base_velocity)
            )
        count = per_node * (self.horizon + 1)
        if self.noise.foot_velocity is not None and self.contacts is not None:
            count += 3 * int(self.contacts.flags.sum())
        obs = self._accel_obs
        per_acceleration = 6 * len(obs.sensors) + (3 if obs.imu is not None else 0)
        observed = sum(self.acceleration_observed(k) for k in range(self.horizon))
        return count + per_acceleration * observed

    def reduced_chi_square(self, cost: float) -> float:
        """``2 cost / (m + p - n_theta)``: the MAP cost against its expectation when every
        noise model is right (m observation scalars, p prior scalars; the states and the
        process noise are as many unknowns as the dynamics removes). About 1 when the
        standard deviations given match the data; k means residuals sqrt(k) times larger
        than assumed, and the parameter standard deviations about that much too small."""
        nt = self.dynamics.n_theta
        prior = 0 if self.theta_prior_std is None else int(np.isfinite(self.theta_prior_std).sum())
        return 2.0 * cost / max(self.observation_count() + prior - nt, 1)

    def acceleration_observed(self, k: int) -> bool:
        """Whether node k has the acceleration observations: every node with a command but the
        one before a touch-down, whose interval holds the impact (in the reset map, not in
        ``a_k``; a real sample there reads the impact's spike)."""
        if not self._accel_obs.active or k >= self.horizon:
            return False
        return self.contacts is None or not self.contacts.touchdown(k + 1)

    def acceleration_terms(self, k: int, x: NDArray, w: NDArray, accel) -> tuple:  # noqa: ANN001
        """Every observation of node ``k < N`` that sees its acceleration (force/torque sensors,
        accelerometer), :class:`physid.oe.model.node_acceleration.NodeAccelerationObservations`."""
        return self._accel_obs.terms(self.dynamics, k, x, w, accel)

    @property
    def horizon(self) -> int:
        return self.u.shape[0]

    def transition(
        self, k: int, x: NDArray, w: NDArray, a: NDArray | None = None
    ) -> NDArray[np.float64]:
        """``f_p(x_k; theta | u_k) (+) w_k`` (theta as last set on the dynamics; ``a``: the
        node's acceleration if already computed)."""
        return state.integrate(self.dynamics.model, step(self, k, x, a), w)

    def node_residuals(
        self, k: int, x: NDArray, jacobian: bool
    ) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
        """Whitened observation residuals of node k (sensors, then the no-slip term)."""
        model = self.dynamics.model
        r, J = residuals(model, self.measurements, self.noise, k, x, jacobian)
        slip, sched = self.noise.foot_velocity, self.contacts
        if slip is None or sched is None or not sched.active(k):
            return r, J
        rf, Jf = feet_velocity(model, self._kinematics, sched.active(k), x, jacobian)
        if not jacobian:
            return np.concatenate([r, rf / slip]), None
        return np.concatenate([r, rf / slip]), np.vstack([J, Jf / slip])

    def _fixed_costs(self, x0: NDArray, theta: NDArray, ws: NDArray) -> float:
        r0 = state.difference(self.dynamics.model, self.x0_prior, x0) / self._x0_std
        w_std = self._w_std if self._w_nodes is None else self._w_nodes
        cost = 0.5 * r0 @ r0 + 0.5 * np.sum((ws / w_std) ** 2)
        if self.theta_prior_std is not None:
            rt = self.dynamics.prior_residual(theta, self.theta_prior)[0]
            rt = rt / self.theta_prior_std
            cost += 0.5 * rt @ rt
        return float(cost)

    def evaluate(
        self, xs: NDArray, ws: NDArray, theta: NDArray
    ) -> tuple[float, NDArray[np.float64]]:
        """Cost of eq. 16 and the gaps ``(N, nx)`` at a guess (for the merit, eq. 37)."""
        with np.errstate(all="ignore"):  # a diverged trial is reported by a non-finite cost
            return self._evaluate(xs, ws, theta)

    def evaluate_closed(
        self, xs: NDArray, theta: NDArray
    ) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
        """``(cost, ws, gaps)`` with the process noise that closes every gap,
        ``w_k = x_{k+1} (-) f_p(x_k; theta | u_k)`` (the gaps are then zero)."""
        with np.errstate(all="ignore"):  # a diverged trial is reported by a non-finite cost
            ws = np.empty((self.horizon, self.dynamics.nx))
            cost, gaps = self._evaluate(xs, ws, theta, closing=True)
        return cost, ws, gaps

    def _evaluate(
        self, xs: NDArray, ws: NDArray, theta: NDArray, closing: bool = False
    ) -> tuple[float, NDArray[np.float64]]:
        """Cost and gaps; ``closing``: ``ws`` is written with the noise that closes the gaps."""
        model = self.dynamics.model
        self.dynamics.set_theta(theta)
        cost = 0.0
        gaps = np.zeros((self.horizon, self.dynamics.nx))
        for k in range(self.horizon + 1):
            r, _ = self.node_residuals(k, xs[k], False)
            cost += 0.5 * r @ r
            if k == self.horizon:
                break
            a = acceleration(self, k, xs[k]) if self.acceleration_observed(k) else None
            if closing:
                ws[k] = state.difference(model, step(self, k, xs[k], a), xs[k + 1])
            else:
                gaps[k] = state.difference(model, xs[k + 1], self.transition(k, xs[k], ws[k], a))
            if a is not None:  # the same acceleration the transition integrated
                (rf,) = self.acceleration_terms(k, xs[k], ws[k], a)
                cost += 0.5 * rf @ rf
        return float(cost + self._fixed_costs(xs[0], theta, ws)), gaps

    def _chart_curvature(self, theta: NDArray, prior_residual: NDArray) -> NDArray[np.float64]:
        """The second-order terms the Gauss-Newton Hessian leaves out where the chart itself is
        curved, with the data's gradient taken at a stationary point: minus the prior's,
        ``g = (s0 - s) / std^2`` on the coordinates ``s`` that enter through ``e^s`` linearly
        (the joint terms' logarithms, exp_eig's log principal second moments:
        ``ParametrizedModel.log_linear``). There ``d^2/ds^2 = d/ds`` and the term is ``g``
        itself; on exp_eig's rotation it is ``g`` through the rotated moments
        (:func:`physid.oe.model.charts.rotation_curvature`). Where the data pull a value below
        its prior's centre (a friction the motion shows to be about 0, a trunk's second
        moments run towards the consistency boundary) the data term grows like ``e^s`` and
        Gauss-Newton sees too little curvature, in ``s`` and in the axes between two such
        moments: its steps overshoot and the line search halves every one, or the axes swing
        by radians from one iteration to the next. Only the positive part is added, which
        shortens those steps and never lengthens one."""
        out = np.zeros(self.dynamics.n_theta)
        if self.theta_prior_std is not None:
            std = self.theta_prior_std
            use = self.dynamics.log_linear & np.isfinite(std)
            g = np.zeros_like(out)
            g[use] = -prior_residual[use] / std[use] ** 2
            out = np.maximum(g, 0.0) + self.dynamics.rotation_curvature(theta, g)
        return np.maximum(out, 0.0)

    def linearize(
        self, xs: NDArray, ws: NDArray, theta: NDArray, bias_columns: bool = False
    ) -> Linearization:
        """Gauss-Newton linearization (the data of eq. 21) at ``(xs, ws, theta)``.
        ``bias_columns``: the accelerometer bias as three more parameters after theta (the
        parameter blocks ``C``, ``Ltt``, ``lt`` and the coupling have ``n_theta + 3`` columns;
        the dynamics do not see it, the accelerometer residual has ``d r / d b = I / sigma``),
        for the Laplace covariance of theta and the bias together."""
        model, dyn = self.dynamics.model, self.dynamics
        nb = 3 if bias_columns and self._accel_obs.imu is not None else 0
        N, nx, nt = self.horizon, dyn.nx, dyn.n_theta + nb
        dyn.set_theta(theta)
        cost = self._fixed_costs(xs[0], theta, ws)
        A, B, C = np.empty((N, nx, nx)), np.empty((N, nx, nx)), np.empty((N, nx, nt))
        gaps, Lxx, lx = np.empty((N, nx)), np.empty((N + 1, nx, nx)), np.empty((N + 1, nx))
        w_std = self._w_std if self._w_nodes is None else self._w_nodes
        lw = ws / w_std**2
        Ltt, lt = np.zeros((nt, nt)), np.zeros(nt)
        coupling, lt_nodes = None, None
        if self._accel_obs.active:
            lt_nodes = np.zeros((N, nt))
        if self._accel_obs.active or self._w_nodes is not None:
            coupling = ObservationCoupling(*(np.zeros((N, nx, n)) for n in (nx, nx, nt, nt)))
        if self._w_nodes is not None:  # per-node noise: its difference to Lww, node by node
            diag = self._w_nodes**-2.0 - self._w_std**-2.0
            coupling.Lww[:, np.arange(nx), np.arange(nx)] = diag
        for k in range(N + 1):
            r, J = self.node_residuals(k, xs[k], True)
            Lxx[k], lx[k] = J.T @ J, J.T @ r
            cost += 0.5 * float(r @ r)
            if k == N:
                break
            accel = acceleration_derivatives(self, k, xs[k])
            f0, Fx, Ft = step_derivatives(self, k, xs[k], accel)
            to_f0 = state.d_integrate(model, f0, ws[k], 0)
            A[k], B[k] = to_f0 @ Fx, state.d_integrate(model, f0, ws[k], 1)
            C[k, :, : nt - nb], C[k, :, nt - nb :] = to_f0 @ Ft, 0.0
            gaps[k] = state.difference(model, xs[k + 1], state.integrate(model, f0, ws[k]))
            if self.acceleration_observed(k):
                r, Jx, Jw, Jt = self.acceleration_terms(k, xs[k], ws[k], accel)
                if nb:  # the accelerometer's rows are the last three
                    Jb = np.zeros((r.size, nb))
                    Jb[-3:] = np.eye(3) / self._accel_obs.acc_std
                    Jt = np.hstack([Jt, Jb])
                cost += 0.5 * float(r @ r)
                Lxx[k] += Jx.T @ Jx
                lx[k] += Jx.T @ r
                lw[k] += Jw.T @ r
                coupling.Lxw[k] = Jx.T @ Jw
                coupling.Lww[k] += Jw.T @ Jw
                coupling.Lxt[k], coupling.Lwt[k] = Jx.T @ Jt, Jw.T @ Jt
                Ltt += Jt.T @ Jt
                lt_nodes[k] = Jt.T @ r
                lt += lt_nodes[k]
        J0 = state.d_difference(model, self.x0_prior, xs[0], 1) / self._x0_std[:, None]
        r0 = state.difference(model, self.x0_prior, xs[0]) / self._x0_std
        Lxx[0] += J0.T @ J0
        lx[0] += J0.T @ r0
        if self.theta_prior_std is not None:
            rt, Jt = dyn.prior_residual(theta, self.theta_prior)
            Jt = Jt / self.theta_prior_std[:, None]
            p = slice(0, nt - nb)
            Ltt[p, p] += Jt.T @ Jt + np.diag(self._chart_curvature(theta, rt))
            lt[p] += Jt.T @ (rt / self.theta_prior_std)
        return Linearization(
            A,
            B,
            C,
            gaps,
            Lxx,
            lx,
            np.diag(self._w_std**-2.0),
            lw,
            Ltt,
            lt,
            cost,
            float(np.abs(gaps).sum()),
            coupling,
            lt_nodes,
        )
