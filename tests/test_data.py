"""The trajectory contract: every kind of bad input fails with one line naming the culprit."""

from __future__ import annotations

import numpy as np
import pytest

from physid.errors import InputError
from physid.recordings.trajectory import (
    load_trajectory,
    read_table,
    trajectory_csv_text,
    write_trajectory_csv,
)
from physid.robot.model import Transmission, build_robot_model, load_urdf
from physid.sim.arm import arm6_model, arm6_urdf_path

MODEL = arm6_model()
JOINTS = MODEL.joint_names


def csv_file(tmp_path, columns: dict[str, np.ndarray], name: str = "data.csv"):
    path = tmp_path / name
    header = ",".join(columns)
    np.savetxt(
        path, np.column_stack(list(columns.values())), delimiter=",", header=header, comments=""
    )
    return path


def good_columns(n: int = 50) -> dict[str, np.ndarray]:
    t = np.arange(n) * 0.01
    columns = {"t": t}
    for k, joint in enumerate(JOINTS):
        columns[f"q_{joint}"] = 0.5 * np.sin(t + k)
    for k, joint in enumerate(JOINTS):
        columns[f"tau_{joint}"] = np.cos(t + k)
    return columns


def expect_error(path, pattern, **options):
    with pytest.raises(InputError, match=pattern) as error:
        load_trajectory(path, MODEL, **options)
    assert "\n" not in str(error.value)
    return str(error.value)


def test_a_good_file_round_trips_through_csv_npz_and_parquet(tmp_path):
    columns = good_columns()
    reference = load_trajectory(csv_file(tmp_path, columns), MODEL)
    np.savez(tmp_path / "data.npz", **columns)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), tmp_path / "data.parquet")
    for name in ("data.npz", "data.parquet"):
        other = load_trajectory(tmp_path / name, MODEL)
        np.testing.assert_allclose(other.q, reference.q)
        np.testing.assert_allclose(other.tau, reference.tau)
    written = write_trajectory_csv(tmp_path / "copy.csv", reference)
    np.testing.assert_allclose(load_trajectory(written, MODEL).q, reference.q, rtol=1e-9)
    assert trajectory_csv_text(reference).startswith("t,q_joint_1,")


def test_columns_of_joints_the_model_does_not_have_are_ignored_with_a_warning(tmp_path):
    """A ROS JointState often carries a gripper's fingers beside the arm's joints."""
    columns = good_columns()
    columns["q_finger_joint"] = np.full(50, 0.01)
    columns["tau_finger_joint"] = np.full(50, 0.5)
    trajectory = load_trajectory(csv_file(tmp_path, columns), MODEL)
    reference = load_trajectory(csv_file(tmp_path, good_columns(), "good.csv"), MODEL)
    assert np.array_equal(trajectory.q, reference.q)
    assert np.array_equal(trajectory.tau, reference.tau)
    assert any("ignored unknown column(s): q_finger_joint, tau_finger_joint" in w
               for w in [f.message for f in trajectory.warnings])  # fmt: skip


def test_csv_headers_in_another_dialect_are_named(tmp_path):
    text = csv_file(tmp_path, good_columns()).read_text()
    semicolons = tmp_path / "semi.csv"
    semicolons.write_text(text.replace(",", ";"))
    expect_error(semicolons, r"semi.csv: the header has no comma but 12 semicolons")
    trailing = tmp_path / "trail.csv"
    trailing.write_text("".join(line + ",\n" for line in text.splitlines()))
    expect_error(trailing, r"trail.csv: CSV header: column 14 of 14 has no name \(a comma at the")


def test_missing_and_misnamed_columns(tmp_path):
    columns = good_columns()
    columns["q_jiont_3"] = columns.pop("q_joint_3")
    message = expect_error(csv_file(tmp_path, columns), "column 'q_jiont_3' names joint 'jiont_3'")
    assert "data.csv" in message
    columns = good_columns()
    columns["torque_joint_2"] = columns.pop("tau_joint_2")
    expect_error(
        csv_file(tmp_path, columns), r"missing column 'tau_joint_2'.*did you mean 'torque_joint_2'"
    )
    # a joint in the middle of the chain not logged: the config line that holds it still
    columns = {n: v for n, v in good_columns().items() if not n.endswith("_joint_3")}
    expect_error(csv_file(tmp_path, columns), r"missing column 'q_joint_3' \(joint position\); "
                 r"if joint 'joint_3' was not logged, a config holds it still: locked: "
                 r"\{joint_3: <its position, rad or m>\}")  # fmt: skip
    # a logger's own names (ROS-like): the time column suggested, and the manifest that maps them
    columns = {("time" if name == "t" else name.replace("q_", "position_").replace(
        "tau_", "effort_")): values for name, values in good_columns().items()}  # fmt: skip
    message = expect_error(csv_file(tmp_path, columns), r"missing column 't' .*did you mean 'time'")
    columns["%time"] = columns.pop("time")  # rostopic echo -p's header
    expect_error(csv_file(tmp_path, columns), r"missing column 't' .*did you mean '%time'")
    assert "recording manifest given to --data maps a file's own column names" in message
    # a spreadsheet's names with units: the contract's names, with the units said
    columns = {f"{name} [{'s' if name == 't' else 'x'}]": v for name, v in good_columns().items()}
    expect_error(csv_file(tmp_path, columns), r"missing column 't' \(time in seconds\); the "
                 r"column names carry units \('t \[s\]', 'q_joint_1 \[x\]'")  # fmt: skip
    # a logger that namespaces its joints (a newcomer's UR5 log: "ur5_shoulder_pan_joint"): the
    # affix around the model's names is said (it was "not in the model" alone)
    columns = {(name if name == "t" else name.replace("_joint", "_ur5_joint")): v
               for name, v in good_columns().items()}  # fmt: skip
    expect_error(csv_file(tmp_path, columns), r"names joint 'ur5_joint_1', which is not in the "
                 r"model .*with the prefix 'ur5_': rename the columns")  # fmt: skip
    columns = {(name if name == "t" else f"{name}_pos"): v for name, v in good_columns().items()}
    expect_error(csv_file(tmp_path, columns), r"with the suffix '_pos'")
    columns = {(name if name == "t" else f"{name} (rad)"): v for name, v in good_columns().items()}
    expect_error(csv_file(tmp_path, columns), r"names joint 'joint_1 \(rad\)', which is not in "
                 r"the model .* \(the name carries a unit: rename the column "
                 r"'q_joint_1'\)")  # fmt: skip


def test_an_empty_cell_is_named_with_how_pandas_writes_nan(tmp_path):
    path = csv_file(tmp_path, good_columns())
    lines = path.read_text().splitlines()
    cells = lines[6].split(",")
    cells[2] = ""  # pandas' to_csv writes NaN so
    lines[6] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    expect_error(path, r"column 'q_joint_2' row 6 \(line 7\): '' is not a number; an empty cell "
                 r"is how pandas writes a missing value: drop or repair the row \(physid online "
                 r"skips rows written as nan")  # fmt: skip


def test_nan_and_inf_rows_are_named(tmp_path):
    columns = good_columns()
    columns["tau_joint_4"][17] = np.nan
    expect_error(csv_file(tmp_path, columns), r"column 'tau_joint_4' row 18 is nan")
    columns = good_columns()
    columns["q_joint_1"][3] = np.inf
    expect_error(csv_file(tmp_path, columns), r"column 'q_joint_1' row 4 is inf")


def test_time_must_increase(tmp_path):
    columns = good_columns()
    columns["t"][10] = columns["t"][9]
    expect_error(csv_file(tmp_path, columns), r"'t' is not strictly increasing at row 11")
    # one corrupt stamp: the usual advice; stamps that start again: two runs in one file
    columns = good_columns()
    columns["t"][10] = columns["t"][0]
    expect_error(csv_file(tmp_path, columns), r"row 11 .*: sort the rows or repair the time")
    columns = good_columns()
    columns["t"][10:12] = columns["t"][0] + np.array([0.0, 0.001])  # two corrupt stamps
    expect_error(csv_file(tmp_path, columns), r"row 11 .*: sort the rows or repair the time")
    columns = good_columns(60)
    columns["t"][20:] -= columns["t"][20] - columns["t"][0]
    columns["t"][40:] -= columns["t"][40] - columns["t"][0]  # three runs
    expect_error(csv_file(tmp_path, columns), r"row 21 .*2 such rows\): the stamps start again 2 "
                 r"times: recordings appended")  # fmt: skip
    columns = good_columns()
    columns["t"][30:] -= columns["t"][30] - columns["t"][0]
    expect_error(csv_file(tmp_path, columns),
                 r"row 31 .*1 such rows\): the stamps start again: recordings appended in one "
                 r"file\? give each part as its own --data file")  # fmt: skip


def test_mismatched_lengths(tmp_path):
    columns = good_columns()
    columns["tau_joint_6"] = columns["tau_joint_6"][:-3]
    np.savez(tmp_path / "bad.npz", **columns)
    expect_error(tmp_path / "bad.npz", r"column 'tau_joint_6' has 47 rows but 't' has 50")
    csv = tmp_path / "ragged.csv"
    csv.write_text("t,q_joint_1\n0,1\n0.1\n")
    with pytest.raises(InputError, match="ragged.csv"):
        read_table(csv)


def test_positions_in_degrees_are_caught(tmp_path):
    columns = good_columns()
    columns["q_joint_2"] = np.degrees(columns["q_joint_2"]) * 3
    expect_error(csv_file(tmp_path, columns), r"joint 'joint_2' reaches .* looks like degrees")
    assert (
        load_trajectory(csv_file(tmp_path, columns), MODEL, allow_large_angles=True).n_samples == 50
    )


def test_currents_need_drive_gains(tmp_path):
    columns = good_columns()
    columns["i_joint_1"] = columns.pop("tau_joint_1")
    expect_error(csv_file(tmp_path, columns), r"'i_joint_1' is a motor current but no drive gain")
    trajectory = load_trajectory(csv_file(tmp_path, columns), MODEL, drive_gains={"joint_1": 2.5})
    np.testing.assert_allclose(trajectory.tau[:, 0], 2.5 * columns["i_joint_1"])


def test_unknown_columns_are_reported_not_used(tmp_path):
    columns = good_columns()
    columns["temperature"] = np.ones(50)
    trajectory = load_trajectory(csv_file(tmp_path, columns), MODEL)
    assert any("temperature" in w for w in [f.message for f in trajectory.warnings])


def test_the_csvs_users_bring_read_as_the_plain_file(tmp_path):
    """A probe's newcomer files (2026-11-28): a text column physid does not read ('mode' of
    RUN), an empty spare column, quoted names and cells (pandas' QUOTE_NONNUMERIC, R's
    write.csv), pandas' index column with an empty name. Each stopped the run; each now reads
    as the plain file, what was not read named in a warning. Text in a column physid reads is
    still an error naming its row."""
    columns = good_columns()
    plain = load_trajectory(csv_file(tmp_path, columns), MODEL)
    names = list(columns)
    rows = np.column_stack(list(columns.values()))

    def written(name: str, header: str, line) -> object:  # noqa: ANN001
        path = tmp_path / name
        path.write_text(header + "\n" + "\n".join(line(k, row) for k, row in enumerate(rows)))
        return path

    def same(path) -> list[str]:  # noqa: ANN001
        trajectory = load_trajectory(path, MODEL)
        np.testing.assert_array_equal(trajectory.q, plain.q)
        np.testing.assert_array_equal(trajectory.tau, plain.tau)
        return [f.message for f in trajectory.warnings]

    def cells(row) -> str:  # noqa: ANN001
        return ",".join(repr(float(v)) for v in row)

    text = same(written("text.csv", ",".join([*names, "mode"]), lambda k, r: f"{cells(r)},RUN"))
    assert any("column 'mode' holds text (row 1, line 2: 'RUN')" in w for w in text), text
    empty = same(written("empty.csv", ",".join([*names, "spare"]), lambda k, r: f"{cells(r)},"))
    assert any("column 'spare' is empty" in w for w in empty), empty
    same(written("quoted.csv", ",".join(f'"{n}"' for n in names), lambda k, r: cells(r)))
    same(written("r.csv", ",".join(f'"{n}"' for n in ["", *names]),
                 lambda k, r: f'"{k + 1}",' + ",".join(f'"{float(v)!r}"' for v in r)))  # fmt: skip
    index = same(written("index.csv", ",".join(["", *names]), lambda k, r: f"{k},{cells(r)}"))
    assert any("Unnamed: 0" in w for w in index), index
    bad = written(
        "bad.csv",
        ",".join(names),
        lambda k, r: cells(r).replace(repr(float(r[3])), "x", 1) if k == 4 else cells(r),
    )
    expect_error(bad, rf"column '{names[3]}' row 5 \(line 6\): 'x' is not a number")


def test_a_file_without_time_and_clock_stamps_without_digits_get_their_fix(tmp_path):
    """A probe's newcomer files: no 't' column (a sample index only) was told "missing column
    't'" with no route; epoch stamps written with 10 significant digits (whole seconds) were
    told to sort the rows."""
    columns = good_columns()
    del columns["t"]
    expect_error(csv_file(tmp_path, columns, "no_t.csv"), r"manifest gives it with sample_time")
    columns = good_columns(500)
    columns["t"] = np.floor(1.7e9 + columns["t"])
    message = expect_error(csv_file(tmp_path, columns, "epoch.csv"), r"the stamps repeat")
    assert "too few digits" in message and "sort the rows" not in message


def test_manifest_and_motor_side_conversion(tmp_path):
    ratio = np.diag([10.0, 20.0, 30.0, 40.0, 50.0, 60.0])
    ratio[5, 4] = 60.0
    transmission = Transmission(
        tuple(f"m{k}" for k in range(1, 7)), ratio, np.r_[0, 0.5, 0, 0, 0, 0]
    )
    model = build_robot_model(load_urdf(arm6_urdf_path()), transmission=transmission)
    rng = np.random.default_rng(0)
    q_joint = rng.uniform(-1, 1, (40, 6))
    tau_motor = rng.standard_normal((40, 6))
    q_motor = transmission.motor_positions(q_joint)
    np.savetxt(
        tmp_path / "pos.csv",
        q_motor,
        delimiter=",",
        header=",".join(f"J{k}" for k in range(6)),
        comments="",
    )
    np.savez(tmp_path / "cur.npz", currents=tau_motor)
    manifest = tmp_path / "rec.yaml"
    manifest.write_text(
        "format: physid.recording/1\nsample_time: 0.002\nsources:\n"
        "  - file: pos.csv\n    columns: {"
        + ", ".join(f"qm_m{k + 1}: J{k}" for k in range(6))
        + "}\n"
        "  - file: cur.npz\n    columns: {"
        + ", ".join(f"taum_m{k + 1}: 'currents[{k}]'" for k in range(6))
        + "}\n"
    )
    trajectory = load_trajectory(manifest, model)
    np.testing.assert_allclose(trajectory.q, q_joint, atol=1e-12)
    np.testing.assert_allclose(trajectory.tau, tau_motor @ ratio)
    np.testing.assert_allclose(trajectory.t[:3], [0.0, 0.002, 0.004])
    manifest.write_text(
        "format: physid.recording/1\nsources:\n  - file: pos.csv\n    columns: {qm_m1: J0}\n"
    )
    with pytest.raises(InputError, match="sample_time"):
        load_trajectory(manifest, model)


@pytest.mark.parametrize(
    ("text", "plain_numbers"),
    [
        ("t,q\n0,1.5\n1,2e-3\n", True),
        ("t,q\n0,nan\n1,inf\n2,-inf\n", True),
        ("t, q\n0, 1.5\n\n1 ,2\n+.5,-0\n", True),
        ("t,q\n# comment\n0,1\n", False),
        ("t,q\n0,\n1,2\n", False),
        ("t,q\n0,abc\n", False),
        ("t,q\n0,1,2\n1,2\n", False),
        ("t,q\n", False),
    ],
)
def test_fast_csv_parser_reads_what_loadtxt_reads_or_defers_to_it(
    tmp_path, text, plain_numbers
) -> None:
    pytest.importorskip("pyarrow")
    from physid.recordings.tables import parse_csv_numbers_fast

    path = tmp_path / "x.csv"
    path.write_text(text)
    fast = parse_csv_numbers_fast(path, ["t", "q"])
    if not plain_numbers:  # comments, empty cells, text, ragged rows, no rows: np.loadtxt's job
        assert fast is None
        return
    reference = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2, dtype=float)
    assert fast is not None and np.array_equal(fast, reference, equal_nan=True)


@pytest.mark.parametrize("zone", ["", "Z", "+02:00"])
def test_iso_8601_time_stamps_read_as_seconds_since_the_epoch(tmp_path, zone):
    """A logger's date-time column (pandas' to_csv of a datetime index, a bag exported to CSV)
    reads as the numeric file with t = seconds since 1970-01-01 UTC, through the whole-file and
    the block-by-block readers; a stamp without a zone is UTC, '+02:00' is two hours earlier in
    UTC; a 'stamp' column mapped onto t by a recording manifest as well. A cell that is neither a
    number nor a date-time is still an error naming its row."""
    import datetime

    from physid.recordings.streamed import open_recording

    columns = good_columns()
    plain = load_trajectory(csv_file(tmp_path, columns), MODEL)
    start = datetime.datetime(2026, 11, 28, 9, 30, 0)
    stamps = [(start + datetime.timedelta(seconds=float(s))).isoformat(sep=" " if zone else "T",
                                                                         timespec="microseconds")
              + zone for s in columns["t"]]  # fmt: skip
    names = list(columns)
    lines = [",".join(names)] + [
        ",".join([stamps[k], *(repr(float(columns[n][k])) for n in names[1:])])
        for k in range(len(stamps))
    ]
    path = tmp_path / "iso.csv"
    path.write_text("\n".join(lines) + "\n")
    epoch = start.replace(tzinfo=datetime.UTC).timestamp()
    epoch -= 7200.0 if zone == "+02:00" else 0.0
    for trajectory in (load_trajectory(path, MODEL),
                       open_recording(path, MODEL, block_rows=20).in_memory()):  # fmt: skip
        np.testing.assert_allclose(trajectory.t - epoch, plain.t, rtol=0, atol=2e-6)
        np.testing.assert_array_equal(trajectory.q, plain.q)
        np.testing.assert_array_equal(trajectory.tau, plain.tau)
    assert any("ISO 8601" in w for w in [f.message for f in load_trajectory(path, MODEL).warnings])
    # a logger's 'stamp' column that a recording manifest maps onto t
    (tmp_path / "stamp.csv").write_text("\n".join(["stamp" + lines[0][1:], *lines[1:]]) + "\n")
    mapped = ", ".join(["t: stamp", *(f"{n}: {n}" for n in names[1:])])
    (tmp_path / "stamp.yaml").write_text(
        f"format: physid.recording/1\nsources:\n  - file: stamp.csv\n    columns: {{{mapped}}}\n"
    )
    manifest = load_trajectory(tmp_path / "stamp.yaml", MODEL)
    np.testing.assert_allclose(manifest.t - epoch, plain.t, rtol=0, atol=2e-6)
    lines[9] = lines[9].replace(stamps[8], "28/11/2026 09:30:00.08", 1)
    path.write_text("\n".join(lines) + "\n")
    expect_error(path, r"column 't' row 9 \(line 10\): '28/11/2026 09:30:00.08' is not a number "
                       r"or an ISO 8601 date-time")  # fmt: skip


def test_a_gzipped_csv_reads_as_the_plain_file(tmp_path, monkeypatch):
    """``run.csv.gz`` (a logger's compressed export) reads as ``run.csv`` through the whole-file
    reader, a YAML manifest and the block-by-block reader; a damaged archive is one line naming
    the file (whole-file and blocks)."""
    import gzip

    from physid.recordings import streamed

    columns = good_columns(300)
    plain_path = csv_file(tmp_path, columns)
    plain = load_trajectory(plain_path, MODEL)
    packed = tmp_path / "run.csv.gz"
    packed.write_bytes(gzip.compress(plain_path.read_bytes()))
    mapped = ", ".join(f"{name}: {name}" for name in columns)
    (tmp_path / "run.yaml").write_text(
        "format: physid.recording/1\nbad_rows: drop\nsources:\n"
        f"  - file: run.csv.gz\n    columns: {{{mapped}}}\n"
    )
    monkeypatch.setattr(streamed, "STREAM_BYTES", 1_000)  # the 300 rows are read in blocks
    assert streamed.should_stream(packed) and not streamed.should_stream(tmp_path / "x.csv.gz")
    readers = (
        lambda: load_trajectory(packed, MODEL),  # fmt: skip
        lambda: load_trajectory(tmp_path / "run.yaml", MODEL),
        lambda: streamed.open_recording(packed, MODEL, block_rows=64).in_memory(),
    )
    for trajectory in (read() for read in readers):
        np.testing.assert_array_equal(trajectory.t, plain.t)
        np.testing.assert_array_equal(trajectory.q, plain.q)
        np.testing.assert_array_equal(trajectory.tau, plain.tau)
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(packed.read_bytes()[: len(packed.read_bytes()) // 2])
    expect_error(cut, r"cut.csv.gz: the data file is a damaged gzip archive")
    with pytest.raises(InputError, match=r"cut.csv.gz: the data file is a damaged gzip archive"):
        streamed.open_recording(cut, MODEL, block_rows=64)


def test_a_plain_csv_is_parsed_without_holding_its_whole_text(tmp_path, monkeypatch):
    """The fast parser reads the file itself; the whole text (bytes and string: twice the file,
    2 x 241 MB for a 1e6-row online log) is read only when it cannot. A file it cannot read
    (an archive under .csv) still gets the whole-file reader's words."""
    pytest.importorskip("pyarrow")
    from physid.recordings import tables

    path = csv_file(tmp_path, good_columns())
    expected = read_table(path).columns

    def refused(*_args, **_kwargs):
        raise AssertionError("the whole text was read")

    monkeypatch.setattr(tables, "read_text_file", refused)
    for name, values in read_table(path).columns.items():
        np.testing.assert_array_equal(values, expected[name])
    monkeypatch.undo()
    (tmp_path / "zip.csv").write_bytes(b"PK\x03\x04" + path.read_bytes())
    expect_error(tmp_path / "zip.csv", r"zip.csv: the data file is a zip archive")
