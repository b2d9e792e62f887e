"""``physid codes``: what a status or finding code means and what to do about it."""

from __future__ import annotations

import click

from physid.errors import InputError


@click.command("codes")
@click.argument("code", required=False)
def codes_command(code: str | None) -> None:
    """Explain a status or finding code (e.g. 'physid codes ID301', 'physid codes suspect');
    without CODE, list every code with its severity and title."""
    from physid.catalog import all_codes, explain

    if code is None:
        for c in all_codes().values():
            click.echo(f"{c.code:<6} {c.severity:<8} {c.name}: {c.title}")
        return
    try:
        click.echo(explain(code))
    except KeyError:
        raise InputError(
            f"'{code}' is no status or finding code of physid (physid codes lists them)"
        ) from None


def register(group: click.Group) -> None:
    """Add this module's commands to the physid group."""
    group.add_command(codes_command)
