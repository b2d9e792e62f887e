"""Where outputs may go: the one check of output paths that every command makes when its
command line is parsed, before any work (``physid.cli.options.OUTPUT_DIR`` / ``OUTPUT_FILE``).

Why one check: the atomic writer raises FileExistsError or EBUSY on such a path (``--out
a_file/sub``, ``--out ''``) only after the work is done; checked when the command line is
parsed, every command refuses the same paths at once. A path is refused with one line naming the
option when it is empty, too long for the atomic writers' temporary siblings, a file where a
folder is wanted (or the reverse), under a regular file, or in a folder where no file can be
created (a read-only mount or /proc, where ``os.access`` says yes to root).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from physid.errors import InputError

# room left in a file name for the temporary siblings of the atomic writers
# (".<name>.<pid>.<random>.staging"); NAME_MAX is 255 bytes on every common file system
_NAME_ROOM = 255 - 40
_PATH_ROOM = 4096 - 80


def _nearest_existing(target: Path, option: str) -> Path:
    existing = target
    try:
        while not (existing.exists() or existing.is_symlink()):
            if existing.parent == existing:
                break
            existing = existing.parent
    except OSError as error:
        raise InputError(f"cannot use {target}: {error.strerror or error}", source=option) from None
    return existing


def _check_output_name(path: str | os.PathLike[str], option: str) -> Path:
    """The checks of an output path that do not depend on its kind: not empty, no NUL byte,
    encodable in the file system's encoding, names and the whole path short enough."""
    text = os.fspath(path)
    if not text.strip():
        raise InputError("the path is empty", source=option)
    if "\x00" in text:
        raise InputError(f"{text!r} contains a NUL byte", source=option)
    try:
        encoded = os.fsencode(os.path.abspath(text))
    except (UnicodeError, ValueError):
        raise InputError(f"{text!r} cannot be encoded as a file name here", source=option) from None
    if len(encoded) > _PATH_ROOM:
        raise InputError(
            f"the path is {len(encoded)} bytes long; at most {_PATH_ROOM}", source=option
        )
    for part in Path(text).parts:
        if len(os.fsencode(part)) > _NAME_ROOM:
            raise InputError(
                f"the name '{part[:40]}...' is {len(os.fsencode(part))} bytes long; at most "
                f"{_NAME_ROOM}",
                source=option,
            )
    return Path(text)


def check_output_dir(path: str | os.PathLike[str], option: str = "--out") -> Path:
    """Fail early, naming ``option``, if ``path`` cannot become a writable folder (empty, too
    long, it is a file, lies under a file, or its nearest existing folder is read-only).

    Every command checks its output paths with this or :func:`check_output_file` before any
    work (``physid.cli.options.OUTPUT_DIR``/``OUTPUT_FILE``), so a bad path costs nothing and
    leaves nothing behind."""
    target = _check_output_name(path, option)
    existing = _nearest_existing(target, option)
    if existing == target and not target.is_dir():
        raise InputError(f"{target} is a file, not a folder", source=option)
    if not existing.is_dir():
        raise InputError(f"{target} lies under the file {existing}", source=option)
    if not os.access(existing, os.W_OK | os.X_OK) or not _can_create_in(existing):
        raise InputError(f"{existing} is not writable", source=option)
    return target


def _can_create_in(folder: Path) -> bool:
    """Whether a file can really be created in ``folder``: ``os.access`` says yes to root on
    a read-only mount or under /proc, where the write would only fail after all the work."""
    try:
        fd, name = tempfile.mkstemp(prefix=".physid-probe.", dir=folder)
    except OSError:
        return False
    os.close(fd)
    Path(name).unlink(missing_ok=True)
    return True


def check_output_file(path: str | os.PathLike[str], option: str) -> Path:
    """Fail early, naming ``option``, if a file cannot be written at ``path`` (see
    :func:`check_output_dir`; also a path that is a folder or ends in a separator)."""
    target = _check_output_name(path, option)
    if os.fspath(path).endswith(("/", os.sep)) or target.name in ("", ".", ".."):
        raise InputError(f"{os.fspath(path)!r} names a folder, not a file", source=option)
    existing = _nearest_existing(target, option)
    if existing == target and target.is_dir():
        raise InputError(f"{target} is a folder, not a file", source=option)
    check_output_dir(target.parent, option)
    if existing == target and not os.access(target, os.W_OK):
        raise InputError(f"{target} is not writable", source=option)
    return target
