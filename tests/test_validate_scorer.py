"""Issue 9 item 2: ``physid validate`` equals an independent scorer on the real recordings.

The scorer below shares no code with physid's prediction: the positions read as much earlier
as params.json's delay says (``np.interp``), SciPy's Butterworth on a uniform grid at the cut-off
params.json records, ``np.gradient``, Pinocchio's RNEA of the params.json bodies, and the
friction terms written out by hand, against the raw measured torque at every sample.
(Loading the recordings into joint space is the one step it borrows from physid.)
"""

from __future__ import annotations

import json

import numpy as np
import pinocchio as pin
import pytest
import scipy.signal
from conftest import EXAMPLES, KUKA, TX40, require_dataset

from physid.files.config import load_config, robot_for
from physid.recordings.trajectory import write_trajectory_csv
from physid.workflows import load_trajectories, run_identify, run_validate


def _independent_error(urdf, params: dict, trajectory) -> float:
    model = pin.buildModelFromUrdf(str(urdf))
    for joint, body in params["bodies"].items():
        model.inertias[model.getJointId(joint)] = pin.Inertia(
            body["mass"], np.array(body["com"]), np.array(body["inertia"])
        )
    model.gravity = pin.Motion(np.array(params["extra"]["gravity"]), np.zeros(3))
    data = model.createData()
    t, q, tau = trajectory.t, trajectory.q, trajectory.tau
    # The identified model's torque delay: its torque logged at t belongs to the motion at
    # t - delay, so the positions are read delay earlier (the rows beyond the recording
    # dropped), the torque as logged.
    delay = params["fit"]["torque_delay"]["compensated_s"]
    if delay:
        kept = (t - delay >= t[0]) & (t - delay <= t[-1])
        q = np.column_stack([np.interp(t[kept] - delay, t, column) for column in q.T])
        t, tau = t[kept], tau[kept]
    dt = float(np.median(np.diff(t)))
    grid = t[0] + dt * np.arange(int((t[-1] - t[0]) / dt) + 1)
    q_grid = np.column_stack([np.interp(grid, t, column) for column in q.T])
    sos = scipy.signal.butter(
        4, params["preprocessing"]["butterworth_cutoff_hz"], fs=1 / dt, output="sos"
    )
    # The documented filter: zero-phase, the ends extended over three periods of the cut-off by
    # the cubic of the first/last two periods, shifted to pass through the end samples.
    period = 1.0 / (dt * params["preprocessing"]["butterworth_cutoff_hz"])
    n_pad, n_fit = int(np.ceil(3.0 * period)), int(np.ceil(2.0 * period))
    s = np.arange(n_fit)
    columns = []
    for x in q_grid.T:
        head, tail = np.polyfit(s, x[:n_fit], 3), np.polyfit(s, x[-n_fit:], 3)
        before = np.polyval(head, np.arange(-n_pad, 0)) - np.polyval(head, 0) + x[0]
        after = np.polyval(tail, np.arange(n_fit, n_fit + n_pad)) - np.polyval(tail, n_fit - 1)
        columns.append(np.concatenate([before, x, after + x[-1]]))
    padded = np.column_stack(columns)
    q_filtered = scipy.signal.sosfiltfilt(sos, padded, axis=0, padlen=0)[n_pad:-n_pad]
    dq_grid = np.gradient(q_filtered, dt, axis=0)
    ddq_grid = np.gradient(dq_grid, dt, axis=0)
    dq, ddq = (np.column_stack([np.interp(t, grid, c) for c in x.T]) for x in (dq_grid, ddq_grid))
    predicted = np.array([pin.rnea(model, data, *state) for state in zip(q, dq, ddq, strict=True)])
    for k, joint in enumerate(model.names[1:]):
        terms = params["joints"][joint]
        # The documented Coulomb deadband: sign 0 where |dq| is below the file's value.
        sign = np.where(
            np.abs(dq[:, k]) < terms.get("coulomb_deadband", 0.0), 0.0, np.sign(dq[:, k])
        )
        predicted[:, k] += (
            terms.get("viscous", 0.0) * dq[:, k]
            + terms.get("coulomb", 0.0) * sign
            + terms.get("offset", 0.0)
            + terms.get("armature", 0.0) * ddq[:, k]
        )
    coupled = params["extra"].get("coupled_motors", {})
    assert not coupled, "the scorer writes out joint terms only"
    return float(np.linalg.norm(tau - predicted) / np.linalg.norm(tau))


def test_validate_equals_an_independent_scorer_on_kuka(tmp_path):
    require_dataset(KUKA)
    files = [EXAMPLES / "kuka_lwr4" / f"measurements_{k}.yaml" for k in (1, 2, 3)]
    urdf = KUKA / "kuka_lwr4.urdf"
    result = run_identify(urdf, files[1:], validate=files[:1], out_dir=tmp_path / "out")
    params = json.loads((tmp_path / "out" / "params.json").read_text())
    report = run_validate(urdf, tmp_path / "out" / "params.json", files[:1])
    config = load_config(None)
    trajectory = load_trajectories(files[:1], robot_for(urdf, config), config)[0]
    independent = _independent_error(urdf, params, trajectory)
    # Measured: 2.71 % by physid validate and by the independent scorer; plain OLS with the
    # dataset's own derivatives 2.58 %, with this 10 x bandwidth filter 2.77 % (README).
    # issue: 1 %. Measured 4e-5: the KUKA's stamps do not track its samples and are rebuilt as
    # a uniform grid (physid.recordings.timebase), exact only to the float64 resolution of its epoch
    # stamps (2.4e-7 s at 1.46e9 s), which this scorer re-grids by their median step.
    assert report.overall["relative_error"] == pytest.approx(independent, rel=1e-4)
    assert report.overall["relative_error"] == pytest.approx(
        result.validation.relative_error, rel=1e-9
    )
    assert result.status == "ok" and params["physically_consistent"]
    assert independent <= 0.027  # measured 2.64 % (vs_ols.py scorer at 10 Hz: 2.55 %)
    # the same file with its torques x1.25 (currents times another gain): the error is said to
    # be a scale, with the factor; the file as logged gets no such warning
    assert not any("x the prediction" in f.message for f in report.findings)
    t = trajectory.t - trajectory.t[0]  # the epoch stamps would not survive %.10g
    scaled = trajectory.__class__(t, trajectory.q, 1.25 * trajectory.tau,
                                  trajectory.joint_names, source="x1.25.csv")  # fmt: skip
    path = write_trajectory_csv(tmp_path / "x125.csv", scaled)
    off = run_validate(urdf, tmp_path / "out" / "params.json", [path])
    named = [f.message for f in off.findings if "x the prediction" in f.message]
    assert off.overall["relative_error"] > 0.15 and len(named) == 1
    assert "reads 1.25 x the prediction" in named[0], named


def test_validate_equals_an_independent_scorer_on_tx40(tmp_path):
    require_dataset(TX40)
    example = EXAMPLES / "staubli_tx40"
    config_text = (example / "config.yaml").read_text()
    # Joint terms only (the scorer does not write out the coupled wrist), plain sign(dq);
    # paper C's filter.
    config_path = tmp_path / "config.yaml"
    config_path.write_text(
        config_text.replace("coupled_motor_terms: true", "coupled_motor_terms: false").replace(
            "coulomb_deadband: 0.01", ""
        )
    )
    urdf = TX40 / "tx40_mdh_modified.urdf"
    recording = example / "recording.yaml"
    result = run_identify(urdf, [recording], config_path=config_path, out_dir=tmp_path / "out")
    params = json.loads((tmp_path / "out" / "params.json").read_text())
    config = load_config(config_path)
    trajectory = load_trajectories([recording], robot_for(urdf, config), config)[0]
    report = run_validate(
        urdf, tmp_path / "out" / "params.json", [recording], config_path=config_path
    )
    independent = _independent_error(urdf, params, trajectory)
    # issue: 1 %. Measured 4e-5: the KUKA's stamps do not track its samples and are rebuilt as
    # a uniform grid (physid.recordings.timebase), exact only to the float64 resolution of its epoch
    # stamps (2.4e-7 s at 1.46e9 s), which this scorer re-grids by their median step.
    assert report.overall["relative_error"] == pytest.approx(independent, rel=1e-4)
    assert result.status == "ok"
