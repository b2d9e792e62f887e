"""Outputs of ``physid multibody identify``: recordings from contract files, ``params.json``
(the physid contract, multibody terms under ``extra``), ``result.json``, ``states.npz`` and the
report figure (recorded vs estimated angles, impulse residuals of eqs. 3.7-3.8, simulation of the
identified model from the first estimated state).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from physid.errors import InputError
from physid.findings import Finding, as_dicts
from physid.multibody.estimate.fit import MultibodyFit, MultibodyRecording
from physid.multibody.estimate.problem import Problem
from physid.multibody.model.spec import MultibodyModel
from physid.multibody.verdicts import first_state_simulations, unwrap_like
from physid.recordings.tables import Table
from physid.recordings.trajectory import _check_magnitude, _check_time, read_table
from physid.status import Status


def read_recording(
    path: str | Path | Table, model: MultibodyModel
) -> tuple[MultibodyRecording, list[str]]:
    """``t``, ``q_<joint>`` for every hinge and ``u_<joint>`` for every motor hinge (a file, or
    a table in memory); returns the recording and the columns that were not used (reported by
    the caller)."""
    table = path if isinstance(path, Table) else read_table(path)
    cols, source = table.columns, table.source
    t = _check_time(table)  # finite, strictly increasing, >= 3 samples, no gaps (data.py)
    used, angles, control = {"t"}, [], np.zeros((len(t), len(model.hinges)))
    for j, hinge in enumerate(model.hinges):
        name = f"q_{hinge.name}"
        if name not in cols:
            raise InputError(f"missing column '{name}' (angle of hinge)", source=source)
        angles.append(np.asarray(cols[name], float))
        used.add(name)
        if hinge.has_motor:
            uname = f"u_{hinge.name}"
            if uname not in cols:
                raise InputError(
                    f"missing column '{uname}' (control of motor hinge)", source=source
                )
            control[:, j] = cols[uname]
            used.add(uname)
    for name in sorted(used):
        values = np.asarray(cols[name], float)
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            raise InputError(f"column '{name}' row {bad[0] + 1} is {values[bad[0]]}", source=source)
    _check_magnitude(table, sorted(used - {"t"}))  # (|value| <= 1e8, as identify reads them)
    ignored = sorted(set(cols) - used - {f"dq_{n}" for n in model.joint_names})
    return MultibodyRecording(t, np.column_stack(angles), control, source), ignored


def impulse_residuals(fit: MultibodyFit) -> list[np.ndarray]:
    """Per segment the unweighted impulse residuals ``[dp_v, dp_q]`` (n-1, 12 n_bodies)."""
    problem = Problem(fit.model, fit.h, [], fit.kappa, fit.segments)
    r = problem.residual(fit.states, np.zeros(0), False)
    out, row, ns = [], 0, problem.ns
    for seg in fit.segments:
        n = len(seg.y)
        out.append(r[row + ns : row + n * ns].reshape(n - 1, ns) / np.sqrt(fit.kappa))
        row += n * ns + n * problem.fn.n_obs
    return out


def estimated_angles(fit: MultibodyFit) -> list[np.ndarray]:
    """Joint angles of the estimated states. The map from states to angles is kinematic, so it
    is read through a stepper at the fit's start values, which can be simulated: an estimate at
    an inertia's bound 0 cannot (a stepper built at it would fail after the fit finished)."""
    from physid.multibody.step.simulate import Stepper

    start = fit.model.values.copy()
    start[[fit.model.index(name) for name in fit.names]] = fit.initial_values
    stepper = Stepper(fit.model, fit.h, chi=start)
    return [
        np.unwrap(stepper.joint_states(q, v)[0], axis=0)
        for q, v in zip(fit.states.q, fit.states.v, strict=True)
    ]


def _body_entry(model: MultibodyModel, i: int, value: dict, std: dict) -> tuple[dict, bool]:
    """``params.json``'s entry of the body moved by hinge ``i`` (1-based) and whether it is
    physically consistent. A quantity not estimated is the model's (YAML/URDF) value: std null,
    source prior; the inertia is "data" when any entry is estimated, the null entries of its std
    saying which are not."""
    n = model.hinges[i - 1].name
    entries = [["Ixx", "Ixy", "Ixz"], ["Ixy", "Iyy", "Iyz"], ["Ixz", "Iyz", "Izz"]]
    inertia = np.array([[value[f"{n}.{e}"] for e in row] for row in entries])
    eig = np.sort(np.linalg.eigvalsh(inertia))
    consistent = bool(value[f"{n}.mass"] > 0 and eig[0] > 0 and eig[0] + eig[1] >= eig[2])
    estimated = any(f"{n}.{e}" in std for row in entries for e in row)
    entry = {
        "mass": value[f"{n}.mass"],
        "com": model.pin_model.inertias[i].lever.tolist(),
        "inertia": inertia.tolist(),
        "std": {
            "mass": std.get(f"{n}.mass"),
            "com": [None] * 3,
            "inertia": [[std.get(f"{n}.{e}") for e in row] for row in entries],
        },
        "source": {
            "mass": "data" if f"{n}.mass" in std else "prior",
            "com": "prior",
            "inertia": "data" if estimated else "prior",
        },
    }
    return entry, consistent


def _joint_entry(n: str, value: dict, std: dict) -> dict:
    """``params.json``'s joint terms of hinge ``n`` (the contract's viscous, coulomb, offset,
    armature = the motor's shaft inertia)."""

    def origin(name: str) -> str:
        return "data" if name in std else "prior"

    return {
        "viscous": value[f"{n}.viscous"],
        "coulomb": value[f"{n}.coulomb"],
        "offset": 0.0,
        "armature": value[f"{n}.shaft_inertia"],
        "std": {
            "viscous": std.get(f"{n}.viscous"),
            "armature": std.get(f"{n}.shaft_inertia"),
            "coulomb": std.get(f"{n}.coulomb"),
        },
        "source": {
            "viscous": origin(f"{n}.viscous"),
            "coulomb": origin(f"{n}.coulomb"),
            "offset": "prior",
            "armature": origin(f"{n}.shaft_inertia"),
        },
    }


def _provenance(fit: MultibodyFit, urdf: Path, config: Path | None, sources: list[str]) -> dict:
    model = fit.model
    return {
        "estimator": "physid.multibody (paper A)",
        "robot": {
            "urdf": str(urdf),
            "urdf_sha256": hashlib.sha256(urdf.read_bytes()).hexdigest(),
            "joints": {h.name: "revolute" for h in model.hinges},
        },
        "config": None if config is None else str(config),
        "data": sources,
        "preprocessing": {
            "initialisation_filter": [
                "none" if hz is None else f"butterworth order 2, {hz:.4g} Hz, zero-phase (§4.4)"
                for hz in fit.init_filter_hz
            ],
            "observations": "angles at the model steps nearest to their samples, weighted "
            "by min(noise) / noise of the joint",
            "noise": fit.noise,
            "resampled_step": fit.h,
        },
        "gravity": model.gravity.tolist(),
    }


def params_document(
    fit: MultibodyFit,
    urdf: Path,
    config: Path | None,
    sources: list[str],
    findings: Sequence[Finding] = (),
    status: Status | None = None,
) -> dict:
    """``params.json`` (docs/architecture.md contract): bodies and joint terms, multibody terms
    in extra, the run's ``status`` and ``findings``."""
    model, std = fit.model, dict(zip(fit.names, fit.std.tolist(), strict=True))
    value = {n: float(v) for n, v in zip(model.names, model.values, strict=True)}
    bodies, joints, consistent = {}, {}, True
    for i, hinge in enumerate(model.hinges, start=1):
        bodies[hinge.name], ok = _body_entry(model, i, value, std)
        consistent &= ok
        joints[hinge.name] = _joint_entry(hinge.name, value, std)
    extra = {
        "format": "physid.multibody/1",
        "parameters": {
            name: {
                "value": value[name],
                "std": std.get(name),
                "source": "data" if name in std else "prior",
            }
            for name in model.names
        },
        "h": fit.h,
        "kappa": fit.kappa,
        "note": "coulomb is the constant Coulomb torque [N m]; the load-dependent dry friction "
        "is the hinge's r*mu [m] (paper A F.4) in parameters",
    }
    status = fit.status if status is None else status
    return {
        "format": "physid.params/1",
        "status": str(status),
        "findings": as_dicts(findings or fit.findings),
        "bodies": bodies,
        "joints": joints,
        "extra": extra,
        "base_parameters": {
            "names": fit.names,
            "values": fit.values.tolist(),
            "std": fit.std.tolist(),
        },
        "physically_consistent": consistent,
        "fit": {
            "status": str(status),
            "termination": str(fit.termination),
            "cost_per_step": fit.cost_per_step,
            "observation_mse": fit.observation_mse,
            "impulse_mse": fit.impulse_mse,
        },
        "provenance": _provenance(fit, urdf, config, sources),
    }


def result_document(
    fit: MultibodyFit,
    cross_validation: list[dict] | None,
    simulation: list[dict] | None = None,
    findings: Sequence[Finding] = (),
    status: Status | None = None,
) -> dict:
    """``result.json``; ``simulation``: :func:`physid.multibody.verdicts.simulation_errors`;
    ``findings`` and ``status``: the whole run's (default the fit's)."""
    model = fit.model
    compliances = {
        h.name: {
            k: float(model.values[model.index(f"{h.name}.{k}")])
            for k in ("compliance_linear", "compliance_rotational", "damping")
        }
        for h in model.hinges
    }
    return {
        "format": "physid.multibody.result/1",
        "status": str(fit.status if status is None else status),
        "findings": as_dicts(findings or fit.findings),
        "termination": str(fit.termination),
        "message": fit.message,
        "converged": fit.converged,
        "iterations": fit.iterations,
        "state_iterations": fit.state_iterations,
        "at_bound": fit.at_bound,
        "collapsed": fit.collapsed,
        "seconds": fit.seconds,
        "cost": fit.cost,
        "cost_per_step": fit.cost_per_step,
        "observation_mse": fit.observation_mse,
        "impulse_mse": fit.impulse_mse,
        "cost_history": fit.cost_history,
        "gain_ratio_history": fit.gain_ratio_history,
        "names": fit.names,
        "values": fit.values.tolist(),
        "initial_values": fit.initial_values.tolist(),
        "std": fit.std.tolist(),
        "lower": None if fit.lower is None else fit.lower.tolist(),
        "upper": None if fit.upper is None else fit.upper.tolist(),
        "covariance": np.asarray(fit.covariance).tolist(),
        "singular_values": np.asarray(fit.singular_values).tolist(),
        "not_identifiable": fit.not_identifiable,
        "h": fit.h,
        "kappa": fit.kappa,
        "compliances": compliances,
        "noise": fit.noise,
        "init_filter_hz": fit.init_filter_hz,
        "observed_steps": fit.observed_steps,
        "model_steps": int(sum(len(seg.y) for seg in fit.segments)),
        "cross_validation": cross_validation,
        "simulation_error": simulation,
        "refinement": None if fit.refinement is None else fit.refinement.to_dict(),
    }


def observation_summary(fit: MultibodyFit) -> str:
    """One line: observed steps, the noise and weight per joint, the initialisation filter."""
    steps = sum(len(seg.y) for seg in fit.segments)
    noise = ", ".join(
        f"{name} {v['std']:.3g} rad ({v['source']}, weight {v['weight']:.3g})"
        for name, v in fit.noise.items()
    )
    filters = sorted({"none" if hz is None else f"{hz:.3g} Hz" for hz in fit.init_filter_hz})
    return (
        f"observations: {fit.observed_steps} of {steps} model steps carry a measured sample; "
        f"noise {noise}; initialisation filter {', '.join(filters)}"
    )


def states_arrays(fit: MultibodyFit) -> dict[str, np.ndarray]:
    out = {}
    for s, (seg, q, v, ang) in enumerate(
        zip(fit.segments, fit.states.q, fit.states.v, estimated_angles(fit), strict=True)
    ):
        out[f"t_{s}"] = fit.h * np.arange(len(seg.y))
        out[f"q_{s}"], out[f"v_{s}"], out[f"angles_{s}"] = q, v, ang
        out[f"measured_{s}"] = seg.y
    if fit.refinement is not None and fit.refinement.used:  # its simulations' first state
        for s, (q0, v0) in enumerate(fit.refinement.first_states):
            out[f"refined_q0_{s}"], out[f"refined_v0_{s}"] = q0, v0
    return out


def _swing_limits(measured: np.ndarray) -> tuple[float, float]:
    """Angle-axis limits around the recorded swing (20 % margin): a simulation that runs away
    must not squash a small swing onto an axis several radians wide."""
    low, high = float(np.nanmin(measured)), float(np.nanmax(measured))
    pad = 0.2 * max(high - low, 1e-3)
    return low - pad, high + pad


def plot_report(fit: MultibodyFit, path: Path, simulation: tuple | str | None = None) -> None:
    """Per joint, the recorded, estimated and simulated (from the first state) angles on an
    axis scaled to that joint's swing; the differences to the measurement [mrad]; the impulse
    residuals. ``simulation``: the first recording's entry of
    :func:`physid.multibody.verdicts.first_state_simulations` (computed when not given)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seg = fit.segments[0]
    t = fit.h * np.arange(len(seg.y))
    est = unwrap_like(estimated_angles(fit)[0], seg.y)
    simulation = first_state_simulations(fit)[0] if simulation is None else simulation
    if isinstance(simulation, str):  # e.g. an estimate at a zero mass: report it, keep the rest
        t_sim, sim, sim_seg = t, np.full_like(seg.y, np.nan), seg
        why = f"no simulation: {simulation}"
    else:
        (t_sim, sim, sim_seg), why = simulation, ""
    imp = impulse_residuals(fit)[0]
    names = fit.model.joint_names
    fig, axes = plt.subplots(len(names) + 2, 1, figsize=(9, 3.0 * (len(names) + 2)), sharex=True)
    error_axis, impulse_axis = axes[-2], axes[-1]
    for j, name in enumerate(names):
        axis, seen = axes[j], seg.w[:, j] > 0  # steps with a recorded sample
        axis.plot(t[seen], seg.y[seen, j], ".", ms=2, color="0.6", label="measured")
        axis.plot(t, est[:, j], "-", lw=1.2, label="estimated")
        axis.plot(t_sim, sim[:, j], "--", lw=1.0, label="simulated from the first state")
        axis.set_ylim(*_swing_limits(seg.y[:, j]))
        axis.set_ylabel(f"{name} [rad]")
        axis.set_title(f"{name}: angle (axis scaled to the measured swing)", fontsize=9)
        sim_seen = sim_seg.w[:, j] > 0
        for times, error, label, style in (
            (t[seen], est[seen, j] - seg.y[seen, j], "estimated", "-"),
            (t_sim[sim_seen], sim[sim_seen, j] - sim_seg.y[sim_seen, j], "simulated", "--"),
        ):
            error = 1e3 * error
            rms = np.sqrt(np.nanmean(error**2)) if np.isfinite(error).any() else np.nan
            error_axis.plot(
                times, error, style, lw=0.9, label=f"{name} {label} (RMS {rms:.3g} mrad)"
            )
    error_axis.axhline(0.0, color="0.5", lw=0.5)
    error_axis.set_ylabel("minus measured [mrad]")
    error_axis.set_title(why or "angle differences to the measurement", fontsize=9)
    impulse_axis.plot(t[1:], np.linalg.norm(imp[:, : imp.shape[1] // 2], axis=1), label="|dp_v|")
    impulse_axis.plot(t[1:], np.linalg.norm(imp[:, imp.shape[1] // 2 :], axis=1), label="|dp_q|")
    impulse_axis.set_ylabel("impulse residual [N s]")
    impulse_axis.set_yscale("log")
    impulse_axis.set_xlabel("time [s]")
    for axis in axes:
        axis.tick_params(labelsize=9)
        axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.suptitle(f"{fit.status}, {fit.iterations} iterations, h = {fit.h:g} s", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
