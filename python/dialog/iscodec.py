"""IS types, the binary encoding of IS objects and the notification records (docs/protocol.md).

Values are plain Python objects: an object is a ``dict`` attribute -> value; bool, int, float, str;
a time is a timezone-aware ``datetime`` (UTC, microseconds); a nested object is a dict; a vector is
a ``list`` — or, when numpy is installed, a numpy array for vectors of numbers.
"""

from __future__ import annotations

import datetime as _dt
import enum
import json
import struct
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

try:  # optional
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the installation
    _np = None

ENCODING_VERSION = 1
MAX_NESTING_DEPTH = 32
VECTOR_FLAG = 0x80


class ISError(Exception):
    """An IS operation failed; ``code`` is the IS status code (see Status)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class CodecError(ValueError):
    """Bytes that are not a valid encoding of an IS object (or a value that does not fit its type)."""


class BasicType(enum.IntEnum):
    """Attribute value types; the numbers are the tags of the binary encoding."""

    BOOL = 0
    S8 = 1
    U8 = 2
    S16 = 3
    U16 = 4
    S32 = 5
    U32 = 6
    S64 = 7
    U64 = 8
    FLOAT = 9
    DOUBLE = 10
    STRING = 11
    TIME = 12
    OBJECT = 13


_NAMES = {
    "bool": BasicType.BOOL,
    "s8": BasicType.S8,
    "u8": BasicType.U8,
    "s16": BasicType.S16,
    "u16": BasicType.U16,
    "s32": BasicType.S32,
    "u32": BasicType.U32,
    "s64": BasicType.S64,
    "u64": BasicType.U64,
    "float": BasicType.FLOAT,
    "double": BasicType.DOUBLE,
    "string": BasicType.STRING,
    "time": BasicType.TIME,
}
_FORMATS = {
    BasicType.BOOL: "?",
    BasicType.S8: "b",
    BasicType.U8: "B",
    BasicType.S16: "h",
    BasicType.U16: "H",
    BasicType.S32: "i",
    BasicType.U32: "I",
    BasicType.S64: "q",
    BasicType.U64: "Q",
    BasicType.FLOAT: "f",
    BasicType.DOUBLE: "d",
    BasicType.TIME: "q",
}
_NUMPY = {
    BasicType.S8: "<i1",
    BasicType.U8: "<u1",
    BasicType.S16: "<i2",
    BasicType.U16: "<u2",
    BasicType.S32: "<i4",
    BasicType.U32: "<u4",
    BasicType.S64: "<i8",
    BasicType.U64: "<u8",
    BasicType.FLOAT: "<f4",
    BasicType.DOUBLE: "<f8",
}
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def time_to_us(t: Any) -> int:
    """Microseconds since the epoch of a datetime (naive = UTC) or of an int already in µs."""
    if isinstance(t, _dt.datetime):
        if t.tzinfo is None:
            t = t.replace(tzinfo=_dt.timezone.utc)
        d = t - _EPOCH
        return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds
    if isinstance(t, int) and not isinstance(t, bool):
        return t
    raise CodecError("a time must be a datetime or microseconds since the epoch, not %r" % (t,))


def us_to_time(us: int) -> _dt.datetime:
    """The UTC datetime of @p us microseconds since the epoch."""
    return _EPOCH + _dt.timedelta(microseconds=us)


@dataclass
class Attribute:
    """One attribute of an IS type."""

    name: str
    type: BasicType
    vector: bool = False
    type_name: str = ""  # the XML type name, or the nested IS type
    description: str = ""

    @property
    def tag(self) -> int:
        return int(self.type) | (VECTOR_FLAG if self.vector else 0)


@dataclass
class TypeInfo:
    """An IS type: its own attributes and its base; ``attributes`` of a registry type is complete."""

    name: str
    base: str = ""
    description: str = ""
    own: List[Attribute] = field(default_factory=list)
    attributes: List[Attribute] = field(default_factory=list)


class TypeRegistry:
    """The IS types known to a client, as the servers' TYPES replies describe them."""

    def __init__(self) -> None:
        self._types: Dict[str, TypeInfo] = {}

    def __contains__(self, name: str) -> bool:
        return name in self._types

    def names(self) -> List[str]:
        return sorted(self._types)

    def get(self, name: str) -> TypeInfo:
        t = self._types.get(name)
        if t is None:
            raise CodecError("unknown type '%s'" % name)
        return t

    def is_a(self, name: str, base: str) -> bool:
        """True when @p name is @p base or derives from it."""
        seen = 0
        while name and seen < 64:
            if name == base:
                return True
            t = self._types.get(name)
            name = t.base if t else ""
            seen += 1
        return False

    def merge_json(self, types_json: bytes | str) -> None:
        """Adds the types of a JSON array of {name, description, base, attributes[{name,type,vector}]}."""
        try:
            doc = json.loads(types_json)
        except ValueError as e:
            raise CodecError("types: %s" % e) from e
        if not isinstance(doc, list):
            raise CodecError("types: not a JSON array")
        for t in doc:
            if not isinstance(t, dict) or not t.get("name"):
                raise CodecError("types: an entry without a name")
            own = []
            for a in t.get("attributes") or []:
                an, at = a.get("name"), a.get("type")
                if not an or not at:
                    raise CodecError("type %s: an attribute without name or type" % t["name"])
                basic = _NAMES.get(at, BasicType.OBJECT)
                own.append(Attribute(an, basic, bool(a.get("vector")), at, a.get("description", "")))
            self._types[t["name"]] = TypeInfo(t["name"], t.get("base") or "", t.get("description", ""), own)
        for name in list(self._types):
            self._resolve(name)

    def _resolve(self, name: str) -> None:
        chain = []
        n = name
        while n:
            t = self._types.get(n)
            if t is None or len(chain) > 64:
                return  # base not known (yet)
            chain.append(t)
            n = t.base
        attrs: List[Attribute] = []
        for t in reversed(chain):
            attrs.extend(t.own)
        self._types[name].attributes = attrs


# --- encoding ---------------------------------------------------------------------------------


class _Writer:
    def __init__(self, registry: TypeRegistry) -> None:
        self.out = bytearray()
        self.registry = registry

    def scalar(self, a: Attribute, v: Any, depth: int) -> None:
        t = a.type
        if t == BasicType.STRING:
            if not isinstance(v, str):
                raise CodecError("attribute '%s': a string is expected, not %r" % (a.name, type(v).__name__))
            b = v.encode()
            self.out += struct.pack("<I", len(b)) + b
        elif t == BasicType.OBJECT:
            self.obj(a.type_name, v, depth + 1)
        elif t == BasicType.TIME:
            self.out += struct.pack("<q", time_to_us(v))
        elif t == BasicType.BOOL:
            self.out.append(1 if v else 0)
        else:
            fmt = "<" + _FORMATS[t]
            try:
                if t in (BasicType.FLOAT, BasicType.DOUBLE):
                    self.out += struct.pack(fmt, float(v))
                else:
                    if isinstance(v, float) or isinstance(v, str):
                        raise CodecError("attribute '%s': an integer is expected, not %r" % (a.name, v))
                    self.out += struct.pack(fmt, int(v))
            except struct.error as e:
                raise CodecError("attribute '%s': %s" % (a.name, e)) from e

    def obj(self, type_name: str, value: Any, depth: int) -> None:
        if depth > MAX_NESTING_DEPTH:
            raise CodecError("objects nested deeper than %d" % MAX_NESTING_DEPTH)
        if not isinstance(value, dict):
            raise CodecError("a value of type '%s' must be a dict" % type_name)
        info = self.registry.get(type_name)
        unknown = set(value) - {a.name for a in info.attributes}
        if unknown:
            raise CodecError("type '%s' has no attribute %s" % (type_name, ", ".join(sorted(unknown))))
        name = type_name.encode()
        self.out += struct.pack("<H", len(name)) + name + struct.pack("<H", len(info.attributes))
        for a in info.attributes:
            self.out.append(a.tag)
            v = value.get(a.name, _default(a))
            if a.vector:
                if _np is not None and isinstance(v, _np.ndarray) and a.type in _NUMPY:
                    arr = _np.ascontiguousarray(v, dtype=_NUMPY[a.type]).ravel()
                    self.out += struct.pack("<I", arr.size) + arr.tobytes()
                    continue
                items = list(v)
                self.out += struct.pack("<I", len(items))
                for e in items:
                    self.scalar(a, e, depth)
            else:
                self.scalar(a, v, depth)


def _default(a: Attribute) -> Any:
    if a.vector:
        return []
    if a.type == BasicType.STRING:
        return ""
    if a.type == BasicType.OBJECT:
        return {}
    if a.type in (BasicType.FLOAT, BasicType.DOUBLE):
        return 0.0
    if a.type == BasicType.BOOL:
        return False
    return 0


def encode(type_name: str, value: Dict[str, Any], registry: TypeRegistry) -> bytes:
    """The binary encoding of an object of @p type_name (missing attributes take their defaults)."""
    w = _Writer(registry)
    w.out.append(ENCODING_VERSION)
    w.obj(type_name, value, 0)
    return bytes(w.out)


class _Reader:
    def __init__(self, data: bytes, registry: TypeRegistry, use_numpy: bool) -> None:
        self.data = memoryview(data)
        self.pos = 0
        self.registry = registry
        self.use_numpy = use_numpy and _np is not None

    def fail(self, why: str) -> None:
        raise CodecError("%s at offset %d" % (why, self.pos))

    def need(self, n: int) -> None:
        if len(self.data) - self.pos < n:
            self.fail("truncated input")

    def unpack(self, fmt: str) -> Any:
        s = struct.calcsize(fmt)
        self.need(s)
        (v,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += s
        return v

    def scalar(self, a: Attribute, depth: int) -> Any:
        t = a.type
        if t == BasicType.STRING:
            n = self.unpack("<I")
            self.need(n)
            v = bytes(self.data[self.pos : self.pos + n]).decode("utf-8", "replace")
            self.pos += n
            return v
        if t == BasicType.OBJECT:
            return self.obj(a.type_name, depth + 1)
        if t == BasicType.BOOL:
            b = self.unpack("<B")
            if b > 1:
                self.pos -= 1
                self.fail("invalid bool %d" % b)
            return b == 1
        v = self.unpack("<" + _FORMATS[t])
        return us_to_time(v) if t == BasicType.TIME else v

    def obj(self, expected: str, depth: int) -> Dict[str, Any]:
        if depth > MAX_NESTING_DEPTH:
            self.fail("objects nested deeper than %d" % MAX_NESTING_DEPTH)
        n = self.unpack("<H")
        self.need(n)
        name = bytes(self.data[self.pos : self.pos + n]).decode("utf-8", "replace")
        self.pos += n
        if expected and name != expected:
            self.fail("nested object of type '%s' where '%s' is expected" % (name, expected))
        if name not in self.registry:
            self.fail("unknown type '%s'" % name)
        attrs = self.registry.get(name).attributes
        count = self.unpack("<H")
        if count != len(attrs):
            self.fail("type '%s' has %d attributes, the input %d" % (name, len(attrs), count))
        out: Dict[str, Any] = {}
        for a in attrs:
            tag = self.unpack("<B")
            if tag != a.tag:
                self.fail("tag 0x%02x for attribute '%s' of type '%s'" % (tag, a.name, name))
            if not a.vector:
                out[a.name] = self.scalar(a, depth)
                continue
            count = self.unpack("<I")
            left = len(self.data) - self.pos
            size = struct.calcsize("<" + _FORMATS[a.type]) if a.type in _FORMATS else 4
            if count > left // size:
                self.fail("vector length %d exceeds the input" % count)
            if self.use_numpy and a.type in _NUMPY:
                arr = _np.frombuffer(self.data, dtype=_NUMPY[a.type], count=count, offset=self.pos).copy()
                self.pos += count * size
                out[a.name] = arr
            elif a.type in _FORMATS and a.type not in (BasicType.BOOL, BasicType.TIME):
                fmt = "<%d%s" % (count, _FORMATS[a.type])
                out[a.name] = list(struct.unpack_from(fmt, self.data, self.pos))
                self.pos += count * size
            else:
                out[a.name] = [self.scalar(a, depth) for _ in range(count)]
        return out


def decode(data: bytes, registry: TypeRegistry, use_numpy: bool = True) -> Tuple[str, Dict[str, Any]]:
    """(type name, value) of an encode() result; CodecError on malformed input."""
    r = _Reader(data, registry, use_numpy)
    version = r.unpack("<B")
    if version != ENCODING_VERSION:
        r.fail("unsupported encoding version %d" % version)
    r.pos = 1
    # the type name is read again by obj(): peek it for the result
    (n,) = struct.unpack_from("<H", r.data, 1) if len(r.data) >= 3 else (0,)
    type_name = bytes(r.data[3 : 3 + n]).decode("utf-8", "replace")
    value = r.obj("", 0)
    if r.pos != len(r.data):
        r.fail("%d trailing bytes" % (len(r.data) - r.pos))
    return type_name, value


# --- notification records ---------------------------------------------------------------------


class RecordKind(enum.IntEnum):
    """Kinds of IS notification records."""

    CREATED = 0
    UPDATED = 1
    REMOVED = 2
    DROPPED = 0x80
    SNAPSHOT_BEGIN = 0x81
    SNAPSHOT_END = 0x82


@dataclass
class Record:
    """One notification record: kind, object name (without server), type, time (µs) and value bytes."""

    kind: int
    name: str
    type: str
    time_us: int
    value: bytes


_REC_HEAD = struct.Struct("<qI")


def encode_record(kind: int, name: str, type_name: str, time_us: int, value: bytes) -> bytes:
    """record := u8 kind | u16 nameLen | name | u16 typeLen | type | s64 time µs | u32 valueLen | value."""
    n, t = name.encode(), type_name.encode()
    return (
        bytes([kind]) + struct.pack("<H", len(n)) + n + struct.pack("<H", len(t)) + t
        + _REC_HEAD.pack(time_us, len(value)) + value
    )


def iter_records(batch: bytes) -> Iterator[Record]:
    """The records of one notification message; CodecError on a malformed record."""
    mv = memoryview(batch)
    size = len(mv)
    pos = 0
    while pos < size:
        if size - pos < 3:
            raise CodecError("malformed IS notification at byte %d: truncated header" % pos)
        kind = mv[pos]
        (nlen,) = struct.unpack_from("<H", mv, pos + 1)
        i = pos + 3
        if size - i < nlen + 2:
            raise CodecError("malformed IS notification at byte %d: truncated name" % pos)
        name = bytes(mv[i : i + nlen]).decode("utf-8", "replace")
        i += nlen
        (tlen,) = struct.unpack_from("<H", mv, i)
        i += 2
        if size - i < tlen + 12:
            raise CodecError("malformed IS notification at byte %d: truncated type" % pos)
        tname = bytes(mv[i : i + tlen]).decode("utf-8", "replace")
        i += tlen
        time_us, vlen = _REC_HEAD.unpack_from(mv, i)
        i += 12
        if size - i < vlen:
            raise CodecError("malformed IS notification at byte %d: truncated value" % pos)
        yield Record(kind, name, tname, time_us, bytes(mv[i : i + vlen]))
        pos = i + vlen


def optional_numpy() -> Optional[Any]:
    """The numpy module when it is installed, else None."""
    return _np
