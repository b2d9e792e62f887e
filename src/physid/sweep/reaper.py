"""Stop the local Ray instance with its driver, even when the driver is killed.

``ray.init(address="local")`` starts Ray's own processes (GCS server, raylet and the workers it
forks) as children of the ``physid sweep`` process. ``ray.shutdown()`` stops them on a normal exit,
but a SIGKILLed driver runs no cleanup: Ray's processes then live on until their heartbeats time out
(about a minute), holding CPU and memory. Ray does not let us arm a parent-death signal in its
processes, so a tiny reaper does it: started right before ``ray.init``, it records the driver's
descendants while the driver lives, and once it is gone kills them. Linux only (it reads ``/proc``);
elsewhere no reaper is started and Ray's own timeout applies.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_PROC = Path("/proc")

# Runs in its own interpreter (no physid import: it must start in milliseconds). argv: the driver's
# pid. While the driver lives, it records the driver's descendants every 0.2 s (Ray's processes
# appear during ray.init, which takes seconds, and its workers later); once the driver is gone it
# kills every one recorded that still runs. Descendants, not only children: the raylet dies with the
# driver and its agents and workers are re-parented at once, out of reach of a walk made afterwards
# (they would live on until Ray's timeout). A process is known by its pid and start time, so a pid
# the system has given to another process since is never killed.
_REAPER = """
import os, signal, sys, time
from pathlib import Path
driver, me = int(sys.argv[1]), os.getpid()
def table():
    rows = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                rows[int(entry.name)] = (int(fields[1]), int(fields[2]), fields[19], fields[0])
            except (OSError, IndexError, ValueError):
                continue
    return rows
def descendants(rows, root):
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, row in rows.items() if row[0] in frontier} - found
        found |= frontier
    return {(pid, rows[pid][2]) for pid in found if pid != me}
def is_ray(pid):
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"/ray/" in command or command.startswith(b"ray::")
group = os.getpgid(driver)
recorded = set()
while os.getppid() == driver:
    recorded |= descendants(table(), driver)
    time.sleep(0.2)
rows = table()
# Ray processes started since the last look: in the driver's process group and named for Ray
# (a pipe's other commands share the group and are never touched)
recorded |= {(pid, row[2]) for pid, row in rows.items()
             if row[1] == group and pid != me and is_ray(pid)}
for pid, started in recorded:
    row = rows.get(pid)
    if row is not None and row[2] == started and row[3] != "Z":
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
"""


def start_reaper() -> subprocess.Popen | None:
    """A reaper of the processes this process starts from now on (call it right before
    ``ray.init``); None where ``/proc`` is not there. Stop it with :func:`stop_reaper` after
    ``ray.shutdown()``."""
    if not (_PROC / str(os.getpid())).is_dir():
        return None
    return subprocess.Popen(
        [sys.executable, "-c", _REAPER, str(os.getpid())],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop_reaper(reaper: subprocess.Popen | None) -> None:
    """End a reaper whose driver is exiting normally (Ray already shut down)."""
    if reaper is not None and reaper.poll() is None:
        reaper.kill()
        reaper.wait()
