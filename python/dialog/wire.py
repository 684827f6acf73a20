"""The DIALOG wire format: frame header, data payloads and zstd compression.

Everything here is pure byte manipulation (no sockets); docs/protocol.md describes the same format.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import hmac
import struct
from dataclasses import dataclass
from typing import List, Optional, Tuple

import zstandard

from ._proto import dialog_pb2 as wire_pb2

MAGIC = 0xD1A1
VERSION = 1
HEADER_SIZE = 12
#: Largest service, command, request or reply data accepted by default.
DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024
#: Room for the names that precede the data in a payload.
NAME_OVERHEAD = 4096
#: Longest service, command, origin or channel name (UTF-8 bytes).
MAX_NAME_LENGTH = 1024
#: Data of at least this many bytes is compressed when that pays off (libdialog's default).
DEFAULT_COMPRESSION_THRESHOLD = 64 * 1024
#: The Compressed flag: the data part of a data payload is one zstd frame.
FLAG_COMPRESSED = 0x01
KNOWN_FLAGS = FLAG_COMPRESSED

_HEADER = struct.Struct("<HBBBBHI")


class MessageType(enum.IntEnum):
    """Message types (byte 3 of the frame header)."""

    HELLO = 1
    CONNECT_TO_CONTROL_SERVER = 2
    SUCCESSFULLY_CONNECTED = 3
    HEARTBEAT = 4
    REGISTER_SERVICE = 5
    UNREGISTER_SERVICE = 6
    REQUEST_SERVICE = 7
    CANCEL_REQUEST = 8
    INFO_SERVICE = 9
    SUBSCRIBE_SERVICE = 10
    UNSUBSCRIBE_SERVICE = 11
    SERVICE_MESSAGE = 12
    REGISTER_COMMAND = 13
    UNREGISTER_COMMAND = 14
    COMMAND_MESSAGE = 15
    CONNECTION_LOST = 16
    LOST_SENDER = 17
    LOST_RECEIVER = 18
    REFUSED = 19
    DISCONNECT = 20
    REQUEST = 21
    REPLY = 22
    AUTH = 23


MAX_TYPE = 23
_TYPE_OF = {int(t): t for t in MessageType}

#: The protobuf message carried by each control message type (None: empty payload).
CONTROL_MESSAGES = {
    MessageType.HELLO: wire_pb2.Hello,
    MessageType.CONNECT_TO_CONTROL_SERVER: wire_pb2.Connect,
    MessageType.SUCCESSFULLY_CONNECTED: wire_pb2.Connected,
    MessageType.HEARTBEAT: wire_pb2.Heartbeat,
    MessageType.REGISTER_SERVICE: wire_pb2.Names,
    MessageType.UNREGISTER_SERVICE: wire_pb2.Names,
    MessageType.REQUEST_SERVICE: wire_pb2.Names,
    MessageType.CANCEL_REQUEST: wire_pb2.Names,
    MessageType.INFO_SERVICE: wire_pb2.InfoService,
    MessageType.SUBSCRIBE_SERVICE: wire_pb2.Subscribe,
    MessageType.UNSUBSCRIBE_SERVICE: wire_pb2.Subscribe,
    MessageType.REGISTER_COMMAND: wire_pb2.Names,
    MessageType.UNREGISTER_COMMAND: wire_pb2.Names,
    MessageType.CONNECTION_LOST: wire_pb2.ConnectionLost,
    MessageType.LOST_SENDER: wire_pb2.LostProcess,
    MessageType.LOST_RECEIVER: wire_pb2.LostProcess,
    MessageType.REFUSED: wire_pb2.Refused,
    MessageType.DISCONNECT: None,
    MessageType.AUTH: wire_pb2.Auth,
}

DATA_TYPES = frozenset(
    {MessageType.SERVICE_MESSAGE, MessageType.COMMAND_MESSAGE, MessageType.REQUEST, MessageType.REPLY}
)


class ProtocolError(Exception):
    """The peer sent bytes that are not the DIALOG protocol; its connection is closed."""


@dataclass
class Frame:
    """One decoded frame: its type, flags and payload (still encoded)."""

    type: MessageType
    flags: int
    payload: bytes


def encode_header(type_: int, flags: int, length: int) -> bytes:
    """The 12-byte header of a frame with a payload of @p length bytes."""
    return _HEADER.pack(MAGIC, VERSION, int(type_), flags, 0, 0, length)


def encode_frame(type_: int, payload: bytes = b"", flags: int = 0) -> bytes:
    """A complete frame: header followed by @p payload."""
    return encode_header(type_, flags, len(payload)) + payload


def control_frame(type_: MessageType, message=None) -> bytes:
    """A control frame whose payload is the serialized protobuf @p message."""
    return encode_frame(type_, message.SerializeToString() if message is not None else b"")


class FrameDecoder:
    """Incremental frame decoder: feed() it what a read returned, get complete frames back.

    Any violation of the format raises ProtocolError; the decoder then stays failed and the
    connection must be closed.
    """

    def __init__(self, max_payload: int = DEFAULT_MAX_MESSAGE_SIZE + NAME_OVERHEAD) -> None:
        self.max_payload = max_payload
        self._buffer = bytearray()
        self._error: Optional[str] = None

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def _fail(self, why: str) -> None:
        self._error = why
        self._buffer.clear()
        raise ProtocolError(why)

    def feed(self, data: bytes) -> List[Frame]:
        if self._error is not None:
            raise ProtocolError(self._error)
        self._buffer += data
        out: List[Frame] = []
        buf = self._buffer
        pos = 0
        while len(buf) - pos >= HEADER_SIZE:
            magic, version, type_, flags, r1, r2, length = _HEADER.unpack_from(buf, pos)
            if magic != MAGIC:
                self._fail("bad magic 0x%04x" % magic)
            if version != VERSION:
                self._fail("unsupported protocol version %d" % version)
            if type_ == 0 or type_ > MAX_TYPE:
                self._fail("unknown message type %d" % type_)
            if flags & ~KNOWN_FLAGS or r1 or r2:
                self._fail("unknown flags 0x%02x" % flags)
            if length > self.max_payload:
                self._fail("frame of %d bytes exceeds the maximum of %d" % (length, self.max_payload))
            if len(buf) - pos - HEADER_SIZE < length:
                break
            start = pos + HEADER_SIZE
            out.append(Frame(_TYPE_OF[type_], flags, bytes(buf[start : start + length])))
            pos = start + length
        if pos:
            del buf[:pos]
        return out


# --- data payloads ----------------------------------------------------------------------------

_U16 = struct.Struct("<H")
_U64 = struct.Struct("<Q")


def _name(value: str | bytes) -> bytes:
    b = value.encode() if isinstance(value, str) else bytes(value)
    if len(b) > MAX_NAME_LENGTH:
        raise ValueError("name of %d bytes exceeds the maximum of %d" % (len(b), MAX_NAME_LENGTH))
    return b


def _read_name(p: bytes, pos: int, what: str) -> Tuple[bytes, int]:
    if len(p) - pos < 2:
        raise ProtocolError("truncated %s payload" % what)
    (n,) = _U16.unpack_from(p, pos)
    pos += 2
    if n > MAX_NAME_LENGTH or len(p) - pos < n:
        raise ProtocolError("truncated %s payload" % what)
    return p[pos : pos + n], pos + n


def service_frame(name: str | bytes, sequence: int, data: bytes, flags: int = 0) -> bytes:
    """SERVICE_MESSAGE: u16 nameLen | name | u64 sequence | data (data already prepared)."""
    n = _name(name)
    return encode_frame(MessageType.SERVICE_MESSAGE, _U16.pack(len(n)) + n + _U64.pack(sequence) + data, flags)


def request_frame(service: str | bytes, request_id: int, data: bytes, flags: int = 0) -> bytes:
    """REQUEST: u16 nameLen | service | u64 id | data."""
    n = _name(service)
    return encode_frame(MessageType.REQUEST, _U16.pack(len(n)) + n + _U64.pack(request_id) + data, flags)


def command_frame(name: str | bytes, origin: str | bytes, data: bytes, flags: int = 0) -> bytes:
    """COMMAND_MESSAGE: u16 nameLen | name | u16 originLen | origin | data."""
    n, o = _name(name), _name(origin)
    return encode_frame(MessageType.COMMAND_MESSAGE, _U16.pack(len(n)) + n + _U16.pack(len(o)) + o + data, flags)


def reply_frame(request_id: int, status: int, data: bytes, flags: int = 0) -> bytes:
    """REPLY: u64 id | u8 status (0 ok, 1 failed, 2 not accepted) | data."""
    return encode_frame(MessageType.REPLY, _U64.pack(request_id) + bytes([status]) + data, flags)


def split_service(payload: bytes) -> Tuple[bytes, int, bytes]:
    """(name, sequence or id, data) of a SERVICE_MESSAGE or REQUEST payload."""
    name, pos = _read_name(payload, 0, "SERVICE_MESSAGE")
    if len(payload) - pos < 8:
        raise ProtocolError("truncated SERVICE_MESSAGE payload")
    (seq,) = _U64.unpack_from(payload, pos)
    return name, seq, payload[pos + 8 :]


def split_command(payload: bytes) -> Tuple[bytes, bytes, bytes]:
    """(name, origin, data) of a COMMAND_MESSAGE payload."""
    name, pos = _read_name(payload, 0, "COMMAND_MESSAGE")
    origin, pos = _read_name(payload, pos, "COMMAND_MESSAGE")
    return name, origin, payload[pos:]


def split_reply(payload: bytes) -> Tuple[int, int, bytes]:
    """(id, status, data) of a REPLY payload."""
    if len(payload) < 9:
        raise ProtocolError("truncated REPLY payload")
    (rid,) = _U64.unpack_from(payload, 0)
    return rid, payload[8], payload[9:]


# --- compression ------------------------------------------------------------------------------

_compressor = zstandard.ZstdCompressor(level=1, write_checksum=True, write_content_size=True)


def compress(data: bytes) -> Optional[bytes]:
    """zstd level 1 with checksum; None when it does not save at least a tenth."""
    packed = _compressor.compress(data)
    if len(packed) >= len(data) * 9 // 10:
        return None
    return packed


def decompress(data: bytes, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> bytes:
    """Decompresses one zstd frame whose header states its content size; ProtocolError otherwise."""
    try:
        params = zstandard.get_frame_parameters(data)
    except zstandard.ZstdError as e:
        raise ProtocolError("corrupt zstd data (no valid frame header)") from e
    size = params.content_size
    if size == zstandard.CONTENTSIZE_UNKNOWN or size == zstandard.CONTENTSIZE_ERROR:
        raise ProtocolError("corrupt zstd data (no valid frame header)")
    if size > max_size:
        raise ProtocolError(
            "compressed message expands to %d bytes, over the maximum of %d" % (size, max_size)
        )
    try:
        out = zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
    except zstandard.ZstdError as e:
        raise ProtocolError("corrupt zstd data: %s" % e) from e
    if len(out) != size:
        raise ProtocolError("corrupt zstd data: size mismatch")
    return out


def extract_data(data: bytes, flags: int, max_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> bytes:
    """The data of a data payload, decompressed when the Compressed flag is set."""
    if flags & FLAG_COMPRESSED:
        return decompress(data, max_size)
    if len(data) > max_size:
        raise ProtocolError("message of %d bytes exceeds the maximum of %d" % (len(data), max_size))
    return data


def prepare_data(data: bytes, threshold: int = DEFAULT_COMPRESSION_THRESHOLD) -> Tuple[bytes, int]:
    """(data to send, flags): compressed when at least @p threshold bytes (0 = never) and it pays off."""
    if threshold > 0 and len(data) >= threshold:
        packed = compress(data)
        if packed is not None:
            return packed, FLAG_COMPRESSED
    return data, 0


def parse_control(frame: Frame):
    """The protobuf message of a control frame; ProtocolError when it does not parse."""
    cls = CONTROL_MESSAGES.get(frame.type)
    if cls is None:
        return None
    msg = cls()
    try:
        msg.ParseFromString(frame.payload)
    except Exception as e:  # google.protobuf.message.DecodeError
        raise ProtocolError("malformed %s payload" % frame.type.name) from e
    return msg


# --- Authentication (docs/protocol.md, "Authentication") ---

NONCE_BYTES = 32
MIN_SECRET_BYTES = 16
MAX_SECRET_FILE_BYTES = 4096
_ROLE_LABEL = {"acceptor": b"DIALOG-AUTH-1 acceptor\n", "connector": b"DIALOG-AUTH-1 connector\n"}


def read_secret_file(path: str) -> bytes:
    """The shared secret in @p path (surrounding white space trimmed), as libdialog reads it."""
    try:
        with open(path, "rb") as f:
            content = f.read(MAX_SECRET_FILE_BYTES + 1)
    except OSError as e:
        raise ValueError("secret file %s: %s" % (path, e.strerror or e)) from None
    if len(content) > MAX_SECRET_FILE_BYTES:
        raise ValueError("secret file %s: larger than %d bytes" % (path, MAX_SECRET_FILE_BYTES))
    secret = content.strip()
    if len(secret) < MIN_SECRET_BYTES:
        raise ValueError(
            "secret file %s: holds %d bytes, at least %d are needed" % (path, len(secret), MIN_SECRET_BYTES)
        )
    return secret


def auth_proof(secret: bytes, role: str, connector_nonce: bytes, acceptor_nonce: bytes, hello: bytes) -> bytes:
    """HMAC-SHA256(secret, label of @p role || connector nonce || acceptor nonce || HELLO payload)."""
    return hmac.new(secret, _ROLE_LABEL[role] + connector_nonce + acceptor_nonce + hello, hashlib.sha256).digest()


def process_key(identity_secret: bytes, name: str) -> bytes:
    """The key of process @p name: HMAC-SHA256(identity secret, "DIALOG-PROCESS-KEY-1\\n" || name), as
    `dialogctl up` issues it (docs/security.md, "Identities")."""
    return hmac.new(identity_secret, b"DIALOG-PROCESS-KEY-1\n" + name.encode(), hashlib.sha256).digest()


def identity_proof(key: bytes, connector_nonce: bytes, acceptor_nonce: bytes, hello: bytes) -> bytes:
    """Auth.identity: HMAC-SHA256(key, "DIALOG-IDENTITY-1\\n" || connector nonce || acceptor nonce || HELLO)."""
    return hmac.new(key, b"DIALOG-IDENTITY-1\n" + connector_nonce + acceptor_nonce + hello, hashlib.sha256).digest()


def read_process_key_file(path: str) -> tuple:
    """(name, key) of a process key file ($DIALOG_PROCESS_KEY_FILE): the name on the first line, the
    32-byte key in base64 on the second, as libdialog reads it."""
    try:
        with open(path, "rb") as f:
            lines = f.read(MAX_SECRET_FILE_BYTES + 1).strip().split(b"\n")
    except OSError as e:
        raise ValueError("process key file %s: %s" % (path, e.strerror or e)) from None
    try:
        key = base64.b64decode(lines[1].strip(), validate=True) if len(lines) == 2 else b""
    except ValueError:
        key = b""
    if len(lines) != 2 or not lines[0].strip() or len(key) != 32:
        raise ValueError("process key file %s: expected a process name and its 32-byte key in base64 "
                         "(dialogctl up makes it)" % path)
    return lines[0].strip().decode("utf-8", "replace"), key


def process_key_file_content(name: str, key: bytes) -> bytes:
    """The text of a process key file: the name, then the key in base64 (as `dialogctl up` writes it)."""
    return name.encode() + b"\n" + base64.b64encode(key) + b"\n"
