"""The report's figures drawn with Pillow (physid.report.figures): the same layout rules as the
Matplotlib figures they replace, the same information, round ticks."""

import io

import numpy as np
import pytest
from PIL import Image

from physid.report import figures


@pytest.mark.parametrize("n_panels", [1, 3, 5, 6, 7])
def test_time_axis_is_labelled_under_the_lowest_panel_of_each_column(n_panels) -> None:
    layout = figures.grid(n_panels)
    columns = 2 if n_panels > 3 else 1
    assert len(layout.boxes) == n_panels
    for k, (left, top, right, _bottom) in enumerate(layout.boxes):
        lowest = k + columns >= n_panels  # nothing visible below it
        assert layout.x_labelled[k] == lowest
        assert layout.y_labelled[k] == (k % columns == 0)
        below = [b for b in layout.boxes if b[0] == left and b[1] > top]
        assert bool(below) != lowest  # a panel below it in its column, unless it is the lowest
        assert 0 <= left < right <= layout.width * figures.DPI * 2
    unshared = figures.grid(n_panels, sharex=False)
    assert all(unshared.x_labelled)


def test_ticks_are_round_and_within_the_limits() -> None:
    assert figures.nice_ticks(-0.3, 25.4).tolist() == [0.0, 10.0, 20.0]
    assert figures.nice_ticks(-1.05, 1.05, 8).tolist() == [-1.0, -0.5, 0.0, 0.5, 1.0]
    assert figures.nice_ticks(-2.6, 2.1).tolist() == [-2.0, 0.0, 2.0]
    assert figures.tick_labels(np.array([-1.0, -0.5, 0.0, 0.5, 1.0])) == [
        "-1.0",
        "-0.5",
        "0.0",
        "0.5",
        "1.0",
    ]
    assert figures.tick_labels(np.array([0.0, 2.5, 5.0])) == ["0.0", "2.5", "5.0"]
    assert figures.tick_labels(np.array([0.0, 0.25, 0.5])) == ["0.00", "0.25", "0.50"]
    assert figures.tick_labels(np.array([-25.0, 0.0, 25.0])) == ["-25", "0", "25"]


def _ink_rows(png: bytes) -> np.ndarray:
    """Per pixel row of the image, whether it holds anything but white."""
    image = np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    return np.any(image < 250, axis=1)


def test_a_torque_panel_draws_its_curves_where_their_values_are() -> None:
    """The prediction drawn on a panel whose limits are the data's: a constant torque of 1
    (measured 1, predicted 0.5) puts the predicted line at the panel's row of 0.5."""
    t = np.linspace(0.0, 2.0, 500)
    measured = np.ones((500, 1))
    png = figures.torque_fit_png(t, measured, 0.5 * measured, ("j",), "one joint")
    layout = figures.grid(1)
    left, top, right, bottom = (v // 2 for v in layout.boxes[0])
    image = np.asarray(Image.open(io.BytesIO(png)).convert("L")).astype(float)
    inside = image[top + 2 : bottom - 2, (left + right) // 2]
    dark = np.flatnonzero(inside < 100) + top + 2  # the black prediction, not the light ones
    # limits: the curves span [0.5, 1] (error, measured and predicted), 5 % margins
    low, high = 0.5 - 0.025, 1.0 + 0.025
    expected = top + (high - 0.5) / (high - low) * (bottom - top)
    assert dark.size and abs(np.mean(dark) - expected) <= 2.0


def test_every_figure_is_an_anti_aliased_png_of_110_dpi() -> None:
    rng = np.random.default_rng(0)
    names = tuple(f"joint_{k}" for k in range(3))
    png = figures.autocorrelation_png(rng.uniform(-1, 1, (3, 20)), 500, names)
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG" and image.size == (1210, 352)
    assert np.allclose(image.info["dpi"], (110, 110), atol=0.1)
    grey = np.asarray(image.convert("L"))
    assert len(np.unique(grey)) > 20  # edges blended, not two-tone
    assert _ink_rows(png).any()
