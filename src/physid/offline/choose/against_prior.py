"""Never worse than the robot's own model without saying so.

The identified model is scored on the same blocked folds of the training data (:mod:`.crossval`)
as two baselines a user would otherwise take: the URDF's own model (its inertias and
``<dynamics>``, nothing fitted) and plain least squares of the base parameters. If the
consistent fit predicts the held-out folds worse than the URDF, the data did not support the
freedom the prior gave them (one-way joints, short or slow runs, unmodelled effects): the fit
falls back toward the prior, every prior standard deviation scaled down along
:data:`PRIOR_SCALES`, and takes the first scale that predicts the folds at least as well as the
URDF. If none does, the result says so with the numbers, and its status is not ``ok``.

Plausible where the data cannot tell (:func:`plausible_prior`): a fit whose
masses are implausible (:func:`~.plausibility.implausible_masses`: a body outside 0.5-2 x, the
moving mass outside 0.8-1.25 x the URDF's) is refitted with the bodies' prior std scaled down
by the least factor that makes the masses plausible (bracketed on :data:`PRIOR_SCALES`, refined
by bisection); that fit is kept unless the
implausible one predicts the held-out folds better by more than the folds' spread
(:func:`~.selection.choose`, the plausible fit the conservative candidate). A fixed-base arm's
torques decide combinations of first moments and regrouped masses, not each body's mass: the
split among bodies is the prior's to make, and a 12.6 kg link where the CAD says 2.7 kg is the
data's misfit (elasticity, friction shapes) absorbed by a weak prior, unless the folds say
otherwise. On runs that repeat their motion the two fits are compared on folds by phase
(:meth:`~.folds.FoldPlan.by_phase`): time blocks of a repeated motion all share its misfit, so
they reward masses that absorb it, while quarter-periods the other folds never show test
whether the masses predict motion they were not fitted on. The joint terms' prior is not scaled
by this step.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from physid.findings import Finding
from physid.offline.checks.plausibility import implausible_masses, static_contradiction
from physid.offline.choose.selection import Choice, choose
from physid.offline.choose.training import TrainingData
from physid.offline.codes import (
    DATA_ASK_IMPLAUSIBLE,
    MASSES_LEFT_TO_DATA,
    PLAUSIBILITY_PRIOR,
    PRIOR_TIGHTENED,
    WORSE_THAN_URDF,
)
from physid.offline.observe.crossval import CVScore, cv_score, fixed_score, least_squares_fit
from physid.offline.observe.reduced import ReducedSystem
from physid.robot.model import RobotModel

PRIOR_SCALES = (1.0, 0.3, 0.1, 0.03)  # every prior std times this, tried in order
# Implausible masses are kept only if they predict the folds better by this share of the error,
# beyond the folds' spread: on nearly noise-free data the spread is tiny, and a gain of a tenth
# of a per cent is no reason to accept a link several times its CAD mass, while data that truly
# need other masses win by far more.
IMPLAUSIBLE_GAIN = 0.01
# Residuals mostly misfit: the plausible refit is taken where the data leave the masses
# undecided, every body's mass and the moving mass within this many of their posterior std
# (the fit with the default prior's) from where the data put them: 95 %, two-sided.
UNDECIDED_STD = 2.0
# The identified model predicts the folds "at least as well as the URDF" within this factor of
# the URDF's error. Where the URDF is the truth (a simulator's own model), both sit at the noise
# floor, and the fit's estimation error adds about p / 2N to it (1e-3 for 70 parameters over
# 30 s at 240 Hz), either way: without this tie a fit as good as the truth is called worse by
# chance. The held-out check's margin is a tenth (pipeline.HELD_OUT_MARGIN); a real misfit is
# many times beyond either.
URDF_TIE = 1.01


def as_good_as(score: CVScore, urdf: CVScore) -> bool:
    """Whether ``score`` predicts the folds at least as well as the URDF's ``urdf`` (a tie
    within :data:`URDF_TIE`)."""
    return score.total <= URDF_TIE * urdf.total


def percent_pair(worse: float, better: float) -> tuple[str, str]:
    """Two relative errors as percentages with the significant digits (3 to 6) that show which
    is larger: a warning that one model predicts worse must not read "5.64 % vs 5.64 %"."""
    for digits in range(3, 7):
        pair = (f"{100 * worse:.{digits}g}", f"{100 * better:.{digits}g}")
        if pair[0] != pair[1]:
            break
    return pair


@dataclass(frozen=True)
class PriorCheck:
    """Cross-validated errors of the identified model and of the two baselines."""

    identified: CVScore  # at the prior scale finally used
    urdf: CVScore
    ols: CVScore
    scale: float  # of the prior standard deviations in the final fit
    tried: tuple[CVScore, ...]  # every scale tried, in order
    body_scale: float = 1.0  # of the bodies' prior std on top of ``scale`` (plausible_prior)
    plausible: Choice | None = None  # implausible masses against a plausible refit, if any
    implausible: tuple[str, ...] = ()  # what was implausible at ``scale`` (before body_scale)
    by_phase: bool = False  # the plausibility choice judged on folds by phase (repeated runs)
    # the folds preferred the implausible fit, which the static torques contradict
    contradicted: bool = False
    # the plausible refit the misfit rule did not take (its bodies' prior scale and its score
    # on the time folds), for the check of what the data decide (stages.undecided)
    refit_scale: float | None = None
    refit_on_time: CVScore | None = None
    # the largest shift of a mass from the default fit to the refit, in the default fit's std
    mass_shift_std: float | None = None

    @property
    def better_than_urdf(self) -> bool:
        return as_good_as(self.identified, self.urdf)

    @property
    def refit_pending(self) -> bool:
        """A plausible refit the folds could not show better under the misfit rule, not yet
        weighed against what the data decide (:mod:`physid.offline.stages.undecided`)."""
        return self.refit_scale is not None and self.mass_shift_std is None

    def weighed(self, mass_shift_std: float) -> PriorCheck:
        """The check once the refit's largest mass shift (in the default fit's std) is known:
        the refit taken where the data leave the masses undecided (:data:`UNDECIDED_STD`) and
        it predicts the time folds as well as the URDF, else the default prior's fit kept."""
        kept = replace(self, mass_shift_std=mass_shift_std)
        on_time = self.refit_on_time
        if mass_shift_std > UNDECIDED_STD or on_time is None or not as_good_as(on_time, self.urdf):
            return kept
        return replace(kept, identified=on_time, body_scale=self.refit_scale)

    def note(self) -> str:
        line = (
            f"cross-validated error on raw training torque ({len(self.urdf.fold_errors)} blocked "
            f"folds): identified model {100 * self.identified.total:.3g} %, the URDF's own model "
            f"{100 * self.urdf.total:.3g} %, plain least squares {100 * self.ols.total:.3g} %"
        )
        if self.scale != 1.0:
            line += f"; prior standard deviations scaled by {self.scale:g}" + (
                " to get there" if self.better_than_urdf else " (the best tried, still worse)"
            )
        if self.body_scale != 1.0:
            line += f"; the bodies' prior std scaled by {self.body_scale:.2g} for plausible masses"
        return line

    def plausibility_findings(self) -> list[Finding]:
        """What the plausibility refit did (:func:`plausible_prior`), if it ran."""
        if self.plausible is None:
            return []
        seen = "; ".join(self.implausible)
        refit, given = self.plausible.scores
        folds = "training folds" + (
            " by phase (the runs repeat their motion)" if self.by_phase else ""
        )
        numbers = {
            "body_prior_scale": self.body_scale,
            "plausible_fit": refit.total,
            "implausible_fit": given.total,
        }
        if self.mass_shift_std is not None:  # weighed by stage 5b
            numbers["mass_shift_std"] = self.mass_shift_std
        if self.body_scale != 1.0 and self.contradicted:
            return [
                PLAUSIBILITY_PRIOR(
                    f"the prior decides the masses: with the default prior the fit had implausible "
                    f"masses ({seen}); the {folds} prefer it to the fit with the bodies' prior std "
                    f"x{self.body_scale:.2g} ({100 * given.total:.3g} % vs {100 * refit.total:.3g} "
                    f"%, {self.plausible.reason}); the plausible fit is reported",
                    numbers=numbers,
                )
            ]
        if self.body_scale != 1.0 and self.mass_shift_std is not None:
            return [
                PLAUSIBILITY_PRIOR(
                    f"the prior decides the masses: with the default prior the fit had implausible "
                    f"masses ({seen}); with the bodies' prior std x{self.body_scale:.2g} they are "
                    f"plausible, and every mass stays within {self.mass_shift_std:.2g} of its std "
                    "from where the data put it: the data leave them undecided, and the "
                    f"{folds} cannot tell the two fits apart ({100 * refit.total:.3g} % vs "
                    f"{100 * given.total:.3g} %)",
                    numbers=numbers,
                )
            ]
        if self.body_scale != 1.0:
            told = (
                "predict better with it" if self.plausible.conservative == 1
                else "cannot tell the two fits apart"
            )  # fmt: skip
            return [
                PLAUSIBILITY_PRIOR(
                    f"the prior decides the masses: with the default prior the fit had implausible "
                    f"masses ({seen}); with the bodies' prior std x{self.body_scale:.2g} they are "
                    f"plausible and the {folds} {told} "
                    f"({100 * refit.total:.3g} % vs {100 * given.total:.3g} %, "
                    f"{self.plausible.reason})",
                    numbers=numbers,
                )
            ]
        if self.plausible.conservative == 1:
            shift = (
                ""
                if self.mass_shift_std is None
                else f", and moves a mass {self.mass_shift_std:.2g} of its std"
            )
            return [
                MASSES_LEFT_TO_DATA(
                    f"the data decide the implausible masses (ID404): the residuals are mostly the "
                    f"model's misfit, so the prior is tightened only where the {folds} show the "
                    f"plausible fit (the bodies' prior std x{refit.label}) better, or where it "
                    f"keeps every mass within {UNDECIDED_STD:g} of its std; it predicts them at "
                    f"{100 * refit.total:.3g} % against the default fit's {100 * given.total:.3g} "
                    "%, within their spread" + shift,
                    numbers=numbers,
                )
            ]
        return [
            DATA_ASK_IMPLAUSIBLE(
                f"the data ask for these masses: the nearest plausible fit (the bodies' prior std "
                f"x{refit.label}) predicts the {folds} worse, {100 * refit.total:.3g} % vs "
                f"{100 * given.total:.3g} % ({self.plausible.reason})",
                numbers=numbers,
            )
        ]

    def findings(self) -> list[Finding]:
        """What the check against the URDF's own model and the plausibility refit found."""
        if self.better_than_urdf and self.scale == 1.0:
            return self.plausibility_findings()
        tried = ", ".join(f"x{s.label} {100 * s.total:.3g} %" for s in self.tried)
        numbers = {
            "prior_scale": self.scale,
            "identified": self.identified.total,
            "urdf": self.urdf.total,
            "ols": self.ols.total,
        }
        if self.better_than_urdf:
            first, urdf = percent_pair(self.tried[0].total, self.urdf.total)
            return [
                PRIOR_TIGHTENED(
                    f"with the default prior the identified model predicted the training "
                    f"folds worse than the URDF's own model ({first} % vs {urdf} %): the data "
                    "cannot support that much freedom; the prior standard deviations were "
                    f"scaled by {self.scale:g} (tried {tried})",
                    numbers=numbers,
                )
            ] + self.plausibility_findings()
        identified, urdf = percent_pair(self.identified.total, self.urdf.total)
        return [
            WORSE_THAN_URDF(
                f"the identified model predicts the training folds worse than the URDF's own model "
                f"even with a tight prior ({identified} % vs {urdf} %; tried {tried}): unmodelled "
                "effects, or data that cannot decide these parameters",
                numbers=numbers,
            )
        ]

    def as_dict(self) -> dict:
        return {
            "identified": self.identified.as_dict(),
            "urdf": self.urdf.as_dict(),
            "ols": self.ols.as_dict(),
            "prior_scale": self.scale,
            "tried": [s.as_dict() for s in self.tried],
            "better_than_urdf": self.better_than_urdf,
            "body_prior_scale": self.body_scale,
            "implausible_masses": list(self.implausible),
            "plausibility": None if self.plausible is None else self.plausible.as_dict(),
            "plausibility_folds": "phase" if self.by_phase else "time",
        }


# (system, scale of every prior std, scale of the bodies' prior std on top) -> standard
# parameters, or None when the solver fails
ConsistentFit = Callable[[ReducedSystem, float, float], np.ndarray | None]


def _fit_or_prior(
    fit: ConsistentFit, prior: np.ndarray, scale: float, body_scale: float = 1.0
) -> Callable[[ReducedSystem | None], np.ndarray]:
    """``fit`` at these prior scales as a fold fit (:func:`~.crossval.cv_score`): the prior
    itself where the solver fails (scored like any other model)."""

    def fitted(system: ReducedSystem | None) -> np.ndarray:
        theta = fit(system, scale, body_scale)
        return prior if theta is None else theta

    return fitted


def check_against_prior(
    model: RobotModel,
    urdf_model: RobotModel,
    training: TrainingData,
    columns: np.ndarray,
    prior: np.ndarray,
    fit: ConsistentFit,
    note: Callable[[str], None],
    first: CVScore | None = None,
) -> PriorCheck:
    """Score the consistent fit (``fit(system, scale)``, standard parameters or None when it
    fails) against the URDF (``prior`` on ``urdf_model``, its own gravity) and OLS (module
    docstring). ``first``: the fit's score at scale 1 when the choices already computed it
    (the same estimator on the same folds)."""
    note("cross-validation against the URDF's model")
    urdf = fixed_score("URDF", urdf_model, training.rows, prior)
    ols = cv_score(
        "OLS", model, training.folds, training.rows, least_squares_fit(columns, model.layout.size)
    )
    tried: list[CVScore] = []
    for scale in PRIOR_SCALES:
        if scale == 1.0 and first is not None:
            score = replace(first, label="1")
        else:
            score = cv_score(
                f"{scale:g}", model, training.folds, training.rows, _fit_or_prior(fit, prior, scale)
            )
        tried.append(score)
        if as_good_as(score, urdf):
            break
    best = tried[-1] if as_good_as(tried[-1], urdf) else min(tried, key=lambda s: s.total)
    return PriorCheck(best, urdf, ols, float(best.label), tuple(tried))


def plausible_prior(
    check: PriorCheck,
    model: RobotModel,
    training: TrainingData,
    prior: np.ndarray,
    fit: ConsistentFit,
    note: Callable[[str], None],
    by_phase: Callable[[], TrainingData] | None = None,
    static_ratios: Callable[[], dict[str, float]] | None = None,
    refit_conservative: bool = True,
) -> PriorCheck:
    """``check`` with the bodies' prior tightened where the masses are implausible and the
    folds cannot tell (module docstring); ``check`` itself when the masses are plausible or no
    tighter prior makes them so. ``refit_conservative`` False (residuals mostly misfit,
    :attr:`~.weighting.Weighting.misfit_dominated`): the fit with the default prior is the
    conservative candidate, and the tighter prior must predict the folds better beyond their
    spread, or the data leave the masses undecided (``refit_scale`` kept for stage 5b).
    ``by_phase``: the training data with folds by phase (:meth:`~.folds.FoldPlan.by_phase`),
    built when needed, for runs that repeat their motion: the two fits are then judged on
    motion the other folds do not contain (time blocks of a repeated excitation reward a fit
    that absorbs that motion's misfit into the masses).
    ``static_ratios``: the recordings' static torques against the URDF's gravity torque
    (:func:`~.plausibility.static_torque_ratios`), computed only when the masses are
    implausible: a fit they contradict (:func:`~.plausibility.static_contradiction`) is not
    kept for a better fold score."""
    theta = fit(training.system, check.scale, 1.0)
    seen = () if theta is None else tuple(implausible_masses(model, theta, prior))
    if not seen:
        return check
    note("plausible masses")
    body_scale = _weakest_plausible(model, training, prior, fit, check.scale)
    if body_scale is None:
        return replace(check, implausible=seen)

    def at(body_scale: float) -> Callable[[ReducedSystem | None], np.ndarray]:
        return _fit_or_prior(fit, prior, check.scale, body_scale)

    label = f"{body_scale:.2g}"
    judge = training if by_phase is None else by_phase()
    refit = cv_score(label, model, judge.folds, judge.rows, at(body_scale))
    given = replace(check.identified, label="1")
    if by_phase is not None:
        given = cv_score("1", model, judge.folds, judge.rows, at(1.0))
    choice = plausibility_choice(refit, given, refit_conservative)
    contradiction = None
    if choice.chosen == 1 and static_ratios is not None and theta is not None:
        contradiction = static_contradiction(model, theta, prior, static_ratios())
        choice = _contradicted(choice, contradiction)
    phased = by_phase is not None
    # the check against the URDF stays on the time blocks
    time_score = functools.partial(cv_score, label, model, training.folds, training.rows)
    if choice.chosen == 1 and not refit_conservative and contradiction is None:
        asked = plausibility_choice(refit, given)  # do the folds show the default fit better?
        if asked.chosen == 1:
            return replace(check, plausible=asked, implausible=seen, by_phase=phased)
        on_time = time_score(at(body_scale)) if phased else refit
        kept = replace(check, plausible=choice, implausible=seen, by_phase=phased)
        return replace(kept, refit_scale=body_scale, refit_on_time=on_time)
    if choice.chosen == 0:
        on_time = time_score(at(body_scale)) if phased else refit
        if as_good_as(on_time, check.urdf):
            return replace(
                check,
                identified=on_time,
                body_scale=body_scale,
                plausible=choice,
                implausible=seen,
                by_phase=phased,
                contradicted=contradiction is not None,
            )
    return replace(check, plausible=choice, implausible=seen, by_phase=phased)


def _contradicted(choice: Choice, contradiction: str | None) -> Choice:
    """``choice`` turned to the plausible fit when the static torques contradict the other."""
    if contradiction is None:
        return choice
    return replace(choice, chosen=0, reason=f"{choice.reason}, but {contradiction}")


def plausibility_choice(refit: CVScore, given: CVScore, refit_conservative: bool = True) -> Choice:
    """The plausible fit (``refit``, the conservative choice) or the one with the default prior
    (``given``, implausible masses): the latter only if it beats the former by more than the
    folds' spread and by :data:`IMPLAUSIBLE_GAIN` of the error. ``refit_conservative`` False:
    ``given`` is the conservative choice, and ``refit`` must beat it beyond the spread."""
    if not refit_conservative:
        return choose("bodies' prior", [refit, given], conservative=1)
    choice = choose("bodies' prior", [refit, given], conservative=0)
    gain = (refit.total - given.total) / refit.total if refit.total > 0 else 0.0
    if choice.chosen == 1 and gain < IMPLAUSIBLE_GAIN:
        choice = replace(
            choice,
            chosen=0,
            reason=(
                f"the conservative choice: 1 scores lower by "
                f"{100 * (refit.total - given.total):.2g} points, {100 * gain:.2g} % of the "
                "error: too little to ask for masses the URDF rules out"
            ),
        )
    return choice


BISECTIONS = 2  # halvings of the log-interval between the last implausible and first plausible


def _weakest_plausible(
    model: RobotModel, training: TrainingData, prior: np.ndarray, fit: ConsistentFit, scale: float
) -> float | None:
    """The largest bodies' prior scale (the least tightening) whose fit has plausible masses:
    bracketed on :data:`PRIOR_SCALES`, then :data:`BISECTIONS` geometric bisections (the
    tightening the masses need, not a step of the ladder more); None if even the tightest is
    implausible or fails."""

    def plausible(body_scale: float) -> bool:
        theta = fit(training.system, scale, body_scale)
        return theta is not None and not implausible_masses(model, theta, prior)

    low = high = None  # plausible (tighter) and implausible (looser) ends of the bracket
    previous = 1.0
    for candidate in PRIOR_SCALES[1:]:
        if plausible(candidate):
            low, high = candidate, previous
            break
        previous = candidate
    if low is None:
        return None
    for _ in range(BISECTIONS):
        middle = float(np.sqrt(low * high))
        if plausible(middle):
            low = middle
        else:
            high = middle
    return low
