"""The Information Service from Python: read, write, list and watch IS objects.

Objects are named "Server.Object"; requests go to the DIALOG service "IS.<Server>" (docs/protocol.md,
"The IS protocol"). Values are plain Python objects (see dialog.iscodec).
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import itertools
import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Set

from . import iscodec
from ._proto import is_pb2 as ispb
from .client import Client, Message, RequestError, Subscription
from .iscodec import CodecError, ISError, RecordKind, TypeRegistry

__all__ = ["Dictionary", "Entry", "Event", "ISError", "Status", "Criteria"]


class Status:
    """IS status codes (Reply.code)."""

    OK = 0
    NOT_FOUND = 1
    ALREADY_EXISTS = 2
    TYPE_MISMATCH = 3
    UNKNOWN_TYPE = 4
    INVALID_NAME = 5
    INVALID_OBJECT = 6
    READ_ONLY = 7
    UNKNOWN_SERVER = 8
    TIMEOUT = 9
    BAD_REQUEST = 10
    SERVER_ERROR = 11
    QUOTA_EXCEEDED = 25
    PERMISSION_DENIED = 26
    NAMES = [
        "ok", "not found", "already exists", "type mismatch", "unknown type", "invalid name",
        "invalid object", "read-only", "unknown server", "time-out", "bad request", "server error",
    ]  # fmt: skip
    LATER_NAMES = {25: "quota exceeded", 26: "permission denied"}

    @classmethod
    def name(cls, code: int) -> str:
        if 0 <= code < len(cls.NAMES):
            return cls.NAMES[code]
        return cls.LATER_NAMES.get(code, "error")


@dataclass
class Criteria:
    """Selects objects: a POSIX extended regular expression on the object name (without the server)
    and a type condition; ``selector`` is "any", "exactly", "subtypes", "not" or "not-subtypes";
    ``logic`` "and" or "or"."""

    regex: str = ""
    type: str = ""
    selector: str = "any"
    logic: str = "and"

    _SELECTORS = {"any": 0, "exactly": 1, "subtypes": 2, "not": 3, "not-subtypes": 4}

    def to_proto(self, out: ispb.Criteria) -> None:
        sel = self.selector
        if self.type and sel == "any":
            sel = "exactly"
        if sel not in self._SELECTORS:
            raise ValueError("unknown type selector '%s'" % self.selector)
        out.regex = self.regex
        out.type = self.type
        out.selector = self._SELECTORS[sel]
        out.logic = 1 if self.logic == "or" else 0


@dataclass
class Entry:
    """An IS object as read: full name, type, time of its last update, update count and value, and
    whether it is stale when the server answered: its writer was lost (writer_lost) or it was not
    written within its type's expected_interval_s (overdue); age_s is the time since its last write."""

    name: str
    type: str
    time: _dt.datetime
    update_count: int
    value: Optional[Dict[str, Any]]
    writer_lost: bool = False
    overdue: bool = False
    age_s: Optional[float] = None
    expected_interval_s: float = 0.0

    @property
    def stale(self) -> bool:
        return self.writer_lost or self.overdue

    @property
    def stale_reason(self) -> str:
        """As the C++ API and `dialogctl is get` say it; empty when not stale."""
        why = []
        if self.writer_lost:
            why.append("writer lost")
        if self.overdue:
            why.append("not updated for %.1f s (expected every %g s)" % (self.age_s or 0.0, self.expected_interval_s))
        return "; ".join(why)


@dataclass
class Event:
    """A change notified to a subscription: kind is "created", "updated", "removed",
    "snapshot-begin" or "snapshot-end"; value is None for removals and when values were not asked."""

    kind: str
    name: str
    type: str
    time: _dt.datetime
    value: Optional[Dict[str, Any]]


@dataclass
class Point:
    """One value of a numeric attribute's history: for a downsampled point, value is the mean of the
    count values it stands for and min/max their range."""

    time: _dt.datetime
    value: float
    min: float
    max: float
    count: int


@dataclass
class History:
    """The values an object had in an interval, per numeric attribute (oldest first), from the IS
    server's ring and, before it, from the archiver when the server has one."""

    name: str
    type: str
    series: Dict[str, List[Point]]


def _points(s: ispb.Series) -> List[Point]:
    """Raw values come without min, max and count (each is its own range, a count of one)."""
    n = min(len(s.time_us), len(s.value))
    full = len(s.min) == n and len(s.max) == n and len(s.count) == n
    return [Point(iscodec.us_to_time(s.time_us[i]), s.value[i], s.min[i] if full else s.value[i],
                  s.max[i] if full else s.value[i], s.count[i] if full else 1) for i in range(n)]


def _us(p: Point) -> int:
    return iscodec.time_to_us(p.time)


def downsample(points: List[Point], max_points: int) -> List[Point]:
    """At most @p max_points points: equal time buckets, each the count-weighted mean of its points
    (libdialog's dialog::is::downsample(), so both clients show the same curve)."""
    if max_points <= 0 or len(points) <= max_points:
        return points
    first = _us(points[0])
    span = _us(points[-1]) - first + 1
    out: List[Point] = []
    i = 0
    while i < len(points):
        bucket = (_us(points[i]) - first) * max_points // span
        end = first + -(-(bucket + 1) * span // max_points)
        total = total_time = 0.0
        lo, hi, count = points[i].min, points[i].max, 0
        while i < len(points) and _us(points[i]) < end:
            p = points[i]
            total += p.value * p.count
            total_time += (_us(p) - first) * p.count
            lo, hi, count = min(lo, p.min), max(hi, p.max), count + p.count
            i += 1
        out.append(Point(iscodec.us_to_time(first + int(total_time / max(count, 1))),
                         total / count if count else 0.0, lo, hi, count))
    return out


def _merged(archive: ispb.Reply, ring: ispb.Reply, max_points: int) -> Dict[str, List[Point]]:
    """The archive's older points in front of the ring's, per attribute (as libdialog merges them):
    of the ring's oldest millisecond, the archive adds the values the ring no longer holds."""
    out = {s.attribute: _points(s) for s in ring.series}
    older = {s.attribute: _points(s) for s in archive.series}
    if not out:
        return older
    for attribute, points in out.items():
        if attribute not in older:
            continue
        before, same_ms = [], []
        for p in older[attribute]:
            t = _us(p)
            if not ring.oldest_us or t < ring.oldest_us:
                before.append(p)
            elif t < ring.oldest_us + 1000:
                same_ms.append(p)
        before += same_ms[: max(0, len(same_ms) - ring.oldest_count)]
        out[attribute] = downsample(before + points, max_points)
    return out


_KINDS = {
    RecordKind.CREATED: "created",
    RecordKind.UPDATED: "updated",
    RecordKind.REMOVED: "removed",
    RecordKind.SNAPSHOT_BEGIN: "snapshot-begin",
    RecordKind.SNAPSHOT_END: "snapshot-end",
}
_channels = itertools.count(1)


def split_name(name: str) -> tuple:
    """(server, object) of "Server.Object"; ISError when it is not such a name."""
    server, dot, obj = name.partition(".")
    if not server or not dot or not obj:
        raise ISError(Status.INVALID_NAME, "'%s' is not an IS object name (expected Server.Object)" % name)
    return server, obj


class ISSubscription:
    """Changes of the objects of one server that match a criteria. Iterate it (``async for e in sub``)
    or pass a callback to Dictionary.subscribe(). Survives a restart of the IS server."""

    def __init__(self, dictionary: "Dictionary", server: str, criteria: Criteria, with_values: bool,
                 snapshot: bool, callback) -> None:
        self.dictionary = dictionary
        self.server = server
        self.criteria = criteria
        self.with_values = with_values
        self.snapshot = snapshot
        self.callback = callback
        self.channel = "IS.sub/%s/%d" % (dictionary.client.name, next(_channels))
        self.dropped = 0
        self.active = False
        self.error = ""
        self._queue: asyncio.Queue = asyncio.Queue()
        self._attached: Optional[Subscription] = None
        self._closed = False

    def __aiter__(self) -> "ISSubscription":
        return self

    async def __anext__(self) -> Event:
        e = await self._queue.get()
        if e is None:
            raise StopAsyncIteration
        if isinstance(e, Exception):
            raise e
        return e

    async def get(self, timeout: Optional[float] = None) -> Event:
        """The next event (asyncio.TimeoutError after @p timeout seconds; CodecError when the server
        sent a malformed notification)."""
        e = await asyncio.wait_for(self._queue.get(), timeout)
        if e is None:
            raise StopAsyncIteration
        if isinstance(e, Exception):
            raise e
        return e

    def _on_message(self, m: Message) -> None:
        d = self.dictionary
        try:
            for r in iscodec.iter_records(m.data):
                if r.kind == RecordKind.DROPPED:
                    self.dropped += r.time_us
                    continue
                kind = _KINDS.get(r.kind)
                if kind is None:
                    continue
                value = None
                if r.value:
                    if r.type not in d.types:
                        # a type declared after our TYPES request: fetch, then decode
                        d.client._spawn(self._late(kind, r))
                        continue
                    value = iscodec.decode(r.value, d.types, d.use_numpy)[1]
                self._emit(Event(kind, "%s.%s" % (self.server, r.name) if r.name else "", r.type,
                                 iscodec.us_to_time(r.time_us), value))
        except CodecError as e:
            # A malformed notification: the iterator (or get()) raises it; the subscription stays.
            self.error = "%s: %s" % (self.server, e)
            if self.callback is None:
                self._queue.put_nowait(CodecError(self.error))

    async def _late(self, kind: str, r: iscodec.Record) -> None:
        d = self.dictionary
        try:
            await d.fetch_types(self.server)
            value = iscodec.decode(r.value, d.types, d.use_numpy)[1]
        except (ISError, CodecError) as e:
            self.error = str(e)
            return
        self._emit(Event(kind, "%s.%s" % (self.server, r.name), r.type, iscodec.us_to_time(r.time_us), value))

    def _emit(self, e: Event) -> None:
        if self.callback is not None:
            try:
                self.callback(e)
            except Exception:
                pass
        else:
            self._queue.put_nowait(e)

    async def _send_subscribe(self) -> None:
        d = self.dictionary
        try:
            await d.fetch_types(self.server)
            r = ispb.Request(op=ispb.Request.SUBSCRIBE, channel=self.channel, with_values=self.with_values,
                             snapshot=self.snapshot)
            self.criteria.to_proto(r.criteria)
            await d._call(self.server, r)
            self.active, self.error = True, ""
        except ISError as e:
            self.active, self.error = False, str(e)

    async def close(self) -> None:
        """Unsubscribes (the iterator ends)."""
        if self._closed:
            return
        self._closed = True
        self.dictionary._subs.discard(self)
        if self._attached:
            self._attached.close()
        self._queue.put_nowait(None)
        try:
            await self.dictionary._call(self.server, ispb.Request(op=ispb.Request.UNSUBSCRIBE, channel=self.channel))
        except ISError:
            pass


class Dictionary:
    """Access to the IS servers through a Client::

        d = Dictionary(client)
        info = await d.get("RunParams.RunInfo")
        await d.put("RunParams.Beam", "BeamInfo", {"energy": 160.0})
    """

    def __init__(self, client: Client, timeout: float = 5.0, use_numpy: bool = True) -> None:
        self.client = client
        self.timeout = timeout
        self.use_numpy = use_numpy
        self.types = TypeRegistry()
        self._fetched: Set[str] = set()
        self._subs: Set[ISSubscription] = set()
        self._announce: Dict[str, Subscription] = {}
        self._started: Dict[str, str] = {}

    async def _call(self, server: str, request: ispb.Request) -> ispb.Reply:
        return await self._call_service("IS." + server, "IS server %s" % server, request,
                                        "no IS server '%s' is running" % server)

    async def _call_service(self, service: str, what: str, request: ispb.Request, absent: str = "",
                            tolerate_not_found: bool = False) -> ispb.Reply:
        absent = absent or "no %s is running" % what
        try:
            data = await self.client.request(service, request.SerializeToString(), self.timeout)
        except RequestError as e:
            if e.status == "timeout" and not self.client.provider_of(service):
                raise ISError(Status.UNKNOWN_SERVER, absent) from None
            code = {
                "timeout": Status.TIMEOUT,
                "not-accepted": Status.UNKNOWN_SERVER,
                "provider-lost": Status.UNKNOWN_SERVER,
                "invalid": Status.BAD_REQUEST,
            }.get(e.status, Status.SERVER_ERROR)
            raise ISError(code, str(e)) from None
        reply = ispb.Reply()
        try:
            reply.ParseFromString(data)
        except Exception:
            raise ISError(Status.SERVER_ERROR, "%s sent a malformed reply" % what) from None
        if reply.code != Status.OK and not (tolerate_not_found and reply.code == Status.NOT_FOUND):
            msg = Status.name(reply.code) + (": " + reply.error if reply.error else "")
            known = reply.code <= Status.SERVER_ERROR or reply.code in Status.LATER_NAMES
            raise ISError(reply.code if known else Status.SERVER_ERROR, msg)
        return reply

    async def fetch_types(self, server: str) -> None:
        """Reads every type of @p server into ``types`` (done once per server by the other calls)."""
        reply = await self._call(server, ispb.Request(op=ispb.Request.TYPES))
        try:
            self.types.merge_json(reply.types_json)
        except CodecError as e:
            raise ISError(Status.SERVER_ERROR, "types of IS server %s: %s" % (server, e)) from None
        self._fetched.add(server)

    async def _with_types(self, server: str) -> None:
        if server not in self._fetched:
            await self.fetch_types(server)

    def _entry(self, server: str, e: ispb.Entry) -> Entry:
        value = None
        if e.value:
            try:
                value = iscodec.decode(e.value, self.types, self.use_numpy)[1]
            except CodecError as err:
                raise ISError(Status.SERVER_ERROR, "cannot decode %s.%s: %s" % (server, e.name, err)) from None
        return Entry("%s.%s" % (server, e.name), e.type, iscodec.us_to_time(e.time_us), e.update_count, value,
                     writer_lost=e.writer_lost, overdue=e.overdue,
                     age_s=e.age_us / 1e6 if e.age_us >= 0 else None, expected_interval_s=e.expected_interval_s)

    async def get(self, name: str, as_type: str = "") -> Entry:
        """The object @p name ("Server.Object"), optionally read as its base type @p as_type."""
        server, _ = split_name(name)
        await self._with_types(server)
        reply = await self._call(server, ispb.Request(op=ispb.Request.GET, name=name, type=as_type))
        if len(reply.entries) != 1:
            raise ISError(Status.SERVER_ERROR, "empty reply")
        return self._entry(server, reply.entries[0])

    async def _write(self, op: int, name: str, type_name: str, value: Dict[str, Any]) -> None:
        server, _ = split_name(name)
        await self._with_types(server)
        if type_name not in self.types:
            await self.fetch_types(server)  # declared meanwhile?
        if op != ispb.Request.INSERT and type_name in self.types:
            value = await self._completed(name, type_name, value)
        try:
            encoded = iscodec.encode(type_name, value, self.types)
        except CodecError as e:
            raise ISError(Status.INVALID_OBJECT if type_name in self.types else Status.UNKNOWN_TYPE,
                          "%s: %s" % (name, e)) from None
        await self._call(server, ispb.Request(op=op, name=name, value=encoded))

    async def _completed(self, name: str, type_name: str, value: Dict[str, Any]) -> Dict[str, Any]:
        """@p value with the attributes it leaves out taken from the stored object of the same type
        (as `dialogctl is put` does); unchanged when it names every attribute (no extra request) or
        when there is no such object (the type's defaults then)."""
        if all(a.name in value for a in self.types.get(type_name).attributes):
            return value
        try:
            current = await self.get(name)
        except ISError as e:
            if e.code == Status.NOT_FOUND:
                return value
            raise
        if current.type != type_name or current.value is None:
            return value
        return {**current.value, **value}

    async def put(self, name: str, type_name: str, value: Dict[str, Any]) -> None:
        """Creates or updates @p name as an object of @p type_name. Attributes @p value leaves out keep
        their stored value (the type's default for a new object), as `dialogctl is put` does; a value
        naming every attribute is written as is, as the C++ Dictionary::update() writes a whole Object.
        The read of the stored object and the write are two requests: concurrent partial writers of
        one object may overwrite each other's attributes."""
        await self._write(ispb.Request.UPSERT, name, type_name, value)

    async def insert(self, name: str, type_name: str, value: Dict[str, Any]) -> None:
        """Creates @p name (attributes left out take the type's defaults); ISError(ALREADY_EXISTS)
        when it exists. As Dictionary::insert() and `dialogctl is put --insert`."""
        await self._write(ispb.Request.INSERT, name, type_name, value)

    async def update(self, name: str, type_name: str, value: Dict[str, Any]) -> None:
        """Updates @p name as put() does; ISError(NOT_FOUND) when it does not exist. As
        Dictionary::update(…, UpdateMode::MustExist) and `dialogctl is put --must-exist`."""
        await self._write(ispb.Request.UPDATE, name, type_name, value)

    async def remove(self, name: str) -> None:
        """Removes @p name; ISError(NOT_FOUND) when it does not exist."""
        server, _ = split_name(name)
        await self._call(server, ispb.Request(op=ispb.Request.REMOVE, name=name))

    async def list(self, server: str, regex: str = "", type: str = "", selector: str = "any",
                   with_values: bool = False) -> List[Entry]:
        """The objects of @p server whose name matches @p regex and whose type matches (see Criteria)."""
        if regex:
            try:
                re.compile(regex)
            except re.error as e:
                raise ISError(Status.BAD_REQUEST, "invalid regular expression: %s" % e) from None
        await self._with_types(server)
        r = ispb.Request(op=ispb.Request.LIST, with_values=with_values)
        Criteria(regex, type, selector).to_proto(r.criteria)
        reply = await self._call(server, r)
        return [self._entry(server, e) for e in reply.entries]

    async def history(self, name: str, since: Any, until: Any = None, max_points: int = 0,
                      attribute: str = "") -> History:
        """The values object @p name had from @p since to @p until (datetimes, naive = UTC, or µs
        since the epoch; @p until defaults to now), per numeric attribute (only @p attribute when
        given), downsampled to @p max_points per attribute (0: every value). Older than the server's
        ring, the values come from its archiver when it has one (`dialog-archiver`), as in libdialog."""
        server, _ = split_name(name)
        from_us = iscodec.time_to_us(since)
        to_us = iscodec.time_to_us(until if until is not None else _dt.datetime.now(_dt.timezone.utc))
        if to_us < from_us:
            raise ISError(Status.BAD_REQUEST, "the history of %s is asked for an empty interval" % name)

        def request(to: int) -> ispb.Request:
            return ispb.Request(op=ispb.Request.HISTORY, name=name, attribute=attribute, from_us=from_us, to_us=to,
                                max_points=max_points)

        ring = await self._call_service("IS." + server, "IS server %s" % server, request(to_us),
                                        "no IS server '%s' is running" % server, tolerate_not_found=True)
        missing = ring.code == Status.NOT_FOUND
        if not ring.archive_service or (ring.oldest_us and from_us >= ring.oldest_us):
            if missing:
                raise ISError(Status.NOT_FOUND, Status.name(ring.code) + (": " + ring.error if ring.error else ""))
            return History(name, ring.type, {s.attribute: _points(s) for s in ring.series})
        # Older values from the archiver, which runs apart. Raw: up to the end of the ring's oldest
        # millisecond, to join exactly (_merged()); downsampled: strictly before the ring.
        edge = ring.oldest_us + (-1 if max_points > 0 else 999)
        try:
            older = await self._call_service(ring.archive_service, "archiver of %s" % server,
                                             request(min(to_us, edge) if ring.oldest_us else to_us))
        except ISError:
            if missing:
                raise  # without the ring's part, the archive's error
            return History(name, ring.type, {s.attribute: _points(s) for s in ring.series})
        return History(name, ring.type or older.type, _merged(older, ring, max_points))

    async def list_types(self, server: str) -> List[str]:
        """The names of every type @p server knows."""
        await self.fetch_types(server)
        return self.types.names()

    async def subscribe(self, server: str, regex: str = "", type: str = "", selector: str = "any",
                        with_values: bool = True, snapshot: bool = False, callback=None) -> ISSubscription:
        """Watches the objects of @p server matching the criteria; with @p snapshot the matching objects
        come first (as "created" events between "snapshot-begin" and "snapshot-end")."""
        s = ISSubscription(self, server, Criteria(regex, type, selector), with_values, snapshot, callback)
        s._attached = self.client.attach(s.channel, callback=s._on_message)
        self._subs.add(s)
        self._watch(server)
        await s._send_subscribe()
        if not s.active:
            await s.close()
            raise ISError(Status.UNKNOWN_SERVER, s.error)
        return s

    def _watch(self, server: str) -> None:
        """Follows the server's announcement service: a new start stamp is a new server process,
        which knows nothing of our subscriptions: subscribe again."""
        if server in self._announce:
            return

        def on_announce(m: Message) -> None:
            try:
                started = str(json.loads(m.data).get("started", ""))
            except (ValueError, AttributeError):
                started = ""
            if started == self._started.get(server):
                return
            first = server not in self._started
            self._started[server] = started
            if first:
                return
            self._fetched.discard(server)
            for s in list(self._subs):
                if s.server == server:
                    self.client._spawn(s._send_subscribe())

        self._announce[server] = self.client.subscribe("IS." + server, callback=on_announce)
