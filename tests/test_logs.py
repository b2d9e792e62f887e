"""Recordings as robots log them (issue 26 item 1): ROS 2 bags (MCAP and SQLite storage), bare
MCAP files and LeRobot datasets, written here with the libraries robots use (rosbags, pyarrow)
and read back through the commands that take --data; they must give what the equivalent CSV
gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import mujoco
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore
from test_mjcf import ARM, JOINTS, _recording

from physid.cli import main
from physid.errors import InputError
from physid.recordings.logs import read_log
from physid.recordings.trajectory import read_table

TYPESTORE = get_typestore(Stores.ROS2_HUMBLE)
JOINT_STATE = TYPESTORE.types["sensor_msgs/msg/JointState"]
HEADER = TYPESTORE.types["std_msgs/msg/Header"]
TIME = TYPESTORE.types["builtin_interfaces/msg/Time"]


def _columns(table) -> dict[str, np.ndarray]:
    return {name: np.asarray(values) for name, values in table.columns.items()}


def write_bag(folder: Path, columns: dict, plugin: StoragePlugin, topics=("/joint_states",)):
    """Every row of ``columns`` as a JointState message (joint order reversed on odd rows, as
    a driver may), on each topic."""
    nanoseconds = np.round(columns["t"] * 1e9).astype(np.int64)
    with Writer(folder, version=9, storage_plugin=plugin) as writer:
        connections = [writer.add_connection(topic, JOINT_STATE.__msgtype__, typestore=TYPESTORE)
                       for topic in topics]  # fmt: skip
        for k, stamp in enumerate(nanoseconds):
            order = list(JOINTS) if k % 2 == 0 else list(reversed(JOINTS))
            message = JOINT_STATE(
                header=HEADER(
                    stamp=TIME(sec=int(stamp // 10**9), nanosec=int(stamp % 10**9)), frame_id="base"
                ),  # fmt: skip
                name=order,
                position=np.array([columns[f"q_{j}"][k] for j in order]),
                velocity=np.array([columns[f"dq_{j}"][k] for j in order]),
                effort=np.array([columns[f"tau_{j}"][k] for j in order]),
            )
            raw = TYPESTORE.serialize_cdr(message, JOINT_STATE.__msgtype__)
            for connection in connections:
                writer.write(connection, int(stamp), raw)


def write_lerobot(folder: Path, episodes: list[dict], suffixed: bool = False) -> None:
    """A LeRobot v2-layout dataset: meta/info.json and one Parquet file per episode;
    ``suffixed``: the readings named "<joint>.pos", ".vel", ".effort" as LeRobot's robots do."""

    def feature(suffix: str) -> dict:
        names = [joint + (suffix if suffixed else "") for joint in JOINTS]
        return {"dtype": "float32", "shape": [len(JOINTS)], "names": names}

    info = {
        "codebase_version": "v2.1",
        "fps": 500,
        "data_path": "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
        "features": {
            "observation.state": feature(".pos"),
            "observation.velocity": feature(".vel"),
            "observation.effort": {
                **feature(".effort"),
                "names": {"motors": feature(".effort")["names"]},
            },
            "timestamp": {"dtype": "float32", "shape": [1], "names": None},
            "episode_index": {"dtype": "int64", "shape": [1], "names": None},
        },
    }
    (folder / "meta").mkdir(parents=True)
    (folder / "meta" / "info.json").write_text(json.dumps(info))
    for index, columns in enumerate(episodes):
        n = len(columns["t"])

        def stack(prefix: str, columns: dict = columns) -> np.ndarray:
            return np.column_stack([columns[prefix + j] for j in JOINTS])

        table = pa.table({
            "observation.state": list(stack("q_")),
            "observation.velocity": list(stack("dq_")),
            "observation.effort": list(stack("tau_")),
            "timestamp": columns["t"],
            "frame_index": np.arange(n),
            "episode_index": np.full(n, index),
        })  # fmt: skip
        path = folder / "data" / "chunk-000" / f"episode_{index:06d}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, path)


@pytest.fixture(scope="module")
def logged(tmp_path_factory) -> dict:
    """One recording of the MJCF arm as CSV, bag folders (MCAP, SQLite), a bare MCAP file and a
    two-episode LeRobot dataset; ``dq_`` columns included (the velocity field)."""
    folder = tmp_path_factory.mktemp("logs")
    (folder / "arm.xml").write_text(ARM, encoding="utf-8")
    truth = mujoco.MjModel.from_xml_path(str(folder / "arm.xml"))
    paths = {"urdf": folder / "arm.xml"}
    for name, seed in (("train", 1), ("other", 2)):
        _recording(folder / f"{name}_raw.csv", truth, seed=seed, seconds=6.0)
        table = _columns(read_table(folder / f"{name}_raw.csv"))
        for joint in JOINTS:  # a logged velocity, as a driver reports it
            table[f"dq_{joint}"] = np.gradient(table[f"q_{joint}"], table["t"])
        header = ",".join(table)
        np.savetxt(folder / f"{name}.csv", np.column_stack(list(table.values())), delimiter=",",
                   header=header, comments="")  # fmt: skip
        paths[f"{name}_columns"] = table
        paths[name] = folder / f"{name}.csv"
    train = paths["train_columns"]
    write_bag(folder / "bag_mcap", train, StoragePlugin.MCAP)
    write_bag(folder / "bag_sqlite", train, StoragePlugin.SQLITE3)
    shutil.copy(next((folder / "bag_mcap").glob("*.mcap")), folder / "run.mcap")
    write_bag(folder / "two_topics", train, StoragePlugin.MCAP, ("/left", "/right"))
    write_lerobot(folder / "lerobot", [train, paths["other_columns"]])
    paths.update(folder=folder)
    return paths


@pytest.mark.parametrize("log", ["bag_mcap", "bag_sqlite", "run.mcap"])
def test_a_bag_reads_as_the_csv(logged, log):
    (table,) = read_log(logged["folder"] / log)
    expected = logged["train_columns"]
    assert set(table.columns) == set(expected)
    np.testing.assert_allclose(table.columns["t"], expected["t"], rtol=0, atol=1e-9)
    for name in expected:
        if name != "t":
            np.testing.assert_array_equal(table.columns[name], expected[name])


def test_a_lerobot_dataset_reads_one_recording_per_episode(logged):
    tables = read_log(logged["folder"] / "lerobot")
    assert len(tables) == 2 and tables[1].source.endswith("episode 1")
    for table, name in zip(tables, ("train_columns", "other_columns"), strict=True):
        for column, values in logged[name].items():
            np.testing.assert_array_equal(table.columns[column], values)
    (only,) = read_log(logged["folder"] / "lerobot", episodes=(1,))
    assert only.source.endswith("episode 1")


def test_episode_selects_the_training_runs_and_the_held_out_runs_keep_the_rest(logged, tmp_path):
    """--episode selects in --data's datasets (a probe's LeRobot arm: --data a --episode 0
    --validate b judged episode 0 of b alone, its other held-out episode, 11.6 %, dropped
    silently). Another list reads its datasets whole, but what --data took from the same one."""
    from physid.errors import InputError
    from physid.recordings.logs import expand_log_lists

    def sources(lists):
        return [[table.source.rsplit(":", 1)[1] for table in tables] for tables in lists]

    dataset = logged["folder"] / "lerobot"
    other = tmp_path / "held"
    shutil.copytree(dataset, other)
    assert sources(expand_log_lists(([dataset], [other]), None, (0,))) == [
        ["episode 0"],
        ["episode 0", "episode 1"],
    ]
    assert sources(expand_log_lists(([dataset], [dataset]), None, (0,))) == [
        ["episode 0"],
        ["episode 1"],
    ]
    assert (
        sources(expand_log_lists(([dataset], [dataset]), None, ()))
        == [["episode 0", "episode 1"]] * 2
    )  # whole, as given: identify then says so
    # no dataset among the training runs: the episodes select in the held-out ones
    (csv,), held = expand_log_lists(([logged["train"]], [other]), None, (1,))
    assert csv == logged["train"] and sources([held]) == [["episode 1"]]
    with pytest.raises(InputError, match="none is left to hold out"):
        expand_log_lists(([dataset], [dataset]), None, (0, 1))


def test_lerobot_reading_names_lose_their_suffix(logged, tmp_path):
    """LeRobot's robots (the SO-100/101 arms) name readings "shoulder_pan.pos": the joint is
    "shoulder_pan"."""
    write_lerobot(tmp_path / "suffixed", [logged["train_columns"]], suffixed=True)
    (table,) = read_log(tmp_path / "suffixed")
    for column, values in logged["train_columns"].items():
        np.testing.assert_array_equal(table.columns[column], values)


def _identify(logged, data: list[str], out: Path, *extra: str) -> dict:
    run = CliRunner().invoke(main, ["identify", "--model", str(logged["urdf"]), *data,
                                    "--out", str(out), "--quiet", *extra])  # fmt: skip
    assert run.exit_code in (0, 3), run.output
    return json.loads((out / "params.json").read_text())


def _standard(params: dict) -> np.ndarray:
    return np.array(params["standard_parameters"]["values"], dtype=float)


def test_identify_from_an_mcap_file_gives_the_csv_parameters(logged, tmp_path):
    csv = _identify(logged, ["--data", str(logged["train"])], tmp_path / "csv")
    bag = _identify(logged, ["--data", str(logged["folder"] / "run.mcap")], tmp_path / "bag")
    np.testing.assert_allclose(_standard(bag), _standard(csv), rtol=1e-9, atol=1e-12)
    assert bag["fit"]["train"]["relative_error"] < 0.02
    # the logged velocities (no accelerations) are not used, and that is said (was silent)
    (unused,) = [f for f in csv["findings"] if f["code"] == "ID108"]
    assert unused["message"].startswith(
        "the recordings' dq_ columns are not used: velocities come from the positions"
    )


def test_online_replays_a_bag(logged, tmp_path):
    runs = {}
    for name, data in (("csv", logged["train"]), ("bag", logged["folder"] / "bag_sqlite")):
        run = CliRunner().invoke(main, ["online", "--model", str(logged["urdf"]), "--data",
                                        str(data), "--body", "elbow", "--out",
                                        str(tmp_path / name), "--quiet"])  # fmt: skip
        assert run.exit_code in (0, 3), run.output
        runs[name] = json.loads((tmp_path / name / "summary.json").read_text())
    csv, bag = (runs[k]["bodies"]["elbow"]["final"]["mass"] for k in ("csv", "bag"))
    assert bag == pytest.approx(csv, rel=1e-9)


@pytest.mark.parametrize(
    "log, options, message",
    [
        ("two_topics", {}, r"2 sensor_msgs/msg/JointState topics \(/left, /right\)"),
        ("two_topics", {"topic": "/middle"}, "no sensor_msgs/msg/JointState topic '/middle'"),
        ("lerobot", {"episodes": (7,)}, r"episode\(s\) \[7\] not in the dataset"),
        ("lerobot", {"topic": "/x"}, "--topic names a ROS 2 topic"),
        ("bag_mcap", {"episodes": (0,)}, "--episode selects LeRobot episodes"),
    ],
)
def test_a_wrong_selection_is_one_line_naming_it(logged, log, options, message):
    with pytest.raises(InputError, match=message) as caught:
        read_log(logged["folder"] / log, **options)
    assert "\n" not in str(caught.value) and log in str(caught.value)


def test_the_cli_refuses_folders_and_selectors_that_are_not_logs(logged, tmp_path):
    runner = CliRunner()
    base = ["identify", "--model", str(logged["urdf"]), "--out", str(tmp_path / "o"), "--quiet"]
    run = runner.invoke(main, [*base, "--data", str(tmp_path)])
    assert run.exit_code == 2 and "neither a ROS 2 bag" in run.output
    run = runner.invoke(main, [*base, "--data", str(logged["train"]), "--topic", "/j"])
    assert run.exit_code == 2 and "no --data is one" in run.output
    corrupt = tmp_path / "broken.mcap"
    corrupt.write_bytes(b"not an mcap file")
    run = runner.invoke(main, [*base, "--data", str(corrupt)])
    assert run.exit_code == 2 and "cannot read the bag" in run.output
    assert "Traceback" not in run.output
    # overwritten in the middle (a probe's bag: "Python int too large to convert to C ssize_t")
    damaged = bytearray((logged["folder"] / "run.mcap").read_bytes())
    middle = len(damaged) // 2
    damaged[middle : middle + 4000] = np.random.default_rng(0).bytes(4000)
    (tmp_path / "damaged.mcap").write_bytes(bytes(damaged))
    run = runner.invoke(main, [*base, "--data", str(tmp_path / "damaged.mcap")])
    assert run.exit_code == 2 and "cannot read the bag" in run.output, run.output
    assert "Traceback" not in run.output and len(run.output.strip().splitlines()) == 1
    # no JointState topic: what the bag holds is listed (it said "0 ... topics (none): name one
    # with --topic", which cannot help)
    string = TYPESTORE.types["std_msgs/msg/String"]
    with Writer(tmp_path / "chatter", version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection("/chatter", string.__msgtype__, typestore=TYPESTORE)
        for k in range(10):
            writer.write(connection, 10**9 + k * 10**6,
                         TYPESTORE.serialize_cdr(string(data="x"), string.__msgtype__))  # fmt: skip
    run = runner.invoke(main, [*base, "--data", str(tmp_path / "chatter")])
    assert (
        run.exit_code == 2
        and (
            "no sensor_msgs/msg/JointState topic: physid reads joint "
            "positions and efforts from one; the bag has /chatter "
            "(std_msgs/msg/String)"
        )
        in run.output
    ), run.output
    # a recording stopped before it was closed: its messages are there, its footer is not
    truncated = tmp_path / "truncated.mcap"
    data = (logged["folder"] / "run.mcap").read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    run = runner.invoke(main, [*base, "--data", str(truncated)])
    assert run.exit_code == 2 and "never closed" in run.output and "mcap recover" in run.output


def test_payload_reads_bags_and_lerobot_datasets_as_the_csv(logged, tmp_path):
    """`physid payload --data/--unloaded` (and `identify --loaded-data`) take bags and LeRobot
    datasets like every other --data; until 2026-11-27 they took files only (a bag folder was
    refused by the option's type). The arm's tool 0.5 kg heavier, logged as CSV, bag and
    LeRobot dataset: the same payload from each, within 10 % of the 0.5 kg."""
    folder = tmp_path / "loaded"
    folder.mkdir()
    box = 'size="0.025 0.02 0.02" mass='
    heavier = ARM.replace(box + '"0.35"', box + '"0.85"')
    assert heavier != ARM
    (folder / "arm.xml").write_text(heavier, encoding="utf-8")
    _recording(folder / "raw.csv", mujoco.MjModel.from_xml_path(str(folder / "arm.xml")), seed=3,
               seconds=6.0)  # fmt: skip
    table = _columns(read_table(folder / "raw.csv"))
    for joint in JOINTS:
        table[f"dq_{joint}"] = np.gradient(table[f"q_{joint}"], table["t"])
    np.savetxt(folder / "loaded.csv", np.column_stack(list(table.values())), delimiter=",",
               header=",".join(table), comments="")  # fmt: skip
    write_bag(folder / "bag", table, StoragePlugin.MCAP)
    write_lerobot(folder / "lerobot", [table])
    params = tmp_path / "robot"
    _identify(logged, ["--data", str(logged["other"])], params)
    sources = {"csv": (folder / "loaded.csv", logged["train"]),
               "bag": (folder / "bag", logged["folder"] / "bag_mcap"),
               "lerobot": (folder / "lerobot", logged["folder"] / "bag_sqlite")}  # fmt: skip
    masses = {}
    for name, (loaded, unloaded) in sources.items():
        run = CliRunner().invoke(main, [
            "payload", "--model", str(logged["urdf"]), "--params", str(params / "params.json"),
            "--data", str(loaded), "--unloaded", str(unloaded), "--link", "tool",
            "--out", str(tmp_path / name)])  # fmt: skip
        assert run.exit_code == 0, run.output
        masses[name] = json.loads((tmp_path / name / "payload.json").read_text())["mass"]
    assert masses["csv"] == pytest.approx(0.5, rel=0.1)
    for name in ("bag", "lerobot"):
        assert masses[name] == pytest.approx(masses["csv"], rel=1e-9)


def test_a_selector_applies_to_the_one_list_that_holds_a_bag(logged, tmp_path):
    """`--data run.csv --validate bag --topic /left`: the topic selects in the bag; each list
    checked alone refused the CSV's list ("no --data is one") until 2026-11-27."""
    params = _identify(logged, ["--data", str(logged["train"]), "--validate",
                                str(logged["folder"] / "two_topics"), "--topic", "/left"],
                       tmp_path / "mixed")  # fmt: skip
    assert params["fit"]["validation"]["n_samples"] > 0
    run = CliRunner().invoke(main, ["identify", "--model", str(logged["urdf"]), "--data",
                                    str(logged["train"]), "--validate", str(logged["other"]),
                                    "--topic", "/left", "--out", str(tmp_path / "o")])  # fmt: skip
    assert run.exit_code == 2 and "no --data is one" in run.output


def write_messages(folder: Path, messages: list[tuple]) -> Path:
    """A bag of one /joint_states topic whose messages are ``(log time ns, header stamp ns,
    names, position, velocity, effort)`` as given (a driver's quirks included)."""
    with Writer(folder, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection("/joint_states", JOINT_STATE.__msgtype__,
                                           typestore=TYPESTORE)  # fmt: skip
        for log_ns, stamp, names, position, velocity, effort in messages:
            header = HEADER(stamp=TIME(sec=int(stamp) // 10**9, nanosec=int(stamp) % 10**9),
                            frame_id="base")  # fmt: skip
            message = JOINT_STATE(header=header, name=list(names),
                                  position=np.asarray(position, float),
                                  velocity=np.asarray(velocity, float),
                                  effort=np.asarray(effort, float))  # fmt: skip
            writer.write(connection, int(log_ns),
                         TYPESTORE.serialize_cdr(message, JOINT_STATE.__msgtype__))  # fmt: skip
    return folder


def test_two_publishers_and_partial_messages_on_one_topic(logged, tmp_path):
    """The usual ROS layout: the arm's joint_state_broadcaster and a gripper driver both publish
    /joint_states (it was refused: "a topic must carry the same joints in every message"); the
    arm's driver sends the effort with every other message only and the velocity with some (the
    first message decided whether a field was read at all, or the read failed). The arm's
    messages with effort give the rows, exactly the CSV's there; the gripper's joint is
    interpolated to them; the velocity, not in every message, is left out; the notes say each."""
    train = logged["train_columns"]
    stamps = np.round(train["t"] * 1e9).astype(np.int64)
    messages = []
    for k, stamp in enumerate(stamps):
        effort = [train[f"tau_{j}"][k] for j in JOINTS] if k % 2 == 0 else []
        velocity = [train[f"dq_{j}"][k] for j in JOINTS] if k % 3 else []
        position = [train[f"q_{j}"][k] for j in JOINTS]
        messages.append((stamp, stamp, JOINTS, position, velocity, effort))
        if k % 5 == 0:  # the gripper at a fifth of the rate, stamped just after
            messages.append((stamp + 1000, stamp + 1000, ["gripper"], [0.01 + 1e-3 * k], [0.0],
                             []))  # fmt: skip
    (table,) = read_log(write_messages(tmp_path / "two_publishers", messages))
    rows = np.arange(0, len(stamps), 2)
    np.testing.assert_allclose(table.columns["t"], train["t"][rows], rtol=0, atol=1e-9)
    for joint in JOINTS:
        np.testing.assert_array_equal(table.columns[f"q_{joint}"], train[f"q_{joint}"][rows])
        np.testing.assert_array_equal(table.columns[f"tau_{joint}"], train[f"tau_{joint}"][rows])
    assert not any(name.startswith("dq_") for name in table.columns)
    np.testing.assert_allclose(table.columns["q_gripper"][::5], 0.01 + 1e-3 * rows[::5],
                               atol=1e-5)  # fmt: skip
    notes = " ".join(table.notes)
    assert f"{len(stamps) // 2} messages without every joint's position or effort" in notes
    assert "another publisher (joints gripper) interpolated" in notes
    assert "velocity left out" in notes


def test_header_stamps_that_jump_back_give_way_to_the_log_times(logged, tmp_path):
    """A clock that jumps back 0.5 s mid-run (header stamps) while the bag's log times go on:
    the stamps were refused ("sort the rows"), which would interleave two stretches of motion.
    The log times are the time base, and a note says why; stamps that only repeat (a message
    sent twice) are left to the duplicate-row check."""
    train = logged["train_columns"]
    stamps = np.round(train["t"] * 1e9).astype(np.int64)
    half = len(stamps) // 2
    messages = [
        (
            stamp,
            stamp - (500_000_000 if k >= half else 0),
            JOINTS,
            [train[f"q_{j}"][k] for j in JOINTS],
            [train[f"dq_{j}"][k] for j in JOINTS],
            [train[f"tau_{j}"][k] for j in JOINTS],
        )
        for k, stamp in enumerate(stamps)
    ]
    folder = write_messages(tmp_path / "clock_jump", messages)
    (table,) = read_log(folder)
    np.testing.assert_allclose(table.columns["t"], train["t"], rtol=0, atol=1e-9)
    (note,) = table.notes
    assert f"run back at message {len(stamps) // 2 + 1}" in note and "log times" in note


def test_epoch_stamps_keep_their_nanoseconds(logged, tmp_path):
    """A real bag's stamps count from 1970 (1.7e9 s): as float64 seconds they are 2.4e-7 s
    apart, which moved the fitted parameters by up to 5e-4 against the same bag stamped from 0.
    Read from a whole second near the start, every step keeps its nanoseconds."""
    train = logged["train_columns"]
    shifted = dict(train)
    shifted["t"] = train["t"] + 1_700_000_000.123456789  # written to the bag in whole ns
    write_bag(tmp_path / "epoch", shifted, StoragePlugin.MCAP)
    (table,) = read_log(tmp_path / "epoch")
    t = table.columns["t"]
    assert 0.0 <= t[0] < 1.0
    steps = np.diff(np.round(shifted["t"] * 1e9).astype(np.int64)) * 1e-9
    np.testing.assert_allclose(np.diff(t), steps, rtol=0, atol=1e-12)
