"""Recordings as robots log them: ROS 2 bags (MCAP or SQLite storage), MCAP files and LeRobot
datasets, read into the trajectory contract (:mod:`physid.recordings.trajectory`).

**ROS 2 bags and MCAP files** (read by ``rosbags``, pure Python, no ROS installation): the
``sensor_msgs/msg/JointState`` messages of one topic (the only JointState topic, or the one
named; several are an error listing them). Time is the message's header stamp, or the bag's
log time for every topic read where one topic's stamps cannot serve (all zero, as some drivers
leave them, or running back while the log times do not; a note says which); each message's
``name`` list matches
its ``position``, ``velocity`` and ``effort`` to joints by name, so the order may change from
one message to the next. ``position`` gives ``q_<joint>``, a non-empty ``velocity``
``dq_<joint>``, a non-empty ``effort`` ``tau_<joint>``.

Where an estimator reads them (``physid oe``), two more kinds of topic of the same bag join the
JointState rows, interpolated to their time stamps (on the same time base; rows outside a
sensor's time span are dropped, counted in :attr:`Table.notes`):

* ``sensor_msgs/msg/Imu`` (``imu_topic``; ``"auto"``: the only such topic, if any):
  ``orientation`` -> ``base_qx, base_qy, base_qz, base_qw`` (left out when the message says it
  has none: ``orientation_covariance[0] == -1``), ``angular_velocity`` -> ``gyro_x/y/z``,
  ``linear_acceleration`` -> ``acc_x/y/z``, as the message states them, in the IMU's frame
  (``physid oe`` reads orientation and gyro as the base's: mount or rotate accordingly; the
  accelerometer's frame is its ``imu.frame``). Vectors are interpolated linearly, the
  orientation by normalised linear interpolation of sign-aligned quaternions (the error is
  second order in the rotation between two IMU samples: 1e-6 rad at 1 rad/s and 500 Hz).
* ``geometry_msgs/msg/WrenchStamped`` (``wrench_topics``): force and torque ->
  ``ft_<frame>_fx, _fy, _fz, _tx, _ty, _tz`` with ``<frame>`` the header's ``frame_id``: a
  force/torque sensor's wrench in its own frame, the ``ft_`` columns of docs/oe.md.

**LeRobot datasets** (a folder with ``meta/info.json`` and Parquet files under ``data/``, the
v2 one-file-per-episode and v3 many-episodes-per-file layouts alike; read by ``pyarrow``): one
recording per episode (all, or those selected). Joint names are the feature's ``names``
(without the ``.pos`` / ``.vel`` / ``.cur`` ... suffix LeRobot's robots give them);
``observation.state`` gives ``q_``, ``observation.velocity`` ``dq_``, ``observation.effort``
``tau_``, ``observation.current`` ``i_`` (motor currents, then ``drive_gains``) and
``action`` ``ctrl_`` (the commands sent, e.g. position targets: ``physid simfit`` drives the
model's actuators of those names with them), time is ``timestamp``. Units are the dataset's:
a dataset in degrees is read with the identify config's ``angle_unit: degrees``.

Every failure is one :class:`~physid.errors.InputError` line naming the file, topic, episode or
field.
"""

from __future__ import annotations

import json
import struct
import sys
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from physid.errors import Bound, InputError, in_range, install_hint
from physid.recordings.tables import Table, check_equal_lengths, force_torque_columns

JOINT_STATE = "sensor_msgs/msg/JointState"
IMU = "sensor_msgs/msg/Imu"
WRENCH = "geometry_msgs/msg/WrenchStamped"
AUTO = "auto"
# a LeRobot episode index: the --episode option (physid.cli.options.log_options) and the API
# faces that take episodes check it through physid.errors.in_range (the same one-line error)
EPISODE = Bound(0, sys.float_info.max, integer=True)
QUATERNION = ("base_qx", "base_qy", "base_qz", "base_qw")  # x, y, z, w: the IMU's orientation
LEROBOT_FEATURES = {  # LeRobot feature -> trajectory-contract prefix
    "observation.state": "q_",
    "observation.velocity": "dq_",
    "observation.effort": "tau_",
    "observation.current": "i_",
    "action": "ctrl_",  # the commands sent (position targets): physid simfit drives actuators
}


def log_kind(path: str | Path) -> str | None:
    """``"rosbag"`` (a bag folder, or an ``.mcap`` / ``.db3`` file), ``"lerobot"`` (a folder
    with ``meta/info.json``), or None for anything else."""
    path = Path(path)
    if path.is_dir():
        if (path / "meta" / "info.json").is_file():
            return "lerobot"
        if (path / "metadata.yaml").is_file():
            return "rosbag"
        return None
    # only a regular file is opened: a FIFO named run.mcap would block the reader
    return "rosbag" if path.suffix.lower() in (".mcap", ".db3") and path.is_file() else None


def read_log(
    path: str | Path,
    *,
    topic: str | None = None,
    episodes: tuple[int, ...] = (),
    imu_topic: str | None = None,
    wrench_topics: tuple[str, ...] = (),
    other_than: tuple[int, ...] = (),
) -> list[Table]:
    """The recordings of a log (module docstring): one table for a bag's JointState topic (with
    the IMU and wrench topics asked for), one per selected episode of a LeRobot dataset (every
    episode when ``episodes`` is empty, but those in ``other_than``)."""
    path = Path(path)
    kind = log_kind(path)
    if kind == "rosbag":
        if episodes:
            raise InputError(
                "--episode selects LeRobot episodes; this is a ROS 2 bag", source=str(path)
            )
        return [read_joint_states(path, topic, imu_topic, tuple(wrench_topics))]
    if kind == "lerobot":
        named = [
            name
            for name, value in (
                ("--topic", topic),
                ("--wrench-topic", wrench_topics),
                ("--imu-topic", None if imu_topic == AUTO else imu_topic),
            )
            if value
        ]
        if named:
            raise InputError(
                f"{named[0]} names a ROS 2 topic; this is a LeRobot dataset", source=str(path)
            )
        return read_lerobot(path, episodes, other_than)
    raise InputError("not a ROS 2 bag, MCAP file or LeRobot dataset folder", source=str(path))


def _rosbags():
    try:
        from rosbags.highlevel import AnyReader
        from rosbags.typesys import Stores, get_typestore
    except ImportError:  # pragma: no cover - depends on the environment
        raise InputError(
            f"reading ROS 2 bags and MCAP files needs rosbags: {install_hint('rosbags', 'logs')}"
        ) from None
    return AnyReader, get_typestore(Stores.ROS2_HUMBLE)


def _one_topic(connections: list, msgtype: str, wanted: str | None, option: str, source: str):
    """The topic of ``msgtype`` named ``wanted`` (``"auto"``: the only one, None if there is
    none); an error listing the bag's topics of that type otherwise."""
    topics = sorted({c.topic for c in connections if c.msgtype == msgtype})
    if wanted == AUTO:
        if len(topics) > 1:
            raise InputError(
                f"{len(topics)} {msgtype} topics ({', '.join(topics)}): name one with {option}",
                source=source,
            )
        return topics[0] if topics else None
    if wanted not in topics:
        raise InputError(
            f"no {msgtype} topic '{wanted}'; the bag has: {', '.join(topics) or 'none'}",
            source=source,
        )
    return wanted


def read_joint_states(
    path: Path,
    topic: str | None = None,
    imu_topic: str | None = None,
    wrench_topics: tuple[str, ...] = (),
) -> Table:
    """One JointState topic of a bag folder or an MCAP/SQLite file, as contract columns, with
    the IMU and wrench topics asked for joined to its rows (module docstring)."""
    any_reader, typestore = _rosbags()
    source = str(path)
    try:
        with any_reader([path], default_typestore=typestore) as reader:
            connections = list(reader.connections)
            topic = _one_topic(
                connections, JOINT_STATE, AUTO if topic is None else topic, "--topic", source
            )
            if topic is None:  # what the bag holds instead (--topic picks JointState only)
                held = sorted({f"{c.topic} ({c.msgtype})" for c in connections})
                shown = ", ".join(held[:8]) + (
                    f" and {len(held) - 8} more" if len(held) > 8 else ""
                )
                raise InputError(
                    f"no {JOINT_STATE} topic: physid reads joint positions and efforts from "
                    f"one; the bag has {shown or 'no topic'}",
                    source=source,
                )
            imu = (
                None
                if imu_topic is None
                else _one_topic(connections, IMU, imu_topic, "--imu-topic", source)
            )
            wrenches = [
                _one_topic(connections, WRENCH, w, "--wrench-topic", source)
                for w in dict.fromkeys(wrench_topics)
            ]
            wanted = [name for name in (topic, imu, *wrenches) if name is not None]
            messages: dict[str, list] = {name: [] for name in wanted}
            chosen = [c for c in connections if c.topic in messages]
            for connection, log_time, raw in reader.messages(connections=chosen):
                messages[connection.topic].append(
                    (log_time, reader.deserialize(raw, connection.msgtype))
                )
    except InputError:
        raise
    except Exception as error:  # noqa: BLE001 - rosbags raises its own error kinds
        message = " ".join(str(error).split()) or type(error).__name__
        if isinstance(error, OverflowError | struct.error):
            # a length field read from garbage: the reader's own words name no cause
            message = (
                f"its contents are damaged ({type(error).__name__}: {message}); "
                "a copy that was cut or overwritten?"
            )
        if "end magic" in message:  # rosbags' MCAP reader needs the footer a closed file has
            message += (
                " (the file ends before its footer, as a recording that was never closed "
                "does: 'mcap recover' from the MCAP command-line tools rewrites the "
                "messages it holds)"
            )
        raise InputError(f"cannot read the bag: {message}", source=source) from None
    for name in wanted:
        if not messages[name]:
            raise InputError(f"topic '{name}' has no message", source=source)
    # one time base for every topic: header stamps, or the bag's log times where any topic's
    # stamps cannot serve (a joint-state topic on log times beside an IMU on its header stamps
    # would pair each row with the IMU reading of another instant)
    groups = _publisher_groups(messages[topic], f"{source}:{topic}")
    sensors_read = [name for name in (imu, *wrenches) if name is not None]
    problems = [(topic, _stamp_problem(group)) for group in groups]
    problems += [(name, _stamp_problem(_numbered(messages[name]))) for name in sensors_read]
    problem = next(((name, why) for name, why in problems if why), None)
    log_times = problem is not None
    # every topic's time in seconds from one whole second near the start: epoch stamps (1.7e9 s)
    # as float64 are 2.4e-7 s apart, which moved the fitted parameters by up to 5e-4 against
    # the same bag stamped from 0
    log_time, message = messages[topic][0]
    stamp = message.header.stamp
    origin = int(log_time) // 10**9 if log_times else int(stamp.sec)
    table = _joint_state_table(groups, f"{source}:{topic}", origin, log_times)
    if problem is not None:
        every = " of every topic" if sensors_read or len(groups) > 1 else ""
        table = Table(
            table.columns,
            table.source,
            notes=table.notes
            + (f"{problem[1]} ({problem[0]}): the bag's log times are the time base{every}",),
        )
    sensors = {}
    if imu is not None:
        sensors[imu] = _imu_columns(messages[imu], f"{source}:{imu}", origin, log_times)
    for name in wrenches:
        sensors[name] = _wrench_columns(messages[name], f"{source}:{name}", origin, log_times)
    return _joined(table, sensors) if sensors else table


def _numbered(messages: list) -> list:
    """``(log time, message)`` pairs as ``(message number, log time, message)``, from 1."""
    return [
        (number, log_time, message) for number, (log_time, message) in enumerate(messages, start=1)
    ]


def _stamp_problem(entries: list) -> str:
    """Why the header stamps of ``entries`` (``(message number, log time, message)``) cannot be
    the time base, or "": every stamp zero (as some drivers leave them), or stamps that run back
    while the log times do not (a clock that jumped: the stamps would be refused, and sorting
    them would interleave two stretches of motion)."""
    stamps = np.array(
        [m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for _, _, m in entries], dtype=np.int64
    )
    if not stamps.any():
        return "every header stamp is zero"
    logged = np.array([log_time for _, log_time, _ in entries], dtype=np.int64)
    back = np.flatnonzero(np.diff(stamps) < 0)
    if back.size and np.all(np.diff(logged) > 0):
        k = int(back[0])
        return (
            f"the header stamps run back at message {entries[k + 1][0]} (by "
            f"{1e-9 * (stamps[k] - stamps[k + 1]):.3g} s; {back.size} such jumps) while the "
            "bag's log times do not: a clock that jumped"
        )
    return ""


def _times(messages: list, origin: int, log_times: bool) -> np.ndarray:
    """Seconds from ``origin`` [s since the epoch], in whole nanoseconds, of ``messages``
    (``(log time, message)``): their header stamps, or the bag's ``log_times``."""
    if log_times:
        return 1e-9 * np.array([t - origin * 10**9 for t, _ in messages], dtype=float)
    return np.array(
        [(m.header.stamp.sec - origin) + 1e-9 * m.header.stamp.nanosec for _, m in messages]
    )


def _increasing(t: np.ndarray, columns: dict, source: str) -> dict:
    """``columns`` (with ``t``) sorted by time; repeated stamps are an error naming the row."""
    order = np.argsort(t, kind="stable")
    t = t[order]
    repeated = np.flatnonzero(np.diff(t) <= 0)
    if repeated.size:
        raise InputError(
            f"message {int(order[repeated[0] + 1]) + 1} repeats the time stamp "
            f"{t[repeated[0]]:.9f} s",
            source=source,
        )
    return {"t": t} | {name: values[order] for name, values in columns.items()}


def _imu_columns(messages: list, source: str, origin: int = 0, log_times: bool = False) -> dict:
    """An Imu topic's messages as ``t``, ``base_q*`` (if the orientation is given), ``gyro_*``,
    ``acc_*`` columns, in time order, quaternions sign-aligned for interpolation."""
    first = messages[0][1]
    fields = {"angular_velocity": "gyro_", "linear_acceleration": "acc_"}
    columns = {
        prefix + axis: np.array([getattr(getattr(m, field), axis) for _, m in messages])
        for field, prefix in fields.items()
        for axis in "xyz"
    }
    if float(first.orientation_covariance[0]) != -1.0:  # -1: "no orientation" (REP 145)
        quaternion = np.array(
            [
                [m.orientation.x, m.orientation.y, m.orientation.z, m.orientation.w]
                for _, m in messages
            ]
        )
        norms = np.linalg.norm(quaternion, axis=1)
        bad = np.flatnonzero(~(np.abs(norms - 1.0) < 1e-2))
        if bad.size:
            raise InputError(
                f"message {bad[0] + 1}: orientation is not a unit quaternion "
                f"(norm {norms[bad[0]]:.3g})",
                source=source,
            )
        columns.update(zip(QUATERNION, quaternion.T, strict=True))
    columns = _increasing(_times(messages, origin, log_times), columns, source)
    if QUATERNION[0] in columns:
        quaternion = np.column_stack([columns[n] for n in QUATERNION])
        flips = np.cumprod(
            np.r_[1.0, np.sign(np.sum(quaternion[1:] * quaternion[:-1], axis=1) + 1e-300)]
        )
        columns.update(zip(QUATERNION, (quaternion * flips[:, None]).T, strict=True))
    _finite(columns, source)
    return columns


def _wrench_columns(messages: list, source: str, origin: int = 0, log_times: bool = False) -> dict:
    """A WrenchStamped topic's messages as ``t`` and ``ft_<frame_id>_*`` columns."""
    frames = {m.header.frame_id for _, m in messages}
    if len(frames) != 1 or not next(iter(frames)):
        raise InputError(
            f"the wrench messages must name one frame_id (they name "
            f"{sorted(frames) or 'none'}): it becomes the ft_<frame>_ columns",
            source=source,
        )
    values = [
        [getattr(getattr(m.wrench, field), axis) for field in ("force", "torque") for axis in "xyz"]
        for _, m in messages
    ]
    columns = dict(zip(force_torque_columns(frames.pop()), np.array(values).T, strict=True))
    columns = _increasing(_times(messages, origin, log_times), columns, source)
    _finite(columns, source)
    return columns


def _finite(columns: dict, source: str) -> None:
    for name, values in columns.items():
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise InputError(f"message {bad[0] + 1}: non-finite {name}", source=source)


def _joined(table: Table, sensors: dict[str, dict]) -> Table:
    """The JointState rows inside every sensor's time span, each sensor's columns interpolated
    to them (quaternions renormalised); the rows dropped are counted in the table's notes."""
    t = np.asarray(table.columns["t"], dtype=float)
    keep = np.ones(t.size, dtype=bool)
    for columns in sensors.values():
        keep &= (t >= columns["t"][0]) & (t <= columns["t"][-1])
    if np.count_nonzero(keep) < 3:
        spans = "; ".join(
            f"{name} {c['t'][0]:.6g}..{c['t'][-1]:.6g} s" for name, c in sensors.items()
        )
        raise InputError(
            f"the joint states ({t[0]:.6g}..{t[-1]:.6g} s) and the sensor topics "
            f"({spans}) share fewer than 3 samples",
            source=table.source,
        )
    joined = {name: np.asarray(values)[keep] for name, values in table.columns.items()}
    t = joined["t"]
    for columns in sensors.values():
        for name, values in columns.items():
            if name != "t":
                joined[name] = np.interp(t, columns["t"], values)
        if QUATERNION[0] in columns:
            norms = np.linalg.norm(np.column_stack([joined[n] for n in QUATERNION]), axis=1)
            for name in QUATERNION:
                joined[name] = joined[name] / norms
    dropped = int(keep.size - np.count_nonzero(keep))
    notes = (
        table.notes
        + ((f"{dropped} joint-state rows outside the sensor topics' time span dropped"),)
        if dropped
        else table.notes
    )
    return Table(joined, table.source, notes=notes)


def _publisher_groups(messages: list, source: str) -> list[list]:
    """A JointState topic's messages (``(log time, message)``) grouped by the joints they name
    (one group per publisher), as ``(message number, log time, message)``; the group with the
    most messages first."""
    groups: dict[frozenset, list] = {}
    for entry in _numbered(messages):
        groups.setdefault(frozenset(entry[2].name), []).append(entry)
    groups.pop(frozenset(), None)
    if not groups:
        raise InputError("no message names a joint", source=source)
    return sorted(groups.values(), key=lambda g: (-len(g), -len(g[0][2].name)))


def _joint_state_table(
    groups: list, source: str, origin: int = 0, log_times: bool = False
) -> Table:
    """A JointState topic's messages, grouped by publisher (:func:`_publisher_groups`), as a
    table: per joint ``q_``, and ``dq_`` and ``tau_`` where the messages carry them.

    Two publishers on one topic are the usual ROS layout (joint_state_broadcaster for the arm, a
    gripper driver for its fingers): the group with the most messages gives the rows, and each
    other group's joints are interpolated to its stamps. A field is read from the messages that
    carry it whole: a message without the effort of a group that logs it is dropped (torque is
    needed), a velocity that some messages lack is left out (positions are differentiated), and
    the notes say so."""
    tables = [_joint_state_group(group, source, origin, log_times) for group in groups]
    main, notes = tables[0], list(tables[0].notes)
    columns = dict(main.columns)
    t = np.asarray(columns["t"], float)
    for other in tables[1:]:
        joints = [name for name in other.columns if name != "t" and name not in columns]
        order = np.argsort(other.columns["t"], kind="stable")  # np.interp needs them in order
        for name in joints:
            columns[name] = np.interp(t, other.columns["t"][order], other.columns[name][order])
        notes += list(other.notes)
        if joints:
            named = sorted({name.split("_", 1)[1] for name in joints})
            notes.append(
                f"{other.n_rows} messages of another publisher (joints "
                f"{', '.join(named)}) interpolated to the {main.n_rows} messages of "
                "the one with the most"
            )
    velocities = [name for name in columns if name.startswith("dq_")]
    if velocities and any(not any(n.startswith("dq_") for n in table.columns) for table in tables):
        for name in velocities:  # velocities of some publishers only: differentiate them all
            del columns[name]
        notes.append(
            "velocity left out: one publisher does not carry it (positions are differentiated)"
        )
    return Table(columns, source, notes=tuple(notes))


_FIELDS = {"position": "q_", "velocity": "dq_", "effort": "tau_"}


def _joint_state_group(group: list, source: str, origin: int = 0, log_times: bool = False) -> Table:
    """One publisher's messages (``(message number, log time, message)``, all naming the same
    joints) as a table (:func:`_joint_state_table`)."""
    names = list(group[0][2].name)
    whole = {
        field: np.array([len(getattr(m, field)) == len(names) for _, _, m in group])
        for field in _FIELDS
    }
    keep = whole["position"] & (whole["effort"] if whole["effort"].any() else True)
    notes = []
    if not keep.any():
        raise InputError(
            f"no message naming {names} carries all of their positions"
            + (" and efforts" if whole["effort"].any() else ""),
            source=source,
        )
    if not keep.all():
        dropped = [number for (number, _, _), kept in zip(group, keep, strict=True) if not kept]
        notes.append(
            f"{len(dropped)} messages without every joint's position or effort "
            f"dropped (message {dropped[0]}" + (" ..." if len(dropped) > 1 else "") + ")"
        )
    group = [entry for entry, kept in zip(group, keep, strict=True) if kept]
    fields = [f for f in _FIELDS if whole[f][keep].all()]
    if whole["velocity"].any() and "velocity" not in fields:
        notes.append(
            "velocity left out: some messages do not carry it (positions are differentiated)"
        )
    values = {f: np.empty((len(group), len(names))) for f in fields}
    for k, (_, _, message) in enumerate(group):
        index = [list(message.name).index(name) for name in names]
        for field, array in values.items():
            array[k] = np.asarray(getattr(message, field), dtype=float)[index]
    columns = {
        "t": _times([(log_time, message) for _, log_time, message in group], origin, log_times)
    }
    for field, array in values.items():
        for j, name in enumerate(names):
            columns[_FIELDS[field] + name] = array[:, j]
    return Table(columns, source, notes=tuple(notes))


def _info(path: Path) -> dict:
    try:
        info = json.loads((path / "meta" / "info.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise InputError(f"meta/info.json: {error}", source=str(path)) from None
    if not isinstance(info, dict) or not isinstance(info.get("features"), dict):
        raise InputError("meta/info.json has no 'features' mapping", source=str(path))
    return info


def _feature_names(feature: str, spec: dict, source: str) -> list[str]:
    names = spec.get("names")
    if isinstance(names, dict):  # LeRobot v2 writes {"motors": [...]}
        names = next(iter(names.values()), None)
    shape = spec.get("shape") or [0]
    if not isinstance(names, list) or len(names) != int(np.prod(shape)):
        raise InputError(
            f"feature '{feature}' needs a 'names' list of its {shape} entries (the joint names)",
            source=source,
        )
    names = [str(name) for name in names]
    # LeRobot's robots name a motor's readings "<motor>.pos", ".vel", ... (the SO-100/101 arms
    # since 2025): the joint is the motor's name
    for suffix in _LEROBOT_SUFFIXES:
        if all(name.endswith(suffix) and len(name) > len(suffix) for name in names):
            return [name[: -len(suffix)] for name in names]
    return names


_LEROBOT_SUFFIXES = (".pos", ".vel", ".effort", ".eff", ".cur", ".current", ".torque")


def read_lerobot(
    path: Path, episodes: tuple[int, ...] = (), other_than: tuple[int, ...] = ()
) -> list[Table]:
    """The episodes of a LeRobot dataset folder, one contract table each (module docstring):
    ``episodes``, or every episode but ``other_than``."""
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - depends on the environment
        hint = install_hint("pyarrow", "logs")
        raise InputError(f"reading LeRobot datasets needs pyarrow: {hint}") from None
    source = str(path)
    features = _info(path)["features"]
    mapped = {f: p for f, p in LEROBOT_FEATURES.items() if f in features}
    if "observation.state" not in mapped:
        raise InputError(
            "the dataset has no 'observation.state' feature (joint positions)", source=source
        )
    names = {f: _feature_names(f, features[f], source) for f in mapped}
    files = sorted((path / "data").rglob("*.parquet"))
    if not files:
        raise InputError("no Parquet file under data/", source=source)
    wanted = ["timestamp", "episode_index", *mapped]
    parts: dict[str, list[np.ndarray]] = {name: [] for name in wanted}
    for file in files:
        try:
            table = pq.read_table(file)
        except Exception as error:  # noqa: BLE001 - pyarrow's many error kinds
            raise InputError(f"cannot read Parquet: {error}", source=str(file)) from None
        missing = [name for name in wanted if name not in table.column_names]
        if missing:
            raise InputError(f"column(s) {missing} missing", source=str(file))
        for name in wanted:
            column = table.column(name).to_pylist()
            parts[name].append(np.asarray(column, dtype=float))
    data = {name: np.concatenate(arrays) for name, arrays in parts.items()}
    present = sorted({int(e) for e in data["episode_index"]})
    selected = list(episodes) or [e for e in present if e not in other_than]
    unknown = [e for e in selected if e not in present]
    if unknown:
        raise InputError(
            f"episode(s) {unknown} not in the dataset; it has {present[0]}.."
            f"{present[-1]} ({len(present)} episodes)",
            source=source,
        )
    if not selected:
        raise InputError(
            f"every episode of the dataset ({len(present)}) is among the --data "
            "recordings (--episode): none is left to hold out; give another "
            "dataset, or select fewer episodes",
            source=source,
        )
    tables = []
    for episode in selected:
        rows = np.flatnonzero(data["episode_index"] == episode)
        rows = rows[np.argsort(data["timestamp"][rows], kind="stable")]
        columns = {"t": data["timestamp"][rows]}
        for feature, prefix in mapped.items():
            block = data[feature][rows].reshape(len(rows), -1)
            for j, joint in enumerate(names[feature]):
                columns[prefix + joint] = block[:, j]
        check_equal_lengths(columns, source)
        tables.append(Table(columns, f"{source}:episode {episode}"))
    return tables


def check_episodes(episodes: Iterable[int], name: str = "episodes") -> tuple[int, ...]:
    """``episodes`` as a tuple, each an integer >= 0 (:data:`EPISODE`), else the one-line
    InputError naming the parameter: an API face checks them before it reads or loads
    anything, as the command line does when it is parsed."""
    return tuple(in_range(e, name, *EPISODE) for e in episodes)


def expand_logs(
    paths: Iterable,
    topic: str | None = None,
    episodes: Iterable[int] = (),
    imu_topic: str | None = None,
    wrench_topics: Iterable[str] = (),
    *,
    selectors_checked: bool = True,
    taken: dict[Path, tuple[int, ...]] | None = None,
) -> list:
    """``paths`` with every bag or LeRobot dataset replaced by its recordings (in-memory
    tables, :func:`read_log`); other files are kept as paths, other objects as they are.
    ``selectors_checked``: a selector (topic, episode) with no log among ``paths`` is an
    error; a command with several lists of recordings checks them together instead
    (:func:`check_selectors`). ``taken``: per LeRobot dataset (resolved path), the episodes
    another list took, which this one leaves out (:func:`expand_log_lists`)."""
    paths = list(paths)
    if selectors_checked:
        check_selectors(paths, topic, episodes, imu_topic, wrench_topics)
    expanded, episodes = [], tuple(episodes)
    wrench_topics = tuple(wrench_topics)
    for path in paths:
        if not isinstance(path, str | Path):  # an in-memory recording
            expanded.append(path)
            continue
        path = Path(path)
        if log_kind(path) is not None:
            other_than = (taken or {}).get(path.resolve(), ())
            expanded.extend(
                read_log(
                    path,
                    topic=topic,
                    episodes=episodes,
                    imu_topic=imu_topic,
                    wrench_topics=wrench_topics,
                    other_than=other_than,
                )
            )
        elif path.is_dir():
            raise InputError(
                f"{path}: a folder that is neither a ROS 2 bag (metadata.yaml) nor a LeRobot "
                "dataset (meta/info.json)"
            )
        else:
            expanded.append(path)
    return expanded


def expand_log_lists(
    lists: Iterable[Iterable], topic: str | None = None, episodes: Iterable[int] = ()
) -> list[list]:
    """Each of a command's recording lists (``--data``, ``--validate``, ...) expanded by
    :func:`expand_logs`, the selectors checked against all of them together: ``--data run.csv
    --validate bag --topic /x`` selects in the bag (each list checked alone refused the CSV's
    list).

    ``episodes`` (``--episode``) select in the first list's LeRobot datasets (``--data``, the
    training runs). Every other list takes all episodes of its datasets, but those the first
    list took from the same dataset: ``--data ds --episode 0 --validate ds`` holds out the
    other episodes, and a recording is never both trained on and held out. Only when the first
    list holds no dataset do the episodes select in the others. Without ``episodes`` every
    dataset is read whole. (Selecting in every list would judge ``--data a --episode 0
    --validate b`` on episode 0 of ``b`` alone, its other episodes dropped without a word.)"""
    lists = [list(paths) for paths in lists]
    episodes = tuple(episodes)
    check_selectors([p for paths in lists for p in paths], topic, episodes)
    if not lists:
        return []
    datasets = [
        Path(p) for p in lists[0] if isinstance(p, str | Path) and log_kind(Path(p)) == "lerobot"
    ]
    if not datasets:
        return [expand_logs(paths, topic, episodes, selectors_checked=False) for paths in lists]
    # without --episode every list reads whole datasets, as given (a --validate that repeats
    # --data is then said: its samples are training samples)
    taken = {path.resolve(): episodes for path in datasets} if episodes else {}
    first = expand_logs(lists[0], topic, episodes, selectors_checked=False)
    return [
        first,
        *(
            expand_logs(paths, topic, (), selectors_checked=False, taken=taken)
            for paths in lists[1:]
        ),
    ]


def check_selectors(
    paths: Iterable,
    topic: str | None = None,
    episodes: Iterable[int] = (),
    imu_topic: str | None = None,
    wrench_topics: Iterable[str] = (),
) -> None:
    """A selector (``--topic``, ``--episode``, ``--imu-topic``, ``--wrench-topic``) needs a
    bag or LeRobot dataset among ``paths`` (every recording option of the command)."""
    named = (
        topic is not None
        or tuple(episodes)
        or tuple(wrench_topics)
        or imu_topic not in (None, AUTO)
    )
    logs = [p for p in paths if isinstance(p, str | Path) and log_kind(Path(p)) is not None]
    if named and not logs:
        raise InputError(
            "--topic, --episode, --imu-topic and --wrench-topic select inside a ROS 2 bag, MCAP "
            "file or LeRobot dataset, and no --data is one"
        )
