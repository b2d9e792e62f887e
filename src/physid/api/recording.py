"""In-memory recordings of the Python API and how data arguments become workflow sources."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from physid.errors import InputError

if TYPE_CHECKING:
    from physid.recordings.tables import Table

    PathLike = str | Path
    DataLike = PathLike | "Recording" | Sequence[PathLike | "Recording"]


@dataclass(frozen=True)
class Recording:
    """A recorded joint-side trajectory held in memory; columns are matched to the URDF's joints
    by ``joint_names`` when used (a missing or unknown name is an :class:`InputError`)."""

    t: np.ndarray  # (N,) s, strictly increasing
    q: np.ndarray  # (N, n) rad or m
    tau: np.ndarray  # (N, n) N m or N
    joint_names: tuple[str, ...]
    dq: np.ndarray | None = None  # (N, n), optional recorded velocities
    name: str = "arrays"

    @classmethod
    def from_arrays(
        cls,
        t: Any,
        q: Any,
        tau: Any,
        *,
        joint_names: Sequence[str],
        dq: Any = None,
        name: str = "arrays",
    ) -> Recording:
        """Check shapes (``t`` (N,), ``q``/``tau``/``dq`` (N, n), n names) and keep the arrays."""
        where = f"Recording '{name}'"
        if isinstance(joint_names, str) or not all(isinstance(j, str) for j in joint_names):
            raise InputError(f"{where}: joint_names must be a sequence of joint-name strings")
        names = tuple(joint_names)
        duplicated = sorted({j for j in names if names.count(j) > 1})
        if duplicated:
            raise InputError(f"{where}: joint name(s) given twice: {', '.join(duplicated)}")
        try:
            t = np.asarray(t, dtype=float)
            arrays = {"q": q, "tau": tau} | ({} if dq is None else {"dq": dq})
            arrays = {key: np.asarray(value, dtype=float) for key, value in arrays.items()}
        except (TypeError, ValueError) as error:
            raise InputError(
                f"{where}: t, q, tau and dq must be numeric arrays ({error})"
            ) from None
        if t.ndim != 1 or t.size < 2:
            raise InputError(f"{where}: t must be 1-D with at least 2 samples, shape {t.shape}")
        checked = {}
        for key, value in arrays.items():
            if value.ndim == 1 and len(names) == 1:
                value = value[:, None]
            if value.shape != (t.size, len(names)):
                raise InputError(
                    f"{where}: {key} has shape {value.shape}, expected ({t.size}, {len(names)}) "
                    f"= (samples of t, joint_names)"
                )
            checked[key] = value
        return cls(t, checked["q"], checked["tau"], names, checked.get("dq"), name)

    def to_table(self) -> Table:
        """The recording as contract columns (``t``, ``q_<joint>``, ``dq_<joint>``,
        ``tau_<joint>``), validated against a model by :mod:`physid.recordings.trajectory` when
        used."""
        from physid.recordings.tables import Table

        columns = {"t": self.t}
        blocks = (("q_", self.q), ("dq_", self.dq), ("tau_", self.tau))
        for prefix, block in blocks:
            if block is not None:
                columns.update(
                    {f"{prefix}{j}": block[:, k] for k, j in enumerate(self.joint_names)}
                )
        return Table(columns, f"Recording '{self.name}'")


def sources(data: DataLike | None) -> list:
    """Recording files as paths and :class:`Recording` objects as tables, in a list."""
    if data is None:
        return []
    items = [data] if isinstance(data, str | Path | Recording) else list(data)
    return [item.to_table() if isinstance(item, Recording) else item for item in items]
