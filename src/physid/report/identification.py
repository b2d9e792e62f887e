"""Outputs of ``physid identify``: params.json and report.html (its charts drawn by the browser),
written atomically."""

from __future__ import annotations

import datetime as _dt
import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from physid.body.inertia import mass_com_inertia_from_pi
from physid.errors import PhysidError
from physid.files.io import atomic_output_dir, to_json_text
from physid.files.params_file import FORMAT, annotate_document, params_document
from physid.findings import Severity, as_dicts, of_severity
from physid.offline.checks.fit_flags import MISSED_JOINT_ERROR, parameters_at_bound
from physid.offline.fit.uncertainty import SOURCES
from physid.offline.observe.prediction import RecordingFit, residual_correlation_time
from physid.offline.result import IdentificationResult
from physid.report import charts
from physid.report.charts import ReportChart
from physid.report.friction import (
    friction_curves,
    friction_descriptions,
    friction_residuals,
)
from physid.robot.model import RobotModel, is_revolute
from physid.status import Status
from physid.version import __version__


def params_json(result: IdentificationResult, provenance: dict) -> dict:
    """The ``params.json`` document (docs/architecture.md contract) of a successful
    identification."""
    if result.theta is None:
        raise PhysidError(result.message)
    model, base, ls = result.model, result.base, result.least_squares
    document = {"format": FORMAT, **params_document(model, result.theta)}
    document["status"] = str(result.status)
    document["message"] = result.message
    document["findings"] = as_dicts(result.findings)
    document["suspect_reasons"] = list(result.suspect)
    if result.drive_gains is not None:  # N m/A (N/A), estimated with the known payload
        document["extra"]["drive_gains"] = result.drive_gains
    if result.friction_shapes is not None:  # how the nonlinear friction shapes were found
        document["extra"]["friction_shapes"] = result.friction_shapes.as_dict()
    if result.preprocessing is not None:
        document["preprocessing"] = result.preprocessing.as_dict()
        # the choices the training data made (blocked cross-validation), with every score
        selection = {c.what: c.as_dict() for c in result.choices.scored}
        document["preprocessing"]["selection"] = selection
    if result.joint_prior is not None:
        document["joint_prior"] = result.joint_prior.as_dict(model)
    if result.theta_covariance is not None:
        annotate_document(
            document,
            model,
            result.theta,
            result.prior,
            result.theta_std,
            result.sources,
            {joint: body.as_dict() for joint, body in result.bodies.items()},
            shape_std=shapes.std_by_name if (shapes := result.friction_shapes) else None,
        )
        document["moving_mass"] = {
            "value": result.moving_mass(),
            "std": result.moving_mass_std,
            "prior": model.layout.total_mass(result.prior),
        }
    if result.gravity is not None:
        document["extra"]["gravity_estimate"] = {
            "tilt_deg_about_x_then_y": np.degrees(result.gravity.tilt_rad).tolist(),
            "tilt_std_deg": np.degrees(result.gravity.tilt_std_rad).tolist(),
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
        # Newey-West (valid when the residuals are serially correlated; eq. 6 when white), with
        # the friction-model term (the deadband halved/doubled) added in quadrature.
        "std": result.base_std_robust,
        "std_friction_model": result.base_std_friction_model,
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
        "status": str(result.status),
        "train": {
            **result.train.as_dict(joints),
            "residual_correlation_time_s": residual_correlation_time(
                list(result.train_fits), joints
            ),
        },
        "validation": None
        if result.validation is None
        else {
            **result.validation.as_dict(joints),
            "urdf_relative_error": result.validation_urdf,  # the URDF's own model, same samples
        },
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
            "method": result.consistent.method,
            "solve_time_s": result.consistent.solve_time_s,
            "margin": result.consistent.margin,
        },
        "preprocessing": result.train_observations.info,
        "cross_validation": None if result.prior_check is None else result.prior_check.as_dict(),
        "torque_delay": None if result.delay is None else result.delay.as_dict(),
        "jackknife": None if result.jackknife is None else result.jackknife.as_dict(),
        "warnings": list(result.warnings),
    }


def write_identification(
    result: IdentificationResult,
    out_dir: str | Path,
    provenance: dict,
    *,
    margin: float = 0.0,
    total_mass_prior: float | None = None,
    overwrite: bool | None = None,
    document: dict | None = None,
) -> Path:
    """Write params.json and report.html into ``out_dir`` (all or nothing).

    ``total_mass_prior`` is the relative standard deviation of the total-mass prior when the
    estimation used one (``prior_total_mass_std_relative``): the report must say that the
    moving mass was pulled toward the URDF's, and how hard. The report carries its charts' data
    and plotly.js, so it can be moved or mailed alone. Files of an earlier run that this one
    does not rewrite are removed (``overwrite``: see :func:`physid.files.io.atomic_output_dir`).
    """
    if document is None:  # else the params_json document of this result, made earlier
        document = params_json(result, provenance)
    figures, captions = report_charts(result, margin)
    text = report_html(result, document, figures, captions, total_mass_prior=total_mass_prior)
    with atomic_output_dir(out_dir, overwrite=overwrite) as staging:
        (staging / "params.json").write_text(to_json_text(document), encoding="utf-8")
        (staging / "report.html").write_text(text, encoding="utf-8")
    return Path(out_dir)


# --- units and the friction part of the prediction ----------------------------------------------


def _joint_units(model: RobotModel, joint: str) -> dict[str, str]:
    """Units of a joint's quantities: revolute joints act with torques about an axis, prismatic
    ones with forces along it, and every table and axis must say which."""
    if is_revolute(model, joint):
        return {
            "torque": "N m",
            "speed": "rad/s",
            "viscous": "N m s/rad",
            "armature": "kg m^2",
        }
    return {"torque": "N", "speed": "m/s", "viscous": "N s/m", "armature": "kg"}


def _header_unit(model: RobotModel, joints: tuple[str, ...], key: str) -> str:
    """One unit for a column over several joints, or both when revolute and prismatic mix."""
    return " or ".join(dict.fromkeys(_joint_units(model, j)[key] for j in joints))


_INERTIAL_UNITS = {"m": "kg", "mx": "kg m", "my": "kg m", "mz": "kg m"}
_MOTOR_UNITS = {"Iam": "kg m^2", "fvm": "N m s/rad", "fcm": "N m"}
_TERM_UNITS = {
    "fv": "viscous",
    "fc": "torque",
    "fs": "torque",
    "phi1": "torque",
    "offset": "torque",
    "Ia": "armature",
}


def _parameter_unit(model: RobotModel, name: str) -> str:
    """Unit of a standard parameter from its name (``joint_2.Izz``, ``joint_3.fv``, ...)."""
    owner, _, term = name.partition(" ")[0].rpartition(".")
    if term in _MOTOR_UNITS:
        return _MOTOR_UNITS[term]
    if term in _TERM_UNITS and owner in model.joint_names:
        return _joint_units(model, owner)[_TERM_UNITS[term]]
    return _INERTIAL_UNITS.get(term, "kg m^2")


def _recordings(result: IdentificationResult) -> list[tuple[str, int, RecordingFit]]:
    """``(set, number from 1, fit)`` of every recording with a prediction."""
    return [
        (kind, k + 1, fit)
        for kind, fits in (("train", result.train_fits), ("validation", result.validation_fits))
        for k, fit in enumerate(fits or ())
    ]


_SET_LABEL = {"train": "training", "validation": "validation"}


def _file_name(path: str) -> str:
    """A recording's or URDF's file name without its folders: a report is mailed around, and
    the folders of the machine it was made on are nobody else's business (nor valid there)."""
    return Path(path).name if path else ""


def _recording_label(kind: str, number: int, fit: RecordingFit) -> str:
    name = _file_name(fit.name)
    return f"{_SET_LABEL[kind]} {number}: {name}" if name else f"{_SET_LABEL[kind]} {number}"


# --- figures -------------------------------------------------------------------------------------


def report_charts(
    result: IdentificationResult, margin: float
) -> tuple[dict[str, ReportChart], dict[str, str]]:
    """The report's charts by name, and their captions: one torque chart per recording, the
    friction per joint, the residual autocorrelation and the bodies' consistency."""
    model, theta = result.model, result.theta
    joints = model.joint_names
    units = tuple(_joint_units(model, j)["torque"] for j in joints)
    made: dict[str, ReportChart] = {}
    captions: dict[str, str] = {}
    for kind, number, fit in _recordings(result):
        label = _recording_label(kind, number, fit)
        duration = float(fit.t[-1]) if len(fit.t) else 0.0
        title = (
            f"{label[0].upper()}{label[1:]} ({len(fit.t)} samples, {duration:.4g} s; "
            f"relative error {100 * fit.metrics.relative_error:.2f} %)"
        )
        name = f"torque_{kind}_{number}"
        made[name] = charts.torque_chart(
            fit.t, fit.tau, fit.tau_predicted, joints, title, units, MISSED_JOINT_ERROR
        )
        captions[name] = f"Measured (raw) vs predicted torque, {label}"
    layout = model.layout
    has_friction = any(
        term in ("fv", "fc", "fs", "phi1", "offset") for j in joints for term in layout.terms_of(j)
    )
    groups = [
        (_SET_LABEL[kind], _thinned(friction_residuals(result, fits)))
        for kind, fits in (("train", result.train_fits), ("validation", result.validation_fits))
        if fits
    ]
    if has_friction and groups:
        top = np.max([np.max(np.abs(v), axis=0, initial=0.0) for _, (v, _) in groups], axis=0)
        made["friction"] = charts.friction_chart(
            [velocity for _, (velocity, _) in groups],
            [residual for _, (_, residual) in groups],
            [label for label, _ in groups],
            joints,
            friction_curves(model, theta, top),
            friction_descriptions(model, theta, frozenset(parameters_at_bound(result))),
            tuple(
                (_joint_units(model, j)["speed"], _joint_units(model, j)["torque"]) for j in joints
            ),
        )
        captions["friction"] = (
            "Friction per joint: measured torque minus the predicted rigid-body torque against "
            "the velocity estimate (subsampled dots), and the identified friction model (line)"
        )
    made["autocorrelation"] = charts.autocorrelation_chart(
        result.autocorrelation, result.train_observations.n_samples, joints
    )
    captions["autocorrelation"] = (
        "Residual autocorrelation of the fitted (filtered, decimated) training data"
    )
    bodies = layout.body_joints
    reports = result.consistent.bodies
    made["consistency"] = charts.consistency_chart(
        bodies,
        np.array([reports[b].min_eigenvalue for b in bodies]),
        np.array([theta[layout.body_slice(b)][0] for b in bodies]),
        margin,
    )
    captions["consistency"] = "Physical consistency of every body"
    return made, captions


def _thinned(arrays: tuple[np.ndarray, ...], max_rows: int = 20_000) -> tuple[np.ndarray, ...]:
    """Evenly spread rows of stacked recordings: a scatter plot draws a few thousand dots, not
    hours of samples."""
    rows = charts.stride(len(arrays[0]), max_rows)
    return tuple(a[rows] for a in arrays)


# --- HTML ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cell:
    """A table cell of ready-made HTML (escaped by its maker) with an optional CSS class."""

    html: str
    css: str = ""


def _td(cell: object) -> str:
    if isinstance(cell, _Cell):
        css = f' class="{cell.css}"' if cell.css else ""
        return f"<td{css}>{cell.html}</td>"
    return f"<td>{html.escape(str(cell))}</td>"


def _table(header: list[str], rows: list[list], table_id: str = "") -> str:
    """An HTML table; cells are text (escaped here) or :class:`_Cell` (HTML as given)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(_td(c) for c in row) + "</tr>" for row in rows)
    identifier = f' id="{table_id}"' if table_id else ""
    return f"<table{identifier}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _fmt(value: float | None, digits: int = 4) -> str:
    return "n/a" if value is None or not np.isfinite(value) else f"{value:.{digits}g}"


def percent(value: float | None) -> str:
    """A ratio as the percentage the report tables show (``0.0512`` -> ``5.12``)."""
    return "n/a" if value is None or not np.isfinite(value) else f"{100 * value:.2f}"


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


def _estimate(
    value: float, std: float | None, prior: float | None, source: str, *, at_bound: bool = False
) -> _Cell:
    """``value ± std`` with the URDF prior beside it (to 6 significant digits: the URDF's own
    number, not a rounding of it), styled by where the value comes from; ``at_bound``: held at
    0 by the consistent fit's constraint (flagged: its std does not describe it)."""
    text = html.escape(_fmt(value))
    if at_bound:
        text = (
            '0 <span class="bound" title="held at the bound of the consistent fit">at bound '
            "&ge; 0</span>"
        )
    if std is not None and np.isfinite(std):
        text += f' <span class="std">± {html.escape(_fmt(std, 2))}</span>'
    if prior is not None and np.isfinite(prior):
        text += f' <span class="urdf">(URDF {html.escape(_fmt(prior, 6))})</span>'
    return _Cell(text, f"src-{source}" if source in SOURCES else "")


def _flag(source: str) -> _Cell:
    if source not in SOURCES:
        return _Cell("n/a")
    return _Cell(f'<span class="flag flag-{source}">{source}</span>', f"src-{source}")


_INERTIA_ENTRIES = (("Ixx", 0, 0), ("Iyy", 1, 1), ("Izz", 2, 2), ("Ixy", 0, 1), ("Ixz", 0, 2))
_INERTIA_ENTRIES += (("Iyz", 1, 2),)


def _prior_of(result: IdentificationResult) -> np.ndarray:
    return result.prior if result.prior is not None else result.model.prior_parameters()


def _body_tables(result: IdentificationResult) -> str:
    """Mass and centre of mass, then inertia about the centre of mass, of every body: estimate,
    standard deviation, URDF prior and source of each reported quantity."""
    model, theta = result.model, result.theta
    layout = model.layout
    prior = _prior_of(result)
    mass_rows, inertia_rows = [], []
    for joint in layout.body_joints:
        block = layout.body_slice(joint)
        mass, com, inertia = mass_com_inertia_from_pi(theta[block])
        mass0, com0, inertia0 = mass_com_inertia_from_pi(prior[block])
        body = result.bodies.get(joint) if result.bodies else None
        if body is None:
            mass_std, com_std, inertia_std = None, np.full(3, np.nan), np.full((3, 3), np.nan)
            sources = ("", "", "")
        else:
            mass_std, com_std, inertia_std = body.mass, body.com, body.inertia
            sources = (body.mass_source, body.com_source, body.inertia_source)
        mass_rows.append(
            [
                joint,
                _estimate(mass, mass_std, mass0, sources[0]),
                _flag(sources[0]),
                *(_estimate(com[a], com_std[a], com0[a], sources[1]) for a in range(3)),
                _flag(sources[1]),
            ]
        )
        inertia_rows.append(
            [
                joint,
                *(
                    _estimate(inertia[a, b], inertia_std[a, b], inertia0[a, b], sources[2])
                    for _, a, b in _INERTIA_ENTRIES
                ),
                _flag(sources[2]),
            ]
        )
    mass_header = ["body (joint)", "mass [kg]", "source (mass)"]
    mass_header += [f"CoM {axis} [m]" for axis in "xyz"] + ["source (CoM)"]
    inertia_header = ["body (joint)", *(f"{name} [kg m^2]" for name, _, _ in _INERTIA_ENTRIES)]
    inertia_header.append("source (inertia)")
    return (
        "<h3>Mass and centre of mass (joint frame)</h3>"
        + _table(mass_header, mass_rows, "bodies-mass")
        + "<h3>Inertia about the centre of mass (joint frame axes)</h3>"
        + _table(inertia_header, inertia_rows, "bodies-inertia")
    )


def _consistency_table(result: IdentificationResult) -> str:
    rows = []
    for joint in result.model.layout.body_joints:
        report = result.consistent.bodies[joint]
        rows.append(
            [
                joint,
                ", ".join(f"{m:.4g}" for m in report.principal_moments),
                _fmt(report.min_eigenvalue, 3),
            ]
        )
    header = ["body (joint)", "principal moments [kg m^2]", "min eigenvalue of J [kg m^2]"]
    return _table(header, rows, "consistency")


def _std_and_source(result: IdentificationResult, index: int) -> tuple[float | None, str]:
    std = result.theta_std
    source = result.sources[index] if index < len(result.sources or ()) else ""
    return (None if std is None else float(std[index])), source


_TERM_COLUMNS = (
    ("fv", "viscous fv", "viscous"),
    ("fc", "Coulomb fc", "torque"),
    ("fs", "static fs", "torque"),
    ("phi1", "sigmoid phi1", "torque"),
    ("offset", "offset", "torque"),
    ("Ia", "armature Ia", "armature"),
)


def _joint_term_tables(result: IdentificationResult) -> str:
    """Friction, offset and armature per joint (and the coupled-motor terms): estimate, std,
    URDF prior and source; the nonlinear friction shapes, if any."""
    model, theta = result.model, result.theta
    layout, joints = model.layout, model.joint_names
    prior = _prior_of(result)
    modelled = {term for joint in joints for term in layout.terms_of(joint)}
    columns = [c for c in _TERM_COLUMNS if c[0] in modelled]
    bound = parameters_at_bound(result)
    rows = []
    for joint in joints:
        row: list = [joint, "revolute" if is_revolute(model, joint) else "prismatic"]
        for term, _, _ in columns:
            index = layout.joint_term_index(joint, term)
            if index is None:
                row.append("—")
                continue
            std, source = _std_and_source(result, index)
            row.append(_estimate(theta[index], std, prior[index], source, at_bound=index in bound))
        rows.append(row)
    header = ["joint", "type"]
    header += [f"{label} [{_header_unit(model, joints, unit)}]" for _, label, unit in columns]
    text = _table(header, rows, "joint-terms") if columns else "<p>No joint terms modelled.</p>"
    shapes = result.friction_shapes
    if shapes is not None:
        shape_rows = [
            [name, _fmt(value), _fmt(std)]
            for name, value, std in zip(shapes.names, shapes.values, shapes.std, strict=True)
        ]
        text += (
            "<h3>Friction shapes (sigmoid phi2 [s/rad], phi3 [rad/s]; Stribeck vs [rad/s])</h3>"
            f"<p class=note>{html.escape(shapes.note())}</p>"
            + _table(["parameter", "estimate", "std"], shape_rows, "friction-shapes")
        )
    if layout.coupled_motor_names:
        motor_rows = []
        for motor in layout.coupled_motor_names:
            row = [motor]
            for term in _MOTOR_UNITS:
                index = layout.index(f"{motor}.{term}")
                std, source = _std_and_source(result, index)
                row.append(
                    _estimate(theta[index], std, prior[index], source, at_bound=index in bound)
                )
            motor_rows.append(row)
        motor_header = ["motor", *(f"{t} [{unit}]" for t, unit in _MOTOR_UNITS.items())]
        text += "<h3>Coupled-motor terms</h3>" + _table(motor_header, motor_rows, "motor-terms")
    return text + _drive_gain_table(result)


def _drive_gain_table(result: IdentificationResult) -> str:
    """The drive gains identified with the known payload (``drive_gains: identify``)."""
    if not result.drive_gains:
        return ""
    rows = []
    for name, gain in result.drive_gains.items():
        unit = (
            "N m"
            if name not in result.model.joint_names or is_revolute(result.model, name)
            else "N"
        )
        rows.append(
            [
                name,
                _Cell(
                    f"{html.escape(_fmt(gain['value'], 6))} "
                    f'<span class="std">± {html.escape(_fmt(gain["std"], 2))}</span>'
                ),
                f"{unit} per unit of current",
                f"{100 * gain.get('payload_share', float('nan')):.2g} %",
            ]
        )
    return (
        "<h3>Drive gains (identified with the known payload of the loaded recordings)</h3>"
        + _table(
            ["joint", "gain ± std", "unit", "payload's share of the joint torque"],
            rows,
            "drive-gains",
        )
    )


def _error_tables(result: IdentificationResult) -> str:
    """Per-joint relative error [%] and RMSE of every recording and of each set stacked."""
    model = result.model
    joints = model.joint_names
    rows = []  # (set, recording, metrics)
    for kind, metrics, fits in (
        ("train", result.train, result.train_fits),
        ("validation", result.validation, result.validation_fits),
    ):
        for k, fit in enumerate(fits or ()):
            name = _file_name(fit.name)
            rows.append((kind, f"{k + 1}: {name}" if name else str(k + 1), fit.metrics))
        if metrics is not None:
            rows.append((kind, "all recordings stacked", metrics))
    relative_rows = [
        [
            _SET_LABEL[kind],
            name,
            str(m.n_samples),
            *(percent(e) for e in m.relative_error_per_joint),
            _Cell(f"<b>{percent(m.relative_error)}</b>"),
        ]
        for kind, name, m in rows
    ]
    rmse_rows = [
        [_SET_LABEL[kind], name, str(m.n_samples), *(_fmt(e) for e in m.rmse)]
        for kind, name, m in rows
    ]
    head = ["set", "recording", "samples [-]"]
    units = [_joint_units(model, j)["torque"] for j in joints]
    return (
        "<h3>Relative error ||tau - tau_hat|| / ||tau|| per joint [%]</h3>"
        + _table(
            [*head, *(f"{j} [%]" for j in joints), "all joints [%]"],
            relative_rows,
            "relative-error",
        )
        + "<h3>RMSE per joint</h3>"
        + _table(
            [*head, *(f"{j} [{u}]" for j, u in zip(joints, units, strict=True))],
            rmse_rows,
            "rmse",
        )
    )


def _status_box(result: IdentificationResult) -> str:
    """The verdict first: the status, its one-line message, and the findings that should change
    what the reader does (suspect and caution), each with its code."""
    kind = {Status.OK: "ok", Status.SUSPECT: "suspect"}.get(result.status, "failed")
    shown = of_severity(result.findings, Severity.CAUTION)
    items = "".join(
        f"<li><b>{html.escape(f.severity)}</b> <code>{html.escape(f.code)}</code> "
        f"{html.escape(f.message)}</li>"
        for f in shown
    )
    return (
        f'<div class="status {kind}"><b>Status: {html.escape(str(result.status))}</b> — '
        f"{html.escape(result.message)}" + (f"<ul>{items}</ul>" if items else "") + "</div>"
    )


def _findings_html(result: IdentificationResult) -> str:
    """Every finding, grouped by severity (most severe first), with its code."""
    groups = []
    for severity in reversed(list(Severity)):
        found = [f for f in result.findings if f.severity is severity]
        if not found:
            continue
        items = "".join(
            f"<li><code>{html.escape(f.code)}</code> {html.escape(f.message)}</li>" for f in found
        )
        groups.append(f"<h3>{html.escape(str(severity))}</h3><ul>{items}</ul>")
    return "".join(groups) or "<p>none</p>"


def _moving_mass_text(result: IdentificationResult, total_mass_prior: float | None) -> str:
    prior_mass = result.model.layout.total_mass(_prior_of(result))
    text = f"{_fmt(result.moving_mass())} ± {_fmt(result.moving_mass_std, 2)} kg"
    text += f" (URDF prior {_fmt(prior_mass)} kg)"
    if total_mass_prior is not None:
        text += f"; {_total_mass_prior_text(prior_mass, total_mass_prior)}"
    return text


def _total_mass_prior_text(prior_mass: float, relative_std: float) -> str:
    return (
        f"total-mass prior used: {_fmt(prior_mass)} kg ± {100 * relative_std:.3g} % "
        f"(std {_fmt(relative_std * prior_mass, 3)} kg)"
    )


def _chart_html(name: str, chart: ReportChart, caption: str) -> str:
    """A chart's place in the page: its panels' elements, which the page's script fills."""
    cells = "".join(
        f'<div class="chart" id="{charts.panel_id(name, k)}"></div>'
        for k in range(len(chart.panels))
    )
    linked = " data-linked-x" if chart.linked_x else ""
    return (
        f'<figure id="fig-{html.escape(name)}"><div class="chart-title">'
        f"{html.escape(chart.title)}</div>"
        f'<div class="panels cols{chart.columns}"{linked}>{cells}</div>'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


_CSS = """body{font-family:sans-serif;max-width:1200px;margin:2em auto;color:#222}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eee}figure{margin:1.5em 0}
.chart-title{font-weight:bold;margin:.4em 0}.panels{display:grid;gap:4px}
.panels.cols1{grid-template-columns:1fr}.panels.cols2{grid-template-columns:1fr 1fr}
.status{padding:.8em 1.2em;border-radius:4px;margin:1em 0;font-size:15px}
.status.ok{background:#e6f4e6;border:2px solid #3a3}
.status.suspect{background:#fff3d6;border:2px solid #e90}
.status.failed{background:#fde4e4;border:2px solid #c33}
.std{color:#555}.urdf{color:#888;font-size:11px}
.src-prior{color:#888;font-style:italic}.src-regrouped{background:#f3f6ff}
.flag{font-size:11px;padding:0 4px;border-radius:3px;border:1px solid #bbb}
.flag-data{background:#e6f4e6}.flag-regrouped{background:#dde6ff}.flag-prior{background:#eee}
.note{color:#555;font-size:13px}
.bound{font-size:11px;padding:0 4px;border-radius:3px;background:#ffe4b3;border:1px solid #e90}"""


_GLOSSARY = """<h2 id="glossary">Glossary</h2>
<dl class=note>
<dt>status, findings</dt><dd>The status is one code (ok, suspect, worse_than_urdf, ...); each
finding has a stable code (ID301, D109, ...) that <code>physid codes CODE</code> explains, with
what to do. Severities: info (context, a choice made), caution (read that part differently),
suspect (the data look wrong), error.</dd>
<dt>blocked 4-fold cross-validation, held-out folds</dt><dd>Each training recording cut into 4
contiguous blocks of time (quarters of the period when it repeats its motion); a candidate is
fitted on 3 and predicts the 4th, four times; its score is the relative torque error on the
blocks it did not see.</dd>
<dt>conservative choice, the folds' spread</dt><dd>The candidate kept unless another scores
better by more than the scatter of the paired per-fold differences: paper C's cut-off (10 x the
excitation bandwidth), no deadband, no delay, the URDF's gravity.</dd>
<dt>relative error</dt><dd>||tau - tau_hat|| / ||tau|| over all joints, on the raw measured
torque at every recorded sample.</dd>
<dt>base parameters (identifiable / essential)</dt><dd>"58 (58 / 22)": 58 combinations of
inertial and joint parameters the torques can determine at all, 58 of them excited by this
motion, 22 essential (what is left after dropping the worst-determined ones).</dd>
<dt>(R)</dt><dd>A regrouped base parameter: the name is its leading term; the last column gives
the combination the torques see.</dd>
<dt>std (eq. 6), std (Newey-West)</dt><dd>Paper C's eq. 6 assumes white residuals and is
optimistic when they are serially correlated; Newey-West's stays valid then, and is what
params.json reports as std.</dd>
<dt>source: data, regrouped, prior</dt><dd>Whether the data determine a quantity on their own,
only in a combination, or not: then the URDF's value and its prior decide it.</dd>
</dl>"""


def _summary_rows(
    result: IdentificationResult, fit: dict, document: dict, total_mass_prior: float | None
) -> list[list[str]]:
    rows = [
        ["status", str(result.status)],
        ["physically consistent", str(document["physically_consistent"])],
        [
            "base parameters (identifiable / essential) [-]",
            f"{fit['n_base_parameters']} ({fit['n_identifiable']} / {fit['n_essential']})",
        ],
        ["training relative error, raw samples [%]", percent(result.train.relative_error)],
        [
            "validation relative error, raw samples [%]",
            "n/a" if result.validation is None else percent(result.validation.relative_error),
        ],
        ["condition number (weighted base regressor) [-]", _fmt(fit["condition_number"])],
        ["total moving mass ± std [kg]", _moving_mass_text(result, total_mass_prior)],
    ]
    if result.gravity is not None:
        tilt = np.degrees(result.gravity.tilt_rad)
        rows.append(
            ["estimated base tilt (about x, then y) [deg]", f"{tilt[0]:.3f}, {tilt[1]:.3f}"]
        )
    return rows


def _preprocessing_html(result: IdentificationResult) -> str:
    if result.preprocessing is None:
        return f"<p>{html.escape(_preprocessing_text(result.train_observations.info))}</p>"
    preprocessing = html.escape(result.preprocessing.summary())
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in result.preprocessing.all_notes)
    return f"<p>{preprocessing}</p>" + (f"<ul>{notes}</ul>" if notes else "")


def _base_rows(result: IdentificationResult, base: dict) -> tuple[list[str], list[list[str]]]:
    """The base-parameter table: header and rows."""
    model = result.model
    layout_names = model.layout.names
    rows = [
        [
            short,
            _parameter_unit(model, layout_names[index]),
            _fmt(value),
            _fmt(std6),
            _fmt(rel, 3),
            _fmt(std),
            "yes" if ok else "NO (prior)",
            name,
        ]
        for short, index, value, std6, rel, std, ok, name in zip(
            base["short_names"],
            result.base.independent,
            base["values"],
            base["std_eq6"],
            base["relative_std_percent"],
            base["std"],
            base["identifiable"],
            base["names"],
            strict=True,
        )
    ]
    header = [
        "parameter",
        "unit",
        "value [unit]",
        "std (eq. 6) [unit]",
        "rel. std [%]",
        "std (Newey-West) [unit]",
        "identifiable",
        "combination",
    ]
    return header, rows


def report_html(
    result: IdentificationResult,
    document: dict,
    figures: dict[str, ReportChart],
    captions: dict[str, str] | None = None,
    *,
    total_mass_prior: float | None = None,
) -> str:
    """The self-contained report: the charts' data and plotly.js are in the page, which the
    browser draws, so the file can be moved or mailed without the folder it was written into.

    ``document`` is :func:`params_json`'s (provenance, base and essential parameters, fit
    summary); ``figures`` the charts by name (:func:`report_charts`); ``total_mass_prior`` the
    relative standard deviation of the total-mass prior when the estimation used one.
    """
    captions = captions or {}
    model = result.model
    method = html.escape(result.least_squares.method.upper())
    provenance = document["provenance"]

    def figure(name: str) -> str:
        return _chart_html(name, figures[name], captions.get(name, name)) if name in figures else ""

    summary_rows = _summary_rows(result, document["fit"], document, total_mass_prior)
    preprocessing_html = _preprocessing_html(result)
    findings_html = _findings_html(result)
    prior_mass = model.layout.total_mass(_prior_of(result))
    mass_prior_html = (
        f"<p><b>{html.escape(_total_mass_prior_text(prior_mass, total_mass_prior))}</b>: the "
        "moving mass was pulled toward the URDF total with this weight.</p>"
        if total_mass_prior is not None
        else "<p class=note>No total-mass prior was used.</p>"
    )
    torque_figures = "".join(figure(name) for name in figures if name.startswith("torque_"))
    if not torque_figures:
        torque_figures = "<p>No per-recording prediction is available.</p>"
    base_header, base_rows = _base_rows(result, document["base_parameters"])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>physid identification report</title>
<style>{_CSS}</style></head><body>
<h1>physid identification report</h1>
<p>physid {html.escape(__version__)}, created {html.escape(str(provenance.get("created_utc")))}.
URDF: {html.escape(_file_name(str(provenance.get("urdf", ""))))}</p>
{_status_box(result)}
<h2>Summary</h2>{_table(["quantity", "value"], summary_rows, "summary")}
<h2>Preprocessing</h2>{preprocessing_html}
<h2>Findings</h2><div id="findings">{findings_html}
<p class=note>Each code is explained, with what to do, by <code>physid codes CODE</code> and in
the documentation's findings page.</p></div>
<h2>Torque prediction</h2>
<p class=note>Errors of the raw measured torque at every recorded sample (not filtered, not
decimated); the charts draw each curve through its min/max envelope (zoom with the mouse: the
time axes of one recording zoom together; double-click resets).</p>
{_error_tables(result)}
{torque_figures}
<h2>Friction</h2>
{figure("friction") or "<p>No friction terms modelled.</p>"}
<h2>Bodies</h2>
<p class=note>Estimate ± standard deviation (Laplace approximation of the consistent estimate),
URDF prior in brackets. Source: <span class="flag flag-data">data</span> identified on its own,
<span class="flag flag-regrouped">regrouped</span> only a combination with other parameters is
identified, <span class="flag flag-prior">prior</span> the data do not determine it: the URDF's
value and its prior std decide it, and it moves with the parameters the data do decide
(consistency and regrouping tie a body's mass, centre of mass and inertia together): read it as
undetermined; one that moved beyond 3 prior std is marked regrouped and named in the warnings
(grey italics).</p>
<p>Total moving mass: {html.escape(_moving_mass_text(result, None))}</p>
{mass_prior_html}
{_body_tables(result)}
<h3>Physical consistency</h3>
{_consistency_table(result)}
{figure("consistency")}
<h2>Joint terms</h2>
<p class=note>tau_f = fv*dq + fc*sign(dq) + offset, armature Ia*ddq (a sigmoid joint:
phi1/(1+exp(-phi2 (dq+phi3))) - phi1/(1+exp(-phi2 phi3)) in place of fc*sign(dq); a Stribeck
joint: sign(dq) (fc + (fs - fc) exp(-(dq/vs)^2))); estimate ± std, URDF prior in brackets (URDF
damping, friction, armature; offsets are 0).</p>
{_joint_term_tables(result)}
<h2>Base parameters</h2>
<p>Values are the base parameters of the physically consistent standard parameters. Standard
deviations are those of the {method} estimate: paper C eq. 6, valid only if the residuals are
white (see the autocorrelation figure), and Newey-West's, valid when they are serially
correlated (params.json "std").</p>
{_table(base_header, base_rows, "base-parameters")}
{figure("autocorrelation")}
<h2>Essential parameters</h2><p>{
        html.escape(", ".join(document["essential_parameters"]["names"]))
    }</p>
{_GLOSSARY}
<script>{charts.plotly_js()}</script>
<script>const PHYSID_CHARTS = {charts.specs_json(figures)};{charts.DRAW_SCRIPT}</script>
</body></html>
"""
