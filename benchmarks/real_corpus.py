"""physid with NO config against plain OLS and figaroh on every real arm recording we have.

The benchmark every default of ``physid identify`` answers to (issue 24). For each case of
:mod:`real_cases` (KUKA LWR4+, Staubli TX40, UR10e, xMate7p, DFKI double pendulum; stated
train / held-out splits) it prints:

* the held-out relative error ``||tau - tau_hat|| / ||tau||`` on the RAW torque (current x gain
  where no torque is logged), all joints stacked, by one independent scorer (:mod:`scoring`: a
  fixed 10 Hz Butterworth for every method's states; no physid code) for
  - physid: the ``physid identify`` command, run as a user runs it (no config; the TX40 gets
    only its transmission, a description of the robot), its ``params.json`` re-scored: its
    inertials, joint terms and gravity, and the torque delay it compensated
    (``fit.torque_delay.compensated_s``: its model says the torque logged at ``t`` is the
    dynamics of ``t - delay``, so it is scored against the torque ``delay`` later);
  - OLS: written in :mod:`scoring` (inertial + viscous, Coulomb, offset (+ armature) per joint,
    ``lstsq`` on the raw torques);
  - consistent OLS ("OLS+c"): the same least squares with every body's pseudo-inertia positive
    semidefinite and viscous friction / armature non-negative (CVXPY + Clarabel, in
    :mod:`scoring`): the best a physically consistent model of this class does with the
    scorer's own states, so OLS+c - OLS is what consistency itself costs on the case;
  - figaroh 1.0.2 (PyPI, ``benchmarks/figaroh_baseline.py``; skipped when not installed);
  - the URDF's own model (its inertias, no friction): what the robot's maker predicts;
* the moving mass and the body masses of physid against the URDF's (worst ratio named);
* CPU seconds of the physid command (the process and its children: imports, report and
  figures included) and of figaroh's (in its own process: start-up and imports included, one
  BLAS thread).

Targets (issue 24): physid <= min(OLS, figaroh) on every case; every body mass within
[0.5, 2] x its URDF value and the moving mass within [0.8, 1.25] x, or each one outside named in
an "implausible masses" warning (item 4; both printed: in band, and in band or named); physid's
CPU <= figaroh's.

Run: python benchmarks/real_corpus.py [--datasets PATH] [--only kuka_23_1,ur10e_30s,...]
[--keep DIR] [--no-figaroh]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

# physid runs in the environment a user has (_USER_ENVIRONMENT); this process (the OLS, the
# scorer and figaroh, which runs in-process) gets one BLAS thread, figaroh's fastest setting on a
# 2-core machine, so its CPU time is not inflated by spinning OpenBLAS threads.
_USER_ENVIRONMENT = dict(os.environ)
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from real_cases import DEFAULT_DATASETS, RealCase, corpus  # noqa: E402
from scoring import (  # noqa: E402
    butterworth_states,
    consistent_ols_fit,
    ols_fit,
    ols_regressor,
    params_error,
    params_prediction,
    relative_error,
)


@dataclass
class Row:
    case: str
    ols: float
    consistent_ols: float
    physid: float | None
    figaroh: float | None
    urdf: float
    physid_cpu_s: float
    figaroh_cpu_s: float | None
    status: str
    moving_mass: float | None
    urdf_mass: float
    worst_body: str
    warnings: int  # findings of severity caution or worse
    # every body within [0.5, 2] x its URDF mass and the moving mass within [0.8, 1.25] x, or
    # each one outside named in a warning (issue 24 item 4)
    masses_plausible_or_named: bool = False


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _with_overrides(case: RealCase, overrides: dict | None, out: Path) -> Path | None:
    """The case's config (robot description) with ``overrides`` merged in (ablations)."""
    import yaml

    if not overrides:
        return case.config
    config = {} if case.config is None else yaml.safe_load(case.config.read_text())
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    path = out.with_suffix(".config.yaml")
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def run_physid(
    case: RealCase, out: Path, overrides: dict | None = None
) -> tuple[dict | None, float, str]:
    """The ``physid identify`` command as a user types it; (params.json or None, CPU s, status).
    ``overrides``: config keys merged into the case's (for ablations; the benchmark's table is
    without any)."""
    script = Path(sys.executable).with_name("physid")  # the console script pip installed
    launcher = (
        [str(script)]
        if script.is_file()
        else [sys.executable, "-c", "from physid.cli import main; main()"]
    )
    command = [*launcher, "identify", "--urdf", str(case.urdf), "--out", str(out), "--quiet",
               "--overwrite"]  # fmt: skip
    for path in case.physid_train:
        command += ["--data", str(path)]
    for path in case.physid_validate:
        command += ["--validate", str(path)]
    config = _with_overrides(case, overrides, out)
    if config is not None:
        command += ["--config", str(config)]
    before = _children_cpu()
    done = subprocess.run(command, capture_output=True, text=True, env=_USER_ENVIRONMENT)
    cpu = _children_cpu() - before
    params = out / "params.json"
    if done.returncode not in (0, 3) or not params.is_file():
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return None, cpu, f"failed ({done.returncode}): {last[:100]}"
    document = json.loads(params.read_text(encoding="utf-8"))
    return document, cpu, str(document.get("status", "?"))


def urdf_document(model: pin.Model) -> dict:
    """The URDF's own model as a params document: its inertias, no friction, its gravity."""
    bodies = {}
    for joint_id in range(1, model.njoints):
        inertia = model.inertias[joint_id]
        bodies[model.names[joint_id]] = {"mass": inertia.mass, "com": inertia.lever.tolist(),
                                         "inertia": inertia.inertia.tolist()}  # fmt: skip
    return {"bodies": bodies, "joints": {}}


def _body_masses(model: pin.Model, document: dict) -> tuple[dict, dict]:
    """({joint: URDF body mass}, {joint: the document's body mass}) [kg]."""
    urdf = {model.names[j]: model.inertias[j].mass for j in range(1, model.njoints)}
    return urdf, {joint: float(body["mass"]) for joint, body in document["bodies"].items()}


def mass_summary(model: pin.Model, document: dict) -> tuple[float, float, str]:
    """(moving mass, URDF moving mass, the body whose mass ratio to the URDF is worst)."""
    urdf, masses = _body_masses(model, document)
    ratios = {j: m / urdf[j] for j, m in masses.items() if urdf.get(j, 0.0) > 1e-3}
    worst = max(ratios, key=lambda j: abs(np.log(ratios[j])), default="")
    label = f"{worst} {masses[worst]:.3g}/{urdf[worst]:.3g} kg" if worst else "-"
    return sum(masses.values()), sum(urdf.values()), label


def implausible_masses_named(model: pin.Model, document: dict) -> bool:
    """Issue 24 item 4 on a params.json: every body mass within [0.5, 2] x the URDF's and the
    moving mass within [0.8, 1.25] x, or each one outside named in a finding of the file that
    says so (the body's joint name, or "moving mass", in an ID403 or ID404 finding)."""
    urdf, masses = _body_masses(model, document)
    said = [f["message"] for f in document.get("findings", []) if f["code"] in ("ID403", "ID404")]
    outside = [j for j, m in masses.items()
               if urdf.get(j, 0.0) > 1e-3 and not 0.5 <= m / urdf[j] <= 2.0]  # fmt: skip
    moving, total = sum(masses.values()), sum(urdf.values())
    if not 0.8 <= moving / total <= 1.25:
        outside.append("moving mass")
    return all(any(name in w for w in said) for name in outside)


def run_figaroh(case: RealCase, model: pin.Model, validate_states: list) -> tuple[float, float]:
    """figaroh in its own process (start-up and imports counted, as for physid's command)."""
    from figaroh_baseline import Recording, fit_in_process

    train = [Recording(s.t, s.q, s.tau) for s in case.train]
    states = [(s.q, s.dq, s.ddq) for s in validate_states]
    run = fit_in_process(case.urdf, case.joints, train, states, has_armature=case.armature)
    return relative_error(validate_states, run.predictions), run.cpu_seconds


def score(case: RealCase, out: Path, with_figaroh: bool, overrides: dict | None = None) -> Row:
    model = pin.buildModelFromUrdf(str(case.urdf))
    train = [butterworth_states(s) for s in case.train]
    validate = [butterworth_states(s) for s in case.validate]
    held_out = [ols_regressor(model, s, case.armature, case.wrist) for s in validate]

    def held_out_error(theta: np.ndarray) -> float:
        return relative_error(validate, [(W @ theta).reshape(-1, model.nv) for W in held_out])

    ols = held_out_error(ols_fit(model, train, case.armature, case.wrist))
    consistent_ols = held_out_error(consistent_ols_fit(model, train, case.armature, case.wrist)[0])
    urdf_error = relative_error(
        validate, [params_prediction(model, urdf_document(model), s) for s in validate]
    )
    document, cpu, status = run_physid(case, out, overrides)
    physid = moving = None
    worst = "-"
    n_warnings = 0
    urdf_mass = mass_summary(model, urdf_document(model))[1]
    named = False
    if document is not None:
        physid = params_error(model, document, case.validate, validate)
        moving, urdf_mass, worst = mass_summary(model, document)
        n_warnings = sum(f["severity"] != "info" for f in document.get("findings", []))
        named = implausible_masses_named(model, document)
    figaroh = figaroh_cpu = None
    if with_figaroh:
        try:
            figaroh, figaroh_cpu = run_figaroh(case, model, validate)
        except Exception as error:  # noqa: BLE001 - a peer's failure is a row, not a crash
            print(f"  figaroh failed on {case.name}: {type(error).__name__}: {error}")
    return Row(case.name, ols, consistent_ols, physid, figaroh, urdf_error, cpu, figaroh_cpu,
               status, moving, urdf_mass, worst, n_warnings, named)  # fmt: skip


def _pct(x: float | None) -> str:
    return "     -" if x is None else f"{100 * x:6.2f}"


def print_table(rows: list[Row]) -> None:
    print("\nheld-out relative error [%] on raw torque (independent scorer, 10 Hz states); "
          "masses [kg]; CPU [s]")  # fmt: skip
    print(f"{'case':34s} {'OLS':>6s} {'OLS+c':>6s} {'figaro':>6s} {'URDF':>6s} {'physid':>6s} "
          f"{'best?':>5s} {'mass':>6s} {'URDF':>6s} {'worst body':>28s} {'CPU ph':>6s} "
          f"{'CPU fg':>6s}  status")  # fmt: skip
    met_error = met_mass = met_named = met_cpu = True
    for r in rows:
        bar = min(x for x in (r.ols, r.figaroh) if x is not None)
        best = r.physid is not None and r.physid <= bar * (1 + 1e-9)
        met_error &= best
        plausible = r.moving_mass is not None and 0.8 <= r.moving_mass / r.urdf_mass <= 1.25
        met_mass &= plausible
        met_named &= r.masses_plausible_or_named
        if r.figaroh_cpu_s is not None:
            met_cpu &= r.physid_cpu_s <= r.figaroh_cpu_s
        mass = "     -" if r.moving_mass is None else f"{r.moving_mass:6.2f}"
        fg_cpu = "     -" if r.figaroh_cpu_s is None else f"{r.figaroh_cpu_s:6.1f}"
        print(f"{r.case:34s} {_pct(r.ols)} {_pct(r.consistent_ols)} {_pct(r.figaroh)} "
              f"{_pct(r.urdf)} {_pct(r.physid)} {'yes' if best else 'NO':>5s} {mass} "
              f"{r.urdf_mass:6.2f} {r.worst_body:>28s} {r.physid_cpu_s:6.1f} {fg_cpu}  "
              f"{r.status} ({r.warnings} findings of caution or worse)")  # fmt: skip
    met = lambda ok: "MET" if ok else "NOT MET"  # noqa: E731
    timed = any(r.figaroh_cpu_s is not None for r in rows)
    print(f"targets: physid <= min(OLS, figaroh) on every case {met(met_error)}; moving mass in "
          f"[0.8, 1.25] x URDF {met(met_mass)} (every body and moving mass in its band or "
          f"named in an 'implausible' warning: {met(met_named)}); CPU <= figaroh "
          f"{met(met_cpu) if timed else 'not measured (figaroh not run)'}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS,
                        help="folder of the real datasets (default: $PHYSID_DATASETS or "
                             "../shared/datasets); the KUKA recordings are in data/")  # fmt: skip
    parser.add_argument("--only", default="", help="comma-separated case labels")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the contract files and physid outputs here")  # fmt: skip
    parser.add_argument("--no-figaroh", action="store_true", help="skip figaroh")
    parser.add_argument("--physid-config", type=Path, default=None,
                        help="YAML merged into every case's config (ablations only: the "
                             "benchmark's targets are for physid with no config)")  # fmt: skip
    args = parser.parse_args()
    with_figaroh = not args.no_figaroh
    if with_figaroh:
        try:
            import figaroh_baseline  # noqa: F401
        except ImportError as error:
            print(f"figaroh skipped: {error} (pip install -e '.[bench]')")
            with_figaroh = False
    overrides = None
    if args.physid_config is not None:
        import yaml

        overrides = yaml.safe_load(args.physid_config.read_text())
    from identify_vs_bare import physid_environment

    user = physid_environment(_USER_ENVIRONMENT)  # physid byte-compiled, as installed
    _USER_ENVIRONMENT.clear()
    _USER_ENVIRONMENT.update(user)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as temporary:
        tmp = args.keep or Path(temporary)
        tmp.mkdir(parents=True, exist_ok=True)
        builders = corpus(args.datasets, tmp)
        if args.only:
            wanted = args.only.split(",")
            builders = [(label, build) for label, build in builders if label in wanted]
        rows = []
        for label, build in builders:
            case = build()
            row = score(case, tmp / f"out_{label}", with_figaroh, overrides)
            rows.append(row)
            print(f"  {label}: OLS {_pct(row.ols)}, consistent OLS {_pct(row.consistent_ols)}, "
                  f"figaroh {_pct(row.figaroh)}, physid {_pct(row.physid)} ({row.status}), "
                  f"{row.physid_cpu_s:.1f} CPU s"
                  + "".join(f"; {n}" for n in case.notes), flush=True)  # fmt: skip
        print_table(rows)
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
