"""Every parameter of the public API's functions is named in its docstring's ``Args:`` section
(one docstring style, Google's, which the API reference renders), and the docstring says what
the function returns."""

from __future__ import annotations

import inspect
import re

import pytest

import physid

FUNCTIONS = [name for name in physid.__all__ if inspect.isfunction(getattr(physid, name))]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_parameter_is_documented(name: str) -> None:
    function = getattr(physid, name)
    doc = inspect.getdoc(function) or ""
    found = re.search(r"^Args:\n(.*?)(?=^\S|\Z)", doc, re.S | re.M)
    block = found.group(1) if found else ""
    named = set(re.findall(r"^    (\w+)(?: \([^)]*\))?:", block, re.M))
    missing = [p for p in inspect.signature(function).parameters if p not in named]
    assert not missing, f"{name}: parameters not in its Args section: {missing}"
    assert re.search(r"^Returns:\n", doc, re.M), f"{name}: no Returns section"


def test_the_api_has_functions() -> None:
    assert {"identify", "validate", "payload", "oe_estimate", "impacts_identify"} <= set(FUNCTIONS)
