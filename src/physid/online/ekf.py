"""Physically consistent online inertial EKF on log-Cholesky parameters (paper E §III).

State: ``theta`` (10 per estimated body, paper E eq. 16 order
``[alpha, d1, d2, d3, s12, s13, s23, t1, t2, t3]``), mapped to ``pi = g(theta)`` by
:func:`physid.body.inertia.pi_from_log_cholesky` (``J = U U^T``, Rucker & Wensing; the chart of
Pinocchio's LogCholeskyParameters, not the printed eq. 17 which is ``U^T U``). Every theta gives
a fully consistent body, so every streamed estimate is consistent by construction.

Per sample (the shared loop of :class:`RecursiveInertialFilter`):

1. causal finite-difference acceleration at the middle of the sample window, other signals
   delayed to match (§III-D; :class:`~physid.online.stream.SampleWindow`);
2. measurement ``delta_tau`` and ``Y_est`` (eqs. 7, 14, 15; :mod:`physid.online.measurement`),
   minus the start-up bias (§IV-B);
3. predict: random walk ``theta_k = theta_{k-1} + eta_k`` (eq. 18), ``P += Q dt`` with ``Q``
   a spectral density, so the tuning does not depend on the sample rate;
4. update with ``h(theta) = Y_est g(theta)`` (eq. 19), innovation and ``S = H P H^T + R`` with
   ``H = Y_est G`` (eqs. 20-21), gain ``K = P H^T S^-1``, Joseph-form covariance;
   the rows of joints held by static friction count on the first sample of each rest only
   (:meth:`RecursiveInertialFilter._fresh_rows`), and the joint rows' noise defaults to the
   nominal model's own residual (``measurement_noise.joint_torque: auto``);
5. innovation gating ``nu^T S^-1 nu <= gamma`` (eq. 22) with gamma the chi-square quantile of
   the configured probability, as many degrees of freedom as rows;
6. rate-limited output (§IV-B).

The baseline linear KF (:mod:`physid.online.baseline`) differs only in the state map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum

import numpy as np
import pinocchio as pin
import scipy.stats
from numpy.typing import ArrayLike, NDArray

from physid.body.inertia import (
    log_cholesky_from_pi,
    log_cholesky_jacobian,
    log_cholesky_pi_and_jacobian,
    project_consistent,
)
from physid.errors import InputError
from physid.online.config import AUTO_NOISE, DEFAULT_JOINT_TORQUE_STD, OnlineConfig
from physid.online.friction import JointFriction
from physid.online.measurement import SplitMeasurement
from physid.online.results import BodyEstimate, OnlineEstimate
from physid.online.stream import BiasCalibration, RateLimiter, SampleWindow, Skip


class Gate(Enum):
    """The innovation gate's decision on one measurement (paper E eq. 22)."""

    ACCEPT = "accept"
    REJECT = "reject"
    RELEASE = "release"  # rejected for release_after_s: a real change, accepted from now on


def joseph_update(
    P: NDArray[np.float64], K: NDArray[np.float64], H: NDArray[np.float64], r: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Joseph form ``(I - K H) P (I - K H)^T + K R K^T`` for diagonal ``R = diag(r)``.

    Symmetric and positive semi-definite for any gain ``K`` (not only the optimal one), unlike
    ``(I - K H) P``, which loses both to rounding.
    """
    A = -(K @ H)
    A.flat[:: A.shape[0] + 1] += 1.0  # I - K H without allocating I
    return A @ P @ A.T + (K * r) @ K.T


def _joint_torque_std(configured: float | str, nominal: ArrayLike | None) -> tuple[str, NDArray]:
    """Where the joint rows' noise std comes from, and its value (one, or one per actuated
    joint): the configured number; with ``auto`` the nominal model's own residual per joint
    (``nominal``, its identification's training RMS residual), else
    :data:`DEFAULT_JOINT_TORQUE_STD`.

    Why the residual: the measurement of eq. 15 subtracts the nominal model, so its error is at
    least that model's own misfit. A fixed 1 N m (paper E's simulations) below a real arm's
    misfit of several N m per joint reads that systematic misfit as load changes and gates many
    of the measurements (docs/online.md)."""
    if configured != AUTO_NOISE:
        return "config", np.asarray(float(configured))
    if nominal is None:
        return "default", np.asarray(DEFAULT_JOINT_TORQUE_STD)
    std = np.asarray(nominal, dtype=float)
    if not np.all(np.isfinite(std) & (std > 0)):
        raise InputError(f"joint torque noise std must be finite and > 0, got {std.tolist()}")
    return "nominal residual", std


MASS_FLOOR = 0.01  # the smallest mass an estimated body takes, as a share of its nominal mass


def robot_extent(model: pin.Model) -> float:
    """The robot's size [m] as a bound on any body's centre of mass: the length of its joint
    chain stretched out (the sum of the joint placements' translations)."""
    return float(
        sum(np.linalg.norm(model.jointPlacements[j].translation) for j in range(1, model.njoints))
    )


class RecursiveInertialFilter:
    """Shared predict/update loop of :class:`InertialEKF` and the baseline KF.

    ``projects_emitted``: emitted bodies that fail the consistency test after rounding are
    projected onto the consistent set and flagged (the EKF); the baseline KF, whose point is to
    show the linear filter leaving that set, emits its estimates as they are.

    ``model``: Pinocchio model with the nominal inertias of every body (e.g. from
    :func:`physid.robot.model.load_urdf`, then :func:`physid.files.params_file.apply_inertias`);
    the initial
    estimate of an estimated body is its nominal inertia. ``bodies``: joint names of the bodies to
    estimate. InputError for an unknown body or frame, an inconsistent nominal model or config.
    ``joint_friction``: the joints' friction and armature (:mod:`physid.online.friction`, from an
    offline params.json), part of the nominal model; without it they are taken as zero.

    The streamed estimate is the filter's mean passed through the rate limiter; its covariance is
    the filter's (``G P G^T``), the uncertainty of the state the output is moving toward.
    """

    _trust_region = True  # limit each update to max_update_std prior stds (see update)
    projects_emitted = True  # see the class docstring

    def __init__(
        self,
        model: pin.Model,
        bodies: Sequence[str],
        config: OnlineConfig | None = None,
        joint_friction: JointFriction | None = None,
        joint_torque_std: ArrayLike | None = None,
    ) -> None:
        self.config = config = config or OnlineConfig()
        self.measurement = meas = SplitMeasurement(
            model, bodies, config.contact_frames, joint_friction
        )
        self.bodies = meas.bodies
        self.n_bodies = nb = len(meas.bodies)
        for joint, pi in zip(meas.bodies, meas.nominal_pi, strict=True):
            if not np.any(pi):
                raise InputError(
                    f"body '{joint}' has no inertia in the nominal model, so there is no initial "
                    "estimate; give one through a params.json (config nominal_params)"
                )
        theta0 = log_cholesky_from_pi(meas.nominal_pi)  # InputError if a body is inconsistent
        G0 = log_cholesky_jacobian(theta0)
        self._x = self._state_from_pi(meas.nominal_pi)
        self._P0 = self._covariance(config.initial_std.vector() ** 2, G0)
        self._P = self._P0.copy()
        self._inverse_std0 = 1.0 / np.sqrt(np.diag(self._P0))
        self._max_step = config.max_update_std if self._trust_region else np.inf
        self._Q = self._covariance(config.process_noise.vector() ** 2, G0)  # per second
        noise = config.measurement_noise
        self.noise_source, joint_std = _joint_torque_std(noise.joint_torque, joint_torque_std)
        # per measurement row (as meas.rows), before the friction model's variance near rest
        self.measurement_std = meas.noise_std(joint_std, noise.base_force, noise.base_torque)
        self._r = self.measurement_std**2
        self._rhs = np.empty((meas.n_rows, 1 + 10 * nb))  # [innovation | H P] for one solve
        p = config.gating.probability
        self.gamma = np.inf if p is None else float(scipy.stats.chi2.ppf(p, df=meas.n_rows))
        # eq. 22's threshold for each number of rows a measurement keeps (see _fresh_rows)
        self._gammas = (
            np.full(meas.n_rows + 1, np.inf)
            if p is None
            else np.concatenate(([0.0], scipy.stats.chi2.ppf(p, df=np.arange(1, meas.n_rows + 1))))
        )
        self._resting = np.zeros(meas.n_rows, dtype=bool)  # rows held by static friction
        self._release_s = config.gating.release_after_s
        n_wrench = 6 * len(meas.frame_ids)
        self._window = SampleWindow(
            model.nq,
            model.nv,
            meas.n_actuated,
            n_wrench,
            config.window_samples,
            config.max_gap_s,
        )
        self.calibration = BiasCalibration(meas.n_rows, config.calibration_s)
        self._limiter = RateLimiter(config.rate_limit, meas.nominal_pi)
        self._t_update: float | None = None  # time of the last measurement update
        self._gated_since: float | None = None
        self._released = False
        self._pi, self._G = self._pi_and_jacobian(self._x)
        self._last = OnlineEstimate(np.nan, np.nan, self._bodies(self._pi), skipped=True)
        # plausibility bounds of the log-Cholesky state (_bounded)
        self.com_bound_m = robot_extent(model)
        self._alpha_floor = 0.5 * np.log(MASS_FLOOR * meas.nominal_pi[:, 0])
        self.bounded_updates = 0  # updates whose estimate was brought back within them

    # --- state map: overridden by the baseline ---------------------------------------------------
    def _state_from_pi(self, pi: NDArray[np.float64]) -> NDArray[np.float64]:
        return log_cholesky_from_pi(pi).ravel()

    def _pi_and_jacobian(self, x: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
        """``pi = g(theta)`` (n_bodies, 10) and ``G = d pi / d theta`` (n_bodies, 10, 10)."""
        return log_cholesky_pi_and_jacobian(x.reshape(self.n_bodies, 10))

    def _covariance(self, theta_variance: NDArray, G0: NDArray) -> NDArray[np.float64]:
        """Block-diagonal covariance of the state from per-theta variances."""
        return np.diag(np.tile(theta_variance, self.n_bodies))

    # --- the loop ---------------------------------------------------------------------------------
    @property
    def delay_samples(self) -> int:
        """Samples by which the measurement lags the latest input (§III-D)."""
        return (self.config.window_samples - 1) // 2

    @property
    def estimate(self) -> OnlineEstimate:
        """The latest streamed estimate."""
        return self._last

    def _wrenches(self, contacts: Mapping[str, ArrayLike] | ArrayLike | None) -> NDArray:
        frames = self.measurement.contact_frames
        if not frames:
            return np.zeros(0)
        if contacts is None:
            raise InputError(f"contact wrenches are required for frames {list(frames)}")
        if isinstance(contacts, Mapping):
            missing = [f for f in frames if f not in contacts]
            if missing:
                raise InputError(f"no wrench given for contact frame(s) {missing}")
            contacts = [contacts[f] for f in frames]
        try:
            wrench = np.asarray(contacts, dtype=float).ravel()
        except (TypeError, ValueError):
            raise InputError("contact wrenches must be numbers, 6 per contact frame") from None
        if wrench.shape != (6 * len(frames),):
            raise InputError(
                f"contact wrenches must be ({len(frames)}, 6), got {wrench.size} values"
            )
        return wrench

    def update(
        self,
        t: float,
        q: ArrayLike,
        dq: ArrayLike | None,
        tau: ArrayLike,
        contacts: Mapping[str, ArrayLike] | ArrayLike | None = None,
    ) -> OnlineEstimate:
        """Feed one sample and return the current (streamed) estimate.

        ``q`` (nq; free flyer: position, quaternion x y z w, then joints), ``dq`` (nv; free flyer:
        linear then angular velocity of the root in the root frame), ``tau`` the sensed
        actuated torques (nv, or nv - 6 with a free flyer), ``contacts`` the sensed wrenches
        ``[fx, fy, fz, mx, my, mz]`` per contact frame (mapping frame -> 6 values, or an array in
        the configured frame order), world-aligned axes at the frame origin. A bad sample is
        skipped and flagged (:class:`~physid.online.stream.Skip`), never raises; wrong array
        sizes raise InputError.

        ``dq=None`` (fixed base only; every sample alike): the velocities are estimated from the
        positions, by the same causal window as the accelerations (a quadratic least-squares fit
        over the window, valid at its middle sample: delay ``(W - 1) / 2`` samples, compensated
        by delaying positions and torques alike; :class:`~physid.online.stream.SampleWindow`).
        """
        from_positions = dq is None
        t, q, dq, tau = self._sample(t, q, dq, tau)
        skip = self._window.push(
            t, q, dq, tau, self._wrenches(contacts), velocity_from_positions=from_positions
        )
        if skip or not self._window.full:
            # a non-finite time is flagged, never echoed: the row keeps the last time stamp
            t_row = t if np.isfinite(t) else self._last.t
            return self._hold(t_row, np.nan, skip or Skip.FILLING_WINDOW)
        return self._measure(t)

    def _sample(
        self, t: float, q: ArrayLike, dq: ArrayLike | None, tau: ArrayLike
    ) -> tuple[float, NDArray, NDArray, NDArray]:
        """The sample of :meth:`update` as a float and arrays of the model's sizes (zeros for a
        ``dq`` of None; a free flyer's quaternion normalised); InputError otherwise."""
        meas = self.measurement
        model = meas.model
        if dq is None and meas.floating_base:
            raise InputError(
                "dq is required with a floating base (its velocity is not estimated from poses)"
            )
        try:
            t = float(t)
            q = np.asarray(q, dtype=float)
            dq = np.zeros(model.nv) if dq is None else np.asarray(dq, dtype=float)
            tau = np.asarray(tau, dtype=float)
        except (TypeError, ValueError):
            raise InputError(
                "update expects a number t and numeric arrays q, dq and tau; got "
                f"{type(t).__name__}, {type(q).__name__}, {type(dq).__name__}, "
                f"{type(tau).__name__}"
            ) from None
        if q.shape != (model.nq,) or dq.shape != (model.nv,) or tau.shape != (meas.n_actuated,):
            raise InputError(
                f"update expects q ({model.nq},), dq ({model.nv},) and tau ({meas.n_actuated},); "
                f"got {q.shape}, {dq.shape}, {tau.shape}"
            )
        if meas.floating_base:  # a state estimator's quaternion drifts off the unit sphere
            q = q.copy()
            q[3:7] /= np.linalg.norm(q[3:7])
        return t, q, dq, tau

    def _measure(self, t: float) -> OnlineEstimate:
        """Steps 2-3 of the module docstring on the window's middle sample (the measurement,
        the bias calibration, the prediction), then :meth:`_correct`."""
        meas = self.measurement
        t_meas, q_m, v_m, tau_m, wrench_m, a_m = self._window.middle()
        wrenches = wrench_m.reshape(-1, 6) if meas.frame_ids else None
        delta_tau, Y = meas.evaluate(q_m, v_m, a_m, tau_m, wrenches)
        if not np.isfinite(delta_tau.sum() + Y.sum()):
            return self._hold(t, t_meas, Skip.NON_FINITE_MEASUREMENT)
        h = Y @ self._pi.ravel()  # eq. 19 at the prior (random walk: prior mean = last mean)
        if self.calibration.add(t_meas, delta_tau - h):
            return self._hold(t, t_meas, None, calibrating=True)
        innovation = delta_tau - self.calibration.bias - h  # eq. 20
        dt = 0.0 if self._t_update is None else t_meas - self._t_update
        P = self._P + self._Q * dt  # eq. 18 (predict)
        H = self._measurement_jacobian(Y)  # eq. 21
        extra = meas.model_variance(v_m)  # friction-model uncertainty near zero speed
        r = self._r if extra is None else self._r + extra
        fresh = self._fresh_rows(v_m)
        if fresh is not None:
            if not fresh.any():  # a rest also ends a run of gated samples (release_after_s)
                self._P, self._t_update, self._gated_since = P, t_meas, None
                return self._hold(t, t_meas, Skip.AT_REST)
            H, innovation, r = H[fresh], innovation[fresh], r[fresh]
        return self._correct(t, t_meas, P, H, innovation, r)

    def _correct(
        self, t: float, t_meas: float, P: NDArray, H: NDArray, innovation: NDArray, r: NDArray
    ) -> OnlineEstimate:
        """Steps 4-5 of the module docstring: the gated measurement update of the predicted
        covariance ``P`` with the rows ``H``, ``innovation`` and noise variances ``r``."""
        X = self._solve(P, H, innovation, r)
        if X is None:
            return self._hold(t, t_meas, Skip.SINGULAR_INNOVATION)
        nis = float(innovation @ X[:, 0])  # left side of eq. 22
        self._t_update = t_meas
        decision = self._gate(t_meas, nis, len(innovation))
        if decision is Gate.REJECT:
            self._P = P
            return self._emit(t, t_meas, gated=True, nis=nis)
        if decision is Gate.RELEASE:  # the load changed: reopen the prior uncertainty, re-solve
            P = P + self._P0
            X = self._solve(P, H, innovation, r)
            if X is None:
                return self._hold(t, t_meas, Skip.SINGULAR_INNOVATION)
        K = X[:, 1:].T
        step = K @ innovation
        # Trust region: g grows like exp(2 alpha), so after a large load change the linearized
        # step overshoots by orders of magnitude (0.3 -> 4.8 kg asks for alpha + 7.5). Scale the
        # gain so that no parameter moves more than max_update_std prior stds in one update;
        # the Joseph form keeps P consistent with the gain actually applied.
        largest = float(np.max(np.abs(step) * self._inverse_std0))
        if largest > self._max_step:
            K = K * (self._max_step / largest)
            step = K @ innovation
        x_new = self._bounded(self._x + step)
        P_new = joseph_update(P, K, H, r)
        pi_new, G_new = self._pi_and_jacobian(x_new)
        if not np.isfinite(P_new.sum() + pi_new.sum()):
            self._P = P
            return self._hold(t, t_meas, Skip.NUMERICAL_FAILURE, nis=nis)
        self._x, self._P, self._pi, self._G = x_new, P_new, pi_new, G_new
        return self._emit(t, t_meas, gated=False, nis=nis)

    def _solve(self, P: NDArray, H: NDArray, innovation: NDArray, r: NDArray) -> NDArray | None:
        """``S^-1 [nu, H P]`` with ``S = H P H^T + diag(r)`` (eq. 20): one solve gives both the
        normalized innovation and ``K^T = S^-1 H P``; None if S is singular."""
        PHt = P @ H.T
        S = H @ PHt
        S[np.diag_indices_from(S)] += r
        rhs = self._rhs[: len(innovation)]
        rhs[:, 0], rhs[:, 1:] = innovation, PHt.T
        try:
            return np.linalg.solve(S, rhs)
        except np.linalg.LinAlgError:
            return None

    def _measurement_jacobian(self, Y: NDArray[np.float64]) -> NDArray[np.float64]:
        """``H = Y_est G`` with G block-diagonal over bodies (eq. 21)."""
        if self.n_bodies == 1:
            return Y @ self._G[0]
        blocks = Y.reshape(Y.shape[0], self.n_bodies, 10).transpose(1, 0, 2) @ self._G
        return blocks.transpose(1, 0, 2).reshape(Y.shape[0], -1)

    def _bounded(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """``x`` with each body's centre of mass within :attr:`com_bound_m` of its joint and
        its mass at least :data:`MASS_FLOOR` of the nominal one (log-Cholesky state only).

        The data see a body's first moment ``m c`` best; a pull the body cannot explain (a
        nominal model that holds part of the load in the body before, a transient) drives the
        mass to zero and the centre of mass away along ``m c``, where the measurement's
        Jacobian in ``alpha`` and ``t`` (both proportional to ``m``) vanishes: the filter can
        never come back: a body can stay near 0 kg for the rest of a run, through later load
        steps, status ok; with the bounds the steps are followed. They are the robot's own
        extent and 1 % of the nominal mass, which no plausible body reaches; near the floor the
        recovery is slow (the Jacobian is still proportional to the mass)."""
        if not self._trust_region:  # the baseline's raw pi: no chart to bound
            return x
        theta = x.reshape(self.n_bodies, 10).copy()
        alpha = np.maximum(theta[:, 0], self._alpha_floor)
        com = theta[:, 7:10]
        distance = np.linalg.norm(com, axis=1)
        scale = np.minimum(1.0, self.com_bound_m / np.maximum(distance, 1e-300))
        if np.any(alpha != theta[:, 0]) or np.any(scale < 1.0):
            self.bounded_updates += 1
            theta[:, 0] = alpha
            theta[:, 7:10] = com * scale[:, None]
        return theta.ravel()

    def _fresh_rows(self, v: NDArray[np.float64]) -> NDArray[np.bool_] | None:
        """The rows whose measurement is new; None: all of them (no joint friction).

        A joint held by static friction carries a torque anywhere within its static level,
        which :meth:`JointFriction.torque_variance` counts as noise; but it is one draw that
        lasts as long as the joint rests, not noise that averages out. Its row therefore counts
        on the first sample of each rest only: counted on every sample, a few seconds at rest
        read that one static torque as hundreds of independent measurements, enough to move a
        wrist load several-fold in an uninformative pose (docs/online.md)."""
        resting = self.measurement.resting_rows(v)
        if resting is None:
            return None
        fresh = ~(resting & self._resting)
        self._resting = resting
        return fresh

    def _gate(self, t_meas: float, nis: float, n_rows: int) -> Gate:
        """Eq. 22: accept or reject; release after ``release_after_s`` of uninterrupted
        rejection (then every sample is accepted until one passes the gate)."""
        if nis <= self._gammas[n_rows]:
            self._gated_since, self._released = None, False
            return Gate.ACCEPT
        if self._released:
            return Gate.ACCEPT
        if self._gated_since is None:
            self._gated_since = t_meas
        if self._release_s is not None and t_meas - self._gated_since >= self._release_s:
            self._released = True  # a persistent innovation is a real change, not an impact
            return Gate.RELEASE
        return Gate.REJECT

    def _bodies(self, streamed: NDArray[np.float64]) -> tuple[BodyEstimate, ...]:
        out = []
        for b, joint in enumerate(self.bodies):
            block = slice(10 * b, 10 * b + 10)
            cov = self._G[b] @ self._P[block, block] @ self._G[b].T
            out.append(BodyEstimate(joint, streamed[b], cov))
        return tuple(out)

    def _emit(self, t: float, t_meas: float, *, gated: bool, nis: float) -> OnlineEstimate:
        streamed = self._limiter(float(t), self._pi).copy()  # the filter's own state stays as is
        # Consistent in exact arithmetic (log-Cholesky, convex rate limiting); a near-flat body
        # at a large scale can still fail the test after rounding: projected, and flagged.
        projected = False
        for b in range(self.n_bodies if self.projects_emitted else 0):
            streamed[b], moved = project_consistent(streamed[b])
            projected |= moved
        self._last = OnlineEstimate(
            float(t),
            float(t_meas),
            self._bodies(streamed),
            gated=gated,
            nis=nis,
            projected=projected,
        )
        return self._last

    def _hold(
        self,
        t: float,
        t_meas: float,
        reason: Skip | None,
        *,
        calibrating: bool = False,
        nis: float = np.nan,
    ) -> OnlineEstimate:
        """The previous estimate, flagged (a skipped update or a calibration sample)."""
        self._last = OnlineEstimate(
            float(t),
            float(t_meas),
            self._last.bodies,
            skipped=not calibrating,
            calibrating=calibrating,
            nis=nis,
            reason=reason,
        )
        return self._last


class InertialEKF(RecursiveInertialFilter):
    """Log-Cholesky EKF of paper E (eqs. 13-15, 18-22); see the module docstring.

    Example::

        model = apply_inertias(load_urdf("robot.urdf"), read_params("params.json"))
        ekf = InertialEKF(model, ["wrist_joint"], load_online_config("online.yaml"))
        for t, q, dq, tau in stream:
            estimate = ekf.update(t, q, dq, tau)
            controller.set_inertia(estimate.bodies[0].pi)
    """
