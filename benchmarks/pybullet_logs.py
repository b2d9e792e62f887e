"""physid with NO config on PyBullet logs of PyBullet's own robots, clean and with its pitfalls.

Why: physid will meet logs of simulators it has never seen; ``simulator_logs.py`` covers MuJoCo,
this covers PyBullet (Bullet's Featherstone multibody), whose conventions differ and whose
defaults trip users: no gravity unless ``setGravity``, link inertias recomputed from the
collision shapes unless ``URDF_USE_INERTIA_FROM_FILE``, a velocity motor on every joint that
must be switched off before torque control, a drag on every link, and an
``appliedJointMotorTorque`` that reads 0 in torque control. physid must fit the logs that hold
the applied joint torque at least as well as plain OLS and, on the corrupted ones, say so
(status other than ``ok``) or still return a plausible model. PyBullet shares no code with
physid: the simulation uses numpy and pybullet only (PyBullet's ``calculateInverseDynamics``
equals Pinocchio's ``rnea`` on the stripped URDFs to 3e-14 N m, gravity on, fixed base).

What: ``kuka_iiwa/model.urdf`` (7 revolute joints) and ``franka_panda/panda.urdf`` (its finger
joints made fixed) of ``pybullet_data``. PyBullet loads them with their collision meshes
(visuals stripped), physid gets a copy without visuals or collisions. Per scenario (one
function each, its docstring says what the user's log looks like), a 30 s training run and a
20 s held-out run (other phases) of a 5-harmonic excitation (0.1 Hz fundamental), tracked at
PyBullet's default 240 Hz step by computed torque (PyBullet's ``calculateInverseDynamics`` of
the simulated robot, plus PD) in ``TORQUE_CONTROL``, written every step as physid CSVs (``t``,
``q_<joint>``, ``tau_<joint>``; noise 0.05 N m at the joint and 2e-6 rad, as
``simulator_logs.py``'s). Scored as ``simulator_logs.py`` does (its ``baselines``,
``physid_error`` and ``run_physid``, i.e. the shared scorer of ``scoring.py``): relative error
||tau_pred - tau_meas|| / ||tau_meas|| on the raw held-out torque, every sample and joint:

* physid: ``physid identify --urdf R.urdf --data train.csv --validate heldout.csv --out DIR
  --quiet --overwrite`` (no config); status, suspect reasons, warnings and masses from
  DIR/params.json, its held-out error by the shared scorer;
* OLS: ``scoring.ols_fit`` (Pinocchio regressor + per-joint viscous, Coulomb, offset and
  armature) on the scorer's 10 Hz Butterworth states of the CSV;
* URDF: ``rnea`` with the URDF's inertias and no friction, on the same states.

PyBullet facts this file relies on (pybullet 3.2.7, measured here):

* default time step 1/240 s; default gravity (0, 0, 0);
* ``loadURDF`` without ``URDF_USE_INERTIA_FROM_FILE`` keeps the URDF's masses and centres of
  mass (inertial frames unrotated) but replaces every link's inertia by that of its collision
  shapes: iiwa 0.37-1.67 x the URDF's diagonal, the Panda's placeholder 0.1 kg m^2 on every
  link become 4e-4-0.036 (0 on the fingers), so about joint 7 the URDF says 0.6 kg m^2 and
  the simulated Panda has 0.005 (``--checks`` prints them);
* every revolute joint gets a velocity motor (target 0) of max impulse 1 N m s per step, i.e.
  a max force of 1/timestep: 240 N m at 240 Hz (1000 N m at 1 kHz); ``TORQUE_CONTROL`` does not
  switch it off: below 240 N m a joint does not move;
* every link is dragged by ``linearDamping = angularDamping = 0.04`` (getDynamicsInfo does not
  report them): the wrench at its centre of mass is -0.04 (m v (1 + |v|), I w (1 + |w|)), whose
  linear part is 0.04 M(q) dq;
* URDF ``<dynamics damping>`` (iiwa: 0.5) is applied as viscous joint damping;
* ``getJointState(...)[3]`` (appliedJointMotorTorque) is the motor's torque in
  ``POSITION_CONTROL`` / ``VELOCITY_CONTROL`` and exactly 0.0 in ``TORQUE_CONTROL``.

Targets: where the log holds the applied joint torque and gravity is on (clean, link_damping,
position_applied, inertia_from_shapes), physid's held-out error <= 1.05 x OLS's (<= OLS's for
inertia_from_shapes, where the URDF is a wrong prior), status ``ok`` and a moving mass in
[0.8, 1.25] x the URDF's. On the corrupted logs (motors_on, zero_torque_column, gravity_off): a
status other than ``ok`` (or a refusal that names the cause), or ``ok`` with a moving mass in
[0.8, 1.25] x the URDF's and a held-out error <= OLS's. The note column: the first suspect
reason, else the first warning that is not one every fit has.

RESULTS (pybullet 3.2.7, 1 core, 79 s; held-out % by the shared scorer)::

    robot scenario            status     physid    OLS     URDF  mass physid/URDF
    iiwa  clean               ok           0.36   0.36     0.36    17.52/17.50
    iiwa  inertia_from_shapes ok           0.36   0.36     0.38    18.35/17.50
    iiwa  link_damping        ok           0.38   0.43     0.40    17.45/17.50
    iiwa  motors_on           suspect     93.76 901.53    99.47    17.60/17.50  (1)
    iiwa  position_applied    ok           0.35   0.39     0.39    17.52/17.50
    iiwa  zero_torque_column  refused         -      -        -              -  (2)
    iiwa  gravity_off         suspect     15.06  14.55  1567.37    23.27/17.50  (3)
    panda clean               ok           0.45   0.45     0.45    15.12/15.06
    panda inertia_from_shapes ok           0.43   0.43     8.71    15.44/15.06
    panda link_damping        worse_than   0.82   0.87     0.82    17.76/15.06  (4)
    panda motors_on           suspect     89.15 407.62    99.95    17.95/15.06  (1)
    panda position_applied    ok           0.43   0.60     0.53    15.11/15.06
    panda zero_torque_column  refused         -      -        -              -  (2)
    panda gravity_off         suspect      7.67   7.58   648.79     9.00/15.06  (3)

(1) "a joint's position stays within its sensor noise while the others move [...]: a position
sensor that stopped (a dead encoder), a position column that is not this joint's, or a joint
held still by a brake or by static friction [...] (a simulator's default joint motors [...])":
the joints are held by the 240 N m motors (the commands reach 250-280 N m).
(2) "every torque is zero: nothing to identify from (check the tau_/i_ columns)", exit 2.
(3) "the torques carry none of the URDF's gravity torque [...] a simulation run without gravity
(PyBullet's default until setGravity) [...]".
(4) worse_than_urdf, "the identified model predicts the validation recordings worse than the
URDF's own model (0.827 % vs 0.692 %): on the training folds it predicted better (0.43 % vs
0.482 %), so what it fitted there does not carry over: an effect the model lacks [...]". The
URDF's 0.692 % is with the 6.25 ms torque delay physid compensates, which the log does not have
(it stands in for the drag, 0.04 M(q) dq, which no joint term has); the default-prior fit had
44 kg of moving mass. The status is honest, and misses this benchmark's target.

Targets met on 13 of 14. Before (first run, 88 s) 12 of 14: the clean Panda log and the one
under position servos were called worse_than_urdf for a fold score 1e-5 of its value above the
URDF's (0.406913 vs 0.406908 %; six noise draws of the clean log: 3 ok, 3 worse_than_urdf; now
6 ok), the Panda with link drag was told its training was "too short", every iiwa log said its
last joint was "missed" at 100 % (0.05 N m RMS of torque, all noise), and the iiwa with link
drag was told to check its signs for a Coulomb level of -0.007 N m on a 36 N m joint.
The clean logs sit at the noise floor for all three models (PyBullet has no joint friction
here and the URDF is the simulated model): there the comparison is physid's verdict, not its
error.

Run: python benchmarks/pybullet_logs.py [--robots iiwa,panda] [--only iiwa_clean,panda_motors_on]
[--keep DIR] [--checks]   (14 cases, 1.5 min on one core; files in a temporary folder by default)
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pybullet as pb
import pybullet_data

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_logs import (  # noqa: E402
    Log,
    baselines,
    physid_error,
    print_misses,
    run_physid,
    target_miss,
)

DT = 1.0 / 240.0  # s: PyBullet's default step = control period = logging period
KP, KD = 400.0, 40.0  # 1/s^2, 1/s: PD on the acceleration of the computed-torque law
TAU_NOISE, Q_NOISE = 0.05, 2e-6  # N m (at the joint), rad
GRAVITY = 9.81
SOURCES = {"iiwa": "kuka_iiwa/model.urdf", "panda": "franka_panda/panda.urdf"}
# Excitation centre and amplitude [rad] per joint (within the URDF limits).
POSES = {
    "iiwa": ([0.0, 0.6, 0.0, -1.2, 0.0, 0.6, 0.0], [1.0, 0.6, 1.0, 0.6, 1.0, 0.8, 1.0]),
    "panda": ([0.0, 0.0, 0.0, -1.57, 0.0, 1.87, 0.0], [1.0, 0.6, 1.0, 0.6, 1.0, 0.8, 1.0]),
}
# The log holds the applied joint torque, gravity on: held-out <= factor x OLS.
APPLIED = {"clean": 1.05, "link_damping": 1.05, "position_applied": 1.05,
           "inertia_from_shapes": 1.0}  # fmt: skip
# Warnings of (nearly) every fit, left out of the table's note column.
GENERIC_WARNINGS = (
    "the data do not determine these reported quantities",
    "held at 0 by the consistent fit's non-negativity constraint",
    "not the URDF's values although the data do not determine them",
    "residuals are serially correlated",
)


# ---- Simulation (numpy and pybullet only) -----------------------------------------------------


def write_urdfs(robot: str, folder: Path) -> tuple[Path, Path]:
    """(URDF for physid: no visuals or collisions, URDF for PyBullet: collision meshes kept by
    absolute path, no visuals); the Panda's fingers fixed (their mimic tag removed)."""
    source = Path(pybullet_data.getDataPath()) / SOURCES[robot]
    text = source.read_text()
    text = re.sub(r"<visual\b.*?</visual>", "", text, flags=re.S)
    text = re.sub(r'filename="(?:package://)?([^"]+)"',
                  lambda m: f'filename="{source.parent / m.group(1)}"', text)  # fmt: skip
    text = re.sub(r'(<joint name="panda_finger_joint\d" type=")prismatic"', r'\1fixed"', text)
    text = re.sub(r"<mimic[^>]*/>", "", text)
    urdf, pb_urdf = folder / f"{robot}.urdf", folder / f"{robot}_pb.urdf"
    pb_urdf.write_text(text)
    urdf.write_text(re.sub(r"<collision\b.*?</collision>", "", text, flags=re.S))
    return urdf, pb_urdf


@dataclass(frozen=True)
class Sim:
    """One simulated robot: its PyBullet URDF and the scenario's settings."""

    robot: str
    pb_urdf: Path
    inertia_from_file: bool = True  # URDF_USE_INERTIA_FROM_FILE
    link_damping: bool = False  # PyBullet's default 0.04 linear and angular damping left on
    motors_on: bool = False  # the default velocity motors left on under TORQUE_CONTROL
    gravity: bool = True  # setGravity(0, 0, -9.81) called
    position: bool = False  # POSITION_CONTROL (PyBullet's default gains), else TORQUE_CONTROL


@dataclass
class Recording:
    """Per step: the state before the step and the torque commanded for it, the state after
    and what ``getJointState(...)[3]`` reads after it."""

    joints: list[str]
    t: np.ndarray
    q: np.ndarray
    command: np.ndarray  # TORQUE_CONTROL's forces (nan in POSITION_CONTROL)
    q_after: np.ndarray  # at t + DT
    applied_column: np.ndarray  # appliedJointMotorTorque read after the step


class Client:
    """A DIRECT PyBullet connection: ``client.f(...)`` is ``pybullet.f(..., physicsClientId=)``."""

    def __init__(self) -> None:
        self.id = pb.connect(pb.DIRECT)

    def __getattr__(self, name: str) -> Callable:
        return functools.partial(getattr(pb, name), physicsClientId=self.id)


def load(sim: Sim) -> tuple[Client, int, list[int], list[str]]:
    """A DIRECT PyBullet client with the robot loaded on a fixed base as the scenario says."""
    client = Client()
    client.setTimeStep(DT)
    if sim.gravity:
        client.setGravity(0.0, 0.0, -GRAVITY)
    flags = pb.URDF_USE_INERTIA_FROM_FILE if sim.inertia_from_file else 0
    body = client.loadURDF(str(sim.pb_urdf), useFixedBase=True, flags=flags)
    joints = [j for j in range(client.getNumJoints(body))
              if client.getJointInfo(body, j)[2] != pb.JOINT_FIXED]  # fmt: skip
    names = [client.getJointInfo(body, j)[1].decode() for j in joints]
    for link in range(-1, client.getNumJoints(body)):
        client.changeDynamics(body, link, jointDamping=0.0)
        if not sim.link_damping:
            client.changeDynamics(body, link, linearDamping=0.0, angularDamping=0.0)
    if not sim.motors_on:
        off = [0.0] * len(joints)
        client.setJointMotorControlArray(body, joints, pb.VELOCITY_CONTROL, forces=off)
    return client, body, joints, names


def excitation(robot: str, seed: int) -> Callable[[float], tuple]:
    """5 harmonics of 0.1 Hz per joint, random amplitudes (decaying as 1/k) and phases about
    the robot's pose (``POSES``)."""
    rng = np.random.default_rng(seed)
    centre, amplitude = (np.array(x) for x in POSES[robot])
    n, k = len(centre), np.arange(1, 6)
    amp = rng.uniform(0.5, 1.0, (n, 5)) / k
    amp *= (amplitude / amp.sum(1))[:, None]
    phase = rng.uniform(0, 2 * np.pi, (n, 5))
    w = 2 * np.pi / 10 * k

    def trajectory(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s, c = np.sin(w * t + phase), np.cos(w * t + phase)
        return centre + (amp * s).sum(1), (amp * w * c).sum(1), -(amp * w**2 * s).sum(1)

    return trajectory


def simulate(sim: Sim, seed: int, duration: float) -> Recording:
    """Computed torque + PD in TORQUE_CONTROL (or POSITION_CONTROL tracking q_d, v_d with the
    URDF's effort limits as max forces) at 240 Hz."""
    client, body, joints, names = load(sim)
    trajectory = excitation(sim.robot, seed)
    q0, v0, _ = trajectory(0.0)
    for k, j in enumerate(joints):
        client.resetJointState(body, j, q0[k], v0[k])
    effort = [client.getJointInfo(body, j)[10] for j in joints]
    rows = []
    for step in range(int(round(duration / DT))):
        t = step * DT
        q, v = (np.array(x) for x in zip(*[s[:2] for s in client.getJointStates(body, joints)],
                                         strict=True))  # fmt: skip
        qd, vd, ad = trajectory(t)
        if sim.position:
            command = np.full(len(joints), np.nan)
            client.setJointMotorControlArray(
                body, joints, pb.POSITION_CONTROL, targetPositions=qd.tolist(),
                targetVelocities=vd.tolist(), forces=effort,
            )  # fmt: skip
        else:
            acceleration = ad + KP * (qd - q) + KD * (vd - v)
            command = np.array(client.calculateInverseDynamics(body, q.tolist(), v.tolist(),
                                                               acceleration.tolist()))  # fmt: skip
            client.setJointMotorControlArray(body, joints, pb.TORQUE_CONTROL,
                                             forces=command.tolist())  # fmt: skip
        client.stepSimulation()
        after = client.getJointStates(body, joints)
        rows.append((t, q, command, np.array([s[0] for s in after]),
                     np.array([s[3] for s in after])))  # fmt: skip
    client.disconnect()
    columns = [np.array(c) for c in zip(*rows, strict=True)]
    return Recording(names, *columns)


def logged(rec: Recording, t: np.ndarray, q: np.ndarray, tau: np.ndarray, seed: int,
           noise: bool = True) -> Log:  # fmt: skip
    """The user's log of every step, with noise (none where the simulator wrote exact zeros)."""
    rng = np.random.default_rng(seed + 1000)
    q = q + rng.normal(0.0, Q_NOISE, q.shape)
    tau = tau + rng.normal(0.0, TAU_NOISE, tau.shape) if noise else tau.copy()
    return Log(rec.joints, t, q, tau)


def before_step(rec: Recording, seed: int) -> Log:
    """(t, q) read before ``stepSimulation`` beside the torque commanded for that step."""
    return logged(rec, rec.t, rec.q, rec.command, seed)


def clean(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """Inertias from the URDF, velocity motors off, no link or joint damping, gravity on; the
    TORQUE_CONTROL command (= the applied torque) at 240 Hz: the log physid is made for."""
    return before_step(simulate(Sim(robot, urdf), seed, duration), seed)


def inertia_from_shapes(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """As clean, loaded without URDF_USE_INERTIA_FROM_FILE: PyBullet's link inertias are those of
    its collision shapes, not the URDF's (same masses and centres of mass)."""
    return before_step(simulate(Sim(robot, urdf, inertia_from_file=False), seed, duration), seed)


def link_damping(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """As clean, PyBullet's default linear and angular damping (0.04) left on every link."""
    return before_step(simulate(Sim(robot, urdf, link_damping=True), seed, duration), seed)


def motors_on(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """As clean, the default velocity motors not switched off: a 240 N m brake on every joint
    beside the TORQUE_CONTROL command, which alone is logged."""
    return before_step(simulate(Sim(robot, urdf, motors_on=True), seed, duration), seed)


def position_applied(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """POSITION_CONTROL (default gains, URDF effort limits) tracks q_d, v_d; the log reads after
    each step t, q and getJointState(...)[3], the motor torque of the step just taken."""
    rec = simulate(Sim(robot, urdf, position=True), seed, duration)
    return logged(rec, rec.t + DT, rec.q_after, rec.applied_column, seed)


def zero_torque_column(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """As clean, but the torque logged is getJointState(...)[3] read after each step, which
    PyBullet leaves at exactly 0.0 in TORQUE_CONTROL (no noise: the simulator wrote zeros)."""
    rec = simulate(Sim(robot, urdf), seed, duration)
    return logged(rec, rec.t + DT, rec.q_after, rec.applied_column, seed, noise=False)


def gravity_off(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """As clean, but setGravity was never called: PyBullet simulates (and its inverse dynamics
    commands) without gravity, while the URDF and physid assume 9.81 m/s^2."""
    return before_step(simulate(Sim(robot, urdf, gravity=False), seed, duration), seed)


SCENARIOS: dict[str, Callable[[Path, str, int, float], Log]] = {
    f.__name__: f
    for f in (clean, inertia_from_shapes, link_damping, motors_on, position_applied,
              zero_torque_column, gravity_off)
}  # fmt: skip


# ---- Ground truth checks -----------------------------------------------------------------------


def rnea_check(robot: str, urdf: Path, pb_urdf: Path, samples: int = 50) -> float:
    """max |PyBullet's calculateInverseDynamics - Pinocchio's rnea| [N m] over random states
    (inertias from the file, gravity on, fixed base)."""
    import pinocchio as pin

    client, body, joints, _ = load(Sim(robot, pb_urdf))
    model = pin.buildModelFromUrdf(str(urdf))
    data = model.createData()
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(samples):
        q, v, a = (rng.uniform(-1.5, 1.5, len(joints)), rng.normal(0, 1, len(joints)),
                   rng.normal(0, 3, len(joints)))  # fmt: skip
        tau = client.calculateInverseDynamics(body, q.tolist(), v.tolist(), a.tolist())
        worst = max(worst, float(np.abs(np.array(tau) - pin.rnea(model, data, q, v, a)).max()))
    client.disconnect()
    return worst


def shape_inertias(robot: str, pb_urdf: Path) -> list[tuple[str, float, np.ndarray, np.ndarray]]:
    """Per link with mass: (name, mass, URDF inertia diagonal, PyBullet's from the shapes)."""
    sims = (Sim(robot, pb_urdf), Sim(robot, pb_urdf, inertia_from_file=False))
    clients = [load(sim) for sim in sims]
    rows = []
    (file_client, file_body, *_), (shape_client, shape_body, *_) = clients
    for link in range(file_client.getNumJoints(file_body)):
        mass, _, from_file, *_ = file_client.getDynamicsInfo(file_body, link)
        from_shapes = shape_client.getDynamicsInfo(shape_body, link)[2]
        if mass > 0:
            name = file_client.getJointInfo(file_body, link)[12].decode()
            rows.append((name, mass, np.array(from_file), np.array(from_shapes)))
    for client, *_ in clients:
        client.disconnect()
    return rows


# ---- Table and targets -------------------------------------------------------------------------


@dataclass
class Row:
    case: str
    scenario: str
    status: str
    physid: float | None
    ols: float | None
    urdf: float | None
    moving_mass: float | None
    urdf_mass: float
    note: str


def score(robot: str, scenario: str, folder: Path) -> Row:
    urdf, pb_urdf = folder / f"{robot}.urdf", folder / f"{robot}_pb.urdf"
    case = folder / f"{robot}_{scenario}"
    case.mkdir(exist_ok=True)
    started = time.perf_counter()
    train, heldout = case / "train.csv", case / "heldout.csv"
    SCENARIOS[scenario](pb_urdf, robot, 1, 30.0).write(train)
    SCENARIOS[scenario](pb_urdf, robot, 2, 20.0).write(heldout)
    simulated = time.perf_counter()
    with np.errstate(invalid="ignore", divide="ignore"):  # an all-zero torque: nan errors
        ols, urdf_error, urdf_mass = baselines(urdf, train, heldout)
    document, status = run_physid(urdf, train, heldout, case / "out")
    finite = lambda x: x if np.isfinite(x) else None  # noqa: E731
    row = Row(f"{robot}_{scenario}", scenario, status, None, finite(ols), finite(urdf_error),
              None, sum(urdf_mass.values()), "")  # fmt: skip
    if document is None:
        row.note = status.replace(f"{case}/", "")
        row.status = "refused" if status.startswith("failed (2)") else "failed"
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            row.physid = finite(physid_error(urdf, document, heldout))
        row.moving_mass = float(document["moving_mass"]["value"])
        warnings = (document.get("fit", {}).get("warnings") or []) + (
            document.get("provenance", {}).get("warnings_from_data") or []
        )
        notes = (document.get("suspect_reasons") or []) + [
            w for w in warnings if not w.startswith(GENERIC_WARNINGS)
        ]
        row.note = (notes or [""])[0].replace(f"{case}/", "")[:150]
    print(f"  {row.case}: simulated in {simulated - started:.0f} s, baselines and physid in "
          f"{time.perf_counter() - simulated:.0f} s: {row.status}", flush=True)  # fmt: skip
    return row


def failure(row: Row) -> str | None:
    """Why the row misses its target (simulator_logs' rule), or None."""
    if row.status == "refused" and row.scenario not in APPLIED:
        return None if "Traceback" not in row.note else f"refused by a traceback: {row.note}"
    if row.physid is None or row.ols is None:
        return f"no held-out error ({row.status}: {row.note})"
    return target_miss(row, APPLIED.get(row.scenario))


def print_table(rows: list[Row]) -> None:
    pct = lambda x: "     -" if x is None else f"{100 * x:6.2f}"  # noqa: E731
    print("\nheld-out relative error [%] on the raw held-out torque; masses [kg]")
    print(f"{'robot':5s} {'scenario':19s} {'status':8s} {'physid':>6s} {'OLS':>6s} {'URDF':>7s} "
          f"{'mass physid/URDF':>16s}  first suspect reason / warning")  # fmt: skip
    for r in rows:
        robot = r.case.split("_")[0]
        mass = "-" if r.moving_mass is None else f"{r.moving_mass:.2f}/{r.urdf_mass:.2f}"
        urdf = "      -" if r.urdf is None else f"{100 * r.urdf:7.2f}"
        print(f"{robot:5s} {r.scenario:19s} {r.status[:8]:8s} {pct(r.physid)} {pct(r.ols)} "
              f"{urdf} {mass:>16s}  {r.note}")  # fmt: skip
    print_misses(rows, failure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default="iiwa,panda",
                        help="comma-separated robots of pybullet_data: iiwa (kuka_iiwa/"
                             "model.urdf), panda (franka_panda/panda.urdf, fingers fixed) "
                             "(default: both)")  # fmt: skip
    parser.add_argument("--only", default="",
                        help="comma-separated cases robot_scenario, e.g. iiwa_clean,"
                             f"panda_motors_on (scenarios: {', '.join(SCENARIOS)}; "
                             "default: all)")  # fmt: skip
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="write the URDFs, CSVs and physid outputs here and keep them "
                             "(default: a temporary folder deleted at the end)")  # fmt: skip
    parser.add_argument("--checks", action="store_true",
                        help="also print PyBullet's inverse dynamics against Pinocchio's "
                             "rnea and the inertias PyBullet computes from the collision "
                             "shapes")  # fmt: skip
    args = parser.parse_args()
    robots = args.robots.split(",")
    cases = [(r, s) for r in robots for s in SCENARIOS]
    wanted = set(args.only.split(",")) if args.only else {f"{r}_{s}" for r, s in cases}
    unknown = wanted - {f"{r}_{s}" for r, s in cases} | set(robots) - set(SOURCES)
    if unknown:
        parser.error(f"unknown robots or cases: {', '.join(sorted(unknown))}")
    cases = [(r, s) for r, s in cases if f"{r}_{s}" in wanted]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as temporary:
        folder = (args.keep or Path(temporary)).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        for robot in sorted({r for r, _ in cases} | (set(robots) if args.checks else set())):
            urdf, pb_urdf = write_urdfs(robot, folder)
            if args.checks:
                print(f"{robot}: max |calculateInverseDynamics - rnea| = "
                      f"{rnea_check(robot, urdf, pb_urdf):.1e} N m")  # fmt: skip
                for name, mass, from_file, from_shapes in shape_inertias(robot, pb_urdf):
                    print(f"  {name:18s} m {mass:5.2f}  URDF I {np.round(from_file, 4)}  "
                          f"from shapes {np.round(from_shapes, 4)}")  # fmt: skip
        rows = [score(robot, scenario, folder) for robot, scenario in cases]
    print_table(rows)
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
