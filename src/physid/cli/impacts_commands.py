"""CLI commands ``physid impacts simulate``, ``identify`` and ``identify-snapshots`` (paper D).

Each ends with the status and its verdict, the key numbers and the findings that should change
what the user does (:func:`physid.cli.verdict.print_verdict`; ``--verbose``: all of them); the
exit code follows the status (0 ok, 2 bad input, 3 written but not ok). Heavy imports (CasADi,
Matplotlib) happen inside the commands so ``--help`` stays fast.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import click

from physid.api.impacts_runs import IDENTIFY, MAX_DURATION_S, MAX_FPS, SIMULATE, SNAPSHOTS
from physid.cli.options import OUTPUT_DIR, OUTPUT_FILE, number_in
from physid.cli.verdict import codes_hint, print_verdict, verbose_option
from physid.status import Status


def _exit(status: str) -> None:
    """Exit with the status's code (0 ok, 3 written but not ok)."""
    code = Status(status).exit_code
    if code:
        sys.exit(code)


SHAPE_HELP = (
    "Body shape in its own frame, whose origin is the centre of mass: 'ellipse:A,B' with "
    "semi-axes A (body x) and B (body y) in metres, or 'polygon:X1,Y1;X2,Y2;...' with convex "
    "polygon vertices in metres."
)
SURFACE_HELP = (
    "Environment line 'line:ANGLE,OFFSET': ANGLE in radians from the world x axis to the line, "
    "OFFSET in metres = signed distance of the line from the origin along its normal "
    "(-sin ANGLE, cos ANGLE), which points to the free side. 'line:0,0' is the ground y = 0. "
    "Repeat for several lines."
)


@click.group("impacts")
def impacts() -> None:
    """Planar rigid bodies with frictional impacts (paper D): simulate camera data, identify J/m
    and the Coulomb friction coefficient from it. SI units; angles in radians."""


@impacts.command("simulate")
@click.option("--shape", "shape_text", required=True, help=SHAPE_HELP)
@click.option("--surface", "surfaces", multiple=True, required=True, help=SURFACE_HELP)
@click.option(
    "--q0",
    required=True,
    metavar="X,Y,TH",
    help="Initial pose: centre of mass X, Y [m] and orientation TH [rad], each within ±1e6.",
)
@click.option(
    "--v0",
    required=True,
    metavar="VX,VY,W",
    help="Initial velocity: centre of mass VX, VY [m/s] (within ±1e4) and angular velocity W "
    "[rad/s] (within ±1e5).",
)
@click.option(
    "--mu",
    type=float,
    required=True,
    callback=number_in(*SIMULATE["mu"]),
    help="Coulomb friction coefficient [-], in [0, 10].",
)
@click.option(
    "--restitution",
    type=float,
    callback=number_in(*SIMULATE["restitution"]),
    required=True,
    help="Newton restitution coefficient ε of paper D eq. (4), in [0, 1].",
)
@click.option(
    "--duration",
    type=float,
    required=True,
    callback=number_in(*SIMULATE["duration"]),
    help=f"Simulated time T [s], at most {MAX_DURATION_S:g}.",
)
@click.option(
    "--fps",
    type=float,
    required=True,
    callback=number_in(*SIMULATE["fps"]),
    help=f"Camera frame rate F [frames/s], at most {MAX_FPS:g}.",
)
@click.option(
    "--noise",
    type=float,
    callback=number_in(*SIMULATE["noise"]),
    required=True,
    help="Standard deviation SIGMA [m] of the Gaussian noise added to x and y.",
)
@click.option(
    "--noise-angle",
    type=float,
    callback=number_in(*SIMULATE["noise_angle"]),
    default=None,
    help="Standard deviation [rad] of the noise on theta (default: SIGMA divided by "
    "the largest body radius, the angle error of a rim point tracked with SIGMA).",
)
@click.option(
    "--seed",
    type=int,
    callback=number_in(*SIMULATE["seed"]),
    default=0,
    show_default=True,
    help="Seed of the noise generator (numpy default_rng), 0-4294967295.",
)
@click.option(
    "--inertia-ratio",
    type=float,
    callback=number_in(*SIMULATE["inertia_ratio"]),
    default=None,
    help="J/m [m²], J about the centre of mass (default: uniform lamina of the shape).",
)
@click.option(
    "--dt",
    type=float,
    callback=number_in(*SIMULATE["dt"]),
    default=None,
    help="Simulation step h [s] (default: the largest step ≤ 0.5 ms that divides 1/F).",
)
@click.option(
    "--model",
    type=click.Choice(["irc", "igc"]),
    default="irc",
    show_default=True,
    help="Contact model: impulse-restitution (paper D's simulator) or impulse-gap.",
)
@click.option(
    "--solver",
    type=click.Choice(["lcp", "nlp"]),
    default="lcp",
    show_default=True,
    help="Per-step solver: Lemke LCP (fast) or the paper's IPOPT NLP, eq. (20).",
)
@click.option(
    "--out",
    type=OUTPUT_FILE,
    required=True,
    help="Output CSV with columns t,x,y,theta (s, m, m, rad).",
)
@verbose_option
def simulate_command(
    shape_text,
    surfaces,
    q0,
    v0,
    mu,
    restitution,
    duration,
    fps,
    noise,  # noqa: ANN001, ANN201, PLR0913
    noise_angle,
    seed,
    inertia_ratio,
    dt,
    model,
    solver,
    out,
    verbose,
):
    """Simulate a throw with paper D's time-stepping model and write noisy camera poses.

    Exit codes: 0 ok; 2 bad input (one error line, nothing written); 3 a step's solver failed
    (status numerical_failure): the poses up to that time are written.
    """
    from physid.api.impacts_runs import impacts_simulate

    run = impacts_simulate(
        shape_text,
        surfaces,
        q0,
        v0,
        mu=mu,
        restitution=restitution,
        duration=duration,
        fps=fps,
        noise=noise,
        noise_angle=noise_angle,
        seed=seed,
        inertia_ratio=inertia_ratio,
        dt=dt,
        model=model,
        solver=solver,
        progress=True,
    )
    run.save(out)
    done = run.document
    print_verdict(
        run.status,
        run.message,
        [f"wrote {done['samples']} poses to {out}"],
        run.findings,
        verbose=verbose,
    )
    _exit(run.status)


GRAVITY_HELP = (
    "Gravity acceleration GX,GY [m/s²] in the world frame of the poses (default 0,-9.81: along -y)."
)


@impacts.command("identify")
@click.option(
    "--data",
    "data_paths",
    type=click.Path(exists=True, path_type=Path),
    multiple=True,
    required=True,
    help="Pose CSV with header t,x,y,theta (s, m, m, rad; theta continuous), or a folder of "
    "them. Repeat for several throws of the same body on the same surfaces: they are fitted "
    "together, with one J/m and one mu and each throw's own initial state.",
)
@click.option("--shape", "shape_text", required=True, help=SHAPE_HELP)
@click.option("--surface", "surfaces", multiple=True, required=True, help=SURFACE_HELP)
@click.option("--gravity", "gravity_text", default=None, metavar="GX,GY", help=GRAVITY_HELP)
@click.option(
    "--mass",
    type=float,
    callback=number_in(*IDENTIFY["mass"]),
    default=1.0,
    show_default=True,
    help="Mass m [kg], fixed: only J/m is identifiable; m only scales the impulses.",
)
@click.option(
    "--noise",
    type=float,
    callback=number_in(*IDENTIFY["noise"]),
    default=1e-3,
    show_default=True,
    help="Expected standard deviation [m] of x and y in the data (weights W_chi).",
)
@click.option(
    "--noise-angle",
    type=float,
    callback=number_in(*IDENTIFY["noise_angle"]),
    default=None,
    help="Expected standard deviation [rad] of theta (default: --noise divided by the "
    "largest body radius).",
)
@click.option(
    "--max-substep",
    type=float,
    callback=number_in(*IDENTIFY["max_substep"]),
    default=1e-3,
    show_default=True,
    help="Largest model step h̄ [s]; each frame interval is split into n_s = "
    "ceil(Δt/h̄) steps (paper D eq. 25).",
)
@click.option(
    "--out",
    type=OUTPUT_DIR,
    required=True,
    help="Output folder: result.json, fit.png, impulses.png, trajectory.csv.",
)
@verbose_option
def identify_command(  # noqa: ANN201, PLR0913
    data_paths,  # noqa: ANN001
    shape_text,  # noqa: ANN001
    surfaces,  # noqa: ANN001
    gravity_text,  # noqa: ANN001
    mass,  # noqa: ANN001
    noise,  # noqa: ANN001
    noise_angle,  # noqa: ANN001
    max_substep,  # noqa: ANN001
    out,  # noqa: ANN001
    verbose,  # noqa: ANN001
):
    """Identify J/m [m²] and Coulomb's μ from camera poses (paper D §5.1, eq. 27), of one throw
    or pooled over several (trajectory.csv then runs on the pooled time axis; result.json gives
    each throw's time offset and initial state).

    Exit codes: 0 ok (mu only a lower bound, an ambiguous J/m or a fit above the noise are
    cautions printed with their codes); 2 bad input (one error line, nothing written); 3
    written, but the status is not ok: not_converged (the iteration budget; the estimates are
    the best iterate), time_limit (the wall-clock safety stop), stalled or numerical_failure
    (IPOPT), unidentifiable (free flight, too little change of spin at the contacts, a flat
    objective) or at_bound (J/m ran to a bound); the finding printed says which.
    """
    from physid.api.impacts_runs import impacts_identify

    run = impacts_identify(
        data_paths,
        shape_text,
        surfaces,
        gravity=gravity_text,
        mass=mass,
        noise=noise,
        noise_angle=noise_angle,
        max_substep=max_substep,
        progress=True,
    )
    run.save(out)
    result = run.raw
    std = result.inertia_ratio_std
    spread = [f"standard deviation of J/m {std:.2g} m²"] if math.isfinite(std) else []
    print_verdict(
        run.status,
        run.message,
        [*spread, f"{result.iterations} IPOPT iterations, {result.solve_time:.1f} s"],
        run.findings,
        verbose=verbose,
        details=[f"solver: IPOPT {result.solver_status}", f"fine steps: {result.q.shape[0] - 1}"],
    )
    click.echo(codes_hint(str(out)))
    _exit(run.status)


@impacts.command("identify-snapshots")
@click.option(
    "--data",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="Snapshot CSV, one row per impact: vx_pre,vy_pre,omega_pre,vx_post,vy_post,omega_post "
    "[m/s, rad/s], px,py (contact point relative to the centre of mass [m]), nx,ny (unit "
    "normal from the surface into the body) or instead the contact Jacobian rows "
    "jn_x,jn_y,jn_w and jt_x,jt_y,jt_w; optional duration [s] (pre to post: its gravity "
    "impulse is removed), mass [kg], body and id (labels).",
)
@click.option("--gravity", "gravity_text", default=None, metavar="GX,GY", help=GRAVITY_HELP)
@click.option(
    "--noise-velocity",
    type=float,
    callback=number_in(*SNAPSHOTS["noise_velocity"]),
    default=0.01,
    show_default=True,
    help="Standard deviation [m/s] of the velocities: scales the residuals and the tolerance "
    "of the rigid-body checks (angular velocities scale by the median lever arm).",
)
@click.option(
    "--max-inertia-ratio",
    type=float,
    callback=number_in(*SNAPSHOTS["max_inertia_ratio"]),
    default=None,
    help="Upper bound on J/m [m²] (default: (2 × the largest lever arm)²).",
)
@click.option(
    "--mu-max",
    type=float,
    callback=number_in(*SNAPSHOTS["mu_max"]),
    default=3.0,
    show_default=True,
    help="Upper bound on the Coulomb friction coefficient [-].",
)
@click.option(
    "--out",
    type=OUTPUT_DIR,
    required=True,
    help="Output folder: result.json (estimates, findings, flags) and impacts.csv (per impact).",
)
@verbose_option
def identify_snapshots_command(  # noqa: ANN201
    data,  # noqa: ANN001
    gravity_text,  # noqa: ANN001
    noise_velocity,  # noqa: ANN001
    max_inertia_ratio,  # noqa: ANN001
    mu_max,  # noqa: ANN001
    out,  # noqa: ANN001
    verbose,  # noqa: ANN001
):
    """Identify J/m [m²] and Coulomb's μ from impact snapshots by paper D's impact law (eq. 4
    with eqs. 10-15 for one contact), with a restitution per impact; flag impacts no rigid body
    could produce, and name another sign convention of the contact geometry (jn, jt rows) that
    makes clearly more impacts consistent, with J/m and mu under it.

    Exit codes: 0 ok (mu only a lower bound, an estimate near a bound, residuals far above
    --noise-velocity or flagged impacts are cautions printed with their codes); 2 bad input
    (one error line, nothing written); 3 written, but the status is not ok: suspect (another
    sign convention of the contact geometry fits clearly more impacts: IM201 names it) or
    at_bound (J/m ran to a bound, or an estimate pinned at a bound with residuals far above
    the noise: the bound, not the impacts, set it).
    """
    from physid.api.impacts_runs import impacts_snapshots

    run = impacts_snapshots(
        data,
        gravity=gravity_text,
        noise_velocity=noise_velocity,
        max_inertia_ratio=max_inertia_ratio,
        mu_max=mu_max,
    )
    run.save(out)
    result = run.raw
    print_verdict(
        run.status,
        run.message,
        findings=run.findings,
        verbose=verbose,
        details=[f"robust residual sigma: {result.diagnostics['residual_robust_sigma']:.3g}"],
    )
    click.echo(codes_hint(str(out)))
    _exit(run.status)


def register(group: click.Group) -> None:
    """Add this module's commands to the physid group."""
    group.add_command(impacts)
