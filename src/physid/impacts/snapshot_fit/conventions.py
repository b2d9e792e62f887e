"""Sign conventions of the contact geometry of impact snapshots, and which one the impacts favour.

physid's contact Jacobian rows are n̄ = (n, GQ × n) and t̄ = (t, GQ × t) with n the normal from
the surface into the body and t = d+ = (n_y, −n_x) (paper D §3.1, §4.1). Other tools negate parts
of them: the tangent's angular part (another sense of the tangent for the angular column only),
the angular column of both rows (ω counted clockwise, or QG given for GQ), the normal (pointing
out of the body). A :class:`Convention` negates the normal's linear part, its angular part and
the tangent's angular part (negating the tangent's linear part is the same as its angular part,
since the tangent's sense is free), so there are 8, the first the data as given.

Which one the data favour is decided by the impacts each makes consistent (:mod:`.fit`: the
impact passes the rigid-body checks of :mod:`.checks` and the law, fitted under that convention,
misses it by less than the outlier bound): an impact consistent under one convention and not the
other is a discordant pair; a convention is *clearly* better when McNemar's statistic
(b − c)/√(b + c) over those pairs exceeds :data:`MIN_Z` (b: impacts consistent under it only,
c: under the given one only).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, replace

import numpy as np

from physid.impacts.snapshot_fit.law import contact_columns
from physid.impacts.snapshots import Snapshots

#: McNemar's statistic above which another convention counts as clearly better (3 standard
#: deviations of the difference of discordant counts if both conventions were as good).
MIN_Z = 3.0


@dataclass(frozen=True)
class Convention:
    """Which parts of the rows n̄ = (n, GQ × n), t̄ = (t, GQ × t) are negated."""

    normal_linear: bool = False
    normal_angular: bool = False
    tangent_angular: bool = False

    @property
    def given(self) -> bool:
        return not (self.normal_linear or self.normal_angular or self.tangent_angular)

    def columns(self, jacobian: bool) -> tuple[str, ...]:
        """The columns of the file to negate: of the Jacobian rows (``jn_x, jn_y, jn_w,
        jt_w``) or, where the convention is one, of ``px, py, nx, ny`` (empty when no column
        flip of a px, py, nx, ny file gives it)."""
        if jacobian:
            parts = (("jn_x", "jn_y"), ("jn_w",), ("jt_w",))
            flags = (self.normal_linear, self.normal_angular, self.tangent_angular)
            return tuple(c for part, flag in zip(parts, flags, strict=True) if flag for c in part)
        return _GEOMETRY_COLUMNS.get(self.key, ())

    def describe(self, jacobian: bool) -> str:
        """The convention in words, naming the columns to negate."""
        parts = []
        if self.normal_linear:
            parts.append("the normal's linear part n (jn_x, jn_y)")
        if self.normal_angular:
            parts.append("the normal row's angular part GQ × n (jn_w)")
        if self.tangent_angular:
            parts.append("the tangent row's angular part GQ × t (jt_w)")
        text = " and ".join(parts) + " negated"
        if self.normal_angular and self.tangent_angular and not self.normal_linear:
            text += " (omega measured clockwise, or QG given for GQ)"
        if not jacobian:
            columns = self.columns(False)
            text += f": columns {','.join(columns)} negated" if columns else ""
        return text

    @property
    def key(self) -> tuple[bool, bool, bool]:
        return (self.normal_linear, self.normal_angular, self.tangent_angular)

    def as_dict(self) -> dict[str, bool]:
        return {
            "normal_linear_negated": self.normal_linear,
            "normal_angular_negated": self.normal_angular,
            "tangent_angular_negated": self.tangent_angular,
        }


# (nl, na, ta) -> the px, py, nx, ny columns whose negation gives it
_GEOMETRY_COLUMNS = {
    (False, True, True): ("px", "py"),
    (True, True, False): ("nx", "ny"),
    (True, False, True): ("px", "py", "nx", "ny"),
}

CONVENTIONS = tuple(Convention(*flags) for flags in itertools.product((False, True), repeat=3))


def apply(snaps: Snapshots, convention: Convention) -> Snapshots:
    """``snaps`` read under ``convention``: n̄, t̄ with the parts negated, turned back into a
    normal and a lever arm GQ = (GQ × n) t − (GQ × t) n (t = d+ of the new normal; a negated
    normal reverses d+, hence the tangent row's sign)."""
    if convention.given:
        return snaps
    nbar, tbar = contact_columns(snaps.arm, snaps.normal)
    normal = -snaps.normal if convention.normal_linear else snaps.normal
    a_n = -nbar[:, 2] if convention.normal_angular else nbar[:, 2]
    a_t = tbar[:, 2] * (-1.0 if convention.tangent_angular != convention.normal_linear else 1.0)
    tangent = np.column_stack([normal[:, 1], -normal[:, 0]])
    arm = a_n[:, None] * tangent - a_t[:, None] * normal
    return replace(snaps, arm=arm, normal=normal)


@dataclass(frozen=True)
class Comparison:
    """Another convention against the data's: the impacts consistent under each, the
    discordant counts (``gained``: consistent under it only; ``lost``: under the given only)
    and McNemar's statistic ``z``; ``clearly_better`` when z > :data:`MIN_Z`."""

    convention: Convention
    consistent_given: int
    consistent: int
    gained: int
    lost: int
    z: float

    @property
    def clearly_better(self) -> bool:
        return self.z > MIN_Z


def mcnemar(convention: Convention, given: np.ndarray, other: np.ndarray) -> Comparison:
    """``convention``'s per-impact consistency ``other`` against the given one's ``given``."""
    gained, lost = int(np.sum(other & ~given)), int(np.sum(~other & given))
    z = (gained - lost) / math.sqrt(gained + lost) if gained + lost else 0.0
    return Comparison(convention, int(given.sum()), int(other.sum()), gained, lost, z)
