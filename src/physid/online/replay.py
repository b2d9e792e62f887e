"""Run a recording through an online filter, sample by sample, and collect arrays (used by the
``physid online`` command, the examples and the benchmarks)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.body.inertia import inertia_vector_from_matrix, is_consistent, mass_com_inertia_from_pi
from physid.files.params_file import apply_inertias, read_params
from physid.findings import Finding
from physid.online.baseline import BaselineKF
from physid.online.codes import MODEL_FILE_FRICTION
from physid.online.columns import OnlineSignals, actuated_joints
from physid.online.config import OnlineConfig
from physid.online.ekf import InertialEKF, RecursiveInertialFilter
from physid.online.friction import JointFriction, joint_friction_from_params
from physid.online.results import quantity_jacobian
from physid.online.stream import Skip
from physid.robot.joint_locking import hold_at
from physid.robot.model import load_robot_file, refuse_coupled_mjcf

_CHUNK = 4096  # samples whose 10 x 10 covariances are held at once


def load_model(
    urdf: str | Path, config: OnlineConfig, locked: Mapping[str, float] | None = None
) -> pin.Model:
    """The URDF (free flyer if configured) with the joints of ``locked`` held at those
    positions (bodies beyond them merged into their parents, as identify's ``locked:``), then
    the bodies of ``config.nominal_params``."""
    model = hold_at(load_robot_file(urdf, floating_base=config.floating_base), locked or {})
    refuse_coupled_mjcf(model, urdf)
    if config.nominal_params is not None:
        model = apply_inertias(model, read_params(config.nominal_params))
    return model


def make_filter(
    model: pin.Model,
    bodies: Sequence[str],
    config: OnlineConfig,
    *,
    simulator_model: bool = False,
    signals: OnlineSignals | None = None,
) -> tuple[RecursiveInertialFilter, tuple[Finding, ...]]:
    """:class:`InertialEKF` or, with ``filter: kf``, the :class:`BaselineKF`, and the findings
    on its nominal joint terms.

    With ``config.nominal_params`` the joints' friction and armature of that file join the
    nominal model (:mod:`physid.online.friction`). Without it, a ``simulator_model`` (an MJCF:
    a simulator's description of what moves the robot) brings its own joint damping and
    frictionloss (its armature is already in the rigid-body dynamics), as ``physid oe`` does.

    The joint rows' measurement noise with ``measurement_noise.joint_torque: auto``: the
    nominal identification's residual per joint (``fit.train.rmse``), and, given the
    ``signals`` to be replayed, the noise the acceleration window puts on the torque through
    the mass matrix (:func:`differentiation_torque_std`) added in quadrature: the offline
    residual was computed on smoothed derivatives, the filter's are the window's. The residual
    part is scaled by ``sqrt(1 + 2 tau / dt)`` (:func:`serial_correlation_factor`): a misfit
    that stays correlated for ``tau`` seconds carries, sample by sample, that much less new
    information than white noise of the same std (the Newey-West argument of identify's
    standard deviations).
    """
    cls = BaselineKF if config.filter == "kf" else InertialEKF
    friction, findings, residual = None, (), None
    if config.nominal_params is not None:
        joints = actuated_joints(model)
        nominal = read_params(config.nominal_params)
        friction, findings = joint_friction_from_params(nominal, joints)
        residual = nominal.residual_rms(joints)
        if residual is not None and signals is not None:
            factor = serial_correlation_factor(nominal.residual_correlation_time(joints), signals)
            residual = np.hypot(
                residual * factor, differentiation_torque_std(model, signals, config)
            )
    elif simulator_model:
        friction, findings = model_joint_friction(model)
    return cls(model, bodies, config, friction, residual), findings


def serial_correlation_factor(
    correlation_time_s: NDArray[np.float64] | None, signals: OnlineSignals
) -> NDArray[np.float64] | float:
    """``sqrt(1 + 2 tau / dt)`` per joint for residual correlation times ``tau`` [s] and the
    recording's median sample period ``dt``: the std of white noise whose information per
    sample equals that of a residual correlated over ``tau`` (its long-run variance per
    sample); 1 without the times (a params.json of an older physid)."""
    if correlation_time_s is None or signals.n_samples < 2:
        return 1.0
    period = float(np.median(np.diff(signals.t)))
    if not period > 0:
        return 1.0
    return np.sqrt(1.0 + 2.0 * correlation_time_s / period)


def differentiation_torque_std(
    model: pin.Model, signals: OnlineSignals, config: OnlineConfig, configurations: int = 50
) -> NDArray[np.float64]:
    """Per actuated joint, the torque noise of the filter's windowed accelerations of
    ``signals`` (:func:`physid.online.window.acceleration_noise` with the configured window)
    through the mass matrix (:func:`physid.online.measurement.acceleration_torque_std`), the
    median over ``configurations`` evenly spaced samples."""
    from physid.online.measurement import acceleration_torque_std
    from physid.online.window import acceleration_noise

    n = signals.tau.shape[1]
    dq = None if signals.dq is None else signals.dq[:, -n:]
    joint_std = acceleration_noise(signals.t, signals.q[:, -n:], dq, config.window_samples)
    acceleration_std = np.zeros(model.nv)
    acceleration_std[model.nv - n :] = joint_std
    every = np.linspace(0, signals.n_samples - 1, min(configurations, signals.n_samples))
    q_samples = signals.q[every.astype(int)]
    q_samples = q_samples[np.all(np.isfinite(q_samples), axis=1)]
    if not len(q_samples):
        return np.zeros(n)
    return acceleration_torque_std(model, q_samples, acceleration_std)[model.nv - n :]


# Coulomb deadband of an MJCF's frictionloss in the online model [rad/s or m/s]: MuJoCo's dry
# friction is a soft constraint that passes through zero over a small speed range, not a sign
# (physid oe smooths it over the same speed)
MJCF_FRICTION_SPEED = 0.02


def model_joint_friction(model: pin.Model) -> tuple[JointFriction | None, tuple[Finding, ...]]:
    """The robot file's own joint damping and dry friction (Pinocchio's ``damping`` and
    ``friction`` of the actuated joints, e.g. an MJCF's ``damping`` and ``frictionloss``) as the
    online filter's nominal joint terms, and the finding that says so; None when it declares
    none."""
    joints = actuated_joints(model)
    first = model.nv - len(joints)  # after a free flyer's 6
    damping = np.asarray(model.damping, dtype=float)[first:]
    dry = np.asarray(model.friction, dtype=float)[first:]
    if not (np.any(damping) or np.any(dry)):
        return None, ()
    zeros = np.zeros(len(joints))
    friction = JointFriction(
        damping.copy(), dry.copy(), zeros, zeros.copy(), np.full(len(joints), MJCF_FRICTION_SPEED)
    )
    said = MODEL_FILE_FRICTION(
        "the nominal model includes the MJCF's joint damping and frictionloss (as viscous and "
        f"Coulomb friction, deadband {MJCF_FRICTION_SPEED:g}); a params.json (nominal_params) "
        "replaces them",
        numbers={"deadband_rad_per_s": MJCF_FRICTION_SPEED},
        names=joints,
    )
    return friction, (said,)


def quantities_from_pi(
    pi: NDArray[np.float64], covariance_pi: NDArray[np.float64] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """``[m, c, vech(I_c)]`` (..., 10) and their std from pi (..., 10) and its covariance.

    Bodies whose mass is not positive (the baseline KF only) give NaN there.
    """
    pi = np.asarray(pi, dtype=float)
    values = np.full(pi.shape, np.nan)
    ok = pi[..., 0] > 0.0
    if np.any(ok):
        mass, com, inertia = mass_com_inertia_from_pi(pi[ok])
        values[ok] = np.concatenate(
            [mass[..., None], com, inertia_vector_from_matrix(inertia)], axis=-1
        )
    if covariance_pi is None:
        return values, None
    std = np.full(pi.shape, np.nan)
    if np.any(ok):
        jac = quantity_jacobian(pi[ok])
        variance = np.einsum("...ij,...jk,...ik->...i", jac, covariance_pi[ok], jac)
        std[ok] = np.sqrt(np.clip(variance, 0.0, None))
    return values, std


@dataclass(frozen=True)
class ReplayResult:
    """Every streamed estimate of a replay, as arrays over the N samples.

    ``values`` and ``std`` are ``[mass, com_x, com_y, com_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``
    (inertia about the centre of mass, joint frame) per body, ``(N, n_bodies, 10)``;
    ``consistent`` is the :func:`physid.body.inertia.is_consistent` test of every streamed pi.
    """

    t: NDArray[np.float64]
    bodies: tuple[str, ...]
    pi: NDArray[np.float64]
    values: NDArray[np.float64]
    std: NDArray[np.float64]
    gated: NDArray[np.bool_]
    skipped: NDArray[np.bool_]
    calibrating: NDArray[np.bool_]
    nis: NDArray[np.float64]
    consistent: NDArray[np.bool_]
    skip_reasons: dict[Skip, int] = field(default_factory=dict)
    bias: NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))
    # rows whose emitted estimate was projected onto the consistent set (rounding, large scales)
    projected: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @property
    def n_updates(self) -> int:
        """Samples whose measurement update was applied."""
        return int(np.sum(~(self.gated | self.skipped | self.calibrating)))


def replay(
    filt: RecursiveInertialFilter, signals: OnlineSignals, *, progress: bool = False
) -> ReplayResult:
    """Feed every sample of ``signals`` to ``filt.update`` and collect what it streams."""
    from physid.progress import progress as progress_display

    n, nb = signals.n_samples, filt.n_bodies
    pi = np.empty((n, nb, 10))
    std = np.empty((n, nb, 10))
    values = np.empty((n, nb, 10))
    covariance = np.empty((min(n, _CHUNK), nb, 10, 10))
    gated, skipped, calibrating, projected = (np.zeros(n, dtype=bool) for _ in range(4))
    nis = np.full(n, np.nan)
    reasons: Counter[Skip] = Counter()
    wrenches = signals.wrenches
    steps = progress_display(range(n), desc="online", unit="sample", enabled=progress, leave=False)
    for k in steps:
        estimate = filt.update(
            signals.t[k],
            signals.q[k],
            None if signals.dq is None else signals.dq[k],
            signals.tau[k],
            None if wrenches is None else wrenches[k],
        )
        for b, body in enumerate(estimate.bodies):
            pi[k, b] = body.pi
            covariance[k % _CHUNK, b] = body.covariance_pi
        gated[k], skipped[k], projected[k] = estimate.gated, estimate.skipped, estimate.projected
        calibrating[k], nis[k] = estimate.calibrating, estimate.nis
        if estimate.skipped:
            reasons[estimate.reason] += 1
        if k % _CHUNK == _CHUNK - 1 or k == n - 1:
            start = k - k % _CHUNK
            chunk = slice(start, k + 1)
            values[chunk], std[chunk] = quantities_from_pi(pi[chunk], covariance[: k + 1 - start])
    # by chunks: the pseudo-inertias and eigenvalue workspace of every sample at once would be
    # a long replay's peak memory (some 0.3 GB at 1e6 samples)
    consistent = np.zeros((n, nb), dtype=bool)
    for start in range(0, n, _CHUNK):
        consistent[start : start + _CHUNK] = is_consistent(pi[start : start + _CHUNK])
    return ReplayResult(
        t=np.asarray(signals.t, dtype=float),
        bodies=filt.bodies,
        pi=pi,
        values=values,
        std=std,
        gated=gated,
        skipped=skipped,
        calibrating=calibrating,
        nis=nis,
        consistent=consistent,
        skip_reasons=dict(reasons),
        bias=filt.calibration.bias.copy(),
        projected=projected,
    )
