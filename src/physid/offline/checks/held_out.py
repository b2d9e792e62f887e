"""Whether the validation recordings are held out: samples they share with the training ones.

A validation error is the model's prediction of data it was not fitted to. Given the training file
again as ``--validate`` (a script that passes one list twice, a split written to both files), the
training error would be reported as the validation error with nothing said. Shared samples are found
exactly (time, positions and torques of a row, bit for bit) on the recordings in memory, or on the
first samples of a streamed one (:func:`physid.recordings.streamed.preview`).
"""

from __future__ import annotations

import numpy as np

from physid.findings import Finding
from physid.offline.codes import NOT_HELD_OUT
from physid.recordings.streamed import RecordingFile, preview
from physid.recordings.trajectory import Trajectory

# a validation recording sharing at least this fraction of its samples is not held out
SHARED_FRACTION = 0.1


def _rows(recording: Trajectory, rows: np.ndarray) -> np.ndarray:
    """Samples ``rows`` (t, q, tau) each as one opaque value, for exact set membership (float64
    whatever the arrays' type: float32 values are exact in it)."""
    table = np.column_stack([recording.t[rows], recording.q[rows], recording.tau[rows]])
    table = np.ascontiguousarray(table, dtype=np.float64)
    return table.view(np.dtype((np.void, table.dtype.itemsize * table.shape[1]))).ravel()


def not_held_out_findings(
    train: list[Trajectory | RecordingFile], validation: list[Trajectory | RecordingFile]
) -> list[Finding]:
    """One finding per validation recording that shares at least :data:`SHARED_FRACTION` of
    its samples with the training recordings (its error is then partly a training error)."""
    if not train or not validation:
        return []
    seen = [preview(t) for t in train]
    seen_t = np.concatenate([np.asarray(t.t, np.float64) for t in seen])
    warnings = []
    for k, recording in enumerate(validation):
        shown = preview(recording)
        if not shown.n_samples:
            continue
        # whole rows are compared only where a time stamp is shared (a held-out run has none)
        stamps = np.asarray(shown.t, np.float64)
        at = np.flatnonzero(np.isin(stamps, seen_t))
        if at.size < SHARED_FRACTION * shown.n_samples:
            continue
        times = stamps[at]
        known = np.concatenate([_rows(t, np.flatnonzero(np.isin(t.t, times))) for t in seen])
        shared = float(np.sum(np.isin(_rows(shown, at), known))) / shown.n_samples
        if shared >= SHARED_FRACTION:
            name = shown.source or f"validation recording {k + 1}"
            warnings.append(
                NOT_HELD_OUT(
                    f"{name}: {100 * shared:.0f} % of its samples are training samples (the same "
                    "time, positions and torques): its validation error is not a held-out error",
                    numbers={"shared_fraction": shared},
                    names=(name,),
                )
            )
    return warnings
