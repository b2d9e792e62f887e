"""The 13-parameter Furuta problem of paper A §4.6 on a simulated swing-up with a known truth.

Truth: Table G.5 (``physid.sim.furuta``) plus motor gain K = 0.15 N m per control unit, dry
friction r mu = 5e-4 m (hinge 1) and 2e-4 m (hinge 2), gravity tilted by (0.01, -0.02) rad. The
energy-shaping swing-up is simulated at ``--h-sim`` (1e-4 s) and sampled at 1 kHz with 0.001 rad
angle noise; the recorded control signal is used open loop (§4.6).

Estimated from Table 1's start (inertias 0.01, viscous 1e-4, dry 1e-4, K = 0.1, no tilt):
K, J_Axx, J_Ayy, J_Azz, J_Byy, J_Bzz, b1, b2, r mu1, r mu2, tilt_1, tilt_2 — 12 numbers: the
paper's 13 count the tilt as a quaternion (3 tangent directions), whose rotation about gravity
changes nothing; physid's tilt is the two rotations about horizontal axes.

Prints estimate, truth, std, z-score, the ``not_identifiable`` verdict and the singular values,
the LM iterations and the time (one thread; warm: compiled functions cached, imports done), for
the identification step ``--h`` (paper: 1e-2 s) and, with ``--steps``, a sweep of finer steps
that shows the shadow bias (§4.9) shrinking with h.

Usage: python benchmarks/multibody_furuta.py [--duration 6] [--h 0.01] [--steps 5e-3,2e-3]
    [--h-sim 1e-4] [--kappa 100] [--iterations 6,60] [--average-control]

RESULTS (2026-11-23; 2 cores shared with 2-3 other benchmarks, one thread; swing-up 6 s, the
pendulum turning over (max 15.6 rad, 37 % of the time beyond 154 deg); "CPU" is process time,
the one-core figure; z = (estimate - truth) / reported std; 10 of the 12 numbers excited)

- Paper's setting (data at h = 1e-4, identified at h = 1e-2, kappa 100), 6 iterations (status
  max_iterations; CPU 0.94-1.10 s warm, 6 runs): gain -1.2 % (z -0.8), J_Azz +65 % (z +3.3),
  J_Byy -2.7 % (-1.1), J_Bzz -59 % (-3.5), b1 -48 % (-1.6), r mu1 +140 % (+1.1), tilt
  +55 / +1 % (+1.2 / -0.1); J_Axx, J_Ayy, b2, r mu2 reported not identifiable. 60 iterations:
  not converged (cost creeping 1.58e-3 -> 1.37e-3 from iteration 13), |z| up to 28 (J_Bzz
  -70 %, J_Azz +74 %). NOT met: 2 of the 8 parameters it calls identifiable beyond 2 sigma.
- Finer identification steps on the same data do not remove it: h = 5e-3 (10 it, stalled):
  gain +1.2 % (z +8.5), J_Azz -19 % (-8.2), J_Bzz +13 % (+5.6), r mu1 +28 % (+4.1), J_Byy
  +0.1 % (+0.4); h = 2e-3 (37 it): J_Azz +27 % (+8.2), b1 -46 % (-13), r mu1 +159 % (+8.1),
  tilt_1 +77 % (+14). h = 2e-3 with kappa 2500 (the h^2 scaling of the impulse weight that
  keeps kappa 100 at 1e-2): 60 iterations without convergence, b1 -72 %, r mu1 +287 %.
  h = 5e-3 with kappa 400 (same scaling): 47 it, gain +0.6 % (z +6.2), J_Azz +4.9 % (+3.4),
  J_Bzz -6.4 % (-4.0), b1 -10 % (-8.4), r mu1 +35 % (+7.0), tilt +8 / +4 % (+6.5 / -7.8):
  much closer to the truth than at 1e-2, still beyond 2 sigma.
- Inverse crime (data simulated at h = 1e-2 itself, ``--h-sim 0.01``): kappa 100, 6 iterations
  (cost 4.5737e-4, converged_stalled at 9 with 4.5734e-4), CPU 0.97 s (median of 20): 9 of 10
  within 2 sigma (gain -0.1 %, J_Byy +0.1, J_Bzz +2.7 (z +2.0), b1 +0.2, b2 +2.6, r mu1 +0.4,
  r mu2 -5.5, tilt +0.0 / +0.3 %), J_Azz -4.0 % (z -4.0); J_Axx and J_Ayy (only they) not
  identifiable. kappa 1e4: all 10 within |z| <= 0.9 (errors <= 1.8 %, r mu2 +7.6 %) but after
  60 iterations. The J_Azz miss at kappa 100 is the kappa = 100 bias that the release shows
  (benchmarks/multibody_sweeps.py: J_Azz -1.22 +- 0.14 % at kappa 100, +0.07 % at 1e4).
- ``--average-control`` (the step mean of the held 1 kHz control instead of its value at t_k,
  which differs by 23 % RMS at h = 1e-2): no better (h = 1e-2: 26 it, J_Azz +62 %, J_Bzz
  -76 %, r mu1 +197 %), so the control's resampling is not the cause.
- Targets: iterations <= 6: met on the inverse crime (cost at 6 within 1e-4 of converged), NOT
  met on the h = 1e-4 data. Time <= 1 s on one core (warm, 601 steps, 13 parameters with 24
  states per step), 6 iterations, CPU on 2 shared cores (load 1.7-2.8): inverse crime median
  0.97 s over 20 runs (0.88-1.16; the code of 2b1a22d in the same minutes: 1.36 s, 1.26-1.65),
  h = 1e-4 data 0.94-1.10 s over 6 runs (2b1a22d: 1.36-1.90), averaged control 1.10-1.37 s over
  9 (2b1a22d: 1.48-2.05): met as a median on the inverse crime only, and narrowly; it moves
  with the load by +-15 %; the paper's 6.6 s is 5-7x ours. Same estimates and cost history
  bit for bit as 2b1a22d. Where the ~1.0 s goes (inverse crime,
  process time per part): LM 0.83-0.87 s (J_s^T J_s and the other blocks 0.24, banded Cholesky
  0.11-0.14 for 16 factorisations, banded solves 0.22 for 70 calls, trial residuals 0.09,
  Jacobians 0.09, retraction 0.04), covariance 0.10-0.15 s, initial states 0.01 s.
- Cause of the misses, as far as measured: with data from the discrete model itself (inverse
  crime) 9 of 10 pass and the tenth is the kappa bias, so the estimator and its std are right
  and the gap is between the h = 1e-4 data and the model at the identification step (shadow
  parameters, §4.9); the shadow values trade the arm's viscous against its dry friction and
  J_Azz against J_Bzz. Why finer steps do not approach the truth here, as they do for the
  release, is not resolved.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # "one core" (and no thread thrashing)
import numpy as np  # noqa: E402

from physid.multibody import MultibodyRecording, identify, load_model  # noqa: E402
from physid.sim.furuta import (  # noqa: E402
    Synthetic,
    swing_up,
    thirteen_start,
    thirteen_truth,
)

ROOT = Path(__file__).resolve().parents[1]
URDF = ROOT / "examples" / "multibody" / "furuta.urdf"
OUT = ROOT / "out" / "multibody_furuta"


def swing_up_data(duration: float, h_sim: float, seed: int = 0) -> Synthetic:
    """The swing-up, its noise-free angles cached in ``out/`` (a 1e-4 s run takes minutes)."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"swing_up_{duration:g}s_h{h_sim:g}.npz"
    truth = load_model(URDF, thirteen_truth())
    if path.exists():
        d = np.load(path)
        noisy = d["clean"] + 1e-3 * np.random.default_rng(seed).normal(size=d["clean"].shape)
        rec = MultibodyRecording(d["t"], noisy, d["u"], "synthetic Furuta swing-up")
        return Synthetic(rec, d["clean"], truth, int(d["lcp_failures"]))
    data = swing_up(URDF, thirteen_truth(), duration=duration, h_sim=h_sim, seed=seed)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(
        tmp,
        t=data.recording.t,
        clean=data.clean,
        u=data.recording.control,
        lcp_failures=data.lcp_failures,
    )
    tmp.replace(path)
    return data


def step_averaged(data: Synthetic, h: float) -> Synthetic:
    """The recording with each sample's control replaced by the mean of the held 1 kHz control
    over its step ``[t_k, t_k + h)``: the motor impulse ``h K u_k`` of F.3 is then the exact
    impulse of the held signal (physid's resampling takes the value at ``t_k``)."""
    rec = data.recording
    n = int(round(h / float(np.median(np.diff(rec.t)))))
    u = rec.control.copy()
    for start in range(0, len(u) - 1, n):
        u[start : start + n] = rec.control[start : min(start + n, len(u) - 1)].mean(axis=0)
    return Synthetic(
        MultibodyRecording(rec.t, rec.angles, u, rec.source), data.clean, data.truth, 0
    )


def run(data: Synthetic, h: float, kappa: float, compile: bool, iterations: list[int]) -> None:
    model = load_model(URDF, thirteen_start())
    identify(model, [data.recording], h=h, kappa=kappa, compile=compile, max_iterations=1)
    truth = data.truth
    for limit in iterations:  # warm: functions built (and compiled) by the call above
        start, cpu = time.perf_counter(), time.process_time()
        fit = identify(
            model, [data.recording], h=h, kappa=kappa, compile=compile, max_iterations=limit
        )
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        steps = len(fit.segments[0].y)
        print(
            f"\n== h = {h:g} s, kappa = {kappa:g}, at most {limit} iterations: {fit.status}, "
            f"{fit.iterations} iterations, {seconds:.2f} s warm, CPU {cpu:.2f} s ({steps} steps, "
            f"compiled: {compile}) =="
        )
        head = ["estimate", "truth", "std", "z", "rel.err"]
        print(f"{'parameter':16s} " + " ".join(f"{x:>10s}" for x in head))
        for name, value, std in zip(fit.names, fit.values, fit.std, strict=True):
            true = truth.values[truth.index(name)]
            flag = "  not identifiable" if name in fit.not_identifiable else ""
            z, rel = (value - true) / std, (value - true) / true
            print(
                f"{name:16s} {value:10.4g} {true:10.4g} {std:10.2g} {z:+10.1f} {rel:+10.1%}{flag}"
            )
        print("singular values (scaled):", np.array2string(fit.singular_values, precision=3))
        print(f"cost history {np.array2string(np.array(fit.cost_history), precision=4)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=6.0)
    ap.add_argument("--h-sim", type=float, default=1e-4)
    ap.add_argument("--h", type=float, default=1e-2)
    ap.add_argument("--kappa", type=float, default=100.0)
    ap.add_argument("--steps", default="", help="finer identification steps, comma separated")
    ap.add_argument("--no-compile", action="store_true", help="interpreted CasADi functions")
    ap.add_argument("--iterations", default="6,60", help="LM iteration limits, comma separated")
    ap.add_argument("--average-control", action="store_true", help="step-averaged control")
    args = ap.parse_args()
    start = time.perf_counter()
    data = swing_up_data(args.duration, args.h_sim)
    c = np.cos(data.clean[:, 1])
    took = time.perf_counter() - start
    print(
        f"swing-up: {args.duration:g} s at h = {args.h_sim:g} s ({took:.0f} s)"
        f"; max |pendulum| {np.abs(data.clean[:, 1]).max():.2f} rad, {np.mean(c < -0.9):.0%} of "
        f"the time beyond 154 deg; max |arm| {np.abs(data.clean[:, 0]).max():.2f} rad; "
        f"{data.lcp_failures} LCP failures"
    )
    for h in [args.h] + [float(s) for s in args.steps.split(",") if s]:
        limits = [int(k) for k in args.iterations.split(",")]
        used = step_averaged(data, h) if args.average_control else data
        run(used, h, args.kappa, not args.no_compile, limits)


if __name__ == "__main__":
    main()
