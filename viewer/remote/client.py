"""The client users import: a connection to a running ``boneviewer view --listen`` or
``boneviewer serve``.

    from viewer.remote import connect
    with connect("127.0.0.1:8765", token="...") as client:
        names = client.bones()
        client.set_pose(rotations=quaternions)          # (N, 4) x, y, z, w in bones() order
        image = client.render((256, 256))               # (256, 256, 4) uint8

Calls return once the server applied them; a refusal raises ViewerError with the server's
message. ``set_pose(..., wait=False)`` returns at once: the viewer applies the newest streamed
pose at its next frame.

A client dropped without ``close()`` (a notebook cell run again) closes its connection when it
is garbage-collected, and at the latest when the interpreter exits, so it does not keep one of
the server's places.
"""

from __future__ import annotations

import math
import os
import threading
import weakref
from urllib.parse import urlsplit

import numpy as np

from ..errors import ViewerError
from . import protocol
from .server import DEFAULT_HOST

CONNECT_TIMEOUT = 10.0
REPLY_TIMEOUT = 60.0   # a render of a big image on a slow machine


def connect(address: str, token: str | None = None, timeout: float = CONNECT_TIMEOUT) -> "Client":
    """A Client connected to ``address`` ("HOST:PORT" as the server's line prints it, or
    "ws://HOST:PORT/") that presented ``token`` (default: the environment variable BONEVIEWER_TOKEN)."""
    return Client(address, token, timeout)


ADDRESS_FORMS = "HOST:PORT or ws://HOST:PORT/ (as the server's 'listening on' line gives them)"


def parse_address(address) -> tuple[str, int]:
    """``HOST:PORT``, ``[IPv6]:PORT``, ``PORT`` (this machine) or ``ws://HOST:PORT[/]`` -> (host, port)."""
    if not isinstance(address, str):
        raise ViewerError(f"connect: the address must be a string, {ADDRESS_FORMS}; got {protocol.shown(address)}")
    text = address.strip()
    if "://" in text:
        scheme = text.partition("://")[0].lower()
        if scheme == "wss":
            raise ViewerError(f"connect {address}: the server speaks plain ws://, not TLS (wss://); give "
                              "ws://HOST:PORT/ (across machines, through an SSH tunnel)")
        if scheme != "ws":
            raise ViewerError(f"connect {address}: {scheme}:// is not the server's transport, a WebSocket; "
                              f"give {ADDRESS_FORMS}")
        try:
            url = urlsplit(text)
            port = url.port
        except ValueError as error:
            raise ViewerError(f"connect {address}: not a ws:// address ({error}); give {ADDRESS_FORMS}") from None
        if url.path not in ("", "/") or url.query or url.fragment or url.username is not None:
            raise ViewerError(f"connect {address}: the server takes no path, query or user; give ws://HOST:PORT/")
        if port is None or not url.hostname:
            raise ViewerError(f"connect {address}: give the host and the port the server printed: ws://HOST:PORT/")
        host = url.hostname
    else:
        host, sep, port_text = text.rpartition(":")
        if not sep:
            host = DEFAULT_HOST
        elif ":" in host and not (host.startswith("[") and host.endswith("]")):
            raise ViewerError(f"connect {address}: an IPv6 host goes in brackets, [::1]:PORT")
        host = host.strip("[]") or DEFAULT_HOST
        if not port_text.isdigit() or int(port_text) > 65535:
            raise ViewerError(f"connect {address}: expected {ADDRESS_FORMS}")
        port = int(port_text)
    if port == 0:
        raise ViewerError(f"connect {address}: give the port the server printed, not 0")
    return host, port


class Client:
    def __init__(self, address: str, token: str | None = None, timeout: float = CONNECT_TIMEOUT):
        from websockets.exceptions import InvalidHandshake, WebSocketException
        from websockets.sync.client import connect as ws_connect

        host, port = parse_address(address)  # the first argument's mistake is said first
        token = os.environ.get("BONEVIEWER_TOKEN") if token is None else token
        if token is None or token == "":  # none given and none in the environment: say how to give it
            raise ViewerError("connect: give token=... (printed by the server), or set BONEVIEWER_TOKEN")
        if not isinstance(token, str):
            raise ViewerError(f"connect: token must be a string, got {protocol.shown(token)}")
        try:
            timeout = protocol.check_number(timeout, "connect: timeout")
        except ValueError as error:
            raise ViewerError(str(error)) from None
        if not 0 < timeout < math.inf:
            raise ViewerError(f"connect: timeout must be a number of seconds above 0, got {timeout!r}")
        host_part = f"[{host}]" if ":" in host else host
        self.address = f"{host_part}:{port}"
        self._next_id = 1
        self._stream_error: str | None = None
        try:
            self._ws = ws_connect(f"ws://{self.address}", compression=None, max_size=protocol.MAX_REPLY,
                                  open_timeout=timeout, close_timeout=1).__enter__()  # the connection (17.1+ wants the with form)
        except (OSError, TimeoutError, InvalidHandshake, WebSocketException) as error:
            raise ViewerError(f"connect {self.address}: cannot connect: {error}") from None
        # Closes the connection when this client is collected or the interpreter exits, whichever
        # comes first; it holds the connection, not the client, so the client can be collected.
        self._closer = weakref.finalize(self, _close_quietly, self._ws)
        try:
            greeting = self._call(protocol.hello(token), 1, timeout)
        except (ViewerError, ValueError) as error:
            self._closer()
            raise ViewerError(str(error)) from None
        # The requests the server takes: a server before MIX lists none, and is not sent one.
        self.server_requests = protocol.read_hello_reply(greeting)
        # What its RENDER reads beyond the size: a server before the shadows is sent none.
        self.server_render = protocol.read_hello_render(greeting)

    # --- the calls -------------------------------------------------------------------------------
    # Arguments are checked here, before anything is sent (protocol's encoders name the call and
    # the argument); the server checks again what it decodes.
    def bones(self) -> list[str]:
        """The bone names in order: every skeleton's bones, as the Scene lists them."""
        return protocol.read_ok(self._request(lambda rid: protocol.encode(protocol.BONES, rid)))

    def set_pose(self, rotations=None, positions=None, scalings=None, bones=None, wait: bool = True) -> None:
        """Local transforms of bones, written to each bone's pose target as pose files do:
        rotations (N, 4) quaternions x, y, z, w; positions (N, 3); scalings (N, 3); in ``bones()``
        order, or for the named ``bones``. ``wait=False``: send and return at once (streaming)."""
        if not isinstance(wait, bool):  # the hot path: the bare test first
            _checked(protocol.check_flag, wait, "set_pose: wait")
        if not wait:
            self._check_stream_error()
            self._send(_checked(protocol.set_pose, 0, rotations, positions, scalings, bones))
            return
        self._request(lambda rid: protocol.set_pose(rid, rotations, positions, scalings, bones))

    def set_pose_dict(self, pose: dict) -> None:
        """A pose file's JSON as a dict ({"bones": {...}, "morph": {...}})."""
        if not isinstance(pose, dict):
            raise ViewerError(f"set_pose_dict: expected a dict, got {type(pose).__name__}")
        self._request(lambda rid: protocol.set_pose_dict(rid, pose))

    def set_morph_weights(self, mesh_name: str, weights) -> None:
        """The morph target weights of the mesh named ``mesh_name``: a sequence (every target,
        in order) or a dict {target name or index: weight}."""
        what = "set_morph_weights"
        _checked(protocol.check_name, mesh_name, f"{what}: mesh_name")
        if isinstance(weights, dict):
            targets = {}
            for key, value in weights.items():
                if isinstance(key, bool) or not isinstance(key, (str, int, np.integer)):
                    raise ViewerError(f"{what}: a target is a name or an index, got {protocol.shown(key)}")
                targets[str(key)] = _checked(protocol.check_number, value, f"{what}: the weight of target {key!r}")
        else:
            array = _checked(protocol.check_numbers, weights, f"{what}: weights")
            if array.ndim != 1:
                raise ViewerError(f"{what}: weights must be a list (one per target) or a dict, got shape {array.shape}")
            targets = {str(i): float(v) for i, v in enumerate(array)}
        # Sent as a pose dict: the server's refusals name set_pose_dict, told here as this call's.
        pose = {"version": 2, "bones": {}, "morph": {mesh_name: targets}}
        self._request(lambda rid: protocol.set_pose_dict(rid, pose), call=what)

    def set_time(self, t: float) -> None:
        """Seek the current clip to ``t`` seconds."""
        self._request(lambda rid: protocol.set_time(rid, t))

    def play(self, flag: bool = True) -> None:
        """Play (True) or pause (False) the current clip."""
        self._request(lambda rid: protocol.play(rid, flag))

    def set_camera(self, yaw=None, pitch=None, distance=None, target=None) -> None:
        """Yaw and pitch in degrees (as ``render --yaw --pitch``), distance, target (a world point);
        what is left out stays as it is (unset: framed on the model, as ``render`` frames it)."""
        self._request(lambda rid: protocol.set_camera(rid, yaw, pitch, distance, target))

    def render(self, size=(800, 600), *, skeleton: bool | None = None, grid: bool | None = None, background=None,
               show_environment: bool | None = None, shadows: bool | None = None, shadow_intensity=None,
               shadow_softness=None, key_light=None) -> np.ndarray:
        """An (H, W, 4) uint8 RGBA image of the current state, drawn as ``boneviewer render`` draws.
        What the frame shows, for this image (None: the server's; serve's --no-skeleton, ...):
        ``skeleton`` and ``grid`` False hide the overlay and the ground grid; ``background`` is a
        colour ("#rrggbb", a name such as "white", or three numbers 0..1) or "transparent" (alpha 0
        there) instead of the grey gradient; ``show_environment`` True draws the environment behind.
        The shadows, for this image (None: serve's --shadows, --shadow-intensity, ...): ``shadows``
        True or False, ``shadow_intensity`` and ``shadow_softness`` 0..1, ``key_light`` (azimuth,
        elevation) in degrees. With the clip paused, spring bones are simulated from the clip's
        start up to the playhead: the same time, the same picture."""
        _checked(protocol.check_image_size, size)
        if background is not None:
            from ..look import background as checked_background

            background = checked_background(background, "render: background")
        frame = {"skeleton": skeleton, "grid": grid, "background": background, "show_environment": show_environment,
                 "shadows": shadows, "shadow_intensity": shadow_intensity, "shadow_softness": shadow_softness,
                 "key_light": key_light}
        _checked(lambda: protocol.render(1, size, **frame))
        if "shadows" not in self.server_render and any(frame[name] is not None for name in protocol.SHADOW_SETTINGS):
            raise ViewerError(f"render: the server at {self.address} is older than this client and takes no shadow "
                              "settings (update boneviewer there); nothing was sent")
        payload = self._request(lambda rid: protocol.render(rid, size, **frame))
        try:
            return protocol.read_image(payload)
        except protocol.ProtocolError as error:
            raise ViewerError(f"{self.address} sent a malformed image: {error}") from None

    def set_skinning(self, mode: str) -> None:
        """How every skinned mesh follows its bones, from now on (``serve --skinning``'s default):
        "lbs" (linear blend, as Babylon.js and three.js draw) or "dq" (dual quaternions: no candy
        wrapper where a joint twists)."""
        _checked(protocol.set_skinning, 1, mode)
        self._require("set_skinning", protocol.SET_SKINNING)
        self._request(lambda rid: protocol.set_skinning(rid, mode))

    def set_springs(self, flag: bool = True) -> dict:
        """Spring bones on (they swing after the body: a file's chains, serve's --spring-chain) or
        off (held at their rest: the clip alone). Returns their state: {"enabled", "chains" (names),
        "joints"}. A model without chains refuses True."""
        _checked(protocol.check_flag, flag, "set_springs: flag")
        return self._springs("set_springs", "on" if flag else "off")

    def reset_springs(self) -> dict:
        """Every spring joint back to its rest (a playing clip swings it again from there); returns
        their state as set_springs does."""
        return self._springs("reset_springs", "reset")

    def _springs(self, call: str, operation: str) -> dict:
        self._require(call, protocol.SPRINGS)
        return protocol.read_ok(self._request(lambda rid: protocol.springs(rid, operation), call=call))

    def _require(self, call: str, kind: int) -> None:
        """Send nothing a server older than the request would refuse (it would close the connection)."""
        if protocol.REQUESTS[kind] not in self.server_requests:
            raise ViewerError(f"{call}: the server at {self.address} is older than this client and takes no "
                              f"{protocol.REQUESTS[kind]} requests (update boneviewer there); nothing was sent")

    def mix_action(self, clip: str, *, weight=None, speed=None, time=None, loop=None, play=None, stop=None,
                   fade_in=None, fade_out=None, crossfade_to=None, seconds=None, warp=None) -> dict:
        """The mixer's action of ``clip`` (docs/mixing.md), set in one go on the viewer's frame
        loop: ``weight`` (0 or more), ``speed``, ``time`` (seconds), ``loop`` ("repeat", "once",
        "pingpong"), ``play=True`` / ``stop=True``, ``fade_in`` / ``fade_out`` (seconds), and
        ``crossfade_to`` another clip over ``seconds`` (default 0.5; ``warp`` as three.js's).
        Returns the action's state after it (weight, speed, time, loop, playing, the weight the
        fade gives now). A refused setting changes nothing and raises one ViewerError naming it."""
        settings = {"weight": weight, "speed": speed, "time": time, "loop": loop, "play": play, "stop": stop,
                    "fade_in": fade_in, "fade_out": fade_out, "crossfade_to": crossfade_to, "seconds": seconds,
                    "warp": warp}
        return self._mix("mix_action", "action", clip, settings)

    def mix_layer(self, layer: str, *, weight=None, mode=None, mute=None, solo=None, active=None) -> dict:
        """A mixer layer by name: ``weight``, ``mode`` ("additive" or "override"), ``mute``,
        ``solo``, ``active=True`` (edits go to it). Returns the layer's state after it."""
        settings = {"weight": weight, "mode": mode, "mute": mute, "solo": solo, "active": active}
        return self._mix("mix_layer", "layer", layer, settings)

    def _mix(self, call: str, subject: str, name, settings: dict) -> dict:
        _checked(protocol.mix, 1, call, subject, name, settings)  # a bad argument is said before the server's age
        if protocol.REQUESTS[protocol.MIX] not in self.server_requests:
            raise ViewerError(f"{call}: the server at {self.address} is older than this client and takes no mixer "
                              "requests (update boneviewer there); nothing was sent")
        return protocol.read_ok(self._request(lambda rid: protocol.mix(rid, call, subject, name, settings)))

    def close(self) -> None:
        self._closer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # --- the wire --------------------------------------------------------------------------------
    def _send(self, data: bytes) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            self._ws.send(data)
        except ConnectionClosed as error:
            raise ViewerError(f"the connection to {self.address} is closed{_why(error)}") from None

    def _request(self, build, call: str | None = None):
        """Build the request (a ValueError: a bad argument), send it, return the reply's payload.
        ``call``: the name the caller knows, where it differs from the request's on the wire."""
        request_id = self._next_id = self._next_id % 0xFFFFFFFF + 1
        self._check_stream_error()
        data = _checked(build, request_id)
        try:
            return self._call(data, request_id, REPLY_TIMEOUT)
        except ViewerError as error:
            wire = protocol.REQUESTS[data[3]]  # the header's kind byte
            if call is None or not str(error).startswith(f"{wire}: "):
                raise
            raise ViewerError(f"{call}: {str(error).removeprefix(f'{wire}: ')}") from None

    def _call(self, data: bytes, request_id: int, timeout: float):
        """Send, then read until the reply to this request; an ERROR raises ViewerError."""
        from websockets.exceptions import ConnectionClosed

        self._send(data)
        while True:
            try:
                raw = self._ws.recv(timeout)
            except TimeoutError:
                raise ViewerError(f"{self.address} did not answer in {timeout:g} s") from None
            except ConnectionClosed as error:
                raise ViewerError(f"the connection to {self.address} is closed{_why(error)}") from None
            try:
                reply = protocol.read_reply(raw)
            except protocol.ProtocolError as error:
                self._ws.close()
                raise ViewerError(f"{self.address} sent a malformed reply: {error}") from None
            if reply.kind == protocol.ERROR and reply.request_id == 0:
                self._stream_error = protocol.read_error(reply.payload)  # a streamed pose was refused
                continue
            if reply.request_id != request_id:
                continue  # an answer to a request whose caller gave up (a timeout)
            if reply.kind == protocol.ERROR:
                raise ViewerError(protocol.read_error(reply.payload))
            self._check_stream_error()  # the server tells a refused stream just before this reply
            return reply.payload

    def _check_stream_error(self) -> None:
        """A streamed pose the server refused: told by the next call."""
        if self._stream_error is not None:
            text, self._stream_error = self._stream_error, None
            raise ViewerError(f"a streamed set_pose was refused: {text}")


def _checked(check, *args):
    """``check(*args)``, its ValueError (a bad argument, named by the check) as one ViewerError."""
    try:
        return check(*args)
    except ValueError as error:
        raise ViewerError(str(error)) from None


def _close_quietly(websocket) -> None:
    """Close a connection whose client is closed, collected, or left at the interpreter's exit."""
    try:
        if threading.current_thread() in (websocket.recv_events_thread, getattr(websocket, "keepalive_thread", None)):
            websocket.close_socket()  # collected on the connection's own thread: it cannot wait for itself
        else:
            websocket.close()
    except Exception:  # noqa: BLE001 - already closed or broken: nothing left to free
        pass


def _why(error) -> str:
    received = getattr(error, "rcvd", None)
    return f": {received.reason}" if received is not None and received.reason else ""
