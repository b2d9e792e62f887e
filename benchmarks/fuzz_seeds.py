"""Valid tiny inputs of every ``physid`` command, the seeds that ``fuzz_commands`` damages.

Each is small enough that the real estimator finishes in seconds on it (so a fuzz case that
runs longer than a minute is a hang, not a big input): a 2-link arm for ``oe`` and ``excite``,
a pendulum for ``multibody``, 30 camera frames and 10 impact snapshots for ``impacts``, a
7-joint payload arm replayed
over 1.5 s for ``online``, the demo arm for ``export`` and the ``sweep`` jobs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

EXCITE_CONFIG = (
    "joint_terms: [fv, fc]\n"
    "excitation:\n  max_iterations: 15\n  constraint_points: 60\n  information_points: 30\n"
    "  starts: 1\n  sample_rate_hz: 20\n  margin: 0.05\n"
)
ONLINE_CONFIG = (
    "calibration_s: 0.2\nacceleration_window: 11\n"
    "process_noise: {alpha: 2.0, d: 0.05, s: 0.01, t: 0.005}\n"
    "measurement_noise: {joint_torque: 1.0}\n"
    "gating: {probability: 0.9999, release_after_s: 0.05}\nrate_limit: {mass: 100.0}\n"
)
OE_CONFIG = (  # the joint terms estimated with the body (issue 29)
    "noise: {encoder: 1.0e-3}\n"
    "joints: {damping: 0.01, estimate: [damping, friction], prior_std: 1.0, coulomb_speed: 0.1}\n"
)
MULTIBODY_CONFIG = (
    "gravity: [0, 0, -9.81]\n"
    "defaults: {compliance_linear: 1.0e-5, compliance_rotational: 1.0e-5}\n"
    "bodies: {pendulum: {Iyy: 0.02}}\n"
    "joints: {pendulum: {viscous: 0.001, gain: 0.5}}\n"
    "estimate: [pendulum.Iyy, pendulum.viscous]\n"
)
PENDULUM = Path(__file__).resolve().parents[1] / "examples" / "multibody" / "pendulum.urdf"


def _csv(path: Path, columns: dict[str, np.ndarray]) -> Path:
    from physid.files.io import table_csv_text

    path.write_text(table_csv_text(columns, fmt="%.12g"))
    return path


def oe_recording(folder: Path, urdf: Path) -> Path:
    """0.4 s of the 2-link arm at 100 Hz (paper B's input: t, q_, dq_, tau_)."""
    import pinocchio as pin

    from physid.sim.oe_arm import simulate_arm

    nominal = pin.buildModelFromUrdf(str(urdf))
    true = nominal.copy()
    true.inertias[2] = true.inertias[2] + pin.Inertia(
        0.3, np.array([0.05, 0.0, 0.0]), np.diag([1e-3, 1e-3, 1e-3])
    )
    rec = simulate_arm(true, nominal, np.random.default_rng(3), duration=0.4, dt=0.01)
    cols = {"t": rec.t}
    for i, name in enumerate(nominal.names[1:]):
        cols[f"q_{name}"] = rec.q_meas[:, i]
        cols[f"dq_{name}"] = rec.v_meas[:, i]
        cols[f"tau_{name}"] = np.r_[rec.tau[:, i], 0.0]
    return _csv(folder / "oe.csv", cols)


def pendulum_recording(folder: Path) -> tuple[Path, Path]:
    """A pendulum swinging 0.5 s (model step 1 ms, written every 10 ms) and its control."""
    from physid.multibody import load_model, simulate, state_from_joints

    truth = {"gravity": [0, 0, -9.81], "joints": {"pendulum": {"viscous": 0.01}}}
    model = load_model(PENDULUM, truth)
    sim = simulate(model, 1e-3, 500, *state_from_joints(model, [0.8], [0.0]))
    keep = slice(None, None, 10)
    t = sim.t[keep]
    q = sim.angles[keep, 0] + 1e-3 * np.random.default_rng(1).normal(size=len(t))
    data = _csv(folder / "pendulum.csv", {"t": t, "q_pendulum": q, "u_pendulum": 0 * t})
    control = _csv(folder / "control.csv", {"t": t, "u_pendulum": 0.2 * np.sin(8 * t)})
    return data, control


def online_recording(folder: Path) -> Path:
    """1.5 s of the 7-joint payload arm at 200 Hz (a 2 kg payload from 0.5 s on)."""
    from physid.online.columns import OnlineSignals, signals_table
    from physid.sim.payload_arm import PayloadProfile, load_arm, simulate_payload_arm

    profile = PayloadProfile(
        hold_s=0.5, sine_s=0.0, square_s=0.0, plateau_s=0.0, step_s=1.0, step_to_kg=2.0
    )
    rec = simulate_payload_arm(np.random.default_rng(9), profile, rate_hz=200.0)
    signals = OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, None)
    return _csv(folder / "online.csv", signals_table(signals, load_arm()))


def poses(folder: Path) -> Path:
    """Camera poses t,x,y,theta of an ellipse that falls, hits the ground and bounces (60 fps)."""
    from physid.impacts.poses import camera_samples, poses_to_csv_text
    from physid.impacts.simulator import simulate
    from physid.impacts.specs import parse_shape, parse_surface

    shape = parse_shape("ellipse:0.05,0.025")
    sim = simulate(
        shape,
        [parse_surface("line:0,0")],
        np.array([0.0, 0.1, -0.785]),
        np.array([1.0, -1.0, 0.0]),
        inertia_ratio=shape.uniform_inertia_ratio(),
        mu=0.3,
        restitution=0.2,
        dt=1.0 / 9600,
        duration=0.2,
    )
    t, q = camera_samples(
        sim, 60.0, noise_position=1e-3, noise_angle=0.02, rng=np.random.default_rng(0)
    )
    path = folder / "bounce.csv"
    path.write_text(poses_to_csv_text(t, q))
    return path


def snapshots(folder: Path) -> Path:
    """Impact snapshots of a bouncing ellipse (physid's simulator, 3 throws), as contact
    Jacobian rows: the input of ``impacts identify-snapshots``."""
    from physid.impacts.geometry import Ellipse, Line
    from physid.impacts.simulator import simulate
    from physid.impacts.snapshots import snapshots_from_simulation

    shape, ground = Ellipse(0.05, 0.025), [Line(0.0, 0.0)]
    rows = []
    for q0, v0 in (
        ((0, 0.1, 1.0), (1.0, -3.0, 10.0)),
        ((0, 0.1, -0.5), (-2.0, -2.0, 5.0)),
        ((0, 0.12, 2.0), (2.5, -3.5, -20.0)),
    ):
        sim = simulate(
            shape,
            ground,
            q0,
            v0,
            inertia_ratio=756e-6,
            mu=0.3,
            restitution=0.5,
            dt=1e-4,
            duration=0.3,
            mass=0.064,
        )
        snaps = snapshots_from_simulation(sim, shape, ground)
        n, arm = snaps.normal, snaps.arm
        t = np.column_stack([n[:, 1], -n[:, 0]])
        cross = lambda d, a=arm: a[:, 0] * d[:, 1] - a[:, 1] * d[:, 0]  # noqa: E731
        rows.append(
            np.column_stack([snaps.v_pre, snaps.v_post, n, cross(n), t, cross(t), snaps.duration])
        )
    names = [
        "vx_pre",
        "vy_pre",
        "omega_pre",
        "vx_post",
        "vy_post",
        "omega_post",
        "jn_x",
        "jn_y",
        "jn_w",
        "jt_x",
        "jt_y",
        "jt_w",
        "duration",
    ]
    return _csv(folder / "snapshots.csv", dict(zip(names, np.vstack(rows).T, strict=True)))


SIMFIT_ARM = """<mujoco model="fuzz_arm">
  <option timestep="0.002"/>
  <default><joint damping="0.3" armature="0.01" frictionloss="0.05"/></default>
  <worldbody>
    <body name="upper" pos="0 0 0.5">
      <joint name="shoulder" axis="0 1 0"/>
      <inertial pos="0.15 0 0" mass="1" diaginertia="0.002 0.01 0.01"/>
      <body name="lower" pos="0.3 0 0">
        <joint name="elbow" axis="0 1 0"/>
        <inertial pos="0.12 0 0" mass="0.5" diaginertia="0.001 0.004 0.004"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def simfit_inputs(folder: Path) -> tuple[Path, Path]:
    """A two-joint MJCF arm and 1.5 s of it under a PD controller (t, q_, tau_ at 250 Hz)."""
    import mujoco

    model_path = folder / "simfit_arm.xml"
    model_path.write_text(SIMFIT_ARM)
    model = mujoco.MjModel.from_xml_path(str(model_path))
    data = mujoco.MjData(model)
    rows = []
    for step in range(750):
        t = step * model.opt.timestep
        reference = 0.4 * np.sin(2 * np.pi * np.array([0.7, 1.1]) * t)
        data.qfrc_applied[:] = 20 * (reference - data.qpos) - 2 * data.qvel + data.qfrc_bias
        if step % 2 == 0:
            rows.append([t, *data.qpos, *data.qfrc_applied])
        mujoco.mj_step(model, data)
    values = np.array(rows)
    columns = {
        "t": values[:, 0],
        "q_shoulder": values[:, 1],
        "q_elbow": values[:, 2],
        "tau_shoulder": values[:, 3],
        "tau_elbow": values[:, 4],
    }
    return model_path, _csv(folder / "simfit.csv", columns)


SIMFIT_GAINS = {"shoulder": 8.0, "elbow": 3.0}  # N m/A of the current-logged seed


def simfit_current_inputs(folder: Path, torque_csv: Path) -> tuple[Path, Path]:
    """The simfit seed logged as motor currents (``i_ = tau_ / gain``) and the identify config
    whose drive gains turn them back (``physid simfit --config``)."""
    from physid.recordings.tables import read_file_table

    columns = dict(read_file_table(torque_csv).columns)
    for joint, gain in SIMFIT_GAINS.items():
        columns[f"i_{joint}"] = columns.pop(f"tau_{joint}") / gain
    config = folder / "simfit_gains.yaml"
    config.write_text(
        "drive_gains: {" + ", ".join(f"{j}: {g}" for j, g in SIMFIT_GAINS.items()) + "}\n"
    )
    return _csv(folder / "simfit_currents.csv", columns), config


def make_command_seeds(folder: Path, base: dict[str, Path]) -> dict[str, Path]:
    """The seeds of :mod:`fuzz` (``base``) plus one valid input of each other command."""
    folder.mkdir(parents=True, exist_ok=True)
    seeds = dict(base)
    from physid.sim.arm import two_link_urdf_path

    two_link = Path(shutil.copy(two_link_urdf_path(), folder / "two_link.urdf"))
    (folder / "excite.yaml").write_text(EXCITE_CONFIG)
    (folder / "online.yaml").write_text(ONLINE_CONFIG)
    (folder / "multibody.yaml").write_text(MULTIBODY_CONFIG)
    (folder / "oe.yaml").write_text(OE_CONFIG)
    shutil.copy(PENDULUM, folder / "pendulum.urdf")
    from physid.sim.payload_arm import ARM_URDF

    shutil.copy(ARM_URDF, folder / "payload_arm.urdf")
    pendulum, control = pendulum_recording(folder)
    spec = {
        "kind": "validate",
        "base": {
            "urdf": str(base["urdf"]),
            "params": str(base["params"]),
            "data": [str(base["csv"])],
        },
        "grid": {"config.filter.butterworth_cutoff_hz": [10, 20]},
    }
    (folder / "sweep.yaml").write_text(json.dumps(spec))
    seeds |= {
        "two_link": two_link,
        "excite_config": folder / "excite.yaml",
        "oe_csv": oe_recording(folder, two_link),
        "oe_config": folder / "oe.yaml",
        "pendulum_urdf": folder / "pendulum.urdf",
        "multibody_config": folder / "multibody.yaml",
        "pendulum_csv": pendulum,
        "control_csv": control,
        "online_urdf": folder / "payload_arm.urdf",
        "online_csv": online_recording(folder),
        "online_config": folder / "online.yaml",
        "bounce": poses(folder),
        "snapshots": snapshots(folder),
        "sweep_spec": folder / "sweep.yaml",
    }
    seeds["simfit_mjcf"], seeds["simfit_csv"] = simfit_inputs(folder)
    seeds["simfit_currents"], seeds["simfit_gains"] = simfit_current_inputs(
        folder, seeds["simfit_csv"]
    )
    return seeds
