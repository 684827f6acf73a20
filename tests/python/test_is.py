"""The Information Service from Python against a real dialog-isserver, the dialogctl tool and the web IS."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import urllib.request
import xml.etree.ElementTree as ET

import pytest
from conftest import TYPES_DIR, free_port, run, run_tool

import dialog
import dialog.sync
from dialog.is_ import Dictionary, ISError, Status
from dialog.iscodec import BasicType

T0 = dt.datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=dt.timezone.utc)
SAMPLES = {
    BasicType.BOOL: True,
    BasicType.S8: -5,
    BasicType.U8: 200,
    BasicType.S16: -3000,
    BasicType.U16: 60000,
    BasicType.S32: -2_000_000_000,
    BasicType.U32: 4_000_000_000,
    BasicType.S64: -(2**40),
    BasicType.U64: 2**63 + 5,
    BasicType.FLOAT: 1.5,
    BasicType.DOUBLE: 3.25,
    BasicType.STRING: "héllo wörld",
    BasicType.TIME: T0,
}


def sample(d: Dictionary, type_name: str, depth: int = 0) -> dict:
    """A value of @p type_name with a non-default value in every attribute."""
    out = {}
    for a in d.types.get(type_name).attributes:
        v = sample(d, a.type_name, depth + 1) if a.type == BasicType.OBJECT else SAMPLES[a.type]
        out[a.name] = [v, v] if a.vector else v
    return out


def as_json(v):
    """The JSON view libdialog gives of a Python value (dialog/is/codec.h, toJson)."""
    if isinstance(v, dict):
        return {k: as_json(x) for k, x in v.items()}
    if hasattr(v, "tolist"):  # numpy arrays and scalars
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        return [as_json(x) for x in v]
    if isinstance(v, dt.datetime):
        return v.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**53:
        return str(v)
    return v


def xml_types() -> list:
    names = []
    for f in sorted(TYPES_DIR.glob("*.xml")):
        names += [t.get("name") for t in ET.parse(f).getroot().iter("type")]
    return names + ["Histogram1D", "Histogram2D"]


@pytest.fixture
def isserver(daemons):
    port = free_port()
    daemons.start_is_server("PyIS", http_port=port)
    daemons.http_port = port
    return daemons


def client(daemons, name: str) -> dialog.Client:
    return dialog.Client(name, daemons.address, heartbeat_ms=200)


def test_every_type_interoperates(isserver):
    d_ = isserver

    async def main():
        async with client(d_, "PyWriter") as c:
            d = Dictionary(c)
            types = await d.list_types("PyIS")
            for name in xml_types():
                assert name in types
            for name in xml_types():
                value = sample(d, name)
                await d.put("PyIS.Obj" + name, name, value)
                # read back by Python
                e = await d.get("PyIS.Obj" + name)
                assert e.type == name and as_json(e.value) == as_json(value)
                # read by the C++ tool
                out = json.loads(await run_tool("is", "get", "--json", "PyIS.Obj" + name, address=d_.address))
                assert out["type"] == name
                assert out["value"] == as_json(value), name
                # and by the web IS
                url = "http://127.0.0.1:%d/is/PyIS/PyIS.Obj%s?format=json" % (d_.http_port, name)
                body = await asyncio.get_running_loop().run_in_executor(
                    None, lambda: urllib.request.urlopen(url, timeout=10).read()
                )
                web = json.loads(body)
                assert web["type"] == name and web["value"] == as_json(value)
            # C++ writes, Python reads
            await run_tool("is", "put", "PyIS.FromCpp", "--type", "RunInfo", "runNumber=77", "runType=cosmics",
                           address=d_.address)
            e = await d.get("PyIS.FromCpp")
            assert e.value["runNumber"] == 77 and e.value["runType"] == "cosmics"
            assert e.name == "PyIS.FromCpp" and isinstance(e.time, dt.datetime)

    run(main(), 120)


def test_list_remove_and_errors(isserver):
    async def main():
        async with client(isserver, "PyLister") as c:
            d = Dictionary(c)
            await d.put("PyIS.RunA", "RunInfo", {"runNumber": 1})
            await d.put("PyIS.RunB", "RunInfo", {"runNumber": 2})
            await d.put("PyIS.FE1", "FrontEndStatus", {"registers": 3})
            names = {e.name for e in await d.list("PyIS", regex="Run.*")}
            assert names == {"PyIS.RunA", "PyIS.RunB"}
            entries = await d.list("PyIS", type="ProcessStats", selector="subtypes", with_values=True)
            assert [e.name for e in entries] == ["PyIS.FE1"] and entries[0].value["registers"] == 3
            assert {e.name for e in await d.list("PyIS", type="RunInfo")} == {"PyIS.RunA", "PyIS.RunB"}
            base = await d.get("PyIS.FE1", as_type="ProcessStats")
            assert "registers" not in base.value and "host" in base.value
            await d.remove("PyIS.RunA")
            with pytest.raises(ISError) as e:
                await d.get("PyIS.RunA")
            assert e.value.code == Status.NOT_FOUND
            with pytest.raises(ISError) as e:
                await d.insert("PyIS.RunB", "RunInfo", {})
            assert e.value.code == Status.ALREADY_EXISTS
            with pytest.raises(ISError) as e:
                await d.put("PyIS.Bad", "RunInfo", {"noSuchAttribute": 1})
            assert e.value.code == Status.INVALID_OBJECT
            with pytest.raises(ISError) as e:
                await d.put("PyIS.Bad", "NoSuchType", {})
            assert e.value.code == Status.UNKNOWN_TYPE
            with pytest.raises(ISError) as e:
                await d.get("NoDot")
            assert e.value.code == Status.INVALID_NAME
            d.timeout = 1.0
            with pytest.raises(ISError) as e:
                await d.get("NoServer.X")
            assert e.value.code == Status.UNKNOWN_SERVER

    run(main(), 60)


def test_stale_when_overdue(isserver):
    """FrontEndStatus inherits ProcessStats' expected_interval_s="5": a value not written again
    within 5 s is stale, with its age and the reason; written again, it is fresh."""

    async def main():
        async with client(isserver, "PyStale") as c:
            d = Dictionary(c)
            await d.put("PyIS.FEs", "FrontEndStatus", {"registers": 1})
            e = await d.get("PyIS.FEs")
            assert not e.stale and e.stale_reason == "" and e.expected_interval_s == 5
            assert e.age_s is not None and 0 <= e.age_s < 5
            await asyncio.sleep(5.5)
            e = await d.get("PyIS.FEs")
            assert e.overdue and e.stale and not e.writer_lost and e.age_s > 5
            assert e.stale_reason.startswith("not updated for ") and "expected every 5 s" in e.stale_reason
            assert [x.name for x in await d.list("PyIS", type="FrontEndStatus") if x.stale] == ["PyIS.FEs"]
            out = json.loads(await run_tool("is", "get", "--json", "PyIS.FEs", address=isserver.address))
            assert out["stale"] is True
            await d.put("PyIS.FEs", "FrontEndStatus", {"registers": 2})
            assert not (await d.get("PyIS.FEs")).stale

    run(main(), 60)


def test_subscribe_with_criteria_survives_server_restart(isserver):
    async def main():
        async with client(isserver, "PyWatcher") as c:
            d = Dictionary(c)
            await d.put("PyIS.RunOld", "RunInfo", {"runNumber": 1})
            sub = await d.subscribe("PyIS", regex="Run.*", type="RunInfo", snapshot=True)
            kinds = []
            while True:
                e = await sub.get(10)
                kinds.append((e.kind, e.name))
                if e.kind == "snapshot-end":
                    break
            assert kinds == [("snapshot-begin", ""), ("created", "PyIS.RunOld"), ("snapshot-end", "")]
            await run_tool("is", "put", "PyIS.Other", "--type", "RunInfo", address=isserver.address)  # no match
            await run_tool("is", "put", "PyIS.RunNew", "--type", "RunInfo", "runNumber=5", address=isserver.address)
            e = await sub.get(10)
            assert (e.kind, e.name, e.value["runNumber"]) == ("created", "PyIS.RunNew", 5)
            await d.put("PyIS.RunNew", "RunInfo", {"runNumber": 6})
            e = await sub.get(10)
            assert (e.kind, e.value["runNumber"]) == ("updated", 6)
            await d.remove("PyIS.RunNew")
            e = await sub.get(10)
            assert (e.kind, e.name, e.value) == ("removed", "PyIS.RunNew", None)

            # The IS server restarts (no persistence): the subscription is made again.
            is_proc = [p for p in isserver.procs if "dialog-isserver" in p.args[0]][0]
            isserver.stop(is_proc)
            isserver.start_is_server("PyIS")
            for _ in range(200):
                try:
                    await d.put("PyIS.RunAfter", "RunInfo", {"runNumber": 9})
                    e = await sub.get(0.5)
                    if e.name == "PyIS.RunAfter":
                        break
                except (ISError, asyncio.TimeoutError):
                    await asyncio.sleep(0.1)
            assert e.name == "PyIS.RunAfter" and e.value["runNumber"] == 9
            await sub.close()

    run(main(), 90)


def test_callback_subscription(isserver):
    async def main():
        async with client(isserver, "PyCb") as c:
            d = Dictionary(c)
            got: asyncio.Queue = asyncio.Queue()
            await d.subscribe("PyIS", regex="Hist.*", callback=got.put_nowait)
            h = {"title": "t", "xLow": 0.0, "xHigh": 1.0, "bins": 3, "contents": [1.0, 2.0, 3.0], "entries": 6}
            await d.put("PyIS.Hist", "Histogram1D", h)
            e = await asyncio.wait_for(got.get(), 10)
            assert e.type == "Histogram1D" and list(e.value["contents"]) == [1.0, 2.0, 3.0]

    run(main(), 30)


def test_sync_facade(isserver):
    dialog.sync.disconnect()
    s = dialog.sync.connect("PySync", isserver.address)
    try:
        dialog.sync.put("PyIS.SyncRun", "RunInfo", {"runNumber": 12, "runType": "sync"})
        e = dialog.sync.get("PyIS.SyncRun")
        assert e.value["runNumber"] == 12
        assert "PyIS.SyncRun" in [x.name for x in dialog.sync.list("PyIS", regex="Sync.*")]
        assert "RunInfo" in dialog.sync.types("PyIS")
        dialog.sync.remove("PyIS.SyncRun")
        with pytest.raises(ISError):
            dialog.sync.get("PyIS.SyncRun")
        assert s.client.state == "connected"
    finally:
        dialog.sync.disconnect()


def test_malformed_notification_raises(isserver):
    from dialog import wire
    from dialog.iscodec import CodecError

    async def main():
        async with client(isserver, "PyVictim") as c:
            d = Dictionary(c)
            sub = await d.subscribe("PyIS", regex="Nothing")
            hello = wire.control_frame(wire.MessageType.HELLO, wire.wire_pb2.Hello(name="Evil", host="127.0.0.1", port=1))
            bad = wire.service_frame(sub.channel, 1, b"\x01\x05\x00abc")  # a record cut in its name
            reader, writer = await asyncio.open_connection("127.0.0.1", c.port)
            writer.write(hello + bad)
            await writer.drain()
            with pytest.raises(CodecError, match="truncated name"):
                await sub.get(10)
            writer.close()
            # the subscription keeps working
            await d.put("PyIS.Nothing", "RunInfo", {})
            e = await sub.get(10)
            assert e.name == "PyIS.Nothing"

    run(main(), 30)


def test_vectors_as_numpy_arrays(isserver):
    np = pytest.importorskip("numpy")

    async def main():
        async with client(isserver, "PyNumpy") as c:
            d, plain = Dictionary(c), Dictionary(c, use_numpy=False)
            h = {"title": "h", "xLow": 0.0, "xHigh": 4.0, "bins": 4, "contents": np.array([1.0, 2.0, 3.0, 4.0]),
                 "entries": 10}
            await d.put("PyIS.NpHist", "Histogram1D", h)
            e = await d.get("PyIS.NpHist")
            assert isinstance(e.value["contents"], np.ndarray) and e.value["contents"].dtype == np.float64
            assert e.value["contents"].tolist() == [1.0, 2.0, 3.0, 4.0]
            e = await plain.get("PyIS.NpHist")
            assert e.value["contents"] == [1.0, 2.0, 3.0, 4.0]
            await d.put("PyIS.NpRO", "ReadoutStats", {"queueDepths": np.array([7, 8], dtype=np.uint32),
                                                     "errorMessages": ["x"]})
            e = await d.get("PyIS.NpRO")
            assert e.value["queueDepths"].dtype == np.uint32 and e.value["errorMessages"] == ["x"]

    run(main(), 30)


def test_access_list_refuses_a_write_and_audits_it(daemons, tmp_path):
    # The Python client claims its OS user and host name in HELLO: the access list matches the
    # user, and the audit file shows it.
    import getpass
    import socket

    access = tmp_path / "access.json"
    access.write_text(json.dumps({"rules": [
        {"allow": "is-write", "name": "PyAcl.*", "process": "PyAllowed", "user": getpass.getuser()},
        {"deny": "is-write", "name": "PyAcl.*"},
    ]}))  # fmt: skip
    audit = tmp_path / "acl.audit"
    daemons.start("dialog-isserver", "--name", "PyAcl", "--types", str(TYPES_DIR), "--control-server",
                  daemons.address, "--access", str(access), "--audit-file", str(audit))  # fmt: skip

    async def main():
        async with client(daemons, "PyAllowed") as a, client(daemons, "PyDenied") as b:
            allowed, denied = Dictionary(a), Dictionary(b)
            for _ in range(100):  # until the server is up
                try:
                    await allowed.put("PyAcl.Run", "RunInfo", {"runNumber": 7})
                    break
                except ISError as e:
                    assert e.code in (Status.UNKNOWN_SERVER, Status.TIMEOUT)
                    await asyncio.sleep(0.1)
            with pytest.raises(ISError) as e:
                await denied.put("PyAcl.Run", "RunInfo", {"runNumber": 666})
            assert e.value.code == Status.PERMISSION_DENIED == 26
            assert str(e.value).startswith("permission denied: the access list (rules[1])")
            assert (await allowed.get("PyAcl.Run")).value["runNumber"] == 7
            out = await run_tool("audit", "--json", "--file", str(audit), address=daemons.address)
            records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]  # not the summary
            assert [(r["process"], r["outcome"]) for r in records] == [("PyAllowed", "allowed"), ("PyDenied", "refused")]
            assert {r["user"] for r in records} == {getpass.getuser()}
            assert {r["host"] for r in records} == {socket.gethostname()}

    run(main(), 60)
