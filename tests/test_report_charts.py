"""Report charts: the plotly.js specifications carry the numbers they are given, and the page
that holds them cannot be broken by a name."""

import json
import re

import numpy as np
import pytest

from physid.report import charts


def _specs(made: dict[str, charts.ReportChart]) -> dict:
    """The specifications as the page's script reads them (the object after the assignment)."""
    return json.loads(charts.specs_json(made).replace("<\\/", "</"))


@pytest.mark.parametrize("n_joints", [1, 7])
def test_torque_chart_draws_each_joint_and_names_its_error(n_joints) -> None:
    rng = np.random.default_rng(0)
    t = np.linspace(0.0, 2.0, 500)
    tau = rng.normal(size=(500, n_joints))
    predicted = 0.9 * tau
    names = tuple(f"joint_{k}" for k in range(n_joints))
    chart = charts.torque_chart(t, tau, predicted, names, "training", missed_above=0.05)
    assert len(chart.panels) == n_joints and chart.linked_x
    assert chart.columns == (2 if n_joints > 3 else 1)
    for k, panel in enumerate(chart.panels):
        error, measured, prediction = panel["data"]
        np.testing.assert_allclose(charts.decoded(measured["y"]), tau[:, k], rtol=1e-6)
        np.testing.assert_allclose(charts.decoded(prediction["x"]), t, rtol=1e-6)
        np.testing.assert_allclose(
            charts.decoded(error["y"]), tau[:, k] - predicted[:, k], rtol=1e-5, atol=1e-6
        )
        # relative error 10 % exactly (predicted = 0.9 measured): above 5 %, so a red title
        assert "rel. error 10.00 %" in panel["layout"]["title"]["text"]
        assert panel["layout"]["title"]["font"]["color"] == "#d62728"
        assert panel["layout"]["showlegend"] == (k == 0)


def test_a_joint_without_torque_is_drawn_as_prediction_only() -> None:
    t = np.linspace(0.0, 1.0, 50)
    tau = np.column_stack([np.sin(t), np.full(50, np.nan)])
    chart = charts.torque_chart(t, tau, tau, ("a", "b"), "x")
    assert [len(p["data"]) for p in chart.panels] == [3, 1]
    assert "predicted only" in chart.panels[1]["layout"]["title"]["text"]


def test_friction_chart_scales_to_the_cloud_not_its_outliers() -> None:
    rng = np.random.default_rng(1)
    v = rng.uniform(-1, 1, (4000, 1))
    r = 0.5 * np.sign(v) + 0.05 * rng.normal(size=v.shape)
    r[7] = 100.0  # one sample at a reversal the filtered velocity lags
    curve = (np.array([-1.0, -1e-9, np.nan, 1e-9, 1.0]), np.array([-0.6, -0.5, np.nan, 0.5, 0.6]))
    chart = charts.friction_chart(
        [v], [r], ["training"], ("j",), [curve], ("fc 0.5",), (("rad/s", "N m"),)
    )
    (panel,) = chart.panels
    low, high = panel["layout"]["yaxis"]["range"]
    assert -0.8 < low < -0.6 and 0.6 < high < 0.8  # the model line +-0.6 and 10 % padding
    dots, line = panel["data"]
    assert len(charts.decoded(dots["x"])) <= charts.MAX_CLOUD_POINTS
    assert np.isnan(charts.decoded(line["y"])[2])  # the Coulomb step is not bridged


def test_consistency_chart_marks_a_body_below_zero() -> None:
    chart = charts.consistency_chart(
        ("a", "b"), np.array([1e-3, -1e-4]), np.array([2.0, 1.0]), 1e-6
    )
    eigen, mass = chart.panels
    assert eigen["data"][0]["marker"]["color"] == ["#2ca02c", "#d62728"]
    assert "total 3.000 kg" in mass["layout"]["title"]["text"] and chart.columns == 2


def test_specs_cannot_close_the_script_element() -> None:
    t = np.linspace(0.0, 1.0, 10)
    tau = np.ones((10, 1))
    chart = charts.torque_chart(t, tau, tau, ("</script><b>",), "</script>")
    text = charts.specs_json({"torque_train_1": chart})
    assert "</" not in text and "chart-torque_train_1-0" in text
    assert re.search(r"plotly\.js v\d", charts.plotly_js()[:200])


def test_envelope_keeps_the_extremes_of_a_long_curve_in_time_order() -> None:
    rng = np.random.default_rng(1)
    t = np.arange(45_000) * 1e-3
    y = rng.normal(size=t.size)
    y[12_345] = 50.0  # a spike a stride would miss
    t_drawn, y_drawn = charts.envelope(t, y)
    assert len(t_drawn) <= 4000 and np.all(np.diff(t_drawn) > 0)
    assert y_drawn.max() == 50.0 and y_drawn.min() == y.min()
    assert len(charts.envelope(t[:100], y[:100])[0]) == 100  # short curves are drawn whole
