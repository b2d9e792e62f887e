"""Finite-difference checks shared by the physid.oe observation tests."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pinocchio as pin
from numpy.typing import NDArray

from physid.oe.model import state
from physid.oe.model.charts import retract


def node_jacobians_by_central_differences(
    residual: Callable[[NDArray, NDArray, NDArray], NDArray],
    model: pin.Model,
    x: NDArray,
    w: NDArray,
    theta: NDArray,
    chart: str,
    eps: float = 1e-6,
) -> tuple[NDArray, NDArray, NDArray]:
    """``(dr/dx, dr/dw, dr/dtheta)`` of ``residual(x, w, theta)`` by central differences along
    the increments the estimator uses: ``x (+) dx`` on the state manifold, ``w + dw``, and the
    chart's retraction ``theta (+) dtheta``."""
    nx, nt = x.shape[0] - model.nq + model.nv, theta.shape[0]
    columns: tuple[list, list, list] = ([], [], [])
    for i in range(nx):
        e = eps * np.eye(nx)[i]
        plus, minus = state.integrate(model, x, e), state.integrate(model, x, -e)
        columns[0].append((residual(plus, w, theta) - residual(minus, w, theta)) / (2 * eps))
        columns[1].append((residual(x, w + e, theta) - residual(x, w - e, theta)) / (2 * eps))
    for i in range(nt):
        e = eps * np.eye(nt)[i]
        plus, minus = retract(chart, theta, e), retract(chart, theta, -e)
        columns[2].append((residual(x, w, plus) - residual(x, w, minus)) / (2 * eps))
    return tuple(np.column_stack(c) for c in columns)


def state_jacobian_by_central_differences(
    fun: Callable[[NDArray], NDArray], model: pin.Model, x: NDArray, eps: float
) -> NDArray:
    """The Jacobian of a state-to-state map ``fun`` at ``x`` by central differences along the
    state's tangent space (``state.integrate`` / ``state.difference``)."""
    y0 = fun(x)
    cols = []
    for i in range(2 * model.nv):
        e = np.zeros(2 * model.nv)
        e[i] = eps
        plus = state.difference(model, y0, fun(state.integrate(model, x, e)))
        minus = state.difference(model, y0, fun(state.integrate(model, x, -e)))
        cols.append((plus - minus) / (2 * eps))
    return np.column_stack(cols)


def torso_payload_mass(walk: tuple) -> float:
    """Mass [kg] added to the torso (joint 1) by a ``(nominal, true, recording)`` fixture."""
    nominal, true, _ = walk
    return float(true.inertias[1].mass - nominal.inertias[1].mass)


def kinova_payload_problem(arm, noise=None):  # noqa: ANN001, ANN201
    """``(problem, xs, ws, theta)`` of paper B on conftest's ``kinova_payload_arm``: the payload
    link's inertia estimated (log-Cholesky) from its encoders and velocities, ``noise`` the
    NoiseStd told (default: physid's), started from the initial guess and the nominal inertia."""
    from conftest import KINOVA_PAYLOAD_BODY

    from physid.oe import Measurements, NoiseStd, initial_guess, make_problem

    nominal, _, rec = arm
    meas = Measurements(q=rec.q_meas, v=rec.v_meas)
    problem = make_problem(nominal, [KINOVA_PAYLOAD_BODY], "log_cholesky", rec.dt, rec.tau, meas,
                           noise or NoiseStd())  # fmt: skip
    xs, ws = initial_guess(problem)
    return problem, xs, ws, problem.dynamics.nominal_theta()
