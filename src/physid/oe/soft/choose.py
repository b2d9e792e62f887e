"""Soft-contact settings chosen from what the user gives: the feet's radius
and the process-noise floor near contact flag changes, each with where it came from.

Radius, in order: the config's ``contacts.radius`` (never second-guessed); the robot file's
collision spheres centred on the contact frames (:mod:`physid.robot.contact_spheres`); the
rolling fit of the stance kinematics (:mod:`physid.oe.soft.foot_radius`), 0 when the data cannot
decide. Feet: rigid (paper B) or soft (:mod:`physid.oe.model.compliance`), whichever the
one-step defects at the initial guess prefer by the BIC (:func:`choose_soft`). Floor: the
config's ``noise.contact_change_v`` (0: none); else the variance-component choice of
:mod:`physid.oe.soft.contact_noise` at the initial guess (the prior's parameters moved by a
few Gauss-Newton steps on the defects).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.findings import Finding
from physid.oe.codes import CONTACT_AT_SPHERE, FLOOR_CHOSEN, RADIUS_CHOSEN
from physid.oe.model.measurements import Measurements
from physid.oe.model.phases import change_distance, flag_changes
from physid.oe.soft.contact_noise import SMOOTH_S, choose_change_floor, fit_defects, fitted_defects
from physid.oe.soft.foot_radius import estimate_foot_radius
from physid.oe.solving.problem import OEProblem


def choose_radius(
    robot_file: str | Path,
    model: pin.Model,
    frames: tuple[str, ...],
    flags: NDArray,
    meas: Measurements,
    dt: float,
) -> tuple[float | list[float], dict]:
    """``(radius, record)``: the feet's radius [m] (one, or one per frame when the file's
    spheres differ) and ``{"radius", "source": "robot file" | "data", "detail"}``; with the
    file's spheres, ``record["centres"]``: ``{frame: offset (3,) [m]}`` of the spheres whose
    centre is off the frame's origin (in the frame's parent joint coordinates), where the foot
    rolls about (:func:`rolling_at_sphere_centres`)."""
    from physid.robot.contact_spheres import contact_spheres

    spheres, failure = contact_spheres(robot_file, model, frames)
    if spheres:
        radii = [spheres[f][0] if f in spheres else 0.0 for f in frames]
        missing = [f for f in frames if f not in spheres]
        centres = {f: offset for f, (_, offset) in spheres.items() if np.any(offset != 0.0)}
        detail = (
            f"{robot_file}: collision spheres of the contact frames, radius "
            + ", ".join(f"{f} {1e3 * r:.4g} mm" for f, r in zip(frames, radii, strict=True))
            + (f" ({', '.join(missing)}: none, point feet)" if missing else "")
            + (
                "; centred off the frame by "
                + ", ".join(f"{f} {1e3 * np.linalg.norm(o):.4g} mm" for f, o in centres.items())
                if centres
                else ""
            )
        )
        value: float | list[float] = radii[0] if len(set(radii)) == 1 else radii
        record = {"radius": value, "source": "robot file", "detail": detail}
        if centres:
            record["centres"] = centres
        return value, record
    fit = estimate_foot_radius(model, frames, flags, meas, dt)
    why = failure or "no collision sphere centred on a contact frame"
    return fit.radius, {
        "radius": fit.radius,
        "source": "data",
        "detail": f"{robot_file}: {why}; {fit.reason}",
        "estimate": None if np.isnan(fit.estimate) else fit.estimate,
        "std": None if np.isnan(fit.std) else fit.std,
        "samples": fit.samples,
    }


def choose_floor(problem: OEProblem, xs: NDArray, given_window: bool) -> tuple[OEProblem, dict]:
    """``(problem, record)``: the problem with the floor the data choose near contact flag
    changes (unchanged without one) and ``{"contact_change_v", "window", "source": "data",
    "detail", ...}``; ``given_window``: keep the problem's ``contact_change_window``."""
    sched, noise, dt = problem.contacts, problem.noise, problem.dynamics.dt
    if sched is None or flag_changes(sched.flags).size == 0:
        detail = "no contact flag change: no floor"
        return problem, {"contact_change_v": None, "source": "data", "detail": detail}
    defects = fitted_defects(problem, xs, problem.dynamics.nominal_theta())
    process_v = float(np.min(problem.process_std_nodes[:, problem.dynamics.model.nv :]))
    window = noise.contact_change_window if given_window else None
    floor = choose_change_floor(
        defects, change_distance(sched.flags, problem.horizon), dt, process_v, window
    )
    record = {
        "contact_change_v": floor.floor,
        "window": floor.window,
        "source": "data",
        "detail": floor.reason,
        "rms_near": float(np.sqrt(floor.near_ms)),
        "rms_far": float(np.sqrt(floor.far_ms)),
        "nodes_near": floor.near_nodes,
    }
    if floor.floor is None:
        return problem, record
    chosen = dataclasses.replace(
        noise, contact_change_v=floor.floor, contact_change_window=floor.window
    )
    return dataclasses.replace(problem, noise=chosen), record


def rolling_at_sphere_centres(
    model: pin.Model, centres: dict[str, NDArray], keep: set[str]
) -> list[Finding]:
    """Move each contact frame of ``centres`` (its sphere's offset from the frame, in the
    frame's parent joint coordinates: :func:`choose_radius`) to its sphere's centre, about which
    the foot rolls, in ``model`` (the run's own); not the frames in ``keep`` (a force sensor's,
    whose wrench is given at the frame). Returns a finding per frame. A contact left at the
    frame, centimetres from where the foot rolls, biases the trunk's and the payload's masses."""
    findings = []
    for frame, offset in centres.items():
        numbers = {"offset_m": float(np.linalg.norm(offset))}
        if frame in keep:
            findings.append(
                CONTACT_AT_SPHERE(
                    f"contact frame {frame}: its collision sphere's centre is "
                    f"{1e3 * np.linalg.norm(offset):.4g} mm from it, but its wrench is measured "
                    "there: the contact stays at the frame",
                    numbers=numbers,
                    names=(frame,),
                )
            )
            continue
        index = model.getFrameId(frame)
        moved = model.frames[index]
        moved.placement = pin.SE3(moved.placement.rotation, moved.placement.translation + offset)
        model.frames[index] = moved
        findings.append(
            CONTACT_AT_SPHERE(
                f"contact frame {frame}: the foot rolls about its collision sphere's centre, "
                f"{1e3 * np.linalg.norm(offset):.4g} mm from the frame (robot file): the contact "
                "is modelled there",
                numbers=numbers,
                names=(frame,),
            )
        )
    return findings


def soft_contact_inputs(  # noqa: ANN001 - model: pin.Model, recording: OERecording
    noise: dict, radius: float | None, robot_file: str | Path, model, recording
) -> tuple[dict, float | list[float], dict, list[Finding]]:
    """``(noise, radius, record, findings)``: the config's noise keywords
    (``contact_change_v`` 0, i.e. no floor, taken out), the feet's radius (the config's, else
    :func:`choose_radius`'s, with a finding) and what was given of both
    (``record["contact_change"]`` is left for :func:`choose_floor` when the config has none)."""
    from physid.oe.model.measurements import NoiseStd

    soft: dict = {}
    noise = dict(noise)
    if "contact_change_v" in noise:
        value = noise.pop("contact_change_v")
        if value > 0:
            noise["contact_change_v"] = value
        window = noise.get("contact_change_window", NoiseStd.contact_change_window)
        soft["contact_change"] = {
            "contact_change_v": value or None,
            "source": "config",
            "window": window,
        }
    if recording.contact_flags is None:
        return noise, radius or 0.0, soft, []
    if radius is not None:
        soft["radius"] = {"radius": radius, "source": "config"}
        return noise, radius, soft, []
    meas = recording.measurements
    radius, record = choose_radius(
        robot_file, model, recording.contact_frames, recording.contact_flags, meas, recording.dt
    )
    soft["radius"] = record
    numbers = {"radius_m": float(np.max(radius))}
    findings = [
        RADIUS_CHOSEN(
            f"contacts.radius chosen ({record['source']}): {record['detail']}",
            numbers=numbers,
            names=recording.contact_frames,
        )
    ]
    centres = record.pop("centres", None)
    if centres:
        findings.extend(rolling_at_sphere_centres(model, centres, set(meas.wrench or ())))
        record["centre_offsets_m"] = {f: o.tolist() for f, o in centres.items()}
    return noise, radius, soft, findings


def floor_finding(record: dict) -> Finding:
    """The finding of :func:`choose_floor`'s choice."""
    numbers = {"contact_change_v": record["contact_change_v"] or 0.0}
    if "window" in record:
        numbers["window_s"] = record["window"]
    return FLOOR_CHOSEN(
        f"noise.contact_change_v chosen from the data: {record['detail']}", numbers=numbers
    )


def choose_soft(rigid: OEProblem, soft: OEProblem, xs: NDArray) -> tuple[OEProblem, dict]:
    """``(problem, record)``: rigid or soft feet, as the data choose. Each model's parameters
    are fitted to the joint-velocity one-step defects at the initial guess ``xs``
    (:func:`~physid.oe.soft.contact_noise.fit_defects`, the soft one's compliance, spring and
    tangential ratio with them); the soft feet are kept when they lower the defects' mean
    square by the Bayesian information criterion, ``n log(ms_rigid / ms_soft) > 3 log n``
    (three more parameters; ``n`` the defects counted as :mod:`physid.oe.soft.contact_noise`
    counts them, one per component and ``SMOOTH_S`` of nodes: the model error is slow).
    Without a contact flag change (every foot down throughout) the feet stay rigid: the
    compliance and the spring are told by the load moving from foot to foot at touch-downs
    and lift-offs; under a constant contact set the solve leaves them to their prior and
    crawls along it even where the defects alone prefer soft feet (docs/oe.md, "Seventh
    round").
    The soft problem's solve then starts at the fitted values (its prior stays
    where it was). ``record``: both mean squares, the soft fit's values, the choice and a
    one-line detail."""
    if rigid.contacts is None or flag_changes(rigid.contacts.flags).size == 0:
        detail = "no contact flag change: rigid feet (nothing tells the compliance)"
        return rigid, {"feet": "rigid", "source": "data", "detail": detail}
    _, d_rigid = fit_defects(rigid, xs, rigid.dynamics.nominal_theta())
    theta, d_soft = fit_defects(soft, xs, soft.dynamics.nominal_theta())
    ms_rigid, ms_soft = float(np.mean(d_rigid**2)), float(np.mean(d_soft**2))
    width = max(3, int(round(SMOOTH_S / rigid.dynamics.dt)))
    n = d_rigid.size / width
    with np.errstate(all="ignore"):
        gain = float(n * np.log(ms_rigid / ms_soft))
    threshold = float(theta.size - rigid.dynamics.n_theta) * np.log(n)
    chosen = bool(np.isfinite(gain) and gain > threshold)
    compliance, tau, ratio = np.exp(theta[-3:])
    record = {
        "feet": "soft" if chosen else "rigid",
        "source": "data",
        "defects_ms_rigid": ms_rigid,
        "defects_ms_soft": ms_soft,
        "bic_gain": gain,
        "bic_threshold": threshold,
        "fitted_compliance": float(compliance),
        "fitted_time_constant": float(tau),
        "fitted_tangential_ratio": float(ratio),
        "detail": (
            f"one-step joint-velocity defects RMS {np.sqrt(ms_rigid):.4g} with rigid feet, "
            f"{np.sqrt(ms_soft):.4g} with soft ones (compliance {compliance:.3g} 1/kg, "
            f"time constant {tau:.3g} s, tangential ratio {ratio:.3g}): BIC gain {gain:.3g} "
            f"against {threshold:.3g}: " + ("soft feet" if chosen else "rigid feet")
        ),
    }
    if chosen:
        dyn = soft.dynamics
        dyn.soft_start = dataclasses.replace(
            dyn.soft_start,
            compliance=float(compliance),
            time_constant=float(tau),
            tangential_ratio=float(ratio),
        )
        dyn.set_theta(dyn.nominal_theta())
    return (soft if chosen else rigid), record
