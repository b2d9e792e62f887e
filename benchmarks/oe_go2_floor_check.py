"""Diagnosis: is a soft contact's floor offset ``dh`` the same as moving the floating base up by
``dh``? Prints ``cost(xs + dh e_z, h + dh) - cost(xs, h)`` against the arrival prior's share,
and the cost of moving the floor alone (docs/oe.md "Eighth round"). Usage: a directory that
``oe_mujoco_go2.py --soft-feet`` wrote (go2_prior.urdf, log.csv, oe.yaml)::

    PYTHONPATH=src python benchmarks/oe_go2_floor_check.py out/oe_mujoco_go2/crawl
"""

import argparse
from pathlib import Path

import numpy as np

from physid.api.oe_run import _problem
from physid.oe.data.inputs import read_inputs


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument(
        "folder", type=Path, help="what oe_mujoco_go2.py --soft-feet wrote for one gait"
    )
    d = parser.parse_args().folder
    logs = {"topic": None, "episode": None, "imu_topic": None, "wrench_topics": ()}
    inputs = read_inputs(
        d / "go2_prior.urdf", d / "log.csv", ["root_joint"], True, d / "oe.yaml", logs
    )
    problem, xs, ws, soft, radius = _problem(
        inputs, d / "go2_prior.urdf", ["root_joint"], "exp_eig", None
    )
    print("soft", soft.get("feet"))
    models = problem.contacts.models
    print("ground", models.ground, "soft", getattr(models, "soft", None))
    theta = problem.dynamics.nominal_theta()
    c0, g0 = problem.evaluate(xs, ws, theta)
    h0 = models.ground
    for dh in (0.005, -0.01, 0.02):
        x2 = xs.copy()
        x2[:, 2] += dh
        models.ground = h0 + dh
        c1, g1 = problem.evaluate(x2, ws, theta)
        models.ground = h0
        c2, g2 = problem.evaluate(xs, ws, theta)  # floor moved back
        models.ground = h0 + dh
        c3, g3 = problem.evaluate(xs, ws, theta)  # floor moved, base not
        models.ground = h0
        prior = (
            0.5
            * ((xs[0, 2] + dh - problem.x0_prior[2]) ** 2 - (xs[0, 2] - problem.x0_prior[2]) ** 2)
            / problem._x0_std[2] ** 2
        )
        print(
            f"dh {dh:+.3f}: cost(base+dh, h+dh) - cost = {c1 - c0:.6g} (arrival prior's share "
            f"{prior:.6g}), gaps change {np.abs(g1 - g0).max():.3g}; floor moved alone: cost "
            f"{c3 - c0:+.6g}, gaps change {np.abs(g3 - g0).max():.3g}"
        )


if __name__ == "__main__":
    main()
