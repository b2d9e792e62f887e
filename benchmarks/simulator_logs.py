"""physid with NO config on MuJoCo logs of real robot models, clean and with common pitfalls.

Why: a user's first data is often a simulator log, and simulators log things that are not the
joint torque of the rigid-body model (a servo's force, gravity already compensated, a motor-side
command, a clipped command's request). physid must fit the clean logs at least as well as plain
OLS and, on the corrupted ones, say so (status other than ``ok``) or still return a plausible
model. MuJoCo shares no code with physid, so no convention wrong in both can cancel out: the
simulation functions use numpy and mujoco only (MuJoCo's ``mj_inverse`` with friction off
equals Pinocchio's ``rnea`` to 6e-14 on these models).

What: the Panda (arm joints; fingers fixed) and the UR5 of ``example-robot-data``, their URDFs
(visuals and collisions stripped) loaded into MuJoCo (MjSpec) with known joint damping, armature
and frictionloss (``TRUTH``). Per scenario (one function each, its docstring says what the
user's log looks like), a 30 s training run and a 20 s held-out run (other phases) of a
5-harmonic excitation (0.1 Hz fundamental), tracked at 1 kHz by computed torque (``mj_inverse``
without its constraint forces, i.e. no Coulomb or limit compensation, plus PD), written as
physid CSVs (``t``, ``q_<joint>``, ``tau_<joint>``; 500 Hz unless the scenario says; noise
0.05 N m at the joint and 2e-6 rad). Scored on the raw held-out torque by the relative error
||tau_pred - tau_meas|| / ||tau_meas|| over every sample and joint:

* physid: ``physid identify --urdf R.urdf --data train.csv --validate heldout.csv --out DIR
  --quiet --overwrite`` as a user types it (no config); status, suspect reasons and masses
  from DIR/params.json, its held-out error by the shared scorer of ``scoring.py`` (the
  file's bodies, joint terms, gravity and compensated delay through Pinocchio's RNEA, not
  physid's own scoring);
* OLS: ``scoring.ols_fit``, least squares on Pinocchio's ``computeJointTorqueRegressor`` plus
  per-joint viscous, Coulomb ``sign(dq)``, offset and armature columns on the raw training
  torque, states from the CSV as logged (not the simulator's: a user does not have them) by
  the scorer's fixed 10 Hz zero-phase Butterworth;
* URDF: ``rnea`` with the URDF's inertias and no friction, on the same states.

Targets: where the log holds the applied joint torque (clean, position, afterstep, jitter),
physid's held-out error <= 1.05 x OLS's and, with status ``ok``, a moving mass in [0.8, 1.25] x
the URDF's. On the corrupted logs (gravcomp, gear, limit, clip): a status other than ``ok``, or
``ok`` with a moving mass in [0.8, 1.25] x the URDF's and a held-out error <= OLS's.

RESULTS (2026-11-30 00:10 UTC, 2 cores, 66 s; held-out % by the shared scorer; OLS+c the
consistent least squares, issue 72's yardstick)::

    robot  scenario   status   physid    OLS  OLS+c     URDF mass physid/URDF     worst body ratio
    panda  clean      ok         1.92   3.39   3.14    17.42      19.08/16.82    panda_joint1 1.41
    panda  position   ok         7.01   7.54   7.34    18.97      17.45/16.82    panda_joint3 1.15
    panda  limit      suspect   10.94  15.92  13.54    32.89      16.72/16.82    panda_joint6 0.95
    panda  afterstep  ok         1.82   3.34   3.10    17.45      16.68/16.82    panda_joint4 0.92
    panda  jitter     ok         4.76   6.92   5.95    17.90      18.39/16.82    panda_joint1 1.33
    panda  gravcomp   suspect   10.59  17.47  16.48   524.48      11.23/16.82    panda_joint6 0.11
    panda  gear       suspect    1.97   3.39   3.18  9898.11      11.44/16.82    panda_joint7 0.01
    panda  clip       ok         7.88  11.78  12.05    17.51      19.35/16.82    panda_joint3 1.96
    ur5    clean      ok         2.43   4.78   4.67    27.08      16.74/16.99     elbow_joint 0.79
    ur5    position   ok         8.69   9.01   8.98    27.99      16.82/16.99     elbow_joint 0.85
    ur5    limit      ok         3.19   6.65   6.50    33.50      16.86/16.99   wrist_3_joint 1.22
    ur5    afterstep  ok         2.53   4.59   4.48    27.10      17.07/16.99     elbow_joint 0.88
    ur5    jitter     ok         4.42   7.24   6.88    27.27      17.36/16.99     elbow_joint 0.86
    ur5    gravcomp   suspect    9.17  17.32  16.89   352.32      11.46/16.99     elbow_joint 0.13
    ur5    gear       suspect    2.60   4.78   4.66  9539.58       8.17/16.99   wrist_2_joint 0.01
    ur5    clip       ok         3.65   6.67   5.86    27.15      31.08/16.99   wrist_2_joint 0.27

Targets met on 15 of 16; physid <= 1.01 x OLS+c on all 16. The miss is the issue 72 rule's
price: since 2026-11-29 residuals that are mostly misfit (here the clipped command's request,
Newey-West variance inflation 5.4) make the fit with the default prior the conservative
candidate; the folds by phase cannot show the plausible refit better (4.96 % against
4.90 %), and the refit would move the shoulder link 4.3 of its std (the data decide it,
stages/undecided.py), so the UR5 keeps a 24.4 kg shoulder link (URDF 8.39) with a -17 N m
offset, named in ID404, and predicts its held-out run at 3.65 % where the refit predicted
3.02 % (moving mass 19.49 kg). Every other row is as before the rule, digit for digit.
Before the stop of 2026-11-27 the gravcomp logs were ``ok`` (moving mass 0.54-0.63 x), the
Panda pressed on its limit was told "columns in another order?", and a Panda logged with its
clipped command's request kept a 140 kg link (moving mass 9 x).

Run: python benchmarks/simulator_logs.py [--robots panda,ur5] [--only panda_clean,ur5_gear]
[--keep DIR]   (16 cases; a few minutes on one core; files in a temporary folder by default)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scoring import (  # noqa: E402
    butterworth_states,
    consistent_ols_fit,
    ols_fit,
    ols_regressor,
    params_error,
    read_sim_csv,
    relative_error,
)

CONTROL_DT = 0.001  # s: MuJoCo step = control period
KP, KD = 400.0, 40.0  # 1/s^2, 1/s: PD on the acceleration of the computed-torque law
TAU_NOISE, Q_NOISE = 0.05, 2e-6  # N m (at the joint), rad
SOURCES = {"panda": "panda_description/urdf/panda.urdf",
           "ur5": "ur_description/urdf/ur5_robot.urdf"}  # fmt: skip
# The simulated robot's joint terms (and the position servo's gains, the clip scenario's limits).
TRUTH = {
    "panda": dict(damping=[2, 2, 2, 2, 0.5, 0.5, 0.5],
                  armature=[0.3, 0.3, 0.2, 0.2, 0.05, 0.05, 0.05],
                  frictionloss=[3, 3, 2, 2, 1, 1, 1], kp=[4500, 4500, 3500, 3500, 2000, 2000, 2000],
                  kv=[450, 450, 350, 350, 200, 200, 200], clip=[43.5] * 4 + [6.0] * 3),
    "ur5": dict(damping=[5, 5, 3, 1, 1, 1], armature=[0.5, 0.5, 0.3, 0.1, 0.1, 0.1],
                frictionloss=[5, 5, 3, 1, 1, 1], kp=[2000, 2000, 2000, 500, 500, 500],
                kv=[200, 200, 200, 50, 50, 50], clip=[75, 55, 75, 14, 14, 14]),
}  # fmt: skip
# The joint driven into its stop in the limit scenario, and that stop [rad].
LIMIT_JOINT = {"panda": (3, None), "ur5": (2, 2.6)}  # None: the URDF's upper limit
APPLIED = ("clean", "position", "afterstep", "jitter")  # the log holds the applied joint torque


# ---- Simulation (numpy and mujoco only) ------------------------------------------------------


def robots_folder() -> Path:
    """``.../share/example-robot-data/robots`` of the installed ``example-robot-data`` wheel."""
    for entry in sys.path:
        folder = Path(entry) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if folder.is_dir():
            return folder
    raise SystemExit("example-robot-data not found (pip install example-robot-data)")


def write_urdfs(robot: str, folder: Path) -> tuple[Path, Path]:
    """(URDF for physid, the same with a MuJoCo compiler block): no visuals or collisions; the
    Panda's fingers fixed (their mimic tags removed)."""
    text = (robots_folder() / SOURCES[robot]).read_text()
    text = re.sub(r"<(visual|collision)\b.*?</\1>", "", text, flags=re.S)
    if robot == "panda":
        text = re.sub(r'(<joint name="panda_finger_joint\d" type=")prismatic"', r'\1fixed"', text)
        text = re.sub(r"<mimic[^>]*/>", "", text)
    compiler = ('<mujoco><compiler discardvisual="true" fusestatic="false" '
                'balanceinertia="false" strippath="false"/></mujoco>')  # fmt: skip
    urdf, mj_urdf = folder / f"{robot}.urdf", folder / f"{robot}_mj.urdf"
    urdf.write_text(text)
    mj_urdf.write_text(re.sub(r"(<robot[^>]*>)", r"\1\n" + compiler, text, count=1))
    return urdf, mj_urdf


@dataclass(frozen=True)
class Sim:
    """One simulated robot: its MuJoCo URDF and the scenario's model options."""

    robot: str
    mj_urdf: Path
    servo: bool = False  # MuJoCo position actuators (kp, kv) with implicitfast, else motors
    gear: float = 1.0
    gravcomp: bool = False
    limit: bool = False
    clip: bool = False


@dataclass
class Recording:
    """Per control step: the state before the step and what drove it, and the state after."""

    joints: list[str]
    t: np.ndarray
    q: np.ndarray
    applied: np.ndarray  # joint torque the actuators applied (qfrc_actuator)
    ctrl: np.ndarray  # the command (motor side for gear != 1, before clipping)
    q_after: np.ndarray  # at t + CONTROL_DT


def build(sim: Sim) -> tuple[mujoco.MjModel, list[str]]:
    """The MuJoCo model (the URDF's effort limits clamp the applied torques) and joint names."""
    truth = TRUTH[sim.robot]
    spec = mujoco.MjSpec.from_file(str(sim.mj_urdf))
    names = [j.name for j in spec.joints]
    for i, joint in enumerate(spec.joints):
        joint.damping, joint.armature = [truth["damping"][i], 0.0, 0.0], truth["armature"][i]
        joint.frictionloss = truth["frictionloss"][i]
    index, stop = LIMIT_JOINT[sim.robot]
    if sim.limit and stop is not None:
        spec.joints[index].range = [-stop, stop]
    for i, name in enumerate(names):
        actuator = spec.add_actuator(name=f"a_{name}", target=name,
                                     trntype=mujoco.mjtTrn.mjTRN_JOINT)  # fmt: skip
        if sim.servo:
            actuator.set_to_position(kp=truth["kp"][i], kv=truth["kv"][i])
        else:
            actuator.set_to_motor()
            actuator.gear = [sim.gear, 0, 0, 0, 0, 0]
        if sim.clip:
            actuator.ctrllimited = True
            actuator.ctrlrange = [-truth["clip"][i], truth["clip"][i]]
    if sim.servo:
        spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    if sim.gravcomp:
        for body in spec.bodies[1:]:
            body.gravcomp = 1.0
    model = spec.compile()
    model.opt.timestep = CONTROL_DT
    return model, names


def excitation(model: mujoco.MjModel, sim: Sim, seed: int) -> Callable[[float], tuple]:
    """5 harmonics of 0.1 Hz per joint, random amplitudes (decaying as 1/k) and phases; centre
    and amplitude from the joint ranges (UR5: a pose of its own). Limit scenario: one joint's
    peaks pass its stop by about 0.4 x its amplitude."""
    rng = np.random.default_rng(seed)
    lo, hi = model.jnt_range.T.copy()
    centre, amplitude = (lo + hi) / 2, np.minimum(0.35 * (hi - lo) / 2, 1.0)
    if sim.robot == "ur5":
        centre = np.array([0.0, -1.2, 1.2, -1.5, -1.5, 0.0])
        amplitude = np.array([1.0, 0.6, 0.8, 0.8, 0.8, 1.0])
    if sim.limit:
        j = LIMIT_JOINT[sim.robot][0]
        centre[j] = hi[j] - 0.6 * amplitude[j]
    n, k = model.nq, np.arange(1, 6)
    amp = rng.uniform(0.5, 1.0, (n, 5)) / k
    amp *= (amplitude / amp.sum(1))[:, None]
    phase = rng.uniform(0, 2 * np.pi, (n, 5))
    w = 2 * np.pi / 10 * k

    def trajectory(t: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s, c = np.sin(w * t + phase), np.cos(w * t + phase)
        return centre + (amp * s).sum(1), (amp * w * c).sum(1), -(amp * w**2 * s).sum(1)

    return trajectory


def simulate(sim: Sim, seed: int, duration: float) -> Recording:
    """Computed torque + PD (or the position servo tracking q_d) at 1 kHz."""
    model, names = build(sim)
    trajectory = excitation(model, sim, seed)
    data, inverse = mujoco.MjData(model), mujoco.MjData(model)
    data.qpos[:], data.qvel[:], _ = trajectory(0.0)
    mujoco.mj_forward(model, data)
    rows = []
    for _ in range(int(round(duration / CONTROL_DT))):
        t, q, v = data.time, data.qpos.copy(), data.qvel.copy()
        qd, vd, ad = trajectory(t)
        if sim.servo:
            data.ctrl[:] = qd
        else:
            inverse.qpos[:], inverse.qvel[:] = q, v
            inverse.qacc[:] = ad + KP * (qd - q) + KD * (vd - v)
            mujoco.mj_inverse(model, inverse)  # qfrc_inverse = M a + bias - passive - constraint
            data.ctrl[:] = (inverse.qfrc_inverse + inverse.qfrc_constraint) / sim.gear
        mujoco.mj_step(model, data)  # its forces are those of the state (t, q, v)
        rows.append((t, q, data.qfrc_actuator.copy(), data.ctrl.copy(), data.qpos.copy()))
    columns = [np.array(c) for c in zip(*rows, strict=True)]
    return Recording(names, *columns)


@dataclass
class Log:
    """What the user's CSV holds."""

    joints: list[str]
    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray

    def write(self, path: Path) -> None:
        names = [f"{kind}_{j}" for kind in ("q", "tau") for j in self.joints]
        table = np.column_stack([self.t, self.q, self.tau])
        np.savetxt(path, table, delimiter=",", header=",".join(["t", *names]), comments="",
                   fmt="%.9g")  # fmt: skip


def logged(rec: Recording, tau: np.ndarray | None, every: int, seed: int) -> Log:
    """Every ``every``-th step of ``tau`` (None: the applied torque), with noise."""
    rng = np.random.default_rng(seed + 1000)
    rows = slice(0, None, every)
    tau = (rec.applied if tau is None else tau)[rows]
    q = rec.q[rows]
    return Log(rec.joints, rec.t[rows], q + rng.normal(0.0, Q_NOISE, q.shape),
               tau + rng.normal(0.0, TAU_NOISE, tau.shape))  # fmt: skip


def clean(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """Motor actuators (gear 1), their applied torque at 500 Hz: the log physid is made for."""
    return logged(simulate(Sim(robot, urdf), seed, duration), None, 2, seed)


def position(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """Position servos (kp, kv; implicitfast) track q_d; their applied torque is logged."""
    return logged(simulate(Sim(robot, urdf, servo=True), seed, duration), None, 2, seed)


def limit(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """A joint presses into its stop every cycle; the drive's torque (not the stop's) is logged."""
    return logged(simulate(Sim(robot, urdf, limit=True), seed, duration), None, 2, seed)


def afterstep(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """Logged after mj_step at 100 Hz: t and q after the step beside the torque that drove it."""
    rec = simulate(Sim(robot, urdf), seed, duration)
    rec.t, rec.q = rec.t + CONTROL_DT, rec.q_after
    return logged(rec, None, 10, seed)


def jitter(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """100 Hz rows whose stamps are off by up to +-3 ms (the values are at the nominal instants)."""
    log = logged(simulate(Sim(robot, urdf), seed, duration), None, 10, seed)
    log.t = log.t + np.random.default_rng(seed + 2000).uniform(-0.003, 0.003, len(log.t))
    log.t[0] = 0.0
    return log


def gravcomp(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """Gravity compensated by the simulator (gravcomp on every body): no gravity in the torque."""
    return logged(simulate(Sim(robot, urdf, gravcomp=True), seed, duration), None, 2, seed)


def gear(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """Motors behind 100:1 gears; the motor-side command (joint torque / 100) is logged."""
    rec = simulate(Sim(robot, urdf, gear=100.0), seed, duration)
    log = logged(rec, 100.0 * rec.ctrl, 2, seed)  # the noise at the joint, like the others'
    log.tau /= 100.0
    return log


def clip(urdf: Path, robot: str, seed: int, duration: float) -> Log:
    """The drives clip at their ctrlrange (~5 % of the rows); the unclipped command is logged."""
    rec = simulate(Sim(robot, urdf, clip=True), seed, duration)
    return logged(rec, rec.ctrl, 2, seed)


SCENARIOS: dict[str, Callable[[Path, str, int, float], Log]] = {
    f.__name__: f for f in (clean, position, limit, afterstep, jitter, gravcomp, gear, clip)
}


# ---- Baselines (Pinocchio, states from the CSV) and physid (its command) ----------------------


def baselines(urdf: Path, train: Path, heldout: Path) -> tuple[float, float, dict[str, float]]:
    """Held-out relative errors of the plain OLS and of the URDF's model (the shared scorer,
    ``scoring.py``: its fixed 10 Hz Butterworth states, raw torques); the URDF's body masses."""
    model = pin.buildModelFromUrdf(str(urdf))
    theta = ols_fit(model, [butterworth_states(read_sim_csv(train))], armature=True, wrist=False)
    states = butterworth_states(read_sim_csv(heldout))
    ols = (ols_regressor(model, states, armature=True, wrist=False) @ theta).reshape(
        states.tau.shape
    )
    data = model.createData()
    urdf_model = np.array([pin.rnea(model, data, *x)
                           for x in zip(states.q, states.dq, states.ddq, strict=True)])  # fmt: skip
    masses = {model.names[j]: model.inertias[j].mass for j in range(1, model.njoints)}
    return (relative_error([states], [ols]), relative_error([states], [urdf_model]), masses)


def consistent_baseline(urdf: Path, train: Path, heldout: Path) -> float:
    """Held-out relative error of the consistent least squares (``scoring.consistent_ols_fit``,
    issue 72's yardstick: the OLS's regressor and rows, every body physically consistent, no
    prior) by the same scorer."""
    model = pin.buildModelFromUrdf(str(urdf))
    states = butterworth_states(read_sim_csv(train))
    theta = consistent_ols_fit(model, [states], armature=True, wrist=False)[0]
    held = butterworth_states(read_sim_csv(heldout))
    predicted = (ols_regressor(model, held, armature=True, wrist=False) @ theta).reshape(
        held.tau.shape
    )
    return relative_error([held], [predicted])


def physid_error(urdf: Path, document: dict, heldout: Path) -> float:
    """The held-out error of physid's params.json by the shared scorer (not physid's own)."""
    model = pin.buildModelFromUrdf(str(urdf))
    signals = read_sim_csv(heldout)
    return params_error(model, document, [signals], [butterworth_states(signals)])


def run_physid(urdf: Path, train: Path, heldout: Path, out: Path) -> tuple[dict | None, str]:
    """The ``physid identify`` command as a user types it, no config: (params.json, status)."""
    script = Path(sys.executable).with_name("physid")  # the console script pip installed
    launcher = ([str(script)] if script.is_file()
                else [sys.executable, "-c", "from physid.cli import main; main()"])  # fmt: skip
    command = [*launcher, "identify", "--urdf", str(urdf), "--data", str(train), "--validate",
               str(heldout), "--out", str(out), "--quiet", "--overwrite"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ))
    params = out / "params.json"
    if done.returncode not in (0, 3) or not params.is_file():
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"failed ({done.returncode}): {last[:100]}"
    document = json.loads(params.read_text(encoding="utf-8"))
    return document, str(document.get("status", "?"))


# ---- Table and targets -----------------------------------------------------------------------


@dataclass
class Row:
    case: str
    scenario: str
    status: str
    physid: float | None
    ols: float
    urdf: float
    moving_mass: float | None
    urdf_mass: float
    worst_body: str
    suspect: str
    consistent: float | None = None  # the consistent least squares' held-out error


def score(robot: str, scenario: str, folder: Path) -> Row:
    urdf, mj_urdf = folder / f"{robot}.urdf", folder / f"{robot}_mj.urdf"
    case = folder / f"{robot}_{scenario}"
    case.mkdir(exist_ok=True)
    started = time.perf_counter()
    train, heldout = case / "train.csv", case / "heldout.csv"
    SCENARIOS[scenario](mj_urdf, robot, 1, 30.0).write(train)
    SCENARIOS[scenario](mj_urdf, robot, 2, 20.0).write(heldout)
    simulated = time.perf_counter()
    ols, urdf_error, urdf_mass = baselines(urdf, train, heldout)
    document, status = run_physid(urdf, train, heldout, case / "out")
    consistent = consistent_baseline(urdf, train, heldout)
    row = Row(f"{robot}_{scenario}", scenario, status, None, ols, urdf_error, None,
              sum(urdf_mass.values()), "-", "", consistent)  # fmt: skip
    if document is not None:
        row.physid = physid_error(urdf, document, heldout)
        row.moving_mass = float(document["moving_mass"]["value"])
        ratios = {j: float(document["bodies"][j]["mass"]) / m for j, m in urdf_mass.items()
                  if m > 1e-3 and j in document["bodies"]}  # fmt: skip
        worst = max(ratios, key=lambda j: abs(np.log(max(ratios[j], 1e-12))))
        row.worst_body = f"{worst} {ratios[worst]:.2f}"
        reasons = document.get("suspect_reasons") or [""]
        row.suspect = reasons[0].replace(f"{case}{os.sep}", "")[:120]
    print(f"  {row.case}: simulated in {simulated - started:.0f} s, baselines and physid in "
          f"{time.perf_counter() - simulated:.0f} s: {status}", flush=True)  # fmt: skip
    return row


def target_miss(row, applied_factor: float | None) -> str | None:  # noqa: ANN001 - any Row
    """Why a scored row (``physid``, ``ols``, ``status``, ``moving_mass``, ``urdf_mass``) misses
    its target (module docstring), or None. ``applied_factor``: where the log holds the applied
    torque, the most physid's held-out error may be of OLS's; None for a corrupted log."""
    if row.physid is None or row.ols is None:
        return f"no held-out error ({row.status})"
    mass = f"status ok with moving mass {row.moving_mass:.2f} / URDF {row.urdf_mass:.2f}"
    errors = f"physid {100 * row.physid:.2f} % against OLS {100 * row.ols:.2f} %"
    mass_ok = 0.8 <= row.moving_mass / row.urdf_mass <= 1.25
    if applied_factor is not None:
        if row.physid > applied_factor * row.ols:
            return f"{errors}: more than {applied_factor:.2f} x OLS"
        if row.status != "ok":
            return f"status {row.status} on a log of the applied torque ({errors})"
        return None if mass_ok else mass
    if row.status != "ok":
        return None
    if not mass_ok:
        return f"corrupted log, {mass}"
    return f"corrupted log, status ok, {errors}: worse" if row.physid > row.ols else None


def failure(row: Row) -> str | None:
    """Why the row misses its target, or None."""
    return target_miss(row, 1.05 if row.scenario in APPLIED else None)


def print_misses(rows: list, failure: Callable[[object], str | None]) -> None:
    """Each row that misses its target (``failure``: why, or None), and the count met."""
    misses = [(r.case, why) for r in rows if (why := failure(r)) is not None]
    for case, why in misses:
        print(f"TARGET MISSED {case}: {why}")
    print(f"targets met on {len(rows) - len(misses)} of {len(rows)} cases")


def print_table(rows: list[Row]) -> None:
    pct = lambda x: "     -" if x is None else f"{100 * x:6.2f}"  # noqa: E731
    print("\nheld-out relative error [%] on the raw held-out torque; masses [kg]")
    print(f"{'robot':6s} {'scenario':10s} {'status':8s} {'physid':>6s} {'OLS':>6s} {'OLS+c':>6s} "
          f"{'URDF':>8s} {'mass physid/URDF':>16s} {'worst body ratio':>20s}  "
          "first suspect reason")  # fmt: skip
    for r in rows:
        robot = r.case.split("_")[0]
        mass = "-" if r.moving_mass is None else f"{r.moving_mass:.2f}/{r.urdf_mass:.2f}"
        print(f"{robot:6s} {r.scenario:10s} {r.status[:8]:8s} {pct(r.physid)} {pct(r.ols)} "
              f"{pct(r.consistent)} {100 * r.urdf:8.2f} {mass:>16s} {r.worst_body:>20s}  "
              f"{r.suspect}")  # fmt: skip
    print_misses(rows, failure)
    over = [r.case for r in rows if r.physid is None or r.consistent is None
            or r.physid > 1.01 * r.consistent]  # fmt: skip
    print(
        "physid <= 1.01 x the consistent least squares (OLS+c, issue 72) on every case: "
        + ("MET" if not over else f"NOT MET ({', '.join(over)})")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default="panda,ur5",
                        help="comma-separated robots of example-robot-data: panda (arm joints, "
                             "fingers fixed), ur5 (default: both)")  # fmt: skip
    parser.add_argument("--only", default="",
                        help="comma-separated cases robot_scenario, e.g. panda_clean,ur5_gear "
                             f"(scenarios: {', '.join(SCENARIOS)}; default: all)")  # fmt: skip
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="write the URDFs, CSVs and physid outputs here and keep them "
                             "(default: a temporary folder deleted at the end)")  # fmt: skip
    args = parser.parse_args()
    cases = [(r, s) for r in args.robots.split(",") for s in SCENARIOS]
    wanted = set(args.only.split(",")) if args.only else {f"{r}_{s}" for r, s in cases}
    unknown = wanted - {f"{r}_{s}" for r, s in cases} | set(args.robots.split(",")) - set(TRUTH)
    if unknown:
        parser.error(f"unknown robots or cases: {', '.join(sorted(unknown))}")
    cases = [(r, s) for r, s in cases if f"{r}_{s}" in wanted]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as temporary:
        folder = (args.keep or Path(temporary)).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        for robot in sorted({r for r, _ in cases}):
            write_urdfs(robot, folder)
        rows = [score(robot, scenario, folder) for robot, scenario in cases]
    print_table(rows)
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
