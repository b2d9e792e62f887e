"""The prior of the consistent fit as a Gaussian: its curvature at a point.

The consistent fit (:mod:`.consistent`) minimises, over the standard parameters ``theta``,

    ||w (tau - W theta)||^2 / sigma^2 + D(J || J0) / rho^2 + sum_i ((theta_i - mu_i) / s_i)^2
    (+ the total-mass prior),

with ``D`` the entropic (log-det) divergence of each body's pseudo-inertia to the URDF's (Lee,
Wensing and Park, T-RO 2020) and the joint-term prior of :mod:`.joint_prior`; held joint terms
are fixed at their prior. Around a point ``theta*`` the prior is the quadratic with the
divergence's Hessian ``tr(J^-1 B_a J^-1 B_b) / 2`` (:func:`gaussian_prior`), which the Laplace
covariance (:mod:`.uncertainty`) uses at the estimate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from physid.body.inertia import PSEUDO_INERTIA_BASIS, pseudo_inertia
from physid.offline.fit.consistent import _positive_definite, default_margin, parameter_scales
from physid.offline.fit.joint_prior import JointPrior
from physid.robot.model import RobotModel


@dataclass(frozen=True)
class GaussianPrior:
    """``theta ~ N(mean, precision^-1)`` on the free parameters; ``held`` ones fixed at ``mean``
    with prior standard deviation ``held_std`` (the data do not decide them)."""

    mean: np.ndarray  # (p,)
    precision: np.ndarray  # (p, p)
    held: np.ndarray  # (p,) bool
    held_std: np.ndarray  # (p,) prior std of the held parameters (0 elsewhere)


def logdet_curvature(J: np.ndarray) -> np.ndarray:
    """Hessian (10, 10) of ``-log det J(pi) + tr(J0^-1 J(pi))`` in pi: ``tr(J^-1 B_a J^-1 B_b)``."""
    inverse = np.linalg.inv(J)
    left = np.einsum("ij,ajk->aik", inverse, PSEUDO_INERTIA_BASIS)
    return np.einsum("aij,bji->ab", left, left)


def gaussian_prior(
    model: RobotModel,
    prior: np.ndarray,
    *,
    rows: int,
    prior_std_relative: float | None,
    prior_metric: str = "logdet",
    prior_total_mass_std_relative: float | None = None,
    joint: JointPrior | None = None,
    at: np.ndarray | None = None,
    margin: float | None = None,
) -> GaussianPrior:
    """The quadratic prior of the consistent fit's objective, curvature taken at ``at``
    (default: the prior itself, each body lifted inside the cone as the fit's is for its
    consistency ``margin``; None: the fit's default, :func:`~.consistent.default_margin`).
    ``rows`` (equations of the data) scales the tie-breakers the
    fit uses where there is no prior (so they stay negligible against the data)."""
    layout = model.layout
    n_params, n_inertial = layout.size, layout.n_inertial
    point = prior if at is None else at
    precision = np.zeros((n_params, n_params))
    scales = parameter_scales(model, prior)
    if prior_std_relative is None:
        precision[:n_inertial, :n_inertial] = np.diag(1e-8 * rows / scales[:n_inertial] ** 2)
    elif prior_metric == "logdet":
        for k in range(len(layout.body_joints)):
            block = slice(10 * k, 10 * k + 10)
            J = pseudo_inertia(point[block])
            if at is None:
                if margin is None:
                    margin = default_margin(model, prior)
                J = _positive_definite(J, margin)
            precision[block, block] = 0.5 * logdet_curvature(J) / prior_std_relative**2
    else:
        precision[:n_inertial, :n_inertial] = np.diag(
            1.0 / (prior_std_relative**2 * scales[:n_inertial] ** 2)
        )
    joint_terms = np.arange(n_inertial, n_params)
    held = np.zeros(n_params, dtype=bool)
    held_std = np.zeros(n_params)
    if joint is None:
        precision[joint_terms, joint_terms] += 1e-8 * rows / scales[joint_terms] ** 2
    else:
        precision[joint_terms, joint_terms] += joint.precision()[joint_terms]
        held = joint.held.copy()
        held_std = np.where(held, joint.std, 0.0)
    prior_mass = layout.total_mass(prior)
    if prior_total_mass_std_relative is not None and prior_mass > 0:
        masses = layout.mass_indices
        precision[np.ix_(masses, masses)] += 1.0 / (prior_total_mass_std_relative * prior_mass) ** 2
    return GaussianPrior(prior.copy(), 0.5 * (precision + precision.T), held, held_std)
