"""The real arm recordings of ``../shared/datasets`` (and ``data/``) as train / held-out cases.

Each case is what a new user would hand physid: contract CSVs (``t``, ``q_<joint>``,
``tau_<joint>``; motor-side columns for the TX40) written from the published files, the
published URDF, and at most a config that describes the ROBOT (the TX40's transmission), never
its preprocessing. The same signals, at the recordings' own sample instants, go to the baselines
of the benchmark (plain OLS, figaroh) and to the independent scorer.

What each loader does to the published files is what their READMEs say must be done, nothing
tuned: the UR10e's corrupt rows (not state packets: wrong column counts, values like 1e+259)
are dropped and the runs cropped to the repository's own rows; its currents are turned into
torque with a stated gain set; the xMate7p has no time column (50 Hz, evenly spaced); the DFKI
double pendulum's time column is kept as recorded (irregular).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml
from scoring import Signals

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASETS = Path(os.environ.get("PHYSID_DATASETS", REPO.parent / "shared" / "datasets"))

UR10E_JOINTS = (
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
)
# N m / A. README: the repository's own set, and the set used with this robot in the literature.
UR10E_GAINS = {
    "repository": np.array([10.0, 10.6956, 8.4566, 9.0029, 9.48, 10.1232]),
    "literature": np.array([14.87, 13.26, 11.13, 10.62, 11.03, 11.47]),
}
# MATLAB 1-based inclusive rows the repository keeps (README "Real-log quirks").
UR10E_CROP = {
    "ur-20_02_10-30sec_12harm": (635, 3510),
    "ur-20_02_12-40sec_12harm": (500, 4460),
    "ur-20_02_05-20sec_8harm": (320, 2310),
    "ur-20_02_12-50sec_12harm": (355, 5090),
    "ur-20_02_19_14harm50sec": (195, 4966),
    "ur-20_02_19_14harm50secLoad": (308, 5071),
    "ur-20_01_17-ptp_10_points": (700, 4200),
}
TX40_RATIOS = np.array([32.0, 32.0, 45.0, -48.0, 45.0, 32.0])
TX40_OFFSET = np.array([0.0, -np.pi / 2, np.pi / 2, 0.0, 0.0, 0.0])


@dataclass
class RealCase:
    """A train / held-out split of one robot's real recordings."""

    name: str
    urdf: Path
    joints: tuple[str, ...]
    train: list[Signals]
    validate: list[Signals]
    physid_train: list[Path]  # the same recordings as contract files (or manifests)
    physid_validate: list[Path]
    config: Path | None = None  # robot description only (TX40 transmission)
    armature: bool = False  # the torque includes rotor inertia (motor-side or current data)
    wrist: bool = False  # TX40 coupled-wrist columns in the OLS
    notes: list[str] = field(default_factory=list)


def write_contract_csv(path: Path, joints: tuple[str, ...], s: Signals) -> Path:
    """``t, q_<joint>..., tau_<joint>...`` with a header: the physid trajectory contract."""
    header = ",".join(["t", *(f"q_{j}" for j in joints), *(f"tau_{j}" for j in joints)])
    # %.17g: round-trip exact (the KUKA's time stamps are seconds since 1970).
    np.savetxt(path, np.column_stack([s.t, s.q, s.tau]), delimiter=",", header=header,
               comments="", fmt="%.17g")  # fmt: skip
    return path


# ------------------------------------------------------------------------------------------ KUKA


def kuka_signals(folder: Path, k: int) -> Signals:
    with np.load(folder / f"measurements_{k}.npz") as npz:
        return Signals(npz["times"], npz["positions"], npz["torques"])


KUKA_JOINTS = tuple(f"lwr_{k}_joint" for k in range(7))


def kuka_case(tmp: Path, train: tuple[int, ...], validate: tuple[int, ...]) -> RealCase:
    """FloBaRoID's recordings (vendored in data/): positions and joint torques, ~200 Hz."""
    folder = REPO / "data" / "kuka_lwr4"
    files = {k: write_contract_csv(tmp / f"kuka_{k}.csv", KUKA_JOINTS, kuka_signals(folder, k))
             for k in set(train) | set(validate)}  # fmt: skip
    label = "+".join(map(str, train)) + "->" + "+".join(map(str, validate))
    return RealCase(f"kuka_lwr4 {label}", folder / "kuka_lwr4.urdf", KUKA_JOINTS,
                    [kuka_signals(folder, k) for k in train],
                    [kuka_signals(folder, k) for k in validate],
                    [files[k] for k in train], [files[k] for k in validate])  # fmt: skip


# ------------------------------------------------------------------------------------------ TX40


def tx40_case(datasets: Path, tmp: Path) -> RealCase:
    """One 9 s, 5 kHz motor-side recording: first 2/3 train, last 1/3 held out."""
    folder = datasets / "staubli_tx40"
    q_motor = np.loadtxt(folder / "pos_read_data.csv", delimiter=",", skiprows=1)
    tau_motor = np.loadtxt(folder / "curr_data.csv", delimiter=",", skiprows=1)
    t = 2e-4 * np.arange(len(q_motor))
    cut = int(round(2 / 3 * len(t)))
    R = np.diag(TX40_RATIOS)
    R[5, 4] = TX40_RATIOS[5]
    q = np.linalg.solve(R, q_motor.T).T + TX40_OFFSET
    tau = tau_motor @ R  # tau_joint = R^T tau_motor
    header = "t," + ",".join(f"qm_m{k}" for k in range(1, 7)) + ","
    header += ",".join(f"taum_m{k}" for k in range(1, 7))
    files = []
    for label, rows in (("train", slice(0, cut)), ("validate", slice(cut, None))):
        path = tmp / f"tx40_{label}.csv"
        np.savetxt(path, np.column_stack([t[rows], q_motor[rows], tau_motor[rows]]),
                   delimiter=",", header=header, comments="", fmt="%.10g")  # fmt: skip
        files.append(path)
    # The robot's transmission is a description of the robot, not a preprocessing choice.
    config = {
        key: value
        for key, value in yaml.safe_load(
            (REPO / "examples/staubli_tx40/config.yaml").read_text()
        ).items()
        if key in ("transmission", "joint_terms")
    }
    config_path = tmp / "tx40_config.yaml"
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    joints = tuple(f"joint_{k}" for k in range(1, 7))
    return RealCase("staubli_tx40 2/3->1/3", folder / "tx40_mdh_modified.urdf", joints,
                    [Signals(t[:cut], q[:cut], tau[:cut])], [Signals(t[cut:], q[cut:], tau[cut:])],
                    files[:1], files[1:], config=config_path, armature=True,
                    wrist=True)  # fmt: skip


# ----------------------------------------------------------------------------------------- UR10e


def read_ur10e(path: Path, gains: np.ndarray) -> tuple[Signals, int]:
    """A UR10e log: rows cropped as the repository does, non-packet rows dropped; torque =
    gain x current. Returns the signals and the number of rows dropped as corrupt.

    A row is a state packet when it has 31 finite numbers, angles within two turns, and a time
    stamp after the previous packet's by less than a second (corrupt rows also carry small,
    plausible-looking numbers: ``-0.1231, 253.0, ...``)."""
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    first, last = UR10E_CROP.get(path.stem, (1, len(lines)))
    rows, dropped = [], 0
    for line in lines[first - 1 : last]:
        try:
            values = np.array([float(c) for c in line.split(",")])
        except ValueError:
            dropped += 1
            continue
        packet = (len(values) == 31 and np.all(np.isfinite(values))
                  and np.max(np.abs(values)) < 1e4 and np.max(np.abs(values[1:7])) < 4 * np.pi
                  and (not rows or 0.0 < values[0] - rows[-1][0] < 1.0))  # fmt: skip
        if not packet:
            dropped += 1
            continue
        rows.append(values)
    table = np.array(rows)
    # The longest stretch without a gap (> 10 packets): a log may start a moment before the
    # stream does (15harm50secLoad: one packet, then 0.37 s of nothing).
    steps = np.diff(table[:, 0])
    breaks = np.flatnonzero(steps > 10 * np.median(steps)) + 1
    pieces = np.split(np.arange(len(table)), breaks)
    longest = max(pieces, key=len)
    dropped += len(table) - len(longest)
    table = table[longest]
    return Signals(table[:, 0] - table[0, 0], table[:, 1:7], table[:, 13:19] * gains), dropped


def ur10e_case(
    datasets: Path, tmp: Path, train: tuple[str, ...], validate: tuple[str, ...],
    gains: str = "literature",
) -> RealCase:  # fmt: skip
    """Current-driven UR10e (README): torque = gain x current with the named gain set."""
    folder = datasets / "ur10e"
    found = {p.stem: p for p in folder.glob("*_data/*.csv")}
    signals, files, notes = {}, {}, []
    for stem in (*train, *validate):
        signals[stem], dropped = read_ur10e(found[stem], UR10E_GAINS[gains])
        files[stem] = write_contract_csv(tmp / f"{stem}.csv", UR10E_JOINTS, signals[stem])
        if dropped:
            notes.append(f"{stem}: {dropped} corrupt rows dropped")
    short = lambda names: "+".join(n.split("-")[-1] for n in names)  # noqa: E731
    return RealCase(f"ur10e {short(train)}->{short(validate)}", folder / "ur10e.urdf",
                    UR10E_JOINTS, [signals[s] for s in train], [signals[s] for s in validate],
                    [files[s] for s in train], [files[s] for s in validate], armature=True,
                    notes=notes)  # fmt: skip


# --------------------------------------------------------------------------------------- xMate7p

XMATE_JOINTS = tuple(f"joint{k}" for k in range(1, 8))


def read_xmate(path: Path, sample_time_s: float) -> Signals:
    """28 headerless columns (q, dq, commanded ddq, tau); rows evenly spaced, no time column."""
    table = np.loadtxt(path, delimiter=",")
    return Signals(sample_time_s * np.arange(len(table)), table[:, 0:7], table[:, 21:28])


def xmate_case(
    datasets: Path, tmp: Path, train: tuple[tuple[str, int], ...],
    validate: tuple[tuple[str, int], ...],
) -> RealCase:  # fmt: skip
    """Runs named (folder, trajectory number); 50 Hz folders, or 1 kHz for ``1kHz_5s``."""
    root = datasets / "xmate7p"
    signals, files = {}, {}
    for folder, k in (*train, *validate):
        sample_time = 0.001 if folder.startswith("1kHz") else 0.02
        signals[folder, k] = read_xmate(root / folder / f"xMate7p_traj{k}_results.csv",
                                        sample_time)  # fmt: skip
        files[folder, k] = write_contract_csv(tmp / f"xmate_{folder}_{k}.csv", XMATE_JOINTS,
                                              signals[folder, k])  # fmt: skip
    short = lambda runs: "+".join(f"{f.split('_')[-1]}:{k}" for f, k in runs)  # noqa: E731
    return RealCase(f"xmate7p {short(train)}->{short(validate)}", root / "XM7p.urdf",
                    XMATE_JOINTS, [signals[r] for r in train], [signals[r] for r in validate],
                    [files[r] for r in train], [files[r] for r in validate])  # fmt: skip


# ---------------------------------------------------------------------------------- DFKI pendulum

DFKI_JOINTS = ("Joint1", "Joint2")


def read_dfki(path: Path) -> Signals:
    """``time`` as recorded (irregular); measured torque where the file has one (2022-08-15:
    ``tau_meas*``), else the commanded torque (2022-08-12 files store the command)."""
    with path.open(encoding="utf-8") as handle:
        names = handle.readline().strip().split(",")
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    column = lambda name: table[:, names.index(name)]  # noqa: E731
    q_names = ("pos_meas1", "pos_meas2") if "pos_meas1" in names else ("pos1", "pos2")
    tau_names = ("tau_meas1", "tau_meas2") if "tau_meas1" in names else ("tau1", "tau2")
    t = column("time")
    keep = np.concatenate([[True], np.diff(t) > 0])
    q = np.column_stack([column(n) for n in q_names])[keep]
    tau = np.column_stack([column(n) for n in tau_names])[keep]
    return Signals(t[keep], q, tau)


def dfki_case(datasets: Path, tmp: Path, train: tuple[str, ...], validate: tuple[str, ...]):
    root = datasets / "dfki_double_pendulum"
    found = {p.stem: p for p in root.glob("sys_id_*/*.csv")}
    signals = {s: read_dfki(found[s]) for s in (*train, *validate)}
    files = {s: write_contract_csv(tmp / f"dfki_{s}.csv", DFKI_JOINTS, x)
             for s, x in signals.items()}  # fmt: skip
    short = lambda names: "+".join(n.split("-")[1] if "-" in n else n[-2:] for n in names)  # noqa: E731
    return RealCase(f"dfki_pendulum {short(train)}->{short(validate)}",
                    root / "identified_parameters/model_2.1/pendubot_world.urdf", DFKI_JOINTS,
                    [signals[s] for s in train], [signals[s] for s in validate],
                    [files[s] for s in train], [files[s] for s in validate],
                    armature=True)  # fmt: skip


# ------------------------------------------------------------------------------------- the corpus


def _short_xmate(
    datasets: Path, tmp: Path, train: tuple[int, ...], held_out: int
) -> Callable[[], RealCase]:
    """A case of the 5-s, 1 kHz xMate runs (``1kHz_5s``): train on runs ``train``."""
    runs = tuple(("1kHz_5s", k) for k in train)
    return lambda: xmate_case(datasets, tmp, runs, (("1kHz_5s", held_out),))


def corpus(datasets: Path, tmp: Path) -> list[tuple[str, Callable[[], RealCase]]]:
    """Every real arm case: (label, builder). Builders of absent datasets are left out."""
    cases: list[tuple[str, Callable[[], RealCase]]] = [
        ("kuka_23_1", lambda: kuka_case(tmp, (2, 3), (1,))),
        ("kuka_2_1", lambda: kuka_case(tmp, (2,), (1,))),
    ]
    if (datasets / "staubli_tx40").is_dir():
        cases.append(("tx40", lambda: tx40_case(datasets, tmp)))
    if (datasets / "ur10e").is_dir():
        cases.append(
            (
                "ur10e_30s",
                lambda: ur10e_case(
                    datasets, tmp, ("ur-20_02_10-30sec_12harm",), ("ur-20_01_17-ptp_10_points",)
                ),
            )
        )
        cases.append(("ur10e_4runs", lambda: ur10e_case(
            datasets, tmp, ("ur-20_02_05-20sec_8harm", "ur-20_02_10-30sec_12harm",
                            "ur-20_02_12-40sec_12harm", "ur-20_02_12-50sec_12harm"),
            ("ur-20_01_17-ptp_10_points",))))  # fmt: skip
    if (datasets / "xmate7p").is_dir():
        one, three = "50Hz_1period", "50Hz_3periods"
        cases.append(("xmate_1_2", lambda: xmate_case(datasets, tmp, ((one, 1),), ((one, 2),))))
        cases.append(("xmate_1_3", lambda: xmate_case(datasets, tmp, ((one, 1),), ((one, 3),))))
        cases.append(("xmate_3p1_3", lambda: xmate_case(
            datasets, tmp, ((three, 1),), ((one, 3),))))  # fmt: skip
        # 1 kHz, the first 5 s of each run (the slow start): short runs on which joint 7
        # turns one way only in runs 1 and 2 (dq > 0 in 94 %, < 0 in none)
        for label, train, held_out in (("xmate5s_1_2", (1,), 2), ("xmate5s_2_1", (2,), 1),
                                       ("xmate5s_2_3", (2,), 3), ("xmate5s_12_3", (1, 2), 3),
                                       ("xmate5s_3_1", (3,), 1)):  # fmt: skip
            cases.append((label, _short_xmate(datasets, tmp, train, held_out)))
    if (datasets / "dfki_double_pendulum").is_dir():
        # (trajectory_04's elbow turns beyond its URDF limit: refused without the config key
        # allow_large_angles, so it is no no-config case)
        cases.append(("dfki_00_01", lambda: dfki_case(
            datasets, tmp, ("trajectory_00",), ("trajectory_01",))))  # fmt: skip
        cases.append(("dfki_pd_sin", lambda: dfki_case(
            datasets, tmp, ("20220812-061157-PM_measured",),
            ("20220812-055032-PM_measured", "20220812-055640-PM_measured"))))  # fmt: skip
    return cases
