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
