"""CLI command ``physid oe`` (paper B): optimal estimation of chosen bodies' inertias.

Heavy imports (Pinocchio, Matplotlib) happen inside the command so ``--help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from physid.api.oe_run import NUMBERS
from physid.cli.options import (
    DATA_SOURCE,
    OUTPUT_DIR,
    imu_topic_option,
    log_options,
    number_in,
    robot_file_option,
    wrench_topic_option,
)

NOT_CONVERGED_EXIT_CODE = 3  # outputs written, but the solve stopped before converging


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
    type=DATA_SOURCE,
    required=True,
    help="Trajectory (CSV/.npz/.parquet), one node per row on a uniform time grid (a "
    "jittery one is resampled at its median step, with a note): t, q_<joint> and "
    "tau_<joint> for every joint, optional dq_<joint>; with --floating also base_q*, "
    "gyro_*, optional base_v*, acc_* (raw accelerometer), base_x/y/z and contact_<frame>; "
    "optional force/torque sensors ft_<frame>_fx/fy/fz/tx/ty/tz (wrench through the frame's "
    "joint, in the frame). See docs/oe.md. A ROS 2 bag (folder, .mcap or .db3: JointState, "
    "with --floating its Imu topic, and --wrench-topic sensors) or one episode of a LeRobot "
    "dataset folder is read as well.",
)
@log_options
@imu_topic_option
@wrench_topic_option
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
    "lowest point; default: the robot file's collision spheres on the contact frames, else "
    "fitted to the recording's rolling, 0 when it cannot tell), contact_change_v and "
    "contact_change_window under 'noise' (the process_v floor near contact flag changes; "
    "default: chosen from the data, 0: none); and an 'imu' "
    "mapping with frame (the accelerometer's frame on the base, default the base) and "
    "estimate_bias (default true: the accelerometer's constant bias is estimated by "
    "alternating rounds, reported in result.json); a 'joints' mapping with armature "
    "[kg m^2], damping (viscous) [N m s/rad], friction (Coulomb) [N m] (one number, a list "
    "per joint, or 'model' for the robot file's values) and coulomb_speed [rad/s] (default "
    "0.02): the joint terms of the dynamics (default: none for a URDF, which is named in a "
    "note when it declares some; an MJCF's own armature, damping and frictionloss), with "
    "estimate ('all' or a list of armature, damping, friction: estimated with the bodies, "
    "reported under 'joints' in result.json and params.json) and prior_std (default 1: the "
    "log-normal prior's std about a value given; a value of 0 starts small under a wide "
    "prior, std 3 in log); angle_unit: radians (default) or degrees, the unit of the revolute "
    "joints' q_ and dq_ columns. See docs/oe.md.",
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
    "system (0/100 on the arm and the Go1; benchmarks/oe_table1.py). When the open-loop "
    "rollout of the guess diverges, it stops at once with a numerical_failure status and "
    "writes the guess.",
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
    callback=number_in(*NUMBERS["prior_std"]),
    help="Prior around the URDF's inertias: standard deviation of every chart coordinate "
    "(default: none, as in paper B VI-A). The log coordinates (mass, second moments) take it "
    "as a relative spread (0.3 ~ +-30 %), the first moments m c as kg m, the exp_eig axes "
    "as rad. Give one (e.g. 0.3-1) when the motion cannot determine every body parameter "
    "(a body that barely moves or turns; large reported std): the prior then decides those "
    "directions instead of the noise. It biases the estimate toward the URDF.",
)
@click.option(
    "--max-iterations",
    type=int,
    callback=number_in(*NUMBERS["max_iterations"]),
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
    callback=number_in(*NUMBERS["time_budget"]),
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
    topic,
    episodes,
    imu_topic,
    wrench_topics,
):
    """Estimate the inertia of chosen bodies and the trajectory by MAP optimal estimation
    (paper B eq. 16) from encoders, IMU, torque commands and a known contact sequence.

    Exit codes: 0 converged; 2 bad input (nothing written); 3 written, but the solve did not
    converge (max_iterations, time budget, a failed line search or a numerical failure: the
    status says which, and the estimate is its best iterate, not a result).
    """
    from physid.api.oe_run import oe_estimate

    run = oe_estimate(
        urdf,
        data,
        bodies,
        floating=floating,
        config=config,
        chart=chart,
        rollout=rollout,
        nullspace=not no_nullspace,
        prior_std=prior_std,
        max_iterations=max_iterations,
        time_budget=time_budget,
        progress=ProgressLines(),
        topic=topic,
        episode=_one_episode(episodes),
        imu_topic=imu_topic,
        wrench_topics=wrench_topics,
    )
    run.save(out)
    for note in run.notes:
        click.echo(f"physid: note: {note}", err=True)
    for warning in run.warnings:
        click.echo(f"physid: warning: {warning}", err=True)
    result = run.raw
    masses = ", ".join(f"{k}: {v['mass']:.4g} kg" for k, v in result.body_summary().items())
    click.echo(
        f"{masses}; status: {result.status} ({result.iterations} iterations, "
        f"{result.solve_time:.1f} s); wrote {out}"
    )
    if result.status != "converged":  # a numerical failure read as exit 0 with the URDF's mass
        sys.exit(NOT_CONVERGED_EXIT_CODE)


def _one_episode(episodes: tuple[int, ...]) -> int | None:
    if len(episodes) > 1:
        raise click.BadParameter("physid oe reads one recording: give one --episode",
                                 param_hint="--episode")  # fmt: skip
    return episodes[0] if episodes else None


def register(group: click.Group) -> None:
    """Add this module's commands to the physid group."""
    group.add_command(oe_command)


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
