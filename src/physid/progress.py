"""One progress behaviour for every command.

On a terminal: a tqdm bar redrawn in place. Anywhere else (a log file, a pipe, CI): one plain
line every ``every_s`` seconds and one at the end, so a log holds readable lines instead of
``\\r`` frames. Disabled (``--quiet``): nothing. The object answers the part of tqdm's interface
the commands use (``update``, ``set_postfix_str``, ``total``, a context manager, iteration).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

EVERY_S = 10.0  # seconds between two lines written to a file or a pipe


class _Lines:
    """tqdm's interface, written as plain lines at most every ``every_s`` seconds."""

    def __init__(
        self,
        iterable: Iterable | None,
        total: int | None,
        desc: str,
        unit: str,
        initial: int,
        stream: TextIO,
        every_s: float,
        enabled: bool,
    ) -> None:
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
        self.n, self.stream, self.every_s, self.enabled = initial, stream, every_s, enabled
        self.postfix = ""
        self.began = self.last = time.monotonic()
        self.closed = False

    def _line(self) -> str:
        count = f"{self.n}/{self.total}" if self.total else f"{self.n}"
        text = f"{self.desc}: {count} {self.unit}s, {time.monotonic() - self.began:.0f} s"
        return f"{text}, {self.postfix}" if self.postfix else text

    def _maybe_write(self) -> None:
        now = time.monotonic()
        if self.enabled and now - self.last >= self.every_s:
            self.last = now
            print(self._line(), file=self.stream, flush=True)

    def update(self, n: int = 1) -> None:
        self.n += n
        self._maybe_write()

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text
        self._maybe_write()

    def write(self, text: str, file: TextIO | None = None) -> None:
        """A line that stays (tqdm's ``write``): printed at once, whatever the period."""
        if self.enabled:
            print(text, file=self.stream if file is None else file, flush=True)

    def close(self) -> None:
        if self.enabled and not self.closed:
            print(f"{self._line()} (done)", file=self.stream, flush=True)
        self.closed = True

    def __iter__(self) -> Iterator:
        try:
            for item in self.iterable or ():
                yield item
                self.update()
        except GeneratorExit:  # the loop stopped early (a step failed): its caller says why
            self.closed = True
            raise
        finally:
            self.close()

    def __enter__(self) -> _Lines:
        return self

    def __exit__(self, kind: type | None, *_exc: object) -> None:
        if kind is not None:  # an error ends the work: its own line says why, no "(done)"
            self.closed = True
        self.close()


def progress(
    iterable: Iterable | None = None,
    *,
    total: int | None = None,
    desc: str = "",
    unit: str = "it",
    initial: int = 0,
    enabled: bool = True,
    stream: TextIO | None = None,
    every_s: float = EVERY_S,
    **tqdm_options: Any,
) -> Any:
    """A progress display over ``iterable`` (or updated by hand): a tqdm bar on a terminal,
    plain periodic lines elsewhere, nothing when not ``enabled``. ``tqdm_options`` (e.g.
    ``bar_format``) apply to the terminal bar only."""
    stream = sys.stderr if stream is None else stream
    if total is None and iterable is not None and hasattr(iterable, "__len__"):
        total = len(iterable)
    if enabled and stream.isatty():
        from tqdm import tqdm

        return tqdm(
            iterable,
            total=total,
            desc=desc,
            unit=unit,
            initial=initial,
            file=stream,
            mininterval=0.5,
            **tqdm_options,
        )
    return _Lines(iterable, total, desc, unit, initial, stream, every_s, enabled)
