"""Paper B localisation (section VI-C-2, Fig. 6): the simulated Go1 jump and its sensors against
independent truths (Newton, a ballistic flight, plastic impacts, exact pre-integration), then
the leg-kinematics + IMU EKF baseline (``benchmarks/leg_ekf.py``) and ``physid.oe`` against the
simulated truth on a short jump (2 ms nodes: the 1 ms benchmark takes minutes).

Tolerances come from measured numbers (seed 0; benchmarks/oe_localisation.py for the 1 ms
runs); each is quoted beside its assert."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from physid.oe import NoiseStd, OEOptions, initial_guess, make_problem, solve
from physid.sim.oe_imu import (
    ImuSpec,
    measure_imu,
    oe_measurements,
    oe_noise_std,
    preintegrated_base_velocity,
)
from physid.sim.oe_jump import JumpSpec, simulate_jump
from physid.sim.oe_robots import GO1, load_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from leg_ekf import EkfSettings, run_ekf  # noqa: E402

PAYLOAD = pin.Inertia(7.2, np.array([-0.03, 0.01, 0.07]), np.diag([0.035, 0.09, 0.10]))
SHORT = JumpSpec(stance=0.02, crouch=0.15, landing=0.1)
NO_NOISE = ImuSpec(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@pytest.fixture(scope="module")
def jump():
    nominal = load_model(GO1, floating=True)
    true = nominal.copy()
    true.inertias[1] = nominal.inertias[1] + PAYLOAD
    return nominal, true, simulate_jump(true, true, dt=2e-3, spec=SHORT)


def _errors(x, position, rotation):
    pe = np.linalg.norm(position - x[:, :3], axis=1)
    oe = np.array(
        [
            np.linalg.norm(pin.log3(R.T @ pin.Quaternion(row[3:7]).toRotationMatrix()))
            for R, row in zip(rotation, x, strict=True)
        ]
    )
    return np.sqrt(np.mean(pe**2)), np.sqrt(np.mean(oe**2))


def test_phases_contacts_and_plastic_touchdown(jump):
    _, true, tr = jump
    assert np.all(np.diff(tr.phase) >= 0) and set(tr.phase) == {0, 1, 2, 3, 4}
    assert not tr.contact_flags[tr.phase_mask("flight")].any()
    lift = tr.contact_flags[:-1] & ~tr.contact_flags[1:]
    land = tr.contact_flags[1:] & ~tr.contact_flags[:-1]
    np.testing.assert_array_equal(lift.sum(axis=0), 1)  # one take-off and one
    np.testing.assert_array_equal(land.sum(axis=0), 1)  # touch-down per foot
    data = true.createData()
    for k in np.flatnonzero(land.any(axis=1)) + 1:  # plastic impact: feet in contact at rest
        assert np.abs(tr.impulses[k - 1]).sum() > 0.1
        pin.forwardKinematics(true, data, tr.x[k, : true.nq], tr.x[k, true.nq :])
        for frame, on in zip(tr.contact_frames, tr.contact_flags[k], strict=True):
            if on:
                fid = true.getFrameId(frame)
                v = pin.getFrameVelocity(true, data, fid, pin.LOCAL_WORLD_ALIGNED).linear
                assert np.linalg.norm(v) < 1e-9


def test_newton_in_stance_and_ballistic_flight(jump):
    _, true, tr = jump
    mass, data = pin.computeTotalMass(true), true.createData()
    quiet = tr.phase_mask("stance")[:-1]  # standing still: the feet carry the weight
    np.testing.assert_allclose(tr.forces[quiet][:, :, 2].sum(axis=1), mass * 9.81, rtol=1e-9)
    fl = np.flatnonzero(tr.phase_mask("flight"))
    com = np.array([pin.centerOfMass(true, data, tr.x[k, : true.nq]) for k in fl])
    acc = (com[2:] - 2 * com[1:-1] + com[:-2]) / tr.dt**2
    # free fall of the centre of mass; measured max deviation 0.048 m/s^2 (Euler at 2 ms)
    np.testing.assert_allclose(acc, np.tile([0.0, 0.0, -9.81], (len(acc), 1)), atol=0.1)


def test_imu_signals_and_exact_preintegration(jump):
    _, true, tr = jump
    log = measure_imu(true, tr.x, tr.dt, np.random.default_rng(0), NO_NOISE)
    v_base = tr.x[:, true.nq : true.nq + 3]
    np.testing.assert_allclose(preintegrated_base_velocity(log), v_base, atol=1e-12)
    quiet = tr.phase_mask("stance")[:-1]  # level and at rest: the specific force is +g up
    np.testing.assert_allclose(log.accel[quiet], np.tile([0, 0, 9.81], (quiet.sum(), 1)), atol=1e-9)
    noisy = measure_imu(true, tr.x, tr.dt, np.random.default_rng(0), ImuSpec())
    drift = preintegrated_base_velocity(noisy) - v_base  # the bias integrates: it drifts
    assert np.abs(drift[-1]).max() > 5 * np.abs(drift[5]).max()


@pytest.mark.parametrize("use_orientation", [False, True])
def test_ekf_tracks_the_jump(jump, use_orientation):
    """Measured RMS (position mm / orientation mrad, without / with the fused orientation):
    noise-free 0.93 / 1.20, 0.92 / 0.71 (the EKF's own discretisation at 500 Hz); Go1-class
    noise 2.75 / 2.89, 2.72 / 1.70."""
    nominal, true, tr = jump
    for spec, pos_tol, ori_tol in ((NO_NOISE, 1.5e-3, 1.5e-3), (ImuSpec(), 5e-3, 5e-3)):
        log = measure_imu(true, tr.x, tr.dt, np.random.default_rng(0), spec)
        std = max(oe_noise_std(spec, tr.dt, 1.0)["orientation"], 1e-6)
        settings = EkfSettings(use_orientation=use_orientation, orientation_std=std)
        flags, feet = tr.contact_flags, tr.contact_frames
        track = run_ekf(nominal, log, flags, feet, tr.x[0, :3], spec, settings)
        pos_rms, ori_rms = _errors(tr.x, track.position, track.rotation)
        assert pos_rms < pos_tol and ori_rms < ori_tol, (spec, pos_rms, ori_rms)


def test_oe_tracks_the_jump_and_beats_the_ekf_in_orientation(jump):
    """physid.oe as it is (payload estimated) on the same signals: measured torso mass 12.763 kg
    for 12.761, position RMS 2.84 mm (EKF 2.72: not better, as in the 1 ms benchmark, where
    the OE is 4x worse), orientation RMS 0.82 mrad against the EKF's 1.70 (better in all three
    seeds tried at this scale, and in the benchmark's mean)."""
    nominal, true, tr = jump
    spec = ImuSpec()
    log = measure_imu(true, tr.x, tr.dt, np.random.default_rng(0), spec)
    std = oe_noise_std(spec, tr.dt, tr.x.shape[0] * tr.dt)
    noise = NoiseStd(**std, arrival_v=1e-3)
    x0 = np.r_[tr.x[0, :3], log.quat[0], log.encoders[0], np.zeros(nominal.nv)]
    problem = make_problem(
        nominal, ["root_joint"], "exp_eig", tr.dt, tr.u, oe_measurements(nominal, log), noise,
        x0_prior=x0, contact_frames=tr.contact_frames, contact_flags=tr.contact_flags,
    )  # fmt: skip
    xs, ws = initial_guess(problem)
    result = solve(problem, xs, ws, problem.dynamics.nominal_theta(), OEOptions(max_iterations=40))
    assert result.status == "converged", result.status
    assert abs(result.pis[0][0] - true.inertias[1].mass) < 0.01 * PAYLOAD.mass
    rotation = [pin.Quaternion(q[3:7]).toRotationMatrix() for q in result.xs]
    oe_pos, oe_ori = _errors(tr.x, result.xs[:, :3], rotation)
    settings = EkfSettings(use_orientation=True, orientation_std=std["orientation"])
    track = run_ekf(nominal, log, tr.contact_flags, tr.contact_frames, tr.x[0, :3], spec, settings)
    ekf_pos, ekf_ori = _errors(tr.x, track.position, track.rotation)
    assert oe_pos < 6e-3, oe_pos
    assert oe_ori < ekf_ori, (oe_ori, ekf_ori)
