"""Simulated floating-base recordings with a known truth for paper B's tests and benchmarks.

Not used by the estimator. Each simulator integrates the *true* model with Pinocchio directly —
``pin.aba`` in flight, ``pin.constraintDynamics`` (eqs. 2-3) in stance and
``pin.impulseDynamics`` at every touch-down — by default by semi-implicit Euler at the node
spacing, the estimator's own step, so that the true trajectory has zero process noise; the Go1
walk can instead be integrated by RK4 on sub-steps (``integrator``, ``substeps``), so that data
and estimator model differ as a real robot and its model do. Controllers only know the
*nominal* model. Sensor
signals follow :class:`physid.oe.Measurements` (encoders, joint velocities, IMU orientation,
angular velocity and base linear velocity in the base frame) with Gaussian noise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.oe.model.measurements import Measurements, NoiseStd

_PROX = pin.ProximalSettings(1e-12, 0.0, 1)
GO1_FEET = ("FL_foot", "FR_foot", "RL_foot", "RR_foot")
GO1_STAND = np.array([0.0, 0.8, -1.6] * 4)


@dataclass(frozen=True)
class FloatingRecording:
    """True states ``x (N+1, nq+nv)``, commands ``u (N, nu)``, noisy measurements, contact
    flags ``(N+1, n_frames)`` (empty for flyers) at nodes spaced by ``dt``."""

    dt: float
    x: NDArray[np.float64]
    u: NDArray[np.float64]
    measurements: Measurements
    contact_frames: tuple[str, ...]
    contact_flags: NDArray[np.bool_]


def measure(model: pin.Model, x: NDArray, rng: np.random.Generator, std: NoiseStd) -> Measurements:
    """Noisy encoders, joint velocities and IMU signals of true states ``x`` (free-flyer)."""
    nq, n = model.nq, x.shape[0]
    q_meas = x[:, :nq].copy()
    q_meas[:, 7:] += std.encoder * rng.standard_normal((n, nq - 7))
    quats = []
    for q in x[:, :nq]:
        R = pin.Quaternion(q[3:7]).toRotationMatrix() @ pin.exp3(
            std.orientation * rng.standard_normal(3)
        )
        quats.append(pin.Quaternion(R).coeffs())
    v = x[:, nq:]
    return Measurements(
        q=q_meas if nq > 7 else None,
        v=v[:, 6:] + std.joint_velocity * rng.standard_normal((n, model.nv - 6))
        if model.nv > 6
        else None,
        base_quat=np.array(quats),
        gyro=v[:, 3:6] + std.gyro * rng.standard_normal((n, 3)),
        base_velocity=v[:, 0:3] + std.base_velocity * rng.standard_normal((n, 3)),
    )


def _euler(model: pin.Model, x: NDArray, a: NDArray, dt: float) -> NDArray[np.float64]:
    nq = model.nq
    v1 = x[nq:] + dt * a
    return np.concatenate([pin.integrate(model, x[:nq], dt * v1), v1])


def _advance(
    model: pin.Model, x: NDArray, accel: Callable, dt: float, substeps: int, integrator: str
) -> NDArray[np.float64]:
    """``x`` after ``dt`` under ``a = accel(q, v)`` by ``substeps`` steps of semi-implicit Euler
    or classical RK4 (stages combined in the tangent space at q, an O(h^2)-accurate Lie-group
    variant: enough to make the data differ from the estimator's 1-step Euler)."""
    nq, h = model.nq, dt / substeps
    q, v = x[:nq].copy(), x[nq:].copy()
    for _ in range(substeps):
        if integrator == "euler":
            v = v + h * accel(q, v)
            q = pin.integrate(model, q, h * v)
            continue
        a1 = accel(q, v)
        v2 = v + 0.5 * h * a1
        a2 = accel(pin.integrate(model, q, 0.5 * h * v), v2)
        v3 = v + 0.5 * h * a2
        a3 = accel(pin.integrate(model, q, 0.5 * h * v2), v3)
        v4 = v + h * a3
        a4 = accel(pin.integrate(model, q, h * v3), v4)
        q = pin.integrate(model, q, h / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4))
        v = v + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    return np.concatenate([q, v])


def simulate_flyer(
    true_model: pin.Model,
    nominal_model: pin.Model,
    actuation: NDArray,
    n_rotors: int,
    rng: np.random.Generator,
    duration: float = 3.0,
    dt: float = 0.01,
    noise: NoiseStd | None = None,
) -> FloatingRecording:
    """A multirotor (thrusts as the first ``n_rotors`` commands; any arm joints torque-driven)
    tracking a random smooth position/yaw reference with a geometric controller, arm joints by
    PD on sinusoids."""
    nq, nv = true_model.nq, true_model.nv
    data, nominal_data = true_model.createData(), nominal_model.createData()
    mass = pin.computeTotalMass(nominal_model)
    inertia = nominal_model.inertias[1].inertia
    amp, freq = rng.uniform(0.2, 0.5, 4), 2 * np.pi * rng.uniform(0.2, 0.6, 4)
    alloc = np.linalg.pinv(actuation[2:6, :n_rotors])
    n = int(round(duration / dt))
    x = np.zeros((n + 1, nq + nv))
    x[0, :nq] = pin.neutral(true_model)
    u = np.zeros((n, actuation.shape[1]))
    g = np.array([0.0, 0.0, 9.81])
    for k in range(n):
        t, q, v = k * dt, x[k, :nq], x[k, nq:]
        R = pin.Quaternion(q[3:7]).toRotationMatrix()
        p_ref = amp[:3] * np.sin(freq[:3] * t)
        dp_ref = amp[:3] * freq[:3] * np.cos(freq[:3] * t)
        ddp_ref = -amp[:3] * freq[:3] ** 2 * np.sin(freq[:3] * t)
        force = mass * (g + ddp_ref + 16.0 * (p_ref - q[:3]) + 8.0 * (dp_ref - R @ v[:3]))
        yaw = amp[3] * np.sin(freq[3] * t)
        z = force / np.linalg.norm(force)
        y = np.cross(z, [np.cos(yaw), np.sin(yaw), 0.0])
        y /= np.linalg.norm(y)
        R_d = np.column_stack([np.cross(y, z), y, z])
        torque = inertia @ (-200.0 * pin.log3(R_d.T @ R) - 28.0 * v[3:6])
        u[k, :n_rotors] = np.maximum(alloc @ np.r_[force @ R[:, 2], torque], 0.0)  # rotors push
        if nv > 6:
            ref = 0.3 * np.sin(freq[: nv - 6] * t + np.arange(nv - 6))
            inertia_j = np.diag(pin.crba(nominal_model, nominal_data, q))[6:]
            u[k, n_rotors:] = inertia_j * (100.0 * (ref - q[7:]) - 14.0 * v[6:])
        a = pin.aba(true_model, data, q, v, actuation @ u[k])
        x[k + 1] = _euler(true_model, x[k], a, dt)
    meas = measure(true_model, x, rng, noise or NoiseStd())
    return FloatingRecording(dt, x, u, meas, (), np.zeros((n + 1, 0), dtype=bool))


@dataclass(frozen=True)
class Flight:
    """A simulated quadrotor flight with its truth: the nominal model (URDF), the true one, the
    thrust actuation matrix and the recording."""

    nominal: pin.Model
    true: pin.Model
    actuation: NDArray[np.float64]
    recording: FloatingRecording


# Hector's body as the flights fly it (the URDF's nominal is the starting guess)
HECTOR_TRUE_BODY = (1.9, (0.02, -0.01, 0.03), (0.015, 0.02, 0.03))  # kg, com [m], diag [kg m^2]


def hector_flight(rng: np.random.Generator, duration: float, dt: float) -> Flight:
    """Hector (example-robot-data) with :data:`HECTOR_TRUE_BODY`, four X-configuration rotors
    at 0.22 m, tracking a random reference (:func:`simulate_flyer`)."""
    from physid.oe.model.actuation import quad_x_rotors, thrust_actuation
    from physid.sim.oe_robots import HECTOR, load_model

    nominal = load_model(HECTOR, floating=True)
    true = nominal.copy()
    mass, com, diagonal = HECTOR_TRUE_BODY
    true.inertias[1] = pin.Inertia(mass, np.array(com), np.diag(diagonal))
    actuation = thrust_actuation(nominal, *quad_x_rotors(0.22))
    recording = simulate_flyer(true, nominal, actuation, 4, rng, duration=duration, dt=dt)
    return Flight(nominal, true, actuation, recording)


def walk_flags(n_nodes: int, dt: float, period: float = 0.8, swing: float = 0.15) -> NDArray:
    """Contact flags of a walking (crawl) gait: one foot swings at a time for ``swing`` s, in
    the order FL, RR, FR, RL, each a quarter ``period`` apart; three feet always hold the
    robot (with bilateral point contacts two diagonal feet would leave it free to tip about
    the diagonal). Starts with ``period / 4`` of four-foot stance."""
    t = dt * np.arange(n_nodes) - 0.25 * period
    phase = np.mod(t, period) / period
    flags = np.ones((n_nodes, 4), dtype=bool)
    for slot, leg in enumerate((0, 3, 1, 2)):
        start = 0.25 * slot
        flags[(phase >= start) & (phase < start + swing / period) & (t >= 0), leg] = False
    return flags


def _contacts(model: pin.Model, frames: tuple[str, ...]) -> tuple:
    data = model.createData()
    cms = pin.StdVec_RigidConstraintModel()
    for name in frames:
        f = model.frames[model.getFrameId(name)]
        cms.append(
            pin.RigidConstraintModel(
                pin.ContactType.CONTACT_3D,
                model,
                f.parentJoint,
                f.placement,
                pin.LOCAL_WORLD_ALIGNED,
            )
        )
    cds = pin.StdVec_RigidConstraintData([c.createData() for c in cms])
    pin.initConstraintDynamics(model, data, cms, cds)
    return data, cms, cds


def go1_standing(model: pin.Model) -> NDArray[np.float64]:
    """Configuration of :data:`GO1_STAND` with the feet on the ground plane z = 0."""
    q = pin.neutral(model)
    q[7:] = GO1_STAND
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    q[2] = -min(data.oMf[model.getFrameId(f)].translation[2] for f in GO1_FEET)
    return q


def simulate_go1(
    true_model: pin.Model,
    nominal_model: pin.Model,
    rng: np.random.Generator,
    duration: float = 4.0,
    dt: float = 0.005,
    noise: NoiseStd | None = None,
    flags_fn: Callable[[int, float], NDArray] = walk_flags,
    integrator: str = "euler",
    substeps: int = 1,
) -> FloatingRecording:
    """Go1 walking in place (:func:`walk_flags`) while swaying its torso; the torques are held
    over each node and integrated by ``substeps`` steps of ``integrator`` (``euler``: the
    estimator's semi-implicit Euler, ``rk4``).

    Controller (nominal model only): a virtual-model controller holds the torso on a swaying
    reference (PID on height, PD on the rest) by distributing the wanted torso wrench over the
    stance feet (minimum norm), ``tau = g_j - Jc_j^T f``; swing legs track a foot-lift bump by
    joint PD plus gravity. The integral term absorbs the unknown payload's weight."""
    nq, nv = true_model.nq, true_model.nv
    n = int(round(duration / dt))
    flags = flags_fn(n + 1, dt)
    cache: dict[tuple[str, ...], tuple] = {}
    q0 = go1_standing(true_model)
    amp = rng.uniform(0.5, 1.0, 5) * np.array([0.02, 0.02, 0.02, 0.1, 0.1])
    freq = 2 * np.pi * rng.uniform(0.3, 1.0, 5)
    controller = _Go1Controller(nominal_model, q0, amp, freq, dt)
    x = np.zeros((n + 1, nq + nv))
    x[0, :nq] = q0
    u = np.zeros((n, nv - 6))
    for k in range(n):
        u[k] = controller(k, x[k], flags)
        x[k + 1] = _go1_step(
            true_model, cache, x[k], u[k], flags[k], flags[k + 1], dt, substeps, integrator
        )
    meas = measure(true_model, x, rng, noise or NoiseStd())
    return FloatingRecording(dt, x, u, meas, GO1_FEET, flags)


class _Go1Controller:
    """The virtual-model controller of :func:`simulate_go1` on the nominal model."""

    def __init__(
        self, model: pin.Model, q0: NDArray, amp: NDArray, freq: NDArray, dt: float
    ) -> None:
        self.model, self.data, self.q0 = model, model.createData(), q0
        self.amp, self.freq, self.dt = amp, freq, dt
        self.mass = pin.computeTotalMass(model)
        self.feet = [model.getFrameId(f) for f in GO1_FEET]
        self.swing, self.integral = 0.15, 0.0
        self.lift_start = np.zeros(4, dtype=int)

    def __call__(self, k: int, x: NDArray, flags: NDArray) -> NDArray[np.float64]:
        """The joint torques of node k at the state x (``flags``: every node's contacts)."""
        model, nd, dt = self.model, self.data, self.dt
        nq = model.nq
        t, q, v = k * dt, x[:nq], x[nq:]
        s = self.amp * np.sin(self.freq * t)
        ds = self.amp * self.freq * np.cos(self.freq * t)
        R = pin.Quaternion(q[3:7]).toRotationMatrix()
        p_ref = self.q0[:3] + s[:3]
        R_ref = pin.rpy.rpyToMatrix(s[3], s[4], 0.0)
        self.integral += dt * (p_ref[2] - q[2])
        lin, ang = R @ v[:3], R @ v[3:6]
        mass = self.mass
        force = mass * (np.array([0, 0, 9.81]) + 200.0 * (p_ref - q[:3]) + 20.0 * (ds[:3] - lin))
        force[2] += mass * 500.0 * self.integral
        torque = 60.0 * R @ pin.log3(R.T @ R_ref) + 6.0 * (np.r_[ds[3:5], 0.0] - ang)
        pin.computeGeneralizedGravity(model, nd, q)
        pin.computeJointJacobians(model, nd, q)
        pin.framesForwardKinematics(model, nd, q)
        stance = [i for i in range(4) if flags[k, i]]
        G = np.vstack(
            [
                np.hstack([np.eye(3) for _ in stance]),
                np.hstack([pin.skew(nd.oMf[self.feet[i]].translation - q[:3]) for i in stance]),
            ]
        )
        f = np.linalg.lstsq(G, np.r_[force, torque], rcond=None)[0]
        tau = nd.g[6:].copy()
        for j, i in enumerate(stance):
            Jf = pin.getFrameJacobian(model, nd, self.feet[i], pin.LOCAL_WORLD_ALIGNED)[:3]
            tau -= Jf[:, 6:].T @ f[3 * j : 3 * j + 3]
        tau -= 0.3 * v[6:]
        for i in range(4):
            if flags[k, i]:
                self.lift_start[i] = k + 1
                continue
            bump = np.sin(np.pi * min((k - self.lift_start[i]) * dt / self.swing, 1.0))
            ref = GO1_STAND[3 * i : 3 * i + 3] + np.array([0.0, 0.3, -0.6]) * bump
            sl = slice(3 * i, 3 * i + 3)
            tau[sl] += 30.0 * (ref - q[7:][sl]) - 0.5 * v[6:][sl]
        return tau


def _go1_step(  # noqa: PLR0913
    model: pin.Model,
    cache: dict,
    x: NDArray,
    u: NDArray,
    flags: NDArray,
    flags_next: NDArray,
    dt: float,
    substeps: int,
    integrator: str,
) -> NDArray[np.float64]:
    """The state after one node: the contact dynamics of the feet ``flags`` integrated, then
    the plastic impact of the feet that touch down at the next node."""
    nq = model.nq
    active = tuple(f for f, on in zip(GO1_FEET, flags, strict=True) if on)
    if active not in cache:
        cache[active] = _contacts(model, active)
    d, cms, cds = cache[active]
    tau_k = np.r_[np.zeros(6), u]

    def accel(qs, vs):  # noqa: ANN001, ANN202
        return pin.constraintDynamics(model, d, qs, vs, tau_k, cms, cds, _PROX).copy()

    out = _advance(model, x, accel, dt, substeps, integrator)
    if np.any(flags_next & ~flags):  # touch-down: plastic impact of the new stance
        nxt = tuple(f for f, on in zip(GO1_FEET, flags_next, strict=True) if on)
        if nxt not in cache:
            cache[nxt] = _contacts(model, nxt)
        d, cms, cds = cache[nxt]
        out[nq:] = pin.impulseDynamics(model, d, out[:nq], out[nq:], cms, cds, 0.0, _PROX)
    return out


def accelerometer_readings(
    model: pin.Model, x: NDArray, dt: float, frame: str | None = None
) -> NDArray[np.float64]:
    """What an ideal accelerometer at ``frame`` on the base (None: the base frame) reads
    ``(N+1, 3)`` [m/s^2] along a trajectory ``x``: the finite difference of the point's world
    velocity over each node, minus gravity, in the sensor's axes at the node's start (the last
    row repeats the one before). Independent of physid.oe.model.accelerometer's closed form; over a
    touch-down it holds the impact's spike, as a real sample averaged over the step would."""
    nq = model.nq
    M = pin.SE3.Identity() if frame is None else model.frames[model.getFrameId(frame)].placement
    vel, rot = np.empty((x.shape[0], 3)), []
    for k, xk in enumerate(x):
        R = pin.Quaternion(xk[3:7]).normalized().toRotationMatrix()
        v_l, w = xk[nq : nq + 3], xk[nq + 3 : nq + 6]
        vel[k] = R @ (v_l + np.cross(w, M.translation))
        rot.append(R @ M.rotation)
    out = np.empty_like(vel)
    for k in range(x.shape[0] - 1):
        out[k] = rot[k].T @ ((vel[k + 1] - vel[k]) / dt - model.gravity.linear)
    out[-1] = out[-2]
    return out


def contract_columns(model: pin.Model, rec: FloatingRecording) -> dict[str, NDArray]:
    """A legged recording as ``physid oe --floating`` trajectory columns (docs/oe.md): ``t``, the
    true base position, the measured IMU orientation, gyro and base velocity, ``q_``, ``dq_``,
    ``tau_`` of every joint after the root, ``contact_<frame>``."""
    m, n = rec.measurements, rec.x.shape[0]
    cols = {"t": rec.dt * np.arange(n)}
    cols |= {f"base_{a}": rec.x[:, i] for i, a in enumerate("xyz")}
    cols |= {f"base_q{a}": m.base_quat[:, i] for i, a in enumerate("xyzw")}
    cols |= {f"gyro_{a}": m.gyro[:, i] for i, a in enumerate("xyz")}
    cols |= {f"base_v{a}": m.base_velocity[:, i] for i, a in enumerate("xyz")}
    for i in range(2, model.njoints):
        name, joint = model.names[i], model.joints[i]
        cols["q_" + name] = m.q[:, joint.idx_q]
        cols["dq_" + name] = m.v[:, joint.idx_v - 6]
        cols["tau_" + name] = np.r_[rec.u[:, joint.idx_v - 6], 0.0]
    for j, frame in enumerate(rec.contact_frames):
        cols["contact_" + frame] = rec.contact_flags[:, j].astype(float)
    return cols
