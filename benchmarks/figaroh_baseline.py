"""figaroh 1.0.2 (PyPI) as the peer baseline of ``benchmarks/real_corpus.py``.

Runs figaroh's default dynamic-identification workflow the way its docs and examples show
it (a ``BaseIdentification`` subclass that supplies the data, a unified YAML config,
``initialize()`` then ``solve()``) and returns a predictor of figaroh's identified base model
at caller-supplied states. Which figaroh function does what:

* ``figaroh.tools.load_robot.load_robot`` loads the URDF into figaroh's ``Robot``. It refuses
  URDFs whose meshes are missing (every benchmark URDF); the same ``Robot`` class is then
  built on a geometry-free Pinocchio model (dynamics are identical, see ``_GeometryFreeRobot``).
* ``BaseIdentification.load_param`` (``UnifiedConfigParser`` + ``unified_to_legacy_identif_
  config``) reads the config of ``_config``: viscous ``fv`` + Coulomb ``fs`` friction and a
  joint offset per joint, actuator inertia ``Ia`` only with ``has_armature``, figaroh's default
  Butterworth order 4 at the recording's true rate.
* ``BaseIdentification.initialize``: ``filter_kinematics_data`` (``scipy.signal.medfilt`` 5,
  zero-phase Butterworth on q, ``np.gradient`` against the time stamps twice for dq and ddq;
  the torque is not filtered), then ``build_regressor_basic`` (Pinocchio joint-torque
  regressor plus the fv, fs, [Ia], offset columns).
* ``BaseIdentification.solve`` with its defaults (``decimate=True`` x10, ``zero_tolerance=1e-3``,
  OLS, no WLS): ``get_index_eliminate`` drops unexcited columns, ``scipy.signal.decimate``
  (zero phase) decimates the torque and every regressor column, and
  ``QRDecomposer.double_decomposition`` picks the base columns and solves for them.
* ``predict`` repeats figaroh's held-out validation path (``_compute_validation_metrics``):
  ``build_regressor_basic`` -> ``build_regressor_reduced`` -> base columns ``@ phi_base``.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
import yaml
from figaroh.identification.base_identification import BaseIdentification
from figaroh.tools.load_robot import load_robot
from figaroh.tools.regressor import build_regressor_basic, build_regressor_reduced
from figaroh.tools.robot import Robot
from pinocchio.robot_wrapper import RobotWrapper

FILTER_ORDER = 4  # figaroh's default signal_processing.filter_order
CUTOFF_FRACTION = 0.1  # cutoff / sample rate of figaroh's UR10 example config (50 Hz at 500 Hz)


@dataclass(frozen=True)
class Recording:
    """One joint-side recording at its own sample instants."""

    t: np.ndarray  # (N,) s
    q: np.ndarray  # (N, n) rad, columns in `joint_names` order
    tau: np.ndarray  # (N, n) N m, measured joint torque


@dataclass(frozen=True)
class FigarohFit:
    """figaroh's identified base model as a predictor, and what the fit cost."""

    predict: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]  # (q, dq, ddq) -> tau
    cpu_seconds: float  # process CPU of the fit, figaroh's preprocessing included
    n_base: int
    notes: str
    base_names: tuple[str, ...] = ()
    base_values: np.ndarray | None = None


class _GeometryFreeRobot(Robot):
    """figaroh's ``Robot`` (with its Pinocchio backend) on a model built without meshes."""

    def __init__(self, urdf: Path) -> None:
        RobotWrapper.__init__(self, pin.buildModelFromUrdf(str(urdf)))
        self.isFext = False
        self.robot_urdf = str(urdf)
        self._freeflyer_limits = self.DEFAULT_FREEFLYER_LIMITS
        self.geom_model = None
        self._backend = None


def _load_robot(urdf: Path) -> tuple[Robot, str]:
    """figaroh's ``load_robot``; the geometry-free ``Robot`` when it refuses missing meshes."""
    try:
        return load_robot(str(urdf)), "load_robot"
    except ValueError as error:
        if "Mesh" not in str(error):
            raise
        return _GeometryFreeRobot(urdf), "load_robot refused missing meshes: geometry-free Robot"


class _RecordingsIdentification(BaseIdentification):
    """``BaseIdentification`` fed from in-memory recordings (figaroh's per-robot subclass)."""

    def __init__(self, robot: Robot, config: str, joints: tuple[str, ...],
                 train: list[Recording]) -> None:  # fmt: skip
        self._train = train
        super().__init__(robot, config)
        ids = [robot.model.getJointId(name) for name in joints]
        # figaroh's example subclasses set these from active_joints; its config does not
        self.identif_config["act_idxq"] = [robot.model.joints[i].idx_q for i in ids]
        self.identif_config["act_idxv"] = [robot.model.joints[i].idx_v for i in ids]

    def load_trajectory_data(self, data_source: str | None = None) -> dict:
        """figaroh's legacy data dict; dq and ddq left to figaroh (None: derive them)."""
        return {
            "timestamps": np.concatenate([r.t for r in self._train]),
            "positions": np.concatenate([r.q for r in self._train]),
            "velocities": None,
            "accelerations": None,
            "torques": np.concatenate([r.tau for r in self._train]),
        }

    def process_kinematics_data(self, filter_config: dict | None = None) -> None:
        """figaroh's ``filter_kinematics_data`` on each recording, the results stacked.

        One recording: exactly figaroh's default. Several: filtering and differentiating their
        concatenation would smear across the joins, so each is processed on its own
        (``solve``'s decimation still runs over the stacked rows: a few samples per join).
        """
        raw, parts, start = self.raw_data, [], 0
        for recording in self._train:
            rows = slice(start, start + len(recording.t))
            self.raw_data = {k: None if v is None else v[rows] for k, v in raw.items()}
            self.filter_kinematics_data(filter_config)
            parts.append(self.processed_data)
            start = rows.stop
        self.raw_data = raw
        self.processed_data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def _config(model: pin.Model, joints: tuple[str, ...], rate: float, armature: bool) -> dict:
    """The unified config a careful user writes (figaroh's UR10 example as the template).

    Left out, ``signal_processing`` defaults to 5000 Hz with a 100 Hz cut-off: not the data's
    rate, and a cut-off at or above Nyquist once the true 50-200 Hz rate is stated (figaroh
    then refuses it). So the true rate is given, with the UR10 example's cut-off ratio.
    """
    zeros = [0.0] * (model.njoints - 1)  # a priori fv, fs, Ia, offsets: "to be identified"
    mechanics = {"friction_coefficients": {"viscous": zeros, "static": zeros},
                 "actuator_inertias": zeros, "joint_offsets": zeros}  # fmt: skip
    components = {"friction": True, "joint_offset": True, "actuator_inertia": armature}
    signal = {"sampling_frequency": float(rate), "cutoff_frequency": CUTOFF_FRACTION * rate,
              "filter_type": "butterworth", "filter_order": FILTER_ORDER}  # fmt: skip
    task = {"enabled": True, "type": "dynamic_identification", "signal_processing": signal,
            "problem": {"use_joint_torques": True, "include_external_forces": False,
                        "model_components": components}}  # fmt: skip
    properties = {"joints": {"active_joints": list(joints)}, "mechanics": mechanics}
    return {"robot": {"name": model.name or "robot", "properties": properties},
            "tasks": {"identification": task}}  # fmt: skip


def figaroh_fit(
    urdf: Path, joint_names: tuple[str, ...], train: list[Recording], *,
    has_armature: bool = False,
) -> FigarohFit:  # fmt: skip
    """Identify with figaroh's default workflow; its base model as a predictor of torque."""
    joints = tuple(joint_names)
    figaroh_log = logging.getLogger("figaroh")
    level = figaroh_log.level
    figaroh_log.setLevel(logging.ERROR)  # conditioning / missing-prior warnings of every run
    start = time.process_time()
    try:
        robot, loaded = _load_robot(Path(urdf).resolve())
        rate = 1.0 / float(np.median(np.concatenate([np.diff(r.t) for r in train])))
        # cwd = a scratch dir: solve() records provenance with `git status` in the cwd
        with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
            config = Path(tmp) / "figaroh_config.yaml"
            config.write_text(yaml.safe_dump(_config(robot.model, joints, rate, has_armature)))
            ident = _RecordingsIdentification(robot, str(config), joints, train)
            with contextlib.redirect_stdout(io.StringIO()):  # solve() prints its report
                ident.initialize()
                phi = np.asarray(ident.solve(plotting=False), dtype=float)
    finally:
        figaroh_log.setLevel(level)
    cpu = time.process_time() - start

    settings, model = ident.identif_config, robot.model
    idx_q, idx_v = settings["act_idxq"], settings["act_idxv"]
    eliminated, base = list(ident._idx_eliminated), list(ident._base_indices)

    def predict(q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """(N, n) torques: figaroh's regressor at these states, its base columns @ phi_base."""
        n = len(q)
        full = [np.zeros((n, model.nq)), np.zeros((n, model.nv)), np.zeros((n, model.nv))]
        for array, value, index in zip(full, (q, dq, ddq), (idx_q, idx_v, idx_v), strict=True):
            array[:, index] = value
        regressor = build_regressor_basic(robot, *full, settings)
        tau = build_regressor_reduced(regressor, eliminated)[:, base] @ phi
        return tau.reshape(model.nv, n)[idx_v].T  # rows are joint-major

    fp = settings["filter_config"]["filter_params"]
    notes = (f"figaroh 1.0.2 BaseIdentification.initialize + solve() defaults (decimate x10, "
             f"zero_tolerance 1e-3, OLS by QRDecomposer.double_decomposition); {loaded}; "
             f"filter_kinematics_data: medfilt 5 + Butterworth {fp['nbutter']} at "
             f"{fp['f_butter']:.3g} Hz (rate {fp['f_sample']:.4g} Hz) on q, np.gradient x2; "
             f"fv + fs (Coulomb) + offset per joint{' + Ia' if has_armature else ''}"
             f"{'; recordings filtered one by one' if len(train) > 1 else ''}")  # fmt: skip
    return FigarohFit(predict, cpu, len(phi), notes, tuple(ident.params_base), phi)


# ----------------------------------------------------------------------------------------------
# A separate process, as a user runs figaroh: its CPU time includes starting Python and
# importing figaroh (about 2 s), as physid's includes its own imports (benchmarks/real_corpus.py)
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProcessRun:
    """figaroh fitted in its own process; predictions at the caller's held-out states."""

    predictions: list[np.ndarray]  # per held-out recording, (N, n)
    cpu_seconds: float  # the whole process: start-up, imports, fit and prediction
    fit_cpu_seconds: float  # the fit alone (as figaroh_fit measures it)
    n_base: int
    notes: str


def fit_in_process(
    urdf: Path, joints: tuple[str, ...], train: list[Recording], states: list[tuple],
    *, has_armature: bool,
) -> ProcessRun:  # fmt: skip
    """Run :func:`figaroh_fit` in a fresh ``python`` process (one BLAS thread) and predict at
    ``states`` (``(q, dq, ddq)`` per held-out recording)."""
    import json
    import resource
    import subprocess
    import sys

    with tempfile.TemporaryDirectory() as tmp:
        job, out = Path(tmp) / "job.npz", Path(tmp) / "out.npz"
        arrays = {}
        for k, r in enumerate(train):
            arrays.update({f"t{k}": r.t, f"q{k}": r.q, f"tau{k}": r.tau})
        for k, (q, dq, ddq) in enumerate(states):
            arrays.update({f"sq{k}": q, f"sdq{k}": dq, f"sddq{k}": ddq})
        meta = {"urdf": str(urdf), "joints": list(joints), "train": len(train),
                "states": len(states), "armature": has_armature}  # fmt: skip
        np.savez(job, meta=json.dumps(meta), **arrays)
        environment = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, __file__, "--worker", str(job), str(out)], check=True,
                       env=environment, capture_output=True)  # fmt: skip
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        with np.load(out) as result:
            info = json.loads(str(result["meta"]))
            predictions = [result[f"p{k}"] for k in range(len(states))]
    return ProcessRun(predictions, cpu, info["fit_cpu"], info["n_base"], info["notes"])


def _worker(job: Path, out: Path) -> None:
    import json

    with np.load(job) as data:
        meta = json.loads(str(data["meta"]))
        train = [Recording(data[f"t{k}"], data[f"q{k}"], data[f"tau{k}"])
                 for k in range(meta["train"])]  # fmt: skip
        states = [(data[f"sq{k}"], data[f"sdq{k}"], data[f"sddq{k}"])
                  for k in range(meta["states"])]  # fmt: skip
    fit = figaroh_fit(Path(meta["urdf"]), tuple(meta["joints"]), train,
                      has_armature=meta["armature"])  # fmt: skip
    predictions = {f"p{k}": fit.predict(*state) for k, state in enumerate(states)}
    info = {"fit_cpu": fit.cpu_seconds, "n_base": fit.n_base, "notes": fit.notes}
    np.savez(out, meta=json.dumps(info), **predictions)


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 4 and sys.argv[1] == "--worker":
        _worker(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        print("usage: python figaroh_baseline.py --worker JOB.npz OUT.npz "
              "(run by benchmarks/real_corpus.py; run that script to compare)")  # fmt: skip
