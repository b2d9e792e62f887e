"""Closed-loop simulation of a fixed-base arm with known parameters (test data and the demo).

The plant is the rigid-body model (Pinocchio CRBA and nonlinear effects) plus, per joint, the
docs/architecture.md terms: viscous ``fv*dq``, Coulomb ``fc*sign(dq)``, a torque ``offset`` and
armature ``Ia*ddq``. A PD controller with computed-torque feed-forward tracks a finite Fourier
series excitation (Swevers et al. 1997). The recorded signals are what a drive would log: encoder
positions quantised to a resolution, and the commanded torque plus white noise.

Integration is Runge–Kutta 4 with the torque held over each sample; the inverse-dynamics
identity ``tau_k = (M(q_k) + Ia) ddq_k + h(q_k, dq_k) + friction(dq_k)`` holds exactly for every
recorded sample, so the simulator's ground truth is the identification model itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files

import numpy as np
import pinocchio as pin

from physid.recordings.trajectory import Trajectory
from physid.robot.friction import coulomb_sign
from physid.robot.model import RobotModel, robot_from_urdf
from physid.robot.regressor import joint_term_regressor, observation_matrix


def arm6_urdf_path() -> str:
    """Path of the bundled 6-joint demo arm URDF."""
    return str(files("physid.sim").joinpath("data/arm6.urdf"))


def two_link_urdf_path() -> str:
    """Path of a 2-link arm in a vertical plane (both joints about y, limits on both): the
    smallest robot that excites inertia, gravity and coupling, for quick tests and fuzzing."""
    return str(files("physid.sim").joinpath("data/two_link.urdf"))


def arm6_model(**options) -> RobotModel:
    """The demo arm as a :class:`RobotModel` (options as
    :func:`physid.robot.model.build_robot_model`)."""
    return robot_from_urdf(arm6_urdf_path(), **options)


EXCURSION_RAD = np.array([1.2, 0.8, 0.9, 1.5, 1.0, 1.5])  # the demo arm's joint excursions


@dataclass(frozen=True)
class FourierExcitation:
    """``q_j(t) = q0_j + sum_l a_jl/(w l) sin(w l t) - b_jl/(w l) cos(w l t)`` (Swevers 1997)."""

    base_frequency_hz: float
    offset: np.ndarray  # (n,) rad
    a: np.ndarray  # (n, L) rad/s
    b: np.ndarray  # (n, L) rad/s

    def __call__(self, t: float | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        t = np.atleast_1d(np.asarray(t, dtype=float))
        w = 2.0 * np.pi * self.base_frequency_hz
        harmonics = np.arange(1, self.a.shape[1] + 1)
        phase = w * np.outer(t, harmonics)  # (N, L)
        sin, cos = np.sin(phase), np.cos(phase)
        q = (
            self.offset
            + (sin @ (self.a / (w * harmonics)).T)
            - (cos @ (self.b / (w * harmonics)).T)
        )
        dq = cos @ self.a.T + sin @ self.b.T
        ddq = -(sin * w * harmonics) @ self.a.T + (cos * w * harmonics) @ self.b.T
        return q, dq, ddq

    @classmethod
    def random(
        cls,
        rng: np.random.Generator,
        n_joints: int,
        *,
        base_frequency_hz: float = 0.1,
        harmonics: int = 5,
        amplitude_rad: float | np.ndarray = 1.0,
    ) -> FourierExcitation:
        """Random coefficients scaled so each joint's excursion is about ``amplitude_rad``."""
        a = rng.standard_normal((n_joints, harmonics))
        b = rng.standard_normal((n_joints, harmonics))
        excitation = cls(base_frequency_hz, np.zeros(n_joints), a, b)
        q, _, _ = excitation(np.linspace(0.0, 1.0 / base_frequency_hz, 2000))
        centre = 0.5 * (q.max(axis=0) + q.min(axis=0))
        scale = np.asarray(amplitude_rad) / np.maximum(0.5 * np.ptp(q, axis=0), 1e-9)
        return cls(base_frequency_hz, -centre * scale, a * scale[:, None], b * scale[:, None])


@dataclass(frozen=True)
class DriftingExcitation:
    """A Fourier excitation plus a constant drift ``velocity`` (n,) rad/s: with oscillations
    slower than the drift, a joint turns one way only (short moves, a wrist that never
    reverses)."""

    base: FourierExcitation
    velocity: np.ndarray

    def __call__(self, t: float | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        q, dq, ddq = self.base(t)
        t = np.atleast_1d(np.asarray(t, dtype=float))
        return q + np.outer(t, self.velocity), dq + self.velocity, ddq


@dataclass(frozen=True)
class SensorNoise:
    """What the drives record: quantised encoders and noisy torques."""

    encoder_resolution_rad: float = 2.0 * np.pi / 2**18  # 18-bit joint-side encoder
    torque_noise_std: float | np.ndarray = 0.3  # N m, white


@dataclass(frozen=True)
class Simulation:
    """Ground truth and the recorded trajectory of one simulated experiment."""

    t: np.ndarray
    q: np.ndarray  # true states
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray  # true applied torque
    recorded: Trajectory  # quantised positions and noisy torques


def simulate_tracking(
    model: RobotModel,
    theta_true: np.ndarray,
    excitation: FourierExcitation | DriftingExcitation,
    *,
    duration_s: float,
    sample_rate_hz: float,
    noise: SensorNoise,
    rng: np.random.Generator,
    kp: float = 400.0,
    kd: float = 40.0,
) -> Simulation:
    """Simulate PD + computed-torque tracking of ``excitation`` by the plant ``theta_true``.

    ``theta_true`` is a full standard parameter vector of ``model`` (bodies, joint terms). The
    controller is digital: it samples (q, dq), and holds its torque over the sample period while
    the plant is integrated by classical Runge–Kutta 4 (Pinocchio ABA with the armature in the
    joint inertia). The motion is therefore smooth within each sample, so derivative estimates
    from the sampled positions are not biased by the integrator. The feed-forward uses the true
    model; gains are per unit of joint-space inertia (``kp``, ``kd`` in 1/s^2, 1/s).
    """
    dt = 1.0 / sample_rate_hz
    n_samples = int(round(duration_s * sample_rate_hz))
    pin_model = model.with_inertial_parameters(theta_true)
    pin_model.armature = _joint_term(model, theta_true, "Ia")
    data = pin_model.createData()
    friction = _friction_law(model, theta_true)

    def acceleration(q: np.ndarray, dq: np.ndarray, tau: np.ndarray) -> np.ndarray:
        # Friction and offset only: the armature term is inside ABA's joint inertia.
        return pin.aba(pin_model, data, q, dq, tau - friction(dq))

    q_ref, dq_ref, ddq_ref = excitation(np.arange(n_samples) * dt)
    tau_ff = observation_matrix(model, q_ref, dq_ref, ddq_ref) @ theta_true
    inertia_diag = np.diag(pin.crba(pin_model, data, q_ref[0])) + pin_model.armature
    q, dq = q_ref[0].copy(), dq_ref[0].copy()
    log = {name: np.empty((n_samples, model.n_joints)) for name in ("q", "dq", "ddq", "tau")}
    for k in range(n_samples):
        tau = tau_ff[k] + inertia_diag * (kp * (q_ref[k] - q) + kd * (dq_ref[k] - dq))
        a1 = acceleration(q, dq, tau)
        for name, value in (("q", q), ("dq", dq), ("ddq", a1), ("tau", tau)):
            log[name][k] = value
        v2 = dq + 0.5 * dt * a1
        a2 = acceleration(q + 0.5 * dt * dq, v2, tau)
        v3 = dq + 0.5 * dt * a2
        a3 = acceleration(q + 0.5 * dt * v2, v3, tau)
        v4 = dq + dt * a3
        a4 = acceleration(q + dt * v3, v4, tau)
        q = q + dt / 6.0 * (dq + 2.0 * v2 + 2.0 * v3 + v4)
        dq = dq + dt / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
    t = np.arange(n_samples) * dt
    resolution = noise.encoder_resolution_rad
    q_recorded = np.round(log["q"] / resolution) * resolution if resolution > 0 else log["q"].copy()
    tau_recorded = log["tau"] + rng.standard_normal(log["tau"].shape) * np.asarray(
        noise.torque_noise_std
    )
    recorded = Trajectory(t, q_recorded, tau_recorded, model.joint_names, source="simulation")
    return Simulation(t, log["q"], log["dq"], log["ddq"], log["tau"], recorded)


def simulate_random_excitation(
    model: RobotModel,
    theta_true: np.ndarray,
    *,
    duration_s: float,
    sample_rate_hz: float,
    rng: np.random.Generator,
    noise: SensorNoise | None = None,
    amplitude_rad: np.ndarray | None = None,
    kp: float = 400.0,
    kd: float = 40.0,
) -> Simulation:
    """:func:`simulate_tracking` of a fresh random Fourier excitation (drawn from ``rng`` first)
    with per-joint excursions ``amplitude_rad`` (default :data:`EXCURSION_RAD`, the demo arm's)
    and ``noise`` (default :class:`SensorNoise`)."""
    amplitude = EXCURSION_RAD if amplitude_rad is None else amplitude_rad
    excitation = FourierExcitation.random(rng, model.n_joints, amplitude_rad=amplitude)
    return simulate_tracking(
        model,
        theta_true,
        excitation,
        duration_s=duration_s,
        sample_rate_hz=sample_rate_hz,
        noise=SensorNoise() if noise is None else noise,
        rng=rng,
        kp=kp,
        kd=kd,
    )


def _friction_law(model: RobotModel, theta: np.ndarray):  # noqa: ANN202 - dq -> torque
    """The joint terms' torque at rest acceleration, ``dq -> fv dq + fc sign(dq) + offset``
    (the regressor's columns times theta). Linear friction without coupled motors: from
    vectors taken once (rebuilding the regressor's columns at each of the 4 RK4 stages of every
    sample would take most of a run's time); otherwise the regressor itself."""
    layout = model.layout
    linear = all(layout.friction_of(j) == "linear" for j in model.joint_names)
    if layout.coupled_motor_names or not linear:
        friction_theta = theta[layout.n_inertial :]
        zeros = np.zeros((1, model.n_joints))
        return lambda dq: joint_term_regressor(model, dq[None], zeros)[0] @ friction_theta
    fv, fc, offset = (_joint_term(model, theta, term) for term in ("fv", "fc", "offset"))
    deadband = model.coulomb_deadband
    return lambda dq: fv * dq + fc * coulomb_sign(dq, deadband) + offset


def _joint_term(model: RobotModel, theta: np.ndarray, term: str) -> np.ndarray:
    values = np.zeros(model.n_joints)
    for k, joint in enumerate(model.joint_names):
        index = model.layout.joint_term_index(joint, term)
        if index is not None:
            values[k] = theta[index]
    return values


def true_parameters(
    model: RobotModel, rng: np.random.Generator, *, spread: float = 0.2
) -> np.ndarray:
    """A physically consistent "real robot": the URDF bodies perturbed, plus joint friction.

    Each body's mass, centre of mass and principal inertias are scaled by ``1 +- spread``
    (uniform), so the URDF becomes an imperfect CAD prior of the truth. Friction and armature
    are drawn in industrial ranges: fv 0.5–3 N m s/rad, fc 1–5 N m, offset +-0.5 N m,
    armature 0.01–0.1 kg m^2.
    """
    from physid.body.inertia import mass_com_inertia_from_pi, pi_from_mass_com_inertia

    theta = model.prior_parameters()
    layout = model.layout
    for joint in layout.body_joints:
        body = layout.body_slice(joint)
        mass, com, inertia = mass_com_inertia_from_pi(theta[body])
        moments, axes = np.linalg.eigh(inertia)
        moments = moments * (1.0 + spread * rng.uniform(-1.0, 1.0, 3))
        # Keep the triangle inequalities: shrink the largest moment if the draw broke them (the
        # scaling may have reordered them: eigh's last is not always the largest any more).
        largest = int(np.argmax(moments))
        others = np.sum(moments) - moments[largest]
        moments[largest] = min(moments[largest], 0.98 * others)
        theta[body] = pi_from_mass_com_inertia(
            mass * (1.0 + spread * rng.uniform(-1.0, 1.0)),
            com * (1.0 + spread * rng.uniform(-1.0, 1.0, 3)),
            axes @ np.diag(moments) @ axes.T,
        )
    ranges = {"fv": (0.5, 3.0), "fc": (1.0, 5.0), "offset": (-0.5, 0.5), "Ia": (0.01, 0.1)}
    for joint in layout.joint_names:
        for term, (low, high) in ranges.items():
            index = layout.joint_term_index(joint, term)
            if index is not None:
                theta[index] = rng.uniform(low, high)
    return theta
