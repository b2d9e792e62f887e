"""The poses of a throw, checked and turned into what the identification NLP starts from.

:func:`validate_poses` and :func:`check_motion` refuse unusable poses (one line naming the row
and column); :func:`grid` is paper D's fine grid (eq. 25); :func:`ballistic_fit` the contact-free
flight through all frames (§5.3: when it explains them, there is nothing to identify);
:func:`initial_trajectory` the warm starts.
"""

from __future__ import annotations

import math

import numpy as np

from physid.errors import InputError
from physid.impacts.geometry import Line, Shape, contact_frames, min_gap

# the most steps of the fine grid (eq. 25): 40 s of 240 fps video at h̄ = 1 ms; more is a
# recording in the wrong unit (time in ms makes every frame interval 1000x too long)
MAX_FINE_STEPS = 40_000
# plausible ranges of a pose file: |t| [s], |x|, |y| [m], |theta| [rad]
POSE_LIMITS = {"t": (1e9, "s"), "x": (1e6, "m"), "y": (1e6, "m"), "theta": (1e6, "rad")}


def validate_poses(
    shape: Shape,
    lines: list[Line],
    t: np.ndarray,
    q: np.ndarray,
    *,
    penetration_tol: float,
    source: str = "data",
) -> None:
    """Raise :class:`InputError` naming the row (data rows count from 1) and column at fault."""
    if t.ndim != 1 or q.shape != (t.size, 3):
        raise InputError(
            f"expected times (n,) and poses (n, 3), got {t.shape} and {q.shape}", source=source
        )
    if t.size < 3:
        raise InputError(f"need at least 3 poses, got {t.size}", source=source)
    for name, col in (("t", t), ("x", q[:, 0]), ("y", q[:, 1]), ("theta", q[:, 2])):
        limit, unit = POSE_LIMITS[name]
        bad = np.flatnonzero(~(np.abs(col) <= limit))  # NaN fails too
        if bad.size:
            raise InputError(
                f"row {bad[0] + 1}, column {name}: value is {float(col[bad[0]]):g}, outside "
                f"±{limit:g} {unit}",
                source=source,
            )
    bad = np.flatnonzero(np.diff(t) <= 0)
    if bad.size:
        i = bad[0] + 1
        raise InputError(
            f"row {i + 1}, column t: time {float(t[i]):.9g} does not increase "
            f"(row {i}: {float(t[i - 1]):.9g})",
            source=source,
        )
    for i, qi in enumerate(q):
        gap, line = min_gap(shape, lines, qi)
        if gap < -penetration_tol:
            raise InputError(
                f"row {i + 1} (t = {t[i]:.6g} s): the body {'starts' if i == 0 else 'is'} "
                f"inside surface {line + 1} ({lines[line].spec()}) by {-gap * 1e3:.3g}"
                f" mm, more than the noise explains ({penetration_tol * 1e3:.3g} mm); check "
                "shape, surfaces and units",
                source=source,
            )


def check_motion(q: np.ndarray, sigma_position: float, sigma_angle: float, source: str) -> None:
    """Refuse poses that do not move beyond 3 noise standard deviations: a body at rest shows
    no flight and no impact, so J/m and μ cannot be identified (IPOPT would only spend its
    budget on it)."""
    spread = np.ptp(q, axis=0)
    if np.all(spread[:2] < 3 * sigma_position) and spread[2] < 3 * sigma_angle:
        raise InputError(
            f"the body does not move: x, y and theta vary by {spread[0]:.3g} m, {spread[1]:.3g} m "
            f"and {spread[2]:.3g} rad over {len(q)} poses, within 3 noise standard deviations "
            f"({sigma_position:g} m, {sigma_angle:.3g} rad): nothing to identify",
            source=source,
        )


def ballistic_fit(
    t: np.ndarray, q: np.ndarray, t_fine: np.ndarray, weights: np.ndarray, gravity: np.ndarray
) -> tuple[float, np.ndarray, np.ndarray]:
    """Least-squares free flight through all frames: θ linear in t, (x, y) a parabola with the
    gravity vector (g_x, g_y) [m/s²].

    Returns χ² (with W_χ) and the fitted poses and velocities on the fine grid. If χ² is what
    the noise explains and the flight never reaches a surface, the data hold no contact (§5.3).
    """
    tau = t - t[0]
    A = np.column_stack([np.ones_like(tau), tau])
    target = q.copy()
    target[:, :2] -= 0.5 * gravity * tau[:, None] ** 2
    coef, *_ = np.linalg.lstsq(A, target, rcond=None)
    chi2 = float(np.sum(weights * (A @ coef - target) ** 2))
    tau_f = t_fine - t[0]
    q_fine = coef[0] + tau_f[:, None] * coef[1]
    q_fine[:, :2] += 0.5 * gravity * tau_f[:, None] ** 2
    v_fine = np.tile(coef[1], (t_fine.size, 1))
    v_fine[:, :2] += gravity * tau_f[:, None]
    return chi2, q_fine, v_fine


def grid(
    t_meas: np.ndarray, max_substep: float, source: str = "data"
) -> tuple[int, np.ndarray, np.ndarray]:
    """Eq. (25): n_s = ceil(Δt_max / h̄); each frame interval i has n_s steps h_i = Δt_i / n_s.

    More than :data:`MAX_FINE_STEPS` steps is an InputError naming the longest frame interval
    (time in milliseconds, a gap in the recording)."""
    dt = np.diff(t_meas)
    ns = max(1, math.ceil(dt.max() / max_substep - 1e-9))
    if ns * dt.size > MAX_FINE_STEPS:
        row = int(np.argmax(dt)) + 2
        raise InputError(
            f"row {row}, column t: a frame interval of {dt.max():.6g} s at a model step of "
            f"{max_substep:g} s makes {ns * dt.size:.3g} fine steps, more than "
            f"{MAX_FINE_STEPS}; is t in seconds, and the recording one throw without gaps?",
            source=source,
        )
    h = np.repeat(dt / ns, ns)
    return ns, h, np.r_[t_meas[0], t_meas[0] + np.cumsum(h)]


def initial_trajectory(
    kind: str,
    shape: Shape,
    lines: list[Line],
    t_meas: np.ndarray,
    q_meas: np.ndarray,
    t_fine: np.ndarray,
    ns: int,
    gravity: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Warm-start poses and velocities (backward differences, eq. 17) on the fine grid.

    ``"bridged"`` repairs linear interpolation where it hides a contact: when the flight through
    frames i-1 and i (gravity included) reaches a surface before frame i+1, the guess follows
    that flight down to the contact and then goes straight to frame i+1. Without this, the
    solver tends to put each impact on a camera frame instead of between frames.
    """
    q0 = np.column_stack([np.interp(t_fine, t_meas, q_meas[:, i]) for i in range(3)])
    if kind == "bridged":
        for i in range(1, t_meas.size - 1):
            dt_prev = t_meas[i] - t_meas[i - 1]
            v = (q_meas[i] - q_meas[i - 1]) / dt_prev
            v[:2] += 0.5 * gravity * dt_prev  # velocity at t_i on the parabola through both frames
            k0, k1 = ns * i, ns * (i + 1)
            tau = t_fine[k0 : k1 + 1] - t_meas[i]
            arc = q_meas[i] + tau[:, None] * v
            arc[:, :2] += 0.5 * gravity * tau[:, None] ** 2
            hit = np.flatnonzero([contact_frames(shape, lines, qa).gap.min() <= 0 for qa in arc])
            if hit.size == 0 or not 0 < hit[0] < ns:
                continue
            c = k0 + hit[0]
            q0[k0 : c + 1] = arc[: hit[0] + 1]
            w = (t_fine[c : k1 + 1] - t_fine[c]) / (t_fine[k1] - t_fine[c])
            q0[c : k1 + 1] = (1 - w)[:, None] * q0[c] + w[:, None] * q_meas[i + 1]
    elif kind != "linear":
        raise InputError(f"unknown warm start {kind!r} (bridged or linear)", source="warm_starts")
    v0 = np.zeros_like(q0)
    v0[1:] = np.diff(q0, axis=0) / np.diff(t_fine)[:, None]
    v0[0] = v0[1]
    return q0, v0


def warm_starts(
    kinds: tuple[str, ...],
    shape: Shape,
    lines: list[Line],
    t_meas: np.ndarray,
    q_meas: np.ndarray,
    t_fine: np.ndarray,
    ns: int,
    gravity: np.ndarray,
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The initial trajectories of :func:`initial_trajectory`, one per kind."""
    return {
        kind: initial_trajectory(kind, shape, lines, t_meas, q_meas, t_fine, ns, gravity)
        for kind in kinds
    }
