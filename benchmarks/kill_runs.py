"""SIGKILL every ``physid`` command at random moments, run two at once, check what is left
(issues 10 and 31, item 5).

For each command (its valid tiny inputs of ``fuzz_seeds``; ``identify`` on 20 s of the simulated
arm) and each of ``--kills`` runs: start it into one output path, kill its process group's
leader with SIGKILL after a random delay spread over a full run's duration, wait ``--grace``
seconds and count

* orphans: processes still alive whose parent was the killed run (none may outlive it);
* partial outputs: right after the kill, a file in the output path (or the output file itself)
  that does not parse (JSON, CSV with a header and equal rows, PNG signature, HTML);
* then the next run into the same path must succeed (a sweep runs with ``--resume``), leave no
  ``.staging`` folder or ``.tmp`` file beside it, and every file it wrote must parse;
* two runs started at once into the same path: each ends 0 (or 2 saying the folder is in use),
  and what is left parses.

    python benchmarks/kill_runs.py --kills 30 [--commands identify,online]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def children_of(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` or that were re-parented from it (by session)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        state, parent, group = stat[0], int(stat[1]), int(stat[2])
        if state != "Z" and (parent == pid or group == pid) and int(entry.name) != pid:
            found.append(int(entry.name))
    return found


def files_parse(target: Path) -> list[str]:
    """Names of the files at ``target`` (a folder, or one output file) that do not parse as
    what their suffix says; hidden physid files (locks, output lists, temporaries) aside."""
    paths = list(target.rglob("*")) if target.is_dir() else [target] if target.exists() else []
    bad = []
    for path in paths:
        if not path.is_file() or path.name.startswith("."):
            continue
        try:
            if path.suffix == ".json":
                json.loads(path.read_text())
            elif path.suffix == ".png":
                assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            elif path.suffix == ".html":
                assert path.read_text().rstrip().endswith("</html>")
            elif path.suffix == ".csv":
                lines = path.read_text().splitlines()
                assert lines and len({line.count(",") for line in lines}) == 1
        except (AssertionError, ValueError, OSError):
            bad.append(path.name)
    return bad


def leftovers(target: Path) -> list[str]:
    """Staging folders and temporary files of the atomic writers beside or inside ``target``."""
    folder = target if target.is_dir() else target.parent
    hidden = list(folder.parent.glob(f".{target.name}.*")) + list(folder.rglob(".*"))
    return [p.name for p in hidden if p.name.endswith((".staging", ".tmp"))]


def command_lines(folder: Path) -> dict[str, tuple[list[str], Path]]:
    """Each command's argument list (valid tiny inputs) and its output path, in ``folder``."""
    sys.path.insert(0, str(HERE))
    import fuzz
    import fuzz_commands
    import fuzz_seeds

    seeds = fuzz_seeds.make_command_seeds(folder / "seeds", fuzz.make_seeds(folder / "seeds"))
    lines = {}
    for command in fuzz_commands.COMMANDS:
        if not command.outputs or command.name in ("demo", "payload"):
            continue  # demo: a long identify (run through 'identify'); payload: the lead's
        args = {k: fuzz_commands._resolve(v, seeds, folder) for k, v in command.args.items()}
        (option,) = command.outputs
        args[option] = str(folder / "out" / command.name.replace(" ", "_") / args[option])
        argv = [*command.words, *(fuzz_commands._resolve(v, seeds, folder)
                                  for v in command.positional)]  # fmt: skip
        for key, value in args.items():
            argv += [key, value]
        flags = [f for f in ("--quiet", "--resume") if f in command.flags]  # sweep: resumable
        lines[command.name] = ([*argv, *flags], Path(args[option]))
    return lines


def identify_line(folder: Path) -> tuple[list[str], Path]:
    """``physid identify`` on 20 s of the simulated arm at 1 kHz."""
    import numpy as np

    from physid.recordings.trajectory import write_trajectory_csv
    from physid.sim.arm import (
        arm6_model,
        arm6_urdf_path,
        simulate_random_excitation,
        true_parameters,
    )

    model = arm6_model()
    generator = np.random.default_rng(0)
    theta = true_parameters(model, generator)
    sim = simulate_random_excitation(model, theta, duration_s=20.0, sample_rate_hz=1000.0,
                                     rng=generator)  # fmt: skip
    data = write_trajectory_csv(folder / "train.csv", sim.recorded)
    out = folder / "out" / "identify" / "fit"
    return ["identify", "--urdf", str(arm6_urdf_path()), "--data", str(data), "--out", str(out),
            "--quiet"], out  # fmt: skip


def physid_process(argv: list[str], **options) -> subprocess.Popen:
    """``physid ARGV`` in its own session (its pid is the process group its workers inherit)."""
    physid = str(Path(sys.executable).with_name("physid"))
    return subprocess.Popen([physid, *argv], start_new_session=True, **options)


def kill_once(argv: list[str], out: Path, delay: float, grace: float) -> dict[str, int]:
    """One SIGKILL after ``delay`` s, then the checks of the module docstring."""
    counts = dict.fromkeys(("orphans", "partial outputs", "rerun failures", "left behind"), 0)
    run = physid_process(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(delay)
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    time.sleep(grace)
    orphans = children_of(run.pid)
    counts["orphans"] += len(orphans)
    for pid in orphans:  # do not let one failure poison the next runs
        os.kill(pid, signal.SIGKILL)
    counts["partial outputs"] += len(files_parse(out))
    rerun = physid_process(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, stderr = rerun.communicate()
    counts["rerun failures"] += rerun.returncode not in (0, 3)
    counts["left behind"] += len(leftovers(out)) + len(files_parse(out))
    if rerun.returncode not in (0, 3):
        print(f"  rerun of {argv[:2]} failed: {stderr.strip()[-300:]}", file=sys.stderr)
    return counts


def race_once(argv: list[str], out: Path) -> dict[str, int]:
    """Two runs started together into one path: 0, or 2 'in use'; what is left parses."""
    runs = [physid_process(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]  # fmt: skip
    results = [run.communicate() + (run.returncode,) for run in runs]
    bad = sum(code not in (0, 3) and not (code == 2 and "in use" in err)
              for _, err, code in results)  # fmt: skip
    return {"race failures": bad, "race corrupt": len(files_parse(out)) + len(leftovers(out))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=30, help="SIGKILLs per command")
    parser.add_argument("--grace", type=float, default=2.0, help="seconds before counting")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--commands", default=None, help="comma-separated (default: all)")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        lines = command_lines(folder) | {"identify": identify_line(folder)}
        wanted = options.commands.split(",") if options.commands else sorted(lines)
        header = ("orphans", "partial outputs", "rerun failures", "left behind",
                  "race failures", "race corrupt")  # fmt: skip
        print(
            f"{'command':20s} {'kills':>5s} {'run s':>6s} " + " ".join(f"{h:>15s}" for h in header)
        )
        for command in wanted:
            argv, out = lines[command]
            started = time.perf_counter()
            subprocess.run([str(Path(sys.executable).with_name("physid")), *argv],
                           check=True, capture_output=True)  # fmt: skip
            full_run = time.perf_counter() - started
            totals = dict.fromkeys(header, 0)
            for _ in range(options.kills):
                for key, value in kill_once(argv, out, rng.uniform(0.05, full_run),
                                            options.grace).items():  # fmt: skip
                    totals[key] += value
            for key, value in race_once(argv, out).items():
                totals[key] += value
            print(f"{command:20s} {options.kills:5d} {full_run:6.1f} "
                  + " ".join(f"{totals[h]:15d}" for h in header), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
