"""Messages to the partition's message log (dialog-logger), as libdialog's dialog::report() sends them.

A batch is a REQUEST to the service ``DIALOG.Logger``: the byte ``s`` then a CBOR array of records,
each a map with one-letter keys (``t`` time in ms, ``h`` host, ``i`` PID, ``s`` severity, ``c``
category, ``x`` text, ``v`` values, ``n`` sequence); the logger fills in the process name from the
request's origin and ignores a record it already stored (process, PID and sequence say so).
"""

from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional

LOGGER_SERVICE = "DIALOG.Logger"
STORE_KIND = b"s"
SEVERITIES = ("debug", "info", "warning", "error", "fatal")


def severity_number(severity: str) -> int:
    """The number of a severity name ("critical" is "error", as in libdialog); ValueError otherwise."""
    s = severity.strip().lower()
    s = "error" if s == "critical" else s
    if s not in SEVERITIES:
        raise ValueError("unknown severity '%s' (one of %s)" % (severity, ", ".join(SEVERITIES)))
    return SEVERITIES.index(s)


def _head(major: int, n: int) -> bytes:
    if n < 24:
        return bytes([major << 5 | n])
    for extra, fmt in ((24, ">B"), (25, ">H"), (26, ">I"), (27, ">Q")):
        if n < 1 << (8 * struct.calcsize(fmt)):
            return bytes([major << 5 | extra]) + struct.pack(fmt, n)
    raise ValueError("integer out of range for CBOR")


def cbor(value: Any) -> bytes:
    """CBOR (RFC 8949) of None, bool, int, float, str, bytes, lists and dicts with string keys: the
    values a record carries (Qt's QCborValue reads them back)."""
    if value is None:
        return b"\xf6"
    if value is True:
        return b"\xf5"
    if value is False:
        return b"\xf4"
    if isinstance(value, int):
        return _head(0, value) if value >= 0 else _head(1, -1 - value)
    if isinstance(value, float):
        return b"\xfb" + struct.pack(">d", value)
    if isinstance(value, str):
        data = value.encode("utf-8")
        return _head(3, len(data)) + data
    if isinstance(value, (bytes, bytearray)):
        return _head(2, len(value)) + bytes(value)
    if isinstance(value, (list, tuple)):
        return _head(4, len(value)) + b"".join(cbor(v) for v in value)
    if isinstance(value, dict):
        out = [_head(5, len(value))]
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError("a value's keys must be strings, not %s" % type(k).__name__)
            out += [cbor(k), cbor(v)]
        return b"".join(out)
    raise TypeError("cannot report a value of type %s" % type(value).__name__)


def record(time_ms: int, host: str, pid: int, severity: int, category: str, text: str, sequence: int,
           values: Optional[Dict[str, Any]] = None, run: int = 0) -> Dict[str, Any]:
    """One record as the map libdialog writes (empty fields left out, as it does)."""
    r: Dict[str, Any] = {"t": time_ms}
    if host:
        r["h"] = host
    if pid:
        r["i"] = pid
    r["s"] = severity
    if category:
        r["c"] = category
    r["x"] = text
    if run:
        r["r"] = run
    if values:
        r["v"] = values
    if sequence:
        r["n"] = sequence
    return r


def store_request(records: List[Dict[str, Any]]) -> bytes:
    """The payload of a REQUEST to DIALOG.Logger that stores @p records."""
    return STORE_KIND + cbor(records)
