"""physid.numerics.small_lm: the Levenberg-Marquardt loop of the variable-projection searches."""

from __future__ import annotations

import numpy as np

from physid.numerics.small_lm import LMStop, minimise

T = np.linspace(0.0, 3.0, 40)
DATA = 2.0 * np.exp(-0.7 * T) + 0.5 * np.exp(-3.0 * T)  # rates 0.7 and 3.0, closed form


def _evaluate(y: np.ndarray) -> tuple[float, np.ndarray]:
    r = y[0] * np.exp(-y[1] * T) + y[2] * np.exp(-y[3] * T) - DATA
    return float(r @ r), r


def _linearize(y: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    e1, e2 = np.exp(-y[1] * T), np.exp(-y[3] * T)
    return np.column_stack([e1, -y[0] * T * e1, e2, -y[2] * T * e2]), r


def _relative_gain(_y0, _y1, before: float, after: float) -> bool:  # noqa: ANN001
    return (before - after) / before < 1e-14


def test_a_sum_of_exponentials_is_recovered():
    found = minimise(
        _evaluate, _linearize, np.array([1.0, 0.3, 1.0, 5.0]), max_iterations=200,
        converged=_relative_gain,
    )  # fmt: skip
    np.testing.assert_allclose(found.y, [2.0, 0.7, 0.5, 3.0], rtol=1e-6)
    assert found.stop is LMStop.CONVERGED and found.cost < 1e-20
    assert list(found.costs) == sorted(found.costs, reverse=True)  # every accepted step lowers it
    assert found.evaluations >= found.iterations


def test_the_box_is_kept_and_the_start_evaluation_reused():
    calls = []

    def evaluate(y: np.ndarray) -> tuple[float, np.ndarray]:
        calls.append(y.copy())
        return _evaluate(y)

    start = np.array([1.0, 0.3, 1.0, 5.0])
    found = minimise(
        evaluate, _linearize, start, max_iterations=200, converged=_relative_gain,
        project=lambda y: np.minimum(y, [10.0, 0.5, 10.0, 10.0]), start=_evaluate(start),
    )  # fmt: skip
    assert found.y[1] == 0.5  # the slow rate held at its bound
    assert all(c[1] <= 0.5 for c in calls) and found.evaluations == len(calls)


def test_a_point_where_nothing_moves_the_residual_stops_at_once():
    flat = minimise(
        lambda y: (1.0, np.ones(3)),
        lambda y, r: (np.zeros((3, 2)), r),
        np.zeros(2),
        max_iterations=10,
        converged=_relative_gain,
    )
    assert flat.stop is LMStop.CONVERGED and flat.iterations == 1 and flat.evaluations == 1
