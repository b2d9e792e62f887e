"""Export identified parameters (``params.json``) into robot description formats.

:func:`write_export` is what ``physid export`` runs: URDF by editing the given URDF's XML
(:mod:`physid.export.urdf`), MJCF through MuJoCo's ``MjSpec`` (:mod:`physid.export.mjcf`).
The mapping and what each format cannot hold are in ``docs/export.md``.
"""

from __future__ import annotations

from pathlib import Path

from physid.errors import InputError

FORMATS = ("urdf", "mjcf")


def format_for(out: str | Path, fmt: str | None) -> str:
    """The export format: given, or from the output's suffix (``.urdf``; ``.xml``/``.mjcf``)."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise InputError(f"--format must be one of {', '.join(FORMATS)}, got '{fmt}'")
        return fmt
    suffix = Path(out).suffix.lower()
    if suffix == ".urdf":
        return "urdf"
    if suffix in (".xml", ".mjcf"):
        return "mjcf"
    raise InputError(f"cannot tell the format from '{out}': give --format urdf|mjcf")


def write_export(
    params_path: str | Path, urdf: str | Path, out: str | Path, fmt: str | None = None
) -> list[str]:
    """Write the robot of ``urdf`` with the parameters of ``params_path`` to ``out`` (atomically).

    Returns the notes: what the format could not hold (offsets, coupled motors, ...).
    """
    from physid.export.locked import without_locked_bodies
    from physid.files.io import write_text_atomic
    from physid.files.params_file import read_params

    fmt = format_for(out, fmt)
    params, locked_notes = without_locked_bodies(urdf, read_params(params_path))
    if fmt == "urdf":
        from physid.export.urdf import export_urdf
        from physid.robot.mjcf import is_mjcf

        if is_mjcf(urdf):
            raise InputError(
                f"{urdf} is an MJCF: export it as MJCF (--format mjcf), into the same file's "
                "structure; a URDF cannot be written from an MJCF"
            )

        exported = export_urdf(urdf, params)
        text, notes = exported.to_string(), exported.notes
        if params.gravity is not None:
            notes.append(
                f"gravity {params.gravity.tolist()} m/s^2 of training: not part of a URDF "
                "(written as a comment); set it on the model that loads the file"
            )
    else:
        from physid.export.mjcf import export_mjcf

        exported = export_mjcf(urdf, params, out)
        text, notes = exported.xml, exported.notes
    if any("coulomb_deadband" in terms for terms in params.joints.values()):
        notes.append("coulomb_deadband (a speed of the friction model, not a parameter): ignored")
    write_text_atomic(out, text)
    return [*locked_notes, *notes]
