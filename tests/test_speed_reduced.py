"""The reduced systems the cross-validation combines (physid.offline.observe.reduced, .folds):
every form of them gives the sums of squares of the rows they stand for, to rounding."""

import numpy as np

from physid.offline.observe.folds import FoldSystems, combine, leave_out
from physid.offline.observe.reduced import ReductionAccumulator


def _rows(rng: np.random.Generator, n: int, p: int, e: int, m: int):
    """``m`` rows of an ``n``-joint system: joint j sees only the columns from 10 j on (as a
    joint's torque does not depend on the bodies before it), plus ``e`` extra columns."""
    W = rng.normal(size=(m, n, p))
    E = rng.normal(size=(m, n, e))
    for j in range(n):
        W[:, j, : 10 * j] = 0.0
        E[:, j, : 10 * j] = 0.0
    tau = rng.normal(size=(m, n))
    return W, E, tau


def _gram(X: np.ndarray, u: np.ndarray) -> np.ndarray:
    block = np.column_stack([X, u])
    return block.T @ block


def _assert_joint_grams(system, W: np.ndarray, tau: np.ndarray) -> None:
    """Per joint, the system's ``[R | z]`` has the Gram matrix of the rows ``[W_j | tau_j]``."""
    for j in range(W.shape[1]):
        expected = _gram(W[:, j], tau[:, j])
        got = _gram(system.R[j], system.z[j])
        assert np.allclose(got, expected, rtol=1e-11, atol=1e-11 * np.abs(expected).max())


def test_the_standard_columns_of_a_shifted_system_keep_every_row() -> None:
    """``standard_only`` after a gravity shift (the standard columns plus c x the extra ones,
    whose factor rows lie below the standard block) equals the reduction of the shifted rows:
    it dropped those rows before, and the tilted fit saw 2.5e-4 of its Gram wrong."""
    rng = np.random.default_rng(3)
    n, p, e = 3, 30, 30
    W, E, tau = _rows(rng, n, p, e, 400)
    total = ReductionAccumulator()
    total.add(W, tau, E)
    system = total.system()
    shifted = system.shifted([(np.arange(p, p + e), 0.7)]).standard_only()
    _assert_joint_grams(shifted, W + 0.7 * E, tau)
    assert shifted.R.shape == (n, p + 1, p)


def test_combined_folds_are_the_reduction_of_their_rows() -> None:
    """``combine`` (its QR only over the columns and rows the factors fill) and ``leave_out``
    against the Gram matrices of the rows themselves, with and without extra columns."""
    rng = np.random.default_rng(4)
    n, p, e = 4, 40, 12
    folds, parts = [], []
    for m in (120, 90, 150, 60):
        W, E, tau = _rows(rng, n, p, e, m)
        accumulator = ReductionAccumulator()
        accumulator.add(W, tau, E)
        folds.append(accumulator.system())
        parts.append((W, E, tau))
    whole = combine(folds)
    W, E, tau = (np.concatenate([part[k] for part in parts]) for k in range(3))
    _assert_joint_grams(whole, np.concatenate([W, E], axis=2), tau)
    assert whole.n_samples == len(tau)
    kept = [part for k, part in enumerate(parts) if k != 2]
    W, _, tau = (np.concatenate([part[k] for part in kept]) for k in range(3))
    _assert_joint_grams(leave_out(folds, 2), W, tau)
    # the folds as FoldSystems: the same complement, combined once however often it is asked
    shared = FoldSystems(folds)
    complement = leave_out(shared, 2)
    _assert_joint_grams(complement, W, tau)
    assert leave_out(shared, 2) is complement and leave_out(shared, 1) is not complement


def test_column_blocks_side_by_side_reduce_as_their_concatenation() -> None:
    """``ReductionAccumulator.add`` given the standard columns as blocks (no copy made) and
    extra columns: the same system as the concatenated columns, to rounding, and the same
    split into standard and extra columns."""
    rng = np.random.default_rng(5)
    W, E, tau = _rows(rng, 3, 30, 8, 200)
    blocks, whole = ReductionAccumulator(), ReductionAccumulator()
    for rows in (slice(0, 120), slice(120, 200)):  # two chunks
        blocks.add((W[rows, :, :20], W[rows, :, 20:]), tau[rows], E[rows])
        whole.add(W[rows], tau[rows], E[rows])
    a, b = blocks.system(), whole.system()
    assert a.n_standard == b.n_standard == 30 and a.R.shape == b.R.shape
    _assert_joint_grams(a, np.concatenate([W, E], axis=2), tau)
    np.testing.assert_allclose(a.R, b.R, rtol=0, atol=1e-12 * np.abs(b.R).max())


def test_alternatives_reduced_side_by_side_are_each_ones_reduction() -> None:
    """Deadband models reduced once as ``[shared | block_0 | block_1 | block_2]`` (two chunks,
    blocks equal but in one column, as the Coulomb candidates' are) and taken apart by
    ``taken_apart``: each is the reduction of its own rows ``[shared | block_k]`` (their
    Gram matrices), triangular, with the counts of the rows; an empty fold stays empty."""
    from dataclasses import replace

    from physid.offline.observe.folds import taken_apart

    rng = np.random.default_rng(6)
    shared, _, tau = _rows(rng, 3, 30, 0, 180)
    base = rng.normal(size=(180, 3, 4))
    blocks = []
    for k in range(3):
        block = base.copy()
        block[:, :, 1] = np.sign(rng.normal(size=(180, 3))) * (k + 1)  # the "Coulomb" column
        blocks.append(block)
    together = ReductionAccumulator()
    for rows in (slice(0, 100), slice(100, 180)):
        together.add((shared[rows], *(b[rows] for b in blocks)), tau[rows])
    system = together.system()
    for alone, block in zip(taken_apart(system, 30, 3), blocks, strict=True):
        assert alone.R.shape == (3, 35, 34) and alone.n_standard == 34
        assert alone.n_samples == 180 and np.allclose(alone.tau_norm2, np.sum(tau**2, axis=0))
        assert np.all(np.tril(alone.R[:, :34], -1) == 0.0)
        _assert_joint_grams(alone, np.concatenate([shared, block], axis=2), tau)
    empty = replace(system, R=np.zeros_like(system.R), z=np.zeros_like(system.z), n_samples=0)
    assert not any(np.any(s.R) or s.n_samples for s in taken_apart(empty, 30, 3))
