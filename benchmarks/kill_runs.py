"""SIGKILL ``physid identify`` at random moments, then check what it left (issue 10, item 5).

For each of ``--kills`` runs on the simulated arm's recording: start ``physid identify`` into one
``--out`` folder, kill its process group's leader with SIGKILL after a random delay (spread
over a full run's duration, so reading, fitting and the figure workers' drawing are all hit),
wait ``--grace`` seconds and count

* orphans: processes still alive whose parent was the killed run (figure workers must die with
  it: PR_SET_PDEATHSIG, else a watcher thread);
* then the next run into the same folder must succeed, leave no ``.staging`` folder beside it,
  and every file in the folder must parse (JSON, PNG signature, HTML).

    python benchmarks/kill_runs.py --kills 30
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


def files_parse(folder: Path) -> list[str]:
    """Names of files in ``folder`` that do not parse as what their suffix says."""
    bad = []
    for path in folder.rglob("*"):
        if not path.is_file() or path.name.startswith(".physid"):
            continue
        try:
            if path.suffix == ".json":
                json.loads(path.read_text())
            elif path.suffix == ".png":
                assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
            elif path.suffix == ".html":
                assert path.read_text().rstrip().endswith("</html>")
        except (AssertionError, ValueError, OSError):
            bad.append(path.name)
    return bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--grace", type=float, default=5.0, help="seconds before counting")
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    from physid.data import write_trajectory_csv
    from physid.sim.arm import (
        arm6_model,
        arm6_urdf_path,
        simulate_random_excitation,
        true_parameters,
    )

    rng = random.Random(options.seed)
    physid = str(Path(sys.executable).with_name("physid"))
    with tempfile.TemporaryDirectory() as folder:
        import numpy as np

        model = arm6_model()
        generator = np.random.default_rng(options.seed)
        theta = true_parameters(model, generator)
        sim = simulate_random_excitation(
            model, theta, duration_s=20.0, sample_rate_hz=1000.0, rng=generator
        )
        data = write_trajectory_csv(Path(folder) / "train.csv", sim.recorded)
        out = Path(folder) / "fit"
        command = [physid, "identify", "--urdf", arm6_urdf_path(), "--data", str(data)]
        command += ["--out", str(out), "--quiet"]
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        full_run = time.perf_counter() - started
        counts = {"orphans": 0, "staging left": 0, "unparsable files": 0, "rerun failures": 0}
        for _ in range(options.kills):
            # its own session: the run's pid is its process group, which its workers inherit
            run = subprocess.Popen(
                command,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            time.sleep(rng.uniform(0.05, full_run))
            os.kill(run.pid, signal.SIGKILL)
            run.wait()
            time.sleep(options.grace)
            orphans = children_of(run.pid)
            counts["orphans"] += len(orphans)
            for pid in orphans:  # do not let one failure poison the next runs
                os.kill(pid, signal.SIGKILL)
            rerun = subprocess.run(command, capture_output=True, text=True)
            counts["rerun failures"] += rerun.returncode not in (0, 3)
            counts["staging left"] += len(list(Path(folder).glob(".fit.*staging*")))
            counts["unparsable files"] += len(files_parse(out))
        print(f"{options.kills} SIGKILLs during identify (a full run takes {full_run:.1f} s):")
        for name, count in counts.items():
            print(f"  {name:18s} {count}")


if __name__ == "__main__":
    main()
