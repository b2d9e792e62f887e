"""The least squares' row weighting the user's folds choose: plain (OLS) or per joint (WLS).

Paper C weights each joint's rows by the inverse of its residual standard deviation (Gautier's
WLS, eqs. 5-7 for heteroscedastic errors); the simplest consistent fit weights every row alike.
Which one predicts a robot better depends on what the residuals are: sensor noise (WLS is the
efficient estimator, Aitken) or a misfit of the model (a joint the model explains worst is
down-weighted, and its misfit moves into the parameters it shares with the others). With
``estimation.weighting: auto`` the training folds choose (:mod:`.selection`): the consistent fit
with the default prior under each weighting predicts the held-out folds' raw torque
(:func:`~.crossval.cv_score`), and the other weighting replaces the conservative one only where
it beats it by more than the folds' spread.

The residuals say which weighting is conservative. Where they are white noise (the Newey-West
variance inflation of WLS's estimates, :func:`~.training.variance_inflation`, below
:data:`MISFIT_INFLATION`) paper C's WLS is, as its noise model assumes: the folds' torque error
cannot show what it buys (a joint 20 times noisier than the others hides every other joint's
gain), yet its parameters are the efficient ones. Where they are mostly a serially correlated
misfit, that argument fails and the simplest consistent fit, plain weighting, is the yardstick:
WLS must show its benefit on the folds. ``wls`` or ``ols`` imposes one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from physid.files.config import EstimationConfig
from physid.findings import Finding
from physid.offline.choose.choices import FitContext
from physid.offline.choose.selection import Choice, choose
from physid.offline.choose.training import TrainingData, robust_std, variance_inflation
from physid.offline.codes import WEIGHTING_CHOICE
from physid.offline.fit.consistent import ConsistentProblem
from physid.offline.fit.joint_prior import JointPrior
from physid.offline.observe.crossval import CVScore, cv_score
from physid.offline.observe.least_squares import LeastSquaresResult, least_squares
from physid.robot.model import RobotModel

AUTO = "auto"  # config estimation.weighting: the folds choose
CANDIDATES = ("wls", "ols")
# Newey-West over eq. 6 variance from which the residuals count as mostly misfit: their serially
# correlated part then contributes at least as much to the estimates' variance as a white noise
# of the same level would (measured values: docs/benchmarks.md, why the defaults are what they are)
MISFIT_INFLATION = 2.0


def misfit_dominated(inflation: float) -> bool:
    """Residuals whose variance ``inflation`` says they are mostly a serially correlated misfit:
    the simplest consistent fit is then every choice's conservative candidate."""
    return inflation >= MISFIT_INFLATION


@dataclass(frozen=True)
class Weighting:
    """The weighting used, its least-squares fit, and how it was chosen."""

    least_squares: LeastSquaresResult  # under the weighting used
    choice: Choice | None  # None: the config imposed it, or nothing was scored
    score: CVScore | None  # the consistent fit's cross-validated score under it, if scored
    serial_inflation: float = 1.0  # of WLS's estimates' variance (module docstring)

    @property
    def method(self) -> str:
        return self.least_squares.method

    @property
    def misfit_dominated(self) -> bool:
        """:func:`misfit_dominated` of these residuals (here and for the plausibility refit)."""
        return misfit_dominated(self.serial_inflation)

    def findings(self) -> list[Finding]:
        if self.choice is None:
            return []
        finding = self.choice.as_finding()
        why = (
            "mostly the model's misfit: the plain weighting is conservative"
            if self.misfit_dominated
            else "white noise: paper C's WLS is conservative"
        )
        message = (
            f"{finding.message}; the residuals are {why} (Newey-West variance inflation "
            f"{self.serial_inflation:.3g}, {MISFIT_INFLATION:g} and above: misfit)"
        )
        numbers = {**finding.numbers, "serial_inflation": self.serial_inflation}
        return [replace(finding, message=message, numbers=numbers)]


def choose_weighting(
    model: RobotModel,
    training: TrainingData,
    columns: np.ndarray,
    estimation: EstimationConfig,
    problem: ConsistentProblem,
    joint: JointPrior,
    given: CVScore | None = None,
) -> Weighting:
    """The weighting of ``estimation.weighting``, or with ``auto`` the one the folds choose
    (module docstring) for the consistent fit of ``model`` (its gravity) to the excited base
    ``columns`` under the joint terms' prior ``joint``. ``given``: the score the earlier choices
    computed for the same estimator on the same folds (under the weighting given, WLS for
    ``auto``)."""
    wls = least_squares(training.system, columns, "wls")
    inflation = variance_inflation(wls.std, robust_std(training, columns, wls))
    if estimation.weighting != AUTO:
        ls = least_squares(training.system, columns, estimation.weighting)
        return Weighting(ls, None, given, inflation)
    order = CANDIDATES[::-1] if misfit_dominated(inflation) else CANDIDATES  # conservative first
    scores = []
    for label in order:
        if label == "wls" and given is not None:
            scores.append(replace(given, label=label))
            continue
        ls = least_squares(training.system, columns, label)
        context = FitContext(ls.weights, ls.sigma2, joint, problem, estimation)
        scores.append(cv_score(label, model, training.folds, training.rows, context.fit()))
    choice = choose("least-squares weighting", scores, conservative=0, code=WEIGHTING_CHOICE.code)
    chosen = least_squares(training.system, columns, choice.label)
    return Weighting(chosen, choice, scores[choice.chosen], inflation)
