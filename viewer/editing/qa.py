"""Motion QA in the editing session (no GL, no ImGui): the motion checks (viewer.checks.motion)
run on the editor's current clip, their findings as rows the panel lists and the timeline marks,
a row's "go to" (the playhead to its first frame, its bone selected), and the feet in contact at
the playhead as markers the viewport draws.

The checks are run on demand (``enabled``: the panel's QA section is open; or a script asks
for ``result()``), once per clip and keys version: a 4,000-frame capture costs tens of
milliseconds, so they run on the frame that needs them, not on a thread. A clip's figures
(``ClipFigures``) are what ``check --json`` writes; the rows only parse the findings' pointers
(``clip/bone/frames a-b``), so the QA list, ``check`` and the batch report read the same data.
"""

from __future__ import annotations

import re
import time as clock
from dataclasses import dataclass, field

import numpy as np

from ..checks.findings import ERROR, INFO, WARNING, Finding
from ..errors import ViewerError
from ..options import Marker, MarkerKind, Status

CONTACT_COLOR = (0.75, 1.0, 0.0, 1.0)   # a foot in contact: a lime ring on its joint (the gizmo's Y is green)
SEVERITY_ORDER = {INFO: 0, WARNING: 1, ERROR: 2}
_FRAMES = re.compile(r"(?:^|/)frames? (\d+)(?:-(\d+))?$")


@dataclass(frozen=True)
class QAItem:
    """One finding of the motion checks as the panel shows it: the bone it names (None: the
    whole clip), its frames as named (``first``, ``last``; a loop seam names last-0) and the
    ranges the timeline marks ((a, b) with a <= b)."""

    finding: Finding
    bone: str | None
    first: int | None
    last: int | None

    @property
    def ranges(self) -> list:
        if self.first is None:
            return []
        if self.first <= self.last:
            return [(self.first, self.last)]
        return [(self.last, self.last), (self.first, self.first)]  # a loop seam: its two ends

    @property
    def frames(self) -> str:
        if self.first is None:
            return ""
        return f"{self.first}" if self.first == self.last else f"{self.first}-{self.last}"

    @property
    def code(self) -> str:
        return self.finding.code

    @property
    def severity(self) -> str:
        return self.finding.severity


def parse_item(finding: Finding, clip_name: str) -> QAItem:
    """A QAItem from a motion finding whose pointer is ``clip/bone/frames a-b`` (ClipCheck.pointer;
    a clip or bone name may hold slashes: the clip is known and the frames are the last part)."""
    pointer = finding.pointer
    if pointer.startswith(clip_name):
        pointer = pointer[len(clip_name):].lstrip("/")
    first = last = None
    match = _FRAMES.search(pointer)
    if match:
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        pointer = pointer[:match.start()]
    return QAItem(finding, pointer or None, first, last)


@dataclass
class QAResult:
    """The motion checks on one clip: ``items`` (most severe first, then by frame), the figures
    (ClipFigures, None where the clip could not be sampled), the checked frames' times, each
    foot's contact per frame ({bone name: (F,) bool}) and its Bone (``feet``), ``error`` (why nothing was checked) and
    the seconds it took."""

    clip: object
    version: int
    items: list = field(default_factory=list)
    figures: object = None
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    contact: dict = field(default_factory=dict)
    feet: dict = field(default_factory=dict, repr=False)   # {bone name: Bone} of the feet checked
    error: str = ""
    seconds: float = 0.0

    def time_of(self, frame: int) -> float:
        """The clip time of a checked frame."""
        if not len(self.times):
            return 0.0
        return float(self.times[int(np.clip(frame, 0, len(self.times) - 1))])

    def frame_at(self, time: float) -> int | None:
        """The checked frame nearest the clip time ``time`` (None: nothing checked)."""
        if not len(self.times):
            return None
        if len(self.times) == 1:
            return 0
        step = float(self.times[1] - self.times[0])  # frames are evenly spaced (clip_frame_times)
        return int(min(max(round((time - float(self.times[0])) / step), 0), len(self.times) - 1))

    def feet_in_contact(self, time: float) -> list:
        """The feet's bone names in contact at the frame nearest ``time``."""
        frame = self.frame_at(time)
        if frame is None:
            return []
        return [bone for bone, contact in self.contact.items() if len(contact) and contact[frame]]

    def counts(self) -> dict:
        return {severity: sum(item.severity == severity for item in self.items) for severity in (ERROR, WARNING, INFO)}


def per_frame_contact(pairs) -> np.ndarray:
    """A foot's contact per frame (F,) from GMD's per step (F-1,) (frames f and f+1 both low):
    a frame is in contact where a step that starts or ends there is."""
    pairs = np.asarray(pairs, dtype=bool)
    frames = np.zeros(len(pairs) + 1, dtype=bool)
    frames[:-1] |= pairs
    frames[1:] |= pairs
    return frames


def check_clip(scene, clip, options=None) -> QAResult:
    """The motion checks (viewer.checks.motion) on one clip of ``scene`` as a QAResult; a clip
    the checks cannot take (no keys, too many frames) gives a result with its ``error``."""
    from ..checks.motion import clip_frame_times, motion_findings

    started = clock.perf_counter()
    result = QAResult(clip, clip.keys_version)
    try:
        result.times, _ = clip_frame_times(clip)
        found, figures = motion_findings(scene, options, clips=[clip])
    except ViewerError as error:
        result.error, result.times = str(error), np.zeros(0)
        result.seconds = clock.perf_counter() - started
        return result
    result.figures = figures[0] if figures else None
    items = [parse_item(f, clip.name) for f in found]
    items.sort(key=lambda item: (-SEVERITY_ORDER.get(item.severity, 0), item.first if item.first is not None else -1))
    result.items = items
    if result.figures is not None:
        from ..model.retarget import main_skeleton

        result.contact = {foot["bone"]: per_frame_contact(foot["contact"]) for foot in result.figures.feet}
        bones = {bone.name: bone for bone in main_skeleton(scene).bones}
        result.feet = {name: bones[name] for name in result.contact if name in bones}
    result.seconds = clock.perf_counter() - started
    return result


class MotionQA:
    """The QA of an Editor's current clip (``editor.qa``): ``result()`` checks it when its keys
    changed since (cached per clip and ``keys_version``), ``go_to`` moves the playhead and the
    selection to a finding, ``contact_markers`` draws the feet in contact at the playhead."""

    def __init__(self, editor, options=None):
        self.editor = editor
        self.options = options              # MotionOptions (None: found ground, feet by name)
        self.enabled = False                # QA on (the panel's QA section open): results kept current, marks drawn
        self.show_contacts = True           # the feet in contact marked in the viewport
        self.chosen: QAItem | None = None   # the row last gone to
        self._cache: dict = {}              # id(clip) -> QAResult

    def result(self, clip=None) -> QAResult | None:
        """The checks on ``clip`` (default: the current clip), run now if its keys changed since
        they last ran; None when there is no clip."""
        clip = self.editor.clip if clip is None else clip
        if clip is None:
            return None
        cached = self._cache.get(id(clip))
        if cached is not None and cached.clip is clip and cached.version == clip.keys_version:
            return cached
        scene = self.editor.scene
        # Only the scene's clips are kept (a clip remade by the bone map, or deleted, goes).
        alive = {id(c) for c in scene.animations}
        self._cache = {key: value for key, value in self._cache.items() if key in alive}
        self._cache[id(clip)] = result = check_clip(scene, clip, self.options)
        return result

    def current(self) -> QAResult | None:
        """The current clip's result where QA is on (checked if stale), else None."""
        return self.result() if self.enabled else None

    def go_to(self, item: QAItem) -> None:
        """The playhead to the finding's first frame (paused) and its bone selected, as the
        panel's QA row does; ``editor.status`` says what the finding is."""
        from ..model.retarget import main_skeleton

        editor = self.editor
        result = self.result()
        if result is None:
            raise ViewerError("no clip: QA findings belong to a clip")
        self.chosen = item
        if item.first is not None:
            editor.pause()
            editor.seek(result.time_of(item.first))
        if item.bone is not None and editor.scene.skeletons:
            bone = next((b for b in main_skeleton(editor.scene).bones if b.name == item.bone), None)
            bone = bone if bone is not None else editor.scene.find_bone(item.bone)
            if bone is not None:
                editor.select(bone)
        editor.status = Status(item.finding.message)

    def contact_markers(self) -> list:
        """A ring on each foot in contact at the playhead (world space, after the frame's
        ``scene.prepare()``), where QA is on and shows contacts."""
        if not (self.enabled and self.show_contacts):
            return []
        result = self.result()
        if result is None or not result.contact:
            return []
        editor = self.editor
        markers = []
        for name in result.feet_in_contact(editor.playback.time):
            bone = result.feet.get(name)
            if bone is not None:
                point = tuple(float(v) for v in bone.get_absolute_position(editor.mesh_of(bone)))
                markers.append(Marker(MarkerKind.RING, (point,), CONTACT_COLOR))
        return markers


__all__ = ["CONTACT_COLOR", "MotionQA", "QAItem", "QAResult", "check_clip", "parse_item", "per_frame_contact"]
