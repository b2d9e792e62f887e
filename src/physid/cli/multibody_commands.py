"""CLI commands ``physid multibody simulate`` and ``identify`` (paper A: SPOOK in maximal
coordinates; joint state and parameter estimation).

Heavy imports (Pinocchio, CasADi) happen inside the command so ``--help`` stays fast.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click

from physid.api.multibody_runs import IDENTIFY, MAX_STEP_HINGES, REFINE, SIMULATE
from physid.cli.options import OUTPUT_DIR, number_in
from physid.cli.verdict import codes_hint, print_verdict, verbose_option
from physid.status import Status

#: Simulations of the windows per refinement stage (physid.multibody.workflow, not imported
#: here so that --help stays fast; tests/test_multibody_cli.py checks they agree).
REFINE_EVALUATIONS = 30


@click.group("multibody")
def multibody() -> None:
    """Multibody dynamics in maximal coordinates with regularised, frictional hinges (paper A):
    simulate a URDF with SPOOK, or identify the parameters of that discrete model (with its
    unmeasured states) from recorded joint angles and the control. SI units; angles in radians."""


@multibody.command("simulate")
@click.option(
    "--urdf",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Robot description: kinematic tree, joint frames, masses and inertias. Every joint "
    "must be revolute; each moving body becomes a free rigid body held by a hinge constraint.",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="YAML of what URDFs cannot say: gravity, per-joint compliance (linear m/N, rotational "
    "rad/(N m)), damping time [s], viscous [N m s/rad], dry friction r*mu [m], Stribeck terms, "
    "motor gain K and shaft inertia [kg m²], body overrides (docs/multibody.md). Default: no "
    "friction, no motors, compliance 1e-7, damping 0.02 s, the URDF's gravity.",
)
@click.option(
    "--control",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Control signal file (CSV with header, .npz or .parquet): t [s], strictly increasing, "
    "and u_<joint> for every hinge with a motor (torque = gain * u), held constant between "
    "samples. The simulation runs from the first to the last t. Needed when a hinge has a "
    "motor; without motors, --duration is enough.",
)
@click.option(
    "--duration",
    type=float,
    default=None,
    callback=number_in(*SIMULATE["duration"]),
    help="Simulated time [s] of a system without motors (unactuated: no --control needed); "
    "with --control, the control's span is simulated.",
)
@click.option(
    "--out",
    type=OUTPUT_DIR,
    required=True,
    help="Output folder: trajectory.csv (t, q_<joint> [rad], dq_<joint> [rad/s], u_<joint>) "
    "and simulation.json (step, parameters, constraint violation, solver failures). Written "
    "to a temporary folder and renamed, so a failed run leaves nothing half-written.",
)
@click.option(
    "--dt",
    type=float,
    default=1e-3,
    show_default=True,
    callback=number_in(*SIMULATE["dt"]),
    help="Simulation step h [s] of the SPOOK stepper (eqs. 2.8-2.19), in (0, 1]; the control's "
    f"span may hold at most {MAX_STEP_HINGES:,} steps x hinges (split longer runs).",
)
@click.option(
    "--q0",
    default=None,
    metavar="A1,A2,...",
    help="Initial joint angles [rad], one per hinge in URDF order (default: all 0), placed at "
    "zero constraint violation.",
)
@click.option(
    "--dq0",
    default=None,
    metavar="W1,W2,...",
    help="Initial joint rates [rad/s], one per hinge in URDF order (default: all 0).",
)
@click.option(
    "--every",
    type=int,
    callback=number_in(*SIMULATE["every"]),
    default=1,
    show_default=True,
    help="Write every N-th simulation step to trajectory.csv (the sample period is N * dt), "
    f"N in 1-{MAX_STEP_HINGES:,}.",
)
@verbose_option
def simulate_command(urdf, config, control, duration, out, dt, q0, dq0, every, verbose):  # noqa: ANN001, ANN201, PLR0913
    """Simulate a URDF (+ YAML) with the SPOOK stepper under a control signal and write the joint
    trajectory in the physid contract.

    Exit codes: 0 ok; 2 bad input or a simulation that diverged (nothing written); 3 written,
    but the status is not ok (suspect: the hinges came apart, the largest constraint violation
    over 1 cm: a control too strong for the step, finding MB402).
    """
    from physid.api.multibody_runs import multibody_simulate

    run = multibody_simulate(
        urdf,
        config=config,
        control=control,
        duration=duration,
        dt=dt,
        q0=q0,
        dq0=dq0,
        every=every,
    )
    run.save(out)
    document = run.document
    numbers = [
        f"{len(run.raw.t[::every])} samples to {out / 'trajectory.csv'} (h = {dt:g} s)",
        f"max constraint violation {document['max_constraint_violation']:.3g} m, "
        f"{run.raw.lcp_failures} LCP failures",
        codes_hint(str(out / "simulation.json")),
    ]
    verdict = "simulated" if run.success else "written, but the trajectory is not the mechanism's"
    print_verdict(run.status, verdict, numbers, run.findings, verbose=verbose)
    sys.exit(Status(run.status).exit_code)


@multibody.command("identify")
@click.option(
    "--urdf",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Robot description (revolute joints only); its masses and inertias are the fixed "
    "values and the starting point of the estimated ones.",
)
@click.option(
    "--data",
    "data_files",
    type=click.Path(dir_okay=False, path_type=Path),
    multiple=True,
    required=True,
    help="Recording in the trajectory contract (CSV with header, .npz or .parquet): t [s], "
    "q_<joint> [rad] for every hinge, u_<joint> for every motor hinge. Repeat for several "
    "recordings sharing the parameters.",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="YAML: gravity, compliances, damping, friction (viscous, dry r*mu, coulomb [N m]), "
    "motors, body overrides, 'noise' (per joint [rad]; default: estimated from the data), "
    "'estimate' (the parameter names to identify, e.g. hinge1.Izz, hinge2.coulomb; default: "
    "per hinge the inertia about its axis, viscous and coulomb) and 'bounds' "
    "(docs/multibody.md).",
)
@click.option(
    "--out",
    type=OUTPUT_DIR,
    required=True,
    help="Output folder: params.json, result.json, states.npz, report.png (written to a "
    "temporary folder and renamed).",
)
@click.option(
    "--dt",
    type=float,
    default=0.01,
    show_default=True,
    callback=number_in(*IDENTIFY["dt"]),
    help="Model step h [s], in (0, 1]: at most 200,000 steps over all recordings, and at most "
    "50x finer than a recording's median sample period.",
)
@click.option(
    "--kappa",
    type=float,
    default=None,
    callback=number_in(*IDENTIFY["kappa"]),
    help="Weight of the model's impulse residuals [per (N s)^2 or (N m s)^2] against the measured-"
    "angle residuals [weight 1 per rad^2]: Omega^-1 = kappa I, R^-1 = I (paper A §4.4). Large"
    " kappa trusts the model (the states follow the dynamics), small kappa trusts the "
    "measured angles (kappa <= 1 overfits the noise: parameters go to 0). Default 100 (0.01 /"
    " dt)^2: the paper's 100 at dt = 0.01 s, scaled by dt^-2 because an impulse residual is a"
    " force error times the step (2500 at 2 ms). Estimates are flat over about 1e2-1e5 at dt "
    "= 0.01 s (docs/multibody.md, Fig. 7 sweep); raise it when the fit follows the noise.",
)
@click.option(
    "--max-iterations",
    type=int,
    callback=number_in(*IDENTIFY["max_iterations"]),
    default=20,
    show_default=True,
    help="Levenberg-Marquardt iteration cap (1-1000): it decides where a fit stops (status "
    "not_converged when used up), so the same data give the same numbers on any machine. A "
    "wall-clock safety stop of 20 s + 10 ms per model step and iteration ends only runs far "
    "slower than they should be (status time_limit).",
)
@click.option(
    "--init-filter",
    default="auto",
    show_default=True,
    metavar="auto|HZ|none",
    help="Cutoff [Hz] of the zero-phase 2nd-order Butterworth that smooths the angles to "
    "initialise the states (paper A §4.4; the observations are never filtered). auto: min(10 "
    "Hz, 0.4 x Nyquist of the recording), e.g. 10 Hz at 1 kHz, 4 Hz at 20 Hz; none: no "
    "filter. Printed, and in result.json.",
)
@click.option(
    "--states-first",
    is_flag=True,
    help="Estimate the states at the start parameters first (40 LM iterations, parameters "
    "fixed) and start the joint fit from them: for low-rate recordings started near the "
    "truth (docs/multibody.md); it can stall a fit started far from it.",
)
@click.option(
    "--compile",
    "compile_c",
    is_flag=True,
    help="Evaluate the per-step residuals as C code (needs a C compiler; compiled once per "
    "model, step and parameter list, cached under $PHYSID_CACHE or ~/.cache/physid).",
)
@click.option(
    "--cross-validate",
    is_flag=True,
    help="Leave-one-recording-out (paper A §4.5): identify on the other recordings, then "
    "estimate the states of the left-out one with the parameters fixed; its cost per step is "
    "the cross-validation score. Needs at least two --data.",
)
@click.option(
    "--refine/--no-refine",
    default=None,
    help="After the equation-error fit, refine the estimated parameters by output error: the "
    "identified model simulated by physid's stepper over windows of the recordings (each "
    "window's first state estimated too) to match the measured angles, each residual divided "
    "by its joint's noise (docs/multibody.md). --refine: windows of 2 s, 10 s and the whole "
    "recording (--refine-windows). Neither (the default): windows of 1 s only, and only when "
    "the equation-error fit collapses a body to the end of its plausibility box or estimates "
    "dry friction from samples further apart than two model steps (where the equation error "
    "trades it for viscous friction; finding MB305). --no-refine: never. The "
    "values written are the refinement's (the equation-error ones in result.json "
    "'refinement'); a refinement that did worse than its start is not used (finding MB302). "
    "Skipped (finding MB304) for r*mu or Stribeck friction. Cost, measured: the default "
    "refinement of a 40 s, 20 Hz Furuta took 11 s at --dt 0.01 (a 146 s fit), 130 s with "
    "--refine-dt 0.002; the full refinement at 1 ms, 26 min (docs/multibody.md).",
)
@click.option(
    "--refine-windows",
    default=None,
    show_default="2,10,whole",
    metavar="S[,S...]",
    help="With --refine: window length [s] of each refinement stage, in order; 'whole' is the "
    "whole recording. Each stage starts from the previous one's parameters and window states. "
    "A window must span at least 2 refinement steps and 2 sample periods of every recording.",
)
@click.option(
    "--refine-dt",
    type=float,
    default=None,
    callback=number_in(*REFINE["refine_dt"]),
    help="Model step [s] of the refinement's simulations, --refine's or the default one "
    "(default: --dt), at most the larger of --dt and the recordings' sample period. Finer "
    "refines a model closer to the data: on a 40 s, 20 Hz Furuta whose --dt 0.01 fit trades "
    "the arm's dry friction for viscous, --refine-dt 0.002 (with damping 0.004 in the config) "
    "gave the arm's Coulomb torque +0.6 %, 0.2 std, in 130 s (docs/multibody.md). The "
    "simulation error printed and in result.json is at this step.",
)
@click.option(
    "--refine-evaluations",
    type=int,
    default=None,
    show_default=str(REFINE_EVALUATIONS),
    callback=number_in(*REFINE["refine_evaluations"]),
    help="Simulations of the windows per refinement stage, --refine's or the default one "
    "(1-1000); a Jacobian costs one batched simulation of every window per estimated parameter "
    "and state coordinate. Counted, so the result does not depend on the machine's speed.",
)
@click.option("--quiet", is_flag=True, help="No progress display.")
@verbose_option
def identify_command(  # noqa: PLR0913
    urdf,
    data_files,
    config,
    out,
    dt,
    kappa,
    max_iterations,
    init_filter,
    states_first,
    compile_c,
    cross_validate,
    refine,
    refine_windows,
    refine_dt,
    refine_evaluations,
    quiet,
    verbose,
):  # noqa: ANN001, ANN201
    """Joint state and parameter estimation (paper A §3-4): Levenberg-Marquardt on impulse and
    angle residuals; writes the parameters, their covariance and a report.

    The angles are observed only at the model steps nearest to their samples (the states in
    between follow the dynamics), each weighted by its joint's measurement noise: the
    config's noise: {joint: rad}, or estimated from the data. The estimated masses and
    principal inertias keep the URDF's as a prior and stay within a factor 10 of it (the
    config's bounds override the box); a body at the end of its box is named (MB201, MB209).

    Exit codes: 0 ok; 2 bad input (nothing written); 3 written, but the status is not ok
    (not_converged, time_limit, stalled, at_bound, numerical_failure: the status line and its
    findings say why; 'physid codes <CODE>' explains a code).
    """
    from physid.api.multibody_runs import multibody_identify

    run = multibody_identify(
        urdf,
        data_files,
        config=config,
        dt=dt,
        kappa=kappa,
        max_iterations=max_iterations,
        init_filter=init_filter,
        states_first=states_first,
        compile_c=compile_c,
        cross_validate=cross_validate,
        refine=refine,
        refine_windows=refine_windows,
        refine_dt=refine_dt,
        refine_evaluations=refine_evaluations,
        progress=not quiet,
    )
    run.save(out)
    fit = run.raw
    values = ", ".join(
        f"{n} = {v:.6g} "
        + (f"(± {s:.2g})" if math.isfinite(s) else "(no std: at a bound or not identifiable)")
        for n, v, s in zip(fit.names, fit.values, fit.std, strict=True)
    )
    numbers = [values, *run.report, codes_hint(str(out / "result.json"))]
    print_verdict(run.status, run.message, numbers, run.findings, verbose=verbose)
    sys.exit(Status(run.status).exit_code)


def register(main: click.Group) -> None:
    main.add_command(multibody)
