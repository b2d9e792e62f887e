"""Tests of physid.body.inertia (and physid.body.expeig) against independent truths: Pinocchio,
point-mass clouds, closed forms, finite differences and the papers' equations as printed."""

import numpy as np
import pinocchio as pin
import pytest
import scipy.linalg

from physid.body.expeig import (
    _so3_right_jacobian,
    exp_eig_from_pi,
    exp_eig_jacobian,
    pi_from_exp_eig,
)
from physid.body.inertia import (
    PARAMETER_NAMES,
    PSEUDO_INERTIA_BASIS,
    check_consistency,
    inertia_matrix_from_vector,
    inertia_vector_from_matrix,
    is_consistent,
    log_cholesky_from_pi,
    log_cholesky_jacobian,
    logdet_divergence,
    mass_com_inertia_from_pi,
    pi_from_log_cholesky,
    pi_from_mass_com_inertia,
    pi_from_pseudo_inertia,
    pseudo_inertia,
    random_consistent_pi,
    require_consistent,
    riemannian_distance,
)
from physid.errors import InputError

# Paper E eq. 16 order -> Pinocchio's LogCholeskyParameters order (s13 and s23 swapped).
PAPER_E_TO_PIN = [0, 1, 2, 3, 4, 6, 5, 7, 8, 9]


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def bodies(rng, n=250):
    """Wide range of consistent bodies: 1 g to 1 t, compact and elongated, offset CoM."""
    return np.concatenate(
        [
            random_consistent_pi(rng, n // 2),
            random_consistent_pi(rng, n - n // 2, (1e-3, 1e3), 1.0, (1e-3, 2.0)),
        ]
    )


def block_errors(pi_a, pi_b):
    """Max relative error per block (m, h, I) over a batch: units differ, so compare separately."""
    err_m = np.abs(pi_a[:, 0] - pi_b[:, 0]) / np.abs(pi_b[:, 0])
    err_h = np.linalg.norm(pi_a[:, 1:4] - pi_b[:, 1:4], axis=1) / np.linalg.norm(
        pi_b[:, 1:4], axis=1
    )
    err_i = np.linalg.norm(pi_a[:, 4:] - pi_b[:, 4:], axis=1) / np.linalg.norm(pi_b[:, 4:], axis=1)
    return max(err_m.max(), err_h.max(), err_i.max())


def central_difference(f, theta, step=1e-6):
    jac = np.empty((10, 10))
    for k in range(10):
        dt = np.zeros(10)
        dt[k] = step * max(1.0, abs(theta[k]))
        jac[:, k] = (f(theta + dt) - f(theta - dt)) / (2 * dt[k])
    return jac


def point_cloud(rng, n, planar=False):
    masses = rng.uniform(0.1, 2.0, n)
    points = rng.normal(size=(n, 3))
    if planar:
        points[:, 2] = 0.0
    return masses, points


# --- conversions and pseudo-inertia against Pinocchio --------------------------------------------
def test_conversions_match_pinocchio(rng):
    for _ in range(50):
        B = rng.normal(size=(3, 3))
        inertia = pin.Inertia(rng.uniform(0.1, 10.0), rng.normal(size=3), B @ B.T)
        mass, com, inertia_c = inertia.mass, inertia.lever, inertia.inertia
        pi = pi_from_mass_com_inertia(mass, com, inertia_c)
        np.testing.assert_allclose(pi, inertia.toDynamicParameters(), rtol=1e-13, atol=1e-14)
        m, c, ic = mass_com_inertia_from_pi(pi)
        np.testing.assert_allclose([m, *c], [mass, *com], rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(ic, inertia_c, rtol=1e-12, atol=1e-13)
        # Rotational inertia about the origin = lower-right block of the spatial inertia.
        np.testing.assert_allclose(inertia_matrix_from_vector(pi[4:]), inertia.matrix()[3:, 3:])
        np.testing.assert_allclose(inertia_vector_from_matrix(inertia.matrix()[3:, 3:]), pi[4:])
        np.testing.assert_allclose(
            pseudo_inertia(pi), pin.PseudoInertia.FromDynamicParameters(pi).toMatrix(), atol=1e-13
        )
        back = pin.Inertia.FromDynamicParameters(pi_from_pseudo_inertia(pseudo_inertia(pi)))
        assert back.isApprox(inertia, 1e-12)
    assert PARAMETER_NAMES[4:] == ("Ixx", "Ixy", "Iyy", "Ixz", "Iyz", "Izz")


def test_pseudo_inertia_of_point_cloud_is_its_second_moment(rng):
    # J = sum_i m_i [p_i; 1][p_i; 1]^T: the definition, independent of the Sigma = tr(I)/2 - I map.
    masses, points = point_cloud(rng, 7)
    total = pin.Inertia.Zero()
    for m, p in zip(masses, points, strict=True):
        total += pin.Inertia(m, p, np.zeros((3, 3)))
    homogeneous = np.hstack([points, np.ones((7, 1))])
    J_true = np.einsum("i,ij,ik->jk", masses, homogeneous, homogeneous)
    np.testing.assert_allclose(pseudo_inertia(total.toDynamicParameters()), J_true, atol=1e-12)


def test_basis_contraction_and_batching(rng):
    pis = random_consistent_pi(rng, (4, 5))
    J = pseudo_inertia(pis)
    assert J.shape == (4, 5, 4, 4)
    np.testing.assert_allclose(
        np.einsum("...k,kij->...ij", pis, PSEUDO_INERTIA_BASIS), J, atol=1e-15
    )
    np.testing.assert_allclose(pseudo_inertia(pis[2, 3]), J[2, 3])
    np.testing.assert_allclose(pi_from_pseudo_inertia(J), pis, atol=1e-15)
    assert not PSEUDO_INERTIA_BASIS.flags.writeable


# --- consistency ---------------------------------------------------------------------------------
def test_consistency_equivalent_to_mass_inertia_triangle(rng):
    pis = random_consistent_pi(rng, 400)
    # Perturb the inertia about the CoM on the scale of its smallest principal moment, so that
    # consistent bodies, negative masses, indefinite I_c and triangle violations are all common.
    mass, com, inertia_c = mass_com_inertia_from_pi(pis)
    noise = rng.normal(size=(400, 3, 3)) * np.linalg.eigvalsh(inertia_c)[:, :1, None] / 2
    perturbed = pi_from_mass_com_inertia(mass, com, inertia_c + noise + noise.transpose(0, 2, 1))
    perturbed[::7, 0] *= -1.0
    flags, reasons = [], set()
    for pi in np.concatenate([perturbed, pis]):
        report = check_consistency(pi)
        if pi[0] > 0:  # Pinocchio's inertia about the CoM, then the textbook conditions
            moments = np.linalg.eigvalsh(pin.Inertia.FromDynamicParameters(pi).inertia)
            truth = moments[0] > 0 and moments[0] + moments[1] > moments[2]
            np.testing.assert_allclose(report.principal_moments, moments, atol=1e-12)
        else:
            truth = False
        assert report.consistent == truth
        assert report.consistent == (report.reason == "")
        assert report.consistent == bool(is_consistent(pi))
        flags.append(truth)
        reasons.add(report.reason.split(" ")[0])
    assert all(flags[400:]) and 0.1 < np.mean(flags[:400]) < 0.9
    assert reasons == {"", "mass", "inertia", "principal"}  # every branch is exercised


def test_planar_point_cloud_is_on_the_boundary(rng):
    # Perpendicular-axis theorem: a lamina has I1 + I2 = I3, so J is singular: not consistent.
    masses, points = point_cloud(rng, 6, planar=True)
    total = pin.Inertia.Zero()
    for m, p in zip(masses, points, strict=True):
        total += pin.Inertia(m, p, np.zeros((3, 3)))
    report = check_consistency(total.toDynamicParameters())
    assert abs(report.triangle_margin) < 1e-12 and abs(report.min_eigenvalue) < 1e-12
    masses, points = point_cloud(rng, 6)  # a 3-D cloud is strictly inside
    total = pin.Inertia.Zero()
    for m, p in zip(masses, points, strict=True):
        total += pin.Inertia(m, p, np.zeros((3, 3)))
    assert check_consistency(total.toDynamicParameters()).consistent


def test_margin(rng):
    pi = random_consistent_pi(rng)
    lam = np.linalg.eigvalsh(pseudo_inertia(pi))[0]
    assert check_consistency(pi, margin=0.99 * lam).consistent
    assert not check_consistency(pi, margin=lam).consistent  # strict: lambda_min > margin
    report = check_consistency(pi, margin=1.01 * lam)
    assert not report.consistent and "pseudo-inertia" in report.reason
    with pytest.raises(InputError, match="not above"):
        require_consistent(pi, margin=1.01 * lam)


def body(moments_c, mass=2.0):
    return pi_from_mass_com_inertia(mass, [0.1, -0.2, 0.3], np.diag(moments_c))


@pytest.mark.parametrize(
    ("pi", "pattern"),
    [
        (body([0.1, 0.2, 0.5], mass=-1.0), r"^body 'link_3': .*mass -1 kg is not positive"),
        (body([-0.1, 0.3, 0.3]), r"^body 'link_3': .*not positive definite.*-0\.1"),
        (
            body([0.1, 0.2, 0.5]),
            r"^body 'link_3': .*\(0\.1, 0\.2, 0\.5\).*triangle.*by 0\.2 kg m\^2",
        ),
        (np.r_[1.0, 0, 0, 0, 1, 0, np.nan, 0, 0, 1], r"^body 'link_3': .*non-finite Iyy"),
        (np.ones(9), r"^body 'link_3': .*shape \(\.\.\., 10\)"),
        (np.ones((2, 10)), r"^body 'link_3': expected one body"),
    ],
)
def test_require_consistent_names_body_and_violation(pi, pattern):
    with pytest.raises(InputError, match=pattern):
        require_consistent(pi, name="link_3")


def test_conversions_reject_bad_input():
    with pytest.raises(InputError, match="mass must be positive"):
        mass_com_inertia_from_pi(np.r_[0.0, np.zeros(3), 1, 0, 1, 0, 0, 1])
    with pytest.raises(InputError, match="pseudo-inertia J is not symmetric"):
        pi_from_pseudo_inertia(np.triu(np.ones((4, 4))))
    with pytest.raises(InputError, match=r"inertia matrix must have shape \(\.\.\., 3, 3\)"):
        inertia_vector_from_matrix(np.eye(4))
    with pytest.raises(InputError, match="non-finite Izz of body \\(1,\\)"):
        pseudo_inertia(np.r_[np.ones(10), np.ones(9), np.inf].reshape(2, 10))


def test_consistent_body_passes(rng):
    pi = random_consistent_pi(rng)
    np.testing.assert_array_equal(require_consistent(pi, name="x"), pi)


# --- log-Cholesky --------------------------------------------------------------------------------
def test_log_cholesky_matches_pinocchio(rng):
    for theta in rng.normal(size=(50, 10)):
        pin_params = pin.LogCholeskyParameters(theta[PAPER_E_TO_PIN])
        np.testing.assert_allclose(
            pi_from_log_cholesky(theta), pin_params.toDynamicParameters(), rtol=1e-13
        )
        pin_jac = pin_params.calculateJacobian()[:, PAPER_E_TO_PIN]
        np.testing.assert_allclose(log_cholesky_jacobian(theta), pin_jac, rtol=1e-12, atol=1e-14)


def test_paper_e_eq17_as_printed_is_u_transpose_u(rng):
    # Documents a discrepancy: paper E eq. 17 is vech(U^T U), not vech(U U^T) (mass e^2a(1+|t|^2)).
    alpha, d1, d2, d3, s12, s13, s23, t1, t2, t3 = theta = rng.normal(size=10)
    e1, e2, e3 = np.exp([d1, d2, d3])
    eq17 = np.exp(2 * alpha) * np.array(
        [t1**2 + t2**2 + t3**2 + 1, t1 * e1, t1 * s12 + t2 * e2, t1 * s13 + t2 * s23 + t3 * e3,
         s12**2 + s13**2 + s23**2 + e2**2 + e3**2, -s12 * e1, -s13 * e1,
         s13**2 + s23**2 + e1**2 + e3**2, -s12 * s13 - s23 * e2, s12**2 + e1**2 + e2**2]
    )  # fmt: skip
    eq17_pin_order = eq17[[0, 1, 2, 3, 4, 5, 7, 6, 8, 9]]  # (Ixx, Ixy, Ixz, Iyy, ...) -> Pinocchio
    U = np.exp(alpha) * np.array(
        [[e1, s12, s13, t1], [0, e2, s23, t2], [0, 0, e3, t3], [0, 0, 0, 1]]
    )
    np.testing.assert_allclose(eq17_pin_order, pi_from_pseudo_inertia(U.T @ U), rtol=1e-13)
    np.testing.assert_allclose(
        pi_from_log_cholesky(theta), pi_from_pseudo_inertia(U @ U.T), rtol=1e-13
    )
    assert np.isclose(pi_from_log_cholesky(theta)[0], np.exp(2 * alpha))


def test_log_cholesky_round_trips(rng):
    pis = bodies(rng)
    assert block_errors(pi_from_log_cholesky(log_cholesky_from_pi(pis)), pis) < 1e-10
    # theta -> pi -> theta: the inverse is as accurate as the conditioning of J allows.
    thetas = rng.normal(scale=1.5, size=(250, 10))
    J = pseudo_inertia(pi_from_log_cholesky(thetas))
    error = np.abs(log_cholesky_from_pi(pi_from_log_cholesky(thetas)) - thetas).max(axis=1)
    assert np.all(error <= 1e-14 * np.linalg.cond(J))


def test_log_cholesky_jacobian_finite_differences(rng):
    for theta in rng.normal(size=(20, 10)):
        jac = log_cholesky_jacobian(theta)
        fd = central_difference(pi_from_log_cholesky, theta)
        assert np.abs(fd - jac).max() <= 1e-6 * np.abs(jac).max()


def random_thetas(rng, n=500):
    """Random parameters over many orders of magnitude (mass e^(+-10) range)."""
    thetas = rng.normal(scale=1.5, size=(n, 10))
    thetas[:, 0] = rng.uniform(-5.0, 5.0, n)
    return thetas


def test_every_log_cholesky_theta_is_consistent(rng):
    thetas = random_thetas(rng)
    assert is_consistent(pi_from_log_cholesky(thetas)).all()


def test_inverse_maps_reject_inconsistent_bodies(rng):
    pis = random_consistent_pi(rng, 3)
    pis[1, 0] = -1.0
    with pytest.raises(InputError, match=r"^body 'pi\[1\]': not physically consistent: mass"):
        log_cholesky_from_pi(pis)
    with pytest.raises(InputError, match=r"^body 'pi\[1\]'"):
        exp_eig_from_pi(pis)


# --- exponential eigenvalue ----------------------------------------------------------------------
def test_exp_eig_matches_paper_b_equations(rng):
    P = np.array([[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    for theta in rng.normal(size=(30, 10)):
        m, h, R, L = np.exp(theta[0]), theta[1:4], pin.exp3(theta[4:7]), np.exp(theta[7:])
        inertia_c = R @ np.diag(P @ L) @ R.T  # eq. 11
        inertia = inertia_c + pin.skew(h) @ pin.skew(h).T / m  # eq. 5
        expected = np.r_[m, h, inertia_vector_from_matrix(inertia)]
        np.testing.assert_allclose(pi_from_exp_eig(theta), expected, rtol=1e-12, atol=1e-14)


def test_exp_eig_round_trips(rng):
    pis = bodies(rng)
    thetas = exp_eig_from_pi(pis)
    assert block_errors(pi_from_exp_eig(thetas), pis) < 1e-10
    assert np.all(np.diff(thetas[:, 7:], axis=1) >= 0)  # L ascending
    assert np.all(np.linalg.norm(thetas[:, 4:7], axis=1) <= np.pi + 1e-12)
    # Not injective, but theta -> pi -> theta' -> pi' must reproduce the body.
    pis2 = pi_from_exp_eig(random_thetas(rng, 250))
    assert block_errors(pi_from_exp_eig(exp_eig_from_pi(pis2)), pis2) < 1e-10


def test_every_exp_eig_theta_is_consistent(rng):
    thetas = random_thetas(rng)
    thetas[:, 4:7] *= 3.0  # rotation vectors well beyond pi
    assert is_consistent(pi_from_exp_eig(thetas)).all()


def test_so3_right_jacobian_matches_pinocchio(rng):
    # Angles on both sides of the switch from Taylor series to closed form at 0.05 rad.
    for angle in (0.0, 1e-9, 1e-3, 0.0499, 0.0501, 1.0, 3.0, 6.0):
        omega = rng.normal(size=3)
        omega *= angle / np.linalg.norm(omega)
        np.testing.assert_allclose(_so3_right_jacobian(omega), pin.Jexp3(omega), rtol=0, atol=1e-14)


def test_exp_eig_jacobian_finite_differences(rng):
    for theta in rng.normal(size=(20, 10)):
        jac = exp_eig_jacobian(theta)
        fd = central_difference(pi_from_exp_eig, theta)
        assert np.abs(fd - jac).max() <= 1e-6 * np.abs(jac).max()

        def local(delta, theta=theta):  # R = Exp(omega) Exp(delta)
            moved = theta.copy()
            moved[4:7] = pin.log3(pin.exp3(theta[4:7]) @ pin.exp3(delta[4:7]))
            moved[[0, 1, 2, 3, 7, 8, 9]] += delta[[0, 1, 2, 3, 7, 8, 9]]
            return pi_from_exp_eig(moved)

        jac_local = exp_eig_jacobian(theta, local_rotation=True)
        fd_local = central_difference(local, np.zeros(10))
        assert np.abs(fd_local - jac_local).max() <= 1e-6 * np.abs(jac_local).max()


def test_exp_eig_singularities(rng):
    theta = rng.normal(size=10)
    assert np.linalg.matrix_rank(exp_eig_jacobian(theta)) == 10
    theta[8] = theta[7]  # two equal second moments: rotation about the third axis is invisible
    assert np.linalg.matrix_rank(exp_eig_jacobian(theta)) == 9
    theta[9] = theta[7]  # sphere-like: no rotation is visible
    assert np.linalg.matrix_rank(exp_eig_jacobian(theta)) == 7
    np.testing.assert_allclose(pi_from_exp_eig(exp_eig_from_pi(pi_from_exp_eig(theta))),
                               pi_from_exp_eig(theta), rtol=1e-12)  # fmt: skip
    generic = rng.normal(size=10)
    generic[4:7] *= 2 * np.pi / np.linalg.norm(generic[4:7])  # |omega| = 2 pi: Exp is singular
    assert np.linalg.matrix_rank(exp_eig_jacobian(generic), tol=1e-8) == 8
    assert np.linalg.matrix_rank(exp_eig_jacobian(generic, local_rotation=True)) == 10


# --- distances -----------------------------------------------------------------------------------
def test_distances_identity_symmetry_and_closed_forms(rng):
    pi_1, pi_2 = random_consistent_pi(rng, 2)
    assert riemannian_distance(pi_1, pi_1) < 1e-12
    assert abs(logdet_divergence(pi_1, pi_1)) < 1e-12
    np.testing.assert_allclose(riemannian_distance(pi_1, pi_2), riemannian_distance(pi_2, pi_1))
    # Definition with matrix functions from SciPy.
    J1, J2 = pseudo_inertia(pi_1), pseudo_inertia(pi_2)
    root = scipy.linalg.sqrtm(np.linalg.inv(J1)).real
    expected = np.linalg.norm(scipy.linalg.logm(root @ J2 @ root).real, "fro")
    np.testing.assert_allclose(riemannian_distance(pi_1, pi_2), expected, rtol=1e-9)
    ratio = np.linalg.solve(J2, J1)
    expected = -np.log(np.linalg.det(ratio)) + np.trace(ratio) - 4
    np.testing.assert_allclose(logdet_divergence(pi_1, pi_2), expected, rtol=1e-9)
    # Scaling J2 = s J1 (s^4 det): d = 2 |log s|, D(J1 || s J1) = 4 log s + 4 / s - 4.
    s = 3.7
    np.testing.assert_allclose(riemannian_distance(pi_1, s * pi_1), 2 * np.log(s), rtol=1e-12)
    np.testing.assert_allclose(
        logdet_divergence(pi_1, s * pi_1), 4 * np.log(s) + 4 / s - 4, rtol=1e-12
    )


def test_distances_invariant_under_change_of_frame(rng):
    pis_1, pis_2 = random_consistent_pi(rng, 20), random_consistent_pi(rng, 20)
    for pi_1, pi_2 in zip(pis_1, pis_2, strict=True):
        M = pin.SE3(pin.exp3(rng.normal(size=3)), rng.normal(size=3))
        T = M.homogeneous
        moved_1 = pi_from_pseudo_inertia(T @ pseudo_inertia(pi_1) @ T.T)
        moved_2 = pi_from_pseudo_inertia(T @ pseudo_inertia(pi_2) @ T.T)
        # The congruence is Pinocchio's change of frame of a spatial inertia.
        pin_moved = pin.Inertia.FromDynamicParameters(pi_1).se3Action(M).toDynamicParameters()
        np.testing.assert_allclose(moved_1, pin_moved, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(
            riemannian_distance(moved_1, moved_2), riemannian_distance(pi_1, pi_2), rtol=1e-8
        )
        np.testing.assert_allclose(
            logdet_divergence(moved_1, moved_2), logdet_divergence(pi_1, pi_2), rtol=1e-8
        )


def test_bregman_nonnegative_and_batched(rng):
    pis_1, pis_2 = random_consistent_pi(rng, 300), random_consistent_pi(rng, 300)
    divergence = logdet_divergence(pis_1, pis_2)
    assert divergence.shape == (300,) and np.all(divergence > 0)
    np.testing.assert_allclose(divergence[17], logdet_divergence(pis_1[17], pis_2[17]))
    assert not np.allclose(divergence, logdet_divergence(pis_2, pis_1))  # not symmetric
    bad = pis_2[0].copy()
    bad[0] = -1.0
    with pytest.raises(InputError, match="^body 'pi_2': not physically consistent: mass"):
        riemannian_distance(pis_1[0], bad)
    with pytest.raises(InputError, match="^body 'pi': .*mass"):
        log_cholesky_from_pi(bad)


def test_random_consistent_pi_is_reproducible_and_in_range():
    pis = random_consistent_pi(np.random.default_rng(3), 100, mass_range_kg=(2.0, 5.0))
    np.testing.assert_array_equal(
        pis, random_consistent_pi(np.random.default_rng(3), 100, (2.0, 5.0))
    )
    assert pis.shape == (100, 10) and is_consistent(pis).all()
    assert np.all((pis[:, 0] >= 2.0) & (pis[:, 0] <= 5.0))
    assert random_consistent_pi(np.random.default_rng(3)).shape == (10,)


def test_projection_makes_a_rounding_inconsistent_body_consistent_at_any_scale():
    """Issue 10 item 3: a near-flat body at 3e4 kg m^2 whose triangle inequality fails by a
    rounding-sized 0.02 kg m^2 is projected (relative change 3e-7) and then passes the test."""
    from physid.body.inertia import project_consistent

    for scale in (1.0, 1e3, 1e6):
        inertia = scale * np.diag([1.5e-2, 1.5e-2, 3e-2 + 2e-8])
        pi = pi_from_mass_com_inertia(scale, np.array([0.1, 0.2, 0.3]), inertia)
        assert not check_consistency(pi).consistent
        projected, moved = project_consistent(pi)
        assert moved and check_consistency(projected).consistent
        assert np.abs(projected - pi).max() <= 1e-6 * np.abs(pi).max()
        same, moved_again = project_consistent(projected)
        assert not moved_again and np.array_equal(same, projected)
