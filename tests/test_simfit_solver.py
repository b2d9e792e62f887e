"""The condensed Levenberg-Marquardt of physid simfit (src/physid/numerics/condensed_lm.py).

Its step eliminates each window's states through the Schur complement of the block-arrow
normal equations; that must be the same step as solving the whole damped system densely, and
its covariance of the parameters the same block of the dense pseudo-inverse. Both are exact
identities of linear algebra, so they hold to rounding: with condition numbers of the random
systems below ~1e3, a relative difference above 1e-8 is an error in the elimination (a wrong
sign or a missing coupling block changes the step at order 1).
"""

from __future__ import annotations

import numpy as np
import pytest

from physid.numerics.condensed_lm import Blocks, Normal, secant_update, solve

W, R, NX, NS = 5, 9, 3, 4


def _random_blocks(rng: np.random.Generator) -> Blocks:
    return Blocks(rng.normal(size=(W, R)), rng.normal(size=NX), rng.normal(size=(W, R, NX)),
                  rng.normal(size=(W, R, NS)), rng.uniform(0.5, 2.0, NX))  # fmt: skip


def _dense(b: Blocks) -> tuple[np.ndarray, np.ndarray]:
    """The whole Jacobian and residual, window rows then prior rows."""
    J = np.zeros((W * R + NX, NX + W * NS))
    for w in range(W):
        J[w * R : (w + 1) * R, :NX] = b.G[w]
        J[w * R : (w + 1) * R, NX + w * NS : NX + (w + 1) * NS] = b.S[w]
    J[W * R :, :NX] = np.diag(b.p)
    return J, np.concatenate([b.r.ravel(), b.rp])


@pytest.mark.parametrize("lam", [0.0, 1e-3, 10.0])
def test_the_condensed_step_is_the_dense_damped_gauss_newton_step(lam):
    rng = np.random.default_rng(3)
    blocks = _random_blocks(rng)
    Dx, Dw = rng.uniform(0.5, 2.0, NX), rng.uniform(0.5, 2.0, (W, NS))
    free = np.array([True, False, True])  # the second parameter held (at a bound)
    dx, dd = Normal.of(blocks).step(lam, Dx, Dw, free)
    J, r = _dense(blocks)
    keep = np.concatenate([free, np.ones(W * NS, dtype=bool)])
    H = J.T @ J + lam * np.diag(np.concatenate([Dx, Dw.ravel()]))
    dense = np.zeros(NX + W * NS)
    dense[keep] = np.linalg.solve(H[np.ix_(keep, keep)], -(J.T @ r)[keep])
    assert dx[1] == 0.0
    np.testing.assert_allclose(np.concatenate([dx, dd.ravel()]), dense, rtol=1e-8, atol=1e-10)
    # and |J d|^2 of the step, used for the predicted reduction
    step = np.concatenate([dx, dd.ravel()])
    assert Normal.of(blocks).quadratic(dx, dd) == pytest.approx(np.sum((J @ step) ** 2), rel=1e-9)


def test_the_parameter_covariance_marginalises_the_window_states():
    blocks = _random_blocks(np.random.default_rng(4))
    J, _ = _dense(blocks)
    dense = np.linalg.pinv(J.T @ J)[:NX, :NX]
    np.testing.assert_allclose(Normal.of(blocks).covariance_x(), dense, rtol=1e-8)


def _separable(seed: int, noise: float):
    """Windows y = d_w0 exp(-x0 t) + d_w1 + x1 t from x = (1.5, 0.2), with Gaussian noise:
    (evaluate, jacobian, the true window states)."""
    t = np.linspace(0.0, 2.0, R)
    rng = np.random.default_rng(seed)
    truth_d = rng.uniform(0.5, 2.0, (W, 2))

    def model(x, d):
        return d[:, :1] * np.exp(-x[0] * t) + d[:, 1:] + x[1] * t

    data = model(np.array([1.5, 0.2]), truth_d) + noise * rng.normal(size=(W, R))

    def evaluate(x, d):
        return Blocks(model(x, d) - data, 1e-6 * x)

    def jacobian(x, d, at):
        G = np.stack([-t * d[:, :1] * np.exp(-x[0] * t), np.broadcast_to(t, (W, R))], axis=2)
        S = np.stack([np.exp(-x[0] * t) * np.ones((W, 1)), np.ones((W, R))], axis=2)
        return Blocks(at.r, at.rp, G, S, np.full(2, 1e-6))

    return evaluate, jacobian, truth_d


def test_the_solver_fits_a_separable_nonlinear_problem_within_its_bounds():
    """Windows y = d_w0 exp(-x0 t) + d_w1 + x1 t (x >= 0, x1 <= 0.3): exact data from x =
    (1.5, 0.2) are fitted to 1e-6; with the bound x1 <= 0.1 the fit stops on the bound."""
    evaluate, jacobian, truth_d = _separable(5, 0.0)
    start = (np.array([0.5, 0.0]), np.ones((W, 2)))
    bounds = (np.zeros(2), np.array([np.inf, 0.3]))
    seen = []
    fit = solve(evaluate, jacobian, *start, bounds, max_nfev=100, ftol=1e-12, xtol=1e-12,
                progress=lambda *line: seen.append(line))  # fmt: skip
    assert fit.status > 0
    # one progress line per accepted step, each lowering the cost, the last at the solution's
    steps, evaluations, costs = map(np.array, zip(*seen, strict=True))
    np.testing.assert_array_equal(steps, np.arange(1, len(seen) + 1))
    assert np.all(np.diff(costs) < 0.0) and np.all(np.diff(evaluations) > 0)
    assert costs[-1] == fit.cost and evaluations[-1] <= fit.nfev
    np.testing.assert_allclose(fit.x, [1.5, 0.2], rtol=1e-6)
    np.testing.assert_allclose(fit.offsets, truth_d, rtol=1e-6)
    secant = solve(evaluate, jacobian, *start, bounds, max_nfev=100, ftol=1e-12, xtol=1e-12,
                   secant_steps=2)  # fmt: skip
    np.testing.assert_allclose(secant.x, [1.5, 0.2], rtol=1e-6)
    np.testing.assert_allclose(secant.offsets, truth_d, rtol=1e-6)
    assert secant.njev < fit.njev
    bounded = solve(evaluate, jacobian, *start, (bounds[0], np.array([np.inf, 0.1])),
                    max_nfev=100, ftol=1e-12, xtol=1e-12)  # fmt: skip
    assert bounded.x[1] == 0.1 and bounded.cost > 1e-3


def test_the_secant_update_meets_each_windows_secant_equation_and_keeps_the_sparsity():
    """Broyden's update per window: afterwards ``G_w dx + S_w dd_w`` equals window w's residual
    change exactly, and the change to ``[G_w S_w]`` is rank one along ``D s_w`` (no other
    window's step enters it); an exact Jacobian of a linear residual is left as it is."""
    rng = np.random.default_rng(11)
    at, new = _random_blocks(rng), _random_blocks(rng)
    dx, dd = rng.normal(size=NX), rng.normal(size=(W, NS))
    Dx, Dw = rng.uniform(0.5, 3.0, NX), rng.uniform(0.5, 3.0, (W, NS))
    updated = secant_update(at, new, dx, dd, Dx, Dw)
    change = np.einsum("wri,i->wr", updated.G, dx) + np.einsum("wrj,wj->wr", updated.S, dd)
    np.testing.assert_allclose(change, new.r - at.r, rtol=1e-12, atol=1e-12)
    for w in range(W):
        delta = np.hstack([updated.G[w] - at.G[w], updated.S[w] - at.S[w]])
        direction = np.concatenate([Dx * dx, Dw[w] * dd[w]])
        along = np.outer(delta @ direction, direction) / (direction @ direction)
        np.testing.assert_allclose(delta, along, atol=1e-12)
    predicted = at.r + np.einsum("wri,i->wr", at.G, dx) + np.einsum("wrj,wj->wr", at.S, dd)
    same = secant_update(at, Blocks(predicted, at.rp), dx, dd, Dx, Dw)
    np.testing.assert_allclose(same.G, at.G, atol=1e-12)
    np.testing.assert_allclose(same.S, at.S, atol=1e-12)


def _correlated_windows(rng: np.random.Generator, G, S, x_true, d_true, shared: float):
    """Linear windows ``y_w = G_w x + S_w d_w + e_w`` whose noise is mostly one offset per
    window (``shared``) plus white noise: a rollout's error runs through its whole window."""
    n_windows, rows = G.shape[:2]
    noise = shared * rng.normal(size=(n_windows, 1)) + 0.1 * rng.normal(size=(n_windows, rows))
    return np.einsum("wri,i->wr", G, x_true) + np.einsum("wrj,wj->wr", S, d_true) + noise


def test_the_window_clustered_covariance_matches_the_scatter_of_correlated_fits():
    """Independent truth: the scatter of the least-squares x over 2,000 noise draws. With noise
    shared within each window the white ``s^2 (J^T J)^-1`` is several times too small; the
    window-clustered sandwich matches the scatter within 20 % (its bias with 40 windows is a
    few per cent)."""
    rng = np.random.default_rng(21)
    n_windows, rows = 40, 25
    G = rng.normal(size=(n_windows, rows, 2)) + np.linspace(0.0, 2.0, rows)[None, :, None]
    S = rng.normal(size=(n_windows, rows, 1))  # each window's own state: a slope-free nuisance
    x_true, d_true = np.array([1.0, -0.5]), rng.normal(size=(n_windows, 1))
    fits, clustered, white = [], [], []
    for _ in range(2000):
        y = _correlated_windows(rng, G, S, x_true, d_true, shared=1.0)
        normal = Normal.of(Blocks(-y, np.zeros(2), G, S, np.zeros(2)))
        dx, dd = normal.step(0.0, np.ones(2), np.ones((n_windows, 1)), np.ones(2, dtype=bool))
        fits.append(dx)
        at = Normal.of(Blocks(np.einsum("wri,i->wr", G, dx) + np.einsum("wrj,wj->wr", S, dd) - y,
                              np.zeros(2), G, S, np.zeros(2)))  # fmt: skip
        clustered.append(np.diag(at.clustered_covariance_x()))
        residual = np.sum((np.einsum("wri,i->wr", G, dx) + S[..., 0] * dd - y) ** 2)
        white.append(np.diag(at.covariance_x()) * residual / (n_windows * rows - 2 - n_windows))
    scatter = np.var(np.array(fits), axis=0)
    np.testing.assert_allclose(np.mean(clustered, axis=0), scatter, rtol=0.2)
    assert np.all(np.mean(white, axis=0) < 0.5 * scatter)  # what the white formula claims


def test_the_solver_stops_once_the_newton_step_is_below_a_tenth_of_every_std():
    """On the separable problem of the test above, with noisy data: given ``std_of`` the solve
    stops with that reason, at a point whose distance to the exact minimum (the same solve to
    1e-12) is below 0.1 std in every parameter, in fewer evaluations."""
    evaluate, jacobian, _ = _separable(6, 0.05)

    def std_of(normal, cost):
        return np.sqrt(np.diag(normal.covariance_x()) * 2.0 * cost / (W * R - 2 - 2 * W))

    start = (np.array([0.5, 0.0]), np.ones((W, 2)))
    bounds = (np.zeros(2), np.full(2, np.inf))
    exact = solve(evaluate, jacobian, *start, bounds, max_nfev=200, ftol=1e-14, xtol=1e-14)
    early = solve(evaluate, jacobian, *start, bounds, max_nfev=200, ftol=1e-14, xtol=1e-14,
                  std_of=std_of)  # fmt: skip
    assert early.status == 2 and "standard deviation" in early.message
    std = std_of(exact.normal, exact.cost)
    assert np.all(np.abs(early.x - exact.x) < 0.1 * std)
    assert early.nfev < exact.nfev


def test_a_large_parameter_at_its_value_does_not_stop_the_others():
    """The step test is in the Marquardt scaling, as MINPACK's: unscaled, a servo's kp of 1e6
    N m/rad that need not move made every step of the other parameters "smaller than xtol"
    (1.2 for xtol 1e-6), and simfit stopped after one step, nothing fitted, status ok. Here the
    separable problem with a third parameter of 2e6 already at its value (its own prior row)."""
    evaluate, jacobian, truth_d = _separable(5, 0.0)

    def evaluate3(x, d):
        at = evaluate(x[:2], d)
        return Blocks(at.r, np.r_[at.rp, 1e-6 * (x[2] - 2e6)])

    def jacobian3(x, d, at):
        blocks = jacobian(x[:2], d, at)
        G = np.concatenate([blocks.G, np.zeros((W, R, 1))], axis=2)
        return Blocks(at.r, at.rp, G, blocks.S, np.r_[blocks.p, 1e-6])

    bounds = (np.zeros(3), np.full(3, np.inf))
    fit = solve(evaluate3, jacobian3, np.array([1.2, 0.2, 2e6]), truth_d.copy(), bounds,
                max_nfev=100, ftol=1e-12, xtol=1e-6)  # fmt: skip
    assert fit.status > 0, fit.message
    np.testing.assert_allclose(fit.x, [1.5, 0.2, 2e6], rtol=1e-6)


def test_no_step_from_the_start_is_not_convergence():
    """A cost no step can lower (here: a residual that jumps away from every trial point) ends
    with status -1 and says nothing was fitted; it was reported as status 3, which simfit read
    as converged."""
    evaluate, jacobian, _ = _separable(5, 0.0)
    start = (np.array([0.5, 0.0]), np.ones((W, 2)))

    def worse_elsewhere(x, d):
        at = evaluate(x, d)
        moved = not (np.array_equal(x, start[0]) and np.array_equal(d, start[1]))
        return Blocks(at.r + 1e3, at.rp) if moved else at

    fit = solve(worse_elsewhere, jacobian, *start, (np.zeros(2), np.full(2, np.inf)),
                max_nfev=200, ftol=1e-6, xtol=1e-6)  # fmt: skip
    assert fit.status == -1 and "nothing fitted" in fit.message
    np.testing.assert_array_equal(fit.x, start[0])


def test_a_value_the_data_moved_far_from_its_start_is_not_the_prior_s():
    """A PyBullet iiwa's wrist armature came out 0.0622 +- 0.017 kg m^2 from a start of 0.0025
    (prior std 0.01): six prior std away, labelled 'prior' because the misfit had inflated its
    std. A value the prior held near its start with a wide std is the prior's; a narrowed std
    is the data's."""
    from physid.simfit.fit import parameter_source

    assert parameter_source(0.0622, 0.0025, 0.017, 0.01) == "data"
    assert parameter_source(0.004, 0.0025, 0.009, 0.01) == "prior"
    assert parameter_source(0.004, 0.0025, 0.001, 0.01) == "data"
    assert parameter_source(0.004, 0.0025, float("nan"), 0.01) == "prior"


def test_a_parameter_the_rollouts_do_not_depend_on_keeps_its_prior_variance():
    """A frictionloss beyond every force its joint needs leaves the rollouts unchanged: its
    Jacobian column is zero and only its prior row informs it, at 1e-14 of the window states'
    precision (residuals in units of a 2e-5 rad noise). The relative cut-off of the
    pseudo-inverse dropped that direction, and the parameter read a std of 6e-10 N m (an
    xArm7 simulated by MuJoCo: 17 N m for a truth of 1.13); it is its prior's variance, the
    other parameters' variances unchanged to rounding."""
    rng = np.random.default_rng(5)
    blocks = _random_blocks(rng)
    G = 1e7 * blocks.G  # well-determined parameters and states, in noise units
    G[:, :, 2] = 0.0  # the rollouts do not depend on parameter 2
    p = np.array([1.0, 1.0, 1.0 / 6.8])  # its prior std: 6.8
    scaled = Blocks(blocks.r, blocks.rp, G, 1e7 * blocks.S, p)
    covariance = Normal.of(scaled).covariance_x()
    assert covariance[2, 2] == pytest.approx(6.8**2, rel=1e-9)
    J, _ = _dense(scaled)
    dense = np.linalg.inv(J.T @ J)[:NX, :NX]
    assert np.allclose(np.diag(covariance)[:2], np.diag(dense)[:2], rtol=1e-6)
