"""Typed findings: what a check saw, said as a stable code, a severity, the numbers behind it and
what it names.

Every check that speaks to the user returns :class:`Finding` objects instead of prose. A finding's
``code`` is stable (like a linter's rule code: ``ID301``, ``D102``) and documented once, in the
:class:`Code` that defines it: what it means and what to do. Output files store findings as
``findings: [...]`` (:meth:`Finding.as_dict`); the terminal shows the ones whose severity should
change the user's next step; nothing branches on a message's text.

Each estimator package defines its codes in its own ``codes`` module with :func:`define`;
:mod:`physid.catalog` collects them for the documentation and ``physid codes``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    """How much a finding should change what the user does, in increasing order.

    ``info``: context (a choice physid made, a repair of the input); nothing to do.
    ``caution``: the result stands, but part of it should be read or used differently.
    ``suspect``: the data look wrong though well-formed; the result's status is not ``ok``.
    ``error``: the result cannot be used as it is.
    """

    INFO = "info"
    CAUTION = "caution"
    SUSPECT = "suspect"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


_RANK = {Severity.INFO: 0, Severity.CAUTION: 1, Severity.SUSPECT: 2, Severity.ERROR: 3}


@dataclass(frozen=True)
class Code:
    """One documented finding code: ``code`` (``ID301``), a kebab-case ``name``, the usual
    ``severity``, a ``title`` (a few words), what it ``means`` and what to ``do``."""

    code: str
    name: str
    severity: Severity
    title: str
    means: str
    do: str

    def __call__(
        self,
        message: str,
        *,
        numbers: Mapping[str, float] | None = None,
        names: Iterable[str] = (),
        severity: Severity | None = None,
    ) -> Finding:
        """A finding of this code: ``message`` (one line), the ``numbers`` that drove it, the
        ``names`` it concerns (joints, parameters, columns, rows, files)."""
        return Finding(
            self.code,
            severity or self.severity,
            " ".join(message.split()),
            _numbers(numbers or {}),
            tuple(str(n) for n in names),
        )


_CODES: dict[str, Code] = {}


def define(code: str, name: str, severity: Severity, title: str, means: str, do: str) -> Code:
    """Register a finding code (once: a code or name defined twice is a programming error)."""
    if code in _CODES or any(c.name == name for c in _CODES.values()):
        raise ValueError(f"finding code {code} ({name}) is defined twice")
    defined = Code(code, name, severity, title, " ".join(means.split()), " ".join(do.split()))
    _CODES[code] = defined
    return defined


def registered() -> dict[str, Code]:
    """The codes defined so far (those of the modules imported; :mod:`physid.catalog` imports
    every one)."""
    return dict(_CODES)


@dataclass(frozen=True)
class Finding:
    """What one check saw: a stable ``code``, a ``severity``, a one-line ``message``, the
    ``numbers`` that drove it (name -> value, SI units named in the key) and the ``names`` it
    concerns (joints, parameters, columns, rows, files)."""

    code: str
    severity: Severity
    message: str
    numbers: Mapping[str, float] = field(default_factory=dict, hash=False)
    names: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The JSON form stored in every output file's ``findings`` list."""
        return {
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "numbers": {k: (v if math.isfinite(v) else None) for k, v in self.numbers.items()},
            "names": list(self.names),
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Finding:
        numbers = {k: float("nan") if v is None else float(v) for k, v in raw["numbers"].items()}
        return cls(
            str(raw["code"]),
            Severity(raw["severity"]),
            str(raw["message"]),
            numbers,
            tuple(raw.get("names", ())),
        )

    def line(self) -> str:
        """One terminal line: ``CODE message``."""
        return f"{self.code} {self.message}"


def _numbers(numbers: Mapping[str, Any]) -> dict[str, float]:
    return {str(key): float(value) for key, value in numbers.items()}


def of_severity(findings: Iterable[Finding], least: Severity) -> tuple[Finding, ...]:
    """The findings at ``least`` this severity, most severe first (stable within a severity)."""
    kept = [f for f in findings if f.severity.at_least(least)]
    return tuple(sorted(kept, key=lambda f: -f.severity.rank))


def with_code(findings: Iterable[Finding], *codes: Code | str) -> tuple[Finding, ...]:
    """The findings of the given codes."""
    wanted = {c.code if isinstance(c, Code) else c for c in codes}
    return tuple(f for f in findings if f.code in wanted)


def worst(findings: Iterable[Finding]) -> Severity | None:
    """The highest severity among ``findings`` (None: no finding)."""
    ranked = [f.severity for f in findings]
    return max(ranked, key=lambda s: s.rank) if ranked else None


def as_dicts(findings: Iterable[Finding]) -> list[dict[str, Any]]:
    """The ``findings`` list of an output file, most severe first."""
    return [f.as_dict() for f in sorted(findings, key=lambda f: -f.severity.rank)]


def unique(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """``findings`` without exact repeats (the parts of one split file say the same), in order."""
    return tuple(dict.fromkeys(findings))
