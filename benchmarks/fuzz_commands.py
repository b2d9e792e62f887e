"""Every ``physid`` command and subcommand fuzzed with a careless user's damage (issue 31).

A case takes one command with valid tiny inputs (:mod:`fuzz_seeds`) and damages one thing:

* an option value: wrong type, empty, NaN/inf, 1e300, -1e308, 1e-300, 2**31, negative, text;
* an input file (CSV/NPZ/Parquet recording, manifest, YAML config or sweep spec, params JSON,
  URDF, camera poses, impact snapshots): :func:`fuzz.corrupt`'s byte and structure damage, or
  what a user's file
  gets wrong: rows reversed / shuffled / with one time stamp, time in ms, positions x1000, all
  torques zero, a constant recording, 1-10 rows, a 100 s gap; URDF without an inertial, zero
  mass, a non-PD inertia, a zero joint axis, truncated XML; missing, empty, binary or
  wrong-kind files;
* an output path: under a regular file, empty, an existing file or folder, read-only, very
  long, Unicode, in a folder still locked by another run.

It runs in-process (``click.testing``) with the real estimators and judges the outcome with
:func:`fuzz.judge`: tracebacks, unclean messages (anything but one ``physid: error:`` line on
exit 2, C-level stderr noise such as urdfdom's), partial outputs after a failure, NaN in what
was written or printed with exit 0, and hangs (a case over 60 s).
"""

from __future__ import annotations

import contextlib
import random
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HANG_S = 60.0
BAD_OPTION_VALUES = (
    "",
    "1e309",
    "+inf",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "1e300",
    "-1e308",
    "1e-300",
    "0",
    "-1",
    "abc",
    "2147483648",
    "1,2",
    "x,x",
    "é",
    "0x10",
    " ",
    "1e-9",
    "-0",
)


@dataclass(frozen=True)
class Command:
    """One command line: ``args`` (option -> value; ``{seed}`` names a seed file), the input
    files it reads (option -> kind of damage), its outputs (option -> "dir" | "file") and a
    ``stub`` hook name when the estimator is replaced in the quick test sample."""

    name: str
    words: tuple[str, ...]
    args: dict[str, str]
    files: dict[str, str]
    outputs: dict[str, str]
    flags: tuple[str, ...] = ()
    positional: tuple[str, ...] = ()
    extra_values: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _commands() -> tuple[Command, ...]:
    ellipse = "ellipse:0.05,0.025"
    return (
        Command(
            "export",
            ("export",),
            {"--params": "{params}", "--urdf": "{urdf}", "--out": "exported.urdf"},
            {"--params": "params", "--urdf": "urdf"},
            {"--out": "file"},
            extra_values={"--format": ("urdf", "mjcf", "sdf"), "--out": ("e.xml", "e.txt")},
        ),
        Command(
            "excite",
            ("excite",),
            {
                "--urdf": "{two_link}",
                "--config": "{excite_config}",
                "--out": "exc.csv",
                "--harmonics": "2",
                "--base-frequency": "0.5",
                "--duration": "4",
                "--criterion": "cond",
                "--seed": "1",
            },
            {"--urdf": "urdf", "--config": "config"},
            {"--out": "file"},
            extra_values={"--summary": ("s.json",), "--criterion": ("logdet", "aopt")},
        ),
        Command(
            "oe",
            ("oe",),
            {
                "--urdf": "{two_link}",
                "--data": "{oe_csv}",
                "--body": "elbow",
                "--config": "{oe_config}",
                "--out": "oe_out",
                "--chart": "exp_eig",
                "--rollout": "multiple",
                "--max-iterations": "30",
            },
            {"--urdf": "urdf", "--data": "recording", "--config": "config"},
            {"--out": "dir"},
            flags=("--no-nullspace", "--floating"),
            extra_values={
                "--prior-std": ("0.1",),
                "--body": ("shoulder", "base", ""),
                "--topic": ("/joint_states",),
                "--episode": ("0", "-1"),
                "--imu-topic": ("auto", "/imu", ""),
                "--wrench-topic": ("/ft", ""),
            },
        ),
        Command(
            "multibody simulate",
            ("multibody", "simulate"),
            {
                "--urdf": "{pendulum_urdf}",
                "--config": "{multibody_config}",
                "--control": "{control_csv}",
                "--out": "mb_sim",
                "--dt": "0.001",
                "--q0": "0.5",
                "--dq0": "0",
                "--every": "5",
            },
            {"--urdf": "urdf", "--config": "config", "--control": "recording"},
            {"--out": "dir"},
        ),
        Command(
            "multibody identify",
            ("multibody", "identify"),
            {
                "--urdf": "{pendulum_urdf}",
                "--config": "{multibody_config}",
                "--data": "{pendulum_csv}",
                "--out": "mb_id",
                "--dt": "0.01",
                "--max-iterations": "20",
            },
            {"--urdf": "urdf", "--config": "config", "--data": "recording"},
            {"--out": "dir"},
            extra_values={
                "--kappa": ("100",),
                "--refine-windows": ("2,whole", "0.5"),
                "--refine-dt": ("0.01",),
                "--refine-evaluations": ("3",),
            },
            flags=("--quiet", "--refine"),
        ),
        Command(
            "impacts simulate",
            ("impacts", "simulate"),
            {
                "--shape": ellipse,
                "--surface": "line:0,0",
                "--q0": "0,0.1,-0.785",
                "--v0": "1,-1,0",
                "--mu": "0.3",
                "--restitution": "0.2",
                "--duration": "0.3",
                "--fps": "60",
                "--noise": "0.001",
                "--seed": "3",
                "--out": "poses.csv",
            },
            {},
            {"--out": "file"},
            extra_values={
                "--model": ("igc", "x"),
                "--solver": ("nlp",),
                "--dt": ("1e-4",),
                "--inertia-ratio": ("1e-4",),
                "--noise-angle": ("0.01",),
                "--shape": ("polygon:0,0;1,0;0,1", "ellipse:1,2,3"),
                "--surface": ("line:0.1,0", "line:x"),
            },
        ),
        Command(
            "impacts identify",
            ("impacts", "identify"),
            {"--data": "{bounce}", "--shape": ellipse, "--surface": "line:0,0", "--out": "imp_id"},
            {"--data": "poses"},
            {"--out": "dir"},
            extra_values={
                "--mass": ("0.064",),
                "--noise": ("0.002",),
                "--noise-angle": ("0.01",),
                "--max-substep": ("0.002",),
            },
        ),
        Command(
            "impacts identify-snapshots",
            ("impacts", "identify-snapshots"),
            {"--data": "{snapshots}", "--out": "imp_snap"},
            {"--data": "snapshots"},
            {"--out": "dir"},
            flags=("--verbose",),
            extra_values={
                "--noise-velocity": ("0.05", "1e-6"),
                "--max-inertia-ratio": ("1e-9", "0.01"),
                "--mu-max": ("0.1", "10"),
                "--gravity": ("0,0", "2,-9.6", "0,-981"),
            },
        ),
        Command(
            "online",
            ("online",),
            {
                "--urdf": "{online_urdf}",
                "--data": "{online_csv}",
                "--body": "arm_joint_7",
                "--config": "{online_config}",
                "--out": "online_out",
            },
            {"--urdf": "urdf", "--data": "recording", "--config": "config"},
            {"--out": "dir"},
            flags=("--quiet",),
            extra_values={
                "--summary-window": ("0.5:", ":", "1:0", "a:b", "1e300:"),
                "--wrench-topic": ("/ft", ""),
            },
        ),
        Command(
            "sweep",
            ("sweep",),
            {"--out": "sweep_out", "--workers": "1", "--retries": "0"},
            {"spec": "spec"},
            {"--out": "dir"},
            flags=("--quiet", "--dry-run", "--resume"),
            positional=("{sweep_spec}",),
            extra_values={"--address": ("auto", "x,x", "ray://nowhere:1", "")},
        ),
        Command(
            "payload",
            ("payload",),
            {
                "--urdf": "{urdf}",
                "--params": "{params}",
                "--data": "{csv}",
                "--link": "link_6",
                "--out": "payload_out",
            },
            {"--params": "params", "--data": "recording"},
            {"--out": "dir"},
            extra_values={"--mass": ("1.0",), "--unloaded": ("{csv}",)},
        ),
        Command(
            "simfit",
            ("simfit",),
            {
                "--model": "{simfit_mjcf}",
                "--data": "{simfit_csv}",
                "--out": "simfit_out",
                "--max-evaluations": "6",
                "--window": "0.5",
            },
            {"--model": "urdf", "--data": "recording"},
            {"--out": "dir"},
            flags=("--quiet", "--no-delay"),
            extra_values={
                "--validate": ("{simfit_csv}",),
                "--fit": ("damping", "armature,frictionloss", "mass", ""),
                "--hold": ("elbow", "shoulder.damping", "shoulder,elbow", "wrist", ",", "elbow.x"),
                "--topic": ("/joint_states",),
                "--episode": ("0", "-1"),
            },
        ),
        Command(
            "simfit currents",
            ("simfit",),
            {
                "--model": "{simfit_mjcf}",
                "--data": "{simfit_currents}",
                "--config": "{simfit_gains}",
                "--out": "simfit_out",
                "--max-evaluations": "6",
            },
            {"--model": "urdf", "--data": "recording", "--config": "config"},
            {"--out": "dir"},
            flags=("--quiet",),
        ),
        Command("config", ("config",), {}, {}, {}, flags=("--template",)),
        Command(
            "demo",
            ("demo",),
            {"--out": "demo_out", "--duration": "5"},
            {},
            {"--out": "dir"},
            flags=("--quiet",),
            extra_values={"--seed": ("2",)},
        ),
    )


COMMANDS = _commands()
# the demo runs a 5 s identification, sweep starts no real Ray (an in-process stand-in):
# both are mostly fuzzed on their options and output paths
SLOW = {"demo"}


# --- damage to recordings, URDFs, configs, output paths -----------------------------------------


def _table(path: Path) -> tuple[list[str], np.ndarray]:
    names = path.read_text().splitlines()[0].split(",")
    return names, np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


def _write_table(path: Path, names: list[str], values: np.ndarray) -> None:
    from physid.files.io import table_csv_text

    path.write_text(table_csv_text(dict(zip(names, values.T, strict=True)), fmt="%.12g"))


def damage_recording(rng: random.Random, seed: Path, target: Path) -> str:
    """What users' recordings get wrong, written at ``target`` (a CSV); returns its name."""
    names, values = _table(seed)
    t = names.index("t")
    kind = rng.choice(
        (
            "reversed",
            "shuffled",
            "one_stamp",
            "ms",
            "x1000",
            "zero_torque",
            "constant",
            "few_rows",
            "gap",
            "duplicate_rows",
            "negative_time",
            "huge_time",
            "tiny_time",
            "nan_edge",
            "huge_cell",
        )
    )
    if kind == "reversed":
        values = values[::-1]
    elif kind == "shuffled":
        values = values[np.random.default_rng(rng.randrange(99)).permutation(len(values))]
    elif kind == "one_stamp":
        values[:, t] = values[0, t]
    elif kind == "ms":
        values[:, t] *= 1000.0
    elif kind == "x1000":
        columns = [k for k, n in enumerate(names) if n.startswith(("q_", "x", "y"))]
        values[:, columns] *= 1000.0
    elif kind == "zero_torque":
        values[:, [k for k, n in enumerate(names) if n.startswith(("tau_", "u_"))]] = 0.0
    elif kind == "constant":
        values[:, [k for k in range(len(names)) if k != t]] = values[
            0, [k for k in range(len(names)) if k != t]
        ]
    elif kind == "few_rows":
        values = values[: rng.randint(1, 10)]
    elif kind == "gap":
        values[len(values) // 2 :, t] += 100.0
    elif kind == "duplicate_rows":
        values = np.repeat(values, 2, axis=0)
    elif kind == "negative_time":
        values[:, t] -= 1e9
    elif kind == "huge_time":
        values[rng.randrange(len(values)), t] = rng.choice((-1e308, 1e308, 1e300))
    elif kind == "nan_edge":  # the first or last row, where windows and grids start and end
        values[rng.choice((0, -1)), rng.choice((t, rng.randrange(len(names))))] = rng.choice(
            (np.nan, np.inf, -np.inf)
        )
    elif kind == "huge_cell":
        values[rng.randrange(len(values)), rng.randrange(len(names))] = rng.choice(
            (1e300, -1e308, 1e9, 1e-300)
        )
    else:
        values[:, t] *= 1e-9
    _write_table(target, names, values)
    return kind


def damage_snapshots(rng: random.Random, seed: Path, target: Path) -> str:
    """What exported impact snapshots get wrong, written at ``target``; returns its name: a
    sign convention (a column of the contact geometry or omega negated), pre and post swapped,
    velocities in mm/s, one to three rows, every impact the same, a cell of 0 or 1e9."""
    names, values = _table(seed)
    kind = rng.choice(("negate", "swap", "mm", "few_rows", "same_rows", "zero_cell", "huge_cell"))
    if kind == "negate":
        groups = (
            ("jt_w",),
            ("jn_w",),
            ("jn_w", "jt_w"),
            ("jn_x", "jn_y", "jn_w"),
            ("omega_pre", "omega_post"),
            ("jt_x", "jt_y"),
        )
        group = rng.choice(groups)
        values[:, [names.index(c) for c in group]] *= -1.0
        kind = "negate " + ",".join(group)
    elif kind == "swap":
        pre = [names.index(c) for c in ("vx_pre", "vy_pre", "omega_pre")]
        post = [names.index(c) for c in ("vx_post", "vy_post", "omega_post")]
        values[:, pre + post] = values[:, post + pre]
    elif kind == "mm":
        values[:, [k for k, n in enumerate(names) if n.startswith(("vx", "vy"))]] *= 1000.0
    elif kind == "few_rows":
        values = values[: rng.randint(1, 3)]
    elif kind == "same_rows":
        values = np.repeat(values[:1], len(values), axis=0)
    else:
        cell = 0.0 if kind == "zero_cell" else 1e9
        values[rng.randrange(len(values)), rng.randrange(len(names))] = cell
    _write_table(target, names, values)
    return kind


def damage_urdf(rng: random.Random, seed: Path, target: Path) -> str:
    """A URDF with what real ones get wrong; returns the damage's name."""
    import re

    text = seed.read_text()
    kind = rng.choice(
        (
            "no_inertial",
            "zero_mass",
            "non_pd",
            "zero_axis",
            "truncated",
            "no_limit",
            "joint_type",
            "not_xml",
            "negative_inertia",
            "huge_mass",
        )
    )
    inertials = [m.span() for m in re.finditer(r"<inertial>.*?</inertial>", text, re.S)]
    if kind == "no_inertial" and inertials:
        start, end = rng.choice(inertials)
        text = text[:start] + text[end:]
    elif kind == "zero_mass":
        text = re.sub(r'<mass value="[^"]*"', '<mass value="0"', text, count=rng.randint(1, 9))
    elif kind == "huge_mass":
        text = re.sub(r'<mass value="[^"]*"', '<mass value="1e300"', text, count=1)
    elif kind == "non_pd":
        text = re.sub(r'ixx="[^"]*"', 'ixx="1e3"', text, count=1)
    elif kind == "negative_inertia":
        text = re.sub(r'izz="[^"]*"', 'izz="-0.5"', text, count=1)
    elif kind == "zero_axis":
        text = re.sub(r'<axis xyz="[^"]*"', '<axis xyz="0 0 0"', text, count=1)
    elif kind == "truncated":
        text = text[: rng.randrange(len(text))]
    elif kind == "no_limit":
        text = re.sub(r"<limit[^>]*/>", "", text)
    elif kind == "joint_type":
        text = re.sub(
            r'type="revolute"', f'type="{rng.choice(("prismatic", "fixed", "x"))}"', text, count=1
        )
    else:
        text = "robot: not xml\n"
    target.write_text(text)
    return kind


def as_other_format(rng: random.Random, csv_path: Path, target_stem: Path) -> Path:
    """The recording as NPZ, Parquet or a YAML manifest that maps it (same columns)."""
    names, values = _table(csv_path)
    fmt = rng.choice(("npz", "parquet", "manifest"))
    if fmt == "npz":
        path = target_stem.with_suffix(".npz")
        np.savez(path, **{n: values[:, k] for k, n in enumerate(names)})
    elif fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = target_stem.with_suffix(".parquet")
        pq.write_table(pa.table({n: values[:, k] for k, n in enumerate(names)}), path)
    else:
        data = target_stem.with_name(target_stem.name + "_data.csv")
        shutil.copy(csv_path, data)
        path = target_stem.with_suffix(".yaml")
        columns = ", ".join(f"{n}: {n}" for n in names)
        path.write_text(
            f"format: physid.recording/1\nsources:\n  - file: {data.name}\n"
            f"    columns: {{{columns}}}\n"
        )
    return path


def bad_output_path(rng: random.Random, work: Path, kind: str) -> tuple[str, str]:
    """A damaged output path (and the name of the damage), made real in ``work``."""
    blocker = work / "a_file"
    blocker.write_text("x")
    damage = rng.choice(
        (
            "under_file",
            "empty",
            "existing_file",
            "existing_dir",
            "read_only",
            "long_name",
            "long_path",
            "unicode",
            "dot",
            "locked",
            "newline",
        )
    )
    if damage == "under_file":
        return str(blocker / "sub"), damage
    if damage == "empty":
        return "", damage
    if damage == "existing_file":
        return str(blocker), damage
    if damage == "existing_dir":
        folder = work / "existing"
        folder.mkdir(exist_ok=True)
        (folder / "keep.txt").write_text("mine")
        return str(folder if kind == "dir" else folder), damage
    if damage == "read_only":
        folder = work / "ro"
        folder.mkdir(exist_ok=True)
        folder.chmod(0o555)
        return str(folder / ("out" if kind == "dir" else "out.csv")), damage
    if damage == "long_name":
        return str(work / ("n" * 300 + ("" if kind == "dir" else ".csv"))), damage
    if damage == "long_path":
        return str(work / "/".join(["d" * 200] * 25)), damage
    if damage == "unicode":
        return str(work / ("résultat_数据" + ("" if kind == "dir" else ".csv"))), damage
    if damage == "dot":
        return ".", damage
    if damage == "locked":
        folder = work / "locked"
        folder.mkdir(exist_ok=True)
        return str(folder), damage
    return str(work / "bad\nname"), damage


def special_file(rng: random.Random, work: Path) -> Path:
    """Not a regular file: a folder, /dev/null, /dev/zero (endless) or a FIFO (a read blocks
    until someone writes)."""
    import os

    kind = rng.choice(("folder", "null", "zero", "fifo"))
    if kind == "folder":
        (work / "a_folder.csv").mkdir(exist_ok=True)
        return work / "a_folder.csv"
    if kind == "fifo":
        fifo = work / "fifo.csv"
        if not fifo.exists():
            os.mkfifo(fifo)
        return fifo
    return Path(f"/dev/{kind}")


@contextlib.contextmanager
def foreign_lock(path: Path):
    """Hold the physid lock of ``path`` from another process while the case runs."""
    import subprocess
    import sys

    script = (
        "import sys, time\nfrom physid.files.io import claim_output_dir\n"
        "with claim_output_dir(sys.argv[1]):\n    print('held', flush=True)\n"
        "    time.sleep(120)\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(path)], stdout=subprocess.PIPE, text=True
    )
    try:
        holder.stdout.readline()
        yield
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


class InProcessRay:
    """A stand-in for Ray that runs a sweep's tasks in this process, one after the other: the
    sweep's own checks, job folders and tables are fuzzed without starting Ray thousands of
    times (``tests/test_sweep.py`` runs the real one). An address other than a local start
    cannot be reached, as on a machine without a cluster."""

    def __init__(self) -> None:
        self.started = False

    def is_initialized(self) -> bool:
        return self.started

    def init(self, **options) -> None:
        if options.get("address") not in (None, "local"):
            raise ConnectionError(f"could not connect to {options['address']}")
        self.started = True

    def shutdown(self) -> None:
        self.started = False

    def remote(self, function):  # noqa: ANN001, ANN201
        class Task:
            def options(self, **_options):  # noqa: ANN202
                return self

            def remote(self, *args):  # noqa: ANN202
                return lambda: function(*args)

        return Task()

    def wait(self, refs: list, num_returns: int) -> tuple[list, list]:
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):  # noqa: ANN001, ANN201
        return ref()

    def cancel(self, ref, force: bool = False) -> None:  # noqa: ANN001
        pass


@contextlib.contextmanager
def without_ray():
    """Sweeps run on :class:`InProcessRay` for the block."""
    import physid.sweep.runner as runner

    original = runner.import_ray
    runner.import_ray = InProcessRay
    try:
        yield
    finally:
        runner.import_ray = original


# --- one case ------------------------------------------------------------------------------------


def _resolve(value: str, seeds: dict[str, Path], work: Path) -> str:
    if value.startswith("{") and value.endswith("}"):
        return str(seeds[value[1:-1]])
    return value


def build_case(rng: random.Random, command: Command, seeds: dict[str, Path], work: Path):
    """The damaged argument list of one case, its outputs, the damage's name and a lock to hold.

    Returns ``(args, outputs, damage, locked)``: ``outputs`` are the paths the command may
    write (checked for partial outputs), ``locked`` a folder another process must hold."""
    from fuzz import YAML_VALUES, corrupt, mutate_tree

    args = {k: _resolve(v, seeds, work) for k, v in command.args.items()}
    positional = [_resolve(v, seeds, work) for v in command.positional]
    for key, value in list(args.items()):
        if key in command.outputs:
            args[key] = str(work / value)
    flags = [f for f in command.flags if rng.random() < (0.7 if f == "--quiet" else 0.15)]
    for key, values in command.extra_values.items():
        if rng.random() < 0.15:
            args[key] = _resolve(rng.choice(values), seeds, work)
            if key in command.outputs:
                args[key] = str(work / args[key])
    choices = ["option"] * 3 + ["file"] * (4 if command.files else 0)
    choices += ["output"] * (2 if command.outputs else 0) + ["none", "repeat"]
    what = rng.choice(choices)
    damage, locked, extra_outputs = what, None, []
    if what == "option" and args:
        key = rng.choice(sorted(args))
        args[key] = rng.choice(BAD_OPTION_VALUES + tuple(command.extra_values.get(key, ())))
        damage = f"option {key}={args[key]!r}"
    elif what == "file":
        key = rng.choice(sorted(command.files))
        kind = command.files[key]
        source = Path(positional[0] if key == "spec" else args[key])
        bad = work / f"bad_{key.strip('-')}{source.suffix}"
        how = rng.random()
        if how < 0.04:
            bad = special_file(rng, work)
            damage = f"{key} special file {bad.name}"
        elif how < 0.12:
            bad.write_bytes(rng.choice((b"", bytes(range(256)) * 3, b"t\n")))
            damage = f"{key} empty/binary"
        elif how < 0.18:
            bad = work / "missing" / source.name
            damage = f"{key} missing"
        elif how < 0.24:
            other = rng.choice(sorted(seeds.values()))
            bad = work / f"wrong_kind{source.suffix}"
            shutil.copy(other, bad)
            damage = f"{key} wrong kind ({other.name})"
        elif kind == "recording" and how < 0.6:
            damage = f"{key} {damage_recording(rng, source, bad)}"
            if rng.random() < 0.3:
                bad = as_other_format(rng, bad, work / "converted")
        elif kind == "recording" and how < 0.7:
            bad = as_other_format(rng, source, work / "converted")
            damage = f"{key} as {bad.suffix}"
            if rng.random() < 0.5 and bad.suffix != ".yaml":
                fuzz_kind = "npz" if bad.suffix == ".npz" else "parquet"
                corrupt(rng, fuzz_kind, bad, bad)
        elif kind == "urdf" and how < 0.65:
            damage = f"{key} {damage_urdf(rng, source, bad)}"
        elif kind == "snapshots" and how < 0.6:
            damage = f"{key} {damage_snapshots(rng, source, bad)}"
        elif kind in ("config", "spec") and how < 0.65:
            import yaml

            document = mutate_tree(
                rng,
                yaml.safe_load(source.read_text()),
                YAML_VALUES + ({"kind": "x"}, "p" * 300, [1, [2, "x"], 3], 10**400, -(10**30)),
            )
            bad.write_text(yaml.safe_dump(document) if document is not None else "")
            damage = f"{key} tree"
        else:
            fuzz_kind = {
                "recording": "csv",
                "config": "config",
                "spec": "config",
                "params": "params",
                "urdf": "urdf",
                "poses": "poses",
                "snapshots": "poses",
            }[kind]
            corrupt(rng, fuzz_kind, source, bad)
            damage = f"{key} corrupt"
        if key == "spec":
            positional[0] = str(bad)
        else:
            args[key] = str(bad)
    elif what == "repeat" and args:
        key = rng.choice(sorted(args))
        flags += [key, rng.choice((args[key], *BAD_OPTION_VALUES[:6]))]
        damage = f"option {key} given twice"
        if key in command.outputs:  # the last one given is the one used
            extra_outputs.append(Path(flags[-1]))
    elif what == "output":
        key = rng.choice(sorted(command.outputs))
        args[key], name = bad_output_path(rng, work, command.outputs[key])
        damage = f"{key} {name}"
        if name == "locked":
            locked = Path(args[key])
    argv = [*command.words, *positional]
    for key, value in args.items():
        argv += [key, value]
    outputs = [Path(args[k]) for k in command.outputs if args.get(k)] + extra_outputs
    if command.name == "excite" and args.get("--out"):
        with contextlib.suppress(ValueError):  # ('.' has no name to give a suffix)
            outputs.append(Path(args["--out"]).with_suffix(".json"))
    if "--summary" in args:
        outputs.append(Path(args["--summary"]))
    return [*argv, *flags], outputs, damage, locked


def run_command_case(
    rng: random.Random, command: Command, seeds: dict[str, Path], work: Path
) -> tuple[list[str], str]:
    """Run one damaged case of ``command``; returns the problems found and the outcome."""
    import fuzz

    for leftover in work.iterdir():
        if leftover.is_dir():
            leftover.chmod(0o755)
            shutil.rmtree(leftover)
        else:
            leftover.unlink()
    argv, outputs, damage, locked = build_case(rng, command, seeds, work)
    with foreign_lock(locked) if locked else contextlib.nullcontext(), without_ray():
        before = {p: fuzz.snapshot(work / p) for p in outputs}
        problems, outcome, elapsed = fuzz.invoke_and_judge(argv, work, outputs, before)
    if elapsed > HANG_S:
        problems.append(f"hang: {elapsed:.0f} s")
    return [f"{p} [{damage}]" for p in problems], outcome
