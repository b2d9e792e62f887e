"""API faces of the serial-robot tools around identify: ``payload`` and ``export`` (what
``physid payload|export`` run; ``excite`` and ``simfit`` live in :mod:`.excite_run` and
:mod:`.simfit_run`). Each returns a
:class:`~physid.api.results.Result`; heavy imports happen inside the functions."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from physid.api.recording import sources
from physid.api.results import Named, Outcome, Parameter
from physid.errors import Bound, InputError, check_numbers
from physid.findings import Finding, as_dicts
from physid.status import Status
from physid.threads import one_blas_thread

if TYPE_CHECKING:
    from physid.api.recording import DataLike, PathLike

SIMFIT_FIELDS = ("damping", "armature", "frictionloss")
# the model's actuators, driven by ctrl_<actuator> columns (physid.simfit.problem)
SIMFIT_ACTUATOR_FIELDS = ("kp", "kv", "gain")
# The numbers each of these faces accepts, one table per command: the CLI's option callbacks
# (physid.cli.payload_commands, excite_commands, simfit_commands) and the functions below check
# them through physid.errors.in_range, so a bad number is the same one-line error from either.
PAYLOAD: dict[str, Bound] = {"mass": Bound(0.0, 1e4, True)}  # [kg]
EXCITE: dict[str, Bound] = {
    "duration": Bound(1e-3, 1e6),  # [s]
    "harmonics": Bound(1, 50, integer=True),
    "base_frequency": Bound(1e-4, 1e3),  # [Hz]
    "seed": Bound(0, 2**32 - 1, integer=True),  # numpy's default_rng takes no negative seed
}
SIMFIT: dict[str, Bound] = {
    "window": Bound(0.05, 10.0),  # [s]
    "max_evaluations": Bound(5, 10_000, integer=True),
    "coarse_windows": Bound(0, 1_000_000, integer=True),
}
# simfit's default budget (as physid.simfit.fit.fit_simulator's, which the API does not import
# at start-up): a real arm's fit can need more than 60 to meet ftol
SIMFIT_MAX_EVALUATIONS = 100


@one_blas_thread
def payload(
    urdf: PathLike,
    params: PathLike,
    data: DataLike,
    link: str,
    *,
    unloaded: DataLike | None = None,
    mass: float | None = None,
    config: PathLike | None = None,
) -> Outcome:
    """Estimate the 10 inertial parameters of a payload on a robot identified without it
    (``physid payload``).

    Args:
        urdf: The robot file (URDF or MJCF), without the payload.
        params: The robot's ``params.json``, identified without the payload.
        data: Recordings with the payload attached: files or :class:`~physid.Recording`
            objects, or a list.
        link: The link the payload is attached to.
        unloaded: Recordings without the payload, as ``data`` (the same motion gives a
            sample-by-sample difference; None: the robot's model alone).
        mass: The payload's known mass [kg] (None: estimated).
        config: The identify config used for the robot (YAML path; transmission, drive
            gains, filter).

    Returns:
        The payload's mass, centre of mass and inertia in the link frame with their standard
        deviations (``parameters``), its status and findings; ``save(out)`` writes
        payload.json; ``raw`` is the :class:`physid.offline.loads.payload.PayloadResult`.

    Raises:
        InputError: Bad input, or no physically consistent payload (nothing written).
    """
    from physid.files.io import write_json_atomic
    from physid.workflows import run_payload

    check_numbers(PAYLOAD, {"mass": mass})  # before the recordings are read
    result = run_payload(
        urdf,
        params,
        sources(data),
        link,
        unloaded=sources(unloaded),
        mass_kg=mass,
        config_path=config,
    )
    if not result.consistent:  # as identify: nothing usable to write
        raise InputError(f"{result.message}; nothing was written")
    document = result.as_dict()

    def write(folder: Path) -> None:
        write_json_atomic(folder / "payload.json", document)

    inertia = result.inertia_about_com_in_link
    parameters = Named(
        {
            "mass": Parameter(result.mass, result.std["mass"], result.source["mass"], "kg"),
            "com": Parameter(result.com_in_link, result.std["com"], result.source["com"], "m"),
            "inertia": Parameter(
                inertia, result.std["inertia"], result.source["inertia"], "kg m^2"
            ),
        }
    )
    message = f"payload on {result.link} (joint {result.joint}): mass {result.mass:.4f} kg"
    return Outcome(
        result.status,
        message,
        parameters,
        document,
        result,
        write,
        warnings=result.warnings,
        findings=result.findings,
    )


@one_blas_thread
def export_model(
    params: PathLike, urdf: PathLike, out: PathLike, *, fmt: str | None = None
) -> Outcome:
    """Write the robot with its identified parameters as URDF or MJCF (``physid export``).

    Args:
        params: The ``params.json`` of the identification.
        urdf: The robot file it was identified on (URDF or MJCF; an MJCF is edited in place of
            its inertials and joint terms, comments and the rest kept).
        out: The file to write (atomically).
        fmt: ``"urdf"`` or ``"mjcf"`` (None: from the suffix of ``out``).

    Returns:
        The status of the identification exported, and findings for what the format cannot
        hold (``notes`` too); ``to_dict()`` names the file.
    """
    from physid.export import format_for, write_export

    def write(path: Path) -> None:
        write_export(params, urdf, path, fmt)

    notes = write_export(params, urdf, out, fmt)
    document = {"params": str(params), "model": str(urdf), "out": str(out)}
    document |= {"format": format_for(out, fmt), "not_exported": notes}
    message = "; ".join(f"not exported: {note}" for note in notes) or "everything exported"
    from physid.export.codes import NOT_EXPORTED, PRIOR_BODIES
    from physid.files.params_file import read_params

    parsed = read_params(params)
    status, warnings = _identification_status(params, parsed.document)
    decided = parsed.prior_note()  # the exporters mark those bodies in the file
    findings = (*(NOT_EXPORTED(n) for n in notes), *warnings)
    findings += (PRIOR_BODIES(decided),) if decided else ()
    document["identification_status"] = status
    document["status"], document["findings"] = status, as_dicts(findings)
    return Outcome(
        status,
        message,
        Named(),
        document,
        None,
        write,
        False,
        tuple(notes),
        tuple(f.message for f in warnings),
        findings=findings,
    )


def _identification_status(params: PathLike, document: dict) -> tuple[str, tuple[Finding, ...]]:
    """The status params.json records, and a finding when it is not ``ok``: an export of a
    suspect identification (torques logged in mA read as an elbow hundreds of times its link's
    mass) is a simulator of what that identification found, and the exported file
    cannot say so itself. ``document``: the params.json at ``params``, as read."""
    status = str(document.get("status") or "ok")
    if status == Status.OK:
        return status, ()
    reasons = [str(r) for r in document.get("suspect_reasons") or []]
    why = (
        f": {reasons[0]}" + (f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else "")
        if reasons
        else ""
    )
    from physid.export.codes import NOT_OK_SOURCE

    return status, (
        NOT_OK_SOURCE(
            f"{params}: the identification's status is '{status}'{why}; the exported model carries "
            "what it found: read params.json and the report before simulating with it",
            names=(str(params),),
        ),
    )
