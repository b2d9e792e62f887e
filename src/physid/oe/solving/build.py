"""Assemble an :class:`OEProblem` and its initial guess from recorded signals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.errors import InputError
from physid.oe.model.compliance import SoftContact
from physid.oe.model.contact import ContactModels
from physid.oe.model.dynamics import JointTerms, ParametrizedModel
from physid.oe.model.joint_estimate import JointEstimate
from physid.oe.model.measurements import Measurements, NoiseStd, base_dofs
from physid.oe.model.phases import ContactSchedule
from physid.oe.solving.problem import OEProblem


def default_actuation(model: pin.Model) -> NDArray[np.float64]:
    """Commands drive every joint but the free-flyer base: ``tau = [0_6; u]`` or ``tau = u``."""
    _, bv = base_dofs(model)
    return np.eye(model.nv)[:, bv:]


def make_problem(
    model: pin.Model,
    body_joints: Sequence[str],
    chart: str,
    dt: float,
    u: NDArray,
    measurements: Measurements,
    noise: NoiseStd | None = None,
    *,
    actuation: NDArray | None = None,
    theta_prior: NDArray | None = None,
    theta_prior_std: float | NDArray | None = None,
    x0_prior: NDArray | None = None,
    contact_frames: Sequence[str] = (),
    contact_flags: NDArray | None = None,
    contact_damping: float = 0.0,
    soft_contact: SoftContact | None = None,
    imu_frame: str | None = None,
    joints: JointTerms | None = None,
    contact_radius: float | Sequence[float] = 0.0,
    joint_estimate: JointEstimate | None = None,
    second_moment_std: float | None = None,
    axes_std: float | None = None,
) -> OEProblem:
    """An eq. 16 problem. The parameter prior defaults to the model's inertias of the bodies
    (omitted from the cost when ``theta_prior_std`` is None); the arrival prior defaults to the
    first recorded configuration (its base part as in the model's neutral pose) at rest.
    ``contact_flags`` ``(N+1, len(contact_frames))``: the known contact sequence (eq. 16);
    ``contact_damping``: Baumgarte velocity gain of the contacts [1/s] (``ContactModels``);
    ``soft_contact``: the contacts' compliance and spring, fixed or estimated as theta's last
    two entries (:mod:`physid.oe.model.compliance`; default rigid), the floor at the height
    of the feet in contact at the arrival prior's configuration;
    ``imu_frame``: the frame of the accelerometer on the base (default: the base frame);
    ``joints``: armature and joint friction (:class:`~physid.oe.model.dynamics.JointTerms`; default
    none, the rigid bodies of paper B); ``contact_radius`` [m]: round feet of that radius (one
    number, or one per contact frame) centred on the contact frames, each node's contact
    point at the sphere's lowest point (:func:`rolling_contact_points`; 0: the frames'
    origins); ``joint_estimate``: joint terms estimated with the bodies (their ``joints``
    values the start and prior, :mod:`physid.oe.model.joint_estimate`; their log-normal prior
    applies even when ``theta_prior_std`` is None, the bodies' prior then infinitely wide);
    ``second_moment_std`` / ``axes_std``: when ``theta_prior_std`` is None, a log-normal
    prior of that std on each body's principal second moments, and one [rad] on the rotation
    of its principal axes, about the model's (exp_eig coordinates 7-9 and 4-6; ``physid oe``'s
    defaults, :data:`physid.oe.model.dynamics.SECOND_MOMENT_LOG_STD` and
    :data:`~physid.oe.model.dynamics.PRINCIPAL_AXES_STD`)."""
    if not (dt > 0 and np.isfinite(dt)):
        raise InputError(f"node spacing dt must be positive, got {dt!r}")
    u = np.atleast_2d(np.asarray(u, dtype=float))
    act = default_actuation(model) if actuation is None else np.asarray(actuation, float)
    soft = soft_contact if contact_flags is not None else None
    dyn = ParametrizedModel(model, body_joints, chart, act, dt, joints, joint_estimate, soft)
    prior = dyn.nominal_theta() if theta_prior is None else np.asarray(theta_prior, float)
    std = None
    shape = second_moment_std is not None or axes_std is not None
    if theta_prior_std is None and (joint_estimate is not None or shape or dyn.n_soft):
        # joint terms and soft contact keep their log-normal priors
        std = dyn.theta_prior_std(np.inf, second_moment_std, axes_std)
    elif theta_prior_std is not None:
        std = np.asarray(theta_prior_std, float)
        if std.size <= 1:  # one number: the bodies' std; the joint terms keep their own
            std = dyn.theta_prior_std(std)
        std = np.broadcast_to(std, prior.shape).copy()
    if x0_prior is None:
        q0 = pin.neutral(model) if measurements.q is None else measurements.q[0].copy()
        x0_prior = np.r_[q0, np.zeros(model.nv)]
    schedule = None
    if contact_flags is not None:
        points = None
        if np.any(np.asarray(contact_radius, dtype=float) != 0):
            points = rolling_contact_points(model, contact_frames, measurements, contact_radius)
        schedule = ContactSchedule(dyn.model, contact_frames, contact_flags, points)
        # the schedule's models carry the Baumgarte gain (phases.py is not this option's owner)
        schedule.models = ContactModels(dyn.model, contact_frames, contact_damping)
        schedule.models.ground = floor_height(
            model, contact_frames, contact_flags, x0_prior, points
        )
    x0 = np.asarray(x0_prior, float)
    noise = noise or NoiseStd()
    return OEProblem(dyn, u, measurements, noise, x0, prior, std, schedule, imu_frame)


def floor_height(
    model: pin.Model, frames: Sequence[str], flags: NDArray, x0: NDArray, points: NDArray | None
) -> float:
    """The floor's height [m] under a soft contact (:mod:`physid.oe.model.compliance`): the
    mean height of the contact points in contact at node 0 (all of them if none is) at the
    arrival prior's configuration ``x0``."""
    data = model.createData()
    pin.framesForwardKinematics(model, data, np.asarray(x0, float)[: model.nq])
    on = np.asarray(flags, dtype=bool)[0]
    heights = []
    for i, name in enumerate(frames):
        offset = np.zeros(3) if points is None else points[0, i]
        heights.append((data.oMf[model.getFrameId(name)].act(offset))[2])
    heights = np.asarray(heights)
    return float(np.mean(heights[on] if np.any(on) else heights))


def rolling_contact_points(
    model: pin.Model,
    frames: Sequence[str],
    measurements: Measurements,
    radius: float | Sequence[float],
) -> NDArray[np.float64]:
    """``(N+1, n_frames, 3)``: per node the lowest point of a sphere of ``radius`` [m] (one,
    or one per frame) centred on each frame, in that frame's coordinates, ``R_f^T (0, 0,
    -radius)`` with ``R_f`` the frame's world orientation at the recorded configuration
    (encoders and IMU orientation): where a round foot touches a horizontal floor while it
    rolls (paper B's point contact is the frame's origin, a foot's radius too low, which
    the estimate takes up in the torso's CoM)."""
    radii = np.asarray(radius, dtype=float)
    if radii.ndim > 1 or (radii.ndim == 1 and radii.size != len(frames)):
        raise InputError(f"contact radius must be one number or {len(frames)} (one per frame)")
    radii = np.broadcast_to(radii, (len(frames),))
    if not np.all(np.isfinite(radii) & (radii >= 0)):
        raise InputError(f"contact radius must be >= 0 [m], got {radius!r}")
    if measurements.q is None:
        raise InputError("round feet need the encoders (q) to place the contact points")
    data = model.createData()
    ids = [model.getFrameId(f) for f in frames]
    _, bv = base_dofs(model)
    out = np.zeros((measurements.q.shape[0], len(frames), 3))
    for k, q in enumerate(measurements.q):
        q = np.array(q, dtype=float)
        if bv and measurements.base_quat is not None:
            q[3:7] = measurements.base_quat[k]
        if bv:
            q[3:7] /= np.linalg.norm(q[3:7])
        pin.framesForwardKinematics(model, data, q)
        for i, f in enumerate(ids):
            out[k, i] = data.oMf[f].rotation.T @ np.array([0.0, 0.0, -radii[i]])
    return out


def leg_odometry(problem: OEProblem) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """A kinematic state estimate of the base: linear velocity in the base frame ``(N+1, 3)``
    from the feet in contact (each does not move: ``v_b = -R^T v_foot(v_b = 0)``, averaged
    over the feet in contact; the last known value at a node without one) and the position
    ``(N+1, 3)`` integrated from it, from the arrival prior's. None without encoders, IMU
    orientation and gyro, or contact flags (the warm start of a recording without base_v*
    columns, whose base otherwise starts at rest where it walks)."""
    model, meas, sched = problem.dynamics.model, problem.measurements, problem.contacts
    if sched is None or meas.q is None or meas.base_quat is None or meas.gyro is None:
        return None
    dt = problem.dynamics.dt
    v_joint = meas.v if meas.v is not None else np.zeros((meas.q.shape[0], model.nv - 6))
    data = model.createData()
    ids = {f: model.getFrameId(f) for f in sched.frames}
    vel, pos = np.zeros((meas.q.shape[0], 3)), np.zeros((meas.q.shape[0], 3))
    pos[0] = problem.x0_prior[:3]
    last = np.zeros(3)
    for k, q in enumerate(meas.q):
        q = np.array(q, dtype=float)
        q[3:7] = meas.base_quat[k] / np.linalg.norm(meas.base_quat[k])
        v = np.r_[np.zeros(3), meas.gyro[k], v_joint[k]]
        active = sched.active(k)
        if active:
            pin.forwardKinematics(model, data, q, v)
            pin.updateFramePlacements(model, data)
            R = data.oMi[1].rotation
            feet = [
                pin.getFrameVelocity(model, data, ids[f], pin.LOCAL_WORLD_ALIGNED).linear
                for f in active
            ]
            last = -R.T @ np.mean(feet, axis=0)
        vel[k] = last
        if k:
            R_prev = pin.Quaternion(meas.base_quat[k - 1]).normalized().toRotationMatrix()
            pos[k] = pos[k - 1] + dt * R_prev @ vel[k - 1]
    return vel, pos


def initial_guess(problem: OEProblem) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """States from the measurements where available (arrival prior elsewhere), zero noise; a
    floating base without a base velocity measurement starts from :func:`leg_odometry`."""
    model, meas = problem.dynamics.model, problem.measurements
    n, nq = problem.horizon + 1, model.nq
    _, bv = base_dofs(model)
    xs = np.tile(problem.x0_prior, (n, 1))
    if meas.q is not None:
        xs[:, nq - (model.nq - 7 if bv else nq) : nq] = meas.q[:, (7 if bv else 0) :]
    if meas.v is not None:
        xs[:, nq + bv :] = meas.v
    if bv and meas.base_quat is not None:
        xs[:, 3:7] = meas.base_quat
    if bv and meas.gyro is not None:
        xs[:, nq + 3 : nq + 6] = meas.gyro
    if bv and meas.base_velocity is not None:
        xs[:, nq : nq + 3] = meas.base_velocity
    elif bv:
        odometry = leg_odometry(problem)
        if odometry is not None:
            xs[:, nq : nq + 3], xs[:, :3] = odometry
    return xs, np.zeros((problem.horizon, problem.dynamics.nx))
