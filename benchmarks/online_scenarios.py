"""Simulated scenarios of paper E with known ground truth, scored against issue 3's acceptance.

    OPENBLAS_NUM_THREADS=1 python benchmarks/online_scenarios.py [--seeds 3] [--quick]

(a) payload arm (Table I forearm row: sine then square, 4.5 kg +- 3 kg, 1 Hz, then a held step):
    mass tracking of the log-Cholesky EKF and of the baseline KF (eqs. 12, 15) on the same
    data; how often each leaves the consistent set;
(b) adaptive computed-torque control (Table II elbow task): elbow RMSE with the streamed
    estimate and with the nominal model;
(c) humanoid stepping in place with impacts in the measured wrenches and a +5 kg torso payload
    step: peak mass excursion during impacts with and without innovation gating (eq. 22).

Settings come from ``examples/online/*.yaml``. Every streamed EKF estimate is checked with
:func:`physid.body.inertia.check_consistency`. Prints one line per scenario and seed and a verdict
per acceptance item.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from physid.body.inertia import check_consistency, is_consistent
from physid.online import BaselineKF, InertialEKF, load_online_config
from physid.online.columns import OnlineSignals
from physid.online.metrics import mean_relative_error, peak_excursion, settling_time, windows
from physid.online.replay import replay
from physid.sim.adaptive_arm import simulate_computed_torque
from physid.sim.legged import (
    TORSO_JOINT,
    SteppingScenario,
    load_humanoid,
    simulate_stepping,
)
from physid.sim.payload_arm import PAYLOAD_JOINT, PayloadProfile, load_arm, simulate_payload_arm

CONFIGS = Path(__file__).resolve().parents[1] / "examples" / "online"


def all_consistent(pi: np.ndarray) -> int:
    """Number of streamed bodies failing check_consistency (the acceptance test, one by one)."""
    return sum(not check_consistency(p).consistent for p in pi.reshape(-1, 10))


def payload_scenario(seed: int, profile: PayloadProfile) -> dict:
    rng = np.random.default_rng(seed)
    rec = simulate_payload_arm(rng, profile)
    signals = OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, None)
    config = load_online_config(CONFIGS / "payload_arm.yaml")
    start = time.perf_counter()
    ekf = replay(InertialEKF(load_arm(), [PAYLOAD_JOINT], config), signals)
    seconds = time.perf_counter() - start
    kf = replay(BaselineKF(load_arm(), [PAYLOAD_JOINT], config), signals)
    mass, truth = ekf.values[:, 0, 0], rec.body_mass
    t_step, t_end = profile.step_time_s, profile.duration_s
    starts = profile.segment_starts()
    edges = profile.step_times()[1:-2]  # square-wave edges
    half_period = 0.5 / profile.frequency_hz
    edge_settle = [settling_time(rec.t, mass, truth, e, 0.05, e + half_period) for e in edges]
    steady = rec.t >= t_end - 2.0
    sine = (rec.t >= starts["sine"] + 1.0) & (rec.t < starts["square"])
    return {
        "settle_s": settling_time(rec.t, mass, truth, t_step),
        "steady_mean_pct": 100 * mean_relative_error(mass, truth, steady),
        "steady_max_pct": 100 * float(np.max(np.abs(mass - truth)[steady] / truth[steady])),
        "edge_settle_max_s": max(edge_settle),
        "sine_rmse_kg": float(np.sqrt(np.mean((mass - truth)[sine] ** 2))),
        "ekf_inconsistent": all_consistent(ekf.pi),
        "ekf_nan": int(np.isnan(ekf.values).sum()),
        "kf_inconsistent_pct": 100 * float(np.mean(~is_consistent(kf.pi[:, 0]))),
        "kf_sine_rmse_kg": float(np.sqrt(np.mean((kf.pi[:, 0, 0] - truth)[sine] ** 2))),
        "us_per_sample": 1e6 * seconds / len(rec.t),
    }


def adaptive_scenario(seed: int, profile: PayloadProfile) -> dict:
    config = load_online_config(CONFIGS / "payload_arm.yaml")
    ekf = InertialEKF(load_arm(), [PAYLOAD_JOINT], config)
    streamed = []

    def estimator(t, q, dq, tau):
        pi = ekf.update(t, q, dq, tau).bodies[0].pi
        streamed.append(pi)
        return pi

    adaptive = simulate_computed_torque(np.random.default_rng(seed), estimator, profile)
    nominal = simulate_computed_torque(np.random.default_rng(seed), None, profile)
    return {
        "elbow_rmse_adaptive_rad": adaptive.rmse(),
        "elbow_rmse_nominal_rad": nominal.rmse(),
        "ratio": nominal.rmse() / adaptive.rmse(),
        "all_joints_ratio": nominal.rmse(None) / adaptive.rmse(None),
        "ekf_inconsistent": all_consistent(np.array(streamed)),
    }


def stepping_scenario(seed: int, scenario: SteppingScenario) -> dict:
    rec = simulate_stepping(np.random.default_rng(seed), scenario)
    signals = OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, rec.wrenches)
    config = load_online_config(CONFIGS / "stepping.yaml")
    truth = rec.torso_pi[:, 0]
    out = {}
    # after convergence, away from the payload step's transient
    settled = (rec.t > 2.0) & ~windows(rec.t, [scenario.payload_time_s], 1.5)
    impacts = windows(rec.t, rec.touchdowns, 0.25) & settled
    quiet = settled & ~impacts
    for name, probability in (("gated", config.gating.probability), ("ungated", None)):
        cfg = replace(config, gating=replace(config.gating, probability=probability))
        start = time.perf_counter()
        result = replay(InertialEKF(load_humanoid(), [TORSO_JOINT], cfg), signals)
        seconds = time.perf_counter() - start
        mass = result.values[:, 0, 0]
        out[name] = {
            "peak_impact_kg": peak_excursion(mass, truth, impacts),
            "steady_mean_pct": 100 * mean_relative_error(mass, truth, settled),
            "quiet_mean_pct": 100 * mean_relative_error(mass, truth, quiet),
            "settle_s": settling_time(
                rec.t, mass, truth, scenario.payload_time_s, 0.05, scenario.payload_time_s + 1.5
            ),
            "gated_samples": int(result.gated.sum()),
            "inconsistent": all_consistent(result.pi),
            "us_per_sample": 1e6 * seconds / len(rec.t),
        }
    out["ratio"] = out["ungated"]["peak_impact_kg"] / out["gated"]["peak_impact_kg"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="random seeds per scenario")
    parser.add_argument("--quick", action="store_true", help="shorter scenarios")
    args = parser.parse_args()
    profile = PayloadProfile()
    stepping = SteppingScenario()
    if args.quick:
        profile = PayloadProfile(sine_s=3.0, square_s=3.0, plateau_s=2.0, step_s=3.0)
        stepping = SteppingScenario(duration_s=8.0, payload_time_s=4.0)
    verdicts: dict[str, list[bool]] = {k: [] for k in ("1", "2", "3", "4", "5")}
    for seed in range(args.seeds):
        a = payload_scenario(seed, profile)
        print(f"(a) seed {seed}: " + ", ".join(f"{k} {v:.4g}" for k, v in a.items()))
        b = adaptive_scenario(seed, profile)
        print(f"(b) seed {seed}: " + ", ".join(f"{k} {v:.4g}" for k, v in b.items()))
        c = stepping_scenario(seed, stepping)
        for name in ("gated", "ungated"):
            print(
                f"(c) seed {seed} {name}: " + ", ".join(f"{k} {v:.4g}" for k, v in c[name].items())
            )
        print(f"(c) seed {seed}: excursion ratio ungated/gated {c['ratio']:.3g}")
        verdicts["1"].append(
            a["ekf_inconsistent"] == 0
            and b["ekf_inconsistent"] == 0
            and c["gated"]["inconsistent"] == 0
            and c["ungated"]["inconsistent"] == 0
        )
        verdicts["2"].append(a["settle_s"] <= 2.0 and a["steady_mean_pct"] <= 2.0)
        verdicts["3"].append(b["ratio"] >= 5.0)
        verdicts["4"].append(
            c["ratio"] >= 5.0
            and c["gated"]["quiet_mean_pct"] <= c["ungated"]["quiet_mean_pct"] + 0.5
        )
        verdicts["5"].append(a["ekf_nan"] == 0)
    names = {
        "1": "every EKF estimate consistent",
        "2": "payload step: 5 % within 2 s, steady state <= 2 %",
        "3": "adaptive control RMSE >= 5x lower",
        "4": "gating: impact excursion >= 5x smaller, steady state no worse",
        "5": "no NaN estimate",
    }
    for key, name in names.items():
        print(f"acceptance {key} ({name}): {'PASS' if all(verdicts[key]) else 'FAIL'}")


if __name__ == "__main__":
    main()
