"""The hex examples of docs/protocol.md decoded by the Python package (tst_protocoldoc does the same
with libdialog): the document, the C++ code and the Python code agree."""

from __future__ import annotations

import datetime as dt
import json
from typing import Dict, List, Tuple

import pytest
from conftest import SOURCE_DIR

from dialog import iscodec, wire
from dialog._proto import is_pb2 as ispb
from dialog.wire import MessageType as T

DOC = SOURCE_DIR / "docs" / "protocol.md"
ERRORS = {
    "bad magic": "BadMagic",
    "unsupported protocol version": "BadVersion",
    "unknown message type": "UnknownType",
    "unknown flags": "BadFlags",
    "exceeds the maximum": "TooLarge",
}


def examples() -> List[Tuple[int, str, List[Tuple[str, str]], bytes]]:
    out = []
    cur = None
    for i, line in enumerate(DOC.read_text(encoding="utf-8").split("\n"), 1):
        if cur is None:
            if line.startswith("```dialog-example "):
                cur = (i, line[18:].strip(), [], bytearray())
            continue
        if line.startswith("```"):
            out.append((cur[0], cur[1], cur[2], bytes(cur[3])))
            cur = None
        elif line.startswith("check "):
            key, _, value = line[6:].partition(" ")
            cur[2].append((key, value))
        else:
            cur[3].extend(bytes.fromhex(line))
    return out


def text(v) -> str:
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return ("%.17g" % v) if v != int(v) else str(int(v))
    if isinstance(v, dt.datetime):
        return v.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return str(v)


def flatten(out: Dict[str, str], prefix: str, v) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            flatten(out, prefix + k + ".", x)
    elif isinstance(v, list) or hasattr(v, "tolist"):
        v = list(v)
        out[prefix[:-1] + ".size"] = str(len(v))
        for i, x in enumerate(v):
            flatten(out, "%s[%d]." % (prefix[:-1], i), x)
    else:
        out[prefix[:-1]] = text(v)


def proto_fields(out: Dict[str, str], prefix: str, msg) -> None:
    for fd in msg.DESCRIPTOR.fields:
        v = getattr(msg, fd.name)
        if fd.label == fd.LABEL_REPEATED:
            out[prefix + fd.name + ".size"] = str(len(v))
            for i, x in enumerate(v):
                if fd.message_type is None:
                    out["%s%s[%d]" % (prefix, fd.name, i)] = text(x)
        elif fd.message_type is not None:
            proto_fields(out, prefix + fd.name + ".", v)
        else:
            out[prefix + fd.name] = text(v)


def registry() -> iscodec.TypeRegistry:
    import xml.etree.ElementTree as ET

    types = [
        {"name": "Histogram1D", "attributes": [
            {"name": "title", "type": "string"}, {"name": "xLow", "type": "double"},
            {"name": "xHigh", "type": "double"}, {"name": "bins", "type": "u32"},
            {"name": "contents", "type": "double", "vector": True}, {"name": "entries", "type": "u64"}]},
    ]  # fmt: skip
    for f in sorted((SOURCE_DIR / "resources" / "is-types").glob("*.xml")):
        for t in ET.parse(f).getroot().iter("type"):
            types.append({"name": t.get("name"), "base": t.get("base") or "", "attributes": [
                {"name": a.get("name"), "type": a.get("type"), "vector": a.get("vector") == "true"}
                for a in t.iter("attribute")]})  # fmt: skip
    r = iscodec.TypeRegistry()
    r.merge_json(json.dumps(types))
    return r


def decode(kind: str, data: bytes, is_reply: bool = False) -> Dict[str, str]:
    reg = registry()
    f: Dict[str, str] = {}
    if kind == "is-value":
        tname, value = iscodec.decode(data, reg, use_numpy=False)
        f["type"] = tname
        f["size"] = str(len(data))
        flatten(f, "", value)
        return f
    assert kind == "frame"
    dec = wire.FrameDecoder()
    try:
        frames = dec.feed(data)
    except wire.ProtocolError as e:
        f["error"] = next(v for k, v in ERRORS.items() if k in str(e))
        return f
    assert len(frames) == 1 and dec.buffered == 0
    fr = frames[0]
    f.update(type=fr.type.name, flags=str(fr.flags), length=str(len(fr.payload)))
    if fr.type in (T.SERVICE_MESSAGE, T.REQUEST):
        name, seq, body = wire.split_service(fr.payload)
        body = wire.extract_data(body, fr.flags)
        f["name"] = name.decode()
        f["id" if fr.type == T.REQUEST else "sequence"] = str(seq)
        f["data"] = body.decode(errors="replace")
        f["data.size"] = str(len(body))
        if name.startswith(b"IS.sub/"):
            recs = list(iscodec.iter_records(body))
            f["records.size"] = str(len(recs))
            for i, r in enumerate(recs):
                p = "records[%d]." % i
                f.update({p + "kind": str(r.kind), p + "name": r.name, p + "type": r.type,
                          p + "time_us": str(r.time_us), p + "value.size": str(len(r.value))})  # fmt: skip
                if r.value:
                    flatten(f, p + "value.", iscodec.decode(r.value, reg, use_numpy=False)[1])
        elif fr.type == T.REQUEST and name.startswith(b"IS."):
            req = ispb.Request()
            req.ParseFromString(body)
            proto_fields(f, "is.", req)
            f["is.op"] = str(req.op)
    elif fr.type == T.COMMAND_MESSAGE:
        name, origin, body = wire.split_command(fr.payload)
        f.update(name=name.decode(), origin=origin.decode(), data=wire.extract_data(body, fr.flags).decode())
    elif fr.type == T.REPLY:
        rid, status, body = wire.split_reply(fr.payload)
        body = wire.extract_data(body, fr.flags)
        f.update(id=str(rid), status=str(status), data=body.decode(errors="replace"))
        if is_reply:
            rep = ispb.Reply()
            rep.ParseFromString(body)
            proto_fields(f, "is.", rep)
            for i, e in enumerate(rep.entries):
                p = "is.entries[%d]." % i
                f.update({p + "name": e.name, p + "type": e.type, p + "time_us": str(e.time_us),
                          p + "update_count": str(e.update_count)})  # fmt: skip
                if e.value:
                    flatten(f, p + "value.", iscodec.decode(e.value, reg, use_numpy=False)[1])
    else:
        msg = wire.parse_control(fr)
        if msg is not None:
            proto_fields(f, "", msg)
    return f


EXAMPLES = examples()


def test_document_has_examples():
    assert len(EXAMPLES) >= 20


@pytest.mark.parametrize("line, kind, checks, data", EXAMPLES, ids=["line%d" % e[0] for e in EXAMPLES])
def test_example(line, kind, checks, data):
    fields = decode(kind, data, any(k.startswith("is.") for k, _ in checks))
    for key, expected in checks:
        assert key in fields, "line %d: no field %s in %s" % (line, key, sorted(fields))
        assert fields[key] == expected, "line %d: %s" % (line, key)


def test_encoder_reproduces_examples():
    """The Python encoder writes the same bytes as the document for the frames it can rebuild."""
    by_line = {e[0]: e for e in EXAMPLES}
    service = [e for e in by_line.values() if ("name", "Master.State") in e[2] and ("type", "SERVICE_MESSAGE") in e[2]]
    assert service and service[0][3] == wire.service_frame("Master.State", 3, b"Running")
    command = [e for e in by_line.values() if ("type", "COMMAND_MESSAGE") in e[2]]
    assert command[0][3] == wire.command_frame("Run.Start", "Master", b"run=42")


def test_generated_modules_match_the_proto_files(tmp_path):
    """dialog/_proto/*_pb2.py are committed (python/README.md says how to regenerate them): a .proto
    changed without regenerating them leaves the Python client without the new fields."""
    import shutil
    import subprocess

    protoc = shutil.which("protoc")
    if protoc is None:
        pytest.skip("protoc not installed (Debian protobuf-compiler)")
    proto_dir = SOURCE_DIR / "libdialog" / "proto"
    subprocess.run([protoc, "-I%s" % proto_dir, "--python_out=%s" % tmp_path,
                    str(proto_dir / "dialog.proto"), str(proto_dir / "is.proto")], check=True, timeout=60)
    for name in ("dialog_pb2.py", "is_pb2.py"):
        generated = (tmp_path / name).read_text(encoding="utf-8").replace(
            "\nimport dialog_pb2", "\nfrom . import dialog_pb2")
        committed = (SOURCE_DIR / "python" / "dialog" / "_proto" / name).read_text(encoding="utf-8")
        assert generated == committed, "python/dialog/_proto/%s is out of date: regenerate it (python/README.md)" % name
