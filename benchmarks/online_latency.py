"""Latency of one ``update`` of the online inertial EKF (paper E runs it in a 333 Hz thread).

    OPENBLAS_NUM_THREADS=1 python benchmarks/online_latency.py [--samples 5000]

One 10-parameter body on (1) the fixed-base 7-DoF arm (payload body, simulated payload data)
and (2) the floating-base humanoid with nv = 36 (torso, stepping data with two contact
wrenches). Targets for (2) on one core: median <= 250 us, p99 <= 1 ms.

Timed in the same run, on the same samples:

* ``InertialEKF`` — physid's filter (Pinocchio's C++ log-Cholesky chart, split RNEA, rows
  restricted to the joints that support the body);
* ``BaselineKF`` — the linear KF of eqs. 12/15 with the same machinery (cost of consistency);
* ``EKF, NumPy chart`` — the same filter with ``physid.body.inertia.log_cholesky_jacobian`` (the
  batched NumPy implementation) for ``g`` and ``G``, i.e. what the filter would cost without the
  C++ chart.

Both wall-clock time and the thread's CPU time are reported: the machine may be shared, and
preemption shows in the wall-clock p99 but is not the cost of the update. Only samples that ran
a measurement update (not warm-up, calibration or skipped) are counted.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from physid.body.inertia import log_cholesky_jacobian
from physid.online import BaselineKF, InertialEKF, OnlineConfig
from physid.online.config import Gating, MeasurementNoise, RateLimit, ThetaStd
from physid.sim.legged import (
    CONTACT_FRAMES,
    TORSO_JOINT,
    SteppingScenario,
    load_humanoid,
    simulate_stepping,
)
from physid.sim.payload_arm import PAYLOAD_JOINT, PayloadProfile, load_arm, simulate_payload_arm


class NumpyChartEKF(InertialEKF):
    """The EKF with g and G from physid.body.inertia's NumPy implementation (the alternative)."""

    def _pi_and_jacobian(self, x):
        G = log_cholesky_jacobian(x.reshape(self.n_bodies, 10))
        return 0.5 * G[:, :, 0], G  # pi is proportional to exp(2 alpha)


def time_updates(filt, t, q, dq, tau, wrenches) -> tuple[np.ndarray, np.ndarray]:
    """Wall-clock and CPU time [us] of each update that ran a measurement update."""
    wall, cpu = [], []
    for k in range(len(t)):
        contacts = None if wrenches is None else wrenches[k]
        c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
        estimate = filt.update(t[k], q[k], dq[k], tau[k], contacts)
        w1, c1 = time.perf_counter_ns(), time.thread_time_ns()
        if not (estimate.skipped or estimate.calibrating):
            wall.append(w1 - w0)
            cpu.append(c1 - c0)
    return np.array(wall) / 1e3, np.array(cpu) / 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5000, help="updates per case")
    args = parser.parse_args()
    duration = args.samples / 1000.0 + 0.1
    arm = simulate_payload_arm(
        np.random.default_rng(0),
        PayloadProfile(hold_s=0.3, sine_s=duration, square_s=0, plateau_s=0, step_s=0),
    )
    legged = simulate_stepping(np.random.default_rng(0), SteppingScenario(duration_s=duration))
    common = dict(  # the paper's hardware habits: gating on, 3 kg/s rate limit
        calibration_s=0.05,
        acceleration_window=21,
        process_noise=ThetaStd(alpha=0.5, d=0.05, s=0.01, t=0.005),
        gating=Gating(probability=0.999),
        rate_limit=RateLimit(mass=3.0),
    )
    cases = {
        "arm, nv = 7": (
            load_arm,
            [PAYLOAD_JOINT],
            OnlineConfig(measurement_noise=MeasurementNoise(joint_torque=1.0), **common),
            (arm.t, arm.q, arm.dq, arm.tau, None),
        ),
        "humanoid, nv = 36": (
            load_humanoid,
            [TORSO_JOINT],
            OnlineConfig(
                contact_frames=CONTACT_FRAMES,
                measurement_noise=MeasurementNoise(1.0, 10.0, 3.0),
                **common,
            ),
            (legged.t, legged.q, legged.dq, legged.tau, legged.wrenches),
        ),
    }
    print(
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"
    )
    print(
        f"{'case':<20} {'filter':<18} {'wall median':>12} {'wall p99':>10} "
        f"{'cpu median':>11} {'cpu p99':>9}   [us]"
    )
    for case, (load, bodies, config, signals) in cases.items():
        medians = {}
        for name, cls in (
            ("InertialEKF", InertialEKF),
            ("BaselineKF", BaselineKF),
            ("EKF, NumPy chart", NumpyChartEKF),
        ):
            wall, cpu = time_updates(cls(load(), bodies, config), *signals)
            medians[name] = np.median(cpu)
            print(
                f"{case:<20} {name:<18} {np.median(wall):12.1f} {np.percentile(wall, 99):10.1f} "
                f"{np.median(cpu):11.1f} {np.percentile(cpu, 99):9.1f}"
            )
        print(
            f"{case:<20} CPU median ratios: NumPy chart / InertialEKF = "
            f"{medians['EKF, NumPy chart'] / medians['InertialEKF']:.2f}, "
            f"InertialEKF / BaselineKF = {medians['InertialEKF'] / medians['BaselineKF']:.2f}"
        )
    print("target (humanoid, InertialEKF): median <= 250 us, p99 <= 1000 us on one core")


if __name__ == "__main__":
    main()
