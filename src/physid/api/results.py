"""The one result protocol of every estimator of the Python API.

Every API function returns a result with ``status`` (a :class:`physid.status.Status` code),
``success`` (whether it can be used as it is), ``message`` (one human line), ``findings`` (typed
:class:`physid.findings.Finding` objects: code, severity, numbers, names), ``parameters``
(name -> :class:`Parameter`: value, std, source, unit), ``to_dict()`` (the main JSON document,
as the command line writes it) and ``save(out)`` (writes exactly the files the command line
writes into ``--out``, all or nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol, runtime_checkable

from physid.findings import Finding
from physid.status import Status


class Parameter(NamedTuple):
    """One named estimated (or given) quantity: ``value`` (a number or an array), its standard
    deviation (``None``: not estimated, or not available), where it came from (``data``,
    ``regrouped``, ``prior``, ``given``, ...) and its SI unit."""

    value: Any
    std: Any
    source: str
    unit: str


class Named(dict):
    """A dict whose missing keys fail with the names that exist."""

    def __missing__(self, key: str) -> Any:
        raise KeyError(f"'{key}' is not here; known: {', '.join(self)}")


@runtime_checkable
class Result(Protocol):
    """What every :mod:`physid.api` estimator returns."""

    @property
    def status(self) -> str: ...

    @property
    def success(self) -> bool: ...

    @property
    def message(self) -> str: ...

    @property
    def findings(self) -> tuple[Finding, ...]: ...

    @property
    def parameters(self) -> Mapping[str, Parameter]: ...

    def to_dict(self) -> dict: ...

    def save(self, out: str | Path) -> Path: ...


Writer = Callable[[Path], None]


@dataclass(frozen=True)
class Outcome:
    """The common implementation of :class:`Result`: the estimator's own result (``raw``), the
    document ``to_dict`` returns, and ``write``, which puts every output file into a folder
    (``folder=True``: ``save`` stages it and renames, :func:`physid.files.io.atomic_output_dir`)
    or writes the one output file (``folder=False``: ``save(path)`` gives that file's path)."""

    status: str
    message: str
    parameters: Mapping[str, Parameter]
    document: dict
    raw: Any
    write: Writer = field(repr=False)
    folder: bool = True
    notes: tuple[str, ...] = ()  # about the inputs (ignored columns, resampled stamps)
    warnings: tuple[str, ...] = ()  # about the result
    report: tuple[str, ...] = ()  # further lines the command line prints
    findings: tuple[Finding, ...] = ()  # typed: code, severity, numbers, names

    @property
    def success(self) -> bool:
        """The estimate can be used as it is (:class:`physid.status.Status` ``ok``)."""
        return self.status == Status.OK

    def to_dict(self) -> dict:
        """The main JSON document written by :meth:`save` (a JSON-ready copy)."""
        import json

        from physid.files.io import to_json_text

        return json.loads(to_json_text(self.document))

    def save(self, out: str | Path) -> Path:
        """Write exactly what the command line writes into ``out`` (a folder, or a file for
        the commands whose ``--out`` is a file); nothing is left half-written on failure."""
        from physid.files.io import atomic_output_dir

        out = Path(out)
        if not self.folder:
            self.write(out)
            return out
        with atomic_output_dir(out) as staging:
            self.write(staging)
        return out


def named(items: Mapping[str, Parameter] | None = None) -> Named:
    """A :class:`Named` mapping of parameters."""
    return Named(items or {})
