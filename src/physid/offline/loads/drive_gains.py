"""Joint drive gains from motor currents and a known payload (Gautier & Briot 2014).

A drive that logs currents ``i_j`` gives torques ``tau_j = g_j i_j`` with a gain ``g_j`` [N m/A,
joint side] that data sheets know to 10-45 %. Everything identified from ``g i`` scales with it,
and the currents alone cannot fix the scale: ``W theta = diag(i) g`` holds for ``(c theta, c g)``
with any ``c``. A payload of known inertial parameters ``phi`` fixed to body ``L`` in one set of
recordings breaks the scale (Gautier & Briot, "Global identification of joint drive gains and
dynamic parameters of robots", ASME J. Dyn. Syst. Meas. Control 136(5), 2014):

    unloaded recordings:   W(q, dq, ddq) theta - diag(i) g = 0
    loaded recordings:     W(q, dq, ddq) theta - diag(i) g = -W_L(q, dq, ddq) phi

with ``W_L`` the regressor columns of body ``L``. physid stacks both over all joints, filters and
decimates currents and regressor alike (:mod:`.observations`), solves the linear form above by
least squares as a start, then fits the same equations with the errors in the currents, where
they are (:func:`_current_error_fit`): in the linear form the current noise biases every gain
low (a ridge penalty along the scale direction). The gains' standard deviations come from the
Gauss-Newton covariance. The consistent parameters are then identified as usual from ``g i``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.errors import InputError
from physid.files.config import FilterConfig, KnownPayload
from physid.offline.observe.least_squares import solve_triangular_system
from physid.offline.observe.observations import Observations, observations_of
from physid.offline.observe.preprocessing import resolve_preprocessing
from physid.recordings.trajectory import Trajectory
from physid.robot.model import RobotModel
from physid.robot.regressor import base_parameters


@dataclass(frozen=True)
class DriveGainEstimate:
    """Gains [N m/A joint side, N/A prismatic] with standard deviations, per joint."""

    joint_names: tuple[str, ...]
    gains: np.ndarray  # (n,)
    std: np.ndarray  # (n,)
    relative_residual: float  # ||weighted residual|| / ||weighted g i|| of the joint fit
    condition_number: float
    # RMS of the payload's torque on each joint over the loaded rows, relative to that joint's
    # RMS torque g i there: what the payload tells about the joint's scale
    payload_share: np.ndarray  # (n,)

    def as_dict(self) -> dict:
        return {
            joint: {"value": float(g), "std": float(s), "payload_share": float(share)}
            for joint, g, s, share in zip(
                self.joint_names, self.gains, self.std, self.payload_share, strict=True
            )
        }

    def undecided(self) -> list[str]:
        """One warning naming the joints whose gain the recordings do not decide (relative std
        above :data:`UNDECIDED_RELATIVE_STD`), with the numbers; [] when every gain is decided.
        A payload whose centre of mass sits on a joint's axis hardly loads it: its gain then
        rests on weak couplings (simulated arm, 2.5 kg on the wrist-roll axis: std 55 %, the
        payload 0.15 % of that joint's torque; on a 10 cm bracket: std 0.4 %, 22 %)."""
        relative = self.std / self.gains
        bad = np.flatnonzero(~(relative <= UNDECIDED_RELATIVE_STD))
        if not bad.size:
            return []
        listed = ", ".join(
            f"{self.joint_names[j]} {self.gains[j]:.4g} +- {100 * relative[j]:.3g} % (payload "
            f"{100 * self.payload_share[j]:.2g} % of its torque)"
            for j in bad
        )
        return [
            f"drive gains not decided by the recordings: {listed}; everything identified on "
            "these joints scales with their gain: load them with the payload (put it on a "
            "bracket off their axes) or give their gains (drive_gains: {joint: gain})"
        ]


# A gain known to 5 % is as good as a data sheet's best (they quote 10-45 %); beyond it the
# payload run did not decide the gain and the user must hear so.
UNDECIDED_RELATIVE_STD = 0.05


def _rows(
    model: RobotModel, observations: Observations, columns: np.ndarray, payload_torque: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per joint j the equations ``[W_j,S | -i_j e_j] [theta; g] = -tau_L,j`` as (M, n, b + n)
    and the right-hand sides (M, n)."""
    n = model.n_joints
    current = observations.tau  # loaded with unit gains: the filtered currents
    gain_block = np.zeros((current.shape[0], n, n))
    gain_block[:, np.arange(n), np.arange(n)] = -current
    return np.concatenate([observations.W[..., columns], gain_block], axis=-1), -payload_torque


def identify_drive_gains(
    model: RobotModel,
    unloaded: list[Trajectory],
    loaded: list[Trajectory],
    payload: KnownPayload,
    options: FilterConfig,
) -> DriveGainEstimate:
    """Drive gains from recordings whose ``tau`` holds the raw currents (module docstring).

    ``options`` may be unresolved (cut-offs chosen from all the recordings together). With only
    the payload's mass known (``payload.moments_known`` False) its other nine parameters are
    estimated too: the mass alone fixes the scale.
    """
    if not loaded:
        raise InputError("drive_gains: identify needs at least one recording with the payload")
    if payload.joint not in model.layout.body_joints:
        raise InputError(f"payload.joint '{payload.joint}' is not a body of the model")
    if model.transmission is not None:
        raise InputError(
            "drive_gains: identify needs joint-side currents i_<joint> (not a transmission)"
        )
    base = base_parameters(model)
    columns = base.independent
    n_unknowns = len(columns) + model.n_joints
    options = resolve_preprocessing(options, list(unloaded) + list(loaded), n_unknowns).filter
    blocks = []
    body = model.layout.body_slice(payload.joint)
    # Mass only known: the payload's first and second moments are unknowns of the loaded rows
    # (9 columns: its body's regressor columns there, zero elsewhere).
    n_moments = 0 if payload.moments_known else 9
    for recordings, with_payload in ((unloaded, False), (loaded, True)):
        if not recordings:
            continue
        obs = observations_of(model, recordings, options)
        torque = obs.W[..., body] @ payload.pi if with_payload else np.zeros_like(obs.tau)
        A, rhs = _rows(model, obs, columns, torque)
        moments = obs.W[..., body][..., 1:] if with_payload else np.zeros((*obs.tau.shape, 9))
        blocks.append((np.concatenate([moments[..., :n_moments], A], axis=-1), rhs))
    A = np.concatenate([a for a, _ in blocks])  # (M, n, moments + b + n)
    rhs = np.concatenate([r for _, r in blocks])  # (M, n)
    start = _linear_start(A, rhs)
    return _current_error_fit(model, A, rhs, start, n_moments + len(columns))


def _linear_start(A: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``[theta; g]`` of the linear form by ordinary least squares (columns normalised).

    Biased toward zero: its currents are regressors, and their noise acts as a ridge penalty on
    the gains along the scale direction that only the payload fixes (3-11 % low on the simulated
    arm). Only the start of :func:`_current_error_fit`."""
    X = A.reshape(-1, A.shape[-1])
    scale = np.linalg.norm(X, axis=0)
    scale[scale == 0] = 1.0
    solution = solve_triangular_system(X / scale, rhs.reshape(-1))[0]
    return solution / scale


def _current_error_fit(
    model: RobotModel, A: np.ndarray, rhs: np.ndarray, start: np.ndarray, n_base: int
) -> DriveGainEstimate:
    """The errors where they are: in the currents. With ``k_j = 1 / g_j``,

        i_j = k_j (W_j theta + W_L,j phi)

    is bilinear in ``(theta, k)``; Gauss-Newton from the linear start, per-joint weights from the
    residual (as paper C's WLS), covariance ``sigma^2 (J^T J)^-1`` and the gains' standard
    deviations by the delta method (``std_g = std_k / k^2``)."""
    import scipy.optimize

    n = model.n_joints
    W = A[..., :n_base]  # (M, n, b)
    current = -A[:, np.arange(n), n_base + np.arange(n)]  # (M, n): the diagonal of -(-i)
    torque_payload = -rhs  # W_L phi (0 for unloaded rows)
    gains0 = start[n_base:]
    if np.any(gains0 <= 0):
        bad = [j for j, g in zip(model.joint_names, gains0, strict=True) if g <= 0]
        raise InputError(
            f"drive gains of {', '.join(bad)} came out <= 0: the payload does not load these "
            "joints enough to decide their gains (put it on a bracket off their axes, or give "
            "their gains), or the currents' sign is reversed"
        )
    x0 = np.concatenate([start[:n_base], 1.0 / gains0])
    weights = np.ones(n)

    def residual(x: np.ndarray) -> np.ndarray:
        torque = W @ x[:n_base] + torque_payload  # (M, n) joint torques predicted
        return ((current - x[n_base:] * torque) * weights).reshape(-1)

    def jacobian(x: np.ndarray) -> np.ndarray:
        torque = W @ x[:n_base] + torque_payload
        J_theta = -(x[n_base:, None] * W) * weights[:, None]  # (M, n, b)
        J_k = np.zeros((W.shape[0], n, n))
        J_k[:, np.arange(n), np.arange(n)] = -torque * weights
        return np.concatenate([J_theta, J_k], axis=-1).reshape(-1, n_base + n)

    x = x0
    for _ in range(2):  # unweighted, then weighted by each joint's residual level
        x = scipy.optimize.least_squares(
            residual, x, jac=jacobian, method="lm", x_scale="jac", xtol=1e-12, ftol=1e-12
        ).x
        sigma = np.sqrt(np.mean((residual(x).reshape(-1, n) / weights) ** 2, axis=0))
        weights = 1.0 / np.maximum(sigma, 1e-12 * max(float(sigma.max()), 1e-300))
    r, J = residual(x), jacobian(x)
    dof = max(r.size - x.size, 1)
    sigma2 = float(r @ r / dof)
    J_scale = np.linalg.norm(J, axis=0)
    J_scale[J_scale == 0] = 1.0
    _, JtJ_inv, condition = solve_triangular_system(J / J_scale, r)
    covariance = sigma2 * JtJ_inv / np.outer(J_scale, J_scale)
    k, k_std = x[n_base:], np.sqrt(np.clip(np.diag(covariance)[n_base:], 0.0, None))
    if np.any(k <= 0):
        bad = [j for j, value in zip(model.joint_names, k, strict=True) if value <= 0]
        raise InputError(
            f"drive gains of {', '.join(bad)} came out <= 0: the currents' sign is reversed, or "
            "the payload does not load these joints enough to decide their gains"
        )
    weighted_current = current * weights
    relative = float(np.linalg.norm(r) / max(np.linalg.norm(weighted_current), 1e-300))
    loaded = np.any(torque_payload != 0.0, axis=1)
    gains = 1.0 / k
    share = np.sqrt(np.mean(torque_payload[loaded] ** 2, axis=0)) / np.maximum(
        np.sqrt(np.mean((current[loaded] * gains) ** 2, axis=0)), 1e-300
    )
    return DriveGainEstimate(model.joint_names, gains, k_std / k**2, relative, condition, share)
