"""How every command ends in the terminal: the status with a one-line verdict, a few key
numbers, then the findings that should change the user's next step, one line each with its code.

Without ``--verbose`` only findings of severity ``caution`` or worse are printed (on stderr);
``--verbose`` adds the ``info`` ones (on stdout). The output files hold them all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import click

from physid.findings import Finding, Severity, of_severity
from physid.status import Status

VERBOSE_HELP = (
    "Print every finding (the choices physid made and why, with their scores) and the full "
    "numbers; without it, the status, the key numbers and the findings that should change what "
    "you do. The output files hold everything either way."
)


def verbose_option(command: Callable) -> Callable:
    """``--verbose``: every finding and number on the terminal."""
    return click.option("--verbose", "-v", is_flag=True, help=VERBOSE_HELP)(command)


def print_verdict(
    status: Status | str,
    verdict: str,
    numbers: Sequence[str] = (),
    findings: Iterable[Finding] = (),
    *,
    verbose: bool = False,
    details: Sequence[str] = (),
) -> None:
    """``status: <code> - <verdict>``, the ``numbers`` lines, the ``details`` lines when
    ``verbose``, then the findings (``info`` ones only when ``verbose``)."""
    click.echo(f"status: {Status(status)} - {verdict}")
    for line in numbers:
        click.echo(f"  {line}")
    if verbose:
        for line in details:
            click.echo(f"  {line}")
    print_findings(findings, verbose=verbose)


def print_findings(findings: Iterable[Finding], *, verbose: bool = False) -> None:
    """One line per finding, most severe first: ``<severity> <CODE>: <message>``; cautions and
    worse go to stderr (they are warnings), ``info`` to stdout."""
    for finding in of_severity(findings, Severity.INFO if verbose else Severity.CAUTION):
        click.echo(
            f"{finding.severity} {finding.code}: {finding.message}",
            err=finding.severity.at_least(Severity.CAUTION),
        )


def codes_hint(out_file: str) -> str:
    """The last line of a command's output: where everything is and how to read a code."""
    return f"details: {out_file}; explain a code with 'physid codes <CODE>'"
