"""What a fit of :mod:`physid.multibody.estimate.fit` says about itself: every estimated
parameter that ended at a bound, with what to try, and the simulation error of the identified
model from the first estimated state (the validation of paper A §4.5), per joint over the first
second and over the whole recording, at the recorded samples.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

import physid.multibody.codes as codes
from physid.errors import InputError
from physid.findings import Finding


def first_state_simulation(fit: Any, segment: int = 0) -> tuple[np.ndarray, np.ndarray, Any]:
    """``(t, angles, seg)``: the identified model of ``fit`` (a
    :class:`physid.multibody.estimate.fit.MultibodyFit`) simulated over recording ``segment`` from
    its first state, at every model step ``t`` [s], angles unwrapped onto the recording's, and
    the recording at those steps (``seg``: samples where ``seg.w > 0``). After an output-error
    refinement whose values the fit carries (``fit.refinement.used``) the first state and the
    step are the refinement's: its first window's estimated state at its step
    (:mod:`physid.multibody.refine.output_error`); else the fit's
    first estimated state at the fit's step. Raises ``InputError`` for a model that cannot be
    simulated (e.g. a body at zero mass)."""
    from physid.multibody.step.simulate import simulate

    refinement = getattr(fit, "refinement", None)
    if refinement is not None and refinement.used:  # else the fit's values: its own state
        h, seg = refinement.h, refinement.segments[segment]
        q0, v0 = refinement.first_states[segment]
    else:
        h, seg = fit.h, fit.segments[segment]
        q0, v0 = fit.states.q[segment][0], fit.states.v[segment][0]
    with np.errstate(all="ignore"):
        sim = simulate(fit.model, h, len(seg.y) - 1, q0, v0, u=seg.u[:-1])
    return h * np.arange(len(seg.y)), unwrap_like(sim.angles, seg.y), seg


def unwrap_like(angles: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """``angles`` shifted by whole turns so that their first row is nearest ``reference``'s."""
    return angles + 2 * np.pi * np.round((reference[0] - angles[0]) / (2 * np.pi))


def first_state_simulations(fit: Any) -> list[tuple | str]:
    """:func:`first_state_simulation` of every recording of ``fit``, or the reason (text) it
    cannot be simulated: computed once for the printed errors, result.json and the report."""
    out: list[tuple | str] = []
    for s in range(len(fit.segments)):
        try:
            out.append(first_state_simulation(fit, s))
        except InputError as error:
            out.append(str(error))
    return out


def simulation_errors(
    fit: Any, horizon: float = 1.0, simulations: list[tuple | str] | None = None
) -> list[dict]:
    """Per recording of ``fit`` (a :class:`physid.multibody.estimate.fit.MultibodyFit`, not
    imported: estimate imports this module): the identified model simulated from the first
    state (``simulations``, default :func:`first_state_simulations`), and per joint the RMS
    angle error [rad] against the recorded samples over the first ``horizon`` seconds and over
    the whole recording (``None`` and the reason when the model cannot be simulated, e.g. a
    body at zero mass)."""
    out = []
    for simulation in first_state_simulations(fit) if simulations is None else simulations:
        if isinstance(simulation, str):
            out.append({"error": simulation, "joints": None})
            continue
        t, angles, seg = simulation
        joints = {}
        for j, name in enumerate(fit.model.joint_names):
            seen = seg.w[:, j] > 0
            err = angles[seen, j] - seg.y[seen, j]
            first = t[seen] <= t[0] + horizon + 1e-9
            joints[name] = {
                "rms_first_s": float(np.sqrt(np.mean(err[first] ** 2))),
                "rms_whole": float(np.sqrt(np.mean(err**2))),
                "samples": int(seen.sum()),
            }
        out.append({"seconds": float(t[-1]), "horizon": horizon, "joints": joints})
    return out


def simulation_lines(errors: list[dict], noise: dict[str, dict], sources: list[str]) -> list[str]:
    """Printable lines of :func:`simulation_errors`, each joint's RMS against its noise."""
    lines = []
    for source, entry in zip(sources, errors, strict=True):
        if entry["joints"] is None:
            lines.append(f"simulation from the first state of {source}: {entry['error']}")
            continue
        parts = [
            f"{name} {1e3 * e['rms_first_s']:.3g} mrad over {entry['horizon']:g} s, "
            f"{1e3 * e['rms_whole']:.3g} mrad over {entry['seconds']:.4g} s "
            f"({e['rms_whole'] / noise[name]['std']:.3g}x its noise)"
            for name, e in entry["joints"].items()
        ]
        lines.append(f"simulation error from the first state of {source}: {'; '.join(parts)}")
    return lines


def simulation_findings(
    errors: list[dict], noise: dict[str, dict], sources: list[str]
) -> list[Finding]:
    """Per recording ``MB405`` with the RMS errors and their ratio to the noise, or ``MB401``
    when the model cannot be simulated."""
    out = []
    for source, entry in zip(sources, errors, strict=True):
        if entry["joints"] is None:
            out.append(codes.NOT_SIMULATABLE(f"{source}: {entry['error']}", names=(source,)))
            continue
        numbers = {}
        for name, e in entry["joints"].items():
            numbers[f"{name}_rms_first_s_rad"] = e["rms_first_s"]
            numbers[f"{name}_rms_whole_rad"] = e["rms_whole"]
            numbers[f"{name}_x_noise"] = e["rms_whole"] / noise[name]["std"]
        line = simulation_lines([entry], noise, [source])[0]
        out.append(codes.SIMULATION_ERROR(line, numbers=numbers, names=(source,)))
    return out


@contextmanager
def caught_warnings() -> Iterator[list[Finding]]:
    """Collect the RuntimeWarnings (NumPy's overflow and invalid values) raised inside the
    block instead of printing them: the list yielded gets one ``MB404`` finding with their
    count and first message when any was raised. The known sources are prevented (bounded LM
    steps, guarded trigonometry); this keeps any other from reaching the terminal unread."""
    found: list[Finding] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        yield found
    runtime = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    for other in (w for w in caught if not issubclass(w.category, RuntimeWarning)):
        warnings.warn_explicit(other.message, other.category, other.filename, other.lineno)
    if runtime:
        first = runtime[0]
        where = f"{first.filename.rsplit('/', 1)[-1]}:{first.lineno}"
        found.append(
            codes.NUMERICAL_WARNING(
                f"{len(runtime)} NumPy warning(s), the first '{first.message}' at {where}",
                numbers={"warnings": len(runtime)},
            )
        )
