"""Frictionloss starts on MuJoCo's friction plateau (``physid simfit``).

MuJoCo's joint ``frictionloss`` is a soft constraint: its force is what the joint needs to
slow down, regularised, and at most the frictionloss. Above every force a joint needs over the
windows the bound is never reached and the rollouts do not depend on its value at all: a flat
cost, no gradient that leads back. A start there (a file's frictionloss too high for the
motion) leaves the fit wandering: a frictionloss can walk to many times its truth and the
held-out error grow beyond the untuned model's. Starts halved until the rollouts depend on
them let the fit reach the truth.

:func:`off_the_plateau` halves such a start until the rollouts depend on it, at most
:data:`HALVINGS` times; a frictionloss that no halving makes matter (a joint the runs never
move) keeps the file's value, for its prior to decide. Only off the plateau, no further:
halving on while the cost falls (the windows' states as recorded) takes frictionlosses orders
of magnitude below the truth while the other joints' start dampings make up for the
dissipation, a start the fit cannot recover from. A start hundreds of times too high is left at
the plateau's edge, which may still be far.
"""

from __future__ import annotations

import numpy as np

from physid.findings import Finding
from physid.simfit.codes import FRICTIONLOSS_OFF_PLATEAU

PROBE = 1e-3  # relative decrease of a frictionloss that tests whether the rollouts depend on it
# ... they do not when no residual moves by more than this share of the largest residual
# (on the plateau residuals move by round-off, ~1e-14 of the largest; off it by 1e-4 and more)
UNMOVED = 1e-8
HALVINGS = 12


def _depends(shooting, x: np.ndarray, k: int, offsets, base) -> bool:  # noqa: ANN001
    """Whether the rollouts at ``x`` (residual ``base``) move when parameter ``k`` does."""
    probe = x.copy()
    probe[k] *= 1.0 - PROBE
    moved = np.abs(shooting.blocks(probe, offsets).r - base.r).max()
    return bool(moved > UNMOVED * max(float(np.abs(base.r).max()), 1.0))


def off_the_plateau(shooting, parameters, model, dofs) -> list[Finding]:  # noqa: ANN001
    """Halve every tuned frictionloss start the rollouts of ``shooting`` (window states as
    recorded) do not depend on until they do; write the starts into ``model`` and return a
    :data:`~physid.simfit.codes.FRICTIONLOSS_OFF_PLATEAU` per start moved (module docstring).
    ``shooting`` is left stale: build it again."""
    names = list(parameters.names)
    x = shooting.x0.copy()
    tuned = [
        names.index(f"{joint}.frictionloss")
        for joint in parameters.joints
        if f"{joint}.frictionloss" in names
    ]
    if not any(x[k] > 0.0 for k in tuned):  # no rollout spent on a fit without friction
        return []
    offsets = np.zeros((len(shooting.windows), shooting.n_state))
    base = shooting.blocks(x, offsets)
    findings = []
    for k in tuned:
        name = names[k]
        if x[k] <= 0.0 or _depends(shooting, x, k, offsets, base):
            continue
        trial, at = x.copy(), base
        for _ in range(HALVINGS):
            trial[k] *= 0.5
            at = shooting.blocks(trial, offsets)
            if _depends(shooting, trial, k, offsets, at):
                break
        else:
            continue  # nothing the runs show depends on it: the file's value, for its prior
        x, base = trial, at
        findings.append(
            FRICTIONLOSS_OFF_PLATEAU(
                f"{name} started at {x[k]:.4g} instead of the file's {shooting.x0[k]:.4g}: at "
                "the file's value the rollouts did not depend on it (MuJoCo's friction never "
                "reached it), where the fit has no gradient",
                numbers={"start": x[k], "file_value": shooting.x0[k]},
                names=(name,),
            )
        )
    parameters.apply(model, dofs, x)  # the model as the starts now are (blocks applied each)
    return findings
