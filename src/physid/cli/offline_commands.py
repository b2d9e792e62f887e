"""CLI commands: offline (filled in by its issue)."""

from __future__ import annotations

import click


def register(group: click.Group) -> None:
    """Add this module's commands to the physid group."""
