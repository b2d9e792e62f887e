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
from physid.status import Status
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.api.recording import PathLike
    from physid.recordings.tables import Table

# simulation steps x hinges: well under a minute of a 1-hinge pendulum on a loaded machine; a
# control file in ms asks for minutes of simulation with no output meanwhile
MAX_STEP_HINGES = 50_000
# the largest hinge opening [m] a simulation may show: 10x what the stiffest of the examples
# shows at h = 1 ms and tau = 0.02 s (1.1 mm, docs/multibody.md); a control too strong for
# the step opens the hinges by metres or more, which no "ok" may hide
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
    "kappa": Bound(0.0, 1e12, True),  # kappa = 0 divides by zero; NaN would fail the fit
    "max_iterations": Bound(1, 1000, integer=True),
}
REFINE: dict[str, Bound] = {
    "refine_dt": STEP_S,
    "refine_evaluations": Bound(1, 1000, integer=True),
}
# |angle| [rad] and |rate| [rad/s] of a hinge's start: turns and speeds of any real mechanism
JOINT_LIMITS = {"rad": 1e3, "rad/s": 1e4}
# units of the model's parameters by slot (physid.multibody.model.spec)
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


def _start_state(model: Any, q0: Any, dq0: Any) -> tuple[np.ndarray, np.ndarray]:
    from physid.multibody.step.simulate import state_from_joints

    m = len(model.hinges)
    angles = _joint_vector(q0, m, "--q0", "rad")
    rates = _joint_vector(dq0, m, "--dq0", "rad/s")
    return state_from_joints(model, np.array(angles), np.array(rates))


def _control(model: Any, control: Path | None, duration: float | None, dt: float) -> tuple:
    """``(t, u, step times, held control)`` of a control file, or of an unactuated system over
    ``duration``; InputError for a motor without control, no duration, too many steps."""
    from physid.errors import InputError
    from physid.multibody.step.files import hold, read_control

    m = len(model.hinges)
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
    return t, u, times, u_steps


def _simulation_verdict(sim: Any, dt: float) -> tuple[Status, list]:
    """The status of a simulation and its findings: ``suspect`` when the hinges open by more
    than :data:`MAX_VIOLATION_M` (``MB402``), Lemke rays as ``MB403``."""
    from physid.multibody import codes

    violation = float(sim.constraint_violation.max())
    findings, status = [], Status.OK
    if violation > MAX_VIOLATION_M:
        status = Status.SUSPECT
        findings.append(
            codes.CONSTRAINT_VIOLATED(
                f"the hinges open by up to {violation:.3g} m (more than {MAX_VIOLATION_M:g} m): "
                f"the control is too strong for h = {dt:g} s or the compliance too large",
                numbers={"violation_m": violation, "limit_m": MAX_VIOLATION_M},
            )
        )
    if sim.lcp_failures:
        findings.append(
            codes.LCP_FAILURES(
                f"{sim.lcp_failures} steps ended on a Lemke ray",
                numbers={"steps": sim.lcp_failures},
            )
        )
    return status, findings


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
    """Simulate a multibody model with the SPOOK stepper of paper A (``physid multibody
    simulate``).

    Args:
        urdf: The model (URDF; bodies, hinges, friction in its ``<dynamics>``).
        config: A YAML config (gravity, joint gains, constraint regularisation; None: the
            defaults).
        control: A CSV of control signals ``t, u_<joint>`` (None: unactuated).
        duration: The simulated time [s] (None: the control file's span; needed without one).
        dt: The time step [s].
        q0: The joint angles at the start [rad or m], one per joint (a comma-separated text
            as the command line takes, or numbers; None: zeros).
        dq0: The joint rates at the start, as ``q0``.
        every: Write every ``every``-th step.

    Returns:
        The simulation: ``save(out)`` writes trajectory.csv and simulation.json
        (``to_dict()``); ``status`` is ``suspect`` when the hinges came apart (finding
        ``MB402``).

    Raises:
        InputError: Bad input, or a simulation that diverged (nothing written).
    """
    from physid.errors import InputError
    from physid.files.io import write_json_atomic, write_text_atomic
    from physid.findings import as_dicts
    from physid.multibody.model.build import load_model
    from physid.multibody.step.files import trajectory_csv_text
    from physid.multibody.step.simulate import simulate
    from physid.multibody.verdicts import caught_warnings

    check_numbers(SIMULATE, {"duration": duration, "dt": dt, "every": every})
    control = None if control is None else Path(control)
    urdf, config = Path(urdf), None if config is None else Path(config)
    model = load_model(urdf, config)
    state = _start_state(model, q0, dq0)
    t, _, times, u_steps = _control(model, control, duration, dt)
    with caught_warnings() as numerics, np.errstate(all="ignore"):
        sim = simulate(model, dt, len(times), *state, u_steps)  # divergence: refused below
    diverged = np.flatnonzero(~np.all(np.isfinite(sim.angles) & np.isfinite(sim.rates), axis=1))
    if diverged.size:
        raise InputError(
            f"the simulation diverged (non-finite state) at t = {sim.t[diverged[0]]:.6g} s: "
            "check the control's magnitude, --dq0 and the config's parameters",
            source="simulate",
        )
    status, findings = _simulation_verdict(sim, dt)
    findings += numerics
    message = (
        f"{len(sim.t[::every])} samples (h = {dt:g} s, max constraint violation "
        f"{float(sim.constraint_violation.max()):.3g}, {sim.lcp_failures} LCP failures)"
    )
    summary = {
        "format": "physid.multibody.simulation/1",
        "status": str(status),
        "findings": as_dicts(findings),
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

    def write(staging: Path) -> None:
        write_text_atomic(staging / "trajectory.csv", trajectory_csv_text(model, sim, t[0], every))
        write_json_atomic(staging / "simulation.json", summary)

    parameters = Named(
        {n: Parameter(float(v), None, "given", _unit(n)) for n, v in summary["parameters"].items()}
    )
    return Outcome(str(status), message, parameters, summary, sim, write, findings=tuple(findings))


def _refine_options(
    refine: bool | None,
    windows: Sequence[float] | str | None,
    refine_dt: float | None,
    evaluations: int | None,
) -> Any:
    """The refinement's mode and options. ``refine_dt`` and ``evaluations`` also set the
    default refinement's (``refine=None``); given with ``refine=False``, or ``windows`` without
    ``refine=True``, they are an InputError naming the option (they would be ignored)."""
    from physid.errors import InputError
    from physid.multibody.workflow import REFINE_EVALUATIONS, RefineMode, RefineOptions

    check_numbers(REFINE, {"refine_dt": refine_dt, "refine_evaluations": evaluations})
    ignored = {} if refine is True else {"--refine-windows": windows}
    if refine is False:
        ignored |= {"--refine-dt": refine_dt, "--refine-evaluations": evaluations}
    for option, value in ignored.items():
        if value is not None:
            what = "--refine" if option == "--refine-windows" else "a refinement (not --no-refine)"
            raise InputError(f"needs {what}: nothing would use it", source=option)
    mode = {None: RefineMode.AUTO, True: RefineMode.ON, False: RefineMode.OFF}[refine]
    return RefineOptions(
        mode,
        _refine_windows(windows),
        refine_dt,
        REFINE_EVALUATIONS if evaluations is None else evaluations,
    )


def _read(urdf: Path, config: Path | None, data: Any) -> tuple:
    """The model (the default estimate set when the config lists none), the recordings, their
    sources and the findings of reading them."""
    from physid.multibody import codes
    from physid.multibody.model.build import load_model
    from physid.multibody.outputs import read_recording

    data_files = [data] if isinstance(data, str | Path | Mapping) else list(data)
    model = load_model(urdf, config, default_estimate=True)
    recordings, findings = [], []
    for path in data_files:
        rec, ignored = read_recording(_table(path), model)
        if ignored:
            findings.append(
                codes.IGNORED_COLUMNS(
                    f"{_source(path)}: ignoring column(s) {', '.join(ignored)}",
                    names=ignored,
                )
            )
        recordings.append(rec)
    if model.estimate_default:
        findings.append(
            codes.DEFAULT_ESTIMATE(
                "the config lists no 'estimate': estimating the default set (per hinge the "
                f"inertia about its axis, viscous and coulomb): {', '.join(model.estimate)}",
                names=model.estimate,
            )
        )
    return model, recordings, [_source(p) for p in data_files], findings


def _identify_outcome(run: Any, urdf: Path, config: Path | None, sources: list) -> Outcome:
    """The :class:`Outcome` of a workflow run: documents, writer, parameters, key lines."""

    from physid.files.io import write_bytes_atomic, write_json_atomic
    from physid.multibody.outputs import (
        observation_summary,
        params_document,
        plot_report,
        result_document,
        states_arrays,
    )
    from physid.multibody.verdicts import simulation_lines

    fit, findings, status = run.fit, run.findings, run.status
    params = params_document(fit, urdf, config, sources, findings, status)
    result = result_document(fit, run.folds, run.simulation, findings, status)
    buffer = io.BytesIO()
    np.savez(buffer, **states_arrays(fit))

    def write(staging: Path) -> None:
        write_json_atomic(staging / "params.json", params)
        write_json_atomic(staging / "result.json", result)
        write_bytes_atomic(staging / "states.npz", buffer.getvalue())
        plot_report(fit, staging / "report.png", run.simulations[0])

    parameters = Named(
        {
            n: Parameter(float(v), float(s), "data", _unit(n))
            for n, v, s in zip(fit.names, fit.values, fit.std, strict=True)
        }
    )
    lines = [observation_summary(fit), *simulation_lines(run.simulation, fit.noise, sources)]
    how = (
        "refined by output error"
        if fit.refinement is not None and fit.refinement.used
        else ("equation error")
    )
    message = f"{how}; {fit.iterations} equation-error iterations ({fit.termination})"
    return Outcome(
        str(status), message, parameters, result, fit, write, report=tuple(lines), findings=findings
    )


@one_blas_thread
def multibody_identify(
    urdf: PathLike,
    data: PathLike | Table | Mapping[str, Any] | Sequence[PathLike | Table | Mapping[str, Any]],
    *,
    config: PathLike | None = None,
    dt: float = 0.01,
    kappa: float | None = None,
    max_iterations: int = 20,
    init_filter: str | float | None = "auto",
    states_first: bool = False,
    compile_c: bool = False,
    cross_validate: bool = False,
    refine: bool | None = None,
    refine_windows: Sequence[float] | None = None,
    refine_dt: float | None = None,
    refine_evaluations: int | None = None,
    progress: bool = False,
) -> Outcome:
    """Joint state and parameter estimation of paper A (``physid multibody identify``, §3-4):
    Levenberg-Marquardt on impulse and angle residuals, the URDF's bodies as a weak prior and a
    plausibility box.

    Args:
        urdf: The model (URDF): its inertias are the start, the prior and the box's centre.
        data: Recordings sharing the parameters: files, tables or mappings of columns ``t``,
            ``q_<joint>`` and ``u_<joint>`` (the applied torque or force), or a list of them.
        config: A YAML config (gravity, which parameters to estimate, bounds; None: defaults).
        dt: The stepper's time step [s].
        kappa: The constraint regularisation (None: the config's or the default).
        max_iterations: Levenberg-Marquardt's iteration budget.
        init_filter: The low-pass cut-off [Hz] of the angles the states start from:
            ``"auto"`` (chosen from the recording), None (no filter), or a frequency (a number,
            or its text as the command line takes it).
        states_first: Fit the states alone before the parameters.
        compile_c: Compile the residual functions with CasADi (faster long runs).
        cross_validate: Fit every recording but one and score the one left out, in turn
            (needs two recordings or more).
        refine: True refines the parameters by output error (multiple shooting of the
            identified model, :mod:`physid.multibody.refine`); None (the default) refines by
            1 s windows only when a body collapsed or dry friction comes from low-rate samples;
            False never. The values written are the refinement's unless it did worse than its
            start (finding ``MB302``).
        refine_windows: The refinement's window lengths [s] per stage, inf for the whole
            recording (needs ``refine=True``).
        refine_dt: The refinement's time step [s] (None: ``dt``; not with ``refine=False``).
        refine_evaluations: Simulations per refinement stage (not with ``refine=False``).
        progress: Show a progress bar of the refinement.

    Returns:
        The estimated parameters (``parameters``: name -> value, std), the ``status`` (a
        :class:`~physid.status.Status`) and its ``findings`` (MB codes); ``save(out)`` writes
        params.json, result.json (``to_dict()``), states.npz and report.png.

    Raises:
        InputError: Bad input (nothing written).
    """
    from physid.errors import InputError
    from physid.multibody.refine.windows import check_refine_options
    from physid.multibody.workflow import RefineMode, identify_run
    from physid.progress import progress as progress_display

    check_numbers(IDENTIFY, {"dt": dt, "kappa": kappa, "max_iterations": max_iterations})
    refine_options = _refine_options(refine, refine_windows, refine_dt, refine_evaluations)
    urdf, config = Path(urdf), None if config is None else Path(config)
    model, recordings, sources, read_findings = _read(urdf, config, data)
    if cross_validate and len(recordings) < 2:
        raise InputError("needs at least two --data files", source="--cross-validate")
    if refine_options.mode is not RefineMode.OFF:  # refused now, not after the fit
        windows = refine_options.windows if refine_options.mode is RefineMode.ON else []
        check_refine_options(recordings, dt, refine_dt, windows)
    fit_options = {
        "h": dt,
        "kappa": kappa,
        "max_iterations": max_iterations,
        "compile": compile_c,
        "cutoff_hz": _cutoff(init_filter),
        "state_start": states_first,
    }

    def bar(total: int) -> Any:
        return progress_display(
            total=total, desc="output-error refinement", unit="step", enabled=progress
        )

    run = identify_run(
        model,
        recordings,
        sources,
        fit_options=fit_options,
        refine_options=refine_options,
        cross_validate=cross_validate,
        progress=bar,
    )
    run.findings = (*read_findings, *run.findings)
    return _identify_outcome(run, urdf, config, sources)


def _refine_windows(windows: Sequence[float] | str | None) -> list[float]:
    """The refinement's window lengths [s] per stage: a sequence, or text such as
    ``2,10,whole`` (``whole``/``inf``: the whole recording); default
    :data:`physid.multibody.refine.output_error.WINDOW_SECONDS`."""
    from physid.errors import InputError
    from physid.multibody.refine.output_error import WINDOW_SECONDS

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


def _cutoff(text: str | float | None) -> float | str | None:
    """``--init-filter``: ``auto``, ``none`` or a frequency [Hz] in (0, 1e6); the message
    names both limits, this one and the recording's Nyquist frequency
    (:func:`physid.multibody.estimate.observe.init_cutoff`), so that '1e9' is not refused as if it
    were not > 0."""
    from physid.errors import InputError

    if text is None:
        return None
    if isinstance(text, str) and text.strip().lower() in ("auto", "none"):
        return None if text.strip().lower() == "none" else "auto"
    try:
        value = float(text)
    except (TypeError, ValueError):
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
