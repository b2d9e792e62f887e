"""Payload identification: the 10 inertial parameters of a load fixed to one body of an
identified robot, physically consistent, with standard deviations.

A payload rigidly attached to the body moved by joint ``j`` adds ``Y_j(q, dq, ddq) pi_p`` to the
joint torques, where ``Y_j`` are that body's 10 columns of the inertial regressor (the payload's
parameters expressed, like the body's, in the joint frame). With the robot's parameters
``theta`` known (``params.json`` of ``physid identify``), the loaded recordings give the linear
system ``tau - W theta = Y_j pi_p`` (the classic "known robot" payload method; paper C's
filtering and decimation make ``W`` and ``tau``). Recordings without the payload (``unloaded``),
when given, are fitted jointly with the same joint-term corrections ``d`` (viscous, Coulomb,
offset, armature): ``tau_u - W_u theta = J_u d`` and ``tau_l - W_l theta = Y_l pi_p + J_l d``, so
friction that drifted since the robot was identified is not read as payload.

Weighted least squares per joint (paper C), then the nearest physically consistent payload in the
weighted metric (pseudo-inertia ``J(pi_p) >= margin I``, an SDP); a known mass fixes ``m``.
Standard deviations: Newey-West covariance of the least squares (serially correlated residuals),
propagated to mass, centre of mass and inertia about the centre of mass in the link frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from physid.body.inertia import check_consistency
from physid.errors import InputError
from physid.files.config import FilterConfig
from physid.findings import Finding, Severity, as_dicts
from physid.offline.codes import NO_PAYLOAD, PAYLOAD_ELSEWHERE, PAYLOAD_IMPLAUSIBLE, PAYLOAD_UNSEEN
from physid.offline.fit.consistent import (
    SOLVED,
    body_onto_cone,
    pseudo_inertia_expression,
    solve_sdp,
)
from physid.offline.fit.uncertainty import delta_method_std, quantity_jacobian
from physid.offline.loads.payload_pairing import pair_runs
from physid.offline.observe.least_squares import autocorrelation_robust_covariance
from physid.offline.observe.observations import observations_of
from physid.recordings.trajectory import Trajectory
from physid.robot.model import RobotModel
from physid.status import Status

RANK_TOLERANCE = 1e-8  # singular value / largest: a payload direction the data do not see


@dataclass(frozen=True)
class PayloadResult:
    """The payload of :func:`identify_payload`; quantities in the link frame unless named."""

    joint: str  # the joint that moves the body carrying the payload
    link: str
    pi_in_joint: np.ndarray  # (10,) Pinocchio order, joint frame
    covariance_in_joint: np.ndarray  # (10, 10) of the least-squares estimate
    mass: float  # kg
    com_in_link: np.ndarray  # (3,) m
    inertia_about_com_in_link: np.ndarray  # (3, 3) kg m^2
    std: dict  # mass, com (3,), inertia (3, 3), in the link frame
    source: dict  # mass / com / inertia -> "data" | "mass given" | "undetermined"
    consistent: bool
    status: Status
    relative_error_robot_only: float  # loaded torques (filtered) predicted without the payload
    relative_error_with_payload: float
    joint_term_corrections: dict[str, float]  # "<joint>.<term>" -> d, with unloaded data
    # "known robot", with the unloaded runs' joint fit, or the paired-difference note
    # (payload_pairing.Pairing)
    method: str = "known robot"
    # d(mass)/mass per d(torque scale)/scale of each joint: how a drive gain's error moves it
    mass_sensitivity: dict[str, float] = field(default_factory=dict)
    # the drive gains the currents were converted with (config drive_gains; {}: torque data)
    drive_gains: dict[str, float] = field(default_factory=dict)
    # joints that moved one way only: their offset correction is held at 0 (not decidable)
    held_offsets: tuple[str, ...] = ()
    # each torque paired with the motion this much earlier [s]: params.json's compensated delay
    torque_delay_s: float = 0.0
    findings: tuple[Finding, ...] = ()
    message: str = ""  # one line: the status's verdict

    @property
    def warnings(self) -> tuple[str, ...]:
        """The messages of the findings that are not suspect."""
        return tuple(f.message for f in self.findings if f.severity is not Severity.SUSPECT)

    def as_dict(self) -> dict:
        return {
            "format": "physid.payload/1",
            "joint": self.joint,
            "link": self.link,
            "mass": self.mass,
            "com_in_link": self.com_in_link.tolist(),
            "inertia_about_com_in_link": self.inertia_about_com_in_link.tolist(),
            "std": {k: np.asarray(v).tolist() for k, v in self.std.items()},
            "source": self.source,
            "pi_in_joint": self.pi_in_joint.tolist(),
            "physically_consistent": self.consistent,
            "status": str(self.status),
            "message": self.message,
            "findings": as_dicts(self.findings),
            "fit": {
                "relative_error_robot_only": self.relative_error_robot_only,
                "relative_error_with_payload": self.relative_error_with_payload,
            },
            "joint_term_corrections": self.joint_term_corrections,
            "method": self.method,
            "mass_sensitivity_to_torque_scale": self.mass_sensitivity,
            "drive_gains": self.drive_gains,
            "offset_corrections_held_at_zero": list(self.held_offsets),
            "torque_delay_compensated_s": self.torque_delay_s,
            "warnings": list(self.warnings),
        }

    def gain_note(self) -> str:
        """One line: the gains used and how the mass moves with them (the two largest)."""
        used = (
            "drive gains " + ", ".join(f"{j} {g:.4g}" for j, g in self.drive_gains.items())
            if self.drive_gains
            else "torque columns as given (no drive gains)"
        )
        largest = sorted(self.mass_sensitivity.items(), key=lambda item: -abs(item[1]))[:2]
        moves = ", ".join(f"{s:+.2f} % per +1 % on {j}" for j, s in largest)
        return f"{used}; the mass moves {moves}" if moves else used


def link_placement(model: RobotModel, link: str) -> tuple[str, pin.SE3]:
    """The joint moving ``link`` and the link frame's placement in that joint's frame."""
    pin_model = model.pin_model
    if not pin_model.existFrame(link):
        links = [f.name for f in pin_model.frames if f.type == pin.FrameType.BODY]
        raise InputError(f"--link {link!r}: no such link in the URDF (links: {', '.join(links)})")
    frame = pin_model.frames[pin_model.getFrameId(link)]
    joint = pin_model.names[frame.parentJoint]
    if joint not in model.layout.body_joints:
        raise InputError(f"--link {link!r}: it does not move with any actuated joint")
    return joint, frame.placement


LINK_QUANTITIES = (
    "mass",
    "com x",
    "com y",
    "com z",
    *(f"inertia {a}{b}" for a in "xyz" for b in "xyz"),
)


def _unseen_quantities(
    placement: pin.SE3, pi: np.ndarray, null: np.ndarray, scales: np.ndarray
) -> np.ndarray:
    """(13,) bool: the link-frame quantities (:data:`LINK_QUANTITIES`) that move along a
    direction of the payload's parameters the data do not see (``null``: rows, the fit's unseen
    directions in its ``scales``-scaled columns, the payload's ten first; those reaching the
    payload as the ``undetermined`` source flag does). Their delta-method std is 0 along those
    directions while the value may be anything (a SCARA's payload: its centre of mass along the
    vertical axis and its tilting inertia), so a std would claim what the data never saw."""
    null = np.asarray(null, float)
    seen_by_payload = [row for row in null if np.abs(row[:10]).max() > 1e-3]
    if not seen_by_payload:
        return np.zeros(len(LINK_QUANTITIES), dtype=bool)
    directions = np.array(seen_by_payload)[:, :10] / scales[:10]
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    jacobian = quantity_jacobian(lambda p: _link_quantities(p, placement), pi)
    reach = np.abs(jacobian @ directions.T).max(axis=1)
    return reach > 1e-6 * np.maximum(np.linalg.norm(jacobian, axis=1), 1e-300)


def _link_quantities(pi: np.ndarray, placement: pin.SE3) -> np.ndarray:
    """``[m, com (3), inertia about com (9)]`` in the link frame of a joint-frame ``pi``."""
    inertia = pin.Inertia.FromDynamicParameters(np.asarray(pi, float)).se3Action(
        placement.inverse()
    )
    return np.concatenate([[inertia.mass], inertia.lever, inertia.inertia.reshape(-1)])


def identify_payload(
    model: RobotModel,
    theta: np.ndarray,
    options: FilterConfig,
    loaded: list[Trajectory],
    link: str,
    *,
    unloaded: list[Trajectory] | None = None,
    mass_kg: float | None = None,
    margin: float = 1e-9,
    robot_uncertainty: tuple[np.ndarray, np.ndarray] | None = None,
) -> PayloadResult:
    """Estimate the payload on ``link`` (module docstring); ``theta`` are the robot's standard
    parameters (its bodies without the payload) and ``options`` the resolved training filter.

    ``robot_uncertainty``: ``(base columns, their standard deviations)`` of the robot's
    identification (``params.json`` ``base_parameters``): the error of ``theta`` moves the
    payload through ``tau - W theta``, and its variance is added to the payload's (correlations
    between base parameters ignored)."""
    _check_inputs(loaded, unloaded, mass_kg)
    joint, placement = link_placement(model, link)
    system = _payload_system(model, theta, options, loaded, unloaded, joint)
    fit = _weighted_fit(system, robot_uncertainty)
    findings = []
    no_payload = mass_kg is None and abs(fit.free_mass[0]) <= NO_PAYLOAD_SIGMA * fit.free_mass[1]
    undetermined = fit.undetermined
    if no_payload:
        # no mass: nothing has a centre or an inertia (the mass itself, ~0, is the data's)
        undetermined = np.zeros(10, bool) if undetermined is None else undetermined.copy()
        undetermined[1:] = True
        value, std = fit.free_mass
        findings.append(
            NO_PAYLOAD(
                f"no payload the data can tell from none: least squares reads its mass as "
                f"{value:.3g} +- {std:.2g} kg; its centre of mass and inertia are undetermined",
                numbers={"mass_kg": value, "mass_std_kg": std},
            )
        )
    pi, consistent, message = _consistent_payload(
        fit.Aw, fit.bw.reshape(-1), fit.solution, margin, mass_kg
    )
    X, b = system.X, system.b
    n_terms = X.shape[-1] - 10
    correction = (
        fit.solution[10:] if pi is None else _terms_given(fit.Aw, fit.bw.reshape(-1), pi, n_terms)
    )
    estimate = fit.solution[:10] if pi is None else pi
    values = _link_quantities(estimate, placement)
    std = delta_method_std(
        lambda p: _link_quantities(p, placement), estimate, fit.covariance[:10, :10]
    )
    unseen = _unseen_quantities(placement, estimate, fit.unseen_directions, fit.scales)
    std[unseen] = np.nan  # no spread along a direction the data never see: not determined
    if no_payload:
        std[1:] = np.nan  # said in the finding above
    elif unseen.any():
        unseen_names = [
            name
            for name, u in zip(LINK_QUANTITIES, unseen, strict=True)
            if u and not name.endswith(("yx", "zx", "zy"))
        ]
        findings.append(
            PAYLOAD_UNSEEN(
                "the recordings leave these payload quantities undetermined (their motion never "
                "shows them; the values are the fit's choice, not the payload's): "
                + ", ".join(unseen_names),
                names=unseen_names,
            )
        )
    if mass_kg is not None:
        std[0] = 0.0
    # Relative errors on the loaded recordings' filtered, decimated torques (the fit's own data).
    loaded_tau = system.parts[0][0].tau
    rows = len(loaded_tau)
    fitted = b - X @ np.concatenate([estimate, correction])
    robot_only = float(np.linalg.norm(b[:rows]) / np.linalg.norm(loaded_tau))
    after = float(np.linalg.norm(fitted[:rows]) / np.linalg.norm(loaded_tau))
    status = Status.OK if consistent else Status.INCONSISTENT
    if consistent:
        reasons = implausible_payload(
            model,
            theta,
            float(values[0]),
            robot_only,
            after,
            values[1:4],
            swapped_hint=bool(unloaded),
            free_mass=fit.free_mass,
            given_mass=mass_kg,
        )
        findings += [PAYLOAD_IMPLAUSIBLE(reason) for reason in reasons]
        elsewhere = _better_elsewhere(
            model, joint, system.payload_rows, X, b, fit.weights, rows, link
        )
        if elsewhere:
            findings.append(PAYLOAD_ELSEWHERE(elsewhere))
        status, message = suspect_status(findings)
    names = list(model.layout.names[model.layout.n_inertial :])
    return PayloadResult(
        joint,
        link,
        estimate,
        fit.covariance[:10, :10],
        float(values[0]),
        values[1:4],
        values[4:].reshape(3, 3),
        {"mass": std[0], "com": std[1:4], "inertia": std[4:].reshape(3, 3)},
        _sources(undetermined, mass_kg),
        consistent,
        status,
        robot_only,
        after,
        dict(zip(names, map(float, correction), strict=False)) if system.with_terms else {},
        system.method,
        _mass_sensitivity(X, b, fit.weights, values[0], model.joint_names),
        held_offsets=tuple(system.held),
        findings=tuple(findings),
        message=message,
    )


def _check_inputs(
    loaded: list[Trajectory], unloaded: list[Trajectory] | None, mass_kg: float | None
) -> None:
    """One error line for inputs no payload fit can use."""
    if not loaded:
        raise InputError("no recording with the payload given")
    if mass_kg is not None and not (np.isfinite(mass_kg) and mass_kg > 0):
        raise InputError(f"--mass: must be a positive number of kg, got {mass_kg}")
    for with_load in loaded:
        for without_load in unloaded or []:
            if np.array_equal(with_load.q, without_load.q) and np.array_equal(
                with_load.tau, without_load.tau
            ):
                raise InputError(
                    f"{with_load.source} (--data, with the payload) and {without_load.source} "
                    "(--unloaded) hold the same samples: the payload's torque, their "
                    "difference, is 0"
                )


@dataclass(frozen=True)
class _PayloadSystem:
    """The least-squares system of the payload: ``X`` (N, n, 10 + terms) and ``b`` (N, n)."""

    X: np.ndarray
    b: np.ndarray
    parts: list  # (observations, carries the payload)
    robot_rows: list  # d b / d theta of each part (the robot's error moves b)
    payload_rows: list  # (regressor, carries the payload) of each part
    method: str
    held: dict[str, int]  # one-way joints' offset corrections held at 0
    with_terms: bool  # the joint terms re-estimated with unloaded recordings


def _payload_system(
    model: RobotModel,
    theta: np.ndarray,
    options: FilterConfig,
    loaded: list[Trajectory],
    unloaded: list[Trajectory] | None,
    joint: str,
) -> _PayloadSystem:
    """Loaded minus unloaded sample by sample when they are the same motion (the robot model's
    own error cancels); else the loaded residual, with the joint terms re-estimated jointly with
    the unloaded recordings when there are some."""
    body = model.layout.body_slice(joint)
    n_inertial = model.layout.n_inertial
    pairs = _pairs(loaded, unloaded)
    if pairs is not None:
        with_load = observations_of(model, [p.loaded for p in pairs], options)
        without = observations_of(model, [p.unloaded for p in pairs], options)
        b = (with_load.tau - with_load.W @ theta) - (without.tau - without.W @ theta)
        # no joint-term corrections: friction changes with the load cancel out
        return _PayloadSystem(
            with_load.W[..., body],
            b,
            [(with_load, True)],
            [with_load.W - without.W],
            [(with_load.W, True)],
            "; ".join(p.note() for p in pairs),
            {},
            False,
        )
    parts = [(observations_of(model, loaded, options), True)]
    method = "known robot"
    if unloaded:
        parts.append((observations_of(model, unloaded, options), False))
        method = (
            "known robot, its joint terms re-estimated jointly with the unloaded "
            "recordings (not the same motion: no sample-by-sample difference)"
        )
    blocks, rhs, robot_rows, payload_rows = [], [], [], []
    for observations, has_payload in parts:
        W, residual = observations.W, observations.tau - observations.W @ theta
        robot_rows.append(W)
        payload_rows.append((W, has_payload))
        payload = W[..., body] if has_payload else np.zeros((*W.shape[:2], 10))
        terms = W[..., n_inertial:] if unloaded else W[..., :0]
        blocks.append(np.concatenate([payload, terms], axis=-1))
        rhs.append(residual)
    X, b = np.concatenate(blocks), np.concatenate(rhs)
    held: dict[str, int] = {}
    if unloaded:
        held = _one_way_offsets(model, [o for o, _ in parts])
        X[..., [10 + layout_index - n_inertial for layout_index in held.values()]] = 0.0
    return _PayloadSystem(X, b, parts, robot_rows, payload_rows, method, held, bool(unloaded))


@dataclass(frozen=True)
class _WeightedFit:
    """Paper C's weighted least squares of the payload system, its covariance, the mass it
    reads before any constraint, and the directions the data never see."""

    weights: np.ndarray  # (n,) per joint
    Aw: np.ndarray
    bw: np.ndarray
    scales: np.ndarray
    solution: np.ndarray
    covariance: np.ndarray
    unseen_directions: np.ndarray  # right singular vectors below the rank tolerance
    undetermined: np.ndarray | None  # (10,) payload parameters along them
    free_mass: tuple[float, float]  # kg, its std


def _weighted_fit(
    system: _PayloadSystem, robot_uncertainty: tuple[np.ndarray, np.ndarray] | None
) -> _WeightedFit:
    """Per-joint weights from a first ordinary fit, then the weighted fit by a scaled SVD; the
    robot's own uncertainty added to the covariance (``robot_uncertainty``: base columns and
    their standard deviations)."""
    X, b = system.X, system.b
    A = X.reshape(-1, X.shape[-1])
    first, *_ = np.linalg.lstsq(A, b.reshape(-1), rcond=None)
    sigma = np.sqrt(np.mean((b - X @ first) ** 2, axis=0))
    weights = 1.0 / np.maximum(sigma, 1e-12 * max(float(sigma.max()), 1e-300))
    Xw, bw = X * weights[None, :, None], b * weights[None, :]
    Aw = Xw.reshape(-1, X.shape[-1])
    scales = np.linalg.norm(Aw, axis=0)
    scales[scales == 0.0] = 1.0
    U, s, Vt = np.linalg.svd(Aw / scales, full_matrices=False)
    kept = s > RANK_TOLERANCE * s[0]
    solution = (Vt[kept].T @ ((U[:, kept].T @ bw.reshape(-1)) / s[kept])) / scales
    XtX_inv = (Vt[kept].T / s[kept] ** 2) @ Vt[kept] / np.outer(scales, scales)
    covariance, _ = autocorrelation_robust_covariance(Xw, bw - Xw @ solution, XtX_inv)
    if robot_uncertainty is not None:
        columns, base_std = robot_uncertainty
        D = np.concatenate(system.robot_rows)[..., columns] * weights[None, :, None]
        gain = XtX_inv @ (Aw.T @ D.reshape(-1, len(columns)))  # d solution / d theta_base
        covariance = covariance + (gain * np.nan_to_num(base_std) ** 2) @ gain.T
    undetermined = np.abs(Vt[~kept][:, :10]).max(axis=0) > 1e-3 if (~kept).any() else None
    # the least-squares mass, before the consistent fit holds it >= 0: what the data say
    free_mass = (float(solution[0]), float(np.sqrt(max(covariance[0, 0], 0.0))))
    return _WeightedFit(
        weights, Aw, bw, scales, solution, covariance, Vt[~kept], undetermined, free_mass
    )


# A robot carries less than its own moving mass (industrial arms and cobots rate their payload
# at 0.2-0.4 x the arm's mass; the heaviest, 1 t on a 4.7 t arm): twice it is not a payload but
# torques in another unit or other drive gains, which the consistent fit reads as a heavy
# payload with status ok.
PAYLOAD_TO_ROBOT_MASS = 2.0
# The robot's own model leaves more than this share of the loaded torques unexplained: the
# payload would carry most of the torque, which no real payload does.
ROBOT_ONLY_ERROR = 0.9


# The fit with the payload may explain the loaded torques slightly worse than the robot alone
# for a payload too light to matter (it is weighted, and held a margin inside the cone); worse
# by more than this factor, what the loaded runs add is no positive mass (a loaded and an
# unloaded run given swapped)
WORSE_WITH_PAYLOAD = 1.02
# A payload's centre of mass farther from its link than this many times the robot's reach
# (robot_reach: a bound from the joint offsets, frames and centres of mass) is no payload
COM_REACHES = 2.0
# The least-squares payload mass (before the consistent fit holds it >= 0) this many standard
# deviations below zero: the loaded runs carry less than the robot alone (a pair given swapped;
# the consistent fit, held at a positive mass, would still read a small payload far out) ...
NEGATIVE_MASS_SIGMA = 3.0
# ... within this many of zero: no payload (two unloaded runs, whose near-zero mass would carry
# a centre of mass anywhere) ...
NO_PAYLOAD_SIGMA = 3.0
# ... and a given --mass this many of them and this share of it away from what the data read:
# the data contradict it (a mass given 25 % heavier than the data read moves the centre of mass
# by centimetres, with status ok)
GIVEN_MASS_SIGMA = 3.0
GIVEN_MASS_SHARE = 0.1


def robot_reach(model: RobotModel) -> float:
    """[m] A bound on how far anything of the robot lies from its base: the sum of its joints'
    offsets from their parents, plus the farthest frame (a flange, a tool frame) and the
    farthest centre of mass from their joints (the last link's length is in no joint
    offset)."""
    pm = model.pin_model
    chain = sum(float(np.linalg.norm(p.translation)) for p in pm.jointPlacements)
    frames = max((float(np.linalg.norm(f.placement.translation)) for f in pm.frames), default=0.0)
    levers = max((float(np.linalg.norm(i.lever)) for i in pm.inertias), default=0.0)
    return chain + max(frames, levers)


def implausible_payload(
    model: RobotModel,
    theta: np.ndarray,
    mass_kg: float,
    robot_only_error: float,
    with_payload_error: float | None = None,
    com_m: np.ndarray | None = None,
    swapped_hint: bool = False,
    *,
    free_mass: tuple[float, float] | None = None,
    given_mass: float | None = None,
) -> list[str]:
    """Reasons, with numbers, that a consistent payload estimate cannot be right; [] if none:
    a payload heavier than :data:`PAYLOAD_TO_ROBOT_MASS` x the robot, a robot model that
    explains almost none of the loaded torques, a payload whose fit leaves more of the loaded
    torques unexplained than the robot alone by more than :data:`WORSE_WITH_PAYLOAD`
    (``with_payload_error``: the loaded-minus-unloaded difference is no positive mass), and a
    centre of mass ``com_m`` (link frame) farther from the link than :data:`COM_REACHES` x the
    robot's reach. ``free_mass``: the least-squares mass and its std, which may not lie
    :data:`NEGATIVE_MASS_SIGMA` below zero, nor (``given_mass``, ``--mass``) away from the given
    mass by :data:`GIVEN_MASS_SIGMA` and :data:`GIVEN_MASS_SHARE` of it."""
    robot_mass = model.layout.total_mass(theta)
    reasons = []
    swap = "; are --data (with the payload) and --unloaded swapped?" if swapped_hint else ""
    if free_mass is not None:
        value, std = free_mass
        if value < -NEGATIVE_MASS_SIGMA * std:
            reasons.append(
                f"least squares reads a negative payload mass ({value:.4g} +- {std:.2g} kg): "
                f"the loaded runs carry less than the robot alone{swap}"
            )
            swap = ""
        elif given_mass is not None and abs(value - given_mass) > max(
            GIVEN_MASS_SIGMA * std, GIVEN_MASS_SHARE * given_mass
        ):
            reasons.append(
                f"the data read the payload's mass as {value:.4g} +- {std:.2g} kg, not the "
                f"{given_mass:.4g} kg given (--mass): its centre of mass and inertia, fitted "
                "with the given mass, are not the payload's; check the mass, or the torques' "
                "units and drive gains"
            )
    if with_payload_error is not None and with_payload_error > WORSE_WITH_PAYLOAD * (
        robot_only_error
    ):
        reasons.append(
            f"the payload leaves more of the loaded torques unexplained than the robot alone "
            f"({100 * with_payload_error:.3g} % against {100 * robot_only_error:.3g} %): what the "
            "loaded runs add is no positive mass" + swap
        )
    reach = robot_reach(model)
    if com_m is not None and reach > 0 and float(np.linalg.norm(com_m)) > COM_REACHES * reach:
        reasons.append(
            f"the payload's centre of mass lies {np.linalg.norm(com_m):.3g} m from its link, "
            f"more than {COM_REACHES:g} x the robot's reach ({reach:.3g} m)"
        )
    units = []
    if mass_kg > PAYLOAD_TO_ROBOT_MASS * robot_mass:
        units.append(
            f"the payload's {mass_kg:.4g} kg is {mass_kg / robot_mass:.3g} x the robot's moving "
            f"mass ({robot_mass:.4g} kg, params.json)"
        )
    if robot_only_error > ROBOT_ONLY_ERROR:
        units.append(
            f"the robot's model leaves {100 * robot_only_error:.3g} % of the loaded torques "
            "unexplained"
        )
    reasons += units
    if units:
        reasons.append(
            "are the loaded recordings' torques in the unit and with the drive gains of the "
            "robot's identification?"
        )
    return reasons


# A payload on another end link that leaves at most this share of the loaded torque the given
# link's leaves unexplained (least squares, the same weights): it hangs there (a dual-arm
# robot's payload on the other wrist, or a wrist's payload given on the elbow's link, fits there
# with its centre of mass far out, status ok)
ELSEWHERE_RATIO = 0.5


def _better_elsewhere(
    model: RobotModel,
    joint: str,
    payload_rows: list[tuple[np.ndarray, bool]],
    X: np.ndarray,
    b: np.ndarray,
    weights: np.ndarray,
    rows: int,
    link: str,
) -> str:
    """A reason when a payload on the body of an end joint of the tree other than ``joint``
    (the given ``link``'s) explains the loaded rows of ``b`` far better than ``X`` does (least
    squares, per-joint ``weights``; ``payload_rows``: each part's regressor (N, n, p) and
    whether it carries the payload); "" otherwise."""
    pin_model = model.pin_model
    parents = {pin_model.names[pin_model.parents[k]] for k in range(1, pin_model.njoints)}
    ends = [j for j in model.layout.body_joints if j not in parents and j != joint]

    def unexplained(columns: np.ndarray) -> float:
        A = (columns * weights[None, :, None]).reshape(-1, columns.shape[-1])
        solution, *_ = np.linalg.lstsq(A, (b * weights[None, :]).reshape(-1), rcond=None)
        residual = (b - columns @ solution)[:rows]
        return float(np.linalg.norm(residual) / max(float(np.linalg.norm(b[:rows])), 1e-300))

    given = unexplained(X)
    best = None
    for end in ends:
        body = model.layout.body_slice(end)
        other = np.concatenate(
            [W[..., body] if loaded else np.zeros((*W.shape[:2], 10)) for W, loaded in payload_rows]
        )
        error = unexplained(np.concatenate([other, X[..., 10:]], axis=-1))
        if best is None or error < best[1]:
            best = (end, error)
    if best is None or best[1] > ELSEWHERE_RATIO * given:
        return ""
    joint_id = pin_model.getJointId(best[0])
    bodies = [
        f.name
        for f in pin_model.frames
        if f.parentJoint == joint_id and f.type == pin.FrameType.BODY
    ]
    moved = bodies[0] if bodies else best[0]
    return (
        f"a payload on {moved} leaves {100 * best[1]:.3g} % of the "
        f"loaded torque unexplained against {100 * given:.3g} % on {link}: is the payload "
        "on another link?"
    )


def _one_way_offsets(model: RobotModel, observations: list) -> dict[str, int]:
    """Joints that moved one way only in these recordings (the offset correction and the
    Coulomb correction are one column there: the offset's is held at 0), as
    ``{joint: index of its offset term}``."""
    from physid.offline.fit.joint_prior import joint_motion

    dq = np.concatenate([o.dq for o in observations])
    threshold = 1e-3 * np.maximum(np.sqrt(np.mean(dq**2, axis=0)), 1e-12)
    held = {}
    for joint, motion in zip(model.joint_names, joint_motion(dq, threshold), strict=True):
        index = model.layout.joint_term_index(joint, "offset")
        if motion.one_way and index is not None:
            held[joint] = index
    return held


def _pairs(loaded: list[Trajectory], unloaded: list[Trajectory] | None):
    """Each loaded run paired with the unloaded run of the same trajectory, or None."""
    if not unloaded or len(unloaded) != len(loaded):
        return None
    pairs = [pair_runs(a, b) for a, b in zip(loaded, unloaded, strict=True)]
    return None if any(p is None for p in pairs) else pairs


def _mass_sensitivity(
    X: np.ndarray, b: np.ndarray, weights: np.ndarray, mass: float, joints: tuple[str, ...]
) -> dict[str, float]:
    """Relative change of the least-squares payload mass per relative change of one joint's
    torque scale (a drive gain): the recorded torque of that joint scaled by 1 + 1e-3."""
    if not mass > 0:
        return {}
    Xw = (X * weights[None, :, None]).reshape(-1, X.shape[-1])

    def mass_of(rhs: np.ndarray) -> float:
        return float(np.linalg.lstsq(Xw, (rhs * weights[None, :]).reshape(-1), rcond=1e-10)[0][0])

    reference = mass_of(b)
    sensitivity = {}
    for k, joint in enumerate(joints):
        scaled = b.copy()
        scaled[:, k] *= 1.0 + 1e-3
        sensitivity[joint] = (mass_of(scaled) - reference) / (1e-3 * max(abs(reference), 1e-12))
    return sensitivity


def _sources(undetermined: np.ndarray | None, mass_kg: float | None) -> dict:
    """``data`` unless a direction of the quantity is not seen by the data."""

    def flag(indices: list[int]) -> str:
        if undetermined is not None and undetermined[indices].any():
            return "undetermined"
        return "data"

    return {
        "mass": "mass given" if mass_kg is not None else flag([0]),
        "com": flag([0, 1, 2, 3]),
        "inertia": flag(list(range(10))),
    }


def _consistent_payload(
    Aw: np.ndarray, bw: np.ndarray, solution: np.ndarray, margin: float, mass_kg: float | None
) -> tuple[np.ndarray | None, bool, str]:
    """Nearest consistent payload (pseudo-inertia >= margin I) in the weighted least-squares
    metric, the joint-term corrections free; returns (pi or None, consistent, status)."""
    import cvxpy as cp

    Q, R = np.linalg.qr(Aw)
    z = Q.T @ bw
    x = cp.Variable(Aw.shape[1])
    constraints = [
        cp.Variable((4, 4), PSD=True) == pseudo_inertia_expression(x[:10]) - margin * np.eye(4)
    ]
    if mass_kg is not None:
        constraints.append(x[0] == mass_kg)
    scale = max(float(np.linalg.norm(z)), 1e-300)
    problem = cp.Problem(cp.Minimize(cp.sum_squares((R @ x - z) / scale)), constraints)
    x.value = solution
    status = solve_sdp(problem)
    if x.value is None or status not in SOLVED:
        return None, False, f"no physically consistent payload: {status}"
    pi = body_onto_cone(np.asarray(x.value[:10], float), margin)  # the solver's near miss
    report = check_consistency(pi, name="payload")
    if not report.consistent:
        return None, False, f"no physically consistent payload: {report.reason}"
    return pi, True, "ok"


def suspect_status(findings: list[Finding]) -> tuple[Status, str]:
    """``suspect`` with the suspect findings' messages when there are some, else ``ok``."""
    reasons = [f.message for f in findings if f.severity is Severity.SUSPECT]
    if reasons:
        return Status.SUSPECT, "the data look wrong: " + "; ".join(reasons)
    return Status.OK, "a physically consistent payload"


def _terms_given(Aw: np.ndarray, bw: np.ndarray, pi: np.ndarray, n_terms: int) -> np.ndarray:
    """The joint-term corrections re-fitted with the payload fixed."""
    if n_terms == 0:
        return np.zeros(0)
    terms, *_ = np.linalg.lstsq(Aw[:, 10:], bw - Aw[:, :10] @ pi, rcond=None)
    return terms
