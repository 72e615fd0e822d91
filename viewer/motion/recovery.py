"""A mix that survives a crash: the window's mix (actions and layers) saved to a recovery file
every 30 s and on exit, and offered back by the next ``boneviewer view`` of the same model, as
Blender's Recover Auto Save (GL-free; the window calls ``tick``, ``close``, ``offer`` and
``recover``).

Where: ``$XDG_STATE_HOME/boneviewer/recovery`` (~/.local/state when unset or relative), one
file per model, named by its stem and a hash of its absolute path (the built-in character has
one too). Each save is written whole (a temporary file renamed into place). A session writes
only once its mix differs from the one the model started with (the action times a playing
clip moves do not count): opening a model and closing it again leaves the last recovery file as
it was, still to be offered.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import time as _time
from dataclasses import dataclass
from pathlib import Path

from ..errors import ViewerError

FORMAT = "boneviewer-mix-recovery"
VERSION = 1
INTERVAL = 30.0  # seconds between saves


def recovery_directory() -> Path:
    """$XDG_STATE_HOME/boneviewer/recovery (~/.local/state when XDG_STATE_HOME is unset or relative)."""
    base = os.environ.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(base) / "boneviewer" / "recovery"


def model_key(model_path) -> str:
    """The model as the recovery file names it: its absolute path (None: the built-in character)."""
    return "built-in character" if model_path is None else str(Path(model_path).resolve())


def recovery_path(model_path, folder: Path | None = None) -> Path:
    key = model_key(model_path)
    stem = "character" if model_path is None else Path(model_path).stem
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)[:40] or "model"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return (folder or recovery_directory()) / f"{stem}-{digest}.mix.json"


def _settings(mix: dict) -> dict:
    """The mix without what playing moves by itself (the clock and the actions' times)."""
    settings = copy.deepcopy(mix)
    settings.pop("clock", None)
    for action in settings.get("actions", []):
        if isinstance(action, dict):
            action.pop("time", None)
    return settings


@dataclass(frozen=True)
class RecoveryOffer:
    """A recovery file found for the model: its mix, and when it was saved (seconds since the epoch)."""

    path: Path
    saved: float
    mix: dict

    @property
    def label(self) -> str:
        """"Recover the mix saved at HH:MM" (the date too when it was not today)."""
        when = _time.localtime(self.saved)
        today = _time.localtime()
        shown = _time.strftime("%H:%M", when) if when[:3] == today[:3] else _time.strftime("%Y-%m-%d %H:%M", when)
        return f"Recover the mix saved at {shown}"


class MixRecovery:
    """The recovery file of one model in one session. Make it when the model opens: it reads
    the earlier session's file first (``offer``), before this one writes anything."""

    def __init__(self, scene, model_path, folder: Path | None = None, interval: float = INTERVAL, clock=_time.time):
        self.scene, self.model_path = scene, model_path
        self.path = recovery_path(model_path, folder)
        self.interval, self.clock = interval, clock
        self.started = _settings(scene.mixer.snapshot())  # the mix the model starts with
        self.offer = self._read_offer()
        self._last_save = clock()
        self._written = None  # the settings and times last written by this session

    def _read_offer(self) -> RecoveryOffer | None:
        """The earlier session's mix, if it is one for this model that loads onto it and is not
        the mix the model starts with; a file that is not (damaged, another version) is no offer."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
            return None
        mix, saved = data.get("mix"), data.get("saved")
        if data.get("model") != model_key(self.model_path) or not isinstance(mix, dict) or \
                isinstance(saved, bool) or not isinstance(saved, (int, float)):
            return None
        if _settings(mix) == self.started:
            return None
        from .files import _checked

        try:
            _checked(self.scene.mixer, mix, "recovered mix")  # it must still fit the model: checked, nothing changed
        except ViewerError:
            return None
        return RecoveryOffer(self.path, float(saved), mix)

    # --- the window's calls ---------------------------------------------------------------------
    def tick(self) -> bool:
        """Once a frame: save when ``interval`` seconds have passed since the last save. True
        when it wrote."""
        now = self.clock()
        if now - self._last_save < self.interval:
            return False
        self._last_save = now
        return self.save()

    def close(self) -> bool:
        """On exit (or another model opened): the last save."""
        return self.save()

    def save(self) -> bool:
        """Write the mix now, whole, if it differs from the one the model started with and from
        the last one written. An OS error is returned as False (the window must go on)."""
        mix = self.scene.mixer.snapshot()
        settings = _settings(mix)
        if settings == self.started and self._written is None:
            return False  # untouched: the earlier session's file (an offer, maybe) stays
        if self._written == mix:
            return False
        from ..files import open_atomically

        record = {"format": FORMAT, "version": VERSION, "model": model_key(self.model_path),
                  "saved": self.clock(), "mix": mix}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open_atomically(self.path, "w") as handle:
                handle.write(json.dumps(record) + "\n")
        except OSError:
            return False
        self._written = mix
        self.offer = None  # this session's mix is the one to recover now
        return True

    def recover(self) -> None:
        """Load the offered mix into the scene's mixer (one ViewerError line if it no longer fits)."""
        offer = self.offer
        if offer is None:
            raise ViewerError("no recovered mix to load for this model")
        from .files import apply_mix

        apply_mix(self.scene.mixer, offer.mix, f"recovered mix {str(offer.path)!r}")
        self.offer = None

    def dismiss(self) -> None:
        self.offer = None
