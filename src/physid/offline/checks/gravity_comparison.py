"""How a recording's torques follow the URDF's static gravity torque (:func:`gravity_comparison`):
the measurement the torque checks (:mod:`.torque_checks`), the column fixes
(:mod:`.column_fixes`), the time-scale check and the plausibility of masses read.

Only ``g(q)`` is predicted, from the angles alone: it dominates the slow shoulder and elbow
joints of an arm and needs neither derivatives nor trustworthy URDF inertias. All signals are
low-passed and judged with derivatives per sample, so the comparison holds whatever unit the time
column is in.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pinocchio as pin

from physid.recordings.trajectory import Trajectory
from physid.robot.model import RobotModel
from physid.signal.butterworth import zero_phase_lowpass

# 3. Torques. All signals are low-passed at 10 Hz (the content of excitation trajectories lies
# well below it) and sampled at about 10 points per cut-off period.
FILTER_CUTOFF_HZ = 10.0


# A joint is gravity-loaded when the variation of its URDF gravity torque over the recording is
# at least 10 % of the largest joint's: the shoulder and elbow of an arm, not its wrist, whose
# small gravity torque is easily buried by friction and an imperfect CAD centre of mass (a real
# wrist's correlation with its gravity torque is near zero even when its column is right).
GRAVITY_JOINT_FRACTION = 0.1


# Below this variation [N m] the gravity torque is zero up to rounding: a horizontal robot.
GRAVITY_FLOOR_NM = 1e-3


# Correlations below this (after friction and inertia are taken out, see
# :func:`gravity_comparison`) mean "does not follow": gravity would explain < 9 % of the variance,
# far below what correct gravity-loaded joints show even on a few seconds of motion.
MIN_CORRELATION = 0.3


# A joint's gravity torque is "followed by another column" when that column at least halves the
# part that its own column leaves unexplained (1 - r^2), reaching a correlation >= 0.9.
SWAP_IMPROVEMENT = 0.5


SWAP_MIN_CORRELATION = 0.9


# Fewer filtered samples than this carry too little of a motion to judge torques on.
MIN_SAMPLES = 50


# Independent samples the comparison's signals carry over the recording (2 B T for a band B of
# duration T, Nyquist), less the nuisance columns taken out of each joint: below this many, the
# correlations and scales say nothing. The 95 % band of a zero correlation is +-0.75 at 5 and
# +-0.31 at 40, narrow enough that correct columns are no longer taken for a swap or a scale
# error (docs/benchmarks.md, "Why the defaults are what they are").
MIN_DEGREES_OF_FREEDOM = 40


NUISANCE_COLUMNS = 5  # ddq, dq, sign(dq), 1 and the URDF's inertial torque (_nuisance_columns)


@dataclass(frozen=True)
class GravityComparison:
    """How one recording's torques follow the URDF's gravity torque (see
    :func:`gravity_comparison`). Per-joint arrays cover ``joints`` (the gravity-loaded ones)."""

    joints: tuple[str, ...]  # gravity-loaded joints, model order
    scale: float  # robot-wide least-squares scale of recorded on gravity torque (stacked)
    correlation: float  # robot-wide correlation of recorded and gravity torque (stacked)
    joint_scales: np.ndarray  # (k,) per-joint scales
    joint_correlations: np.ndarray  # (k,) per-joint correlations
    swap: tuple[str, str, float, float] | None  # (joint, other column, r own, r other)
    # (k,) per-joint correlation of the recorded torque with the URDF's whole inverse dynamics
    # (derivatives per second), friction and offset taken out: see :func:`_model_correlations`
    model_correlations: np.ndarray | None = None
    # (k,) per-joint norm of the gravity torque over that of the recorded torque, both with the
    # nuisance columns taken out: how large the gravity torque at the URDF's scale would be
    gravity_shares: np.ndarray | None = None


def joint_correlations(
    model: RobotModel, trajectory: Trajectory, joints: tuple[str, ...]
) -> np.ndarray | None:
    """Each of ``joints``' torque correlation with its gravity torque (None: the recording
    cannot be judged)."""
    comparison = gravity_comparison(model, trajectory, diagnostics=False, loaded_joints=joints)
    return None if comparison is None else comparison.joint_correlations


def gravity_comparison(
    model: RobotModel,
    trajectory: Trajectory,
    *,
    diagnostics: bool = True,
    loaded_joints: tuple[str, ...] | None = None,
    band: CheckBand | None = None,
) -> GravityComparison | None:
    """Compare the recorded torques with the URDF's static gravity torque ``g(q)``.

    Only ``g(q)`` is predicted, from the angles alone: it dominates the slow shoulder and elbow
    joints of an arm and, unlike the inertial torque, needs neither derivatives nor trustworthy
    URDF inertias. The rest of the recorded torque is taken out per joint by least squares on
    ``[ddq_j, dq_j, sign(dq_j), 1]`` (armature and diagonal inertia, viscous and Coulomb friction,
    offset), from both the torque and the gravity torque, before scales and correlations are
    computed, together with the URDF's own inertial torque (free scale: the URDF inertias need
    not be right). These nuisance columns scale with the time unit, so the comparison holds even
    when ``t`` is not in seconds (derivatives are taken per sample).

    The robot-wide scale and correlation stack the gravity-loaded joints (gravity variation
    >= 10 % of the largest joint's). None when there is none (a horizontal robot: its gravity
    torques are constant) or the recording is too short to judge a correlation on
    (:data:`MIN_DEGREES_OF_FREEDOM`; with 10 Hz signals, about 2.3 s). ``diagnostics=False``
    leaves out the swap search and the whole-model correlations (``swap`` and
    ``model_correlations`` None): the scales and correlations alone, for the many comparisons of
    :func:`physid.offline.checks.column_fixes.best_fix`. ``loaded_joints``: compare these joints
    instead of the ones this recording's gravity loads (every fix is judged on the joints the
    recording as given was judged on). ``band``: the recording's :class:`CheckBand`, if held.
    """
    signals = check_signals(trajectory, columns_removed=NUISANCE_COLUMNS, band=band)
    if signals is None:
        return None
    q, tau, seconds_per_row = signals
    dq = np.gradient(q, axis=0)
    ddq = np.gradient(dq, axis=0)
    gravity, inertial = prior_torques(model, q, dq, ddq)
    variation = np.where(model.fitted, gravity.std(axis=0), 0.0)  # recorded torques only
    largest = float(variation.max(initial=0.0))
    if largest < GRAVITY_FLOOR_NM or q.shape[0] < MIN_SAMPLES:
        return None
    loaded = [int(j) for j in np.flatnonzero(variation >= GRAVITY_JOINT_FRACTION * largest)]
    if loaded_joints is not None:
        loaded = [model.joint_names.index(joint) for joint in loaded_joints]
    nuisance = {j: _nuisance_columns(dq[:, j], ddq[:, j], inertial[:, j]) for j in loaded}
    rt = {j: residual(nuisance[j], tau[:, j]) for j in loaded}
    rg = {j: residual(nuisance[j], gravity[:, j]) for j in loaded}
    gg = sum(float(rg[j] @ rg[j]) for j in loaded)
    if gg <= 0.0:
        return None
    scale = sum(float(rt[j] @ rg[j]) for j in loaded) / gg
    correlation = uncentred_correlation(
        np.concatenate([rt[j] for j in loaded]), np.concatenate([rg[j] for j in loaded])
    )
    joint_scales = np.array([float(rt[j] @ rg[j]) / float(rg[j] @ rg[j]) for j in loaded])
    joint_correlations = np.array([uncentred_correlation(rt[j], rg[j]) for j in loaded])
    shares = np.array([np.linalg.norm(rg[j]) / max(np.linalg.norm(rt[j]), 1e-300) for j in loaded])
    joints = tuple(model.joint_names[j] for j in loaded)
    if not diagnostics:
        return GravityComparison(
            joints,
            float(scale),
            float(correlation),
            joint_scales,
            joint_correlations,
            None,
            gravity_shares=shares,
        )
    # the inertial torque is quadratic in the time unit: per sample -> per second
    model_torque = gravity + inertial / seconds_per_row**2
    swap = _best_swap(model, tau, nuisance, rg, joint_correlations, model_torque, dq)
    return GravityComparison(
        joints,
        float(scale),
        float(correlation),
        joint_scales,
        joint_correlations,
        swap,
        _model_correlations(model_torque, dq, tau, loaded),
        shares,
    )


def independent_samples(trajectory: Trajectory) -> float:
    """Independent samples per joint of the comparison's band over the recording (2 B T)."""
    rate = trajectory.sample_rate_hz
    return 2.0 * cutoff_hz(rate) * trajectory.n_samples / rate


class CheckBand:
    """One recording's positions and torques low-passed for the torque checks (:func:`lowpass`
    at its sample rate), each filtered once, when a check first asks: the unit, torque,
    dead-encoder and time-scale checks of one recording read the same signals."""

    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory

    @cached_property
    def rate_hz(self) -> float:
        return self.trajectory.sample_rate_hz

    @cached_property
    def q(self) -> np.ndarray:
        return lowpass(np.asarray(self.trajectory.q, float), self.rate_hz)

    @cached_property
    def tau(self) -> np.ndarray:
        return lowpass(np.asarray(self.trajectory.tau, float), self.rate_hz)


def check_signals(
    trajectory: Trajectory, columns_removed: int, band: CheckBand | None = None
) -> tuple[np.ndarray, np.ndarray, float] | None:
    """The positions and torques the torque checks judge: low-passed at :func:`cutoff_hz` and
    kept at about ten rows per cut-off period, with the stamps' seconds per kept row; None when
    the recording is too short to judge (fewer than :data:`MIN_DEGREES_OF_FREEDOM` independent
    samples once ``columns_removed`` nuisance columns are taken out). ``band``: the recording's
    :class:`CheckBand`, when the caller holds it."""
    rate = trajectory.sample_rate_hz
    if not np.isfinite(rate) or trajectory.n_samples <= 4 * MIN_SAMPLES:
        return None
    if independent_samples(trajectory) - columns_removed < MIN_DEGREES_OF_FREEDOM:
        return None
    band = CheckBand(trajectory) if band is None else band
    step = max(1, int(rate / (10.0 * cutoff_hz(rate))))
    return band.q[::step], band.tau[::step], step / rate


def _model_correlations(
    model_torque: np.ndarray, dq: np.ndarray, tau: np.ndarray, loaded: list[int]
) -> np.ndarray:
    """Per loaded joint, the correlation of its recorded torque with the URDF's whole inverse
    dynamics ``M ddq + C dq + g`` in seconds (``model_torque``), viscous, Coulomb and offset
    (:func:`_friction_columns` of ``dq``) taken out of both.

    Why: a joint whose motion is driven faster than the pendulum it forms (a torque sinusoid above
    its natural frequency) has a torque in anti-phase with its angle, so its gravity torque and
    its torque run against each other while the inertial terms balance them; the gravity test
    alone then reads a correct column as a swapped one (a double pendulum under an open-loop
    torque above its natural frequency). Only an abstention: the gravity test stays the judge of
    time units and of swaps."""
    return np.array([_whole_model_correlation(model_torque, dq, tau[:, j], j) for j in loaded])


def _whole_model_correlation(
    model_torque: np.ndarray, dq: np.ndarray, column: np.ndarray, j: int
) -> float:
    """How a torque ``column`` follows joint ``j``'s whole inverse dynamics, joint ``j``'s
    friction and offset taken out of both."""
    friction = _friction_columns(dq[:, j])
    return uncentred_correlation(residual(friction, column), residual(friction, model_torque[:, j]))


def _best_swap(
    model: RobotModel,
    tau: np.ndarray,
    nuisance: dict[int, np.ndarray],
    rg: dict[int, np.ndarray],
    own_correlations: np.ndarray,
    model_torque: np.ndarray,
    dq: np.ndarray,
) -> tuple[str, str, float, float] | None:
    """A gravity-loaded joint whose gravity torque another torque column follows far better.

    For gravity-loaded joint a and any other joint b, column b (its friction and inertia taken out
    as if it were joint a's) is correlated with ``g_a``. Returned, as ``(a, b, r own, r other)``,
    when the other column reaches r >= 0.9 and at least halves the unexplained part ``1 - r^2`` of
    a's own column; the largest such gain wins. An own column of the opposite sign (r near -1) still
    explains its gravity torque: that is a sign flip on one joint, reported by
    :func:`_order_reason`, not a swap. On real data the own column is always the best (a joint's own
    torque contains its gravity torque, another's at best a similar shape): own r >= 0.89, best
    other r <= 0.79. Where b's gravity torque varies too (both loaded), an exchange must show both
    ways: column a must then follow ``g_b`` at least as well as b's own column does (over a few
    seconds two joints' gravity torques can have the same shape, and each column follow the other's
    as well as its own). The URDF's whole inverse dynamics (``model_torque``, per second) must
    agree: column b must follow joint a's whole-model torque better than a's own column does. On a
    short log a joint's gravity torque varies little beside its dynamics, and another joint's torque
    of a similar shape can follow it better while a's own column follows a's whole model far better.
    """
    best: tuple[float, tuple[str, str, float, float]] | None = None
    own = dict(zip(nuisance, own_correlations, strict=True))
    for a, r_own in own.items():
        for b in range(model.n_joints):
            if b == a:
                continue
            r_other = uncentred_correlation(residual(nuisance[a], tau[:, b]), rg[a])
            if r_other < SWAP_MIN_CORRELATION:
                continue
            unexplained_own = 1.0 - float(r_own) ** 2  # a sign-flipped own column explains
            unexplained_other = 1.0 - r_other**2
            if unexplained_other > SWAP_IMPROVEMENT * unexplained_own:
                continue
            if b in nuisance:  # an exchange of two loaded joints' columns shows both ways
                reverse = uncentred_correlation(residual(nuisance[b], tau[:, a]), rg[b])
                if reverse < float(own[b]):
                    continue
            whole_own = _whole_model_correlation(model_torque, dq, tau[:, a], a)
            if _whole_model_correlation(model_torque, dq, tau[:, b], a) <= whole_own:
                continue
            gain = unexplained_own / max(unexplained_other, 1e-12)
            if best is None or gain > best[0]:
                names = (model.joint_names[a], model.joint_names[b])
                best = (gain, (*names, float(r_own), r_other))
    return None if best is None else best[1]


def prior_torques(
    model: RobotModel, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The URDF's static gravity torque ``g(q)`` and inertial torque ``M ddq + C dq`` (N, n).

    The inertial torque is quadratic in the time unit (``ddq`` and ``dq dq`` alike), so with
    derivatives per sample it is the true one times a constant: good as a least-squares column
    whatever ``t`` is in.
    """
    pin_model = model.pin_model
    data = pin_model.createData()
    gravity = np.array([pin.computeGeneralizedGravity(pin_model, data, row) for row in q])
    full = np.array([pin.rnea(pin_model, data, *state) for state in zip(q, dq, ddq, strict=True)])
    return gravity, full - gravity


def _nuisance_columns(dq: np.ndarray, ddq: np.ndarray, inertial: np.ndarray) -> np.ndarray:
    """``[ddq, dq, sign(dq), 1, inertial]`` of one joint, unit-norm columns (zero ones dropped).

    What the recorded torque holds besides gravity: armature and diagonal inertia, viscous and
    Coulomb friction, a torque offset (:func:`_friction_columns`), and the URDF's full inertial
    torque (coupling and Coriolis terms, with a free scale). Unit norms keep the least squares
    well conditioned whatever the time unit makes of the derivatives.
    """
    return unit_columns([ddq, *_friction_columns(dq).T, inertial])


def _friction_columns(dq: np.ndarray) -> np.ndarray:
    """``[dq, sign(dq), 1]`` of one joint, unit-norm columns (zero ones dropped): viscous and
    Coulomb friction and a torque offset. The Coulomb sign is 0 below 2 % of the joint's
    99th-percentile speed, where the static friction of a joint at rest is anywhere in its band.
    Unchanged by the time unit of ``dq`` (relative threshold, unit norms)."""
    speed = float(np.percentile(np.abs(dq), 99.0))
    coulomb = np.where(np.abs(dq) > 0.02 * speed, np.sign(dq), 0.0)
    return unit_columns([dq, coulomb, np.ones_like(dq)])


def unit_columns(columns: list[np.ndarray]) -> np.ndarray:
    """The non-zero ``columns`` scaled to unit norm, side by side."""
    return np.column_stack([c / np.linalg.norm(c) for c in columns if np.linalg.norm(c) > 0.0])


def residual(columns: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``y`` minus its least-squares fit on ``columns``."""
    coefficients, *_ = np.linalg.lstsq(columns, y, rcond=None)
    return y - columns @ coefficients


def uncentred_correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Uncentred correlation (the residuals are already centred by the constant column)."""
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norm if norm > 0.0 else 0.0


def cutoff_hz(rate_hz: float) -> float:
    """10 Hz, or 20 % of the sample rate for slower (or mis-timed) recordings."""
    return min(FILTER_CUTOFF_HZ, 0.2 * rate_hz)


def lowpass(x: np.ndarray, rate_hz: float) -> np.ndarray:
    """Zero-phase 4th-order Butterworth at :func:`cutoff_hz` along axis 0 (no lag: the torque
    and the angle-derived signals stay aligned)."""
    return zero_phase_lowpass(x, rate_hz, cutoff_hz(rate_hz), 4)
