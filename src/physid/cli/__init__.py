"""The ``physid`` command line.

Each family of commands lives in its own module and registers itself on :data:`main`;
heavy imports (Pinocchio, CVXPY, CasADi) happen inside the commands so ``--help`` stays fast.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

# One BLAS thread unless the user asks for more, set before anything imports NumPy. physid's
# linear algebra is many small factorisations (per-joint QRs of ~100 columns, SDPs of a few
# hundred variables, a 420 x 71 SVD) where OpenBLAS' worker threads spin instead of work, and
# on a shared machine cost several times the CPU of one thread (docs/benchmarks.md). Export
# OPENBLAS_NUM_THREADS (or OMP_/MKL_NUM_THREADS) to override; tests/conftest.py and the
# benchmarks do the same.
from physid.threads import BLAS_THREAD_VARIABLES  # noqa: E402 - os and typing only

for _variable in BLAS_THREAD_VARIABLES:
    os.environ.setdefault(_variable, "1")

# NumPy asks Linux for 2 MB pages for every array of 4 MB or more; each such page is zeroed whole
# (and compacted for, when none is free) at its first touch, which for a command's short-lived
# arrays costs more system time than the fewer page faults save (docs/benchmarks.md). Export
# NUMPY_MADVISE_HUGEPAGE=1 to override.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")


def _keep_freed_memory() -> None:
    """Let the C allocator keep the memory of freed arrays for the next ones (glibc's mallopt;
    elsewhere nothing): by default it returns every block above its threshold to the system
    and the next array of that size is faulted in page by page again, which for a command's
    thousands of temporary arrays costs more system time than the arrays' arithmetic."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-3, 256 << 20)  # M_MMAP_THRESHOLD: blocks below 256 MB from the heap
        libc.mallopt(-1, 512 << 20)  # M_TRIM_THRESHOLD: keep up to 512 MB freed at its top
    except (OSError, AttributeError):
        pass


_keep_freed_memory()


def _collect_cycles_rarely() -> None:
    """Run Python's cycle collector every 100 000 net allocations instead of every 700, and not
    at exit. A command is a short-lived process whose tens of thousands of long-lived objects
    (modules, the robot model) each pass would rescan, while physid's results hold no reference
    cycles (tests/test_reference_cycles.py); at exit the system takes the memory back."""
    gc.set_threshold(100_000, 10, 10)
    atexit.register(gc.freeze)  # registered first, so run last: after every other handler


_collect_cycles_rarely()

import click  # noqa: E402 - after the thread settings

from physid.errors import PhysidError  # noqa: E402
from physid.version import __version__  # noqa: E402


class _PhysidGroup(click.Group):
    """A click group that turns :class:`PhysidError`, command-line usage errors (a missing or
    malformed option of any subcommand) and what the system refuses about a file (an OSError:
    disk full, a folder under /proc) into one ``physid: error:`` line and exit code 2."""

    def invoke(self, ctx: click.Context):  # noqa: ANN201 - click's signature
        try:
            return super().invoke(ctx)
        except PhysidError as error:
            click.echo(f"physid: error: {error}", err=True)
            sys.exit(2)
        except BrokenPipeError:  # the reader went away (physid codes | head): not an error
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        except OSError as error:  # the system refused a file (disk full, /proc, permissions)
            where = " ".join(str(f) for f in (error.filename, error.filename2) if f)
            reason = error.strerror or " ".join(str(error).split())
            click.echo(f"physid: error: {where + ': ' if where else ''}{reason}", err=True)
            sys.exit(2)
        except click.UsageError as error:
            if type(error).__name__ == "NoArgsIsHelpError":  # a bare group: its help, as usual
                raise
            where = error.ctx.command_path if error.ctx is not None else "physid"
            message = " ".join(error.format_message().split())
            click.echo(f"physid: error: {where}: {message} (see {where} --help)", err=True)
            sys.exit(2)


@click.group(cls=_PhysidGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="physid")
def main() -> None:
    """physid: identify the dynamic parameters of robots and rigid bodies from recorded motion.

    Every result is physically consistent (each body could exist), comes with uncertainties, and
    says in its status when the data could not support it.
    """


def _register() -> None:
    from physid.cli import (
        codes_commands,
        excite_commands,
        export_commands,
        impacts_commands,
        multibody_commands,
        oe_commands,
        offline_commands,
        online_commands,
        payload_commands,
        simfit_commands,
        sweep_commands,
    )

    for module in (
        offline_commands,
        payload_commands,
        online_commands,
        impacts_commands,
        oe_commands,
        export_commands,
        multibody_commands,
        sweep_commands,
        excite_commands,
        simfit_commands,
        codes_commands,
    ):
        module.register(main)


_register()
