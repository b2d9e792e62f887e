"""CLI: ``physid export`` (params.json into URDF / MJCF) and ``physid config --template``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from physid.cli.options import EXISTING_FILE, OUTPUT_FILE, robot_file_option
from physid.cli.verdict import print_findings
from physid.export.codes import NOT_EXPORTED

NOT_OK_EXIT_CODE = 3  # written, from an identification whose status is not ok


@click.command("export")
@click.option(
    "--params",
    "params_path",
    required=True,
    type=EXISTING_FILE,
    help="params.json written by physid identify.",
)
@robot_file_option(
    "The URDF or MJCF (MuJoCo XML) the parameters were identified with: its kinematics, "
    "and for an MJCF its meshes, actuators, contacts and defaults, are kept."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["urdf", "mjcf"]),
    default=None,
    help="Output format (default: from the suffix of --out: .urdf, or .xml/.mjcf).",
)
@click.option(
    "--out",
    required=True,
    type=OUTPUT_FILE,
    help="Output file (written atomically).",
)
def export_command(params_path: Path, urdf: Path, fmt: str | None, out: Path) -> None:
    """Write the robot with its identified inertials and joint terms as URDF or MJCF.

    URDF: each identified body goes on the child link of its joint (links fixed to it lose their
    inertial), viscous and Coulomb friction into <dynamics damping friction>. MJCF (needs
    MuJoCo): body mass/ipos/fullinertia, joint damping, frictionloss, armature, and the gravity of
    training. What a format cannot hold (torque offsets, coupled-motor terms, the Coulomb
    deadband; armature and gravity in URDF) is listed on stderr. See docs/export.md.

    Exit codes: 0 written; 2 bad input (nothing written); 3 written, from an identification
    whose status is not ok (suspect data, worse than the URDF): said on stderr.
    """
    from physid.api.robot_runs import export_model

    exported = export_model(params_path, urdf, out, fmt=fmt)
    for note in exported.notes:
        click.echo(f"not exported: {note}", err=True)
    print_findings(f for f in exported.findings if f.code != NOT_EXPORTED.code)
    click.echo(f"wrote {out}")
    if not exported.success:
        sys.exit(NOT_OK_EXIT_CODE)


def config_template() -> str:
    """Every ``physid identify`` config key with its default and a comment, examples commented
    out (generated from the config dataclasses: :mod:`physid.files.config_template`)."""
    from physid.files.config_template import render_template

    return render_template()


@click.command("config")
@click.option(
    "--template",
    is_flag=True,
    help="Print every identify option at its default, with a comment and a commented-out "
    "example (YAML; the file as printed changes nothing).",
)
def config_command(template: bool) -> None:
    """Configuration files of physid identify / validate."""
    if not template:
        raise click.UsageError("nothing to do: give --template")
    click.echo(config_template(), nl=False)


def register(group: click.Group) -> None:
    """Add this module's commands to the ``physid`` group."""
    group.add_command(export_command)
    group.add_command(config_command)
