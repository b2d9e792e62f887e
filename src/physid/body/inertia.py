"""One rigid body's 10 inertial parameters: conversions, consistency, parametrizations, distances.

Convention (Pinocchio's ``Inertia.toDynamicParameters()`` order, docs/architecture.md layer 1)::

    pi = [m, mx, my, mz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]

with ``h = m c`` the first moment of mass and ``I`` the rotational inertia about the body frame
*origin* (not the centre of mass), all in the body frame, SI units (kg, kg m, kg m^2).

The pseudo-inertia ``J = [[Sigma, h], [h^T, m]]``, ``Sigma = 1/2 tr(I) 1 - I`` (Wensing, Kim,
Slotine 2017; paper B eq. 8) is positive definite exactly when the body is fully physically
consistent. Two smooth maps from R^10 onto the consistent set are provided: log-Cholesky (paper E
eqs. 16-17, Rucker & Wensing 2022) here, and exponential-eigenvalue (paper B section III-B) in
:mod:`physid.body.expeig`, which builds on this module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from numpy.typing import ArrayLike, NDArray

from physid.errors import InputError

PARAMETER_NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")

# Row and column of (Ixx, Ixy, Iyy, Ixz, Iyz, Izz) in the symmetric 3x3 matrix.
_SYM_ROWS = np.array([0, 0, 1, 0, 1, 2])
_SYM_COLS = np.array([0, 1, 1, 2, 2, 2])


# --- validation ----------------------------------------------------------------------------------
def _as_float_array(
    x: ArrayLike, tail: tuple[int, ...], what: str, source: str | None = None
) -> NDArray[np.float64]:
    """``x`` as a float array of shape ``(..., *tail)`` with finite entries, else InputError."""
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} is not numeric: {exc}", source=source) from None
    if arr.ndim < len(tail) or arr.shape[arr.ndim - len(tail) :] != tail:
        shape = "(..., " + ", ".join(map(str, tail)) + ")"
        raise InputError(f"{what} must have shape {shape}, got {arr.shape}", source=source)
    if not np.all(np.isfinite(arr)):
        index = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        label = PARAMETER_NAMES[index[-1]] if tail == (10,) else f"entry {index}"
        if tail == (10,) and arr.ndim > 1:
            label += f" of body {index[:-1]}"
        raise InputError(f"{what} has a non-finite {label} = {arr[index]}", source=source)
    return arr


def _as_pi(pi: ArrayLike, source: str | None = None) -> NDArray[np.float64]:
    return _as_float_array(pi, (10,), "inertial parameters pi", source)


def _symmetric(matrix: NDArray[np.float64], what: str, source: str | None = None) -> NDArray:
    """Symmetrised ``matrix``; InputError if it is visibly not symmetric (beyond rounding)."""
    asym = np.abs(matrix - np.swapaxes(matrix, -1, -2)).max(initial=0.0)
    if asym > 1e-9 * max(np.abs(matrix).max(initial=0.0), 1e-300):
        raise InputError(f"{what} is not symmetric (max |A - A^T| = {asym:.3g})", source=source)
    return 0.5 * (matrix + np.swapaxes(matrix, -1, -2))


# --- conversions ---------------------------------------------------------------------------------
def inertia_matrix_from_vector(v6: ArrayLike) -> NDArray[np.float64]:
    """Symmetric ``(..., 3, 3)`` inertia from ``(..., 6)`` ``(Ixx, Ixy, Iyy, Ixz, Iyz, Izz)``."""
    v6 = _as_float_array(v6, (6,), "inertia vector (Ixx, Ixy, Iyy, Ixz, Iyz, Izz)")
    inertia = np.empty(v6.shape[:-1] + (3, 3))
    inertia[..., _SYM_ROWS, _SYM_COLS] = v6
    inertia[..., _SYM_COLS, _SYM_ROWS] = v6
    return inertia


def inertia_vector_from_matrix(inertia: ArrayLike) -> NDArray[np.float64]:
    """Entries ``(Ixx, Ixy, Iyy, Ixz, Iyz, Izz)`` of a symmetric ``(..., 3, 3)`` inertia matrix."""
    inertia = _symmetric(_as_float_array(inertia, (3, 3), "inertia matrix"), "inertia matrix")
    return inertia[..., _SYM_ROWS, _SYM_COLS]


def _parallel_axis_shift(h: NDArray, mass: NDArray) -> NDArray[np.float64]:
    """``S(h) S(h)^T / m = (|h|^2 1 - h h^T) / m``: inertia of the point mass at c about the
    origin (paper B eq. 5), ``(..., 3, 3)``."""
    hh = h[..., :, None] * h[..., None, :]
    return (np.einsum("...i,...i", h, h)[..., None, None] * np.eye(3) - hh) / mass[..., None, None]


def pi_from_mass_com_inertia(
    mass: ArrayLike, com: ArrayLike, inertia_about_com: ArrayLike
) -> NDArray[np.float64]:
    """pi from mass [kg], centre of mass in the body frame [m] and the ``3x3`` rotational inertia
    about the centre of mass, body-frame axes [kg m^2] (parallel-axis theorem, paper B eq. 5).

    Batched: ``mass (...)``, ``com (..., 3)``, ``inertia_about_com (..., 3, 3)``. No consistency
    check here (see :func:`require_consistent`).
    """
    mass = _as_float_array(mass, (), "mass")
    com = _as_float_array(com, (3,), "centre of mass")
    inertia_c = _symmetric(_as_float_array(inertia_about_com, (3, 3), "inertia"), "inertia")
    h = mass[..., None] * com
    inertia = inertia_c + mass[..., None, None] * _parallel_axis_shift(com, np.ones_like(mass))
    shape = np.broadcast_shapes(mass.shape, com.shape[:-1], inertia.shape[:-2])
    pi = np.empty(shape + (10,))
    pi[..., 0], pi[..., 1:4], pi[..., 4:] = mass, h, inertia[..., _SYM_ROWS, _SYM_COLS]
    return pi


def mass_com_inertia_from_pi(
    pi: ArrayLike,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """``(mass [kg], com_in_body [m], inertia_about_com [kg m^2])`` from pi (paper B eq. 5).

    Batched over ``(..., 10)``. InputError if a mass is not positive (no centre of mass then).
    """
    pi = _as_pi(pi)
    mass, h = pi[..., 0], pi[..., 1:4]
    if np.any(mass <= 0.0):
        raise InputError(f"mass must be positive to define a centre of mass, got {mass.min():.6g}")
    inertia_c = inertia_matrix_from_vector(pi[..., 4:]) - _parallel_axis_shift(h, mass)
    return mass, h / mass[..., None], inertia_c


def mass_com_inertia_std(
    pi: ArrayLike, covariance: ArrayLike
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """Standard deviations ``(mass, com (3,), inertia about the com (3, 3))`` of one body whose
    parameters ``pi`` (10,) have ``covariance`` (10, 10): first-order propagation with the exact
    Jacobian of :func:`mass_com_inertia_from_pi` (``c = h / m``,
    ``I_c = I_o - (|h|^2 E - h h^T) / m``). Every estimator that writes ``params.json`` reports
    its bodies this way (identify's delta method, ``physid oe``)."""
    pi, covariance = np.asarray(pi, float), np.asarray(covariance, float)
    mass, h = float(pi[0]), pi[1:4]
    if mass <= 0.0:
        raise InputError(f"mass must be positive to define a centre of mass, got {mass:.6g}")
    jacobian = np.zeros((13, 10))
    jacobian[0, 0] = 1.0
    jacobian[1:4, 0] = -h / mass**2
    jacobian[1:4, 1:4] = np.eye(3) / mass
    shift = (h @ h * np.eye(3) - np.outer(h, h)) / mass  # the parallel-axis term
    jacobian[4:, 0] = (shift / mass).reshape(-1)
    for a in range(3):  # d shift / d h_a
        unit = np.eye(3)[a]
        d_shift = (2.0 * h[a] * np.eye(3) - np.outer(unit, h) - np.outer(h, unit)) / mass
        jacobian[4:, 1 + a] = -d_shift.reshape(-1)
    for k in range(6):  # d I_o / d (Ixx, Ixy, Iyy, Ixz, Iyz, Izz)
        jacobian[4:, 4 + k] = inertia_matrix_from_vector(np.eye(6)[k]).reshape(-1)
    # each output from the parameters it depends on only: an unknown (NaN) second moment
    # leaves the mass and centre of mass std defined (0 x NaN would poison them)
    variance = np.empty(13)
    for i, row in enumerate(jacobian):
        used = row != 0.0
        variance[i] = row[used] @ covariance[np.ix_(used, used)] @ row[used]
    std = np.sqrt(np.clip(variance, 0.0, None))
    return float(std[0]), std[1:4], std[4:].reshape(3, 3)


def pin_inertia(pi: ArrayLike) -> pin.Inertia:
    """Pinocchio's spatial inertia of one body's ``pi``, a massless body included.

    Why not ``pin.Inertia.FromDynamicParameters`` alone: it divides the first moment by the mass,
    so a link without ``<inertial>`` (mass 0) gets a NaN centre of mass and every torque through
    it is NaN. At mass 0 the first moment must be 0
    too, and the rotational inertia about the origin is the one about any point.
    """
    pi = _as_pi(pi)
    if pi[0] != 0.0:
        return pin.Inertia.FromDynamicParameters(pi)
    return pin.Inertia(0.0, np.zeros(3), inertia_matrix_from_vector(pi[4:]))


# --- pseudo-inertia ------------------------------------------------------------------------------
def pseudo_inertia(pi: ArrayLike) -> NDArray[np.float64]:
    """Pseudo-inertia ``J = [[Sigma, h], [h^T, m]]``, ``Sigma = 1/2 tr(I) 1 - I`` (Wensing, Kim,
    Slotine 2017; paper B eq. 8). ``(..., 10) -> (..., 4, 4)``; linear in pi."""
    pi = _as_pi(pi)
    inertia = inertia_matrix_from_vector(pi[..., 4:])
    J = np.zeros(pi.shape[:-1] + (4, 4))
    J[..., :3, :3] = 0.5 * np.trace(inertia, axis1=-2, axis2=-1)[..., None, None] * np.eye(3)
    J[..., :3, :3] -= inertia
    J[..., :3, 3] = J[..., 3, :3] = pi[..., 1:4]
    J[..., 3, 3] = pi[..., 0]
    return J


def pi_from_pseudo_inertia(J: ArrayLike) -> NDArray[np.float64]:
    """Inverse of :func:`pseudo_inertia`: ``I = tr(Sigma) 1 - Sigma`` (since ``tr Sigma = tr I/2``).

    ``(..., 4, 4) -> (..., 10)``; InputError if J is not symmetric.
    """
    J = _symmetric(_as_float_array(J, (4, 4), "pseudo-inertia J"), "pseudo-inertia J")
    sigma = J[..., :3, :3]
    inertia = np.trace(sigma, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - sigma
    pi = np.empty(J.shape[:-2] + (10,))
    pi[..., 0], pi[..., 1:4] = J[..., 3, 3], J[..., :3, 3]
    pi[..., 4:] = inertia[..., _SYM_ROWS, _SYM_COLS]
    return pi


# J(pi) = sum_k pi_k B_k: the linear map as a constant basis, for LMIs in CVXPY (read-only).
PSEUDO_INERTIA_BASIS: NDArray[np.float64] = pseudo_inertia(np.eye(10))
PSEUDO_INERTIA_BASIS.setflags(write=False)


# --- physical consistency ------------------------------------------------------------------------
@dataclass(frozen=True)
class ConsistencyReport:
    """Outcome of :func:`check_consistency` for one body.

    ``min_eigenvalue`` is that of J (mixed units kg, kg m, kg m^2, so it depends on the frame
    origin); ``principal_moments`` (ascending) and ``triangle_margin = I1 + I2 - I3`` [kg m^2]
    refer to the inertia about the centre of mass and are NaN when the mass is not positive.
    """

    consistent: bool
    min_eigenvalue: float
    mass: float
    principal_moments: tuple[float, float, float]
    triangle_margin: float
    reason: str


def check_consistency(
    pi: ArrayLike, margin: float = 0.0, *, name: str = "body"
) -> ConsistencyReport:
    """Full physical consistency of one body: ``lambda_min(J) > margin`` (paper B eqs. 7-8).

    With ``margin = 0`` this is ``J`` positive definite, equivalent to ``m > 0``, ``I_c`` positive
    definite and strict triangle inequalities on its principal moments ``I1 <= I2 <= I3`` (paper B
    eq. 7): given ``m > 0``, J is positive definite iff its Schur complement
    ``Sigma_c = Sigma - h h^T / m`` is, and the eigenvalues of ``Sigma_c`` are the second moments
    ``(Ij + Ik - Ii) / 2`` (paper B eq. 11). ``margin`` is in J's mixed units and frame-dependent.
    ``reason`` names the first violated condition in that order, or the margin. InputError for a
    wrong shape or non-finite entries, naming ``name``.
    """
    source = f"body '{name}'"
    pi = _as_float_array(pi, (10,), "inertial parameters pi", source)
    if pi.shape != (10,):
        raise InputError(f"expected one body, shape (10,), got {pi.shape}", source=source)
    return bodies_consistency(pi[None], margin)[0]


def bodies_consistency(pis: NDArray[np.float64], margin: float = 0.0) -> list[ConsistencyReport]:
    """:func:`check_consistency` of every body of ``pis`` (b, 10), finite, in one batch of
    eigenvalue problems (a consistent fit checks every body of every fold fit)."""
    min_eigs = np.linalg.eigvalsh(pseudo_inertia(pis))[:, 0]
    masses = pis[:, 0]
    moments_of = np.full((len(pis), 3), np.nan)
    positive = masses > 0.0
    if np.any(positive):
        moments_of[positive] = np.linalg.eigvalsh(mass_com_inertia_from_pi(pis[positive])[2])
    return [
        _report(float(min_eig), float(mass), tuple(float(v) for v in moments), margin)
        for min_eig, mass, moments in zip(min_eigs, masses, moments_of, strict=True)
    ]


def _report(
    min_eig: float, mass: float, moments: tuple[float, float, float], margin: float
) -> ConsistencyReport:
    triangle = moments[0] + moments[1] - moments[2]  # the smallest of the three sums
    consistent = min_eig > margin
    if consistent:
        return ConsistencyReport(consistent, min_eig, mass, moments, triangle, "")
    text = "(" + ", ".join(f"{v:.6g}" for v in moments) + ") kg m^2"
    if mass <= 0.0:
        reason = f"mass {mass:.6g} kg is not positive"
    elif moments[0] <= 0.0:
        reason = (
            f"inertia about the centre of mass is not positive definite: principal moments {text}"
        )
    elif triangle <= 0.0:
        reason = (
            f"principal moments {text} violate the triangle inequality I1 + I2 > I3 "
            f"by {-triangle:.3g} kg m^2"
        )
    else:
        reason = (
            f"smallest eigenvalue of the pseudo-inertia J, {min_eig:.6g}, is not above {margin:.6g}"
        )
    return ConsistencyReport(consistent, min_eig, mass, moments, triangle, reason)


def is_consistent(pi: ArrayLike, margin: float = 0.0) -> NDArray[np.bool_]:
    """``lambda_min(J(pi)) > margin`` over ``(..., 10)``, as in :func:`check_consistency`."""
    return np.linalg.eigvalsh(pseudo_inertia(pi))[..., 0] > margin


PROJECTION_FLOOR = 1e-9  # smallest eigenvalue of J after projection, relative to the largest


def project_consistent(pi: ArrayLike) -> tuple[NDArray[np.float64], bool]:
    """``pi`` itself if its pseudo-inertia's smallest eigenvalue exceeds 0.1 x
    :data:`PROJECTION_FLOOR` x the largest (consistent, with room for the rounding of later
    conversions and files), else the nearest body (Frobenius norm of J) whose eigenvalues are at
    least :data:`PROJECTION_FLOOR` x the largest, and True.

    For estimates that are consistent in exact arithmetic (a log-Cholesky chart, a convex
    combination of consistent bodies) but not after rounding: a near-flat body at 1e4 kg m^2
    can come out with ``I1 + I2 - I3 = -1e-6``. The floor is relative, so the projected body
    passes the absolute test at any scale, far above round-off (1e-16 x the largest).
    """
    pi = np.asarray(pi, dtype=float)
    eigenvalues, vectors = np.linalg.eigh(pseudo_inertia(pi))
    floor = PROJECTION_FLOOR * max(float(eigenvalues[-1]), 1e-300)
    if eigenvalues[0] > 0.1 * floor:  # consistent with room for rounding downstream
        return pi, False
    clipped = (vectors * np.maximum(eigenvalues, floor)) @ vectors.T
    return pi_from_pseudo_inertia(0.5 * (clipped + clipped.T)), True


def require_consistent(
    pi: ArrayLike, margin: float = 0.0, name: str = "body"
) -> NDArray[np.float64]:
    """pi as a float array if :func:`check_consistency` passes, else InputError naming ``name``."""
    report = check_consistency(pi, margin, name=name)
    if not report.consistent:
        raise InputError(f"not physically consistent: {report.reason}", source=f"body '{name}'")
    return np.array(pi, dtype=float)


def _require_all_consistent(pi: NDArray[np.float64], what: str) -> None:
    """InputError naming the first inconsistent body of a ``(..., 10)`` batch."""
    ok = is_consistent(pi)
    if not np.all(ok):
        index = tuple(int(i) for i in np.argwhere(~ok)[0]) if ok.ndim else ()
        require_consistent(
            pi[index], name=f"{what}[{','.join(map(str, index))}]" if index else what
        )


# --- log-Cholesky parametrization (paper E eqs. 16-17; Rucker & Wensing 2022) ---------------------
# theta = [alpha, d1, d2, d3, s12, s13, s23, t1, t2, t3] (paper E eq. 16 order; Pinocchio's
# LogCholeskyParameters and paper B eq. 10 swap s13 and s23). Position of theta[1:] in U:
_LC_POSITIONS = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3))
_LC_ROWS = np.array([p[0] for p in _LC_POSITIONS])
_LC_COLS = np.array([p[1] for p in _LC_POSITIONS])
_LC_IS_LOG = np.array([True, True, True] + [False] * 6)


def _log_cholesky_factor(theta: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
    """``U`` (upper triangular, ``J = U U^T``) and ``dU/dtheta`` of shape ``(..., 10, 4, 4)``."""
    scale = np.exp(theta[..., 0])[..., None]
    entries = np.where(_LC_IS_LOG, np.exp(theta[..., 1:]), theta[..., 1:])
    U = np.zeros(theta.shape[:-1] + (4, 4))
    U[..., _LC_ROWS, _LC_COLS] = scale * entries
    U[..., 3, 3] = scale[..., 0]
    dU = np.zeros(theta.shape[:-1] + (10, 4, 4))
    dU[..., 0, :, :] = U  # U is proportional to exp(alpha)
    slope = np.where(_LC_IS_LOG, entries, 1.0)  # d exp(d)/dd = exp(d); linear entries: 1
    dU[..., np.arange(1, 10), _LC_ROWS, _LC_COLS] = scale * slope
    return U, dU


def pi_from_log_cholesky(theta: ArrayLike) -> NDArray[np.float64]:
    """pi from log-Cholesky ``theta = [alpha, d1, d2, d3, s12, s13, s23, t1, t2, t3]`` (paper E
    eq. 16), ``J = U U^T`` with ``U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2],
    [0, 0, e^d3, t3], [0, 0, 0, 1]]`` (Rucker & Wensing 2022), so ``m = e^(2 alpha)``, ``c = t``.

    Every finite theta gives a consistent body. Note: paper E's eq. 17 as printed is
    ``vech(U^T U)`` (its mass is ``e^(2 alpha) (1 + |t|^2)``), a different bijection; we follow
    ``J = U U^T`` like Rucker & Wensing and Pinocchio. ``(..., 10) -> (..., 10)``.
    """
    theta = _as_float_array(theta, (10,), "log-Cholesky theta")
    U, _ = _log_cholesky_factor(theta)
    return pi_from_pseudo_inertia(U @ np.swapaxes(U, -1, -2))


def log_cholesky_from_pi(pi: ArrayLike) -> NDArray[np.float64]:
    """Inverse of :func:`pi_from_log_cholesky` (unique); InputError if pi is not consistent."""
    pi = _as_pi(pi)
    _require_all_consistent(pi, "pi")
    # The upper-lower factor of J is the flipped lower Cholesky factor of the flipped J.
    lower = np.linalg.cholesky(pseudo_inertia(pi)[..., ::-1, ::-1])
    U = lower[..., ::-1, ::-1]
    scale = U[..., 3, 3]
    entries = U[..., _LC_ROWS, _LC_COLS] / scale[..., None]
    theta = np.empty(pi.shape)
    theta[..., 0] = np.log(scale)
    theta[..., 1:] = np.where(_LC_IS_LOG, np.log(np.where(_LC_IS_LOG, entries, 1.0)), entries)
    return theta


def log_cholesky_jacobian(theta: ArrayLike) -> NDArray[np.float64]:
    """Exact ``d pi / d theta`` ``(..., 10, 10)`` of :func:`pi_from_log_cholesky`:
    ``dJ = dU U^T + U dU^T`` pushed through the linear map J -> pi."""
    theta = _as_float_array(theta, (10,), "log-Cholesky theta")
    U, dU = _log_cholesky_factor(theta)
    dJ = dU @ np.swapaxes(U, -1, -2)[..., None, :, :]
    return np.swapaxes(pi_from_pseudo_inertia(dJ + np.swapaxes(dJ, -1, -2)), -1, -2)


# Paper E eq. 16 order <-> Pinocchio's LogCholeskyParameters order (s13 and s23 swapped); the
# permutation is its own inverse.
_PAPER_E_TO_PINOCCHIO = np.array([0, 1, 2, 3, 4, 6, 5, 7, 8, 9])


def log_cholesky_pi_and_jacobian(
    theta: NDArray[np.float64],
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``pi = g(theta)`` and ``G = d pi / d theta`` (eq. 21) for ``theta`` of shape (n, 10).

    The same chart as :func:`pi_from_log_cholesky` and :func:`log_cholesky_jacobian`
    (``J = U U^T``, tested equal to them to rounding), evaluated by Pinocchio's
    ``LogCholeskyParameters`` in C++: about 3 us per body instead of 60 us for the vectorised
    NumPy pair, which pays off only on large batches. The online EKF calls this once per sample,
    so its latency per sample depends on it.
    """
    n = theta.shape[0]
    pi, G = np.empty((n, 10)), np.empty((n, 10, 10))
    for b in range(n):
        chart = pin.LogCholeskyParameters(theta[b, _PAPER_E_TO_PINOCCHIO])
        pi[b] = chart.toDynamicParameters()
        G[b] = chart.calculateJacobian()[:, _PAPER_E_TO_PINOCCHIO]
    return pi, G


# --- distances between inertias ------------------------------------------------------------------
def _relative_eigenvalues(pi_1: ArrayLike, pi_2: ArrayLike) -> NDArray[np.float64]:
    """Eigenvalues of ``J1^-1/2 J2 J1^-1/2`` (= those of ``J1^-1 J2``), ``(..., 4)``."""
    pi_1, pi_2 = _as_pi(pi_1, "pi_1"), _as_pi(pi_2, "pi_2")
    _require_all_consistent(pi_1, "pi_1")
    _require_all_consistent(pi_2, "pi_2")
    J1, J2 = pseudo_inertia(pi_1), pseudo_inertia(pi_2)
    L1 = np.linalg.cholesky(J1)  # L1^-1 J2 L1^-T is congruent-similar to J1^-1/2 J2 J1^-1/2
    A = np.linalg.solve(L1, J2)
    M = np.linalg.solve(L1, np.swapaxes(A, -1, -2))
    return np.linalg.eigvalsh(0.5 * (M + np.swapaxes(M, -1, -2)))


def riemannian_distance(pi_1: ArrayLike, pi_2: ArrayLike) -> NDArray[np.float64]:
    """Affine-invariant Riemannian distance ``||log(J1^-1/2 J2 J1^-1/2)||_F`` between the
    pseudo-inertias of two consistent bodies (Lee & Park 2018). Symmetric, invariant under
    ``J -> A J A^T`` (e.g. a change of body frame). Batched over ``(..., 10)``."""
    return np.sqrt(np.sum(np.log(_relative_eigenvalues(pi_1, pi_2)) ** 2, axis=-1))


def logdet_divergence(pi_1: ArrayLike, pi_2: ArrayLike) -> NDArray[np.float64]:
    """Log-det (Bregman) divergence ``D(J1 || J2) = -log det(J2^-1 J1) + tr(J2^-1 J1) - 4``
    (Lee, Wensing, Park 2020). ``>= 0``, zero iff equal, not symmetric. Batched."""
    lam = _relative_eigenvalues(pi_2, pi_1)  # eigenvalues of J2^-1 J1
    return np.sum((lam - 1.0) - np.log(lam), axis=-1)


# --- random consistent bodies --------------------------------------------------------------------
def random_consistent_pi(
    rng: np.random.Generator,
    size: int | tuple[int, ...] | None = None,
    mass_range_kg: tuple[float, float] = (0.1, 10.0),
    com_scale_m: float = 0.3,
    radius_range_m: tuple[float, float] = (0.01, 0.5),
) -> NDArray[np.float64]:
    """Random fully consistent bodies, shape ``(10,)`` or ``(*size, 10)``.

    Mass log-uniform in ``mass_range_kg``; centre of mass normal with std ``com_scale_m``;
    second moments of mass ``L_i = m r_i^2`` with radii log-uniform in ``radius_range_m`` (so the
    principal moments ``P L`` satisfy the triangle inequalities, paper B eq. 11); uniformly random
    principal axes.
    """
    shape = () if size is None else tuple(np.atleast_1d(size).astype(int).tolist())
    mass = np.exp(rng.uniform(*np.log(mass_range_kg), size=shape))
    com = rng.normal(scale=com_scale_m, size=shape + (3,))
    radii = np.exp(rng.uniform(*np.log(radius_range_m), size=shape + (3,)))
    second_moments = mass[..., None] * radii**2
    from scipy.spatial.transform import Rotation  # here: 0.3 s of import every command avoids

    n = int(np.prod(shape))
    R = Rotation.random(n, random_state=rng).as_matrix().reshape(shape + (3, 3))
    sigma_c = (R * second_moments[..., None, :]) @ np.swapaxes(R, -1, -2)
    inertia_c = np.trace(sigma_c, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - sigma_c
    return pi_from_mass_com_inertia(mass, com, inertia_c)


__all__ = [
    "PARAMETER_NAMES",
    "PSEUDO_INERTIA_BASIS",
    "ConsistencyReport",
    "check_consistency",
    "inertia_matrix_from_vector",
    "inertia_vector_from_matrix",
    "is_consistent",
    "log_cholesky_from_pi",
    "log_cholesky_jacobian",
    "log_cholesky_pi_and_jacobian",
    "logdet_divergence",
    "mass_com_inertia_from_pi",
    "pi_from_log_cholesky",
    "pi_from_mass_com_inertia",
    "pi_from_pseudo_inertia",
    "pseudo_inertia",
    "random_consistent_pi",
    "require_consistent",
    "riemannian_distance",
]
