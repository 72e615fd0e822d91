"""The remote server: WebSocket connections on a thread of their own, messages applied on the
frame loop's thread.

The socket thread (an asyncio loop) only reads, checks and decodes messages, and sends the
replies the frame loop hands back; it never touches GL or the model. The frame loop calls
``poll(target)`` once a frame: the latest streamed pose of each connection is applied (older
ones were dropped when a newer one came: no queue grows), then the queued requests, in order.

A connection reads its next message only after its last request was answered and sent, so a
client that stops reading stalls only itself (and is closed after SEND_TIMEOUT). A client that
is gone without closing (its process stopped, its machine off the network) stops answering the
WebSocket pings and is cut after PING_INTERVAL + PING_TIMEOUT + CLOSE_TIMEOUT, so it does not
hold a place for long.
"""

from __future__ import annotations

import asyncio
import collections
import hmac
import logging
import secrets
import threading
import time

from ..errors import ViewerError
from . import protocol

DEFAULT_HOST = "127.0.0.1"
MAX_CLIENTS = 16
MAX_CLIENTS_LIMIT = 1024  # --max-clients at most: each connection holds a socket and its buffers
MAX_GREETING = 64      # connections still to present the token (each has HELLO_TIMEOUT): a flood is refused
HELLO_TIMEOUT = 2.0    # seconds a new connection has to present the token
PING_INTERVAL = 20.0   # seconds between the pings that find clients gone without closing (websockets' own)
PING_TIMEOUT = 20.0    # seconds a ping may wait for its answer before the connection is closed
CLOSE_TIMEOUT = 2.0    # seconds a closing connection waits for the client's part of the close (then it is cut)
SEND_TIMEOUT = 10.0    # seconds a reply may wait for a client that does not read
CLOSE_POLICY = 1008    # WebSocket close codes: policy violation (token), protocol error, try again later
CLOSE_PROTOCOL = 1002
CLOSE_BUSY = 1013


def new_token() -> str:
    return secrets.token_urlsafe(16)


def parse_listen(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (an IPv6 host in brackets) -> (host, port); the host defaults to loopback."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host = DEFAULT_HOST
    host = host.strip("[]") or DEFAULT_HOST
    try:
        number = int(port)
    except ValueError:
        raise ViewerError(f"--listen {text}: expected [HOST:]PORT such as 8765 or 0.0.0.0:8765") from None
    if not 0 <= number <= 65535:
        raise ViewerError(f"--listen {text}: the port must be 0..65535 (0 picks a free one)")
    return host, number


def logger():
    return logging.getLogger("boneviewer")


class _OneLine(logging.Handler):
    """websockets' own warnings (a failed handshake: not a WebSocket client) as one line each."""

    def emit(self, record) -> None:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {record.exc_info[1]}"
        logger().warning(f"remote: {text}")


def _websockets_logger():
    quiet = logging.getLogger("boneviewer.remote.websockets")
    if not quiet.handlers:
        quiet.addHandler(_OneLine(logging.WARNING))
        quiet.propagate = False
    return quiet


class _Connection:
    def __init__(self, websocket):
        self.websocket = websocket
        peer = websocket.remote_address
        self.host = peer[0] if peer else "?"
        self.peer = f"{peer[0]}:{peer[1]}" if peer else "?"
        self.connected_at = self.active_at = time.monotonic()  # active: its last message came then
        self.stream_error: str | None = None  # a refused streamed pose, told before the next reply
        self.pending = None                   # the future of the request the frame loop has not answered


class RemoteServer:
    """Listen on (host, port) with ``token``; ``start()`` binds (port 0: a free one, see
    ``address``), ``poll(target)`` applies what came, ``close()`` stops.

    >>> server = RemoteServer("127.0.0.1", 0, token).start()
    >>> while running: server.poll(target)      # on the frame loop's thread
    """

    def __init__(self, host: str = DEFAULT_HOST, port: int = 0, token: str | None = None,
                 max_clients: int = MAX_CLIENTS, ping_interval: float = PING_INTERVAL,
                 ping_timeout: float = PING_TIMEOUT):
        self.host, self.port = host, port
        self.token = token or new_token()
        if len(self.token.encode("utf-8")) > protocol.MAX_TOKEN:
            raise ViewerError(f"the token is over {protocol.MAX_TOKEN} bytes")
        if not (isinstance(max_clients, int) and not isinstance(max_clients, bool)
                and 1 <= max_clients <= MAX_CLIENTS_LIMIT):
            raise ViewerError(f"--max-clients: expected a whole number 1..{MAX_CLIENTS_LIMIT}, got {max_clients!r}")
        self.max_clients = max_clients
        self.ping_interval, self.ping_timeout = ping_interval, ping_timeout
        self.address: tuple[str, int] | None = None
        self._connections: set[_Connection] = set()  # every open connection, greeted or not
        self._clients: set[_Connection] = set()      # those that presented the token: at most max_clients
        self._latest: dict = {}                    # connection -> its newest unapplied streamed pose
        self._requests = collections.deque()       # (connection, request id, kind, request, future)
        self._wake = threading.Event()             # something to poll (for a host that waits)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self.messages_read = 0                     # requests read after the greeting (for benchmarks)

    # --- the socket thread ---------------------------------------------------------------------
    def start(self) -> "RemoteServer":
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="boneviewer-remote", daemon=True)
        self._thread.start()
        ready.wait()
        if self._failure is not None:
            raise ViewerError(f"--listen {self.host}:{self.port}: cannot listen there: {self._failure}")
        return self

    def _run(self, ready: threading.Event) -> None:
        try:
            asyncio.run(self._serve(ready))
        except BaseException as error:  # noqa: BLE001 - told to start() when binding failed
            self._failure = error
            ready.set()

    async def _serve(self, ready: threading.Event) -> None:
        from websockets.asyncio.server import serve

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            server = await serve(self._handle, self.host, self.port, max_size=protocol.MAX_REQUEST,
                                 open_timeout=HELLO_TIMEOUT, ping_interval=self.ping_interval,
                                 ping_timeout=self.ping_timeout, close_timeout=CLOSE_TIMEOUT,
                                 compression=None, max_queue=4, write_limit=2**20, logger=_websockets_logger())
        except OSError as error:
            self._failure = OSError(error.strerror or str(error))
            ready.set()
            return
        socket = server.sockets[0].getsockname()
        self.address = (self.host, socket[1])
        ready.set()
        async with server:
            await self._stop.wait()
            for connection in list(self._connections):
                if connection.pending is not None:
                    connection.pending.cancel()  # no frame will answer it now
            server.close()

    async def _handle(self, websocket) -> None:
        from websockets.exceptions import ConnectionClosed

        connection = _Connection(websocket)
        if len(self._connections) - len(self._clients) >= MAX_GREETING:
            logger().warning(f"remote: {connection.peer}: refused, {MAX_GREETING} connections are still to "
                             "present the token")
            await self._refuse(connection, 1, "the server is busy: too many connections without the token yet",
                               CLOSE_BUSY)
            return
        self._connections.add(connection)
        try:
            if not await self._greet(connection):
                return
            while True:
                data = await websocket.recv()
                connection.active_at = time.monotonic()
                try:
                    message = protocol.decode(data)
                    request = _read_request(message)
                except protocol.ProtocolError as error:
                    await self._drop(connection, str(error), CLOSE_PROTOCOL)
                    return
                self.messages_read += 1
                if message.request_id == 0:
                    # Latest wins: an unapplied older pose is dropped. No wake-up: a window applies it at
                    # its next frame; a server with no window, before the next request that needs it.
                    self._latest[connection] = request
                    continue
                future = self._loop.create_future()
                streamed = self._latest.pop(connection, None)
                if streamed is not None:  # keep this connection's order: its streamed pose first
                    self._requests.append((connection, 0, protocol.SET_POSE, streamed, None))
                self._requests.append((connection, message.request_id, message.kind, request, future))
                self._wake.set()
                connection.pending = future
                reply = await future
                connection.pending = None
                refused, connection.stream_error = connection.stream_error, None
                try:
                    await _send_within(websocket, [reply] if refused is None else [protocol.error(0, refused), reply],
                                       SEND_TIMEOUT)
                except TimeoutError:
                    await self._drop(connection, f"did not read its reply in {SEND_TIMEOUT:g} s", CLOSE_POLICY)
                    return
        except ConnectionClosed as closed:
            if closed.sent is not None and closed.sent.code == 1009:  # websockets refused an oversized message
                logger().warning(f"remote: {connection.peer}: a message over the limit of {protocol.MAX_REQUEST} "
                                 "bytes; closing the connection")
        finally:
            self._connections.discard(connection)
            self._clients.discard(connection)
            self._latest.pop(connection, None)

    async def _greet(self, connection) -> bool:
        """The first message must be HELLO with the token, within HELLO_TIMEOUT."""
        try:
            data = await asyncio.wait_for(connection.websocket.recv(), HELLO_TIMEOUT)
        except TimeoutError:
            await self._drop(connection, f"no token within {HELLO_TIMEOUT:g} s", CLOSE_POLICY)
            return False
        try:
            message = protocol.decode(data)
            if message.kind != protocol.HELLO:
                raise protocol.ProtocolError(f"the first message must be hello, not "
                                             f"{protocol.REQUESTS[message.kind]}")
            token = protocol.read_hello(message.payload)
        except protocol.ProtocolError as error:
            await self._drop(connection, str(error), CLOSE_PROTOCOL)
            return False
        if not hmac.compare_digest(token.encode("utf-8"), self.token.encode("utf-8")):
            logger().warning(f"remote: {connection.peer}: wrong token; closing the connection")
            await self._refuse(connection, message.request_id, "wrong token", CLOSE_POLICY)
            return False
        if len(self._clients) >= self.max_clients:
            # Told only to a client with the token: who holds the places is for the server's users.
            text = self.busy_message()
            logger().warning(f"remote: {connection.peer}: refused: {text}")
            await self._refuse(connection, message.request_id, text, CLOSE_BUSY)
            return False
        self._clients.add(connection)
        connection.active_at = time.monotonic()
        await asyncio.wait_for(connection.websocket.send(self.hello_reply(message.request_id)), SEND_TIMEOUT)
        return True

    def hello_reply(self, request_id: int) -> bytes:
        """The OK to the token: it lists the requests this server takes (clients read it to know
        whether MIX may be sent; a client before MIX ignores it)."""
        return protocol.hello_reply(request_id)

    def busy_message(self, shown: int = 6) -> str:
        """Why a client is refused at the limit: how many places are held, by whom (peer host and
        port), how long each has been connected and idle (the longest idle first), and what to do."""
        now = time.monotonic()
        held = sorted(self._clients, key=lambda connection: connection.active_at)
        hosts = collections.Counter(connection.host for connection in held)
        by_host = ", ".join(f"{host} x{count}" for host, count in hosts.most_common())
        holders = "; ".join(f"{connection.peer} connected {_duration(now - connection.connected_at)}, "
                            f"idle {_duration(now - connection.active_at)}" for connection in held[:shown])
        more = f"; {len(held) - shown} more" if len(held) > shown else ""
        return (f"the server is busy: all {len(held)} places held (--max-clients {self.max_clients}), by {by_host} "
                f"[{holders}{more}]; close unused clients (client.close()) or restart the server with a larger "
                "--max-clients N")

    async def _refuse(self, connection, request_id: int, text: str, code: int) -> None:
        """Tell the client why (an ERROR it can show), then close."""
        try:
            await asyncio.wait_for(connection.websocket.send(protocol.error(request_id, text)), 1.0)
        except Exception:  # noqa: BLE001 - it may be gone already
            pass
        await connection.websocket.close(code, text[:120])

    async def _drop(self, connection, reason: str, code: int) -> None:
        logger().warning(f"remote: {connection.peer}: {reason}; closing the connection")
        await connection.websocket.close(code, reason[:120])

    # --- the frame loop's thread ---------------------------------------------------------------
    def poll(self, target) -> int:
        """Apply what came since the last call to ``target`` (a RemoteTarget); returns how many
        messages were applied. Never blocks on a socket."""
        self._wake.clear()
        applied = 0
        for connection in list(self._latest):
            pose = self._latest.pop(connection, None)
            if pose is not None:
                self._apply_streamed(target, connection, pose)
                applied += 1
        while self._requests:
            connection, request_id, kind, request, future = self._requests.popleft()
            applied += 1
            if future is None:
                self._apply_streamed(target, connection, request)
                continue
            try:
                reply = _apply(target, request_id, kind, request)
            except ViewerError as error:
                reply = protocol.error(request_id, str(error))
            except Exception as error:  # noqa: BLE001 - a bug must not take the viewer down
                logger().warning(f"remote: {protocol.REQUESTS[kind]} failed: {type(error).__name__}: {error}")
                reply = protocol.error(request_id, f"internal error in {protocol.REQUESTS[kind]}: {error}")
            self._loop.call_soon_threadsafe(_resolve, future, reply)
        return applied

    def _apply_streamed(self, target, connection, pose) -> None:
        try:
            target.set_pose(pose)
        except ViewerError as error:
            if connection.stream_error is None:  # one line per run of refused poses, not one per frame
                logger().warning(f"remote: {connection.peer}: streamed pose refused: {error}")
            connection.stream_error = str(error)

    def wait(self, timeout: float) -> bool:
        """Block until a request may be waiting (or ``timeout`` s): for a host with no display,
        where streamed poses wait for the next request (nothing shows them before)."""
        return self._wake.wait(timeout)

    @property
    def client_count(self) -> int:
        return len(self._clients)

    def close(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


if hasattr(asyncio, "timeout"):  # Python 3.11+
    async def _send_within(websocket, messages, seconds: float) -> None:
        """Send ``messages`` in order, all within ``seconds`` (else TimeoutError): once per request,
        without the task wait_for makes for each send (about 7 us of a 0.25 ms set_pose round trip)."""
        async with asyncio.timeout(seconds):
            for data in messages:
                await websocket.send(data)
else:  # Python 3.10
    async def _send_within(websocket, messages, seconds: float) -> None:
        for data in messages:
            await asyncio.wait_for(websocket.send(data), seconds)


def _resolve(future, reply) -> None:
    if not future.done():  # the connection may have gone meanwhile
        future.set_result(reply)


def _read_request(message):
    """The decoded payload of a request (ProtocolError when it breaks the format)."""
    kind, payload = message.kind, message.payload
    if message.request_id == 0 and kind != protocol.SET_POSE:
        raise protocol.ProtocolError(f"{protocol.REQUESTS[kind]} needs a request id (only set_pose streams)")
    if kind == protocol.HELLO:
        raise protocol.ProtocolError("hello after the connection was greeted")
    if kind == protocol.BONES:
        if len(payload):
            raise protocol.ProtocolError("bones: expected an empty payload")
        return None
    readers = {protocol.SET_POSE: protocol.read_set_pose, protocol.SET_POSE_DICT: protocol.read_set_pose_dict,
               protocol.SET_TIME: protocol.read_set_time, protocol.PLAY: protocol.read_play,
               protocol.SET_CAMERA: protocol.read_set_camera, protocol.RENDER: protocol.read_render,
               protocol.MIX: protocol.read_mix, protocol.SET_SKINNING: protocol.read_set_skinning,
               protocol.SPRINGS: protocol.read_springs}
    return readers[kind](payload)


def _apply(target, request_id: int, kind: int, request) -> bytes:
    """One request applied to the target (on the frame loop's thread), and its reply."""
    if kind == protocol.BONES:
        return protocol.ok(request_id, target.bone_names())
    if kind == protocol.RENDER:
        target.before_render()  # the springs at the playhead, as `render --time` draws them
        return protocol.image(request_id, target.render(request.size, request.frame))
    if kind == protocol.MIX:
        return protocol.ok(request_id, target.mix(request))
    if kind == protocol.SPRINGS:
        return protocol.ok(request_id, target.springs(request))
    if kind == protocol.SET_SKINNING:
        target.set_skinning(request)
        return protocol.ok(request_id)
    if kind == protocol.SET_POSE:
        target.set_pose(request)
    elif kind == protocol.SET_POSE_DICT:
        target.set_pose_dict(request)
    elif kind == protocol.SET_TIME:
        target.set_time(request)
    elif kind == protocol.PLAY:
        target.play(request)
    elif kind == protocol.SET_CAMERA:
        target.set_camera(**request)
    return protocol.ok(request_id)
