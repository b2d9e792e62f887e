"""What the data determine: where every standard parameter comes from, and how sure it is.

*Sources.* A standard parameter is ``data`` when it is a base parameter on its own (nothing
regrouped into it) that the data decide, ``regrouped`` when the data decide only a base
combination it belongs to (``joint_2.Izz + 0.0625 joint_3.m``), and ``prior`` when no decided
base parameter contains it (the mass of the first link of a fixed-base arm, the inertia of a link
about an axis it never turns about): then the URDF's value and its prior std decide it, and it
moves with the body's decided parameters. *Decided* is numerical, not only structural
(:func:`decided_by_data`): a base combination the motion excites, but so weakly (or so nearly
collinear with others) that its posterior variance stays above a quarter of its prior variance,
is left to the prior; so is a joint term in the same position (:func:`prior_limited_sources`).
A body quantity left to the prior that nonetheless sits far from the URDF's value (moved with the
body's decided parameters) is re-marked ``regrouped`` (:func:`departed_from_prior`).

*Uncertainty of the consistent estimate.* The consistency SDP (:mod:`.consistent`) is a maximum a
posteriori problem. Its Laplace approximation at the solution, ignoring which consistency
constraints are active (which can only make the band wider), gives the covariance of the
standard parameters: the inverse Hessian of the negative log posterior,

    H = X^T X / sigma^2 / kappa  +  prior curvature,

with ``X`` the weighted regressor, ``sigma^2`` the weighted residual variance (paper C eq. 7)
and ``kappa`` the factor by which serially correlated residuals inflate the variance of the
least-squares estimate (median ratio of the Newey-West to the eq. 6 variances of the base
parameters). The log-det prior ``D(J || J0) / rho^2`` has curvature ``tr(J^-1 B_a J^-1 B_b) /
(2 rho^2)`` with ``B_a`` the pseudo-inertia basis. Standard deviations of mass, centre of mass
and inertia about the centre of mass follow by the delta method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from physid.body.inertia import mass_com_inertia_from_pi
from physid.numerics.linalg import scaled_pinv
from physid.offline.fit.gaussian_prior import gaussian_prior
from physid.offline.fit.joint_prior import JointPrior
from physid.offline.observe.reduced import ReducedSystem
from physid.robot.model import RobotModel
from physid.robot.regressor import BaseParameters

SOURCES = ("data", "regrouped", "prior")
DEPARTED_PRIOR_STD = 3.0  # a 'prior' quantity this many prior std from the URDF's value moved


@dataclass(frozen=True)
class BodyUncertainty:
    """Standard deviations of one body's reported quantities."""

    mass: float  # kg
    com: np.ndarray  # (3,) m, in the joint frame
    inertia: np.ndarray  # (3, 3) kg m^2, about the centre of mass
    mass_source: str
    com_source: str
    inertia_source: str

    def as_dict(self) -> dict:
        return {
            "mass": self.mass,
            "com": self.com.tolist(),
            "inertia": self.inertia.tolist(),
            "source": {
                "mass": self.mass_source,
                "com": self.com_source,
                "inertia": self.inertia_source,
            },
        }


def parameter_sources(base: BaseParameters, excited: np.ndarray) -> tuple[str, ...]:
    """``data`` / ``regrouped`` / ``prior`` for every standard parameter (module docstring)."""
    n_standard = len(base.independent) + len(base.dependent)
    sources = ["prior"] * n_standard
    for row, index in enumerate(base.independent):
        if excited[row]:
            sources[index] = "regrouped" if np.any(base.beta[row] != 0.0) else "data"
    for column, index in enumerate(base.dependent):
        if np.any((base.beta[:, column] != 0.0) & excited):
            sources[index] = "regrouped"
    return tuple(sources)


PRIOR_LIMITED_VARIANCE = 0.25  # posterior / prior variance above which the prior decides
COLLINEAR_CORRELATION = 0.7  # |posterior correlation| at which a partner is named in a warning


def prior_covariance(
    model: RobotModel,
    prior: np.ndarray,
    theta: np.ndarray | None,
    *,
    rows: int,
    prior_std_relative: float | None,
    prior_metric: str = "logdet",
    prior_total_mass_std_relative: float | None = None,
    joint: JointPrior | None = None,
    margin: float | None = None,
) -> np.ndarray:
    """(p, p) covariance of the fit's prior at ``theta`` (None: at the prior itself, each body
    lifted inside the consistency cone as the fit's divergence is for its ``margin``, None:
    the fit's default): the inverse of its precision
    (:func:`physid.offline.fit.gaussian_prior.gaussian_prior`: the log-det divergence's curvature
    on each body, the joint-term prior), and the prior variance of the joint terms held at
    their prior. Without an inertial prior (``prior_std_relative`` None) the
    tie-breaker's variance is huge: the data always decide."""
    quadratic = gaussian_prior(
        model,
        prior,
        rows=rows,
        prior_std_relative=prior_std_relative,
        prior_metric=prior_metric,
        prior_total_mass_std_relative=prior_total_mass_std_relative,
        joint=joint,
        at=theta,
        margin=margin,
    )
    free = ~quadratic.held
    covariance = np.diag(quadratic.held_std**2)
    precision = quadratic.precision[np.ix_(free, free)]
    covariance[np.ix_(free, free)] = scaled_pinv(precision)
    return covariance


def decided_by_data(
    base: BaseParameters, excited: np.ndarray, covariance: np.ndarray, covariance_prior: np.ndarray
) -> np.ndarray:
    """(b,) bool: the base parameters these data decide. Beyond the structural
    rank test (``excited``), a base combination ``k^T theta`` is decided when the data shrink
    its prior variance by more than a factor ``1 / PRIOR_LIMITED_VARIANCE`` -- the posterior's
    data term is ``X^T X / (sigma^2 kappa)``, so the threshold follows these data's noise
    level and length, and a combination the motion excites only weakly, or only together with
    another (near-collinear columns), is left to the prior."""
    K = base.projection
    posterior = np.einsum("ij,jk,ik->i", K, covariance, K)
    prior = np.einsum("ij,jk,ik->i", K, covariance_prior, K)
    return excited & (posterior <= PRIOR_LIMITED_VARIANCE * prior)


def prior_limited_sources(
    model: RobotModel,
    sources: tuple[str, ...],
    covariance: np.ndarray,
    covariance_prior: np.ndarray,
    joint: JointPrior | None,
) -> tuple[str, ...]:
    """``sources`` with the joint terms that the data do not decide marked ``prior``: those held
    at their prior, and those whose posterior variance is above :data:`PRIOR_LIMITED_VARIANCE`
    of their prior variance (the data did not shrink it by a factor of 4: a column the motion
    barely excites, or one collinear with another, e.g. viscous and Coulomb friction on a joint
    that moved at one speed). The threshold compares the data's information with the prior's,
    so it follows the noise of these data rather than an absolute rank test."""
    marked = list(sources)
    variance, variance_prior = np.diag(covariance), np.diag(covariance_prior)
    for index in range(model.layout.n_inertial, model.layout.size):
        limited = variance[index] > PRIOR_LIMITED_VARIANCE * variance_prior[index]
        if (joint is not None and joint.held[index]) or limited:
            marked[index] = "prior"
    return tuple(marked)


def collinear_partner(
    covariance: np.ndarray, index: int, exclude: np.ndarray | None = None
) -> tuple[int, float]:
    """The parameter whose estimate is most correlated with parameter ``index``'s in the
    posterior ``covariance`` (``exclude``: (p,) bool, parameters not to name), and that
    correlation: what the data cannot tell it apart from."""
    std = np.sqrt(np.clip(np.diag(covariance), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        correlation = covariance[index] / (std[index] * std)
    correlation = np.where(np.isfinite(correlation), correlation, 0.0)
    correlation[index] = 0.0
    if exclude is not None:
        correlation[exclude] = 0.0
    partner = int(np.argmax(np.abs(correlation)))
    return partner, float(correlation[partner])


def posterior_covariance(
    model: RobotModel,
    system: ReducedSystem,
    weights: np.ndarray,
    theta: np.ndarray,
    prior: np.ndarray,
    *,
    noise_variance: float,
    inflation: float = 1.0,
    prior_std_relative: float | None = 0.3,
    prior_total_mass_std_relative: float | None = None,
    prior_metric: str = "logdet",
    joint: JointPrior | None = None,
) -> np.ndarray:
    """Laplace covariance (p, p) of the consistent MAP estimate (module docstring).

    Mirrors the objective of :func:`physid.offline.fit.consistent.consistent_least_squares`
    (halved: that objective is twice a negative log posterior), through
    :func:`physid.offline.fit.gaussian_prior.gaussian_prior` at the estimate. Joint terms held at
    their prior (``joint.held``) are not fitted: the free parameters' estimate moves with them
    as ``d theta_free / d h = -H_ff^-1 H_fh``, so their prior variance is carried into the free
    parameters' covariance (``B Sigma_h B^T``), and theirs is the prior's.
    """
    layout = model.layout
    n_params = layout.size
    X, _ = system.stacked(np.arange(n_params), weights)
    quadratic = gaussian_prior(
        model,
        prior,
        rows=system.n_rows,
        prior_std_relative=prior_std_relative,
        prior_metric=prior_metric,
        prior_total_mass_std_relative=prior_total_mass_std_relative,
        joint=joint,
        at=theta,
    )
    hessian = X.T @ X / (noise_variance * inflation) + quadratic.precision
    hessian = 0.5 * (hessian + hessian.T)
    held = quadratic.held
    if not np.any(held):
        return scaled_pinv(hessian)
    free = ~held
    covariance_free = scaled_pinv(hessian[np.ix_(free, free)])
    coupling = covariance_free @ hessian[np.ix_(free, held)]  # B = H_ff^-1 H_fh
    held_variance = np.diag(quadratic.held_std[held] ** 2)
    covariance = np.zeros((n_params, n_params))
    covariance[np.ix_(free, free)] = covariance_free + coupling @ held_variance @ coupling.T
    covariance[np.ix_(free, held)] = -coupling @ held_variance
    covariance[np.ix_(held, free)] = covariance[np.ix_(free, held)].T
    covariance[np.ix_(held, held)] = held_variance
    return covariance


def _mass_com_inertia_vector(pi: np.ndarray) -> np.ndarray:
    mass, com, inertia = mass_com_inertia_from_pi(pi)
    return np.concatenate([[mass], com, inertia.reshape(-1)])


def _worst(sources: list[str]) -> str:
    return max(sources, key=SOURCES.index)


def delta_method_std(
    quantities: Callable[[np.ndarray], np.ndarray], pi: np.ndarray, covariance: np.ndarray
) -> np.ndarray:
    """Delta-method standard deviations of ``quantities(pi)`` (a vector, e.g. mass, com and
    inertia about the com) for parameters ``pi`` (10,) with ``covariance`` (10, 10); the Jacobian
    by central differences, each step scaled to its parameter (and to the mass where it is 0)."""
    jacobian = quantity_jacobian(quantities, pi)
    variance = np.einsum("ia,ab,ib->i", jacobian, covariance, jacobian)
    return np.sqrt(np.clip(variance, 0.0, None))


def quantity_jacobian(quantities: Callable[[np.ndarray], np.ndarray], pi: np.ndarray) -> np.ndarray:
    """Jacobian of ``quantities(pi)`` by central differences, each step scaled to its parameter
    (and to the mass where it is 0)."""
    step = 1e-6 * np.maximum(np.abs(pi), 1e-6 * max(abs(pi[0]), 1e-3))
    return np.column_stack(
        [
            (quantities(pi + h * e) - quantities(pi - h * e)) / (2 * h)
            for h, e in zip(step, np.eye(len(pi)), strict=True)
        ]
    )


def body_uncertainties(
    model: RobotModel, theta: np.ndarray, covariance: np.ndarray, sources: tuple[str, ...]
) -> dict[str, BodyUncertainty]:
    """Delta-method standard deviations of mass, com and inertia about the com, per body.

    The source of a reported quantity is the weakest of the standard parameters it depends on:
    mass on ``m``; com on ``m, mx, my, mz``; inertia about the com on all ten.
    """
    result = {}
    for joint in model.layout.body_joints:
        block = model.layout.body_slice(joint)
        std = delta_method_std(_mass_com_inertia_vector, theta[block], covariance[block, block])
        body_sources = list(sources[block])
        result[joint] = BodyUncertainty(
            float(std[0]),
            std[1:4],
            std[4:].reshape(3, 3),
            body_sources[0],
            _worst(body_sources[:4]),
            _worst(body_sources),
        )
    return result


def departed_from_prior(
    model: RobotModel,
    theta: np.ndarray,
    prior: np.ndarray,
    bodies: dict[str, BodyUncertainty],
    covariance_at_prior: np.ndarray,
) -> tuple[dict[str, BodyUncertainty], list[str]]:
    """``bodies`` with every quantity marked ``prior`` that sits more than
    :data:`DEPARTED_PRIOR_STD` prior standard deviations from the URDF's value re-marked
    ``regrouped``, and those quantities named (value, URDF value and prior std).

    Such a quantity is not the URDF's: the data decide none of its base combinations strongly
    enough on their own, but it moved with the body's parameters they do decide -- physical
    consistency ties a body's mass to its first and second moments (``m >= h^T Sigma^-1 h``),
    and the log-det prior's optimum over the mass follows them. "The prior decides it" would be
    a false statement (a mass several prior standard deviations from its URDF value is the
    data's, through the body's other parameters). ``covariance_at_prior``: the
    prior's covariance at the URDF's parameters (:func:`prior_covariance` with ``theta=None``),
    so the yardstick is the prior's own, not its curvature at the estimate."""
    marked, names = {}, []
    labels = ("mass", "com", "inertia")
    components = ("", " x", " y", " z", *(f" {a}{b}" for a in "xyz" for b in "xyz"))
    units = ("kg", "m", "kg m^2")
    for joint, body in bodies.items():
        block = model.layout.body_slice(joint)
        with np.errstate(all="ignore"):  # a massless URDF body has no com: never "departed"
            estimate = _mass_com_inertia_vector(theta[block])
            reference = _mass_com_inertia_vector(prior[block])
            std = delta_method_std(
                _mass_com_inertia_vector, prior[block], covariance_at_prior[block, block]
            )
            gap = np.nan_to_num(np.abs(estimate - reference) / np.maximum(std, 1e-300))
        changes = {}
        for label, unit, rows, source in zip(
            labels,
            units,
            (slice(0, 1), slice(1, 4), slice(4, 13)),
            (body.mass_source, body.com_source, body.inertia_source),
            strict=True,
        ):
            worst = int(np.argmax(gap[rows])) + rows.start
            if source == "prior" and gap[worst] > DEPARTED_PRIOR_STD:
                changes[f"{label}_source"] = "regrouped"
                names.append(
                    f"{joint} {label}{components[worst]} {estimate[worst]:.3g} {unit} (URDF "
                    f"{reference[worst]:.3g} +- {std[worst]:.2g})"
                )
        marked[joint] = replace(body, **changes) if changes else body
    return marked, names


def moving_mass_std(model: RobotModel, covariance: np.ndarray) -> float:
    """Standard deviation of the total moving mass [kg]."""
    masses = model.layout.mass_indices
    return float(np.sqrt(max(covariance[np.ix_(masses, masses)].sum(), 0.0)))


def prior_decided(
    model: RobotModel,
    bodies: dict[str, BodyUncertainty],
    sources: tuple[str, ...],
    covariance: np.ndarray | None = None,
    held: np.ndarray | None = None,
) -> list[str]:
    """Names of the reported quantities that the URDF prior alone decides. A joint term the
    prior decides though not held (:func:`prior_limited_sources`) is named with the parameter
    the data cannot tell it apart from, when their correlation reaches
    :data:`COLLINEAR_CORRELATION` (given the posterior ``covariance``)."""
    names = []
    for joint, body in bodies.items():
        quantities = [
            q for q, s in (("mass", body.mass_source), ("com", body.com_source)) if s == "prior"
        ]
        if body.inertia_source == "prior":
            quantities.append("inertia")
        if quantities:
            names.append(f"{joint} {'/'.join(quantities)}")
    layout = model.layout
    for index in range(layout.n_inertial, layout.size):
        if sources[index] != "prior":
            continue
        name = layout.names[index]
        if covariance is not None and (held is None or not held[index]):
            # a held partner has its own warning (one-way joints)
            partner, correlation = collinear_partner(covariance, index, held)
            if abs(correlation) >= COLLINEAR_CORRELATION:
                name += (
                    f" (not separable from {layout.names[partner]} on these data: "
                    f"correlation {correlation:+.2f})"
                )
        names.append(name)
    return names
