"""Issue item 7: report.html is one self-contained file with per-recording torque charts, HTML
tables of the per-joint errors and of every parameter with its std, URDF prior and source."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from html.parser import HTMLParser

import numpy as np
import pytest

from physid.demo import DEMO_CONFIG
from physid.files.config import parse_config
from physid.findings import Finding, Severity
from physid.offline.observe.prediction import RecordingFit
from physid.offline.pipeline import identify
from physid.report import charts
from physid.report.friction import friction_residuals
from physid.report.identification import (
    params_json,
    report_html,
    write_identification,
)
from physid.status import Status


class _Tables(HTMLParser):
    """Text of every cell of every table with an id: ``{id: [[cell, ...], ...]}``."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self._table = dict(attrs).get("id")
            self.tables.setdefault(self._table, [])
        elif tag == "tr" and self._table is not None:
            self.tables[self._table].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _tables(text: str) -> dict[str, list[list[str]]]:
    parser = _Tables()
    parser.feed(text)
    return parser.tables


@pytest.fixture(scope="module")
def written(arm_experiment, tmp_path_factory):
    """The simulated arm identified (one training, two validation recordings) and written."""
    validation = arm_experiment.validation.recorded
    result = identify(
        arm_experiment.model,
        [arm_experiment.train.recorded],
        parse_config(DEMO_CONFIG),
        validation=[validation, validation],
    )
    assert result.theta is not None, result.status
    out = tmp_path_factory.mktemp("report") / "identification"
    write_identification(result, out, {"urdf": "arm6"}, margin=1e-6)
    return result, out, (out / "report.html").read_text(encoding="utf-8")


def _page_specs(text: str) -> dict:
    """The chart specifications the page's script draws."""
    found = re.search(r"const PHYSID_CHARTS = (\{.*?\});\n", text, re.S)
    assert found
    return json.loads(found.group(1).replace("<\\/", "</"))


def test_the_report_is_one_self_contained_file(written) -> None:
    _, out, text = written
    page = re.sub(r"<script>.*?</script>", "", text, flags=re.S)
    assert not re.search(r"(src|href)=", page)  # no reference to a file beside it or on the web
    assert re.search(r"<script>/\*\*\n\* plotly\.js v\d", text)  # the library in the page
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "params.json",
        "report.html",
    ]
    specs = _page_specs(text)
    panels = re.findall(r'<div class="chart" id="([^"]+)"></div>', text)
    assert sorted(panels) == sorted(specs)  # every element has its chart and no chart is lost
    assert 'id="fig-friction"' in text and "chart-friction-0" in specs


def test_one_torque_chart_per_recording(written) -> None:
    result, _, text = written
    assert (len(result.train_fits), len(result.validation_fits)) == (1, 2)
    expected = ["torque_train_1", "torque_validation_1", "torque_validation_2"]
    assert re.findall(r'id="fig-(torque_[a-z]+_\d+)"', text) == expected
    specs = _page_specs(text)
    fit = result.validation_fits[1]
    joint = result.model.joint_names.index("joint_2")
    measured = specs[f"chart-torque_validation_2-{joint}"]["data"][1]
    drawn = charts.decoded(measured["y"])  # min/max envelope: its extremes are the samples'
    assert drawn.max() == pytest.approx(np.max(fit.tau[:, joint]), rel=1e-6)
    assert drawn.min() == pytest.approx(np.min(fit.tau[:, joint]), rel=1e-6)


def test_per_joint_errors_are_tabled_as_percent_per_recording_and_stacked(written) -> None:
    result, _, text = written
    tables = _tables(text)
    joints = result.model.joint_names
    header, *rows = tables["relative-error"]
    assert header[3:] == [f"{j} [%]" for j in joints] + ["all joints [%]"]
    by_row = {(row[0], row[1]): row[3:] for row in rows}
    stacked = by_row[("validation", "all recordings stacked")]
    validation = result.validation
    assert stacked == [f"{100 * e:.2f}" for e in validation.relative_error_per_joint] + [
        f"{100 * validation.relative_error:.2f}"
    ]
    first = result.validation_fits[0].metrics
    assert by_row[("validation", f"1: {result.validation_fits[0].name}")][:-1] == [
        f"{100 * e:.2f}" for e in first.relative_error_per_joint
    ]
    assert ("training", "all recordings stacked") in by_row
    header, *rows = tables["rmse"]
    assert header[3:] == [f"{j} [N m]" for j in joints]
    assert len(rows) == 5  # 1 + stacked training, 2 + stacked validation


def test_parameters_are_tabled_with_std_prior_and_source(written) -> None:
    result, _, text = written
    tables = _tables(text)
    for flag in ("data", "regrouped", "prior"):
        assert f'class="flag flag-{flag}"' in text
    header, *rows = tables["bodies-mass"]
    assert header[1:3] == ["mass [kg]", "source (mass)"]
    first = {row[0]: row for row in rows}["joint_1"]  # the base link's turning body: its mass
    assert first[2] == result.bodies["joint_1"].mass_source == "prior"  # cannot be identified
    assert "±" in first[1] and "URDF" in first[1]
    header, *rows = tables["bodies-inertia"]
    assert header[1:7] == [f"{n} [kg m^2]" for n in ("Ixx", "Iyy", "Izz", "Ixy", "Ixz", "Iyz")]
    header, *rows = tables["joint-terms"]
    assert header[2:] == [
        "viscous fv [N m s/rad]",
        "Coulomb fc [N m]",
        "offset [N m]",
        "armature Ia [kg m^2]",
    ]
    fv = result.theta[result.model.layout.joint_term_index("joint_2", "fv")]
    assert rows[1][2].startswith(f"{fv:.4g} ±")
    assert len(tables["base-parameters"]) == 1 + result.base.size
    assert "Total moving mass" in text


def test_suspect_status_and_total_mass_prior_are_shown(written) -> None:
    result, _, _ = written
    inverted = Finding("ID514", Severity.SUSPECT, "torque of joint_3 looks inverted")
    suspect = replace(result, status=Status.SUSPECT, findings=(*result.findings, inverted))
    document = params_json(suspect, {"urdf": "arm6"})
    figures = {"friction": charts.ReportChart("friction", ())}
    text = report_html(suspect, document, figures, total_mass_prior=0.2)
    box = re.search(r'<div class="status suspect">(.*?)</div>', text, re.S)
    assert box and "torque of joint_3 looks inverted" in box.group(1)
    assert "total-mass prior used" in text and "± 20 %" in text
    ok_text = report_html(result, params_json(result, {}), figures)
    assert '<div class="status ok">' in ok_text and "No total-mass prior was used" in ok_text


def test_friction_residual_is_the_friction_the_prediction_contains(written) -> None:
    result, _, _ = written
    layout, theta = result.model.layout, result.theta
    rng = np.random.default_rng(3)
    dq = rng.normal(size=(50, result.model.n_joints))
    tau = rng.normal(size=dq.shape)
    fit = RecordingFit("perfect", np.arange(50) * 1e-3, tau, tau, dq)
    velocity, residual = friction_residuals(result, (fit,))
    k = result.model.joint_names.index("joint_4")
    fv, fc, offset = (theta[layout.joint_term_index("joint_4", t)] for t in ("fv", "fc", "offset"))
    np.testing.assert_allclose(velocity, dq)
    np.testing.assert_allclose(residual[:, k], fv * dq[:, k] + fc * np.sign(dq[:, k]) + offset)
