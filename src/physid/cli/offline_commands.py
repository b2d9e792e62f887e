"""CLI: ``physid identify``, ``physid validate`` and ``physid demo`` (offline identification)."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path

import click
import numpy as np

from physid.api.robot_runs import EXCITE
from physid.cli.options import (
    DATA_HELP,
    DATA_SOURCE,
    EXISTING_FILE,
    OUTPUT_DIR,
    OUTPUT_FILE,
    data_option,
    expand_log_lists,
    expand_logs,
    log_options,
    number_in,
    robot_file_option,
    step_progress,
)
from physid.cli.verdict import print_findings, print_verdict, verbose_option
from physid.findings import Severity, of_severity

SUSPECT_EXIT_CODE = 3


def _print_identification(
    result, out: Path | None, data_warnings: Sequence[str] = (), *, verbose: bool = False
) -> None:
    """The status with its verdict, the key numbers, then the findings that should change what
    the user does (``verbose``: every finding and the preprocessing's details)."""
    numbers = []
    check = result.prior_check
    if check is not None:
        numbers.append(
            f"held-out torque error (blocked {len(check.urdf.fold_errors)}-fold cross-validation "
            f"of the training recordings): {100 * check.identified.total:.3g} %; the URDF's own "
            f"model {100 * check.urdf.total:.3g} %, plain least squares "
            f"{100 * check.ols.total:.3g} %"
        )
    fit_line = f"training error {100 * result.train.relative_error:.2f} %"
    if result.validation is not None:
        fit_line += f", validation {100 * result.validation.relative_error:.2f} %"
    numbers.append(fit_line + " (raw measured torque at every sample)")
    prior_mass = result.model.layout.total_mass(result.prior)
    numbers.append(
        f"moving mass {result.moving_mass():.3f} +- {result.moving_mass_std:.3f} kg (URDF "
        f"{prior_mass:.3f} kg); {int(result.excited.sum())} of {result.base.size} base parameters "
        "identifiable"
    )
    if result.gravity is not None:
        tilt = np.degrees(result.gravity.tilt_rad)
        std = np.degrees(result.gravity.tilt_std_rad)
        numbers.append(
            f"base tilt about x, y: {tilt[0]:.3f} +- {std[0]:.2g}, "
            f"{tilt[1]:.3f} +- {std[1]:.2g} deg"
        )
    if result.drive_gains is not None:
        numbers.append(
            "drive gains (known payload): "
            + ", ".join(
                f"{j} {g['value']:.5g} +- {g['std']:.2g}" for j, g in result.drive_gains.items()
            )
        )
    details = []
    if result.preprocessing is not None:
        details.append(f"preprocessing: {result.preprocessing.summary()}")
    print_verdict(
        result.status, result.message, numbers, result.findings, verbose=verbose, details=details
    )
    if out is not None:
        shown = len(of_severity(result.findings, Severity.INFO if verbose else Severity.CAUTION))
        more = len(result.findings) - shown
        click.echo(
            f"wrote {out / 'params.json'} and {out / 'report.html'}"
            + (f" ({more} more findings there, or --verbose)" if more else "")
        )


@click.command("identify")
@robot_file_option(
    "Robot description: URDF or MJCF (MuJoCo XML; the kind is read from the file): "
    "kinematics and a priori inertias (an MJCF's damping, frictionloss and armature are the "
    "joint terms' priors); meshes are not needed, except an MJCF body's whose inertia comes "
    "from its mesh."
)
@data_option(
    "Training recording: CSV/NPZ/Parquet following the trajectory contract "
    "(t, q_<joint>, tau_<joint> or i_<joint>, optional dq_/ddq_), or a YAML recording "
    "manifest that maps other files onto it. Repeat for several experiments."
)
@click.option(
    "--config",
    "config_path",
    type=EXISTING_FILE,
    help="YAML settings: joint terms, transmission and coupled motors, drive gains, "
    "filter (classical | irwsm1 | irwsm2 | given, cut-offs, NVR), train/validation "
    "split, estimation (wls/ols, essential ratio, consistency margin, prior). "
    "'physid config --template' prints every key with its default and meaning.",
)
@data_option(
    "Held-out recording(s) to validate on. Without it, split.train_fraction of "
    "the config (if set) holds out the tail of each recording.",
    name="--validate",
    required=False,
)
@click.option(
    "--out",
    required=True,
    type=OUTPUT_DIR,
    help="Output folder: params.json and report.html (its charts drawn by your browser; written "
    "atomically). The "
    "run owns it: a second run into it fails while this one runs, and files of an earlier run "
    "that this one does not rewrite are removed. A folder holding other files is refused "
    "unless --overwrite.",
)
@click.option(
    "--overwrite",
    is_flag=True,
    help="Accept an --out folder that holds files physid did not write, and remove them.",
)
@click.option(
    "--loaded-data",
    "loaded",
    multiple=True,
    type=DATA_SOURCE,
    help="Recording(s) of motor currents with the config's known payload attached, for "
    "'drive_gains: identify': the payload fixes the drive gains (Gautier & Briot 2014); the "
    "--data recordings (without it) then give the robot's parameters. Repeatable." + DATA_HELP,
)
@log_options
@click.option("--quiet", is_flag=True, help="No progress bar.")
@verbose_option
def identify_command(
    urdf, data, config_path, validate, out, overwrite, loaded, topic, episodes, quiet, verbose
) -> None:
    """Identify physically consistent dynamic parameters of a serial robot (paper C).

    Derivatives by Butterworth or Kalman smoothing, parallel decimation, base and essential
    parameters, weighted least squares with uncertainties, then a semidefinite program that
    makes every body physically consistent. Fails with a one-line reason and writes nothing
    if the data cannot support a consistent model.

    Prints the status with a one-line verdict, the key numbers (held-out error against the
    URDF's own model and plain least squares, moving mass) and the findings that should change
    what you do, each with its code ('physid codes CODE' explains one); params.json and
    report.html hold every finding.

    Exit codes: 0 ok; 2 bad input or no consistent model (nothing written); 3 the outputs were
    written but the status is not ok: suspect (the data look wrong though well-formed: torque
    sign or scale against the URDF, time not in seconds, degrees, joint columns out of order)
    or worse_than_urdf, with the findings that say why.
    """
    from physid.workflows import identify_run

    data, validate, loaded = expand_log_lists((data, validate, loaded), topic, episodes)
    with step_progress("identify", quiet) as progress:
        run = identify_run(
            urdf,
            data,
            config_path=config_path,
            validate=validate,
            out_dir=out,
            progress=progress,
            overwrite=overwrite,
            loaded=list(loaded),
        )
    result = run.result
    # what reading did to the recordings (time base rebuilt, rows repaired): said first
    _print_identification(
        result, out, run.provenance.get("warnings_from_data", []), verbose=verbose
    )
    if not result.status.success:
        sys.exit(result.status.exit_code)


@click.command("validate")
@robot_file_option("Robot description: URDF or MJCF (MuJoCo XML; the kind is read from the file).")
@click.option(
    "--params",
    "params_path",
    required=True,
    type=EXISTING_FILE,
    help="params.json written by physid identify (bodies, joint terms, gravity).",
)
@data_option("Recording(s) to predict (contract file or recording manifest).")
@click.option(
    "--config",
    "config_path",
    type=EXISTING_FILE,
    help="The same YAML settings as for identify (transmission, drive gains, ...). Its "
    "filter section, if any, overrides the training filter recorded in params.json; "
    "'drive_gains: identify' means the gains params.json holds (extra.drive_gains).",
)
@click.option(
    "--json",
    "json_out",
    default=None,
    type=OUTPUT_FILE,
    help="Also write the numbers printed (per-joint RMSE [N m] and relative error, the stacked "
    "relative error ||tau - tau_hat|| / ||tau||, per file and overall) to this JSON file.",
)
@log_options
@click.option("--quiet", is_flag=True, help="No progress bar.")
@verbose_option
def validate_command(
    urdf, params_path, data, config_path, json_out, topic, episodes, quiet, verbose
) -> None:
    """Predict recorded torques with identified parameters and report the errors.

    Scored on the raw recorded torque at every sample of each recording (rows that reading
    drops are said: duplicates, stale rows, a torque frozen while the robot moves, the far side
    of a position step); positions are differentiated with the training filter that
    params.json records (printed). Prints the
    relative error of each recording and joint (RMSE in N m, or N for prismatic joints);
    --json writes them too. The recordings get identify's checks of well-formed but wrong data
    (time unit and scale, degrees, torque sign, scale and column order): a suspect finding.
    A recorded torque that reads a factor of the prediction (beyond 10 %, and that factor
    removes most of the error: a gain or unit other than the training's) is named with it.

    Exit codes: 0 ok; 2 bad input; 3 the recordings look wrong (status suspect): the
    findings say why.
    """
    from physid.files.io import write_json_atomic
    from physid.workflows import run_validate

    with step_progress("validate", quiet) as progress:
        report = run_validate(
            urdf,
            params_path,
            expand_logs(data, topic, episodes),
            config_path=config_path,
            progress=progress,
        )
    if json_out is not None:
        write_json_atomic(json_out, report.as_dict())
    click.echo(f"preprocessing: {report.preprocessing.summary()}")
    rows = list(report.per_file.items())
    if len(rows) > 1:
        rows.append(("all files", report.overall))
    for name, metrics in rows:
        label = name if name == "all files" else Path(name).name
        click.echo(
            f"{label}: relative error {100 * metrics['relative_error']:.2f} % over "
            f"{metrics['n_samples']} samples"
        )
        joints = metrics["relative_error_per_joint"]
        # a joint moved by its recorded positions has no fitted torque: no error to print; one
        # whose torque is 0 in every row (a passive joint) has an RMSE but no relative error
        scored = {j: v for j, v in metrics["rmse"].items() if math.isfinite(v)}
        unscored = [j for j in metrics["rmse"] if j not in scored]
        click.echo(
            "  per joint: "
            + ", ".join(
                f"{j} {_relative_text(joints[j])} (RMSE {v:.3g} {report.units.get(j, '')})"
                for j, v in scored.items()
            )
            + (f"; not scored (torque not fitted): {', '.join(unscored)}" if unscored else "")
        )
    print_findings(report.findings, verbose=verbose)
    if json_out is not None:
        click.echo(f"wrote {json_out}")
    if not report.status.success:
        sys.exit(report.status.exit_code)


@click.command("demo")
@click.option(
    "--out",
    required=True,
    type=OUTPUT_DIR,
    help="Output folder: simulated data/, identification/ (params.json, report.html) "
    "and truth_comparison.json.",
)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=int,
    callback=number_in(*EXCITE["seed"]),
    help="Seed of the simulated robot, excitations and sensor noise, 0-4294967295.",
)
@click.option(
    "--duration",
    default=20.0,
    show_default=True,
    type=float,
    callback=number_in(5.0, 3600.0),
    help="Length of the training experiment [s] (validation: half of it).",
)
@click.option("--quiet", is_flag=True, help="No progress bar.")
def demo_command(out, seed, duration, quiet) -> None:
    """Identify a simulated 6-joint industrial arm and compare with its known parameters.

    No network and no data needed: the robot, its excitation and its sensors are simulated,
    then `physid identify` runs on the recorded CSV files.
    """
    from physid.demo import run_demo

    with step_progress("demo", quiet) as progress:
        demo = run_demo(
            out,
            seed=seed,
            train_duration_s=duration,
            validation_duration_s=duration / 2,
            progress=progress,
        )
    result, comparison = demo.identification, demo.comparison
    _print_identification(result, out / "identification")
    click.echo("")
    click.echo("comparison with the simulated truth:")
    click.echo(
        f"  validation relative error {100 * demo.validation_error:.3f} % vs noise floor "
        f"{100 * demo.noise_floor:.3f} % (ratio {demo.validation_error / demo.noise_floor:.3f})"
    )
    click.echo(
        f"  base parameters within 3 sigma of the truth: {100 * demo.within_3_sigma:.1f} % "
        f"of {len(demo.base_z_scores)}"
    )
    mass = comparison["total_moving_mass_kg"]
    click.echo(
        f"  total moving mass: true {mass['true']:.3f} kg, identified "
        f"{mass['identified']:.3f} kg, URDF prior {mass['urdf_prior']:.3f} kg"
    )
    click.echo("  joint terms (true -> identified):")
    for name, values in comparison["joint_terms"].items():
        note = (
            ""
            if values["identifiable_alone"]
            else "  (regrouped: only its base sum is identifiable)"
        )
        click.echo(f"    {name:16s} {values['true']:9.4f} -> {values['identified']:9.4f}{note}")
    click.echo(f"wrote {out / 'truth_comparison.json'}")
    click.echo("")
    click.echo(f"open {out / 'identification' / 'report.html'} to read the report; then, on your")
    click.echo("own robot (a URDF or MJCF and a recording in the trajectory contract):")
    click.echo("  physid identify --urdf robot.urdf --data run1.csv --validate run2.csv --out fit")
    click.echo(f"or on the real KUKA LWR4+ shipped with physid (see {_KUKA_HINT}):")
    click.echo(
        "  physid identify --urdf data/kuka_lwr4/kuka_lwr4.urdf "
        "--data examples/kuka_lwr4/measurements_2.yaml --out kuka"
    )


_KUKA_HINT = "examples/kuka_lwr4/README.md"


def register(group: click.Group) -> None:
    """Add this module's commands to the ``physid`` group."""
    group.add_command(identify_command)
    group.add_command(validate_command)
    group.add_command(demo_command)


def _relative_text(value: float) -> str:
    """A joint's relative error as ``physid validate`` prints it; NaN: its torque is 0 in every
    row (a passive joint), where no relative error exists."""
    return f"{100 * value:.2f} %" if math.isfinite(value) else "torque 0 in every row"
