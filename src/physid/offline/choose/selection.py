"""Defaults that the user's own data choose: blocked cross-validation between candidates, with
the conservative candidate winning unless another is clearly better (issue 24).

physid's defaults were once chosen on its own simulations; one of them (the derivative cut-off
at the positions' whole measurable band) won there and took a real arm from 2.8 % to 24.5 %
held-out error. Now every choice the data can make (Butterworth cut-off, Coulomb deadband,
gravity tilt, prior strength) is made per run: each candidate is fitted on every fold of the
training recordings but one and predicts that fold's raw torque (:mod:`.crossval`); the lowest
cross-validated error wins only if it beats the conservative candidate by more than the folds'
spread (the mean of the paired per-fold differences plus their standard deviation must stay
below zero). Scores and the choice are printed and written into ``params.json``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.findings import Finding, Severity
from physid.offline.observe.crossval import CVScore


@dataclass(frozen=True)
class Choice:
    """One cross-validated choice: every candidate's score, the chosen and the conservative."""

    what: str  # "Butterworth cut-off", "Coulomb deadband", "gravity tilt", ...
    scores: tuple[CVScore, ...]
    chosen: int
    conservative: int
    reason: str
    suspect: Finding | None = None  # what the choice found wrong with the data
    code: str = ""  # the finding code of the choice (physid.offline.codes)

    @property
    def label(self) -> str:
        return self.scores[self.chosen].label

    def note(self) -> str:
        """One line: what was chosen, why, and every candidate's cross-validated error."""
        if not any(np.isfinite(s.total) for s in self.scores):  # decided without scoring
            return f"{self.what}: {self.reason}"
        listed = ", ".join(
            f"{s.label} {100 * s.total:.3g} %"
            + (" (conservative)" if k == self.conservative else "")
            for k, s in enumerate(self.scores)
        )
        return (
            f"{self.what}: {self.label}, {self.reason} (blocked {len(self.scores[0].fold_errors)}"
            f"-fold cross-validated error on raw training torque: {listed})"
        )

    def as_finding(self) -> Finding:
        """The choice as an ``info`` finding: its note, and every candidate's cross-validated
        error (``<label>``) in the numbers."""
        numbers = {s.label: s.total for s in self.scores if np.isfinite(s.total)}
        return Finding(self.code, Severity.INFO, self.note(), numbers, (self.label,))

    def as_dict(self) -> dict:
        return {
            "chosen": self.label,
            "conservative": self.scores[self.conservative].label,
            "reason": self.reason,
            "candidates": [s.as_dict() for s in self.scores],
        }


def choose(what: str, scores: list[CVScore], conservative: int = 0, *, code: str = "") -> Choice:
    """The candidate with the lowest cross-validated error, unless it beats the conservative
    one by less than the folds' spread (module docstring); ``code``: the choice's finding code."""
    totals = np.array([s.total if np.isfinite(s.total) else np.inf for s in scores])
    best = int(np.argmin(totals))
    if best == conservative:
        return Choice(
            what,
            tuple(scores),
            best,
            conservative,
            "the conservative choice scores best",
            code=code,
        )
    difference = scores[best].fold_errors - scores[conservative].fold_errors
    difference = difference[np.isfinite(difference)]
    spread = float(np.std(difference, ddof=1)) if difference.size > 1 else np.inf
    if difference.size and float(np.mean(difference)) + spread < 0.0:
        reason = (
            f"better than the conservative choice on the folds by {100 * -np.mean(difference):.2g}"
            f" points (spread {100 * spread:.2g})"
        )
        return Choice(what, tuple(scores), best, conservative, reason, code=code)
    reason = (
        f"the conservative choice: {scores[best].label} scores lower by "
        f"{100 * (totals[conservative] - totals[best]):.2g} points, less than the folds' spread"
    )
    return Choice(what, tuple(scores), conservative, conservative, reason, code=code)
