"""Everything ``physid oe`` reads before it builds the problem: the robot file, the recording
(a file, a ROS 2 bag or a LeRobot episode), the config; checked, with a finding for each thing
physid made of them (:mod:`physid.oe.codes`) and an error line for what no estimate can come
from."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pinocchio as pin

from physid.errors import InputError
from physid.findings import Finding
from physid.oe.codes import (
    BASE_VELOCITY_UNOBSERVED,
    FREE_FLIGHT,
    HELD_JOINTS,
    REGRIDDED,
    SENSOR_NOT_USED,
    UNKNOWN_COLUMNS,
)
from physid.oe.data.joints import JointChoice
from physid.oe.data.recording import OERecording


@dataclass(frozen=True)
class OEConfig:
    """The ``--config`` YAML's sections (:mod:`physid.oe.data.config`)."""

    noise: dict
    contact_damping: float
    imu: dict  # frame (None: the base), estimate_bias
    radius: float | None  # contacts.radius; None: physid chooses
    joints: JointChoice
    compliance: float | None = None  # contacts.compliance: None, the data choose; 0 rigid


@dataclass
class OEInputs:
    """A run's model (unlogged joints held), recording, config and the robot file's masses of
    the estimated bodies; ``findings`` about them, ``notes``: the recordings layer's prose
    readings (dropped rows, time base) as it gives them."""

    model: pin.Model
    recording: OERecording
    label: str
    config: OEConfig
    file_masses: dict[str, float]
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_inputs(
    urdf: str | Path,
    data: Path,
    bodies: Sequence[str],
    floating: bool,
    config: Path | None,
    logs: dict,
) -> OEInputs:
    """Read and check a run's inputs (``logs``: ``topic``, ``episode``, ``imu_topic``,
    ``wrench_topics`` of a bag or dataset); InputError naming the file, column or row."""
    from physid.files.config import unlogged_holds
    from physid.robot.joint_locking import hold_at
    from physid.robot.model import load_robot_file, refuse_coupled_mjcf

    source, table = _one_recording(data, floating, logs)
    label = table.source if source is table else str(data)
    whole = load_robot_file(urdf, floating_base=floating)  # its errors before the recording's
    held, _ = unlogged_holds(urdf, table.columns)  # a gripper beside an arm's log
    model = hold_at(whole, held)
    refuse_coupled_mjcf(model, urdf)
    masses = {
        b: float(model.inertias[model.getJointId(b)].mass)
        for b in bodies
        if model.existJointName(b)
    }
    settings = _read_config(config, model, urdf, floating)
    from physid.oe.data.config import coulomb_speed_given, read_angle_unit
    from physid.oe.data.joints import with_coulomb_widths
    from physid.oe.data.recording import read_recording
    from physid.oe.model.dynamics import dof_names

    degrees = read_angle_unit(config) == "degrees"
    recording = read_recording(table, model, angles_in_degrees=degrees)
    if not coulomb_speed_given(config):  # chosen per node from the recorded velocities
        joints = with_coulomb_widths(
            settings.joints, recording.measurements.v, dof_names(model), recording.contact_flags
        )
        settings = dataclasses.replace(settings, joints=joints)
    inputs = OEInputs(model, recording, label, settings, masses)
    inputs.notes.extend(f"{label}: {note}" for note in getattr(source, "notes", ()))
    if held:
        listed = ", ".join(f"{joint} at {value:g}" for joint, value in held.items())
        inputs.findings.append(
            HELD_JOINTS(
                f"joints of the robot file the recording does not log held still (rad or m): "
                f"{listed}; their bodies ride on their parents, as in physid identify",
                numbers=held,
                names=held,
            )
        )
    inputs.findings.extend(settings.joints.findings)
    _check_recording(inputs, bodies, floating)
    return inputs


def _one_recording(data: Path, floating: bool, logs: dict) -> tuple:
    """``(source, table)``: the one recording of ``data`` (a bag's or dataset's table, or the
    file read)."""
    from physid.recordings.logs import expand_logs
    from physid.recordings.tables import Table
    from physid.recordings.trajectory import read_table

    episode = logs.get("episode")
    recordings = expand_logs(
        [data],
        logs.get("topic"),
        () if episode is None else (episode,),
        imu_topic=logs.get("imu_topic") if floating else None,
        wrench_topics=logs.get("wrench_topics", ()),
    )
    if len(recordings) != 1:
        raise InputError(
            f"physid oe reads one recording; this dataset holds {len(recordings)} "
            "episodes: select one with --episode",
            source=str(data),
        )
    source = recordings[0]
    if isinstance(source, Table):
        return source, source
    return source, read_table(str(data))


def _read_config(
    config: Path | None, model: pin.Model, urdf: str | Path, floating: bool
) -> OEConfig:
    """The config's sections; the joint terms by
    :func:`~physid.oe.data.joints.choose_joint_terms`."""
    from physid.oe.data.config import (
        read_contact_compliance,
        read_joint_estimate,
        read_joint_terms,
        read_oe_config,
    )
    from physid.oe.data.joints import choose_joint_terms
    from physid.robot.mjcf import is_mjcf

    noise, damping, imu, radius = read_oe_config(config)
    given, estimate = read_joint_terms(config, model), read_joint_estimate(config, model)
    joints = choose_joint_terms(model, Path(urdf).name, is_mjcf(urdf), floating, given, estimate)
    return OEConfig(noise, damping, imu, radius, joints, read_contact_compliance(config))


def _check_recording(inputs: OEInputs, bodies: Sequence[str], floating: bool) -> None:
    """What the recording gives and leaves out, as findings; an error when it holds fewer
    joint dynamics equations than there are inertial parameters."""
    from physid.oe.model.accelerometer import check_specific_force
    from physid.oe.model.wrench import unsupported_sensor

    model, recording, label = inputs.model, inputs.recording, inputs.label
    if recording.unknown_columns:  # one finding, not one per column (a log may have dozens)
        listed = recording.unknown_columns
        inputs.findings.append(
            UNKNOWN_COLUMNS(
                f"{label}: ignoring unknown column{'s' if len(listed) > 1 else ''} "
                f"{', '.join(listed)}",
                numbers={"columns": len(listed)},
                names=listed,
            )
        )
    if recording.regridded_from is not None:
        inputs.findings.append(
            REGRIDDED(
                f"{label}: time stamps jitter by more than 1 % of the median step: "
                f"{recording.regridded_from} rows resampled to {recording.t.size} nodes every "
                f"{recording.dt:.6g} s (commands and contact flags held, the rest interpolated)",
                numbers={
                    "rows": recording.regridded_from,
                    "nodes": recording.t.size,
                    "dt_s": recording.dt,
                },
            )
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
        frame = inputs.config.imu["frame"]
        check_specific_force(model, meas.base_quat, meas.accelerometer, frame, label)
    if meas.wrench:  # a sensor physid cannot model (e.g. a foot's) is reported and not used
        usable = {}
        for frame, samples in meas.wrench.items():
            reason = unsupported_sensor(model, frame, recording.contact_frames)
            if reason is None:
                usable[frame] = samples
            else:
                inputs.findings.append(
                    SENSOR_NOT_USED(f"{label}: not using {reason}", names=(frame,))
                )
        meas = dataclasses.replace(meas, wrench=usable or None)
        inputs.recording = dataclasses.replace(recording, measurements=meas)
    if floating and recording.contact_flags is None:
        inputs.findings.append(
            FREE_FLIGHT(
                f"{label}: no contact_<frame> columns: the robot is modelled in free flight, no "
                "foot on the ground"
            )
        )
    if floating and meas.base_velocity is None and meas.accelerometer is None:
        inputs.findings.append(
            BASE_VELOCITY_UNOBSERVED(
                f"{label}: no base_v* or acc_* columns: the base's linear velocity is observed "
                "only through the dynamics and the legs (consider noise.foot_velocity)"
            )
        )
