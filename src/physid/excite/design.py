"""Optimal excitation design (Swevers et al. 1997): a finite Fourier series per joint whose
coefficients maximise the information on the base parameters under the joint limits.

:func:`design_excitation` starts from a random Fourier excitation scaled into the limits
(:func:`scale_into_limits`, the same construction as the random baselines), solves the NLP of
:mod:`physid.excite.nlp` by IPOPT, and checks every limit again on a grid ten times denser than
the one the NLP used. Nothing is silently replaced: a solution that breaks a limit is said by
the finding EX202 (its status is not ok), a solver that stopped early by EX201 and its status
(IPOPT's return status mapped by :data:`physid.excite.nlp.IPOPT_STATUS`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from physid.errors import InputError
from physid.excite.codes import LIMITS_VIOLATED, NO_IMPROVEMENT, SOLVER_STOPPED
from physid.excite.criterion import CRITERIA, Criterion, condition_numbers
from physid.excite.fourier import FourierBasis
from physid.excite.geometry import GeometryConstraints
from physid.excite.limits import JointLimits, LimitCheck, NominalTorques, check_limits
from physid.excite.nlp import ExcitationProblem, SolveResult, solve
from physid.findings import Finding, as_dicts
from physid.robot.model import RobotModel
from physid.robot.regressor import BaseParameters, base_parameters
from physid.status import Status


@dataclass(frozen=True)
class ExcitationOptions:
    """What to design: bandwidth, criterion, grids and the solver's budget."""

    base_frequency_hz: float = 0.1
    harmonics: int = 5
    criterion: str = "cond"
    seed: int = 0
    margin: float = 0.02  # fraction kept away from every limit by the NLP
    prior_std_relative: float | None = None
    noise_std: float = 1.0  # N m
    constraint_points: int = 0  # per period; 0: 40 L, at least 200
    information_points: int = 0  # per period; 0: 12 L, at least 60
    max_iterations: int = 150
    starts: int = 3  # random starts (seeds seed, seed + 1, ...): the best criterion is kept
    # Wall-clock budget of the whole design [s], shared by the starts: enough for the default
    # starts and iterations on a 7-joint arm; a loaded machine ends at the best iterate so far.
    time_limit_s: float = 180.0

    def __post_init__(self) -> None:
        if self.criterion not in CRITERIA:
            raise InputError(f"--criterion: '{self.criterion}' is not one of {list(CRITERIA)}")
        if not (np.isfinite(self.base_frequency_hz) and self.base_frequency_hz > 0):
            raise InputError(f"--base-frequency: must be > 0, got {self.base_frequency_hz}")
        if not 1 <= self.starts <= 100:
            raise InputError(f"excitation.starts: must lie in [1, 100], got {self.starts}")
        if not 1 <= self.harmonics <= 50:
            raise InputError(f"--harmonics: must lie in [1, 50], got {self.harmonics}")
        if not self.time_limit_s > 0:
            raise InputError(f"excitation.time_limit_s: must be > 0, got {self.time_limit_s}")

    @property
    def n_constraint(self) -> int:
        return self.constraint_points or max(200, 40 * self.harmonics)

    @property
    def n_information(self) -> int:
        return self.information_points or max(60, 12 * self.harmonics)


@dataclass(frozen=True)
class Quality:
    """Information of one trajectory over one period (on the information grid)."""

    criterion: float  # the minimised criterion
    condition_number: float  # of the base regressor
    condition_number_scaled: float  # columns normalised
    logdet: float  # log det(W^T W / rows), rows = samples x joints


@dataclass(frozen=True)
class ExcitationResult:
    basis: FourierBasis
    coefficients: np.ndarray  # packed x
    start: np.ndarray  # packed x of the start
    quality: Quality
    start_quality: Quality
    limits: JointLimits
    limit_check: LimitCheck  # of the dense verification grid, against the true limits
    solver_status: Status  # what IPOPT's end means (physid.excite.nlp.IPOPT_STATUS)
    ipopt_status: str  # IPOPT's return status as it gave it (a solver detail)
    iterations: int
    seconds: float
    base: BaseParameters
    options: ExcitationOptions
    # what the geometry check covers and skips, how the solve ended (codes EX1xx, EX2xx)
    findings: tuple[Finding, ...] = field(default=())
    geometry: GeometryConstraints | None = None

    @property
    def status(self) -> Status:
        """The solver's status (``ok``, ``not_converged``, ``time_limit``, ``stalled``,
        ``numerical_failure``), or ``not_converged`` when the dense re-check (collisions and
        workspace included) finds a limit broken (the finding EX202 says which); how far it got
        is in :attr:`start_quality` against :attr:`quality`."""
        if not self.limit_check.ok:
            return Status.NOT_CONVERGED
        return self.solver_status

    def states(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.basis.evaluate(self.coefficients, t)

    def summary(self) -> dict:
        """The JSON summary written beside the trajectory (format ``physid.excitation/1``)."""
        offset, a, b = self.basis.unpack(self.coefficients)
        quality = lambda q: {  # noqa: E731
            "criterion": q.criterion,
            "condition_number": q.condition_number,
            "condition_number_scaled": q.condition_number_scaled,
            "logdet": q.logdet,
        }
        return {
            "format": "physid.excitation/1",
            "status": self.status,
            "method": "finite Fourier series (Swevers et al. 1997), IPOPT via CasADi",
            "criterion": self.options.criterion,
            "base_frequency_hz": self.basis.base_frequency_hz,
            "harmonics": self.basis.harmonics,
            "period_s": self.basis.period_s,
            "seed": self.options.seed,
            "starts": self.options.starts,
            "joints": list(self.limits.joint_names),
            "optimised": quality(self.quality),
            "start": quality(self.start_quality),
            "n_base_parameters": self.base.size,
            "limits": self.limits.as_dict(),
            "limit_use": {
                "position": self.limit_check.position,
                "velocity": self.limit_check.velocity,
                "acceleration": self.limit_check.acceleration,
                "torque": self.limit_check.torque,
            },
            "solver": {"ipopt_status": self.ipopt_status, "iterations": self.iterations},
            "seconds": self.seconds,
            "time_limit_s": self.options.time_limit_s,
            "collision": {
                "checked": self.geometry is not None and self.geometry.collision is not None,
                "pairs": []
                if self.geometry is None or self.geometry.collision is None
                else self.geometry.collision.pair_names(),
                "min_distance_constraint_m": None
                if self.geometry is None
                else self.geometry.min_distance,
                "min_distance_m": self.limit_check.min_distance
                if np.isfinite(self.limit_check.min_distance)
                else None,
            },
            "outside_workspace_m": self.limit_check.outside_workspace,
            "coefficients": {
                "offset_rad": offset,
                "a_rad_per_s": a,
                "b_rad_per_s": b,
                "convention": "q = q0 + sum_l a_l/(w l) sin(w l t) - b_l/(w l) cos(w l t)",
            },
            "findings": as_dicts(self.findings),
        }


def _centred(
    basis: FourierBasis,
    x: np.ndarray,
    scale: float,
    limits: JointLimits,
    t,
    centre: np.ndarray | None = None,
) -> np.ndarray:
    """``x`` with its amplitudes times ``scale`` and offsets putting each joint's range at
    ``centre`` (default: the middle of its limits)."""
    X = np.asarray(x, float).reshape(basis.n_joints, basis.per_joint).copy()
    X[:, 0] = 0.0
    X[:, 1:] *= scale
    q, _, _ = basis.evaluate(X.reshape(-1), t)
    middle = 0.5 * (limits.lower + limits.upper) if centre is None else centre
    X[:, 0] = middle - 0.5 * (q.max(axis=0) + q.min(axis=0))
    return X.reshape(-1)


# Where along each joint's range the start's motion may be centred when the middle of the
# ranges leaves it little room (fractions of the range from its lower end)
CENTRE_FRACTIONS = (0.1, 0.25, 0.5, 0.75, 0.9)
# The middle is kept when its scale is at least this share of what the kinematic limits allow
CENTRE_ROOM = 0.5
_BISECTIONS = 30
# Below this share of the kinematic scale a start does not move: its regressor is singular
STILL_SCALE = 1e-3


def scale_into_limits(
    basis: FourierBasis,
    x: np.ndarray,
    limits: JointLimits,
    torques: NominalTorques,
    t: np.ndarray,
    geometry: GeometryConstraints | None = None,
) -> np.ndarray:
    """The largest common scaling of ``x``'s amplitudes (offsets centred in the position range)
    that keeps positions, velocities, accelerations and nominal torques within ``limits`` on
    the times ``t``, and the bodies ``geometry.min_distance`` apart and inside the workspace:
    kinematic limits in closed form, the torque and the geometry by bisection.

    The motion is centred in the middle of the joint ranges unless the torque limits leave it
    less than :data:`CENTRE_ROOM` of the kinematic scale there. Then each joint's centre is
    moved in turn, once, to the fraction of its range (:data:`CENTRE_FRACTIONS`) that allows
    the largest scale. An arm held horizontal by the middle of its shoulder range can need
    nearly all of that joint's effort at rest; a start that cannot move has a singular
    regressor, and IPOPT never leaves it."""
    _check_joints_can_move(torques, limits)
    scaling = _Scaling(basis, x, limits, torques, t, geometry)
    centre = 0.5 * (limits.lower + limits.upper)
    best = scaling.largest(centre)
    most = scaling.kinematic(centre)  # the middle leaves the joints their whole ranges
    if best < CENTRE_ROOM * most:
        for j in range(basis.n_joints):
            for fraction in CENTRE_FRACTIONS:
                moved = centre.copy()
                moved[j] = limits.lower[j] + fraction * (limits.upper[j] - limits.lower[j])
                scale = scaling.largest(moved)
                if scale > best:
                    centre, best = moved, scale
    if best < STILL_SCALE * most:  # a start that does not move: IPOPT never leaves it
        raise InputError(
            "no excitation fits the limits: at rest (or within "
            f"{100 * STILL_SCALE:g} % of the motion the joint limits allow) at every centre tried "
            "the torque limits are below gravity's, a workspace frame is outside its box, or "
            "bodies are closer than excitation.min_distance; move the ranges "
            "(excitation.limits) or the box"
        )
    return _centred(basis, scaling.unit, best, limits, t, centre)


class _Scaling:
    """The common scales of a start's amplitudes (offsets zero: :attr:`unit`) about a centre of
    the joint ranges that the limits allow, on the times ``t`` (:func:`scale_into_limits`)."""

    def __init__(
        self,
        basis: FourierBasis,
        x: np.ndarray,
        limits: JointLimits,
        torques: NominalTorques,
        t: np.ndarray,
        geometry: GeometryConstraints | None,
    ) -> None:
        self.basis, self.limits, self.torques, self.t = basis, limits, torques, t
        self.geometry = geometry
        X = np.asarray(x, float).reshape(basis.n_joints, basis.per_joint).copy()
        X[:, 0] = 0.0
        q, dq, ddq = basis.evaluate(X.reshape(-1), t)
        self.unit = X.reshape(-1)
        self.span = 0.5 * np.maximum(np.ptp(q, axis=0), 1e-12)
        self.speed = limits.velocity / np.maximum(np.abs(dq).max(axis=0), 1e-12)
        self.acceleration = limits.acceleration / np.maximum(np.abs(ddq).max(axis=0), 1e-12)

    def fits(self, scale: float, centre: np.ndarray) -> bool:
        """Whether the motion scaled by ``scale`` about ``centre`` keeps every limit."""
        basis, limits, t = self.basis, self.limits, self.t
        states = basis.evaluate(_centred(basis, self.unit, scale, limits, t, centre), t)
        if not check_limits(limits, *states, self.torques.torques(*states)).ok:
            return False
        if self.geometry is None:
            return True
        distance, outside = self.geometry.check(states[0])
        return distance >= self.geometry.min_distance and outside <= 0.0

    def kinematic(self, centre: np.ndarray) -> float:
        """The largest scale about ``centre`` the position, velocity and acceleration limits
        allow (closed form)."""
        room = np.minimum(centre - self.limits.lower, self.limits.upper - centre) / self.span
        return float(min(room.min(), self.speed.min(), self.acceleration.min()))

    def largest(self, centre: np.ndarray) -> float:
        """The largest scale about ``centre`` (-1 when even rest there breaks a limit): the
        kinematic one if it fits, else by bisection."""
        high = self.kinematic(centre)
        if high > 0.0 and self.fits(high, centre):
            return high
        if not self.fits(0.0, centre):
            return -1.0
        low = 0.0
        for _ in range(_BISECTIONS):
            middle = 0.5 * (low + high)
            low, high = (middle, high) if self.fits(middle, centre) else (low, middle)
        return low


def _check_joints_can_move(torques: NominalTorques, limits: JointLimits) -> None:
    """An error line naming every joint whose nominal Coulomb friction and offset alone reach
    its effort limit: a periodic motion turns both ways, so no motion of it fits, and with one
    common amplitude scale no motion of any joint does: IPOPT would spend its whole budget and
    return a start that does not move."""
    least = np.abs(torques.coulomb) + np.abs(torques.offset)
    stuck = np.flatnonzero(least >= limits.effort)
    if stuck.size:
        names = torques.model.joint_names
        listed = ", ".join(
            f"'{names[k]}' (friction {least[k]:.4g}, effort limit {limits.effort[k]:.4g} after "
            "the margin; N m, or N for a prismatic joint)"
            for k in stuck
        )
        raise InputError(
            f"no excitation can move {listed}: the nominal Coulomb friction and offset alone "
            "reach the effort limit; hold the joint (config locked: {joint: position}) or give "
            "its limit (excitation.limits: {joint: {effort: ...}})"
        )


def prior_std_of_base(model: RobotModel, base: BaseParameters, relative: float) -> np.ndarray:
    """Prior std of each base parameter: ``relative`` x |its nominal value| (URDF parameters),
    floored at 1e-3 x the largest so an unknown parameter keeps some weight."""
    nominal = np.abs(base.from_standard(model.prior_parameters()))
    return relative * np.maximum(nominal, 1e-3 * max(float(nominal.max()), 1e-12))


def evaluate_quality(criterion: Criterion, basis: FourierBasis, x: np.ndarray, t) -> Quality:
    """Criterion, condition numbers and log-det of coefficients ``x`` on the times ``t``."""
    q, dq, ddq = basis.evaluate(x, t)
    W = criterion.base_regressor(q, dq, ddq)
    W = W.reshape(-1, W.shape[-1])
    cond, cond_scaled = condition_numbers(W)
    sign, logdet = np.linalg.slogdet(W.T @ W / W.shape[0])
    return Quality(
        criterion=criterion.value_and_gradient_in_w(W)[0],
        condition_number=cond,
        condition_number_scaled=cond_scaled,
        logdet=float(logdet) if sign > 0 else float("-inf"),
    )


@dataclass(frozen=True)
class _Candidate:
    """The result of one start: the coefficients returned and their quality and dense limit
    check, the start and its quality, IPOPT's solution and what is to be said about it."""

    x: np.ndarray
    quality: Quality
    check: LimitCheck
    start: np.ndarray
    start_quality: Quality
    solution: SolveResult
    findings: tuple[Finding, ...]


def _solve_from(
    problem, basis, limits, inner, torques, start, options, verbose, seconds, report
) -> _Candidate:
    """IPOPT from one start for at most ``seconds``; the start itself is kept if the optimiser
    ends worse (said so: :data:`~physid.excite.codes.NO_IMPROVEMENT`)."""
    criterion = problem.criterion
    t_information = basis.grid(options.n_information, shift=0.5)
    t_check = basis.grid(10 * options.n_constraint)
    solution = solve(
        problem,
        inner,
        start,
        max_iterations=options.max_iterations,
        verbose=verbose,
        time_limit_s=seconds,
        report=report,
    )
    x = basis.project_end_conditions(solution.x)  # remove IPOPT's ~1e-9 equality residual
    q, dq, ddq = basis.evaluate(x, t_check)
    check = check_limits(limits, q, dq, ddq, torques.torques(q, dq, ddq), problem.geometry)
    quality = evaluate_quality(criterion, basis, x, t_information)
    start_quality = evaluate_quality(criterion, basis, start, t_information)
    findings = []
    if quality.criterion >= start_quality.criterion:
        q, dq, ddq = basis.evaluate(start, t_check)
        start_check = check_limits(
            limits, q, dq, ddq, torques.torques(q, dq, ddq), problem.geometry
        )
        numbers = {"criterion": quality.criterion, "start_criterion": start_quality.criterion}
        if start_check.ok:  # said in the findings and the summary, never silent
            findings.append(
                NO_IMPROVEMENT(
                    "the optimiser did not improve on its start: the start is returned",
                    numbers=numbers,
                )
            )
            x, quality, check = start, start_quality, start_check
        else:
            findings.append(
                NO_IMPROVEMENT(
                    "the optimiser did not improve on its start (which breaks a limit: the "
                    "optimiser's result is returned)",
                    numbers=numbers,
                )
            )
    return _Candidate(x, quality, check, start, start_quality, solution, tuple(findings))


def design_excitation(
    model: RobotModel,
    limits: JointLimits,
    options: ExcitationOptions,
    *,
    start: np.ndarray | None = None,
    verbose: bool = False,
    geometry: GeometryConstraints | None = None,
    findings: tuple[Finding, ...] = (),
    progress: Callable[[str], None] | None = None,
) -> ExcitationResult:
    """Optimise a periodic Fourier excitation of ``model`` under ``limits`` (see the module
    docstring) and, if given, the self-collision and workspace constraints of ``geometry``
    (``findings``: what its check covers, for the summary). ``start``: packed coefficients to
    start from (default: ``options.starts`` random excitations of seeds ``seed, seed + 1, ...``
    scaled into the limits; the result of the best is returned, with its own start as
    ``start``). ``progress`` receives a line every few seconds (the command prints it on
    stderr); the starts share ``options.time_limit_s``."""
    began = time.perf_counter()
    deadline = time.monotonic() + options.time_limit_s
    basis = FourierBasis(options.base_frequency_hz, options.harmonics, model.n_joints)
    base = base_parameters(model)
    torques = NominalTorques(model)
    inner = limits.shrunk(options.margin)
    t_constraint = basis.grid(options.n_constraint)
    t_information = basis.grid(options.n_information, shift=0.5)
    if start is None:
        starts = [
            scale_into_limits(
                basis,
                basis.random(np.random.default_rng(options.seed + k)),
                inner,
                torques,
                t_constraint,
                geometry,
            )
            for k in range(options.starts)
        ]
    else:
        starts = [np.asarray(start, float)]
    criterion = _criterion(model, base, options, basis, starts[0], t_information)
    problem = ExcitationProblem(basis, criterion, torques, t_information, t_constraint, geometry)
    candidates = []
    for k, x0 in enumerate(starts):
        seconds = max(deadline - time.monotonic(), 0.0) / (len(starts) - k)
        report = _reporter(progress, k, len(starts), seconds)
        candidates.append(
            _solve_from(
                problem, basis, limits, inner, torques, x0, options, verbose, seconds, report
            )
        )
    # Within the limits first, then the lowest criterion.
    best = min(candidates, key=lambda c: (not c.check.ok, c.quality.criterion))
    return ExcitationResult(
        basis=basis,
        coefficients=best.x,
        start=best.start,
        quality=best.quality,
        start_quality=best.start_quality,
        limits=limits,
        limit_check=best.check,
        solver_status=best.solution.status,
        ipopt_status=best.solution.ipopt_status,
        iterations=best.solution.iterations,
        seconds=time.perf_counter() - began,
        base=base,
        options=options,
        findings=(*findings, *best.findings, *_verdict(best, options)),
        geometry=geometry,
    )


def _criterion(
    model: RobotModel,
    base: BaseParameters,
    options: ExcitationOptions,
    basis: FourierBasis,
    first_start: np.ndarray,
    t_information: np.ndarray,
) -> Criterion:
    """The design criterion of ``options`` (with the prior of ``prior_std_relative``); ``cond``
    without a prior scales the regressor's columns once, by the first start's norms, so that
    every start's criterion compares."""
    prior = (
        None
        if options.prior_std_relative is None
        else prior_std_of_base(model, base, options.prior_std_relative)
    )
    criterion = Criterion(model, base, options.criterion, prior, options.noise_std)
    if options.criterion != "cond" or prior is not None:
        return criterion
    q0, dq0, ddq0 = basis.evaluate(first_start, t_information)
    W0 = criterion.base_regressor(q0, dq0, ddq0)
    norms = np.linalg.norm(W0.reshape(-1, base.size), axis=0)
    return replace(criterion, column_scale=1.0 / np.maximum(norms, 1e-12 * norms.max()))


def _verdict(best: _Candidate, options: ExcitationOptions) -> list[Finding]:
    """What ended the design early (:data:`~physid.excite.codes.SOLVER_STOPPED`) and a limit
    the dense check finds broken (:data:`~physid.excite.codes.LIMITS_VIOLATED`)."""
    findings = []
    solution, check = best.solution, best.check
    if not solution.status.success:
        findings.append(
            SOLVER_STOPPED(
                f"IPOPT stopped before it converged ({solution.ipopt_status}, status "
                f"{solution.status}) after {solution.iterations} iterations (budget "
                f"{options.max_iterations}, time limit {options.time_limit_s:g} s): the trajectory "
                "is its best iterate within the limits",
                numbers={
                    "iterations": solution.iterations,
                    "max_iterations": options.max_iterations,
                    "time_limit_s": options.time_limit_s,
                },
            )
        )
    if not check.ok:
        use = {
            "position": check.position,
            "velocity": check.velocity,
            "acceleration": check.acceleration,
            "torque": check.torque,
        }
        broken = [name for name, value in use.items() if value > 1.0 + 1e-9]
        if check.min_distance <= 0.0:  # LimitCheck.ok's tests
            broken.append("self-collision")
        if check.outside_workspace > 0.0:
            broken.append("workspace")
        findings.append(
            LIMITS_VIOLATED(
                "the trajectory breaks its limits on the dense check: "
                f"{', '.join(broken) or 'a limit'} (use 1 = at the limit)",
                numbers={
                    **{f"{k}_use": v for k, v in use.items()},
                    "min_distance_m": check.min_distance,
                    "outside_workspace_m": check.outside_workspace,
                },
                names=broken,
            )
        )
    return findings


def _reporter(progress, start: int, starts: int, seconds: float, every_s: float = 5.0):
    """The iteration callback's report: a line at the first iteration and every ``every_s``."""
    if progress is None:
        return None
    began, last = time.monotonic(), [-np.inf]

    def report(iteration: int, value: float, best: float) -> None:
        now = time.monotonic()
        if now - last[0] < every_s:
            return
        last[0] = now
        progress(
            f"start {start + 1}/{starts}: iteration {iteration}, criterion {value:.4g} "
            f"(best within the limits {best:.4g}), {now - began:.0f} s of {seconds:.0f} s"
        )

    return report
