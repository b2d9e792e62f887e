"""physid.recordings.running against scipy.ndimage, the implementation it stands in for."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.ndimage

from physid.recordings.running import mirrored_rows, running_mean, running_median


def test_mirrored_rows_reflect_about_the_end_rows() -> None:
    assert mirrored_rows(4, 3, 3).tolist() == [3, 2, 1, 0, 1, 2, 3, 2, 1, 0]
    assert mirrored_rows(1, 2, 2).tolist() == [0] * 5
    assert mirrored_rows(2, 3, 0).tolist() == [1, 0, 1, 0, 1]


@pytest.mark.parametrize("n_rows", [1, 2, 3, 4, 9, 200])
@pytest.mark.parametrize("width", [3, 5, 9])
def test_running_median_is_ndimages_mirrored_median(n_rows: int, width: int) -> None:
    x = np.random.default_rng(n_rows).standard_normal((n_rows, 3))
    x[n_rows // 2] += 50.0  # a spike the median must remove
    expected = scipy.ndimage.median_filter(x, size=(width, 1), mode="mirror")
    np.testing.assert_array_equal(running_median(x, width), expected)
    if n_rows == 2:  # ndimage's 1-D path extends two samples otherwise than its 2-D path
        return
    np.testing.assert_array_equal(
        running_median(x[:, 0], width),
        scipy.ndimage.median_filter(x[:, 0], size=width, mode="mirror"),
    )


@pytest.mark.parametrize("n_rows", [1, 3, 50, 5000])
@pytest.mark.parametrize("width", [1, 2, 5, 125])
def test_running_mean_is_ndimages_uniform_filter(n_rows: int, width: int) -> None:
    x = np.cumsum(np.random.default_rng(width).standard_normal((n_rows, 2)), axis=0)
    expected = scipy.ndimage.uniform_filter1d(x, width, axis=0, mode="nearest")
    np.testing.assert_allclose(running_mean(x, width), expected, rtol=0, atol=1e-10)
