"""CLI command ``physid oe`` (paper B): optimal estimation of chosen bodies' inertias.

Heavy imports (Pinocchio, Matplotlib) happen inside the command so ``--help`` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import click

from physid.cli.options import OUTPUT_DIR, Notes, number_in, robot_file_option

NOISE_KEYS = (
    "encoder",
    "joint_velocity",
    "orientation",
    "gyro",
    "base_velocity",
    "process_q",
    "process_v",
    "arrival_q",
    "arrival_v",
    "foot_velocity",
    "force",
    "torque",
    "accelerometer",
    "contact_change_v",
    "contact_change_window",
)
PER_DOF_KEYS = ("process_q", "process_v")  # one number, or a list of nv numbers
# reduced chi-square above which the fit is reported as not matching the noise model: the
# 99.9 % quantile of chi2/dof is below 1.1 for the >= 1,000 residuals of any real recording,
# so 3 flags a noise model off by sqrt(3) = 1.7x or worse, not bad luck
CHI2_WARNING = 3.0


def read_oe_config(path: Path | None) -> tuple[dict, float, dict, float]:
    """The ``noise`` mapping (NoiseStd keyword arguments), the contact damping [1/s], the
    ``imu`` mapping (``frame``: the accelerometer's frame, None = the base; ``estimate_bias``,
    default True) and the contacts' foot radius [m] (``contacts.radius``, default 0: point
    feet at the frames) of a ``physid oe --config`` YAML; a bad entry is an InputError naming
    the file and its key."""
    from physid.files.io import config_errors_name

    if path is None:
        return {}, 0.0, {"frame": None, "estimate_bias": True}, 0.0
    with config_errors_name(path):
        return _oe_config(path)


JOINT_KEYS = ("armature", "damping", "friction", "coulomb_speed")


def read_joint_terms(path: Path | None, model):  # noqa: ANN001, ANN201
    """The ``joints`` mapping of a ``physid oe --config`` YAML as
    :class:`physid.oe.dynamics.JointTerms` (None without one): ``armature`` [kg m^2],
    ``damping`` (viscous) [N m s/rad], ``friction`` (Coulomb) [N m], each one number for every
    joint, a list with one per joint (the free-flyer excluded), or ``model``: the robot file's
    values (URDF ``<dynamics damping friction>``, MJCF ``damping frictionloss armature``);
    ``coulomb_speed`` [rad/s] (default 0.02): the tanh smoothing of the Coulomb friction."""
    from physid.files.io import config_errors_name

    if path is None:
        return None
    with config_errors_name(path):
        return _joint_terms(path, model)


def _joint_terms(path: Path, model):  # noqa: ANN001, ANN202
    import numpy as np

    from physid.errors import InputError
    from physid.files.io import config_number, config_section, read_yaml
    from physid.oe.dynamics import JointTerms
    from physid.oe.measurements import base_dofs

    raw = config_section(read_yaml(path, "config file"), {"noise", "contacts", "imu", "joints"}, "")
    if raw.get("joints") is None:
        return None
    section = config_section(raw["joints"], set(JOINT_KEYS), "joints")
    bv = base_dofs(model)[1]
    n = model.nv - bv
    from_model = {"armature": model.armature, "damping": model.damping, "friction": model.friction}
    values = {}
    for key, file_values in from_model.items():
        value = section.get(key, 0.0)
        if value == "model":
            values[key] = np.asarray(file_values, float).copy()
            continue
        items = value if isinstance(value, list) else [value] * n
        if len(items) != n:
            raise InputError(f"joints.{key}: expected one number or {n} (one per joint)")
        numbers = [config_number(v, f"joints.{key}", positive=False, low=0.0) for v in items]
        values[key] = np.r_[np.zeros(bv), numbers]
    speed = config_number(section.get("coulomb_speed", 0.02), "joints.coulomb_speed")
    values["armature"][:bv] = values["damping"][:bv] = values["friction"][:bv] = 0.0
    return JointTerms(values["armature"], values["damping"], values["friction"], float(speed))


def _oe_config(path: Path) -> tuple[dict, float, dict, float]:
    import numpy as np

    from physid.errors import InputError
    from physid.files.io import config_number, config_section, read_yaml

    raw = config_section(
        read_yaml(path, "config file"), {"noise", "contacts", "imu", "joints"}, str(path)
    )
    section = config_section(raw.get("noise"), set(NOISE_KEYS), "noise")
    noise = {}
    for key, value in section.items():
        if key in PER_DOF_KEYS and isinstance(value, list):
            items = [config_number(v, f"noise.{key}[{i}]") for i, v in enumerate(value)]
            noise[key] = np.array(items, dtype=float)
        else:
            noise[key] = config_number(value, f"noise.{key}")
    contacts = config_section(raw.get("contacts"), {"damping", "radius"}, "contacts")
    damping = config_number(contacts.get("damping", 0.0), "contacts.damping", positive=False, low=0)
    radius = config_number(
        contacts.get("radius", 0.0), "contacts.radius", positive=False, low=0, high=1.0
    )
    imu = config_section(raw.get("imu"), {"frame", "estimate_bias"}, "imu")
    frame, estimate_bias = imu.get("frame"), imu.get("estimate_bias", True)
    if frame is not None and not isinstance(frame, str):
        raise InputError(f"imu.frame must be a frame name, got {frame!r}", source=str(path))
    if not isinstance(estimate_bias, bool):
        raise InputError(
            f"imu.estimate_bias must be true or false, got {estimate_bias!r}", source=str(path)
        )
    return noise, float(damping), {"frame": frame, "estimate_bias": estimate_bias}, float(radius)


@click.command("oe")
@robot_file_option(
    "Robot URDF or MJCF (MuJoCo XML; the kind is read from the file). Its inertias are "
    "the initial guess and the prior.",
    must_exist=False,
)
@click.option(
    "--floating",
    is_flag=True,
    help="Add a free-flyer root joint 'root_joint' (legged robots, drones): reads the base, "
    "IMU and contact_<frame> columns (docs/oe.md); the commands drive the other joints.",
)
@click.option(
    "--data",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Trajectory (CSV/.npz/.parquet), one node per row on a uniform time grid (a "
    "jittery one is resampled at its median step, with a note): t, q_<joint> and "
    "tau_<joint> for every joint, optional dq_<joint>; with --floating also base_q*, "
    "gyro_*, optional base_v*, acc_* (raw accelerometer), base_x/y/z and contact_<frame>; "
    "optional force/torque sensors ft_<frame>_fx/fy/fz/tx/ty/tz (wrench through the frame's "
    "joint, in the frame). See docs/oe.md.",
)
@click.option(
    "--body",
    "bodies",
    multiple=True,
    required=True,
    metavar="JOINT",
    help="Joint whose body's 10 inertial parameters are estimated; repeat for more.",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="YAML with a 'noise' mapping of standard deviations (SI): encoder [rad], "
    "joint_velocity [rad/s], orientation [rad], gyro [rad/s], base_velocity [m/s], "
    "process_q, process_v (per node; one number or a list of nv, the base's 6 first), "
    "arrival_q, arrival_v, foot_velocity [m/s] (no-slip observation of the feet in "
    "contact, e.g. 0.03; default: none), force [N] and torque [N m] (force/torque "
    "sensors, per axis; default 0.1, 0.005), accelerometer [m/s^2] (acc_* columns, default "
    "0.1); a 'contacts' mapping with damping [1/s] "
    "(Baumgarte velocity gain of the contacts, default 0 = paper B eq. 3) and radius [m] "
    "(round feet centred on the contact frames: each node's contact point is the sphere's "
    "lowest point; default 0); and an 'imu' "
    "mapping with frame (the accelerometer's frame on the base, default the base) and "
    "estimate_bias (default true: the accelerometer's constant bias is estimated by "
    "alternating rounds, reported in result.json); a 'joints' mapping with armature "
    "[kg m^2], damping (viscous) [N m s/rad], friction (Coulomb) [N m] (one number, a list "
    "per joint, or 'model' for the robot file's values) and coulomb_speed [rad/s] (default "
    "0.02): the joint terms of the dynamics (default none). "
    "See docs/oe.md.",
)
@click.option(
    "--chart",
    type=click.Choice(["exp_eig", "log_cholesky"]),
    default="exp_eig",
    show_default=True,
    help="How each estimated body's 10 inertial parameters are coordinatised while solving; "
    "every value of either chart is a physically consistent body, so the result is the same "
    "when both converge. exp_eig: log mass, log principal second moments [log kg m^2] and the "
    "principal axes as a rotation vector [rad] (paper B eqs. 11-15); converged on 30/30 test "
    "starts against 26/30, in up to 2x fewer iterations (docs/oe.md, Fig. 3). log_cholesky "
    "(eqs. 9-10): no rotation coordinates; try it when exp_eig stops on a numerical failure.",
)
@click.option(
    "--rollout",
    type=click.Choice(["multiple", "feasible", "single"]),
    default="multiple",
    show_default=True,
    help="How the trajectory follows each parameter step. multiple: every node state moves "
    "with the linear step and the gaps between nodes close over the iterations (eq. 34); "
    "fewest iterations on floating bases. feasible: the gaps are closed by a partial "
    "nonlinear rollout (eq. 33); converged on 100/100 random starts 70 % off on every test "
    "robot (multiple: 98-100/100), the one to try when multiple stalls. single: every iterate "
    "is a full open-loop simulation; only for a good initial model and an open-loop stable "
    "system (0/100 on the arm and the Go1; benchmarks/oe_table1.py).",
)
@click.option(
    "--no-nullspace",
    is_flag=True,
    help="Solve for the parameter step by the plain Schur complement (eqs. 29-30) instead of "
    "the nullspace step (eq. 31, default). The plain step fails when the parameters have a "
    "direction the cost does not see, which the exp_eig chart always has at a symmetric body "
    "(two equal principal moments: a cylinder, a sphere; benchmarks/oe_borinot_sphere.py). "
    "For comparisons only: the default step equals it whenever it succeeds.",
)
@click.option(
    "--prior-std",
    type=float,
    default=None,
    callback=number_in(0.0, 1e6, low_open=True),
    help="Prior around the URDF's inertias: standard deviation of every chart coordinate "
    "(default: none, as in paper B VI-A). The log coordinates (mass, second moments) take it "
    "as a relative spread (0.3 ~ +-30 %), the first moments m c as kg m, the exp_eig axes "
    "as rad. Give one (e.g. 0.3-1) when the motion cannot determine every body parameter "
    "(a body that barely moves or turns; large reported std): the prior then decides those "
    "directions instead of the noise. It biases the estimate toward the URDF.",
)
@click.option(
    "--max-iterations",
    type=click.IntRange(1, 10_000),
    default=100,
    show_default=True,
    help="Iteration limit (1-10000); the status says 'max_iterations' when it is reached. The "
    "solve also stops at a wall-time budget of 20 s + 1 ms per node and iteration (status "
    "'stopped by the time budget ...').",
)
@click.option(
    "--time-budget",
    type=float,
    default=None,
    callback=number_in(0.0, 1e7, low_open=True),
    help="Wall-time budget of the solve [s] (all accelerometer-bias rounds together); default "
    "20 s + 1 ms per node and iteration. A stopped solve writes its best iterate and says why "
    "in result.json's status. Solves longer than 5 s print a progress line on stderr at most "
    "every 5 s (iteration, cost, gaps, step).",
)
@click.option(
    "--out",
    type=OUTPUT_DIR,
    required=True,
    help="Output folder: params.json, result.json (with force/torque sensors: wrench_fit, the "
    "RMS of measured minus estimated wrench per axis; with acc_* columns: "
    "accelerometer_bias), trajectory.csv, convergence.png, "
    "report.png (equivalent ellipsoid of each estimated body over the iterations; with "
    "--floating the base pose error; with contact columns the contact forces) and "
    "contact_forces.csv (t, fx/fy/fz_<frame> [N], world frame; when contacts are given); "
    "written to a temporary folder, then renamed.",
)
def oe_command(
    urdf,
    floating,
    data,
    bodies,
    config,
    chart,
    rollout,
    no_nullspace,
    prior_std,  # noqa: ANN001, ANN201, PLR0913
    max_iterations,
    time_budget,
    out,
):
    """Estimate the inertia of chosen bodies and the trajectory by MAP optimal estimation
    (paper B eq. 16) from encoders, IMU, torque commands and a known contact sequence."""
    import dataclasses

    import numpy as np

    from physid.errors import InputError
    from physid.files.io import (
        atomic_output_dir,
        table_csv_text,
        write_json_atomic,
        write_text_atomic,
    )
    from physid.oe.build import initial_guess, make_problem
    from physid.oe.imu_bias import solve_with_accelerometer_bias
    from physid.oe.measurements import NoiseStd
    from physid.oe.plot import plot_convergence
    from physid.oe.recording import params_document, read_recording, trajectory_columns
    from physid.oe.report import wrench_fit
    from physid.oe.solver import OEOptions, solve
    from physid.oe.wrench import unsupported_sensor
    from physid.robot.model import load_robot_file

    model = load_robot_file(urdf, floating_base=floating)
    noise, damping, imu, radius = read_oe_config(config)
    joints = read_joint_terms(config, model)
    recording = read_recording(str(data), model)
    notes = Notes()
    for name in recording.unknown_columns:
        notes.add(f"{data}: ignoring unknown column {name}")
    if recording.regridded_from is not None:
        notes.add(
            f"{data}: time stamps jitter by more than 1 % of the median step: "
            f"{recording.regridded_from} rows resampled to {recording.t.size} nodes every "
            f"{recording.dt:.6g} s (commands and contact flags held, the rest interpolated)"
        )
    equations = (recording.t.size - 1) * (model.nv - 6 * floating)
    if equations < 10 * len(bodies):
        raise InputError(
            f"{recording.t.size} nodes give {equations} joint dynamics equations for "
            f"{10 * len(bodies)} inertial parameters ({len(bodies)} bodies): record longer",
            source=str(data),
        )
    meas = recording.measurements
    if meas.wrench:  # a sensor physid cannot model (e.g. a foot's) is reported and not used
        usable = {}
        for frame, samples in meas.wrench.items():
            reason = unsupported_sensor(model, frame, recording.contact_frames)
            if reason is None:
                usable[frame] = samples
            else:
                notes.add(f"{data}: not using {reason}")
        meas = dataclasses.replace(meas, wrench=usable or None)
        recording = dataclasses.replace(recording, measurements=meas)
    if floating and meas.base_velocity is None and meas.accelerometer is None:
        notes.add(
            f"{data}: no base_v* or acc_* columns: the base's linear velocity is observed "
            "only through the dynamics and the legs (consider noise.foot_velocity)"
        )
    problem = make_problem(
        model,
        list(bodies),
        chart,
        recording.dt,
        recording.u,
        recording.measurements,
        NoiseStd(**noise),
        theta_prior_std=prior_std,
        x0_prior=recording.x0_prior,
        contact_frames=recording.contact_frames,
        contact_flags=recording.contact_flags,
        contact_damping=damping,
        imu_frame=imu["frame"],
        joints=joints,
        contact_radius=radius,
    )
    xs, ws = initial_guess(problem)
    options = OEOptions(
        rollout=rollout,
        nullspace=not no_nullspace,
        max_iterations=max_iterations,
        time_budget_s=time_budget,
    )
    progress = ProgressLines()
    theta0 = problem.dynamics.nominal_theta()
    bias_rounds = None
    if recording.measurements.accelerometer is not None and imu["estimate_bias"]:
        bias_rounds = solve_with_accelerometer_bias(
            problem, xs, ws, theta0, options, progress=progress
        )
        result = bias_rounds.result
    else:
        result = solve(problem, xs, ws, theta0, options, progress=progress)
    provenance = {
        "urdf": str(urdf),
        "data": str(data),
        "dt": recording.dt,
        "regridded_from_rows": recording.regridded_from,
        "floating_base": bool(floating),
        "contact_frames": list(recording.contact_frames),
        "chart": chart,
        "rollout": rollout,
        "noise": NoiseStd(**noise).__dict__,
        "contact_damping": damping,
        "contact_radius": radius,
        "imu_frame": imu["frame"],
        "joints": None
        if joints is None
        else {
            "armature": joints.armature.tolist(),
            "damping": joints.viscous.tolist(),
            "friction": joints.coulomb.tolist(),
            "coulomb_speed": joints.coulomb_speed,
        },
        "accelerometer": recording.measurements.accelerometer is not None,
    }
    payload = result.to_json_dict()
    payload["inputs"] = provenance | {"ignored_columns": list(recording.unknown_columns)}
    if bias_rounds is not None:
        payload["accelerometer_bias"] = {
            "estimate": list(bias_rounds.bias_history[-1]),
            "history": [list(b) for b in bias_rounds.bias_history],
            "converged": bias_rounds.converged,
            "iterations_all_rounds": bias_rounds.iterations,
        }
    if problem.wrench_frames and np.all(np.isfinite(result.xs)):
        payload["wrench_fit"] = wrench_fit(problem, result.xs, result.ws, result.theta)
    with atomic_output_dir(out) as staging:
        write_json_atomic(staging / "params.json", params_document(model, result, provenance))
        write_json_atomic(staging / "result.json", payload)
        write_text_atomic(
            staging / "trajectory.csv",
            table_csv_text(trajectory_columns(model, recording.t, result)),
        )
        plot_convergence(result, staging / "convergence.png")
        write_report(staging, model, recording, problem, result)
    notes.echo()
    if result.chi2_reduced > CHI2_WARNING:
        click.echo(
            f"physid: warning: the noise model does not fit the data (reduced chi-square "
            f"{result.chi2_reduced:.3g}: residuals about {np.sqrt(result.chi2_reduced):.2g}x "
            "the standard deviations given); the reported standard deviations are too small "
            "and the estimate may be biased: check the contact flags, the noise config and "
            "the commands (docs/oe.md, 'Checking the fit')",
            err=True,
        )
    masses = ", ".join(f"{k}: {v['mass']:.4g} kg" for k, v in result.body_summary().items())
    click.echo(
        f"{masses}; status: {result.status} ({result.iterations} iterations, "
        f"{result.solve_time:.1f} s); wrote {out}"
    )


class ProgressLines:
    """The solver's progress lines on stderr, for long solves only: none in the first
    ``after_s`` seconds, then at most one every ``every_s`` seconds (a stop line always, once
    any line was written), so that a user can tell a slow solve from a stuck one."""

    def __init__(self, after_s: float = 5.0, every_s: float = 5.0) -> None:
        import time

        self.clock = time.monotonic
        self.start, self.after_s, self.every_s = self.clock(), after_s, every_s
        self.last = -float("inf")

    def __call__(self, line: str) -> None:
        now = self.clock()
        stop = line.startswith("oe: stopped")
        if now - self.start < self.after_s or (now - self.last < self.every_s and not stop):
            return
        self.last = now
        click.echo(line, err=True)


def write_report(staging: Path, model, recording, problem, result) -> None:  # noqa: ANN001
    """``report.png`` and, with a contact sequence, ``contact_forces.csv`` into ``staging``.

    The base position reference is the ``base_x/y/z`` columns when the file has them."""
    import numpy as np

    from physid.files.io import table_csv_text, write_text_atomic
    from physid.oe.measurements import base_dofs
    from physid.oe.plot import plot_report
    from physid.oe.report import base_pose_errors, contact_force_columns, contact_forces

    pose = forces = None
    finite = bool(np.all(np.isfinite(result.xs)) and np.all(np.isfinite(result.theta)))
    if base_dofs(model)[1] and finite:  # a diverged solve: ellipsoids only
        orientation, position = base_pose_errors(
            result.xs, recording.measurements.base_quat, recording.base_position
        )
        pose = {"orientation": orientation, "position": position, "estimate": result.xs[:, :3]}
    if problem.contacts is not None and finite:
        frames = problem.contacts.frames
        forces = (frames, contact_forces(problem, result.xs, result.theta))
        columns = contact_force_columns(recording.t, frames, forces[1])
        write_text_atomic(staging / "contact_forces.csv", table_csv_text(columns))
    plot_report(result, staging / "report.png", recording.t, pose, forces)


def register(group: click.Group) -> None:
    """Add this module's commands to the physid group."""
    group.add_command(oe_command)
