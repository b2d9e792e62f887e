"""Optional C compilation of the per-step CasADi functions (the residuals and their Jacobians).

CasADi's SX virtual machine evaluates the ~28,000 instructions of one Furuta step's impulse
Jacobian some twenty times slower than the same function generated as C and compiled with
``-O2``. Compilation costs seconds, so the shared object is cached on disk under a hash of the
generated source
(``$PHYSID_CACHE`` or ``~/.cache/physid``, sub-folder ``casadi``): the same model, step,
weight and parameter list compile once per machine. Without a C compiler, or if compilation
fails, the interpreted function is used and the reason is returned.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import casadi as ca

FLAGS = ["-O2", "-shared", "-fPIC"]


def cache_dir() -> Path:
    root = os.environ.get("PHYSID_CACHE") or Path.home() / ".cache" / "physid"
    return Path(root) / "casadi"


def compiled(fn: ca.Function) -> tuple[ca.Function, str]:
    """``(function, note)``: ``fn`` compiled to C and loaded (``note`` empty), or ``fn`` itself
    with the reason it was not compiled."""
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        return fn, "no C compiler on PATH: interpreted CasADi functions"
    name = fn.name()
    gen = ca.CodeGenerator(f"{name}.c", {"with_header": False})
    gen.add(fn)
    source = gen.dump()
    key = hashlib.sha256("\n".join([source, ca.__version__, *FLAGS]).encode()).hexdigest()[:20]
    target = cache_dir() / f"{name}_{key}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            c_file, so_file = Path(tmp) / f"{name}.c", Path(tmp) / f"{name}.so"
            c_file.write_text(source)
            done = subprocess.run(
                [compiler, *FLAGS, str(c_file), "-o", str(so_file), "-lm"],
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                return fn, f"C compilation failed ({done.stderr.strip()[:200]}): interpreted"
            so_file.replace(target)  # atomic: concurrent runs see a whole file or none
    return ca.external(name, str(target)), ""
