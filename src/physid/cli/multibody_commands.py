"""CLI commands ``physid multibody simulate`` and ``identify`` (paper A: SPOOK in maximal
coordinates; joint state and parameter estimation).

Heavy imports (Pinocchio, CasADi) happen inside the command so ``--help`` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from physid.cli.options import OUTPUT_DIR, Notes, number_in

# simulation steps x hinges: about 35 s of a 1-hinge pendulum at 1,400 steps/s (2 cores,
# loaded); a control file in ms asked for 5e5 steps (6 min, no output meanwhile)
MAX_STEP_HINGES = 50_000
_STEP = number_in(0.0, 1.0, low_open=True)  # a model step [s]
_KAPPA = number_in(0.0, 1e12, low_open=True)
# the largest hinge opening [m] a simulation may show: 10x what the stiffest of the examples
# shows at h = 1 ms and tau = 0.02 s (1.1 mm, docs/multibody.md); a control of 1e4 on the
# pendulum's 0.5 N m gain opened it by 0.15 m, 1e8 by 5.3 km, both reported "ok" before
MAX_VIOLATION_M = 1e-2
# |angle| [rad] and |rate| [rad/s] of a hinge's start: turns and speeds of any real mechanism
JOINT_LIMITS = {"rad": 1e3, "rad/s": 1e4}


def _joint_vector(text: str | None, n: int, option: str, unit: str) -> list[float]:
    from physid.errors import InputError

    if text is None:
        return [0.0] * n
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise InputError(
            f"'{text}' is not a comma-separated list of numbers", source=option
        ) from None
    limit = JOINT_LIMITS[unit]
    if len(values) != n or not all(abs(v) <= limit for v in values):  # NaN fails too
        raise InputError(
            f"expected {n} finite values [{unit}] within ±{limit:g}, one per hinge", source=option
        )
    return values


@click.group("multibody")
def multibody() -> None:
    """Multibody dynamics in maximal coordinates with regularised, frictional hinges (paper A):
    simulate a URDF with SPOOK, or identify the parameters of that discrete model (with its
    unmeasured states) from measured joint angles and the control. SI units; angles in radians."""


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
    callback=number_in(0.0, 1e6, low_open=True),
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
    callback=_STEP,
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
    type=click.IntRange(1, MAX_STEP_HINGES),
    default=1,
    show_default=True,
    help="Write every N-th simulation step to trajectory.csv (the sample period is N * dt).",
)
def simulate_command(urdf, config, control, duration, out, dt, q0, dq0, every):  # noqa: ANN001, ANN201, PLR0913
    """Simulate a URDF (+ YAML) with the SPOOK stepper under a control signal and write the joint
    trajectory in the physid contract.

    Exit codes: 0 ok; 2 bad input or a simulation that diverged (nothing written); 3 written,
    but simulation.json's status says the hinges came apart (largest constraint violation over
    MAX_VIOLATION_M: a control too strong for the step).
    """
    import numpy as np

    from physid.errors import InputError
    from physid.files.io import atomic_output_dir, write_json_atomic, write_text_atomic
    from physid.multibody.build import load_model
    from physid.multibody.files import hold, read_control, trajectory_csv_text
    from physid.multibody.simulate import simulate, state_from_joints

    model = load_model(urdf, config)
    m = len(model.hinges)
    angles = _joint_vector(q0, m, "--q0", "rad")
    rates = _joint_vector(dq0, m, "--dq0", "rad/s")
    if control is not None:
        t, u = read_control(control, model)
    else:
        motors = [h.name for h in model.hinges if h.has_motor]
        if motors:
            raise InputError(
                f"hinge(s) {', '.join(motors)} have a motor: give its control signal",
                source="--control",
            )
        if duration is None:
            raise InputError(
                "an unactuated system needs the simulated time [s] (or a --control file)",
                source="--duration",
            )
        t, u = np.array([0.0, duration]), np.zeros((2, m))
    steps = (t[-1] - t[0]) / dt
    if steps * m > MAX_STEP_HINGES:
        raise InputError(
            f"{t[-1] - t[0]:.6g} s of control at h = {dt:g} s is {steps:.3g} steps of {m} "
            f"hinge(s), more than {MAX_STEP_HINGES:,} steps x hinges: a larger --dt, a shorter "
            "control (is t in seconds?)",
            source="--dt",
        )
    times, u_steps = hold(t, u, dt)
    if len(times) < 1:
        raise InputError(
            f"the simulated span is less than one step of {dt} s",
            source=str(control or "--duration"),
        )
    state = state_from_joints(model, np.array(angles), np.array(rates))
    with np.errstate(all="ignore"):  # a diverging state is refused below, not warned about
        sim = simulate(model, dt, len(times), *state, u_steps)
    diverged = np.flatnonzero(~np.all(np.isfinite(sim.angles) & np.isfinite(sim.rates), axis=1))
    if diverged.size:
        raise InputError(
            f"the simulation diverged (non-finite state) at t = {sim.t[diverged[0]]:.6g} s: "
            "check the control's magnitude, --dq0 and the config's parameters",
            source="simulate",
        )
    summary = {
        "format": "physid.multibody.simulation/1",
        "urdf": str(urdf),
        "config": None if config is None else str(config),
        "control": None if control is None else str(control),
        "h": dt,
        "steps": len(times),
        "every": every,
        "joints": model.joint_names,
        "parameters": dict(zip(model.names, model.values.tolist(), strict=True)),
        "max_constraint_violation": float(sim.constraint_violation.max()),
        "lcp_failures": sim.lcp_failures,
    }
    violation = summary["max_constraint_violation"]
    summary["status"] = "ok"
    if violation > MAX_VIOLATION_M:
        summary["status"] = (
            f"constraint violated: the hinges open by up to {violation:.3g} m (more than "
            f"{MAX_VIOLATION_M:g} m): the control is too strong for h = {dt:g} s or the "
            "compliance too large; the trajectory is not the mechanism's"
        )
    with atomic_output_dir(out) as staging:
        write_text_atomic(staging / "trajectory.csv", trajectory_csv_text(model, sim, t[0], every))
        write_json_atomic(staging / "simulation.json", summary)
    click.echo(
        f"wrote {len(sim.t[::every])} samples to {out / 'trajectory.csv'} (h = {dt:g} s, max "
        f"constraint violation {summary['max_constraint_violation']:.3g}, "
        f"{sim.lcp_failures} LCP failures)"
    )
    if summary["status"] != "ok":
        click.echo(f"physid: warning: status {summary['status']}", err=True)
        sys.exit(3)


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
    callback=_STEP,
    help="Model step h [s], in (0, 1]: at most 200,000 steps over all recordings, and at most "
    "20x finer than a recording's median sample period.",
)
@click.option(
    "--kappa",
    type=float,
    default=None,
    callback=_KAPPA,
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
    type=click.IntRange(1, 1000),
    default=20,
    show_default=True,
    help="Levenberg-Marquardt iteration cap (1-1000). LM also stops at a wall-time budget of "
    "20 s + 3 ms per model step and iteration (status 'stopped by the time budget ...').",
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
def identify_command(
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
):  # noqa: ANN001, ANN201, PLR0913, E501
    """Joint state and parameter estimation (paper A §3-4): Levenberg-Marquardt on impulse and
    angle residuals; writes the parameters, their covariance and a report.

    The angles are observed only at the model steps nearest to their samples (the states in
    between follow the dynamics), each weighted by its joint's measurement noise: the
    config's noise: {joint: rad}, or estimated from the data (printed)."""
    import numpy as np

    from physid.errors import InputError
    from physid.files.io import atomic_output_dir, write_bytes_atomic, write_json_atomic
    from physid.multibody.build import load_model
    from physid.multibody.estimate import identify
    from physid.multibody.outputs import (
        observation_summary,
        params_document,
        plot_report,
        read_recording,
        result_document,
        states_arrays,
    )
    from physid.multibody.verdicts import simulation_errors, simulation_lines

    if cross_validate and len(data_files) < 2:
        raise InputError("needs at least two --data files", source="--cross-validate")
    model = load_model(urdf, config, default_estimate=True)
    recordings, notes = [], Notes()
    for path in data_files:
        rec, ignored = read_recording(path, model)
        if ignored:
            notes.add(f"{path}: ignoring column(s) {', '.join(ignored)}")
        recordings.append(rec)
    options = {
        "h": dt,
        "kappa": kappa,
        "max_iterations": max_iterations,
        "compile": compile_c,
        "cutoff_hz": _cutoff(init_filter),
    }
    fit_options = {**options, "state_start": states_first}
    fit = identify(model, recordings, **fit_options)
    folds = None
    if cross_validate:
        folds = []
        for i, rec in enumerate(recordings):
            train = identify(model, recordings[:i] + recordings[i + 1 :], **fit_options)
            check = identify(train.model, [rec], names=[], **options)
            folds.append(
                {
                    "validation": rec.source,
                    "values": train.values.tolist(),
                    "status": check.status,
                    "cost_per_step": check.cost_per_step,
                    "observation_mse": check.observation_mse,
                }
            )
    sources = [str(p) for p in data_files]
    simulation = simulation_errors(fit)
    buffer = __import__("io").BytesIO()
    np.savez(buffer, **states_arrays(fit))
    with atomic_output_dir(out) as staging:
        write_json_atomic(staging / "params.json", params_document(fit, urdf, config, sources))
        write_json_atomic(staging / "result.json", result_document(fit, folds, simulation))
        write_bytes_atomic(staging / "states.npz", buffer.getvalue())
        plot_report(fit, staging / "report.png")
    notes.echo()
    if model.estimate_default:
        click.echo(
            "physid: note: the config lists no 'estimate': estimating the default set (per "
            f"hinge the inertia about its axis, viscous and coulomb): {', '.join(fit.names)}",
            err=True,
        )
    click.echo(observation_summary(fit))
    for line in simulation_lines(simulation, fit.noise, sources):
        click.echo(line)
    for note in fit.notes:
        click.echo(f"physid: warning: {note}", err=True)
    values = ", ".join(
        f"{n} = {v:.6g} (± {s:.2g})" for n, v, s in zip(fit.names, fit.values, fit.std, strict=True)
    )
    click.echo(f"{values}; status: {fit.status} ({fit.iterations} iterations); wrote {out}")


def _cutoff(text: str) -> float | str | None:
    """``--init-filter``: ``auto``, ``none`` or a frequency [Hz] > 0."""
    from physid.errors import InputError

    if text.strip().lower() in ("auto", "none"):
        return None if text.strip().lower() == "none" else "auto"
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value < 1e6):
        raise InputError(
            f"expected auto, none or a frequency in Hz > 0, got {text!r}", source="--init-filter"
        )
    return value


def register(main: click.Group) -> None:
    main.add_command(multibody)
