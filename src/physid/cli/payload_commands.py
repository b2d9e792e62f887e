"""CLI: ``physid payload`` — a payload's inertial parameters on an identified robot."""

from __future__ import annotations

import math
from pathlib import Path

import click

from physid.api.robot_runs import PAYLOAD
from physid.cli.options import (
    EXISTING_FILE,
    OUTPUT_DIR,
    data_option,
    expand_log_lists,
    log_options,
    number_in,
    robot_file_option,
)
from physid.cli.verdict import print_verdict, verbose_option


@click.command()
@robot_file_option("Robot URDF or MJCF (MuJoCo XML), without the payload.")
@click.option(
    "--params",
    type=EXISTING_FILE,
    required=True,
    help="params.json of `physid identify` for this robot WITHOUT the payload; its bodies, joint "
    "terms, gravity, Coulomb deadband and training filter are used as they are.",
)
@data_option(
    "Recording WITH the payload (trajectory CSV/.npz/.parquet or manifest, as for "
    "`physid identify`); repeat for several."
)
@data_option(
    "Recording WITHOUT the payload, fitted jointly: the joint friction/offset terms are "
    "re-estimated on both, so friction that drifted since identification is not read as "
    "payload; repeat for several.",
    name="--unloaded",
    required=False,
)
@click.option(
    "--link",
    required=True,
    help="URDF link the payload is fixed to; the centre of mass and inertia are reported in "
    "its frame.",
)
@click.option(
    "--mass",
    type=float,
    default=None,
    callback=number_in(*PAYLOAD["mass"]),
    help="Known payload mass [kg] (weighed): fixed in the fit; the centre of mass and inertia "
    "are estimated. Default: estimated from the data.",
)
@click.option(
    "--config",
    type=EXISTING_FILE,
    default=None,
    help="The identify config used for the robot (transmission, drive gains, joint terms); a "
    "`filter` section in it overrides the training filter of params.json; 'drive_gains: "
    "identify' means the gains params.json holds (extra.drive_gains).",
)
@click.option(
    "--out",
    type=OUTPUT_DIR,
    required=True,
    help="Output folder: payload.json (mass, com and inertia about the com in the link frame, "
    "their standard deviations and sources, the fit). Written atomically.",
)
@log_options
@verbose_option
def payload(
    urdf: Path,
    params: Path,
    data: tuple[Path, ...],
    unloaded: tuple[Path, ...],
    link: str,
    mass: float | None,
    config: Path | None,
    out: Path,
    verbose: bool,
    topic: str | None,
    episodes: tuple[int, ...],
) -> None:
    """Estimate the 10 inertial parameters of a payload on LINK of an identified robot.

    The robot's parameters come from --params (identified without the payload); the payload's
    torques are what the robot model does not explain in the --data recordings. The result is
    physically consistent (pseudo-inertia positive definite).

    Exit codes: 0 ok; 2 bad input, or no physically consistent payload fits (nothing
    written); 3 payload.json written but suspect (a payload heavier than twice the robot's
    moving mass, loaded torques the robot's model leaves more than 90 % unexplained, a column
    mistake): its findings say why.
    """
    from physid.api.robot_runs import payload as run_payload

    loaded, unloaded_runs = expand_log_lists((data, unloaded), topic, episodes)
    run = run_payload(urdf, params, loaded, link, unloaded=unloaded_runs, mass=mass, config=config)
    run.save(out)
    result = run.raw
    std = result.std
    com_mm = ", ".join(
        f"{1e3 * c:.1f} +- {1e3 * s:.1f}" if math.isfinite(s) else "undetermined"
        for c, s in zip(result.com_in_link, std["com"], strict=True)
    )
    mass_std = f"{std['mass']:.4f}" if math.isfinite(std["mass"]) else "(undetermined)"
    numbers = [
        f"payload on {result.link} (joint {result.joint}): mass {result.mass:.4f} +- "
        f"{mass_std} kg ({result.source['mass']}); com in {result.link} [mm]: {com_mm}",
        "loaded torques (filtered) relative error: robot alone "
        f"{100 * result.relative_error_robot_only:.2f} %, with the payload "
        f"{100 * result.relative_error_with_payload:.2f} %",
    ]
    details = [f"method: {result.method}", result.gain_note()]
    if result.held_offsets:
        held = ", ".join(result.held_offsets)
        details.append(
            "moved one way only, their offset correction is not separable from the "
            f"Coulomb one and is held at 0: {held}"
        )
    if result.torque_delay_s:
        details.append(
            f"torques paired with the motion {1e3 * result.torque_delay_s:.3g} ms "
            "earlier, the delay the identification in --params compensated"
        )
    print_verdict(
        result.status, result.message, numbers, result.findings, verbose=verbose, details=details
    )
    click.echo(f"wrote {out / 'payload.json'}")
    if not result.status.success:
        raise SystemExit(result.status.exit_code)


def register(group: click.Group) -> None:
    """Add this module's commands to the physid group."""
    group.add_command(payload)
