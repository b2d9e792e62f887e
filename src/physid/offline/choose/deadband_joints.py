"""A Coulomb deadband chosen joint by joint: one more candidate for the deadband's
cross-validation (:func:`physid.offline.choose.choices.choose_training`).

The candidates of :data:`~.deadband.CANDIDATE_FRACTIONS` share one fraction of the RMS speed
by all joints. A robot whose joints differ in their friction asks for different bands: a
SCARA in MuJoCo with 20 N of dry friction on its vertical quill and smooth revolute joints
chose 0.05 x RMS speed for all (the quill's cross-validated error 11.1 -> 7.4 %), which left
the revolute joints' held-out error at 1.77 / 3.72 % against 1.31 / 1.67 % with no band on
them. Each joint's torque row holds its own joint terms only (no coupled motors), so the fold
systems, and the stored observations, of a per-joint mix are exactly those rows taken from the
candidates already built: the mix costs no pass over the data.

Each joint takes the candidate with the lowest mean cross-validated error of its own torque,
if that beats the narrowest band on the same folds by more than their spread (the rule of
:func:`~.selection.choose`, per joint); the mix then competes with the shared candidates under
that same rule on the whole torque.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from physid.offline.choose.selection import choose
from physid.offline.choose.training import CandidateObservations
from physid.offline.observe.crossval import CVScore


def per_joint_picks(scores: list[CVScore]) -> np.ndarray | None:
    """(n,) the candidate each joint takes (module docstring): :func:`~.selection.choose` on
    each joint's fold errors, its mean over the folds standing for the total; None when every
    joint takes the same one (a shared candidate already) or a score has no per-joint
    errors."""
    if len(scores) < 2 or any(s.joint_fold_errors is None for s in scores):
        return None
    errors = np.stack([s.joint_fold_errors for s in scores])  # (C, K, n)
    picks = np.array(
        [
            choose(
                f"deadband of joint {joint}",
                [_joint_score(s.label, errors[c, :, joint]) for c, s in enumerate(scores)],
            ).chosen
            for joint in range(errors.shape[2])
        ]
    )
    return None if np.all(picks == picks[0]) else picks


def _joint_score(label: str, fold_errors: np.ndarray) -> CVScore:
    mean = float(np.nanmean(fold_errors)) if np.isfinite(fold_errors).any() else np.nan
    return CVScore(label, fold_errors, mean)


def with_per_joint_candidate(
    chosen: CandidateObservations, picks: np.ndarray
) -> CandidateObservations:
    """``chosen`` with one more joint-term model: joint ``j`` under candidate ``picks[j]``
    (its deadband, its rows of every fold system, its rows of the stored joint-term block)."""
    models = chosen.models
    deadband = np.array([models[k].coulomb_deadband[j] for j, k in enumerate(picks)])
    mixed = replace(models[0], coulomb_deadband=deadband)
    folds = [
        replace(
            system,
            R=np.stack([chosen.folds[k][f].R[j] for j, k in enumerate(picks)]),
            z=np.stack([chosen.folds[k][f].z[j] for j, k in enumerate(picks)]),
        )
        for f, system in enumerate(chosen.folds[0])
    ]

    def add_mixed_block(chunk):  # noqa: ANN001, ANN202 - an Observations chunk
        blocks = chunk.joint_terms  # (M, n, k) each: row j of the mix from block picks[j]
        mixed_block = np.stack([blocks[k][:, j] for j, k in enumerate(picks)], axis=1)
        return replace(chunk, joint_terms=(*blocks, mixed_block))

    return replace(
        chosen,
        models=[*models, mixed],
        folds=[*chosen.folds, folds],
        store=chosen.store.mapped(add_mixed_block),
    )


def per_joint_mix_applies(chosen: CandidateObservations) -> bool:
    """Whether a per-joint mix is exact here: several deadband models, none with coupled
    motors (whose Coulomb columns span several joints' rows), stored observations."""
    model = chosen.models[0]
    return len(chosen.models) > 1 and not model.layout.coupled_motor_names and chosen.blocks
