"""Blocked cross-validation on the RAW training torque: a fit on every fold but one predicts the
torque measured in that fold, at the recording's own samples.

The score is the one users judge a model by (``physid validate``): the positions differentiated
with the candidate's own filter, the measured torque as recorded, neither low-passed nor
decimated (:mod:`.prediction`). Scoring on the filtered, decimated observations instead would
reward a candidate for what its own filter removed. Each fold is scored on at most
:data:`MAX_SCORING_ROWS` raw samples in all (every k-th), away from the recordings' ends where
the derivatives lean on extrapolation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from physid.files.config import FilterConfig
from physid.offline.folds import FoldPlan, leave_out
from physid.offline.passes import recorded_windows
from physid.offline.reduced import ReducedSystem
from physid.offline.windows import Recording, plan_recording
from physid.robot.model import RobotModel, gravity_of
from physid.robot.regressor import inertial_regressor, joint_term_regressor

MAX_SCORING_ROWS = 4_000


@dataclass(frozen=True)
class RawRows:
    """Raw training samples of one fold: the candidate filter's states and the measured torque."""

    q: np.ndarray  # (M, n)
    dq: np.ndarray
    ddq: np.ndarray
    tau: np.ndarray
    # inertial regressors already built, by gravity vector (candidates share them)
    _inertial: dict = field(default_factory=dict, repr=False, compare=False)

    def regressor(self, model: RobotModel) -> np.ndarray:
        """(M, n, p) standard regressor of ``model`` (its gravity, deadband) at these states."""
        key = tuple(np.round(gravity_of(model), 12))
        if key not in self._inertial:
            self._inertial[key] = inertial_regressor(model, self.q, self.dq, self.ddq)
        joint_terms = joint_term_regressor(model, self.dq, self.ddq)
        return np.concatenate([self._inertial[key], joint_terms], axis=-1)


def raw_rows(
    model: RobotModel,
    recordings: list[Recording],
    options: FilterConfig,
    folds: FoldPlan,
    max_rows: int = MAX_SCORING_ROWS,
) -> list[RawRows]:
    """Every k-th raw sample of the training recordings, grouped by fold, with the states of
    ``options``' filter (the edges left out as in the fit, :class:`~.windows.RecordingPlan`)."""
    total = sum(r.n_samples for r in recordings)
    stride = max(1, int(np.ceil(total / max_rows)))
    parts: list[list[tuple[np.ndarray, ...]]] = [[] for _ in range(folds.n_folds)]
    for index, recording in enumerate(recordings):
        plan = plan_recording(model, recording, options)
        t0, t1 = recording.t[0] + plan.edge_s, recording.t[-1] - plan.edge_s
        start = 0
        for owned, q, dq, ddq in recorded_windows("crossval", recording, plan):
            rows = np.flatnonzero((start + np.arange(owned.n_samples)) % stride == 0)
            start += owned.n_samples
            t = owned.t[rows]
            rows = rows[(t >= t0) & (t <= t1)]
            fold_of_row = folds.fold(index, owned.t[rows])
            for k in range(folds.n_folds):
                pick = rows[fold_of_row == k]
                if pick.size:
                    parts[k].append((q[pick], dq[pick], ddq[pick], owned.tau[pick]))
    n = model.n_joints
    empty = np.zeros((0, n))
    return [
        RawRows(*(np.concatenate([p[i] for p in fold]) if fold else empty for i in range(4)))
        for fold in parts
    ]


@dataclass(frozen=True)
class CVScore:
    """Cross-validated relative error of one candidate: per fold and over all folds."""

    label: str
    fold_errors: np.ndarray  # (K,) ||tau - tau_hat|| / ||tau|| of each held-out fold
    total: float  # over every held-out sample of every fold

    def as_dict(self) -> dict:
        return {"label": self.label, "relative_error": self.total,
                "fold_relative_errors": self.fold_errors.tolist()}  # fmt: skip


Fit = Callable[[ReducedSystem | None], np.ndarray]


def cv_score(
    label: str,
    model: RobotModel,
    systems: list[ReducedSystem] | None,
    rows: list[RawRows],
    fit: Fit,
    regressors: list[np.ndarray] | None = None,
) -> CVScore:
    """Fit on every fold but ``k`` (``fit`` of their reduced system), predict fold ``k``'s raw
    torque with ``model``'s regressor (or the given per-fold ``regressors``). ``systems`` None:
    ``fit`` ignores the data (a fixed model, :func:`fixed_score`)."""
    fitted = model.fitted
    errors, residual2, measured2 = [], 0.0, 0.0
    for k, fold in enumerate(rows):
        if len(fold.tau) == 0 or (systems is not None and systems[k].n_samples == 0):
            errors.append(np.nan)
            continue
        theta = fit(None if systems is None else leave_out(systems, k))
        W = fold.regressor(model) if regressors is None else regressors[k]
        predicted = W @ theta
        r2 = float(np.sum((fold.tau - predicted)[:, fitted] ** 2))
        m2 = float(np.sum(fold.tau[:, fitted] ** 2))
        errors.append(np.sqrt(r2 / max(m2, 1e-300)))
        residual2, measured2 = residual2 + r2, measured2 + m2
    return CVScore(label, np.array(errors), float(np.sqrt(residual2 / max(measured2, 1e-300))))


def fixed_score(label: str, model: RobotModel, rows: list[RawRows], theta: np.ndarray) -> CVScore:
    """The same score for parameters not fitted to the folds (the URDF's own model)."""
    return cv_score(label, model, None, rows, lambda _system: theta)


def least_squares_fit(columns: np.ndarray, n_standard: int) -> Fit:
    """Plain least squares of the base ``columns`` (normalised; minimum norm), others 0: the
    OLS baseline, on the same folds."""

    def fit(system: ReducedSystem) -> np.ndarray:
        A, u = system.stacked(columns)
        norms = np.linalg.norm(A, axis=0)
        norms[norms == 0.0] = 1.0
        solution = np.linalg.lstsq(A / norms, u, rcond=1e-10)[0]
        theta = np.zeros(n_standard)
        theta[columns] = solution / norms
        return theta

    return fit
