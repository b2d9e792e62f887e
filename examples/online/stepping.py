"""Paper E on a floating-base humanoid stepping in place: torso mass from joint torques and the
wrenches under both soles, a 5 kg backpack put on halfway, impacts at every touchdown; with and
without innovation gating (eq. 22, paper E Fig. 8).

    OPENBLAS_NUM_THREADS=1 python examples/online/stepping.py [--out online_stepping]

Writes ``torso_mass.png`` and ``estimates.png`` into ``--out``.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from physid.online import InertialEKF, load_online_config
from physid.online.columns import OnlineSignals
from physid.online.metrics import mean_relative_error, peak_excursion, windows
from physid.online.replay import quantities_from_pi, replay
from physid.report.online_plot import plot_replay
from physid.sim.legged import TORSO_JOINT, SteppingScenario, load_humanoid, simulate_stepping

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("online_stepping"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="8 s, payload at 4 s (the test's)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    config = load_online_config(HERE / "stepping.yaml")
    scenario = SteppingScenario()  # 12 s, steps of 0.8 s, +5 kg on the torso at 6 s
    if args.quick:  # as benchmarks/online_scenarios.py --quick
        scenario = SteppingScenario(duration_s=8.0, payload_time_s=4.0)
    rec = simulate_stepping(np.random.default_rng(args.seed), scenario)
    signals = OnlineSignals(rec.t, rec.q, rec.dq, rec.tau, rec.wrenches)
    truth = rec.torso_pi[:, 0]
    settled = (rec.t > 2.0) & ~windows(rec.t, [scenario.payload_time_s], 1.5)
    impacts = windows(rec.t, rec.touchdowns, 0.25) & settled

    results = {}
    for name, probability in (("with gating", config.gating.probability), ("without gating", None)):
        cfg = replace(config, gating=replace(config.gating, probability=probability))
        result = replay(InertialEKF(load_humanoid(), [TORSO_JOINT], cfg), signals, progress=True)
        results[name] = result
        mass = result.values[:, 0, 0]
        print(
            f"{name:>15}: peak torso-mass excursion during impacts "
            f"{peak_excursion(mass, truth, impacts):6.2f} kg, mean error away from impacts "
            f"{100 * mean_relative_error(mass, truth, settled & ~impacts):.2f} %, "
            f"{int(result.gated.sum())} samples gated, all consistent: "
            f"{bool(result.consistent.all())}"
        )

    fig = Figure(figsize=(12, 6), layout="constrained")
    FigureCanvasAgg(fig)
    top, bottom = fig.subplots(2, 1, sharex=True)
    top.plot(rec.t, truth, "k--", lw=1, label="true")
    for name, result in results.items():
        top.plot(rec.t, result.values[:, 0, 0], lw=1, label=name)
    top.set(ylabel="torso mass [kg]", ylim=(truth.min() - 8, truth.max() + 8))
    top.legend(fontsize=8)
    bottom.plot(rec.t, rec.wrenches[:, 0, 2], lw=0.8, label="left sole")
    bottom.plot(rec.t, rec.wrenches[:, 1, 2], lw=0.8, label="right sole")
    bottom.set(xlabel="t [s]", ylabel="measured vertical force [N]")
    bottom.legend(fontsize=8)
    fig.savefig(args.out / "torso_mass.png", dpi=110)
    plot_replay(
        results["with gating"],
        args.out / "estimates.png",
        truth={TORSO_JOINT: quantities_from_pi(rec.torso_pi)[0]},
        title="torso (waist_pitch) with gating (dashed: truth)",
    )
    print(f"figures in {args.out}/")


if __name__ == "__main__":
    main()
