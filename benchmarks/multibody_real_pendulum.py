"""Paper A §4.5 on real pendulums: the Multi-Arm Pendulum on a Cart recordings (Kaheman et al.
2022, ``../shared/datasets/multiarm_pendulum``; read its README). Issue 13 "Real pendulums".

Single arm (the §4.5 protocol): three friction models — viscous (inertia, b), dry (+ r mu)
and Stribeck (+ r mu_delta, c) — each identified on every training file alone; the cost per step
and the cross-validation score (state estimation with the parameters fixed on the other training
files, as ``physid multibody identify --cross-validate``) are tabulated like Tables 2-3. Then
each model is identified on all training files together and every validation file is simulated
from its first measured state (angle and rate) with the identified model at the same step ``h``:
the RMS angle error over the first 1 s and over the whole file is compared with the authors'
published model, which this script integrates itself (``solve_ivp``, tolerance 1e-10) from the
README's parameters as an independent check of the yardstick.

Double arm: both inertias, the mass of arm 2 and both viscous coefficients identified on
``--double-train`` training files together (lengths a1, L1, a2 and the mass of arm 1 fixed at
the authors' values), simulated from the first state of each validation file; the RMS errors of
joint 1 and of arm 2's absolute angle (q1 + q2) are compared with the README's.

A free swing has no absolute force: scaling every mass, inertia and friction coefficient
together leaves the motion unchanged, so one of them is kept at a known value (the mass of the
single arm, of arm 1) — physid refuses an estimate that leaves this scale free.

Usage: python benchmarks/multibody_real_pendulum.py [--h 0.01] [--kappa 100] [--double-train 6]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

from physid.multibody import Recording, identify, load_model, simulate, state_from_joints

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "datasets" / "multiarm_pendulum"
SINGLE_URDF = ROOT / "examples" / "multibody" / "multiarm_single.urdf"
DOUBLE_URDF = ROOT / "examples" / "multibody" / "multiarm_double.urdf"
SOFT = {"compliance_linear": 1e-5, "compliance_rotational": 1e-5, "damping": 0.02}
# README: the authors' fit, integrated by a tight ODE solver: RMS [mrad] over 1 s (and whole file)
PUBLISHED_SINGLE = {"valid_00": (1.95, 14.7), "valid_01": (1.39, 20.5)}
PUBLISHED_DOUBLE = {"valid_00": (1.62, 2.90), "valid_01": (2.10, 1.94)}
SINGLE_MODELS = {
    "viscous": ["pendulum.Iyy", "pendulum.viscous"],
    "dry": ["pendulum.Iyy", "pendulum.viscous", "pendulum.dry"],
    "stribeck": [
        "pendulum.Iyy",
        "pendulum.viscous",
        "pendulum.dry",
        "pendulum.stribeck_delta",
        "pendulum.stribeck_c",
    ],
}
DOUBLE_NAMES = [
    "joint1.Iyy",
    "joint2.mass",
    "joint2.Iyy",
    "joint1.viscous",
    "joint2.viscous",
]


def load(folder: str, name: str, joints: list[str]) -> tuple[Recording, np.ndarray]:
    """The recording and its measured rates (the README: denoised by the authors)."""
    d = np.load(DATA / folder / f"{name}.npz")
    angles = np.column_stack([d[f"q_{j}"] for j in joints])
    rates = np.column_stack([d[f"dq_{j}"] for j in joints])
    return Recording(d["t"], angles, np.zeros_like(angles), f"{folder}/{name}"), rates


def single_model(names: list[str]):  # noqa: ANN201
    joint = {"viscous": 2e-4}
    if "pendulum.dry" in names:
        joint["dry"] = 1e-3
    if "pendulum.stribeck_delta" in names:
        joint |= {"stribeck_delta": 1e-3, "stribeck_c": 1.0}
    config = {"gravity": [0, 0, -9.81], "defaults": SOFT, "joints": {"pendulum": joint}}
    return load_model(SINGLE_URDF, config | {"estimate": names})


def simulated_rms(model, rec: Recording, rates: np.ndarray, h: float) -> tuple[np.ndarray, ...]:  # noqa: ANN001
    """RMS angle error [rad] per column over the first 1 s and the whole file, simulating the
    identified model from the first measured state (errors at the simulator's steps)."""
    n = int((rec.t[-1] - rec.t[0]) / h)
    q0, v0 = state_from_joints(model, rec.angles[0], rates[0])
    sim = simulate(model, h, n, q0, v0)
    # the simulator reports angles in (-pi, pi]; shift by whole turns to the measured start
    turns = np.round((rec.angles[0] - sim.angles[0]) / (2 * np.pi))
    angles = np.unwrap(sim.angles, axis=0) + 2 * np.pi * turns
    measured = np.column_stack(
        [np.interp(sim.t + rec.t[0], rec.t, rec.angles[:, j]) for j in range(rec.angles.shape[1])]
    )
    return sim.t, angles - measured


def rms(t: np.ndarray, err: np.ndarray, upto: float | None) -> np.ndarray:
    keep = t <= upto + 1e-12 if upto is not None else slice(None)
    return np.sqrt(np.mean(err[keep] ** 2, axis=0))


def authors_single(rec: Recording, rates: np.ndarray) -> np.ndarray:
    """The authors' ODE ``ddq = -(k1 dq - a1 g m1 sin q) / (m1 a1^2 + I1)`` with their fit."""
    a1, m1, inertia, k1, g = 0.14775, 0.14758, 1.0912e-4, 2.2394e-4, 9.81001
    sol = solve_ivp(
        lambda _t, x: [x[1], -(k1 * x[1] - a1 * g * m1 * np.sin(x[0])) / (m1 * a1**2 + inertia)],
        (rec.t[0], rec.t[-1]),
        [rec.angles[0, 0], rates[0, 0]],
        t_eval=rec.t,
        rtol=1e-10,
        atol=1e-10,
        method="DOP853",
    )
    return sol.y[0] - rec.angles[:, 0]


def run_single(h: float, kappa: float) -> None:
    joints = ["pendulum"]
    train = [load("single", f"train_{i:02d}", joints) for i in range(4)]
    valid = {f"valid_{i:02d}": load("single", f"valid_{i:02d}", joints) for i in range(2)}
    print(f"\n== single arm: h = {h} s, kappa = {kappa}; per-file fits (Tables 2-3) ==")
    for label, names in SINGLE_MODELS.items():
        model = single_model(names)
        costs, scores = [], []
        for i, (rec, _) in enumerate(train):
            fit = identify(model, [rec], h=h, kappa=kappa, names=names, max_iterations=40)
            costs.append(fit.cost_per_step)
            others = [r for j, (r, _) in enumerate(train) if j != i]
            scores += [
                identify(fit.model, [r], h=h, kappa=kappa, names=[]).cost_per_step for r in others
            ]
            values = " ".join(f"{v:.4g}({s:.1g})" for v, s in zip(fit.values, fit.std, strict=True))
            print(f"  {label:8s} train_{i:02d}: cost {fit.cost_per_step:.3g} "
                  f"[{fit.status}, {fit.iterations} it] {values}")  # fmt: skip
        print(f"  {label:8s} combined: cost {np.mean(costs):.3g}  CV {np.mean(scores):.3g}")
    print("\n  validation, simulated from the first measured state: RMS angle error [mrad] "
          "over 1 s / whole file")  # fmt: skip
    for name, (rec, rates) in valid.items():
        err = authors_single(rec, rates)
        one, whole = rms(rec.t, err[:, None], 1.0)[0], rms(rec.t, err[:, None], None)[0]
        print(f"  {name} authors' model (our integration): {1e3 * one:.2f} / {1e3 * whole:.1f}; "
              f"README {PUBLISHED_SINGLE[name][0]} / {PUBLISHED_SINGLE[name][1]}")  # fmt: skip
    for label, names in SINGLE_MODELS.items():
        start = time.perf_counter()
        fit = identify(single_model(names), [r for r, _ in train], h=h, kappa=kappa,
                       max_iterations=40)  # fmt: skip
        values = ", ".join(f"{n} {v:.5g}" for n, v in zip(names, fit.values, strict=True))
        print(f"  {label} on all training files ({fit.status}, {fit.iterations} it, "
              f"{time.perf_counter() - start:.0f} s): {values}")  # fmt: skip
        for name, (rec, rates) in valid.items():
            t, err = simulated_rms(fit.model, rec, rates, h)
            print(f"    {name}: {1e3 * rms(t, err, 1.0)[0]:.2f} / {1e3 * rms(t, err, None)[0]:.1f}")


def run_double(h: float, kappa: float, n_train: int) -> None:
    joints = ["joint1", "joint2"]
    train = [load("double", f"train_{i:02d}", joints)[0] for i in range(n_train)]
    config = {
        "gravity": [0, 0, -9.81],
        "defaults": SOFT,
        "joints": {"joint1": {"viscous": 2e-4}, "joint2": {"viscous": 2e-4}},
        "bodies": {"joint1": {"mass": 0.093844}},
        "estimate": DOUBLE_NAMES,
    }
    start = time.perf_counter()
    fit = identify(load_model(DOUBLE_URDF, config), train, h=h, kappa=kappa, max_iterations=40)
    values = ", ".join(
        f"{n} {v:.4g}({s:.1g})" for n, v, s in zip(fit.names, fit.values, fit.std, strict=True)
    )
    print(f"\n== double arm: {n_train} training files, h = {h} s ({fit.status}, "
          f"{fit.iterations} it, {time.perf_counter() - start:.0f} s) ==\n  {values}")  # fmt: skip
    print("  validation: RMS [mrad] joint 1 / arm 2 absolute over 1 s; whole file; README 1 s")
    for i in range(4):
        rec, rates = load("double", f"valid_{i:02d}", joints)
        t, err = simulated_rms(fit.model, rec, rates, h)
        err = np.column_stack([err[:, 0], err[:, 0] + err[:, 1]])
        one, whole = 1e3 * rms(t, err, 1.0), 1e3 * rms(t, err, None)
        ref = PUBLISHED_DOUBLE.get(f"valid_{i:02d}")
        print(f"  valid_{i:02d}: {one[0]:.2f} / {one[1]:.2f}; {whole[0]:.1f} / {whole[1]:.1f}; "
              f"{'-' if ref is None else f'{ref[0]} / {ref[1]}'}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--h", type=float, default=0.01, help="time step of the model [s]")
    parser.add_argument("--kappa", type=float, default=100.0, help="state error weight (§4.4)")
    parser.add_argument("--double-train", type=int, default=6, help="double-arm training files")
    parser.add_argument("--only", choices=["single", "double"], help="run one rig only")
    args = parser.parse_args()
    if args.only != "double":
        run_single(args.h, args.kappa)
    if args.only != "single":
        run_double(args.h, args.kappa, args.double_train)


if __name__ == "__main__":
    main()
