"""Residuals of the joint state and parameter estimation problem and their sparse Jacobian
(paper A eqs. 3.7-3.8, 3.15-3.20, 3.24-3.25, Appendices B and D).

Per step ``k -> k+1`` the impulse residuals (inverse dynamics, eqs. 3.7-3.8) are

    dp_v = M (v_{k+1} - v_k) - G^T l_h - D^T (l_b + l_m + l_f) - h f_k
    dp_q = M ((q_{k+1} [-] q_k) / h - v_{k+1})

with the multipliers solved explicitly from the given velocity (eqs. 2.30-2.31):
``l_h = Sigma^-1 (a_k - G v_{k+1})`` (holonomic rows, eq. 2.8), ``l_b = -b h D v_{k+1}`` (F.2),
``l_m = J_s D (v_k - v_{k+1}) + h K u_k`` (F.3) and the dry-friction impulse
``l_f = clip(-(D v_{k+1} - upsilon_t D v_k) / Sigma_t, -B, B)`` with
``B = r mu_{k+1} sum|l_h| + h tau_c`` (F.4 with the Stribeck coefficient of eq. 4.1, plus a
constant Coulomb torque ``tau_c``; ``upsilon_t`` = 0 unless the hinge has a
``friction_damping``, :func:`physid.multibody.model.dynamics.friction_row`): the solution of the
one-row complementarity problem, whose derivative is the active-set rule of Appendix D.1
(CasADi differentiates ``fmin``/``fmax`` that way; undefined only on the switching surface).
Observation residuals are the wrapped angle
errors times their weight (``R^-1 = diag(w^2)``, :mod:`physid.multibody.estimate.observe`), the
initial-state residuals eqs. 3.16-3.17 times ``M`` (``M/h`` for the configuration). All impulse
residuals are weighted by ``sqrt(kappa)`` (``Omega^-1 = kappa I``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import casadi as ca
import numpy as np

from physid.multibody.model.dynamics import dry_masks, hinge_vectors, step_expressions
from physid.multibody.model.kinematics import box_minus, perturbed_quaternions
from physid.multibody.model.spec import MultibodyModel


@dataclass
class ResidualFunctions:
    """CasADi functions of one model, step ``h`` and estimated parameter subset."""

    dyn: ca.Function  # (q0, v0, q1, v1, u, p, fixed) -> r (12n)
    dyn_jac: ca.Function  # same inputs -> (r, dr/d[d0, v0, d1, v1], dr/dp)
    obs: ca.Function  # (q, y, w, p, fixed) -> r (m)
    obs_jac: ca.Function  # (q, y, w, p, fixed) -> (r (m), dr/dd (m x 6n))
    init_jac: ca.Function  # (q, v, p, fixed) -> (r (12n), dr/d[d, v], dr/dp)
    n_state: int  # tangent dimension per step (12 n_bodies)
    n_obs: int
    notes: tuple[str, ...] = ()  # why functions were not compiled, if asked to


def _chi(model: MultibodyModel, p: ca.SX, fixed: ca.SX, names: list[str]) -> ca.SX:
    """Full parameter vector: estimated entries from ``p``, the rest from ``fixed``."""
    entries = [fixed[i] for i in range(len(model.names))]
    for j, name in enumerate(names):
        entries[model.index(name)] = p[j]
    return ca.vertcat(*entries)


_CACHE: dict[str, ResidualFunctions] = {}


def _structure_key(model: MultibodyModel, *rest: object) -> str:
    """What the expressions depend on: geometry, hinge kinds, gravity, parameter names (the
    parameter values are an input), plus ``rest``."""
    digest = hashlib.sha256(repr((model.names, rest)).encode())
    for item in [*model.bodies, *model.hinges]:
        for value in vars(item).values():
            digest.update(np.asarray(value).tobytes() if not isinstance(value, str) else b"")
            digest.update(repr(value).encode() if isinstance(value, str | bool | int) else b"")
    digest.update(np.asarray(model.gravity, float).tobytes())
    return digest.hexdigest()


def build_residuals(
    model: MultibodyModel, h: float, names: list[str], kappa: float, compile: bool = False
) -> ResidualFunctions:
    """Residual functions for the estimated parameters ``names`` (paper A eqs. 3.7-3.8);
    ``compile``: the per-step functions as cached C code (:mod:`.compiled`).
    Built functions are kept in memory per model structure (the last 16)."""
    key = _structure_key(model, float(h), list(names), float(kappa), bool(compile))
    if key not in _CACHE:
        if len(_CACHE) >= 16:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = _build(model, h, names, kappa, compile)
    return _CACHE[key]


def _build(
    model: MultibodyModel, h: float, names: list[str], kappa: float, compile: bool
) -> ResidualFunctions:
    nb, m = model.n_bodies, len(model.hinges)
    n6 = 6 * nb
    q0, q1 = ca.SX.sym("q0", 7 * nb), ca.SX.sym("q1", 7 * nb)
    d0, d1 = ca.SX.sym("d0", n6), ca.SX.sym("d1", n6)
    v0, v1 = ca.SX.sym("v0", n6), ca.SX.sym("v1", n6)
    u, y, wy = ca.SX.sym("u", m), ca.SX.sym("y", m), ca.SX.sym("w", m)
    p, fixed = ca.SX.sym("p", len(names)), ca.SX.sym("fixed", len(model.names))
    chi = _chi(model, p, fixed, names)
    w = np.sqrt(kappa)

    ex = step_expressions(model, q0, d0, v0, chi)
    hv = hinge_vectors(model, chi, h)
    a = -4 / h * hv["upsilon"] * ex.g + hv["upsilon"] * (ex.G @ v0)
    lam_h = (a - ex.G @ v1) / hv["sigma"]
    rate0, rate1 = ex.D @ v0, ex.D @ v1
    lam_b = -h * hv["b"] * rate1
    lam_m = hv["Js"] * (rate0 - rate1) + h * hv["K"] * u
    bound = (hv["dry"] + hv["sdelta"] * ca.exp(-hv["sc"] * rate0**2)) * (
        ca.DM(dry_masks(model)) @ ca.fabs(lam_h)
    ) + h * hv["coulomb"]  # constant Coulomb torque: an impulse bound h tau_c
    # the one-row complementarity with the relaxed stick velocity (dynamics.friction_row)
    lam_f = ca.fmin(ca.fmax(-(rate1 - hv["fups"] * rate0) / hv["fsig"], -bound), bound)
    dp_v = ex.M @ (v1 - v0) - ex.G.T @ lam_h - ex.D.T @ (lam_b + lam_m + lam_f) - h * ex.f
    pose0 = perturbed_quaternions(q0, d0, nb)
    pose1 = perturbed_quaternions(q1, d1, nb)
    dp_q = ex.M @ (box_minus(pose1, pose0, nb) / h - v1)
    r = ca.densify(w * ca.vertcat(dp_v, dp_q))
    x = ca.vertcat(d0, v0, d1, v1)
    J_x, J_p = ca.jacobian(r, x), ca.jacobian(r, p)
    ins = [q0, v0, q1, v1, u, p, fixed]
    subs = [ca.substitute(e, ca.vertcat(d0, d1), ca.SX.zeros(2 * n6)) for e in (r, J_x, J_p)]
    dyn_jac = ca.Function("dyn_jac", ins, subs)
    dyn = ca.Function("dyn", ins, subs[:1])

    # observation residuals: wrapped angle error atan2(sin(y - th), cos(y - th)) times the
    # weight w (R^-1/2 of eq. 3.18: 0 between samples, sigma_ref / sigma_j at a sample)
    c, s = ex.angles_cs[:, 0], ex.angles_cs[:, 1]
    r_obs = wy * ca.atan2(ca.sin(y) * c - ca.cos(y) * s, ca.cos(y) * c + ca.sin(y) * s)
    J_obs = ca.jacobian(r_obs, d0)
    obs_subs = [ca.substitute(e, d0, ca.SX.zeros(n6)) for e in (ca.densify(r_obs), J_obs)]
    obs_jac = ca.Function("obs_jac", [q0, y, wy, p, fixed], obs_subs)
    obs = ca.Function("obs", [q0, y, wy, p, fixed], obs_subs[:1])

    # initial-state residuals (eqs. 3.16-3.17): M G^T (G G^T)^-1 g / h and M G^T (G G^T)^-1 G v
    GGt = ex.G @ ex.G.T
    r_init = w * ca.vertcat(
        ex.M @ (ex.G.T @ ca.solve(GGt, ex.g)) / h, ex.M @ (ex.G.T @ ca.solve(GGt, ex.G @ v0))
    )
    x0 = ca.vertcat(d0, v0)
    init_subs = [
        ca.substitute(e, d0, ca.SX.zeros(n6))
        for e in (r_init, ca.jacobian(r_init, x0), ca.jacobian(r_init, p))
    ]
    init_jac = ca.Function("init_jac", [q0, v0, p, fixed], init_subs)
    functions, notes = [dyn, dyn_jac, obs, obs_jac], []
    if compile:  # the per-step functions; init_jac runs once per evaluation and is large
        from physid.multibody.estimate.compiled import compiled

        done = [compiled(f) for f in functions]
        functions = [f for f, _ in done]
        notes = sorted({note for _, note in done if note})
    return ResidualFunctions(*functions, init_jac, 2 * n6, m, tuple(notes))
