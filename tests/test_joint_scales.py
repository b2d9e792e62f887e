"""offline/checks/joint_scales.py: the closed-form profile against plain least squares, and the
scale
found on a system whose one joint's torque was scaled."""

from __future__ import annotations

import numpy as np
import pytest

from physid.offline.checks.joint_scales import _best_scale, _Profile


def _system(seed: int, n: int = 4, rows: int = 30, p: int = 6):
    rng = np.random.default_rng(seed)
    R = rng.standard_normal((n, rows, p))
    theta = rng.standard_normal(p)
    z = np.einsum("jik,k->ji", R, theta) + 0.01 * rng.standard_normal((n, rows))
    return R, z


def _gram(R: np.ndarray, z: np.ndarray):
    G = np.einsum("jik,jil->jkl", R, R)
    b = np.einsum("jik,ji->jk", R, z)
    return G, b, float(np.sum(z**2))


@pytest.mark.parametrize("scale", [-3.0, -1.0, 0.2, 1.0, 2.5])
def test_the_profile_is_the_least_squares_minimum(scale):
    R, z = _system(1)
    G, b, zz = _gram(R, z)
    scales = np.ones(len(R))
    scales[2] = scale
    X = (R * scales[:, None, None]).reshape(-1, R.shape[-1])
    theta = np.linalg.lstsq(X, z.reshape(-1), rcond=None)[0]
    direct = float(np.sum((z.reshape(-1) - X @ theta) ** 2))
    # to rounding of the explained part (zz minus it: ~1e-12 of zz)
    assert _Profile(G, b, zz, 2)(np.array([scale]))[0] == pytest.approx(direct, abs=1e-10 * zz)


@pytest.mark.parametrize("truth", [0.5, -1.0, 4.0])
def test_the_best_scale_undoes_a_scaled_joint(truth):
    R, z = _system(2)
    z[1] *= truth  # joint 1 logged with another gain (or sign)
    G, b, zz = _gram(R, z)
    scale, cost = _best_scale(_Profile(G, b, zz, 1))
    assert scale == pytest.approx(truth, rel=1e-3)
    assert cost < 0.01 * _Profile(G, b, zz, 1)(np.array([1.0]))[0]
