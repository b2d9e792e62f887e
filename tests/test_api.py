"""The public Python API (issue 12, item 2) and ``physid config --template`` (item 5)."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

import physid
from physid.cli import main
from physid.files.config import IdentifyConfig, parse_config
from physid.sim.arm import arm6_urdf_path

NAMES = [f"joint_{k}" for k in range(1, 7)]


def _arrays(n_samples: int = 50):
    t = np.linspace(0.0, 1.0, n_samples)
    q = 0.1 * np.sin(np.outer(t, np.arange(1, 7)))
    return t, q, np.zeros_like(q)


def test_import_is_light_and_the_api_is_discoverable():
    code = "import sys, physid; print([m for m in ('numpy', 'pinocchio') if m in sys.modules])"
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"
    for name in ("identify", "validate", "load_params", "Recording"):
        assert name in dir(physid) and name in physid.__all__
    signature = inspect.signature(physid.identify)
    assert list(signature.parameters) == ["urdf", "data", "config", "validate", "out"]
    assert all(
        signature.parameters[k].kind is inspect.Parameter.KEYWORD_ONLY
        for k in ("config", "validate", "out")
    )
    assert "physid identify" in physid.identify.__doc__
    package = Path(physid.__file__).parent
    assert (package / "py.typed").is_file()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"q": np.zeros((50, 5))}, r"q has shape \(50, 5\), expected \(50, 6\)"),
        ({"tau": np.zeros((49, 6))}, r"tau has shape \(49, 6\)"),
        ({"dq": np.zeros((50, 7))}, r"dq has shape \(50, 7\)"),
        ({"t": np.zeros((50, 1))}, r"t must be 1-D"),
        ({"joint_names": [*NAMES[:5], "joint_1"]}, r"given twice: joint_1"),
        ({"joint_names": "joint_1"}, r"joint_names must be a sequence"),
        ({"tau": [["a"] * 6] * 50}, r"must be numeric arrays"),
    ],
)
def test_recording_shapes_are_checked_with_one_line_errors(change, message):
    t, q, tau = _arrays()
    arguments = {"t": t, "q": q, "tau": tau, "joint_names": NAMES} | change
    with pytest.raises(physid.InputError, match=message) as error:
        physid.Recording.from_arrays(**arguments)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("names", "culprit"),
    # a joint missing from the middle of the chain is named (one at the end, with no logged
    # joint beyond it, is held still with a warning: a hand the logs leave out)
    [([*NAMES[:5], "wrist_roll"], "wrist_roll"), ([*NAMES[:2], *NAMES[3:]], "joint_3")],
)
def test_recording_names_are_matched_against_the_urdf(names, culprit):
    t, q, tau = _arrays()
    recording = physid.Recording.from_arrays(
        t, q[:, : len(names)], tau[:, : len(names)], joint_names=names
    )
    with pytest.raises(physid.InputError, match=culprit):
        physid.identify(arm6_urdf_path(), recording)


def test_load_params_accessors(tmp_path):
    document = {
        "format": "physid.params/1",
        "bodies": {
            "joint_3": {
                "mass": 2.0,
                "com": [0.1, 0.0, 0.0],
                "inertia": [[0.01, 0, 0], [0, 0.02, 0], [0, 0, 0.02]],
                "std": {"mass": 0.1, "com": [0.01, 0.01, 0.01]},
                "source": {"mass": "data"},
            }
        },
        "joints": {"joint_3": {"viscous": 0.5, "coulomb": 1.5, "std": {"viscous": 0.05}}},
        "extra": {"gravity": [0.0, 0.0, -9.81]},
    }
    path = tmp_path / "params.json"
    path.write_text(json.dumps(document))
    params = physid.load_params(path)
    body = params.bodies["joint_3"]
    assert body.mass == 2.0 and body.com.shape == (3,) and body.inertia.shape == (3, 3)
    assert body.std["mass"] == 0.1 and body.source["mass"] == "data"
    assert params.joints["joint_3"].viscous == 0.5 and params.joints["joint_3"].offset is None
    assert params.joints["joint_3"].std["viscous"] == 0.05
    np.testing.assert_allclose(params.gravity, [0, 0, -9.81])
    assert params.status == "ok"
    with pytest.raises(KeyError, match="known: joint_3"):
        params.bodies["joint_9"]
    document["bodies"]["joint_3"]["mass"] = -1.0
    path.write_text(json.dumps(document))
    with pytest.raises(physid.InputError, match="bodies.joint_3"):
        physid.load_params(path)


def test_config_template_is_the_documented_one_and_parses():
    result = CliRunner().invoke(main, ["config", "--template"])
    assert result.exit_code == 0, result.output
    raw = yaml.safe_load(result.output)
    parse_config(raw)  # every key is a valid option
    for field in IdentifyConfig.__dataclass_fields__:
        key = "split" if field == "train_fraction" else field
        assert key in raw, f"template lacks {key}"
    assert "# logdet (geometric" in result.output  # the comments come along
    assert CliRunner().invoke(main, ["config"]).exit_code == 2


def test_identify_is_the_function_and_the_estimator_package_has_its_own_name():
    """Issue 25 item 3: no name served twice, no module-class trick."""
    code = (
        "import physid\n"
        "import physid.offline.pipeline as pipeline\n"
        "assert callable(physid.identify) and physid.identify.__module__ == 'physid.api'\n"
        "assert type(physid).__name__ == 'module'\n"
        "assert pipeline.__name__ == 'physid.offline.pipeline'\n"
        "import importlib.util\n"
        "assert importlib.util.find_spec('physid.identify') is None\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
