"""API face of ``physid online`` (paper E; docs/online.md): a recording replayed through the
online inertial filter, sample by sample."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from physid.api.recording import sources
from physid.api.results import Named, Outcome, Parameter
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.api.recording import PathLike, Recording

FORMAT = "physid.online/1"
_UNITS = {"mass": "kg", "com": "m", "I": "kg m^2"}


@one_blas_thread
def online_replay(
    urdf: PathLike,
    data: PathLike | Recording,
    bodies: str | Sequence[str],
    *,
    config: PathLike | None = None,
    summary_window: str | None = None,
    topic: str | None = None,
    episodes: Sequence[int] = (),
    progress: bool = False,
    warn: Callable[[str], None] | None = None,
    wrench_topics: Sequence[str] = (),
) -> Outcome:
    """Replay the recording ``data`` (a file, a ROS 2 bag or LeRobot episode, or a
    :class:`~physid.api.recording.Recording`) through the online inertial filter of paper E,
    estimating the bodies of the joints ``bodies`` at every sample (``physid online``).

    ``summary_window``: ``"START:END"`` [s] summarised by the median (default: the last
    quarter). ``warn`` receives the warnings about the inputs before the replay. ``save(out)``
    writes estimates.csv, estimates_std.csv, summary.json and estimates.png; ``to_dict()`` is
    summary.json; ``parameters`` are each body's last estimate with its std. ``topic``,
    ``episodes``: which part of a ROS 2 bag or LeRobot dataset is replayed; ``wrench_topics``:
    a bag's geometry_msgs/WrenchStamped topics at contact frames (``contact_frames`` of the
    config), read in the frame named by their ``frame_id`` (:mod:`physid.online.columns`)."""
    from physid.recordings.logs import check_episodes

    episodes = check_episodes(episodes)  # before the model is loaded
    bodies = (bodies,) if isinstance(bodies, str) else tuple(bodies)
    from physid.files.io import to_json_text
    from physid.files.params_file import read_params
    from physid.online.columns import motion_read_earlier, signals_from_table
    from physid.online.config import AUTO_WINDOW, PAPER_E_WINDOW, load_online_config
    from physid.online.plot import plot_replay
    from physid.online.replay import load_model, make_filter, replay
    from physid.online.results import window_estimate
    from physid.online.torque_scale import torque_scale
    from physid.online.verdict import (
        check_replayable,
        check_some_sample_is_whole,
        check_table,
        data_reasons,
        replay_status,
    )
    from physid.recordings.trajectory import read_table
    from physid.robot.mjcf import is_mjcf
    from physid.robot.model import load_robot_file

    name = data if isinstance(data, str | Path) else getattr(data, "name", "arrays")
    settings = load_online_config(config)
    load_robot_file(urdf, floating_base=settings.floating_base)  # its errors before the data's
    table = _one_table(data, topic, episodes, read_table, tuple(wrench_topics))
    check_table(table)
    locked, lock_notes = _unlogged_locks(urdf, settings, table)
    model = load_model(urdf, settings, locked)
    table, drive_gains = _torques_from_currents(table, model, settings)
    signals = signals_from_table(table, model, settings.contact_frames,
                                 angles_in_degrees=settings.angle_unit == "degrees")  # fmt: skip
    chosen_window = None
    if settings.acceleration_window == AUTO_WINDOW:  # before the filter that holds the window
        chosen_window = _chosen_window(signals)
        settings = replace(settings, acceleration_window=chosen_window.samples)
    filt, friction_notes = make_filter(model, bodies, settings, simulator_model=is_mjcf(urdf),
                                       signals=signals)  # fmt: skip
    friction_notes = (*lock_notes, *friction_notes)
    if chosen_window is not None and chosen_window.samples != PAPER_E_WINDOW:
        lag_ms = 1e3 * chosen_window.as_dict()["lag_s"]
        friction_notes = (*friction_notes, (
            f"acceleration window {chosen_window.samples} samples (the estimates lag "
            f"{lag_ms:.3g} ms): {chosen_window.reason}"))  # fmt: skip
    delay_s = 0.0 if settings.nominal_params is None else read_params(
        settings.nominal_params).torque_delay_s  # fmt: skip
    if delay_s:
        signals = motion_read_earlier(signals, delay_s)
        signals = replace(signals, warnings=(*signals.warnings, (
            f"the torque is matched with the motion {1e3 * delay_s:.3g} ms earlier, the delay "
            "the nominal params.json's identification compensated "
            "(fit.torque_delay.compensated_s)")))  # fmt: skip
    check_replayable(signals, settings.window_samples)
    check_some_sample_is_whole(signals, table)
    window = _window(summary_window, signals.t)  # a bad window costs no replay
    notes = friction_notes + signals.warnings
    for warning in notes:
        (warn or _ignore)(warning)
    start = time.perf_counter()
    result = replay(filt, signals, progress=progress)
    elapsed = time.perf_counter() - start
    summary = _summary(
        result,
        filt,
        settings,
        notes,
        elapsed,
        {"urdf": urdf, "data": name, "config": config},
    )
    summary["velocities"] = "from positions" if signals.dq is None else "measured"
    summary["acceleration_window"] = (
        {"samples": settings.window_samples, "reason": "config"} if chosen_window is None
        else chosen_window.as_dict()
    )  # fmt: skip
    summary["torque_delay_compensated_s"] = delay_s
    summary["drive_gains"] = drive_gains  # N m/A of the joints logged as currents
    if filt.bounded_updates:
        summary["warnings"].append(
            f"{filt.bounded_updates} updates pulled an estimate beyond what the body can be (its "
            f"centre of mass beyond {filt.com_bound_m:.3g} m, the robot's stretched length, from "
            "its joint, or its mass below 1 % of the nominal) and were brought back: the "
            "nominal model of the other bodies, or the torques, are off where that happened")
    failed = gating_warning(summary, result)
    if failed:
        summary["warnings"].append(failed)
    judged = int(np.sum(~(result.skipped | result.calibrating)))
    # a torque scale the estimated bodies absorb (torque_scale's docstring)
    scale = torque_scale(filt.measurement, signals)
    summary["torque_scale"] = None if scale is None else scale.as_dict()
    scaled = [scale.reason(result.bodies)] if scale is not None and scale.significant else []
    # innovations the model cannot explain (failed): the estimate is not to be trusted
    status, reasons = replay_status(
        len(result.t), result.n_updates, judged, summary["gated"],
        data_reasons(signals, model) + _gravity_reasons(signals, model) + scaled, failed,
    )  # fmt: skip
    summary["status"], summary["status_reasons"] = status, reasons
    for b, joint in enumerate(result.bodies):
        summary["bodies"][joint]["window"] = window_estimate(
            result.t, result.values[:, b], result.pi[:, b], *window
        )
    title = f"physid online: {Path(name).name if isinstance(name, str | Path) else name}"

    def write(staging: Path) -> None:
        _write_csv(staging / "estimates.csv", result, result.values, flags=True)
        _write_csv(staging / "estimates_std.csv", result, result.std, flags=False)
        (staging / "summary.json").write_text(to_json_text(summary))
        plot_replay(result, staging / "estimates.png", title=title)

    message = "; ".join(reasons) or f"{len(result.t)} samples, {result.n_updates} updates"
    return Outcome(
        status, message, _parameters(summary), summary, result, write, warnings=tuple(notes)
    )


def _ignore(_text: str) -> None:
    pass


def _chosen_window(signals):  # noqa: ANN001, ANN202 - OnlineSignals -> WindowChoice
    """The acceleration window the recording's noise asks for (:mod:`physid.online.window`),
    read on the actuated joints' positions (and measured velocities)."""
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
            raise InputError("config drive_gains: identify, but the nominal params.json holds no "
                             "identified drive gains (extra.drive_gains): give the gains",
                             source=nominal.source)  # fmt: skip
    if not gains:
        return table, {}
    check_gains_have_currents(table, gains)
    converted = {j: g for j, g in gains.items() if f"tau_{j}" not in table.columns}
    table = with_torques_from_currents(table, actuated_joints(model), converted)
    columns = {name: values for name, values in table.columns.items()
               if not (name.startswith("i_") and name[2:] in converted)}  # read, not unused
    return replace(table, columns=columns), converted


def _gravity_reasons(signals, model) -> list[str]:  # noqa: ANN001 - OnlineSignals, pin.Model
    """The offline checks a payload does not trip, on a fixed-base robot
    (:func:`physid.offline.checks.suspect.loaded_robot_reasons`): torques that carry none of the
    URDF's gravity torque, and a column mistake named by its fix. Unnamed, a simulation
    without gravity or a gravity-compensated command failed the filter, which blamed units,
    wrench signs and quaternion order (a PyBullet iiwa run without setGravity:
    3e-7 kg for a 0.3 kg body). A payload only adds gravity, so the online case's loads are no
    false alarm."""
    from physid.offline.checks.suspect import loaded_robot_reasons
    from physid.online.columns import actuated_joints
    from physid.online.measurement import is_floating_base
    from physid.recordings.trajectory import Trajectory
    from physid.robot.model import build_robot_model

    if is_floating_base(model):
        return []
    rows = np.all(np.isfinite(signals.q), axis=1) & np.all(np.isfinite(signals.tau), axis=1)
    if np.count_nonzero(rows) < 2:
        return []
    trajectory = Trajectory(signals.t[rows], signals.q[rows], signals.tau[rows],
                            actuated_joints(model), source=signals.source)  # fmt: skip
    return loaded_robot_reasons(build_robot_model(model), [trajectory])


def _parameters(summary: dict) -> Named:
    found = {}
    for joint, body in summary["bodies"].items():
        for name, value in body["final"].items():
            unit = next(u for prefix, u in _UNITS.items() if name.startswith(prefix))
            std = body["final_std"][name]
            found[f"{joint}.{name}"] = Parameter(float(value), float(std), "data", unit)
    return Named(found)


def _one_table(data: Any, topic: str | None, episodes: Sequence[int], read_table,  # noqa: ANN001, ANN202
               wrench_topics: tuple[str, ...] = ()):  # fmt: skip
    """The recording of --data: a contract file or manifest, or one recording of a log (or an
    in-memory :class:`~physid.api.recording.Recording` or table)."""
    from physid.errors import InputError
    from physid.recordings.logs import expand_logs

    items = sources(expand_logs([data], topic, episodes, wrench_topics=wrench_topics))
    if len(items) != 1:
        raise InputError(f"{data}: {len(items)} recordings (episodes); the online filter "
                         "replays one: select it with --episode")  # fmt: skip
    return read_table(items[0]) if isinstance(items[0], Path) else items[0]


# When the estimate is called failed (issue 28: 0.93 kg for a 2.21 kg body, 19 % gated, no joint
# friction modelled). The normalised innovation squared of the accepted updates is chi-square
# with m degrees of freedom (median ~ m) when the model and the noise model are right. Measured
# median / m: plain-log arm with its friction model 0.066 / 7, without it 74.9 / 7 (3.39 kg for
# 4.8 kg); the humanoid stepping example, whose touch-down impacts are gated by design (4.3 %),
# 2.05 / 8 with a right mass. Above 3 m the updates that pass the gate are mostly the ones it
# let through after rejecting them for release_after_s: the data disagree with the model.
NIS_FAILURE = 3.0
GATED_FAILURE = 0.2  # or a fifth of the measurements rejected


def gating_warning(summary: dict, result) -> str:
    """A warning when the innovations show that the model cannot explain the torques, naming
    the likely cause; "" otherwise. Records the median NIS in ``summary``."""
    accepted = ~(result.gated | result.skipped | result.calibrating) & np.isfinite(result.nis)
    rows = len(summary["measurement_rows"])
    median = float(np.median(result.nis[accepted])) if accepted.any() else float("nan")
    summary["nis_median_accepted"] = median
    fraction = summary["gated_fraction"]
    if not (median > NIS_FAILURE * rows or fraction > GATED_FAILURE):
        return ""
    innovation = (
        f"the accepted updates' median normalised innovation is {median:.3g} against about "
        f"{rows} for a model and noise that fit, and "
        if np.isfinite(median)
        else "no update was accepted: "
    )
    text = (
        f"the model does not explain the torques: {innovation}{100 * fraction:.1f} % of the "
        "measurements were gated; the estimates are not reliable"
    )
    if summary["joint_friction"] == "none":
        text += (
            "; no joint friction is modelled: if the joints have any, give nominal_params (a "
            "params.json from physid identify, docs/online.md); else check the units, the "
            "wrench signs and the quaternion order (x, y, z, w)"
        )
    return text


def _window(text: str | None, t: np.ndarray) -> tuple[float, float]:
    """``--summary-window`` as (start, end) seconds; default the last quarter of ``t``. Only
    the finite stamps count (a NaN stamp is a skipped sample; as the first one it made the
    default window NaN and the summary raise 'no estimate in the window')."""
    from physid.errors import InputError

    t = t[np.isfinite(t)]
    if text is None:
        return float(t[0] + 0.75 * (t[-1] - t[0])), float(t[-1])
    parts = text.split(":")
    try:
        if len(parts) != 2:
            raise ValueError
        start = float(parts[0]) if parts[0].strip() else float(t[0])
        end = float(parts[1]) if parts[1].strip() else float(t[-1])
    except ValueError:
        raise InputError(f"--summary-window {text!r}: expected START:END in seconds") from None
    if not (np.isfinite(start) and np.isfinite(end)) or end < start:
        raise InputError(f"--summary-window {text!r}: needs START <= END, finite")
    if not np.any((t >= start) & (t <= end)):
        raise InputError(
            f"--summary-window {text!r}: no sample inside (the recording spans "
            f"{t[0]:g}-{t[-1]:g} s)"
        )
    return start, end


_CSV_BLOCK_ROWS = 20_000  # rows formatted at a time


def _write_csv(path: Path, result, table: np.ndarray, *, flags: bool) -> None:  # noqa: ANN001
    """``t``, ``<joint>/mass`` .. ``<joint>/Izz`` per body, then ``gated``, ``skipped`` and
    ``projected``; written block by block (the whole text of a 1e6-sample replay was 240 MB
    per file, twice, on top of the estimates)."""
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
                columns += [result.gated[rows, None], result.skipped[rows, None],
                            result.projected[rows, None]]  # fmt: skip
            np.savetxt(handle, np.hstack(columns), delimiter=",", fmt="%.17g")


def _summary(result, filt, settings, warnings, elapsed: float, inputs: dict) -> dict:
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
        "joint_friction": "none" if meas.joint_friction is None
        else "nominal params.json" if settings.nominal_params is not None
        else "the model file's (MJCF damping, frictionloss)",
        "skipped": int(result.skipped.sum()),
        "skip_reasons": result.skip_reasons,
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
        "warnings": list(warnings),
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
