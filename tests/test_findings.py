"""Typed findings and status codes (physid.findings, physid.status, physid.catalog)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from physid.catalog import PREFIXES, all_codes, explain, markdown, prefix_of
from physid.findings import Finding, Severity, define, of_severity, worst
from physid.status import STATUSES, Status, exit_code

DOCS = Path(__file__).resolve().parents[1] / "docs" / "findings.md"


def test_a_finding_survives_its_json_form() -> None:
    finding = Finding("ID999", Severity.CAUTION, "one line", {"ratio": 2.5, "p": math.nan},
                      ("lwr_1_joint",))  # fmt: skip
    raw = finding.as_dict()
    assert raw["numbers"] == {"ratio": 2.5, "p": None}  # JSON has no NaN
    back = Finding.from_dict(raw)
    assert back.code == "ID999" and back.severity is Severity.CAUTION
    assert back.numbers["ratio"] == 2.5 and math.isnan(back.numbers["p"])
    assert back.names == ("lwr_1_joint",)


def test_severities_are_ordered_and_filtered() -> None:
    a = Finding("X1", Severity.INFO, "a")
    b = Finding("X2", Severity.SUSPECT, "b")
    c = Finding("X3", Severity.CAUTION, "c")
    assert worst([a, b, c]) is Severity.SUSPECT and worst([]) is None
    assert of_severity([a, b, c], Severity.CAUTION) == (b, c)


def test_a_code_is_defined_once() -> None:
    codes = all_codes()
    some = next(iter(codes.values()), None)
    if some is None:
        pytest.skip("no code defined yet")
    with pytest.raises(ValueError, match="defined twice"):
        define(some.code, "another-name", Severity.INFO, "t", "m", "d")


def test_every_code_has_a_known_prefix_and_its_documentation() -> None:
    for code in all_codes().values():
        assert prefix_of(code.code) in PREFIXES, code.code
        assert code.title and code.means and code.do, code.code
        assert code.name == code.name.lower() and " " not in code.name, code.code


def test_docs_findings_page_is_the_catalog() -> None:
    assert DOCS.read_text() == markdown(), "regenerate: python -m physid.catalog > docs/findings.md"


def test_statuses_map_to_exit_codes() -> None:
    assert set(STATUSES) == set(Status)
    assert exit_code("ok") == 0 and Status.OK.success
    assert all(not s.success for s in Status if s is not Status.OK)
    assert exit_code(Status.SUSPECT) == 3
    assert "exit code 3" in explain("suspect")
