"""The finding codes of ``physid export`` (documented in docs/findings.md; ``physid codes``)."""

from __future__ import annotations

from physid.findings import Severity, define

NOT_EXPORTED = define(
    "EP101",
    "not-exported",
    Severity.INFO,
    "what the format cannot hold",
    "A term of params.json the output format has no place for (a torque offset, coupled-motor "
    "terms, the Coulomb deadband; armature and gravity in URDF), or how it was written.",
    "Nothing, unless your simulator needs it: then keep params.json beside the file.",
)
PRIOR_BODIES = define(
    "EP102",
    "prior-bodies-exported",
    Severity.CAUTION,
    "bodies the prior decided, exported",
    "Some exported quantities are the URDF prior's, not the data's (params.json source 'prior'); "
    "the exporters mark those bodies in the file.",
    "Read them as the robot file's values.",
)
NOT_OK_SOURCE = define(
    "EP201",
    "exported-not-ok",
    Severity.CAUTION,
    "the identification exported is not ok",
    "The identification's status is not ok (suspect data, worse than the URDF): the exported "
    "model carries what it found.",
    "Read params.json and the report before simulating with it.",
)
