"""A prior on the joint terms, and what the training motion can decide about them.

The inertial parameters have a prior (the URDF, through the entropic divergence of Lee, Wensing
and Park 2020); the joint terms (viscous, Coulomb, offset, armature, coupled-motor terms) need
one too, or a direction the data cannot see is fixed by noise. On a joint that turned one way
only, Coulomb ``fc sign(dq)`` and the offset are the same column: without a prior they can take
large opposite values that cancel on the training run and are wrong by their sum once the joint
turns back.

**The prior.** Each joint term ``theta_i`` has a Gaussian prior centred on the URDF's value
(``<dynamics damping friction>``, armature; 0 where the URDF says nothing) whose standard
deviation is stated in torque: its contribution to the torque of the joint ``j`` it acts on has
standard deviation ``rho_j * tau_rms_j``, the joint's RMS training torque times
:data:`JOINT_TERM_PRIOR_RELATIVE` (:data:`OFFSET_PRIOR_RELATIVE` for offsets: a constant that
large on every sample would be a torque-sensor fault):

    std_i = rho * tau_rms_j / rms(column_i),

with ``rms(column_i)`` the RMS of the term's regressor column on the training data (``dq`` for
viscous, ``sign(dq)`` for Coulomb, 1 for the offset, ``ddq`` for armature). It is weak where the
data speak (thousands of samples against one prior) and decides where they do not.

**One-way joints.** Where a joint moves one way only, ``sign(dq)`` is constant wherever it is
moving: the Coulomb level and the offset are not separable, and the few samples at rest (inside
the deadband, holding whatever static friction allows) would pick the split by accident. On
such a joint (the minority sign below :data:`ONE_WAY_SHARE` of its moving samples) the offset is
*held* at its prior: it is not fitted, the Coulomb level explains the torque of the way it
moved, and the offset's prior standard deviation is carried into the Coulomb level's (the
decided combination is ``fc s + offset`` with ``s`` the sign it moved with;
:func:`physid.offline.fit.uncertainty.posterior_covariance`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from physid.offline.observe.observations import Observations
from physid.robot.model import RobotModel, is_revolute

JOINT_TERM_PRIOR_RELATIVE = 1.0  # std of a term's torque / the joint's RMS torque
OFFSET_PRIOR_RELATIVE = 0.5
ONE_WAY_SHARE = 0.05  # minority velocity sign below this share of the moving samples
MOVING_NOISE_STDS = 3.0  # |dq| above this many velocity-noise stds (or the deadband) is motion


@dataclass(frozen=True)
class JointMotion:
    """How one joint moved in the training observations (as fitted)."""

    positive: float  # share of the samples with dq above the motion threshold
    negative: float  # ... below minus the threshold
    speed_low: float  # 10th percentile of |dq| over the moving samples (joint units / s)
    speed_high: float  # 90th percentile

    @property
    def moving(self) -> float:
        return self.positive + self.negative

    @property
    def one_way(self) -> bool:
        """Moves, but the minority direction is below :data:`ONE_WAY_SHARE` of the motion."""
        return self.moving > 0 and min(self.positive, self.negative) < ONE_WAY_SHARE * self.moving

    def as_dict(self) -> dict:
        return {
            "share_positive": self.positive,
            "share_negative": self.negative,
            "share_still": 1.0 - self.moving,
            "speed_p10": self.speed_low,
            "speed_p90": self.speed_high,
        }


@dataclass(frozen=True)
class JointPrior:
    """Prior of every standard parameter's joint-term entries (inertial entries: NaN std)."""

    mean: np.ndarray  # (p,) the URDF's values (0 where it says nothing)
    std: np.ndarray  # (p,) prior std of each joint term; NaN on the inertial parameters
    held: np.ndarray  # (p,) bool: fixed at the prior (the data cannot decide them)
    torque_rms: np.ndarray  # (n,) RMS training torque per joint
    motion: dict[str, JointMotion] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)  # parameter name -> why it is held

    def scaled(self, scale: float) -> JointPrior:
        """The same prior with every standard deviation times ``scale``."""
        return replace(self, std=self.std * scale)

    def holding(self, indices: list[int], names: list[str], why: str) -> JointPrior:
        """The same prior with the terms ``indices`` (named ``names``) held at their mean."""
        held = self.held.copy()
        held[indices] = True
        return replace(self, held=held, reasons={**self.reasons, **dict.fromkeys(names, why)})

    def precision(self) -> np.ndarray:
        """(p,) prior precision of the joint terms (0 on inertial and held parameters)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            precision = np.where(np.isfinite(self.std) & ~self.held, self.std**-2.0, 0.0)
        return precision

    def as_dict(self, model: RobotModel) -> dict:
        layout = model.layout
        terms = {
            layout.names[i]: {
                "prior": float(self.mean[i]),
                # a still joint's held terms have no prior std (0 in the fit, pipeline._held_still)
                "prior_std": None if self.held[i] and self.std[i] == 0.0 else float(self.std[i]),
                "held_at_prior": bool(self.held[i]),
            }
            for i in range(layout.n_inertial, layout.size)
        }
        return {
            "relative_std": JOINT_TERM_PRIOR_RELATIVE,
            "offset_relative_std": OFFSET_PRIOR_RELATIVE,
            "torque_rms": dict(zip(model.joint_names, self.torque_rms.tolist(), strict=True)),
            "terms": terms,
            "motion": {joint: m.as_dict() for joint, m in self.motion.items()},
            "held": dict(self.reasons),
        }


class ColumnStatistics:
    """What the joint-term prior reads of the training observations, accumulated chunk by
    chunk: per joint RMS torque (n,), per joint-term column RMS on each joint's row (n, t), and
    the velocities of every row (M, n)."""

    def __init__(self, n_inertial: int) -> None:
        self.n_inertial = n_inertial
        self._tau2: np.ndarray | None = None
        self._column2: np.ndarray | None = None
        self._speeds: list[np.ndarray] = []
        self._rows = 0

    def add(self, chunk: Observations) -> None:
        self.add_terms(chunk.tau, chunk.W[:, :, self.n_inertial :], chunk.dq)

    def add_terms(self, tau: np.ndarray, terms: np.ndarray, dq: np.ndarray) -> None:
        """Rows given as their torque (M, n), joint-term block (M, n, t) and velocities."""
        tau2 = np.sum(tau**2, axis=0)
        column2 = np.sum(terms**2, axis=0)  # (n, t)
        self._tau2 = tau2 if self._tau2 is None else self._tau2 + tau2
        self._column2 = column2 if self._column2 is None else self._column2 + column2
        self._speeds.append(dq)
        self._rows += len(tau)

    @classmethod
    def of(cls, model: RobotModel, chunks: Iterable[Observations]) -> ColumnStatistics:
        statistics = cls(model.layout.n_inertial)
        for chunk in chunks:
            statistics.add(chunk)
        return statistics

    def values(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = max(self._rows, 1)
        return (
            np.sqrt(self._tau2 / rows),
            np.sqrt(self._column2 / rows),
            np.concatenate(self._speeds),
        )


def joint_motion(dq: np.ndarray, threshold: np.ndarray) -> list[JointMotion]:
    """:class:`JointMotion` of every joint, motion being ``|dq| > threshold`` (per joint)."""
    motions = []
    for k in range(dq.shape[1]):
        speed = dq[:, k]
        positive = float(np.mean(speed > threshold[k]))
        negative = float(np.mean(speed < -threshold[k]))
        moving = np.abs(speed[np.abs(speed) > threshold[k]])
        low, high = np.percentile(moving, [10, 90]) if moving.size else (0.0, 0.0)
        motions.append(JointMotion(positive, negative, float(low), float(high)))
    return motions


def joint_prior(
    model: RobotModel,
    observations: Iterable[Observations] | ColumnStatistics,
    mean: np.ndarray,
    velocity_noise_std: np.ndarray | None,
    *,
    scale: float = 1.0,
) -> JointPrior:
    """The joint-term prior of ``model`` on these training observations (chunks, such as an
    :class:`~.store.ObservationStore`, or their statistics; module docstring); ``scale``
    multiplies every standard deviation."""
    layout = model.layout
    n_inertial = layout.n_inertial
    if not isinstance(observations, ColumnStatistics):
        observations = ColumnStatistics.of(model, observations)
    torque_rms, column_rms, dq = observations.values()
    std = np.full(layout.size, np.nan)
    held = np.zeros(layout.size, dtype=bool)
    floor = 1e-6 * max(float(np.max(torque_rms)), 1e-9)
    for offset, name in enumerate(layout.names[n_inertial:]):
        index = n_inertial + offset
        joint_k = int(np.argmax(column_rms[:, offset]))  # the row the term acts on most
        relative = OFFSET_PRIOR_RELATIVE if name.endswith(".offset") else JOINT_TERM_PRIOR_RELATIVE
        torque = max(scale * relative * torque_rms[joint_k], floor)
        std[index] = torque / max(column_rms[joint_k, offset], 1e-12)
    threshold = np.zeros(model.n_joints)
    if velocity_noise_std is not None:
        threshold = MOVING_NOISE_STDS * np.asarray(velocity_noise_std, float)
    if model.coulomb_deadband is not None:
        threshold = np.maximum(threshold, model.coulomb_deadband)
    motions = joint_motion(dq, threshold)
    reasons = {}
    for joint, motion in zip(model.joint_names, motions, strict=True):
        offset_index = layout.joint_term_index(joint, "offset")
        coulomb = any(layout.joint_term_index(joint, t) is not None for t in ("fc", "fs", "phi1"))
        if motion.one_way and coulomb and offset_index is not None:
            held[offset_index] = True
            way = "positive" if motion.positive > motion.negative else "negative"
            major = 100 * max(motion.positive, motion.negative)
            minor = 100 * min(motion.positive, motion.negative)
            reasons[layout.names[offset_index]] = (
                f"joint '{joint}' moved one way only ({major:.0f} % of samples with {way} speed, "
                f"{minor:.1f} % the other way): Coulomb friction and offset are not separable; "
                "the offset is "
                f"held at its prior {mean[offset_index]:.3g} +- {std[offset_index]:.2g} "
                f"{'N m' if is_revolute(model, joint) else 'N'} and "
                "the Coulomb level carries that uncertainty"
            )
    return JointPrior(
        mean.copy(),
        std,
        held,
        torque_rms,
        dict(zip(model.joint_names, motions, strict=True)),
        reasons,
    )
