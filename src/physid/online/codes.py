"""The finding codes of ``physid.online`` (documented in docs/findings.md; ``physid codes``).

ON1xx: the recording as the filter reads it; ON2xx: the nominal model the filter explains the
torques with; ON3xx: the replay itself.
"""

from __future__ import annotations

from physid.findings import Severity, define

# --- the recording ------------------------------------------------------------------------------
VELOCITIES_FROM_POSITIONS = define(
    "ON101",
    "velocities-from-positions",
    Severity.INFO,
    "no dq_ columns: velocities estimated from the positions",
    "The recording logs no joint velocities (or logged ones that were left out), so the filter "
    "estimates them from the positions by a causal quadratic fit over the acceleration window, "
    "with the same delay as the accelerations.",
    "Nothing, unless the drives log velocities: give them as dq_<joint> columns.",
)
UNUSED_COLUMNS = define(
    "ON102",
    "unused-columns",
    Severity.INFO,
    "columns the filter does not read",
    "These columns of the recording are not among those physid online reads (t, q_, dq_, "
    "tau_ or i_ with drive gains, base_* and contact wrenches); ddq_ columns are never read: "
    "the filter differentiates the velocities itself (paper E §III-D).",
    "Nothing, unless a column was meant to be read: check its name against docs/online.md.",
)
TIME_NOT_SECONDS = define(
    "ON103",
    "time-not-seconds",
    Severity.SUSPECT,
    "the time stamps are not in seconds",
    "The median step between time stamps is longer than a robot's joint log would be: the "
    "column t is likely in milliseconds (or the log is not a robot's).",
    "Convert t to seconds (t_ms / 1000) and replay again.",
)
POSITIONS_OUTSIDE_LIMITS = define(
    "ON104",
    "positions-outside-limits",
    Severity.SUSPECT,
    "positions far outside the robot file's joint limits",
    "A joint's logged positions leave its URDF limits by more than the slack a real robot "
    "could: the unit is wrong (degrees, millimetres) or the recording is another robot's.",
    "Check the unit of the q_ column named (angle_unit: degrees in the online config converts "
    "degrees) and that the robot file is the robot recorded.",
)
NO_JOINT_MOVES = define(
    "ON105",
    "no-joint-moves",
    Severity.SUSPECT,
    "no joint moves",
    "Every joint position stays within 1e-6 over the recording: the motion cannot tell the "
    "estimated body from the rest of the robot.",
    "Replay a recording in which the robot moves.",
)
TORQUE_DELAY_MATCHED = define(
    "ON106",
    "torque-delay-matched",
    Severity.INFO,
    "torque matched with earlier motion",
    "The nominal params.json's identification compensated a delay of the logged torque behind "
    "the motion; it is part of that model, so the filter matches each torque with the motion "
    "that much earlier (linearly interpolated).",
    "Nothing: the delay is in the nominal params.json (fit.torque_delay.compensated_s).",
)

# --- the nominal model --------------------------------------------------------------------------
MISSING_JOINT_TERMS = define(
    "ON201",
    "missing-joint-terms",
    Severity.CAUTION,
    "joints without friction terms in the nominal params.json",
    "The nominal params.json names no friction or armature for these joints, which the filter "
    "takes as 0: whatever friction they have is left in the residual, where the filter may "
    "read it as a change of the estimated body.",
    "Use a params.json from physid identify that models those joints' terms.",
)
COUPLED_MOTOR_FRICTION = define(
    "ON202",
    "coupled-motor-friction",
    Severity.CAUTION,
    "coupled-motor friction not modelled online",
    "The nominal params.json holds friction terms of coupled motors; the online model holds "
    "each joint's own terms only, so the coupled terms are left in the residual.",
    "Read the estimate of a body moved by the coupled joints with that in mind.",
)
MODEL_FILE_FRICTION = define(
    "ON203",
    "model-file-friction",
    Severity.INFO,
    "the model file's joint damping and frictionloss used",
    "Without a nominal params.json, the MJCF's joint damping and frictionloss join the "
    "nominal model as viscous and Coulomb friction (the deadband in the numbers), as physid oe "
    "takes them.",
    "Nothing; a params.json from physid identify (nominal_params) replaces them.",
)
ACCELERATION_WINDOW = define(
    "ON204",
    "acceleration-window",
    Severity.INFO,
    "acceleration window chosen from the noise",
    "With acceleration_window: auto the window is chosen from the recording's noise "
    "(physid.online.window); a window other than paper E's delays the estimates by the lag in "
    "the numbers.",
    "Nothing; give acceleration_window in the config to fix it.",
)
TORQUE_SCALE = define(
    "ON206",
    "torque-scale",
    Severity.SUSPECT,
    "the torques carry another scale than the nominal model",
    "Read on the bodies not estimated, the measured torques are a factor off the nominal "
    "model's (physid.online.torque_scale): a drive gain or torque unit that is off, or a "
    "nominal model off by that factor. The estimated bodies absorb it.",
    "Check the drive gains (tau = gain x current) or give nominal_params: a params.json from "
    "physid identify on torques logged as these are.",
)

# --- the replay ---------------------------------------------------------------------------------
FEW_UPDATES = define(
    "ON301",
    "few-updates",
    Severity.SUSPECT,
    "too few samples updated the estimate",
    "Most samples were skipped, calibrating or gated, so the estimate is mostly the nominal "
    "body the filter started from.",
    "Read summary.json's skip_reasons; replay a longer recording, or fix the samples skipped.",
)
MANY_GATED = define(
    "ON302",
    "many-gated",
    Severity.SUSPECT,
    "most measurements gated",
    "More than half of the measurements the filter judged failed its innovation gate (paper E "
    "eq. 22): the model does not explain the torques.",
    "Check the units, the wrench signs, the quaternion order (x, y, z, w) and the nominal model.",
)
TORQUES_UNEXPLAINED = define(
    "ON303",
    "torques-unexplained",
    Severity.SUSPECT,
    "the model does not explain the torques",
    "The accepted updates' normalised innovations are far above what a model and noise that "
    "fit give (about the number of measurement rows), or a fifth of the measurements were "
    "gated: the estimates are not reliable.",
    "Without a nominal params.json, give one (its joint friction); else check the units, the "
    "wrench signs and the quaternion order (x, y, z, w).",
)
BOUNDED_UPDATES = define(
    "ON304",
    "bounded-updates",
    Severity.CAUTION,
    "updates brought back within the body's bounds",
    "Some updates pulled an estimate beyond what the body can be (its centre of mass beyond the "
    "robot's stretched length from its joint, or its mass below 1 % of the nominal) and were "
    "brought back: the nominal model of the other bodies, or the torques, are off there.",
    "Read estimates.csv around those samples; check the nominal model of the other bodies.",
)
