"""Values derived from an immutable object, computed once and kept on the object.

physid's data objects (a robot model, a reduced observation system, a training's fold systems)
are immutable, and several stages ask them the same derived quantity (the base parameters, a
least-squares fit, a fold's complement).
They keep it in their own ``__dict__`` under a key: no module-level cache, and the value dies
with its object. What is kept must not refer back to the object: a reference cycle would keep
both alive until a cyclic collection (tests/test_reference_cycles.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class Remembers:
    """Mixin of an immutable object (a frozen dataclass, a tuple): :meth:`remembered`."""

    def remembered(self, key: tuple, compute: Callable[[], T]) -> T:
        """``compute()``, once per ``key`` for this (immutable) object."""
        memo = self.__dict__.get("_remembered")
        if memo is None:
            memo = {}
            object.__setattr__(self, "_remembered", memo)
        if key not in memo:
            memo[key] = compute()
        return memo[key]
