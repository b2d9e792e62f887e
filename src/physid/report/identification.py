"""Outputs of ``physid identify``: params.json, report.html and PNG figures, written atomically."""

from __future__ import annotations

import concurrent.futures
import datetime as _dt
import gc
import html
import multiprocessing
import os
from pathlib import Path

import numpy as np

from physid import __version__
from physid.errors import PhysidError
from physid.identify.pipeline import IdentificationResult
from physid.inertia import mass_com_inertia_from_pi
from physid.io import atomic_output_dir, to_json_text
from physid.params_file import FORMAT, params_document
from physid.report import figures

FIGURES = {
    "torque_train.png": "Measured vs predicted torque, training data",
    "torque_validation.png": "Measured vs predicted torque, validation data",
    "autocorrelation.png": "Residual autocorrelation (training)",
    "parameters.png": "Base parameters and relative standard deviations",
    "consistency.png": "Physical consistency of every body",
}


def params_json(result: IdentificationResult, provenance: dict) -> dict:
    """The ``params.json`` document (DESIGN.md contract) of a successful identification."""
    if result.theta is None:
        raise PhysidError(result.status)
    model, base, ls = result.model, result.base, result.least_squares
    document = {"format": FORMAT, **params_document(model, result.theta)}
    if result.gravity is not None:
        document["extra"]["gravity_estimate"] = {
            "tilt_deg_about_x_then_y": np.degrees(result.gravity.tilt_rad).tolist(),
            "residual_ratio_vs_urdf_gravity": result.gravity.residual_ratio,
        }
    relative = np.full(base.size, np.nan)
    relative[result.excited] = ls.relative_std_percent
    ls_values = np.full(base.size, np.nan)
    ls_values[result.excited] = ls.theta
    with np.errstate(divide="ignore", invalid="ignore"):
        relative_robust = 100.0 * result.base_std_robust / np.abs(ls_values)
    document["base_parameters"] = {
        "names": list(base.names),
        "short_names": list(base.short_names),
        "values": result.theta_base,
        # Newey-West: valid when the residuals are serially correlated (equals eq. 6 when white).
        "std": result.base_std_robust,
        "relative_std_percent_robust": relative_robust,
        "std_eq6": result.base_std,
        "relative_std_percent": relative,
        "identifiable": result.excited,
        f"{ls.method}_values": ls_values,
    }
    essential = result.essential
    document["essential_parameters"] = {
        "names": list(essential.names),
        "values": essential.theta,
        "relative_std_percent": essential.relative_std_percent,
        "max_over_min_relative_std": essential.ratio,
    }
    document["physically_consistent"] = bool(result.consistent.consistent)
    document["fit"] = fit_summary(result)
    document["provenance"] = {
        "physid_version": __version__,
        "created_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        **provenance,
    }
    return document


def fit_summary(result: IdentificationResult) -> dict:
    """The ``fit`` section: errors, noise levels, conditioning, solver, warnings."""
    joints = result.model.joint_names
    ls = result.least_squares
    return {
        "status": result.status,
        "train": result.train.as_dict(joints),
        "validation": None if result.validation is None else result.validation.as_dict(joints),
        "weighting": ls.method,
        "joint_sigma": dict(zip(joints, ls.joint_sigma.tolist(), strict=True)),
        "condition_number": ls.condition_number,
        "n_base_parameters": result.base.size,
        "n_identifiable": int(np.sum(result.excited)),
        "n_essential": len(result.essential.names),
        "unidentifiable": list(result.unidentifiable),
        "residual_lag1_autocorrelation": dict(
            zip(joints, result.autocorrelation[:, 1].tolist(), strict=True)
        ),
        "total_moving_mass_kg": result.moving_mass(),
        "consistency_solver": {
            "status": result.consistent.status,
            "solve_time_s": result.consistent.solve_time_s,
        },
        "preprocessing": result.train_observations.info,
        "warnings": list(result.warnings),
    }


def write_identification(
    result: IdentificationResult, out_dir: str | Path, provenance: dict, *, margin: float = 0.0
) -> Path:
    """Write params.json, report.html and the figures into ``out_dir`` (all or nothing)."""
    document = params_json(result, provenance)
    with atomic_output_dir(out_dir) as staging:
        for name, payload in _render(_figure_jobs(result, margin)).items():
            (staging / name).write_bytes(payload)
        (staging / "params.json").write_text(to_json_text(document), encoding="utf-8")
        (staging / "report.html").write_text(_html(result, document), encoding="utf-8")
    return Path(out_dir)


def _figure_jobs(result: IdentificationResult, margin: float) -> dict[str, tuple]:
    """``{file name: (figure function, arguments)}`` for every figure of the report."""
    model, theta = result.model, result.theta
    joints = model.joint_names
    train = result.train_observations
    jobs = {
        "torque_train.png": (
            figures.torque_fit_png,
            (train.t, train.tau, train.W @ theta, joints, "Training data"),
        )
    }
    if result.validation_observations is not None:
        val = result.validation_observations
        jobs["torque_validation.png"] = (
            figures.torque_fit_png,
            (val.t, val.tau, val.W @ theta, joints, "Validation data (held out)"),
        )
    jobs["autocorrelation.png"] = (
        figures.autocorrelation_png,
        (result.autocorrelation, train.n_samples, joints),
    )
    relative = np.full(result.base.size, np.nan)
    relative[result.excited] = result.least_squares.relative_std_percent
    jobs["parameters.png"] = (
        figures.parameter_table_png,
        (
            result.base.short_names,
            result.theta_base,
            relative,
            f"{result.base.size} base parameters (physically consistent values, WLS %sigma)",
        ),
    )
    bodies = model.layout.body_joints
    reports = result.consistent.bodies
    jobs["consistency.png"] = (
        figures.consistency_png,
        (
            bodies,
            np.array([reports[b].min_eigenvalue for b in bodies]),
            np.array([theta[model.layout.body_slice(b)][0] for b in bodies]),
            margin,
        ),
    )
    return jobs


def _render(jobs: dict[str, tuple]) -> dict[str, bytes]:
    """Render the figures, on every core where processes can be forked cheaply.

    Matplotlib's text rendering dominates the cost of a report (about 0.3 s per figure), and
    the figures are independent, so they are drawn in parallel worker processes.
    """
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return {name: function(*args) for name, (function, args) in jobs.items()}
    context = multiprocessing.get_context("fork")
    # Frozen objects are skipped by the garbage collector: without this, each worker's first
    # full collection walks (and copies on write) the whole inherited heap of Pinocchio, CVXPY
    # and CasADi objects, which doubled the time of its first figure (Python docs, gc.freeze).
    # (An application that froze objects itself keeps its own freeze: we unfreeze only ours.)
    ours = gc.get_freeze_count() == 0
    if ours:
        gc.freeze()
    try:
        with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
            futures = {
                name: pool.submit(function, *args) for name, (function, args) in jobs.items()
            }
            return {name: future.result() for name, future in futures.items()}
    finally:
        if ours:
            gc.unfreeze()


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.{digits}g}"


def _preprocessing_text(info: dict) -> str:
    first = info.get("experiments", [info])[0]
    text = str(first.get("method"))
    if first.get("butterworth_cutoff_hz"):
        text += f", Butterworth {first['butterworth_cutoff_hz']:g} Hz"
    if first.get("nvr") is not None:
        text += f", NVR {first['nvr']}"
    decimation = first.get("decimation")
    if decimation:
        text += f", decimation cut-off {decimation['cutoff_hz']:g} Hz (x{decimation['factor']})"
    return text


def _html(result: IdentificationResult, document: dict) -> str:
    model, fit = result.model, document["fit"]
    method = html.escape(result.least_squares.method.upper())
    joints = model.joint_names
    summary_rows = [
        ["status", fit["status"]],
        ["physically consistent", str(document["physically_consistent"])],
        [
            "base parameters (identifiable / essential)",
            f"{fit['n_base_parameters']} ({fit['n_identifiable']} / {fit['n_essential']})",
        ],
        [
            "training relative error ||tau - tau_hat|| / ||tau||",
            _fmt(fit["train"]["relative_error"]),
        ],
        [
            "validation relative error",
            "n/a" if fit["validation"] is None else _fmt(fit["validation"]["relative_error"]),
        ],
        ["condition number (weighted base regressor)", _fmt(fit["condition_number"])],
        ["total moving mass [kg]", _fmt(fit["total_moving_mass_kg"])],
        ["preprocessing", _preprocessing_text(result.train_observations.info)],
    ]
    if result.gravity is not None:
        tilt = np.degrees(result.gravity.tilt_rad)
        summary_rows.append(
            ["estimated base tilt [deg] (about x, then y)", f"{tilt[0]:.3f}, {tilt[1]:.3f}"]
        )
    joint_rows = [
        [
            j,
            _fmt(fit["train"]["rmse"][j]),
            "n/a" if fit["validation"] is None else _fmt(fit["validation"]["rmse"][j]),
            _fmt(fit["joint_sigma"][j]),
        ]
        for j in joints
    ]
    base = document["base_parameters"]
    base_rows = [
        [
            short,
            _fmt(value),
            _fmt(std6),
            _fmt(rel, 3),
            _fmt(std),
            "yes" if ok else "NO (prior)",
            name,
        ]
        for short, value, std6, rel, std, ok, name in zip(
            base["short_names"],
            base["values"],
            base["std_eq6"],
            base["relative_std_percent"],
            base["std"],
            base["identifiable"],
            base["names"],
            strict=True,
        )
    ]
    body_rows = []
    for joint in model.layout.body_joints:
        mass, com, inertia = mass_com_inertia_from_pi(result.theta[model.layout.body_slice(joint)])
        report = result.consistent.bodies[joint]
        body_rows.append(
            [
                joint,
                _fmt(mass),
                ", ".join(f"{c:.4f}" for c in com),
                ", ".join(f"{m:.4g}" for m in report.principal_moments),
                _fmt(report.min_eigenvalue, 3),
            ]
        )
    term_rows = [[j, *(_fmt(v) for v in terms.values())] for j, terms in document["joints"].items()]
    term_header = ["joint", *next(iter(document["joints"].values()), {}).keys()]
    images = "".join(
        f'<figure><img src="{name}" alt="{html.escape(caption)}"><figcaption>{html.escape(caption)}'
        "</figcaption></figure>"
        for name, caption in FIGURES.items()
        if name != "torque_validation.png" or result.validation_observations is not None
    )
    warnings = "".join(f"<li>{html.escape(w)}</li>" for w in fit["warnings"]) or "<li>none</li>"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>physid identification report</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}}
table{{border-collapse:collapse;margin:1em 0;font-size:13px}}td,th{{border:1px solid #ccc;
padding:3px 8px;text-align:left}}th{{background:#eee}}img{{max-width:100%}}figure{{margin:1.5em 0}}
</style></head><body>
<h1>physid identification report</h1>
<p>physid {html.escape(__version__)}, created {html.escape(document["provenance"]["created_utc"])}.
URDF: {html.escape(str(document["provenance"].get("urdf", "")))}</p>
<h2>Summary</h2>{_table(["quantity", "value"], summary_rows)}
<h2>Warnings</h2><ul>{warnings}</ul>
<h2>Torque prediction per joint [N m]</h2>
{_table(["joint", "train RMSE", "validation RMSE", "residual sigma (WLS)"], joint_rows)}
<h2>Figures</h2>{images}
<h2>Bodies (physically consistent; inertia about the CoM, joint frame)</h2>
{
        _table(
            [
                "body (joint)",
                "mass [kg]",
                "CoM [m]",
                "principal moments [kg m^2]",
                "min eig J [kg m^2]",
            ],
            body_rows,
        )
    }
<h2>Joint terms</h2>{_table(term_header, term_rows)}
<h2>Base parameters</h2>
<p>Values are the base parameters of the physically consistent standard parameters. Standard
deviations are those of the {method} estimate: paper C eq. 6, valid only if the residuals are
white (see the autocorrelation figure), and Newey-West's, valid when they are serially
correlated (params.json "std").</p>
{
        _table(
            [
                "parameter",
                "value",
                "std (eq. 6)",
                "rel. std [%]",
                "std (Newey-West)",
                "identifiable",
                "combination",
            ],
            base_rows,
        )
    }
<h2>Essential parameters</h2><p>{
        html.escape(", ".join(document["essential_parameters"]["names"]))
    }</p>
</body></html>
"""
