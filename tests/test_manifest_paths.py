"""Recording manifests may name data kept outside the repository through environment variables."""

from __future__ import annotations

import numpy as np
import pytest

from physid.errors import InputError
from physid.recordings.manifest import read_recording


def _manifest(folder, file_entry: str):
    path = folder / "recording.yaml"
    path.write_text(
        "format: physid.recording/1\n"
        "sources:\n"
        f"  - file: {file_entry}\n"
        "    columns: {t: t, q_j1: q, tau_j1: tau}\n",
        encoding="utf-8",
    )
    return path


def test_an_environment_variable_in_a_source_path_is_expanded(tmp_path, monkeypatch):
    store = tmp_path / "elsewhere"
    store.mkdir()
    t = np.linspace(0.0, 1.0, 11)
    np.savez(store / "run.npz", t=t, q=np.sin(t), tau=np.cos(t))
    monkeypatch.setenv("PHYSID_TEST_STORE", str(store))
    table = read_recording(_manifest(tmp_path, "${PHYSID_TEST_STORE}/run.npz"))
    assert np.allclose(table.columns["q_j1"], np.sin(t))


def test_an_unset_variable_is_named(tmp_path, monkeypatch):
    monkeypatch.delenv("PHYSID_UNSET_STORE", raising=False)
    with pytest.raises(InputError, match="environment variable not set"):
        read_recording(_manifest(tmp_path, "${PHYSID_UNSET_STORE}/run.npz"))


def _headerless(folder, header: str = "false"):
    path = folder / "dump.yaml"
    path.write_text(
        "format: physid.recording/1\n"
        "sample_time: 0.01\n"
        "sources:\n"
        "  - file: dump.csv\n"
        f"    header: {header}\n"
        "    columns: {q_j1: 0, tau_j1: 2}\n",
        encoding="utf-8",
    )
    return path


def test_a_csv_without_a_header_is_read_by_column_position(tmp_path):
    values = np.column_stack([np.sin(np.arange(20.0)), np.zeros(20), np.cos(np.arange(20.0))])
    np.savetxt(tmp_path / "dump.csv", values, delimiter=",")
    table = read_recording(_headerless(tmp_path))
    np.testing.assert_array_equal(table.columns["q_j1"], values[:, 0])
    np.testing.assert_array_equal(table.columns["tau_j1"], values[:, 2])
    np.testing.assert_allclose(table.columns["t"], 0.01 * np.arange(20))
    lines = (tmp_path / "dump.csv").read_text().splitlines()
    (tmp_path / "dump.csv").write_text("".join(line + ",\n" for line in lines))  # a trailing comma
    np.testing.assert_array_equal(
        read_recording(_headerless(tmp_path)).columns["q_j1"], values[:, 0]
    )
    lines[6] = lines[6].replace(lines[6].split(",")[2], "n/a")
    (tmp_path / "dump.csv").write_text("\n".join(lines) + "\n")
    # a headerless file's data row k is its line k
    with pytest.raises(InputError, match=r"dump.csv: column '2' row 7 \(line 7\): 'n/a'"):
        read_recording(_headerless(tmp_path))
    with pytest.raises(InputError, match=r"sources\[1\].header must be true or false"):
        read_recording(_headerless(tmp_path, "'no'"))


def test_the_shipped_xmate_files_read_as_they_are(tmp_path):
    """The xMate7p recordings have no header (dataset README: q 0-6, tau 21-27)."""
    import sys

    from conftest import DATASETS, REPO

    source = DATASETS / "xmate7p" / "50Hz_1period" / "xMate7p_traj1_results.csv"
    if not source.is_file():
        pytest.skip(f"real dataset not found at {source}")
    sys.path.insert(0, str(REPO / "benchmarks"))
    from real_cases import read_xmate

    columns = {f"q_joint{k + 1}": k for k in range(7)} | {
        f"tau_joint{k + 1}": 21 + k for k in range(7)
    }
    manifest = tmp_path / "traj1.yaml"
    manifest.write_text(
        "format: physid.recording/1\nsample_time: 0.02\nsources:\n"
        f"  - file: {source}\n    header: false\n    columns: {columns}\n".replace("'", ""),
        encoding="utf-8",
    )
    table = read_recording(manifest)
    reference = read_xmate(source, 0.02)
    np.testing.assert_array_equal(table.columns["t"], reference.t)
    for k in range(7):
        np.testing.assert_array_equal(table.columns[f"q_joint{k + 1}"], reference.q[:, k])
        np.testing.assert_array_equal(table.columns[f"tau_joint{k + 1}"], reference.tau[:, k])


def _raw_manifest(folder, csv: str, bad_rows: str = "drop"):
    path = folder / "raw.yaml"
    path.write_text(
        "format: physid.recording/1\n"
        f"bad_rows: {bad_rows}\n"
        "sources:\n"
        f"  - file: {csv}\n"
        "    header: false\n"
        "    columns: {t: 0, q_j1: 1, tau_j1: 2}\n",
        encoding="utf-8",
    )
    return path


def test_bad_rows_drop_reads_a_raw_log_with_lines_that_are_not_samples(tmp_path):
    t = 100.0 + 0.01 * np.arange(1000)
    lines = [f"{a:.4f},{np.sin(a):.6f},{np.cos(a):.6f}" for a in t]
    lines[40] = "-0.1231,253.0,253.0"  # another packet, stamped back to ~0
    lines[41] = "0.7932,-1.1e+282,0.0"  # a value no robot logs
    lines[120] = "7,8"  # another number of fields
    lines[200] = "header?,x,y"  # not numbers
    lines[250] = "5e7,0.5,0.5"  # a stamp far in the future
    lines.append("100.01,0.3")  # a truncated last line
    (tmp_path / "raw.csv").write_text("\n".join(lines) + "\n")
    table = read_recording(_raw_manifest(tmp_path, "raw.csv"))
    kept = np.setdiff1d(np.arange(1000), [40, 41, 120, 200, 250])
    np.testing.assert_allclose(table.columns["t"], np.round(t[kept], 4))
    np.testing.assert_allclose(table.columns["q_j1"], np.round(np.sin(t[kept]), 6))
    dropped = "4 lines that are not samples dropped (lines 42, 121, 201, 1001)"
    assert table.notes[0] == f"raw.csv: {dropped}"
    assert table.notes[1].startswith("2 rows out of time order or stranded by a gap dropped")
    with pytest.raises(InputError, match=r"raw.csv: line 121 has 2 values but line 1 has 3 \(a"):
        read_recording(_raw_manifest(tmp_path, "raw.csv", "error"))
    with pytest.raises(InputError, match=r"bad_rows: 'maybe' is not one of"):
        read_recording(_raw_manifest(tmp_path, "raw.csv", "maybe"))
    many = lines[:100] + ["1,2"] * 5  # 6 % of the lines (with line 42): another format
    (tmp_path / "raw.csv").write_text("\n".join(many) + "\n")
    with pytest.raises(InputError, match=r"would drop 6 of 105 lines, more than 1 % \(or 5\)"):
        read_recording(_raw_manifest(tmp_path, "raw.csv"))


def test_bad_rows_drop_also_reads_a_csv_with_a_header(tmp_path):
    """bad_rows: drop was ignored under a header line (a probe: a half-written last line and
    three empty cells still stopped the run, and the manifest said nothing); a column of text
    (a ROS frame id) is no bad line."""
    t = 0.01 * np.arange(1000)
    lines = ["t,frame,q_j1,tau_j1"] + [f"{a:.2f},base_link,{np.sin(a):.6f},{np.cos(a):.6f}"
                                       for a in t]  # fmt: skip
    lines[301] = "3.00,base_link,,0.5"  # an empty cell (data row 301)
    lines.append("10.00,base_li")  # a half-written last line
    (tmp_path / "log.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "log.yaml").write_text(
        "format: physid.recording/1\nbad_rows: drop\nsources:\n  - file: log.csv\n"
        "    columns: {t: t, q_j1: q_j1, tau_j1: tau_j1}\n",
        encoding="utf-8",
    )
    table = read_recording(tmp_path / "log.yaml")
    kept = np.delete(np.arange(1000), 300)
    np.testing.assert_allclose(table.columns["q_j1"], np.round(np.sin(t[kept]), 6))
    assert table.notes[0] == "log.csv: 2 lines that are not samples dropped (lines 302, 1002)"


def test_the_shipped_ur10e_logs_read_as_they_are(tmp_path):
    """The UR10e logs keep their logger's quirks (dataset README): with ``header: false`` and
    ``bad_rows: drop`` a manifest reads the very rows the benchmarks' own cleaning keeps."""
    import sys

    from conftest import DATASETS, REPO

    folder = DATASETS / "ur10e"
    sources = sorted(folder.glob("*_data/ur-20_02_19_15harm50secLoad.csv"))
    if not sources:
        pytest.skip(f"real dataset not found at {folder}")
    sys.path.insert(0, str(REPO / "benchmarks"))
    import real_cases

    columns = "{t: 0, q_j1: 1, q_j2: 2, q_j3: 3, q_j4: 4, q_j5: 5, q_j6: 6, i_j1: 13, i_j6: 18}"
    manifest = tmp_path / "raw.yaml"
    manifest.write_text(
        f"format: physid.recording/1\nbad_rows: drop\nsources:\n  - file: {sources[0]}\n"
        f"    header: false\n    columns: {columns}\n",
        encoding="utf-8",
    )
    table = read_recording(manifest)
    gains = np.ones(6)
    cleaned, dropped = real_cases.read_ur10e(sources[0], gains)  # its own packet test, cropped
    raw = np.column_stack([table.columns[f"q_j{k}"] for k in range(1, 7)])
    first = int(np.flatnonzero(np.all(raw == cleaned.q[0], axis=1))[0])
    np.testing.assert_array_equal(raw[first : first + len(cleaned.t)], cleaned.q)
    np.testing.assert_array_equal(
        table.columns["i_j6"][first : first + len(cleaned.t)], cleaned.tau[:, 5]
    )
    assert len(cleaned.t) > 6000 and dropped >= 9  # the benchmark's reader dropped its 9 + 1
    assert any("lines that are not samples dropped" in n for n in table.notes)


def test_a_time_column_in_nanoseconds_reads_through_time_unit(tmp_path):
    """A log whose t counts nanoseconds (ROS tools write stamps so) is refused as read, with
    the manifest key that reads it; through a manifest with time_unit: ns it identifies as the
    same log in seconds (real KUKA LWR4+, 6 s of file 2)."""
    import sys

    from conftest import KUKA, REPO, kuka_slice

    import physid

    sys.path.insert(0, str(REPO / "benchmarks"))
    from real_cases import KUKA_JOINTS, write_contract_csv
    from scoring import Signals

    s = kuka_slice(2, 6.0)
    seconds = np.round(s.t - s.t[0], 9)  # whole nanoseconds: exact in both units
    in_s = write_contract_csv(tmp_path / "run_s.csv", KUKA_JOINTS, Signals(seconds, s.q, s.tau))
    in_ns = write_contract_csv(tmp_path / "run_ns.csv", KUKA_JOINTS,
                               Signals(np.round(seconds * 1e9), s.q, s.tau))  # fmt: skip
    urdf = KUKA / "kuka_lwr4.urdf"
    with pytest.raises(InputError, match="time_unit: ms, us or ns"):
        physid.identify(urdf, in_ns)
    columns = ", ".join(f"{c}: {c}" for c in ["t", *(f"{p}_{j}" for p in ("q", "tau")
                                                      for j in KUKA_JOINTS)])  # fmt: skip
    manifest = tmp_path / "run_ns.yaml"
    manifest.write_text("format: physid.recording/1\ntime_unit: ns\nsources:\n"
                        f"  - file: run_ns.csv\n    columns: {{{columns}}}\n")  # fmt: skip
    np.testing.assert_allclose(read_recording(manifest).columns["t"], seconds, rtol=0,
                               atol=1e-15)  # fmt: skip
    reference = physid.identify(urdf, in_s).raw.theta
    np.testing.assert_allclose(physid.identify(urdf, manifest).raw.theta, reference, rtol=1e-9,
                               atol=1e-12)  # fmt: skip
    manifest.write_text(manifest.read_text().replace("time_unit: ns", "time_unit: days"))
    with pytest.raises(InputError, match=r"time_unit: 'days' is not one of \['s', 'ms'"):
        read_recording(manifest)
    manifest.write_text(manifest.read_text().replace("time_unit: days", "time_unit: [ns]"))
    with pytest.raises(InputError, match=r"time_unit: \['ns'\] is not one of"):  # was a TypeError
        read_recording(manifest)
