"""A 7-DoF arm whose last body carries a time-varying payload (paper E Table I, forearm row).

The arm is ``sim/data/arm7.urdf`` (illustrative numbers, LWR-like layout). The estimated body is
the one moved by :data:`PAYLOAD_JOINT`; its true inertia is the URDF flange plus a solid sphere
of mass ``m(t)`` at :data:`PAYLOAD_COM` in that joint's frame. The payload follows
:class:`PayloadProfile`: none during a start-up hold (bias calibration), then a 1 Hz sine and a
1 Hz square wave about 4.5 kg with 3 kg amplitude (Table I), then a plateau and a held step.

:func:`simulate_payload_arm` samples an exciting joint trajectory (analytic positions,
velocities and accelerations), computes the true torques with Pinocchio's RNEA and adds what a
real torque-controlled arm measures: white noise on positions, velocities and torques and a
constant offset per torque sensor. Used by ``examples/online`` and ``benchmarks``; estimators
never import this module.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.body.inertia import pi_from_mass_com_inertia
from physid.robot.model import load_urdf

ARM_URDF = Path(__file__).parent / "data" / "arm7.urdf"
PAYLOAD_JOINT = "arm_joint_7"
PAYLOAD_COM = np.array([0.0, 0.0, 0.08])  # m, in the frame of PAYLOAD_JOINT
PAYLOAD_RADIUS = 0.05  # m, solid sphere
HOME = np.array([0.0, 0.5, 0.0, -1.2, 0.0, -0.9, 0.0])  # rad: bent, flange about horizontal


def load_arm() -> pin.Model:
    """The fixed-base 7-DoF arm with its URDF (nominal) inertias."""
    return load_urdf(ARM_URDF)


def payload_pi(mass_kg: float) -> NDArray[np.float64]:
    """pi of the payload alone: a solid sphere of ``mass_kg`` centred at :data:`PAYLOAD_COM`."""
    inertia = 0.4 * mass_kg * PAYLOAD_RADIUS**2 * np.eye(3)
    return pi_from_mass_com_inertia(mass_kg, PAYLOAD_COM, inertia)


@dataclass(frozen=True)
class PayloadProfile:
    """Payload mass [kg] over time: hold (none) | sine | square | plateau | step.

    Paper E Table I: offset 4.5 kg, amplitude 3 kg, 1 Hz. ``step_to_kg`` is held for ``step_s``
    after a ``plateau_s`` at the offset, to measure settling after a mass step.
    """

    hold_s: float = 1.0
    sine_s: float = 8.0
    square_s: float = 8.0
    plateau_s: float = 4.0
    step_s: float = 4.0
    offset_kg: float = 4.5
    amplitude_kg: float = 3.0
    frequency_hz: float = 1.0
    step_to_kg: float = 7.5

    @property
    def duration_s(self) -> float:
        return self.hold_s + self.sine_s + self.square_s + self.plateau_s + self.step_s

    @property
    def step_time_s(self) -> float:
        """Start of the held step."""
        return self.duration_s - self.step_s

    def segment_starts(self) -> dict[str, float]:
        names = ("sine", "square", "plateau", "step")
        lengths = (self.hold_s, self.sine_s, self.square_s, self.plateau_s)
        return dict(zip(names, np.cumsum(lengths).tolist(), strict=True))

    def mass(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        """Payload mass at times ``t`` [kg]."""
        t = np.asarray(t, dtype=float)
        starts = self.segment_starts()
        omega = 2.0 * np.pi * self.frequency_hz
        sine = self.offset_kg + self.amplitude_kg * np.sin(omega * (t - starts["sine"]))
        # sign of a sine from the segment start: the high half first, edges every half period
        high = np.sin(omega * (t - starts["square"])) >= 0.0
        square = self.offset_kg + self.amplitude_kg * np.where(high, 1.0, -1.0)
        return np.select(
            [t < starts["sine"], t < starts["square"], t < starts["plateau"], t < starts["step"]],
            [np.zeros_like(t), sine, square, np.full_like(t, self.offset_kg)],
            np.full_like(t, self.step_to_kg),
        )

    def step_times(self) -> NDArray[np.float64]:
        """Times of the mass discontinuities (attach, square edges, plateau, step) [s]."""
        starts = self.segment_starts()
        period = 1.0 / self.frequency_hz
        edges = np.arange(starts["square"], starts["plateau"] - 1e-9, period / 2.0)
        return np.concatenate([[starts["sine"]], edges, [starts["plateau"], starts["step"]]])


def excitation(
    t: NDArray[np.float64], home: NDArray[np.float64] = HOME
) -> tuple[NDArray, NDArray, NDArray]:
    """Analytic joint trajectory ``(q, dq, ddq)``, each (N, 7): a sum of three sines per joint
    about ``home`` (0.1-0.45 Hz, 0.15-0.35 rad), rich enough to excite mass and centre of mass."""
    t = np.asarray(t, dtype=float)[:, None]
    frequencies = np.array([0.11, 0.23, 0.41])  # Hz, incommensurate
    amplitudes = np.array([[0.35, 0.3, 0.35, 0.3, 0.6, 0.3, 1.5]]).T * np.array([0.6, 0.3, 0.15])
    phases = np.arange(21).reshape(7, 3) * 0.7
    q = np.tile(home, (t.shape[0], 1))
    dq, ddq = np.zeros_like(q), np.zeros_like(q)
    for k, f in enumerate(frequencies):
        w = 2.0 * np.pi * f
        arg = w * t + phases[:, k]
        q += amplitudes[:, k] * np.sin(arg)
        dq += amplitudes[:, k] * w * np.cos(arg)
        ddq -= amplitudes[:, k] * w**2 * np.sin(arg)
    return q, dq, ddq


@dataclass(frozen=True)
class ArmNoise:
    """Measurement imperfections of a torque-controlled arm (white noise std and offsets)."""

    q_std: float = 2e-5  # rad, encoder noise
    dq_std: float = 2e-3  # rad/s, velocity from the joint state estimator
    tau_std: float = 0.1  # N m, joint torque sensors
    tau_offset_std: float = 0.3  # N m, constant torque-sensor offsets (bias calibration)


@dataclass(frozen=True)
class ArmFriction:
    """True joint friction: ``viscous dq + coulomb tanh(dq / smoothing)`` per joint — the
    smooth transition of real friction, which a sign model with a deadband only approximates."""

    viscous: NDArray[np.float64]  # (7,) N m s/rad
    coulomb: NDArray[np.float64]  # (7,) N m
    smoothing_rad_s: float = 0.005

    def torque(self, dq: NDArray[np.float64]) -> NDArray[np.float64]:
        return self.viscous * dq + self.coulomb * np.tanh(dq / self.smoothing_rad_s)


@dataclass(frozen=True)
class ArmRecording:
    """Simulated measurements and the truth; arrays over the N samples."""

    t: NDArray[np.float64]
    q: NDArray[np.float64]  # recorded (N, 7)
    dq: NDArray[np.float64]
    tau: NDArray[np.float64]
    q_true: NDArray[np.float64]
    tau_true: NDArray[np.float64]
    payload_kg: NDArray[np.float64]  # (N,)
    pi_true: NDArray[np.float64]  # (N, 10): the estimated body (flange + payload)
    joint_names: tuple[str, ...]

    @property
    def body_mass(self) -> NDArray[np.float64]:
        return self.pi_true[:, 0]


def true_body_pi(model: pin.Model, payload_kg: NDArray[np.float64]) -> NDArray[np.float64]:
    """pi (N, 10) of the body of :data:`PAYLOAD_JOINT`: URDF inertia plus the payload."""
    flange = model.inertias[model.getJointId(PAYLOAD_JOINT)].toDynamicParameters()
    unit = payload_pi(1.0)  # a sphere's pi is proportional to its mass
    return flange + np.asarray(payload_kg, dtype=float)[:, None] * unit


def simulate_payload_arm(
    rng: np.random.Generator,
    profile: PayloadProfile | None = None,
    *,
    rate_hz: float = 1000.0,
    noise: ArmNoise | None = None,
    friction: ArmFriction | None = None,
) -> ArmRecording:
    """Sample the excitation at ``rate_hz`` with the payload of ``profile`` (see the module),
    and the joint ``friction`` (none by default) in the recorded torques."""
    profile = profile or PayloadProfile()
    noise = noise or ArmNoise()
    model = load_arm()
    data = model.createData()
    t = np.arange(0.0, profile.duration_s, 1.0 / rate_hz)
    q, dq, ddq = excitation(t)
    payload = profile.mass(t)
    pi_body = true_body_pi(model, payload)
    joint_id = model.getJointId(PAYLOAD_JOINT)
    tau = np.empty_like(q)
    for k in range(len(t)):
        model.inertias[joint_id] = pin.Inertia.FromDynamicParameters(pi_body[k])
        tau[k] = pin.rnea(model, data, q[k], dq[k], ddq[k])
    if friction is not None:
        tau += friction.torque(dq)
    n, nv = q.shape
    offsets = rng.normal(scale=noise.tau_offset_std, size=nv)
    return ArmRecording(
        t=t,
        q=q + rng.normal(scale=noise.q_std, size=(n, nv)),
        dq=dq + rng.normal(scale=noise.dq_std, size=(n, nv)),
        tau=tau + offsets + rng.normal(scale=noise.tau_std, size=(n, nv)),
        q_true=q,
        tau_true=tau,
        payload_kg=payload,
        pi_true=pi_body,
        joint_names=tuple(model.names[1:]),
    )
