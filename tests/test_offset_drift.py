"""physid.offline.checks.offset_drift: a torque offset that changed between training runs is named.

Real KUKA LWR4+ recordings 2 and 3 (their first 15 s): as recorded, their mean residuals agree
within a fraction of the residual spread; with +2 N m on lwr_1_joint in recording 3 only (a
torque sensor re-zeroed between the runs), the joint and the recordings are named with the
difference, which the fit averaged.
"""

from __future__ import annotations

import numpy as np
from conftest import KUKA, kuka_slice, require_dataset

from physid.files.config import parse_config, robot_for
from physid.offline.codes import OFFSET_DRIFT
from physid.offline.pipeline import identify
from physid.recordings.trajectory import Trajectory


def _recording(k: int, model, bias: np.ndarray) -> Trajectory:  # noqa: ANN001
    s = kuka_slice(k, 15.0)
    return Trajectory(s.t, s.q, s.tau + bias, model.joint_names, source=f"kuka_{k}")


def test_a_torque_offset_that_changed_between_runs_is_named():
    require_dataset(KUKA)
    model = robot_for(KUKA / "kuka_lwr4.urdf", parse_config({}))
    zero = np.zeros(model.n_joints)
    bias = zero.copy()
    bias[model.joint_names.index("lwr_1_joint")] = 2.0
    clean = identify(model, [_recording(2, model, zero), _recording(3, model, zero)],
                     parse_config({}))  # fmt: skip
    assert not any("offset differs" in w for w in clean.warnings)
    biased = identify(model, [_recording(2, model, zero), _recording(3, model, bias)],
                      parse_config({}))  # fmt: skip
    (drift,) = [f for f in biased.findings if f.code == OFFSET_DRIFT.code]
    assert "lwr_1_joint" in drift.message and "in kuka_3 against kuka_2" in drift.message
    # the KUKA's residuals are mostly the model's misfit, so the fit weights every row alike
    # (physid.offline.choose.weighting), and its parameters take up a quarter of the change
    # (read 1.47 N m; 2.0 under paper C's per-joint weighting, which the folds cannot show better)
    assert 1.3 < drift.numbers["lwr_1_joint.difference"] < 2.1, drift.message
    assert drift.names == ("lwr_1_joint",), drift.message
