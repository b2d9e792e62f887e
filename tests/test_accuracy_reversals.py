"""A prismatic joint's passages through zero speed are left out of its own equations, so the
friction's transition there does not bias the viscous term (physid.offline.observe.observations).

Against independent truths: the rows a sine's zero crossings leave below a share of its RMS
speed (closed form), and the friction of a prismatic quill simulated in MuJoCo
(``benchmarks/independent_sim.py``, no physid code) with a 20 N Coulomb force that switches over
2 mm/s (``fc tanh(dq / v_s)``) against 25 N s/m of viscous friction: the linear model fitted on
every row (sign 0 inside the Coulomb deadband) read the viscous term 5.6 of its standard
deviations off (30.3 +- 0.95 for 25.0), since the force the switching leaves out is carried by
``fv dq`` at low speed.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import physid
from physid.offline.observe.observations import (
    REVERSAL_FRACTION,
    passage_joints,
    reversal_joints,
    reversal_rows,
    short_runs,
)
from physid.offline.observe.windows import PreparedWindow
from physid.robot.model import build_robot_model, load_robot_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import independent_sim as bench  # noqa: E402


def quill(rng: np.random.Generator) -> bench.RobotSpec:
    """A horizontal arm (revolute) carrying a vertical prismatic quill with strong Coulomb
    friction (SCARA-like), tanh transition over 2 mm/s."""
    R, P = "revolute", "prismatic"
    # name, kind, axis, origin xyz, rpy, mass, com, box, fv, fc, v_s, armature, range
    arm = ("j1", R, (0, 0, 1), (0, 0, 0.40), (0, 0, 0), 6.0, (0.15, -0.01, 0.0))
    arm += ((0.35, 0.08, 0.08), 2.0, 2.0, 0.02, 0.3, (-2.3, 2.3))
    quill = ("j2", P, (0, 0, 1), (0.30, 0, 0), (0, 0, 0), 2.0, (0.0, 0.01, -0.10))
    quill += ((0.04, 0.04, 0.3), 25.0, 20.0, 0.002, 0.6, (-0.15, 0.0))
    design = [arm, quill]
    return bench._build("quill2", design, rng)


def test_the_rows_left_out_are_a_sines_passages_through_zero_not_a_rest():
    """dq = sin(2 pi t) for 4 s, then 1 s at rest: marked are exactly the rows where
    |sin| < 0.05 x its RMS (1/sqrt 2) around the eight zero crossings; the rest is kept."""
    t = np.arange(0.0, 5.0, 1e-3)
    dq = np.where(t < 4.0, np.sin(2 * np.pi * t), 0.0)[:, None]
    rms = np.sqrt(np.mean(dq[t < 4.0] ** 2))
    slow = np.abs(dq) < REVERSAL_FRACTION * rms
    marked = short_runs(slow, t)
    # closed form: within asin(0.05 / sqrt 2) / (2 pi) s of each crossing k / 2, 0 < k < 8
    half_width = np.arcsin(REVERSAL_FRACTION / np.sqrt(2.0)) / (2 * np.pi)
    crossings = np.arange(1, 8) / 2.0
    near = np.min(np.abs(t[:, None] - crossings[None, :]), axis=1) < half_width
    start = t < half_width  # the start at dq = 0 is a passage too
    assert np.array_equal(marked[:, 0], (near | start) & (t < 4.0))
    assert not marked[t >= 4.0 - half_width + 1e-3, 0].any()  # the rest (1 s) is kept


def test_only_prismatic_joints_with_a_deadband_and_linear_friction_lose_their_passages(
    tmp_path,
):
    """The revolute joint keeps its rows (its passages only widen its std: passage_joints);
    ``coulomb_deadband: 0`` (plain sign, as the user asks) keeps every row of that joint."""
    spec = quill(np.random.default_rng(5))
    urdf = tmp_path / "quill.urdf"
    urdf.write_text(bench.truth_urdf(spec), encoding="utf-8")
    model = build_robot_model(load_robot_file(urdf))
    assert passage_joints(model).tolist() == [True, True]  # automatic deadband: both
    assert reversal_joints(model).tolist() == [False, True]
    t = np.arange(0.0, 2.0, 2e-3)
    dq = np.column_stack([np.sin(2 * np.pi * t), np.cos(2 * np.pi * t)])
    window = PreparedWindow(t, dq, dq, dq, dq, np.arange(0, len(t), 4), slice(None), None)
    rows = reversal_rows(model, window)
    assert rows[:, 1].any() and not rows[:, 0].any()
    plain = replace(model, coulomb_deadband=np.array([0.01, 0.0]))
    assert passage_joints(plain).tolist() == [True, False]
    assert reversal_rows(plain, window) is None


@pytest.mark.slow
def test_a_prismatic_quills_friction_is_within_three_std_of_the_simulated_one(tmp_path):
    """MuJoCo quill (fv 25 N s/m, fc 20 N over a 2 mm/s tanh), 10 s at 500 Hz, 1 % noise.
    Measured: fv 26.27 +- 1.92, fc 19.87 +- 0.18 (before: fv 30.26 +- 0.95, z = 5.6; fc 19.47
    +- 0.076, z = -7.1)."""
    spec = quill(np.random.default_rng(5))
    rng = np.random.default_rng(1)
    paths = bench.write_case(tmp_path / "case", spec, rng, n_train=1, train_s=10.0, validate_s=2.0)
    result = physid.identify(paths.prior_urdf, list(paths.train), out=tmp_path / "out")
    quill_terms = result.document["joints"]["j2"]
    for term, truth in (("viscous", 25.0), ("coulomb", 20.0)):
        error = quill_terms[term] - truth
        assert abs(error) <= 3.0 * quill_terms["std"][term], (term, quill_terms[term])
    assert abs(quill_terms["viscous"] - 25.0) <= 0.1 * 25.0
