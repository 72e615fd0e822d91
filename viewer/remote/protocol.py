"""The remote connection's message format: the only code that knows its bytes.

Each WebSocket binary message is one message: a 12-byte header, then ``length`` bytes of payload.

    offset size  field
    0      2     magic b"BV"
    2      1     version (1)
    3      1     kind (below)
    4      4     request id, uint32 (0: a streamed message, no reply wanted)
    8      4     payload length in bytes, uint32 (the message's length - 12)

Every number is little-endian; arrays are raw little-endian float32 or float64, row after row.
Nothing from the wire is executed or unpickled: payloads are numbers, UTF-8 text, and (for a
pose dict only) JSON. Every size is bounded before anything is allocated.

Client to server (a reply, with the same request id, comes back for a non-zero id):

    HELLO 1          the token, UTF-8 (at most MAX_TOKEN bytes); the first message, within 2 s
    BONES 2          (empty)                      -> OK with a JSON list of the bone names
    SET_POSE 3       u8 parts (1 rotations, 2 positions, 4 scalings, 8 names), u8 float size
                     (4 or 8), u16 0, u32 N bones; with names, N times (u16 byte length, UTF-8
                     name); then the arrays present, in this order: rotations N x 4 (x, y, z, w),
                     positions N x 3, scalings N x 3
    SET_POSE_DICT 4  a pose file's JSON object, UTF-8
    SET_TIME 5       f64 seconds
    PLAY 6           u8 0 (pause) or 1 (play)
    SET_CAMERA 7     u8 given (1 yaw, 2 pitch, 4 distance, 8 target), then 6 x f64: yaw, pitch
                     (degrees), distance, target x, y, z (the ones not given are ignored)
    RENDER 8         u32 width, u32 height, then (only when the client sets any; a server before
                     them refuses the longer payload) what the frame shows: u8 given (1 skeleton,
                     2 grid, 4 show_environment, 8 background colour, 16 transparent background),
                     u8 shown (1 skeleton, 2 grid, 4 environment), u16 0, 3 x f32 the background
                     colour r, g, b in 0..1 (0 when not given); what is not given is the server's
                     (serve's --no-skeleton, ...)                                        -> IMAGE
    MIX 9            the mixer (docs/mixing.md), a JSON object, UTF-8 (at most MAX_MIX bytes):
                     {"action": CLIP, "weight", "speed", "time", "loop", "play", "stop", "fade_in",
                     "fade_out", "crossfade_to", "seconds", "warp"} or {"layer": NAME, "weight",
                     "mode", "mute", "solo", "active"}, each setting optional; applied whole or not
                     at all                                   -> OK with the action's or layer's state
    SET_SKINNING 10  u8 0 (lbs: linear blend) or 1 (dq: dual quaternions), every skinned mesh -> OK
    SPRINGS 11       u8 0 (off: held at their rest), 1 (on) or 2 (reset: every joint back to its
                     rest)                   -> OK with {"enabled", "chains" (names), "joints"}

RENDER's shadows (a third block after the frame's 16 bytes, sent only when the client sets any,
and only to a server whose OK to HELLO lists "shadows" under "render"): u8 given (1 shadows,
2 intensity, 4 softness, 8 key light), u8 shadows on (0 or 1), u16 0, 4 x f32: intensity 0..1,
softness 0..1, key light azimuth and elevation in degrees (-90..90); what is not given is the
server's (serve's --shadows, --shadow-intensity, --shadow-softness, --key-light).

The server's OK to HELLO lists the requests it takes and what RENDER may carry beyond its size
({"requests": [names], "render": ["frame", "shadows"]}); a server before MIX answers HELLO with
an empty OK. A client sends no request and no RENDER block the server does not list (it says the
server is older instead), so old clients and old servers keep working with new ones: the
version stays 1, as every message an older peer sends or is sent reads as it did.

Server to client:

    OK 128           empty, or the JSON reply of BONES
    ERROR 129        the error message, UTF-8 (request id 0: a streamed pose was refused)
    IMAGE 130        u32 width, u32 height, then height x width x 4 uint8 RGBA, top row first

A message that breaks this format (bad magic or version, unknown kind, lengths that do not add
up, a value out of its bounds) is a ProtocolError: the server closes that connection.
"""

from __future__ import annotations

import json
import math
import numbers
import struct
from dataclasses import dataclass

import numpy as np

MAGIC = b"BV"
VERSION = 1
HEADER = struct.Struct("<2sBBII")

HELLO, BONES, SET_POSE, SET_POSE_DICT, SET_TIME, PLAY, SET_CAMERA, RENDER, MIX, SET_SKINNING, SPRINGS = range(1, 12)
OK, ERROR, IMAGE = 128, 129, 130
REQUESTS = {HELLO: "hello", BONES: "bones", SET_POSE: "set_pose", SET_POSE_DICT: "set_pose_dict",
            SET_TIME: "set_time", PLAY: "play", SET_CAMERA: "set_camera", RENDER: "render", MIX: "mix",
            SET_SKINNING: "set_skinning", SPRINGS: "springs"}
# What a RENDER may carry beyond the image size, as this server's OK to HELLO lists it.
RENDER_BLOCKS = ("frame", "shadows")
SKINNINGS = ("lbs", "dq")                  # SET_SKINNING's byte is the index
SPRING_OPERATIONS = ("off", "on", "reset")  # SPRINGS' byte is the index
REPLIES = {OK: "ok", ERROR: "error", IMAGE: "image"}

# Bounds: far beyond any real model or image, small enough that no message can exhaust memory.
MAX_TOKEN = 256
MAX_BONES = 4096
MAX_NAME = 256                       # bytes of one bone name
MAX_IMAGE_SIDE = 4096
MAX_REQUEST = 4 * 2**20              # bytes of one client message (a pose dict is the largest)
MAX_REPLY = HEADER.size + 8 + MAX_IMAGE_SIDE * MAX_IMAGE_SIDE * 4
MAX_ERROR_TEXT = 4096
MAX_MIX = 2**16                      # bytes of one MIX request's JSON (a few names and numbers)

# MIX settings and their kinds, for an action and for a layer (checked on both sides).
MIX_ACTION = {"weight": "number", "speed": "number", "time": "number", "loop": "name", "play": "flag",
              "stop": "flag", "fade_in": "number", "fade_out": "number", "crossfade_to": "name",
              "seconds": "number", "warp": "flag"}
MIX_LAYER = {"weight": "number", "mode": "name", "mute": "flag", "solo": "flag", "active": "flag"}

ROTATIONS, POSITIONS, SCALINGS, NAMES = 1, 2, 4, 8
POSE_PARTS = ((ROTATIONS, "rotations", 4), (POSITIONS, "positions", 3), (SCALINGS, "scalings", 3))
POSE_HEAD = struct.Struct("<BBHI")
CAMERA = struct.Struct("<B6d")
CAMERA_FIELDS = ((1, "yaw"), (2, "pitch"), (4, "distance"), (8, "target"))
SIZE = struct.Struct("<II")
FRAME = struct.Struct("<BBH3f")
SKELETON, GRID, ENVIRONMENT, COLOUR, TRANSPARENT_BACKGROUND = 1, 2, 4, 8, 16
SHADOW = struct.Struct("<BBH4f")
SHADOWS, INTENSITY, SOFTNESS, KEY_LIGHT = 1, 2, 4, 8
SHADOW_SETTINGS = ("shadows", "shadow_intensity", "shadow_softness", "key_light")
TIME = struct.Struct("<d")
FLAG = struct.Struct("<B")
NAME_LENGTH = struct.Struct("<H")


class ProtocolError(ValueError):
    """A message that breaks the format: its connection is closed."""


@dataclass
class Message:
    kind: int
    request_id: int
    payload: memoryview


@dataclass
class RenderRequest:
    """A decoded RENDER: the image size, and viewer.look.apply_frame's keywords the client set."""

    size: tuple
    frame: dict


@dataclass
class PoseArrays:
    """A decoded SET_POSE: (N, 4), (N, 3), (N, 3) float arrays or None, and the bone names or None."""

    count: int
    rotations: np.ndarray | None = None
    positions: np.ndarray | None = None
    scalings: np.ndarray | None = None
    names: list | None = None


# --- framing -------------------------------------------------------------------------------------
def encode(kind: int, request_id: int, payload=b"") -> bytes:
    return HEADER.pack(MAGIC, VERSION, kind, request_id, len(payload)) + bytes(payload)


def decode(data, kinds=REQUESTS, limit: int = MAX_REQUEST) -> Message:
    """The header checked against the message (bytes); the payload is a view, not a copy."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ProtocolError("a text frame: messages are binary")
    if len(data) > limit:
        raise ProtocolError(f"message of {len(data)} bytes is over the limit of {limit}")
    if len(data) < HEADER.size:
        raise ProtocolError(f"message of {len(data)} bytes is shorter than the {HEADER.size}-byte header")
    magic, version, kind, request_id, length = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise ProtocolError(f"bad magic {bytes(magic)!r} (expected {MAGIC!r})")
    if version != VERSION:
        raise ProtocolError(f"protocol version {version} (this build speaks {VERSION})")
    if kind not in kinds:
        raise ProtocolError(f"unknown message kind {kind}")
    if length != len(data) - HEADER.size:
        raise ProtocolError(f"header says {length} payload bytes, the message has {len(data) - HEADER.size}")
    return Message(kind, request_id, memoryview(data)[HEADER.size:])


def _exact(payload, size: int, what: str) -> None:
    if len(payload) != size:
        raise ProtocolError(f"{what}: payload of {len(payload)} bytes, expected {size}")


def _text(payload, limit: int, what: str) -> str:
    if len(payload) > limit:
        raise ProtocolError(f"{what}: {len(payload)} bytes is over the limit of {limit}")
    try:
        return bytes(payload).decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolError(f"{what}: not UTF-8") from None


# --- arguments, checked on the client before they are encoded ------------------------------------
# A Python value the wire cannot carry as meant (a string for a number, 2.5 pixels, "no" for a flag)
# is a ValueError naming the call and the argument, never silently converted.
def shown(value) -> str:
    text = f"{type(value).__name__} {value!r}"
    return text if len(text) <= 60 else text[:57] + "..."


def check_number(value, what: str) -> float:
    """A real number (int, float, numpy's): not a bool, not text."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value[()]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what} must be a number, got {shown(value)}")
    return float(value)


def check_whole_number(value, what: str) -> int:
    """An integer (int, numpy's): not a bool, not 2.5 or 256.0, not text."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{what} must be a whole number, got {shown(value)}")
    return int(value)


def check_flag(value, what: str) -> bool:
    """True or False (numpy's too): not "no", not 0 or 1."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{what} must be True or False, got {shown(value)}")
    return bool(value)


def check_name(value, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {shown(value)}")
    return value


def check_numbers(value, what: str) -> np.ndarray:
    """An array of ints or floats (not bools, not strings that look like numbers)."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):  # ragged nesting
        raise ValueError(f"{what} must be numbers, got {shown(value)}") from None
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{what} must be numbers, got {shown(value)}")
    return array


# --- requests (client side encodes, server side decodes) -----------------------------------------
def hello(token: str) -> bytes:
    data = token.encode("utf-8")
    if len(data) > MAX_TOKEN:
        raise ValueError(f"the token is {len(data)} bytes; at most {MAX_TOKEN}")
    return encode(HELLO, 1, data)


def read_hello(payload) -> str:
    return _text(payload, MAX_TOKEN, "hello")


def set_pose(request_id: int, rotations=None, positions=None, scalings=None, names=None) -> bytes:
    """A SET_POSE message. Arrays keep float32 when all given ones are float32, else float64
    (so a float64 pose arrives exactly). Shapes are checked here; values on the server."""
    given = [(part, what, width, check_numbers(value, f"set_pose: {what}")) for (part, what, width), value
             in zip(POSE_PARTS, (rotations, positions, scalings)) if value is not None]
    if not given:
        raise ValueError("set_pose: give rotations, positions or scalings")
    dtype = _FLOATS[4] if all(value.dtype == np.float32 for *_, value in given) else _FLOATS[8]
    arrays, count, parts = [], None, 0
    for part, what, width, value in given:
        array = value.astype(dtype, copy=False)
        if array.ndim == 1 and array.size == width:
            array = array.reshape(1, width)
        if array.ndim != 2 or array.shape[1] != width:
            raise ValueError(f"set_pose: {what} must have shape (N, {width}), got {array.shape}")
        if count is not None and len(array) != count:
            raise ValueError(f"set_pose: {what} has {len(array)} rows, the other arrays {count}")
        count = len(array)
        parts |= part
        arrays.append(array.tobytes())  # C order, whatever the input's strides
    if not 1 <= count <= MAX_BONES:
        raise ValueError(f"set_pose: {count} bones; 1 to {MAX_BONES} per message")
    block = b""
    if names is not None:
        try:
            names = (names,) if isinstance(names, str) else tuple(names)
        except TypeError:
            raise ValueError(f"set_pose: bones must be a list of bone names, got {shown(names)}") from None
        if len(names) != count:
            raise ValueError(f"set_pose: {len(names)} bone names for {count} rows")
        parts |= NAMES
        block = _names_block(names)
    length = POSE_HEAD.size + len(block) + sum(map(len, arrays))
    return b"".join([HEADER.pack(MAGIC, VERSION, SET_POSE, request_id, length),
                     POSE_HEAD.pack(parts, dtype.itemsize, 0, count), block, *arrays])


NAME_CACHE_SIZE = 64  # name lists remembered each way: a stream sends the same names again and again
NAME_CACHE_ITEM = 2**14  # bytes (or names) of one remembered list at most: the caches stay under 2 MB
_encoded_names: dict = {}
_decoded_names: dict = {}


def _remember(cache: dict, key, value):
    if len(key) > NAME_CACHE_ITEM:
        return value
    if len(cache) >= NAME_CACHE_SIZE:
        cache.clear()
    cache[key] = value
    return value


def _names_block(names: tuple) -> bytes:
    try:
        block = _encoded_names.get(names)
    except TypeError:  # an unhashable "name" (a list): refused below
        block = None
    if block is None:
        chunks = []
        for bone in names:  # checked once per list: a stream's next message finds it remembered
            data = check_name(bone, "set_pose: each of bones").encode("utf-8")
            if len(data) > MAX_NAME:
                raise ValueError(f"set_pose: bone name {bone[:40]!r}... is over {MAX_NAME} bytes")
            chunks += [NAME_LENGTH.pack(len(data)), data]
        block = _remember(_encoded_names, names, b"".join(chunks))
    return block


# Per parts mask (rotations, positions, scalings): the arrays present and their total width.
_LAYOUTS = {mask: ([(what, width) for flag, what, width in POSE_PARTS if mask & flag],
                   sum(width for flag, _, width in POSE_PARTS if mask & flag)) for mask in range(1, 8)}
_FLOATS = {4: np.dtype("<f4"), 8: np.dtype("<f8")}
_last_names = [b"", []]  # the names block seen last and its names: a stream repeats it


def read_set_pose(payload) -> PoseArrays:
    """A SET_POSE payload checked and decoded; the arrays are views of the message, not copies.
    (Lean: a stream may bring tens of thousands a second.)"""
    if len(payload) < POSE_HEAD.size:
        raise ProtocolError("set_pose: payload shorter than its 8-byte head")
    parts, itemsize, reserved, count = POSE_HEAD.unpack_from(payload)
    layout = _LAYOUTS.get(parts & 7)
    dtype = _FLOATS.get(itemsize)
    if layout is None or parts & ~15:
        raise ProtocolError(f"set_pose: bad parts mask {parts}")
    if dtype is None or reserved != 0:
        raise ProtocolError(f"set_pose: float size {itemsize} (expected 4 or 8)")
    if not 1 <= count <= MAX_BONES:
        raise ProtocolError(f"set_pose: {count} bones (1 to {MAX_BONES})")
    arrays, width = layout
    offset = len(payload) - width * count * itemsize  # the arrays fill the end of the payload
    pose = PoseArrays(count)
    if parts & NAMES:
        if offset < POSE_HEAD.size:
            raise ProtocolError("set_pose: the bone names and arrays do not add up to the payload")
        block = bytes(payload[POSE_HEAD.size:offset])
        if block == _last_names[0]:
            pose.names = _last_names[1]
        else:
            pose.names = _decoded_names.get(block)
            if pose.names is None:
                pose.names = _remember(_decoded_names, block, _read_names(block, count))
            _last_names[:] = [block, pose.names] if len(block) <= NAME_CACHE_ITEM else [b"", []]
    elif offset != POSE_HEAD.size:
        raise ProtocolError(f"set_pose arrays: payload of {len(payload) - POSE_HEAD.size} bytes, expected "
                            f"{width * count * itemsize}")
    for what, columns in arrays:
        array = np.frombuffer(payload, dtype, count * columns, offset).reshape(count, columns)
        setattr(pose, what, array)
        offset += array.nbytes
    return pose


def _read_names(block: bytes, count: int) -> list:
    """``count`` names, each a u16 byte length and UTF-8, filling ``block`` exactly."""
    names, offset = [], 0
    for _ in range(count):
        if offset + NAME_LENGTH.size > len(block):
            raise ProtocolError("set_pose: the bone names and arrays do not add up to the payload")
        (length,) = NAME_LENGTH.unpack_from(block, offset)
        offset += NAME_LENGTH.size
        if length > MAX_NAME or offset + length > len(block):
            raise ProtocolError("set_pose: a bone name is too long or runs past the end")
        names.append(_text(block[offset:offset + length], MAX_NAME, "set_pose: bone name"))
        offset += length
    if offset != len(block):
        raise ProtocolError("set_pose: the bone names and arrays do not add up to the payload")
    return names


def set_pose_dict(request_id: int, pose: dict) -> bytes:
    try:
        text = json.dumps(pose, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"set_pose_dict: the pose must be JSON numbers and names ({error})") from None
    data = text.encode("utf-8")
    if len(data) > MAX_REQUEST - HEADER.size:
        raise ValueError(f"set_pose_dict: {len(data)} bytes of JSON is over the limit of {MAX_REQUEST}")
    return encode(SET_POSE_DICT, request_id, data)


def read_set_pose_dict(payload) -> dict:
    return _json_object(payload, MAX_REQUEST, "set_pose_dict")


def _json_object(payload, limit: int, what: str) -> dict:
    """A payload that must be one JSON object of at most ``limit`` bytes (no NaN or Infinity)."""
    text = _text(payload, limit, what)
    try:
        body = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:
        raise ProtocolError(f"{what}: not JSON ({str(error)[:80]})") from None
    if not isinstance(body, dict):
        raise ProtocolError(f"{what}: the JSON is not an object")
    return body


def _no_constant(name):
    raise ValueError(f"{name} is not a number a pose may hold")


def set_time(request_id: int, seconds: float) -> bytes:
    return encode(SET_TIME, request_id, TIME.pack(check_number(seconds, "set_time: t")))


def read_set_time(payload) -> float:
    _exact(payload, TIME.size, "set_time")
    return TIME.unpack(payload)[0]


def play(request_id: int, playing: bool) -> bytes:
    return encode(PLAY, request_id, FLAG.pack(1 if check_flag(playing, "play: flag") else 0))


def read_play(payload) -> bool:
    _exact(payload, FLAG.size, "play")
    (value,) = FLAG.unpack(payload)
    if value not in (0, 1):
        raise ProtocolError(f"play: flag {value} (expected 0 or 1)")
    return bool(value)


def set_camera(request_id: int, yaw=None, pitch=None, distance=None, target=None) -> bytes:
    given = 0
    values = []
    for (field, what), value in zip(CAMERA_FIELDS[:3], (yaw, pitch, distance)):
        given |= field if value is not None else 0
        values.append(0.0 if value is None else check_number(value, f"set_camera: {what}"))
    if target is not None:
        target = check_numbers(target, "set_camera: target").astype(np.float64)
        if target.shape != (3,):
            raise ValueError(f"set_camera: target must be 3 numbers (x, y, z), got shape {target.shape}")
        given |= 8
        values += target.tolist()
    else:
        values += [0.0, 0.0, 0.0]
    return encode(SET_CAMERA, request_id, CAMERA.pack(given, *values))


def read_set_camera(payload) -> dict:
    """{field: value} of the fields given (target as a 3-tuple)."""
    _exact(payload, CAMERA.size, "set_camera")
    given, yaw, pitch, distance, *target = CAMERA.unpack(payload)
    if given & ~15:
        raise ProtocolError(f"set_camera: bad mask {given}")
    values = {"yaw": yaw, "pitch": pitch, "distance": distance, "target": tuple(target)}
    return {name: values[name] for flag, name in CAMERA_FIELDS if given & flag}


def render(request_id: int, size, skeleton=None, grid=None, background=None, show_environment=None,
           shadows=None, shadow_intensity=None, shadow_softness=None, key_light=None) -> bytes:
    """``background``: None, "transparent" or three numbers 0..1 (viewer.look.background reads a
    colour's name); ``key_light``: (azimuth, elevation) in degrees; None leaves a setting to the
    server. The shadows' block goes only where one of them is set (a server before it refuses it)."""
    width, height = check_image_size(size, ValueError)
    flags = {SKELETON: skeleton, GRID: grid, ENVIRONMENT: show_environment}
    for flag, name in ((SKELETON, "skeleton"), (GRID, "grid"), (ENVIRONMENT, "show_environment")):
        if flags[flag] is not None:
            check_flag(flags[flag], f"render: {name}")
    given = sum(flag for flag, value in flags.items() if value is not None)
    visible = sum(flag for flag, value in flags.items() if value)
    rgb = (0.0, 0.0, 0.0)
    if isinstance(background, str) and background == "transparent":
        given |= TRANSPARENT_BACKGROUND
    elif background is not None:
        rgb = check_numbers(background, "render: background")
        if rgb.shape != (3,) or not ((rgb >= 0.0) & (rgb <= 1.0)).all():
            raise ValueError(f"render: background must be 'transparent' or three numbers 0..1 (r, g, b), got "
                             f"{shown(background)}")
        given |= COLOUR
        rgb = tuple(rgb.tolist())
    if background is not None and show_environment:
        raise ValueError("render: background and show_environment: give one (the environment is drawn in place "
                         "of the background)")
    shadow = shadow_block(shadows, shadow_intensity, shadow_softness, key_light)
    frame = FRAME.pack(given, visible, 0, *rgb) if given or shadow else b""
    return encode(RENDER, request_id, SIZE.pack(width, height) + frame + shadow)


def check_unit(value, what: str) -> float:
    """A number from 0 to 1 (NaN is not)."""
    number = check_number(value, what)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{what} must be from 0 to 1, got {number!r}")
    return number


def check_key_light(value, what: str = "render: key_light") -> tuple:
    """(azimuth, elevation): two finite angles in degrees, the elevation within -90..90."""
    try:
        angles = tuple(check_number(angle, what) for angle in value)
    except (TypeError, ValueError):
        angles = ()
    float32 = float(np.finfo(np.float32).max)  # the wire's angles are float32
    if len(angles) != 2 or not all(abs(angle) <= float32 for angle in angles):  # NaN fails too
        raise ValueError(f"{what} must be two finite angles in degrees (azimuth, elevation), got {shown(value)}")
    if not -90.0 <= angles[1] <= 90.0:
        raise ValueError(f"{what}: the elevation must be from -90 to 90 degrees, got {angles[1]!r}")
    return angles


def shadow_block(shadows=None, shadow_intensity=None, shadow_softness=None, key_light=None) -> bytes:
    """RENDER's shadows block, or b"" when none is set; each value checked (a ValueError naming it)."""
    given, on, values = 0, 0, [0.0, 0.0, 0.0, 0.0]
    if shadows is not None:
        given |= SHADOWS
        on = 1 if check_flag(shadows, "render: shadows") else 0
    if shadow_intensity is not None:
        given |= INTENSITY
        values[0] = check_unit(shadow_intensity, "render: shadow_intensity")
    if shadow_softness is not None:
        given |= SOFTNESS
        values[1] = check_unit(shadow_softness, "render: shadow_softness")
    if key_light is not None:
        given |= KEY_LIGHT
        values[2:] = check_key_light(key_light)
    if not given:
        return b""
    return SHADOW.pack(given, on, 0, *values)


def read_render(payload) -> RenderRequest:
    sizes = (SIZE.size, SIZE.size + FRAME.size, SIZE.size + FRAME.size + SHADOW.size)
    if len(payload) not in sizes:
        raise ProtocolError(f"render: payload of {len(payload)} bytes, expected {', '.join(map(str, sizes[:2]))} "
                            f"or {sizes[2]}")
    size = check_image_size(SIZE.unpack_from(payload), ProtocolError)
    if len(payload) == SIZE.size:
        return RenderRequest(size, {})
    given, visible, reserved, *rgb = FRAME.unpack_from(payload, SIZE.size)
    if given & ~31 or visible & ~given & 7 or reserved or (given & COLOUR and given & TRANSPARENT_BACKGROUND):
        raise ProtocolError(f"render: bad frame flags {given}, {visible}, {reserved}")
    if not all(0.0 <= value <= 1.0 for value in rgb):  # NaN fails too
        raise ProtocolError(f"render: background colour {rgb} outside 0..1")
    if given & (COLOUR | TRANSPARENT_BACKGROUND) and visible & ENVIRONMENT:
        raise ProtocolError("render: a background with show_environment")
    frame = {name: bool(visible & flag) for flag, name in ((SKELETON, "skeleton"), (GRID, "grid"),
                                                          (ENVIRONMENT, "show_environment")) if given & flag}
    if given & TRANSPARENT_BACKGROUND:
        frame["background"] = "transparent"
    elif given & COLOUR:
        frame["background"] = tuple(rgb)
    if len(payload) == sizes[2]:
        frame.update(_read_shadows(payload, sizes[1]))
    return RenderRequest(size, frame)


def _read_shadows(payload, offset: int) -> dict:
    given, on, reserved, intensity, softness, azimuth, elevation = SHADOW.unpack_from(payload, offset)
    if not given or given & ~15 or on & ~1 or (on and not given & SHADOWS) or reserved:
        raise ProtocolError(f"render: bad shadow flags {given}, {on}, {reserved}")
    settings = {}
    if given & SHADOWS:
        settings["shadows"] = bool(on)
    for flag, name, value in ((INTENSITY, "shadow_intensity", intensity), (SOFTNESS, "shadow_softness", softness)):
        if given & flag:
            if not 0.0 <= value <= 1.0:  # NaN fails too
                raise ProtocolError(f"render: {name} {value} outside 0..1")
            settings[name] = value
    if given & KEY_LIGHT:
        if not (math.isfinite(azimuth) and -90.0 <= elevation <= 90.0):
            raise ProtocolError(f"render: key light ({azimuth}, {elevation}) is not two finite angles (elevation "
                                "-90..90)")
        settings["key_light"] = (azimuth, elevation)
    return settings


def set_skinning(request_id: int, mode) -> bytes:
    if not isinstance(mode, str) or mode.strip().lower() not in SKINNINGS:
        raise ValueError(f"set_skinning: mode must be lbs (linear blend) or dq (dual quaternions), got {shown(mode)}")
    return encode(SET_SKINNING, request_id, FLAG.pack(SKINNINGS.index(mode.strip().lower())))


def read_set_skinning(payload) -> str:
    return _one_of(payload, SKINNINGS, "set_skinning: mode", "0 lbs or 1 dq")


def springs(request_id: int, operation: str) -> bytes:
    return encode(SPRINGS, request_id, FLAG.pack(SPRING_OPERATIONS.index(operation)))


def read_springs(payload) -> str:
    return _one_of(payload, SPRING_OPERATIONS, "springs: operation", "0 off, 1 on or 2 reset")


def _one_of(payload, choices, what: str, expected: str) -> str:
    """One byte naming one of ``choices`` by its index (``what``: the request and the field)."""
    _exact(payload, FLAG.size, what.split(":")[0])
    (value,) = FLAG.unpack(payload)
    if value >= len(choices):
        raise ProtocolError(f"{what} {value} (expected {expected})")
    return choices[value]


def mix(request_id: int, call: str, subject: str, name, settings: dict) -> bytes:
    """A MIX message: ``subject`` "action" (``name`` a clip) or "layer"; ``settings`` those of
    MIX_ACTION or MIX_LAYER that are not None, checked here (a ValueError naming the call)."""
    kinds = MIX_ACTION if subject == "action" else MIX_LAYER
    body = {subject: check_name(name, f"{call}: {'clip' if subject == 'action' else 'layer'}")}
    for key, value in settings.items():
        if value is None:
            continue
        what = f"{call}: {key}"
        if kinds[key] == "number":
            number = check_number(value, what)
            if not math.isfinite(number):  # JSON has no NaN: said here, not by the encoder
                raise ValueError(f"{what} must be a finite number, got {number!r}")
            body[key] = number
        else:
            body[key] = check_flag(value, what) if kinds[key] == "flag" else check_name(value, what)
    data = json.dumps(body).encode("utf-8")
    if len(data) > MAX_MIX:
        raise ValueError(f"{call}: {len(data)} bytes of settings is over the limit of {MAX_MIX}")
    return encode(MIX, request_id, data)


def read_mix(payload) -> dict:
    """A MIX payload: a JSON object (its settings are checked where they are applied)."""
    return _json_object(payload, MAX_MIX, "mix")


def hello_reply(request_id: int) -> bytes:
    """The OK to HELLO: the requests this server takes and what its RENDER reads beyond the size
    (a server before MIX sends an empty OK)."""
    return ok(request_id, {"requests": [name for kind, name in REQUESTS.items() if kind != HELLO],
                           "render": list(RENDER_BLOCKS)})


def _hello_value(payload):
    try:
        value = read_ok(payload)
    except (ValueError, UnicodeDecodeError):
        value = None
    return value if isinstance(value, dict) else {}


def read_hello_reply(payload) -> list:
    """The requests a server takes, from its OK to HELLO; from a server before MIX (an empty OK)
    those it took then: every one before MIX."""
    value = _hello_value(payload)
    if isinstance(value.get("requests"), list):
        return [name for name in value["requests"] if isinstance(name, str)]
    return [name for kind, name in REQUESTS.items() if HELLO < kind < MIX]


def read_hello_render(payload) -> list:
    """What a server's RENDER reads beyond the image size ("frame", "shadows"), from its OK to
    HELLO; [] from a server before the list (a client sends it no shadows)."""
    value = _hello_value(payload)
    if isinstance(value.get("render"), list):
        return [name for name in value["render"] if isinstance(name, str)]
    return []


def check_image_size(size, error=ValueError) -> tuple[int, int]:
    """(width, height): two whole numbers (not 2.5, not "256") within 1..MAX_IMAGE_SIDE."""
    try:
        width, height = (check_whole_number(v, "render: size") for v in size)
    except (TypeError, ValueError):
        raise error(f"render: size must be two whole numbers (width, height), got {shown(size)}") from None
    if not (1 <= width <= MAX_IMAGE_SIDE and 1 <= height <= MAX_IMAGE_SIDE):
        raise error(f"render: size {width}x{height} is outside 1..{MAX_IMAGE_SIDE} pixels per side")
    return width, height


# --- replies (server side encodes, client side decodes) ------------------------------------------
def ok(request_id: int, value=None) -> bytes:
    return encode(OK, request_id, b"" if value is None else json.dumps(value).encode("utf-8"))


def error(request_id: int, message: str) -> bytes:
    return encode(ERROR, request_id, str(message).encode("utf-8")[:MAX_ERROR_TEXT])


def image(request_id: int, pixels: np.ndarray) -> bytes:
    height, width = pixels.shape[:2]
    return encode(IMAGE, request_id, SIZE.pack(width, height) + np.ascontiguousarray(pixels, np.uint8).tobytes())


def read_reply(data) -> Message:
    return decode(data, REPLIES, MAX_REPLY)


def read_ok(payload):
    return None if not len(payload) else json.loads(bytes(payload).decode("utf-8"))


def read_error(payload) -> str:
    return bytes(payload).decode("utf-8", errors="replace")


def read_image(payload) -> np.ndarray:
    if len(payload) < SIZE.size:
        raise ProtocolError("image: payload shorter than its size")
    width, height = check_image_size(SIZE.unpack_from(payload), ProtocolError)
    _exact(payload, SIZE.size + width * height * 4, "image")
    return np.frombuffer(payload, np.uint8, offset=SIZE.size).reshape(height, width, 4).copy()
