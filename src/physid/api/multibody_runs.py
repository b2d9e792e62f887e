"""API faces of ``physid multibody simulate`` and ``identify`` (paper A: SPOOK in maximal
coordinates; joint state and parameter estimation)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from physid.api.results import Named, Outcome, Parameter
from physid.errors import Bound, check_numbers
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.api.recording import PathLike
    from physid.recordings.tables import Table

# simulation steps x hinges: about 35 s of a 1-hinge pendulum at 1,400 steps/s (2 cores,
# loaded); a control file in ms asked for 5e5 steps (6 min, no output meanwhile)
MAX_STEP_HINGES = 50_000
# the largest hinge opening [m] a simulation may show: 10x what the stiffest of the examples
# shows at h = 1 ms and tau = 0.02 s (1.1 mm, docs/multibody.md); a control of 1e4 on the
# pendulum's 0.5 N m gain opened it by 0.15 m, 1e8 by 5.3 km, both reported "ok" before
MAX_VIOLATION_M = 1e-2
# The numbers the multibody faces accept, one table per command: the CLI's option callbacks
# (physid.cli.multibody_commands) and the API functions below check them through
# physid.errors.in_range, so a bad number is the same one-line error from either face.
STEP_S = Bound(0.0, 1.0, True)  # a model step h [s]
SIMULATE: dict[str, Bound] = {
    "duration": Bound(0.0, 1e6, True),
    "dt": STEP_S,
    "every": Bound(1, MAX_STEP_HINGES, integer=True),
}
IDENTIFY: dict[str, Bound] = {
    "dt": STEP_S,
    "kappa": Bound(0.0, 1e12, True),  # kappa = 0 divided by zero; NaN gave a failed fit
    "max_iterations": Bound(1, 1000, integer=True),
}
REFINE_EVALUATIONS = 30  # simulations of the windows per refinement stage, by default
REFINE: dict[str, Bound] = {
    "refine_dt": STEP_S,
    "refine_evaluations": Bound(1, 1000, integer=True),
}
# |angle| [rad] and |rate| [rad/s] of a hinge's start: turns and speeds of any real mechanism
JOINT_LIMITS = {"rad": 1e3, "rad/s": 1e4}
# units of the model's parameters by slot (physid.multibody.model)
UNITS = {
    "mass": "kg",
    "Ixx": "kg m^2",
    "Iyy": "kg m^2",
    "Izz": "kg m^2",
    "Ixy": "kg m^2",
    "Ixz": "kg m^2",
    "Iyz": "kg m^2",
    "compliance_linear": "m/N",
    "compliance_rotational": "rad/(N m)",
    "damping": "s",
    "viscous": "N m s/rad",
    "dry": "m",
    "stribeck_delta": "m",
    "stribeck_c": "s^2/rad^2",
    "friction_compliance": "rad/(s N m)",
    "friction_damping": "s",
    "coulomb": "N m",
    "gain": "N m",
    "shaft_inertia": "kg m^2",
    "tilt_1": "rad",
    "tilt_2": "rad",
}


@one_blas_thread
def multibody_simulate(
    urdf: PathLike,
    *,
    config: PathLike | None = None,
    control: PathLike | None = None,
    duration: float | None = None,
    dt: float = 1e-3,
    q0: str | Sequence[float] | None = None,
    dq0: str | Sequence[float] | None = None,
    every: int = 1,
) -> Outcome:
    """Simulate a URDF (+ YAML ``config``) with the SPOOK stepper under a ``control`` signal
    file (or, unactuated, for ``duration`` seconds) from the joint angles ``q0`` and rates
    ``dq0`` (``physid multibody simulate``). ``save(out)`` writes trajectory.csv (every
    ``every``-th step) and simulation.json (``to_dict()``); ``status`` says when the hinges came
    apart. Raises :class:`~physid.errors.InputError` on bad input or a diverged simulation."""
    import numpy as np

    from physid.errors import InputError
    from physid.files.io import write_json_atomic, write_text_atomic
    from physid.multibody.build import load_model
    from physid.multibody.files import hold, read_control, trajectory_csv_text
    from physid.multibody.simulate import simulate, state_from_joints

    check_numbers(SIMULATE, {"duration": duration, "dt": dt, "every": every})
    control = None if control is None else Path(control)
    urdf, config = Path(urdf), None if config is None else Path(config)
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

    def write(staging: Path) -> None:
        write_text_atomic(staging / "trajectory.csv", trajectory_csv_text(model, sim, t[0], every))
        write_json_atomic(staging / "simulation.json", summary)

    parameters = Named(
        {n: Parameter(float(v), None, "given", _unit(n)) for n, v in summary["parameters"].items()}
    )
    message = (
        f"{len(sim.t[::every])} samples (h = {dt:g} s, max constraint violation "
        f"{summary['max_constraint_violation']:.3g}, {sim.lcp_failures} LCP failures)"
    )
    return Outcome(summary["status"], message, parameters, summary, sim, write)


@one_blas_thread
def multibody_identify(
    urdf: PathLike,
    data: PathLike | Table | Mapping[str, Any] | Sequence[PathLike | Table | Mapping[str, Any]],
    *,
    config: PathLike | None = None,
    dt: float = 0.01,
    kappa: float | None = None,
    max_iterations: int = 20,
    init_filter: str = "auto",
    states_first: bool = False,
    compile_c: bool = False,
    cross_validate: bool = False,
    refine: bool = False,
    refine_windows: Sequence[float] | None = None,
    refine_dt: float | None = None,
    refine_evaluations: int | None = None,
    progress: bool = False,
) -> Outcome:
    """Joint state and parameter estimation (``physid multibody identify``, paper A §3-4):
    Levenberg-Marquardt on impulse and angle residuals. ``data``: recordings (files, tables or
    mappings of columns ``t``, ``q_<joint>``, ``u_<joint>``) sharing the parameters.
    ``refine``: then refine the parameters by output error (multiple shooting of the
    identified model over windows of ``refine_windows`` seconds per stage, inf for the whole
    recording, at step ``refine_dt`` (default ``dt``), ``refine_evaluations`` simulations per
    stage, default :data:`REFINE_EVALUATIONS`: :mod:`physid.multibody.refine`); the values
    written are the refinement's unless it did far worse than its start (then a warning says
    so and the equation-error values stay). The three ``refine_*`` need ``refine``: given
    without it they are an InputError, not silently ignored.
    ``save(out)`` writes params.json, result.json (``to_dict()``), states.npz and report.png;
    ``parameters`` are the estimated ones (name -> value, std); ``notes`` what the inputs left
    unused, ``warnings`` the fit's."""
    import numpy as np

    from physid.errors import InputError
    from physid.files.io import write_bytes_atomic, write_json_atomic
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
    from physid.multibody.verdicts import (
        first_state_simulations,
        simulation_errors,
        simulation_lines,
    )

    check_numbers(IDENTIFY, {"dt": dt, "kappa": kappa, "max_iterations": max_iterations})
    check_numbers(REFINE, {"refine_dt": refine_dt, "refine_evaluations": refine_evaluations})
    if not refine:
        given = {"--refine-windows": refine_windows, "--refine-dt": refine_dt,
                 "--refine-evaluations": refine_evaluations}  # fmt: skip
        for option, value in given.items():
            if value is not None:
                raise InputError("needs --refine (without it nothing is refined)", source=option)
    windows = _refine_windows(refine_windows)
    evaluations = REFINE_EVALUATIONS if refine_evaluations is None else refine_evaluations
    data_files = [data] if isinstance(data, str | Path | Mapping) else list(data)
    urdf, config = Path(urdf), None if config is None else Path(config)
    if cross_validate and len(data_files) < 2:
        raise InputError("needs at least two --data files", source="--cross-validate")
    model = load_model(urdf, config, default_estimate=True)
    recordings, notes = [], []
    for path in data_files:
        rec, ignored = read_recording(_table(path), model)
        if ignored:
            notes.append(f"{path}: ignoring column(s) {', '.join(ignored)}")
        recordings.append(rec)
    if refine:  # before the fit: a refinement that cannot refine is refused, not minutes later
        from physid.multibody.refine import check_refine_options

        check_refine_options(recordings, dt, refine_dt, windows)
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
    if refine:
        from physid.multibody.refine import refine as refine_fit
        from physid.multibody.refine import refined, skip_reason

        why = skip_reason(fit)
        if why is None:
            from physid.progress import progress as progress_display

            total = evaluations * len(windows)
            with progress_display(total=total, desc="output-error refinement",
                                  unit="step", enabled=progress) as bar:  # fmt: skip
                result = refine_fit(
                    fit,
                    recordings,
                    h=dt if refine_dt is None else refine_dt,
                    window_seconds=windows,
                    max_evaluations=evaluations,
                    progress=lambda steps, evaluations, cost: bar.update(1),
                )
            fit = refined(fit, result)
        else:
            notes.append(f"output-error refinement skipped: {why}")
    sources = [_source(p) for p in data_files]
    simulations = first_state_simulations(fit)  # once: the errors and the report's figure
    simulation = simulation_errors(fit, simulations=simulations)
    if model.estimate_default:
        notes.append(
            "the config lists no 'estimate': estimating the default set (per hinge the inertia "
            f"about its axis, viscous and coulomb): {', '.join(fit.names)}"
        )
    params = params_document(fit, urdf, config, sources)
    result = result_document(fit, folds, simulation)
    buffer = io.BytesIO()
    np.savez(buffer, **states_arrays(fit))

    def write(staging: Path) -> None:
        write_json_atomic(staging / "params.json", params)
        write_json_atomic(staging / "result.json", result)
        write_bytes_atomic(staging / "states.npz", buffer.getvalue())
        plot_report(fit, staging / "report.png", simulations[0])

    parameters = Named(
        {
            n: Parameter(float(v), float(s), "data", _unit(n))
            for n, v, s in zip(fit.names, fit.values, fit.std, strict=True)
        }
    )
    lines = [observation_summary(fit), *simulation_lines(simulation, fit.noise, sources)]
    if fit.refinement is not None:
        from physid.multibody.refine import summary

        lines.append(summary(fit.refinement))
    return Outcome(
        fit.status,
        f"{fit.iterations} iterations",
        parameters,
        result,
        fit,
        write,
        notes=tuple(notes),
        warnings=tuple(fit.notes),
        report=tuple(lines),
    )


def _refine_windows(windows: Sequence[float] | str | None) -> list[float]:
    """The refinement's window lengths [s] per stage: a sequence, or text such as
    ``2,10,whole`` (``whole``/``inf``: the whole recording); default
    :data:`physid.multibody.refine.WINDOW_SECONDS`."""
    from physid.errors import InputError
    from physid.multibody.refine import WINDOW_SECONDS

    if windows is None:
        return list(WINDOW_SECONDS)
    items = windows.split(",") if isinstance(windows, str) else list(windows)
    out = []
    for item in items:
        text = str(item).strip().lower()
        try:
            value = float("inf") if text in ("whole", "inf") else float(text)
        except ValueError:
            value = float("nan")
        if not value > 0:
            raise InputError(
                f"expected window lengths in s > 0 or 'whole', got {item!r}",
                source="--refine-windows",
            )
        out.append(value)
    if not out:
        raise InputError("expected at least one window length", source="--refine-windows")
    return out


def _unit(name: str) -> str:
    return UNITS.get(name.rpartition(".")[2], "")


def _table(item: Any) -> Any:
    """A recording as :func:`physid.multibody.outputs.read_recording` takes it: a path, or a
    table (a mapping of columns becomes one named ``arrays``)."""
    from physid.recordings.tables import Table

    if isinstance(item, Mapping):
        return Table({k: np.asarray(v, float) for k, v in item.items()}, "arrays")
    return item


def _source(item: Any) -> str:
    from physid.recordings.tables import Table

    if isinstance(item, Mapping):
        return "arrays"
    return item.source if isinstance(item, Table) else str(item)


#: The largest ``--init-filter`` [Hz] read before the recordings: no recording is sampled at
#: 2 MHz (the recording's own Nyquist frequency, checked once it is read, is the real limit).
MAX_INIT_FILTER_HZ = 1e6


def _cutoff(text: str) -> float | str | None:
    """``--init-filter``: ``auto``, ``none`` or a frequency [Hz] in (0, 1e6); the message
    names both limits, this one and the recording's Nyquist frequency
    (:func:`physid.multibody.observe.init_cutoff`), so that '1e9' is not refused as if it
    were not > 0."""
    from physid.errors import InputError

    if text.strip().lower() in ("auto", "none"):
        return None if text.strip().lower() == "none" else "auto"
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value < MAX_INIT_FILTER_HZ):
        raise InputError(
            f"expected auto, none or a frequency in Hz in (0, {MAX_INIT_FILTER_HZ:,.0f}), below "
            f"the recording's Nyquist frequency, got {text!r}",
            source="--init-filter",
        )
    return value


def _joint_vector(
    text: str | Sequence[float] | None, n: int, option: str, unit: str
) -> list[float]:
    from physid.errors import InputError

    if text is None:
        return [0.0] * n
    try:
        values = [float(v) for v in (text.split(",") if isinstance(text, str) else text)]
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
