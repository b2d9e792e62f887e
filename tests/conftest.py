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
# A one-joint pendulum about a horizontal axis (1.5 kg at 0.2 m): one-DoF models
ONE_JOINT_PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="1.5"/>
    <inertia ixx="0.002" iyy="0.03" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="20" velocity="5"/></joint>
</robot>
"""
TX40 = DATASETS / "staubli_tx40"
# The TX40 example manifest reads ${PHYSID_DATASETS}/staubli_tx40/...
os.environ.setdefault("PHYSID_DATASETS", str(DATASETS))
EXAMPLES = REPO / "examples"


def kuka_slice(k: int, seconds: float = 12.0):  # noqa: ANN201 - benchmarks' scoring.Signals
    """The first ``seconds`` of the real KUKA LWR4+ recording ``k`` (1-3) as
    ``benchmarks/scoring.Signals`` (t, q, tau)."""
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    from real_cases import kuka_signals
    from scoring import Signals

    s = kuka_signals(KUKA, k)
    rows = s.t - s.t[0] <= seconds
    return Signals(s.t[rows], s.q[rows], s.tau[rows])


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
    """``compute()`` once per test run, however many tests and xdist workers need it: the first
    computes it under an exclusive lock and leaves it pickled in the run's temporary folder (the
    xdist workers' common parent), where the others load it: the same arrays, bit for bit.
    Without fcntl it is simply computed. ``name`` must say everything the value depends on
    (deterministic computations only)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: every worker computes its own
        return compute()
    import pickle

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER") is not None:
        root = root.parent  # the run's folder, above each worker's own
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
    from physid.oe.model.measurements import Measurements, NoiseStd
    from physid.oe.solving.build import initial_guess, make_problem

    nominal, _, rec = arm
    meas = Measurements(q=rec.q_meas, v=rec.v_meas)
    problem = make_problem(nominal, [KINOVA_PAYLOAD_BODY], "log_cholesky", rec.dt, rec.tau, meas,
                           noise or NoiseStd())  # fmt: skip
    xs, ws = initial_guess(problem)
    return problem, xs, ws, problem.dynamics.nominal_theta()


# --- the order of the tests across xdist workers ----------------------------------------------
# `python -m pytest -n 2`: the suite is a few dozen long tests among hundreds of short ones. The
# default scheduler deals them out in file order, so a long test met late runs alone at the end
# while the other worker idles, and splitting a file across workers computes its module-scoped
# fixtures (a 40 s simulation, say) twice. Here the unit of work is a whole file when it has
# module- or class-scoped fixtures (the fixture runs once), each test otherwise, and the units
# go out longest first (measured seconds in durations.json, made from `--durations=0`; a test
# not listed counts 0.5 s), so the two workers finish together. Which tests run, and how, is
# unchanged: only their order and which worker runs them.
DURATIONS = Path(__file__).with_name("durations.json")
_UNLISTED_S = 0.5
_grouped_files: dict[str, bool] = {}


def _unit(nodeid: str) -> str:
    """The scheduling unit of a test: its file if the file shares fixtures between its tests."""
    file = nodeid.split("::", 1)[0]
    if file not in _grouped_files:
        try:
            text = (REPO / file).read_text(encoding="utf-8")
        except OSError:
            text = ""
        _grouped_files[file] = any(
            f'scope="{scope}"' in text for scope in ("module", "class", "package")
        )
    return file if _grouped_files[file] else nodeid


def pytest_collection_modifyitems(config, items):  # noqa: ANN001, ANN201
    """On an xdist worker: the items by unit, the longest unit first (every worker collects,
    and the controller keeps this order; stable, so a unit's own tests keep their file order)."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None or config.getoption("dist", "no") != "load":
        return
    import json

    try:
        seconds = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    cost: dict[str, float] = {}
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        unit = _unit(item.nodeid)
        cost[unit] = cost.get(unit, 0.0) + seconds.get(item.nodeid, _UNLISTED_S)
        first.setdefault(unit, index)
    order = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (-cost[_unit(item.nodeid)], first[_unit(item.nodeid)],
                                 order[id(item)]))  # fmt: skip


@pytest.hookimpl(optionalhook=True)  # an xdist hook: no error where xdist is not installed
def pytest_xdist_make_scheduler(config, log):  # noqa: ANN001, ANN201
    """``-n N`` without ``--dist``: the units of :func:`_unit` in the workers' (longest first)
    order. An explicit ``--dist`` other than ``load`` keeps xdist's own scheduler."""
    if config.getoption("dist", "no") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class LongestFirstScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

    config.option.loadscopereorder = False  # keep the workers' order
    return LongestFirstScheduling(config, log)
