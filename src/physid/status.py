"""One set of status codes for every estimator and solver of physid.

A result's ``status`` is a :class:`Status`; :data:`STATUSES` says what each means, whether the
result can be used as it is (``success``) and the command line's exit code. The detail of why a
solver stopped (a gradient test, a step test, which budget) is the solver's own termination
field, never parsed from a message. Modelled on SciPy's ``least_squares`` termination table.

Exit codes: 0 ok; 2 bad input or nothing usable written (an error line says why); 3 outputs
written but the status is not ok (the status and its findings say why).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    """What became of an estimate (:data:`STATUSES` documents each)."""

    OK = "ok"
    SUSPECT = "suspect"
    WORSE_THAN_URDF = "worse_than_urdf"
    WORSE_FOR_SOME_JOINTS = "worse_for_some_joints"
    NOT_CONVERGED = "not_converged"
    TIME_LIMIT = "time_limit"
    STALLED = "stalled"
    AT_BOUND = "at_bound"
    UNIDENTIFIABLE = "unidentifiable"
    INCONSISTENT = "inconsistent"
    NUMERICAL_FAILURE = "numerical_failure"

    @property
    def info(self) -> StatusInfo:
        return STATUSES[self]

    @property
    def success(self) -> bool:
        """The estimate can be used as it is."""
        return STATUSES[self].success

    @property
    def exit_code(self) -> int:
        return STATUSES[self].exit_code


@dataclass(frozen=True)
class StatusInfo:
    """What a status means, whether it is a success, its exit code and what to do."""

    success: bool
    exit_code: int
    means: str
    do: str


EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_NOT_OK = 3

STATUSES: dict[Status, StatusInfo] = {
    Status.OK: StatusInfo(
        True,
        EXIT_OK,
        "the estimate converged, is physically consistent and nothing suggests the data are wrong",
        "use it; read the cautions printed, if any",
    ),
    Status.SUSPECT: StatusInfo(
        False,
        EXIT_NOT_OK,
        "an estimate exists, but the data look wrong though well-formed (a sign, a unit, a "
        "scale, columns out of order, a motion that cannot decide the parameters)",
        "read the suspect findings: each names the column or joint and the likely fix",
    ),
    Status.WORSE_THAN_URDF: StatusInfo(
        False,
        EXIT_NOT_OK,
        "the identified model predicts held-out data (folds of the training recordings, or "
        "the validation recordings) worse than the robot file's own model",
        "keep the robot file's model for that motion, or record a longer, richer excitation",
    ),
    Status.WORSE_FOR_SOME_JOINTS: StatusInfo(
        False,
        EXIT_NOT_OK,
        "the tuned simulator is better overall but simulates some joints' held-out runs worse "
        "than the given model",
        "hold those joints at the given values (simfit --hold) or record more of their motion",
    ),
    Status.NOT_CONVERGED: StatusInfo(
        False,
        EXIT_NOT_OK,
        "the solver used its iteration or evaluation budget before its convergence test; the "
        "best iterate is reported",
        "raise the iteration budget, or give a better start or richer data",
    ),
    Status.TIME_LIMIT: StatusInfo(
        False,
        EXIT_NOT_OK,
        "the wall-clock safety stop ended the solve before convergence (the result then depends "
        "on the machine's speed)",
        "raise the time limit or run on a less loaded machine; the iteration budget is the "
        "deterministic one",
    ),
    Status.STALLED: StatusInfo(
        False,
        EXIT_NOT_OK,
        "the solver could not decrease its cost any further before its convergence test (a "
        "failed line search, no progress)",
        "check the data and the start; the best iterate is reported",
    ),
    Status.AT_BOUND: StatusInfo(
        False,
        EXIT_NOT_OK,
        "an estimate ran to a bound of its admissible set: the data do not determine it",
        "read the finding naming it; record motion that excites it or give a prior",
    ),
    Status.UNIDENTIFIABLE: StatusInfo(
        False,
        EXIT_NOT_OK,
        "the data cannot determine the estimated quantities (no excitation, no contact, too "
        "few samples)",
        "record motion that excites them",
    ),
    Status.INCONSISTENT: StatusInfo(
        False,
        EXIT_BAD_INPUT,
        "no physically consistent parameters fit the data",
        "read the error line and the suspect findings: a sign, a unit or a wrong model file",
    ),
    Status.NUMERICAL_FAILURE: StatusInfo(
        False,
        EXIT_NOT_OK,
        "the solver met a non-finite cost, a singular system or a solver error; the last "
        "finite iterate is reported",
        "check the data for outliers and the model for massless bodies",
    ),
}


def exit_code(status: Status | str) -> int:
    """The command line's exit code for a written result of this status."""
    return Status(status).exit_code
