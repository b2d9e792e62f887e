"""Time-stepping simulator of a planar rigid body with frictional impacts (paper D §3.5, §3.6).

Implicit Euler (eqs. 16–17): ``M (v^{k+1} − v^k) = G~(q^k) c^{k+1} + h (f_ext − ∇V)`` and
``q^{k+1} = q^k + h v^{k+1}``; the planar body has no gyroscopic term (K = 0). At each step the
contacts are switched on or off from q^k and v^k by eq. (6) — on iff ``g_n(q^k) ≤ 0`` and
``ġ_n(q^k, v^k) ≤ 0`` — (model ``"irc"``), or every candidate takes part with impulse–gap
complementarity (model ``"igc"``, the comparison of §4.2). See :mod:`physid.impacts.steppers`
for the per-step problem and its two solvers (``"lcp"``: Lemke, ``"nlp"``: IPOPT on eq. 20).

Steps with no contact switched on (IRC) or no candidate that the free motion would close (IGC)
have the unique solution c = 0 and are advanced without calling a solver.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from physid.errors import InputError
from physid.findings import Finding
from physid.impacts.codes import STEP_FAILED
from physid.impacts.geometry import (
    STANDARD_GRAVITY,
    Line,
    Shape,
    candidate_pairs,
    contact_frames,
    grasp_matrices,
    gravity_vector,
    min_gap,
)
from physid.impacts.results import SimulationResult
from physid.impacts.steppers import NlpStepper, StepData, StepSolution, solve_step_lcp
from physid.progress import progress as progress_display
from physid.status import Status

#: A contact whose gap at q^0 is below −this [m] means the body starts inside the environment.
PENETRATION_TOLERANCE = 1e-9
#: Round-off allowance on ġ_n ≤ 0 in eq. (6) [m/s], so resting contact does not chatter on 1e-17.
SEPARATION_TOLERANCE = 1e-10


def _vector3(value: np.ndarray | list[float], name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=float).ravel()
    if arr.size != 3 or not np.all(np.isfinite(arr)):
        raise InputError(f"{name} must be three finite numbers, got {value!r}")
    return arr


def simulate(
    shape: Shape,
    lines: list[Line],
    q0: np.ndarray | list[float],
    v0: np.ndarray | list[float],
    *,
    inertia_ratio: float,
    mu: float,
    restitution: float,
    dt: float,
    duration: float,
    mass: float = 1.0,
    model: Literal["irc", "igc"] = "irc",
    solver: Literal["lcp", "nlp"] = "lcp",
    gravity: float | tuple[float, float] = STANDARD_GRAVITY,
    progress: bool = False,
) -> SimulationResult:
    """Simulate ``duration`` seconds with step ``dt`` from pose ``q0`` and velocity ``v0``.

    ``q0 = (x [m], y [m], θ [rad])``, ``v0 = (v_x [m/s], v_y [m/s], ω [rad/s])``;
    ``inertia_ratio`` is J/m [m²] (J about the COM), ``mu`` the Coulomb coefficient,
    ``restitution`` ε of eq. (4) (unused by IGC, which cannot model it). Raises
    :class:`InputError` on bad parameters or a body that starts inside the environment; a step
    whose solver fails ends the trajectory there with status ``numerical_failure``.
    """
    q0, v0 = _vector3(q0, "q0"), _vector3(v0, "v0")
    numbers = {"inertia_ratio": inertia_ratio, "mass": mass, "mu": mu, "dt": dt}
    numbers |= {"duration": duration, "restitution": restitution}
    g_vec = _check_inputs(shape, lines, q0, gravity, model, solver, **numbers)
    n_steps = int(round(duration / dt))
    pairs = candidate_pairs(shape, lines)
    nc = len(pairs)
    t = np.arange(n_steps + 1) * dt
    q, v = np.zeros((n_steps + 1, 3)), np.zeros((n_steps + 1, 3))
    cn, ct = np.zeros((n_steps, nc)), np.zeros((n_steps, nc))
    active = np.zeros((n_steps, nc), dtype=bool)
    q[0], v[0] = q0, v0
    inv_m = np.array([1.0, 1.0, 1.0 / inertia_ratio])
    gravity_dv = np.r_[g_vec * dt, 0.0]
    nlp = NlpStepper(shape, lines) if solver == "nlp" else None
    status, message, findings = Status.OK, "", ()
    steps = progress_display(
        range(n_steps), desc="simulate", unit="step", enabled=progress, leave=False
    )
    for k in steps:
        v_free = v[k] + gravity_dv
        idx, sol = _step(
            shape, lines, pairs, q[k], v[k], v_free, model, nlp, inv_m, mu, restitution, dt
        )
        if sol is None:
            v[k + 1] = v_free
        elif not sol.ok:
            status, message, findings = _failure(t[k], solver, sol.message)
            q, v, t = q[: k + 1], v[: k + 1], t[: k + 1]
            cn, ct, active = cn[:k], ct[:k], active[:k]
            break
        else:
            v[k + 1] = sol.v_next
            cn[k, idx] = mass * sol.cn
            ct[k, idx] = mass * (sol.ct[0::2] - sol.ct[1::2])
            active[k, idx] = True
        q[k + 1] = q[k] + dt * v[k + 1]
    given = {"inertia_ratio": inertia_ratio, "mu": mu, "restitution": restitution, "dt": dt}
    return SimulationResult(
        t,
        q,
        v,
        cn,
        ct,
        active,
        pairs,
        mass,
        **given,
        model=model,
        solver=solver,
        gravity=gravity,
        status=status,
        message=message,
        findings=findings,
    )


def _step(
    shape: Shape,
    lines: list[Line],
    pairs: list[tuple[int, int]],
    q: np.ndarray,
    v: np.ndarray,
    v_free: np.ndarray,
    model: str,
    nlp: NlpStepper | None,
    inv_m: np.ndarray,
    mu: float,
    restitution: float,
    dt: float,
) -> tuple[np.ndarray, StepSolution | None]:
    """The candidates switched on at (q^k, v^k) and the step's solution (None: no contact, the
    free motion is the solution)."""
    frames = contact_frames(shape, lines, q)
    N_all, T_all = grasp_matrices(frames.arm, frames.normal, frames.tangent)
    if model == "irc":  # eq. (6)
        on = (frames.gap <= 0.0) & (N_all.T @ v <= SEPARATION_TOLERANCE)
    else:  # IGC: only contacts the free motion would close can carry impulse
        on = frames.gap + dt * (N_all.T @ v_free) < 0.0
    idx = np.flatnonzero(on)
    if idx.size == 0:
        return idx, None
    N, T = N_all[:, idx], T_all[:, np.stack([2 * idx, 2 * idx + 1], axis=1).ravel()]
    data = StepData(q, v, v_free, N, T, frames.gap[idx], inv_m, mu, restitution, dt)
    if nlp is None:
        return idx, solve_step_lcp(data, model)
    return idx, nlp.solve(data, model, [pairs[i] for i in idx])


def _failure(t: float, solver: str, detail: str) -> tuple[Status, str, tuple[Finding, ...]]:
    """The status, message and finding of a step whose solver failed at time ``t`` [s]."""
    other = "nlp" if solver == "lcp" else "lcp"
    message = (
        f"step solver failed at t = {t:.6g} s ({solver}: {detail}); the other per-step solver "
        f"(--solver {other}) or a smaller --dt may get past it"
    )
    return Status.NUMERICAL_FAILURE, message, (STEP_FAILED(message, numbers={"t_s": t}),)


def _check_inputs(
    shape: Shape,
    lines: list[Line],
    q0: np.ndarray,
    gravity: float | tuple[float, float],
    model: str,
    solver: str,
    **numbers: float,
) -> np.ndarray:
    """The gravity vector; an InputError names a parameter out of range, an unknown model or
    solver, no surface, or a body that starts inside one."""
    try:
        g_vec = gravity_vector(gravity)
    except ValueError as error:
        raise InputError(str(error)) from None
    if not (np.all(np.isfinite(g_vec)) and (np.ndim(gravity) > 0 or gravity >= 0)):
        raise InputError(f"gravity = {gravity!r} is out of range")
    admissible = {
        "inertia_ratio": lambda x: x > 0,
        "mass": lambda x: x > 0,
        "mu": lambda x: x >= 0,
        "dt": lambda x: x > 0,
        "duration": lambda x: x > 0,
        "restitution": lambda x: 0.0 <= x <= 1.0,
    }
    for name, value in numbers.items():
        if not (admissible[name](value) and np.isfinite(value)):
            raise InputError(f"{name} = {value!r} is out of range")
    if model not in ("irc", "igc") or solver not in ("lcp", "nlp"):
        raise InputError(f"unknown model/solver {model!r}/{solver!r}")
    if not lines:
        raise InputError("at least one surface line is needed")
    gap0, line0 = min_gap(shape, lines, q0)
    if gap0 < -PENETRATION_TOLERANCE:
        raise InputError(
            f"q0 = {q0.tolist()} starts inside surface {line0 + 1} ({lines[line0].spec()}): "
            f"penetration {-gap0 * 1e3:.3g} mm"
        )
    return g_vec
