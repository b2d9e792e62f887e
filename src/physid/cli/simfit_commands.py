"""CLI: ``physid simfit`` — a MuJoCo model that simulates like the logged robot."""

from __future__ import annotations

import sys

import click

from physid.api.robot_runs import SIMFIT, SIMFIT_MAX_EVALUATIONS
from physid.cli.options import (
    EXISTING_FILE,
    OUTPUT_DIR,
    data_option,
    log_options,
    number_in,
    robot_file_option,
    step_progress,
)
from physid.cli.verdict import codes_hint, print_verdict, verbose_option


def register(group: click.Group) -> None:
    """Add this module's commands to the physid group."""
    group.add_command(simfit_command)


@click.command("simfit")
@robot_file_option(
    "The MuJoCo model (MJCF) to tune; its joints are matched to the recordings' columns by "
    "name. The tuned copy keeps everything else of it."
)
@data_option(
    "Training run(s): t, q_<joint> and the torque the drives applied, tau_<joint>, for every "
    "hinge and slide joint of the model (applied to the joints; the model's actuators are "
    "then switched off in the fit); or, instead of tau_, the commands sent to the "
    "model's actuators, ctrl_<actuator> for every actuator (a position servo's target, a "
    "motor's command; a LeRobot dataset's 'action' feature), which then drive them."
)
@data_option(
    "Held-out run(s), the judgement, before and after tuning: the shooting error (windows whose "
    "initial states are estimated with the model fixed) decides the status; open-loop "
    "simulations of 0.5, 1 and 2 s from the measured states are reported (repeat).",
    name="--validate",
    required=False,
)
@click.option(
    "--fit",
    "fields",
    default="damping,armature,frictionloss",
    show_default=True,
    help="Terms to tune, comma-separated: joint damping (viscous), armature (rotor inertia), "
    "frictionloss (dry friction); with ctrl_ recordings also the actuators' kp and kv (every "
    "<position> servo: force kp (target - q) - kv dq) and gain (every <motor>: torque per "
    "unit of ctrl, written back as its gear).",
)
@click.option(
    "--hold",
    default="",
    help="Keep these at the model's values, comma-separated: a joint's name (every --fit "
    "term of it and of the actuators that drive it: it simulates as the file has it), or one "
    "term as simfit.json names it (joint.field, actuator.field). For the joints a status "
    "worse_for_some_joints names, or one that barely moves in the runs.",
)
@click.option(
    "--no-delay",
    is_flag=True,
    help="Do not estimate a constant delay between the logged torques and the motion.",
)
@click.option(
    "--window",
    "window_s",
    default=0.5,
    show_default=True,
    type=float,
    callback=number_in(*SIMFIT["window"]),
    help="Length [s] of the shooting windows: each starts from its own estimated state, so "
    "errors do not pile up over the run; longer windows see slower effects (friction) better "
    "but diverge more when the controller's feedback is not in the model.",
)
@click.option(
    "--max-evaluations",
    default=SIMFIT_MAX_EVALUATIONS,
    show_default=True,
    type=int,
    callback=number_in(*SIMFIT["max_evaluations"]),
    help="Budget of residual evaluations, 5-10000 (each a batched rollout of every window; "
    "with --coarse-windows the coarse stage's count too and take at most half).",
)
@click.option(
    "--coarse-windows",
    default=0,
    show_default=True,
    type=int,
    callback=number_in(*SIMFIT["coarse_windows"]),
    help="Fit first on about this many windows (every k-th), then on all from there, when the "
    "recordings hold twice as many: about 2x less CPU on long logs, but a joint that barely "
    "moves can lead it into another local minimum than the one-stage fit (docs/simfit.md). "
    "0: one stage.",
)
@click.option(
    "--config",
    "config_path",
    type=EXISTING_FILE,
    default=None,
    help="An identify config whose drive_gains (N m/A per joint, joint side) turn motor "
    "currents i_<joint> into the torques tau_<joint> of recordings that log no torque (the "
    "UR10e's); 'drive_gains: identify' is refused: copy the gains params.json holds "
    "(extra.drive_gains). Its other sections do not apply here.",
)
@click.option(
    "--out",
    required=True,
    type=OUTPUT_DIR,
    help="Output folder: simfit.json, model_tuned.xml and, with --validate, rollouts.png "
    "(written atomically).",
)
@log_options
@click.option("--quiet", is_flag=True, help="No progress display.")
@verbose_option
def simfit_command(
    urdf,
    data,
    validate,
    fields,
    hold,
    no_delay,
    window_s,
    max_evaluations,
    coarse_windows,
    config_path,
    out,
    topic,
    episodes,
    quiet,
    verbose,
) -> None:
    """Tune a MuJoCo model so that it simulates like the logged robot.

    MuJoCo, driven by the logged joint torques, is fitted to the recorded joint positions over
    short windows (multiple shooting): joint damping, armature and frictionloss, and a constant
    command-to-motion delay, with standard deviations. Writes the tuned MJCF (the given file with
    those joint attributes changed) and simfit.json with the held-out errors before and after.

    Ends with the status and its verdict, the tuned values, the held-out errors before and
    after, and the findings that should change what you do (all of them in simfit.json;
    --verbose prints them all; 'physid codes SF302' explains a code).

    Exit codes: 0 ok; 2 bad input (nothing written); 3 written, but the status is not ok: the
    solver did not converge (not_converged, stalled), the tuned model simulates the held-out
    runs worse than the given one (worse_than_urdf, worse_for_some_joints), a training run's
    columns look wrong (suspect: a torque negated, columns exchanged) or MuJoCo's simulation
    went unstable (numerical_failure); the findings say which.
    """
    from physid.api.simfit_run import simfit_drive_gains, simfit_tune
    from physid.status import Status

    run = simfit_tune(
        urdf,
        data,
        validate=validate,
        drive_gains=None if config_path is None else simfit_drive_gains(config_path),
        fit=_names(fields),
        hold=_names(hold),
        delay=not no_delay,
        window=window_s,
        max_evaluations=max_evaluations,
        coarse_windows=coarse_windows,
        topic=topic,
        episodes=episodes,
        display=lambda: step_progress("simfit", quiet),
    )
    run.save(out)
    for line in run.notes_for(out):
        click.echo(f"physid: note: {line}", err=True)
    status = Status(run.status)
    print_verdict(status, run.message, _numbers(run.raw), run.findings, verbose=verbose)
    click.echo(codes_hint(str(out / "simfit.json")))
    if status.exit_code:
        sys.exit(status.exit_code)


def _names(text: str) -> tuple[str, ...]:
    """A comma-separated option as its names."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _numbers(result) -> list[str]:  # noqa: ANN001 - a physid.simfit.fit.SimfitResult
    """The key numbers: each tuned value, the held values, the held-out errors, the CPU."""
    lines = [
        f"{name}: {entry['value']:.6g} +- {entry['std']:.2g} {entry['unit']} "
        f"(start {entry['start']:.4g}, {entry['source']})"
        for name, entry in result.parameters.items()
    ]
    if result.hold:
        kept = ", ".join(f"{name} {value:.6g}" for name, value in result.hold.items())
        lines.append(f"held at the model's values (--hold): {kept}")
    held = result.held_out
    for horizon, after in held["after"].items():
        before = held["before"][horizon]["all"]
        lines.append(f"held-out RMS, {horizon}: {before:.4g} -> {after['all']:.4g} rad")
    solver = result.solver
    lines.append(f"the fit took {solver['cpu_s']:.1f} CPU s, {solver['evaluations']} evaluations")
    return lines
