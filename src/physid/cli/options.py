"""Pieces shared by the command modules: path types, numeric ranges and the step progress bar."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from physid.findings import Finding

EXISTING_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


# A recording: a file, or the folder of a ROS 2 bag or a LeRobot dataset (physid.recordings.logs)
DATA_SOURCE = click.Path(exists=True, path_type=Path)
DATA_HELP = (
    " A CSV may be gzip-compressed (.csv.gz), its t column seconds or ISO 8601 date-times."
    " A ROS 2 bag (folder, .mcap or .db3; sensor_msgs/JointState, see --topic) or a LeRobot "
    "dataset folder (one recording per episode, see --episode) is read as well."
)


def data_option(help_text: str, *, name: str = "--data", required: bool = True) -> Callable:
    """Recordings of a command (repeatable): contract files, manifests, bags or LeRobot
    datasets (:func:`expand_logs`); the parameter is the option's name without dashes."""
    return click.option(
        name,
        name.lstrip("-"),
        required=required,
        multiple=True,
        type=DATA_SOURCE,
        help=help_text + DATA_HELP,
    )


def log_options(command: Callable) -> Callable:
    """``--topic`` and ``--episode``: which part of a ROS 2 bag or LeRobot dataset is read."""
    from physid.recordings.logs import EPISODE

    command = click.option(
        "--episode",
        "episodes",
        multiple=True,
        type=int,
        callback=number_in(*EPISODE),
        help="LeRobot dataset: the episode(s) of the --data dataset(s) to use, each a "
        "recording (repeat; default: all). --validate and the command's other recording "
        "options read every other episode of the same dataset and all episodes of another "
        "(when --data holds no dataset, the episodes select in theirs).",
    )(command)
    return click.option(
        "--topic",
        default=None,
        help="ROS 2 bag or MCAP file: the sensor_msgs/JointState topic (default: the only one; "
        "several are listed in the error).",
    )(command)


def wrench_topic_option(command: Callable) -> Callable:
    """``--wrench-topic``: force/torque sensor topics of a ROS 2 bag read beside the joint
    states (:mod:`physid.recordings.logs`)."""
    return click.option(
        "--wrench-topic",
        "wrench_topics",
        multiple=True,
        metavar="TOPIC",
        help="ROS 2 bag or MCAP file: a geometry_msgs/WrenchStamped topic of a force/torque "
        "sensor, read as the ft_<frame_id>_fx..tz columns (its header's frame_id, in that "
        "frame's axes), interpolated to the joint states' stamps (repeat for more sensors).",
    )(command)


def imu_topic_option(command: Callable) -> Callable:
    """``--imu-topic``: the IMU topic of a ROS 2 bag read beside the joint states."""
    return click.option(
        "--imu-topic",
        default="auto",
        show_default=True,
        help="ROS 2 bag or MCAP file, with --floating: the sensor_msgs/Imu topic read as "
        "base_q* (orientation), gyro_* and acc_* (in the IMU's frame), interpolated to the "
        "joint states' stamps; auto: the only Imu topic of the bag, if any.",
    )(command)


def expand_logs(paths, topic: str | None, episodes: tuple[int, ...]) -> list:
    """:func:`physid.recordings.logs.expand_logs` (imported when used, for a fast ``--help``)."""
    from physid.recordings.logs import expand_logs as expand

    return expand(paths, topic, episodes)


def expand_log_lists(lists, topic: str | None, episodes: tuple[int, ...]) -> list[list]:
    """:func:`physid.recordings.logs.expand_log_lists` (imported when used, for a fast
    ``--help``)."""
    from physid.recordings.logs import expand_log_lists as expand

    return expand(lists, topic, episodes)


def robot_file_option(help_text: str, *, must_exist: bool = True) -> Callable:
    """The robot description of a command: ``--urdf`` or its alias ``--model``, a URDF or an
    MJCF file (the kind is read from the file: :func:`physid.robot.model.load_robot_file`),
    passed as the parameter ``urdf``."""
    kind = EXISTING_FILE if must_exist else click.Path(dir_okay=False, path_type=Path)
    return click.option("--urdf", "--model", "urdf", required=True, type=kind, help=help_text)


class OutputPath(click.ParamType):
    """An output folder or file, checked when the command line is parsed, so before any work
    (:mod:`physid.files.output_paths`): the one output-path check of every command. A bad path is
    one ``physid: error:`` line naming the option, and nothing is computed or written."""

    def __init__(self, folder: bool) -> None:
        self.folder = folder
        self.name = "folder" if folder else "file"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> Path:
        from physid.files.io import check_not_in_use
        from physid.files.output_paths import check_output_dir, check_output_file

        option = max(param.opts, key=len) if param is not None else "--out"
        path = value if isinstance(value, Path) else str(value)
        if not self.folder:
            return check_output_file(path, option)
        target = check_output_dir(path, option)
        check_not_in_use(target, option)
        return target


OUTPUT_DIR = OutputPath(folder=True)
OUTPUT_FILE = OutputPath(folder=False)


class Notes:
    """Notes about the inputs (ignored columns, resampled time stamps, unused sensors), printed
    as ``physid: note:`` lines once the command has succeeded: when it fails, its one
    ``physid: error:`` line is all that is printed (a note before it made two)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, text: str) -> None:
        self.lines.append(text)

    def echo(self) -> None:
        for line in self.lines:
            click.echo(f"physid: note: {line}", err=True)


def number_in(
    low: float, high: float, low_open: bool = False, integer: bool = False
) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback checking :func:`physid.errors.in_range` under the option's own name (the
    API faces check the same bounds through the same function: ``number_in(*TABLE[name])`` with
    the estimator's table of :class:`physid.errors.Bound`). Use ``type=int`` with ``integer``
    rather than click.IntRange, whose message differs from the API's; a repeated option's
    values are checked one by one."""
    from physid.errors import in_range

    def check(_ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        name = max(param.opts, key=len)
        if isinstance(value, tuple):  # multiple=True
            return tuple(in_range(v, name, low, high, low_open, integer) for v in value)
        return in_range(value, name, low, high, low_open, integer)

    return check


@contextlib.contextmanager
def step_progress(description: str, quiet: bool) -> Iterator:
    """A progress display advanced by each named pipeline step (which step runs, the time):
    :func:`physid.progress.progress`, a bar on a terminal, periodic lines in a log. A
    :class:`~physid.findings.Finding` given instead of a step's name is something the user must
    read before the run ends: it is written as a line of its own at once (the outputs hold it
    too)."""
    if quiet:
        yield lambda _message: None
        return
    from physid.progress import progress

    with progress(
        desc=description, unit="step", bar_format="{desc}: {n} steps [{elapsed}] {postfix}"
    ) as bar:

        def advance(message: str | Finding) -> None:
            if isinstance(message, Finding):  # above a terminal's bar (tqdm.write)
                bar.write(f"{message.severity} {message.code}: {message.message}", file=sys.stderr)
                return
            bar.set_postfix_str(message)
            bar.update(1)

        yield advance
