"""The asyncio DIALOG client: services, subscriptions, commands and requests (docs/protocol.md)."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import hmac
import random
import secrets
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Optional, Set, Tuple, Union

from . import logging_, wire
from ._proto import dialog_pb2 as pb
from .wire import MessageType as T
from .wire import ProtocolError


def _os_user() -> str:
    """The user this process runs as (claimed in HELLO for access lists and the audit trail)."""
    try:
        import pwd

        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return str(os.geteuid()) if hasattr(os, "geteuid") else ""


_USER = _os_user()

log = logging.getLogger("dialog")

Endpoint = Tuple[str, int]
DEFAULT_CONTROL_SERVER = "127.0.0.1:3425"
CONTROL_SERVER_NAME = "DIALOG.ControlServer"


def parse_endpoint(text: str) -> Endpoint:
    """(host, port) of "host:port"; ValueError when malformed."""
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("invalid Control Server address '%s' (expected host:port)" % text)
    return host, int(port)


@dataclass
class Message:
    """One message of a service: its name, data and the provider's sequence number."""

    name: str
    data: bytes
    sequence: int


@dataclass
class Command:
    """A command received: its name, data and the name of the process that sent it."""

    name: str
    data: bytes
    origin: str


@dataclass
class Request:
    """A request to one of our services; answer it with Client.reply() or by returning from the handler."""

    service: str
    data: bytes
    id: int
    origin: str
    endpoint: Endpoint


class RequestError(Exception):
    """A request was not answered: ``status`` is "failed", "not-accepted", "permission-denied" (the
    partition's access list refused it), "timeout" or "provider-lost"."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__("%s: %s" % (status, message) if message else status)
        self.status = status


class _AuthFailed(Exception):
    """An inbound connection did not prove the partition's secret: refused, telling why."""


def _tls_contexts(cert: Optional[str], key: Optional[str], ca: Optional[str]):
    """(client, server) SSL contexts for mutual TLS with the partition's authority; (None, None)
    without TLS files. As libdialog: the peer's certificate must be signed by @p ca; the host name
    it names is not compared."""
    if not (cert or key or ca):
        return None, None
    if not (cert and key and ca):
        raise ClientError("TLS needs all of tls_cert, tls_key and tls_ca")
    try:
        client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        for c in (client, server):
            c.minimum_version = ssl.TLSVersion.TLSv1_2
            c.load_cert_chain(cert, key)
            c.load_verify_locations(cafile=ca)
            c.check_hostname = False
            c.verify_mode = ssl.CERT_REQUIRED
    except (OSError, ssl.SSLError) as e:
        raise ClientError("TLS files: %s" % e) from None
    return client, server



def reconnect_delay(attempt: int, interval: float, r: float) -> float:
    """Seconds until the next attempt to reach the Control Server, as libdialog's clientcore does:
    every process of a partition loses the Control Server at the same moment, so the first attempt
    (attempt 0) is anywhere in one heartbeat interval; an attempt that fails or stays unanswered
    waits in [c/2, c), c doubling from 2 intervals up to 8 intervals (at most 30 s). @p r in [0, 1]."""
    base = max(0.001, interval)
    r = min(1.0, max(0.0, r))
    if attempt <= 0:
        return r * base
    cap = max(base, min(30.0, 8 * base))
    ceiling = min(cap, base * (1 << min(attempt, 20)))
    return ceiling / 2 + r * (ceiling - ceiling / 2)

class ClientError(Exception):
    """The client cannot work (invalid address, listen failure, refused registration)."""


class ConnectError(ClientError, TimeoutError):
    """The Control Server did not accept this process in time; the message says why: the reason of
    its refusal, or which address could not be reached and the system's error. A TimeoutError too,
    so code written against wait_connected()'s former bare time-out keeps working."""


def route_address(host: str, port: int) -> str:
    """The local address of the route to @p host:@p port, as libdialog chooses the address a process
    advertises: the interface the Control Server is reached through. Loopback for a local Control
    Server; the host name when the route cannot be found (no interface up, unknown name)."""
    if host == "localhost" or host.startswith("127.") or host == "::1":
        return "127.0.0.1"
    try:
        family, _, _, _, addr = socket.getaddrinfo(host, port, 0, socket.SOCK_DGRAM)[0]
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.connect(addr)  # a route lookup: a datagram socket sends nothing when it connects
            return s.getsockname()[0]
    except OSError:
        return socket.gethostname()


# --- outgoing connections ---------------------------------------------------------------------


class _Outbox:
    """Frames to one destination: one outgoing TCP connection, opened on demand, HELLO first.

    The queue is bounded (``max_queue_bytes``); send() returns False when it is full.
    """

    def __init__(self, client: "Client", endpoint: Endpoint) -> None:
        self.client = client
        self.endpoint = endpoint
        self.queue: List[bytes] = []
        self.queued = 0
        self.wake = asyncio.Event()
        self.task: Optional[asyncio.Task] = None
        self.writer: Optional[asyncio.StreamWriter] = None
        self.room = asyncio.Event()
        self.room.set()

    def send(self, frame: bytes) -> bool:
        if self.queued + len(frame) > self.client.max_queue_bytes and self.queued > 0:
            self.client.stats["dropped"] += 1
            return False
        self.queue.append(frame)
        self.queued += len(frame)
        if self.queued >= self.client.max_queue_bytes:
            self.room.clear()
        self.wake.set()
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())
            self.client._tasks.add(self.task)
            self.task.add_done_callback(self.client._tasks.discard)
        return True

    async def _run(self) -> None:
        reason = "closed"
        waiter: Optional[asyncio.Task] = None
        watch: Optional[asyncio.Task] = None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(*self.endpoint, ssl=self.client._tls_client), self.client.connect_timeout
            )
            self.writer = writer
            self.client.stats["reconnects"] += 1
            hello = self.client._hello()
            nonce = b""
            if self.client._secret is not None:
                nonce = secrets.token_bytes(wire.NONCE_BYTES)
                hello.nonce = nonce
            hello_payload = hello.SerializeToString()
            writer.write(wire.encode_frame(T.HELLO, hello_payload))
            decoder = wire.FrameDecoder()
            if nonce:
                await asyncio.wait_for(
                    self._authenticate(reader, writer, decoder, nonce, hello_payload), self.client.connect_timeout
                )
            # EOF = peer gone; the Control Server may write a REFUSED back first (protocol.md, section 1)
            watch = asyncio.get_running_loop().create_task(self.client._read_back(self.endpoint, reader, decoder))
            watch.add_done_callback(lambda t: t.cancelled() or t.exception())  # a reset is an EOF too
            while True:
                if not self.queue:
                    self.wake.clear()
                    waiter = asyncio.get_running_loop().create_task(self.wake.wait())
                    done, _ = await asyncio.wait(
                        {waiter, watch}, timeout=self.client.idle_timeout, return_when=asyncio.FIRST_COMPLETED
                    )
                    if watch in done:
                        waiter.cancel()
                        reason = "connection closed by the peer"
                        raise ConnectionError(reason)
                    if not done:  # idle: close, reopen when needed
                        waiter.cancel()
                        watch.cancel()
                        writer.close()
                        return
                    continue
                chunks, self.queue = self.queue, []
                n = sum(len(c) for c in chunks)
                writer.write(b"".join(chunks))
                self.client.stats["messages_out"] += len(chunks)
                self.client.stats["bytes_out"] += n
                await writer.drain()
                self.queued = max(0, self.queued - n)
                if self.queued < self.client.max_queue_bytes // 2:
                    self.room.set()
        except asyncio.CancelledError:
            if self.writer:
                self.writer.close()
            raise
        except (OSError, ConnectionError, asyncio.TimeoutError, ProtocolError) as e:
            reason = str(e) or type(e).__name__
        finally:
            for t in (waiter, watch):
                if t is not None and not t.done():
                    t.cancel()
        if self.queue:
            self.client.stats["dropped"] += 1
        self.queue, self.queued = [], 0
        self.room.set()
        if self.writer:
            self.writer.close()
        self.writer = None
        self.client._destination_failed(self.endpoint, reason)

    async def _authenticate(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, decoder: wire.FrameDecoder,
        nonce: bytes, hello: bytes,
    ) -> None:
        """The connecting side of the challenge-response (protocol.md, "Authentication"): checks the
        destination's AUTH, then proves the secret in turn. Nothing else is written before."""
        secret = self.client._secret
        where = "%s:%s" % self.endpoint
        while True:
            data = await reader.read(64 * 1024)
            if not data:
                raise ConnectionError("%s closed the connection while authenticating" % where)
            for f in decoder.feed(data):
                if f.type == T.REFUSED:
                    msg = wire.parse_control(f)
                    self.client._auth_refused(self.endpoint, msg.reason)
                    raise ConnectionError("refused by %s: %s" % (where, msg.reason))
                if f.type != T.AUTH:
                    raise ProtocolError("unexpected %s written back by %s" % (f.type.name, where))
                a = wire.parse_control(f)
                expected = wire.auth_proof(secret, "acceptor", nonce, a.nonce, hello)
                if len(a.nonce) != wire.NONCE_BYTES or not hmac.compare_digest(expected, a.proof):
                    reason = "authentication failed: %s did not prove the partition's secret" % where
                    self.client.stats["auth_failures"] += 1
                    self.client._auth_refused(self.endpoint, reason)
                    raise ConnectionError(reason)
                proof = wire.auth_proof(secret, "connector", nonce, a.nonce, hello)
                auth = pb.Auth(proof=proof)
                if self.client._process_key is not None:  # our name, proven (docs/security.md, "Identities")
                    auth.identity = wire.identity_proof(self.client._process_key, nonce, a.nonce, hello)
                writer.write(wire.control_frame(T.AUTH, auth))
                return

    def close(self) -> None:
        if self.task and not self.task.done():
            self.task.cancel()
        if self.writer:
            self.writer.close()


# --- services and subscriptions ---------------------------------------------------------------


class Service:
    """A service this process provides. update() sends the new value to every subscriber."""

    def __init__(self, client: "Client", name: str, on_request: Optional[Callable] = None) -> None:
        self.client = client
        self.name = name
        self.sequence = 0
        self.last: Optional[Tuple[bytes, int]] = None  # prepared data, flags
        self.subscribers: Dict[Endpoint, Tuple[str, int]] = {}
        self.on_request = on_request
        self.dropped = 0

    @property
    def subscriber_count(self) -> int:
        return len(self.subscribers)

    def update(self, data: Union[bytes, str]) -> None:
        """Publishes @p data (bytes, or str sent as UTF-8). Never blocks: a subscriber whose queue is
        full misses this value (it gets the latest with its next one, as in libdialog's Drop mode)."""
        if isinstance(data, str):
            data = data.encode()
        if len(data) > self.client.max_message_size:
            raise ValueError("message of %d bytes exceeds the maximum of %d" % (len(data), self.client.max_message_size))
        prepared, flags = wire.prepare_data(bytes(data), self.client.compression_threshold)
        self.sequence += 1
        self.last = (prepared, flags)
        if not self.subscribers:
            return
        frame = wire.service_frame(self.name, self.sequence, prepared, flags)
        for ep in list(self.subscribers):
            if not self.client._outbox(ep).send(frame):
                self.dropped += 1

    async def drain(self) -> None:
        """Waits until every subscriber's queue has room again (half its bound): a publisher that
        calls it after update() never loses a message to a slow subscriber (libdialog's Block mode)."""
        for ep in list(self.subscribers):
            box = self.client._outboxes.get(ep)
            if box is not None and not box.room.is_set():
                await box.room.wait()

    async def wait_subscribers(self, n: int = 1, timeout: float = 10.0) -> None:
        """Waits until at least @p n subscribers are connected (asyncio.TimeoutError otherwise)."""

        async def poll() -> None:
            while len(self.subscribers) < n:
                await asyncio.sleep(0.02)

        await asyncio.wait_for(poll(), timeout)

    def _add(self, ep: Endpoint, name: str, incarnation: int, token: bytes = b"") -> None:
        self.subscribers[ep] = (name, incarnation)
        if 0 < len(token) <= 64:
            # The subscription's token echoed (sequence 0) ahead of the values, on the connection
            # they go by: the subscriber takes this service's data from that connection only.
            self.client._outbox(ep).send(wire.service_frame(self.name, 0, token))
        if self.last is not None:
            self.client._outbox(ep).send(wire.service_frame(self.name, self.sequence, *self.last))


class Subscription:
    """Messages of one service. Iterate it (``async for m in sub``) or give a callback to subscribe().

    ``state`` is "waiting" (no provider known), "connecting", "active" or "lost".
    """

    def __init__(self, client: "Client", name: str, callback: Optional[Callable[[Message], Any]], attached: bool):
        self.client = client
        self.name = name
        self.callback = callback
        self.attached = attached
        self.state = "waiting"
        self.provider = ""
        self.received = 0
        self.lost = 0
        self.last: Optional[Message] = None
        self._queue: asyncio.Queue = asyncio.Queue()
        self._seq: Dict[int, int] = {}  # provider incarnation -> last sequence
        self._closed = False

    def _deliver(self, m: Message, incarnation: int) -> None:
        prev = self._seq.get(incarnation)
        if self.attached and prev is not None and m.sequence <= prev:
            # A stream is never re-sent: a number that goes back is a new stream the sender opened
            # on this channel (we subscribed again), counted afresh.
            prev = m.sequence - 1
        if prev is not None and m.sequence <= prev:
            return  # a value already seen (re-sent on (re)subscription)
        if prev is not None and m.sequence > prev + 1:
            self.lost += m.sequence - prev - 1
        self._seq[incarnation] = m.sequence
        self.received += 1
        self.last = m
        if self.state != "active":
            self.state = "active"
        if self.callback is not None:
            try:
                r = self.callback(m)
                if r is not None and asyncio.iscoroutine(r):
                    asyncio.get_running_loop().create_task(r)
            except Exception:  # a failing callback must not break the connection
                log.exception("subscription callback for %s failed", self.name)
        else:
            self._queue.put_nowait(m)

    def __aiter__(self) -> "Subscription":
        return self

    async def __anext__(self) -> Message:
        if self._closed and self._queue.empty():
            raise StopAsyncIteration
        m = await self._queue.get()
        if m is None:
            raise StopAsyncIteration
        return m

    async def get(self, timeout: Optional[float] = None) -> Message:
        """The next message (asyncio.TimeoutError after @p timeout seconds)."""
        m = await asyncio.wait_for(self._queue.get(), timeout)
        if m is None:
            raise StopAsyncIteration
        return m

    def close(self) -> None:
        """Unsubscribes; an iterator ends after the messages already queued."""
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(None)
            self.client._unsubscribe(self)


# --- the client -------------------------------------------------------------------------------


class Client:
    """One DIALOG process: connects to the Control Server, provides services, subscribes, sends and
    receives commands and requests. Use it inside a running asyncio loop::

        async with Client("MyScript") as c:
            svc = c.publish("MyScript.Value")
            svc.update(b"42")
            async for m in c.subscribe("Readout1.EventRate"):
                print(m.data)

    @param control_server "host:port" or a list of them; default: $DIALOG_CONTROL_SERVER, else
           127.0.0.1:3425. Several addresses are tried in turn (fail-over to a standby).
    @param advertise the address other processes reach this one at; default $DIALOG_ADVERTISE,
           else the local address of the route to the Control Server (route_address()).
           ``host=`` is the older name of the same option.
    """

    def __init__(
        self,
        name: str,
        control_server: Union[str, List[str], None] = None,
        *,
        heartbeat_ms: int = 1000,
        compression_threshold: int = wire.DEFAULT_COMPRESSION_THRESHOLD,
        max_message_size: int = wire.DEFAULT_MAX_MESSAGE_SIZE,
        max_queue_bytes: int = 8 * 1024 * 1024,
        idle_timeout: float = 60.0,
        connect_timeout: float = 5.0,
        advertise: Optional[str] = None,
        host: Optional[str] = None,
        secret_file: Optional[str] = None,
        process_key_file: Optional[str] = None,
        tls_cert: Optional[str] = None,
        tls_key: Optional[str] = None,
        tls_ca: Optional[str] = None,
    ) -> None:
        if not name or len(name.encode()) > wire.MAX_NAME_LENGTH:
            raise ClientError("invalid process name '%s'" % name[:64])
        if control_server is None:
            control_server = os.environ.get("DIALOG_CONTROL_SERVER") or DEFAULT_CONTROL_SERVER
        if isinstance(control_server, str):
            control_server = [s for s in control_server.split(",") if s.strip()]
        try:
            self.servers: List[Endpoint] = [parse_endpoint(s) for s in control_server]
        except ValueError as e:
            raise ClientError(str(e)) from None
        if not self.servers:
            raise ClientError("no Control Server address")
        self.name = name
        # The partition's shared secret and TLS files (default: $DIALOG_SECRET_FILE, $DIALOG_TLS_*).
        secret_file = secret_file if secret_file is not None else os.environ.get("DIALOG_SECRET_FILE")
        try:
            self._secret: Optional[bytes] = wire.read_secret_file(secret_file) if secret_file else None
        except ValueError as e:
            raise ClientError(str(e)) from None
        # The key `dialogctl up` issued this process ($DIALOG_PROCESS_KEY_FILE): it proves our name to
        # the Control Server in the handshake. A key of another name is not ours (an inherited one).
        self._process_key: Optional[bytes] = None
        key_file = process_key_file if process_key_file is not None else os.environ.get("DIALOG_PROCESS_KEY_FILE")
        if key_file and self._secret is not None:
            try:
                key_name, key = wire.read_process_key_file(key_file)
            except ValueError as e:
                raise ClientError(str(e)) from None
            self._process_key = key if key_name == name else None
        self._tls_client, self._tls_server = _tls_contexts(
            tls_cert if tls_cert is not None else os.environ.get("DIALOG_TLS_CERT"),
            tls_key if tls_key is not None else os.environ.get("DIALOG_TLS_KEY"),
            tls_ca if tls_ca is not None else os.environ.get("DIALOG_TLS_CA"),
        )
        self.heartbeat_ms = max(10, heartbeat_ms)
        self.compression_threshold = compression_threshold
        self.max_message_size = max_message_size
        self.max_queue_bytes = max_queue_bytes
        self.idle_timeout = idle_timeout
        self.connect_timeout = connect_timeout
        # The address other processes reach us at: given (advertise=, the older host=, or
        # $DIALOG_ADVERTISE), else the route to the Control Server, chosen again after a fail-over.
        given = advertise or host or os.environ.get("DIALOG_ADVERTISE", "").strip()
        self._advertise_fixed = bool(given)
        self.host = given or route_address(*self.servers[0])
        #: why the Control Server has not accepted us yet ("" once connected)
        self.last_error = ""
        self.port = 0
        self.pid = os.getpid()
        self.incarnation = random.getrandbits(64) | 1
        # Connect.session: the Control Server echoes it in SUCCESSFULLY_CONNECTED, which names the
        # connection control frames and commands are believed from (docs/protocol.md, section 4).
        self._session = os.urandom(16)
        self._cs_peer: Optional[pb.Hello] = None
        self._answers = pb.Hello(name=CONTROL_SERVER_NAME)  # REFUSED written back on our own connection
        self.ignored_frames = 0
        # Subscribe.token of each subscription, new for each provider incarnation (service ->
        # (incarnation, token)), and the connection that echoed it (service -> its peer): a
        # service's data is believed from that connection only (docs/security.md).
        self._tokens: Dict[str, Tuple[int, bytes]] = {}
        self._data_peers: Dict[str, pb.Hello] = {}
        self._reasked: Dict[str, pb.Hello] = {}  # the last connection the provider was asked again for
        #: SERVICE_MESSAGEs ignored: not from the connection of the provider subscribed to
        self.ignored_data = 0
        # Services refused for now (Refused.retry_ms: the directory is full) and asked again, paced.
        self._register_later: Set[str] = set()
        self._register_backoff = 0.0
        self._register_handle: Optional[asyncio.TimerHandle] = None
        #: "unconnected", "connecting" or "connected"
        self.state = "unconnected"
        self.stats: Dict[str, int] = dict(
            messages_out=0, bytes_out=0, messages_in=0, bytes_in=0, dropped=0, reconnects=0, protocol_errors=0,
            auth_failures=0,
        )
        #: ProtocolError of every connection closed for malformed input (most recent last, at most 100)
        self.protocol_errors: List[ProtocolError] = []
        #: (what, name, reason) of every refusal by the Control Server
        self.refusals: List[Tuple[str, str, str]] = []
        self._services: Dict[str, Service] = {}
        self._subs: Dict[str, List[Subscription]] = {}
        self._requested: Dict[str, int] = {}  # service -> number of subscriptions (REQUEST_SERVICE)
        self._providers: Dict[str, Tuple[str, Endpoint, int]] = {}
        self._commands: Dict[str, List[Callable[[Command], Any]]] = {}
        self._command_queue: asyncio.Queue = asyncio.Queue()
        self._pending: Dict[int, Tuple[str, asyncio.Future, bytes, bool]] = {}
        self._locators: Dict[str, Subscription] = {}
        self._next_id = 1
        self._report_sequence = 0
        self._outboxes: Dict[Endpoint, _Outbox] = {}
        self._tasks: Set[asyncio.Task] = set()
        self._inbound: Set[asyncio.StreamWriter] = set()
        self._server: Optional[asyncio.base_events.Server] = None
        self._server_index = 0
        # Fencing: the highest term of a Control Server that accepted us, and where it served.
        self._term = 0
        self._term_server = ""
        self._last_heard = 0.0
        self._misses = 3
        self._hb_seq = 0
        self._connected = asyncio.Event()
        # The names the last CONNECT carried: what changes before it is accepted is sent after.
        self._announced: Tuple[Set[str], Set[str], Set[str]] = (set(), set(), set())
        self._started = False
        self._stopping = False
        self.on_error: Optional[Callable[[Exception], Any]] = None
        # Back-off after the Control Server refused this process (name in use, address unreachable):
        # 2, 4, 8 ... 30 s between attempts, as libdialog does; reset by a successful connection.
        self._connect_delay = 0.0
        self._connect_not_before = 0.0
        self._connect_attempts = 0  # since the last successful connection (paced: reconnect_delay)

    # --- life cycle ---

    async def start(self) -> None:
        """Listens, connects to the Control Server (in the background: see wait_connected())."""
        if self._started:
            return
        self._started = True
        # Loopback only when every Control Server is local (the address follows a fail-over's route).
        local = self.host.startswith("127.") or self.host == "localhost"
        everywhere = not local or any(route_address(*ep) != "127.0.0.1" for ep in self.servers)
        bind = "0.0.0.0" if everywhere else ("127.0.0.1" if self.host == "localhost" else self.host)
        try:
            self._server = await asyncio.start_server(self._accept, bind, 0, limit=1 << 20, ssl=self._tls_server)
        except OSError as e:
            raise ClientError("cannot listen: %s" % e) from e
        self.port = self._server.sockets[0].getsockname()[1]
        loop = asyncio.get_running_loop()
        self._last_heard = loop.time()
        self._spawn(self._keepalive())
        self._send_connect()

    async def wait_connected(self, timeout: float = 10.0) -> None:
        """Waits until the Control Server accepted the connection; ConnectError (a TimeoutError)
        otherwise, saying why: the Control Server's refusal, or the address that could not be
        reached and the system's error."""
        try:
            await asyncio.wait_for(self._connected.wait(), timeout)
        except asyncio.TimeoutError:
            where = ", ".join("%s:%d" % ep for ep in self.servers)
            why = self.last_error or "no answer from %s" % where
            raise ConnectError("not connected to the Control Server (%s) within %g s: %s" % (where, timeout, why)) from None

    async def close(self) -> None:
        """Sends DISCONNECT, closes every connection and stops the background tasks."""
        if not self._started or self._stopping:
            return
        self._stopping = True
        if self.state == "connected":
            box = self._cs_box()
            box.send(wire.encode_frame(T.DISCONNECT))
            try:
                await asyncio.wait_for(self._flush(box), 1.0)
            except asyncio.TimeoutError:
                pass
        for fut in [p[1] for p in self._pending.values()]:
            if not fut.done():
                fut.set_exception(RequestError("failed", "client closed"))
        self._pending.clear()
        if self._server:
            self._server.close()
        for w in list(self._inbound):
            w.close()
        for b in self._outboxes.values():
            b.close()
        if self._register_handle is not None:
            self._register_handle.cancel()
            self._register_handle = None
        for t in list(self._tasks):
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server:
            try:
                await asyncio.wait_for(self._server.wait_closed(), 1.0)
            except asyncio.TimeoutError:
                pass
        for subs in self._subs.values():
            for s in subs:
                s._closed = True
                s._queue.put_nowait(None)

    async def __aenter__(self) -> "Client":
        await self.start()
        await self.wait_connected()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    @staticmethod
    async def _flush(box: _Outbox) -> None:
        while box.queue or (box.task and not box.task.done() and box.queued):
            await asyncio.sleep(0.005)

    def _spawn(self, coro: Awaitable) -> asyncio.Task:
        t = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(t)
        t.add_done_callback(self._tasks.discard)
        return t

    # --- public API ---

    def publish(self, name: str, on_request: Optional[Callable[[Request], Any]] = None) -> Service:
        """Provides the service @p name. @p on_request (optional) answers REQUESTs to it: it gets a
        Request and returns bytes/str (or an awaitable of them), or raises to answer an error."""
        self._check_name(name)
        if name in self._services:
            raise ClientError("service '%s' is already published by this client" % name)
        s = Service(self, name, on_request)
        self._services[name] = s
        if self.state == "connected":
            self._control(T.REGISTER_SERVICE, pb.Names(names=[name]))
        return s

    def unpublish(self, service: Service) -> None:
        if self._services.pop(service.name, None) is not None and self.state == "connected":
            self._control(T.UNREGISTER_SERVICE, pb.Names(names=[service.name]))

    def subscribe(self, name: str, callback: Optional[Callable[[Message], Any]] = None) -> Subscription:
        """Subscribes to @p name: the provider is located through the Control Server (now or when it
        appears) and sends its current value first. Without @p callback iterate the Subscription."""
        self._check_name(name)
        s = Subscription(self, name, callback, attached=False)
        self._subs.setdefault(name, []).append(s)
        n = self._requested.get(name, 0)
        self._requested[name] = n + 1
        if n == 0:
            if self.state == "connected":
                self._control(T.REQUEST_SERVICE, pb.Names(names=[name]))
        elif name in self._providers:
            pname, ep, inc = self._providers[name]
            self._subscribe_at(name, ep, pname, inc)
        return s

    def attach(self, channel: str, callback: Optional[Callable[[Message], Any]] = None) -> Subscription:
        """Receives the messages of a stream channel another process opened to us (no Control Server)."""
        self._check_name(channel)
        s = Subscription(self, channel, callback, attached=True)
        s.state = "active"
        self._subs.setdefault(channel, []).append(s)
        return s

    def register_command(self, name: str, callback: Optional[Callable[[Command], Any]] = None) -> None:
        """Receives the command @p name: @p callback is called, or (without one) commands() yields it."""
        self._check_name(name)
        first = name not in self._commands
        self._commands.setdefault(name, [])
        if callback is not None:
            self._commands[name].append(callback)
        if first and self.state == "connected":
            self._control(T.REGISTER_COMMAND, pb.Names(names=[name]))

    def unregister_command(self, name: str) -> None:
        if self._commands.pop(name, None) is not None and self.state == "connected":
            self._control(T.UNREGISTER_COMMAND, pb.Names(names=[name]))

    async def commands(self):
        """Async iterator over the received commands that have no callback."""
        while True:
            c = await self._command_queue.get()
            if c is None:
                return
            yield c

    def send_command(self, name: str, data: Union[bytes, str] = b"") -> bool:
        """Sends command @p name to every registrant, via the Control Server. False when not connected."""
        self._check_name(name)
        if isinstance(data, str):
            data = data.encode()
        if self.state != "connected":
            return False
        prepared, flags = wire.prepare_data(bytes(data), self.compression_threshold)
        return self._cs_box().send(wire.command_frame(name, self.name, prepared, flags))

    async def request(self, service: str, data: Union[bytes, str] = b"", timeout: float = 5.0) -> bytes:
        """Sends a REQUEST to the provider of @p service and returns the data of its REPLY.

        Raises RequestError ("failed", "not-accepted", "timeout", "provider-lost")."""
        self._check_name(service)
        if isinstance(data, str):
            data = data.encode()
        if len(data) > self.max_message_size:
            raise RequestError("invalid", "request of %d bytes exceeds the maximum" % len(data))
        rid = self._next_id
        self._next_id += 1
        prepared, flags = wire.prepare_data(bytes(data), self.compression_threshold)
        frame = wire.request_frame(service, rid, prepared, flags)
        fut = asyncio.get_running_loop().create_future()
        self._pending[rid] = (service, fut, frame, False)
        if service not in self._subs and service not in self._locators:
            self._locators[service] = self.subscribe(service, callback=lambda m: None)
        self._send_pending(service)
        try:
            return await asyncio.wait_for(asyncio.shield(fut), timeout)
        except asyncio.TimeoutError:
            raise RequestError("timeout", "no reply within %d ms" % int(timeout * 1000)) from None
        finally:
            self._pending.pop(rid, None)

    def reply(self, request: Request, data: Union[bytes, str] = b"", error: Optional[str] = None) -> None:
        """Answers @p request with @p data, or with a failure carrying @p error."""
        if isinstance(data, str):
            data = data.encode()
        if error is not None:
            frame = wire.reply_frame(request.id, 1, error.encode())
        else:
            prepared, flags = wire.prepare_data(bytes(data), self.compression_threshold)
            frame = wire.reply_frame(request.id, 0, prepared, flags)
        self._outbox(request.endpoint).send(frame)

    def provider_of(self, service: str) -> str:
        """Name of the process providing @p service as far as this client knows, else ""."""
        p = self._providers.get(service)
        return p[0] if p else ""

    async def report(self, text: str, severity: str = "info", category: str = "default",
                     values: Optional[Dict[str, Any]] = None, timeout: float = 5.0) -> None:
        """Stores a message in the partition's message log (dialog-logger) and returns once the
        logger stored it. @p severity: debug, info, warning, error or fatal; @p values: a dict of
        plain values kept with the message. RequestError when no logger answers or it refuses
        (its reason); ValueError for an unknown severity. Unlike libdialog's report(), nothing is
        queued: a script learns at once whether its message is in the log."""
        level = logging_.severity_number(severity)
        self._report_sequence += 1
        rec = logging_.record(int(time.time() * 1000), socket.gethostname(), self.pid, level, category, text,
                              self._report_sequence, values)
        await self.request(logging_.LOGGER_SERVICE, logging_.store_request([rec]), timeout)

    @staticmethod
    def _check_name(name: str) -> None:
        if not name or len(name.encode()) > wire.MAX_NAME_LENGTH:
            raise ValueError("invalid name '%s' (empty or over %d bytes)" % (name[:64], wire.MAX_NAME_LENGTH))

    # --- internals: control ---

    def _hello(self) -> pb.Hello:
        from . import __version__  # the package's, set once dialog/__init__.py has run

        return pb.Hello(
            name=self.name,
            host=self.host,
            port=self.port,
            pid=self.pid,
            incarnation=self.incarnation,
            user=_USER,
            host_name=socket.gethostname(),
            version=__version__,
        )

    def _outbox(self, ep: Endpoint) -> _Outbox:
        b = self._outboxes.get(ep)
        if b is None:
            b = self._outboxes[ep] = _Outbox(self, ep)
        return b

    def _cs_box(self) -> _Outbox:
        return self._outbox(self.servers[self._server_index])

    def _control(self, type_: T, msg: Any) -> None:
        self._cs_box().send(wire.control_frame(type_, msg))

    def _send_connect(self) -> None:
        if self._stopping:
            return
        c = pb.Connect(
            name=self.name,
            host=self.host,
            port=self.port,
            pid=self.pid,
            incarnation=self.incarnation,
            services=list(self._services),
            commands=list(self._commands),
            requests=list(self._requested),
            heartbeat_ms=self.heartbeat_ms,
            session=self._session_for_server(),
            term=self._term,
            term_server=self._term_server,
        )
        self._cs_peer = None
        if self.state != "connecting":
            self.state = "connecting"
        now = asyncio.get_running_loop().time()
        if now < self._connect_not_before:
            return  # paced or refused: the keep-alive loop tries again once the wait is over
        self._control(T.CONNECT_TO_CONTROL_SERVER, c)
        self._announced = (set(c.services), set(c.commands), set(c.requests))
        # Unanswered or failed, it is asked again later and later, with jitter (a refusal reschedules).
        self._connect_attempts += 1
        self._connect_not_before = now + reconnect_delay(self._connect_attempts, self.heartbeat_ms / 1000.0,
                                                         random.random())

    def _spread_first_attempt(self) -> None:
        """The Control Server was lost (or lost us): the next CONNECT goes anywhere in one interval."""
        self._connect_attempts = 0
        self._connect_not_before = asyncio.get_running_loop().time() + reconnect_delay(
            0, self.heartbeat_ms / 1000.0, random.random())

    async def _keepalive(self) -> None:
        loop = asyncio.get_running_loop()
        interval = self.heartbeat_ms / 1000.0
        while True:
            if self.state != "connected":
                wait = self._connect_not_before - loop.time()
                await asyncio.sleep(min(interval, wait) if wait > 0 else 0)
                if self.state == "connected" or loop.time() < self._connect_not_before:
                    continue
                if self.state == "connecting" and len(self.servers) > 1:
                    self._next_server()
                self._send_connect()
                continue
            await asyncio.sleep(interval)
            if self.state == "connected":
                if loop.time() - self._last_heard > self._misses * interval:
                    self._server_lost("no answer from the Control Server for %d heartbeat intervals" % self._misses)
                    continue
                self._hb_seq += 1
                st = pb.Statistics(
                    messages_out=self.stats["messages_out"],
                    bytes_out=self.stats["bytes_out"],
                    messages_in=self.stats["messages_in"],
                    bytes_in=self.stats["bytes_in"],
                    dropped=self.stats["dropped"],
                    reconnects=self.stats["reconnects"],
                    protocol_errors=self.stats["protocol_errors"],
                    queued_bytes=sum(b.queued for b in self._outboxes.values()),
                    outgoing_connections=sum(1 for b in self._outboxes.values() if b.writer is not None),
                    incoming_connections=len(self._inbound),
                )
                self._control(T.HEARTBEAT, pb.Heartbeat(incarnation=self.incarnation, sequence=self._hb_seq, statistics=st))

    def _forget_providers(self, why: str) -> None:
        for name in list(self._providers):
            for s in self._subs.get(name, []):
                s.state = "waiting"
        self._providers.clear()
        self._tokens.clear()
        self._data_peers.clear()
        self._reasked.clear()
        log.info("%s lost the Control Server: %s", self.name, why)

    def _server_lost(self, why: str) -> None:
        if self.state == "connected":
            self._spread_first_attempt()
        if self.state != "unconnected":
            self._forget_providers(why)
        self.state = "unconnected"
        self._connected.clear()
        if len(self.servers) > 1:
            self._next_server()

    def _next_server(self) -> None:
        """Turns to the next Control Server address; the advertised address follows the route to it
        unless it was given."""
        self._server_index = (self._server_index + 1) % len(self.servers)
        if not self._advertise_fixed:
            self.host = route_address(*self.servers[self._server_index])

    def _destination_failed(self, ep: Endpoint, reason: str) -> None:
        if self._stopping:
            return
        if ep == self.servers[self._server_index]:
            if self.state != "connected":
                self.last_error = "%s:%d unreachable: %s" % (ep[0], ep[1], reason)
            self._server_lost(reason)
            return
        for s in self._services.values():
            s.subscribers.pop(ep, None)

    def _subscribe_at(self, service: str, ep: Endpoint, provider: str, incarnation: int) -> None:
        self._providers[service] = (provider, ep, incarnation)
        known = self._tokens.get(service)
        if known is None or known[0] != incarnation:
            # A new provider: a new token, and no connection believed until it echoes it.
            known = (incarnation, secrets.token_bytes(16))
            self._tokens[service] = known
            self._data_peers.pop(service, None)
            self._reasked.pop(service, None)
        self._outbox(ep).send(wire.control_frame(T.SUBSCRIBE_SERVICE, pb.Subscribe(name=service, token=known[1])))
        for s in self._subs.get(service, []):
            s.state, s.provider = "connecting", provider
        self._send_pending(service)

    def _unsubscribe(self, sub: Subscription) -> None:
        subs = self._subs.get(sub.name, [])
        if sub in subs:
            subs.remove(sub)
        if not subs:
            self._subs.pop(sub.name, None)
        if sub.attached:
            return
        n = self._requested.get(sub.name, 0) - 1
        if n > 0:
            self._requested[sub.name] = n
            return
        self._requested.pop(sub.name, None)
        self._drop_token(sub.name)
        p = self._providers.pop(sub.name, None)
        if p is not None:
            self._outbox(p[1]).send(wire.control_frame(T.UNSUBSCRIBE_SERVICE, pb.Subscribe(name=sub.name)))
        if self.state == "connected":
            self._control(T.CANCEL_REQUEST, pb.Names(names=[sub.name]))

    def _drop_token(self, service: str) -> None:
        self._tokens.pop(service, None)
        self._data_peers.pop(service, None)
        self._reasked.pop(service, None)

    def _from_provider(self, peer: pb.Hello, service: str, sequence: int, data: bytes) -> bool:
        """Whether a SERVICE_MESSAGE for @p service on @p peer's connection is the provider's data:
        only the connection that echoed the subscription's token (a SERVICE_MESSAGE of sequence 0)
        is. The echo itself binds the connection and is no value."""
        token = self._tokens.get(service)
        if token is not None and sequence == 0 and hmac.compare_digest(bytes(data), token[1]):
            self._data_peers[service] = peer
            return False
        if token is not None and self._data_peers.get(service) is peer:
            return True
        p = self._providers.get(service)
        if (token is not None and p is not None and peer.name == p[0] and peer.incarnation == p[2]
                and self._reasked.get(service) is not peer):
            # Perhaps the provider's connection was replaced (closed when idle, opened again): it is
            # asked to acknowledge again, and does so, with its current value, on the one it uses.
            self._reasked[service] = peer
            self._outbox(p[1]).send(wire.control_frame(T.SUBSCRIBE_SERVICE, pb.Subscribe(name=service, token=token[1])))
        self.ignored_data += 1
        n = self.ignored_data
        if n & (n - 1) == 0:
            log.warning("%s: ignored SERVICE_MESSAGE for %s from %s - it did not come by the connection of the "
                        "provider subscribed to (%d such frames)", self.name, service, peer.name, n)
        return False

    def _register_again_later(self, name: str, retry_ms: int, reason: str) -> None:
        """@p name was refused for now (the directory is full): asked again after @p retry_ms at
        least, 1, 2, 4 … up to 30 s apart while it lasts, half of it at least, with jitter (as libdialog)."""
        self._register_later.add(name)
        if self._register_handle is not None:
            return  # one round for every name refused meanwhile
        self._register_backoff = min(30.0, max(retry_ms / 1000.0, 2 * self._register_backoff))
        wait = max(retry_ms / 1000.0, self._register_backoff / 2 + random.random() * self._register_backoff / 2)
        self._register_handle = asyncio.get_running_loop().call_later(wait, self._register_again)
        self.refusals.append(("service-later", name, "%s - asking again in %.1f s" % (reason, wait)))
        log.warning("%s: service '%s' refused for now: %s - asking again in %.1f s", self.name, name, reason, wait)

    def _register_again(self) -> None:
        self._register_handle = None
        names = [n for n in self._register_later if n in self._services]
        self._register_later.clear()
        # Not connected: the next CONNECT carries every service anyway.
        if names and self.state == "connected" and not self._stopping:
            self._control(T.REGISTER_SERVICE, pb.Names(names=names))

    def _send_pending(self, service: str) -> None:
        p = self._providers.get(service)
        if p is None:
            return
        box = self._outbox(p[1])
        for rid, (svc, fut, frame, sent) in list(self._pending.items()):
            if svc == service and not sent and not fut.done():
                self._pending[rid] = (svc, fut, frame, True)
                box.send(frame)

    def _handle_control(self, peer: pb.Hello, f: wire.Frame) -> None:
        msg = wire.parse_control(f)
        loop = asyncio.get_running_loop()
        t = f.type
        if t == T.SUCCESSFULLY_CONNECTED:
            if msg.session != self._session_for_server():
                self._ignore(peer, "a SUCCESSFULLY_CONNECTED without our session")
                return
            self._cs_peer = peer
        elif t not in (T.SUBSCRIBE_SERVICE, T.UNSUBSCRIBE_SERVICE) and peer is not self._cs_peer and not (
            peer is self._answers and t == T.REFUSED
        ):
            # Any peer can write frames that claim to come from the Control Server.
            if t != T.HEARTBEAT:
                self._ignore(peer, t.name)
            return
        if peer is self._cs_peer:
            self._last_heard = loop.time()
        if t == T.HEARTBEAT:
            return
        if t == T.SUCCESSFULLY_CONNECTED:
            self._misses = msg.heartbeat_misses or 3
            self._register_backoff = 0.0
            if msg.term and msg.term >= self._term:
                self._term = msg.term
                self._term_server = "%s:%d" % self.servers[self._server_index]
            self._last_heard = loop.time()
            self.state = "connected"
            self._connect_delay = 0.0
            self._connect_attempts = 0
            self.last_error = ""
            self._send_changes_since_connect()
            self._connected.set()
            log.info("%s connected to Control Server %s", self.name, msg.server)
        elif t == T.INFO_SERVICE:
            if msg.name not in self._requested:
                return
            if not msg.available:
                self._providers.pop(msg.name, None)
                self._drop_token(msg.name)
                for s in self._subs.get(msg.name, []):
                    s.state = "waiting"
                return
            self._subscribe_at(msg.name, (msg.host, msg.port), msg.provider, msg.incarnation)
        elif t in (T.SUBSCRIBE_SERVICE, T.UNSUBSCRIBE_SERVICE):
            s = self._services.get(msg.name)
            if s is None:
                return
            ep = (peer.host, peer.port)
            if t == T.SUBSCRIBE_SERVICE:
                s._add(ep, peer.name, peer.incarnation, msg.token)
            else:
                s.subscribers.pop(ep, None)
        elif t == T.LOST_SENDER:
            for name, (pname, ep, inc) in list(self._providers.items()):
                if pname == msg.name and (msg.incarnation == 0 or inc == msg.incarnation):
                    del self._providers[name]
                    self._drop_token(name)
                    for s in self._subs.get(name, []):
                        s.state = "lost"
                    for rid, (svc, fut, _frame, sent) in list(self._pending.items()):
                        if svc == name and sent and not fut.done():
                            fut.set_exception(
                                RequestError("provider-lost", "provider %s of '%s' was lost" % (pname, name))
                            )
        elif t == T.LOST_RECEIVER:
            ep = (msg.host, msg.port)
            for s in self._services.values():
                sub = s.subscribers.get(ep)
                if sub and (msg.incarnation == 0 or sub[1] == msg.incarnation):
                    del s.subscribers[ep]
        elif t == T.CONNECTION_LOST:
            if msg.redirect and self._redirect(msg.redirect, msg.term, msg.reason):
                return
            if self.state == "connecting":
                # An answer to a frame sent before our CONNECT (heartbeats stuck behind a pulled
                # cable): the CONNECT itself is answered with SUCCESSFULLY_CONNECTED or REFUSED.
                return
            if self.state != "unconnected":
                self._forget_providers(msg.reason)
            self.state = "unconnected"
            self._connected.clear()
            self._spread_first_attempt()
        elif t == T.REFUSED:
            if msg.what == "redirect" and self._redirect(msg.redirect, msg.term, msg.reason):
                return
            if msg.what == "service" and msg.retry_ms > 0 and msg.name in self._services:
                self._register_again_later(msg.name, msg.retry_ms, msg.reason)
                return
            if msg.what == "service":
                self._services.pop(msg.name, None)
            self.refusals.append((msg.what, msg.name, msg.reason))
            if msg.what in ("connect", "address", "auth"):
                self.last_error = "refused by the Control Server: %s" % msg.reason
            log.warning("%s: %s '%s' refused: %s", self.name, msg.what, msg.name, msg.reason)
            if msg.what in ("connect", "address", "auth"):
                # At least half of the back-off, with jitter: processes refused together (a server
                # busy with connect-backs says "try again later") do not come back together.
                base = max(1.0, self.heartbeat_ms / 1000.0)
                self._connect_delay = min(30.0, 2 * self._connect_delay if self._connect_delay > 0 else 2 * base)
                wait = self._connect_delay / 2 + random.random() * self._connect_delay / 2
                self._connect_not_before = loop.time() + wait
                if self.on_error is not None:
                    self.on_error(ClientError("refused by the Control Server: %s (next attempt in %.1f s)" % (msg.reason, wait)))
            elif msg.what == "permission" and self.on_error is not None:
                # The partition's access list refused a command this client sent.
                self.on_error(ClientError("command '%s' refused by the Control Server: %s" % (msg.name, msg.reason)))

    def _redirect(self, to: str, term: int, why: str) -> bool:
        """A Control Server that steps down sent us to the one that serves now (docs/controlserver.md):
        connect there at once, even if it is not one of the configured addresses."""
        host, _, port = to.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            return False
        ep = (host, int(port))
        if ep not in self.servers:
            self.servers.append(ep)
        log.info("%s redirected to the Control Server at %s (term %d) - %s", self.name, to, term, why)
        if term > self._term:
            self._term, self._term_server = term, to
        if self.state == "connected" and self.servers[self._server_index] != ep:
            # Goodbye to the server we leave: it becomes a standby once nobody is left to redirect.
            self._cs_box().send(wire.encode_frame(T.DISCONNECT))
        if self.state != "unconnected":
            self._forget_providers(why)
        self._server_index = self.servers.index(ep)
        if not self._advertise_fixed:
            self.host = route_address(*ep)
        self.state = "unconnected"
        self._connected.clear()
        self._connect_delay = 0.0
        self._connect_attempts = 0
        self._connect_not_before = 0.0
        self._send_connect()
        return True

    def _send_changes_since_connect(self) -> None:
        """Services, commands and subscriptions added or dropped while the CONNECT was on its way
        (publish() right after start()) were in no frame to the Control Server: they go now."""
        services, commands, requests = self._announced
        self._announced = (set(self._services), set(self._commands), set(self._requested))
        for now, before, add, drop in (
            (self._services, services, T.REGISTER_SERVICE, T.UNREGISTER_SERVICE),
            (self._commands, commands, T.REGISTER_COMMAND, T.UNREGISTER_COMMAND),
            (self._requested, requests, T.REQUEST_SERVICE, T.CANCEL_REQUEST),
        ):
            added = [n for n in now if n not in before]
            dropped = [n for n in before if n not in now]
            if added:
                self._control(add, pb.Names(names=added))
            if dropped:
                self._control(drop, pb.Names(names=dropped))

    def _session_for_server(self) -> bytes:
        """Connect.session for the current Control Server: one per server, so that a primary that
        wakes from a hang and answers CONNECTs sent before a fail-over is not taken for the standby."""
        host, port = self.servers[self._server_index]
        return hashlib.sha256(self._session + ("%s:%d" % (host, port)).encode()).digest()[:16]

    def _ignore(self, peer: pb.Hello, what: str) -> None:
        """A frame that did not come by the Control Server's connection: ignored, logged the first
        time and then at 2, 4, 8 … times."""
        self.ignored_frames += 1
        n = self.ignored_frames
        if n & (n - 1) == 0:
            log.warning("%s: ignored %s from %s - it did not come by the Control Server's connection (%d such frames)",
                        self.name, what, peer.name, n)

    def _auth_refused(self, ep: Endpoint, reason: str) -> None:
        """A connection to @p ep failed its authentication: for the Control Server, a refusal (told
        once per attempt, with back-off)."""
        if ep in self.servers:
            f = wire.Frame(T.REFUSED, 0, pb.Refused(what="auth", reason=reason).SerializeToString())
            self._handle_control(self._answers, f)

    async def _read_back(
        self, ep: Endpoint, reader: asyncio.StreamReader, decoder: Optional[wire.FrameDecoder] = None
    ) -> None:
        """Reads what the peer of an outgoing connection writes back: nothing but a REFUSED from the
        Control Server. Returns at EOF; anything else is a protocol error (the connection is dropped)."""
        decoder = decoder or wire.FrameDecoder()
        while True:
            data = await reader.read(64 * 1024)
            if not data:
                return
            for f in decoder.feed(data):
                if f.type != T.REFUSED or ep not in self.servers:
                    raise ProtocolError("unexpected %s written back by %s:%s" % (f.type.name, ep[0], ep[1]))
                self._handle_control(self._answers, f)

    def _handle_data(self, peer: pb.Hello, f: wire.Frame) -> None:
        t = f.type
        if t == T.SERVICE_MESSAGE:
            p = f.payload
            n = int.from_bytes(p[:2], "little")
            if len(p) < n + 10 or n > wire.MAX_NAME_LENGTH:
                raise ProtocolError("truncated SERVICE_MESSAGE payload")
            name = p[2 : 2 + n]
            seq = int.from_bytes(p[2 + n : 10 + n], "little")
            data = p[10 + n :]
            if f.flags or len(data) > self.max_message_size:
                data = wire.extract_data(data, f.flags, self.max_message_size)
            subs = self._subs.get(name.decode("utf-8", "replace"))
            if subs:
                # Streams (attach()) are private channels; a subscription's data comes from its provider.
                if not all(s.attached for s in subs) and not self._from_provider(peer, subs[0].name, seq, data):
                    return
                m = Message(subs[0].name, data, seq)
                for s in list(subs):
                    s._deliver(m, peer.incarnation)
        elif t == T.COMMAND_MESSAGE:
            if peer is not self._cs_peer:
                self._ignore(peer, "COMMAND_MESSAGE")  # relayed by the Control Server only
                return
            name, origin, body = wire.split_command(f.payload)
            data = wire.extract_data(body, f.flags, self.max_message_size)
            c = Command(name.decode("utf-8", "replace"), data, origin.decode("utf-8", "replace"))
            cbs = self._commands.get(c.name)
            if cbs:
                for cb in cbs:
                    try:
                        r = cb(c)
                        if asyncio.iscoroutine(r):
                            self._spawn(r)
                    except Exception:
                        log.exception("command callback for %s failed", c.name)
            else:
                self._command_queue.put_nowait(c)
        elif t == T.REQUEST:
            name, rid, body = wire.split_service(f.payload)
            data = wire.extract_data(body, f.flags, self.max_message_size)
            r = Request(name.decode("utf-8", "replace"), data, rid, peer.name, (peer.host, peer.port))
            s = self._services.get(r.service)
            if s is None:
                self.reply_status(r, 2, "%s does not provide '%s'" % (self.name, r.service))
            elif s.on_request is None:
                self.reply_status(r, 2, "%s takes no requests for '%s'" % (self.name, r.service))
            else:
                self._spawn(self._answer(s, r))
        elif t == T.REPLY:
            rid, status, body = wire.split_reply(f.payload)
            data = wire.extract_data(body, f.flags, self.max_message_size)
            p = self._pending.get(rid)
            if p is None or p[1].done():
                return
            if status == 0:
                p[1].set_result(data)
            else:
                p[1].set_exception(
                    RequestError(
                        {2: "not-accepted", 3: "permission-denied"}.get(status, "failed"),
                        data.decode("utf-8", "replace"),
                    )
                )

    def reply_status(self, r: Request, status: int, text: str) -> None:
        self._outbox(r.endpoint).send(wire.reply_frame(r.id, status, text.encode()))

    async def _answer(self, s: Service, r: Request) -> None:
        try:
            out = s.on_request(r)
            if asyncio.iscoroutine(out) or isinstance(out, asyncio.Future):
                out = await out
        except Exception as e:
            self.reply(r, error=str(e) or type(e).__name__)
            return
        if out is not None:
            self.reply(r, out)

    # --- internals: inbound connections ---

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._inbound.add(writer)
        decoder = wire.FrameDecoder(self.max_message_size + wire.NAME_OVERHEAD)
        peer: Optional[pb.Hello] = None
        claimed: Optional[Tuple[pb.Hello, bytes, bytes]] = None  # HELLO, its payload, our nonce
        label = "%s:%s" % (writer.get_extra_info("peername") or ("?", 0))[:2]
        try:
            while True:
                data = await reader.read(256 * 1024)
                if not data:
                    return
                self.stats["bytes_in"] += len(data)
                for f in decoder.feed(data):
                    if claimed is not None:
                        hello, payload, nonce = claimed
                        a = wire.parse_control(f) if f.type == T.AUTH else None
                        expected = wire.auth_proof(self._secret, "connector", hello.nonce, nonce, payload)
                        if a is None or not hmac.compare_digest(expected, a.proof):
                            raise _AuthFailed("wrong proof of the partition's secret (another secret?)")
                        peer, claimed = hello, None
                        continue
                    if peer is None:
                        if f.type != T.HELLO:
                            raise ProtocolError("first frame is %s, not a valid HELLO" % f.type.name)
                        hello = wire.parse_control(f)
                        label = "%s (%s)" % (hello.name, label)
                        if self._secret is None:
                            if hello.nonce:
                                raise _AuthFailed("this process has no shared secret")
                            peer = hello
                            continue
                        if len(hello.nonce) != wire.NONCE_BYTES:
                            raise _AuthFailed("no proof of the partition's secret offered")
                        nonce = secrets.token_bytes(wire.NONCE_BYTES)
                        payload = bytes(f.payload)
                        proof = wire.auth_proof(self._secret, "acceptor", hello.nonce, nonce, payload)
                        writer.write(wire.control_frame(T.AUTH, pb.Auth(nonce=nonce, proof=proof)))
                        claimed = (hello, payload, nonce)
                        continue
                    self.stats["messages_in"] += 1
                    if f.type in wire.DATA_TYPES:
                        self._handle_data(peer, f)
                    elif f.type == T.HELLO:
                        raise ProtocolError("malformed HELLO payload")
                    else:
                        self._handle_control(peer, f)
        except _AuthFailed as e:
            self.stats["auth_failures"] += 1
            log.warning("authentication failed with %s - %s", label, e)
            refusal = pb.Refused(what="auth", reason="authentication failed: %s" % e)
            try:
                writer.write(wire.control_frame(T.REFUSED, refusal))
                await asyncio.wait_for(writer.drain(), 1.0)
            except (ConnectionError, OSError, asyncio.TimeoutError):
                pass
        except ProtocolError as e:
            err = ProtocolError("closed connection from %s: %s" % (label, e))
            self.stats["protocol_errors"] += 1
            self.protocol_errors.append(err)
            del self.protocol_errors[:-100]
            log.warning("%s", err)
            if self.on_error is not None:
                self.on_error(err)
        except (ConnectionError, OSError):
            pass
        except asyncio.CancelledError:
            pass
        finally:
            self._inbound.discard(writer)
            writer.close()
