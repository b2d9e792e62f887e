"""Joint state and parameter estimation (paper A §3-§4.4): initialise, run LM, compute the
linearised covariance; returns a :class:`MultibodyFit` whose ``status`` says how it ended.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from physid.budget import Budget
from physid.errors import InputError
from physid.multibody.covariance import parameter_sensitivity, residual_std
from physid.multibody.kinematics import np_box_minus_rows
from physid.multibody.lm import levenberg_marquardt
from physid.multibody.model import MultibodyModel
from physid.multibody.observe import NOISE_REF, init_cutoff, joint_noise, sample_steps
from physid.multibody.problem import Problem, Segment, States
from physid.multibody.simulate import configurations_from_joints
from physid.multibody.verdicts import at_bounds, bound_note


@dataclass(frozen=True)
class Recording:
    """Measured joint angles (N, m) and control signal (N, m) at times ``t`` (N,)."""

    t: np.ndarray
    angles: np.ndarray
    control: np.ndarray
    source: str = ""


@dataclass
class MultibodyFit:
    """Result of :func:`identify`. ``status`` is never replaced by an exception."""

    status: str
    converged: bool
    names: list[str]
    values: np.ndarray
    initial_values: np.ndarray
    std: np.ndarray
    covariance: np.ndarray
    singular_values: np.ndarray
    not_identifiable: list[str]
    iterations: int
    cost: float  # ||Dz||^2 with the weights (eq. 3.18)
    cost_per_step: float  # cost / number of time steps (the paper's MSE)
    observation_mse: float  # squared angle error [rad^2] per observed step (unweighted)
    impulse_mse: float  # unweighted impulse residuals squared / steps
    cost_history: list[float]
    gain_ratio_history: list[float]
    h: float
    kappa: float
    states: States
    segments: list[Segment]
    model: MultibodyModel
    seconds: float
    notes: list[str] = field(default_factory=list)
    state_iterations: int = 0  # LM iterations of the state-only start (:func:`consistent_states`)
    noise: dict[str, dict] = field(default_factory=dict)  # per joint: std [rad], source, weight
    init_filter_hz: list[float | None] = field(default_factory=list)  # per recording
    observed_steps: int = 0  # model steps carrying a measured sample (all recordings)
    at_bound: list[str] = field(default_factory=list)  # estimated parameters ending at a bound
    # the output-error refinement (physid.multibody.refine.Refinement) whose values this fit
    # carries, if any; ``states`` and the impulse residuals stay the equation-error fit's
    refinement: Any = None


def _at(grid: np.ndarray, t: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.column_stack([np.interp(grid, t, x[:, j]) for j in range(x.shape[1])])


def resample(
    recording: Recording,
    h: float,
    cutoff_hz: float | None | str = "auto",
    weights: np.ndarray | None = None,
) -> tuple[Segment, np.ndarray]:
    """The segment at the step ``h`` and the angles smoothed for initialisation (§4.4).

    Observations only at measured samples: a step nearest to a sample (within ``h / 2``,
    :func:`physid.multibody.observe.sample_steps`) carries that sample's angles with the
    per-joint ``weights`` (default 1); the other steps have weight 0 (their ``y`` is the linear
    interpolation, shown in the report only). The control is interpolated to every step. The
    initialisation angles are the recording filtered by a zero-phase 2nd-order Butterworth
    (forward and backward) at :func:`~physid.multibody.observe.init_cutoff` of ``cutoff_hz``,
    interpolated to the steps."""
    from scipy.signal import butter, filtfilt

    t, y = np.asarray(recording.t, float), np.asarray(recording.angles, float)
    fs = 1.0 / float(np.median(np.diff(t)))
    grid = t[0] + h * np.arange(int(np.floor((t[-1] - t[0]) / h + 1e-9)) + 1)
    if len(grid) < 3:  # before the filter, which a recording this short makes singular
        raise InputError(f"{recording.source}: fewer than 3 steps of h = {h} s in the recording")
    cutoff = init_cutoff(fs, cutoff_hz)
    smooth = y
    if cutoff is not None and len(t) > 12:
        b, a = butter(2, cutoff / (0.5 * fs))
        smooth = filtfilt(b, a, y, axis=0)
    control = np.asarray(recording.control, float)
    observed = _at(grid, t, y)
    w = np.zeros_like(observed)
    steps, samples = sample_steps(t, t[0], h, len(grid))
    observed[steps] = y[samples]
    w[steps] = 1.0 if weights is None else np.asarray(weights, float)
    return Segment(observed, _at(grid, t, control), w), _at(grid, t, smooth)


def initial_states(model: MultibodyModel, angles: np.ndarray, h: float) -> tuple:
    """Configurations at zero constraint violation (forward kinematics) and velocities by
    eq. 4.3, ``v_{k+1} = (q_{k+1} [-] q_k) / h`` (``v_0 = v_1``)."""
    Q = configurations_from_joints(model, angles)
    V = np_box_minus_rows(Q[1:], Q[:-1]) / h
    return Q, np.vstack([V[:1], V])


SCALE_SLOTS = (
    "mass",
    "Ixx",
    "Iyy",
    "Izz",
    "Ixy",
    "Ixz",
    "Iyz",
    "viscous",
    "shaft_inertia",
    "coulomb",
)


def check_scale_fixed(model: MultibodyModel, names: list[str], recordings: list[Recording]) -> None:
    """InputError when the estimate leaves the overall scale of the dynamics free.

    Scaling every mass, inertia, viscous coefficient, shaft inertia and motor gain by the same
    factor leaves the motion unchanged (up to the constraint compliance): the impulse residuals
    (eq. 3.7) scale with it, so the fit can drive them to zero by sending all of them to zero
    and match the angles exactly — a trivial optimum, not an estimate. The scale is fixed by one
    such number kept at a known value, or by a motor whose gain is known and whose control is
    not zero (the measured torque is the only absolute force a free swing has)."""
    wanted = set(names)
    for name, value in zip(model.names, model.values, strict=True):
        if name.rsplit(".", 1)[-1] in SCALE_SLOTS and value != 0.0 and name not in wanted:
            return
    for j, hinge in enumerate(model.hinges):
        gain = f"{hinge.name}.gain"
        driven = any(np.any(rec.control[:, j] != 0.0) for rec in recordings)
        if hinge.has_motor and driven and gain not in wanted and model.values[model.index(gain)]:
            return
    raise InputError(
        "every mass, inertia and friction coefficient is estimated and no motor of known gain "
        "acts: only their ratios are identifiable (the fit would send them all to zero); keep "
        "one of them at a known value (e.g. remove a body's mass from 'estimate')",
        source="estimate",
    )


def consistent_states(
    lm_args: tuple, p0: np.ndarray, lower: np.ndarray, upper: np.ndarray, **options: object
):  # noqa: ANN202
    """The states estimated with the parameters held at their start (a state-only LM, as the
    cross-validation of §4.5); returns its :class:`LMResult`. :func:`identify` restarts the
    joint LM from them when a mass or inertia collapsed to its lower bound and LM did not converge.

    Why: the filtered initial states of §4.4 violate the stiff hinge rows (measured on the real
    single arm, train_00 at h = 1e-2, kappa = 100: start cost 1.3e5, mostly the linear impulse
    rows of the chord velocities), so the first joint Gauss-Newton step carries a parameter step
    of a linearisation valid for the states only. With Stribeck friction that step threw the fit
    into a high-friction corner (J 1e-4 -> 0, r dmu 1e-3 -> 0.03, c 1 -> 18) which LM never
    left: 40 iterations, cost 4.6e-6 per step, 1000x the dry fit that the Stribeck model
    contains. From these states the same fit ends at 1.7e-9 (J 5.5e-5). Not the default start:
    on the Furuta problems of Table 1 it cost the joint LM more iterations than it saved."""
    residual, retract, x0, n_state = lm_args
    p = np.clip(p0, lower, upper)
    return levenberg_marquardt(residual, retract, x0, p, p, p, n_state, **options)


def collapsed(names: list[str], values: np.ndarray, start: np.ndarray, lower: np.ndarray) -> list:
    """Estimated masses and principal inertias that ended at their lower bound: within 1e-4 of
    their start value above it (LM halves a collapsing inertia per iteration and stops before
    the bound: measured 6.7e-10 from a start of 1e-4 on a synthetic Stribeck pendulum): a
    collapsed or unexcited body, never an estimate to use."""
    slots = ("mass", "Ixx", "Iyy", "Izz")
    return [
        n
        for n, v, s, lo in zip(names, values, start, lower, strict=True)
        if n.rsplit(".", 1)[-1] in slots and v - lo <= 1e-4 * max(abs(s), abs(lo), 1e-300)
    ]


SHRUNK_RATIO = 0.01  # a body's mass or principal inertia below this share of its start


def shrunk(names: list[str], values: np.ndarray, start: np.ndarray) -> list[str]:
    """Estimated masses and principal inertias that ended below :data:`SHRUNK_RATIO` of their
    start without reaching the bound (:func:`collapsed`): LM on a body the data cannot hold up
    drives it toward zero and stops on the way (issue 27's Furuta arm: 0.1 % of its start;
    a 20 Hz pendulum: 8e-7 from 3.9e-3), which no bound test sees. A start is the URDF's or the
    config's body: a hundredfold smaller one is a collapse, not a measurement."""
    slots = ("mass", "Ixx", "Iyy", "Izz")
    return [n for n, v, s in zip(names, values, start, strict=True)
            if n.rsplit(".", 1)[-1] in slots and abs(v) < SHRUNK_RATIO * abs(s)]  # fmt: skip


FRICTION_SLOTS = ("viscous", "dry", "stribeck_delta", "coulomb")


def friction_at_zero(names: list[str], values: np.ndarray, lower: np.ndarray) -> list[str]:
    """Estimated friction terms that ended at their lower bound 0 (within 1e-9 of it, or of
    1e-6 of the largest such term): the data did not decide them; reported as at the bound,
    not as a measured zero (issue 32 item 5: a real Furuta arm's dry friction went to 0 in every
    run with nothing said)."""
    friction = [k for k, n in enumerate(names) if n.rsplit(".", 1)[-1] in FRICTION_SLOTS]
    if not friction:
        return []
    scale = max(float(np.max(np.abs(values[friction]))), 1e-12)
    return [names[k] for k in friction if lower[k] == 0.0 and values[k] <= max(1e-9, 1e-6 * scale)]


def _solve(problem: Problem, states: States, p0, lower, upper, inequality, options: dict):  # noqa: ANN001, ANN202
    """The joint LM from ``states`` and the covariance at its end: ``(lm, sensitivity, notes)``."""
    lm = levenberg_marquardt(
        problem.residual,
        problem.retract,
        states,
        p0,
        lower,
        upper,
        problem.n_state_vars,
        inequality=inequality,
        **options,
    )
    if lm.J is None:
        lm.r, lm.J = problem.residual(lm.x, lm.p, True)
    layout, row = [], 0
    ns, m = problem.ns, problem.fn.n_obs
    for seg in problem.segments:
        n = len(seg.y)
        counts = np.count_nonzero(seg.w, axis=0)  # angle rows at measured samples only
        layout += [(row, ns, n), (row + n * ns, m, n, counts)]  # init + dynamics, then angles
        row += n * ns + n * m
    sens, notes = None, []
    if len(p0):
        try:
            sigma = residual_std(lm.r, layout)
            sens = parameter_sensitivity(lm.J, sigma, problem.n_state_vars, lm.p)
        except (ValueError, RuntimeError, np.linalg.LinAlgError) as error:
            notes.append(f"covariance not computed: {error}")
    return lm, sens, notes


# the most model steps of one fit (all recordings): 200 s at h = 1 ms; its Jacobian and
# normal equations grow with it (about 1 ms per step and LM iteration on a 1-hinge pendulum)
MAX_STEPS = 200_000
# the model step may be at most this many times finer than the recording's median sample
# period: a guard against t in ms (1000x). 50x, not 20x: a 20 Hz recording of a Furuta
# pendulum needs h = 1 ms for the discrete model to follow it (benchmarks/
# multibody_mujoco_furuta.py: the true parameters at h = 2.5 ms miss MuJoCo by 24 / 101 mrad RMS
# over 40 s, at 1 ms by 4.3 / 18 mrad)
MAX_UPSAMPLING = 50.0


def default_budget(steps: int, max_iterations: int) -> Budget:
    """The budget of a fit over ``steps`` model steps, shared by its LM runs (the fit, and when
    a body collapses the 10-iteration state-only start and the restart): as many iterations as
    they may take, and 20 s + 3 ms per step and allowed iteration of wall time (the pendulum
    fits of the tests take 0.3-2 ms per step and iteration on 2 loaded cores), so
    ``max_iterations`` binds first on any ordinary fit and the time stops only iterations that
    are far slower than they should be."""
    allowed = 2 * max_iterations + 10 + STATE_START_ITERATIONS
    return Budget(seconds=20.0 + 3e-3 * steps * allowed, iterations=allowed + 3)


def check_recordings(recordings: list[Recording], h: float) -> int:
    """The number of model steps of ``h`` over ``recordings``; an InputError when a value is
    not finite, when there are more steps
    than :data:`MAX_STEPS`, when ``h`` is :data:`MAX_UPSAMPLING` times finer than a
    recording's median sample period (time in ms?), or when no hinge moves beyond the noise of
    its angles (a pendulum at rest: every parameter would fit, e.g. viscous 250,001)."""
    if not (np.isfinite(h) and 0 < h <= 1.0):
        raise InputError(f"the model step must be in (0, 1] s, got {h!r}", source="h")
    steps, moving = 0, []
    for rec in recordings:
        t = np.asarray(rec.t, float)
        if len(t) < 3:
            raise InputError(f"only {len(t)} samples; at least 3 are needed", source=rec.source)
        for what, values in (("t", t), ("angles", rec.angles), ("control", rec.control)):
            bad = np.flatnonzero(~np.all(np.isfinite(np.reshape(values, (len(t), -1))), axis=1))
            if bad.size:
                raise InputError(f"{what} row {bad[0] + 1} is not finite", source=rec.source)
        period = float(np.median(np.diff(t)))
        if period > MAX_UPSAMPLING * h * (1 + 1e-9):  # (0.05 / 0.0025 is 20 + 1e-15)
            raise InputError(
                f"the median sample period is {period:.6g} s, {period / h:.3g}x the model step "
                f"h = {h:g} s (at most {MAX_UPSAMPLING:g}x): is t in seconds? Otherwise use a "
                "larger --dt",
                source=rec.source,
            )
        steps += int((t[-1] - t[0]) / h) + 1
        y = np.asarray(rec.angles, float)
        noise = np.median(np.abs(np.diff(y, 2, axis=0)), axis=0) / 0.6745 / np.sqrt(6)
        moving.append(np.ptp(y, axis=0) > np.maximum(10 * noise, 1e-6))
    if steps > MAX_STEPS:
        raise InputError(
            f"{steps} model steps of h = {h:g} s over the recordings, more than {MAX_STEPS}: "
            "use a larger --dt or shorter recordings",
            source="--dt",
        )
    if recordings and not np.any(moving):
        spans = ", ".join(f"{np.ptp(r.angles):.3g}" for r in recordings)
        raise InputError(
            f"no hinge moves beyond the noise of its angles (largest range per recording "
            f"{spans} rad): the recording cannot identify the dynamics"
        )
    return steps


# LM iterations of the state-only start of low-rate recordings (identify's state_start):
# measured on a 20 s Furuta release at 20 Hz, 30 mrad, h = 5 ms from the true parameters, 10
# iterations left the states at 0.38 (cost, 470x the noise floor) and the arm's Coulomb torque
# went to viscous friction (0.035 vs 0.05 N m); 40 reached 0.0097 and 0.039 N m
STATE_START_ITERATIONS = 40


def default_kappa(h: float) -> float:
    """The state error weight that weighs the impulse residuals like paper A's kappa = 100 at
    h = 0.01 s: ``100 (0.01 / h)^2``. An impulse residual is a force error times h, so a fixed
    kappa weighs the dynamics h^2 less at a finer step; measured: kappa = 100 at h = 1e-3 on the
    real single-arm pendulum is the overfitting regime of the paper's Fig. 7 (4-5 mrad 1-s
    simulation error), kappa = 1e4 there validates at 0.8-1.2 mrad (docs/multibody.md)."""
    return 100.0 * (0.01 / h) ** 2


def identify(
    model: MultibodyModel,
    recordings: list[Recording],
    *,
    h: float = 0.01,
    kappa: float | None = None,
    names: list[str] | None = None,
    cutoff_hz: float | None | str = "auto",
    noise: dict[str, float] | None = None,
    state_start: bool = False,
    max_iterations: int = 20,
    ptol: float = 1e-4,
    ftol: float = 1e-9,
    compile: bool = False,
) -> MultibodyFit:
    """Estimate the states and the parameters ``names`` (default: ``model.estimate``; ``[]``
    for state estimation only, as in the cross-validation of §4.5) from ``recordings``.
    ``compile``: evaluate the per-step functions as C code compiled once per machine and
    cached (:mod:`physid.multibody.compiled`); the first call pays the compilation.
    ``kappa`` (Omega^-1 = kappa I, §4.4) defaults to :func:`default_kappa` of ``h``.
    ``noise``: measurement noise [rad] per joint name (default ``model.noise``, the config's
    ``noise:``); joints it does not name get the noise estimated from the data
    (:mod:`physid.multibody.observe`), and each angle residual the weight
    ``min(1, NOISE_REF / sigma_j)``. ``cutoff_hz``: initialisation filter, ``"auto"`` (min(10 Hz,
    0.4 x Nyquist)), a frequency or None. ``state_start``: estimate the states at the start
    parameters first (:data:`STATE_START_ITERATIONS` iterations of :func:`consistent_states`)
    and start the joint LM from them. Not the default: it helped the Furuta at 20 Hz started at
    the true parameters (arm Coulomb torque 0.039 N m, truth 0.05; 0.035 after 10 state
    iterations) but stalled a
    pendulum at 20 Hz started 2x off in its inertia (Iyy +21 % vs -1 % without, 20 iterations)
    """
    start = time.perf_counter()
    steps = check_recordings(recordings, h)
    kappa = default_kappa(h) if kappa is None else float(kappa)
    names = list(model.estimate if names is None else names)
    for name in names:
        model.index(name)
    if names:
        check_scale_fixed(model, names, recordings)
    given = dict(model.noise if noise is None else noise)
    sigma, noise_source = joint_noise(recordings, model.joint_names, given)
    weights = np.minimum(1.0, NOISE_REF / sigma)
    resampled = [resample(rec, h, cutoff_hz, weights) for rec in recordings]
    filters = [init_cutoff(1.0 / float(np.median(np.diff(rec.t))), cutoff_hz) for rec in recordings]
    segments = [seg for seg, _ in resampled]
    problem = Problem(model, h, names, kappa, segments, compile)
    init = [initial_states(model, smooth, h) for _, smooth in resampled]
    states = States([q for q, _ in init], [v for _, v in init])
    p0 = np.array([model.values[model.index(n)] for n in names])
    lower, upper = model.bounds(names)
    budget = default_budget(steps, max_iterations)
    options = {"max_iterations": max_iterations, "ptol": ptol, "ftol": ftol, "budget": budget}
    inequality = model.triangle_inequalities(names)
    pre, notes = None, []
    if state_start and names:
        lm_args = (problem.residual, problem.retract, states, problem.n_state_vars)
        pre = consistent_states(
            lm_args,
            p0,
            lower,
            upper,
            max_iterations=STATE_START_ITERATIONS,
            ftol=ftol,
            budget=budget,
        )
        states = pre.x
        notes.append(
            f"states first estimated at the start parameters ({pre.iterations} it, cost "
            f"{pre.cost_history[0]:.3g} -> {pre.cost_history[-1]:.3g})"
        )
    lm, sens, more = _solve(problem, states, p0, lower, upper, inequality, options)
    notes += more
    at_bound = collapsed(names, lm.p, p0, lower)
    if at_bound and not lm.status.startswith("converged"):
        # a body collapsed and LM crawled on (train_00 of the real single arm: 40 iterations at
        # J = 0, cost still -2 % per iteration): restart from states consistent with the start,
        # keep the restart when it ends lower. A converged collapse is only reported: its
        # restart rescued the real single arm's four files together (J 3e-25 -> 7.0e-5, 1.6e-9
        # per step) but on the unexcited J_Axx of the Furuta swing-up it ended 10x higher and
        # took the 13-parameter test from 8.8 to 25.7 s
        lm_args = (problem.residual, problem.retract, states, problem.n_state_vars)
        pre = consistent_states(
            lm_args, p0, lower, upper, max_iterations=10, ftol=ftol, budget=budget
        )
        retry = _solve(problem, pre.x, p0, lower, upper, inequality, options)
        better = retry[0].cost_history[-1] < lm.cost_history[-1]
        notes.append(
            f"{', '.join(at_bound)} at the lower bound after {lm.status} (cost "
            f"{lm.cost_history[-1]:.3g}); restarted from states estimated at the start "
            f"parameters ({pre.iterations} it): cost {retry[0].cost_history[-1]:.3g}, "
            + ("kept" if better else "not kept")
        )
        if better:
            lm, sens, notes = retry[0], retry[1], notes + retry[2]
            at_bound = collapsed(names, lm.p, p0, lower)
    fitted = model.with_values(dict(zip(names, lm.p, strict=True)))
    r = lm.r
    n_steps = sum(len(s.y) for s in segments)
    obs_sq, imp_sq, row, n_obs = 0.0, 0.0, 0, 0
    ns, m = problem.ns, problem.fn.n_obs
    for seg in segments:
        n = len(seg.y)
        imp_sq += float(r[row : row + n * ns] @ r[row : row + n * ns]) / kappa
        w = seg.w.ravel()
        obs = r[row + n * ns : row + n * ns + n * m][w > 0] / w[w > 0]  # rad, unweighted
        obs_sq += float(obs @ obs)
        n_obs += int(np.count_nonzero(np.any(seg.w > 0, axis=1)))
        row += n * ns + n * m
    empty = np.zeros((0, 0))
    not_identifiable = [
        n
        for n, v, s in zip(names, lm.p, sens.std if sens else [], strict=False)
        if not np.isfinite(s) or s > abs(v)
    ]
    cost = float(r @ r)
    if at_bound:
        notes.append(
            f"{', '.join(at_bound)} ended at the lower bound: a collapsed or unexcited body, "
            "not an estimate (try a finer step h, a larger kappa or another start)"
        )
    small = [n for n in shrunk(names, lm.p, p0) if n not in at_bound]
    for name in small:
        k = names.index(name)
        notes.append(
            f"{name} = {lm.p[k]:.3g} ended below {100 * SHRUNK_RATIO:g} % of its start "
            f"{p0[k]:.3g}: a collapsing or unexcited body (then not an estimate, and its std "
            "does not describe it), or a start far off; try a finer step h, a larger kappa, "
            "another start, or fix it"
        )
    unseen = friction_at_zero(names, lm.p, lower)
    others = [
        (n, side)
        for n, side in at_bounds(names, lm.p, p0, lower, upper)
        if n not in at_bound and n not in unseen
    ]
    for name, side in [(n, "lower") for n in unseen] + others:
        notes.append(bound_note(name, side, float(lm.p[names.index(name)])))
    at_bound = [*at_bound, *unseen, *(n for n, _ in others)]
    ok = lm.status.startswith("converged") or lm.status == "max_iterations"
    return MultibodyFit(
        status=lm.status,
        converged=lm.status.startswith("converged"),
        names=names,
        values=lm.p.copy(),
        initial_values=p0,
        std=sens.std if sens else np.full(len(names), np.nan),
        covariance=sens.covariance if sens else empty,
        singular_values=sens.singular_values if sens else np.zeros(0),
        not_identifiable=not_identifiable,
        iterations=lm.iterations,
        cost=cost,
        cost_per_step=cost / n_steps,
        observation_mse=obs_sq / max(n_obs, 1),
        impulse_mse=imp_sq / n_steps,
        cost_history=lm.cost_history,
        gain_ratio_history=lm.gain_ratio_history,
        h=h,
        kappa=kappa,
        states=lm.x,
        segments=segments,
        model=fitted,
        seconds=time.perf_counter() - start,
        notes=notes
        + list(problem.fn.notes)
        + ([] if ok else [f"LM ended with status {lm.status}"]),
        state_iterations=pre.iterations if pre is not None else 0,
        noise={
            name: {"std": float(sd), "source": src, "weight": float(wt)}
            for name, sd, src, wt in zip(
                model.joint_names, sigma, noise_source, weights, strict=True
            )
        },
        init_filter_hz=filters,
        observed_steps=n_obs,
        at_bound=at_bound,
    )
