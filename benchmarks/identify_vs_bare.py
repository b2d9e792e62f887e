"""End-to-end ``physid identify`` on the TX40 recording vs a bare reference written here.

physid: read the recording manifest, Butterworth 100 Hz + central differences, regressor,
parallel decimation (20 Hz), base parameters, WLS with covariance, essential parameters,
physically consistent SDP, validation on the held-out third, params.json + report.html + 5 PNG
figures. Bare reference (what one writes by hand): np.loadtxt both CSVs, motor -> joint
conversion, the same Butterworth and central differences, a Pinocchio regressor loop plus the
friction/armature/coupled-wrist columns, the same zero-phase decimation filter, base columns by
pivoted QR, ``numpy.linalg.lstsq``. Same data (first two thirds), same filters.

Imports are done before timing (both sides use Pinocchio/SciPy; physid also CVXPY and
Matplotlib, whose import costs about 1.5 s once per process and is reported separately).
Prints both times (best of --repeat) and the ratio physid / bare (target <= 1.2).

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/identify_vs_bare.py [--datasets PATH] [--no-pyarrow]

RESULTS (2026-11-21, 2 vCPUs, best of 3, three runs): bare 0.54-0.56 s; physid 0.60-0.61 s, ratio
1.09-1.10 with pyarrow installed (CSV 6x faster than np.loadtxt); with --no-pyarrow 0.65-0.68 s,
ratio 1.20-1.24. Computation without the report 0.22-0.23 s (0.30 s with np.loadtxt). Before
this session's work: 1.15 s, ratio 2.05 (figures 1.2 s of CPU, now 0.55 s).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import scipy.linalg
import scipy.signal

HERE = Path(__file__).resolve().parent
EXAMPLE = HERE.parent / "examples" / "staubli_tx40"
RATIOS = np.array([32.0, 32.0, 45.0, -48.0, 45.0, 32.0])


def bare_reference(folder: Path) -> tuple[np.ndarray, float]:
    """Minimal IDIM-LS by hand; returns the estimate and the training relative error."""
    fs, dt = 5000.0, 2e-4
    q_motor = np.loadtxt(folder / "pos_read_data.csv", delimiter=",", skiprows=1)
    tau_motor = np.loadtxt(folder / "curr_data.csv", delimiter=",", skiprows=1)
    R = np.diag(RATIOS)
    R[5, 4] = RATIOS[5]
    q = np.linalg.solve(R, q_motor.T).T + np.array([0, -np.pi / 2, np.pi / 2, 0, 0, 0])
    tau = tau_motor @ R
    n_train = int(round(0.6667 * len(q)))
    q, tau = q[:n_train], tau[:n_train]
    q = scipy.signal.sosfiltfilt(scipy.signal.butter(4, 100.0, fs=fs, output="sos"), q, axis=0)
    dq = np.gradient(q, dt, axis=0)
    ddq = np.gradient(dq, dt, axis=0)
    model = pin.buildModelFromUrdf(str(folder / "tx40_mdh_modified.urdf"))
    data = model.createData()
    n = len(q)
    W = np.zeros((n, 6, 60 + 24 + 3))
    for k in range(n):
        W[k, :, :60] = pin.computeJointTorqueRegressor(model, data, q[k], dq[k], ddq[k])
    sign = np.where(np.abs(dq) < 0.01, 0.0, np.sign(dq))
    for j in range(6):
        W[:, j, 60 + 4 * j : 64 + 4 * j] = np.column_stack(
            [dq[:, j], sign[:, j], np.ones(n), ddq[:, j]]
        )
    W[:, 4, 84], W[:, 5, 84] = ddq[:, 5], ddq[:, 4]
    W[:, 4, 85], W[:, 5, 85] = dq[:, 5], dq[:, 4]
    motor6 = np.where(np.abs(dq[:, 4] + dq[:, 5]) < 0.01, 0.0, np.sign(dq[:, 4] + dq[:, 5]))
    W[:, 4, 86] = W[:, 5, 86] = motor6
    sos = scipy.signal.butter(8, 20.0, fs=fs, output="sos")
    margin = int(np.ceil(5 * fs / 20.0))
    rows = np.arange(margin, n - margin, 100)
    W_dec = scipy.signal.sosfiltfilt(sos, W.reshape(n, -1), axis=0)[rows].reshape(-1, 87)
    tau_dec = scipy.signal.sosfiltfilt(sos, tau, axis=0)[rows].reshape(-1)
    _, r, pivots = scipy.linalg.qr(W_dec, mode="economic", pivoting=True)
    rank = int(np.sum(np.abs(np.diag(r)) > 1e-8 * abs(r[0, 0])))
    columns = np.sort(pivots[:rank])
    theta, *_ = np.linalg.lstsq(W_dec[:, columns], tau_dec, rcond=None)
    error = np.linalg.norm(tau_dec - W_dec[:, columns] @ theta) / np.linalg.norm(tau_dec)
    return theta, float(error)


def physid_identify(folder: Path, out: Path | None):
    from physid.workflows import run_identify

    return run_identify(
        folder / "tx40_mdh_modified.urdf",
        [EXAMPLE / "recording.yaml"],
        config_path=EXAMPLE / "config.yaml",
        out_dir=out,
    )


def best_time(function, repeat: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - started)
    return min(times), value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets",
        type=Path,
        default=Path(os.environ.get("PHYSID_DATASETS", HERE.parent.parent / "shared" / "datasets")),
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--no-pyarrow",
        action="store_true",
        help="hide pyarrow, so physid reads the CSVs with np.loadtxt like the bare "
        "reference (what a base install without physid[parquet] does)",
    )
    args = parser.parse_args()
    if args.no_pyarrow:
        sys.modules["pyarrow"] = None  # type: ignore[assignment]  (import then raises ImportError)
    folder = args.datasets / "staubli_tx40"
    import_time = (
        subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import physid.workflows"],
            capture_output=True,
            text=True,
            check=True,
        )
        .stderr.strip()
        .splitlines()[-1]
    )
    import physid.workflows  # noqa: F401  (warm: imports are not what we compare)

    bare_time, (theta, bare_error) = best_time(lambda: bare_reference(folder), args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        physid_time, result = best_time(
            lambda: physid_identify(folder, Path(tmp) / "out"), args.repeat
        )
    compute_time, _ = best_time(lambda: physid_identify(folder, None), args.repeat)
    print(
        f"bare reference (loop + Butterworth + decimation + lstsq): {bare_time:.2f} s, "
        f"{len(theta)} base columns, training relative error {100 * bare_error:.2f} %"
    )
    print(
        f"physid identify (+ WLS, essential, consistency SDP, validation, report): "
        f"{physid_time:.2f} s, {result.base.size} base parameters, training relative error "
        f"{100 * result.train.relative_error:.2f} %, "
        f"validation {100 * result.validation.relative_error:.2f} %"
    )
    reader = (
        "np.loadtxt"
        if args.no_pyarrow or importlib.util.find_spec("pyarrow") is None
        else ("pyarrow.csv (physid[parquet] installed)")
    )
    print(f"physid CSV reader: {reader}")
    print(f"ratio physid / bare = {physid_time / bare_time:.2f} (target <= 1.2)")
    print(
        f"physid without writing the report (same computation, no figures/HTML/JSON): "
        f"{compute_time:.2f} s, ratio {compute_time / bare_time:.2f}"
    )
    print(
        "one-off import of physid.workflows (cumulative us, last line of -X importtime): "
        f"{import_time}"
    )


if __name__ == "__main__":
    main()
