"""Shared fixtures: the real datasets (vendored under data/, or $PHYSID_DATASETS for the
unvendored TX40) and one simulated arm experiment."""

from __future__ import annotations

import os

# One BLAS thread per process, set before NumPy loads: the suite runs in 2 xdist workers on 2
# cores, and multi-threaded OpenBLAS on small least squares then oversubscribes the cores
# (measured under load: KUKA identification 47 s threaded, 2.6 s single-threaded).
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from dataclasses import dataclass  # noqa: E402 - after the thread settings
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
VENDORED = REPO / "data"  # datasets whose licence allows redistribution (data/README.md)
# Other datasets (the Staubli TX40): $PHYSID_DATASETS, or ../shared/datasets beside a checkout.
DATASETS = Path(os.environ.get("PHYSID_DATASETS", REPO.parent / "shared" / "datasets"))
KUKA = VENDORED / "kuka_lwr4"
PENDULUM = VENDORED / "multiarm_pendulum"
TX40 = DATASETS / "staubli_tx40"
# The TX40 example manifest reads ${PHYSID_DATASETS}/staubli_tx40/...
os.environ.setdefault("PHYSID_DATASETS", str(DATASETS))
EXAMPLES = REPO / "examples"


def require_dataset(folder: Path) -> Path:
    """Skip (with the reason) when the real datasets are not beside the checkout."""
    if not folder.is_dir():
        pytest.skip(f"real dataset not found at {folder} (set PHYSID_DATASETS)")
    return folder


@dataclass(frozen=True)
class ArmExperiment:
    model: object
    theta_true: np.ndarray
    train: object  # Simulation
    validation: object  # Simulation


def shared_across_workers(tmp_path_factory, name: str, compute):  # noqa: ANN001, ANN201
    """``compute()`` once per test run, however many xdist workers need it: the first worker
    computes it under an exclusive lock and leaves it pickled in the run's temporary folder (the
    workers' common parent), where the others load it: the same arrays, bit for bit. Without
    xdist (or fcntl) it is simply computed. For deterministic session fixtures only."""
    try:
        import fcntl
    except ImportError:  # not POSIX: every worker computes its own
        return compute()
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return compute()
    import pickle

    root = tmp_path_factory.getbasetemp().parent
    stored = root / f"shared-{name}.pickle"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if stored.is_file():
            return pickle.loads(stored.read_bytes())
        value = compute()
        staged = root / f"shared-{name}.pickle.staged"
        staged.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        staged.replace(stored)
        return value


@pytest.fixture(scope="session")
def arm_experiment(tmp_path_factory) -> ArmExperiment:
    """The demo arm identified from 20 s and validated on a fresh 10 s experiment."""
    from physid.sim.arm import arm6_model, simulate_random_excitation, true_parameters

    def simulate() -> tuple[np.ndarray, list]:
        rng = np.random.default_rng(7)
        model = arm6_model()
        theta = true_parameters(model, rng)
        runs = [
            simulate_random_excitation(
                model, theta, duration_s=duration, sample_rate_hz=1000.0, rng=rng
            )
            for duration in (20.0, 10.0)
        ]
        return theta, runs

    # 30 s of simulated arm (about 25 s of CPU): simulated once for both xdist workers
    theta, runs = shared_across_workers(tmp_path_factory, "arm_experiment", simulate)
    return ArmExperiment(arm6_model(), theta, runs[0], runs[1])


@pytest.fixture(scope="session")
def go1_payload_walk():
    """Paper B tests: ``(nominal, true, recording)``, a Go1 with a 3 kg payload on its torso
    walking 0.8 s at 5 ms nodes (physid.sim.oe_floating.simulate_go1, seed 2)."""
    import pinocchio as pin

    from physid.sim.oe_floating import simulate_go1
    from physid.sim.oe_robots import GO1, load_model

    payload = pin.Inertia(3.0, np.array([0.02, 0.0, 0.05]), np.diag([0.02, 0.04, 0.05]))
    nominal = load_model(GO1, floating=True)
    true = nominal.copy()
    true.inertias[1] = nominal.inertias[1] + payload
    rec = simulate_go1(true, nominal, np.random.default_rng(2), duration=0.8, dt=0.005)
    return nominal, true, rec


KINOVA_PAYLOAD_BODY = "j2s6s200_joint_6"


@pytest.fixture(scope="session")
def kinova_payload_arm():
    """Paper B tests: ``(nominal, true, recording)``, a Kinova arm with a 0.8 kg payload on its
    last link, 1 s tracked at 10 ms nodes (physid.sim.oe_arm), noisy encoders."""
    import pinocchio as pin

    from physid.sim.oe_arm import simulate_arm
    from physid.sim.oe_robots import KINOVA, load_model

    payload = pin.Inertia(0.8, np.array([0.02, -0.03, 0.08]), np.diag([2e-3, 2.5e-3, 1.5e-3]))
    nominal = load_model(KINOVA)
    true = nominal.copy()
    j = true.getJointId(KINOVA_PAYLOAD_BODY)
    true.inertias[j] = true.inertias[j] + payload
    rec = simulate_arm(true, nominal, np.random.default_rng(0), duration=1.0, dt=0.01)
    return nominal, true, rec


def kinova_payload_problem(arm, noise=None):  # noqa: ANN001, ANN201
    """``(problem, xs, ws, theta)`` of paper B on ``kinova_payload_arm``: the payload link's
    inertia estimated (log-Cholesky) from its encoders and velocities, ``noise`` the NoiseStd
    told (default: physid's), started from the initial guess and the nominal inertia."""
    from physid.oe.build import initial_guess, make_problem
    from physid.oe.measurements import Measurements, NoiseStd

    nominal, _, rec = arm
    meas = Measurements(q=rec.q_meas, v=rec.v_meas)
    problem = make_problem(nominal, [KINOVA_PAYLOAD_BODY], "log_cholesky", rec.dt, rec.tau, meas,
                           noise or NoiseStd())  # fmt: skip
    xs, ws = initial_guess(problem)
    return problem, xs, ws, problem.dynamics.nominal_theta()

