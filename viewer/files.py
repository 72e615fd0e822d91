"""Output files: the one way boneviewer writes a file or a folder the user sees, and the one check
that no output lands on a file the command reads.

Every file is written whole or not at all: into a hidden temporary name beside it, renamed into
place when complete, so a crash leaves no half file under the final name and an existing one
whole. A file replaced keeps its mode (as editors and ``cp`` keep it: a private 0600 file stays
private), and an output that is a symlink is followed to the file it names (the link stays). Temporary files and folders are made with ``os.open``/``os.mkdir`` and the modes 0o666 and
0o777, so what is renamed into place has the user's umask, as any file a program writes should
(``tempfile.mkstemp`` and ``mkdtemp`` make 0600 and 0700, private to the owner).
"""

from __future__ import annotations

import io
import itertools
import os
import shutil
import stat
from contextlib import contextmanager
from pathlib import Path

from .errors import ViewerError

_counter = itertools.count()


# --- temporary names beside the output --------------------------------------------------------
def temporary_path(path) -> Path:
    """A hidden name beside ``path``, unused now and unique to this process and call, that keeps
    its suffix (encoders pick the format by it)."""
    path = Path(path)
    while True:
        candidate = path.with_name(f".{path.stem}.tmp{os.getpid()}-{next(_counter)}{path.suffix}")
        if not os.path.lexists(candidate):
            return candidate


def final_path(path) -> Path:
    """Where writing ``path`` lands: the file a symlink names (the link itself stays), else ``path``."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def place(temporary, path) -> None:
    """Rename the finished ``temporary`` (made beside ``final_path(path)``) over ``path``'s file,
    with that file's mode when there is one."""
    target = final_path(path)
    try:
        os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
    except FileNotFoundError:
        pass
    os.replace(temporary, target)


def discard(path) -> None:
    """Remove a temporary file if it is there (a failed write leaves nothing behind)."""
    try:
        os.unlink(path)
    except OSError:
        pass


def _create(path: Path):
    """A new file, opened for binary writing, made with the user's umask (never an existing one:
    "x" is O_CREAT | O_EXCL; Python's files are close-on-exec). Opened by name, so that the
    handle's ``name`` is the path (Pillow picks its one encoder plugin by the suffix)."""
    return open(path, "xb")


@contextmanager
def open_atomically(path, mode: str = "wb", fsync: bool = False):
    """A new temporary file beside ``path`` (opened with ``mode``, "wb" or "w" for UTF-8 text)
    to fill in the with block; renamed to ``path`` when the block ends, removed when it raises.
    OS errors pass through, for the caller to say in its words."""
    path = Path(path)
    temporary = temporary_path(final_path(path))
    try:
        with _create(temporary) as raw:
            handle = raw if mode == "wb" else io.TextIOWrapper(raw, encoding="utf-8")
            yield handle
            handle.flush()
            if fsync:
                os.fsync(raw.fileno())
            if handle is not raw:
                handle.detach()
        place(temporary, path)
    except BaseException:
        discard(temporary)
        raise


def write_files(files, what: str | None = None) -> None:
    """Write each (path, bytes or str) to a temporary name beside it, then rename them all into
    place in the order given (a model's side files first, the file that names them last). The
    set is written whole or not at all: should a rename fail part way (a .gltf's .bin placed,
    the .gltf not), the files already placed are put back as they were, so an old .gltf never
    names a new .bin. An OS error removes every temporary file and becomes one ViewerError line
    about ``what`` (default: the last file)."""
    what = what or files[-1][0]
    files = [(final_path(path), data.encode("utf-8") if isinstance(data, str) else data) for path, data in files]
    temporary, placed = [], []  # placed: (target, its old file's backup name or None)
    try:
        for target, data in files:
            name = temporary_path(target)
            with _create(name) as out:
                temporary.append(name)
                out.write(data)
        for name, (target, _) in zip(temporary, files):
            placed.append((target, _backup(target)))
            place(name, target)
    except BaseException as error:
        for name in temporary:
            discard(name)
        _put_back(placed)
        if isinstance(error, OSError):
            raise ViewerError(f"cannot write {what}: {error.strerror or error}") from None
        raise
    for _, backup in placed:
        if backup is not None:
            discard(backup)


def _backup(target: Path):
    """A hard link to ``target``'s current file under a temporary name (None when there is
    none, or the file system cannot link: then that file cannot be put back)."""
    if not os.path.isfile(target):
        return None
    backup = temporary_path(target)
    try:
        os.link(target, backup)
    except OSError:
        return None
    return backup


def _put_back(placed) -> None:
    """Undo the renames of a failed write_files, last first: each old file back, a new one removed."""
    for target, backup in reversed(placed):
        try:
            if backup is not None:
                os.replace(backup, target)
                # Renaming one hard link over another of the same file does nothing (POSIX): so it is
                # when the failed rename left the old file in place. The backup name goes then.
                if os.path.lexists(backup):
                    os.unlink(backup)
            elif os.path.lexists(target):
                os.unlink(target)
        except OSError:
            pass


def write_file(path, data) -> None:
    """One file (bytes, or str as UTF-8) written whole or not at all, with the user's umask."""
    write_files([(path, data)])


def temporary_folder(beside) -> Path:
    """A new, empty, hidden folder beside ``beside`` (which need not exist), made with the
    user's umask: fill it, then ``replace_folder`` it into place."""
    beside = Path(beside)
    while True:
        candidate = beside.with_name(f".{beside.name}.tmp{os.getpid()}-{next(_counter)}")
        try:
            os.mkdir(candidate, 0o777)
            return candidate
        except FileExistsError:
            continue


def replace_folder(new: Path, folder: Path) -> None:
    """``new`` renamed to ``folder``; a folder already there is moved aside first and removed
    after, so ``folder`` is always whole, the old or the new."""
    new, folder = Path(new), Path(folder)
    old = None
    if os.path.lexists(folder):
        old = temporary_folder(folder)
        os.rmdir(old)  # a free name beside it: os.replace needs the destination absent (or empty)
        os.replace(folder, old)
    os.replace(new, folder)
    if old is not None:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old, ignore_errors=True)
        else:
            discard(old)  # a link (check_folder_outputs refuses a plain file): the link goes, not its target


def unused_name(path, limit: int = 1000) -> Path:
    """``path`` when nothing is there, else the first of ``<stem>-1<suffix>``, ``-2``, ... that is
    free: for an output the user did not name (view's picture with no display), which must not
    replace a file. A ViewerError after ``limit`` names, all taken."""
    path = Path(path)
    if not os.path.lexists(path):
        return path
    for number in range(1, limit):
        candidate = path.with_name(f"{path.stem}-{number}{path.suffix}")
        if not os.path.lexists(candidate):
            return candidate
    raise ViewerError(f"{path} and {path.stem}-1{path.suffix} to {path.stem}-{limit - 1}{path.suffix} all exist; "
                      "give --screenshot FILE.png")


# --- outputs that would land on inputs --------------------------------------------------------
def _identity(path: Path):
    """What makes two names one file: the device and inode when it exists (hard links, case-
    insensitive folders, symlinks), else the resolved path."""
    try:
        info = os.stat(path)
        return info.st_dev, info.st_ino
    except OSError:
        return _resolved(path)


def check_outputs(outputs, inputs: dict | None = None, replaceable=()) -> None:
    """Refuse, in one ViewerError line, before anything is written:

    - two outputs that are one file (``outputs``: (label, path) pairs, the label saying which
      option wrote it, e.g. "--out a.gltf");
    - an output that is a file the command reads (``inputs``: {path: what uses it, e.g.
      "buffer 0 of the model a.gltf"}), unless that input is in ``replaceable`` (the files
      ``--force`` lets the output replace).
    """
    read = {}
    for path, what in (inputs or {}).items():
        read.setdefault(_identity(Path(path)), (Path(path), what))
    allowed = {_identity(Path(path)) for path in replaceable}
    seen = {}
    for label, path in outputs:
        path = Path(path)
        key = _identity(path)
        if key in seen:
            raise ViewerError(f"{label}: writes {path}, which {seen[key][0]} also writes ({seen[key][1]}); "
                              "give another name")
        seen[key] = (label, path)
        if key in read and key not in allowed:
            source, what = read[key]
            raise ViewerError(f"{label}: would overwrite {source}, {what}; give another output name")


def _resolved(path) -> Path:
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):
        return Path(path).absolute()


def check_folder_outputs(label: str, folders, inputs: dict) -> None:
    """Refuse a folder an output replaces whole (``label`` writes each of ``folders``) when it is,
    or holds, a file the command reads (``inputs``: {path: what uses it}), or is a file itself.
    Linear in the inputs' depth, so a library of thousands of models costs little."""
    holders = {}
    for path, what in inputs.items():
        resolved = _resolved(path)
        for folder in (resolved, *resolved.parents):
            holders.setdefault(folder, (path, what))
    for folder in folders:
        folder = Path(folder)
        held = holders.get(_resolved(folder))
        if held is not None:
            raise ViewerError(f"{label}: would replace {folder}, which holds {held[0]}, {held[1]}; give another "
                              "output folder")
        if os.path.lexists(folder) and not folder.is_dir():
            raise ViewerError(f"{label}: would replace {folder}, a file, with a folder; give another output folder")


def same_file(a, b) -> bool:
    """Whether ``a`` and ``b`` name one file (False when either is not there)."""
    import os

    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
