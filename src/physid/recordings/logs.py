"""Recordings as robots log them: ROS 2 bags (MCAP or SQLite storage), MCAP files and LeRobot
datasets, read into the trajectory contract (:mod:`physid.recordings.trajectory`).

**ROS 2 bags and MCAP files** (read by ``rosbags``, pure Python, no ROS installation): the
``sensor_msgs/msg/JointState`` messages of one topic (the only JointState topic, or the one
named; several are an error listing them). Time is the message's header stamp (the log time
where every stamp is zero, as some drivers leave them); each message's ``name`` list matches
its ``position``, ``velocity`` and ``effort`` to joints by name, so the order may change from
one message to the next. ``position`` gives ``q_<joint>``, a non-empty ``velocity``
``dq_<joint>``, a non-empty ``effort`` ``tau_<joint>``.

**LeRobot datasets** (a folder with ``meta/info.json`` and Parquet files under ``data/``, the
v2 one-file-per-episode and v3 many-episodes-per-file layouts alike; read by ``pyarrow``): one
recording per episode (all, or those selected). Joint names are the feature's ``names``;
``observation.state`` gives ``q_``, ``observation.velocity`` ``dq_``, ``observation.effort``
``tau_`` and ``observation.current`` ``i_`` (motor currents, then ``drive_gains``), time is
``timestamp``. Units are the dataset's: a dataset in degrees needs converting first.

Every failure is one :class:`~physid.errors.InputError` line naming the file, topic, episode or
field.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.recordings.tables import Table, check_equal_lengths

JOINT_STATE = "sensor_msgs/msg/JointState"
LEROBOT_FEATURES = {  # LeRobot feature -> trajectory-contract prefix
    "observation.state": "q_",
    "observation.velocity": "dq_",
    "observation.effort": "tau_",
    "observation.current": "i_",
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
    path: str | Path, *, topic: str | None = None, episodes: tuple[int, ...] = ()
) -> list[Table]:
    """The recordings of a log (module docstring): one table for a bag's JointState topic, one
    per selected episode of a LeRobot dataset (every episode when ``episodes`` is empty)."""
    path = Path(path)
    kind = log_kind(path)
    if kind == "rosbag":
        if episodes:
            raise InputError("--episode selects LeRobot episodes; this is a ROS 2 bag",
                             source=str(path))  # fmt: skip
        return [read_joint_states(path, topic)]
    if kind == "lerobot":
        if topic is not None:
            raise InputError("--topic names a ROS 2 topic; this is a LeRobot dataset",
                             source=str(path))  # fmt: skip
        return read_lerobot(path, episodes)
    raise InputError("not a ROS 2 bag, MCAP file or LeRobot dataset folder", source=str(path))


def _rosbags():
    try:
        from rosbags.highlevel import AnyReader
        from rosbags.typesys import Stores, get_typestore
    except ImportError:  # pragma: no cover - depends on the environment
        raise InputError(
            "reading ROS 2 bags and MCAP files needs rosbags: pip install 'physid[logs]'"
        ) from None
    return AnyReader, get_typestore(Stores.ROS2_HUMBLE)


def read_joint_states(path: Path, topic: str | None = None) -> Table:
    """One JointState topic of a bag folder or an MCAP/SQLite file, as contract columns."""
    any_reader, typestore = _rosbags()
    source = str(path)
    try:
        with any_reader([path], default_typestore=typestore) as reader:
            states = [c for c in reader.connections if c.msgtype == JOINT_STATE]
            topics = sorted({c.topic for c in states})
            if topic is None:
                if len(topics) != 1:
                    listed = ", ".join(topics) or "none"
                    raise InputError(f"{len(topics)} {JOINT_STATE} topics ({listed}): name one "
                                     "with --topic", source=source)  # fmt: skip
                topic = topics[0]
            elif topic not in topics:
                raise InputError(f"no {JOINT_STATE} topic '{topic}'; the bag has: "
                                 f"{', '.join(topics) or 'none'}", source=source)  # fmt: skip
            chosen = [c for c in states if c.topic == topic]
            messages = [
                (log_time, reader.deserialize(raw, connection.msgtype))
                for connection, log_time, raw in reader.messages(connections=chosen)
            ]
    except InputError:
        raise
    except Exception as error:  # noqa: BLE001 - rosbags raises its own error kinds
        message = " ".join(str(error).split()) or type(error).__name__
        raise InputError(f"cannot read the bag: {message}", source=source) from None
    if not messages:
        raise InputError(f"topic '{topic}' has no message", source=source)
    return _joint_state_table(messages, f"{source}:{topic}")


def _joint_state_table(messages: list, source: str) -> Table:
    names = list(messages[0][1].name)
    if not names:
        raise InputError("message 1 names no joint", source=source)
    n = len(messages)
    fields = {"position": "q_", "velocity": "dq_", "effort": "tau_"}
    present = {f: len(getattr(messages[0][1], f)) > 0 for f in fields}
    values = {f: np.full((n, len(names)), np.nan) for f, there in present.items() if there}
    stamps = np.empty(n)
    log_times = np.empty(n)
    for k, (log_time, message) in enumerate(messages):
        stamps[k] = message.header.stamp.sec + 1e-9 * message.header.stamp.nanosec
        log_times[k] = 1e-9 * log_time
        order = list(message.name)
        if sorted(order) != sorted(names):
            raise InputError(
                f"message {k + 1} names joints {order}, message 1 {names}: a topic must carry "
                "the same joints in every message",
                source=source,
            )
        index = [order.index(name) for name in names]
        for field, array in values.items():
            data = np.asarray(getattr(message, field), dtype=float)
            if data.size != len(order):
                raise InputError(f"message {k + 1}: {field} has {data.size} entries for "
                                 f"{len(order)} joints", source=source)  # fmt: skip
            array[k] = data[index]
    t = log_times if not np.any(stamps) else stamps
    columns = {"t": t}
    for field, array in values.items():
        for j, name in enumerate(names):
            columns[fields[field] + name] = array[:, j]
    return Table(columns, source)


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
        raise InputError(f"feature '{feature}' needs a 'names' list of its {shape} entries "
                         "(the joint names)", source=source)  # fmt: skip
    return [str(name) for name in names]


def read_lerobot(path: Path, episodes: tuple[int, ...] = ()) -> list[Table]:
    """The episodes of a LeRobot dataset folder, one contract table each (module docstring)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - depends on the environment
        raise InputError("reading LeRobot datasets needs pyarrow: pip install 'physid[logs]'") \
            from None  # fmt: skip
    source = str(path)
    features = _info(path)["features"]
    mapped = {f: p for f, p in LEROBOT_FEATURES.items() if f in features}
    if "observation.state" not in mapped:
        raise InputError("the dataset has no 'observation.state' feature (joint positions)",
                         source=source)  # fmt: skip
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
    selected = list(episodes) or present
    unknown = [e for e in selected if e not in present]
    if unknown:
        raise InputError(f"episode(s) {unknown} not in the dataset; it has {present[0]}.."
                         f"{present[-1]} ({len(present)} episodes)", source=source)  # fmt: skip
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


def expand_logs(paths: Iterable, topic: str | None = None, episodes: Iterable[int] = ()) -> list:
    """``paths`` with every bag or LeRobot dataset replaced by its recordings (in-memory
    tables, :func:`read_log`); other files are kept as paths, other objects as they are."""
    expanded, logs, episodes = [], 0, tuple(episodes)
    for path in paths:
        if not isinstance(path, str | Path):  # an in-memory recording
            expanded.append(path)
            continue
        path = Path(path)
        if log_kind(path) is not None:
            logs += 1
            expanded.extend(read_log(path, topic=topic, episodes=episodes))
        elif path.is_dir():
            raise InputError(
                f"{path}: a folder that is neither a ROS 2 bag (metadata.yaml) nor a LeRobot "
                "dataset (meta/info.json)"
            )
        else:
            expanded.append(path)
    if (topic is not None or episodes) and logs == 0:
        raise InputError(
            "--topic and --episode select inside a ROS 2 bag, MCAP file or LeRobot "
            "dataset, and no --data is one"
        )
    return expanded
