"""Exceptions raised on bad input. Their message is one line that names the culprit."""

import sys


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


def in_range(
    value: float | None, option: str, low: float, high: float, low_open: bool = False
) -> float | None:
    """``value`` if it is a finite number in [low, high] (``(low, high]`` with ``low_open``), or
    ``None`` passed through (an unset optional); otherwise a one-line InputError naming the
    option. Shared by the CLI's option callbacks and the API faces, so both refuse the same
    numbers with the same message (click's FloatRange lets NaN through, hence this check)."""
    if value is None:
        return None
    above_low = value > low if low_open else value >= low
    if not (above_low and value <= high):  # False for NaN
        if high >= sys.float_info.max:  # no upper bound but finiteness
            wanted = f"a finite number {'>' if low_open else '>='} {low:g}"
        else:
            wanted = f"a number in {'(' if low_open else '['}{low:g}, {high:g}]"
        raise InputError(f"{value} is not {wanted}", source=option)
    return value
