"""A torque-sensed arm with sigmoid friction: the linear model against ``friction: sigmoid``
(issue 11 item 4; docs/identify.md §10). Simulated with known truth (``physid.sim.arm``).

    OPENBLAS_NUM_THREADS=1 python examples/real_robot_workflows/nonlinear_friction.py \
        [--out nonlinear_friction]

The six-axis demo arm's joints have the sigmoid friction identified for torque-controlled arms
(Gaz et al. 2019): ``phi1 / (1 + exp(-phi2 (dq + phi3))) - phi1 / (1 + exp(-phi2 phi3))`` plus
viscous friction, a transition about 0.2 rad/s wide, slightly off zero speed. Two runs of 20 s
train, a third is held out. ``physid identify`` runs twice — default (linear) friction and
``friction: sigmoid`` — then ``physid validate`` scores both, and the true parameters, on the
held-out run. Prints the held-out errors and the fitted shapes against the truth.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from physid.cli import main as physid_main
from physid.files.params_file import params_document
from physid.recordings.trajectory import write_trajectory_csv
from physid.report.identification import FORMAT
from physid.sim.arm import arm6_model, arm6_urdf_path, simulate_random_excitation, true_parameters

PHI2 = np.array([20.0, 20.0, 25.0, 30.0, 30.0, 40.0])  # s/rad: transition width 4/phi2
PHI3 = np.array([0.02, -0.01, 0.0, 0.015, -0.02, 0.01])  # rad/s: the transition's offset


def _physid(*args: str) -> None:
    physid_main(list(args), standalone_mode=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("nonlinear_friction"))
    parser.add_argument(
        "--duration", type=float, default=20.0, help="seconds per simulated run (tests: shorter)"
    )
    args = parser.parse_args()
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(4)
    model = arm6_model(friction="sigmoid")
    model = replace(model, friction_shape=tuple(zip(PHI2, PHI3, strict=True)))
    linear = arm6_model()
    theta = true_parameters(linear, rng)  # bodies, fv, fc, offset, Ia of the linear layout
    linear_layout = linear.layout
    truth = np.zeros(model.layout.size)
    for name in model.layout.names:  # same bodies and terms; phi1 = 2 fc: +-fc at high speed
        source = name.replace(".phi1", ".fc")
        factor = 2.0 if name.endswith(".phi1") else 1.0
        truth[model.layout.index(name)] = factor * theta[linear_layout.index(source)]
    for joint in model.joint_names:  # a torque sensor after the gearbox sees no offset
        truth[model.layout.index(f"{joint}.offset")] = 0.0
    files = []
    for k in range(3):
        sim = simulate_random_excitation(
            model, truth, duration_s=args.duration, sample_rate_hz=1000.0, rng=rng
        )
        files.append(write_trajectory_csv(out / f"run_{k + 1}.csv", sim.recorded))
    (out / "truth.json").write_text(json.dumps({"format": FORMAT, **params_document(model, truth)}))
    (out / "sigmoid.yaml").write_text("friction: sigmoid\n")
    urdf = arm6_urdf_path()
    train = [arg for f in files[:2] for arg in ("--data", str(f))]
    _physid("identify", "--urdf", urdf, *train, "--out", str(out / "linear"), "--overwrite",
            "--quiet")  # fmt: skip
    _physid("identify", "--urdf", urdf, *train, "--config", str(out / "sigmoid.yaml"),
            "--out", str(out / "sigmoid"), "--overwrite", "--quiet")  # fmt: skip
    # the truth, scored with the sigmoid fit's training filter (the same scorer)
    document = json.loads((out / "truth.json").read_text())
    fitted = json.loads((out / "sigmoid" / "params.json").read_text())
    document["preprocessing"] = fitted["preprocessing"]
    (out / "truth.json").write_text(json.dumps(document))
    print("held-out relative torque error (physid validate, raw torque):")
    for label, params in (("linear", out / "linear" / "params.json"),
                          ("sigmoid", out / "sigmoid" / "params.json"),
                          ("true parameters", out / "truth.json")):  # fmt: skip
        report_path = out / f"validation_{label.replace(' ', '_')}.json"
        _physid("validate", "--urdf", urdf, "--params", str(params), "--data", str(files[2]),
                "--json", str(report_path), "--quiet")  # fmt: skip
        report = json.loads(report_path.read_text())
        print(f"  {label:16s} {100 * report['overall']['relative_error']:.3f} %")
    print("joint     phi1 truth  estimate   phi2 truth  estimate   phi3 truth  estimate")
    for k, joint in enumerate(model.joint_names):
        terms = fitted["joints"][joint]
        phi1 = truth[model.layout.index(f"{joint}.phi1")]
        print(f"{joint:8s} {phi1:10.3f} {terms['phi1']:9.3f}  {PHI2[k]:10.2f} "
              f"{terms['phi2']:9.2f}  {PHI3[k]:10.4f} {terms['phi3']:9.4f}")  # fmt: skip


if __name__ == "__main__":
    main()
