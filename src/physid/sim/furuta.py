"""Synthetic Furuta pendulum recordings with a known truth (paper A §4.6-4.7, Appendix G.3).

Two scenarios, simulated by physid's own SPOOK stepper at a fine step and sampled at 1 kHz with
Gaussian angle noise (the rig's encoder rate, §4.1):

- ``release``: arm at 0, pendulum at ``pi - 0.03`` rad (near upright), zero velocity and
  control (Appendix G.3, Table G.5);
- ``swing_up``: from rest hanging, a closed-loop energy-shaping controller (Åström and Furuta,
  2000) drives the motor; the recorded control signal is then what the estimator sees, as the
  paper uses its swing-up recording open loop (§4.6, Appendix G.2).

The truth is a :class:`~physid.multibody.model.spec.MultibodyModel` whose parameters the caller can
read back by name. Table G.5 is only available as a poor scan: the values read with confidence
are used; ``b1`` reads "101 kg s^-1" (the exponent's sign is lost) and the pendulum offset
"0.92 m" (0.092 m in ``examples/multibody/furuta.urdf``), see docs/multibody.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from physid.multibody import MultibodyRecording, load_model, simulate, state_from_joints
from physid.multibody.model.spec import MultibodyModel
from physid.multibody.step.simulate import Stepper

G = [0.0, 0.0, -9.82]  # Table G.5, gravity magnitude 9.82 m/s^2 (§4.2)
SAMPLE = 1e-3  # s, the rig's sample period (§4.1)


def table_g5(b1: float = 1e-2, compliance: float = 1e-5, **joints: dict) -> dict:
    """Config of the Table G.5 truth: compliances 1e-5 m/N and rad/(N m), damping 0.02 s,
    b2 = 1e-3, J_shaft = 1e-4 kg m^2; ``joints`` adds per-hinge keys (e.g. dry friction)."""
    cfg = {
        "gravity": list(G),
        "defaults": {
            "compliance_linear": compliance,
            "compliance_rotational": compliance,
            "damping": 0.02,
        },
        "joints": {"hinge1": {"viscous": b1, "shaft_inertia": 1e-4}, "hinge2": {"viscous": 1e-3}},
    }
    for name, extra in joints.items():
        cfg["joints"][name] = {**cfg["joints"].get(name, {}), **extra}
    return cfg


def table1_start(estimate: list[str], compliance: float = 1e-5, **joints: dict) -> dict:
    """Config of the identification model started at Table 1's initial values: inertias 0.01,
    viscous 1e-4, ``joints`` overrides per hinge (e.g. gain 0.1, dry friction 1e-4)."""
    cfg = {
        "gravity": list(G),
        "defaults": {
            "compliance_linear": compliance,
            "compliance_rotational": compliance,
            "damping": 0.02,
        },
        "joints": {"hinge1": {"viscous": 1e-4, "shaft_inertia": 1e-4}, "hinge2": {"viscous": 1e-4}},
        "bodies": {"hinge1": {"Izz": 0.01}, "hinge2": {"Iyy": 0.01}},
        "estimate": list(estimate),
    }
    for name, extra in joints.items():
        cfg["joints"][name] = {**cfg["joints"].get(name, {}), **extra}
    return cfg


# §4.6: motor gain, five inertias, four friction terms and the tilt (two rotations here; the
# paper's tilt quaternion has a third, about gravity, that changes nothing)
THIRTEEN = [
    "hinge1.gain",
    "hinge1.Ixx",
    "hinge1.Iyy",
    "hinge1.Izz",
    "hinge2.Iyy",
    "hinge2.Izz",
    "hinge1.viscous",
    "hinge2.viscous",
    "hinge1.dry",
    "hinge2.dry",
    "tilt_1",
    "tilt_2",
]


def thirteen_truth() -> dict:
    """Table G.5 plus K = 0.15 N m per unit, r mu = 5e-4 / 2e-4 m, tilt (0.01, -0.02) rad."""
    cfg = table_g5(hinge1={"gain": 0.15, "dry": 5e-4}, hinge2={"dry": 2e-4})
    cfg["tilt"] = [0.01, -0.02]
    return cfg


def thirteen_start() -> dict:
    """Table 1's start for the §4.6 problem: inertias 0.01, viscous and dry 1e-4, K = 0.1."""
    cfg = table1_start(THIRTEEN, hinge1={"gain": 0.1, "dry": 1e-4}, hinge2={"dry": 1e-4})
    cfg["bodies"] = {
        "hinge1": {"Ixx": 0.01, "Iyy": 0.01, "Izz": 0.01},
        "hinge2": {"Iyy": 0.01, "Izz": 0.01},
    }
    return cfg


@dataclass(frozen=True)
class Synthetic:
    """A noisy recording (1 kHz), its noise-free angles, and the model that generated it."""

    recording: MultibodyRecording
    clean: np.ndarray  # (N, 2) noise-free angles at the recording's times
    truth: MultibodyModel
    lcp_failures: int


def _sampled(
    sim, truth: MultibodyModel, h_sim: float, noise: float, seed: int, name: str
) -> Synthetic:
    every = max(1, int(round(SAMPLE / h_sim)))
    clean = sim.angles[::every]
    rng = np.random.default_rng(seed)
    angles = clean + noise * rng.normal(size=clean.shape)
    rec = MultibodyRecording(sim.t[::every], angles, sim.u[::every], name)
    return Synthetic(rec, clean, truth, sim.lcp_failures)


def release(
    urdf: str | Path,
    config: dict,
    duration: float = 5.0,
    h_sim: float = 1e-4,
    noise: float = 1e-3,
    seed: int = 0,
) -> Synthetic:
    """Appendix G.3: released at ``theta = (0, pi - 0.03)`` at rest, no control."""
    truth = load_model(urdf, config)
    q0, v0 = state_from_joints(truth, [0.0, np.pi - 0.03])
    sim = simulate(truth, h_sim, int(round(duration / h_sim)), q0, v0)
    return _sampled(sim, truth, h_sim, noise, seed, "synthetic Furuta release")


def swing_up(
    urdf: str | Path,
    config: dict,
    duration: float = 5.0,
    h_sim: float = 1e-4,
    noise: float = 1e-3,
    seed: int = 0,
    u_max: float = 10.0,
    k_energy: float = 200.0,
    k_arm: tuple[float, float] = (1.0, 1.0),
    kick: float = 0.1,
) -> Synthetic:
    """Swing-up from hanging at rest by energy shaping: after a ``kick`` of ``u_max`` for
    ``kick`` seconds, ``u = sat(k_E (E - E_up) dth2 cos th2 - k_p th1 - k_d dth1)`` with the
    pendulum energy about its hinge
    ``E = J2 dth2^2 / 2 + m g l (1 - cos th2)`` (``E_up = 2 m g l``). The controller reads the
    exact simulated state every 1 ms (zero-order hold); ``config`` must give hinge1 a gain.
    With the defaults, gain 0.1 N m per unit and Table G.5 the pendulum reaches 169 deg (2.95
    rad) after 1 s and spends a quarter of 8 s beyond 154 deg; the arm's centrifugal load on
    the pendulum (``(J_Bzz - J_Bxx) w1^2``) keeps it from standing up, which is fine for
    excitation: every joint, the motor and gravity act over the whole range."""
    truth = load_model(urdf, config)
    if not truth.hinges[0].has_motor:
        raise ValueError("swing_up: the config must give hinge1 a motor gain")
    mass = truth.values[truth.index("hinge2.mass")]
    pin_model = truth.pin_model
    lever = float(np.linalg.norm(pin_model.inertias[2].lever))
    j2 = truth.values[truth.index("hinge2.Iyy")] + mass * lever**2
    mgl = mass * float(np.linalg.norm(truth.gravity)) * lever
    joint_state = Stepper(truth, h_sim).joint_states
    every = max(1, int(round(SAMPLE / h_sim)))
    command = np.zeros(len(truth.hinges))

    def controller(k: int, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        if k % every == 0:  # the controller runs at the 1 kHz sample rate, held in between
            (th1, th2), (w1, w2) = (a[0] for a in joint_state(q[None], v[None]))
            energy = 0.5 * j2 * w2**2 + mgl * (1.0 - np.cos(th2))
            pump = w2 * np.cos(th2)
            u = k_energy * (energy - 2 * mgl) * pump - k_arm[0] * th1 - k_arm[1] * w1
            command[0] = u_max if k * h_sim < kick else float(np.clip(u, -u_max, u_max))
        return command

    q0, v0 = state_from_joints(truth, [0.0, 0.0], [0.0, 0.0])
    sim = simulate(truth, h_sim, int(round(duration / h_sim)), q0, v0, controller=controller)
    return _sampled(sim, truth, h_sim, noise, seed, "synthetic Furuta swing-up")


# ---------------------------------------------------------------------- a sticking arm at 20 Hz

#: The truth of :func:`sticking_release` (the geometry and inertias of
#: examples/multibody/furuta.urdf): viscous [N m s/rad] and Coulomb [N m] friction per hinge;
#: the arm's Coulomb torque makes it stick after about 15 s of a release near upright.
STICKING_TRUTH = {
    "hinge1.Izz": 3e-3,
    "hinge1.viscous": 1e-3,
    "hinge1.coulomb": 0.05,
    "hinge2.Iyy": 4e-3,
    "hinge2.viscous": 1e-5,
    "hinge2.coulomb": 5e-5,
}
#: The release of :func:`sticking_release`: arm at 0, pendulum 30 deg from upright, at rest.
STICKING_START = (0.0, np.pi - np.radians(30.0))
_MJCF = """<mujoco model="furuta">
  <option timestep="{step}" gravity="0 0 {g}" integrator="implicitfast"/>
  <default><joint {friction_row}/></default>
  <worldbody>
    <body name="arm_a">
      <joint name="hinge1" type="hinge" axis="0 0 1" damping="{b1}" frictionloss="{c1}"/>
      <inertial pos="0.128 0 0" mass="0.238" diaginertia="1e-4 {ja} {ja}"/>
      <body name="pendulum_b" pos="0.248 0 0" xyaxes="0 0 -1 1 0 0">
        <joint name="hinge2" type="hinge" axis="0 1 0" damping="{b2}" frictionloss="{c2}"/>
        <inertial pos="0.092 0 0" mass="0.428" diaginertia="1e-4 {jb} {jb}"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""
#: MuJoCo's friction constraint made hard (its reference time 0.2 ms, impedance 0.999): the
#: instantaneous dry-friction row of physid's default hinge (friction_damping 0), which it
#: matches to 0.4 / 1.4 mrad over 3 s at 1e-4 s (docs/multibody.md). MuJoCo's default soft row
#: relaxes a stick in 9.5 ms and creeps.
HARD_FRICTION = 'solreffriction="0.0002 1" solimpfriction="0.999 0.999 0.001 0.5 2"'


def mujoco_furuta(
    seconds: float,
    rate: float = 20.0,
    step: float = 1e-4,
    gravity: float = -9.81,
    hard_friction: bool = True,
    truth: dict[str, float] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(t, angles)``: the Furuta of :data:`_MJCF` with ``truth``'s inertias and friction
    (default :data:`STICKING_TRUTH`) simulated by MuJoCo at ``step`` from
    :data:`STICKING_START` at rest, sampled at ``rate`` [Hz] for ``seconds``."""
    import mujoco

    values = STICKING_TRUTH if truth is None else truth
    xml = _MJCF.format(
        step=step,
        g=gravity,
        ja=values["hinge1.Izz"],
        jb=values["hinge2.Iyy"],
        b1=values["hinge1.viscous"],
        c1=values["hinge1.coulomb"],
        b2=values["hinge2.viscous"],
        c2=values["hinge2.coulomb"],
        friction_row=HARD_FRICTION if hard_friction else "",
    )
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    data.qpos[:] = STICKING_START
    every = int(round(1.0 / (rate * step)))
    n = int(round(seconds * rate)) + 1
    t, angles = np.empty(n), np.empty((n, 2))
    for k in range(n):
        t[k], angles[k] = data.time, data.qpos
        for _ in range(every if k < n - 1 else 0):
            mujoco.mj_step(model, data)
    return t, angles


def sticking_release(
    seconds: float = 40.0,
    rate: float = 20.0,
    counts: int = 2048,
    seed: int = 0,
    step: float = 1e-4,
    gravity: float = -9.81,
    hard_friction: bool = True,
) -> Synthetic:
    """An arm that sticks: the Furuta of examples/multibody/furuta.urdf simulated by **MuJoCo** (an
    independent simulator) at ``step`` with :data:`STICKING_TRUTH`'s friction (its ``damping`` and
    ``frictionloss``, hard by default: :data:`HARD_FRICTION`), released from :data:`STICKING_START`
    at rest, the arm sticking after about 15 s; sampled at ``rate`` [Hz] by ``counts``-per-turn
    encoders (angles rounded to whole counts from a random phase of the count grid per joint:
    encoder-like noise, std ``2 pi / counts / sqrt(12)``, 0.89 mrad at 2048). ``truth`` is physid's
    model of the same mechanism (URDF inertias, the truth's friction, the given gravity)."""
    urdf = Path(__file__).resolve().parents[3] / "examples" / "multibody" / "furuta.urdf"
    t, clean = mujoco_furuta(seconds, rate, step, gravity, hard_friction)
    quantum = 2 * np.pi / counts
    phase = np.random.default_rng(seed).uniform(0.0, quantum, 2)
    angles = np.round((clean + phase) / quantum) * quantum - phase
    joints = {
        j: {k: STICKING_TRUTH[f"{j}.{k}"] for k in ("viscous", "coulomb")}
        for j in ("hinge1", "hinge2")
    }
    truth = load_model(urdf, {"gravity": [0.0, 0.0, gravity], "joints": joints})
    rec = MultibodyRecording(t, angles, np.zeros_like(angles), "MuJoCo Furuta, sticking arm")
    return Synthetic(rec, clean, truth, 0)
