"""The finding codes of reading recordings (every command): what reading did to the rows, and
what it saw in the signals; documented in docs/findings.md and by ``physid codes``."""

from __future__ import annotations

from physid.findings import Severity, define

INFO, CAUTION = Severity.INFO, Severity.CAUTION

GAP_SPLIT = define(
    "D101",
    "gap-split",
    INFO,
    "a gap in the time stamps: the recording was split there",
    "The recording's stamps jump by more than its motion allows: each piece is identified as a "
    "recording of its own (physid does not fill gaps); pieces too short are dropped.",
    "Nothing; log without gaps to keep every row.",
)
STALE_ROWS = define(
    "D102",
    "stale-rows",
    INFO,
    "rows dropped as stale",
    "Rows whose every position and torque equal the row before, under a new stamp: a logger that "
    "froze or resent.",
    "Nothing; check the logger if many.",
)
MOTION_BREAK = define(
    "D103",
    "motion-break",
    INFO,
    "rows dropped at a break in the motion",
    "A stretch the positions cannot belong to (a jump, a reset) was left out, and the recording "
    "identified on the rest.",
    "Check the encoder or the logger at the rows named.",
)
FRAME_SHIFT = define(
    "D104",
    "position-step-repaired",
    INFO,
    "a position step repaired",
    "The positions step during the recording (an encoder reset or glitch): the rows in other "
    "frames were shifted into one frame, no row dropped.",
    "Nothing.",
)
FROZEN_TORQUE = define(
    "D105",
    "frozen-torque",
    CAUTION,
    "a torque frozen while the robot moves",
    "A joint's torque holds one value over stretches where the robot moves: those rows are left "
    "out (a sensor that stopped updating).",
    "Check the torque sensor or the logger.",
)
TORQUE_AT_LIMIT = define(
    "D106",
    "torque-at-limit",
    CAUTION,
    "torques sit at their largest or smallest value",
    "An actuator at its torque limit: kept as logged (a clipped torque is still the torque), but "
    "a command logged in place of a measured torque would be wrong there.",
    "Log the measured torque, or keep the motion within the actuators' limits.",
)
DUPLICATE_ROWS = define(
    "D107",
    "duplicate-rows",
    INFO,
    "duplicate rows dropped",
    "Rows logged twice under the same stamp were dropped.",
    "Nothing.",
)
SAMPLES_REPAIRED = define(
    "D108",
    "samples-repaired",
    INFO,
    "corrupt samples repaired, or angles unwrapped",
    "Single corrupt samples were replaced from their neighbours, or angles logged modulo a turn "
    "unwrapped.",
    "Nothing; check the logger if many.",
)
TIME_BASE = define(
    "D109",
    "time-base",
    INFO,
    "the time base the rows were read on",
    "The stamps were checked against a uniform grid and the motion: jitter removed, or a grid "
    "rebuilt when the stamps are rougher than the positions.",
    "Nothing.",
)
READING_NOTE = define(
    "D110",
    "reading-note",
    INFO,
    "what reading the file did",
    "A note of the reader: columns mapped, ignored or resampled, rows dropped by the log format.",
    "Read it once; rename columns to the trajectory contract to silence an unknown-column note.",
)
