"""``physid config --template``: every key of the identify config with its true default.

The template is generated, never kept by hand: the keys and their defaults are read from the
dataclasses of :mod:`physid.files.config` (what :func:`~physid.files.config.parse_config` returns
for an empty file), the comments and the commented-out examples from :data:`COMMENTS` and
:data:`EXAMPLES` below. A key added to a config dataclass therefore appears in the template
with its default at once; ``tests/test_config_examples.py`` fails until it has a comment here,
and runs every example end to end (they name the joints of the demo arm, ``physid demo``).

Printing the defaults (and only commenting the examples out) matters: a template of example
values, copied as is onto another robot, silently changes its fit (an example transmission
adds parameters, example filter cut-offs raise the error).
"""

from __future__ import annotations

import dataclasses
import textwrap
from typing import Any

import yaml

from physid.files.config import IdentifyConfig

# YAML key -> field of IdentifyConfig where the two differ (the split section holds one field).
_SECTION_OF_FIELD = {"train_fraction": "split"}

COMMENTS: dict[str, str] = {
    "joint_terms": "friction and armature terms per joint: fv viscous, fc Coulomb, offset "
    "(a constant torque), Ia armature",
    "friction": "linear | sigmoid | stribeck for every joint, or {joint: model}; nonlinear "
    "shapes are fitted by variable projection (docs/identify.md §10)",
    "transmission": "motor-side data (qm_<motor>, taum_<motor> or i_<motor> columns); null: "
    "joint-side data. A transmission whose motors have no column in a recording is an error",
    "drive_gains": "N m (N) per unit of the current column i_<name>: {name: gain}; or "
    "'identify': estimated with the known payload of --loaded-data (docs/identify.md §8). {}: "
    "torques are given (tau_ columns); a gain whose i_ column is missing is an error",
    "payload": "the known payload of the --loaded-data recordings: {joint, mass [kg], com "
    "[m], inertia [Ixx, Ixy, Iyy, Ixz, Iyz, Izz] kg m^2 about the com}; com and inertia "
    "optional (then estimated with the gains)",
    "filter": "derivative estimation and parallel decimation (paper C §2.3, §3)",
    "filter.method": "classical (Butterworth + central differences) | irwsm1 | irwsm2 "
    "(Kalman smoother) | given (the recording's dq_/ddq_ columns)",
    "filter.butterworth_cutoff_hz": "classical: omega_q [Hz]; null: chosen by blocked "
    "cross-validation on the training data among 10 x the excitation bandwidth (paper C, "
    "kept unless another is clearly better), half and twice it and the measurable band "
    "(docs/identify.md §1)",
    "filter.decimation_cutoff_hz": "omega_f [Hz]; null: 3 x the Butterworth cut-off (1 x with "
    "sigmoid/Stribeck friction), at most 40 % of the sample rate; 0: no decimation",
    "filter.decimation_factor": "null: the largest that keeps omega_f at 0.8 x Nyquist; "
    "given: kept, omega_f (and the cut-offs tried) at most 0.8 x the Nyquist after it",
    "filter.nvr": "irwsm1/irwsm2: noise variance ratio; null: maximum likelihood",
    "split": "held-out data when no --validate file is given",
    "split.train_fraction": "train on this leading fraction of each recording, validate on "
    "the tail; null: train on everything",
    "estimation": "least squares and the physically consistent fit",
    "estimation.weighting": "auto (the folds choose) | wls (per joint, paper C) | ols",
    "estimation.essential_ratio": "max/min relative std of the essential parameters",
    "estimation.consistency_margin": "pseudo-inertia >= margin x identity [kg m^2]; null: 1e-6, "
    "or 10 % of the URDF's smallest body eigenvalue where that is smaller (small robots)",
    "estimation.prior_std_relative": "URDF inertial prior std / parameter scale (null: no prior)",
    "estimation.prior_total_mass_std_relative": "prior std of the total moving mass, relative "
    "to the URDF's (null: none)",
    "estimation.prior_metric": "logdet (geometric, keeps bodies interior) | euclidean",
    "estimation.plausible_masses": "true: masses outside 0.5-2 x the URDF's per body (0.8-1.25 "
    "x in all) are refitted with the least tighter bodies' prior that makes them plausible, "
    "kept unless the folds prefer the implausible fit (docs/identify.md §4b); false: only "
    "warned. Default true, false when prior_std_relative is given",
    "estimation.estimate_gravity_direction": "the base tilt (the apparent gravity direction): "
    "auto = estimated, kept if within 5 deg, 2 std from level and chosen by cross-validation "
    "on the training data; true: always fitted; false: the URDF's gravity",
    "estimation.torque_delay": "a torque logged late against the motion [s]: auto (the "
    "default: a significant delay is compensated when blocked cross-validation on the training "
    "data supports it, fit.torque_delay.compensated_s; validate, payload and online then use "
    "it) | report (only estimated and reported) | a number [s]: compensated by it (each torque "
    "paired with the motion that much earlier)",
    "allow_large_angles": "skip the 'positions look like degrees' check",
    "angle_unit": "radians | degrees: the unit of the revolute joints' (and motors') q_, dq_ "
    "and ddq_ columns; degrees are converted on reading (identify, validate, payload)",
    "time_base": "auto: the time stamps are checked against the motion (repeated samples "
    "dropped; rebuilt from the controller's ticks or a uniform grid when the positions are "
    "clearly smoother on it, docs/identify.md §1); stamps: trusted as they are",
    "corrupt_samples": "repair: revolute angles logged modulo one turn are unwrapped, and an "
    "isolated sample that departs from its neighbours by more than any motion can (5 x a "
    "position's, 50 x a torque's ordinary step) is replaced by interpolating its neighbours; "
    "both reported (docs/identify.md §1); keep: left as read",
    "coulomb_deadband": "|dq| below it -> sign(dq) = 0. auto: per joint, at least 3 x the "
    "velocity noise std, widened when cross-validation asks (linear friction only); 0: "
    "none; a number [rad/s] for revolute joints, or {revolute: .., prismatic: [m/s], "
    "<joint>: ..}",
    "joints": "identify only these joints (list); every other joint is locked. null: every "
    "1-DoF revolute and prismatic joint not in locked: (others locked automatically)",
    "locked": "joints held still and where {joint: rad or m} (joints locked by joints: and "
    "not named here: their neutral position, 0), or {joint: recorded}: kept in the model, "
    "moved by its recorded q_ column, its torque not fitted (docs/identify.md §7)",
    "fit_joints": "fit only these joints' torques (list); null: every joint not locked. The "
    "others' tau_ columns may be absent",
    "gravity": "gravity in the robot's base frame [m/s^2]: a robot on a wall, a ceiling or an "
    "incline (suspect data name the vector the torques show). null: the URDF convention "
    "[0, 0, -9.81] (an MJCF: its <option gravity>); the base tilt (estimation) is fitted about it",
}

# Commented-out examples (YAML of the key's value), for the demo arm's joint names. Keys whose
# default is already a typical value have none.
EXAMPLES: dict[str, str] = {
    "joint_terms": "[fv, fc, Ia]",
    "friction": "{joint_2: stribeck}",
    "transmission": """
        motors: [m1, m2, m3, m4, m5, m6]
        reduction: [32, 32, 45, -48, 45, 32]  # diagonal of the ratio: q_motor = N q_joint
        coupling: {m6: {joint_5: 32}}         # motor m6 also turns with joint_5
        joint_offset: {joint_2: -1.5707963}   # rad, added on the joint side
        coupled_motor_terms: true             # Iam, fvm, fcm of coupled motors (paper C §4.1)
    """,
    "drive_gains": """
        {joint_1: 2.5, joint_2: 2.5, joint_3: 2.5,
         joint_4: 0.8, joint_5: 0.8, joint_6: 0.8}
    """,
    "payload": "{joint: joint_6, mass: 2.5, com: [0.1, 0.05, 0.05]}",
    "filter.method": "irwsm1",
    "filter.butterworth_cutoff_hz": "20",
    "filter.decimation_cutoff_hz": "5",
    "filter.decimation_factor": "10",
    "filter.nvr": "1.0e-5",
    "split.train_fraction": "0.6667",
    "estimation.weighting": "ols",
    "estimation.prior_total_mass_std_relative": "0.05",
    "estimation.prior_metric": "euclidean",
    "estimation.plausible_masses": "false",
    "estimation.estimate_gravity_direction": "false",
    "estimation.torque_delay": "report",
    "allow_large_angles": "true",
    "coulomb_deadband": "{revolute: 0.01, joint_3: 0}",
    "joints": "[joint_1, joint_2, joint_3, joint_4, joint_5]",
    "locked": "{joint_6: 0.5}",
    "fit_joints": "[joint_2, joint_3, joint_4, joint_5, joint_6]",
    "gravity": "[0.0, 0.0, 9.81]  # hanging from a ceiling",
}

HEADER = """\
# physid identify / validate --config: every key with its default. Every key is optional (an
# empty file or no file is these defaults); an unknown key is an error. Lines starting with
# '#   e.g.' are examples (for the demo arm of 'physid demo'): uncomment and adapt them.
"""

_COMMENT_COLUMN = 44
_WIDTH = 100


def config_keys() -> dict[str, Any]:
    """Every YAML key path of the identify config (``section.key`` in sections) -> its default,
    from the dataclasses of :mod:`physid.files.config`."""
    keys: dict[str, Any] = {}
    for name, value in _fields(IdentifyConfig()):
        section = _SECTION_OF_FIELD.get(name)
        if section is not None:
            keys[section] = None
            keys[f"{section}.{name}"] = value
        elif _is_section(value):
            keys[name] = None
            for sub, sub_value in _fields(value):
                keys[f"{name}.{sub}"] = sub_value
        else:
            keys[name] = value
    return keys


def _fields(instance: Any) -> list[tuple[str, Any]]:
    return [(f.name, getattr(instance, f.name)) for f in dataclasses.fields(instance)]


def _is_section(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _yaml(value: Any) -> str:
    """One default as flow-style YAML (tuples as lists)."""
    if isinstance(value, tuple):
        value = list(value)
    text = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=1000)
    return text.removesuffix("...\n").strip()


def _commented(line: str, comment: str, indent: str) -> list[str]:
    """``line`` with ``comment`` beside it, wrapped onto comment lines aligned under it."""
    column = max(_COMMENT_COLUMN, len(line) + 2)
    pieces = textwrap.wrap(comment, _WIDTH - column - 2) or [""]
    lines = [f"{line.ljust(column)}# {pieces[0]}".rstrip()]
    lines += [f"{' ' * column}# {piece}" for piece in pieces[1:]]
    if not comment:
        lines = [line]
    return [text if text.startswith(indent) else indent + text for text in lines]


def _example_lines(key: str, example: str, indent: str) -> list[str]:
    body = textwrap.dedent(example).strip("\n")
    if "\n" in body:
        lines = [f"{indent}#   e.g. {key}:"]
        lines += [f"{indent}#     {line}" for line in body.splitlines()]
        return lines
    return [f"{indent}#   e.g. {key}: {body}"]


def render_template() -> str:
    """The YAML template: each key at its default with a comment, examples commented out."""
    lines = [HEADER.rstrip("\n")]
    in_section = False
    for path, default in config_keys().items():
        section, _, key = path.rpartition(".")
        indent = "  " if section else ""
        if in_section and not section:
            lines.append("")  # a blank line after a section
        in_section = bool(section)
        if default is None and path in _sections():
            lines.append("")
            lines += _commented(f"{path}:", COMMENTS.get(path, ""), "")
            continue
        lines += _commented(f"{indent}{key}: {_yaml(default)}", COMMENTS.get(path, ""), indent)
        if path in EXAMPLES:
            lines += _example_lines(key, EXAMPLES[path], indent)
    return "\n".join(lines) + "\n"


def _sections() -> set[str]:
    """YAML keys that hold a section (a mapping of further keys)."""
    keys = config_keys()
    return {path.partition(".")[0] for path in keys if "." in path}


def example_config(path: str) -> dict[str, Any]:
    """The config mapping of one key's example, as a user would write it (for tests and docs)."""
    value = yaml.safe_load(textwrap.dedent(EXAMPLES[path]))
    section, _, key = path.rpartition(".")
    return {section: {key: value}} if section else {key: value}
