"""The least squares' row weighting the user's folds choose: plain (OLS) or per joint (WLS).

Paper C weights each joint's rows by the inverse of its residual standard deviation (Gautier's
WLS, eqs. 5-7 for heteroscedastic errors); the simplest consistent fit weights every row alike.
Which one predicts a robot better depends on what the residuals are: sensor noise (WLS is the
efficient estimator) or a misfit of the model (a joint the model explains worst is down-weighted,
and its misfit moves into the parameters it shares with the others). With ``estimation.weighting:
auto`` the training folds choose (:mod:`.selection`): the consistent fit with the default prior
under each weighting predicts the held-out folds' raw torque (:func:`~.crossval.cv_score`), and
plain OLS replaces paper C's WLS only where it beats it by more than the folds' spread. WLS is the
conservative candidate, not OLS: on real arms the folds rarely separate the two, and where they
cannot, WLS predicted held-out recordings better as often as not, by up to 3 % (a double
pendulum) where plain weighting lost. ``wls`` or ``ols`` imposes one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from physid.files.config import EstimationConfig
from physid.findings import Finding
from physid.offline.choose.choices import FitContext
from physid.offline.choose.selection import Choice, choose
from physid.offline.choose.training import TrainingData
from physid.offline.codes import WEIGHTING_CHOICE
from physid.offline.fit.consistent import ConsistentProblem
from physid.offline.fit.joint_prior import JointPrior
from physid.offline.observe.crossval import CVScore, cv_score
from physid.offline.observe.least_squares import LeastSquaresResult, least_squares
from physid.robot.model import RobotModel

AUTO = "auto"  # config estimation.weighting: the folds choose
CANDIDATES = ("wls", "ols")  # the conservative one first (module docstring)


@dataclass(frozen=True)
class Weighting:
    """The weighting used, its least-squares fit, and how it was chosen."""

    least_squares: LeastSquaresResult  # under the weighting used
    choice: Choice | None  # None: the config imposed it, or nothing was scored
    score: CVScore | None  # the consistent fit's cross-validated score under it, if scored

    @property
    def method(self) -> str:
        return self.least_squares.method

    def findings(self) -> list[Finding]:
        return [] if self.choice is None else [self.choice.as_finding()]


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
    if estimation.weighting != AUTO:
        return Weighting(least_squares(training.system, columns, estimation.weighting), None, given)
    fits = {label: least_squares(training.system, columns, label) for label in CANDIDATES}
    scores = []
    for label in CANDIDATES:
        if label == "wls" and given is not None:
            scores.append(replace(given, label=label))
            continue
        ls = fits[label]
        context = FitContext(ls.weights, ls.sigma2, joint, problem, estimation)
        scores.append(cv_score(label, model, training.folds, training.rows, context.fit()))
    choice = choose("least-squares weighting", scores, conservative=0, code=WEIGHTING_CHOICE.code)
    return Weighting(fits[choice.label], choice, scores[choice.chosen])
