"""The process-noise floor near contact flag changes, chosen from the data.

A soft foot's touch-down, bounce or lift-off is not the rigid contact's, and flags from a
force threshold are late: the one-step model error is larger near a flag change than
elsewhere. ``NoiseStd.contact_change_v`` (a floor on the process_v standard deviation within
``contact_change_window`` of a change) lets the dynamics give there; this module chooses both
numbers from the recording, as a variance-component estimate on one-step defects.

At a kinematic state estimate ``x_k`` (:func:`physid.oe.solving.build.initial_guess`: encoders,
joint velocities, IMU, leg odometry) and the parameters ``theta`` (the prior's, moved by a few
trust-region Gauss-Newton steps on the defects themselves, :func:`fitted_defects`) the defect
of node k is
``d_k = x_{k+1} (-) f(x_k; theta | u_k)``; its joint-velocity part (the joint velocities are
sensed, the base's linear velocity is only leg odometry, which fails exactly where a
flagged foot moves) is, per component::

    d = (measurement noise of v_k, v_{k+1}) + (model error, parameter error included)

The first part is the same at every node; the parameter error, a mean, is fitted out. The
window: the model with two zero-mean variances — ``s_near^2`` at the nodes within ``reach``
nodes of a change, ``s_far^2`` elsewhere — has the profile log-likelihood ``-1/2 (n_near log
s_near^2 + n_far log s_far^2)`` (each ``s^2`` its group's mean square); ``reach`` maximizes
it (a change point in variance against the distance to the nearest change). It is computed
on the defects averaged over ``SMOOTH_S`` (L nodes), which divides the white measurement
noise's variance by about L^2 while the slow soft-contact error stays (lag-1 correlation
0.96-0.99, docs/oe.md): on single nodes that noise hides the plateau and the maximum lands on
the touch-down nodes alone. Each averaged node
counts 1/L sample. The floor: on the single-node defects with that window, the excess
``sqrt(s_near^2 - s_far^2)`` — what the contact changes add per node, the stationary part
(measurement noise, parameter error; the noise model and the Birge widening of the fit
account for the rest) removed. It is kept only if the two-variance model beats the
one-variance model by the Bayesian information criterion (two more parameters: ``log n``
each, n the effective sample count) and the floor exceeds process_v; otherwise there is no
floor, and the reason says so. The choice at the initial guess agrees with the one at the
true states, which is why the prior is first moved by those steps: its parameter error would
otherwise shorten the window (docs/benchmarks.md, "Why the defaults are what they are").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.ndimage import uniform_filter1d

from physid.oe.model import state
from physid.oe.model.dynamics import ParametrizedModel
from physid.oe.model.measurements import base_dofs
from physid.oe.model.phases import step, step_derivatives
from physid.oe.solving.problem import OEProblem
from physid.oe.solving.solver import OEOptions

MAX_WINDOW_S = 0.1  # longest window tried [s]: beyond a soft touch-down's settling
SMOOTH_S = 0.01  # the window is chosen on defects averaged over this [s] (module docstring)
FIT_HALVINGS = 4  # of fitted_defects' step: each try re-simulates one step per node
# fitted_defects' steps: a joint value from 1e-2 of its size needs five factor-e steps
FIT_STEPS = 8
FIT_GAIN = 0.01  # a step that lowers the defects' mean square by less than this ends them
TRUST_BISECTIONS = 30  # on the LM damping, within a decade: the limit met to ~1e-9


@dataclass(frozen=True)
class ChangeFloor:
    """``floor`` [rad/s or m/s per node] and ``window`` [s] to use (``floor`` None: none), the
    mean squares near and far, the node counts and a one-line ``reason``."""

    floor: float | None
    window: float
    near_ms: float
    far_ms: float
    near_nodes: int
    far_nodes: int
    reason: str


def velocity_defects(problem: OEProblem, xs: NDArray, theta: NDArray) -> NDArray[np.float64]:
    """``(N, nv - bv)``: the joint-velocity part of ``x_{k+1} (-) f(x_k; theta | u_k)``."""
    dyn = problem.dynamics
    model, nv = dyn.model, dyn.model.nv
    bv = base_dofs(model)[1]
    dyn.set_theta(theta)
    out = np.empty((problem.horizon, nv - bv))
    for k in range(problem.horizon):
        out[k] = state.difference(model, step(problem, k, xs[k]), xs[k + 1])[nv + bv :]
    return out


def fitted_defects(problem: OEProblem, xs: NDArray, theta: NDArray) -> NDArray[np.float64]:
    """:func:`fit_defects`'s defects."""
    return fit_defects(problem, xs, theta)[1]


def fit_defects(
    problem: OEProblem, xs: NDArray, theta: NDArray
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``(theta', defects)``: :func:`velocity_defects` at ``theta`` moved (to ``theta'``) by
    up to ``FIT_STEPS`` Gauss-Newton steps
    on the defects themselves (:func:`_fit_step`), the states held at ``xs``. The prior's
    parameter error (a missing payload, joint terms the robot file does not declare) is a
    mean in the defects, not a variance; it is removed as a fixed effect before the variances
    are estimated (the REML habit). Each step is a trust region (a factor e at most on a log
    coordinate or a joint value), so joint terms that start at 1e-2 of their value need
    several: after one, the friction a URDF leaves out still dominates the defects and the
    floor is that friction's, not the contact's. The steps end when one lowers the defects'
    mean square by less than ``FIT_GAIN`` of it."""
    dyn, start = problem.dynamics, theta
    kept = velocity_defects(problem, xs, theta)
    if not np.all(np.isfinite(kept)):
        dyn.set_theta(start)
        return theta, kept
    for _ in range(FIT_STEPS):
        moved = _fit_step(problem, xs, theta, kept)
        if moved is None:
            break
        theta, after = moved
        gain = 1.0 - float(np.mean(after**2)) / float(np.mean(kept**2))
        kept = after
        if gain < FIT_GAIN:
            break
    dyn.set_theta(start)  # the model holds the start's inertias again (the solve starts there)
    return theta, kept


def _fit_step(problem: OEProblem, xs: NDArray, theta: NDArray, before: NDArray) -> tuple | None:
    """``(theta', defects')``: one Gauss-Newton step on the defects ``before`` at ``theta``,
    ``d(theta (+) s) ~ d(theta) - F_theta s`` with ``F_theta`` the joint-velocity rows of
    ``df/dtheta`` (eqs. 18-19); ``s`` the trust-region step of :func:`_trust_region_step`,
    applied by the chart's retraction (``F_theta``'s rotation columns are local increments)
    and halved up to ``FIT_HALVINGS`` times until it lowers the defects' mean square; None
    when none does. The plain least-squares step moves the directions the defects barely see
    without bound (a log second moment by thousands, where ``exp`` overflows): hence the
    trust region."""
    dyn = problem.dynamics
    nv, bv = dyn.model.nv, base_dofs(dyn.model)[1]
    dyn.set_theta(theta)
    rows = [step_derivatives(problem, k, xs[k])[2][nv + bv :] for k in range(problem.horizon)]
    F = np.concatenate(rows)
    # the estimated joint terms enter the defects about linearly in their values, not their
    # logarithms (a Gauss-Newton step in log s moves a value the data put at 0 by 1/e only):
    # their columns are taken per unit of value, the step kept positive by _with_joint_values
    n = dyn.n_inertial
    F[:, n:] = F[:, n:] / np.exp(theta[n:])
    rms = float(np.mean(before**2))
    if not (np.isfinite(rms) and np.all(np.isfinite(F))):  # the SVD raises on NaN
        return None
    s = _trust_region_step(F, before.ravel(), dyn)
    for _ in range(FIT_HALVINGS + 1):
        trial = _with_joint_values(dyn, theta, s)
        if dyn.representable(trial):  # else a body beyond floating point: shorter
            with np.errstate(all="ignore"):  # a diverging step is refused by its RMS
                after = velocity_defects(problem, xs, trial)
                if float(np.mean(after**2)) < rms:  # False on NaN too
                    return trial, after
        s = 0.5 * s
    return None


def _with_joint_values(dyn: ParametrizedModel, theta: NDArray, s: NDArray) -> NDArray:
    """``theta`` moved by ``s``: the chart's retraction on the bodies, the joint terms' values
    moved by ``s``'s tail and kept within 1e-3 and e times their own (positive)."""
    n = dyn.n_inertial
    out = dyn.retract(theta, np.r_[s[:n], np.zeros(theta.size - n)])
    values = np.exp(theta[n:])
    out[n:] = np.log(np.clip(values + s[n:], 1e-3 * values, np.e * values))
    return out


def _trust_region_step(
    F: NDArray, d: NDArray, dynamics: ParametrizedModel, rcond: float = 1e-8
) -> NDArray[np.float64]:
    """The Levenberg-Marquardt step ``s = (F^T F + lam I)^-1 F^T d`` with the least ``lam >=
    0`` that moves no body's logarithmic coordinate (nor exp-eig rotation) by more than the
    solver's default ``max_log_step``
    (:meth:`~physid.oe.model.dynamics.ParametrizedModel.step_limit`): a trust region. Scaling
    the least-squares step down to that limit instead would shrink its well-determined part
    with the rest (one unobserved log moment asking for a huge step would leave nothing of the
    fit); damping shortens the directions of small singular value first. Singular values below
    ``rcond`` times the largest are dropped, as ``lstsq`` did."""
    U, sv, Vt = np.linalg.svd(F, full_matrices=False)
    keep = sv > rcond * sv.max(initial=0.0)
    U, sv, Vt = U[:, keep], sv[keep], Vt[keep]
    g = sv * (U.T @ d)
    limit = OEOptions.max_log_step

    def step(lam: float) -> NDArray[np.float64]:
        return Vt.T @ (g / (sv**2 + lam))

    n = dynamics.n_inertial

    def inside(lam: float) -> bool:  # the bodies' coordinates (the joint values are clipped)
        body = step(lam)
        body[n:] = 0.0
        return dynamics.step_limit(body, limit) >= 1.0

    if sv.size == 0 or inside(0.0):
        return step(0.0)
    low, high = 0.0, float(sv.min()) ** 2
    while not inside(high):  # s ~ F^T d / lam once lam dwarfs sv^2: ends
        low, high = high, 10.0 * high
    for _ in range(TRUST_BISECTIONS):  # geometric: lam spans decades
        middle = np.sqrt(low * high) if low > 0 else 0.1 * high
        low, high = (low, middle) if inside(middle) else (middle, high)
    return step(high)


def choose_change_floor(
    defects: NDArray,
    distance: NDArray,
    dt: float,
    process_v: float,
    window: float | None = None,
) -> ChangeFloor:
    """The floor and window of the module docstring from the defects ``(N, m)`` and each
    node's distance to the nearest flag change (``window`` [s]: given, not chosen)."""
    n, m = defects.shape
    width = max(3, int(round(SMOOTH_S / dt)))
    smooth = uniform_filter1d(defects, width, axis=0, mode="nearest")
    reaches = None if window is None else [int(round(window / dt))]
    best = _window(np.mean(smooth**2, axis=1), distance, dt, m / width, reaches)
    if best is None:
        reason = "no contact flag change with enough nodes away from it: no floor"
        return ChangeFloor(None, 0.0, np.nan, np.nan, 0, n, reason)
    reach, gain = best
    near = distance <= reach
    ms = np.mean(defects**2, axis=1)  # per node, pooled over the components
    s_near, s_far = float(ms[near].mean()), float(ms[~near].mean())
    window = reach * dt
    counts = (s_near, s_far, int(near.sum()), int((~near).sum()))
    if gain < np.log(n * m / width):  # BIC: two more parameters (a variance and the window)
        return ChangeFloor(
            None,
            window,
            *counts,
            (
                f"the one-step defects near flag changes (RMS {np.sqrt(s_near):.3g}) are not "
                f"larger than elsewhere ({np.sqrt(s_far):.3g}) by the BIC: no floor"
            ),
        )
    floor = float(np.sqrt(max(s_near - s_far, 0.0)))
    if floor <= process_v:
        return ChangeFloor(
            None,
            window,
            *counts,
            (
                f"the defects' excess near flag changes ({floor:.3g}) is below process_v "
                f"({process_v:.3g}): no floor"
            ),
        )
    return ChangeFloor(
        floor,
        window,
        *counts,
        (
            f"one-step joint-velocity defects within {1e3 * window:.0f} ms of a flag change RMS "
            f"{np.sqrt(s_near):.3g} ({counts[2]} nodes), elsewhere {np.sqrt(s_far):.3g}: floor "
            f"sqrt(difference) = {floor:.3g} (variance components; window by maximum likelihood "
            f"on {1e3 * width * dt:.0f} ms averages)"
        ),
    )


def _window(
    ms: NDArray, distance: NDArray, dt: float, weight: float, reaches: list[int] | None
) -> tuple[int, float] | None:
    """``(reach, gain)``: the reach [nodes] (of ``reaches``, default 0..MAX_WINDOW_S) of the
    two-variance model of greatest profile log-likelihood (each node's mean square ``ms``
    counts ``weight`` independent samples) and that likelihood's gain over one variance;
    None without a far group."""
    n = ms.size
    best = None
    for reach in reaches or range(int(round(MAX_WINDOW_S / dt)) + 1):
        near = distance <= reach
        n_near = int(near.sum())
        if n_near == 0 or n - n_near < max(10, n // 10):  # a far group to compare with
            continue
        s_near, s_far = float(ms[near].mean()), float(ms[~near].mean())
        loglik = -0.5 * weight * (n_near * np.log(s_near) + (n - n_near) * np.log(s_far))
        if best is None or loglik > best[1]:
            best = (reach, loglik)
    if best is None:
        return None
    return best[0], best[1] + 0.5 * weight * n * np.log(float(ms.mean()))
