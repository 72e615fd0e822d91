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
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import ViewerError
from . import protocol

CONNECT_TIMEOUT = 10.0
REPLY_TIMEOUT = 60.0   # a render of a big image on a slow machine


def connect(address: str, token: str | None = None, timeout: float = CONNECT_TIMEOUT) -> "Client":
    """A Client connected to ``address`` ("HOST:PORT") that presented ``token`` (default: the
    environment variable BONEVIEWER_TOKEN)."""
    return Client(address, token, timeout)


class Client:
    def __init__(self, address: str, token: str | None = None, timeout: float = CONNECT_TIMEOUT):
        from websockets.exceptions import InvalidHandshake, WebSocketException
        from websockets.sync.client import connect as ws_connect

        from .server import parse_listen

        token = os.environ.get("BONEVIEWER_TOKEN") if token is None else token
        if not token:
            raise ViewerError("connect: give token=... (printed by the server), or set BONEVIEWER_TOKEN")
        host, port = parse_listen(str(address))
        if port == 0:
            raise ViewerError(f"connect {address}: give the port the server printed, not 0")
        host_part = f"[{host}]" if ":" in host else host
        self.address = f"{host_part}:{port}"
        self._next_id = 1
        self._stream_error: str | None = None
        try:
            self._ws = ws_connect(f"ws://{self.address}", compression=None, max_size=protocol.MAX_REPLY,
                                  open_timeout=timeout, close_timeout=1).__enter__()  # the connection (17.1+ wants the with form)
        except (OSError, TimeoutError, InvalidHandshake, WebSocketException) as error:
            raise ViewerError(f"connect {self.address}: cannot connect: {error}") from None
        try:
            self._call(protocol.hello(token), 1, timeout)
        except ViewerError:
            self._ws.close()
            raise

    # --- the calls -------------------------------------------------------------------------------
    def bones(self) -> list[str]:
        """The bone names in order: every skeleton's bones, as the Scene lists them."""
        return protocol.read_ok(self._request(lambda rid: protocol.encode(protocol.BONES, rid)))

    def set_pose(self, rotations=None, positions=None, scalings=None, bones=None, wait: bool = True) -> None:
        """Local transforms of bones, written to each bone's pose target as pose files do:
        rotations (N, 4) quaternions x, y, z, w; positions (N, 3); scalings (N, 3); in ``bones()``
        order, or for the named ``bones``. ``wait=False``: send and return at once (streaming)."""
        try:
            if not wait:
                self._check_stream_error()
                self._send(protocol.set_pose(0, rotations, positions, scalings, bones))
                return
            self._request(lambda rid: protocol.set_pose(rid, rotations, positions, scalings, bones))
        except ValueError as error:
            raise ViewerError(str(error)) from None

    def set_pose_dict(self, pose: dict) -> None:
        """A pose file's JSON as a dict ({"bones": {...}, "morph": {...}})."""
        if not isinstance(pose, dict):
            raise ViewerError(f"set_pose_dict: expected a dict, got {type(pose).__name__}")
        try:
            self._request(lambda rid: protocol.set_pose_dict(rid, pose))
        except ValueError as error:
            raise ViewerError(str(error)) from None

    def set_morph_weights(self, mesh_name: str, weights) -> None:
        """The morph target weights of the mesh named ``mesh_name``: a sequence (every target,
        in order) or a dict {target name or index: weight}."""
        if isinstance(weights, dict):
            targets = {str(k): float(v) for k, v in weights.items()}
        else:
            targets = {str(i): float(v) for i, v in enumerate(np.asarray(weights, dtype=np.float64).reshape(-1))}
        self.set_pose_dict({"version": 2, "bones": {}, "morph": {str(mesh_name): targets}})

    def set_time(self, t: float) -> None:
        """Seek the current clip to ``t`` seconds."""
        self._request(lambda rid: protocol.set_time(rid, t))

    def play(self, flag: bool = True) -> None:
        self._request(lambda rid: protocol.play(rid, bool(flag)))

    def set_camera(self, yaw=None, pitch=None, distance=None, target=None) -> None:
        """Yaw and pitch in degrees (as ``render --yaw --pitch``), distance, target (a world point);
        what is left out stays as it is (unset: framed on the model, as ``render`` frames it)."""
        try:
            self._request(lambda rid: protocol.set_camera(rid, yaw, pitch, distance, target))
        except (TypeError, ValueError) as error:
            raise ViewerError(f"set_camera: {error}") from None

    def render(self, size=(800, 600)) -> np.ndarray:
        """An (H, W, 4) uint8 RGBA image of the current state, drawn as ``boneviewer render`` draws."""
        try:
            protocol.check_image_size(size)
        except ValueError as error:
            raise ViewerError(str(error)) from None
        return protocol.read_image(self._request(lambda rid: protocol.render(rid, size)))

    def close(self) -> None:
        self._ws.close()

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

    def _request(self, build):
        request_id = self._next_id = self._next_id % 0xFFFFFFFF + 1
        self._check_stream_error()
        return self._call(build(request_id), request_id, REPLY_TIMEOUT)

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


def _why(error) -> str:
    received = getattr(error, "rcvd", None)
    return f": {received.reason}" if received is not None and received.reason else ""
