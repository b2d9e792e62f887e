"""API face of ``physid oe`` (paper B): MAP optimal estimation of chosen bodies' inertias and
the trajectory from encoders, IMU, torque commands and a known contact sequence."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from physid.api.results import Named, Outcome, Parameter
from physid.errors import Bound, check_numbers
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.api.recording import PathLike
    from physid.oe.model.charts import Chart
    from physid.oe.solving.rollouts import Rollout

# The numbers ``physid oe`` accepts: its option callbacks (physid.cli.oe_commands) and
# oe_estimate check this one table through physid.errors.in_range (the same one-line error)
NUMBERS: dict[str, Bound] = {
    "prior_std": Bound(0.0, 1e6, True),
    "max_iterations": Bound(1, 10_000, integer=True),
    "time_budget": Bound(0.0, 1e7, True),  # [s]
}
# Gauss-Newton iterations of a whole solve, every accelerometer-bias round included: room for
# the linear end game of a long floating-base log with its joint terms estimated
MAX_ITERATIONS = 300
AUTO = "auto"  # imu_topic: the bag's only sensor_msgs/Imu topic, for a floating base


@one_blas_thread
def oe_estimate(
    urdf: PathLike,
    data: PathLike,
    bodies: str | Sequence[str],
    *,
    floating: bool = False,
    config: PathLike | None = None,
    chart: Chart | str = "exp_eig",
    rollout: Rollout | str = "multiple",
    nullspace: bool = True,
    prior_std: float | None = None,
    max_iterations: int = MAX_ITERATIONS,
    time_budget: float | None = None,
    progress: Callable[[str], None] | None = None,
    topic: str | None = None,
    episode: int | None = None,
    imu_topic: str | None = AUTO,
    wrench_topics: Sequence[str] = (),
) -> Outcome:
    """Estimate the inertia of the bodies moved by the joints ``bodies`` and the trajectory by
    MAP optimal estimation (``physid oe``, paper B eq. 16).

    Args:
        urdf: the robot file, URDF or MJCF; its inertias are the initial guess and the prior.
        data: the recording: a CSV/NPZ/Parquet file (docs/oe.md), a ROS 2 bag (folder,
            ``.mcap`` or ``.db3``) or a LeRobot dataset folder (:mod:`physid.recordings.logs`).
        bodies: the joint (or joints) whose moved body's 10 inertial parameters are estimated.
        floating: add a free-flyer root joint ``root_joint`` (legged robots, drones) and read
            the base, IMU and contact columns.
        config: the ``--config`` YAML (noise, contacts, imu, joints, angle_unit; docs/oe.md).
            Without a ``joints`` entry the joint terms are the MJCF's own, or for any other
            robot file estimated with the bodies (:mod:`physid.oe.data.joints`).
        chart: the inertial chart, ``exp_eig`` (eqs. 11-15) or ``log_cholesky`` (eqs. 9-10).
        rollout: ``multiple`` (eq. 34), ``feasible`` (eq. 33), ``single`` or ``closed``
            (multiple shooting whose gaps the process noise takes up after every step).
        nullspace: the nullspace parameter step (eq. 31); False: the plain Schur complement.
        prior_std: the std of the prior on every chart coordinate about the robot file's
            inertias (None: none on masses and CoMs, as in paper B VI-A; with exp_eig wide ones
            on each body's shape, log-normal on the principal second moments and about the
            robot file's principal axes: :data:`physid.oe.model.dynamics.SECOND_MOMENT_LOG_STD`,
            :data:`~physid.oe.model.dynamics.PRINCIPAL_AXES_STD`).
        max_iterations: the Gauss-Newton iterations of the whole solve, all accelerometer-bias
            rounds together: the budget that decides (status ``not_converged`` when spent).
        time_budget: the wall-clock safety stop [s] (None: 10 min + 50 ms per node and
            iteration, far above what the iterations take); status ``time_limit`` when it ends
            the solve, whose result then depends on the machine's speed.
        progress: called with the solver's progress lines (iteration, cost, gaps, step).
        topic: a bag's sensor_msgs/JointState topic (default: its only one).
        episode: the LeRobot episode to read (default: the dataset's only one).
        imu_topic: a bag's sensor_msgs/Imu topic; ``"auto"``: its only one, for a floating
            base; None: none.
        wrench_topics: a bag's geometry_msgs/WrenchStamped topics (``ft_<frame_id>_*``).

    Returns:
        An :class:`~physid.api.results.Outcome`: ``status`` (ok, not_converged, time_limit,
        stalled, numerical_failure), ``message``, ``findings`` (:mod:`physid.oe.codes`),
        ``parameters`` (each body's mass, com, inertia and each estimated joint term, with
        std and source), ``raw`` the :class:`physid.oe.outputs.result.OEResult`, ``notes``
        the recordings layer's readings; ``save(out)`` writes params.json, result.json,
        trajectory.csv, convergence.png, report.png and, with contacts, contact_forces.csv.
    """
    from physid.oe.data.inputs import read_inputs
    from physid.oe.model.charts import Chart
    from physid.oe.solving.rollouts import Rollout
    from physid.recordings.logs import check_episodes

    numbers = {"prior_std": prior_std, "max_iterations": max_iterations}
    check_numbers(NUMBERS, numbers | {"time_budget": time_budget})  # before reading anything
    chart, rollout = _choice(Chart, chart, "chart"), _choice(Rollout, rollout, "rollout")
    episodes = check_episodes(() if episode is None else (episode,), "episode")
    bodies = [bodies] if isinstance(bodies, str) else list(bodies)
    logs = {
        "topic": topic,
        "episode": episodes[0] if episodes else None,
        "imu_topic": imu_topic,
        "wrench_topics": wrench_topics,
    }
    inputs = read_inputs(urdf, Path(data), bodies, floating, config, logs)
    problem, xs, ws, soft, radius = _problem(inputs, urdf, bodies, chart, prior_std)
    result, bias_rounds = _solve(
        inputs, problem, xs, ws, rollout, nullspace, max_iterations, time_budget, progress
    )
    run = {
        "urdf": urdf,
        "data": data,
        "floating_base": floating,
        "chart": chart,
        "rollout": rollout,
        "contact_radius": radius,
    }
    return _outcome(inputs, problem, result, bias_rounds, soft, run)


def _choice(kind: type, value: object, name: str):  # noqa: ANN202
    """``value`` as the StrEnum ``kind``, or the one-line error naming the parameter."""
    from physid.errors import InputError

    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(str(k) for k in kind)
        raise InputError(f"{name}: {value!r} is not one of {choices}") from None


def _problem(inputs, urdf, bodies, chart, prior_std) -> tuple:  # noqa: ANN001
    """``(problem, xs, ws, soft, radius)``: the eq. 16 problem of the run with the soft-contact
    settings chosen (findings added to ``inputs``) and its initial guess."""
    from physid.oe.model.dynamics import PRINCIPAL_AXES_STD, SECOND_MOMENT_LOG_STD
    from physid.oe.model.measurements import NoiseStd
    from physid.oe.soft.choose import choose_floor, choose_soft, floor_finding, soft_contact_inputs
    from physid.oe.solving.build import initial_guess, make_problem

    model, recording, config = inputs.model, inputs.recording, inputs.config
    noise, radius, soft, found = soft_contact_inputs(
        config.noise, config.radius, urdf, model, recording
    )
    inputs.findings.extend(found)

    def build(soft_contact):  # noqa: ANN001, ANN202
        return make_problem(
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
            contact_damping=config.contact_damping,
            soft_contact=soft_contact,
            imu_frame=config.imu["frame"],
            joints=config.joints.joints,
            contact_radius=radius,
            joint_estimate=config.joints.estimate,
            second_moment_std=SECOND_MOMENT_LOG_STD,
            axes_std=PRINCIPAL_AXES_STD,
        )

    problem = build(None)  # rigid feet
    xs, ws = initial_guess(problem)
    if config.compliance is None and problem.contacts is not None:  # the data choose the feet
        soft_problem = build(_soft_contact(model))
        problem, soft["feet"] = choose_soft(problem, soft_problem, xs)
    if "contact_change" not in soft and problem.contacts is not None:
        given_window = "contact_change_window" in noise
        problem, soft["contact_change"] = choose_floor(problem, xs, given_window)
        inputs.findings.append(floor_finding(soft["contact_change"]))
    return problem, xs, ws, soft, radius


def _soft_contact(model):  # noqa: ANN001, ANN202
    """Soft feet to estimate (``contacts.compliance: estimate``), started at
    :meth:`~physid.oe.model.compliance.SoftContact.estimated_for_mass` of the robot's mass;
    :func:`physid.oe.soft.choose.choose_soft` decides whether the run uses them."""
    import pinocchio as pin

    from physid.oe.model.compliance import SoftContact

    return SoftContact.estimated_for_mass(pin.computeTotalMass(model))


def _solve(
    inputs, problem, xs, ws, rollout, nullspace, max_iterations, time_budget, progress
) -> tuple:  # noqa: ANN001
    """``(result, bias_rounds)``: the solve, with the accelerometer-bias rounds when the log
    has acc_* columns and the config estimates the bias (None otherwise)."""
    import dataclasses
    import time

    from physid.oe.codes import BIAS_UNSETTLED
    from physid.oe.solving.imu_bias import solve_with_accelerometer_bias
    from physid.oe.solving.solver import OEOptions, solve
    from physid.status import Status

    options = OEOptions(
        rollout=str(rollout),
        nullspace=nullspace,
        max_iterations=max_iterations,
        time_budget_s=time_budget,
    )
    theta0 = problem.dynamics.nominal_theta()
    if (
        inputs.recording.measurements.accelerometer is None
        or not inputs.config.imu["estimate_bias"]
    ):
        return solve(problem, xs, ws, theta0, options, progress=progress), None
    started = time.perf_counter()
    rounds = solve_with_accelerometer_bias(problem, xs, ws, theta0, options, progress=progress)
    # every round's iterations and time, not the last round's
    result = dataclasses.replace(
        rounds.result, iterations=rounds.iterations, solve_time=time.perf_counter() - started
    )
    settled = rounds.converged or result.status is not Status.OK
    message = (
        f"{result.message}; {len(rounds.bias_history)} accelerometer-bias rounds, "
        f"{rounds.iterations} iterations in all"
    )
    if not settled and len(rounds.bias_history) > 1:
        last = np.subtract(rounds.bias_history[-1], rounds.bias_history[-2])
        inputs.findings.append(
            BIAS_UNSETTLED(
                f"the accelerometer bias still moved by {np.abs(last).max():.2g} m/s^2 in the last "
                f"of {len(rounds.bias_history) - 1} rounds",
                numbers={"last_step_m_s2": float(np.abs(last).max()), "tolerance_m_s2": 1e-3},
            )
        )
        result = dataclasses.replace(result, status=Status.NOT_CONVERGED)
    return dataclasses.replace(result, message=message), rounds


def _outcome(inputs, problem, result, bias_rounds, soft, run: dict) -> Outcome:  # noqa: ANN001
    """The Outcome: result.json, params.json, trajectory.csv and the figures to write."""
    from physid.files.io import table_csv_text, write_json_atomic, write_text_atomic
    from physid.findings import unique
    from physid.oe.outputs.document import provenance, result_document, result_findings
    from physid.oe.outputs.files import params_document, trajectory_columns
    from physid.oe.outputs.plot import plot_convergence
    from physid.oe.outputs.report import wrench_fit

    findings = unique([*inputs.findings, *result_findings(result, inputs.file_masses)])
    model, recording = inputs.model, inputs.recording
    used = provenance(inputs, problem, run)
    payload = result_document(
        result, used, recording.unknown_columns, soft, bias_rounds, list(findings)
    )
    if problem.wrench_frames and np.all(np.isfinite(result.xs)):
        payload["wrench_fit"] = wrench_fit(problem, result.xs, result.ws, result.theta)
    params = params_document(model, result, used)
    trajectory = table_csv_text(trajectory_columns(model, recording.t, result))

    def write(staging: Path) -> None:
        write_json_atomic(staging / "params.json", params)
        write_json_atomic(staging / "result.json", payload)
        write_text_atomic(staging / "trajectory.csv", trajectory)
        plot_convergence(result, staging / "convergence.png")
        _write_report(staging, model, recording, problem, result)

    summary = result.body_summary()
    masses = ", ".join(f"{k}: {v['mass']:.4g} kg" for k, v in summary.items())
    return Outcome(
        result.status,
        f"{masses}; {result.message}",
        _parameters(summary, result.joints),
        payload,
        result,
        write,
        notes=tuple(inputs.notes),
        findings=findings,
    )


def _parameters(summary: dict, joints: dict) -> Named:
    from physid.oe.model.joint_estimate import KINDS, UNITS

    found = {}
    for joint, body in summary.items():
        for key, unit in (("mass", "kg"), ("com", "m"), ("inertia", "kg m^2")):
            value, std = body[key], body["std"][key]
            if key != "mass":
                value, std = np.asarray(value, float), np.asarray(std, float)
            found[f"{joint}.{key}"] = Parameter(value, std, "data", unit)
    for joint, terms in joints.items():
        for kind in (k for k in KINDS if k in terms):
            std, source = terms["std"][kind], terms["source"][kind]
            found[f"{joint}.{kind}"] = Parameter(terms[kind], std, source, UNITS[kind])
    return Named(found)


def _write_report(staging: Path, model, recording, problem, result) -> None:  # noqa: ANN001
    """``report.png`` and, with a contact sequence, ``contact_forces.csv`` into ``staging``.

    The base position reference is the ``base_x/y/z`` columns when the file has them."""
    from physid.files.io import table_csv_text, write_text_atomic
    from physid.oe.model.measurements import base_dofs
    from physid.oe.outputs.plot import plot_report
    from physid.oe.outputs.report import base_pose_errors, contact_force_columns, contact_forces

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
