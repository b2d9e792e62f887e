"""API face of ``physid online`` (paper E; docs/online.md): a recording replayed through the
online inertial filter, sample by sample."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from physid.api.recording import sources
from physid.api.results import Named, Outcome, Parameter
from physid.findings import Finding, Severity, as_dicts
from physid.online.codes import ACCELERATION_WINDOW, TORQUE_DELAY_MATCHED
from physid.status import Status
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.api.recording import PathLike, Recording
    from physid.online.columns import OnlineSignals
    from physid.online.config import OnlineConfig
    from physid.online.ekf import RecursiveInertialFilter
    from physid.online.replay import ReplayResult
    from physid.online.window import WindowChoice

FORMAT = "physid.online/1"


@one_blas_thread
def online_replay(
    urdf: PathLike,
    data: PathLike | Recording,
    bodies: str | Sequence[str],
    *,
    config: PathLike | None = None,
    summary_window: tuple[float | None, float | None] | None = None,
    topic: str | None = None,
    episodes: Sequence[int] = (),
    progress: bool = False,
    warn: Callable[[str], None] | None = None,
    wrench_topics: Sequence[str] = (),
) -> Outcome:
    """Replay a recording through the online inertial filter of paper E, estimating the bodies
    of the joints ``bodies`` at every sample (``physid online``; docs/online.md).

    Args:
        urdf: The robot file (URDF or MJCF); its inertias are the nominal model unless the
            config names a params.json (``nominal_params``).
        data: The recording: a file (CSV, NPZ, Parquet, recording manifest), a ROS 2 bag or
            LeRobot dataset, or a :class:`~physid.api.recording.Recording`.
        bodies: The joint (or joints) whose body is estimated (``root_joint``: the floating
            base itself).
        config: The YAML filter settings (:mod:`physid.online.config`); None: the defaults.
        summary_window: ``(start, end)`` [s, the recording's clock] summarised by the median of
            the streamed estimates; either may be None (the recording's first or last stamp);
            None: the last quarter of the recording.
        topic: A ROS 2 bag's sensor_msgs/JointState topic (None: its only one).
        episodes: A LeRobot dataset's episode to replay (one recording is replayed).
        progress: Show a progress bar during the replay.
        warn: Receives, before the replay, each line the layers below physid.online read about
            the inputs as text (joints held still, velocities left out, the time base).
        wrench_topics: A bag's geometry_msgs/WrenchStamped topics at contact frames
            (``contact_frames`` of the config), read in the frame named by their ``frame_id``
            (:mod:`physid.online.columns`).

    Returns:
        An :class:`~physid.api.results.Outcome`: ``status`` ``ok`` or ``suspect``
        (:mod:`physid.online.verdict`), its ``findings`` (codes ON1xx-ON3xx), ``notes`` (the
        lines ``warn`` received), ``parameters`` (each body's last estimate with its std),
        ``to_dict()`` (summary.json), ``raw`` (the :class:`~physid.online.replay.ReplayResult`);
        ``save(out)`` writes estimates.csv, estimates_std.csv, summary.json and estimates.png.
    """
    from physid.online.replay import replay
    from physid.online.results import window_estimate

    bodies = (bodies,) if isinstance(bodies, str) else tuple(bodies)
    name = data if isinstance(data, str | Path) else getattr(data, "name", "arrays")
    run = _prepared(urdf, data, bodies, config, topic, episodes, tuple(wrench_topics))
    window = _window(summary_window, run.signals.t)  # a bad window costs no replay
    for line in run.readings:
        (warn or _ignore)(line)
    start = time.perf_counter()
    result = replay(run.filt, run.signals, progress=progress)
    elapsed = time.perf_counter() - start
    inputs = {"urdf": urdf, "data": name, "config": config}
    summary = _summary(result, run.filt, run.settings, run.readings, elapsed, inputs)
    summary |= run.described()
    status, findings = _verdict(run, result, summary)
    summary["status"], summary["findings"] = str(status), as_dicts(findings)
    for b, joint in enumerate(result.bodies):
        summary["bodies"][joint]["window"] = window_estimate(
            result.t, result.values[:, b], result.pi[:, b], *window
        )
    return _outcome(name, run, result, summary, status, findings)


def _outcome(
    name: Any,
    run: _Prepared,
    result: ReplayResult,
    summary: dict,
    status: Status,
    findings: tuple[Finding, ...],
) -> Outcome:
    """The :class:`~physid.api.results.Outcome` of a replay of the recording ``name``: its
    message, parameters and the writer of its four files."""
    from physid.files.io import to_json_text
    from physid.report.online_plot import plot_replay

    title = f"physid online: {Path(name).name if isinstance(name, str | Path) else name}"

    def write(staging: Path) -> None:
        _write_csv(staging / "estimates.csv", result, result.values, flags=True)
        _write_csv(staging / "estimates_std.csv", result, result.std, flags=False)
        (staging / "summary.json").write_text(to_json_text(summary))
        plot_replay(result, staging / "estimates.png", title=title)

    suspect = [f.message for f in findings if f.severity.at_least(Severity.SUSPECT)]
    message = "; ".join(suspect) or f"{len(result.t)} samples, {result.n_updates} updates"
    parameters = _parameters(summary)
    return Outcome(
        status, message, parameters, summary, result, write, notes=run.readings, findings=findings
    )


def _ignore(_text: str) -> None:
    pass


@dataclass(frozen=True)
class _Prepared:
    """What the replay takes, read and checked: the settings (the acceleration window chosen),
    the model, the signals (the torque delay matched), the filter, and what was found on the
    way (``findings``) or read as text by the layers below (``readings``)."""

    settings: OnlineConfig
    model: Any  # pin.Model
    signals: OnlineSignals
    filt: RecursiveInertialFilter
    drive_gains: dict[str, float]
    chosen_window: WindowChoice | None
    delay_s: float
    findings: tuple[Finding, ...]
    readings: tuple[str, ...]

    def described(self) -> dict:
        """The summary.json entries that say how the inputs were read."""
        window = self.chosen_window
        return {
            "velocities": "from positions" if self.signals.dq is None else "measured",
            "acceleration_window": {"samples": self.settings.window_samples, "reason": "config"}
            if window is None
            else window.as_dict(),
            "torque_delay_compensated_s": self.delay_s,
            "drive_gains": self.drive_gains,  # N m/A of the joints logged as currents
        }


def _prepared(
    urdf: PathLike,
    data: Any,
    bodies: tuple[str, ...],
    config: PathLike | None,
    topic: str | None,
    episodes: Sequence[int],
    wrench_topics: tuple[str, ...],
) -> _Prepared:
    """Read the config, the robot and the recording, choose the acceleration window, build the
    filter and match the torque delay; every refusal (InputError) before the replay."""
    from physid.files.params_file import read_params
    from physid.online.columns import motion_read_earlier, signals_from_table
    from physid.online.config import AUTO_WINDOW, load_online_config
    from physid.online.replay import load_model, make_filter
    from physid.online.verdict import check_replayable, check_some_sample_is_whole, check_table
    from physid.recordings.logs import check_episodes
    from physid.recordings.trajectory import read_table
    from physid.robot.mjcf import is_mjcf
    from physid.robot.model import load_robot_file

    episodes = check_episodes(episodes)  # before the model is loaded
    settings = load_online_config(config)
    load_robot_file(urdf, floating_base=settings.floating_base)  # its errors before the data's
    table = _one_table(data, topic, episodes, read_table, wrench_topics)
    check_table(table)
    locked, lock_notes = _unlogged_locks(urdf, settings, table)
    model = load_model(urdf, settings, locked)
    table, drive_gains = _torques_from_currents(table, model, settings)
    signals = signals_from_table(
        table, model, settings.contact_frames, angles_in_degrees=settings.angle_unit == "degrees"
    )
    findings = list(signals.findings)
    chosen = None
    if settings.acceleration_window == AUTO_WINDOW:  # before the filter that holds the window
        chosen = _chosen_window(signals)
        settings = replace(settings, acceleration_window=chosen.samples)
        findings += _window_findings(chosen)
    filt, friction = make_filter(
        model, bodies, settings, simulator_model=is_mjcf(urdf), signals=signals
    )
    findings += friction
    delay_s = 0.0
    if settings.nominal_params is not None:
        delay_s = read_params(settings.nominal_params).torque_delay_s
    if delay_s:
        signals = motion_read_earlier(signals, delay_s)
        findings.append(
            TORQUE_DELAY_MATCHED(
                f"the torque is matched with the motion {1e3 * delay_s:.3g} ms earlier, the delay "
                "the nominal params.json's identification compensated "
                "(fit.torque_delay.compensated_s)",
                numbers={"delay_s": delay_s},
            )
        )
    check_replayable(signals, settings.window_samples)
    check_some_sample_is_whole(signals, table)
    readings = (*lock_notes, *signals.warnings)
    return _Prepared(
        settings, model, signals, filt, drive_gains, chosen, delay_s, tuple(findings), readings
    )


def _window_findings(chosen: WindowChoice) -> list[Finding]:
    """:data:`~physid.online.codes.ACCELERATION_WINDOW` when the window chosen from the noise is
    not paper E's (then the estimates lag more)."""
    from physid.online.config import PAPER_E_WINDOW

    if chosen.samples == PAPER_E_WINDOW:
        return []
    lag_s = chosen.as_dict()["lag_s"]
    return [
        ACCELERATION_WINDOW(
            f"acceleration window {chosen.samples} samples (the estimates lag {1e3 * lag_s:.3g} "
            f"ms): {chosen.reason}",
            numbers={"samples": chosen.samples, "lag_s": lag_s, "paper_e_samples": PAPER_E_WINDOW},
        )
    ]


def _verdict(run: _Prepared, result: ReplayResult, summary: dict) -> tuple[Status, tuple]:
    """The status of the replay and every finding (:mod:`physid.online.verdict`), the torque
    scale (:mod:`physid.online.torque_scale`) and the median innovation recorded in
    ``summary``."""
    from physid.online.torque_scale import torque_scale
    from physid.online.verdict import (
        bounded_finding,
        data_findings,
        innovation_finding,
        replay_findings,
        replay_status,
    )

    findings = list(run.findings)
    bounded = bounded_finding(run.filt)
    rows = len(summary["measurement_rows"])
    modelled = run.filt.measurement.joint_friction is not None
    nis, unexplained = innovation_finding(result, rows, summary["gated_fraction"], modelled)
    summary["nis_median_accepted"] = nis
    # a torque scale the estimated bodies absorb (torque_scale's docstring)
    scale = torque_scale(run.filt.measurement, run.signals)
    summary["torque_scale"] = None if scale is None else scale.as_dict()
    findings += data_findings(run.signals, run.model) + _gravity_findings(run.signals, run.model)
    if scale is not None and scale.significant:
        findings.append(scale.finding(result.bodies))
    judged = int(np.sum(~(result.skipped | result.calibrating)))
    findings += replay_findings(
        len(result.t), result.n_updates, judged, summary["gated"], unexplained
    )
    if bounded is not None:
        findings.append(bounded)
    return replay_status(findings), tuple(findings)


def _chosen_window(signals):  # noqa: ANN001, ANN202 - OnlineSignals -> WindowChoice
    """The acceleration window the recording's noise asks for (:mod:`physid.online.window`),
    read on the actuated joints' positions (and logged velocities)."""
    from physid.online.window import choose_window

    n = signals.tau.shape[1]
    dq = None if signals.dq is None else signals.dq[:, -n:]
    return choose_window(signals.t, signals.q[:, -n:], dq)


def _unlogged_locks(urdf, settings, table) -> tuple[dict[str, float], tuple[str, ...]]:  # noqa: ANN001
    """The robot file's joints the recording does not log, held still as identify holds them
    (:func:`physid.files.config.unlogged_holds`), at the positions the nominal params.json's
    identification held them where it names them (its config's locks too)."""
    from physid.files.config import unlogged_holds
    from physid.files.params_file import read_params

    held = None
    if settings.nominal_params is not None:
        held = read_params(settings.nominal_params).held_joints()
    return unlogged_holds(urdf, table.columns, held)


def _torques_from_currents(table, model, settings):  # noqa: ANN001, ANN202 - Table, pin.Model
    """``table`` with ``tau_ = gain x i_`` for the joints logged as motor currents, by the
    config's ``drive_gains`` (identify: the nominal params.json's), as identify reads them, and
    the gains used; a gain for a joint without its current column is an error, as there."""
    from physid.errors import InputError
    from physid.files.config import IDENTIFY_GAINS
    from physid.files.params_file import read_params
    from physid.online.columns import actuated_joints
    from physid.recordings.trajectory import check_gains_have_currents, with_torques_from_currents

    gains = settings.drive_gains
    if gains == IDENTIFY_GAINS:
        nominal = read_params(settings.nominal_params)
        gains = nominal.drive_gains()
        if not gains:
            raise InputError(
                "config drive_gains: identify, but the nominal params.json holds no "
                "identified drive gains (extra.drive_gains): give the gains",
                source=nominal.source,
            )
    if not gains:
        return table, {}
    check_gains_have_currents(table, gains)
    converted = {j: g for j, g in gains.items() if f"tau_{j}" not in table.columns}
    table = with_torques_from_currents(table, actuated_joints(model), converted)
    columns = {
        name: values
        for name, values in table.columns.items()
        if not (name.startswith("i_") and name[2:] in converted)
    }  # read, not unused
    return replace(table, columns=columns), converted


def _gravity_findings(signals: OnlineSignals, model: Any) -> list[Finding]:
    """The offline checks a payload does not trip, on a fixed-base robot
    (:func:`physid.offline.checks.suspect.loaded_robot_findings`, their typed findings passed
    through): torques that carry none of the URDF's gravity torque, and a column mistake named
    by its fix. Unnamed, a simulation without gravity or a gravity-compensated command drives
    the estimated mass to about zero, and the filter's verdict blames units, wrench signs and
    quaternion order. A payload only adds gravity, so the online case's loads are no false
    alarm."""
    from physid.offline.checks.suspect import loaded_robot_findings
    from physid.online.columns import actuated_joints
    from physid.online.measurement import is_floating_base
    from physid.recordings.trajectory import Trajectory
    from physid.robot.model import build_robot_model

    if is_floating_base(model):
        return []
    rows = np.all(np.isfinite(signals.q), axis=1) & np.all(np.isfinite(signals.tau), axis=1)
    if np.count_nonzero(rows) < 2:
        return []
    trajectory = Trajectory(
        signals.t[rows],
        signals.q[rows],
        signals.tau[rows],
        actuated_joints(model),
        source=signals.source,
    )
    return loaded_robot_findings(build_robot_model(model), [trajectory])


def _parameters(summary: dict) -> Named:
    """Each body's last estimate with its std, named ``<joint>.<quantity>``."""
    from physid.online.results import QUANTITY_UNITS

    found = {}
    for joint, body in summary["bodies"].items():
        for name, value in body["final"].items():
            unit = QUANTITY_UNITS[name]
            std = body["final_std"][name]
            found[f"{joint}.{name}"] = Parameter(float(value), float(std), "data", unit)
    return Named(found)


def _one_table(
    data: Any,
    topic: str | None,
    episodes: Sequence[int],
    read_table,  # noqa: ANN001, ANN202
    wrench_topics: tuple[str, ...] = (),
):
    """The recording of --data: a contract file or manifest, or one recording of a log (or an
    in-memory :class:`~physid.api.recording.Recording` or table)."""
    from physid.errors import InputError
    from physid.recordings.logs import expand_logs

    items = sources(expand_logs([data], topic, episodes, wrench_topics=wrench_topics))
    if len(items) != 1:
        raise InputError(
            f"{data}: {len(items)} recordings (episodes); the online filter "
            "replays one: select it with --episode"
        )
    return read_table(items[0]) if isinstance(items[0], Path) else items[0]


def _window(window: tuple[float | None, float | None] | None, t: np.ndarray) -> tuple[float, float]:
    """``summary_window`` as (start, end) seconds, an end of None the recording's first or last
    stamp; default the last quarter of ``t``. Only the finite stamps count (a NaN stamp is a
    skipped sample; as the first one it would make the default window NaN and leave the
    summary without an estimate)."""
    from physid.errors import InputError

    t = t[np.isfinite(t)]
    if window is None:
        return float(t[0] + 0.75 * (t[-1] - t[0])), float(t[-1])
    try:
        first, last = window
        start = float(t[0]) if first is None else float(first)
        end = float(t[-1]) if last is None else float(last)
    except (TypeError, ValueError):
        raise InputError(
            f"summary_window {window!r}: expected (start, end) in seconds, either None"
        ) from None
    if not (np.isfinite(start) and np.isfinite(end)) or end < start:
        raise InputError(f"summary_window {window!r}: needs start <= end, finite")
    if not np.any((t >= start) & (t <= end)):
        raise InputError(
            f"the summary window {start:g}-{end:g} s holds no sample (the recording spans "
            f"{t[0]:g}-{t[-1]:g} s)"
        )
    return start, end


_CSV_BLOCK_ROWS = 20_000  # rows formatted at a time


def _write_csv(path: Path, result, table: np.ndarray, *, flags: bool) -> None:  # noqa: ANN001
    """``t``, ``<joint>/mass`` .. ``<joint>/Izz`` per body, then ``gated``, ``skipped`` and
    ``projected``; written block by block (the whole text of a 1e6-sample replay is some
    240 MB per file, twice, on top of the estimates)."""
    from physid.online.results import QUANTITY_NAMES

    header = ["t"] + [f"{joint}/{name}" for joint in result.bodies for name in QUANTITY_NAMES]
    if flags:
        header += ["gated", "skipped", "projected"]
    values = table.reshape(len(result.t), -1)
    with path.open("w", encoding="utf-8") as handle:
        handle.write(",".join(header) + "\n")
        for start in range(0, len(result.t), _CSV_BLOCK_ROWS):
            rows = slice(start, start + _CSV_BLOCK_ROWS)
            columns = [result.t[rows, None], values[rows]]
            if flags:
                columns += [
                    result.gated[rows, None],
                    result.skipped[rows, None],
                    result.projected[rows, None],
                ]
            np.savetxt(handle, np.hstack(columns), delimiter=",", fmt="%.17g")


def _summary(result, filt, settings, readings, elapsed: float, inputs: dict) -> dict:  # noqa: ANN001
    """summary.json without the verdict (:func:`_verdict`) and the summary window."""
    from physid.online.results import QUANTITY_NAMES

    meas = filt.measurement
    row_names = [_row_name(meas.model, int(v)) for v in meas.rows]
    bodies = {}
    for b, joint in enumerate(result.bodies):
        final = {name: result.values[-1, b, k] for k, name in enumerate(QUANTITY_NAMES)}
        final_std = {name: result.std[-1, b, k] for k, name in enumerate(QUANTITY_NAMES)}
        bodies[joint] = {
            "initial_pi": meas.nominal_pi[b],
            "final": final,
            "final_std": final_std,
            "final_pi": result.pi[-1, b],
            "consistent_samples": int(result.consistent[:, b].sum()),
        }
    n = len(result.t)
    return {
        "format": FORMAT,
        "inputs": {k: (None if v is None else str(v)) for k, v in inputs.items()},
        "filter": settings.filter,
        "settings": asdict(settings),
        "bodies": bodies,
        "samples": n,
        "updates": result.n_updates,
        "gated": int(result.gated.sum()),
        # of the measurements the filter judged (not skipped, not calibrating)
        "gated_fraction": float(result.gated.sum())
        / max(int(np.sum(~(result.skipped | result.calibrating))), 1),
        "joint_friction": "none"
        if meas.joint_friction is None
        else "nominal params.json"
        if settings.nominal_params is not None
        else "the model file's (MJCF damping, frictionloss)",
        "skipped": int(result.skipped.sum()),
        "skip_reasons": {str(reason): n for reason, n in result.skip_reasons.items()},
        "calibrating": int(result.calibrating.sum()),
        "every_estimate_consistent": bool(result.consistent.all()),
        "projected": int(result.projected.sum()),  # rows projected onto the consistent set
        "inconsistent_samples": int((~result.consistent.all(axis=1)).sum()),
        "gating_threshold_gamma": filt.gamma,
        "measurement_rows": row_names,
        # std per row (before the friction model's variance near rest) and where the joint
        # rows' value came from: config, default (1 N m) or nominal residual (fit.train.rmse)
        "measurement_noise_std": dict(zip(row_names, filt.measurement_std.tolist(), strict=True)),
        "joint_torque_noise_source": filt.noise_source,
        # updates whose estimate the plausibility bounds brought back (centre of mass within
        # com_bound_m of the joint, mass >= 1 % of the nominal: the EKF's _bounded)
        "bounded_updates": filt.bounded_updates,
        "com_bound_m": filt.com_bound_m,
        "bias": dict(zip(row_names, result.bias.tolist(), strict=True)),
        "delay_samples": filt.delay_samples,
        "runtime": {"seconds": elapsed, "per_sample_us": 1e6 * elapsed / max(n, 1)},
        # what the layers below physid.online read about the inputs, as text
        "warnings": list(readings),
    }


def _row_name(model, v_index: int) -> str:
    """Readable name of a generalized-velocity row (free-flyer rows get an axis suffix)."""
    for joint_id in range(1, model.njoints):
        joint = model.joints[joint_id]
        if joint.idx_v <= v_index < joint.idx_v + joint.nv:
            if joint.nv == 1:
                return model.names[joint_id]
            axis = ("fx", "fy", "fz", "mx", "my", "mz")[v_index - joint.idx_v]
            return f"{model.names[joint_id]}.{axis}"
    return str(v_index)
