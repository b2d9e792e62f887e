"""Whether the joints' torques are on one scale (a drive gain, a unit or a sign that differs
for one joint: "currents with unknown gains").

A rigid body's parameters act on several joints at once: the elbow's gravity torque reappears,
with the forearm's, in the shoulder's. A torque column logged with another gain than the others
(a current times the wrong torque constant, one drive reporting in another unit or sign) fits no
one set of parameters, while a model with a free scale on that joint, ``tau_k = s (W_k
theta)``, fits it. Each fitted joint's scale is searched in turn, the others held at 1, over
+-[1/20, 20] (a log grid of both signs, then golden-section refinement), on the weighted
training system (the reduced per-joint factors of :mod:`.reduced`): for a given scale the
least-squares minimum over ``theta`` is a closed form in one generalised eigendecomposition
per joint (:class:`_Profile`), so the whole search costs about 10 ms. (Alternating least
squares from 1 stays where the parameters have already absorbed the scale: a torque x2 reads
a scale near 1 and masses several times the truth.)

A joint whose best scale leaves [1/1.25, 1.25] while fitting the training torque at least
:data:`MIN_GAIN` better (relative weighted error) is named, with any other joint that fits
within :data:`SAME_STORY` as well (two coupled joints whose ratio is off: which one the data
cannot say). A best scale at either end of the search is no gain but a torque that carries
none of the model's (a braked joint, a torque of noise) or almost all of it: it is left to the
other checks. On the filtered training systems clean real recordings gain at most 5 %, and a
joint's torque scaled by 0.5 or 10, or its sign flipped, gains 26-44 %: :data:`MIN_GAIN` sits
between. A scale that only a joint's own friction and armature see (a wrist under little load)
is absorbed by them and cannot be told (a wrist x10 gains a few per cent, a flipped one under
1 %): there the consistent fit's non-negative friction and its warning speak.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from physid.findings import Finding
from physid.offline.codes import JOINT_SCALE
from physid.offline.observe.reduced import ReducedSystem

SCALE_BOUND = 1.25  # a joint's scale outside [1/1.25, 1.25] of the others'
MIN_GAIN = 0.1  # relative reduction of the weighted training error a free scale must bring
SAME_STORY = 0.9  # another joint whose own scale gains this share of the best's is named too
SCALE_RANGE = 20.0
EDGE = 1.05  # a best scale within this factor of the search's ends is at them
GRID = 41
REFINEMENTS = 12


class _Profile:
    """min over theta of sum_j ||z_j - s_j R_j theta||^2 with joint ``k``'s scale ``s`` and the
    others 1, for any ``s`` at once, from the per-joint Gram matrices ``G_j = R_j^T R_j``,
    ``b_j = R_j^T z_j`` and ``zz = sum_j ||z_j||^2``. With ``A = sum_j G_j`` and the
    generalised eigenvectors ``G_k V = A V diag(lam)``, ``V^T A V = I`` (0 <= lam <= 1), the
    normal matrix ``A + (s^2 - 1) G_k`` is ``V^-T diag(1 + (s^2 - 1) lam) V^-1`` and the
    minimum ``zz - sum_i y_i(s)^2 / (1 + (s^2 - 1) lam_i)`` with ``y(s) = V^T (B + (s - 1)
    b_k)``, ``B = sum_j b_j``: one eigendecomposition per joint, not a solve per scale."""

    def __init__(self, G: np.ndarray, b: np.ndarray, zz: float, k: int) -> None:
        A = G.sum(axis=0)
        ridge = 1e-12 * max(float(np.trace(A)) / len(A), 1e-300)  # a column the data miss
        lam, V = scipy.linalg.eigh(G[k], A + ridge * np.eye(len(A)))
        self.lam = np.clip(lam, 0.0, 1.0)
        self.y0, self.y1 = V.T @ b.sum(axis=0), V.T @ b[k]
        self.zz = zz

    def __call__(self, scales: np.ndarray) -> np.ndarray:
        s = np.asarray(scales, float)[:, None]
        y = self.y0 + (s - 1.0) * self.y1
        explained = np.sum(y**2 / (1.0 + (s**2 - 1.0) * self.lam), axis=1)
        return np.maximum(self.zz - explained, 0.0)


def _best_scale(profile: _Profile) -> tuple[float, float]:
    """(scale of the ``profile``'s joint that fits best, its squared residual), either sign: a
    torque logged with the opposite sign is a scale of -1."""
    logs = np.linspace(-np.log(SCALE_RANGE), np.log(SCALE_RANGE), GRID)
    signs = np.repeat([1.0, -1.0], GRID)
    costs = profile(signs * np.exp(np.tile(logs, 2)))
    i = int(np.argmin(costs))
    sign, j = signs[i], i % GRID
    low, high = logs[max(j - 1, 0)], logs[min(j + 1, GRID - 1)]
    golden = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(REFINEMENTS):
        a, c = high - golden * (high - low), low + golden * (high - low)
        cost_a, cost_c = profile(sign * np.exp(np.array([a, c])))
        if cost_a < cost_c:
            high = c
        else:
            low = a
    scale = sign * float(np.exp(0.5 * (low + high)))
    return scale, float(profile(np.array([scale]))[0])


def joint_scales(
    system: ReducedSystem, columns: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, float]:
    """``(scales (n,), errors (n,), error with one scale)``: per fitted joint, the scale of its
    torque that fits best and the relative weighted training error when it alone is free (the
    others at 1); NaN for joints not fitted (module docstring)."""
    fitted = np.ones(system.n_joints, bool) if system.fitted is None else system.fitted
    w = np.asarray(weights, float)
    R = (system.R[:, :, columns] * w[:, None, None])[fitted]
    z = (system.z * w[:, None])[fitted]
    G = np.einsum("jik,jil->jkl", R, R)
    b = np.einsum("jik,ji->jk", R, z)
    total = float(np.sum(np.asarray(system.tau_norm2, float)[fitted] * w[fitted] ** 2))
    scales = np.full(system.n_joints, np.nan)
    errors = np.full(system.n_joints, np.nan)
    one = np.nan  # every joint's profile at scale 1 is the plain fit's residual
    for k, joint in enumerate(np.flatnonzero(fitted)):
        profile = _Profile(G, b, total, k)
        one = float(profile(np.array([1.0]))[0]) if k == 0 else one
        scale, cost = _best_scale(profile)
        scales[joint], errors[joint] = scale, np.sqrt(cost / total)
    return scales, errors, float(np.sqrt(one / total))


def joint_scale_finding(
    system: ReducedSystem, columns: np.ndarray, weights: np.ndarray, joint_names
) -> Finding | None:
    """A finding when a joint's torque is not on the others' scale (module docstring), else
    None."""
    if system.n_fitted < 3:  # two joints: which one is off, and whether, cannot be told apart
        return None
    scales, errors, one = joint_scales(system, columns, weights)
    if not one > 0:
        return None
    gains = np.where(np.isfinite(errors), (one - errors) / one, -np.inf)
    size = np.abs(scales)
    inside = (size > EDGE / SCALE_RANGE) & (size < SCALE_RANGE / EDGE)  # not the search's ends
    off = inside & ((scales < 1.0 / SCALE_BOUND) | (scales > SCALE_BOUND))  # negative ones too
    best = int(np.argmax(np.where(off, gains, -np.inf)))
    if not (off[best] and gains[best] >= MIN_GAIN):
        return None
    named = [k for k in np.argsort(-gains) if off[k] and gains[k] >= SAME_STORY * gains[best]]
    listed = " or ".join(
        f"'{joint_names[k]}' x{scales[k]:.3g} (error {100 * errors[k]:.3g} %)" for k in named
    )
    cause = (
        "a drive gain or a unit that differs between joints (a current read with another "
        "torque constant)?"
    )
    if all(scales[k] < 0.0 for k in named):  # a negative scale: a sign flipped, not only a gain
        cause = (
            "a torque logged with its sign flipped (a scale near -1), or a drive gain or a "
            "unit of the wrong sign?"
            if any(abs(abs(scales[k]) - 1.0) < 0.2 for k in named)
            else "a drive gain or a unit of the wrong sign?"
        )
    return JOINT_SCALE(
        f"a joint's torque is not on the others' scale: the training torque is fitted with "
        f"{100 * one:.3g} % (weighted), and with a free scale on {listed}: {cause}",
        numbers={f"{joint_names[k]}.scale": float(scales[k]) for k in named}
        | {"relative_error": float(one)},
        names=[joint_names[k] for k in named],
    )
