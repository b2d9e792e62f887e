"""The independent MuJoCo test bench (benchmarks/independent_sim.py) against truths it does not use.

Pinocchio (not used by the bench) must reproduce the recorded noise-free motor torques from the
truth URDF: this proves that the MJCF and URDF describe the same frames and inertias, and that the
recorded torque is what the dynamics say. The remaining tests check the measurement model
(quantisation, jitter, noise), the prior URDF and the files written for physid.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import independent_sim as bench  # noqa: E402

SPECS = ("arm5p", "arm6", "scara4", "arm7")


@pytest.fixture(scope="module")
def recordings() -> dict[str, tuple[bench.RobotSpec, bench.Recording]]:
    """A short recording of every robot (2 s at 500 Hz), simulated once for the module."""
    out = {}
    for k, name in enumerate(SPECS):
        spec = bench.make_spec(name)
        out[name] = (spec, bench.simulate(spec, np.random.default_rng(100 + k), 2.0))
    return out


def _pin_model(tmp_path: Path, name: str, text: str) -> pin.Model:
    path = tmp_path / f"{name}.urdf"
    path.write_text(text, encoding="utf-8")
    return pin.buildModelFromUrdf(str(path))


def _model_torques(model: pin.Model, spec: bench.RobotSpec, q, dq, ddq) -> np.ndarray:
    data = model.createData()
    rigid = np.array([pin.rnea(model, data, a, b, c) for a, b, c in zip(q, dq, ddq, strict=True)])
    fv, fc, v_s, ia = (spec.column(a) for a in ("fv", "fc", "v_s", "armature"))
    return rigid + ia * ddq + fv * dq + fc * np.tanh(dq / v_s)


def _pseudo_inertia(inertia: pin.Inertia) -> np.ndarray:
    """4x4 pseudo-inertia about the body origin (positive definite iff physically consistent)."""
    m, c, ic = inertia.mass, np.asarray(inertia.lever), np.asarray(inertia.inertia)
    second = 0.5 * np.trace(ic) * np.eye(3) - ic + m * np.outer(c, c)
    J = np.zeros((4, 4))
    J[:3, :3], J[:3, 3], J[3, :3], J[3, 3] = second, m * c, m * c, m
    return J


@pytest.mark.parametrize("name", SPECS)
def test_pinocchio_on_truth_urdf_reproduces_recorded_motor_torque(name, recordings, tmp_path):
    spec, rec = recordings[name]
    model = _pin_model(tmp_path, name, bench.truth_urdf(spec))
    assert tuple(model.names[1:]) == spec.joint_names
    assert np.allclose(model.gravity.linear, bench.GRAVITY)
    predicted = _model_torques(model, spec, rec.q_true, rec.dq_true, rec.qacc_true)
    scale = np.sqrt(np.mean(rec.tau_true**2, axis=0))
    assert np.all(scale > 0.1)
    assert np.max(np.abs(predicted - rec.tau_true) / scale) < 1e-6
    # The check is sensitive: the prior model's inertias miss the torques by far more.
    prior = _pin_model(tmp_path, f"{name}_prior", bench.prior_urdf(spec, np.random.default_rng(0)))
    wrong = _model_torques(prior, spec, rec.q_true, rec.dq_true, rec.qacc_true)
    assert np.linalg.norm(wrong - rec.tau_true) / np.linalg.norm(rec.tau_true) > 1e-2


@pytest.mark.parametrize("name", SPECS)
def test_recorded_states_are_an_integrated_trajectory(name, recordings):
    """q, dq, qacc at the recorded instants are consistent with each other (not just pointwise)."""
    spec, rec = recordings[name]
    dt = np.diff(rec.t)[:, None]
    # Trapezoidal rule between samples. Velocities are smooth: tight bound. Accelerations jump
    # (torque held over each 1 ms control period while tanh friction switches), so the typical
    # (median) error is checked; using the qacc of the neighbouring sample instead gives ~0.02.
    q_from_dq = rec.q_true[:-1] + 0.5 * dt * (rec.dq_true[:-1] + rec.dq_true[1:])
    scale = dt * np.max(np.abs(rec.dq_true), axis=0)
    assert np.max(np.abs(q_from_dq - rec.q_true[1:]) / scale) < 2e-3
    dq_from_qacc = rec.dq_true[:-1] + 0.5 * dt * (rec.qacc_true[:-1] + rec.qacc_true[1:])
    scale = dt * np.max(np.abs(rec.qacc_true), axis=0)
    assert np.median(np.abs(dq_from_qacc - rec.dq_true[1:]) / scale) < 3e-3
    # the excitation is tracked and stays inside every joint's range
    q_ref, _, _ = rec.excitation(rec.t)
    assert np.max(np.abs(rec.q_true - q_ref)) < 1e-2
    lo, hi = np.array([j.q_range for j in spec.joints]).T
    assert np.all(rec.q_true >= lo - 1e-3) and np.all(rec.q_true <= hi + 1e-3)
    _, dq_start, _ = rec.excitation(np.zeros(1))
    assert np.all(np.abs(dq_start) < 1e-12)  # starts at rest
    assert np.all(np.abs(rec.dq_true[0]) <= rec.t[0] * np.max(np.abs(rec.qacc_true), 0) + 1e-12)


@pytest.mark.parametrize("name", SPECS)
def test_measurement_quantisation_jitter_and_noise(name, recordings):
    spec, rec = recordings[name]
    resolution = spec.column("resolution")
    steps = rec.q / resolution
    assert np.allclose(steps, np.round(steps), atol=1e-6, rtol=0)
    error = rec.q - rec.q_true
    assert np.all(np.abs(error) <= 0.5 * resolution + 1e-12)
    assert np.all(np.std(error, axis=0) > 0.1 * resolution)  # quantisation really happened
    period = 1.0 / 500.0
    dt = np.diff(rec.t)
    assert np.all(dt > 0)
    assert np.all(np.abs(dt - period) <= 0.1 * period + 1e-9)
    assert np.std(dt) > 0.01 * period  # jittered
    assert np.allclose(rec.t * 1e6, np.round(rec.t * 1e6), atol=1e-6, rtol=0)  # 1 us lattice
    noise = rec.tau - rec.tau_true
    expected = 0.01 * np.sqrt(np.mean(rec.tau_true**2, axis=0)) + 0.02
    assert np.allclose(rec.noise_std, expected)
    assert np.all(np.abs(np.std(noise, axis=0) / expected - 1.0) < 0.15)


@pytest.mark.parametrize("name", SPECS)
def test_prior_urdf_is_consistent_and_differs_from_truth(name, tmp_path):
    spec = bench.make_spec(name)
    truth = _pin_model(tmp_path, "truth", bench.truth_urdf(spec))
    prior = _pin_model(tmp_path, "prior", bench.prior_urdf(spec, np.random.default_rng(7)))
    assert [prior.joints[k].shortname() for k in range(1, prior.njoints)] == [
        truth.joints[k].shortname() for k in range(1, truth.njoints)
    ]
    for k in range(1, truth.njoints):
        placement_truth, placement_prior = truth.jointPlacements[k], prior.jointPlacements[k]
        assert np.allclose(placement_prior.homogeneous, placement_truth.homogeneous)
        for inertia in (truth.inertias[k], prior.inertias[k]):
            assert np.min(np.linalg.eigvalsh(_pseudo_inertia(inertia))) > 0
        p_true = truth.inertias[k].toDynamicParameters()
        p_prior = prior.inertias[k].toDynamicParameters()
        assert np.linalg.norm(p_prior - p_true) > 1e-3 * np.linalg.norm(p_true)
        assert abs(prior.inertias[k].mass / truth.inertias[k].mass - 1.0) <= 0.3 + 1e-12


def test_write_case_files_follow_physid_contracts(tmp_path):
    """physid can read what the bench writes (format check only; physid does not simulate)."""
    from physid.files.config import IdentifyConfig, robot_for
    from physid.files.params_file import read_params, standard_parameters
    from physid.recordings.trajectory import load_trajectory

    spec = bench.make_spec("arm5p")
    paths = bench.write_case(tmp_path / "case", spec, np.random.default_rng(3), train_s=1.0,
                             validate_s=1.0)  # fmt: skip
    assert len(paths.train) == 2 and len(paths.validate) == 1
    model = robot_for(paths.prior_urdf, IdentifyConfig())
    params = read_params(paths.truth_json)
    theta = standard_parameters(model, params)
    layout = model.layout
    for j in spec.joints:
        assert theta[layout.index(f"{j.name}.fv")] == j.fv
        assert theta[layout.index(f"{j.name}.Ia")] == j.armature
        assert np.isclose(theta[layout.body_slice(j.name)][0], j.mass)
    document = json.loads(paths.truth_json.read_text())
    assert document["joints"]["j3"]["coulomb"] == spec.joints[2].fc
    trajectories = [load_trajectory(p, model) for p in paths.train + paths.validate]
    for trajectory in trajectories:
        assert trajectory.q.shape == (501, spec.n)
    # every recording has its own excitation
    assert not np.allclose(trajectories[0].q, trajectories[2].q, atol=1e-2)
    assert not np.allclose(trajectories[0].q, trajectories[1].q, atol=1e-2)
