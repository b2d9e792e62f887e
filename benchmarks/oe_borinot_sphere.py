"""Paper B eq. 31 (Fig. 2 bottom): Borinot, a quadrotor with a 2-DoF arm, holding a sphere, with
the exponential-eigenvalue chart started at a symmetric (sphere) inertia of the end link.

At a sphere the rotation coordinates omega of the exp-eig chart do not change pi
(d pi / d omega = 0), so V_theta_theta is singular: the plain Schur complement (eqs. 29-30)
cannot factor it, the nullspace step (eq. 31) moves only in the range of V_theta_theta. The
recording is simulated with Pinocchio (known truth: the end link carries a solid sphere);
the commands are the rotor thrusts and the arm torques.

    nice -n 10 python benchmarks/oe_borinot_sphere.py
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from physid.oe import NoiseStd, OEOptions, initial_guess, make_problem, solve
from physid.oe.model.actuation import quad_x_rotors, thrust_actuation
from physid.sim.oe_floating import simulate_flyer
from physid.sim.oe_robots import BORINOT, load_model

END_LINK = "flying_arm_2__j_link1_link2"


def sphere(mass: float, radius: float, center) -> pin.Inertia:
    return pin.Inertia(mass, np.asarray(center, float), 0.4 * mass * radius**2 * np.eye(3))


def run(nullspace: bool, seed: int = 0) -> None:
    base = load_model(BORINOT, floating=True)
    j = base.getJointId(END_LINK)
    center = base.inertias[j].lever
    nominal, true = base.copy(), base.copy()
    nominal.inertias[j] = sphere(0.3, 0.05, center)  # the guess: a symmetric inertia
    true.inertias[j] = sphere(0.6, 0.06, center + [0.0, 0.0, 0.02])
    B = thrust_actuation(base, *quad_x_rotors(0.25))
    rec = simulate_flyer(true, nominal, B, 4, np.random.default_rng(seed), duration=3.0, dt=0.01)
    problem = make_problem(
        nominal,
        [END_LINK],
        "exp_eig",
        rec.dt,
        rec.u,
        rec.measurements,
        NoiseStd(),
        actuation=B,
        x0_prior=np.r_[rec.x[0, : base.nq], np.zeros(base.nv)],
    )
    xs, ws = initial_guess(problem)
    result = solve(
        problem,
        xs,
        ws,
        problem.dynamics.nominal_theta(),
        OEOptions(nullspace=nullspace, max_iterations=100),
    )
    est = pin.Inertia.FromDynamicParameters(result.pis[0])
    step = "nullspace (eq. 31)" if nullspace else "Schur complement (eqs. 29-30)"
    print(
        f"{step}: status {result.status}, {result.iterations} iterations, null_dim "
        f"{result.null_dim} at the end"
    )
    print(
        f"  end-link mass {est.mass:.4f} kg (true {true.inertias[j].mass}), CoM error "
        f"{1e3 * np.linalg.norm(est.lever - true.inertias[j].lever):.2f} mm, inertia error "
        f"{np.abs(est.inertia - true.inertias[j].inertia).max():.2e} kg m^2"
    )


if __name__ == "__main__":
    run(nullspace=False)
    run(nullspace=True)
