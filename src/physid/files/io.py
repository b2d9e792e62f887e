"""File I/O helpers: atomic output (write to a temporary name beside the target, then rename,
so a crash never leaves a half-written result behind), YAML input with one-line errors, and
CSV text of named columns.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import gzip
import json
import math
import os
import shutil
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from io import StringIO
from pathlib import Path
from typing import Any

import numpy as np

from physid.files.output_paths import check_output_dir, check_output_file  # noqa: F401 - re-export


def _to_jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _to_jsonable(value.tolist())
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        value = float(value)
        # JSON has no NaN/inf; null is the honest encoding of "not available".
        return value if math.isfinite(value) else None
    if isinstance(value, Path):
        return str(value)
    return value


def to_json_text(obj: Any) -> str:
    """Serialise ``obj`` (dicts, lists, NumPy arrays and scalars) as indented JSON."""
    return json.dumps(_to_jsonable(obj), indent=2, allow_nan=False) + "\n"


def umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux >= 4.7)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it, and put it back at once
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The permissions of a new file under the umask (0644 under umask 0022).

    ``tempfile`` creates its files 0600 (and folders 0700) whatever the umask; outputs renamed
    from them must get the mode an ordinary ``open`` / ``mkdir`` would have given them, or a
    colleague cannot read them."""
    return 0o666 & ~umask()


def folder_mode() -> int:
    """The permissions of a new folder under the umask (0755 under umask 0022)."""
    return 0o777 & ~umask()


def _remove_stale_temporaries(target: Path) -> None:
    """``.<name>.<pid>.*.tmp`` beside ``target`` left by a process that no longer exists (a
    run killed by SIGKILL between writing and renaming)."""
    for stale in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        pid = stale.name[len(target.name) + 2 :].split(".")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            stale.unlink(missing_ok=True)


def write_bytes_atomic(path: str | os.PathLike[str], payload: bytes) -> Path:
    """Write ``payload`` to ``path`` through a temporary file in the same folder and a rename.

    The file gets the mode the umask gives new files (:func:`file_mode`). A path that cannot
    be written (under a regular file, a folder, empty, a name too long, no permission) is an
    InputError naming it, never an OSError."""
    from physid.errors import InputError

    target = Path(path)
    if not str(path) or not target.name or target.name in (".", ".."):
        raise InputError(f"cannot write a file at {str(path)!r}: not a file name")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(target)
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent
        )
    except OSError as error:
        raise InputError(f"cannot write {target}: {error.strerror or error}") from None
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException as error:
        Path(tmp_name).unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise InputError(f"cannot write {target}: {error.strerror or error}") from None
        raise
    return target


def write_text_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write ``obj`` as JSON to ``path`` atomically (NaN and inf become null)."""
    return write_text_atomic(path, to_json_text(obj))


_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = b"PK\x03\x04"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_TEXT_LINE_BYTES = 1 << 16  # first_text_line reads no further


def is_gzipped_csv(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a gzip-compressed CSV file (``.csv.gz``), which the data readers
    decompress as they read."""
    return Path(path).name.lower().endswith(".csv.gz")


def open_data_file(path: str | os.PathLike[str], mode: str = "rb", **options: Any):  # noqa: ANN201
    """``open(path, mode)``, decompressing a ``.csv.gz`` (:func:`is_gzipped_csv`) as it reads."""
    return (gzip.open if is_gzipped_csv(path) else open)(path, mode, **options)


def first_text_line(path: str | os.PathLike[str]) -> str | None:
    """The first line of ``path`` (a ``.csv.gz`` decompressed) when it is plain UTF-8 text;
    None for anything :func:`read_text_file` would refuse or word (an archive, UTF-16, a NUL
    byte, undecodable bytes), or a line beyond 64 KiB: a reader that then needs the file reads
    it with :func:`read_text_file`, whose errors name what is wrong."""
    try:
        with open_data_file(path) as handle:
            head = handle.readline(_TEXT_LINE_BYTES)
    except (OSError, EOFError, zlib.error):
        return None
    binary = head.startswith((_GZIP_MAGIC, _ZIP_MAGIC, *_UTF16_BOMS)) or b"\x00" in head
    if binary or not head.endswith(b"\n"):
        return None
    try:
        return head.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def read_text_file(path: str | os.PathLike[str], what: str) -> str:
    """The UTF-8 text of ``path``; anything else is an InputError naming the file and the line.

    Binary files (gzip, zip, NUL bytes) and other encodings (UTF-16, Latin-1) are refused with
    the 1-based line of the first undecodable byte, never read as garbage text; a ``.csv.gz``
    file (:func:`is_gzipped_csv`) is decompressed first.
    """
    from physid.errors import InputError

    path = Path(path)
    if not is_file(path) and os.path.lexists(path):  # a folder, a FIFO (read blocks), /dev/zero
        raise InputError(f"the {what} is not a regular file", source=str(path))
    try:
        payload = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{what} not found: {path}") from None
    except OSError as error:
        raise InputError(f"cannot read the {what} ({error.strerror})", source=str(path)) from None
    if is_gzipped_csv(path) and payload.startswith(_GZIP_MAGIC):
        try:
            payload = gzip.decompress(payload)
        except (OSError, EOFError, zlib.error) as error:
            raise InputError(
                f"the {what} is a damaged gzip archive ({error})", source=str(path)
            ) from None
    if payload.startswith((_GZIP_MAGIC, _ZIP_MAGIC)):
        kind = "gzip" if payload.startswith(_GZIP_MAGIC) else "zip"
        raise InputError(f"the {what} is a {kind} archive; decompress it first", source=str(path))
    if payload.startswith(_UTF16_BOMS):
        raise InputError(f"the {what} is UTF-16 text; save it as UTF-8", source=str(path))
    try:
        text = payload.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = payload[: error.start].count(b"\n") + 1
        raise InputError(
            f"the {what} is not UTF-8 text (byte 0x{payload[error.start]:02x} on line {line}); "
            "save it as UTF-8",
            source=str(path),
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise InputError(f"the {what} is binary (NUL byte on line {line})", source=str(path))
    return text


@contextmanager
def quiet_stderr() -> Iterator[None]:
    """Silence what C/C++ libraries print on file descriptor 2 (urdfdom, LAPACK) for the block.

    Python warnings raised meanwhile are silenced as well; errors still propagate as exceptions.
    """
    import sys
    import warnings

    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real descriptor 2 (embedded interpreters)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
        return
    try:
        with open(os.devnull, "wb") as null, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def is_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` names a regular file; False for anything the system will not look up
    (a name too long, a loop of links, a folder we may not search), where ``Path.is_file``
    raises."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


# YAML 1.2's floats: PyYAML follows YAML 1.1, where a float needs a dot, so ``1e-3`` (what
# users write, and what YAML 1.2, JSON and Python read as a number) would be the string '1e-3'
# and a config would refuse it as "not a number".
_FLOAT_1_2 = r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
    |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$"""


@functools.cache
def _yaml_loader() -> type:
    """PyYAML's safe loader that also reads YAML 1.2 floats such as ``1e-3`` as numbers and
    refuses a mapping key given twice."""
    import re

    import yaml

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):  # noqa: ANN001, ANN202 - PyYAML's API
            # PyYAML silently keeps the last of a key given twice (a second 'estimate:' drops the
            # first one's names): refused, naming the key and both lines
            seen: dict = {}
            for key_node, _ in node.value:
                if not isinstance(key_node, yaml.ScalarNode) or key_node.tag.endswith(":merge"):
                    continue  # merged keys ('<<') may be overridden: that is their purpose
                key = key_node.value
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"key '{key}' given twice (lines {seen[key] + 1} and "
                        f"{key_node.start_mark.line + 1}): keep one",
                        key_node.start_mark,
                    )
                seen[key] = key_node.start_mark.line
            return super().construct_mapping(node, deep=deep)

    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float", re.compile(_FLOAT_1_2, re.X), list("-+0123456789.")
    )
    return Loader


def read_yaml(path: str | os.PathLike[str], what: str) -> Any:
    """Parse a YAML file; a missing file or bad YAML is an InputError naming the file.

    ``what`` names the kind of file for the message ("config file", "recording manifest").
    """
    import yaml

    from physid.errors import InputError

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{what} not found: {path}")
    text = read_text_file(path, what)
    try:
        return yaml.load(text, Loader=_yaml_loader())  # noqa: S506 - a SafeLoader subclass
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise InputError(f"invalid YAML: {first}", source=str(path)) from None


@contextmanager
def config_errors_name(path: str | os.PathLike[str] | None) -> Iterator[None]:
    """The InputErrors about a config's values (``config <key>: ...``) raised in the block name
    the file they come from; without it the user reads 'config gravity[2]: ...' not knowing
    which of the files given it is."""
    from physid.errors import ConfigError, InputError

    try:
        yield
    except ConfigError as error:
        if path is None:
            raise
        raise InputError(str(error), source=str(path)) from None


def config_section(raw: Any, allowed: set[str], where: str) -> dict[str, Any]:
    """A YAML config mapping with only ``allowed`` keys (``None`` is an empty one).

    Anything else is a ConfigError naming the section ``where``.
    """
    from physid.errors import ConfigError

    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config {where}: expected a mapping, got {type(raw).__name__}")
    unknown = sorted(set(map(str, raw)) - allowed)
    if unknown:
        raise ConfigError(f"config {where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}")
    return raw


def config_number(
    value: Any,
    where: str,
    *,
    positive: bool = True,
    optional: bool = False,
    low: float = -np.inf,
    high: float = np.inf,
) -> float | None:
    """A finite YAML number as float (> 0 if ``positive``; within [low, high]; ``None`` allowed
    if ``optional``). Anything else is a ConfigError naming the key ``where``.
    """
    from physid.errors import ConfigError

    if value is None and optional:
        return None
    # (an int beyond a float's range, 400 digits in the YAML, raises OverflowError in isfinite)
    finite = isinstance(value, float) and math.isfinite(value)
    finite |= isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1e308
    if not finite:
        shown = f"{value!r}"[:40] + ("..." if len(f"{value!r}") > 40 else "")
        raise ConfigError(f"config {where}: expected a finite number, got {shown}")
    if positive and value <= 0:
        raise ConfigError(f"config {where}: must be > 0, got {value!r}")
    if not low <= value <= high:
        bound = f"be <= {high:g}" if low == -np.inf else f"lie in [{low:g}, {high:g}]"
        raise ConfigError(f"config {where}: must {bound}, got {value!r}")
    return float(value)


def table_csv_text(columns: dict[str, np.ndarray], fmt: str = "%.10g") -> str:
    """CSV text with a header of the column names, one equal-length 1-D array per column."""
    buffer = StringIO()
    np.savetxt(
        buffer,
        np.column_stack(list(columns.values())),
        delimiter=",",
        header=",".join(columns),
        comments="",
        fmt=fmt,
    )
    return buffer.getvalue()


LOCK_NAME = ".physid.lock"  # inside an output folder while a run owns it (holds its pid)
OUTPUTS_NAME = ".physid-outputs.json"  # inside an output folder: the files the last run wrote
_held: dict[Path, int] = {}  # output folders this process owns, with a nesting count
_lock_fds: dict[Path, int] = {}  # open lock files of the owned folders (hold the flock)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def scratch_dir(kind: str) -> Path:
    """A private temporary folder ``physid-<kind>-<pid>-*`` for data spilled to disk (a long
    recording, its observations). Folders of the same kind left by processes that no longer
    exist (a killed run) are removed first, so a SIGKILL does not leak disk for good."""
    import shutil
    import tempfile

    root = Path(tempfile.gettempdir())
    for stale in root.glob(f"physid-{kind}-*-*"):
        pid = stale.name.split("-")[2]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"physid-{kind}-{os.getpid()}-"))


def _in_use(lock: Path, owner: int, option: str) -> Exception:
    from physid.errors import InputError

    return InputError(
        f"{lock.parent} is in use by another physid run (pid {owner}); wait for it to finish, "
        f"or delete {lock} if no such run exists",
        source=option,
    )


def _read_owner(lock: Path) -> int:
    try:
        return int(lock.read_text().strip() or "0")
    except (OSError, ValueError):
        return 0


def check_not_in_use(path: str | os.PathLike[str], option: str = "--out") -> None:
    """Fail early, naming ``option``, when another live run holds the folder's lock: the claim
    when the outputs are written would refuse it only after all the work (a demo or an online
    replay would run in full, printing its progress, before the 'in use' error). Tested with a
    non-blocking ``flock`` taken and released at once; the claim stays the one that decides."""
    target = Path(path)
    lock = target / LOCK_NAME
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: only the claim decides
        return
    try:
        if not lock.is_file() or target.resolve() in _held:
            return
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        raise _in_use(lock, _read_owner(lock), option) from None
    finally:
        os.close(fd)  # (releases the test lock)


def _take_lock(lock: Path, option: str) -> int:
    """Take the folder's lock; returns the open lock file (kept open while the run owns it).

    With ``fcntl`` (Linux, macOS) the kernel's advisory lock decides: it dies with its process,
    so a lock file left by a killed run is simply free, and two runs can never both hold it (a
    pid test races: two runs that both find a dead pid both remove the file and both proceed).
    The path must still name the locked file once we hold it — a finishing run unlinks it.
    Without ``fcntl`` (Windows) an exclusive create with a pid test stands in.
    """
    from physid.errors import InputError

    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        return _take_lock_by_pid(lock, option)
    for _ in range(20):
        fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise _in_use(lock, _read_owner(lock), option) from None
        try:
            current = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
            return fd
        os.close(fd)  # we locked a file its owner had just unlinked: try the new one
    raise InputError(f"cannot lock {lock.parent}", source=option)


def _take_lock_by_pid(lock: Path, option: str) -> int:  # pragma: no cover - Windows
    from physid.errors import InputError

    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            owner = _read_owner(lock)
            if owner and owner != os.getpid() and _alive(owner):
                raise _in_use(lock, owner, option) from None
            lock.unlink(missing_ok=True)  # left by a killed run
            continue
        os.write(fd, str(os.getpid()).encode())
        return fd
    raise InputError(f"cannot lock {lock.parent}", source=option)


def forget_inherited_locks() -> None:
    """In a forked worker: close the copies of the parent's lock files, so only the parent holds
    its folders' locks (a worker outliving a killed parent for a moment must not keep them)."""
    for fd in _lock_fds.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _lock_fds.clear()
    _held.clear()


def _release_lock(lock: Path, fd: int) -> None:
    """Unlink while still holding the lock (a waiter that opened the old file sees it is no
    longer the path's), then close (which releases it)."""
    lock.unlink(missing_ok=True)
    os.close(fd)


def _previous_outputs(target: Path) -> set[str]:
    try:
        listed = json.loads((target / OUTPUTS_NAME).read_text(encoding="utf-8"))
        return {str(name) for name in listed} if isinstance(listed, list) else set()
    except (OSError, ValueError):
        return set()


def _existing_files(target: Path) -> set[str]:
    if not target.is_dir():
        return set()
    return {
        str(p.relative_to(target))
        for p in target.rglob("*")
        if p.is_file() and p.name not in (LOCK_NAME, OUTPUTS_NAME)
    }


def _remove_stale_staging(target: Path) -> None:
    """Staging folders of this target left by a killed run (we hold the lock: none is live)."""
    import re

    pattern = re.compile(rf"^\.{re.escape(target.name)}\.(\d+)\.[^.]+\.staging$")
    for sibling in target.parent.glob(f".{target.name}.*.staging"):
        match = pattern.match(sibling.name)
        if match and int(match[1]) != os.getpid() and sibling.is_dir():
            shutil.rmtree(sibling, ignore_errors=True)


@contextmanager
def claim_output_dir(
    path: str | os.PathLike[str], *, overwrite: bool | None = None, option: str = "--out"
) -> Iterator[Path]:
    """Own the output folder ``path`` for the block: a lock file inside it (with the pid) makes
    a second run fail with a clear error; a lock or staging folder left by a killed run is
    cleaned up. With ``overwrite=False`` a folder holding files that physid did not write there
    is refused (``--overwrite`` to replace them); nested claims by one process are allowed.
    """
    from physid.errors import InputError

    target = check_output_dir(path, option).resolve()
    if target in _held:
        _held[target] += 1
        try:
            yield target
        finally:
            _held[target] -= 1
        return
    created = not target.exists()
    try:
        target.mkdir(parents=True, exist_ok=True)
    except OSError as error:  # /proc, a read-only mount: os.access said yes to root
        raise InputError(
            f"cannot create {target}: {error.strerror or error}", source=option
        ) from None
    lock = target / LOCK_NAME
    try:
        _lock_fds[target] = _take_lock(lock, option)
    except BaseException:
        if created:
            shutil.rmtree(target, ignore_errors=True)
        raise
    _held[target] = 1
    try:
        _remove_stale_staging(target)
        foreign = sorted(_existing_files(target) - _previous_outputs(target))
        if overwrite is False and foreign:
            shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
            raise InputError(
                f"{target} holds files that physid did not write ({shown}); choose an empty "
                "folder, or pass --overwrite to replace its content",
                source=option,
            )
        yield target
    finally:
        del _held[target]
        _release_lock(lock, _lock_fds.pop(target))
        if created and not any(target.iterdir()):
            target.rmdir()


@contextmanager
def atomic_output_dir(
    path: str | os.PathLike[str], *, overwrite: bool | None = None
) -> Iterator[Path]:
    """Yield a fresh staging folder whose files replace those of ``path`` only on success.

    Files are written into a hidden sibling folder; when the ``with`` block ends without an
    exception each staged file is moved into ``path`` (created if needed) with an atomic rename.
    On an exception the staging folder is removed and ``path`` is left untouched.

    The folder is owned meanwhile (:func:`claim_output_dir`). On success the files of the
    previous physid run that this one did not rewrite are removed (a stale validation figure
    must not sit beside new results); with ``overwrite=True`` every other file goes too; with
    ``overwrite=None`` (the default) files that physid never wrote are kept.
    """
    with claim_output_dir(path, overwrite=overwrite) as target:
        staging = Path(
            tempfile.mkdtemp(
                prefix=f".{target.name}.{os.getpid()}.", suffix=".staging", dir=target.parent
            )
        )
        try:
            yield staging
            written = {str(p.relative_to(staging)) for p in staging.rglob("*") if p.is_file()}
            stale = _previous_outputs(target) | (_existing_files(target) if overwrite else set())
            for name in sorted(written):
                destination = target / name
                destination.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / name, destination)
            for name in sorted(stale - written):
                (target / name).unlink(missing_ok=True)
            write_json_atomic(target / OUTPUTS_NAME, sorted(written))
        finally:
            shutil.rmtree(staging, ignore_errors=True)
