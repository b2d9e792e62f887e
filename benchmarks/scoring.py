"""The independent scorer and the plain OLS shared by ``vs_ols.py`` and ``real_corpus.py``.

No physid code: derivatives by a fixed zero-phase Butterworth (``CUTOFF_HZ``, 4th order) on
uniformly resampled positions, ``np.gradient`` twice, back at the recordings' own sample times;
the OLS is Pinocchio's ``computeJointTorqueRegressor`` plus per-joint viscous, Coulomb and offset
columns (+ armature, + the TX40 coupled wrist) solved by ``numpy.linalg.lstsq`` on the raw
torques, and the same least squares restricted to consistent bodies by CVXPY + Clarabel; a
``physid.params/1`` document is scored by Pinocchio's RNEA with the file's bodies and its joints'
friction laws (linear, Stribeck, sigmoid: :func:`nonlinear_friction`).
Every error is ``||tau - tau_hat|| / ||tau||`` on the RAW measured torques, joints stacked.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
import scipy.signal

CUTOFF_HZ = 10.0  # Butterworth cut-off of the scorer and of the OLS (fixed, not tuned)


def coulomb_sign(speed: np.ndarray, deadband: float | np.ndarray | None = 0.0) -> np.ndarray:
    """``sign(speed)``, 0 where ``|speed| <`` the deadband (per column; None or 0: plain sign)."""
    band = 0.0 if deadband is None else deadband
    return np.where(np.abs(speed) < band, 0.0, np.sign(speed))


# --------------------------------------------------------------------------------------------
# Signals and the shared derivative estimate
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Signals:
    """One joint-side recording: raw sample times, positions and measured torques."""

    t: np.ndarray
    q: np.ndarray
    tau: np.ndarray


@dataclass(frozen=True)
class States:
    """Butterworth state estimate at the recording's own samples, and its raw torques."""

    q: np.ndarray
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray


def _cubic_extension(x: np.ndarray, dt: float, n_fit: int, n_pad: int) -> np.ndarray:
    """``x`` (N, n) extended at both ends by a cubic fitted to its first/last ``n_fit`` rows.

    sosfiltfilt's default odd padding (a few samples) leaves start/end transients that, after two
    differentiations, dominate the torque error near the ends; a cubic keeps the curvature.
    """
    poly = np.polynomial.polynomial
    s = np.arange(n_fit) * dt
    head, tail = poly.polyfit(s, x[:n_fit], 3), poly.polyfit(s, x[-n_fit:], 3)
    before = poly.polyval(-dt * np.arange(n_pad, 0, -1), head).T
    after = poly.polyval(s[-1] + dt * np.arange(1, n_pad + 1), tail).T
    return np.vstack([before, x, after])


def butterworth_states(signals: Signals, cutoff_hz: float = CUTOFF_HZ) -> States:
    """Uniform resampling, zero-phase Butterworth (order 4), np.gradient twice, back to ``t``.

    The ends are padded by cubic extrapolation over three filter time scales (3 fs / cutoff).
    """
    t = signals.t
    dt = float(np.median(np.diff(t)))
    grid = t[0] + dt * np.arange(int(np.floor((t[-1] - t[0]) / dt)) + 1)
    columns = lambda x, at, where: np.column_stack(  # noqa: E731
        [np.interp(at, where, x[:, k]) for k in range(x.shape[1])]
    )
    per_scale = int(round(1.0 / (dt * cutoff_hz)))  # samples per 1/cutoff
    n_fit, n_pad = min(2 * per_scale, len(grid) // 4), 3 * per_scale
    sos = scipy.signal.butter(4, cutoff_hz, fs=1.0 / dt, output="sos")
    padded = _cubic_extension(columns(signals.q, grid, t), dt, n_fit, n_pad)
    q = scipy.signal.sosfiltfilt(sos, padded, axis=0)[n_pad:-n_pad]
    dq = np.gradient(q, dt, axis=0)
    ddq = np.gradient(dq, dt, axis=0)
    back = [columns(x, t, grid) for x in (q, dq, ddq)]
    return States(*back, signals.tau)


def read_sim_csv(path: Path) -> Signals:
    """A physid contract CSV written by independent_sim (t, q_*, tau_*)."""
    with path.open(encoding="utf-8") as handle:
        names = handle.readline().strip().split(",")
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    q = table[:, [k for k, n in enumerate(names) if n.startswith("q_")]]
    tau = table[:, [k for k, n in enumerate(names) if n.startswith("tau_")]]
    return Signals(table[:, 0], q, tau)


# --------------------------------------------------------------------------------------------
# Plain OLS
# --------------------------------------------------------------------------------------------


def ols_regressor(
    model: pin.Model, s: States, armature: bool, wrist: bool, deadband: float = 0.0
) -> np.ndarray:
    """Stacked rows (N n, p): inertial columns, per-joint fv, fc, offset (, Ia) (, TX40 wrist)."""
    data = model.createData()
    N, n = s.q.shape
    Y = np.stack([pin.computeJointTorqueRegressor(model, data, *x)
                  for x in zip(s.q, s.dq, s.ddq, strict=True)])  # fmt: skip
    per_joint = [s.dq, coulomb_sign(s.dq, deadband), np.ones_like(s.dq)]
    per_joint += [s.ddq] if armature else []
    joint_cols = np.zeros((N, n, n * len(per_joint)))
    for j in range(n):
        for k, x in enumerate(per_joint):
            joint_cols[:, j, j * len(per_joint) + k] = x[:, j]
    blocks = [Y, joint_cols]
    if wrist:  # TX40 README: motor 6 turns with joints 5 and 6
        w = np.zeros((N, n, 3))
        w[:, 4, 0], w[:, 5, 0] = s.ddq[:, 5], s.ddq[:, 4]
        w[:, 4, 1], w[:, 5, 1] = s.dq[:, 5], s.dq[:, 4]
        w[:, 4, 2] = w[:, 5, 2] = coulomb_sign(s.dq[:, 4] + s.dq[:, 5], deadband)
        blocks.append(w)
    return np.concatenate(blocks, axis=2).reshape(N * n, -1)


def _normalised_system(
    model: pin.Model, train: list[States], armature: bool, wrist: bool, deadband: float = 0.0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(W / norms, tau, norms)``: the stacked training regressor with unit-norm columns (an
    all-zero column keeps norm 1) and the raw torques, for both least squares below."""
    W = np.vstack([ols_regressor(model, s, armature, wrist, deadband) for s in train])
    tau = np.concatenate([s.tau.reshape(-1) for s in train])
    norms = np.linalg.norm(W, axis=0)
    norms[norms == 0.0] = 1.0
    return W / norms, tau, norms


def ols_fit(
    model: pin.Model, train: list[States], armature: bool, wrist: bool, deadband: float = 0.0
) -> np.ndarray:
    """Minimum-norm least squares on normalised columns (no base-parameter bookkeeping)."""
    W, tau, norms = _normalised_system(model, train, armature, wrist, deadband)
    theta, *_ = np.linalg.lstsq(W, tau, rcond=None)
    return theta / norms


def consistent_ols_fit(
    model: pin.Model, train: list[States], armature: bool, wrist: bool
) -> tuple[np.ndarray, str]:
    """The same least squares as :func:`ols_fit`, restricted to physically consistent bodies.

    The yardstick of issue 72, the simplest physically consistent fit: the same regressor, rows,
    states and raw torques as :func:`ols_fit`, every body's pseudo-inertia
    ``[[tr(I)/2 1 - I, h], [h^T, m]]`` (Pinocchio's parameters about the joint frame:
    ``m, h = m c, I``) positive semidefinite (Wensing, Kim & Slotine, RA-L 2017), each joint's
    viscous and Coulomb friction and armature non-negative (the TX40 coupled wrist's rotor
    inertia, viscous and Coulomb terms too: positive gear products), the offsets free; no prior,
    no deadband, no delay, no tilt. It is what any physically consistent model of this class can
    reach with the scorer's own states: the gap between it and :func:`ols_fit` is the part of
    the plain OLS that no consistent model can have. The unidentifiable directions are held by a
    1e-6 tie-breaker toward the URDF's values (normalised columns), so the solver sees a bounded
    problem (it moves nothing the data decide); the returned status is CVXPY's (``optimal`` or
    ``optimal_inaccurate``).
    """
    import cvxpy as cp  # the benchmark's extra: CVXPY + Clarabel, as physid uses them

    W, tau, norms = _normalised_system(model, train, armature, wrist)
    # ||W x - tau||^2 = ||R x - Q^T tau||^2 + const: the solver sees p rows, not N n
    Q, R = np.linalg.qr(W)
    x = cp.Variable(W.shape[1])
    theta = cp.multiply(x, 1.0 / norms)
    n = model.nv
    urdf = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, n + 1)])
    constraints = []
    for b in range(n):
        p = theta[10 * b : 10 * b + 10]  # m, h_x, h_y, h_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz
        inertia = cp.bmat([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
        h = cp.reshape(p[1:4], (3, 1), order="F")
        pseudo = cp.bmat([[0.5 * cp.trace(inertia) * np.eye(3) - inertia, h],
                          [h.T, cp.reshape(p[0], (1, 1), order="F")]])  # fmt: skip
        constraints.append(0.5 * (pseudo + pseudo.T) >> 0)
    per_joint = 4 if armature else 3
    first = 10 * n
    for j in range(n):  # viscous, Coulomb (column order of ols_regressor), armature
        constraints += [theta[first + j * per_joint] >= 0, theta[first + j * per_joint + 1] >= 0]
        if armature:
            constraints.append(theta[first + j * per_joint + 3] >= 0)
    if wrist:  # the coupled wrist's rotor inertia, viscous and Coulomb (ols_regressor)
        constraints.append(theta[first + n * per_joint :] >= 0)
    inertial = np.arange(10 * n)
    tie = 1e-6 * cp.sum_squares(x[inertial] - urdf * norms[inertial])
    problem = cp.Problem(cp.Minimize(cp.sum_squares(R @ x - Q.T @ tau) + tie), constraints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an inaccurate solve is reported by its status
        problem.solve(solver=cp.CLARABEL)
    if x.value is None:
        return np.full(W.shape[1], np.nan), str(problem.status)
    return np.asarray(theta.value, float), str(problem.status)


# --------------------------------------------------------------------------------------------
# Independent scorer of a physid.params/1 document
# --------------------------------------------------------------------------------------------


def params_prediction(
    model: pin.Model, params: dict, s: States, deadband: float = 0.0
) -> np.ndarray:
    """Torques (N, n) predicted by a params.json document on the model's kinematics (the
    file's own Coulomb deadband per joint where it has one, else ``deadband``)."""
    model = model.copy()
    for joint, body in params["bodies"].items():
        model.inertias[model.getJointId(joint)] = pin.Inertia(
            float(body["mass"]), np.asarray(body["com"], float), np.asarray(body["inertia"], float)
        )
    gravity = params.get("extra", {}).get("gravity")
    if gravity is not None:
        model.gravity = pin.Motion(np.asarray(gravity, float), np.zeros(3))
    data = model.createData()
    tau = np.array([pin.rnea(model, data, *x) for x in zip(s.q, s.dq, s.ddq, strict=True)])
    bands = []
    for j, joint in enumerate(model.names[1:]):
        terms = params.get("joints", {}).get(joint, {})
        fv, fc, offset, ia = (float(terms.get(k, 0.0))
                              for k in ("viscous", "coulomb", "offset", "armature"))  # fmt: skip
        bands.append(terms.get("coulomb_deadband", deadband))
        sign = coulomb_sign(s.dq[:, j], bands[-1])
        tau[:, j] += fv * s.dq[:, j] + offset + ia * s.ddq[:, j]
        tau[:, j] += nonlinear_friction(terms, s.dq[:, j], sign) if "friction_model" in terms \
            else fc * sign  # fmt: skip
    coupled = params.get("extra", {}).get("coupled_motors", {}).get("m6")
    if coupled:  # TX40 README: joints 5 and 6 share motor 6 (motor speed in joint-side units)
        fc_sign = coulomb_sign(s.dq[:, 4] + s.dq[:, 5], bands[5])
        tau[:, 4] += coupled["Iam"] * s.ddq[:, 5] + coupled["fvm"] * s.dq[:, 5]
        tau[:, 5] += coupled["Iam"] * s.ddq[:, 4] + coupled["fvm"] * s.dq[:, 4]
        tau[:, 4] += coupled["fcm"] * fc_sign
        tau[:, 5] += coupled["fcm"] * fc_sign
    return tau


def nonlinear_friction(terms: dict, speed: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """The speed-dependent friction of a joint with a ``friction_model`` (physid.params/1,
    docs/identify.md section 10), from the published formulas: Stribeck
    ``sign (fc + (fs - fc) exp(-(dq / vs)^2))``; the sigmoid of Gaz et al. (RA-L 2019, eq. 14)
    ``phi1 / (1 + exp(-phi2 (dq + phi3))) - phi1 / (1 + exp(-phi2 phi3))``."""
    kind = terms["friction_model"]
    if kind == "linear":
        return float(terms.get("coulomb", 0.0)) * sign
    if kind == "stribeck":
        fc, fs = float(terms.get("coulomb", 0.0)), float(terms.get("static", 0.0))
        decay = np.exp(-np.square(speed / float(terms["stribeck_velocity"])))
        return sign * (fc + (fs - fc) * decay)
    if kind == "sigmoid":
        phi1, phi2, phi3 = (float(terms[k]) for k in ("phi1", "phi2", "phi3"))
        return phi1 / (1.0 + np.exp(-phi2 * (speed + phi3))) - phi1 / (1.0 + np.exp(-phi2 * phi3))
    raise ValueError(f"unknown friction_model {kind!r}")


def delayed_states(signal: Signals, states: States, delay_s: float) -> States:
    """``states`` read ``delay_s`` earlier (linear interpolation of the scorer's filtered
    states), against the torque as logged, on the samples whose ``t - delay_s`` stays inside
    the recording: how a model whose torque lags its motion by ``delay_s`` predicts the logged
    torque. The logged torque itself is never interpolated: reading it between samples would
    average its noise and score better for that alone."""
    if delay_s == 0.0:
        return states
    t = np.asarray(signal.t, float)
    kept = np.flatnonzero((t - delay_s >= t[0]) & (t - delay_s <= t[-1]))

    def earlier(x: np.ndarray) -> np.ndarray:
        return np.column_stack([np.interp(t[kept] - delay_s, t, column) for column in x.T])

    return States(earlier(states.q), earlier(states.dq), earlier(states.ddq), states.tau[kept])


def params_error(
    model: pin.Model, params: dict, signals: list[Signals], states: list[States],
    deadband: float = 0.0,
) -> float:  # fmt: skip
    """:func:`relative_error` of a params.json document's model on held-out recordings: its
    inertials, joint terms, gravity and the torque delay its identification compensated
    (``fit.torque_delay.compensated_s``: the torque logged at ``t`` is the model's torque of
    the motion at ``t - delay``)."""
    delay = float((params.get("fit", {}).get("torque_delay") or {}).get("compensated_s", 0.0))
    aligned = [delayed_states(signal, state, delay)
               for signal, state in zip(signals, states, strict=True)]  # fmt: skip
    return relative_error(aligned, [params_prediction(model, params, s, deadband)
                                    for s in aligned])  # fmt: skip


def relative_error(states: list[States], predictions: list[np.ndarray]) -> float:
    """||tau - tau_hat|| / ||tau||, every joint and recording stacked."""
    tau = np.concatenate([s.tau for s in states])
    return float(np.linalg.norm(tau - np.concatenate(predictions)) / np.linalg.norm(tau))
