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

# reduced chi-square above which the fit is reported as not matching the noise model: the
# 99.9 % quantile of chi2/dof is below 1.1 for the >= 1,000 residuals of any real recording,
# so 3 flags a noise model off by sqrt(3) = 1.7x or worse, not bad luck
CHI2_WARNING = 3.0
# The numbers ``physid oe`` accepts: its option callbacks (physid.cli.oe_commands) and
# oe_estimate check this one table through physid.errors.in_range (the same one-line error)
NUMBERS: dict[str, Bound] = {
    "prior_std": Bound(0.0, 1e6, True),
    "max_iterations": Bound(1, 10_000, integer=True),
    "time_budget": Bound(0.0, 1e7, True),  # [s]
}


@one_blas_thread
def oe_estimate(
    urdf: PathLike,
    data: PathLike,
    bodies: str | Sequence[str],
    *,
    floating: bool = False,
    config: PathLike | None = None,
    chart: str = "exp_eig",
    rollout: str = "multiple",
    nullspace: bool = True,
    prior_std: float | None = None,
    max_iterations: int = 100,
    time_budget: float | None = None,
    progress: Callable[[str], None] | None = None,
    topic: str | None = None,
    episode: int | None = None,
    imu_topic: str | None = "auto",
    wrench_topics: Sequence[str] = (),
) -> Outcome:
    """Estimate the inertia of the bodies moved by the joints ``bodies`` and the trajectory by
    MAP optimal estimation (``physid oe``, paper B eq. 16) from the recording ``data`` (a
    CSV/NPZ/Parquet file, docs/oe.md); ``floating`` adds a free-flyer root joint. ``save(out)``
    writes params.json, result.json, trajectory.csv, convergence.png, report.png and, with
    contacts, contact_forces.csv; ``to_dict()`` is result.json, ``raw`` the
    :class:`physid.oe.result.OEResult`, ``notes`` what the inputs left unused. ``time_budget``
    [s]: wall time of the whole solve (default 20 s + 1 ms per node and iteration); a stopped
    solve keeps its best iterate and says why in its status. ``progress``: called with the
    solver's progress lines (iteration, cost, gaps, step). ``data`` may also be a ROS 2 bag
    (folder, ``.mcap`` or ``.db3``) or a LeRobot dataset folder (:mod:`physid.recordings.logs`):
    ``topic`` names its JointState topic, ``episode`` one LeRobot episode, ``imu_topic`` its
    sensor_msgs/Imu topic (default ``"auto"``: the only one, for a floating base; None: none)
    and ``wrench_topics`` its geometry_msgs/WrenchStamped topics (``ft_<frame_id>_*``)."""
    import dataclasses
    import time

    from physid.errors import InputError
    from physid.files.config import unlogged_holds
    from physid.files.io import table_csv_text, write_json_atomic, write_text_atomic
    from physid.oe.accelerometer import check_specific_force
    from physid.oe.build import initial_guess, make_problem
    from physid.oe.config import (
        read_angle_unit,
        read_joint_estimate,
        read_joint_terms,
        read_oe_config,
    )
    from physid.oe.imu_bias import solve_with_accelerometer_bias
    from physid.oe.measurements import NoiseStd
    from physid.oe.plot import plot_convergence
    from physid.oe.recording import params_document, read_recording, trajectory_columns
    from physid.oe.report import wrench_fit
    from physid.oe.soft_contacts import choose_floor
    from physid.oe.solver import OEOptions, solve
    from physid.oe.wrench import unsupported_sensor
    from physid.recordings.logs import check_episodes, expand_logs
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import read_table
    from physid.robot.joint_locking import hold_at
    from physid.robot.mjcf import is_mjcf
    from physid.robot.model import load_robot_file, refuse_coupled_mjcf

    numbers = {"prior_std": prior_std, "max_iterations": max_iterations}
    check_numbers(NUMBERS, numbers | {"time_budget": time_budget})  # before reading anything
    episodes = check_episodes(() if episode is None else (episode,), "episode")
    data = Path(data)
    recordings = expand_logs([data], topic, episodes,
                             imu_topic=imu_topic if floating else None,
                             wrench_topics=wrench_topics)  # fmt: skip
    if len(recordings) != 1:
        raise InputError(f"physid oe reads one recording; this dataset holds {len(recordings)} "
                         "episodes: select one with --episode", source=str(data))  # fmt: skip
    source = recordings[0]
    label = source.source if isinstance(source, Table) else str(data)
    table = source if isinstance(source, Table) else read_table(str(data))
    bodies = [bodies] if isinstance(bodies, str) else list(bodies)
    whole = load_robot_file(urdf, floating_base=floating)  # its errors before the recording's
    held, held_note = unlogged_holds(urdf, table.columns)  # a gripper beside an arm's log
    model = hold_at(whole, held)
    refuse_coupled_mjcf(model, urdf)
    file_masses = {b: float(model.inertias[model.getJointId(b)].mass) for b in bodies
                   if model.existJointName(b)}  # fmt: skip
    notes: list[str] = list(held_note)
    noise, damping, imu, radius = read_oe_config(config)
    joints = read_joint_terms(config, model)
    joint_estimate = read_joint_estimate(config, model)
    if joints is None:
        joints, note = default_joint_terms(model, str(urdf), is_mjcf(urdf), floating)
        notes.extend(note)
    degrees = read_angle_unit(config) == "degrees"
    recording = read_recording(table, model, angles_in_degrees=degrees)
    notes.extend(f"{label}: {note}" for note in getattr(source, "notes", ()))
    if recording.unknown_columns:  # one note, not one per column (27 on an ANYmal's log)
        listed = recording.unknown_columns
        notes.append(f"{label}: ignoring unknown column{'s' if len(listed) > 1 else ''} "
                     f"{', '.join(listed)}")  # fmt: skip
    if recording.regridded_from is not None:
        notes.append(
            f"{label}: time stamps jitter by more than 1 % of the median step: "
            f"{recording.regridded_from} rows resampled to {recording.t.size} nodes every "
            f"{recording.dt:.6g} s (commands and contact flags held, the rest interpolated)"
        )
    equations = (recording.t.size - 1) * (model.nv - 6 * floating)
    if equations < 10 * len(bodies):
        raise InputError(
            f"{recording.t.size} nodes give {equations} joint dynamics equations for "
            f"{10 * len(bodies)} inertial parameters ({len(bodies)} bodies): record longer",
            source=label,
        )
    meas = recording.measurements
    if meas.accelerometer is not None and meas.base_quat is not None:
        check_specific_force(model, meas.base_quat, meas.accelerometer, imu["frame"], label)
    if meas.wrench:  # a sensor physid cannot model (e.g. a foot's) is reported and not used
        usable = {}
        for frame, samples in meas.wrench.items():
            reason = unsupported_sensor(model, frame, recording.contact_frames)
            if reason is None:
                usable[frame] = samples
            else:
                notes.append(f"{label}: not using {reason}")
        meas = dataclasses.replace(meas, wrench=usable or None)
        recording = dataclasses.replace(recording, measurements=meas)
    if floating and recording.contact_flags is None:
        notes.append(
            f"{label}: no contact_<frame> columns: the robot is modelled in free flight, no "
            "foot on the ground; a legged robot that stands or walks needs its feet's contact "
            "flags (docs/oe.md; an ANYmal's were left out: a 66,730 kg trunk)"
        )
    if floating and meas.base_velocity is None and meas.accelerometer is None:
        notes.append(
            f"{label}: no base_v* or acc_* columns: the base's linear velocity is observed "
            "only through the dynamics and the legs (consider noise.foot_velocity)"
        )
    noise, radius, soft = _soft_contact_inputs(noise, radius, urdf, model, recording, notes)
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
        joint_estimate=joint_estimate,
    )
    if joint_estimate is not None:
        notes.append(_estimate_note(joint_estimate, problem.dynamics))
    xs, ws = initial_guess(problem)
    if "contact_change" not in soft and problem.contacts is not None:
        problem, soft["contact_change"] = choose_floor(
            problem, xs, "contact_change_window" in noise
        )
        detail = soft["contact_change"]["detail"]
        notes.append(f"noise.contact_change_v chosen from the data: {detail}")
    options = OEOptions(
        rollout=rollout,
        nullspace=nullspace,
        max_iterations=max_iterations,
        time_budget_s=time_budget,
    )
    theta0 = problem.dynamics.nominal_theta()
    bias_rounds = None
    if recording.measurements.accelerometer is not None and imu["estimate_bias"]:
        started = time.perf_counter()
        bias_rounds = solve_with_accelerometer_bias(
            problem, xs, ws, theta0, options, progress=progress
        )
        # every round's iterations and time, not the last round's ("converged (2 iterations,
        # 8.0 s)" after 28 iterations and 92 s)
        result = dataclasses.replace(bias_rounds.result, iterations=bias_rounds.iterations,
                                     solve_time=time.perf_counter() - started)  # fmt: skip
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
        "noise": problem.noise.__dict__,
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
            "estimated": [] if joint_estimate is None else list(joint_estimate.kinds),
            "prior_std": None if joint_estimate is None else joint_estimate.prior_log_std,
        },
        "accelerometer": recording.measurements.accelerometer is not None,
    }
    payload = result.to_json_dict()
    payload["inputs"] = provenance | {"ignored_columns": list(recording.unknown_columns)}
    payload["soft_contacts"] = soft
    if bias_rounds is not None:
        payload["accelerometer_bias"] = {
            "estimate": list(bias_rounds.bias_history[-1]),
            "history": [list(b) for b in bias_rounds.bias_history],
            "converged": bias_rounds.converged,
            "iterations_all_rounds": bias_rounds.iterations,
        }
    if problem.wrench_frames and np.all(np.isfinite(result.xs)):
        payload["wrench_fit"] = wrench_fit(problem, result.xs, result.ws, result.theta)
    document = payload
    params = params_document(model, result, provenance)
    trajectory = table_csv_text(trajectory_columns(model, recording.t, result))

    def write(staging: Path) -> None:
        write_json_atomic(staging / "params.json", params)
        write_json_atomic(staging / "result.json", payload)
        write_text_atomic(staging / "trajectory.csv", trajectory)
        plot_convergence(result, staging / "convergence.png")
        _write_report(staging, model, recording, problem, result)

    warnings = []
    if result.chi2_reduced > CHI2_WARNING:
        warnings.append(
            f"the noise model does not fit the data (reduced chi-square "
            f"{result.chi2_reduced:.3g}: residuals about {np.sqrt(result.chi2_reduced):.2g}x "
            "the standard deviations given); the reported standard deviations are widened by "
            "that factor, and by the residuals' serial correlation: "
            f"x{np.sqrt(result.std_inflation):.3g} in all (result.json std_inflation "
            f"{result.std_inflation:.3g} is the variance factor), but the estimate "
            "may be biased: check the contact flags, the noise config and the commands "
            "(docs/oe.md, 'Checking the fit')"
        )
    for joint, terms in result.joints.items():
        for kind, bodies in terms.get("confounded_with", {}).items():
            warnings.append(
                f"{joint} {kind} is decided by its prior ({terms[kind]:.3g}, the data do not "
                f"tell it) and moves with the estimated {', '.join(bodies)} (posterior "
                "correlation above 0.5): that prior decides them too; give the value in "
                "joints or record motion that separates them (docs/oe.md)"
            )
    summary = result.body_summary()
    for body, values in summary.items():  # a legged team's payload is this difference
        if body in file_masses and np.isfinite(values["std"]["mass"]):
            change, std = values["mass"] - file_masses[body], values["std"]["mass"]
            notes.append(
                f"{body}: {values['mass']:.4g} +- {std:.2g} kg against the robot file's "
                f"{file_masses[body]:.4g} kg: {change:+.4g} +- {std:.2g} kg carried beyond the "
                "file's body (a payload, if the file's is the bare robot)"
            )
    masses = ", ".join(f"{k}: {v['mass']:.4g} kg" for k, v in summary.items())
    message = f"{masses}; {result.iterations} iterations"
    return Outcome(
        result.status,
        message,
        _parameters(summary, result.joints),
        document,
        result,
        write,
        notes=tuple(notes),
        warnings=tuple(warnings),
    )


def _soft_contact_inputs(  # noqa: ANN001 - urdf: PathLike, model: pin.Model, recording
    noise: dict, radius: float | None, urdf, model, recording, notes: list[str]
) -> tuple[dict, float | list[float], dict]:
    """``(noise, radius, record)``: the config's noise keywords (``contact_change_v`` 0, i.e.
    no floor, taken out), the feet's radius (the config's, else the robot file's or the data's,
    :func:`physid.oe.soft_contacts.choose_radius`, with a note) and what was given of both
    (``record["contact_change"]`` is left for the data to fill when the config has none)."""
    from physid.oe.measurements import NoiseStd
    from physid.oe.soft_contacts import choose_radius, rolling_at_sphere_centres

    soft: dict = {}
    noise = dict(noise)
    if "contact_change_v" in noise:
        value = noise.pop("contact_change_v")
        if value > 0:
            noise["contact_change_v"] = value
        soft["contact_change"] = {"contact_change_v": value or None, "source": "config",
                                  "window": noise.get("contact_change_window",
                                                     NoiseStd.contact_change_window)}  # fmt: skip
    if recording.contact_flags is None:
        return noise, radius or 0.0, soft
    if radius is not None:
        soft["radius"] = {"radius": radius, "source": "config"}
        return noise, radius, soft
    meas = recording.measurements
    radius, soft["radius"] = choose_radius(
        urdf, model, recording.contact_frames, recording.contact_flags, meas, recording.dt
    )
    notes.append(f"contacts.radius chosen ({soft['radius']['source']}): {soft['radius']['detail']}")
    centres = soft["radius"].pop("centres", None)
    if centres:
        notes.extend(rolling_at_sphere_centres(model, centres, set(meas.wrench or ())))
        soft["radius"]["centre_offsets_m"] = {f: o.tolist() for f, o in centres.items()}
    return noise, radius, soft


def _estimate_note(estimate, dynamics) -> str:  # noqa: ANN001 - JointEstimate, ParametrizedModel
    """What the run estimates of the joint terms, where each starts and what holds it."""
    from physid.oe.joint_estimate import START, UNDECLARED_LOG_STD, UNITS

    parts = []
    for kind in estimate.kinds:
        declared = estimate.values(dynamics.declared_joints, kind)
        given = int(np.count_nonzero(declared))
        start = ""
        if given:
            start = (f"{given} from the config/robot file (log-normal prior, std "
                     f"{estimate.prior_log_std:g} in log)")  # fmt: skip
        free = len(declared) - given
        if free:
            free_text = (f"{free} undeclared: from {START[kind]:g} {UNITS[kind]}, wide prior "
                         f"(std {UNDECLARED_LOG_STD:g} in log)")  # fmt: skip
            start += (", " if start else "") + free_text
        parts.append(f"{kind} ({start})")
    return (f"joint terms estimated on {len(estimate.dofs)} joints with the bodies: "
            + "; ".join(parts))  # fmt: skip


def default_joint_terms(model, label: str, mjcf: bool, floating: bool) -> tuple:  # noqa: ANN001
    """``(joints, notes)`` when the config gives no ``joints``: an MJCF's own terms (a
    simulator's model: what it declares moves the robot); none for a URDF, with a note naming
    what it declares (URDF dynamics tags are often decorative) or, on a floating base, that
    the legs then have none."""
    from physid.oe.config import model_joint_terms

    declared = _declared_joint_terms(model)
    if declared and mjcf:
        return model_joint_terms(model), [
            f"{label}: the dynamics include the MJCF's joint terms ({declared}; Coulomb "
            "smoothed over 0.02 rad/s); a config 'joints: {}' leaves them out"
        ]
    if declared:
        return None, [
            f"{label} declares joint terms ({declared}) that the dynamics leave out: give the "
            "config 'joints: {armature: model, damping: model, friction: model}' to use them, "
            "with 'estimate: all' to fit them with the bodies (a real leg's friction and "
            "armature left out go into the process noise and can stall or bias the solve; "
            "docs/oe.md)"
        ]
    if floating:
        return None, [
            f"{label} declares no joint friction or armature and the config gives none: the "
            "dynamics have none (a real leg's go into the process noise and can stall or bias "
            "the solve): give them under 'joints', or 'joints: {estimate: all}' to fit them "
            "with the bodies (docs/oe.md)"
        ]
    return None, []


def _declared_joint_terms(model) -> str:  # noqa: ANN001 - a pinocchio Model
    """The non-zero joint terms of the robot file (damping, friction, armature), largest of
    each, e.g. ``damping up to 2, friction up to 0.2``; empty when it declares none."""
    found = []
    for label, values in (("damping", model.damping), ("friction", model.friction),
                          ("armature", model.armature)):  # fmt: skip
        largest = float(np.max(np.abs(values))) if len(values) else 0.0
        if largest > 0.0:
            found.append(f"{label} up to {largest:.3g}")
    return ", ".join(found)


def _parameters(summary: dict, joints: dict) -> Named:
    from physid.oe.joint_estimate import KINDS, UNITS

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
