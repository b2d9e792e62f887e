"""The uncertainty of a finished optimal-estimation solve (paper B): Laplace covariance, its
inflations and the base-force bound.

The Laplace covariance of theta is the inverse of its marginal Gauss-Newton Hessian at the
arrival node, ``Vtt - Vxt^T Vxx^-1 Vxt`` (:func:`physid.oe.solving.riccati.parameter_hessian`),
pushed through each body's chart Jacobian ``dpi/dtheta``; directions the data do not determine
(null directions of the Jacobi-scaled Hessian) are dropped and the entries they move reported
as NaN (:func:`parameter_covariance`). With the accelerometer bias in the covariance
(``OEOptions.bias_in_covariance``, set by the bias rounds of
:mod:`physid.oe.solving.imu_bias`) the Hessian has the bias's three entries after theta's, as
in eq. 28's augmented parameters: theta's std then includes what the bias's own uncertainty
moves it by (the estimate is the rounds' fixed point, a stationary point of the joint cost).

The standard deviations are then widened (:func:`estimate_uncertainty`, one variance factor
``inflation`` for all of them):

- by the serial correlation of the process noise (:mod:`physid.oe.solving.serial`,
  ``OEOptions.serial_inflation``): the Laplace std assume eq. 16's white ``w_k``; a
  systematically wrong dynamics model leaves a slow, correlated ``w_k``, and the variance
  becomes ``x`` the long-run ratio of the whitened velocity noise (applied above 1);
- by the reduced chi-square where it is above 1 (``OEOptions.chi2_inflation``): residuals
  larger than the noise model says (the Birge ratio; what least squares does with an estimated
  noise level);
- for a floating base's estimated body, the mass its process noise's mean vertical force is
  worth (:mod:`physid.oe.solving.base_force`, ``OEOptions.base_force_bound``) is added to the
  mass variance in quadrature: the model error's bias bound, beyond the noise.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from physid.oe.model.measurements import base_dofs
from physid.oe.solving.base_force import BaseForce, mean_base_force
from physid.oe.solving.problem import OEProblem
from physid.oe.solving.riccati import SingularStepError, backward_pass, parameter_hessian
from physid.oe.solving.serial import process_noise_inflation


@dataclass(frozen=True)
class OEUncertainty:
    """The uncertainty of an estimate: ``theta_std`` (the joint terms' of their logarithms),
    ``pi_std`` ``(n_bodies, 10)`` and ``pi_cov`` ``(n_bodies, 10, 10)``, theta's covariance
    ``cov`` (the joint terms' in their values, uninflated; NaN where a null direction moves
    the entry), the accelerometer bias's ``bias_std`` and ``bias_cov`` (None unless in the
    covariance), the variance factor ``inflation``, the reduced chi-square ``chi2`` and the
    floating base's ``base_force`` (None without the bound)."""

    theta_std: NDArray
    pi_std: NDArray
    pi_cov: NDArray
    cov: NDArray
    bias_std: NDArray | None
    bias_cov: NDArray | None
    inflation: float
    chi2: float
    base_force: BaseForce | None


def estimate_uncertainty(
    problem: OEProblem,
    xs: NDArray,
    ws: NDArray,
    theta: NDArray,
    cost: float,
    *,
    rtol: float,
    bias: bool,
    serial_inflation: bool,
    chi2_inflation: bool,
    base_force_bound: bool,
) -> OEUncertainty:
    """:class:`OEUncertainty` of the estimate ``(xs, ws, theta)`` of MAP cost ``cost``: the
    Laplace covariance (:func:`parameter_covariance`, null directions below ``rtol``; NaN when
    the Hessian cannot be factored), widened by the serial correlation of the process noise
    and the reduced chi-square, and the floating base's mass bound (module docstring; the
    flags are :class:`physid.oe.solving.solver.OEOptions`'). Sets theta on the dynamics."""
    try:
        with np.errstate(all="ignore"):
            theta_std, pi_std, pi_cov, cov, bias_cov = parameter_covariance(
                problem, xs, ws, theta, rtol, bias
            )
    except (SingularStepError, np.linalg.LinAlgError):
        bodies, bias_cov = len(problem.dynamics.body_joints), None
        theta_std, cov = np.full(theta.shape, np.nan), np.full((theta.size,) * 2, np.nan)
        pi_std, pi_cov = np.full((bodies, 10), np.nan), np.full((bodies, 10, 10), np.nan)
    inflation = 1.0
    if serial_inflation and np.all(np.isfinite(ws)):
        inflation = process_noise_inflation(
            ws, problem.process_std_nodes, problem.dynamics.model.nv
        )
    chi2 = problem.reduced_chi_square(cost) if np.isfinite(cost) else float("nan")
    if chi2_inflation and np.isfinite(chi2) and chi2 > 1.0:
        inflation *= chi2
    if inflation != 1.0:
        theta_std, pi_std = theta_std * np.sqrt(inflation), pi_std * np.sqrt(inflation)
        pi_cov = pi_cov * inflation
    bias_std = None
    if bias_cov is not None:
        bias_cov = bias_cov * inflation
        bias_std = np.sqrt(np.clip(np.diag(bias_cov), 0, None))
    problem.dynamics.set_theta(theta)  # the base force weighs the robot at the estimate
    base_force = None
    if base_force_bound and np.all(np.isfinite(ws)):
        base_force, pi_std, pi_cov = _base_force_bound(problem, xs, ws, pi_std, pi_cov)
    return OEUncertainty(
        theta_std, pi_std, pi_cov, cov, bias_std, bias_cov, inflation, chi2, base_force
    )


def parameter_covariance(
    problem: OEProblem, xs: NDArray, ws: NDArray, theta: NDArray, rtol: float, bias: bool = False
) -> tuple[NDArray, NDArray, NDArray, NDArray, NDArray | None]:
    """``(theta_std, pi_std, pi_cov, cov, bias_cov)``: standard deviations of theta and pi
    from the inverse marginal GN Hessian of theta, and theta's posterior covariance (the joint
    terms' in their values; NaN on the entries a null direction touches). With ``bias`` the
    Hessian has the accelerometer bias's three entries after theta's (paper B's Laplace
    covariance, the bias in eq. 28's augmented parameters): the inverse's theta block is then
    theta's covariance with the bias unknown too, and its bias block, returned last, the
    bias's (else None)."""
    lin = problem.linearize(xs, ws, theta, bias_columns=bias)
    H = parameter_hessian(backward_pass(lin, 0.0))
    nt = theta.size
    # the joint terms' std in their values, not their logarithms: at a value drifting to 0 a
    # log coordinate loses its curvature and its coupling to what it is confounded with (an
    # armature with a body's inertia), which the null-space test below must still see
    n = problem.dynamics.n_inertial
    scale = np.ones(H.shape[0])
    scale[n:nt] = np.exp(theta[n:])
    H = 0.5 * (H + H.T) / np.outer(scale, scale)
    # null directions judged on the Jacobi-scaled Hessian (unit diagonal), whose spectrum does
    # not depend on the units: a friction the data put at 1e-6 N m has a value-curvature 1e12
    # times a body's, and the bodies' well-determined directions fell below rtol of it
    unit = np.sqrt(np.clip(np.diag(H), 1e-300, None))
    lam, vec = np.linalg.eigh(H / np.outer(unit, unit))
    keep = lam > rtol * max(lam.max(initial=0.0), 1e-300)
    cov = (vec[:, keep] / lam[keep]) @ vec[:, keep].T / np.outer(unit, unit)
    bias_cov = cov[nt:, nt:] if H.shape[0] > nt else None
    cov, vec, unit = cov[:nt, :nt], vec[:nt], unit[:nt]
    leak = np.abs(vec[:, ~keep]).max(axis=1, initial=0.0)
    touched = leak > 1e-6
    # a joint term is unknown when a null direction really moves it, not when it brushes one:
    # a body's log moment drifting to -inf (a trunk that barely turns) is flat and mixes
    # 1e-4-sized components into the leg frictions, which the legs' own motion decides
    touched[n:] = leak[n:] > 1e-2
    theta_std = np.sqrt(np.clip(np.diag(cov), 0, None)) / scale[:nt]  # the tail: of log value
    theta_std[touched] = np.nan
    null = vec[:, ~keep] / unit[:, None]  # the null directions in theta's coordinates
    null = null / np.maximum(np.linalg.norm(null, axis=0), 1e-300)
    pi_std, pi_cov = _body_std(problem, cov, null, touched)
    cov[touched] = cov[:, touched] = np.nan
    return theta_std, pi_std, pi_cov, cov, bias_cov


def _body_std(
    problem: OEProblem, cov: NDArray, null: NDArray, touched: NDArray
) -> tuple[NDArray, NDArray]:
    """``(pi_std (n_bodies, 10), pi_cov (n_bodies, 10, 10))`` through each body's chart
    Jacobian ``G``; NaN where a dropped (null) direction moves the entry."""
    G = problem.dynamics.G
    pi_std, pi_cov = [], []
    for b in range(G.shape[0]):
        s = slice(10 * b, 10 * b + 10)
        c = G[b] @ cov[s, s] @ G[b].T
        std = np.sqrt(np.clip(np.diag(c), 0, None))
        if touched[s].any():
            unknown = np.abs(G[b][:, touched[s]]).max(axis=1) > 0
            # mass and first moments that no dropped direction moves (the exp_eig rotation at
            # two nearly equal principal moments turns the inertia only) keep their std: they
            # are invariant along those directions, so the covariance on the kept ones holds
            moved = np.abs(G[b] @ null[s]).max(axis=1, initial=0.0)
            scale = max(float(np.abs(G[b]).max()), 1e-300)
            unknown[:4] = moved[:4] > 1e-6 * scale
            std[unknown] = np.nan
            c[unknown, :] = c[:, unknown] = np.nan
        pi_std.append(std)
        pi_cov.append(c)
    return np.array(pi_std), np.array(pi_cov)


def _base_force_bound(
    problem: OEProblem, xs: NDArray, ws: NDArray, pi_std: NDArray, pi_cov: NDArray
) -> tuple[BaseForce | None, NDArray, NDArray]:
    """``(BaseForce or None, pi_std, pi_cov)``: a floating base's estimated body's mass
    variance plus the square of :func:`physid.oe.solving.base_force.mean_base_force`'s mass
    bound (the dynamics' theta already set); None and the inputs unchanged without a
    free-flyer or when the base's body is not estimated."""
    model = problem.dynamics.model
    if base_dofs(model)[1] != 6 or model.names[1] not in problem.dynamics.body_joints:
        return None, pi_std, pi_cov
    force = mean_base_force(model, xs, ws, problem.process_std_nodes, problem.dynamics.dt)
    b = problem.dynamics.body_joints.index(model.names[1])
    pi_std, pi_cov = pi_std.copy(), pi_cov.copy()
    pi_cov[b, 0, 0] += force.mass_bound**2
    pi_std[b, 0] = np.sqrt(pi_std[b, 0] ** 2 + force.mass_bound**2)
    return force, pi_std, pi_cov
