"""The filtered, decimated observations of the training recordings, kept chunk by chunk.

After the reduction (:class:`~physid.offline.observe.reduced.ReductionAccumulator`) the fit itself
needs
only the triangular factors, but the Newey-West covariance, the residual autocorrelation, the
filtered-data metrics and the friction-model term need the observations again, row by row. They
are kept here in the chunks the windows produced: in memory while small, spilled to a private
temporary folder beyond :data:`MEMORY_BYTES` (a ten-million-sample recording's decimated
regressor is about half a gigabyte). Reading the store yields the chunks in order, through any
transforms added by :meth:`ObservationStore.mapped` (a chosen joint-term block, a re-oriented
gravity), so the stored arrays are never modified.
"""

from __future__ import annotations

import shutil
import weakref
from collections.abc import Callable, Iterator
from dataclasses import fields, replace
from pathlib import Path

import numpy as np

from physid.files.io import scratch_dir
from physid.offline.observe.observations import Observations, stack

MEMORY_BYTES = 64 * 1024**2
_ARRAYS = ("t", "W", "tau", "q", "dq", "ddq", "G")
DISPLAY_ROWS = 20_000  # rows of the thinned observations kept in a result for figures

Transform = Callable[[Observations], Observations]


def _bytes(chunk: Observations) -> int:
    """The bytes of a chunk's arrays."""
    arrays = sum(
        getattr(chunk, f.name).nbytes
        for f in fields(chunk)
        if isinstance(getattr(chunk, f.name), np.ndarray)
    )
    return arrays + sum(block.nbytes for block in chunk.joint_terms)


class _Chunks:
    """The stored chunks (memory or disk), shared by every view of a store."""

    def __init__(self) -> None:
        self.memory: list[Observations] = []
        self.on_disk: list[tuple[Path, dict, int]] = []  # (file, info, number of extra blocks)
        self.recording: list[int] = []  # recording index of each chunk
        self.rows: list[int] = []  # samples of each chunk (a view's transforms keep them)
        self.bytes = 0
        self.kept_bytes = 0  # of the transformed chunks every view keeps (ObservationStore)
        self.folder: Path | None = None

    def _spill(self) -> None:
        self.folder = scratch_dir("observations")
        weakref.finalize(self, shutil.rmtree, self.folder, True)
        for chunk in self.memory:
            self._save(chunk)
        self.memory = []

    def _save(self, chunk: Observations) -> None:
        path = self.folder / f"chunk_{len(self.on_disk)}.npz"
        arrays = {n: getattr(chunk, n) for n in _ARRAYS if getattr(chunk, n) is not None}
        arrays.update({f"joint_terms_{k}": block for k, block in enumerate(chunk.joint_terms)})
        np.savez(path, **arrays)
        self.on_disk.append((path, chunk.info, len(chunk.joint_terms)))

    def append(self, chunk: Observations, recording: int) -> None:
        self.recording.append(recording)
        self.rows.append(len(chunk.t))
        self.bytes += _bytes(chunk)
        if self.folder is None and self.bytes > MEMORY_BYTES:
            self._spill()
        if self.folder is None:
            self.memory.append(chunk)
        else:
            self._save(chunk)

    def __len__(self) -> int:
        return len(self.recording)

    def chunk(self, k: int) -> Observations:
        if self.folder is None:
            return self.memory[k]
        path, info, n_blocks = self.on_disk[k]
        with np.load(path) as data:
            arrays = {name: data.get(name) for name in _ARRAYS}
            blocks = tuple(data[f"joint_terms_{b}"] for b in range(n_blocks))
        return Observations(**arrays, info=info, joint_terms=blocks)


class ObservationStore:
    """Chunks of observations in recording order, read through a chain of transforms.

    A view keeps the chunks it has transformed, the views of one store together up to
    :data:`MEMORY_BYTES`: the chosen training data are read a dozen times after the fit (joint
    prior, Newey-West, residuals, metrics, delay, figures), each time through the same column
    selection and gravity shift, and from disk once the store is spilled (the transformed
    chunks are smaller than the stored ones, which carry every deadband candidate's columns and
    the gravity regressors). A view made from another reads through that one's."""

    def __init__(
        self,
        chunks: _Chunks | None = None,
        transforms: tuple[Transform, ...] = (),
        parent: ObservationStore | None = None,
    ) -> None:
        self._chunks = chunks or _Chunks()
        self._transforms = transforms
        self._parent = parent
        self._kept: dict[int, Observations] = {}
        # the bytes this view keeps, given back to the budget when the view is dropped (the
        # views of the candidates a choice rejected would otherwise hold it for good)
        self._kept_bytes = [0]
        weakref.finalize(self, _release, self._chunks, self._kept_bytes)

    def append(self, chunk: Observations, recording: int) -> None:
        """Keep ``chunk`` (of training recording number ``recording``), as given."""
        self._chunks.append(chunk, recording)

    def mapped(self, transform: Transform) -> ObservationStore:
        """A view whose chunks pass through ``transform`` (after this view's own)."""
        return ObservationStore(self._chunks, (*self._transforms, transform), parent=self)

    def _read(self, k: int, keep: bool = True) -> Observations:
        """Chunk ``k`` through this view's transforms; ``keep``: kept within the budget (a
        view read only through its children's transforms keeps nothing: their chunks are the
        ones read again)."""
        if k in self._kept:
            return self._kept[k]
        if self._parent is None:
            chunk = self._chunks.chunk(k)
            for transform in self._transforms:
                chunk = transform(chunk)
        else:  # the parent's transforms, then the last one
            chunk = self._transforms[-1](self._parent._read(k, keep=False))
        if keep and self._transforms and self._chunks.kept_bytes < MEMORY_BYTES:
            self._kept[k] = chunk
            size = _bytes(chunk)
            self._chunks.kept_bytes += size
            self._kept_bytes[0] += size
        return chunk

    def __iter__(self) -> Iterator[Observations]:
        return (self._read(k) for k in range(len(self._chunks)))

    def of_recording(self, recording: int) -> Iterator[Observations]:
        """The chunks of one recording, in order."""
        return (self._read(k) for k, r in enumerate(self._chunks.recording) if r == recording)

    @property
    def n_rows(self) -> int:
        """Samples in all chunks (counted as they were stored: nothing is read)."""
        return sum(self._chunks.rows)

    @property
    def spilled(self) -> bool:
        """True when the chunks are on disk (too large to keep in memory)."""
        return self._chunks.folder is not None

    def stacked(self) -> Observations:
        """Every chunk stacked (the observations as fitted) while they are in memory; once
        spilled, every k-th row only (``info['display_every'] = k``), for figures."""
        every = 1
        if self.spilled:
            every = int(np.ceil(self.n_rows / DISPLAY_ROWS))
        parts, infos, start = [], {}, 0
        for k, chunk in enumerate(self):
            rows = np.flatnonzero((start + np.arange(len(chunk.t))) % every == 0)
            start += len(chunk.t)
            # the unit-gravity blocks (the tilt candidates') and other joint-term models are
            # the folds', not the result's: 8.6 of 12.7 kB a row of a six-axis arm's
            # observations (1e6 samples: the stacked result 244 MB, the command's peak 0.79 GB)
            part = _rows(chunk, rows) if every > 1 else chunk
            parts.append(replace(part, G=None, joint_terms=()))
            infos.setdefault(self._chunks.recording[k], chunk.info)
        stacked = stack(parts) if len(parts) > 1 else parts[0]
        info = infos[0] if len(infos) == 1 else {"experiments": list(infos.values())}
        if every > 1:
            info = {**info, "display_every": every}
        return replace(stacked, info=info)


def _release(chunks: _Chunks, kept_bytes: list[int]) -> None:
    """Give a dropped view's kept bytes back to its store's budget."""
    chunks.kept_bytes -= kept_bytes[0]


def _rows(chunk: Observations, rows: np.ndarray) -> Observations:
    pick = lambda x: None if x is None else x[rows]  # noqa: E731
    return replace(
        chunk,
        **{name: pick(getattr(chunk, name)) for name in _ARRAYS},
        joint_terms=tuple(block[rows] for block in chunk.joint_terms),
    )
