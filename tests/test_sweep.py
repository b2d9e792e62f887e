"""``physid sweep``: a small identify sweep on a local Ray instance (2 CPUs) writes one row and
one folder per job, records a failing job with its error while the others succeed; SPEC errors
are one line naming the key; a missing Ray says how to install it."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from physid.cli import main
from physid.errors import InputError, PhysidError
from physid.recordings.trajectory import trajectory_csv_text
from physid.sim.arm import arm6_model, arm6_urdf_path, simulate_random_excitation, true_parameters
from physid.sweep import load_spec, parse_spec
from physid.sweep.execute import execute_job
from physid.sweep.runner import _finished_rows
from physid.sweep.table import read_table, write_table

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sweeps"
CONFIG = {
    "filter": {"method": "classical", "butterworth_cutoff_hz": 20.0, "decimation_cutoff_hz": 5.0},
    "estimation": {"weighting": "wls"},
}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """Short demo-arm recordings (8 s to train, 4 s to validate, 500 Hz) and a broken file."""
    folder = tmp_path_factory.mktemp("sweep_data")
    rng = np.random.default_rng(3)
    model = arm6_model()
    theta = true_parameters(model, rng)
    for name, duration in (("train", 8.0), ("validation", 4.0)):
        run_ = simulate_random_excitation(
            model, theta, duration_s=duration, sample_rate_hz=500.0, rng=rng
        )
        (folder / f"{name}.csv").write_text(trajectory_csv_text(run_.recorded))
    lines = (folder / "train.csv").read_text().splitlines()
    (folder / "broken.csv").write_text("\n".join([lines[0], lines[1], "0.5,1.0"]) + "\n")
    return folder


def write_spec(folder, spec: dict, name: str = "spec.yaml"):
    path = folder / name
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def identify_spec() -> dict:
    return {
        "kind": "identify",
        "base": {
            "urdf": arm6_urdf_path(),
            "data": ["train.csv"],
            "validate": ["validation.csv"],
            "config": CONFIG,
        },
        "grid": {"config.filter.butterworth_cutoff_hz": [10.0, 20.0, 40.0]},
        "jobs": [{"name": "broken", "data": ["broken.csv"]}],
    }


def test_sweep_on_local_ray_writes_the_table_and_records_the_failing_job(recordings, tmp_path):
    ray = pytest.importorskip("ray")
    spec = write_spec(recordings, identify_spec())
    out = tmp_path / "sweep"
    result = run("sweep", spec, "--out", out, "--workers", 2, "--retries", 1, "--quiet")
    assert result.exit_code == 0, result.output
    assert "4 jobs" in result.output and "3 ok, 1 failed" in result.output
    assert not ray.is_initialized()  # the local instance was shut down

    rows = read_table(out / "results.csv")
    ids = ["0000_butterworth_cutoff_hz=10", "0001_butterworth_cutoff_hz=20"]
    ids += ["0002_butterworth_cutoff_hz=40", "0003_broken"]
    assert [row["job_id"] for row in rows] == ids  # SPEC order, not finishing order
    header = list(rows[0])
    assert header[:7] == [
        "job_id",
        "kind",
        "status",
        "error",
        "wall_time_s",
        "host",
        "config.filter.butterworth_cutoff_hz",
    ]
    assert [row["status"] for row in rows] == ["ok", "ok", "ok", "failed"]
    assert [row["config.filter.butterworth_cutoff_hz"] for row in rows[:3]] == [
        "10.0",
        "20.0",
        "40.0",
    ]
    for row in rows[:3]:
        assert row["error"] == "" and row["result_status"] in ("ok", "suspect")
        assert 0.0 < float(row["validation_relative_error"]) < 0.1
        assert float(row["wall_time_s"]) > 0
    failed = rows[3]
    assert "broken.csv" in failed["error"] and "\n" not in failed["error"]
    assert failed["validation_relative_error"] == ""

    # each job's own folder: job.json, its config, and what `physid identify` writes
    for job_id, row in zip(ids[:3], rows[:3], strict=True):
        folder = out / "jobs" / job_id
        job = json.loads((folder / "job.json").read_text())
        assert job["status"] == "ok" and job["parameters"] == {
            "config.filter.butterworth_cutoff_hz": float(row["config.filter.butterworth_cutoff_hz"])
        }
        config = yaml.safe_load((folder / "config.yaml").read_text())
        assert config["filter"]["butterworth_cutoff_hz"] == job["parameters"][header[6]]
        params = json.loads((folder / "output" / "params.json").read_text())
        assert params["format"] == "physid.params/1"
    broken = json.loads((out / "jobs" / ids[3] / "job.json").read_text())
    assert broken["status"] == "failed" and broken["error"] == failed["error"]
    assert not list((out / "jobs").glob(".*"))  # no staging folder left
    summary = json.loads((out / "sweep.json").read_text())
    assert summary["jobs"] == 4 and summary["failed"] == ["0003_broken"]
    pq = pytest.importorskip("pyarrow.parquet")
    table = pq.read_table(out / "results.parquet").to_pylist()
    assert [row["status"] for row in table] == ["ok", "ok", "ok", "failed"]
    assert table[0]["validation_relative_error"] == pytest.approx(
        float(rows[0]["validation_relative_error"])
    )

    # a validate job on job 0001's params.json (run in this process) scores the validation
    # recording exactly as identify did: the same filter, the same raw torques
    validate = parse_spec(
        {
            "kind": "validate",
            "base": {
                "urdf": arm6_urdf_path(),
                "params": str(out / "jobs" / ids[1] / "output" / "params.json"),
                "data": [str(recordings / "validation.csv")],
            },
        },
        recordings,
    )
    outcome = execute_job(validate.jobs[0])
    assert outcome["status"] == "ok", outcome["error"]
    assert outcome["metrics"]["relative_error"] == pytest.approx(
        float(rows[1]["validation_relative_error"]), rel=1e-9
    )
    assert "output/validation.json" in outcome["files"]

    # the folder now holds a sweep: a second one into it is refused; --resume would keep the
    # three finished jobs and run the failed one again
    again = run("sweep", spec, "--out", out, "--quiet")
    assert again.exit_code == 2 and "--resume" in again.output
    kept = _finished_rows(out / "jobs", load_spec(spec).jobs)
    assert sorted(kept) == [0, 1, 2]
    assert kept[1]["validation_relative_error"] == pytest.approx(
        float(rows[1]["validation_relative_error"])
    )


def test_monte_carlo_job_on_the_simulated_arm_compares_with_the_truth(tmp_path):
    spec = parse_spec(
        {
            "kind": "identify",
            "base": {
                "simulate": {"train_s": 6.0, "validation_s": 3.0, "sample_rate_hz": 500.0},
                "config": CONFIG,
            },
            "seeds": [4, 5],
        },
        tmp_path,
    )
    assert [job.job_id for job in spec.jobs] == ["0000_seed=4", "0001_seed=5"]
    outcome = execute_job(spec.jobs[0])  # in this process: the kind itself, without Ray
    assert outcome["status"] == "ok", outcome["error"]
    metrics = outcome["metrics"]
    assert metrics["truth_base_within_3_sigma"] >= 0.8
    assert 0.0 < metrics["validation_relative_error"] < 0.1
    assert {"data/train.csv", "data/validation.csv", "output/params.json"} <= set(outcome["files"])


BAD_SPECS = [
    ({"kind": "fit"}, "kind: expected one of"),
    ({"kind": "identify", "grids": {}}, "unknown key(s) ['grids']"),
    ({"kind": "identify", "grid": {"cutoff": [1.0]}}, "grid.cutoff: not an argument"),
    ({"kind": "identify", "grid": {"data.x": [1]}}, "grid.data.x: 'data' has no keys"),
    (
        {"kind": "identify", "grid": {"config.filter.butterworth_cutoff_hz": 10}},
        "grid.config.filter.butterworth_cutoff_hz: expected a non-empty list",
    ),
    ({"kind": "identify", "base": {"data": ["train.csv"]}}, "base.urdf: required"),
    ({"kind": "identify", "base": {"urdf": "missing.urdf"}}, "base.urdf: file not found"),
    (
        {"kind": "identify", "grid": {"config.filter.cutof_hz": [1.0]}},
        "grid.config.filter.cutof_hz (job[0000_cutof_hz=1]): config filter: unknown key(s)",
    ),
    ({"kind": "identify", "jobs": [{"data": "nope.csv"}]}, "jobs[0].data (job[0000_data=nope."),
    ({"kind": "identify", "jobs": ["x"]}, "jobs[0]: expected a mapping"),
    ({"kind": "identify", "seeds": 2}, "seeds: identify jobs without 'simulate'"),
    ({"kind": "identify", "seeds": [1, 1]}, "seeds: a seed is given twice"),
    (
        {"kind": "impacts_identify", "base": {"shape": "ellipse:0.05,0.025"}},
        "base.surfaces: required",
    ),
    (
        {
            "kind": "impacts_identify",
            "base": {"shape": "ellipse:0.05,0.025", "surfaces": ["line:0,0"]},
            "grid": {"simulate.mu": [0.2]},
        },
        "base.simulate.q0: required",
    ),
    (
        {
            "kind": "impacts identify",
            "base": {"shape": "ellipse:0.05,0.025", "surfaces": ["line:0,0"], "data": "t.csv"},
            "grid": {"options.max_substeps": [1e-3]},
        },
        "grid.options.max_substeps (job[0000_max_substeps=0.001]): unknown key(s)",
    ),
]


@pytest.mark.parametrize(("raw", "message"), BAD_SPECS)
def test_spec_errors_are_one_line_naming_the_key(recordings, raw, message):
    raw = {**raw}
    if raw.get("kind") == "identify" and "base" not in raw:
        raw["base"] = {"urdf": arm6_urdf_path(), "data": ["train.csv"]}
    if raw.get("kind") == "impacts identify":
        (recordings / "t.csv").write_text("t,x,y,theta\n0,0,0,0\n")
    with pytest.raises(InputError) as caught:
        parse_spec(raw, recordings)
    text = str(caught.value)
    assert "\n" not in text
    assert message in text, text


def test_spec_file_errors_name_the_file_and_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: identify\ngrid: [\n")
    with pytest.raises(InputError, match=r"bad.yaml: invalid YAML"):
        load_spec(bad)
    other = write_spec(tmp_path, {"kind": "validate", "base": {"params": "p.json"}}, "v.yaml")
    result = run("sweep", other, "--out", tmp_path / "out")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert lines == [f"physid: error: {other}: base.params: file not found: {tmp_path / 'p.json'}"]
    assert not (tmp_path / "out").exists()


def test_dry_run_lists_the_jobs_without_ray(tmp_path):
    spec = tmp_path / "table1.yaml"
    spec.write_text((EXAMPLES / "impacts_table1.yaml").read_text())
    result = run("sweep", spec, "--out", tmp_path / "out", "--dry-run")
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("0000_mu=0.1_fps=30_seed=0")
    assert lines[-1] == "12 impacts_identify job(s); nothing run"
    assert not (tmp_path / "out").exists()


def test_an_unreachable_cluster_is_one_line_and_dry_run_checks_the_address(
    tmp_path,
):
    """``--address 127.0.0.1:1`` (nothing listens) sat in ray.init for 5+ minutes ("Failed to
    get cluster ID from GCS server: TimedOut"); a malformed address passed --dry-run."""
    import socket

    from physid.sweep.runner import check_reachable

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(PhysidError, match=rf"cannot reach the Ray cluster at 127.0.0.1:{port}"):
        check_reachable(f"127.0.0.1:{port}")
    check_reachable("auto")  # names no host: Ray's to find
    spec = tmp_path / "table1.yaml"
    spec.write_text((EXAMPLES / "impacts_table1.yaml").read_text())
    result = run("sweep", spec, "--out", tmp_path / "out", "--dry-run", "--address", "bogus")
    assert result.exit_code == 2 and "'bogus' is not a Ray address" in result.output


def test_dry_run_refuses_identified_gains_without_a_payload(tmp_path):
    """An identify job whose config says drive_gains: identify without the known payload fails
    at run time, after its data are read: --dry-run says so first."""
    spec = tmp_path / "gains.yaml"
    spec.write_text("kind: identify\nbase:\n  simulate: {}\n  config: {drive_gains: identify}\n"
                    "seeds: [0, 1]\n")  # fmt: skip
    result = run("sweep", spec, "--out", tmp_path / "out", "--dry-run")
    assert result.exit_code == 2 and "needs a 'payload' section" in result.output


def test_without_ray_the_error_says_how_to_install_it(monkeypatch, tmp_path):
    from physid.sweep.runner import import_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(PhysidError) as caught:
        import_ray()
    assert str(caught.value).endswith(
        "pip install ray (or, in physid's checkout, pip install -e '.[sweep]')"
    )


def test_table_of_mixed_columns_round_trips(tmp_path):
    rows = [
        {"job_id": "0000", "kind": "k", "status": "ok", "a": 1.5, "data": "x"},
        {"job_id": "0001", "kind": "k", "status": "failed", "error": "bad", "a": None, "b": True},
    ]
    written = write_table(rows, tmp_path, parameters=["data"])
    with open(written[0], newline="") as handle:
        header = next(csv.reader(handle))
    assert header == ["job_id", "kind", "status", "error", "wall_time_s", "host", "data", "a", "b"]
    back = read_table(tmp_path / "results.csv")
    assert back[0]["a"] == "1.5" and back[1]["a"] == "" and back[1]["error"] == "bad"


class _Ref(tuple):
    __hash__ = object.__hash__  # an object reference: hashable by identity


class _FakeRay:
    """Ray's task API run in this process; a task whose job id ends in 'crash' fails as Ray
    reports a task whose retries are spent (the exception with its ``cause``)."""

    class TaskError(Exception):
        def __init__(self, cause):
            super().__init__(f"ray::execute_job() failed\ntraceback...\n{cause}")
            self.cause = cause

    def __init__(self):
        self.options_seen = {}

    def remote(self, function):
        fake = self

        class Task:
            def options(self, **options):
                fake.options_seen = options
                return self

            def remote(self, job):
                return _Ref((job,))

        self.function = function
        return Task()

    def wait(self, refs, num_returns):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        (job,) = ref
        if job.job_id.endswith("crash"):
            raise self.TaskError(MemoryError("worker ran out of memory\nmore"))
        return self.function(job)


def test_a_task_failing_after_its_retries_is_recorded_and_the_sweep_goes_on(tmp_path):
    from physid.sweep.runner import _run_jobs

    (tmp_path / "t.csv").write_text("t,x,y,theta\n")  # read by no job: the kind is replaced
    spec = parse_spec(
        {
            "kind": "validate",
            "base": {"urdf": arm6_urdf_path(), "params": "t.csv", "data": ["t.csv"]},
            "jobs": [{"name": "a"}, {"name": "crash"}, {"name": "b"}],
        },
        tmp_path,
    )
    ray = _FakeRay()
    rows = _run_jobs(ray, spec.jobs, tmp_path, 2, 3, False, {})
    assert ray.options_seen == {"num_cpus": 1, "max_retries": 3, "retry_exceptions": True}
    assert [row["status"] for row in rows] == ["failed", "failed", "failed"]
    assert rows[1]["error"] == "MemoryError: worker ran out of memory"
    assert rows[0]["error"].startswith("t.csv") or "t.csv" in rows[0]["error"]
    assert (tmp_path / "jobs" / "0001_crash" / "job.json").is_file()
    assert len(read_table(tmp_path / "results.csv")) == 3
