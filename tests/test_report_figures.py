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
        figures.friction_png(
            [rng.normal(size=(500, n_joints))],
            [rng.normal(size=(500, n_joints))],
            ["training"],
            names,
            [(np.array([-1.0, -1e-9, np.nan, 1e-9, 1.0]), np.array([-2, -1, np.nan, 1, 2.0]))]
            * n_joints,
            ("fv 1, fc 1, offset 0 [N m]",) * n_joints,
            (("rad/s", "N m"),) * n_joints,
        ),
        figures.consistency_png(names, np.full(n_joints, 1e-3), np.ones(n_joints), 1e-6),
    ]
    for png, width_inch in zip(pngs, (11, 11, 11, 11), strict=True):
        image = Image.open(io.BytesIO(png))
        assert image.format == "PNG" and image.size[0] == 110 * width_inch  # at 110 dpi


def test_envelope_keeps_the_extremes_of_a_long_curve_in_time_order() -> None:
    rng = np.random.default_rng(1)
    t = np.arange(45_000) * 1e-3
    y = rng.normal(size=t.size)
    y[12_345] = 50.0  # a spike a stride would miss
    t_drawn, y_drawn = figures.envelope(t, y)
    assert len(t_drawn) <= 4000 and np.all(np.diff(t_drawn) > 0)
    assert y_drawn.max() == 50.0 and y_drawn.min() == y.min()
    assert len(figures.envelope(t[:100], y[:100])[0]) == 100  # short curves are drawn whole
