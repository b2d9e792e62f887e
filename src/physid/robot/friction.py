"""Joint friction models: the linear one of docs/architecture.md and two nonlinear ones.

Per joint, with ``dq`` the joint speed (rad/s or m/s):

* ``linear`` (the default): ``fv dq + fc sign(dq) + offset``, with ``sign`` taken as 0 below the
  joint's Coulomb deadband (:func:`coulomb_sign`, the one place this rule lives).
* ``sigmoid`` (the model identified for torque-controlled arms, e.g. Gaz et al., "Dynamic
  identification of the Franka Emika Panda robot with retrieval of feasible parameters using
  penalty-based optimization", RA-L 2019, eq. 14)::

      phi1 / (1 + exp(-phi2 (dq + phi3))) - phi1 / (1 + exp(-phi2 phi3))

  which is 0 at rest, tends to ``phi1 (1 - s0)`` and ``-phi1 s0`` (``s0`` the second fraction)
  at high speeds, and switches over a band of width ``~4 / phi2`` around ``-phi3``. ``phi1``
  takes the place of ``fc`` (the linear coefficient); ``fv`` and ``offset`` stay if configured.
* ``stribeck``: ``sign(dq) (fc + (fs - fc) exp(-(dq / vs)^2)) + fv dq + offset``: the static
  level ``fs`` at rest decays to the Coulomb level ``fc`` over the Stribeck speed ``vs``.
  Written as ``fc sign(dq) (1 - e) + fs sign(dq) e`` with ``e = exp(-(dq / vs)^2)``, so ``fc``
  and ``fs`` are linear coefficients and ``vs`` the only shape parameter.

The linear coefficients (``fc``, ``fs``, ``phi1``, with ``fv``, ``offset``, ``Ia``) are part of the
standard parameter vector; the *shape* parameters (``phi2``, ``phi3``; ``vs``) are not: the
regressor is linear in the others for fixed shapes, and :mod:`physid.offline.choose.friction_shapes`
finds the shapes by variable projection.
"""

from __future__ import annotations

import numpy as np

FRICTION_MODELS = ("linear", "sigmoid", "stribeck")


def _logistic(x: np.ndarray | float) -> np.ndarray:
    """The logistic function ``1 / (1 + exp(-x))`` as ``(1 + tanh(x / 2)) / 2``: no overflow,
    1e-16 absolute error (what the differences of sigmoids here need), and no import of
    scipy.special (a tenth of a second for this one function)."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(x, float)))


# Shape parameters of each model, in order; their values live in RobotModel.friction_shape.
SHAPE_PARAMETERS: dict[str, tuple[str, ...]] = {
    "linear": (),
    "sigmoid": ("phi2", "phi3"),
    "stribeck": ("vs",),
}
# The linear coefficients of the speed-dependent (non-viscous) friction of each model.
COEFFICIENTS: dict[str, tuple[str, ...]] = {
    "linear": ("fc",),
    "sigmoid": ("phi1",),
    "stribeck": ("fc", "fs"),
}


def coulomb_sign(speed: np.ndarray, deadband: np.ndarray | float | None) -> np.ndarray:
    """The Coulomb friction column: ``sign(speed)``, and 0 where ``|speed| < deadband`` (per
    column, the joint's own units; None: no deadband). The one place this rule lives."""
    if deadband is None:
        return np.sign(speed)
    return np.where(np.abs(speed) < deadband, 0.0, np.sign(speed))


def friction_columns(
    kind: str, speed: np.ndarray, shape: tuple[float, ...], deadband: float | None = None
) -> dict[str, np.ndarray]:
    """Regressor columns (N,) of the coefficients :data:`COEFFICIENTS` ``[kind]`` at joint speeds
    ``speed`` (N,), for shape parameters ``shape`` (:data:`SHAPE_PARAMETERS` order)."""
    sign = coulomb_sign(speed, deadband)
    if kind == "linear":
        return {"fc": sign}
    if kind == "sigmoid":
        phi2, phi3 = shape
        return {"phi1": _logistic(phi2 * (speed + phi3)) - _logistic(phi2 * phi3)}
    if kind == "stribeck":
        (vs,) = shape
        decay = np.exp(-np.square(speed / vs))
        return {"fc": sign * (1.0 - decay), "fs": sign * decay}
    raise ValueError(f"unknown friction model {kind!r}")


def friction_column_derivatives(
    kind: str, speed: np.ndarray, shape: tuple[float, ...], deadband: float | None = None
) -> dict[str, np.ndarray]:
    """Derivatives (N, n_shape) of each column of :func:`friction_columns` with respect to the
    shape parameters (the sign is held: its derivative is 0 away from zero speed)."""
    if kind == "sigmoid":
        phi2, phi3 = shape
        outer = _logistic(phi2 * (speed + phi3))
        inner = _logistic(phi2 * phi3)
        slope_outer, slope_inner = outer * (1.0 - outer), inner * (1.0 - inner)
        d_phi2 = slope_outer * (speed + phi3) - slope_inner * phi3
        d_phi3 = phi2 * (slope_outer - slope_inner)
        return {"phi1": np.stack([d_phi2, d_phi3], axis=-1)}
    if kind == "stribeck":
        (vs,) = shape
        ratio2 = np.square(speed / vs)
        d_decay = (np.exp(-ratio2) * 2.0 * ratio2 / vs)[:, None]
        sign = coulomb_sign(speed, deadband)[:, None]
        return {"fc": -sign * d_decay, "fs": sign * d_decay}
    return {term: np.zeros((len(speed), 0)) for term in COEFFICIENTS[kind]}


def initial_shape(kind: str, speed_scale: float) -> tuple[float, ...]:
    """A start for the shape of a joint whose friction changes over ``speed_scale`` (joint
    units/s): the sigmoid switches over ~``speed_scale`` (``phi2 = 4 / speed_scale``, no shift),
    the Stribeck decay has ``vs = speed_scale``."""
    speed_scale = max(float(speed_scale), 1e-6)
    if kind == "sigmoid":
        return (4.0 / speed_scale, 0.0)
    if kind == "stribeck":
        return (speed_scale,)
    return ()


def friction_torque(
    kind: str,
    speed: np.ndarray,
    shape: tuple[float, ...],
    coefficients: dict[str, float],
    deadband: float | None = None,
) -> np.ndarray:
    """The speed-dependent friction torque (N,) of one joint: its :data:`COEFFICIENTS` times
    their columns plus ``fv dq`` and ``offset`` (absent coefficients are 0)."""
    columns = friction_columns(kind, speed, shape, deadband)
    torque = coefficients.get("fv", 0.0) * speed + coefficients.get("offset", 0.0)
    for term, column in columns.items():
        torque = torque + coefficients.get(term, 0.0) * column
    return torque


def coulomb_equivalent(
    kind: str, shape: tuple[float, ...], coefficients: dict[str, float]
) -> tuple[float, float]:
    """The Coulomb level and torque offset ``(fc, offset)`` of the linear model with the same
    friction as ``kind`` at high speed in both directions (for formats that hold only
    ``fv dq + fc sign(dq)``): the sigmoid tends to ``phi1 (1 - s0)`` and ``-phi1 s0``
    (``s0 = 1 / (1 + exp(-phi2 phi3))``), so ``fc = phi1 / 2``, ``offset = phi1 (1/2 - s0)``;
    the Stribeck model tends to its Coulomb level ``fc`` (the static level ``fs`` is lost)."""
    offset = coefficients.get("offset", 0.0)
    if kind == "sigmoid":
        phi1 = coefficients.get("phi1", 0.0)
        s0 = float(_logistic(shape[0] * shape[1]))
        return 0.5 * phi1, offset + phi1 * (0.5 - s0)
    return coefficients.get("fc", 0.0), offset
