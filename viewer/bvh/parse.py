"""BVH text to a checked hierarchy and a (frames, channels) float64 array.

Every count is bounded before it is used: the file's size, the joints and nesting as they are
read, the CHANNELS counts, and the declared frame count against the rows the file really has, so
a hostile file costs milliseconds and nothing is allocated in proportion to a number it declares.
A problem raises one ViewerError naming the file and the line.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import ViewerError
from ..model import native
from ..model.checks import LIMIT_TEXT, MAX_MAGNITUDE, fits
from ..words import counted

MAX_FILE_BYTES = 512 * 1024 * 1024
MAX_JOINTS = 4096  # joints and End Sites together
MAX_DEPTH = 256
CHANNEL_NAMES = ("Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation")
MAX_FRAMES = 10_000_000


@dataclass
class Joint:
    name: str
    parent: int  # index into the joint list, -1 for the root
    offset: np.ndarray  # (3,) in the file's units and axes
    channels: list[str] = field(default_factory=list)  # as the CHANNELS line lists them
    first_column: int = 0  # where its channels start in a MOTION row
    end_site: bool = False
    line: int = 0
    renamed_from: str = ""  # the name the file gives, when another joint has it already
    name_line: int = 0  # then the line of the joint that has it


@dataclass
class Motion:
    joints: list[Joint]
    frame_time: float
    values: np.ndarray  # (frames, channels) float64
    channel_count: int


class BvhError(ViewerError):
    pass


class _Tokens:
    """The hierarchy's words with their line numbers, read one at a time."""

    def __init__(self, path: Path, lines: list[str], start: int):
        self.path, self.lines, self.line_index, self.words, self.pos = path, lines, start, [], 0

    def error(self, message: str, line: int | None = None) -> BvhError:
        return BvhError(f"{self.path}: line {self.line if line is None else line}: {message}")

    @property
    def line(self) -> int:
        return self.line_index  # 1-based number of the line the last word came from

    def next(self, what: str) -> str:
        while self.pos >= len(self.words):
            if self.line_index >= len(self.lines):
                if not self.lines:  # there is no line 0 to name
                    raise BvhError(f"{self.path}: the file is empty; a BVH file starts with HIERARCHY")
                raise self.error(f"the file ends before {what}")
            self.words = self.lines[self.line_index].split()
            self.line_index += 1
            self.pos = 0
        word = self.words[self.pos]
        self.pos += 1
        return word

    def rest_of_line(self) -> list[str]:
        words = self.words[self.pos:]
        self.pos = len(self.words)
        return words

    def number(self, what: str) -> float:
        word = self.next(what)
        try:
            value = float(word)
        except ValueError:
            raise self.error(f"{what}: expected a number, got {word[:40]!r}") from None
        if not abs(value) <= MAX_MAGNITUDE:  # as checks.fits: it must fit float32's products
            raise self.error(f"{what}: {word[:40]!r} is not a finite number up to {LIMIT_TEXT}")
        return value


def read_bvh(path: Path) -> Motion:
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise BvhError(f"{path}: cannot read it ({error.strerror})") from None
    if size > MAX_FILE_BYTES:
        raise BvhError(f"{path}: {size} bytes is too large for a BVH file (at most {MAX_FILE_BYTES})")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise BvhError(f"{path}: cannot read it ({error.strerror})") from None
    text = data.decode("utf-8", errors="replace")
    lines = text.splitlines()
    tokens = _Tokens(path, lines, 0)
    first = tokens.next("HIERARCHY")
    if first.upper() != "HIERARCHY":
        raise tokens.error(f"expected HIERARCHY at the start of a BVH file, got {first[:40]!r}")
    joints = _hierarchy(tokens)
    keyword = tokens.next("MOTION")
    if keyword.upper() == "ROOT":
        raise tokens.error("a second ROOT: boneviewer reads one skeleton per BVH file")
    if keyword.upper() != "MOTION":
        raise tokens.error(f"expected MOTION after the hierarchy, got {keyword[:40]!r}")
    return _motion(tokens, joints)


def _hierarchy(tokens: _Tokens) -> list[Joint]:
    word = tokens.next("ROOT")
    if word.upper() != "ROOT":
        raise tokens.error(f"expected ROOT, got {word[:40]!r}")
    joints: list[Joint] = []
    stack: list[int] = []  # the open joints, innermost last
    names: dict[str, int] = {}  # name -> the line of the joint that has it
    column = 0
    keyword = "ROOT"
    while True:
        # A joint: its keyword is read; its name, then { OFFSET [CHANNELS] children }.
        line = tokens.line
        if len(joints) >= MAX_JOINTS:
            raise tokens.error(f"more than {MAX_JOINTS} joints and End Sites")
        if len(stack) >= MAX_DEPTH:
            raise tokens.error(f"joints nested deeper than {MAX_DEPTH} levels")
        end_site = keyword == "END"
        words = [w for w in tokens.rest_of_line()]
        brace_on_line = bool(words) and words[-1] == "{"
        if brace_on_line:
            words = words[:-1]
        parent = stack[-1] if stack else -1
        if end_site:
            if words and words[0].upper() == "SITE":
                words = words[1:]
            name = f"{joints[parent].name}_end"
        else:
            if not words:
                raise tokens.error(f"{keyword} without a name")
            name = " ".join(words)
        renamed_from, name_line = "", 0
        if name in names:  # a repeated name, or a joint named as an End Site is (Head_end)
            renamed_from, name_line = name, names[name]
            k = 2
            while f"{renamed_from}_{k}" in names:
                k += 1
            name = f"{renamed_from}_{k}"
        names[name] = line
        if not brace_on_line:
            brace = tokens.next("{")
            if brace != "{":
                raise tokens.error(f"expected {{ after {keyword} {name}, got {brace[:40]!r}")
        word = tokens.next("OFFSET")
        if word.upper() != "OFFSET":
            raise tokens.error(f"expected OFFSET in {name}, got {word[:40]!r}")
        offset = np.array([tokens.number(f"OFFSET of {name}") for _ in range(3)])
        joint = Joint(name, parent, offset, line=line, end_site=end_site, first_column=column,
                      renamed_from=renamed_from, name_line=name_line)
        joints.append(joint)
        index = len(joints) - 1
        stack.append(index)
        word = tokens.next("}")
        if word.upper() == "CHANNELS":
            if end_site:
                raise tokens.error(f"an End Site has no CHANNELS")
            count_word = tokens.next("the channel count")
            if not count_word.isdigit() or int(count_word) > 6:
                raise tokens.error(f"CHANNELS of {name}: expected a count from 0 to 6, got {count_word[:40]!r}")
            for _ in range(int(count_word)):
                channel = tokens.next(f"the channels of {name}")
                canonical = next((c for c in CHANNEL_NAMES if c.lower() == channel.lower()), None)
                if canonical is None:
                    raise tokens.error(f"CHANNELS of {name}: unknown channel {channel[:40]!r} "
                                       f"(expected {', '.join(CHANNEL_NAMES)})")
                if canonical in joint.channels:
                    raise tokens.error(f"CHANNELS of {name}: {canonical} twice")
                joint.channels.append(canonical)
            column += len(joint.channels)
            word = tokens.next("}")
        # Children and closing braces until this joint's level is closed again.
        while True:
            upper = word.upper()
            if upper in ("JOINT", "END"):
                if joints[stack[-1]].end_site:
                    raise tokens.error(f"an End Site cannot have children")
                keyword = upper
                break
            if word == "}":
                stack.pop()
                if not stack:
                    return joints
                word = tokens.next("}")
                continue
            if upper == "ROOT":
                raise tokens.error("a second ROOT: boneviewer reads one skeleton per BVH file")
            raise tokens.error(f"expected JOINT, End Site or }}, got {word[:40]!r}")


def renamed_joints(motion: Motion) -> list[str]:
    """Each joint renamed because another has its name, in words: "line 14: joint 'Spine' renamed
    'Spine_2' (line 6 has the name)"."""
    return [f"line {joint.line}: {'End Site' if joint.end_site else 'joint'} {joint.renamed_from!r} renamed "
            f"{joint.name!r} (line {joint.name_line} has the name)" for joint in motion.joints if joint.renamed_from]


def _motion(tokens: _Tokens, joints: list[Joint]) -> Motion:
    channel_count = sum(len(j.channels) for j in joints)
    # "Frames: N" and "Frame Time: t", one per line, as every exporter writes them.
    word = tokens.next("Frames:")
    if word.lower() != "frames:":
        raise tokens.error(f"expected 'Frames:' after MOTION, got {word[:40]!r}")
    frames_line = tokens.line
    count_word = tokens.next("the frame count")
    if not count_word.isdigit():
        raise tokens.error(f"Frames: expected a whole number, got {count_word[:40]!r}")
    if len(count_word) > 12 or int(count_word) > MAX_FRAMES:
        raise tokens.error(f"Frames: {count_word[:20]} frames is too many (at most {MAX_FRAMES})")
    frames = int(count_word)
    words = [tokens.next("Frame Time:"), tokens.next("Frame Time:")]
    if [w.lower() for w in words] != ["frame", "time:"]:
        raise tokens.error(f"expected 'Frame Time:' after Frames, got {' '.join(words)[:40]!r}")
    frame_time = tokens.number("Frame Time")
    if frame_time <= 0:
        raise tokens.error(f"Frame Time must be more than 0 seconds, got {frame_time:g}")
    if tokens.rest_of_line():
        raise tokens.error("unexpected words after the Frame Time")
    first_row = tokens.line_index  # 0-based index of the first MOTION row
    rows = tokens.lines[first_row:]
    while rows and not rows[-1].strip():  # trailing blank lines
        rows = rows[:-1]
    if len(rows) != frames:
        raise BvhError(f"{tokens.path}: line {frames_line}: Frames: {frames} but the file has "
                       f"{counted(len(rows), 'MOTION row')} after line {first_row}")
    if frames == 0:
        return Motion(joints, frame_time, np.zeros((0, channel_count)), channel_count)
    # Fast path: every number at once; the slow path below only finds and names a bad line.
    kernel = native.ckernel
    if kernel is not None:  # the compiled reader: one strtod pass that also counts each row
        values = np.empty((frames, channel_count))
        if kernel.parse_rows("\n".join(rows), values, channel_count) < 0 and fits(values):
            return Motion(joints, frame_time, values, channel_count)
        _raise_bad_row(tokens, rows, first_row, channel_count)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = np.fromstring("\n".join(rows), dtype=np.float64, sep=" ")
    except ValueError:  # a word that is not a number: the slow path names its line
        values = np.zeros(0)
    # The total alone would miss a row short by one beside a row long by one: count each row too.
    if (values.size == frames * channel_count and fits(values)
            and _row_with_wrong_count(rows, channel_count) is None):
        return Motion(joints, frame_time, values.reshape(frames, channel_count), channel_count)
    _raise_bad_row(tokens, rows, first_row, channel_count)
    raise AssertionError("unreachable")


def _row_with_wrong_count(rows: list[str], channel_count: int) -> int | None:
    """The first row whose number of values is not ``channel_count``, or None."""
    counts = np.fromiter(map(len, map(str.split, rows)), dtype=np.int64, count=len(rows))
    wrong = np.flatnonzero(counts != channel_count)
    return int(wrong[0]) if wrong.size else None


def _raise_bad_row(tokens: _Tokens, rows: list[str], first_row: int, channel_count: int):
    for k, row in enumerate(rows):
        words = row.split()
        line = first_row + k + 1
        if len(words) != channel_count:
            raise tokens.error(f"MOTION row {k + 1} has {counted(len(words), 'value')}; the CHANNELS lines add up to "
                               f"{channel_count}", line)
        for word in words:
            try:
                value = float(word)
            except ValueError:
                raise tokens.error(f"MOTION row {k + 1}: {word[:40]!r} is not a number", line) from None
            if not abs(value) <= MAX_MAGNITUDE:
                raise tokens.error(f"MOTION row {k + 1}: {word[:40]!r} is not a finite number up to {LIMIT_TEXT}",
                                   line)
    raise tokens.error("MOTION rows could not be read", first_row + 1)
