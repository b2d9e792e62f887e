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
