"""Random corruptions of valid inputs through every ``physid`` command (issues 10 and 31).

Two kinds of case alternate. File cases (issue 10) take one valid seed file (a tiny simulated
recording as CSV, NPZ or Parquet, a YAML config, a ``params.json`` of the same robot, a recording
manifest, a URDF, camera poses of paper D), damage it at random (byte flips, truncation, a cell
replaced by garbage / NaN / huge numbers, header damage, a JSON or YAML value replaced by one of
the wrong type) and run ``physid identify``, ``physid validate`` or ``physid impacts identify``
on it. Command cases (issue 31, :mod:`fuzz_commands`) damage one option value, input file or
output path of every other command and subcommand (export, excite, oe, multibody simulate and
identify, impacts simulate and identify, online, sweep, payload, config, demo). Each runs
in-process and counts

* tracebacks: any exception other than a clean exit (codes 0, 2, 3, 4);
* unclean messages: exit 2 without exactly one ``physid: error:`` line (or click's usage
  error), and any line written by C code on file descriptor 2 (urdfdom);
* partial outputs: an output path created or changed, a ``.staging`` folder or ``.tmp`` file
  left after exit 2;
* NaN in outputs: a non-finite number in a written JSON file, ``nan``/``inf`` in a written CSV
  file or in the numbers printed on success;
* stray warnings: a Python warning (RuntimeWarning, UserWarning, DeprecationWarning, ... from
  physid or a library: each with its text and the file:line that raised it), or a line of a
  library's own ``Warning:`` on stderr, C-level ones included; physid's deliberate
  ``physid: warning:`` lines are not stray;
* hangs: a case running over 60 s (the inputs are tiny).

In file cases the identification is replaced by a stub once the inputs are validated (they test
input handling; ``--full`` runs the real one); command cases run their real estimators
(``--stub`` replaces them too; the demo's identification is always stubbed).

    python benchmarks/fuzz.py --cases 5000 --seed 0 [--commands oe,online] [--verbose]

``--warnings`` lists every distinct stray warning found (command, text, file:line, the seeds of
the cases that met it) after the table, for the commands' owners.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib
import json
import random
import re
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import numpy as np

# *_streamed: the CSV / Parquet corruptions through the block reader of long recordings
# (physid.recordings.streamed, forced on with blocks of 37 rows so that damage lands in later
# blocks)
KINDS = ("csv", "csv_streamed", "npz", "config", "params", "manifest", "urdf", "parquet",
         "parquet_streamed", "poses")  # fmt: skip
GARBAGE = (
    "",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e300",
    "-1e308",
    "abc",
    "0x1F",
    "1,2",
    "\x00",
    "é",
    " ",
    "1e-320",
    "True",
    "null",
    "[]",
    "{a: 1}",
    "9" * 400,
)
YAML_VALUES = (
    None,
    "no",
    "yes",
    5,
    -1,
    0,
    1e300,
    float("nan"),
    [],
    {},
    [1, "x"],
    {"j": "big"},
    "auto",
    True,
    "classical",
    [0, 0],
)
JSON_VALUES = (None, "x", [], {}, 1e300, -1.0, 0, [0, 0], True, [[1, 2], [3]], {"mass": "1"})


def make_recording(folder: Path, seconds: float = 1.0, rate_hz: float = 100.0) -> Path:
    """A tiny simulated recording of the demo arm, as a contract CSV."""
    from physid.recordings.trajectory import write_trajectory_csv
    from physid.sim.arm import arm6_model, simulate_random_excitation, true_parameters

    rng = np.random.default_rng(7)
    model = arm6_model()
    theta = true_parameters(model, rng)
    sim = simulate_random_excitation(
        model, theta, duration_s=seconds, sample_rate_hz=rate_hz, rng=rng
    )
    return write_trajectory_csv(folder / "train.csv", sim.recorded)


def make_params(folder: Path) -> Path:
    """A params.json of the URDF's own values (what identify writes, without running it)."""
    from physid.files.io import write_json_atomic
    from physid.files.params_file import FORMAT, params_document
    from physid.sim.arm import arm6_model

    model = arm6_model()
    document = {"format": FORMAT, **params_document(model, model.prior_parameters())}
    return write_json_atomic(folder / "params.json", document)


def make_poses(folder: Path) -> Path:
    """Camera poses t,x,y,theta of a spinning ellipse in flight (paper D's input), 60 fps."""
    t = np.arange(30) / 60.0
    table = np.column_stack([t, 0.5 * t, 0.3 + 1.0 * t - 4.905 * t**2, 2.0 * t])
    path = folder / "poses.csv"
    np.savetxt(path, table, delimiter=",", header="t,x,y,theta", comments="", fmt="%.9g")
    return path


def make_seeds(folder: Path) -> dict[str, Path]:
    """One valid file of each kind."""
    folder.mkdir(parents=True, exist_ok=True)
    train = make_recording(folder)
    names = train.read_text().splitlines()[0].split(",")
    values = np.loadtxt(train, delimiter=",", skiprows=1)
    np.savez(folder / "train.npz", **{n: values[:, k] for k, n in enumerate(names)})
    config = folder / "config.yaml"
    config.write_text(
        "joint_terms: [fv, fc, offset]\n"
        "drive_gains: {joint_1: 1.0}\n"
        "filter: {method: classical, butterworth_cutoff_hz: 20, decimation_cutoff_hz: 5}\n"
        "split: {train_fraction: 0.7}\n"
        "estimation: {weighting: wls, estimate_gravity_direction: true}\n"
        "allow_large_angles: false\n"
        "coulomb_deadband: auto\n"
    )
    manifest = folder / "manifest.yaml"
    columns = ", ".join(f"{n}: {n}" for n in names)
    manifest.write_text(
        f"format: physid.recording/1\ntime_unit: s\nsources:\n  - file: train.npz\n"
        f"    columns: {{{columns}}}\n"
    )
    from physid.sim.arm import arm6_urdf_path

    shutil.copy(arm6_urdf_path(), folder / "robot.urdf")
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({n: values[:, k] for k, n in enumerate(names)}), folder / "t.parquet")
    return {
        "poses": make_poses(folder),
        "urdf": folder / "robot.urdf",
        "parquet": folder / "t.parquet",
        "parquet_streamed": folder / "t.parquet",
        "csv": train,
        "csv_streamed": train,
        "npz": folder / "train.npz",
        "config": config,
        "params": make_params(folder),
        "manifest": manifest,
    }


# --- corruptions ---------------------------------------------------------------------------------


def flip_bytes(rng: random.Random, payload: bytes) -> bytes:
    data = bytearray(payload)
    for _ in range(rng.randint(1, 8)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data)


def truncate(rng: random.Random, payload: bytes) -> bytes:
    return payload[: rng.randrange(len(payload) + 1)]


def replace_cells(rng: random.Random, payload: bytes) -> bytes:
    lines = payload.decode().splitlines()
    for _ in range(rng.randint(1, 3)):
        row = rng.randrange(1, len(lines))
        cells = lines[row].split(",")
        cells[rng.randrange(len(cells))] = rng.choice(GARBAGE)
        lines[row] = ",".join(cells)
    return ("\n".join(lines) + "\n").encode()


def damage_header(rng: random.Random, payload: bytes) -> bytes:
    lines = payload.decode().splitlines()
    names = lines[0].split(",")
    k = rng.randrange(len(names))
    action = rng.choice(("rename", "drop", "duplicate", "empty", "number", "swap"))
    if action == "rename":
        names[k] = rng.choice(("q_joint_9", "tau_joint_1 ", "t", "x", "q_joint", "ddq_joint_2"))
    elif action == "drop":
        names.pop(k)
    elif action == "duplicate":
        names.append(names[k])
    elif action == "empty":
        names[k] = ""
    elif action == "number":
        names[k] = "1.5"
    else:
        j = rng.randrange(len(names))
        names[k], names[j] = names[j], names[k]
    return ("\n".join([",".join(names), *lines[1:]]) + "\n").encode()


def replace_attribute(rng: random.Random, payload: bytes) -> bytes:
    """A URDF with one attribute value (mass, xyz, axis, type, name, ...) replaced."""
    import re

    text = payload.decode()
    spans = [m.span(1) for m in re.finditer(r'="([^"]*)"', text)]
    start, end = rng.choice(spans)
    value = rng.choice(
        (*GARBAGE, "-1", "0 0", "1e300 0 0", "nan", "continuous", "floating", "joint_1", "0 0 0")
    )
    return (text[:start] + value.replace('"', "") + text[end:]).encode()


def mutate_npz(rng: random.Random, path: Path) -> None:
    with np.load(path) as archive:
        arrays = {k: archive[k] for k in archive.files}
    key = rng.choice(sorted(arrays))
    choice = rng.randrange(7)
    if choice == 0:
        arrays[key] = np.array(["a"] * len(arrays[key]))
    elif choice == 1:
        arrays[key] = np.zeros((len(arrays[key]), 2))
    elif choice == 2:
        arrays[key] = arrays[key][: rng.randrange(len(arrays[key]))]
    elif choice == 3:
        arrays[key] = arrays[key].copy()
        arrays[key][rng.randrange(len(arrays[key]))] = rng.choice((np.nan, np.inf, 1e300))
    elif choice == 4:
        arrays.pop(key)
    elif choice == 5:
        arrays[key] = np.float64(3.0)
    else:
        arrays = {}
    np.savez(path, **arrays)


def _paths(node, prefix=()) -> Iterator[tuple]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def mutate_tree(rng: random.Random, document, values: tuple):
    """Replace one random node of a JSON/YAML tree by a value of a random (often wrong) type."""
    paths = [p for p in _paths(document) if p]
    if not paths:
        return rng.choice(values)
    path = rng.choice(paths)
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    if rng.random() < 0.2 and isinstance(parent, dict):
        parent.pop(path[-1])
    else:
        parent[path[-1]] = rng.choice(values)
    return document


def corrupt(rng: random.Random, kind: str, seed: Path, target: Path) -> None:
    """Write a damaged copy of ``seed`` (of ``kind``) at ``target``."""
    payload = seed.read_bytes()
    byte_level = (flip_bytes, truncate)
    if kind == "npz":
        if rng.random() < 0.5:
            if seed != target:
                shutil.copy(seed, target)
            mutate_npz(rng, target)
            return
        target.write_bytes(rng.choice(byte_level)(rng, payload))
        return
    structural = {
        "csv": (replace_cells, replace_cells, damage_header),
        "csv_streamed": (replace_cells, replace_cells, damage_header),
        "poses": (replace_cells, replace_cells, damage_header),
        "urdf": (replace_attribute, replace_attribute, replace_attribute),
        "parquet": (),
        "parquet_streamed": (),
    }.get(kind)
    if structural is None and rng.random() < 0.6:
        import yaml

        if kind == "params":
            document = mutate_tree(rng, json.loads(payload), JSON_VALUES)
            target.write_text(json.dumps(document))
        else:
            document = mutate_tree(rng, yaml.safe_load(payload), YAML_VALUES)
            target.write_text(yaml.safe_dump(document))
        return
    target.write_bytes(rng.choice(byte_level + (structural or ()))(rng, payload))


# --- one case ------------------------------------------------------------------------------------


@contextlib.contextmanager
def stub_estimator(enabled: bool) -> Iterator[None]:
    """Replace the identification by :class:`Accepted` once the inputs have been read."""
    if not enabled:
        yield
        return
    import physid.workflows as workflows
    from physid.errors import PhysidError

    class _AcceptedError(PhysidError):
        pass

    def stub(*_args, **_kwargs):
        raise _AcceptedError("inputs accepted")

    # the module, not the function that physid.impacts re-exports under the same name
    impacts = importlib.import_module("physid.impacts.identify")

    originals = workflows.identify, impacts.identify
    workflows.identify = impacts.identify = stub
    try:
        yield
    finally:
        workflows.identify, impacts.identify = originals


@contextlib.contextmanager
def streaming(enabled: bool) -> Iterator[None]:
    """Read every CSV recording as a long one, in blocks of 37 rows."""
    import physid.recordings.streamed as streamed

    originals = streamed.STREAM_BYTES, streamed.BLOCK_ROWS
    if enabled:
        streamed.STREAM_BYTES, streamed.BLOCK_ROWS = 0, 37
    try:
        yield
    finally:
        streamed.STREAM_BYTES, streamed.BLOCK_ROWS = originals


def command(kind: str, seeds: dict[str, Path], bad: Path, work: Path) -> list[str]:
    from physid.sim.arm import arm6_urdf_path

    urdf = arm6_urdf_path()
    if kind == "params":
        return [
            "validate",
            "--urdf",
            urdf,
            "--params",
            str(bad),
            "--data",
            str(seeds["csv"]),
            "--json",
            str(work / "v.json"),
            "--quiet",
        ]
    if kind == "poses":
        shape = ["--shape", "ellipse:0.05,0.025", "--surface", "line:0,0"]
        return ["impacts", "identify", "--data", str(bad), *shape, "--out", str(work / "out")]
    args = ["identify", "--urdf", urdf, "--out", str(work / "out"), "--quiet"]
    if kind == "config":
        return [*args, "--data", str(seeds["csv"]), "--config", str(bad)]
    if kind == "urdf":
        args[2] = str(bad)
        return [*args, "--data", str(seeds["csv"])]
    return [*args, "--data", str(bad)]


def run_case(
    rng: random.Random, kind: str, seeds: dict[str, Path], work: Path
) -> tuple[list[str], str]:
    """Run one corrupted case; returns the problems found (empty: a clean outcome) and the
    outcome (``accepted`` by the stub estimator, ``rejected`` with one line, ``exit N``)."""
    for leftover in work.iterdir():
        (shutil.rmtree if leftover.is_dir() else Path.unlink)(leftover)
    seed = seeds[kind]
    bad = work / f"bad{seed.suffix}"
    if kind == "manifest":  # its source is relative: keep the data beside it
        shutil.copy(seeds["npz"], work / "train.npz")
    corrupt(rng, kind, seed, bad)
    args = command(kind, seeds, bad, work)
    with streaming(kind.endswith("_streamed")):
        problems, outcome, _ = invoke_and_judge(args, work, [work / "out", work / "v.json"])
    if outcome == "crash":
        bad.rename(work.parent / f"crash_{kind}_{time.time_ns()}{bad.suffix}")
    return problems, outcome


@contextlib.contextmanager
def native_stderr() -> Iterator[list[str]]:
    """What C/C++ code (urdfdom, IPOPT, Ray) writes on file descriptor 2 during the block:
    click's runner only captures Python's ``sys.stderr``, so such lines would be missed."""
    import os
    import sys

    sys.stderr.flush()
    saved = os.dup(2)
    captured: list[str] = []
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.append(sink.read().decode(errors="replace"))


NAN_TOKEN = re.compile(r"(?<![A-Za-z_])[-+]?(nan|inf|infinity)(?![A-Za-z_])", re.IGNORECASE)
EXIT_CODES = (0, 2, 3, 4)  # ok, one-line error, suspect data (identify), no consistent payload


def invoke_and_judge(
    args: list, work: Path, outputs: list[Path], before: dict | None = None
) -> tuple[list[str], str, float]:
    """Run ``physid ARGS`` in-process and judge it: (problems, outcome, seconds).

    Problems: tracebacks, exit codes other than :data:`EXIT_CODES`, on exit 2 anything but one
    ``physid: error:`` line or a changed/new ``outputs`` path (or a staging/temporary file
    left in ``work``), lines written by C code on descriptor 2, and NaN/inf in the files
    written or the numbers printed on success. ``before``: snapshot of outputs that existed.
    """
    from click.testing import CliRunner

    from physid.cli import main

    before = before or {}
    start = time.perf_counter()
    try:  # relative paths (an option value '-1' given as --out) land in work
        with native_stderr() as native, contextlib.chdir(work), caught_warnings() as caught:
            result = CliRunner().invoke(main, [str(a) for a in args])
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - e.g. a Rust panic that click re-raises
        elapsed = time.perf_counter() - start
        return [f"traceback: {type(error).__name__} (uncaught by click): {error}"], "crash", elapsed
    elapsed = time.perf_counter() - start
    problems: list[str] = []
    strays = [warning_problem(w) for w in caught]
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        frame = traceback.extract_tb(result.exc_info[2])[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        problems.append(
            f"traceback: {type(result.exception).__name__} at {where}: {result.exception}"
        )
    elif result.exit_code not in EXIT_CODES:
        problems.append(f"exit code {result.exit_code}")
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    strays += [f"warning: stderr line: {line[:300]}" for line in lines if WARNING_LINE.search(line)]
    lines = [line for line in lines if not WARNING_LINE.search(line)]
    noise = [line for line in native[0].splitlines() if line.strip()]
    strays += [
        f"warning: C-level stderr: {line[:300]}"
        for line in noise
        if NATIVE_WARNING_LINE.search(line)
    ]
    noise = [line for line in noise if not NATIVE_WARNING_LINE.search(line)]
    if noise:
        problems.append(f"message: C-level stderr {noise[:2]}")
    if result.exit_code == 2 and not problems:
        clean = len(lines) == 1 and lines[0].startswith("physid: error: ")
        usage = bool(lines) and lines[0].startswith("Usage:")
        stub = bool(lines) and lines[-1].endswith("inputs accepted")  # after a progress bar
        if not (clean or usage or stub):
            problems.append(f"message: {lines}")
        written = [p.name for p in outputs if _changed(work / p, before.get(p))]
        if written:
            problems.append(f"partial output: {written}")
    leftovers = [p.name for p in work.rglob(".*") if p.name.endswith((".staging", ".tmp"))]
    if leftovers:
        problems.append(f"partial output: {leftovers[:3]}")
    stray = [line for line in lines if "Traceback" in line]
    if stray:
        problems.append(f"stray stderr: {stray[:2]}")
    if result.exit_code != 2 and not problems:
        printed = result.stdout
        for path in sorted(map(str, outputs), key=len, reverse=True):  # an --out named 'inf'
            printed = printed.replace(path, "<out>")
        problems += _nan_in([work / p for p in outputs], printed)
    problems += strays  # counted apart: a warning does not hide the other checks
    accepted = any("inputs accepted" in line for line in lines)
    outcome = "accepted" if accepted else "rejected" if result.exit_code == 2 else "exit"
    return problems, f"{outcome} {result.exit_code}", elapsed


# a library's own warning line: Python's "...Warning:" form on stderr (physid's deliberate
# "warning: ..." and "physid: warning: ..." lines are not stray); any case on descriptor 2
WARNING_LINE = re.compile(r"Warning\b")
NATIVE_WARNING_LINE = re.compile(r"\bwarning\b", re.IGNORECASE)


@contextlib.contextmanager
def caught_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Every Python warning raised during the block, recorded instead of printed: under
    Python's default action, each distinct one once per case (as a user running ``physid``
    would see it, but DeprecationWarnings too, which Python hides outside ``__main__``), and
    regardless of an outer filter that turns warnings into errors (pytest's
    ``filterwarnings("error")``)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.resetwarnings()
        warnings.simplefilter("default")
        yield caught


def warning_problem(caught: warnings.WarningMessage) -> str:
    """One stray warning as a problem line: its category, text and the file:line raising it."""
    text = " ".join(str(caught.message).split())[:300]
    return f"warning: {caught.category.__name__}: {text} ({caught.filename}:{caught.lineno})"


def _changed(path: Path, previous: object) -> bool:
    return snapshot(path) != previous


def snapshot(path: Path) -> object:
    """What ``path`` holds (names and times of a folder's files, a file's time), or None."""
    try:
        if path.is_dir():
            return sorted((str(p), p.stat().st_mtime_ns) for p in path.rglob("*"))
        if path.exists() or path.is_symlink():
            return path.lstat().st_mtime_ns
    except OSError:  # a name too long, a folder we may not read: nothing was written there
        return None
    return None


def _json_nan(text: str) -> bool:
    """Whether a JSON document holds a NaN or infinite number (or does not parse)."""

    def bad(node) -> bool:  # noqa: ANN001
        if isinstance(node, dict):
            return any(bad(v) for v in node.values())
        if isinstance(node, list):
            return any(bad(v) for v in node)
        return isinstance(node, float) and not np.isfinite(node)

    try:
        return bad(json.loads(text))
    except ValueError:
        return True


def _csv_values(text: str) -> str:
    """A CSV's rows below its header: a column of a joint a URDF names "-inf" (fuzz seed 185,
    ``q_-inf``) is a name, not a value."""
    return text.split("\n", 1)[1] if "\n" in text else ""


def _nan_in(outputs: list[Path], stdout: str) -> list[str]:
    """NaN/inf in the JSON/CSV files written, or in the numbers printed on the terminal."""
    found = []
    files = []
    for path in outputs:
        if snapshot(path) is not None:
            files += list(path.rglob("*")) if path.is_dir() else [path]
    for path in files:
        if path.suffix not in (".json", ".csv") or not path.is_file():
            continue
        text = path.read_text(errors="replace")
        if path.suffix == ".json" and _json_nan(text):  # (a path named 'NaN' is no NaN)
            found.append(f"NaN in {path.name}")
        elif path.suffix == ".csv" and (value := NAN_TOKEN.search(_csv_values(text))):
            found.append(f"NaN in {path.name}: {value[0]}")
    match = NAN_TOKEN.search(stdout)
    if match:
        line = next(line for line in stdout.splitlines() if NAN_TOKEN.search(line))
        found.append(f"NaN printed: {line[:160]}")
    return found


# which command each file kind of :func:`command` runs (for the per-command table)
FILE_COMMANDS = {"params": "validate", "poses": "impacts identify"}
CATEGORIES = ("traceback", "message", "partial output", "NaN", "warning", "hang", "exit code")


def schedule(cases: int, seed: int, names: set[str] | None = None) -> list[tuple[str, object]]:
    """The cases of a run: ``("file", kind)`` (the corruptions above) and ``("command",
    Command)`` (:mod:`fuzz_commands`) in turn; the slow commands (demo) once in 50."""
    fuzz_commands = _commands_module()
    slots: list[tuple[str, object]] = [("file", kind) for kind in KINDS]
    slots += [("command", c) for c in fuzz_commands.COMMANDS if c.name not in fuzz_commands.SLOW]
    slow = [("command", c) for c in fuzz_commands.COMMANDS if c.name in fuzz_commands.SLOW]
    if names is not None:
        slots = [s for s in slots if _command_name(s) in names]
        slow = [s for s in slow if _command_name(s) in names]
    rng = random.Random(seed)
    return [
        rng.choice(slow) if slow and (rng.random() < 0.02 or not slots) else slots[n % len(slots)]
        for n in range(cases)
    ]


def _command_name(slot: tuple[str, object]) -> str:
    what, item = slot
    if what == "file":
        return FILE_COMMANDS.get(str(item), "identify")
    return item.name  # type: ignore[attr-defined]


def _commands_module():  # noqa: ANN202
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import fuzz_commands

    return fuzz_commands


def make_all_seeds(folder: Path) -> dict[str, Path]:
    """The seeds of the file corruptions and of every command."""
    import fuzz_seeds

    _commands_module()
    return fuzz_seeds.make_command_seeds(folder / "commands", make_seeds(folder))


def run_slot(
    rng: random.Random,
    slot: tuple[str, object],
    seeds: dict[str, Path],
    work: Path,
    *,
    full: bool = False,
    stub: bool = False,
) -> tuple[list[str], str]:
    """One case of :func:`schedule`: the file corruptions with the estimator stubbed unless
    ``full``; the commands with their real estimators unless ``stub``."""
    what, item = slot
    if what == "file":
        with stub_estimator(not full):
            return run_case(rng, str(item), seeds, work)
    # the demo's identification is identify's (fuzzed by the file cases); on 7,500 samples
    # with its report it runs 40-120 s on 2 loaded cores, no tiny input: its options and
    # output paths are what is fuzzed here
    with stub_estimator(stub or item.name == "demo"):  # type: ignore[attr-defined]
        return _commands_module().run_command_case(rng, item, seeds, work)


def main(argv: list[str] | None = None) -> None:
    import faulthandler
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--full", action="store_true", help="run the real identification")
    parser.add_argument("--stub", action="store_true", help="stub the commands' estimators")
    parser.add_argument("--commands", default=None, help="comma-separated names (default all)")
    parser.add_argument("--verbose", action="store_true", help="print each problem at once")
    parser.add_argument("--warnings", action="store_true", help="list every stray warning")
    options = parser.parse_args(argv)
    names = None if options.commands is None else set(options.commands.split(","))
    rng = random.Random(options.seed)
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    examples: dict[str, str] = {}
    outcomes: collections.Counter = collections.Counter()
    stray: dict[tuple[str, str], list[int]] = collections.defaultdict(list)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        seeds = make_all_seeds(Path(folder) / "seeds")
        work = Path(folder) / "work"
        work.mkdir()
        for number, slot in enumerate(schedule(options.cases, options.seed, names)):
            name = _command_name(slot)
            faulthandler.dump_traceback_later(600, exit=True)  # a real hang: stop, show where
            problems, outcome = run_slot(
                rng, slot, seeds, work, full=options.full, stub=options.stub
            )
            faulthandler.cancel_dump_traceback_later()
            table[name]["cases"] += 1
            outcomes[f"{name}: {outcome}"] += 1
            for problem in problems:
                category = problem.split(":")[0].split(" in ")[0]
                category = {"stray stderr": "message"}.get(category, category)
                table[name][category] += 1
                examples.setdefault(f"{name} {category}", problem[:400])
                if category == "warning":
                    stray[(name, re.sub(r" \[[^]]*\]$", "", problem))].append(number)
                if options.verbose:
                    print(f"case {number} {name}: {problem[:600]}", file=sys.stderr, flush=True)
    _print_table(table, outcomes, examples, time.perf_counter() - started, options)
    if options.warnings:
        print(f"stray warnings (fuzz --seed {options.seed}; case numbers):")
        for (name, problem), cases in sorted(stray.items()):
            shown = ", ".join(map(str, cases[:8])) + (", ..." if len(cases) > 8 else "")
            print(f"  {name}: {problem} -- {len(cases)} case(s): {shown}")


def _print_table(table, outcomes, examples, elapsed: float, options) -> None:  # noqa: ANN001
    """The per-command table of problems, the outcomes and one example per category."""
    total = sum(row["cases"] for row in table.values())
    print(
        f"{total} cases in {elapsed:.0f} s (identify/validate file cases: "
        f"{'real' if options.full else 'stub'} estimator; commands: "
        f"{'stub' if options.stub else 'real'} estimators)"
    )
    print(f"{'command':28s} {'cases':>6s} " + " ".join(f"{c:>14s}" for c in CATEGORIES))
    for name in sorted(table):
        row = table[name]
        print(f"{name:28s} {row['cases']:6d} " + " ".join(f"{row[c]:14d}" for c in CATEGORIES))
    sums = [sum(row[c] for row in table.values()) for c in CATEGORIES]
    print(f"{'total':28s} {total:6d} " + " ".join(f"{v:14d}" for v in sums))
    print("outcomes (accepted: the inputs passed validation; rejected: one-line error):")
    for outcome, count in sorted(outcomes.items()):
        print(f"  {outcome:40s} {count}")
    for category, example in examples.items():
        print(f"  e.g. {category}: {example}")


if __name__ == "__main__":
    main()
