"""Scripts that drive the viewer: load a Python file (or take an object), call its ``setup(app)``
and ``update(app, t, dt)``, report faults as one line, and reload the file when it changes.

A script is the user's own code and runs with the user's own rights, like a Blender script:
nothing here sandboxes it. What this module guarantees is that a fault in it never takes the
viewer down: a syntax error or an exception in ``setup``/``update`` prints one line
``script error: FILE:LINE: message`` (``debug``: the traceback too), shows it in the panel, puts
the pose back as the last good update left it, and ``update`` is not called again until the file
changes (with ``watch``) and loads cleanly.

No GL and no ImGui: the window session and the headless renderer both host a ScriptRunner,
with their own ``app`` object (viewer.editing.script_app).
"""

from __future__ import annotations

import hashlib
import itertools
import os
import sys
import time
import traceback
import types
from pathlib import Path
from typing import Callable

from ..errors import ViewerError, why_missing
from ..options import Status

WATCH_INTERVAL = 0.2        # seconds between two looks at a watched file (a reload lands within ~0.2 s)
SLOW_UPDATE = 0.050         # an update slower than this is reported with its time
SNAPSHOT_BONE_LIMIT = 256   # up to this many bones the pose is saved before each update, to undo a fault
MAX_SCRIPT_BYTES = 16 * 2**20
_module_numbers = itertools.count(1)


class FileWatcher:
    """Notices that a file was saved: its (mtime, size, content hash) changed.

    Polled, not notified: ``changed()`` looks at the file at most every ``interval`` seconds
    and is cheap in between, so the frame loop may call it every frame. A file that is missing
    for a moment (an editor saving by delete and rename) is not a change; its return is.
    """

    def __init__(self, path, interval: float = WATCH_INTERVAL, clock: Callable[[], float] = time.monotonic):
        self.path = Path(path)
        self.interval = interval
        self.clock = clock
        self.signature = self._signature()
        self._next_look = clock() + interval

    def _signature(self):
        try:
            stat = self.path.stat()
            if stat.st_size > MAX_SCRIPT_BYTES:
                return (stat.st_mtime_ns, stat.st_size, None)
            digest = hashlib.sha1(self.path.read_bytes()).hexdigest()
        except OSError:
            return None
        return (stat.st_mtime_ns, stat.st_size, digest)

    def changed(self, force: bool = False) -> bool:
        """True once per change of the file (``force``: look now, whatever the interval)."""
        now = self.clock()
        if not force and now < self._next_look:
            return False
        self._next_look = now + self.interval
        signature = self._signature()
        if signature is None or signature == self.signature:
            return False
        self.signature = signature
        return True


class ScriptFault(Exception):
    """A fault in a script, with its one-line report (``str``) and the original traceback."""

    def __init__(self, line: str, details: str):
        super().__init__(line)
        self.line, self.details = line, details


def check_script_path(path, option: str = "--script") -> Path:
    """A script path a user gave: an existing, readable .py file (checked before any window)."""
    path = Path(path)
    if not path.is_file():
        raise ViewerError(f"{option} {path}: {why_missing(path)}")
    if not os.access(path, os.R_OK):
        raise ViewerError(f"{option} {path}: not readable")
    return path


class ScriptRunner:
    """One script for one host (a window session or a headless render).

    ``source``: a path to a ``.py`` file, or any object with ``setup(app)`` and/or
    ``update(app, t, dt)`` (a notebook's object; it cannot be reloaded), or None (only
    ``also_watch``). ``show(status)``
    puts a line in the panel (None: console only). ``watch``: reload the file, and call
    ``setup`` again, when it changes; ``also_watch``: ``{path: callback}`` for other files
    (the ``--pose`` file), called when they change.

    ``generation`` counts successful loads; ``failed`` is True while update is stopped by a fault.
    """

    def __init__(self, source, *, show: Callable[[Status], None] | None = None, debug: bool = False,
                 watch: bool = False, also_watch=None, quiet: bool = False,
                 clock: Callable[[], float] = time.perf_counter, watch_clock: Callable[[], float] = time.monotonic):
        self.debug, self.quiet, self.clock = debug, quiet, clock
        self._show = show
        if source is None:  # no script: only the other watched files (--watch with --pose alone)
            self.path, self.target, self.name = None, None, "(none)"
        elif isinstance(source, (str, os.PathLike)):
            self.path: Path | None = Path(source)
            self.name = str(source)
            self.target = None
        else:
            if not (callable(getattr(source, "setup", None)) or callable(getattr(source, "update", None))):
                raise ViewerError(f"script {source!r}: expected a path to a .py file or an object with "
                                  "setup(app) and/or update(app, t, dt)")
            self.path, self.target = None, source
            self.name = getattr(source, "__name__", type(source).__name__)
        self.watchers: list[tuple[FileWatcher, Callable[[], None] | None]] = []
        if watch and self.path is not None:
            self.watchers.append((FileWatcher(self.path, clock=watch_clock), None))
        for path, callback in (also_watch or {}).items():
            self.watchers.append((FileWatcher(path, clock=watch_clock), callback))
        self.generation = 0
        self.failed = False
        self.load_failed = False   # the last load failed (nothing of the script ran)
        self.last_error: str | None = None
        self.update_seconds = 0.0
        self._reported_slow = False

    # --- loading -------------------------------------------------------------------------------
    def start(self, app) -> bool:
        """Load the script and call its setup (the model has loaded). False after a fault."""
        return self.load() and self.setup(app)

    def load(self) -> bool:
        """Read and run the script file (defining its functions). False, with ``load_failed``
        set, when it cannot be: a syntax or import error, or neither setup nor update defined."""
        self.load_failed = False
        ok = self._load()
        if not ok:
            self.load_failed = True
        return ok

    def _load(self) -> bool:
        if self.path is None:
            self.generation += 1
            self.failed = False
            return True
        try:
            try:
                source = self.path.read_bytes()
            except OSError as error:
                raise ViewerError(f"cannot read it: {error.strerror}") from None
            module_name = f"boneviewer_script_{next(_module_numbers)}"
            module = types.ModuleType(module_name)
            module.__file__ = str(self.path)
            code = compile(source, str(self.path), "exec", dont_inherit=True)
            sys.modules[module_name] = module  # dataclasses and pickling look a class's module up here
            try:
                exec(code, module.__dict__)
            except BaseException:
                del sys.modules[module_name]
                raise
        except Exception as error:  # a script's fault, whatever it is, is reported, never raised
            self._fault(error)
            return False
        missing = _missing_functions(module, self.name)
        if missing is not None:
            sys.modules.pop(module_name, None)
            self.failed = True
            self.load_failed = True
            self.last_error = f"script error: {missing}"
            self._report(self.last_error)
            return False
        if self.target is not None:
            sys.modules.pop(getattr(self.target, "__name__", ""), None)
        self.target = module
        self.generation += 1
        self.failed = False
        self._reported_slow = False
        return True

    def setup(self, app) -> bool:
        """Call the script's setup(app), if it has one (after a load, or a new model)."""
        if self.failed or self.target is None:
            return False
        function = getattr(self.target, "setup", None)
        if function is None:
            return True
        return self._call(app, function, app)

    # --- every frame -----------------------------------------------------------------------------
    def poll(self, app) -> bool:
        """Look at the watched files; reload a changed script (and call setup). True on a reload."""
        reloaded = False
        for watcher, callback in self.watchers:
            if not watcher.changed():
                continue
            if callback is not None:
                callback()
            else:
                reloaded = True
                if self._load():
                    self.tell(Status(f"script {self.name} reloaded"), console=False)  # setup may say more
                    self.setup(app)
        return reloaded

    def update(self, app, t: float, dt: float) -> bool:
        """Call update(app, t, dt) unless a fault stopped it; False after a (new) fault."""
        if self.failed or self.target is None:
            return False
        function = getattr(self.target, "update", None)
        if function is None:
            return True
        started = self.clock()
        ok = self._call(app, function, app, t, dt)
        self.update_seconds = self.clock() - started
        if ok and self.update_seconds > SLOW_UPDATE:
            text = f"script {self.name}: update took {self.update_seconds * 1000:.0f} ms (slow: over " \
                   f"{SLOW_UPDATE * 1000:.0f} ms per frame)"
            self.tell(Status(text), console=not self._reported_slow)
            self._reported_slow = True
        return ok

    # --- faults ----------------------------------------------------------------------------------
    def _call(self, app, function, *args) -> bool:
        snapshot = _pose_snapshot(app)
        try:
            function(*args)
        except Exception as error:
            if snapshot is not None:
                _restore(app, snapshot)  # the last good pose, not a half-made one
            self._fault(error)
            return False
        return True

    def _fault(self, error: BaseException) -> None:
        self.failed = True
        line = f"script error: {self.location(error)}: {describe(error)}"
        self.last_error = line
        if not self.quiet and self.debug:
            traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
        self._report(line)

    def _report(self, line: str) -> None:
        if not self.quiet:
            print(line, file=sys.stderr, flush=True)
        if self._show is not None:
            self._show(Status.error(line))

    def location(self, error: BaseException) -> str:
        """FILE:LINE of the fault: the deepest frame in the script's own file."""
        if isinstance(error, SyntaxError) and error.filename == self._filename():
            return f"{self.name}:{error.lineno}"
        frames = traceback.extract_tb(error.__traceback__)
        filename = self._filename()
        mine = [frame for frame in frames if frame.filename == filename]
        if mine:
            return f"{self.name}:{mine[-1].lineno}"
        if frames:
            return f"{frames[-1].filename}:{frames[-1].lineno}"
        return f"{self.name}:?"

    def _filename(self) -> str | None:
        if self.path is not None:
            return str(self.path)
        for name in ("update", "setup"):
            code = getattr(getattr(self.target, name, None), "__code__", None)
            if code is not None:
                return code.co_filename
        return None

    def tell(self, status: Status, console: bool = True) -> None:
        """A line for the user: the console (unless quiet) and the panel."""
        if console and not self.quiet:
            print(str(status) if status.is_error else status.text, flush=True)
        if self._show is not None:
            self._show(status)


EXPECTED_FUNCTIONS = ("setup", "update")


def _missing_functions(module, name: str) -> str | None:
    """None when the script defines setup or update; else what it defines instead, and the
    expected name nearest to one of them (a misspelt ``udpate`` would otherwise do nothing)."""
    import difflib

    if any(callable(getattr(module, expected, None)) for expected in EXPECTED_FUNCTIONS):
        return None
    defined = sorted(key for key, value in vars(module).items()
                     if isinstance(value, types.FunctionType) and value.__module__ == module.__name__)
    message = f"{name}: defines neither setup(app) nor update(app, t, dt)"
    if not defined:
        return message + " (it defines no functions)"
    message += f" (it defines {', '.join(defined[:8])}{', ...' if len(defined) > 8 else ''})"
    best = max(((difflib.SequenceMatcher(None, have, expected).ratio(), expected) for have in defined
                for expected in EXPECTED_FUNCTIONS))
    if best[0] >= 0.6:
        message += f"; did you mean {best[1]}?"
    return message


def describe(error: BaseException) -> str:
    if isinstance(error, SyntaxError):
        return f"SyntaxError: {error.msg}"
    if isinstance(error, ViewerError):
        return str(error)
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _pose_snapshot(app):
    """The pose (every bone's local TRS) when small enough to save every frame, else None."""
    from .pose import pose_of

    scene = getattr(app, "scene", None)
    if scene is None or sum(len(s.bones) for s in scene.skeletons) > SNAPSHOT_BONE_LIMIT:
        return None
    return pose_of(scene)


def _restore(app, snapshot) -> None:
    from .pose import set_bone_pose

    scene = app.scene
    for skeleton in scene.skeletons:
        for bone in skeleton.bones:
            parts = snapshot["bones"].get(bone.name)
            if parts is not None:
                set_bone_pose(bone, **parts)
