"""Report figures: panel labelling for any joint count, and valid PNGs."""

import io

import numpy as np
import pytest
from PIL import Image

from physid.report import figures


@pytest.mark.parametrize("n_panels", [1, 3, 5, 6, 7])
def test_time_axis_is_labelled_under_the_lowest_panel_of_each_column(n_panels) -> None:
    figure, axes = figures._grid(n_panels)
    figures._label(axes, [f"j{k}" for k in range(n_panels)], "t [s]", "torque")
    columns = 2 if n_panels > 3 else 1
    for k, axis in enumerate(axes):
        lowest = k + columns >= n_panels  # nothing visible below it
        assert (axis.get_xlabel() == "t [s]") == lowest
        assert axis.xaxis.get_tick_params()["labelbottom"] == lowest
        assert (axis.get_ylabel() == "torque") == (k % columns == 0)
    assert len(figure.axes) == int(np.ceil(n_panels / columns)) * columns


@pytest.mark.parametrize("n_joints", [1, 7])
def test_figures_are_pngs_of_the_expected_size(n_joints) -> None:
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 2.0, 500)
    tau = rng.normal(size=(500, n_joints))
    names = tuple(f"joint_{k}" for k in range(n_joints))
    pngs = [
        figures.torque_fit_png(t, tau, 0.9 * tau, names, "training"),
        figures.autocorrelation_png(rng.uniform(-1, 1, (n_joints, 51)), 500, names),
        figures.parameter_table_png(names, rng.normal(size=n_joints), np.full(n_joints, 5.0), "p"),
        figures.consistency_png(names, np.full(n_joints, 1e-3), np.ones(n_joints), 1e-6),
    ]
    for png, width_inch in zip(pngs, (11, 11, 12, 11), strict=True):
        image = Image.open(io.BytesIO(png))
        assert image.format == "PNG" and image.size[0] == 110 * width_inch  # at 110 dpi
