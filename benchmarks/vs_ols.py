"""physid (defaults) vs a plain ordinary least squares, on held-out data, by one independent scorer.

What it measures, per case: the held-out relative error ``||tau - tau_hat|| / ||tau||`` (all
joints stacked, on the RAW measured torques at the recording's own sample instants) of

* OLS written here (~30 lines): Pinocchio ``computeJointTorqueRegressor`` inertial columns plus,
  per joint, viscous ``dq``, Coulomb ``sign(dq)`` and offset columns (+ armature ``ddq`` where the
  torque includes the rotors; + the TX40 coupled-wrist columns), solved by ``numpy.linalg.lstsq``
  on the full-rate raw torques of the training recordings;
* physid: ``physid.workflows.run_identify`` with NO config (defaults; TX40: only the example's
  transmission and joint terms, because the data are motor side; cases of real_cases.py), its
  ``params.json`` re-scored here: a Pinocchio model of the URDF whose bodies get the file's
  ``pin.Inertia(mass, com, inertia)``, the file's gravity, ``tau_hat = rnea + viscous*dq +
  coulomb*sign(dq) + offset + armature*ddq`` (+ coupled-motor terms);
* for simulated cases, the noise floor: the same scorer applied to the TRUE parameters.

Both fits are scored on identical signals: positions resampled uniformly, a zero-phase 4th-order
Butterworth (fixed 10 Hz cut-off), ``np.gradient`` twice, interpolated back to the sample times.
physid's own reported validation error (``result.validation.relative_error``, its own
preprocessing) is printed beside, so any disagreement is visible.

Cases: KUKA LWR4+ (real; train files 2+3, validate 1), Staubli TX40 (real, motor side; first 2/3
train, last 1/3 validate), and the MuJoCo robots of ``independent_sim.py`` (arm5p with a
prismatic joint, arm6, scara4; 2 x 20 s training, 10 s validation with another excitation).
``--coverage-seeds N`` repeats the simulated robots over N seeds and prints the fraction of
physid's base parameters (finite std in params.json) within 3 std of the truth.

Targets: physid/OLS <= 1.00 on every case, mean ratio <= 0.97, simulated physid <= 1.1 x floor.

Run: python benchmarks/vs_ols.py [--datasets PATH] [--seeds N] [--coverage-seeds N]
(KUKA from the repository's data/; the TX40 from --datasets, default $PHYSID_DATASETS, else
../shared/datasets beside the repository; skipped with a message when absent)

RESULTS of 2026-11-26, after the torque-delay correction (a delay compensated by shifting the
motion, the logged torque never interpolated): KUKA 0.937, TX40 0.679 (20.01 %, its 0.86 ms
lead kept), arm5p 0.743, arm6 0.934, scara4 0.885, mean 0.836 -- as on 2026-11-24. A run earlier
that day read mean 0.777 and physid at 0.66-0.84 x the floor, with 0.27-0.36 ms kept on the
simulated arms: interpolating their logged torque between samples averaged its noise, an
artifact, not a better model (and the --coverage-seeds 20 run of that code, 0.991, is void).

RESULTS (2 vCPUs shared with other jobs), defaults of 2026-11-24 (preprocessing chosen by
blocked cross-validation, joint-term prior, decimation at 3x the cut-off), 111 s wall::

    case                          OLS physid  ratio  floor  ph/fl physid own
    kuka_lwr4 2+3->1 (real)      2.79   2.61  0.937      -      -       2.70
    staubli_tx40 (real)         29.55  20.14  0.682      -      -      19.61
    arm5p seed 0 (sim)           2.25   1.67  0.743   2.35  0.711       1.67
    arm6 seed 0 (sim)            1.37   1.28  0.934   1.35  0.947       1.27
    scara4 seed 0 (sim)          1.60   1.42  0.885   1.57  0.902       1.44
    mean ratio 0.836: ratio <= 1 every case MET, mean <= 0.97 MET, sim <= 1.1 x floor MET

(Before: KUKA 2.55, TX40 19.89, arm5p 1.68, arm6 1.28, scara4 1.42; mean 0.830. KUKA's moving
mass is now 13.5 kg against the URDF's 14.4, 20.8 kg before.)

physid's params.json carries its Coulomb deadband per joint (chosen from the data: KUKA 0.02 x
each joint's RMS speed, 0.007-0.02 rad/s; TX40 and the simulated arms likewise) and the scorer
applies it to physid's prediction; the OLS keeps a plain sign (``--deadband`` gives it one).
The "floor" scores the true parameters with a plain sign: the simulated friction is a tanh,
which a deadband approximates better, hence physid below the floor.

``--coverage-seeds 20`` (60 cases, 311 s): fraction of physid's base parameters within 3 std of
the truth: arm5p 0.998 (920), arm6 0.985 (1200), scara4 0.917 (480), all 0.977 (2600). Before
the friction-model term (deadband halved/doubled, in quadrature): all 0.876. scara4's misses are
its vertical prismatic joint's base combinations (j3.m + j4.m + j3.Ia, j3.offset - 9.81 j3.Ia:
mean z -2.9 on the mass), a bias the term does not cover.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
import independent_sim as sim  # noqa: E402
import real_cases  # noqa: E402
from scoring import (  # noqa: E402
    CUTOFF_HZ,
    Signals,
    butterworth_states,
    ols_fit,
    ols_regressor,
    params_error,
    params_prediction,
    read_sim_csv,
    relative_error,
)

SIM_ROBOTS = ("arm5p", "arm6", "scara4")
DEADBAND = 0.0  # Coulomb: sign(dq), set to 0 where |dq| < DEADBAND (--deadband; 0 = plain sign)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


@dataclass
class Case:
    name: str
    urdf: Path  # given to physid; its kinematics also serve the scorer and the OLS
    physid_train: list[Path]
    physid_validate: list[Path]
    train: list[Signals]
    validate: list[Signals]
    armature: bool  # OLS armature column
    wrist: bool = False  # TX40 coupled-wrist OLS columns
    config: Path | None = None
    truth_json: Path | None = None
    extra: dict = field(default_factory=dict)


def _from_real(case: real_cases.RealCase) -> Case:
    return Case(case.name, case.urdf, case.physid_train, case.physid_validate, case.train,
                case.validate, armature=case.armature, wrist=case.wrist,
                config=case.config)  # fmt: skip


def kuka_case(datasets: Path, tmp: Path) -> Case:
    """Train on files 2 and 3, validate on 1 (benchmarks/real_cases.py)."""
    return _from_real(real_cases.kuka_case(tmp, (2, 3), (1,)))


def tx40_case(datasets: Path, tmp: Path) -> Case:
    """First 2/3 train, last 1/3 validate; the example's transmission (real_cases.py)."""
    return _from_real(real_cases.tx40_case(datasets, tmp))


def sim_case(robot: str, seed: int, tmp: Path) -> Case:
    paths = sim.write_case(tmp / f"{robot}_{seed}", sim.make_spec(robot),
                           np.random.default_rng(seed))  # fmt: skip
    return Case(f"{robot} seed {seed} (sim)", paths.prior_urdf, list(paths.train),
                list(paths.validate), [read_sim_csv(p) for p in paths.train],
                [read_sim_csv(p) for p in paths.validate], armature=True,
                truth_json=paths.truth_json)  # fmt: skip


# --------------------------------------------------------------------------------------------
# Running and scoring one case
# --------------------------------------------------------------------------------------------


def run_physid(case: Case, out_dir: Path):
    """physid.workflows.run_identify; returns (result, params.json document)."""
    from physid.workflows import run_identify

    result = run_identify(case.urdf, case.physid_train, validate=case.physid_validate,
                          config_path=case.config, out_dir=out_dir)  # fmt: skip
    return result, json.loads((out_dir / "params.json").read_text(encoding="utf-8"))


def score_case(case: Case, out_dir: Path) -> dict:
    """Both fits on the same splits and the same derivative estimate; errors on raw torques."""
    model = pin.buildModelFromUrdf(str(case.urdf))
    train = [butterworth_states(s) for s in case.train]
    validate = [butterworth_states(s) for s in case.validate]
    started = time.perf_counter()
    theta = ols_fit(model, train, case.armature, case.wrist, DEADBAND)
    n = model.nv
    ols_predictions = [
        (ols_regressor(model, s, case.armature, case.wrist, DEADBAND) @ theta).reshape(-1, n)
        for s in validate
    ]
    ols_time = time.perf_counter() - started
    started = time.perf_counter()
    result, document = run_physid(case, out_dir)
    physid_time = time.perf_counter() - started
    row = {
        "case": case.name,
        "ols": relative_error(validate, ols_predictions),
        "physid": params_error(model, document, case.validate, validate, DEADBAND),
        "physid_own": None if result.validation is None else result.validation.relative_error,
        "floor": None,
        "ols_time": ols_time,
        "physid_time": physid_time,
        "status": getattr(result, "status", "?"),
    }
    if case.truth_json is not None:
        truth = json.loads(case.truth_json.read_text(encoding="utf-8"))
        row["floor"] = relative_error(validate, [params_prediction(model, truth, s, DEADBAND)
                                                 for s in validate])  # fmt: skip
    return row


def base_coverage(case: Case, out_dir: Path) -> tuple[int, int, int]:
    """(within 3 std for the consistent estimate, within 3 std for the LS values, counted)."""
    from physid.files.params_file import read_params, standard_parameters

    result, document = run_physid(case, out_dir)
    K = result.base.projection
    theta_true = standard_parameters(result.model, read_params(case.truth_json))
    truth = K @ theta_true
    base = document["base_parameters"]
    std = np.array([np.nan if v is None else v for v in base["std"]], dtype=float)
    estimate = np.asarray(result.theta_base, float)
    ls_key = next((k for k in base if k.endswith("_values")), None)
    ls = np.array([np.nan if v is None else v for v in base[ls_key]], float) if ls_key else None
    ok = np.isfinite(std) & (std > 0)
    within = int(np.sum(np.abs(estimate - truth)[ok] <= 3 * std[ok]))
    within_ls = -1 if ls is None else int(np.sum(np.abs(ls - truth)[ok] <= 3 * std[ok]))
    return within, within_ls, int(ok.sum())


# --------------------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "     -" if x is None else f"{100 * x:6.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(os.environ.get("PHYSID_DATASETS", REPO.parent / "shared" / "datasets"))
    parser.add_argument("--datasets", type=Path, default=default,
                        help="folder holding staubli_tx40/ (default: $PHYSID_DATASETS or "
                             "../shared/datasets); the KUKA recordings are in data/")  # fmt: skip
    parser.add_argument("--seeds", type=int, default=1, help="seeds per simulated robot")
    parser.add_argument("--coverage-seeds", type=int, default=0,
                        help="seeds per simulated robot for the 3-sigma coverage of physid's "
                             "base parameters (0: skip)")  # fmt: skip
    parser.add_argument("--deadband", type=float, default=0.0,
                        help="Coulomb sign(dq) = 0 where |dq| < this, in the OLS and the scorer "
                             "(default 0: plain sign; physid's params.json carries its own "
                             "deadband, which the scorer applies to physid)")  # fmt: skip
    parser.add_argument("--skip-real", action="store_true", help="simulated cases only")
    parser.add_argument(
        "--only", default="", help="comma-separated case labels to run (kuka, tx40, arm5p_0, ...)"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="write the cases and physid outputs here instead of a temp dir",
    )
    args = parser.parse_args()
    global DEADBAND
    DEADBAND = args.deadband

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as temporary:
        tmp = args.keep or Path(temporary)
        tmp.mkdir(parents=True, exist_ok=True)
        builders = [] if args.skip_real else [
            ("kuka", lambda: kuka_case(REPO / "data", tmp)),
        ]  # fmt: skip
        if not args.skip_real and (args.datasets / "staubli_tx40").is_dir():
            builders.append(("tx40", lambda: tx40_case(args.datasets, tmp)))
        elif not args.skip_real:
            print(f"TX40 skipped: no staubli_tx40/ in {args.datasets} (--datasets)", flush=True)
        for robot in SIM_ROBOTS:
            for seed in range(args.seeds):
                builders.append((f"{robot}_{seed}", lambda r=robot, s=seed: sim_case(r, s, tmp)))
        if args.only:
            builders = [b for b in builders if b[0] in args.only.split(",")]
        rows = []
        for label, build in builders:
            t0 = time.perf_counter()
            case = build()
            prepared = time.perf_counter() - t0
            row = score_case(case, tmp / f"out_{label}")
            row["prepare_time"] = prepared
            rows.append(row)
            print(f"  done {row['case']} (prepare {prepared:.1f} s, OLS {row['ols_time']:.1f} s, "
                  f"physid {row['physid_time']:.1f} s)", flush=True)  # fmt: skip

        print("\nheld-out relative error ||tau - tau_hat|| / ||tau|| [%] on raw torques "
              f"(shared Butterworth {CUTOFF_HZ:g} Hz derivatives)")  # fmt: skip
        print(f"{'case':26s} {'OLS':>6s} {'physid':>6s} {'ratio':>6s} {'floor':>6s} "
              f"{'ph/fl':>6s} {'physid own':>10s}  status")  # fmt: skip
        ratios, floor_ok = [], True
        for r in rows:
            ratio = r["physid"] / r["ols"]
            ratios.append(ratio)
            over = None if r["floor"] is None else r["physid"] / r["floor"]
            if over is not None and over > 1.1:
                floor_ok = False
            print(f"{r['case']:26s} {_pct(r['ols'])} {_pct(r['physid'])} {ratio:6.3f} "
                  f"{_pct(r['floor'])} {'     -' if over is None else f'{over:6.3f}'} "
                  f"{_pct(r['physid_own']):>10s}  {r['status']}")  # fmt: skip
        mean = float(np.mean(ratios))
        met = lambda ok: "MET" if ok else "NOT MET"  # noqa: E731
        print(f"mean ratio physid/OLS = {mean:.3f}; targets: ratio <= 1.00 every case "
              f"{met(all(r <= 1.0 for r in ratios))}, mean <= 0.97 {met(mean <= 0.97)}, "
              f"simulated physid <= 1.1 x noise floor {met(floor_ok)}")  # fmt: skip

        if args.coverage_seeds:
            print(f"\n3-sigma coverage of physid's base parameters over {args.coverage_seeds} "
                  "seeds (params.json base_parameters.std; truth = K @ theta_true)")  # fmt: skip
            totals = np.zeros(3, dtype=int)
            for robot in SIM_ROBOTS:
                counts = np.zeros(3, dtype=int)
                for seed in range(args.coverage_seeds):
                    case = sim_case(robot, 1000 + seed, tmp / "coverage")
                    counts += base_coverage(case, tmp / "coverage" / f"out_{robot}_{seed}")
                totals += counts
                print(f"  {robot:8s} consistent estimate {counts[0] / counts[2]:.3f}, "
                      f"LS estimate {counts[1] / counts[2]:.3f} ({counts[2]} parameters)",
                      flush=True)  # fmt: skip
            print(f"  all      consistent estimate {totals[0] / totals[2]:.3f}, "
                  f"LS estimate {totals[1] / totals[2]:.3f} ({totals[2]} parameters; "
                  "nominal 0.997 for Gaussian errors)")  # fmt: skip
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
