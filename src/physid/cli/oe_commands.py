"""CLI command ``physid oe`` (paper B): optimal estimation of chosen bodies' inertias.

Heavy imports (Pinocchio, Matplotlib) happen inside the command so ``--help`` stays fast.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click

from physid.api.oe_run import MAX_ITERATIONS, NUMBERS
from physid.cli.options import (
    DATA_SOURCE,
    OUTPUT_DIR,
    imu_topic_option,
    log_options,
    number_in,
    robot_file_option,
    wrench_topic_option,
)
from physid.cli.verdict import codes_hint, print_verdict, verbose_option


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
    "fitted to the recording's rolling, 0 when it cannot tell) and compliance ('estimate', "
    "the default: the data choose rigid or soft feet, a soft foot's compliance and floor "
    "spring estimated with the bodies; 0: rigid feet, paper B), contact_change_v and "
    "contact_change_window under 'noise' (the process_v floor near contact flag changes; "
    "default: chosen from the data, 0: none); and an 'imu' "
    "mapping with frame (the accelerometer's frame on the base, default the base) and "
    "estimate_bias (default true: the accelerometer's constant bias is estimated by "
    "alternating rounds, reported in result.json); a 'joints' mapping with armature "
    "[kg m^2], damping (viscous) [N m s/rad], friction (Coulomb) [N m] (one number, a list "
    "per joint, or 'model' for the robot file's values) and coulomb_speed [rad/s] (one "
    "width for every joint and node; default 0.1, widened to half the change on the 2 nodes "
    "either side of each sample pair across which a joint's recorded velocity jumps through "
    "zero or starts from or stops to rest, and to each joint's widest within 2 nodes of a "
    "contact flag change): the joint terms of the dynamics (default: an MJCF's own "
    "armature, damping and frictionloss; for any other robot file all three estimated with "
    "the bodies, from its declared values as priors), with "
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
    type=click.Choice(["multiple", "feasible", "single", "closed"]),
    default="multiple",
    show_default=True,
    help="How the trajectory follows each parameter step. multiple: every node state moves "
    "with the linear step and the gaps between nodes close over the iterations (eq. 34); "
    "fewest iterations on floating bases. feasible: the gaps are closed by a partial "
    "nonlinear rollout (eq. 33); converged on 100/100 random starts 70 % off on every test "
    "robot (multiple: 98-100/100), the one to try when multiple stalls. single: every iterate "
    "is a full open-loop simulation; only for a good initial model and an open-loop stable "
    "system (it failed every random start on the test arm and quadruped: docs/oe.md). When "
    "the open-loop rollout of the guess diverges, it stops at once with a numerical_failure "
    "status and writes the guess. closed: the states move with the linear step as in multiple, "
    "and the process noise is always the one that closes every gap, so the line search judges "
    "the cost itself with no penalty on gaps (docs/oe.md, Tenth round).",
)
@click.option(
    "--no-nullspace",
    is_flag=True,
    help="Solve for the parameter step by the plain Schur complement (eqs. 29-30) instead of "
    "the nullspace step (eq. 31, default). The plain step fails when the parameters have a "
    "direction the cost does not see, which the exp_eig chart always has at a symmetric body "
    "(two equal principal moments: a cylinder, a sphere; docs/oe.md). "
    "For comparisons only: the default step equals it whenever it succeeds.",
)
@click.option(
    "--prior-std",
    type=float,
    default=None,
    callback=number_in(*NUMBERS["prior_std"]),
    help="Prior around the URDF's inertias: standard deviation of every chart coordinate "
    "(default: none on masses and CoMs, as in paper B VI-A; wide ones on each body's shape: "
    "log-normal, std 3, on its principal second moments, 1 rad on its principal axes). The "
    "log coordinates (mass, second moments) take it "
    "as a relative spread (0.3 ~ +-30 %), the first moments m c as kg m, the exp_eig axes "
    "as rad. Give one (e.g. 0.3-1) when the motion cannot determine every body parameter "
    "(a body that barely moves or turns; large reported std): the prior then decides those "
    "directions instead of the noise. It biases the estimate toward the URDF.",
)
@click.option(
    "--max-iterations",
    type=int,
    callback=number_in(*NUMBERS["max_iterations"]),
    default=MAX_ITERATIONS,
    show_default=True,
    help="Gauss-Newton iterations of the whole solve, every accelerometer-bias round included "
    "(1-10000): the budget that decides, so the same data give the same result on any machine. "
    "When it is spent the status is not_converged and the best iterate is written.",
)
@click.option(
    "--time-budget",
    type=float,
    default=None,
    callback=number_in(*NUMBERS["time_budget"]),
    help="Wall-clock safety stop of the solve [s]; default 10 min + 50 ms per node and "
    "iteration, far above what the iterations take. When it ends the solve the status is "
    "time_limit (the result then depends on the machine's speed) and the best iterate is "
    "written. Solves longer than 5 s print a progress line on stderr at most every 5 s "
    "(iteration, cost, gaps, step).",
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
@verbose_option
def oe_command(  # noqa: PLR0913
    urdf,  # noqa: ANN001
    floating,  # noqa: ANN001
    data,  # noqa: ANN001
    bodies,  # noqa: ANN001
    config,  # noqa: ANN001
    chart,  # noqa: ANN001
    rollout,  # noqa: ANN001
    no_nullspace,  # noqa: ANN001
    prior_std,  # noqa: ANN001
    max_iterations,  # noqa: ANN001
    time_budget,  # noqa: ANN001
    out,  # noqa: ANN001
    topic,  # noqa: ANN001
    episodes,  # noqa: ANN001
    imu_topic,  # noqa: ANN001
    wrench_topics,  # noqa: ANN001
    verbose,  # noqa: ANN001
) -> None:
    """Estimate the inertia of chosen bodies and the trajectory by MAP optimal estimation
    (paper B eq. 16) from encoders, IMU, torque commands and a known contact sequence.

    Ends with the status and its verdict, each estimated body's mass, and the findings that
    should change what you do (all of them with --verbose; every one is in result.json).
    Exit codes: 0 ok (converged); 2 bad input (nothing written); 3 written, but the status is
    not ok (not_converged, time_limit, stalled or numerical_failure: the estimate is the best
    iterate, not a result).
    """
    from physid.api.oe_run import oe_estimate
    from physid.status import Status

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
    for note in run.notes:  # the recordings layer's readings
        click.echo(f"physid: note: {note}", err=True)
    result = run.raw
    numbers = [_body_line(name, body) for name, body in result.body_summary().items()]
    details = [
        f"cost {result.cost:.6g}, gaps {result.infeasibility:.3g}, reduced chi-square "
        f"{result.chi2_reduced:.3g}, std inflation x{result.std_inflation**0.5:.3g}, "
        f"{result.solve_time:.1f} s"
    ]
    details += [_joint_line(joint, terms) for joint, terms in result.joints.items()]
    print_verdict(
        run.status, result.message, numbers, run.findings, verbose=verbose, details=details
    )
    click.echo(codes_hint(str(Path(out) / "result.json")))
    sys.exit(Status(run.status).exit_code)


def _body_line(name: str, body: dict) -> str:
    """``<joint>: <mass> +- <std> kg, com [x, y, z] m``."""
    std = body["std"]["mass"]
    spread = "" if std is None or not math.isfinite(std) else f" +- {std:.2g}"
    com = ", ".join(f"{c:.4g}" for c in body["com"])
    return f"{name}: {body['mass']:.4g}{spread} kg, com [{com}] m"


def _joint_line(joint: str, terms: dict) -> str:
    """One estimated joint's terms with their std and source."""
    from physid.oe.model.joint_estimate import KINDS

    parts = [
        f"{kind} {terms[kind]:.3g} +- {terms['std'][kind]:.2g} ({terms['source'][kind]})"
        for kind in KINDS
        if kind in terms
    ]
    return f"{joint}: {', '.join(parts)}"


def _one_episode(episodes: tuple[int, ...]) -> int | None:
    if len(episodes) > 1:
        raise click.BadParameter(
            "physid oe reads one recording: give one --episode", param_hint="--episode"
        )
    return episodes[0] if episodes else None


def register(group: click.Group) -> None:
    """Add this module's commands to the physid group."""
    group.add_command(oe_command)


class ProgressLines:
    """The solver's progress lines on stderr, for long solves only: none in the first
    ``after_s`` seconds, then at most one every ``every_s`` seconds, so that a user can tell a
    slow solve from a stuck one (the verdict line ends the run either way)."""

    def __init__(self, after_s: float = 5.0, every_s: float = 5.0) -> None:
        import time

        self.clock = time.monotonic
        self.start, self.after_s, self.every_s = self.clock(), after_s, every_s
        self.last = -float("inf")

    def __call__(self, line: str) -> None:
        now = self.clock()
        if now - self.start < self.after_s or now - self.last < self.every_s:
            return
        self.last = now
        click.echo(line, err=True)
