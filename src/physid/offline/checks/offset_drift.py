"""Torque offsets that differ between the training recordings (a sensor re-zeroed between runs).

A joint torque sensor's bias moves between power cycles and with temperature; a drive's current
offset with its calibration. One offset per joint is fitted to every training recording at
once, so a bias that changed between two runs is averaged: each run keeps half of the change
in its residual, and the fit pays for it with every parameter that can lean on a constant
(gravity's first moments, Coulomb levels), while the status stays ``ok``.

What the fit leaves shows it: each training recording's mean residual per joint. Across real
multi-run recordings of four robots the recordings' means differ by at most 0.44 x the joint's
residual spread within a recording; an offset of 1-2 N m that changed between runs, 1.7-1.9 x
its spread.
"""

from __future__ import annotations

import numpy as np

from physid.findings import Finding
from physid.offline.codes import OFFSET_DRIFT
from physid.offline.observe.prediction import RecordingFit
from physid.robot.model import RobotModel, is_revolute

# a joint whose training recordings' mean residuals span this many times its residual std within
# a recording (pooled) is named
OFFSET_SPREAD = 1.0


def offset_drift_finding(model: RobotModel, fits: tuple[RecordingFit, ...]) -> Finding | None:
    """A finding naming the joints whose torque offset differs between the training recordings
    (module docstring), with the largest difference and the recordings it lies between; None
    with fewer than two recordings or nothing to name."""
    if len(fits) < 2:
        return None
    residuals = [np.asarray(f.tau, float) - np.asarray(f.tau_predicted, float) for f in fits]
    means = np.array([np.nanmean(r, axis=0) for r in residuals])  # (recordings, joints)
    within = np.concatenate([r - m for r, m in zip(residuals, means, strict=True)])
    spread = np.nanstd(within, axis=0)
    found, names, numbers = [], [], {}
    for j, joint in enumerate(model.joint_names):
        if not model.fitted[j] or not np.all(np.isfinite(means[:, j])) or spread[j] <= 0.0:
            continue
        high, low = int(np.argmax(means[:, j])), int(np.argmin(means[:, j]))
        difference = float(means[high, j] - means[low, j])
        if difference < OFFSET_SPREAD * spread[j]:
            continue
        unit = "N m" if is_revolute(model, joint) else "N"
        found.append(
            f"{joint} {difference:+.3g} {unit} in {fits[high].name} against {fits[low].name} "
            f"({difference / spread[j]:.2g} x its residual std)"
        )
        names.append(joint)
        numbers[f"{joint}.difference"] = difference
        numbers[f"{joint}.residual_std"] = float(spread[j])
    if not found:
        return None
    return OFFSET_DRIFT(
        "the torque offset differs between the training recordings (their mean residuals): "
        + "; ".join(found)
        + ": a torque sensor re-zeroed or drifting between the runs, or a load that changed "
        "between them; one offset per joint averages it and every parameter pays (identify "
        "each run alone to compare)",
        numbers=numbers,
        names=names,
    )
