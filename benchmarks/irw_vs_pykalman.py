"""Benchmark: physid IRW smoother (paper C §3) vs pykalman's Kalman smoother, same model and data.

Data: the Staubli TX40 motor positions (45,000 samples x 6 joints, 5 kHz; see the dataset
README), or, if that file is missing, a seeded synthetic IRW signal of the same size. The NVR of
each column is first estimated by physid's maximum likelihood (timed and reported separately:
pykalman has no equivalent). Then both libraries smooth the same columns with the same model:
A = I + S (eq. 23), H = [1, 0(, 0)], Q = σ̂² NVR e_n e_nᵀ, R = σ̂², initial mean [y(0), 0(, 0)],
initial covariance p0 σ̂² I. The smoothed means must agree to 1e-6 (max |difference| / max |value|
per state component). Times are the best of a few repeats (time.perf_counter).

    python benchmarks/irw_vs_pykalman.py [--order 1|2] [--pykalman-samples N] [--pykalman-columns C]

pykalman needs ~0.2 ms per sample and column (about 1 min for the full record); with
--pykalman-samples/--pykalman-columns it runs on a leading block only and its time is scaled to
the full size per sample and column, which the output says.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from pykalman import KalmanFilter

from physid.signal.kalman import irw_smooth, optimise_nvr

DEFAULT_CSV = (
    Path(
        os.environ.get(
            "PHYSID_DATASETS", Path(__file__).resolve().parents[2] / "shared" / "datasets"
        )
    )
    / "staubli_tx40"
    / "pos_read_data.csv"
)
SAMPLE_PERIOD_S = 2e-4  # 5 kHz (dataset README)
P0 = 1e6


def load_positions(csv_path: Path) -> tuple[np.ndarray, str]:
    if csv_path.is_file():
        with csv_path.open() as f:
            header = f.readline().strip().split(",")
        q = np.loadtxt(csv_path, delimiter=",", skiprows=1)
        return q, f"{csv_path} ({', '.join(header)}), motor positions [rad]"
    rng = np.random.default_rng(0)  # same size as the Staubli record
    accel = np.cumsum(rng.normal(scale=1e-9, size=(45000, 6)), axis=0)
    q = np.cumsum(np.cumsum(accel, axis=0), axis=0) + 1e-4 * rng.normal(size=(45000, 6))
    return q, f"synthetic IRW signal (file {csv_path} not found)"


def best_time(fn, repeats: int) -> tuple[float, object]:
    best, out = np.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def pykalman_smooth(q: np.ndarray, nvr: np.ndarray, sigma2: np.ndarray, order: int) -> np.ndarray:
    n_x = order + 1
    means = np.empty((q.shape[0], q.shape[1], n_x))
    for j in range(q.shape[1]):
        transition_cov = np.zeros((n_x, n_x))
        transition_cov[-1, -1] = sigma2[j] * nvr[j]
        kf = KalmanFilter(
            transition_matrices=np.eye(n_x) + np.eye(n_x, k=1),
            observation_matrices=np.eye(1, n_x),
            transition_covariance=transition_cov,
            observation_covariance=[[sigma2[j]]],
            initial_state_mean=np.r_[q[0, j], np.zeros(order)],
            initial_state_covariance=P0 * sigma2[j] * np.eye(n_x),
        )
        means[:, j] = kf.smooth(q[:, j : j + 1])[0]
    return means


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    parser.add_argument("--order", type=int, choices=(1, 2), default=1, help="IRWSM 1 or 2")
    parser.add_argument("--pykalman-samples", type=int, default=None, help="default: all")
    parser.add_argument("--pykalman-columns", type=int, default=None, help="default: all")
    parser.add_argument("--repeats", type=int, default=5, help="physid repeats")
    parser.add_argument("--pykalman-repeats", type=int, default=2)
    args = parser.parse_args()

    q, source = load_positions(args.csv)
    n_samples, n_cols = q.shape
    print(f"data: {source}")
    print(
        f"      {n_samples} samples x {n_cols} columns, dt = {SAMPLE_PERIOD_S * 1e3:g} ms, "
        f"IRWSM {args.order}"
    )

    t_ml, nvr = best_time(lambda: optimise_nvr(q, dt=SAMPLE_PERIOD_S, order=args.order), 1)
    print(
        f"physid ML NVR per column: {np.array2string(nvr, precision=3)}  ({t_ml:.2f} s, "
        "not part of the comparison)"
    )

    t_physid, res = best_time(
        lambda: irw_smooth(q, dt=SAMPLE_PERIOD_S, order=args.order, nvr=nvr), args.repeats
    )

    n_sub = min(args.pykalman_samples or n_samples, n_samples)
    c_sub = min(args.pykalman_columns or n_cols, n_cols)
    q_sub = q[:n_sub, :c_sub]
    t_pyk, means = best_time(
        lambda: pykalman_smooth(q_sub, nvr, res.sigma2_e, args.order), args.pykalman_repeats
    )
    scale = (n_samples * n_cols) / (n_sub * c_sub)

    # Same model on the same block: physid re-run on the subset, if any, for the comparison
    ours = (
        res
        if scale == 1
        else irw_smooth(q_sub, dt=SAMPLE_PERIOD_S, order=args.order, nvr=nvr[:c_sub])
    )
    err = np.max(np.abs(ours.states - means), axis=0) / np.max(
        np.abs(means), axis=0
    )  # (columns, state components)
    ok = bool(np.all(err <= 1e-6))
    print(
        f"agreement with pykalman (max |diff| / max |value| per column and state): "
        f"worst {err.max():.2e} -> {'OK (<= 1e-6)' if ok else 'FAIL (> 1e-6)'}"
    )
    for name, i in zip(("x", "Δx", "Δ²x")[: args.order + 1], range(args.order + 1), strict=False):
        print(f"    {name:>4}: " + "  ".join(f"{e:.1e}" for e in err[:, i]))

    print(f"physid   irw_smooth : {t_physid * 1e3:9.1f} ms  (best of {args.repeats})")
    if scale == 1:
        print(f"pykalman smooth    : {t_pyk * 1e3:9.1f} ms  (best of {args.pykalman_repeats})")
        t_pyk_full = t_pyk
    else:
        t_pyk_full = t_pyk * scale
        print(
            f"pykalman smooth    : {t_pyk * 1e3:9.1f} ms on {n_sub} samples x {c_sub} columns "
            f"(best of {args.pykalman_repeats}); scaled x{scale:.2f} per sample and column to "
            f"{t_pyk_full * 1e3:.1f} ms for the full size"
        )
    print(f"ratio pykalman / physid: {t_pyk_full / t_physid:.0f}x  (target >= 10x)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
