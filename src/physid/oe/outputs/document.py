"""``result.json`` of a ``physid oe`` run and what the fit says about the result, as findings:
the noise model's misfit (reduced chi-square), joint terms their prior decides that move with a
body, and each estimated body's mass against the robot file's."""

from __future__ import annotations

import numpy as np

from physid.findings import Finding, as_dicts
from physid.oe.codes import (
    CONFOUNDED_JOINT_TERM,
    MASS_CHANGE,
    NOISE_MISFIT,
    SOFT_FEET,
    UNMODELLED_BASE_FORCE,
)
from physid.oe.outputs.result import OEResult

# reduced chi-square above which the fit is reported as not matching the noise model: the
# 99.9 % quantile of chi2/dof is below 1.1 for the >= 1,000 residuals of any real recording,
# so 3 flags a noise model off by sqrt(3) = 1.7x or worse, not bad luck
CHI2_WARNING = 3.0


def result_findings(result: OEResult, file_masses: dict[str, float]) -> list[Finding]:
    """What the fit says: the misfit of the noise model, confounded joint terms, and each
    estimated body's mass beyond the robot file's (a legged team's payload)."""
    findings = []
    chi2 = result.chi2_reduced
    if chi2 > CHI2_WARNING:
        findings.append(
            NOISE_MISFIT(
                f"reduced chi-square {chi2:.3g}: residuals about {np.sqrt(chi2):.2g}x the standard "
                "deviations given; the reported std are widened by "
                f"x{np.sqrt(result.std_inflation):.3g} in all (with the residuals' serial "
                "correlation; result.json std_inflation is the variance factor), but the "
                "estimate may be biased",
                numbers={
                    "chi2_reduced": chi2,
                    "threshold": CHI2_WARNING,
                    "std_inflation": result.std_inflation,
                },
            )
        )
    force = result.base_force
    if force is not None and force.significant and force.mass_bound > 0:
        findings.append(
            UNMODELLED_BASE_FORCE(
                f"the base's process noise holds it up with {force.force[2]:+.3g} N on average "
                f"(standard error {force.standard_error:.2g} N): the base mass may be off by "
                f"about {force.mass_bound:.3g} kg, added to its std",
                numbers={
                    "force_z_N": force.force[2],
                    "standard_error_N": force.standard_error,
                    "mass_bound_kg": force.mass_bound,
                    "threshold_standard_errors": 3.0,
                },
            )
        )
    soft = result.contact_compliance
    if soft and soft["estimated"]:
        findings.append(
            SOFT_FEET(
                f"soft feet estimated: compliance {soft['compliance']:.3g} 1/kg, floor spring "
                f"time constant {soft['time_constant']:.3g} s: a foot sinks "
                f"{1e3 * soft['sag_m_per_N']:.3g} mm per N of load",
                numbers={
                    "compliance_per_kg": soft["compliance"],
                    "time_constant_s": soft["time_constant"],
                    "sag_mm_per_N": 1e3 * soft["sag_m_per_N"],
                },
            )
        )
    for joint, terms in result.joints.items():
        for kind, bodies in terms.get("confounded_with", {}).items():
            findings.append(
                CONFOUNDED_JOINT_TERM(
                    f"{joint} {kind} is decided by its prior ({terms[kind]:.3g}, the data do not "
                    f"tell it) and moves with the estimated {', '.join(bodies)} (posterior "
                    "correlation above 0.5): that prior decides them too",
                    numbers={kind: terms[kind], "correlation_threshold": 0.5},
                    names=(joint, kind, *bodies),
                )
            )
    for body, values in result.body_summary().items():
        if body in file_masses and np.isfinite(values["std"]["mass"]):
            mass, std, file = values["mass"], values["std"]["mass"], file_masses[body]
            findings.append(
                MASS_CHANGE(
                    f"{body}: {mass:.4g} +- {std:.2g} kg against the robot file's {file:.4g} kg: "
                    f"{mass - file:+.4g} +- {std:.2g} kg carried beyond the file's body",
                    numbers={
                        "mass_kg": mass,
                        "mass_std_kg": std,
                        "file_mass_kg": file,
                        "change_kg": mass - file,
                    },
                    names=(body,),
                )
            )
    return findings


def result_document(
    result: OEResult,
    provenance: dict,
    ignored: tuple[str, ...],
    soft: dict,
    bias_rounds,  # noqa: ANN001 - physid.oe.solving.imu_bias.BiasRounds | None
    findings: list[Finding],
) -> dict:
    """``result.json``: the solve (:meth:`OEResult.to_json_dict`), its inputs, the soft-contact
    choices, the accelerometer-bias rounds and every finding."""
    payload = result.to_json_dict()
    payload["inputs"] = provenance | {"ignored_columns": list(ignored)}
    payload["soft_contacts"] = soft
    if bias_rounds is not None:
        bias_std = result.accelerometer_bias_std  # the Laplace std, inflated as theta's
        payload["accelerometer_bias"] = {
            "estimate": list(bias_rounds.bias_history[-1]),
            "std": None if bias_std is None else [float(v) for v in bias_std],
            "history": [list(b) for b in bias_rounds.bias_history],
            "converged": bias_rounds.converged,
            "iterations_all_rounds": bias_rounds.iterations,
        }
    payload["findings"] = as_dicts(findings)
    return payload


def provenance(inputs, problem, run: dict) -> dict:  # noqa: ANN001
    """What the run used, for ``result.json`` ``inputs`` and ``params.json`` ``provenance``
    (``inputs``: :class:`physid.oe.data.inputs.OEInputs`, ``problem`` the OEProblem, ``run``:
    urdf, data, floating_base, chart, rollout and contact_radius as given or chosen)."""
    recording, config = inputs.recording, inputs.config
    joints, estimate = config.joints.joints, config.joints.estimate
    return {
        "urdf": str(run["urdf"]),
        "data": str(run["data"]),
        "dt": recording.dt,
        "regridded_from_rows": recording.regridded_from,
        "floating_base": bool(run["floating_base"]),
        "contact_frames": list(recording.contact_frames),
        "chart": str(run["chart"]),
        "rollout": str(run["rollout"]),
        "noise": problem.noise.__dict__,
        "contact_damping": config.contact_damping,
        "contact_radius": run["contact_radius"],
        "imu_frame": config.imu["frame"],
        "joints": None
        if joints is None
        else {
            "armature": joints.armature.tolist(),
            "damping": joints.viscous.tolist(),
            "friction": joints.coulomb.tolist(),
            "coulomb_speed": np.asarray(joints.coulomb_speed, dtype=float).tolist(),
            "coulomb_speed_widest": None
            if joints.coulomb_speed_nodes is None
            else np.max(joints.coulomb_speed_nodes, axis=0).tolist(),
            "estimated": [] if estimate is None else list(estimate.kinds),
            "prior_std": None if estimate is None else estimate.prior_log_std,
        },
        "accelerometer": recording.measurements.accelerometer is not None,
    }
