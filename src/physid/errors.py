"""Exceptions raised on bad input. Their message is one line that names the culprit."""

import numbers
import sys
from collections.abc import Mapping
from typing import NamedTuple


class PhysidError(Exception):
    """Base class of every error physid raises on purpose."""


class InputError(PhysidError, ValueError):
    """Bad user input: a file, a column, a row or a parameter that cannot be used.

    The message is a single line that names the file, column, row or parameter at fault, so the
    CLI can print it as is.
    """

    def __init__(self, message: str, *, source: str | None = None) -> None:
        self.source = source
        text = f"{source}: {message}" if source else message
        super().__init__(" ".join(text.split()))


class ConfigError(InputError):
    """A config file's value that cannot be used (its message starts ``config <key>: ``): the
    commands that read a config name the file with it
    (:func:`physid.files.io.config_errors_name`)."""


def install_hint(package: str, extra: str) -> str:
    """How to install an optional dependency: physid is installed from its checkout (not from
    PyPI), so ``pip install 'physid[extra]'`` would fail; the package itself, or the extra."""
    return f"pip install {package} (or, in physid's checkout, pip install -e '.[{extra}]')"


class Bound(NamedTuple):
    """The numbers a parameter accepts: [low, high], or (low, high] when ``low_open``; whole
    numbers only when ``integer`` (an iteration count, a seed). Each estimator keeps one table
    ``{parameter: Bound}`` that its CLI options and its API function both check, so both
    refuse the same numbers."""

    low: float
    high: float
    low_open: bool = False
    integer: bool = False


def in_range(
    value: float | None,
    option: str,
    low: float,
    high: float,
    low_open: bool = False,
    integer: bool = False,
) -> float | None:
    """``value`` if it is a finite number in [low, high] (``(low, high]`` with ``low_open``; a
    whole number with ``integer``), or ``None`` passed through (an unset optional); otherwise a
    one-line InputError naming the option. Shared by the CLI's option callbacks and the API
    faces, so both refuse the same numbers with the same message (click's FloatRange lets NaN
    through, hence this check; an API caller can pass anything, hence the type check)."""
    if value is None:
        return None
    kind = numbers.Integral if integer else numbers.Real
    number = isinstance(value, kind) and not isinstance(value, bool)
    above_low = number and (value > low if low_open else value >= low)
    if not (above_low and value <= high):  # False for NaN
        raise InputError(
            f"{value if number else repr(value)} is not {_wanted(low, high, low_open, integer)}",
            source=option,
        )
    return value


def _wanted(low: float, high: float, low_open: bool, integer: bool) -> str:
    """What :func:`in_range` asks for, e.g. ``a number in (0, 1]``, ``an integer in [1, 50]``,
    ``a finite number >= 0`` (bounds of integers shown as integers: 4294967295, not 4.29e+09)."""
    shown = (lambda x: str(int(x))) if integer else (lambda x: f"{x:g}")
    if high >= sys.float_info.max:  # no upper bound but finiteness
        noun = "an integer" if integer else "a finite number"
        return f"{noun} {'>' if low_open else '>='} {shown(low)}"
    noun = "an integer" if integer else "a number"
    return f"{noun} in {'(' if low_open else '['}{shown(low)}, {shown(high)}]"


def check_numbers(bounds: Mapping[str, tuple], values: Mapping[str, float | None]) -> None:
    """Raise the one-line :class:`InputError` naming the first of ``values`` outside its bound
    in ``bounds`` (a :class:`Bound` or ``(low, high, low_open)``); ``None``, an unset optional,
    passes. The API faces call it first, before any file is read or any work starts."""
    for name, value in values.items():
        in_range(value, name, *bounds[name])
