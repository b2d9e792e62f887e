"""Issue 29 item 4: the serial-correlation inflation of the oe standard deviations
(physid.oe.solving.serial) against the long-run variance of known processes, and its use by
solve."""

from __future__ import annotations

import numpy as np
import pytest
from oe_checks import kinova_payload_problem

from physid.oe.solving.serial import long_run_ratio


def test_white_noise_has_ratio_one():
    z = np.random.default_rng(0).standard_normal((20_000, 6))
    ratio, _ = long_run_ratio(z)
    assert ratio == pytest.approx(1.0, abs=0.1)


@pytest.mark.parametrize("rho", [0.5, 0.9])
def test_ar1_ratio_is_its_long_run_variance_ratio(rho):
    """AR(1): long-run variance / variance = (1 + rho) / (1 - rho) (3 and 19); the Bartlett
    estimate with Andrews' bandwidth is within 25 % of it on 20,000 samples."""
    rng = np.random.default_rng(1)
    e = rng.standard_normal((20_000, 4))
    z = np.zeros_like(e)
    for k in range(1, len(z)):
        z[k] = rho * z[k - 1] + e[k]
    ratio, lags = long_run_ratio(z)
    assert lags > 1
    assert ratio == pytest.approx((1 + rho) / (1 - rho), rel=0.25)


def test_solve_applies_the_inflation_to_the_std(kinova_payload_arm):
    from physid.oe.solving.solver import OEOptions, solve

    problem, xs, ws, theta = kinova_payload_problem(kinova_payload_arm)
    on = solve(problem, xs, ws, theta, OEOptions())
    off = solve(problem, xs, ws, theta, OEOptions(serial_inflation=False, chi2_inflation=False))
    assert on.converged and off.converged and on.std_inflation >= 1.0
    assert off.std_inflation == 1.0
    np.testing.assert_allclose(on.pi_std, off.pi_std * np.sqrt(on.std_inflation), rtol=1e-9)


def test_mass_and_com_std_survive_a_chart_gauge(kinova_payload_arm):
    """Exp-eig at a sphere: the three rotation coordinates are a null direction of the
    parameter Hessian (NaN theta std); they do not move the mass and first moments, whose std
    stay defined and positive (the rule: an entry of pi is unknown when a dropped direction
    moves it, ``|G v| > 0``)."""
    import pinocchio as pin

    from physid.oe.model.measurements import Measurements, NoiseStd
    from physid.oe.solving.build import initial_guess, make_problem
    from physid.oe.solving.uncertainty import parameter_covariance

    nominal, _, rec = kinova_payload_arm
    body = "j2s6s200_joint_6"
    model = nominal.copy()
    model.inertias[model.getJointId(body)] = pin.Inertia(
        1.2, np.array([0.0, 0.0, 0.05]), 4e-3 * np.eye(3)
    )
    meas = Measurements(q=rec.q_meas, v=rec.v_meas)
    problem = make_problem(model, [body], "exp_eig", rec.dt, rec.tau, meas, NoiseStd())
    xs, ws = initial_guess(problem)
    theta_std, pi_std, *_ = parameter_covariance(
        problem, xs, ws, problem.dynamics.nominal_theta(), 1e-12
    )
    assert np.isnan(theta_std).sum() >= 3
    assert np.all(np.isfinite(pi_std[0, :4])) and np.all(pi_std[0, :4] > 0)


def test_mass_and_com_std_do_not_take_an_unknown_inertia_std():
    """physid.body.inertia.mass_com_inertia_std: NaN (unknown) second-moment rows of the
    covariance leave the mass and CoM std as they are with the full covariance."""
    from physid.body.inertia import mass_com_inertia_std

    pi = np.array([12.0, 0.1, 0.05, 0.3, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    rng = np.random.default_rng(2)
    a = rng.standard_normal((10, 10)) * 1e-3
    cov = a @ a.T
    mass, com, inertia = mass_com_inertia_std(pi, cov)
    partial = cov.copy()
    partial[4:, :] = partial[:, 4:] = np.nan
    mass_p, com_p, inertia_p = mass_com_inertia_std(pi, partial)
    assert mass_p == pytest.approx(mass, rel=1e-12)
    np.testing.assert_allclose(com_p, com, rtol=1e-12)
    assert np.isnan(inertia_p).all() and np.isfinite(inertia).all()


def test_std_widen_with_a_reduced_chi_square_above_one(kinova_payload_arm):
    """Noise standard deviations told at a third of the defaults the data were made with: the
    reduced chi-square is far above 1 and the std are widened by its square root (on top of
    the serial factor), as least squares does with an estimated noise level."""
    import dataclasses

    from physid.oe.model.measurements import NoiseStd
    from physid.oe.solving.solver import OEOptions, solve

    told = NoiseStd()
    told = dataclasses.replace(told, **{f.name: getattr(told, f.name) / 3.0
                                        for f in dataclasses.fields(told)
                                        if isinstance(getattr(told, f.name), float)})  # fmt: skip
    problem, xs, ws, theta = kinova_payload_problem(kinova_payload_arm, told)
    on = solve(problem, xs, ws, theta, OEOptions(serial_inflation=False))
    off = solve(problem, xs, ws, theta, OEOptions(serial_inflation=False, chi2_inflation=False))
    assert on.chi2_reduced > 3.0
    assert on.std_inflation == pytest.approx(on.chi2_reduced)
    np.testing.assert_allclose(on.pi_std, off.pi_std * np.sqrt(on.chi2_reduced), rtol=1e-9)
