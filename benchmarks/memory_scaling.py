"""Peak memory and time of ``physid identify`` and ``physid validate`` against the recording length.

Issue 10 asks that memory not grow with the recording (identify and validate of 1e7 samples in
under 1 GB peak RSS, with the in-memory result). For each length it writes a recording of the
simulated six-axis arm (1 kHz, a periodic Fourier excitation, 18-bit encoders, torques from the
arm's true parameters plus 0.3 N m noise; written in chunks, so the generator's own memory stays
flat), then runs the two commands in fresh processes and reports their peak resident set size
(the kernel's ``ru_maxrss`` of the process and everything it waited for) and wall time. Up
to ``--compare-up-to`` samples it also identifies the recording in memory in one window and
prints the largest difference of the standard parameters in units of
their standard deviation. Lengths whose projected peak (linear in the samples from the previous
length) exceeds ``--max-rss-gb`` are skipped and said so.

RESULTS (2026-11-23, 2 shared cores; CSV files above 64 MB are streamed,
physid.recordings.streamed):

    samples  identify GB      s  validate GB      s  max|dtheta|/std vs in memory
     1e5         0.51       9.5       0.38       2.3    0.00033
     1e6         0.49      52.9       0.33       8.6    0.00046
     1e7         0.60     575.3       0.54      95.0    -

(before the streaming pipeline: 1e6 took 3.4 GB / 74 s; 1e7 would have needed about 34 GB). The
remaining growth is the time stamps and the decimated residual series, about 12 bytes per sample.

Re-run 2026-11-28 (with the cross-validated choices of issue 24 in identify; 1e7 not re-run)::

    samples  identify GB      s  validate GB      s  max|dtheta|/std vs in memory
     1e4         0.36       3.6       0.28       1.8    1.3e-13
     1e5         0.52      11.1       0.40       3.4    1.3e-10
     1e6         0.79      84.2       0.33       8.3    3.9e-10
     2e6         0.82     167.6       0.34      15.3    -

The streamed identify's floor had risen by 0.3 GB and its time by 1.6x since 2026-11-23. The
0.3 GB was the result's thinned observations (``store.stacked``), which kept the tilt
candidates' unit-gravity blocks: 8.6 of 12.7 kB a row, 244 MB at 1e6 samples. Without them
(the folds' only), the same hour: 1e6 samples 0.50 GB / 97.6 s, validate 0.33 GB / 10.0 s.
1e7 not re-run.

Re-run 2026-11-28 07:15-07:36 UTC, the inertial columns built at the decimation's kept rows
(two helpers' probes sharing the machine)::

    samples  identify GB       s  validate GB       s  max|dtheta|/std vs in memory
     1e6         0.51      54.4       0.34    11.7    1.5e-08
     1e7         1.31     676.7       0.61    86.3    -

Identify's time per sample is back at 2026-11-23's (52.9 s at 1e6), its memory at 1e7 is not:
1.31 GB against 0.60 GB, above issue 10's 1 GB. What grows (sampled stack at the RSS peaks of a
3e6-sample run: 576-624 MB inside ``least_squares.newey_west_covariance``'s FFTs, 686 MB in
``store.stacked`` at the end) is the kept rows' series: since issue 24 the decimation keeps 3 x
the derivative cut-off (15 Hz here, paper C's 2 omega_dyn was 1 Hz), about 15 x the rows, and the
Newey-West scores hold base parameters x kept rows (184 MB at 1e7) with two zero-padded spectra
of 16 columns each (2 x 134 MB). Not fixed this stop.

Re-run 2026-11-28 09:44-10:00 UTC, after three fixes: a strided read of a spilled recording
copies its rows (the rest and fold finders' every-50th-row reads held each 500k-row block alive,
about 480 MB at 1e7); the Newey-West long-run covariance as the scores convolved with the
Bartlett window, 8 MB of columns at a time, the scores filled in place (no list and
concatenation)::

    samples  identify GB       s  validate GB       s  max|dtheta|/std vs in memory
     1e4         0.33       4.2       0.28     2.2    4.8e-14
     1e6         0.50      41.7       0.34     9.2    1.5e-08
     1e7         0.70     496.6       0.60    72.7    -

The 1e7 peak (sampled stack, 32 MB blocks then: 1.01 GB) sits in the convolution; before it,
reading the file (the time stamps, their checks) reaches about 0.64 GB.

    python benchmarks/memory_scaling.py                    # 1e4, 1e5, 1e6 samples
    python benchmarks/memory_scaling.py --sizes 1e4 1e7 --max-rss-gb 20
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

RATE_HZ = 1000.0
ENCODER_RAD = 2.0 * np.pi / 2**18  # 18-bit joint encoders, as physid.sim.arm.SensorNoise
CHUNK = 200_000  # rows generated and written at a time
_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
    "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def write_recording(path: Path, n_samples: int, seed: int = 0) -> None:
    """A long recording of the simulated arm, written chunk by chunk."""
    from physid.robot.regressor import observation_matrix
    from physid.sim.arm import EXCURSION_RAD, FourierExcitation, arm6_model, true_parameters

    rng = np.random.default_rng(seed)
    model = arm6_model()
    theta = true_parameters(model, rng)
    excitation = FourierExcitation.random(
        rng, model.n_joints, base_frequency_hz=0.1, amplitude_rad=EXCURSION_RAD
    )
    names = model.joint_names
    header = ",".join(["t", *(f"q_{j}" for j in names), *(f"tau_{j}" for j in names)])
    with path.open("w") as handle:
        handle.write(header + "\n")
        for start in range(0, n_samples, CHUNK):
            t = np.arange(start, min(start + CHUNK, n_samples)) / RATE_HZ
            q, dq, ddq = excitation(t)
            tau = observation_matrix(model, q, dq, ddq) @ theta
            q = np.round(q / ENCODER_RAD) * ENCODER_RAD  # what an encoder records
            tau += 0.3 * rng.standard_normal(tau.shape)
            np.savetxt(handle, np.column_stack([t, q, tau]), delimiter=",", fmt="%.9g")


_COMPARE = """
import sys
import numpy as np
from physid.files.config import IdentifyConfig, robot_for
from physid.recordings.trajectory import load_trajectory
from physid.offline.observe import store
from physid.offline.observe import windows
from physid.offline.pipeline import identify
from physid.files.params_file import read_params, standard_parameters
windows.WINDOW_ROWS = windows.RAW_WINDOW_SAMPLES = 10**9  # one window: the whole recording
store.MEMORY_BYTES = 2**62
urdf, data, params = sys.argv[1:]
model = robot_for(urdf, IdentifyConfig())
result = identify(model, [load_trajectory(data, model)], IdentifyConfig())
streamed = standard_parameters(result.model, read_params(params))
print(float(np.max(np.abs(streamed - result.theta) / result.theta_std)))
"""


def in_memory_difference(urdf: str, data: Path, params: Path) -> float:
    """Max |theta_streamed - theta_in_memory| / std over the standard parameters: the CLI's
    params.json (streamed) against one whole-recording window with everything in memory."""
    out = subprocess.run(
        [sys.executable, "-c", _COMPARE, urdf, str(data), str(params)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return float(out.stdout.split()[-1])


def measure(args: list[str]) -> tuple[int, float, float]:
    """Exit code, peak RSS [GB] and wall time [s] of one command in a fresh process."""
    started = time.perf_counter()
    line = subprocess.run(
        [sys.executable, "-c", _MEASURE, *args], capture_output=True, text=True, check=True
    ).stdout.split()
    code, kilobytes = int(line[0]), float(line[1])
    return code, kilobytes / 1024**2, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5, 1e6])
    parser.add_argument("--max-rss-gb", type=float, default=8.0)
    parser.add_argument(
        "--compare-up-to",
        type=float,
        default=1e6,
        help="also identify in memory (one window) up to this size and compare",
    )
    options = parser.parse_args()
    from physid.sim.arm import arm6_urdf_path

    physid = [str(Path(sys.executable).with_name("physid"))]  # the installed entry point
    urdf = arm6_urdf_path()
    print(
        f"{'samples':>10} {'identify GB':>12} {'s':>7} {'validate GB':>12} {'s':>7}  MB/1k rows"
        "  max|dtheta|/std vs in memory"
    )
    previous: tuple[int, float] | None = None
    with tempfile.TemporaryDirectory() as folder:
        for size in sorted(int(s) for s in options.sizes):
            if previous is not None and previous[1] * size / previous[0] > options.max_rss_gb:
                projected = previous[1] * size / previous[0]
                print(f"{size:>10d}  skipped: projected {projected:.1f} GB > --max-rss-gb")
                continue
            data, out = Path(folder) / f"rec_{size}.csv", Path(folder) / f"out_{size}"
            write_recording(data, size)
            common = ["--urdf", urdf, "--data", str(data), "--quiet"]
            code, rss, seconds = measure([*physid, "identify", *common, "--out", str(out)])
            params = out / "params.json"
            if code not in (0, 3) or not params.exists():
                print(f"{size:>10d}  identify failed (exit {code})")
                break
            report = Path(folder) / f"validate_{size}.json"
            v_code, v_rss, v_seconds = measure(
                [*physid, "validate", *common, "--params", str(params), "--json", str(report)]
            )
            per_k = 1024 * max(rss, v_rss) / size * 1000
            compared = "-"
            if size <= options.compare_up_to:
                compared = f"{in_memory_difference(str(urdf), data, params):.2g}"
            print(
                f"{size:>10d} {rss:12.2f} {seconds:7.1f} {v_rss:12.2f} {v_seconds:7.1f}  "
                f"{per_k:10.2f}  {compared}"
                + ("" if v_code == 0 else f"  (validate exit {v_code})")
            )
            previous = (size, max(rss, v_rss))
            data.unlink()


if __name__ == "__main__":
    main()
