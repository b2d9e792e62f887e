"""What each choice physid adds costs or brings on held-out data (issue 72), case by case.

physid adds to the simplest physically consistent fit (``scoring.consistent_ols_fit``: least
squares on the same regressor, pseudo-inertia PSD, fv / fc / Ia >= 0, no prior) the choices below.
Each is turned off through physid's config (the joint terms' prior, which has no config key, by
the launcher setting its relative std to 1e6, i.e. no prior), physid is run as a user runs it
(``physid identify``, the CLI, in its own process) and its ``params.json`` is scored by the
independent scorer of :mod:`scoring` beside plain OLS and the consistent least squares, on the
same held-out recordings:

========================  ===========================================================
ablation                  config
========================  ===========================================================
cut-off                   ``filter.butterworth_cutoff_hz``: the conservative candidate
                          of the defaults' run (paper C's rule), no cross-validated choice
deadband                  ``coulomb_deadband: 0`` (plain sign)
delay                     ``estimation.torque_delay: report`` (no compensation)
tilt                      ``estimation.estimate_gravity_direction: false``
plausibility              ``estimation.plausible_masses: false``
body prior                ``estimation.prior_std_relative: null`` (no prior on the bodies)
joint prior               the joint terms' prior std x 1e6 (launcher)
weighting                 ``estimation.weighting: ols``
all off                   all of the above at once: physid's consistent least squares on
                          its own preprocessing
========================  ===========================================================

Simulated cases (``independent_sim.py``) are scored on three held-out sets of the same run: the
noisy torques and the noise-free ones with the scorer's 10 Hz Butterworth states, and the
noise-free torques at the simulator's exact states (no derivative estimate: what the parameters
are worth, not what a filter makes of them).

Run: python benchmarks/ablation.py [--only kuka_23_1,arm5p_0,...] [--ablations deadband,tilt]
[--datasets PATH] [--keep DIR] (real cases as in real_corpus.py; simulated ones ``<robot>_<seed>``
for the robots of independent_sim.ROBOTS).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pinocchio as pin

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import independent_sim as sim  # noqa: E402
from real_cases import DEFAULT_DATASETS, corpus  # noqa: E402
from real_corpus import mass_summary, run_physid, urdf_document  # noqa: E402
from scoring import (  # noqa: E402
    butterworth_states,
    consistent_ols_fit,
    ols_fit,
    ols_regressor,
    params_error,
    params_prediction,
    relative_error,
)
from vs_ols import Z_LIMIT, Case, from_real, joint_terms_z, sim_case  # noqa: E402

# Choices without a config key, turned off by the launcher before physid's CLI runs: the joint
# terms' prior widened to no prior at all.
NO_JOINT_PRIOR = (
    "import physid.offline.fit.joint_prior as p; "
    "p.JOINT_TERM_PRIOR_RELATIVE = p.OFFSET_PRIOR_RELATIVE = 1e6; "
)
_MAIN = "from physid.cli import main; main()"
LAUNCHERS = {
    "joint prior": NO_JOINT_PRIOR + _MAIN,
    "all off": NO_JOINT_PRIOR + _MAIN,
}
CONSERVATIVE_CUTOFF = "conservative cut-off"  # filled per case from the defaults' run

ABLATIONS: dict[str, dict] = {
    "defaults": {},
    "cut-off": {"filter": {"butterworth_cutoff_hz": CONSERVATIVE_CUTOFF}},
    "deadband": {"coulomb_deadband": 0.0},
    "delay": {"estimation": {"torque_delay": "report"}},
    "tilt": {"estimation": {"estimate_gravity_direction": False}},
    "plausibility": {"estimation": {"plausible_masses": False}},
    "body prior": {"estimation": {"prior_std_relative": None}},
    "joint prior": {},
    "weighting": {"estimation": {"weighting": "ols"}},
    "all off": {
        "filter": {"butterworth_cutoff_hz": CONSERVATIVE_CUTOFF},
        "coulomb_deadband": 0.0,
        "estimation": {"torque_delay": "report", "estimate_gravity_direction": False,
                       "prior_std_relative": None, "weighting": "ols"},
    },
}  # fmt: skip


def baselines(case: Case) -> dict[str, list[float]]:
    """Plain OLS, the consistent least squares and the URDF's own model (its inertias, no
    friction): held-out errors, one per held-out set."""
    model = pin.buildModelFromUrdf(str(case.urdf))
    train = [butterworth_states(s) for s in case.train]
    armature, wrist = case.armature, case.wrist
    fits = {"OLS": ols_fit(model, train, armature, wrist),
            "OLS+c": consistent_ols_fit(model, train, armature, wrist)[0]}  # fmt: skip
    errors = {}
    for name, theta in fits.items():
        errors[name] = [
            relative_error(h.states, [(ols_regressor(model, s, armature, wrist) @ theta)
                                      .reshape(-1, model.nv) for s in h.states])
            for h in case.held_out
        ]  # fmt: skip
    urdf = urdf_document(model)
    errors["URDF"] = [
        relative_error(h.states, [params_prediction(model, urdf, s) for s in h.states])
        for h in case.held_out
    ]
    return errors


def conservative_cutoff(document: dict) -> float | None:
    """The conservative candidate of the defaults' cut-off choice [Hz] (its label's number), or
    the cut-off used when nothing was chosen."""
    preprocessing = document.get("preprocessing", {})
    choice = preprocessing.get("selection", {}).get("Butterworth cut-off")
    if choice is None:
        return preprocessing.get("butterworth_cutoff_hz")
    if choice["chosen"] == choice["conservative"]:
        return preprocessing.get("butterworth_cutoff_hz")
    found = re.match(r"([0-9.eE+-]+) Hz", choice["conservative"])
    return float(found.group(1)) if found else None


def _resolved(overrides: dict, cutoff: float | None) -> dict | None:
    """``overrides`` with the conservative cut-off filled in (None: it cannot be, skip)."""
    filters = overrides.get("filter", {})
    if filters.get("butterworth_cutoff_hz") != CONSERVATIVE_CUTOFF:
        return overrides
    if cutoff is None:
        return None
    return {**overrides, "filter": {**filters, "butterworth_cutoff_hz": cutoff}}


@dataclass
class AblationRow:
    """One case's held-out errors: the baselines and physid under every ablation run."""

    label: str
    held_out: list[str]
    errors: dict[str, list[float]]  # name -> error per held-out set
    status: dict[str, str]
    documents: dict[str, dict] = field(default_factory=dict)
    urdf_mass: float = 0.0
    moving_mass: dict[str, float] = field(default_factory=dict)  # name -> physid's [kg]
    z: dict[str, dict[str, float]] = field(default_factory=dict)  # name -> joint term -> z


def ablate(
    case: Case, label: str, out: Path, names: tuple[str, ...] = tuple(ABLATIONS)
) -> AblationRow:
    """physid under each ablation of ``names`` (``defaults`` always first), and the
    baselines, on every held-out set of ``case``."""
    model = pin.buildModelFromUrdf(str(case.urdf))
    row = AblationRow(label, [h.label for h in case.held_out], baselines(case), {})
    cutoff = None
    for name in ("defaults", *(n for n in names if n != "defaults")):
        overrides = _resolved(ABLATIONS[name], cutoff)
        if overrides is None:
            continue
        launcher = LAUNCHERS.get(name)
        folder = out / f"{label}_{name.replace(' ', '_')}"
        document, _, status = run_physid(case, folder, overrides, launcher=launcher)
        row.status[name] = status
        if document is None:
            continue
        row.documents[name] = document
        row.moving_mass[name], row.urdf_mass, _ = mass_summary(model, document)
        if case.truth_json is not None:
            row.z[name] = joint_terms_z(document, json.loads(case.truth_json.read_text()))
        if name == "defaults":
            cutoff = conservative_cutoff(document)
        row.errors[name] = [params_error(model, document, h.signals, h.states)
                            for h in case.held_out]  # fmt: skip
    return row


def ablation_names(text: str) -> tuple[str, ...]:
    """Comma-separated ablations of :data:`ABLATIONS` (``all``: every one); exits on others."""
    names = tuple(ABLATIONS) if text == "all" else tuple(n for n in text.split(",") if n)
    unknown = [n for n in names if n not in ABLATIONS]
    if unknown:
        raise SystemExit(f"unknown ablation(s) {unknown}; known: {list(ABLATIONS)}")
    return names


def print_rows(rows: list[AblationRow], names: tuple[str, ...]) -> None:
    """One line per case and held-out set: the baselines, physid's defaults, then physid with
    each choice off (held-out error [%])."""
    names = ("defaults", *(n for n in names if n != "defaults"))
    columns = ["OLS", "OLS+c", "URDF", *names]
    print("\nheld-out relative error [%] (independent scorer); physid with one choice off per "
          "column")  # fmt: skip
    print(f"{'case':22s} {'held out':13s} " + " ".join(f"{c[:12]:>12s}" for c in columns))
    for row in rows:
        for k, held in enumerate(row.held_out):
            cells = []
            for c in columns:
                value = row.errors.get(c)
                cells.append(f"{'-' if value is None else f'{100 * value[k]:.3f}':>12s}")
            print(f"{row.label:22s} {held:13s} " + " ".join(cells))
    print(
        f"\nmoving mass [kg] (URDF's, physid's per column); simulated: worst joint-term z "
        f"against the truth (physid's std) and how many beyond {Z_LIMIT:g}"
    )
    print(f"{'case':22s} {'URDF':>13s} " + " ".join(f"{c[:12]:>12s}" for c in names))
    for row in rows:
        masses = [row.moving_mass.get(c) for c in names]
        print(
            f"{row.label:22s} {row.urdf_mass:13.2f} "
            + " ".join(f"{'-' if m is None else f'{m:.2f}':>12s}" for m in masses)
        )
        if row.z:
            print(f"{'':22s} {'z worst/>lim':>13s} " + " ".join(
                f"{_worst_z(row.z.get(c)):>12s}" for c in names))  # fmt: skip


def _worst_z(z: dict[str, float] | None) -> str:
    """``<worst |z|>/<how many beyond Z_LIMIT>`` of one run's joint terms."""
    if not z:
        return "-"
    return f"{max(abs(v) for v in z.values()):.1f}/{sum(abs(v) > Z_LIMIT for v in z.values())}"


def cases(labels: list[str], datasets: Path, tmp: Path) -> list[Callable[[], Case]]:
    """Builders of the cases named ``labels``: real ones (real_cases.corpus) or simulated
    ``<robot>_<seed>`` (vs_ols.sim_case: three held-out sets)."""
    real = dict(corpus(datasets, tmp))
    builders = []
    for label in labels:
        if label in real:
            builders.append(lambda b=real[label]: from_real(b()))
            continue
        robot, _, seed = label.rpartition("_")
        if robot not in sim.ROBOTS or not seed.isdigit():
            raise SystemExit(f"unknown case {label!r}: a real_corpus label or <robot>_<seed>")
        builders.append(lambda r=robot, s=int(seed): sim_case(r, s, tmp))
    return builders


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        default="kuka_23_1,arm5p_0",
        help="comma-separated cases: real_corpus labels or <robot>_<seed>",
    )
    parser.add_argument(
        "--ablations", default="all", help=f"comma-separated, of: {', '.join(ABLATIONS)}; or all"
    )
    parser.add_argument("--datasets", type=Path, default=DEFAULT_DATASETS)
    parser.add_argument(
        "--keep", type=Path, default=None, help="keep the cases and physid outputs here"
    )
    parser.add_argument("--json", type=Path, default=None, help="write the errors here too")
    args = parser.parse_args()  # fmt: skip
    names = ablation_names(args.ablations)
    started = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory() as temporary:
        tmp = args.keep or Path(temporary)
        tmp.mkdir(parents=True, exist_ok=True)
        labels = args.only.split(",")
        for label, build in zip(labels, cases(labels, args.datasets, tmp), strict=True):
            rows.append(ablate(build(), label, tmp / "out", names))
            print_rows(rows[-1:], names)
            sys.stdout.flush()
    print_rows(rows, names)
    if args.json is not None:
        args.json.write_text(json.dumps(
            [{"case": r.label, "held_out": r.held_out, "errors": r.errors, "status": r.status}
             for r in rows], indent=1), encoding="utf-8")  # fmt: skip
    print(f"total wall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
